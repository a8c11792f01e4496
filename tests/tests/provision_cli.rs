//! The `gpuctl` binary against `gpuctl sim` (a separate process, as a user would run them), per
//! provider: plan → provision → status → snapshot → clone --count 2 → release one → destroy, and then
//! `/_sim/state` shows no running instance. Plus a budget refusal, a stock-out fallback and a
//! throttled run that still completes.

use std::path::Path;
use std::process::Output;

use gpuctl_e2e::e2e::{self, SimProcess};
use serde_json::Value;

/// Instances the cloud holds that are not on their way out. Deliberately stricter than
/// `e2e::is_live`: an instance left `error`/`LAUNCH_FAILED` still counts, so a failed launch cannot
/// pass for a released one.
fn live(sim: &SimProcess, provider: &str) -> Vec<Value> {
    let st = sim.state();
    let all = st["providers"][provider]["instances"].as_array().cloned().unwrap_or_default();
    all.into_iter()
        .filter(|i| {
            let state =
                i["Status"].as_str().or(i["InstanceState"].as_str()).or(i["status"].as_str()).unwrap_or("");
            !matches!(state, "TERMINATING" | "SHUTDOWN" | "deleting" | "Deleted")
        })
        .collect()
}

/// Runs gpuctl against the sim with its own state file and the sim's documented test keys.
fn gpuctl(sim: &SimProcess, dir: &Path, args: &[&str]) -> Output {
    e2e::gpuctl(&sim.url, dir, args)
}

fn ok_json(sim: &SimProcess, dir: &Path, args: &[&str]) -> Value {
    e2e::ok_json(&sim.url, dir, args)
}

const QUICK: &str = "seed = 5\n[knobs]\nboot_seconds = 1\n";

fn spec_for(provider: &str) -> String {
    let place = match provider {
        "tencent" => "provider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-3\"\ninstance_type = \"GN7.2XLARGE32\"\nimage = \"img-pi0ii46r\"\n",
        "alibaba" => "provider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\ninstance_type = \"ecs.gn7i-c8g1.2xlarge\"\nimage = \"ubuntu_22_04_x64_20G_alibase_20240926.vhd\"\n",
        _ => "provider = \"jdcloud\"\nregion = \"cn-north-1\"\nzone = \"cn-north-1a\"\ninstance_type = \"p.n1v100.2xlarge\"\nimage = \"7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204\"\nnetwork = { vpc = \"vpc-1\", subnet = \"subnet-1\", security_groups = [\"sg-1\"] }\n",
    };
    format!("deployment = \"e2e-{provider}\"\nhours = 4\n[budget]\ntotal_cny = 100000\n[[pool]]\nname = \"work\"\ncount = 2\nbilling = \"hourly\"\ndata_disks = [{{ size_gb = 50 }}]\n{place}")
}

fn lifecycle(provider: &str) {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, spec_for(provider)).unwrap();
    let spec_s = spec.to_str().unwrap();
    let dep = format!("e2e-{provider}");

    let plan = ok_json(&sim, dir.path(), &["plan", spec_s, "--json"]);
    assert_eq!(plan["pools"][0]["create"], serde_json::json!([0, 1]), "{plan}");

    let report = ok_json(&sim, dir.path(), &["provision", spec_s, "--yes", "--json"]);
    let units = report["units"].as_array().unwrap();
    assert_eq!(units.len(), 2);
    assert!(units.iter().all(|u| u["state"] == "running" && u["auto_release_at"].is_string()), "{report}");
    assert_eq!(live(&sim, provider).len(), 2);

    let status = ok_json(&sim, dir.path(), &["status", &dep, "--json"]);
    assert_eq!(status.as_array().unwrap().len(), 2, "{status}");
    assert!(status[0]["price_cny_per_hour"].is_number() && status[0]["price_source"].is_string(), "{status}");

    let snaps = ok_json(&sim, dir.path(), &["snapshot", &format!("{dep}/work"), "--json"]);
    assert_eq!(snaps.as_array().unwrap().len(), 4, "system + data disk of 2 instances: {snaps}");

    let spec_out = dir.path().join("clone.toml");
    let clone = ok_json(
        &sim,
        dir.path(),
        &[
            "clone",
            &format!("{dep}/work"),
            "--count",
            "2",
            "--yes",
            "--json",
            "--spec-out",
            spec_out.to_str().unwrap(),
        ],
    );
    let clones = clone["units"].as_array().unwrap();
    assert_eq!(clones.len(), 2, "{clone}");
    assert!(clones.iter().all(|u| u["state"] == "running"), "{clone}");
    assert_eq!(live(&sim, provider).len(), 4);
    let clone_spec = std::fs::read_to_string(&spec_out).unwrap();
    assert!(clone_spec.contains("购买相同配置") && clone_spec.contains("count = 2"), "{clone_spec}");

    let one = clones[0]["instance_id"].as_str().unwrap();
    let released = ok_json(&sim, dir.path(), &["release", one, "--yes", "--json"]);
    assert_eq!(released["released"], serde_json::json!([one]));
    assert_eq!(live(&sim, provider).len(), 3);

    ok_json(&sim, dir.path(), &["destroy", spec_s, "--yes", "--json"]);
    ok_json(&sim, dir.path(), &["destroy", spec_out.to_str().unwrap(), "--yes", "--json"]);
    assert!(live(&sim, provider).is_empty(), "{:?}", live(&sim, provider));
    let status = ok_json(&sim, dir.path(), &["status", "--json"]);
    assert_eq!(status, serde_json::json!([]), "nothing live is recorded");
    let all = ok_json(&sim, dir.path(), &["status", "--all", "--json"]);
    assert_eq!(all.as_array().unwrap().len(), 4, "records are kept after release: {all}");
}

