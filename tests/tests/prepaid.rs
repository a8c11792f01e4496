//! What bills and what stops billing on release (issue 12 items 1 and 5), through the `gpuctl` binary
//! against `gpuctl sim`: a spot Tencent pool without `spot_max_price`, and prepaid terms —
//! a subscription Alibaba instance cannot be released by DeleteInstances while its term runs
//! (alibabacloud_ecs20140526 7.11.8, models/_delete_instances_request.py: TerminateSubscription
//! releases *expired* subscriptions only), so `release` leaves the term the documented way —
//! ModifyInstanceChargeType to PostPaid — and only then deletes; the sim must then hold nothing.

use gpuctl_e2e::e2e::{self, SimProcess};
use serde_json::Value;

const QUICK: &str = "seed = 5\n[knobs]\nboot_seconds = 1\n";

/// Provisions `deployment`: one pool `work` of one instance, `pool` its remaining lines (billing,
/// term, placement); answers the instance's id.
fn provision_one(sim: &SimProcess, dir: &std::path::Path, deployment: &str, pool: &str) -> String {
    let spec = dir.join("spec.toml");
    let text = format!(
        "deployment = \"{deployment}\"\nhours = 4\n[budget]\ntotal_cny = 1000000\n[[pool]]\nname = \"work\"\ncount = 1\n{pool}"
    );
    std::fs::write(&spec, text).unwrap();
    let report = e2e::ok_json(&sim.url, dir, &["provision", spec.to_str().unwrap(), "--yes", "--json"]);
    report["units"][0]["instance_id"].as_str().unwrap().to_string()
}

fn instances(sim: &SimProcess, provider: &str) -> Vec<Value> {
    sim.state()["providers"][provider]["instances"].as_array().cloned().unwrap_or_default()
}

#[test]
fn alibaba_weekly_release_converts_to_pay_as_you_go_then_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let id = provision_one(&sim, dir.path(), "e2e-prepaid-alibaba", "billing = \"weekly\"\nterm = 1\nprovider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\ninstance_type = \"ecs.gn7i-c8g1.2xlarge\"\nimage = \"ubuntu_22_04_x64_20G_alibase_20240926.vhd\"\n");
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

