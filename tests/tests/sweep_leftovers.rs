//! Leftovers (issue 15): `gpuctl sweep` against a real `gpuctl sim` on all three clouds at once. Each
//! cloud holds zombies of every kind — tagged with gpuctl's deployment tag or recorded in the state
//! store (gpuctl's), and untagged (someone else's) — beside live resources that are not zombies: a
//! disk attached to a running instance, a public IP bound to it, a young snapshot, a file system a
//! recorded deployment uses. The sweep must list exactly the zombies with their monthly cost from a
//! cited price (or "price unknown"), refuse to delete without a terminal or `--yes`, and with `--yes`
//! delete only gpuctl's — judged by the local cloud's own state, not by gpuctl's report.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gpuctl_core::storage::{self, StorageKind};
use gpuctl_e2e::e2e::{gpuctl, ok_json, spec_text, SimProcess, PROVIDERS};
use gpuctl_provision::state::{ClusterResource, SnapshotRecord, Store};
use gpuctl_provision::Provider;
use serde_json::{json, Value};

const QUICK: &str = "seed = 11\n[knobs]\nboot_seconds = 1\n";

fn region(p: &str) -> &'static str {
    match p {
        "tencent" => "ap-guangzhou",
        "alibaba" => "cn-hangzhou",
        _ => "cn-north-1",
    }
}

/// (disk class, file system class) each cloud names and prices.
fn classes(p: &str) -> (&'static str, &'static str) {
    match p {
        "tencent" => ("CLOUD_PREMIUM", "SD"),
        "alibaba" => ("cloud_essd", "Capacity"),
        _ => ("ssd.gp1", "std1"),
    }
}

fn plant(sim: &SimProcess, body: Value) -> String {
    let (status, text) = sim.admin("POST", "/_sim/plant", &body.to_string());
    assert_eq!(status, 200, "{body}: {text}");
    serde_json::from_str::<Value>(&text).unwrap()["id"].as_str().unwrap().to_string()
}

fn provision(sim: &SimProcess, dir: &Path, provider: &str, dep: &str) -> String {
    let spec = dir.join(format!("{dep}.toml"));
    std::fs::write(&spec, spec_text(provider, dep, 1)).unwrap();
    let report = ok_json(&sim.url, dir, &["provision", spec.to_str().unwrap(), "--yes", "--json"]);
    report["units"][0]["instance_id"].as_str().unwrap().to_string()
}

fn fs_row(p: Provider, id: &str, dep: &str, state: &str) -> ClusterResource {
    ClusterResource {
        provider: p,
        cloud_id: id.into(),
        region: region(p.as_str()).into(),
        zone: String::new(),
        deployment: dep.into(),
        pool: "train".into(),
        kind: ClusterResource::FILE_SYSTEM.into(),
        name: format!("{dep}-train"),
        client_token: format!("tok-{id}"),
        tier: Some("capacity".into()),
        mount_address: None,
        state: state.into(),
    }
}

/// Whether the local cloud still holds `id` anywhere in `provider`'s state.
fn held(sim: &SimProcess, provider: &str, id: &str) -> bool {
    sim.state()["providers"][provider].to_string().contains(&format!("\"{id}\""))
}

