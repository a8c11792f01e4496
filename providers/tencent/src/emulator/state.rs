//! The Tencent emulator's state: instances, disks (system and data, each belonging to an
//! instance), snapshots, custom images and automatic snapshot policies, networks, HPC clusters and
//! CFS file systems, plus what changes with the sim clock — boot (PENDING → RUNNING), termination,
//! ActionTimer auto-release, snapshot and image creation, policy-driven snapshots and their
//! retention, a deleted file system leaving.

use std::collections::HashMap;

use gpuctl_simkit::sshkey::KeyStore;
use gpuctl_simkit::{AddressPool, SimCtx, TokenGate};
use jiff::{tz::TimeZone, SignedDuration, Timestamp};
use serde_json::{json, Value};

use crate::api::{charge, states};
use crate::emulator::ops::cfs::{CfsFileSystem, CfsToken};
use crate::emulator::ops::hpc::HpcCluster;
use crate::emulator::ops::leftover::Eip;
use crate::emulator::ops::vpc::{Group, Subnet, Vpc};

#[derive(Default)]
pub(crate) struct State {
    /// What every instance was billed (issue 15): kept after the instance leaves, for DescribeBillDetail.
    pub bills: gpuctl_simkit::bill::Ledger,
    /// In creation order (DescribeInstances pages in this order).
    pub instances: Vec<Instance>,
    pub disks: Vec<Disk>,
    pub snapshots: Vec<Snapshot>,
    pub images: Vec<Image>,
    pub policies: Vec<Policy>,
    /// RunInstances ClientToken → the instance ids it created.
    pub run_tokens: TokenGate<Vec<String>>,
    /// Imported SSH key pairs (ImportKeyPair), `skey-…` ids.
    pub key_pairs: KeyStore,
    /// The public addresses instances hold.
    pub addresses: AddressPool,
    /// VPC's networks (CreateVpc, CreateSubnet, CreateSecurityGroup), in creation order.
    pub vpcs: Vec<Vpc>,
    pub subnets: Vec<Subnet>,
    pub groups: Vec<Group>,
    /// CVM's HPC clusters (CreateHpcCluster), in creation order.
    pub hpc_clusters: Vec<HpcCluster>,
    /// CFS file systems, each with its one mount target (CreateCfsFileSystem), in creation order.
    pub file_systems: Vec<CfsFileSystem>,
    /// CreateCfsFileSystem ClientTokens by `<account>:<token>` (valid 2 hours).
    pub cfs_tokens: HashMap<String, CfsToken>,
    /// GPU utilization settings and power transitions (issue 15): what GetMonitorData answers.
    pub gpu: gpuctl_simkit::GpuBook,
    /// VPC's elastic public IPs (planted: gpuctl allocates none on Tencent), in creation order.
    pub eips: Vec<Eip>,
}

/// An instance's public IP (RunInstances InternetAccessible): it lives and is released with the
/// instance — CVM's public IP is not an EIP (tccli 3.1.189.1 services/cvm/v20170312/api.json
/// objects.InternetAccessible.PublicIpAssigned: 是否分配公网IP, a property of the instance).
#[derive(Clone, Debug)]
pub(crate) struct PublicIp {
    pub address: String,
    pub charge_type: String,
    pub bandwidth_out: i64,
}

