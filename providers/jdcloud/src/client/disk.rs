//! Disk: an instance's cloud disks (read from VM's describeInstance, which lists its attachments) and
//! their snapshots (jdcloud_sdk `services/disk`, API v1).

use gpuctl_cloud::cloud::{system_disk_first, CloudError, DiskInfo, DiskKind, SnapshotState};
use gpuctl_cloud::services::Disks;
use gpuctl_cloud::Provider;
use serde_json::json;

use super::{filter_query, vm, Call, Client};

fn disk<'a>(action: &'a str, method: &'a str) -> Call<'a> {
    Call { service: "disk", version: crate::api::API_VERSION, action, method, path: "snapshots" }
}

impl Disks for Client {
    async fn disks(&self, region: &str, instance_id: &str) -> Result<Vec<(DiskKind, DiskInfo)>, CloudError> {
        let path = format!("instances/{instance_id}");
        let a = self.call(vm::vm("describeInstance", "GET", &path), region, vec![], None).await?;
        let inst = vm::instance_of(&a.get("instance"), region);
        // A local system disk has no id and cannot be snapshotted; it is left out.
        let mut out: Vec<(DiskKind, DiskInfo)> = inst
            .system_disk
            .into_iter()
            .map(|d| (DiskKind::System, d))
            .chain(inst.data_disks.into_iter().map(|d| (DiskKind::Data, d)))
            .collect();
        system_disk_first(&mut out);
        Ok(out)
    }

    async fn snapshot(
        &self,
        region: &str,
        disk_id: &str,
        name: &str,
        client_token: &str,
    ) -> Result<String, CloudError> {
        let body = json!({ "regionId": region, "snapshotSpec": { "name": name, "diskId": disk_id, "description": "gpuctl snapshot" }, "clientToken": client_token });
        let a = self.call(disk("createSnapshot", "POST"), region, vec![], Some(body)).await?;
        Ok(a.get("snapshotId").text())
    }

    async fn snapshot_state(&self, region: &str, snapshot_id: &str) -> Result<SnapshotState, CloudError> {
        let q = filter_query(&[("snapshotId", vec![snapshot_id.to_string()])]);
        let a = self.call(disk("describeSnapshots", "GET"), region, q, None).await?;
        let listed = a.listed(
            Provider::JdCloud,
            "describeSnapshots",
            "NOT_FOUND",
            format!("snapshot {snapshot_id}"),
            a.get("snapshots").at(0),
        )?;
        match listed.get("status").text().as_str() {
            "available" => Ok(SnapshotState::Available),
            "creating" => Ok(SnapshotState::Creating),
            _ => Ok(SnapshotState::Failed),
        }
    }
}
