//! Disks, public IPs, snapshots and file systems that outlive instances (issue 15), each listing read
//! to its end:
//! - disks: ECS `DescribeDisks` with `Status=Available` ("The disk is available for attachment",
//!   alibabacloud_ecs20140526 7.11.8 `_describe_disks_request.py`), `MaxResults` 100 + `NextToken`
//!   (`PageNumber`/`PageSize` deprecated there); released by `DeleteDisk` (whose model has no `RegionId`);
//! - public IPs: VPC `DescribeEipAddresses` with `Status=Available` (*assumption*: the word for an EIP
//!   bound to nothing; the model's list of values is cut, cost-control.md §4), `PageSize` 100 ("Maximum
//!   value: 100", alibabacloud_vpc20160428 7.2.2); released by `ReleaseEipAddress` (`AllocationId`);
//! - snapshots: ECS `DescribeSnapshots`, every one (`MaxResults` ≤ 100 + `NextToken`); `DeleteSnapshot`
//!   (no `RegionId` in its model);
//! - file systems: NAS `DescribeFileSystems`, every one (the Clusters client's paging, `cluster.rs`),
//!   deleted as the Clusters client deletes them (mount targets first).

use std::collections::BTreeMap;

use gpuctl_cloud::cloud::CloudError;
use gpuctl_cloud::cost::{listed_time, Leftover, LeftoverKind};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::services::{Clusters, Leftovers};

use super::ecs::{kv, tokened};
use super::Client;

const GIB: f64 = (1u64 << 30) as f64;

/// `Tags.Tag[]` with `TagKey`/`TagValue` (ECS) or `Key`/`Value` (VPC, NAS).
fn tags(t: Field) -> BTreeMap<String, String> {
    t.get("Tag")
        .items()
        .iter()
        .map(|x| {
            let k = x.get("TagKey").opt_text().unwrap_or_else(|| x.get("Key").text());
            let v = x.get("TagValue").opt_text().unwrap_or_else(|| x.get("Value").text());
            (k, v)
        })
        .collect()
}

fn disk_of(d: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::Disk,
        id: d.get("DiskId").text(),
        region: region.to_string(),
        zone: d.get("ZoneId").opt_text(),
        name: d.get("DiskName").opt_text(),
        size_gb: d.get("Size").f64(),
        class: d.get("Category").opt_text(),
        created: listed_time(&d.get("CreationTime").text()),
        tags: tags(d.get("Tags")),
    }
}

fn eip_of(e: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::PublicIp,
        id: e.get("AllocationId").text(),
        region: region.to_string(),
        zone: e.get("Zone").opt_text(),
        name: e.get("IpAddress").opt_text(),
        size_gb: None,
        class: e.get("InternetChargeType").opt_text(),
        created: listed_time(&e.get("AllocationTime").text()),
        tags: tags(e.get("Tags")),
    }
}

fn snapshot_of(s: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::Snapshot,
        id: s.get("SnapshotId").text(),
        region: region.to_string(),
        zone: None,
        name: s.get("SnapshotName").opt_text(),
        // SourceDiskSize: the source disk's size (GiB, as a string): all the listing says.
        size_gb: s.get("SourceDiskSize").f64().or_else(|| s.get("SourceDiskSize").text().parse().ok()),
        class: s.get("Category").opt_text(),
        created: listed_time(&s.get("CreationTime").text()),
        tags: tags(s.get("Tags")),
    }
}

fn file_system_of(f: &Field, region: &str) -> Leftover {
    Leftover {
        kind: LeftoverKind::FileSystem,
        id: f.get("FileSystemId").text(),
        region: f.get("RegionId").opt_text().unwrap_or_else(|| region.to_string()),
        zone: f.get("ZoneId").opt_text(),
        name: f.get("Description").opt_text(),
        // MeteredSize: the bytes stored, which NAS bills.
        size_gb: f.get("MeteredSize").f64().map(|b| b / GIB),
        class: f.get("StorageType").opt_text(),
        created: listed_time(&f.get("CreateTime").text()),
        tags: tags(f.get("Tags")),
    }
}

