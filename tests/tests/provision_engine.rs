//! The provisioner's engine against the local cloud (a real HTTP server on 127.0.0.1 hosting the
//! emulators), through the real provider clients: signing, the wire, error classification, waits.

use std::sync::Arc;
use std::time::Duration;

use gpuctl_cloud::cloud::Cloud;
use gpuctl_cloud::http::{Endpoint, Http};
use gpuctl_core::Catalog;
use gpuctl_provision::apply::{Engine, Options};
use gpuctl_provision::plan::plan;
use gpuctl_provision::retry::RetryPolicy;
use gpuctl_provision::spec::{self, Limits};
use gpuctl_provision::state::{ResourceState, Store};
use gpuctl_sim::BackgroundSim;
use gpuctl_simkit::{FaultKind, FaultRule, Knobs, RateLimit, SimConfig, StockOut};

fn sim(knobs: Knobs) -> BackgroundSim {
    BackgroundSim::start(SimConfig { seed: 7, credentials: vec![], knobs }).expect("sim starts")
}

fn quick_knobs() -> Knobs {
    Knobs { boot_seconds: 1, ..Knobs::default() }
}

fn clouds(sim: &BackgroundSim) -> Vec<Arc<dyn Cloud>> {
    let http = Http::new(Duration::from_secs(5)).unwrap();
    let ep = Some(Endpoint::parse(&sim.url()).unwrap());
    let key = |p: &str| {
        let (_, ak, sk) =
            gpuctl_simkit::creds::TEST_KEY_PAIRS.iter().find(|(n, _, _)| n.as_str() == p).unwrap();
        gpuctl_sign::Credentials::new(*ak, *sk)
    };
    vec![
        Arc::new(gpuctl_alibaba::client::Client::new(key("alibaba"), ep.clone(), http.clone())),
        Arc::new(gpuctl_tencent::client::Client::new(key("tencent"), ep.clone(), http.clone())),
        Arc::new(gpuctl_jdcloud::client::Client::new(key("jdcloud"), ep, http)),
    ]
}

fn engine(sim: &BackgroundSim, store: Store) -> Engine {
    let opts = Options {
        retry: RetryPolicy {
            max_attempts: 8,
            base: Duration::from_millis(50),
            cap: Duration::from_millis(800),
        },
        calls_per_second: 50.0,
        poll_interval: Duration::from_millis(200),
        wait_timeout: Duration::from_secs(30),
        ..Options::default()
    };
    Engine::new(clouds(sim), store, opts, Arc::new(|_| {}))
}

const ALIBABA: &str = r#"
deployment = "e2e"
hours = 2
[[pool]]
name = "tune"
count = 2
billing = "hourly"
image = "ubuntu_22_04_x64_20G_alibase_20240926.vhd"
data_disks = [{ size_gb = 100 }]
[[pool.candidates]]
provider = "alibaba"
region = "cn-hangzhou"
zone = "cn-hangzhou-i"
instance_type = "ecs.gn7i-c8g1.2xlarge"
[[pool.candidates]]
provider = "alibaba"
region = "cn-hangzhou"
zone = "cn-hangzhou-h"
instance_type = "ecs.gn7i-c8g1.2xlarge"
"#;

const TENCENT: &str = r#"
deployment = "e2e"
hours = 2
[[pool]]
name = "validate"
count = 2
billing = "hourly"
image = "img-pi0ii46r"
data_disks = [{ size_gb = 100 }]
provider = "tencent"
region = "ap-guangzhou"
zone = "ap-guangzhou-3"
instance_type = "GN7.2XLARGE32"
"#;

const JDCLOUD: &str = r#"
deployment = "e2e"
hours = 2
[[pool]]
name = "infer"
count = 2
billing = "hourly"
image = "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204"
data_disks = [{ size_gb = 100 }]
network = { vpc = "vpc-e2e", subnet = "subnet-e2e", security_groups = ["sg-e2e"] }
provider = "jdcloud"
region = "cn-north-1"
zone = "cn-north-1a"
instance_type = "p.n1v100.2xlarge"
"#;

