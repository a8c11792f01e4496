//! Finding leaks without state: `gpuctl sweep` against a real `gpuctl sim` process, on all three clouds
//! at once. Each cloud holds an instance our state store owns, two instances of a run whose state file
//! was deleted (the leaks), and one instance gpuctl did not make (another tag, none of gpuctl's). The
//! sweep must list exactly the leaks with their ¥/hour, refuse to release without a terminal or
//! `--yes`, leave alone a deployment another run holds the lock of, and with `--yes` leave the cloud
//! holding only the owned and the foreign instances.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use gpuctl_cloud::cloud::{Cloud, CreateRequest};
use gpuctl_cloud::http::{Endpoint, Http};
use gpuctl_cloud::BillingMode;
use gpuctl_cloud::{Disk, DiskCategory, NetworkIds};
use gpuctl_e2e::e2e::{gpuctl, instance_id, is_live, ok_json, spec_text, tag_value, SimProcess, PROVIDERS};
use gpuctl_provision::state::Store;
use serde_json::Value;

const QUICK: &str = "seed = 9\n[knobs]\nboot_seconds = 1\n";

/// Provisions `count` instances of deployment `dep` on `provider` with the state store in `dir`; returns their ids.
fn provision(sim: &SimProcess, dir: &Path, provider: &str, dep: &str, count: u32) -> Vec<String> {
    let spec = dir.join(format!("{dep}.toml"));
    std::fs::write(&spec, spec_text(provider, dep, count)).unwrap();
    let report = ok_json(&sim.url, dir, &["provision", spec.to_str().unwrap(), "--yes", "--json"]);
    let ids: Vec<String> = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["instance_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), count as usize, "{report}");
    ids
}

/// One instance made straight through the provider's client, tagged only `team=ml`: not gpuctl's.
fn foreign_instance(sim: &SimProcess, provider: &str) -> String {
    let http = Http::new(Duration::from_secs(10)).unwrap();
    let ep = Some(Endpoint::parse(&sim.url).unwrap());
    let (_, ak, sk) =
        gpuctl_simkit::creds::TEST_KEY_PAIRS.iter().find(|(n, _, _)| n.as_str() == provider).unwrap();
    let creds = gpuctl_sign::Credentials::new(*ak, *sk);
    let (cloud, region, zone, itype, image, network): (Arc<dyn Cloud>, _, _, _, _, _) = match provider {
        "tencent" => (
            Arc::new(gpuctl_tencent::client::Client::new(creds, ep, http)),
            "ap-guangzhou",
            "ap-guangzhou-3",
            "GN7.2XLARGE32",
            "img-pi0ii46r",
            None,
        ),
        "alibaba" => (
            Arc::new(gpuctl_alibaba::client::Client::new(creds, ep, http)),
            "cn-hangzhou",
            "cn-hangzhou-i",
            "ecs.gn7i-c8g1.2xlarge",
            "ubuntu_22_04_x64_20G_alibase_20240926.vhd",
            None,
        ),
        _ => (
            Arc::new(gpuctl_jdcloud::client::Client::new(creds, ep, http)),
            "cn-north-1",
            "cn-north-1a",
            "p.n1v100.2xlarge",
            "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204",
            Some(NetworkIds {
                vpc: "vpc-1".into(),
                subnet: "subnet-1".into(),
                security_groups: vec!["sg-1".into()],
            }),
        ),
    };
    let req = CreateRequest {
        client_token: format!("foreign-{provider}"),
        name: "someone-elses".into(),
        region: region.into(),
        zone: zone.into(),
        instance_type: itype.into(),
        billing: BillingMode::Hourly,
        term: 0,
        spot_max_price: None,
        image_id: image.into(),
        system_disk: Disk { category: DiskCategory::Ssd, size_gb: 50, snapshot_id: None },
        data_disks: vec![],
        network,
        placement: None,
        login_key: None,
        public_ip: None,
        auto_release_at: None,
        tags: [("team".to_string(), "ml".to_string())].into(),
        user_data: None,
        instance_role: None,
        dry_run: false,
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(cloud.create(&req)).unwrap_or_else(|e| panic!("{provider}: {e}")).instance_id
}

/// Every live instance id on every cloud.
fn live_ids(sim: &SimProcess) -> BTreeSet<String> {
    let st = sim.state();
    PROVIDERS
        .iter()
        .flat_map(|p| st["providers"][p]["instances"].as_array().cloned().unwrap_or_default())
        .filter(is_live)
        .map(|i| instance_id(&i))
        .collect()
}

fn ids_of(v: &Value, field: &str) -> BTreeSet<String> {
    v[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            if o.is_string() {
                o.as_str().unwrap().to_string()
            } else {
                o["instance_id"].as_str().unwrap().to_string()
            }
        })
        .collect()
}

#[test]
fn sweep_finds_exactly_the_leaks_and_releases_only_them() {
    let ours = tempfile::tempdir().unwrap();
    let lost = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(ours.path(), QUICK, &[]);
    let (mut owned, mut leaked, mut foreign) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for p in PROVIDERS {
        owned.extend(provision(&sim, ours.path(), p, &format!("owned-{p}"), 1));
        leaked.extend(provision(&sim, lost.path(), p, &format!("lost-{p}"), 2));
        foreign.insert(foreign_instance(&sim, p));
    }
    // The other run's state is lost.
    for f in std::fs::read_dir(lost.path()).unwrap() {
        let f = f.unwrap().path();
        if f.file_name().unwrap().to_string_lossy().starts_with("state.db") {
            std::fs::remove_file(f).unwrap();
        }
    }
    let everything: BTreeSet<String> = owned.iter().chain(&leaked).chain(&foreign).cloned().collect();
    assert_eq!(live_ids(&sim), everything);

    let found = ok_json(&sim.url, ours.path(), &["sweep", "--json"]);
    assert_eq!(ids_of(&found, "orphans"), leaked, "{found}");
    assert_eq!(
        (found["owned"].as_u64(), found["leaving"].as_u64(), found["unpriced"].as_u64()),
        (Some(3), Some(0), Some(0)),
        "{found}"
    );
    assert_eq!(found["errors"], serde_json::json!([]), "{found}");
    assert_eq!(found["released"], Value::Null);
    assert_eq!(
        found["searched"].as_array().unwrap().len(),
        15, // Tencent 4, Alibaba 6, JD 5 (the evidence catalog added Suqian, cn-east-1)
        "every catalog region of the three clouds: {found}"
    );
    let mut sum = 0.0;
    for o in found["orphans"].as_array().unwrap() {
        let p = o["provider"].as_str().unwrap();
        assert_eq!(o["deployment"], format!("lost-{p}"), "{o}");
        assert_eq!(
            (o["pool"].as_str(), o["state"].as_str(), o["billing"].as_str()),
            (Some("work"), Some("running"), Some("hourly")),
            "{o}"
        );
        let price = &o["price"];
        assert!(
            price["cny_per_hour"].as_f64().is_some_and(|x| x > 0.0)
                && price["source"].is_string()
                && price["as_of"].is_string(),
            "{o}"
        );
        assert!(o["launched_at"].is_string() && o["age_hours"].as_f64().is_some_and(|h| h >= 0.0), "{o}");
        assert_eq!(o["tags"]["gpuctl-deployment"], o["deployment"]);
        sum += price["cny_per_hour"].as_f64().unwrap();
    }
    assert!((found["total_cny_per_hour"].as_f64().unwrap() - sum).abs() < 1e-9, "{found}");

    // Narrowed to one cloud and region.
    let one = ok_json(
        &sim.url,
        ours.path(),
        &["sweep", "--provider", "jdcloud", "--region", "cn-north-1", "--json"],
    );
    let jd: BTreeSet<String> = found["orphans"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["provider"] == "jdcloud")
        .map(|o| o["instance_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!((ids_of(&one, "orphans"), one["searched"].as_array().unwrap().len()), (jd, 1), "{one}");

    // The table for people: each leak, the total, the price's basis.
    let text = gpuctl(&sim.url, ours.path(), &["sweep"]);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(text.status.success(), "{out}");
    assert!(
        leaked.iter().all(|id| out.contains(id.as_str()))
            && !owned.iter().chain(&foreign).any(|id| out.contains(id.as_str())),
        "{out}"
    );
    assert!(
        out.contains("6 instance(s) tagged by gpuctl that no recorded deployment owns")
            && out.contains("/hour"),
        "{out}"
    );

    // No terminal and no --yes: refused, nothing touched.
    let refused = gpuctl(&sim.url, ours.path(), &["sweep", "--release"]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(err.contains("pass --yes"), "{err}");
    assert_eq!(live_ids(&sim), everything);

    // Another run holds deployment lost-tencent in this store: its instances are left alone (exit 4).
    let tencent: BTreeSet<String> = found["orphans"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["provider"] == "tencent")
        .map(|o| o["instance_id"].as_str().unwrap().to_string())
        .collect();
    {
        let store = Store::open(&ours.path().join("state.db")).unwrap();
        let _held = store.lock("lost-tencent").unwrap();
        let partial = gpuctl(&sim.url, ours.path(), &["sweep", "--release", "--yes", "--json"]);
        assert_eq!(partial.status.code(), Some(4), "{}", String::from_utf8_lossy(&partial.stderr));
        let partial: Value = serde_json::from_slice(&partial.stdout).unwrap();
        assert_eq!(ids_of(&partial, "released"), leaked.difference(&tencent).cloned().collect(), "{partial}");
        let errors = partial["release_errors"].as_array().unwrap();
        assert!(errors.len() == 1 && errors[0].as_str().unwrap().contains("lost-tencent"), "{partial}");
        let left: BTreeSet<String> = owned.iter().chain(&foreign).chain(&tencent).cloned().collect();
        assert_eq!(live_ids(&sim), left);
    }

    let released = ok_json(&sim.url, ours.path(), &["sweep", "--release", "--yes", "--json"]);
    assert_eq!(ids_of(&released, "released"), tencent, "{released}");
    assert_eq!(released["release_errors"], serde_json::json!([]), "{released}");
    let left: BTreeSet<String> = owned.iter().chain(&foreign).cloned().collect();
    assert_eq!(live_ids(&sim), left, "only the owned and the foreign instances remain");
    // The foreign ones still carry no gpuctl tag; the owned ones are still recorded as running.
    let st = sim.state();
    for p in PROVIDERS {
        for i in st["providers"][p]["instances"].as_array().unwrap().iter().filter(|i| is_live(i)) {
            let id = instance_id(i);
            assert_eq!(tag_value(i, "gpuctl-deployment").is_none(), foreign.contains(&id), "{i}");
        }
    }
    let status = ok_json(&sim.url, ours.path(), &["status", "--json"]);
    assert_eq!(status.as_array().unwrap().len(), 3, "{status}");

    // Nothing left to find.
    let again = ok_json(&sim.url, ours.path(), &["sweep", "--json"]);
    assert_eq!(
        (again["orphans"].as_array().unwrap().len(), again["owned"].as_u64()),
        (0, Some(3)),
        "{again}"
    );
}

/// A leaked prepaid Tencent instance goes to CVM's recycle bin (SHUTDOWN) when terminated and stays
/// listed for days: the release is done then, not after the wait's timeout.
#[test]
fn a_leaked_prepaid_instance_is_released_into_the_recycle_bin() {
    let ours = tempfile::tempdir().unwrap();
    let lost = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(ours.path(), QUICK, &[]);
    let spec = lost.path().join("monthly.toml");
    std::fs::write(
        &spec,
        spec_text("tencent", "lost-monthly", 1).replace("billing = \"hourly\"", "billing = \"monthly\""),
    )
    .unwrap();
    let report = ok_json(&sim.url, lost.path(), &["provision", spec.to_str().unwrap(), "--yes", "--json"]);
    let id = report["units"][0]["instance_id"].as_str().unwrap().to_string();
    std::fs::remove_file(lost.path().join("state.db")).unwrap();

    let found = ok_json(
        &sim.url,
        ours.path(),
        &["sweep", "--provider", "tencent", "--region", "ap-guangzhou", "--json"],
    );
    assert_eq!(ids_of(&found, "orphans"), BTreeSet::from([id.clone()]), "{found}");
    assert_eq!(found["orphans"][0]["billing"], "monthly", "{found}");
    let released = ok_json(
        &sim.url,
        ours.path(),
        &["sweep", "--provider", "tencent", "--region", "ap-guangzhou", "--release", "--yes", "--json"],
    );
    assert_eq!(ids_of(&released, "released"), BTreeSet::from([id.clone()]), "{released}");
    let st = sim.state();
    let inst = st["providers"]["tencent"]["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| instance_id(i) == id)
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (inst["Shutdown"].as_bool(), inst["Terminating"].as_bool()),
        (Some(true), Some(false)),
        "in the recycle bin: {inst}"
    );
    let again = ok_json(
        &sim.url,
        ours.path(),
        &["sweep", "--provider", "tencent", "--region", "ap-guangzhou", "--json"],
    );
    assert_eq!(
        (again["orphans"].as_array().unwrap().len(), again["leaving"].as_u64()),
        (0, Some(1)),
        "{again}"
    );
}
