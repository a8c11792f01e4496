//! The ECS emulator's state model: instances, their disks, snapshots, images and automatic snapshot
//! policies, plus the time-driven parts (boot states, auto-release, policy runs) advanced by `tick`.
//! Everything here is plain data with no wire format; `ops.rs` reads requests and renders answers.

use std::collections::BTreeMap;

use gpuctl_simkit::{AddressPool, TokenGate};
use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

/// How long each boot phase lasts on the sim clock. Real ECS takes tens of seconds; the sim keeps
/// the same order so pollers are exercised, and tests move the clock instead of waiting.
#[derive(Clone, Copy, Debug)]
pub struct Timings {
    pub pending: SignedDuration,
    pub starting: SignedDuration,
    /// From StopInstance until `Stopped`.
    pub stopping: SignedDuration,
    /// From CreateSnapshot until the snapshot is `accomplished`.
    pub snapshot: SignedDuration,
    /// From CreateImage until the image is `Available`.
    pub image: SignedDuration,
    /// From CreateVpc until the VPC is `Available` (a vSwitch cannot be made in it before).
    pub vpc: SignedDuration,
    /// From CreateFileSystem until the file system is `Running`, and from DeleteFileSystem until it
    /// is gone (NAS shows `Pending` for both: "create/start/stop/delete in progress").
    pub file_system: SignedDuration,
    /// From CreateMountTarget until the mount target is `Active`.
    pub mount_target: SignedDuration,
}

impl Default for Timings {
    fn default() -> Self {
        Self {
            pending: SignedDuration::from_secs(2),
            starting: SignedDuration::from_secs(3),
            stopping: SignedDuration::from_secs(2),
            snapshot: SignedDuration::from_secs(5),
            image: SignedDuration::from_secs(10),
            vpc: SignedDuration::from_secs(1),
            file_system: SignedDuration::from_secs(2),
            mount_target: SignedDuration::from_secs(2),
        }
    }
}

/// ECS instance statuses (`Instance.Status`), in the cloud's spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Status {
    Pending,
    Starting,
    Running,
    Stopping,
    Stopped,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "Pending",
            Status::Starting => "Starting",
            Status::Running => "Running",
            Status::Stopping => "Stopping",
            Status::Stopped => "Stopped",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Instance {
    pub id: String,
    pub region: String,
    pub zone: String,
    pub instance_type: String,
    pub image_id: String,
    pub name: String,
    pub description: String,
    pub host_name: String,
    /// `PostPaid` or `PrePaid`.
    pub charge_type: String,
    /// `NoSpot`, `SpotWithPriceLimit`, `SpotAsPriceGo`.
    pub spot_strategy: String,
    pub spot_price_limit: Option<f64>,
    /// PrePaid term: (Period, PeriodUnit) such as (1, "Week").
    pub term: Option<(u32, String)>,
    pub created: Timestamp,
    pub auto_release: Option<Timestamp>,
    pub expires: Option<Timestamp>,
    pub tags: Vec<(String, String)>,
    pub security_group_ids: Vec<String>,
    pub vpc_id: String,
    pub vswitch_id: String,
    pub private_ip: String,
    pub internet_max_bandwidth_out: i64,
    /// RunInstances' `KeyPairName`, checked against the region's key pairs; empty for none.
    pub key_pair_name: String,
    /// `PayByTraffic` (the default) or `PayByBandwidth`.
    pub internet_charge_type: String,
    /// Given when InternetMaxBandwidthOut is above 0 and released with the instance: ECS's public IP
    /// belongs to the instance, unlike an EIP (alibabacloud-ecs20140526 7.11.8
    /// models/_run_instances_request.py InternetMaxBandwidthOut; DescribeInstances' PublicIpAddress).
    pub public_ip: Option<String>,
    pub deletion_protection: bool,
    /// Set by StopInstance(s); absent means the instance follows its boot schedule.
    pub stopped_at: Option<Timestamp>,
    /// Catalog figures copied at creation, so DescribeInstances shows what was sold.
    pub cpu: i64,
    pub memory_mib: i64,
    pub gpu_amount: i64,
    pub gpu_spec: String,
    pub family: String,
    /// RunInstances' `UserData`, base64 as sent; shown in `/_sim/state` only (DescribeInstances has no
    /// such field; ECS answers it through DescribeUserData).
    pub user_data: Option<String>,
    /// RunInstances' `DeploymentSetId` (issue 14).
    pub deployment_set_id: Option<String>,
    /// RunInstances' `RamRoleName` (alibabacloud-ecs20140526 7.11.8 models/_run_instances_request.py
    /// `ram_role_name`): the metadata service issues this role's temporary credentials.
    pub ram_role: Option<String>,
    /// StopInstances' effective `StoppedMode` (`StopCharging` or `KeepCharging`), while stopped.
    pub stopped_mode: Option<String>,
    /// A spot reclaim (`POST /_sim/reclaim`): the termination time the metadata service serves;
    /// the instance is released when the sim clock reaches it.
    pub reclaim_at: Option<Timestamp>,
}