fn ids(v: &Value) -> BTreeSet<String> {
    v.as_array().unwrap().iter().map(|i| i["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn sweep_lists_exactly_the_zombies_of_every_kind_and_deletes_only_gpuctls() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let now = jiff::Timestamp::now();
    let old = now - jiff::SignedDuration::from_hours(24 * 40);
    let young = now - jiff::SignedDuration::from_hours(24 * 2);
    let (mut ours, mut theirs, mut live) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    // kind of each zombie, and what it should cost: (kind, class, quantity).
    let mut priced: BTreeMap<String, (StorageKind, String, f64)> = BTreeMap::new();
    let store = Store::open(&dir.path().join("state.db")).unwrap();
    for p in PROVIDERS {
        let r = region(p);
        let (disk_class, fs_class) = classes(p);
        let provider: Provider = p.parse().unwrap();
        let instance = provision(&sim, dir.path(), p, &format!("live-{p}"));
        let base = |kind: &str, extra: Value| {
            let mut b = json!({ "provider": p, "kind": kind, "region": r });
            for (k, v) in extra.as_object().unwrap() {
                b[k] = v.clone();
            }
            b
        };
        let gone = json!({ "gpuctl-deployment": format!("gone-{p}") });
        // Disks: a tagged and an untagged one attached to nothing; one attached to the live instance.
        let d = plant(&sim, base("disk", json!({ "size_gb": 100, "class": disk_class, "tags": gone })));
        priced.insert(d.clone(), (StorageKind::Disk, disk_class.into(), 100.0));
        ours.insert(d);
        let d = plant(
            &sim,
            base("disk", json!({ "size_gb": 20, "class": disk_class, "tags": { "team": "ml" } })),
        );
        priced.insert(d.clone(), (StorageKind::Disk, disk_class.into(), 20.0));
        theirs.insert(d);
        live.insert(plant(
            &sim,
            base("disk", json!({ "size_gb": 30, "class": disk_class, "attached_to": instance })),
        ));
        // Public IPs: tagged and untagged bound to nothing; one bound to the live instance.
        let ip = plant(&sim, base("public_ip", json!({ "tags": gone })));
        priced.insert(ip.clone(), (StorageKind::IdleIp, "EIP".into(), 1.0));
        ours.insert(ip);
        let ip = plant(&sim, base("public_ip", json!({})));
        priced.insert(ip.clone(), (StorageKind::IdleIp, "EIP".into(), 1.0));
        theirs.insert(ip);
        live.insert(plant(&sim, base("public_ip", json!({ "attached_to": instance }))));
        // Snapshots: an old one gpuctl made (tagged on Tencent and Alibaba; on JD, whose snapshots carry
        // no tags, recorded in the state store as gpuctl's), an old foreign one, a young one.
        let mine = if p == "jdcloud" { json!({}) } else { gone.clone() };
        let s = plant(&sim, base("snapshot", json!({ "size_gb": 40, "created": old, "tags": mine })));
        if p == "jdcloud" {
            store
                .record_snapshot(&SnapshotRecord {
                    snapshot_id: s.clone(),
                    provider,
                    region: r.into(),
                    instance_id: "gone-instance".into(),
                    disk_id: "gone-disk".into(),
                    disk_kind: "data".into(),
                    deployment: Some(format!("gone-{p}")),
                    pool: Some("work".into()),
                    client_token: format!("snap-{s}"),
                    state: "available".into(),
                    created_at: old,
                })
                .unwrap();
        }
        priced.insert(s.clone(), (StorageKind::Snapshot, "snapshot".into(), 40.0));
        ours.insert(s);
        let s = plant(&sim, base("snapshot", json!({ "size_gb": 10, "created": old })));
        priced.insert(s.clone(), (StorageKind::Snapshot, "snapshot".into(), 10.0));
        theirs.insert(s);
        live.insert(plant(&sim, base("snapshot", json!({ "size_gb": 10, "created": young, "tags": gone }))));
        // File systems: one a destroyed deployment kept (recorded `kept`), one a deployment uses
        // (recorded `live`), one gpuctl never made.
        let f = plant(&sim, base("file_system", json!({ "size_gb": 50, "class": fs_class })));
        store.record_cluster_resource(&fs_row(provider, &f, &format!("gone-{p}"), "live")).unwrap();
        store.end_cluster_resource(provider, &f, "kept").unwrap();
        priced.insert(f.clone(), (StorageKind::FileSystem, fs_class.into(), 50.0));
        ours.insert(f);
        let f = plant(&sim, base("file_system", json!({ "size_gb": 5, "class": fs_class })));
        store.record_cluster_resource(&fs_row(provider, &f, &format!("live-{p}"), "live")).unwrap();
        live.insert(f);
        let f = plant(
            &sim,
            base("file_system", json!({ "size_gb": 8, "class": fs_class, "tags": { "team": "ml" } })),
        );
        priced.insert(f.clone(), (StorageKind::FileSystem, fs_class.into(), 8.0));
        theirs.insert(f);
    }
    drop(store);
    let zombies: BTreeSet<String> = ours.union(&theirs).cloned().collect();

    let found = ok_json(&sim.url, dir.path(), &["sweep", "--json"]);
    let left = &found["leftovers"];
    assert_eq!(ids(&left["items"]), zombies, "exactly the zombies, none of the live ones: {left}");
    assert_eq!(left["errors"], json!([]), "{left}");
    assert_eq!((left["snapshot_age_days"].as_f64(), left["released"].clone()), (Some(30.0), Value::Null));
    assert_eq!(
        (
            left["young_snapshots"].as_u64(),
            left["file_systems_in_use"].as_u64(),
            left["not_gpuctls"].as_u64()
        ),
        (Some(3), Some(3), Some(theirs.len() as u64)),
        "{left}"
    );
    let mut total = 0.0;
    for item in left["items"].as_array().unwrap() {
        let id = item["id"].as_str().unwrap();
        let p: Provider = item["provider"].as_str().unwrap().parse().unwrap();
        let whose = item["owner"].as_str().unwrap();
        assert_eq!(whose != "not_gpuctl", ours.contains(id), "{item}");
        if ours.contains(id) {
            assert_eq!(item["deployment"], format!("gone-{p}"), "{item}");
        }
        // The monthly cost is the cited row's pay-as-you-go rate × the size, or unknown without a row.
        let (kind, class, qty) = &priced[id];
        let row = storage::lookup(p, *kind, class, region(p.as_str())).ok().filter(|r| r.is_priced());
        let cost = &item["cost"];
        match row.and_then(|r| r.usage_per_month()) {
            Some(rate) => {
                let want = rate.cny * qty;
                let got = cost["cny_per_month"].as_f64().unwrap_or(f64::NAN);
                assert!((got - want).abs() < 1e-9, "{item}: want {want}");
                assert_eq!(cost["source"].as_str(), Some(row.unwrap().citation().as_str()), "{item}");
                assert_eq!(cost["as_of"].as_str(), Some(row.unwrap().as_of), "{item}");
                total += want;
            }
            None => {
                assert_eq!(cost["cny_per_month"], Value::Null, "{item}");
                assert!(cost["basis"].as_str().unwrap().starts_with("price unknown"), "{item}");
            }
        }
        let age = item["age_days"].as_f64().unwrap();
        if item["kind"] == "snapshot" {
            assert!((age - 40.0).abs() < 0.1, "{item}");
        }
    }
    assert!((left["total_cny_per_month"].as_f64().unwrap() - total).abs() < 1e-6, "{left}");
    let by_kind: f64 =
        left["by_kind"].as_object().unwrap().values().map(|k| k["cny_per_month"].as_f64().unwrap()).sum();
    assert!((by_kind - total).abs() < 1e-6, "{left}");
    assert_eq!(left["by_kind"]["disk"]["count"].as_u64(), Some(6), "{left}");
    // Tencent prints no EIP holding fee: its two unbound IPs are of unknown price, not zero.
    assert_eq!(left["by_kind"]["public_ip"]["unpriced"].as_u64(), Some(2), "{left}");

    // Narrowed to a retention age of 1 day, the young snapshots are leftovers too.
    let wide = ok_json(&sim.url, dir.path(), &["sweep", "--snapshot-age", "1d", "--json"]);
    assert_eq!(ids(&wide["leftovers"]["items"]).len(), zombies.len() + 3, "{}", wide["leftovers"]);

    // For people: grouped by kind with totals; someone else's said so.
    let text = gpuctl(&sim.url, dir.path(), &["sweep"]);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(text.status.success(), "{out}");
    for needle in [
        "disks:",
        "public ips:",
        "snapshots:",
        "file systems:",
        "not gpuctl's, left alone",
        "/month",
        "price unknown",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    assert!(
        zombies.iter().all(|z| out.contains(z.as_str())) && !live.iter().any(|l| out.contains(l.as_str())),
        "{out}"
    );

    // No terminal and no --yes: refused, nothing deleted.
    let refused = gpuctl(&sim.url, dir.path(), &["sweep", "--release"]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(err.contains("pass --yes") && err.contains("leftover(s) gpuctl made"), "{err}");
    for p in PROVIDERS {
        assert!(zombies.iter().filter(|z| priced.contains_key(*z)).any(|z| held(&sim, p, z)));
    }

    let _clock = sim.fast_clock(20.0);
    let released = ok_json(&sim.url, dir.path(), &["sweep", "--release", "--yes", "--json"]);
    let left = &released["leftovers"];
    let got: BTreeSet<String> =
        left["released"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert_eq!(got, ours, "only gpuctl's: {left}");
    assert_eq!(left["release_errors"], json!([]), "{left}");
    // The local cloud no longer holds gpuctl's zombies; it still holds the others and the live ones.
    for p in PROVIDERS {
        let state = sim.state()["providers"][p].to_string();
        for id in &ours {
            assert!(!state.contains(&format!("\"{id}\"")), "{p} still holds {id}");
        }
    }
    let all = sim.state().to_string();
    for id in theirs.iter().chain(&live) {
        assert!(all.contains(&format!("\"{id}\"")), "{id} was deleted");
    }

    let again = ok_json(&sim.url, dir.path(), &["sweep", "--json"]);
    assert_eq!(ids(&again["leftovers"]["items"]), theirs, "{}", again["leftovers"]);
}