#[derive(Clone, Debug)]
pub(crate) struct Instance {
    pub id: String,
    pub region: String,
    pub zone: String,
    pub instance_type: String,
    pub cpu: u32,
    pub memory_gib: f64,
    pub gpu_count: u32,
    pub image_id: String,
    pub name: String,
    pub charge_type: String,
    pub created: Timestamp,
    pub running_at: Timestamp,
    /// Set once termination started (API call, auto-release); the instance leaves after a while.
    pub terminating_since: Option<Timestamp>,
    /// PREPAID instances go to SHUTDOWN (the recycle bin) instead of disappearing.
    pub shutdown: bool,
    pub auto_release_at: Option<Timestamp>,
    pub expires_at: Option<Timestamp>,
    pub tags: Vec<(String, String)>,
    pub system_disk: String,
    pub data_disks: Vec<String>,
    pub private_ip: String,
    pub vpc_id: String,
    pub subnet_id: String,
    pub security_groups: Vec<String>,
    /// `LoginSettings.KeyIds`, each checked against the key pairs at RunInstances.
    pub key_ids: Vec<String>,
    /// `None`: no public IP (never asked for, or released when termination started).
    pub public_ip: Option<PublicIp>,
    /// RunInstances' `UserData`, base64 as sent. Shown in `/_sim/state` only: DescribeInstances has no
    /// such field (tccli 3.1.189.1 cvm api.json `Instance`).
    pub user_data: Option<String>,
    /// RunInstances' `HpcClusterId` (HCC types only, see `ops/hpc.rs`).
    pub hpc_cluster_id: Option<String>,
    /// RunInstances' `CamRoleName` (`Instance.CamRoleName`): the metadata service issues its credentials.
    pub cam_role: Option<String>,
    /// A spot reclaim (`POST /_sim/reclaim`): the metadata service serves this termination time and the
    /// instance is terminated when the sim clock reaches it.
    pub reclaim_at: Option<Timestamp>,
    /// StopInstances: since when, and the `StoppedMode` it was stopped with.
    pub stopped: Option<(Timestamp, String)>,
}