impl Instance {
    /// The status at `now`: Pending → Starting → Running on the sim clock unless stopped.
    pub fn status(&self, now: Timestamp, t: &Timings) -> Status {
        if let Some(at) = self.stopped_at {
            return if now.duration_since(at) < t.stopping { Status::Stopping } else { Status::Stopped };
        }
        let age = now.duration_since(self.created);
        if age < t.pending {
            Status::Pending
        } else if age < t.pending + t.starting {
            Status::Starting
        } else {
            Status::Running
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Disk {
    pub id: String,
    pub region: String,
    pub zone: String,
    pub instance_id: Option<String>,
    /// `system` or `data`.
    pub kind: &'static str,
    pub category: String,
    pub size_gib: i64,
    pub device: String,
    pub image_id: String,
    pub source_snapshot_id: String,
    pub created: Timestamp,
    pub delete_with_instance: bool,
    pub auto_snapshot_policy_id: Option<String>,
    pub charge_type: String,
    pub name: String,
    /// RunInstances' `Tag.N` ("The tag information of the instance, cloud disks, and primary ENI").
    pub tags: Vec<(String, String)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Snapshot {
    pub id: String,
    pub region: String,
    pub name: String,
    pub description: String,
    pub disk_id: String,
    pub disk_size_gib: i64,
    /// `System` or `Data` (DescribeSnapshots `SourceDiskType`).
    pub disk_kind: &'static str,
    pub created: Timestamp,
    pub retention_days: Option<i64>,
    /// `user` (CreateSnapshot) or `auto` (a policy run).
    pub snapshot_type: &'static str,
    pub tags: Vec<(String, String)>,
    /// Images made from this snapshot (a snapshot in use by an image cannot be deleted).
    pub used_by_images: Vec<String>,
}

impl Snapshot {
    pub fn accomplished(&self, now: Timestamp, t: &Timings) -> bool {
        now.duration_since(self.created) >= t.snapshot
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Image {
    pub id: String,
    pub region: String,
    pub name: String,
    pub source_instance_id: Option<String>,
    pub snapshot_ids: Vec<String>,
    pub created: Timestamp,
}

#[derive(Clone, Debug, Serialize)]
pub struct AutoSnapshotPolicy {
    pub id: String,
    pub region: String,
    pub name: String,
    /// Hours of the day (0-23, UTC+8 as in the console; the sim uses UTC+8 too).
    pub time_points: Vec<u8>,
    /// 1 = Monday … 7 = Sunday.
    pub repeat_weekdays: Vec<u8>,
    /// -1 keeps snapshots forever.
    pub retention_days: i64,
    pub created: Timestamp,
    /// The last whole hour the policy was evaluated up to (so a clock jump runs each slot once).
    pub evaluated_until: Timestamp,
}

/// A deployment set (CreateDeploymentSet); its instances are those whose `deployment_set_id` names it.
#[derive(Clone, Debug, Serialize)]
pub struct DeploymentSet {
    pub id: String,
    pub region: String,
    pub name: String,
    pub description: String,
    /// `Availability`, `AvailabilityGroup` or `LowLatency`.
    pub strategy: String,
    pub created: Timestamp,
}

/// A NAS mount target: named by its domain, in one vSwitch of one VPC.
#[derive(Clone, Debug, Serialize)]
pub struct MountTarget {
    pub domain: String,
    pub vpc_id: String,
    pub vswitch_id: String,
    pub access_group: String,
    pub created: Timestamp,
}

/// A NAS file system (CreateFileSystem; gpuctl makes `standard` ones).
#[derive(Clone, Debug, Serialize)]
pub struct FileSystem {
    pub id: String,
    pub region: String,
    pub zone: String,
    pub fs_type: String,
    pub protocol_type: String,
    pub storage_type: String,
    pub description: String,
    pub tags: Vec<(String, String)>,
    pub created: Timestamp,
    /// Set by DeleteFileSystem: `Pending` until [`Timings::file_system`] later, then gone.
    pub deleted: Option<Timestamp>,
    /// `MeteredSize` (bytes stored): 0 for one gpuctl made (nothing writes to it here), what a test
    /// planted otherwise.
    pub metered_bytes: i64,
    pub mount_targets: Vec<MountTarget>,
}

impl FileSystem {
    /// `Pending` while being created or deleted, else `Running`.
    pub fn status(&self, now: Timestamp, t: &Timings) -> &'static str {
        let running = self.deleted.is_none() && now.duration_since(self.created) >= t.file_system;
        if running {
            crate::api::nas::FS_RUNNING
        } else {
            crate::api::nas::FS_PENDING
        }
    }
}

impl MountTarget {
    pub fn status(&self, now: Timestamp, t: &Timings) -> &'static str {
        if now.duration_since(self.created) >= t.mount_target {
            crate::api::nas::MOUNT_ACTIVE
        } else {
            crate::api::nas::MOUNT_PENDING
        }
    }
}

#[derive(Debug, Default, Serialize)]
pub struct EcsState {
    pub instances: BTreeMap<String, Instance>,
    pub disks: BTreeMap<String, Disk>,
    pub snapshots: BTreeMap<String, Snapshot>,
    pub images: BTreeMap<String, Image>,
    pub auto_snapshot_policies: BTreeMap<String, AutoSnapshotPolicy>,
    /// ClientToken → the first call's answer, per action ("RunInstances:token").
    #[serde(skip)]
    pub tokens: TokenGate<serde_json::Value>,
    /// Imported SSH key pairs (ImportKeyPair); ECS names them by `KeyPairName`.
    #[serde(skip)]
    pub key_pairs: gpuctl_simkit::sshkey::KeyStore,
    /// The public addresses instances hold.
    #[serde(skip)]
    pub addresses: AddressPool,
    /// The VPCs, vSwitches and security groups callers made (`ops/vpc.rs`).
    #[serde(skip)]
    pub net: crate::emulator::ops::vpc::Network,
    /// Deployment sets (`ops/deployment_sets.rs`).
    pub deployment_sets: BTreeMap<String, DeploymentSet>,
    /// NAS file systems with their mount targets (`ops/nas.rs`).
    pub file_systems: BTreeMap<String, FileSystem>,
    /// GPU utilization settings and power transitions (issue 15): what DescribeMetricList answers.
    #[serde(skip)]
    pub gpu: gpuctl_simkit::GpuBook,
    /// VPC's elastic IPs (planted: gpuctl allocates none on Alibaba), `ops/leftover.rs`.
    pub eips: BTreeMap<String, crate::emulator::ops::leftover::Eip>,
    /// What every instance was billed (issue 15): kept after the instance leaves, for DescribeInstanceBill.
    #[serde(skip)]
    pub bills: gpuctl_simkit::bill::Ledger,
}

/// Beijing time, which ECS automatic-snapshot time points are written in.
const POLICY_OFFSET_HOURS: i64 = 8;

impl EcsState {
    /// Release an instance at `at`: its bill stops there (issue 15), then it goes as `remove_instance`.
    pub fn release_instance(&mut self, id: &str, at: Timestamp) -> Option<Instance> {
        self.bills.close(id, at);
        self.remove_instance(id)
    }

    /// Remove an instance with the disks that go with it (system disk and `DeleteWithInstance` data
    /// disks); other data disks are detached and stay, as on ECS.
    pub fn remove_instance(&mut self, id: &str) -> Option<Instance> {
        let inst = self.instances.remove(id)?;
        self.gpu.forget(id);
        if let Some(ip) = &inst.public_ip {
            self.addresses.release(ip);
        }
        let mut gone = Vec::new();
        for disk in self.disks.values_mut() {
            if disk.instance_id.as_deref() == Some(id) {
                if disk.delete_with_instance {
                    gone.push(disk.id.clone());
                } else {
                    disk.instance_id = None;
                }
            }
        }
        for d in gone {
            self.disks.remove(&d);
        }
        // An EIP outlives its instance, unbound and still billed.
        for e in self.eips.values_mut().filter(|e| e.instance_id.as_deref() == Some(id)) {
            e.instance_id = None;
        }
        Some(inst)
    }

    /// Bring time-driven state up to `now`: release instances whose AutoReleaseTime has passed,
    /// run automatic snapshot policies for every hour slot since the last tick, and drop automatic
    /// snapshots past their retention.
    pub fn tick(&mut self, now: Timestamp, t: &Timings, new_id: &mut dyn FnMut(&str) -> String) {
        // A deleted file system stays listed `Pending` for a while, then is gone.
        self.file_systems.retain(|_, f| f.deleted.is_none_or(|at| now.duration_since(at) < t.file_system));
        // Replay in time order, so policy runs due before a release still see that instance's disks
        // even when the clock jumped past both.
        let mut due: Vec<(Timestamp, String)> = self
            .instances
            .values()
            .filter_map(|i| i.auto_release.filter(|t| *t <= now).map(|t| (t, i.id.clone())))
            .collect();
        // A reclaimed spot instance is released at its termination time (SpotInterruptionBehavior
        // Terminate, the default: alibabacloud-ecs20140526 7.11.8 models/_run_instances_request.py).
        due.extend(
            self.instances
                .values()
                .filter_map(|i| i.reclaim_at.filter(|t| *t <= now).map(|t| (t, i.id.clone()))),
        );
        due.sort();
        for (at, id) in due {
            self.run_policies(at, new_id);
            self.release_instance(&id, at);
        }
        self.run_policies(now, new_id);
    }

    fn run_policies(&mut self, now: Timestamp, new_id: &mut dyn FnMut(&str) -> String) {
        let policy_ids: Vec<String> = self.auto_snapshot_policies.keys().cloned().collect();
        for pid in policy_ids {
            let Some(policy) = self.auto_snapshot_policies.get(&pid).cloned() else { continue };
            let slots = due_slots(&policy, now);
            if let Some(p) = self.auto_snapshot_policies.get_mut(&pid) {
                p.evaluated_until = now;
            }
            let disks: Vec<Disk> = self
                .disks
                .values()
                .filter(|d| d.auto_snapshot_policy_id.as_deref() == Some(pid.as_str()))
                .cloned()
                .collect();
            for slot in slots {
                for disk in &disks {
                    let id = new_id("s-");
                    let retention = (policy.retention_days > 0).then_some(policy.retention_days);
                    self.snapshots.insert(
                        id.clone(),
                        Snapshot {
                            id,
                            region: disk.region.clone(),
                            name: format!("auto_{}_{}", slot.strftime("%Y%m%d%H"), disk.id),
                            description: format!("automatic snapshot by policy {pid}"),
                            disk_id: disk.id.clone(),
                            disk_size_gib: disk.size_gib,
                            disk_kind: if disk.kind == "system" { "System" } else { "Data" },
                            created: slot,
                            retention_days: retention,
                            snapshot_type: "auto",
                            tags: Vec::new(),
                            used_by_images: Vec::new(),
                        },
                    );
                }
            }
        }
        // Retention applies to automatic snapshots only; user snapshots stay until deleted.
        self.snapshots.retain(|_, s| match (s.snapshot_type, s.retention_days) {
            ("auto", Some(days)) => {
                !s.used_by_images.is_empty()
                    || now.duration_since(s.created) < SignedDuration::from_hours(24 * days)
            }
            _ => true,
        });
    }
}

/// The hour slots in (policy.evaluated_until, now] at which the policy fires. Bounded to one year
/// of slots so a huge clock jump stays cheap.
fn due_slots(policy: &AutoSnapshotPolicy, now: Timestamp) -> Vec<Timestamp> {
    let mut out = Vec::new();
    let start = policy.evaluated_until.max(now - SignedDuration::from_hours(24 * 366));
    // First whole hour strictly after `start`.
    let secs = start.as_second();
    let mut hour = Timestamp::from_second(secs - secs.rem_euclid(3600) + 3600).unwrap_or(now);
    while hour <= now {
        let local = hour.to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(POLICY_OFFSET_HOURS as i8)));
        let weekday = local.weekday().to_monday_one_offset() as u8;
        if policy.time_points.contains(&(local.hour() as u8)) && policy.repeat_weekdays.contains(&weekday) {
            out.push(hour);
        }
        hour += SignedDuration::from_hours(1);
    }
    out
}