#[test]
fn tencent_lifecycle() {
    lifecycle("tencent");
}

#[test]
fn alibaba_lifecycle() {
    lifecycle("alibaba");
}

#[test]
fn jdcloud_lifecycle() {
    lifecycle("jdcloud");
}

#[test]
fn over_budget_plans_exit_3_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, spec_for("alibaba").replace("total_cny = 100000", "total_cny = 10")).unwrap();
    let plan = gpuctl(&sim, dir.path(), &["plan", spec.to_str().unwrap()]);
    assert_eq!(plan.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&plan.stdout).contains("is above the budget of ¥10.00"),
        "{}",
        String::from_utf8_lossy(&plan.stdout)
    );
    let prov = gpuctl(&sim, dir.path(), &["provision", spec.to_str().unwrap(), "--yes"]);
    assert_eq!(prov.status.code(), Some(3));
    assert!(live(&sim, "alibaba").is_empty());
}

#[test]
fn stock_out_falls_back_and_throttling_still_completes() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "{QUICK}stock_outs = [{{ provider = \"alibaba\", zone = \"cn-hangzhou-i\" }}]\nrate_limits = [{{ provider = \"alibaba\", action = \"RunInstances\", per_second = 1.0, burst = 1.0 }}]\n"
    );
    let sim = SimProcess::start(dir.path(), &config, &[]);
    let spec = dir.path().join("spec.toml");
    let text = spec_for("alibaba").replace("count = 2", "count = 3").replace(
        "provider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\ninstance_type = \"ecs.gn7i-c8g1.2xlarge\"\n",
        "[[pool.candidates]]\nprovider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\ninstance_type = \"ecs.gn7i-c8g1.2xlarge\"\n[[pool.candidates]]\nprovider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-h\"\ninstance_type = \"ecs.gn7i-c8g1.2xlarge\"\n",
    );
    // Candidates are sub-tables: the pool's own keys must come before them.
    let (head, cands) = text.split_once("[[pool.candidates]]").unwrap();
    let image_line = "image = \"ubuntu_22_04_x64_20G_alibase_20240926.vhd\"\n";
    let text = format!("{head}{image_line}[[pool.candidates]]{}", cands.replace(image_line, ""));
    std::fs::write(&spec, text).unwrap();
    let report = ok_json(&sim, dir.path(), &["provision", spec.to_str().unwrap(), "--yes", "--json"]);
    let units = report["units"].as_array().unwrap();
    assert_eq!(units.len(), 3);
    for u in units {
        assert_eq!(
            (u["state"].as_str(), u["zone"].as_str()),
            (Some("running"), Some("cn-hangzhou-h")),
            "{u}"
        );
        assert_eq!(u["fell_back_from"], serde_json::json!(["alibaba cn-hangzhou-i ecs.gn7i-c8g1.2xlarge"]));
    }
    assert!(
        report["retries"].as_u64().unwrap() > 0,
        "the rate limit must have throttled some creates: {report}"
    );
    assert_eq!(live(&sim, "alibaba").len(), 3);
    ok_json(&sim, dir.path(), &["destroy", spec.to_str().unwrap(), "--yes", "--json"]);
    assert!(live(&sim, "alibaba").is_empty());
}

