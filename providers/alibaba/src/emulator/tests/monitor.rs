//! CloudMonitor's DescribeMetricList against the GPU utilization the admin API sets: the per-period
//! averages, the left-open window, no data before a setting or after a stop, paging, and the request
//! model's and the documented limits' refusals (signed requests through `handle`).

use gpuctl_simkit::{Emulator, Knobs};
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use super::*;
use crate::api::cms::CMS_API_VERSION;

/// DescribeMetricList, signed with ACS3 for CloudMonitor's version and answered through `handle`.
fn cms(ecs: &Ecs, ctx: &SimCtx, query: &[(&str, &str)]) -> (u16, Value) {
    let (ak, sk) = test_keys();
    let nonce = ctx.new_id("n-", 16);
    let req = signed_for(
        CMS_API_VERSION,
        gpuctl_sign::Algorithm::Acs3,
        ak,
        sk,
        "DescribeMetricList",
        query,
        &nonce,
        SignedDuration::ZERO,
    );
    ecs.tick(ctx);
    let r = ecs.handle(&req, ctx);
    (r.status, r.json_body())
}

fn points(v: &Value) -> Vec<Value> {
    serde_json::from_str(v["Datapoints"].as_str().expect("Datapoints is a string")).expect("a JSON list")
}

/// A running instance, the clock on a 60 s boundary.
fn running() -> (Ecs, SimCtx, String, Timestamp) {
    let (ecs, ctx) = (Ecs::new(), ctx_with(Knobs { boot_seconds: 10, ..Knobs::default() }));
    let id = run(&ecs, &ctx, &[]).unwrap().remove(0);
    let now = ctx.now().as_second();
    ctx.clock().advance(SignedDuration::from_secs(120 - now.rem_euclid(60)));
    let t0 = Timestamp::from_second(ctx.now().as_second()).unwrap();
    (ecs, ctx, id, t0)
}

fn ask<'a>(dims: &'a str, period: &'a str, start: &'a str, end: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("Namespace", "acs_ecs_dashboard"),
        ("MetricName", "instance_gpu_gpu_usedutilization"),
        ("Dimensions", dims),
        ("Period", period),
        ("StartTime", start),
        ("EndTime", end),
    ]
}

#[test]
fn answers_period_averages_while_running_and_pages() {
    let (ecs, ctx, id, t0) = running();
    let dims = json!([{ "instanceId": id }]).to_string();
    let ms = |t: Timestamp| t.as_millisecond().to_string();
    let (s, v) = cms(&ecs, &ctx, &ask(&dims, "60", &ms(t0 - SignedDuration::from_mins(5)), &ms(t0)));
    assert_eq!((s, points(&v).len()), (200, 0), "no data before any setting: {v}");
    assert!(ecs.set_gpu_usage(&id, t0, 50.0).unwrap());
    assert!(ecs.set_gpu_usage(&id, t0 + SignedDuration::from_secs(90), 10.0).unwrap());
    assert!(!ecs.set_gpu_usage("i-nothere", t0, 1.0).unwrap());
    ctx.clock().advance(SignedDuration::from_mins(5));
    let end = t0 + SignedDuration::from_mins(5);
    let (s, v) = cms(&ecs, &ctx, &ask(&dims, "60", &ms(t0 - SignedDuration::from_secs(1)), &ms(end)));
    assert_eq!((s, v["Code"].as_str(), v["Period"].as_str()), (200, Some("200"), Some("60")), "{v}");
    let avg: Vec<f64> = points(&v).iter().map(|p| p["Average"].as_f64().unwrap()).collect();
    assert_eq!(avg, vec![50.0, 30.0, 10.0, 10.0, 10.0], "{v}");
    assert_eq!(points(&v)[0]["timestamp"].as_i64(), Some(t0.as_millisecond()));
    assert_eq!(points(&v)[0]["instanceId"].as_str(), Some(id.as_str()));
    // Left-open: a StartTime on a point's own time leaves that point out.
    let (_, v) = cms(&ecs, &ctx, &ask(&dims, "60", &ms(t0), &ms(end)));
    assert_eq!(points(&v).len(), 4);
    // Pages of two, linked by NextToken, absent on the last.
    let (from, to) = (ms(t0 - SignedDuration::from_secs(1)), ms(end));
    let mut q = ask(&dims, "60", &from, &to);
    q.push(("Length", "2"));
    let (_, p1) = cms(&ecs, &ctx, &q);
    let token = p1["NextToken"].as_str().expect("a next page").to_string();
    let mut q2 = q.clone();
    q2.push(("NextToken", &token));
    let (_, p2) = cms(&ecs, &ctx, &q2);
    assert_eq!((points(&p1).len(), points(&p2).len()), (2, 2));
    assert_eq!(points(&p2)[0]["Average"].as_f64(), Some(10.0));
    // Stopped: no data from the stop on.
    let stop_at = ctx.now();
    call(&ecs, &ctx, "StopInstance", &[("InstanceId", &id)]).unwrap();
    ctx.clock().advance(SignedDuration::from_mins(5));
    let (_, v) = cms(&ecs, &ctx, &ask(&dims, "60", &ms(stop_at), &ms(ctx.now())));
    assert!(points(&v).len() <= 1, "at most the minute holding the stop: {v}");
}

#[test]
fn refuses_what_the_model_and_limits_forbid() {
    let (ecs, ctx, id, t0) = running();
    let dims = json!({ "instanceId": id }).to_string();
    let ms = |t: Timestamp| t.as_millisecond().to_string();
    let (start, end) = (ms(t0 - SignedDuration::from_hours(1)), ms(t0));
    let code = |q: &[(&str, &str)]| {
        let (s, v) = cms(&ecs, &ctx, q);
        (s, v["Code"].as_str().unwrap_or("").to_string())
    };
    let q: Vec<_> = ask(&dims, "60", &start, &end).into_iter().filter(|(k, _)| *k != "Namespace").collect();
    assert_eq!(code(&q), (400, "MissingParameter".into()));
    assert_eq!(code(&ask(&dims, "300", &start, &end)).0, 400, "300 is not a documented Period");
    let mut q = ask(&dims, "60", &start, &end);
    q.push(("Colour", "red"));
    assert_eq!(code(&q).0, 400, "a parameter the model does not have");
    let many = Value::Array((0..51).map(|i| json!({ "instanceId": format!("i-{i}") })).collect()).to_string();
    assert_eq!(code(&ask(&many, "60", &start, &end)), (400, "InvalidParameter".into()));
    let long = ms(t0 - SignedDuration::from_hours(24 * 32));
    assert_eq!(code(&ask(&dims, "60", &long, &end)), (400, "InvalidParameter".into()));
    assert_eq!(code(&ask(&dims, "60", &end, &start)), (400, "InvalidParameter".into()));
    assert_eq!(code(&ask(&dims, "60", "yesterday", &end)), (400, "InvalidParameter".into()));
    let mut q = ask(&dims, "60", &start, &end);
    q[1] = ("MetricName", "cpu_total");
    assert_eq!(code(&q), (400, "InvalidParameter".into()));
    // The documented text form is read too (Beijing time).
    let (s, _) = cms(&ecs, &ctx, &ask(&dims, "60", "2026-12-01 00:00:00", "2026-12-01 01:00:00"));
    assert_eq!(s, 200);
}
