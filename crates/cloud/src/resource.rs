//! The resources the [`Cloud`](crate::cloud::Cloud) trait speaks of, in the users' words: disks by
//! category and size, network ids. The spec reads them, the engine passes them on, each client maps them
//! to its cloud's names.

/// Disk categories in the users' words; each client maps them (e.g. `ssd` → Tencent CLOUD_SSD,
/// Alibaba cloud_essd, JD ssd.gp1; `premium` → CLOUD_PREMIUM, cloud_efficiency, hdd.std1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiskCategory {
    Ssd,
    Premium,
}

impl DiskCategory {
    /// The users' word, as a spec writes it (and gpuctl-core's storage prices take it).
    pub fn as_str(self) -> &'static str {
        match self {
            DiskCategory::Ssd => "ssd",
            DiskCategory::Premium => "premium",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Disk {
    pub category: DiskCategory,
    pub size_gb: u32,
    /// Create the disk from this snapshot (used by `clone --from-snapshot`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetworkIds {
    pub vpc: String,
    pub subnet: String,
    pub security_groups: Vec<String>,
}

/// How a public IP's traffic is billed, in the users' words; each client maps it to its cloud's names
/// (Tencent TRAFFIC_POSTPAID_BY_HOUR / BANDWIDTH_POSTPAID_BY_HOUR, Alibaba PayByTraffic /
/// PayByBandwidth, JD postpaid_by_usage / postpaid_by_duration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PublicIpBilling {
    /// Per GB sent, with `bandwidth_mbps` as a cap.
    Traffic,
    /// Per Mbps of bandwidth per hour, whatever is sent.
    Bandwidth,
}

impl PublicIpBilling {
    pub fn as_str(self) -> &'static str {
        match self {
            PublicIpBilling::Traffic => "traffic",
            PublicIpBilling::Bandwidth => "bandwidth",
        }
    }
}

/// A public IPv4 address for an instance, with its outbound bandwidth cap and billing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PublicIp {
    pub bandwidth_mbps: u32,
    pub billing: PublicIpBilling,
}

impl PublicIp {
    /// The spec's default: reachable instances at a small cap, billed only for what is sent.
    pub const DEFAULT: PublicIp = PublicIp { bandwidth_mbps: 10, billing: PublicIpBilling::Traffic };
}