/// JD has no early end to a term: deleteInstance deletes pay-as-you-go or *expired* prepaid VMs only
/// (jdcloud_sdk 1.6.354, services/vm/apis/DeleteInstanceRequest.py). So `release` turns renewal off
/// (renewal/apis/SetRenewalRequest.py), records the VM billed until its term's end and never calls it
/// released; `status` and `sweep` say so; once the sim's clock is past the end, `sweep --release`
/// deletes it and the sim holds nothing.
#[test]
fn jd_monthly_release_bills_until_the_term_ends_then_sweep_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let id = provision_one(
        &sim,
        dir.path(),
        "e2e-prepaid-jd",
        &format!("billing = \"monthly\"\nterm = 1\n{}", e2e::placement("jdcloud")),
    );
    let held = instances(&sim, "jdcloud");
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0]["charge"]["chargeMode"], "prepaid_by_duration", "{held:?}");
    let expires: jiff::Timestamp = held[0]["charge"]["chargeExpiredTime"].as_str().unwrap().parse().unwrap();

    let out = e2e::ok_json(&sim.url, dir.path(), &["release", &id, "--yes", "--json"]);
    assert_eq!(out["released"], serde_json::json!([]), "never released while billed: {out}");
    assert_eq!(out["billed_until"][0]["instance_id"], id.as_str(), "{out}");
    let until: jiff::Timestamp = out["billed_until"][0]["until"].as_str().unwrap().parse().unwrap();
    assert_eq!(until, expires, "{out}");
    // The cloud still runs (and bills) it, with renewal off.
    let held = instances(&sim, "jdcloud");
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!((held[0]["status"].as_str(), held[0]["autoRenew"].as_bool()), (Some("running"), Some(false)));

    let status = e2e::ok_json(&sim.url, dir.path(), &["status", "--json"]);
    assert_eq!(status.as_array().map(Vec::len), Some(1), "{status}");
    assert_eq!(status[0]["state"], "billed_until", "{status}");
    let shown: jiff::Timestamp = status[0]["billed_until"].as_str().unwrap().parse().unwrap();
    assert_eq!(shown, expires, "{status}");
    let text = e2e::gpuctl(&sim.url, dir.path(), &["status"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains(&format!("billed until {expires}")), "{text}");

    let sweep_args = ["sweep", "--provider", "jdcloud", "--region", "cn-north-1", "--json"];
    let swept = e2e::ok_json(&sim.url, dir.path(), &sweep_args);
    assert_eq!(swept["orphans"], serde_json::json!([]), "{swept}");
    assert_eq!(swept["billing_until"][0]["instance_id"], id.as_str(), "{swept}");
    assert!(swept["billing_until_cny"].as_f64().unwrap() > 0.0, "a month's term is left: {swept}");

    // Past the term's end: the VM is stopped and deletable; `sweep --release` finishes the release.
    let (code, body) = sim.admin("POST", "/_sim/clock", &format!("{{\"advance_seconds\": {}}}", 31 * 86_400));
    assert_eq!(code, 200, "{body}");
    let mut args = sweep_args.to_vec();
    args.extend(["--release", "--yes"]);
    let swept = e2e::ok_json(&sim.url, dir.path(), &args);
    assert_eq!(swept["released"], serde_json::json!([id]), "{swept}");
    assert_eq!(swept["billing_until"], serde_json::json!([]), "{swept}");
    assert!(instances(&sim, "jdcloud").is_empty(), "{:?}", instances(&sim, "jdcloud"));
    let status = e2e::ok_json(&sim.url, dir.path(), &["status", "--json"]);
    assert_eq!(status, serde_json::json!([]), "nothing live is recorded");
}

/// Tencent's TerminateInstances returns a PREPAID instance into the recycle bin: "包年包月实例如符合
/// 退还规则，也可通过本接口主动退还 … 首次调用本接口，实例将被移至回收站" (tccli 3.1.189.1,
/// tccli/services/cvm/v20170312/api.json, TerminateInstances). It is described SHUTDOWN there and
/// no longer bills, so `release` reports it released; `sweep` counts it as leaving, not as a leak.
#[test]
fn tencent_monthly_release_moves_it_to_the_recycle_bin() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let id = provision_one(
        &sim,
        dir.path(),
        "e2e-prepaid-tencent",
        &format!("billing = \"monthly\"\nterm = 1\n{}", e2e::placement("tencent")),
    );
    let held = instances(&sim, "tencent");
    assert_eq!((held.len(), held[0]["InstanceChargeType"].as_str()), (1, Some("PREPAID")), "{held:?}");

    let out = e2e::ok_json(&sim.url, dir.path(), &["release", &id, "--yes", "--json"]);
    assert_eq!(out["released"], serde_json::json!([id]), "{out}");
    assert_eq!(out["billed_until"], serde_json::json!([]), "{out}");
    let held = instances(&sim, "tencent");
    assert_eq!(held.len(), 1, "in the recycle bin, not deleted: {held:?}");
    assert_eq!(held[0]["Shutdown"], true, "{held:?}");
    let status = e2e::ok_json(&sim.url, dir.path(), &["status", "--json"]);
    assert_eq!(status, serde_json::json!([]), "nothing live is recorded");
    let swept = e2e::ok_json(
        &sim.url,
        dir.path(),
        &["sweep", "--provider", "tencent", "--region", "ap-guangzhou", "--json"],
    );
    assert_eq!(
        (swept["orphans"].clone(), swept["leaving"].clone()),
        (serde_json::json!([]), serde_json::json!(1))
    );
    assert_eq!(swept["billing_until"], serde_json::json!([]), "{swept}");
}

