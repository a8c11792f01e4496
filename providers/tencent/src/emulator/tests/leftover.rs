//! What outlives instances (issue 15): the disks, EIPs, snapshots and file systems the admin API
//! plants or an instance leaves behind, listed and deleted by the real client over HTTP, with CBS's and
//! VPC's refusals for an attached disk and a bound address.

use gpuctl_cloud::cloud::ErrorKind;
use gpuctl_cloud::cost::LeftoverKind;
use gpuctl_simkit::{Emulator, Knobs, Plant, PlantKind, Provider};
use jiff::SignedDuration;
use serde_json::{json, Value};

use super::{block_on, call, code, run, serve, setup, tencent_client};

fn plant(kind: PlantKind, extra: Value) -> Plant {
    let mut v = json!({ "provider": "tencent", "kind": kind, "region": "ap-guangzhou" });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    serde_json::from_value(v).unwrap()
}

fn ids(list: &[gpuctl_cloud::cost::Leftover]) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|l| l.id.clone()).collect();
    v.sort();
    v
}

#[test]
fn leftovers_are_listed_by_the_clouds_filters_and_deleted_unless_in_use() {
    let (emu, ctx) = setup(Knobs { boot_seconds: 1, ..Knobs::default() });
    let (emu, ctx) = (std::sync::Arc::new(emu), std::sync::Arc::new(ctx));
    // An instance with a data disk not deleted with it: a zombie the natural way once it is gone.
    let r = call(
        &emu,
        &ctx,
        "RunInstances",
        run(json!({"DataDisks": [{"DiskSize": 100, "DiskType": "CLOUD_SSD", "DeleteWithInstance": false}]})),
    );
    let gone: String = r["InstanceIdSet"][0].as_str().unwrap().into();
    let r = call(&emu, &ctx, "RunInstances", run(json!({})));
    let live: String = r["InstanceIdSet"][0].as_str().unwrap().into();
    let tagged = json!({"tags": {"gpuctl-deployment": "d"}});
    let disk = emu
        .plant(
            &plant(
                PlantKind::Disk,
                json!({"size_gb": 50, "class": "CLOUD_SSD", "tags": {"gpuctl-deployment": "d"}}),
            ),
            &ctx,
        )
        .unwrap();
    let attached = emu.plant(&plant(PlantKind::Disk, json!({"attached_to": live})), &ctx).unwrap();
    let free_ip = emu.plant(&plant(PlantKind::PublicIp, tagged.clone()), &ctx).unwrap();
    let bound_ip = emu.plant(&plant(PlantKind::PublicIp, json!({"attached_to": live})), &ctx).unwrap();
    let ip_of_gone = emu.plant(&plant(PlantKind::PublicIp, json!({"attached_to": gone})), &ctx).unwrap();
    let old = ctx.now() - SignedDuration::from_hours(24 * 40);
    let snaps: Vec<String> = (0..120)
        .map(|_| {
            emu.plant(&plant(PlantKind::Snapshot, json!({"created": old, "disk_id": disk})), &ctx).unwrap()
        })
        .collect();
    let fs = emu.plant(&plant(PlantKind::FileSystem, json!({"size_gb": 3, "class": "SD"})), &ctx).unwrap();
    assert!(emu.plant(&plant(PlantKind::Disk, json!({"attached_to": "ins-nobody"})), &ctx).is_err());
    assert!(emu.plant(&plant(PlantKind::Disk, json!({"region": "mars-1"})), &ctx).is_err());

    call(&emu, &ctx, "TerminateInstances", json!({"InstanceIds": [gone]}));
    ctx.clock().advance(SignedDuration::from_secs(5));

    let cloud = tencent_client(&serve(emu.clone(), ctx.clone()));
    let region = "ap-guangzhou";
    let disks = block_on(cloud.leftovers(region, LeftoverKind::Disk)).unwrap();
    let left_disk = Emulator::state(&*emu, &ctx)["disks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["DiskSize"] == 100)
        .map(|d| d["DiskId"].as_str().unwrap().to_string())
        .unwrap();
    let mut want = vec![disk.clone(), left_disk.clone()];
    want.sort();
    assert_eq!(
        ids(&disks),
        want,
        "only unattached disks: the live instance's and the planted attached one stay out"
    );
    let d = disks.iter().find(|d| d.id == disk).unwrap();
    assert_eq!(
        (d.size_gb, d.class.as_deref(), d.tags.get("gpuctl-deployment").map(String::as_str)),
        (Some(50.0), Some("CLOUD_SSD"), Some("d"))
    );

    let ips = block_on(cloud.leftovers(region, LeftoverKind::PublicIp)).unwrap();
    let mut want = vec![free_ip.clone(), ip_of_gone.clone()];
    want.sort();
    assert_eq!(ids(&ips), want, "UNBIND only; the EIP of the terminated instance is unbound now");

    let listed = block_on(cloud.leftovers(region, LeftoverKind::Snapshot)).unwrap();
    assert_eq!(listed.len(), 120, "every page read");
    // CBS writes seconds: the age is the cloud's, to the second.
    assert!(listed
        .iter()
        .all(|s| s.created.is_some_and(|t| old.duration_since(t).abs() < SignedDuration::from_secs(1))));
    let fss = block_on(cloud.leftovers(region, LeftoverKind::FileSystem)).unwrap();
    assert_eq!(
        (ids(&fss), fss[0].size_gb, fss[0].class.as_deref()),
        (vec![fs.clone()], Some(3.0), Some("SD"))
    );

    // Refusals in the cloud's own codes.
    let e = block_on(cloud.delete_leftover(region, LeftoverKind::Disk, &attached)).unwrap_err();
    assert_eq!(e.code, "ResourceUnavailable.Attached");
    let e = block_on(cloud.delete_leftover(region, LeftoverKind::PublicIp, &bound_ip)).unwrap_err();
    assert_eq!(e.code, "UnsupportedOperation.AddressStatusNotPermit");
    let e = block_on(cloud.delete_leftover(region, LeftoverKind::PublicIp, "eip-nothere")).unwrap_err();
    assert_eq!((e.code.as_str(), e.kind), ("InvalidAddressId.NotFound", ErrorKind::NotFound));

    for (kind, id) in [
        (LeftoverKind::Disk, &disk),
        (LeftoverKind::PublicIp, &free_ip),
        (LeftoverKind::Snapshot, &snaps[0]),
        (LeftoverKind::FileSystem, &fs),
    ] {
        block_on(cloud.delete_leftover(region, kind, id)).unwrap();
    }
    ctx.clock().advance(SignedDuration::from_secs(5));
    assert_eq!(ids(&block_on(cloud.leftovers(region, LeftoverKind::Disk)).unwrap()), vec![left_disk]);
    assert_eq!(ids(&block_on(cloud.leftovers(region, LeftoverKind::PublicIp)).unwrap()), vec![ip_of_gone]);
    assert_eq!(block_on(cloud.leftovers(region, LeftoverKind::Snapshot)).unwrap().len(), 119);
    assert!(block_on(cloud.leftovers(region, LeftoverKind::FileSystem)).unwrap().is_empty());
    let _ = Provider::Tencent;
}

#[test]
fn listings_honour_tag_filters_and_refuse_unknown_ones() {
    let (emu, ctx) = setup(Knobs::default());
    emu.plant(&plant(PlantKind::Disk, json!({"tags": {"gpuctl-deployment": "a"}})), &ctx).unwrap();
    emu.plant(&plant(PlantKind::Disk, json!({"tags": {"team": "x"}})), &ctx).unwrap();
    emu.plant(&plant(PlantKind::PublicIp, json!({"tags": {"gpuctl-deployment": "a"}})), &ctx).unwrap();
    let n = |r: &Value| r["TotalCount"].as_u64().unwrap();
    let f = |name: &str, v: &str| json!({"Filters": [{"Name": name, "Values": [v]}]});
    assert_eq!(n(&call(&emu, &ctx, "DescribeDisks", f("tag-key", "gpuctl-deployment"))), 1);
    assert_eq!(n(&call(&emu, &ctx, "DescribeDisks", f("tag:team", "x"))), 1);
    assert_eq!(n(&call(&emu, &ctx, "DescribeDisks", f("tag-value", "a"))), 1);
    assert_eq!(n(&call(&emu, &ctx, "DescribeDisks", f("disk-state", "UNATTACHED"))), 2);
    assert_eq!(n(&call(&emu, &ctx, "DescribeAddresses", f("tag:gpuctl-deployment", "a"))), 1);
    assert_eq!(n(&call(&emu, &ctx, "DescribeAddresses", f("address-status", "BIND"))), 0);
    assert_eq!(code(&call(&emu, &ctx, "DescribeAddresses", f("colour", "red"))), "InvalidFilter");
    assert_eq!(
        code(&call(&emu, &ctx, "TerminateDisks", json!({"DiskIds": ["disk-none"]}))),
        "InvalidDiskId.NotFound"
    );
}
