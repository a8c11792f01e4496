//! Disks, public IPs, snapshots and file systems that outlive instances (issue 15). Each listing is
//! read to its end (`Offset`/`Limit` 100: "Limit 默认20，最大100" in DescribeDisksRequest,
//! DescribeAddressesRequest and DescribeSnapshotsRequest, tccli 3.1.189.1 cbs/vpc api.json):
//! - disks: CBS `DescribeDisks` with `disk-state` = `UNATTACHED` ("未挂载"); returned by `TerminateDisks`;
//! - public IPs: VPC `DescribeAddresses` with `address-status` = `UNBIND`; released by `ReleaseAddresses`
//!   ("只有状态为 UNBIND 的 EIP 才能进行释放操作");
//! - snapshots: CBS `DescribeSnapshots`, every one (no age filter exists); `DeleteSnapshots`;
//! - file systems: CFS `DescribeCfsFileSystems`, every one (the Clusters client's paging, `cluster.rs`);
//!   deleted as the Clusters client deletes them.

use gpuctl_cloud::cloud::CloudError;
use gpuctl_cloud::cost::{listed_time, Leftover, LeftoverKind};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::services::{Clusters, Leftovers};
use serde_json::{json, Value};

use super::Client;
use crate::api::{CBS, VPC};

const PAGE: usize = 100;
const GIB: f64 = (1u64 << 30) as f64;

/// `[{Key, Value}]` (cbs/vpc `Tag`) or `[{TagKey, TagValue}]` (cfs `TagInfo`) as a map.
fn tags(list: Field, key: &str, value: &str) -> std::collections::BTreeMap<String, String> {
    list.items().iter().map(|t| (t.get(key).text(), t.get(value).text())).collect()
}

fn disk_of(d: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::Disk,
        id: d.get("DiskId").text(),
        region: region.to_string(),
        zone: d.get("Placement").get("Zone").opt_text(),
        name: d.get("DiskName").opt_text(),
        size_gb: d.get("DiskSize").f64(),
        class: d.get("DiskType").opt_text(),
        created: listed_time(&d.get("CreateTime").text()),
        tags: tags(d.get("Tags"), "Key", "Value"),
    }
}

fn address_of(a: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::PublicIp,
        id: a.get("AddressId").text(),
        region: region.to_string(),
        zone: None,
        // The address itself is what a user recognises; the EIP's own name is often empty.
        name: a.get("AddressIp").opt_text(),
        size_gb: None,
        class: a.get("InternetChargeType").opt_text(),
        created: listed_time(&a.get("CreatedTime").text()),
        tags: tags(a.get("TagSet"), "Key", "Value"),
    }
}

fn snapshot_of(s: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::Snapshot,
        id: s.get("SnapshotId").text(),
        region: region.to_string(),
        zone: s.get("Placement").get("Zone").opt_text(),
        name: s.get("SnapshotName").opt_text(),
        // Snapshot.DiskSize: "创建此快照的云硬盘大小" — the source disk's size, all the listing says.
        size_gb: s.get("DiskSize").f64(),
        class: None,
        created: listed_time(&s.get("CreateTime").text()),
        tags: tags(s.get("Tags"), "Key", "Value"),
    }
}

fn file_system_of(f: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::FileSystem,
        id: f.get("FileSystemId").text(),
        region: region.to_string(),
        zone: f.get("Zone").opt_text(),
        name: f.get("FsName").opt_text(),
        // SizeByte: "文件系统已使用容量。单位：Byte" — CFS bills what is stored.
        size_gb: f.get("SizeByte").f64().map(|b| b / GIB),
        class: f.get("StorageType").opt_text(),
        created: listed_time(&f.get("CreationTime").text()),
        tags: tags(f.get("Tags"), "TagKey", "TagValue"),
    }
}

impl Client {
    /// Every item of one listing `action` answers under `set`, `body` plus Offset/Limit per page.
    async fn every(
        &self,
        service: &str,
        region: &str,
        action: &str,
        set: &str,
        body: Value,
        of: fn(&Field, &str) -> Leftover,
    ) -> Result<Vec<Leftover>, CloudError> {
        let body = &body;
        page::all(Style::Offset, |at| async move {
            let mut b = body.clone();
            b["Offset"] = json!(at.number());
            b["Limit"] = json!(PAGE);
            let a = self.call(service, region, action, b).await?;
            let items = a.get(set).items().iter().map(|x| of(x, region)).collect();
            Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
        })
        .await
    }
}

impl Leftovers for Client {
    async fn leftovers(&self, region: &str, kind: LeftoverKind) -> Result<Vec<Leftover>, CloudError> {
        match kind {
            LeftoverKind::Disk => {
                let body = json!({ "Filters": [{ "Name": "disk-state", "Values": ["UNATTACHED"] }] });
                self.every(CBS, region, "DescribeDisks", "DiskSet", body, disk_of).await
            }
            LeftoverKind::PublicIp => {
                let body = json!({ "Filters": [{ "Name": "address-status", "Values": ["UNBIND"] }] });
                self.every(VPC, region, "DescribeAddresses", "AddressSet", body, address_of).await
            }
            LeftoverKind::Snapshot => {
                self.every(CBS, region, "DescribeSnapshots", "SnapshotSet", json!({}), snapshot_of).await
            }
            LeftoverKind::FileSystem => self.file_systems_as(region, file_system_of).await,
        }
    }

    async fn delete_leftover(&self, region: &str, kind: LeftoverKind, id: &str) -> Result<(), CloudError> {
        let _ = match kind {
            LeftoverKind::Disk => {
                self.call(CBS, region, "TerminateDisks", json!({ "DiskIds": [id] })).await?
            }
            LeftoverKind::PublicIp => {
                self.call(VPC, region, "ReleaseAddresses", json!({ "AddressIds": [id] })).await?
            }
            LeftoverKind::Snapshot => {
                self.call(CBS, region, "DeleteSnapshots", json!({ "SnapshotIds": [id] })).await?
            }
            LeftoverKind::FileSystem => return self.delete_file_system(region, id).await,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_read_each_kind_in_the_clouds_fields() {
        let d = json!({ "DiskId": "disk-1", "Placement": { "Zone": "ap-guangzhou-3" }, "DiskName": "",
            "DiskSize": 50, "DiskType": "CLOUD_SSD", "CreateTime": "2026-11-30 16:00:00",
            "Tags": [{ "Key": "gpuctl-deployment", "Value": "d" }] });
        let l = disk_of(&Field::root("", &d), "ap-guangzhou");
        assert_eq!((l.size_gb, l.class.as_deref()), (Some(50.0), Some("CLOUD_SSD")));
        assert_eq!(l.created, Some("2026-11-30T08:00:00Z".parse().unwrap()));
        assert_eq!(l.tags.get("gpuctl-deployment").map(String::as_str), Some("d"));
        let f = json!({ "FileSystemId": "cfs-1", "SizeByte": 2147483648u64, "StorageType": "SD",
            "Tags": [{ "TagKey": "k", "TagValue": "v" }], "CreationTime": "2026-11-30 16:00:00" });
        let l = file_system_of(&Field::root("", &f), "ap-guangzhou");
        assert_eq!((l.size_gb, l.tags.len()), (Some(2.0), 1));
        let a = json!({ "AddressId": "eip-1", "AddressIp": "203.0.113.9", "CreatedTime": "2026-11-30T08:00:00Z",
            "TagSet": [] });
        let l = address_of(&Field::root("", &a), "ap-guangzhou");
        assert_eq!((l.name.as_deref(), l.created.is_some()), (Some("203.0.113.9"), true));
    }
}