impl Client {
    /// Every item of an ECS next-token listing.
    async fn ecs_every(
        &self,
        region: &str,
        action: &str,
        path: [&str; 2],
        filter: Vec<(String, String)>,
        of: fn(&Field, &str) -> Leftover,
    ) -> Result<Vec<Leftover>, CloudError> {
        let filter = &filter;
        page::all(Style::NextToken, |at| async move {
            let mut p = tokened(100, at.token());
            p.extend(filter.iter().cloned());
            let a = self.call(region, action, p).await?;
            let items = a.get(path[0]).get(path[1]).items().iter().map(|x| of(x, region)).collect();
            Ok(Page::tokened(items, a.get("NextToken").opt_text()))
        })
        .await
    }

    async fn unbound_eips(&self, region: &str) -> Result<Vec<Leftover>, CloudError> {
        page::all(Style::PageNumber, |at| async move {
            let p = vec![kv("Status", "Available"), kv("PageNumber", at.number()), kv("PageSize", 100)];
            let a = self.call_vpc(region, "DescribeEipAddresses", p).await?;
            let items =
                a.get("EipAddresses").get("EipAddress").items().iter().map(|e| eip_of(e, region)).collect();
            Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
        })
        .await
    }
}

impl Leftovers for Client {
    async fn leftovers(&self, region: &str, kind: LeftoverKind) -> Result<Vec<Leftover>, CloudError> {
        match kind {
            LeftoverKind::Disk => {
                let f = vec![kv("Status", "Available")];
                self.ecs_every(region, "DescribeDisks", ["Disks", "Disk"], f, disk_of).await
            }
            LeftoverKind::PublicIp => self.unbound_eips(region).await,
            LeftoverKind::Snapshot => {
                self.ecs_every(region, "DescribeSnapshots", ["Snapshots", "Snapshot"], vec![], snapshot_of)
                    .await
            }
            LeftoverKind::FileSystem => {
                // NAS knows the region by its host (nas.<region>.aliyuncs.com); behind one endpoint (a
                // custom `endpoint`, the local cloud) every region's file systems come back, so only
                // those whose `RegionId` is this region are this region's.
                let all = self.file_systems_as(region, vec![], file_system_of).await?;
                Ok(all.into_iter().filter(|l| l.region == region).collect())
            }
        }
    }

