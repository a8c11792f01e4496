//! CBS: an instance's cloud disks and their snapshots (API 2017-03-12,
//! tencentcloud-sdk-python-cbs 3.1.175 `models.py`).

use gpuctl_cloud::cloud::{system_disk_first, CloudError, DiskInfo, DiskKind, SnapshotState};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::services::Disks;
use gpuctl_cloud::{Disk, Provider};
use serde_json::json;

use super::{category_back, Client};
use crate::api::{codes, CBS};

/// A disk as CVM's `SystemDisk`/`DataDisks` and CBS's `DiskSet` write it; `None` without an id.
pub(super) fn disk_of(d: &Field) -> Option<DiskInfo> {
    let id = d.get("DiskId").opt_text()?;
    Some(DiskInfo {
        disk_id: id,
        disk: Disk {
            category: category_back(&d.get("DiskType").text()),
            size_gb: d.get("DiskSize").u64().unwrap_or(0) as u32,
            snapshot_id: None,
        },
    })
}

impl Disks for Client {
    async fn disks(&self, region: &str, instance_id: &str) -> Result<Vec<(DiskKind, DiskInfo)>, CloudError> {
        let body = json!({ "Filters": [{ "Name": "instance-id", "Values": [instance_id] }], "Limit": 100 });
        let a = self.call(CBS, region, "DescribeDisks", body).await?;
        let mut out: Vec<(DiskKind, DiskInfo)> = a
            .get("DiskSet")
            .items()
            .iter()
            .filter_map(|d| {
                let kind = if d.get("DiskUsage").text() == "SYSTEM_DISK" {
                    DiskKind::System
                } else {
                    DiskKind::Data
                };
                disk_of(d).map(|info| (kind, info))
            })
            .collect();
        system_disk_first(&mut out);
        Ok(out)
    }

    async fn snapshot(
        &self,
        region: &str,
        disk_id: &str,
        name: &str,
        _client_token: &str,
    ) -> Result<String, CloudError> {
        // CBS CreateSnapshot takes no client token: a snapshot already made under this (unique) name is adopted.
        let filters = json!({ "Filters": [{ "Name": "snapshot-name", "Values": [name] }, { "Name": "disk-id", "Values": [disk_id] }] });
        let found = self.call(CBS, region, "DescribeSnapshots", filters).await?;
        if let Some(id) = found.get("SnapshotSet").at(0).get("SnapshotId").opt_text() {
            return Ok(id);
        }
        let a = self
            .call(CBS, region, "CreateSnapshot", json!({ "DiskId": disk_id, "SnapshotName": name }))
            .await?;
        Ok(a.get("SnapshotId").text())
    }

    async fn snapshot_state(&self, region: &str, snapshot_id: &str) -> Result<SnapshotState, CloudError> {
        let a = self.call(CBS, region, "DescribeSnapshots", json!({ "SnapshotIds": [snapshot_id] })).await?;
        let listed = a.listed(
            Provider::Tencent,
            "DescribeSnapshots",
            codes::INVALID_SNAPSHOT_ID_NOT_FOUND,
            format!("snapshot {snapshot_id}"),
            a.get("SnapshotSet").at(0),
        )?;
        match listed.get("SnapshotState").text().as_str() {
            "NORMAL" => Ok(SnapshotState::Available),
            "CREATING" | "COPYING_FROM_REMOTE" | "CHECKING_COPIED" => Ok(SnapshotState::Creating),
            _ => Ok(SnapshotState::Failed),
        }
    }
}
