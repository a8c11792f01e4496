//! Disks, public IPs, snapshots and file systems that outlive instances (issue 15), each listing read
//! to its end (`pageNumber`, `pageSize` 100: "取值范围：[10,100]"). Paths from jdcloud_sdk 1.6.354:
//! - disks: disk `describeDisks` (`GET /regions/{regionId}/disks`) with filter `status` = `available`
//!   (Disk.py: "creating、available、in-use、…"); `deleteDisk` (`DELETE …/disks/{diskId}`, not into the
//!   recycle bin: `putInRecycleBin` "false 或者不传直接删除");
//! - public IPs: vpc `describeElasticIps` (`GET …/elasticIps/`) with filter `status` = `NOT_ASSOCIATED`
//!   ("未被绑定"); `deleteElasticIp` (`DELETE …/elasticIps/{elasticIpId}`);
//! - snapshots: disk `describeSnapshots` (`GET …/snapshots`), every one; `deleteSnapshot`. Snapshot.py
//!   has no tags: a JD snapshot is never known as gpuctl's from the listing (the engine asks its state);
//! - file systems: zfs `describeFileSystems`, every one (the Clusters client's paging), deleted as the
//!   Clusters client deletes them (mount targets first).

use std::collections::BTreeMap;

use gpuctl_cloud::cloud::CloudError;
use gpuctl_cloud::cost::{listed_time, Leftover, LeftoverKind};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::services::{Clusters, Leftovers};

use super::{filter_query, Call, Client};

const GIB: f64 = (1u64 << 30) as f64;

fn call<'a>(service: &'a str, action: &'a str, method: &'a str, path: &'a str) -> Call<'a> {
    Call { service, version: crate::api::API_VERSION, action, method, path }
}

/// `tags: [{key, value}]` (disk/vpc/zfs Tag).
fn tags(t: Field) -> BTreeMap<String, String> {
    t.items().iter().map(|x| (x.get("key").text(), x.get("value").text())).collect()
}

fn disk_of(d: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::Disk,
        id: d.get("diskId").text(),
        region: region.to_string(),
        zone: d.get("az").opt_text(),
        name: d.get("name").opt_text(),
        size_gb: d.get("diskSizeGB").f64(),
        class: d.get("diskType").opt_text(),
        created: listed_time(&d.get("createTime").text()),
        tags: tags(d.get("tags")),
    }
}

fn eip_of(e: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::PublicIp,
        id: e.get("elasticIpId").text(),
        region: region.to_string(),
        zone: e.get("az").opt_text(),
        name: e.get("elasticIpAddress").opt_text(),
        size_gb: None,
        class: e.get("charge").get("chargeMode").opt_text(),
        created: listed_time(&e.get("createdTime").text()),
        tags: tags(e.get("tags")),
    }
}

fn snapshot_of(s: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::Snapshot,
        id: s.get("snapshotId").text(),
        region: region.to_string(),
        zone: None,
        name: s.get("name").opt_text(),
        // Snapshot.py `snapshotSizeGB`: "快照大小，单位为GiB".
        size_gb: s.get("snapshotSizeGB").f64(),
        class: None,
        created: listed_time(&s.get("createTime").text()),
        tags: BTreeMap::new(),
    }
}

fn file_system_of(f: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::FileSystem,
        id: f.get("fileSystemId").text(),
        region: region.to_string(),
        zone: f.get("az").opt_text(),
        name: f.get("name").opt_text(),
        // SizeByte.py `value`: "最近一次统计的文件系统的使用量" (bytes).
        size_gb: f.get("sizeByte").get("value").f64().map(|b| b / GIB),
        class: f.get("fileSystemType").opt_text(),
        created: listed_time(&f.get("createTime").text()),
        tags: tags(f.get("tags")),
    }
}

impl Client {
    /// Every item a paged listing answers under `set`.
    async fn every(
        &self,
        region: &str,
        c: (&str, &str, &str),
        set: &str,
        filters: &[(&str, Vec<String>)],
        of: fn(&Field, &str) -> Leftover,
    ) -> Result<Vec<Leftover>, CloudError> {
        let (service, action, path) = c;
        page::all(Style::PageNumber, |at| async move {
            let mut q = filter_query(filters);
            q.extend([
                ("pageNumber".to_string(), at.number().to_string()),
                ("pageSize".into(), "100".into()),
            ]);
            let a = self.call(call(service, action, "GET", path), region, q, None).await?;
            let items = a.get(set).items().iter().map(|x| of(x, region)).collect();
            Ok(Page::counted(items, a.get("totalCount").u64().unwrap_or(0)))
        })
        .await
    }
}

impl Leftovers for Client {
    async fn leftovers(&self, region: &str, kind: LeftoverKind) -> Result<Vec<Leftover>, CloudError> {
        match kind {
            LeftoverKind::Disk => {
                let f = [("status", vec!["available".to_string()])];
                self.every(region, ("disk", "describeDisks", "disks"), "disks", &f, disk_of).await
            }
            LeftoverKind::PublicIp => {
                let f = [("status", vec!["NOT_ASSOCIATED".to_string()])];
                self.every(region, ("vpc", "describeElasticIps", "elasticIps/"), "elasticIps", &f, eip_of)
                    .await
            }
            LeftoverKind::Snapshot => {
                self.every(region, ("disk", "describeSnapshots", "snapshots"), "snapshots", &[], snapshot_of)
                    .await
            }
            LeftoverKind::FileSystem => self.file_systems_as(region, &[], file_system_of).await,
        }
    }

    async fn delete_leftover(&self, region: &str, kind: LeftoverKind, id: &str) -> Result<(), CloudError> {
        let (service, action, path) = match kind {
            LeftoverKind::Disk => ("disk", "deleteDisk", format!("disks/{id}")),
            LeftoverKind::PublicIp => ("vpc", "deleteElasticIp", format!("elasticIps/{id}")),
            LeftoverKind::Snapshot => ("disk", "deleteSnapshot", format!("snapshots/{id}")),
            LeftoverKind::FileSystem => return self.delete_file_system(region, id).await,
        };
        self.call(call(service, action, "DELETE", &path), region, vec![], None).await.map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn listings_read_each_kind_in_the_clouds_fields() {
        let d = json!({ "diskId": "vol-1", "az": "cn-north-1a", "diskSizeGB": 40, "diskType": "ssd.gp1",
            "createTime": "2026-11-30T16:00:00+08:00", "tags": [{ "key": "gpuctl-deployment", "value": "x" }] });
        let l = disk_of(&Field::root("", &d), "cn-north-1");
        assert_eq!((l.size_gb, l.class.as_deref()), (Some(40.0), Some("ssd.gp1")));
        assert_eq!(l.created, Some("2026-11-30T08:00:00Z".parse().unwrap()));
        assert_eq!(l.tags.get("gpuctl-deployment").map(String::as_str), Some("x"));
        let f = json!({ "fileSystemId": "fs-1", "sizeByte": { "value": 3221225472u64 }, "fileSystemType": "std1" });
        assert_eq!(file_system_of(&Field::root("", &f), "cn-north-1").size_gb, Some(3.0));
        let e = json!({ "elasticIpId": "fip-1", "charge": { "chargeMode": "postpaid_by_usage" } });
        assert_eq!(eip_of(&Field::root("", &e), "cn-north-1").class.as_deref(), Some("postpaid_by_usage"));
    }
}
