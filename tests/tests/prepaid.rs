//! Prepaid terms on release (issue 12 item 5), through the `gpuctl` binary against `gpuctl sim`:
//! a subscription Alibaba instance cannot be released by DeleteInstances while its term runs
//! (alibabacloud_ecs20140526 7.11.8, models/_delete_instances_request.py: TerminateSubscription
//! releases *expired* subscriptions only), so `release` leaves the term the documented way —
//! ModifyInstanceChargeType to PostPaid — and only then deletes; the sim must then hold nothing.

use gpuctl_e2e::e2e::{self, SimProcess};
use serde_json::Value;

const QUICK: &str = "seed = 5\n[knobs]\nboot_seconds = 1\n";

fn instances(sim: &SimProcess, provider: &str) -> Vec<Value> {
    sim.state()["providers"][provider]["instances"].as_array().cloned().unwrap_or_default()
}

#[test]
fn alibaba_weekly_release_converts_to_pay_as_you_go_then_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let spec = dir.path().join("spec.toml");
    std::fs::write(
        &spec,
        "deployment = \"e2e-prepaid-alibaba\"\nhours = 4\n[budget]\ntotal_cny = 1000000\n[[pool]]\nname = \"work\"\ncount = 1\nbilling = \"weekly\"\nterm = 1\nprovider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\ninstance_type = \"ecs.gn7i-c8g1.2xlarge\"\nimage = \"ubuntu_22_04_x64_20G_alibase_20240926.vhd\"\n",
    )
    .unwrap();
    let spec_s = spec.to_str().unwrap();

    let report = e2e::ok_json(&sim.url, dir.path(), &["provision", spec_s, "--yes", "--json"]);
    let id = report["units"][0]["instance_id"].as_str().unwrap().to_string();
    let held = instances(&sim, "alibaba");
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0]["InstanceChargeType"], "PrePaid", "{held:?}");

    let released = e2e::ok_json(&sim.url, dir.path(), &["release", &id, "--yes", "--json"]);
    assert_eq!(released["released"], serde_json::json!([id]), "{released}");
    // Released for real: the cloud holds no instance, so nothing bills.
    assert!(instances(&sim, "alibaba").is_empty(), "{:?}", instances(&sim, "alibaba"));
    let status = e2e::ok_json(&sim.url, dir.path(), &["status", "--json"]);
    assert_eq!(status, serde_json::json!([]), "nothing live is recorded");
}
