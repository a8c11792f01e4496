//! What gpuctl asks a cloud after the plan (issue 15), in the users' words: how busy an instance's GPUs
//! were (the clouds' monitoring APIs), what is left billing after the instances are gone (unattached
//! disks, unbound public IPs, snapshots, file systems) and what the cloud actually billed (bill lines).
//! The facts behind each field are in `docs/research/cost-control.md`; each client cites its definition.

use std::collections::BTreeMap;

/// One question to a monitoring API: GPU utilization of some instances of one region over a window.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UsageQuery {
    pub region: String,
    /// At most 50 per call on Tencent and Alibaba; a client splits longer lists itself.
    pub instance_ids: Vec<String>,
    pub start: jiff::Timestamp,
    pub end: jiff::Timestamp,
    /// Seconds between points; each client rounds to a period its cloud allows.
    pub period_s: u32,
}

impl UsageQuery {
    /// The period a client asks its cloud for: the shortest of the cloud's `allowed` periods (seconds,
    /// ascending) that is at least `period_s`, or the longest when none is: a coarser answer rather than
    /// a refused request.
    pub fn period_among(&self, allowed: &[u32]) -> u32 {
        allowed
            .iter()
            .copied()
            .find(|&p| p >= self.period_s)
            .or_else(|| allowed.last().copied())
            .unwrap_or(self.period_s)
    }

    /// How many periods of `period_s` seconds the window touches (aligned to multiples of the period,
    /// as the clouds align their points): what a request's point count is made of.
    pub fn periods_touched(&self, period_s: u32) -> u64 {
        let p = i64::from(period_s.max(1));
        let first = self.start.as_second().div_euclid(p);
        let last = self.end.as_second().div_euclid(p);
        (last - first + 1).max(0) as u64
    }
}

/// One sample: the average GPU utilization (percent, 0–100) over the period that starts at `at`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct UsagePoint {
    pub at: jiff::Timestamp,
    pub percent: f64,
}

/// An instance's GPU utilization as its cloud's monitoring reported it. `points` is empty when the
/// cloud has no data (no monitoring agent on the instance, or the window is before its launch):
/// unknown, never "idle".
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GpuUsage {
    pub instance_id: String,
    /// The cloud's metric name (e.g. Tencent `GpuUtil` in `QCE/CVM`), so a user can find it in the console.
    pub metric: String,
    pub period_s: u32,
    pub points: Vec<UsagePoint>,
}

/// A kind of resource that can outlive the instances it served and go on billing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftoverKind {
    /// A cloud disk attached to nothing.
    Disk,
    /// An elastic / public IP bound to nothing (Tencent and JD charge for holding one).
    PublicIp,
    /// A disk snapshot (any age: the engine applies the retention age).
    Snapshot,
    /// A shared file system (the engine decides whether a deployment still uses it).
    FileSystem,
}

impl LeftoverKind {
    pub const ALL: [LeftoverKind; 4] =
        [LeftoverKind::Disk, LeftoverKind::PublicIp, LeftoverKind::Snapshot, LeftoverKind::FileSystem];

    pub fn as_str(self) -> &'static str {
        match self {
            LeftoverKind::Disk => "disk",
            LeftoverKind::PublicIp => "public_ip",
            LeftoverKind::Snapshot => "snapshot",
            LeftoverKind::FileSystem => "file_system",
        }
    }
}

/// A resource a listing found that may be left over: the cloud's facts, no judgement.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Leftover {
    pub kind: LeftoverKind,
    pub id: String,
    pub region: String,
    pub zone: Option<String>,
    pub name: Option<String>,
    /// Disks: size; snapshots: the size the cloud bills (or the source disk's when that is all it says);
    /// file systems: the capacity used or provisioned, as the cloud reports it.
    pub size_gb: Option<f64>,
    /// The cloud's own word for the storage class or disk type (`CLOUD_SSD`, `cloud_essd`, `ssd.gp1`,
    /// `SD`…), which the engine prices; for IPs, the billing of its bandwidth.
    pub class: Option<String>,
    pub created: Option<jiff::Timestamp>,
    /// The cloud's tags; empty where the listing gives none (JD snapshots).
    pub tags: BTreeMap<String, String>,
}

/// A bill query: one calendar month (`YYYY-MM`, UTC+8 as the clouds bill), in one region for clouds
/// whose billing API is regional (JD); Tencent's and Alibaba's are account-wide and ignore `region`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BillQuery {
    pub month: String,
    pub region: String,
    /// Only these resources when non-empty (Tencent `ResourceId`, Alibaba `InstanceId`, JD `resourceIds`).
    pub resource_ids: Vec<String>,
}

/// One line of a cloud's bill. Amounts are CNY in the cloud's own decimal text, kept exact: the
/// engine sums them as decimals so totals reconcile to the bill to the last digit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BillLine {
    pub resource_id: String,
    /// The product in the cloud's words (`cvm`, `ecs`, `vm`, `cbs`…).
    pub product: String,
    pub region: Option<String>,
    /// The cloud's pay mode words (`postPay`, `PayAsYouGo`, JD billingType name).
    pub pay_mode: Option<String>,
    /// The span this line bills (RFC 3339), when the cloud says.
    pub start: Option<jiff::Timestamp>,
    pub end: Option<jiff::Timestamp>,
    /// Before discounts (Tencent `Cost`, Alibaba `PretaxGrossAmount`, JD `totalFee`).
    pub list_cny: Option<String>,
    /// After discounts, what is owed (Tencent `RealCost`, Alibaba `PretaxAmount`, JD `realTotalFee`).
    pub billed_cny: String,
}
