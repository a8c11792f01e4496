//! GPU utilization end to end (issue 15): `gpuctl status` against `gpuctl sim` on each cloud reads the
//! monitoring API (Tencent GetMonitorData, Alibaba DescribeMetricList, JD describeMetricData) for the
//! instances gpuctl holds, and flags exactly the instance whose utilization the local cloud was told
//! (`POST /_sim/gpu_usage`) stays below the threshold, with its idle hours at the recorded ¥/hour; a
//! busy instance is not idle and one without data says so and is never idle.

use gpuctl_e2e::e2e::{self, SimProcess};
use serde_json::Value;

const QUICK: &str = "seed = 15\n[knobs]\nboot_seconds = 1\n";

fn set(sim: &SimProcess, provider: &str, id: &str, percent: f64) {
    let body = format!(r#"{{"provider":"{provider}","instance_id":"{id}","percent":{percent}}}"#);
    let (code, answer) = sim.admin("POST", "/_sim/gpu_usage", &body);
    assert_eq!(code, 200, "{answer}");
}

/// Runs `status` on gpuctl's clock moved as far as the sim's (`GPUCTL_CLOCK_OFFSET_S`).
fn status(sim: &SimProcess, dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let (_, clock) = sim.admin("GET", "/_sim/clock", "");
    let clock: Value = serde_json::from_str(&clock).unwrap();
    let offset = clock["offset_seconds"].as_f64().unwrap().round() as i64;
    let mut args = vec!["status"];
    args.extend_from_slice(extra);
    e2e::gpuctl_cmd(&sim.url, dir, &args)
        .env("GPUCTL_CLOCK_OFFSET_S", offset.to_string())
        .output()
        .expect("gpuctl runs")
}

fn idle_one_of_three(provider: &str) {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let dep = format!("usage-{provider}");
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, e2e::spec_text(provider, &dep, 3)).unwrap();
    let report =
        e2e::ok_json(&sim.url, dir.path(), &["provision", spec.to_str().unwrap(), "--yes", "--json"]);
    let ids: Vec<String> = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["instance_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 3, "{report}");
    // #0 busy, #1 idle at 2 %, #2 never set: no data (no monitoring agent).
    set(&sim, provider, &ids[0], 85.0);
    set(&sim, provider, &ids[1], 2.0);
    let (code, _) = sim.admin("POST", "/_sim/clock", r#"{"advance_seconds": 7200}"#);
    assert_eq!(code, 200);

    let o = status(&sim, dir.path(), &[&dep, "--json"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}\n{}", out, String::from_utf8_lossy(&o.stderr));
    let rows: Value = serde_json::from_str(&out).unwrap();
    let row = |id: &str| rows.as_array().unwrap().iter().find(|r| r["instance_id"] == id).cloned().unwrap();
    let (busy, idle, silent) = (row(&ids[0]), row(&ids[1]), row(&ids[2]));
    let idle_flags: Vec<bool> =
        rows.as_array().unwrap().iter().map(|r| r["gpu"]["idle"].as_bool().unwrap()).collect();
    assert_eq!(idle_flags.iter().filter(|i| **i).count(), 1, "exactly one idle: {rows}");

    let g = &idle["gpu"];
    assert_eq!((g["idle"].as_bool(), g["latest_percent"].as_f64()), (Some(true), Some(2.0)), "{g}");
    assert!(g["points"].as_u64().unwrap() >= 1 && g["metric"].is_string(), "{g}");
    // Idle since the setting (two hours ago), costed at the recorded ¥/hour.
    let hours = g["idle_hours"].as_f64().unwrap();
    assert!((1.95..=2.05).contains(&hours), "idle ≈ 2 h: {g}");
    let price = idle["price_cny_per_hour"].as_f64().unwrap();
    let cost = g["idle_cost_cny"].as_f64().unwrap();
    assert!((cost - price * hours).abs() < 1e-6 && cost > 0.0, "{cost} = {price} × {hours}");

    let b = &busy["gpu"];
    assert_eq!((b["idle"].as_bool(), b["average_percent"].as_f64()), (Some(false), Some(85.0)), "{b}");
    assert!(b["idle_cost_cny"].is_null());
    let s = &silent["gpu"];
    assert_eq!(
        (s["idle"].as_bool(), s["note"].as_str()),
        (Some(false), Some("no data (monitoring agent?)")),
        "{s}"
    );

    // The table says the same in words; a higher threshold makes the busy one no more idle than before,
    // and one above 85 % makes both with data idle.
    let o = status(&sim, dir.path(), &[&dep]);
    let text = String::from_utf8_lossy(&o.stdout);
    let line = |id: &str| {
        text.lines()
            .find(|l| l.contains(id) && l.contains('%') || l.contains(id) && l.contains("no data"))
            .map(str::to_string)
    };
    assert!(line(&ids[1]).is_some_and(|l| l.contains("IDLE since")), "{text}");
    assert!(line(&ids[0]).is_some_and(|l| !l.contains("IDLE")), "{text}");
    assert!(text.contains("no data (monitoring agent?)"), "{text}");
    let o = status(&sim, dir.path(), &[&dep, "--json", "--idle-below", "90%", "--window", "1h"]);
    let rows: Value = serde_json::from_slice(&o.stdout).unwrap();
    let idle_now = rows.as_array().unwrap().iter().filter(|r| r["gpu"]["idle"] == true).count();
    assert_eq!(idle_now, 2, "{rows}");
    let o = status(&sim, dir.path(), &[&dep, "--idle-below", "0"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("GPU utilization"));
}

#[test]
fn status_flags_the_idle_instance_on_tencent() {
    idle_one_of_three("tencent");
}

#[test]
fn status_flags_the_idle_instance_on_alibaba() {
    idle_one_of_three("alibaba");
}

#[test]
fn status_flags_the_idle_instance_on_jdcloud() {
    idle_one_of_three("jdcloud");
}
