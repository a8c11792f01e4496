//! What the admin API's `POST /_sim/plant` asks an emulator to hold (issue 15): a disk, public IP,
//! snapshot or file system that no gpuctl run made — an untagged or foreign leftover, or one backdated
//! so it reads as old — for the `gpuctl sweep` tests. Each emulator makes it in its own model, so its
//! describe and delete calls answer for it exactly as for one it made itself. Leftovers that arise the
//! natural way (a data disk not deleted with its instance, JD's elastic IP kept by deleteInstance,
//! gpuctl's own snapshots, a kept file system) need no planting.

use std::collections::BTreeMap;

use crate::Provider;

/// The kinds a test can plant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlantKind {
    Disk,
    PublicIp,
    Snapshot,
    FileSystem,
}

/// One resource to plant. Fields a kind does not use are ignored by it; a missing one takes the
/// emulator's default (its cheapest class, 10 GB, now).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plant {
    pub provider: Provider,
    pub kind: PlantKind,
    pub region: String,
    #[serde(default)]
    pub zone: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub size_gb: Option<i64>,
    /// The cloud's own word: a disk type (`CLOUD_SSD`, `cloud_essd`, `ssd.gp1`), a file system's
    /// storage type (`SD`, `Capacity`, `std1`), an IP's charge type.
    #[serde(default)]
    pub class: Option<String>,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// When the cloud says it was made (in the sim's past, so a snapshot reads as old): RFC 3339.
    #[serde(default, deserialize_with = "timestamp")]
    pub created: Option<jiff::Timestamp>,
    /// A disk attached to / an IP bound to this instance: a live resource, not a leftover.
    #[serde(default)]
    pub attached_to: Option<String>,
    /// A snapshot's source disk (planted or real); without one the snapshot names a disk id of its own.
    #[serde(default)]
    pub disk_id: Option<String>,
}

/// An RFC 3339 time (read here: this crate's jiff has no serde feature).
fn timestamp<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<jiff::Timestamp>, D::Error> {
    use serde::Deserialize;
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(s) => s.parse().map(Some).map_err(serde::de::Error::custom),
    }
}

impl Plant {
    pub fn size_or(&self, default: i64) -> i64 {
        self.size_gb.filter(|s| *s > 0).unwrap_or(default)
    }

    pub fn tag_pairs(&self) -> Vec<(String, String)> {
        self.tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}
