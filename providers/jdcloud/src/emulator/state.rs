//! The JD Cloud emulator's state model: VM instances with their cloud disks, disk snapshots, images
//! and snapshot policies, plus the time-driven parts advanced by `tick`: boot (pending → running),
//! failed creations (error → deleted), auto-release, and policy runs with their lifecycle.

use std::collections::BTreeMap;

use gpuctl_simkit::{AddressPool, TokenGate};
use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::ops::vpc::{Group, Subnet, Vpc};
use super::ops::zfs::{FileSystem, MountTarget, FS_DELETE_TAKES};

/// How long a failed instance shows `error` before JD deletes it, and how long snapshots and
/// images take to become available, on the sim clock.
pub const ERROR_VISIBLE: SignedDuration = SignedDuration::from_secs(10);
pub const SNAPSHOT_TAKES: SignedDuration = SignedDuration::from_secs(5);
pub const IMAGE_TAKES: SignedDuration = SignedDuration::from_secs(10);

#[derive(Clone, Debug, Serialize)]
pub struct Instance {
    pub id: String,
    pub region: String,
    pub az: String,
    pub instance_type: String,
    pub image_id: String,
    pub name: String,
    pub hostname: String,
    pub description: String,
    /// `prepaid_by_duration`, `postpaid_by_usage` or `postpaid_by_duration`.
    pub charge_mode: String,
    pub charge_expires: Option<Timestamp>,
    /// A prepaid term's length: what an automatic renewal buys again.
    pub charge_term: Option<SignedDuration>,
    /// Whether the prepaid term renews itself at its end (createInstances `charge.autoRenew`, then
    /// the renewal service's setRenewal OPEN/CLOSE).
    pub auto_renew: bool,
    pub created: Timestamp,
    /// Creation failed (not enough stock): the instance shows `error`, then is deleted.
    pub failed: bool,
    pub auto_release: Option<Timestamp>,
    pub tags: Vec<(String, String)>,
    pub subnet_id: String,
    pub vpc_id: String,
    pub private_ip: String,
    /// `primaryNetworkInterface.networkInterface.securityGroups` as given.
    pub security_groups: Vec<String>,
    pub system_disk_id: Option<String>,
    pub data_disk_ids: Vec<String>,
    pub key_names: Vec<String>,
    /// `instanceSpec.metadata` as given: only readable through the metadata service and
    /// describeInstancesCustomData, never run.
    pub metadata: Vec<(String, String)>,
    /// The `launch-script` of `instanceSpec.userdata`, base64 as sent; JD shows it in
    /// describeInstancesCustomData (jdcloud_sdk 1.6.354 services/vm/models/CustomData.py), not in
    /// describeInstances.
    pub launch_script: Option<String>,
}