/// The spot Tencent pool without `spot_max_price` of issue 12's "Done when". Tencent requires a bid
/// for SPOTPAID (tccli 3.1.189.1, services/cvm/v20170312/api.json objects.SpotMarketOptions: MaxPrice
/// `required`), and the sim refuses a spot create without one (MissingParameter), so the plan bids the
/// pay-as-you-go price and says so, and the instance the sim holds is a SPOTPAID one. `status` shows
/// it live at the recorded spot price, which is at most the bid (the sim refuses a bid below the spot
/// price); `sweep` owns it and finds nothing billing past a term. Released, the cloud terminates it
/// (a spot instance has no term to run out, so no recycle bin either), and nothing is left billing.
/// The sim has no knob that reclaims a spot instance, so a reclaim is not covered here.
#[test]
fn tencent_spot_without_max_price_bids_pay_as_you_go_and_stops_billing_on_release() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let pool = format!("billing = \"spot\"\n{}", e2e::placement("tencent"));
    let id = provision_one(&sim, dir.path(), "e2e-spot-tencent", &pool);
    let held = instances(&sim, "tencent");
    assert_eq!((held.len(), held[0]["InstanceChargeType"].as_str()), (1, Some("SPOTPAID")), "{held:?}");
    assert_eq!(held[0]["InstanceId"], id.as_str(), "{held:?}");

    // The bid the plan makes for this pool (the spec provision_one wrote): the pay-as-you-go price.
    let spec = dir.path().join("spec.toml");
    let plan = e2e::ok_json(&sim.url, dir.path(), &["plan", spec.to_str().unwrap(), "--json"]);
    let bid = plan["pools"][0]["choices"][0]["spot_bid"].as_f64().unwrap_or_else(|| panic!("no bid: {plan}"));
    assert!(plan["warnings"].to_string().contains("the pay-as-you-go price"), "{plan}");

    let status = e2e::ok_json(&sim.url, dir.path(), &["status", "--json"]);
    assert_eq!(status.as_array().map(Vec::len), Some(1), "{status}");
    assert_eq!((status[0]["billing"].as_str(), status[0]["state"].as_str()), (Some("spot"), Some("running")));
    let rate = status[0]["price_cny_per_hour"].as_f64().unwrap_or_else(|| panic!("no price: {status}"));
    assert!(rate > 0.0 && rate <= bid, "spot rate {rate} vs bid {bid}: {status}");
    let sweep_args = ["sweep", "--provider", "tencent", "--region", "ap-guangzhou", "--json"];
    let swept = e2e::ok_json(&sim.url, dir.path(), &sweep_args);
    assert_eq!(
        (swept["orphans"].clone(), swept["owned"].clone()),
        (serde_json::json!([]), serde_json::json!(1))
    );
    assert_eq!(swept["billing_until"], serde_json::json!([]), "no term to bill to: {swept}");

    let out = e2e::ok_json(&sim.url, dir.path(), &["release", &id, "--yes", "--json"]);
    assert_eq!(out["released"], serde_json::json!([id]), "{out}");
    assert_eq!(out["billed_until"], serde_json::json!([]), "{out}");
    // On its way out at the cloud, not parked in the recycle bin as a prepaid one is.
    let held = instances(&sim, "tencent");
    assert!(held.iter().all(|i| i["Terminating"] == true && i["Shutdown"] == false), "{held:?}");
    let status = e2e::ok_json(&sim.url, dir.path(), &["status", "--json"]);
    assert_eq!(status, serde_json::json!([]), "nothing live is recorded");
    let swept = e2e::ok_json(&sim.url, dir.path(), &sweep_args);
    assert_eq!(
        (swept["orphans"].clone(), swept["owned"].clone()),
        (serde_json::json!([]), serde_json::json!(0))
    );
    assert_eq!(swept["billing_until"], serde_json::json!([]), "{swept}");
    assert_eq!(swept["total_cny_per_hour"], serde_json::json!(0.0), "{swept}");
}