fn instances(sim: &BackgroundSim, provider: &str) -> Vec<serde_json::Value> {
    sim.sim().state()["providers"][provider]["instances"].as_array().cloned().unwrap_or_default()
}

async fn provision(
    sim: &BackgroundSim,
    dir: &tempfile::TempDir,
    src: &str,
) -> (Engine, gpuctl_provision::apply::Report) {
    let spec = spec::parse("e2e.toml", src, None, &Limits::default()).unwrap();
    let store = Store::open(&dir.path().join("state.db")).unwrap();
    let recorded = store.resources(Some("e2e")).unwrap();
    let p = plan(&spec, Catalog::shipped(), &recorded, jiff::civil::date(2026, 11, 30));
    let e = engine(sim, store);
    let report = e.apply(&p, jiff::Timestamp::now()).await;
    (e, report)
}

/// Create, adopt on re-run, snapshot, release: the cloud ends with nothing, the state keeps the record.
async fn lifecycle(provider: &str, src: &str, zone: &str) {
    let sim = sim(quick_knobs());
    let dir = tempfile::tempdir().unwrap();
    let (e, report) = provision(&sim, &dir, src).await;
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.units.len(), 2);
    for u in &report.units {
        assert_eq!((u.state, u.zone.as_str()), (ResourceState::Running, zone), "{u:?}");
        assert!(u.auto_release_at.is_some(), "pay-as-you-go gets an auto-release time");
    }
    let cloud = instances(&sim, provider);
    assert_eq!(cloud.len(), 2, "{cloud:?}");
    check_on_the_cloud(provider, &cloud, &report.units);

    // A re-run adopts: nothing new is created.
    let (_, again) = provision(&sim, &dir, src).await;
    assert!(again.units.iter().all(|u| u.adopted), "{:?}", again.units);
    assert_eq!(instances(&sim, provider).len(), 2);

    // Snapshot the system and data disk of the first instance.
    let first = e.store(|s| s.resources(Some("e2e"))).unwrap().remove(0);
    let snaps = e
        .snapshot(first.provider, &first.region, first.instance_id.as_deref().unwrap(), Some(&first), 0)
        .await
        .unwrap();
    assert_eq!(snaps.iter().map(|s| s.disk_kind.as_str()).collect::<Vec<_>>(), ["system", "data"]);
    assert!(snaps.iter().all(|s| s.state == "available"));
    assert_eq!(e.store(|s| s.snapshots(first.instance_id.as_deref())).unwrap().len(), 2);

    // Release everything: gone from the cloud, kept (as released) in state.
    let live = e.store(|s| s.resources(Some("e2e"))).unwrap();
    let out = e.release(&live).await;
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.released.len(), 2);
    assert!(out.billed_until.is_empty(), "pay-as-you-go leaves no term: {:?}", out.billed_until);
    assert!(instances(&sim, provider).is_empty(), "{:?}", instances(&sim, provider));
    let after = e.store(|s| s.resources(Some("e2e"))).unwrap();
    assert!(after.iter().all(|r| r.state == ResourceState::Released), "{after:?}");
    assert!(e.store(|s| s.open_operations(None)).unwrap().is_empty(), "every intent is closed");

    // Provisioning the released deployment again with the same state file buys two new instances: the
    // released records' tokens are not reused (the cloud would answer with the old instances, and the
    // engine would wait for released instances to run).
    let old_ids: Vec<_> = after.iter().filter_map(|r| r.instance_id.clone()).collect();
    let (e, again) = provision(&sim, &dir, src).await;
    assert!(again.errors.is_empty(), "{:?}", again.errors);
    assert!(again.units.iter().all(|u| u.state == ResourceState::Running && !u.adopted), "{:?}", again.units);
    assert!(
        again.units.iter().all(|u| !old_ids.contains(u.instance_id.as_ref().unwrap())),
        "{:?}",
        again.units
    );
    assert_eq!(instances(&sim, provider).len(), 2);
    let live: Vec<_> =
        e.store(|s| s.resources(Some("e2e"))).unwrap().into_iter().filter(|r| r.state.is_live()).collect();
    assert_eq!(live.len(), 2, "{live:?}");
    check_on_the_cloud(provider, &instances(&sim, provider), &again.units);

    // The cloud itself releases them when its clock passes the release time it holds (not gpuctl:
    // nothing is called here), so a release time the cloud never took would leave them billing.
    let latest = again.units.iter().filter_map(|u| u.auto_release_at).max().unwrap();
    let clock = sim.sim().ctx().clock();
    clock.set_at_least(latest.checked_add(jiff::SignedDuration::from_mins(1)).unwrap());
    sim.sim().tick();
    let left: Vec<_> = instances(&sim, provider).into_iter().filter(gpuctl_e2e::e2e::is_live).collect();
    assert!(left.is_empty(), "{provider}: still live after the release time passed: {left:?}");
    // gpuctl's release of instances the cloud already released: done, nothing left, records released.
    let out = e.release(&live).await;
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(instances(&sim, provider).iter().all(|i| !gpuctl_e2e::e2e::is_live(i)));
    let after = e.store(|s| s.resources(Some("e2e"))).unwrap();
    assert!(after.iter().all(|r| r.state == ResourceState::Released), "{after:?}");
}