impl Instance {
    /// An expired prepaid term (not renewed) stops the VM: it keeps its disks and can now be
    /// deleted (DeleteInstanceRequest.py: 包年包月已到期), but no longer runs.
    pub fn status(&self, now: Timestamp, boot: SignedDuration) -> &'static str {
        let age = now.duration_since(self.created);
        match (self.failed, age < boot) {
            (_, true) => "pending",
            (true, false) => "error",
            (false, false) if self.expired(now) => "stopped",
            (false, false) => "running",
        }
    }

    /// Whether a prepaid term has ended by `now`.
    pub fn expired(&self, now: Timestamp) -> bool {
        self.charge_expires.is_some_and(|e| e <= now)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Disk {
    pub id: String,
    pub region: String,
    pub az: String,
    pub name: String,
    /// `ssd.gp1`, `ssd.io1`, `hdd.std1`, ...
    pub disk_type: String,
    pub size_gb: i64,
    pub instance_id: Option<String>,
    pub device: String,
    pub auto_delete: bool,
    pub snapshot_id: String,
    pub created: Timestamp,
    pub policy_ids: Vec<String>,
    pub charge_mode: String,
    /// Disk.py `tags` (a planted disk's; createInstances gives its disks none here).
    pub tags: Vec<(String, String)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Snapshot {
    pub id: String,
    pub region: String,
    pub name: String,
    pub description: String,
    pub disk_id: String,
    pub size_gb: i64,
    pub created: Timestamp,
    /// Set for snapshots a policy made with a lifecycle.
    pub expires: Option<Timestamp>,
    pub images: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Image {
    pub id: String,
    pub region: String,
    pub name: String,
    pub description: String,
    pub instance_id: String,
    pub snapshot_ids: Vec<String>,
    pub created: Timestamp,
}

#[derive(Clone, Debug, Serialize)]
pub struct SnapshotPolicy {
    pub id: String,
    pub region: String,
    pub name: String,
    /// Seconds between runs (JD: at least 12 hours).
    pub interval: i64,
    pub effective: Timestamp,
    /// Seconds a policy snapshot is kept; 0 keeps it.
    pub lifecycle: i64,
    /// 1 enabled, 2 disabled.
    pub status: i64,
    pub created: Timestamp,
    pub last_run: Option<Timestamp>,
    pub contact_info: serde_json::Value,
}

impl SnapshotPolicy {
    /// The first run strictly after `t`.
    pub fn next_run_after(&self, t: Timestamp) -> Timestamp {
        if t < self.effective {
            return self.effective;
        }
        let k = t.duration_since(self.effective).as_secs() / self.interval + 1;
        self.effective + SignedDuration::from_secs(k * self.interval)
    }
}

/// An elastic IP made by createInstances' `instanceSpec.elasticIp` (jdcloud_sdk 1.6.354
/// services/vpc/models/ElasticIpSpec.py). It is its own resource: deleteInstance leaves it (unbound,
/// still billed) unless `deletePrimaryNetworkInterfaceAllElasticIp` is true
/// (services/vm/apis/DeleteInstanceRequest.py: "云主机中绑定的弹性公网IP可以选择是否随云主机一起删除", "默认为否").
#[derive(Clone, Debug, Serialize)]
pub struct ElasticIp {
    pub id: String,
    pub region: String,
    pub address: String,
    pub bandwidth_mbps: i64,
    pub provider: String,
    /// postpaid_by_usage, postpaid_by_duration or prepaid_by_duration.
    pub charge_mode: String,
    /// The instance it is bound to; `None` once that instance is gone without it.
    pub instance_id: Option<String>,
    pub created: Timestamp,
    /// ElasticIp.py `tags` (a planted one's; ElasticIpSpec takes none).
    pub tags: Vec<(String, String)>,
}

#[derive(Debug, Default, Serialize)]
pub struct JdState {
    pub instances: BTreeMap<String, Instance>,
    pub disks: BTreeMap<String, Disk>,
    pub snapshots: BTreeMap<String, Snapshot>,
    pub images: BTreeMap<String, Image>,
    pub snapshot_policies: BTreeMap<String, SnapshotPolicy>,
    pub elastic_ips: BTreeMap<String, ElasticIp>,
    /// The VPCs, subnets and security groups made through the vpc API (`ops/vpc.rs`).
    #[serde(skip)]
    pub vpcs: BTreeMap<String, Vpc>,
    #[serde(skip)]
    pub subnets: BTreeMap<String, Subnet>,
    #[serde(skip)]
    pub security_groups: BTreeMap<String, Group>,
    /// The zfs file systems and their mount targets (`ops/zfs.rs`, issue 14).
    #[serde(skip)]
    pub file_systems: BTreeMap<String, FileSystem>,
    #[serde(skip)]
    pub mount_targets: BTreeMap<String, MountTarget>,
    /// GPU utilization settings and power transitions (issue 15): what describeMetricData answers.
    #[serde(skip)]
    pub gpu: gpuctl_simkit::GpuBook,
    #[serde(skip)]
    pub addresses: AddressPool,
    /// clientToken → the first call's result, per operation ("createInstances:token").
    #[serde(skip)]
    pub tokens: TokenGate<serde_json::Value>,
    /// How many more instances of (type, az) can be created before the rest fail; absent means
    /// unlimited. Stock-out knobs mean zero; this finer limit is what makes partial success.
    #[serde(skip)]
    pub available: BTreeMap<(String, String), u32>,
    /// Where the policies were last evaluated up to.
    #[serde(skip)]
    pub policies_evaluated: Option<Timestamp>,
    /// Imported SSH key pairs (importKeypair); JD names them by `keyName`.
    #[serde(skip)]
    pub key_pairs: gpuctl_simkit::sshkey::KeyStore,
    /// What every instance was billed (issue 15): kept after the instance leaves, for queryBillDetail.
    #[serde(skip)]
    pub bills: gpuctl_simkit::bill::Ledger,
}

impl JdState {
    /// Delete an instance at `at`: its bill stops there (issue 15), then it goes as `remove_instance`.
    pub fn release_instance(&mut self, id: &str, with_elastic_ip: bool, at: Timestamp) -> Option<Instance> {
        // Billing stops at the deletion (issue 15); a prepaid term was paid up front.
        self.bills.close(id, at);
        self.remove_instance(id, with_elastic_ip)
    }

    /// Delete an instance with the disks marked autoDelete; other disks are detached and stay. Its
    /// elastic IP is deleted when `with_elastic_ip`, else unbound and kept (deleteInstance's default).
    /// The bill is not closed here: `release_instance` does both.
    pub fn remove_instance(&mut self, id: &str, with_elastic_ip: bool) -> Option<Instance> {
        let inst = self.instances.remove(id)?;
        self.gpu.forget(id);
        let bound: Vec<String> = self
            .elastic_ips
            .values()
            .filter(|e| e.instance_id.as_deref() == Some(id))
            .map(|e| e.id.clone())
            .collect();
        for eip in bound {
            if with_elastic_ip {
                if let Some(e) = self.elastic_ips.remove(&eip) {
                    self.addresses.release(&e.address);
                }
            } else if let Some(e) = self.elastic_ips.get_mut(&eip) {
                e.instance_id = None;
            }
        }
        let mut gone = Vec::new();
        for d in self.disks.values_mut().filter(|d| d.instance_id.as_deref() == Some(id)) {
            if d.auto_delete {
                gone.push(d.id.clone());
            } else {
                d.instance_id = None;
            }
        }
        for d in gone {
            self.disks.remove(&d);
        }
        Some(inst)
    }

    /// Bring the state to `now`: delete failed instances after their `error` spell and instances
    /// whose autoReleaseTime has come, run snapshot policies, expire policy snapshots.
    pub fn tick(&mut self, now: Timestamp, boot: SignedDuration, new_id: &mut dyn FnMut(&str) -> String) {
        // Automatic renewal buys the term again at its end, as often as the clock passed one.
        for i in self.instances.values_mut().filter(|i| i.auto_renew) {
            if let (Some(mut end), Some(term)) = (i.charge_expires, i.charge_term) {
                while end <= now && term.is_positive() {
                    end += term;
                }
                i.charge_expires = Some(end);
            }
        }
        // Replay in time order, so policy runs due before a deletion still see that instance's
        // disks even when the clock jumped past both.
        let mut due: Vec<(Timestamp, String)> = self
            .instances
            .values()
            .filter_map(|i| {
                let failed_gone = i.failed.then(|| i.created + boot + ERROR_VISIBLE);
                let at = match (failed_gone, i.auto_release) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                at.filter(|t| *t <= now).map(|t| (t, i.id.clone()))
            })
            .collect();
        due.sort();
        for (at, id) in due {
            self.run_policies(at, new_id);
            // A release time deletes the instance the way deleteInstance's default does: the elastic
            // IP stays (the definitions say nothing more; gpuctl's destroy deletes it explicitly).
            self.release_instance(&id, false, at);
        }
        self.run_policies(now, new_id);
        // A deleted file system shows `deleting` for a while, then is gone.
        self.file_systems.retain(|_, f| f.deleting.is_none_or(|d| now.duration_since(d) < FS_DELETE_TAKES));
    }

    /// Run enabled snapshot policies for every due time in (last evaluation, now], then drop policy
    /// snapshots past their lifecycle.
    fn run_policies(&mut self, now: Timestamp, new_id: &mut dyn FnMut(&str) -> String) {
        let since = self.policies_evaluated.unwrap_or(now).min(now);
        self.policies_evaluated = Some(now);
        let policies: Vec<SnapshotPolicy> =
            self.snapshot_policies.values().filter(|p| p.status == 1).cloned().collect();
        for policy in policies {
            let mut run = policy.next_run_after(since.max(now - SignedDuration::from_hours(24 * 366)));
            while run <= now {
                let disks: Vec<Disk> =
                    self.disks.values().filter(|d| d.policy_ids.contains(&policy.id)).cloned().collect();
                for disk in disks {
                    let id = new_id("snapshot-");
                    self.snapshots.insert(
                        id.clone(),
                        Snapshot {
                            id,
                            region: disk.region.clone(),
                            name: format!("{}-{}", policy.name, run.as_second()),
                            description: format!("snapshot policy {}", policy.id),
                            disk_id: disk.id.clone(),
                            size_gb: disk.size_gb,
                            created: run,
                            expires: (policy.lifecycle > 0)
                                .then(|| run + SignedDuration::from_secs(policy.lifecycle)),
                            images: Vec::new(),
                        },
                    );
                }
                if let Some(p) = self.snapshot_policies.get_mut(&policy.id) {
                    p.last_run = Some(run);
                }
                run += SignedDuration::from_secs(policy.interval);
            }
        }
        self.snapshots.retain(|_, s| !s.images.is_empty() || s.expires.is_none_or(|e| e > now));
    }
}
