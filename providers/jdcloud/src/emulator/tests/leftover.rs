//! What outlives instances (issue 15): an elastic IP and an `autoDelete=false` data disk that
//! deleteInstance leaves, and planted disks, IPs, snapshots and file systems, listed (every page) and
//! deleted by the real client over HTTP; an in-use disk and a bound IP are refused.

use gpuctl_cloud::cloud::{Cloud, ErrorKind};
use gpuctl_cloud::cost::{Leftover, LeftoverKind};
use gpuctl_simkit::{Emulator, Plant};
use serde_json::{json, Value};

use super::{call, client, create, ctx, serve, with_eip, JdCloud};

fn ids(v: Vec<Leftover>) -> Vec<String> {
    let mut v: Vec<String> = v.into_iter().map(|l| l.id).collect();
    v.sort();
    v
}

#[test]
fn the_client_lists_and_deletes_leftovers_over_http() {
    let jd = std::sync::Arc::new(JdCloud::new());
    let ctx = std::sync::Arc::new(ctx());
    let plant = |v: Value| -> String {
        let mut p = json!({ "provider": "jdcloud", "region": "cn-north-1" });
        for (k, x) in v.as_object().unwrap() {
            p[k] = x.clone();
        }
        jd.plant(&serde_json::from_value::<Plant>(p).unwrap(), &ctx).unwrap()
    };
    // An instance with an elastic IP and a data disk kept on delete: both outlive it.
    let mut body = with_eip(
        json!({"bandwidthMbps": 1, "provider": "bgp", "chargeSpec": {"chargeMode": "postpaid_by_usage"}}),
    );
    body["instanceSpec"]["dataDisks"] = json!([{"diskCategory": "cloud", "autoDelete": false,
        "cloudDiskSpec": {"diskType": "ssd.gp1", "diskSizeGB": 60}}]);
    let gone = create(&jd, &ctx, body).unwrap().remove(0);
    let live = create(&jd, &ctx, json!({})).unwrap().remove(0);
    let disk = plant(
        json!({ "kind": "disk", "size_gb": 30, "class": "hdd.std1", "tags": {"gpuctl-deployment": "d"} }),
    );
    let attached = plant(json!({ "kind": "disk", "attached_to": live }));
    let free_ip = plant(json!({ "kind": "public_ip", "tags": {"gpuctl-deployment": "d"} }));
    let bound_ip = plant(json!({ "kind": "public_ip", "attached_to": live }));
    for _ in 0..25 {
        plant(json!({ "kind": "snapshot", "disk_id": disk }));
    }
    let fs = plant(json!({ "kind": "file_system", "size_gb": 7, "class": "std1" }));
    ctx.clock().advance(jiff::SignedDuration::from_secs(60));
    call(&jd, &ctx, "DELETE", &format!("instances/{gone}"), json!({})).unwrap();

    let cloud: Box<dyn Cloud> = Box::new(client(&serve(jd.clone(), ctx.clone())));
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let region = "cn-north-1";
    let list = |k| rt.block_on(cloud.leftovers(region, k)).unwrap();
    let disks = list(LeftoverKind::Disk);
    assert_eq!(disks.len(), 2, "the planted free disk and the one deleteInstance kept: {disks:?}");
    let planted = disks.iter().find(|d| d.id == disk).unwrap();
    assert_eq!((planted.size_gb, planted.class.as_deref()), (Some(30.0), Some("hdd.std1")));
    assert_eq!(planted.tags.get("gpuctl-deployment").map(String::as_str), Some("d"));
    assert!(disks.iter().any(|d| d.size_gb == Some(60.0) && d.tags.is_empty()));
    let ips = list(LeftoverKind::PublicIp);
    assert_eq!(ips.len(), 2, "NOT_ASSOCIATED: the planted one and the deleted instance's: {ips:?}");
    assert!(ips.iter().all(|i| i.id != bound_ip));
    let snaps = list(LeftoverKind::Snapshot);
    assert!(snaps.len() == 25 && snaps.iter().all(|s| s.tags.is_empty() && s.size_gb == Some(30.0)));
    let fss = list(LeftoverKind::FileSystem);
    assert_eq!((ids(fss.clone()), fss[0].size_gb), (vec![fs.clone()], Some(7.0)));

    let e = rt.block_on(cloud.delete_leftover(region, LeftoverKind::Disk, &attached)).unwrap_err();
    assert_eq!(e.code, "FAILED_PRECONDITION");
    let e = rt.block_on(cloud.delete_leftover(region, LeftoverKind::PublicIp, &bound_ip)).unwrap_err();
    assert_eq!(e.code, "FAILED_PRECONDITION");
    let e = rt.block_on(cloud.delete_leftover(region, LeftoverKind::Disk, "vol-none")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotFound);
    for (k, id) in [
        (LeftoverKind::Disk, disk.clone()),
        (LeftoverKind::PublicIp, free_ip.clone()),
        (LeftoverKind::Snapshot, snaps[0].id.clone()),
        (LeftoverKind::FileSystem, fs.clone()),
    ] {
        rt.block_on(cloud.delete_leftover(region, k, &id)).unwrap();
    }
    assert_eq!(list(LeftoverKind::Disk).len(), 1);
    assert_eq!(list(LeftoverKind::PublicIp).len(), 1);
    assert_eq!(list(LeftoverKind::Snapshot).len(), 24);
}
