//! Disk: snapshots of an instance's cloud disks (jdcloud_sdk `services/disk`, API v1).

use gpuctl_cloud::cloud::{CloudError, SnapshotState};
use gpuctl_cloud::Provider;
use serde_json::json;

use super::{filter_query, Call, Client};

fn disk<'a>(action: &'a str, method: &'a str) -> Call<'a> {
    Call { service: "disk", action, method, path: "snapshots" }
}

pub(super) async fn snapshot(
    c: &Client,
    region: &str,
    disk_id: &str,
    name: &str,
    client_token: &str,
) -> Result<String, CloudError> {
    let body = json!({ "regionId": region, "snapshotSpec": { "name": name, "diskId": disk_id, "description": "gpuctl snapshot" }, "clientToken": client_token });
    let a = c.call(disk("createSnapshot", "POST"), region, vec![], Some(body)).await?;
    Ok(a.get("snapshotId").text())
}

pub(super) async fn snapshot_state(
    c: &Client,
    region: &str,
    snapshot_id: &str,
) -> Result<SnapshotState, CloudError> {
    let q = filter_query(&[("snapshotId", vec![snapshot_id.to_string()])]);
    let a = c.call(disk("describeSnapshots", "GET"), region, q, None).await?;
    let listed = a.get("snapshots").at(0);
    if listed.value().is_null() {
        return Err(CloudError::not_listed(
            Provider::JdCloud,
            "describeSnapshots",
            "NOT_FOUND",
            format!("snapshot {snapshot_id}"),
            a.request_id,
        ));
    }
    match listed.get("status").text().as_str() {
        "available" => Ok(SnapshotState::Available),
        "creating" => Ok(SnapshotState::Creating),
        _ => Ok(SnapshotState::Failed),
    }
}