impl Instance {
    pub fn state(&self, now: Timestamp) -> &'static str {
        if self.shutdown {
            states::SHUTDOWN
        } else if self.terminating_since.is_some() {
            states::TERMINATING
        } else if let Some((since, _)) = &self.stopped {
            // StopInstances is asynchronous: STOPPING for a moment, then STOPPED.
            if now >= *since + STOP_TIME {
                states::STOPPED
            } else {
                states::STOPPING
            }
        } else if now >= self.running_at {
            states::RUNNING
        } else {
            states::PENDING
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Disk {
    pub id: String,
    pub region: String,
    pub zone: String,
    /// "SYSTEM_DISK" or "DATA_DISK".
    pub usage: &'static str,
    pub disk_type: String,
    pub size_gb: i64,
    pub instance_id: String,
    pub delete_with_instance: bool,
    pub charge_type: String,
    pub created: Timestamp,
    pub policy_ids: Vec<String>,
    pub name: String,
    /// `Disk.Tags` (`[{Key, Value}]`).
    pub tags: Vec<(String, String)>,
}

impl Disk {
    /// Local disks cannot be snapshotted (Tencent docs; only CBS cloud disks can).
    pub fn is_local(&self) -> bool {
        self.disk_type.starts_with("LOCAL_")
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Snapshot {
    pub id: String,
    pub region: String,
    pub zone: String,
    pub name: String,
    pub disk_id: String,
    pub disk_usage: &'static str,
    pub disk_size_gb: i64,
    pub created: Timestamp,
    pub ready_at: Timestamp,
    pub policy_id: Option<String>,
    pub deadline: Option<Timestamp>,
    pub image_ids: Vec<String>,
    /// CreateSnapshot's `Tags`, answered as `Snapshot.Tags`.
    pub tags: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
pub(crate) struct Image {
    pub id: String,
    pub region: String,
    pub name: String,
    pub description: String,
    pub created: Timestamp,
    pub ready_at: Timestamp,
    pub size_gb: i64,
    pub snapshot_ids: Vec<String>,
    pub source_instance: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct Policy {
    pub id: String,
    pub region: String,
    pub name: String,
    pub hours: Vec<u32>,
    /// 0 = Sunday … 6 = Saturday (Tencent's `DayOfWeek`).
    pub days_of_week: Vec<u32>,
    pub activated: bool,
    pub permanent: bool,
    pub retention_days: i64,
    pub created: Timestamp,
    pub next_trigger: Option<Timestamp>,
}

/// How long STOPPING lasts before STOPPED (assumption: no definition gives a duration; a short one,
/// so an agent polling DescribeInstances sees the transition).
pub(crate) const STOP_TIME: SignedDuration = SignedDuration::from_secs(10);

/// At most this many policy firings are caught up per tick, so a clock jumped by years stays cheap.
const MAX_FIRINGS_PER_TICK: usize = 10_000;

impl Policy {
    /// The first trigger time strictly after `after` (policy hours/days in UTC+8, as Tencent's
    /// console shows them), or None if the policy can never fire.
    pub fn next_after(&self, after: Timestamp) -> Option<Timestamp> {
        if !self.activated || self.hours.is_empty() || self.days_of_week.is_empty() {
            return None;
        }
        let tz = TimeZone::fixed(jiff::tz::offset(8));
        let start = after.to_zoned(tz.clone());
        // Walk hour by hour for up to 8 days: fine-grained enough, and the answer is within a week.
        let mut t = start.datetime().date().at(start.hour(), 0, 0, 0);
        for _ in 0..(24 * 8 + 1) {
            t = t.checked_add(SignedDuration::from_hours(1)).ok()?;
            let dow = t.date().weekday().to_sunday_zero_offset() as u32;
            if self.hours.contains(&(t.hour() as u32)) && self.days_of_week.contains(&dow) {
                let ts = t.to_zoned(tz.clone()).ok()?.timestamp();
                if ts > after {
                    return Some(ts);
                }
            }
        }
        None
    }
}

impl State {
    /// Bring everything to `ctx.now()`.
    pub fn tick(&mut self, ctx: &SimCtx) {
        let now = ctx.now();
        let linger = ctx.boot_time();
        // Auto-release (ActionTimer TerminateInstances) fires on the sim clock.
        let due: Vec<String> = self
            .instances
            .iter()
            .filter(|i| {
                i.terminating_since.is_none() && !i.shutdown && i.auto_release_at.is_some_and(|t| t <= now)
            })
            .map(|i| i.id.clone())
            .collect();
        for id in due {
            let at =
                self.instances.iter().find(|i| i.id == id).and_then(|i| i.auto_release_at).unwrap_or(now);
            self.terminate(&id, at);
        }
        // A reclaimed spot instance is terminated by the cloud at its termination time.
        let reclaimed: Vec<(String, Timestamp)> = self
            .instances
            .iter()
            .filter(|i| i.terminating_since.is_none() && !i.shutdown)
            .filter_map(|i| i.reclaim_at.filter(|t| *t <= now).map(|t| (i.id.clone(), t)))
            .collect();
        for (id, at) in reclaimed {
            self.terminate(&id, at);
        }
        // Terminating instances leave after a boot time's worth of sim time, taking the disks that
        // are deleted with them.
        let gone: Vec<String> = self
            .instances
            .iter()
            .filter(|i| i.terminating_since.is_some_and(|t| t.checked_add(linger).unwrap_or(t) <= now))
            .map(|i| i.id.clone())
            .collect();
        for id in &gone {
            self.instances.retain(|i| &i.id != id);
            self.gpu.forget(id);
            self.disks.retain(|d| !(d.instance_id == *id && d.delete_with_instance));
            for d in self.disks.iter_mut().filter(|d| d.instance_id == *id) {
                d.instance_id.clear();
            }
            // An EIP outlives its instance, unbound and still billed.
            for e in self.eips.iter_mut().filter(|e| e.instance_id.as_deref() == Some(id.as_str())) {
                e.instance_id = None;
            }
        }
        // A deleted file system leaves, with its mount target, a boot time after the delete.
        self.file_systems
            .retain(|f| f.deleting_since.is_none_or(|t| t.checked_add(linger).unwrap_or(t) > now));
        self.fire_policies(ctx, now);
        // Snapshots past their Deadline are deleted.
        self.snapshots.retain(|s| s.deadline.is_none_or(|d| d > now));
    }

    fn fire_policies(&mut self, ctx: &SimCtx, now: Timestamp) {
        let mut fired = 0;
        for pi in 0..self.policies.len() {
            while let Some(at) = self.policies[pi].next_trigger.filter(|t| *t <= now) {
                if fired >= MAX_FIRINGS_PER_TICK {
                    return;
                }
                fired += 1;
                let policy = self.policies[pi].clone();
                let disks: Vec<Disk> = self
                    .disks
                    .iter()
                    .filter(|d| d.policy_ids.contains(&policy.id) && !d.is_local())
                    .cloned()
                    .collect();
                for d in disks {
                    let snap = Snapshot {
                        id: ctx.new_id("snap-", 8),
                        region: d.region.clone(),
                        zone: d.zone.clone(),
                        name: format!("{}_{}", policy.name, at.strftime("%Y%m%d%H%M")),
                        disk_id: d.id.clone(),
                        disk_usage: d.usage,
                        disk_size_gb: d.size_gb,
                        created: at,
                        ready_at: at.checked_add(ctx.boot_time()).unwrap_or(at),
                        policy_id: Some(policy.id.clone()),
                        deadline: None,
                        image_ids: Vec::new(),
                        tags: Vec::new(),
                    };
                    self.snapshots.push(snap);
                }
                // Retention: automatic snapshots of this policy older than RetentionDays go.
                if !policy.permanent {
                    let keep_after =
                        at.checked_sub(SignedDuration::from_hours(24 * policy.retention_days)).unwrap_or(at);
                    self.snapshots.retain(|s| {
                        s.policy_id.as_deref() != Some(policy.id.as_str())
                            || s.created > keep_after
                            || !s.image_ids.is_empty()
                    });
                }
                self.policies[pi].next_trigger = policy.next_after(at);
            }
        }
    }

    /// Start terminating one instance at `at`.
    pub fn terminate(&mut self, id: &str, at: Timestamp) {
        // Billing stops when termination starts (a prepaid term was paid up front: closing it bills nothing more).
        self.bills.close(id, at);
        // No GPU data once termination starts (a PREPAID instance in the recycle bin runs no more either).
        self.gpu.power(id, at, false);
        if let Some(i) = self.instances.iter_mut().find(|i| i.id == id) {
            if let Some(ip) = i.public_ip.take() {
                self.addresses.release(&ip.address);
            }
            if i.charge_type == charge::PREPAID {
                i.shutdown = true;
            } else {
                i.terminating_since = Some(at);
            }
        }
    }

    pub fn to_json(&self, ctx_now: Timestamp) -> Value {
        let ts = |t: &Timestamp| t.to_string();
        json!({
            "instances": self.instances.iter().map(|i| json!({
                "InstanceId": i.id, "Region": i.region, "Zone": i.zone, "InstanceType": i.instance_type,
                "InstanceChargeType": i.charge_type, "ImageId": i.image_id, "InstanceName": i.name,
                "CreatedTime": ts(&i.created), "RunningAt": ts(&i.running_at),
                "Terminating": i.terminating_since.is_some(), "Shutdown": i.shutdown,
                "AutoReleaseTime": i.auto_release_at.as_ref().map(ts),
                "Tags": i.tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>(),
                "SystemDiskId": i.system_disk, "DataDiskIds": i.data_disks, "KeyIds": i.key_ids,
                "VirtualPrivateCloud": { "VpcId": i.vpc_id, "SubnetId": i.subnet_id },
                "SecurityGroupIds": i.security_groups,
                "PublicIpAddress": i.public_ip.as_ref().map(|p| p.address.clone()),
                "UserData": i.user_data,
                "CamRoleName": i.cam_role,
                "InstanceState": i.state(ctx_now),
                "StoppedMode": i.stopped.as_ref().map(|(_, m)| m.clone()),
                "SpotTerminationTime": i.reclaim_at.as_ref().map(ts),
            })).collect::<Vec<_>>(),
            "key_pairs": self.key_pairs.view(),
            "vpcs": self.vpcs.iter().map(|x| json!({
                "id": x.id, "region": x.region, "name": x.name, "cidr": x.cidr.text(),
                "tags": x.tags.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            })).collect::<Vec<_>>(),
            "subnets": self.subnets.iter().map(|x| json!({
                "id": x.id, "region": x.region, "vpc_id": x.vpc_id, "zone": x.zone, "name": x.name,
                "cidr": x.cidr.text(),
                "tags": x.tags.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            })).collect::<Vec<_>>(),
            "security_groups": self.groups.iter().map(|x| json!({
                "id": x.id, "region": x.region, "name": x.name, "ingress": x.ingress, "egress": x.egress,
                "tags": x.tags.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            })).collect::<Vec<_>>(),
            // Every public IP held (and billed) now; empty once every instance asking for one is gone.
            "public_ips": self.instances.iter().filter_map(|i| i.public_ip.as_ref().map(|p| json!({
                "PublicIpAddress": p.address, "InstanceId": i.id,
                "InternetChargeType": p.charge_type, "InternetMaxBandwidthOut": p.bandwidth_out,
            }))).collect::<Vec<_>>(),
            "disks": self.disks.iter().map(|d| json!({
                "DiskId": d.id, "Zone": d.zone, "DiskUsage": d.usage, "DiskType": d.disk_type,
                "DiskSize": d.size_gb, "InstanceId": d.instance_id, "AutoSnapshotPolicyIds": d.policy_ids,
                "Tags": d.tags.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            })).collect::<Vec<_>>(),
            "eips": crate::emulator::ops::leftover::eips_json(self),
            "snapshots": self.snapshots.iter().map(|s| json!({
                "SnapshotId": s.id, "DiskId": s.disk_id, "SnapshotName": s.name, "CreateTime": ts(&s.created),
                "AutoSnapshotPolicyId": s.policy_id, "Images": s.image_ids,
                "Tags": s.tags.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            })).collect::<Vec<_>>(),
            "images": self.images.iter().map(|i| json!({
                "ImageId": i.id, "ImageName": i.name, "SnapshotIds": i.snapshot_ids, "SourceInstanceId": i.source_instance,
            })).collect::<Vec<_>>(),
            "auto_snapshot_policies": self.policies.iter().map(|p| json!({
                "AutoSnapshotPolicyId": p.id, "AutoSnapshotPolicyName": p.name, "CreateTime": ts(&p.created),
                "NextTriggerTime": p.next_trigger.as_ref().map(ts),
            })).collect::<Vec<_>>(),
            "client_tokens": self.run_tokens.len(),
            "hpc_clusters": self.hpc_clusters.iter().map(|c| json!({
                "HpcClusterId": c.id, "Region": c.region, "Zone": c.zone, "Name": c.name,
                "InstanceIds": self.instances.iter().filter(|i| i.hpc_cluster_id.as_deref() == Some(c.id.as_str()))
                    .map(|i| i.id.clone()).collect::<Vec<_>>(),
                "Tags": c.tags.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            })).collect::<Vec<_>>(),
            "file_systems": self.file_systems.iter().map(|f| json!({
                "FileSystemId": f.id, "Region": f.region, "Zone": f.zone, "FsName": f.name,
                "StorageType": f.storage_type, "VpcId": f.vpc_id, "SubnetId": f.subnet_id,
                "MountTargetId": f.mount_id, "IpAddress": f.mount_ip, "Deleting": f.deleting_since.is_some(),
                "Tags": f.tags.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            })).collect::<Vec<_>>(),
        })
    }
}

/// CVM's time format: `2020-03-10T02:43:51Z`.
pub(crate) fn cvm_time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// CBS's time format: `2020-03-10 10:43:51` (UTC+8, as the API returns it).
pub(crate) fn cbs_time(t: Timestamp) -> String {
    t.to_zoned(TimeZone::fixed(jiff::tz::offset(8))).strftime("%Y-%m-%d %H:%M:%S").to_string()
}
