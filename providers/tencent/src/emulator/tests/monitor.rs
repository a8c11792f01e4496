//! Cloud Monitor's GetMonitorData against the GPU utilization the admin API sets: the per-period
//! averages, no data before a setting or while not running, the definition's refusals, and the
//! client's round trip over HTTP.

use gpuctl_simkit::{Emulator, Knobs, SimCtx};
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use super::{call, code, run, setup, Tencent};

/// GetMonitorData through the tests' `call` (signed for Cloud Monitor's scope and version).
fn monitor(emu: &Tencent, ctx: &SimCtx, body: Value) -> Value {
    call(emu, ctx, "GetMonitorData", body)
}

fn ask(ids: &[&str], period: u32, start: Timestamp, end: Timestamp) -> Value {
    json!({
        "Namespace": "QCE/CVM", "MetricName": "GpuUtil", "Period": period,
        "Instances": ids.iter().map(|id| json!({"Dimensions": [{"Name": "InstanceId", "Value": id}]})).collect::<Vec<_>>(),
        "StartTime": start.to_string(), "EndTime": end.to_string(),
    })
}

/// An instance that has run for a while, the clock then on a 300 s boundary.
fn running() -> (Tencent, SimCtx, String, Timestamp) {
    let (emu, ctx) = setup(Knobs { boot_seconds: 10, ..Knobs::default() });
    let r = call(&emu, &ctx, "RunInstances", run(json!({})));
    let id = r["InstanceIdSet"][0].as_str().expect("an instance").to_string();
    let now = ctx.now().as_second();
    ctx.clock().advance(SignedDuration::from_secs(600 - now.rem_euclid(300)));
    let t0 = Timestamp::from_second(ctx.now().as_second()).unwrap();
    (emu, ctx, id, t0)
}

fn values(r: &Value, i: usize) -> Vec<f64> {
    r["DataPoints"][i]["Values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
}

#[test]
fn answers_period_averages_of_what_was_set_and_nothing_before() {
    let (emu, ctx, id, t0) = running();
    let r = monitor(&emu, &ctx, ask(&[&id], 300, t0 - SignedDuration::from_mins(10), t0));
    assert!(values(&r, 0).is_empty(), "no data before any setting: {r}");
    assert!(emu.set_gpu_usage(&id, t0, 80.0).unwrap());
    assert!(emu.set_gpu_usage(&id, t0 + SignedDuration::from_secs(450), 2.0).unwrap());
    assert!(!emu.set_gpu_usage("ins-nothere", t0, 1.0).unwrap());
    ctx.clock().advance(SignedDuration::from_mins(20));
    let r = monitor(&emu, &ctx, ask(&[&id, "ins-nothere"], 300, t0, t0 + SignedDuration::from_mins(20)));
    assert_eq!(r["Period"], 300);
    assert_eq!(values(&r, 0), vec![80.0, 41.0, 2.0, 2.0], "{r}");
    let ts: Vec<i64> = r["DataPoints"][0]["Timestamps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as i64)
        .collect();
    assert_eq!(ts[0], t0.as_second());
    assert_eq!(r["DataPoints"][1]["Dimensions"][0]["Value"], "ins-nothere");
    assert!(values(&r, 1).is_empty());
    // Terminated: no data from the termination on.
    let cut = ctx.now();
    call(&emu, &ctx, "TerminateInstances", json!({"InstanceIds": [id]}));
    ctx.clock().advance(SignedDuration::from_secs(1));
    let r = monitor(
        &emu,
        &ctx,
        ask(&[&id], 60, cut - SignedDuration::from_mins(2), cut + SignedDuration::from_mins(5)),
    );
    // The periods up to the termination: the one holding it has data until then, none after.
    let last = r["DataPoints"][0]["Timestamps"].as_array().unwrap().last().unwrap().as_f64().unwrap() as i64;
    assert_eq!((values(&r, 0).len(), last), (3, cut.as_second().div_euclid(60) * 60), "{r}");
}

#[test]
fn refuses_what_the_definition_and_limits_forbid_with_tencents_codes() {
    let (emu, ctx, id, t0) = running();
    let start = t0 - SignedDuration::from_mins(30);
    let mut b = ask(&[&id], 300, start, t0);
    b.as_object_mut().unwrap().remove("Namespace");
    assert_eq!(code(&monitor(&emu, &ctx, b)), "MissingParameter");
    let many: Vec<String> = (0..51).map(|i| format!("ins-{i:08}")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    assert_eq!(code(&monitor(&emu, &ctx, ask(&refs, 300, start, t0))), "LimitExceeded.LimitedAccess");
    assert_eq!(code(&monitor(&emu, &ctx, ask(&[&id], 120, start, t0))), "InvalidParameterValue");
    assert_eq!(code(&monitor(&emu, &ctx, ask(&[&id], 300, t0, start))), "InvalidParameterValue");
    // 50 instances × 145 ten-second periods > 7200 points.
    let fifty = &refs[..50];
    assert_eq!(
        code(&monitor(&emu, &ctx, ask(fifty, 10, t0 - SignedDuration::from_secs(1440), t0))),
        "InvalidParameterValue"
    );
    let mut b = ask(&[&id], 300, start, t0);
    b["MetricName"] = json!("CPUUsage");
    assert_eq!(code(&monitor(&emu, &ctx, b)), "InvalidParameterValue");
    let mut b = ask(&[&id], 300, start, t0);
    b["StartTime"] = json!("yesterday");
    assert_eq!(code(&monitor(&emu, &ctx, b)), "InvalidParameterValue.InvalidTimeFormat");
}

#[test]
fn the_client_reads_gpu_usage_over_http() {
    use gpuctl_cloud::cost::UsageQuery;
    let (emu, ctx, id, t0) = running();
    emu.set_gpu_usage(&id, t0, 3.5).unwrap();
    ctx.clock().advance(SignedDuration::from_mins(30));
    let (emu, ctx) = (std::sync::Arc::new(emu), std::sync::Arc::new(ctx));
    let cloud = super::tencent_client(&super::serve(emu.clone(), ctx.clone()));
    let q = UsageQuery {
        region: "ap-guangzhou".into(),
        instance_ids: vec![id.clone(), "ins-gone0000".into()],
        start: t0,
        end: t0 + SignedDuration::from_mins(30),
        period_s: 240,
    };
    let got = super::block_on(cloud.gpu_usage(&q)).expect("GetMonitorData answers");
    assert_eq!(got.len(), 2);
    assert_eq!((got[0].instance_id.as_str(), got[0].period_s), (id.as_str(), 300), "240 s rounds up to 300");
    assert_eq!(got[0].points.len(), 6, "{got:?}");
    assert!(got[0].points.iter().all(|p| p.percent == 3.5));
    assert!(got[1].points.is_empty());
    // A refusal carries Tencent's code and the request id.
    let bad = UsageQuery { region: "ap-nowhere".into(), ..q };
    let e = super::block_on(cloud.gpu_usage(&bad)).unwrap_err();
    assert_eq!(e.code, "UnsupportedRegion", "{e:?}");
    assert!(e.request_id.is_some());
}