    async fn delete_leftover(&self, region: &str, kind: LeftoverKind, id: &str) -> Result<(), CloudError> {
        match kind {
            LeftoverKind::Disk => self.call_at(region, "DeleteDisk", vec![kv("DiskId", id)], false).await?,
            LeftoverKind::PublicIp => {
                self.call_vpc(region, "ReleaseEipAddress", vec![kv("AllocationId", id)]).await?
            }
            LeftoverKind::Snapshot => {
                self.call_at(region, "DeleteSnapshot", vec![kv("SnapshotId", id)], false).await?
            }
            LeftoverKind::FileSystem => return self.delete_file_system(region, id).await,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn listings_read_each_kind_in_the_clouds_fields() {
        let d = json!({ "DiskId": "d-1", "ZoneId": "cn-hangzhou-a", "Size": 40, "Category": "cloud_essd",
            "CreationTime": "2026-11-30T08:00Z", "Tags": { "Tag": [{ "TagKey": "gpuctl-deployment", "TagValue": "x" }] } });
        let l = disk_of(&Field::root("", &d), "cn-hangzhou");
        assert_eq!((l.size_gb, l.class.as_deref()), (Some(40.0), Some("cloud_essd")));
        assert_eq!(l.created, Some("2026-11-30T08:00:00Z".parse().unwrap()));
        assert_eq!(l.tags.get("gpuctl-deployment").map(String::as_str), Some("x"));
        let s = json!({ "SnapshotId": "s-1", "SourceDiskSize": "40", "CreationTime": "2026-11-30T08:00Z",
            "Tags": { "Tag": [] } });
        assert_eq!(snapshot_of(&Field::root("", &s), "cn-hangzhou").size_gb, Some(40.0));
        let e = json!({ "AllocationId": "eip-1", "IpAddress": "203.0.113.1",
            "Tags": { "Tag": [{ "Key": "k", "Value": "v" }] } });
        assert_eq!(eip_of(&Field::root("", &e), "cn-hangzhou").tags.len(), 1);
    }

    /// The real client over HTTP against the emulator: planted and natural leftovers listed by ECS's,
    /// VPC's and NAS's listings (every page), deleted unless in use, with the refusals' codes.
    #[test]
    fn the_client_lists_and_deletes_leftovers_over_http() {
        use gpuctl_cloud::services::Instances;
        use gpuctl_cloud::BillingMode;
        use gpuctl_simkit::{Emulator, Plant};
        use std::sync::Arc;

        use super::super::roundtrip::{block_on, client, ctx, request, serve};
        use crate::emulator::Ecs;

        let (ecs, ctx) = (Arc::new(Ecs::new()), ctx());
        let cloud = client(&serve(ecs.clone(), ctx.clone()));
        let region = "cn-hangzhou";
        let plant = |v: serde_json::Value| -> String {
            let mut p = json!({ "provider": "alibaba", "region": region });
            for (k, x) in v.as_object().unwrap() {
                p[k] = x.clone();
            }
            ecs.plant(&serde_json::from_value::<Plant>(p).unwrap(), &ctx).unwrap()
        };
        let live = block_on(cloud.create(&request(None, BillingMode::Hourly))).unwrap().instance_id;
        let disk = plant(
            json!({ "kind": "disk", "size_gb": 40, "class": "cloud_essd", "tags": { "gpuctl-deployment": "d" } }),
        );
        let attached = plant(json!({ "kind": "disk", "attached_to": live }));
        let free_ip = plant(json!({ "kind": "public_ip", "tags": { "gpuctl-deployment": "d" } }));
        let bound_ip = plant(json!({ "kind": "public_ip", "attached_to": live }));
        for _ in 0..105 {
            plant(json!({ "kind": "snapshot", "disk_id": disk }));
        }
        let fs = plant(json!({ "kind": "file_system", "size_gb": 5, "class": "Capacity" }));

        let list = |k| block_on(cloud.leftovers(region, k)).unwrap();
        let ids = |v: Vec<Leftover>| v.into_iter().map(|l| l.id).collect::<Vec<_>>();
        let disks = list(LeftoverKind::Disk);
        assert_eq!(
            ids(disks.clone()),
            vec![disk.clone()],
            "Status=Available: the attached disk and the instance's own stay out"
        );
        assert_eq!((disks[0].size_gb, disks[0].class.as_deref()), (Some(40.0), Some("cloud_essd")));
        assert_eq!(disks[0].tags.get("gpuctl-deployment").map(String::as_str), Some("d"));
        assert_eq!(ids(list(LeftoverKind::PublicIp)), vec![free_ip.clone()]);
        assert_eq!(list(LeftoverKind::Snapshot).len(), 105, "every next-token page");
        let fss = list(LeftoverKind::FileSystem);
        assert_eq!((ids(fss.clone()), fss[0].size_gb), (vec![fs.clone()], Some(5.0)));

        let e = block_on(cloud.delete_leftover(region, LeftoverKind::Disk, &attached)).unwrap_err();
        assert_eq!(e.code, "IncorrectDiskStatus");
        let e = block_on(cloud.delete_leftover(region, LeftoverKind::PublicIp, &bound_ip)).unwrap_err();
        assert_eq!(e.code, "IncorrectEipStatus");
        for (k, id) in
            [(LeftoverKind::Disk, &disk), (LeftoverKind::PublicIp, &free_ip), (LeftoverKind::FileSystem, &fs)]
        {
            block_on(cloud.delete_leftover(region, k, id)).unwrap();
        }
        let snap = list(LeftoverKind::Snapshot)[0].id.clone();
        block_on(cloud.delete_leftover(region, LeftoverKind::Snapshot, &snap)).unwrap();
        assert!(list(LeftoverKind::Disk).is_empty() && list(LeftoverKind::PublicIp).is_empty());
        assert_eq!(list(LeftoverKind::Snapshot).len(), 104);
        // The instance goes: its EIP is unbound and listed, still billed.
        block_on(cloud.terminate(region, std::slice::from_ref(&live))).unwrap();
        ctx.clock().advance(jiff::SignedDuration::from_secs(3600));
        assert_eq!(ids(list(LeftoverKind::PublicIp)), vec![bound_ip]);
    }
}