/// Per instance, from the cloud's own record (`/_sim/state`): each gpuctl tag with the value gpuctl
/// recorded, running, and the release time the cloud will act on equal to the one gpuctl asked for
/// (to the minute) and in the future.
fn check_on_the_cloud(provider: &str, cloud: &[serde_json::Value], units: &[gpuctl_provision::apply::Unit]) {
    use gpuctl_e2e::e2e::{cloud_release_time, instance_id, is_live, tag_value};
    assert_eq!(cloud.len(), units.len(), "{provider}: {cloud:?}");
    for u in units {
        let id = u.instance_id.as_deref().expect("a running unit has its instance id");
        let i = cloud
            .iter()
            .find(|i| instance_id(i) == id)
            .unwrap_or_else(|| panic!("{provider}: {id} not on the cloud: {cloud:?}"));
        assert!(is_live(i), "{provider}: {id} is not live on the cloud: {i}");
        assert_eq!(tag_value(i, "gpuctl-deployment").as_deref(), Some("e2e"), "{provider}: {i}");
        assert_eq!(tag_value(i, "gpuctl-pool").as_deref(), Some(u.pool.as_str()), "{provider}: {i}");
        assert!(tag_value(i, "gpuctl-token").is_some_and(|t| !t.is_empty()), "{provider}: {i}");
        let asked = u.auto_release_at.expect("pay-as-you-go gets an auto-release time");
        let held = cloud_release_time(provider, i)
            .unwrap_or_else(|| panic!("{provider}: {id} has no release time on the cloud: {i}"));
        // The cloud may take the time to the minute (Alibaba rounds AutoReleaseTime's seconds down), so it
        // releases up to a minute early, never late.
        let early = asked.duration_since(held);
        assert!(
            early >= jiff::SignedDuration::ZERO && early < jiff::SignedDuration::from_mins(1),
            "{provider}: {id}: the cloud holds {held}, gpuctl asked for {asked}"
        );
        assert!(held > jiff::Timestamp::now(), "{provider}: {id}: release time {held} is not ahead");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alibaba_lifecycle_create_snapshot_release() {
    lifecycle("alibaba", ALIBABA, "cn-hangzhou-i").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tencent_lifecycle_create_snapshot_release() {
    lifecycle("tencent", TENCENT, "ap-guangzhou-3").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdcloud_lifecycle_create_snapshot_release() {
    lifecycle("jdcloud", JDCLOUD, "cn-north-1a").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stock_out_falls_back_to_the_next_candidate() {
    let knobs = Knobs {
        stock_outs: vec![StockOut {
            provider: Some(gpuctl_simkit::Provider::Alibaba),
            instance_type: None,
            zone: Some("cn-hangzhou-i".into()),
            available: None,
        }],
        ..quick_knobs()
    };
    let sim = sim(knobs);
    let dir = tempfile::tempdir().unwrap();
    let (e, report) = provision(&sim, &dir, ALIBABA).await;
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    for u in &report.units {
        assert_eq!(u.zone, "cn-hangzhou-h");
        assert_eq!(u.fell_back_from, ["alibaba cn-hangzhou-i ecs.gn7i-c8g1.2xlarge"]);
    }
    // The sold-out attempts are recorded as failed, with the cloud's code; nothing billable was left.
    let recorded = e.store(|s| s.resources(Some("e2e"))).unwrap();
    let failed: Vec<_> = recorded.iter().filter(|r| r.state == ResourceState::Failed).collect();
    assert_eq!(failed.len(), 2);
    assert!(
        failed[0].last_error.as_deref().unwrap().contains("OperationDenied.NoStock"),
        "{:?}",
        failed[0].last_error
    );
    assert_eq!(instances(&sim, "alibaba").len(), 2);
}

/// Issue 14: a cluster's nodes share one zone. The first candidate's zone has stock for one node of
/// two: with `cluster = true` the node made there is released and both go to the second zone; without
/// it the pool splits across the zones (each instance falls back on its own).
async fn short_zone_moves_the_whole_cluster(provider: &str, src: &str, short_zone: &str, next_zone: &str) {
    let knobs = Knobs {
        stock_outs: vec![StockOut {
            provider: Some(provider.parse().unwrap()),
            instance_type: None,
            zone: Some(short_zone.into()),
            available: Some(1),
        }],
        ..quick_knobs()
    };
    for cluster in [true, false] {
        let sim = sim(knobs.clone());
        let dir = tempfile::tempdir().unwrap();
        let text =
            if cluster { src.replacen("count = 2", "count = 2\ncluster = true", 1) } else { src.to_string() };
        let (e, report) = provision(&sim, &dir, &text).await;
        assert!(report.errors.is_empty(), "{provider} cluster={cluster}: {:?}", report.errors);
        let zones: Vec<&str> = report.units.iter().map(|u| u.zone.as_str()).collect();
        let live: Vec<serde_json::Value> =
            instances(&sim, provider).into_iter().filter(gpuctl_e2e::e2e::is_live).collect();
        assert_eq!(live.len(), 2, "{provider} cluster={cluster}: exactly the two nodes bill: {live:?}");
        let recorded = e.store(|s| s.resources(Some("e2e"))).unwrap();
        if cluster {
            assert_eq!(zones, [next_zone, next_zone], "{provider}: {:?}", report.units);
            assert!(report.units.iter().all(|u| u.fell_back_from.len() == 1), "{:?}", report.units);
            check_on_the_cloud(provider, &live, &report.units);
            // What the short zone made was released, and is recorded so; the refused create is failed.
            let there: Vec<_> = recorded.iter().filter(|r| r.zone == short_zone).collect();
            assert_eq!(there.len(), 2, "{there:?}");
            assert_eq!(there.iter().filter(|r| r.state == ResourceState::Released).count(), 1, "{there:?}");
            assert_eq!(there.iter().filter(|r| r.state == ResourceState::Failed).count(), 1, "{there:?}");
            assert!(e.store(|s| s.open_operations(None)).unwrap().is_empty(), "every intent is closed");
            // A re-run keeps the cluster where it is and buys nothing.
            let (_, again) = provision(&sim, &dir, &text).await;
            assert!(again.errors.is_empty() && again.units.iter().all(|u| u.adopted), "{:?}", again.units);
            assert_eq!(instances(&sim, provider).into_iter().filter(gpuctl_e2e::e2e::is_live).count(), 2);
        } else {
            let mut sorted = zones.clone();
            sorted.sort();
            let mut want = [short_zone, next_zone];
            want.sort();
            assert_eq!(sorted, want, "{provider}: without `cluster` each instance falls back alone");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tencent_short_zone_moves_the_whole_cluster() {
    let src = TENCENT.replacen(
        "provider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-3\"\ninstance_type = \"GN7.2XLARGE32\"\n",
        "[[pool.candidates]]\nprovider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-3\"\ninstance_type = \"GN7.2XLARGE32\"\n\
         [[pool.candidates]]\nprovider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-4\"\ninstance_type = \"GN7.2XLARGE32\"\n",
        1,
    );
    assert_ne!(src, TENCENT);
    short_zone_moves_the_whole_cluster("tencent", &src, "ap-guangzhou-3", "ap-guangzhou-4").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alibaba_short_zone_moves_the_whole_cluster() {
    short_zone_moves_the_whole_cluster("alibaba", ALIBABA, "cn-hangzhou-i", "cn-hangzhou-h").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throttled_and_dropped_calls_are_retried_without_duplicates() {
    let knobs = Knobs {
        rate_limits: vec![RateLimit {
            provider: Some(gpuctl_simkit::Provider::Alibaba),
            action: Some("RunInstances".into()),
            per_second: 2.0,
            burst: Some(1.0),
        }],
        // The first create succeeds on the cloud but its answer never arrives: the retry must adopt it.
        faults: vec![FaultRule::next(
            Some(gpuctl_simkit::Provider::Alibaba),
            Some("RunInstances"),
            FaultKind::SuccessThenDrop,
            1,
        )],
        ..quick_knobs()
    };
    let sim = sim(knobs);
    let dir = tempfile::tempdir().unwrap();
    let src = ALIBABA.replace("count = 2", "count = 4");
    let (_, report) = provision(&sim, &dir, &src).await;
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(report.retries > 0, "throttling must have caused retries");
    eprintln!("retries {} waited {} ms", report.retries, report.retry_wait_ms);
    assert_eq!(report.units.iter().filter(|u| u.state == ResourceState::Running).count(), 4);
    assert_eq!(instances(&sim, "alibaba").len(), 4, "the dropped answer must not cost a second instance");
}

// Issue 13: `login_key = { public_key = … }`. `ssh-keygen -t rsa -b 2048` / `-t ed25519` public halves
// (the private halves were deleted): Tencent and Alibaba import RSA, JD any OpenSSH key.
const RSA_PUB: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDyUSzFRX6BlPCXVwGlPJ2aq4JIrBHpWO6v/+qdK5Mt4W4BqBF/GJjht1oz0d2eLH/oAonZsIA9xLlS8mDO167cWL0xevJP/LlhUlNNvf4SfPOa0Ml8vK3v9LT26xDHlvmbVx3fCuKCyr6dIN5rrK0AEn0sa6GP58rwYHIZV9DDwH2ZOTVBgu2IV8tcHN7MGz7YP8NKJNPYFG4Q07aarKCUU89mo/X5cZv+bwXMXqyZhOVeqloJqLwbKMInrVIqIKYwc5bo4y52RpA89mM1IRC6XyEb79S9wB5ogirgLvT662REkhOVn0dZnTLEJepDAga83XLbjtgYkh+ymt51HKaV me@laptop\n";
const ED_PUB: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO2a1L/E68n+5sZjP5Zzs6Dz+RnIt9VGaEXKK/EgZZKW me@laptop\n";

fn key_pairs(sim: &BackgroundSim, provider: &str) -> Vec<serde_json::Value> {
    sim.sim().state()["providers"][provider]["key_pairs"].as_array().cloned().unwrap_or_default()
}

/// The key id (or name) an instance on the cloud was created with (`/_sim/state`).
fn instance_key(provider: &str, i: &serde_json::Value) -> serde_json::Value {
    match provider {
        "tencent" => i["KeyIds"][0].clone(),
        "alibaba" => i["KeyPairName"].clone(),
        _ => i["keyNames"][0].clone(),
    }
}

/// Provision with a public key: imported once under its fingerprint's name, every instance created
/// with it; a re-run imports nothing. With `preimported`, the key pair is already on the cloud under
/// that name (a run killed after the import, before anything recorded it): it is adopted, not
/// imported twice.
async fn key_import(provider: &str, src: &str, public_key: &str, region: &str, preimported: bool) {
    let sim = sim(quick_knobs());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("id.pub");
    std::fs::write(&path, public_key).unwrap();
    let key = gpuctl_provision::pubkey::PublicKey::read(&path).unwrap();
    let name = key.import_name();
    // In the pool's own table (the Alibaba spec ends in candidate tables).
    let disks = "data_disks = [{ size_gb = 100 }]\n";
    let src =
        src.replacen(disks, &format!("{disks}login_key = {{ public_key = \"{}\" }}\n", path.display()), 1);
    let p = gpuctl_provision::plan::plan(
        &spec::parse("e2e.toml", &src, None, &Limits::default()).unwrap(),
        Catalog::shipped(),
        &[],
        jiff::civil::date(2026, 11, 30),
    );
    let imports: Vec<_> =
        p.key_imports.iter().map(|k| (k.provider.as_str(), k.region.as_str(), k.name.as_str())).collect();
    assert_eq!(imports, [(provider, region, name.as_str())], "the plan shows the import");
    if preimported {
        let cloud = clouds(&sim).into_iter().find(|c| c.provider().as_str() == provider).unwrap();
        cloud.import_key_pair(region, &name, &key.openssh_line()).await.unwrap();
    }

    let (_, report) = provision(&sim, &dir, &src).await;
    assert!(report.errors.is_empty(), "{provider}: {:?}", report.errors);
    let keys = key_pairs(&sim, provider);
    assert_eq!(keys.len(), 1, "{provider}: one key pair: {keys:?}");
    assert_eq!(keys[0]["name"], name.as_str());
    assert_eq!(keys[0]["key_type"], key.key_type.as_str());
    let key_id = keys[0]["id"].clone();
    let cloud = instances(&sim, provider);
    assert_eq!(cloud.len(), 2, "{cloud:?}");
    for i in &cloud {
        assert_eq!(instance_key(provider, i), key_id, "{provider}: the instance carries the key: {i}");
    }

    // A re-run (a new engine, as a new `gpuctl provision`) adopts the instances and finds the key.
    let (e, again) = provision(&sim, &dir, &src).await;
    assert!(again.errors.is_empty(), "{:?}", again.errors);
    assert!(again.units.iter().all(|u| u.adopted), "{:?}", again.units);
    assert_eq!(key_pairs(&sim, provider).len(), 1, "{provider}: no second import");
    assert!(e.store(|s| s.open_operations(None)).unwrap().is_empty(), "every intent is closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tencent_imports_the_public_key_once() {
    key_import("tencent", TENCENT, RSA_PUB, "ap-guangzhou", false).await;
    key_import("tencent", TENCENT, RSA_PUB, "ap-guangzhou", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alibaba_imports_the_public_key_once() {
    key_import("alibaba", ALIBABA, RSA_PUB, "cn-hangzhou", false).await;
    key_import("alibaba", ALIBABA, RSA_PUB, "cn-hangzhou", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdcloud_imports_the_public_key_once() {
    key_import("jdcloud", JDCLOUD, ED_PUB, "cn-north-1", false).await;
    key_import("jdcloud", JDCLOUD, ED_PUB, "cn-north-1", true).await;
}