/// Issue 12: Tencent requires a spot bid (tccli services/cvm/v20170312/api.json
/// objects.SpotMarketOptions.MaxPrice). A spot pool without `spot_max_price` bids the pay-as-you-go
/// price: the plan says so, and the RunInstances the sim receives carries that MaxPrice.
#[test]
fn tencent_spot_without_max_price_bids_the_hourly_price() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    std::fs::create_dir_all(&rec).unwrap();
    let sim = SimProcess::start_with(
        dir.path(),
        QUICK,
        &[],
        std::process::Stdio::null(),
        &[("GPUCTL_SIM_RECORD", rec.to_str().unwrap())],
    );
    let spec = dir.path().join("spec.toml");
    let text = spec_for("tencent").replace("count = 2", "count = 1").replace("\"hourly\"", "\"spot\"");
    std::fs::write(&spec, text).unwrap();
    let spec_s = spec.to_str().unwrap();

    let plan = ok_json(&sim, dir.path(), &["plan", spec_s, "--json"]);
    let bid = plan["pools"][0]["choices"][0]["spot_bid"].as_f64().unwrap_or_else(|| panic!("no bid: {plan}"));
    // The pay-as-you-go price of the same type: the plan's hourly total over its 4 hours, 1 instance,
    // less its disks (priced per GB-hour beside the instance, the same in spot and hourly mode).
    let disks: f64 = plan["pools"][0]["disks"]
        .as_array()
        .unwrap_or_else(|| panic!("no disks: {plan}"))
        .iter()
        .map(|d| d["cny_per_hour"].as_f64().unwrap_or_else(|| panic!("an unpriced disk: {d}")))
        .sum();
    let hourly = plan["pools"][0]["by_mode"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mode"] == "hourly")
        .and_then(|m| m["total_cny"].as_f64())
        .unwrap_or_else(|| panic!("no hourly mode: {plan}"))
        / 4.0
        - disks;
    assert!((bid - hourly).abs() < 1e-9, "bid {bid} vs hourly {hourly}");
    let warnings = plan["warnings"].to_string();
    assert!(warnings.contains("spot bid") && warnings.contains("the pay-as-you-go price"), "{warnings}");

    let report = ok_json(&sim, dir.path(), &["provision", spec_s, "--yes", "--json"]);
    assert!(report["units"].as_array().unwrap().iter().all(|u| u["state"] == "running"), "{report}");
    let mut prices = Vec::new();
    for f in std::fs::read_dir(&rec).unwrap() {
        for line in std::fs::read_to_string(f.unwrap().path()).unwrap().lines() {
            let e: Value = serde_json::from_str(line).unwrap();
            if e["headers"]["x-tc-action"] == "RunInstances" {
                let body: Value = serde_json::from_str(e["body"].as_str().unwrap()).unwrap();
                prices.push(body["InstanceMarketOptions"]["SpotOptions"]["MaxPrice"].clone());
            }
        }
    }
    assert!(!prices.is_empty(), "no RunInstances recorded");
    for p in &prices {
        let sent: f64 = p.as_str().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("MaxPrice {p}"));
        assert!((sent - hourly).abs() < 1e-9, "MaxPrice {sent} vs hourly {hourly}");
    }
    ok_json(&sim, dir.path(), &["destroy", spec_s, "--yes", "--json"]);
}

/// `network = "default"` on Alibaba: the instance goes into the zone's default vSwitch and a security
/// group of its VPC, as `/_sim/state` shows the account's network; in a zone where the account has no
/// default vSwitch (the sim's `no_default_network` knob) provision refuses before anything is bought,
/// naming the zone and the spec keys to set (issue 12, item 4).
#[test]
fn alibaba_default_network_is_the_zones_default_vswitch() {
    let dir = tempfile::tempdir().unwrap();
    let config =
        format!("{QUICK}no_default_network = [{{ provider = \"alibaba\", zone = \"cn-hangzhou-h\" }}]\n");
    let sim = SimProcess::start(dir.path(), &config, &[]);
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, spec_for("alibaba").replace("count = 2", "count = 1")).unwrap();
    let report = ok_json(&sim, dir.path(), &["provision", spec.to_str().unwrap(), "--yes", "--json"]);
    assert_eq!(report["units"][0]["state"], "running", "{report}");

    let st = sim.state();
    let ali = &st["providers"]["alibaba"];
    let default_in = |zone: &str| {
        ali["subnets"].as_array().unwrap().iter().find(|v| v["zone"] == zone && v["default"] == true).cloned()
    };
    let vsw = default_in("cn-hangzhou-i").expect("the account has a default vSwitch in cn-hangzhou-i");
    assert!(default_in("cn-hangzhou-h").is_none(), "the knob leaves cn-hangzhou-h without one");
    let inst = &live(&sim, "alibaba")[0];
    assert_eq!(inst["VpcAttributes"]["VSwitchId"], vsw["id"], "{inst}");
    assert_eq!(inst["VpcAttributes"]["VpcId"], vsw["vpc_id"], "{inst}");
    let group = ali["security_groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["vpc_id"] == vsw["vpc_id"])
        .expect("the default VPC has a security group")["id"]
        .clone();
    assert_eq!(inst["SecurityGroupIds"]["SecurityGroupId"], serde_json::json!([group]), "{inst}");

    // A zone without a default vSwitch: refused with what to set, and nothing bought.
    let bare = dir.path().join("bare.toml");
    std::fs::write(
        &bare,
        spec_for("alibaba")
            .replace("deployment = \"e2e-alibaba\"", "deployment = \"e2e-bare\"")
            .replace("zone = \"cn-hangzhou-i\"", "zone = \"cn-hangzhou-h\""),
    )
    .unwrap();
    for args in [
        vec!["provision", bare.to_str().unwrap(), "--dry-run"],
        vec!["provision", bare.to_str().unwrap(), "--yes"],
    ] {
        let o = gpuctl(&sim, dir.path(), &args);
        let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(!o.status.success(), "{args:?}: {text}");
        assert!(text.contains("no default vSwitch in zone cn-hangzhou-h"), "{args:?}: {text}");
        assert!(text.contains("network.alibaba = { vpc = "), "{args:?}: {text}");
    }
    assert_eq!(live(&sim, "alibaba").len(), 1, "only the first deployment's instance");
}
