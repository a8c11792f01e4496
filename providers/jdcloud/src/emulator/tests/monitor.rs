//! 云监控's describeMetricData against the GPU utilization the admin API sets: the averages per
//! interval, the request class's time rules and refusals (signed GETs through `handle`, so the route,
//! the `monitor` scope and the schema are exercised), and the client's round trip over HTTP.

use gpuctl_simkit::Emulator;
use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

use super::*;
use crate::api::monitor::format_time;

const PATH: &str = "/v2/regions/cn-north-1/metrics/vm.gpu.util.gpu/metricData";

/// A signed GET of `path` with `query`, answered through `handle`: (HTTP status, body).
fn get(jd: &JdCloud, ctx: &SimCtx, path: &str, query: &[(&str, &str)]) -> (u16, Value) {
    let (_, ak, sk) =
        TEST_KEY_PAIRS.iter().find(|(p, _, _)| *p == gpuctl_simkit::Provider::JdCloud).copied().unwrap();
    let req = gpuctl_sign::SignableRequest {
        method: "GET".into(),
        scheme: "http".into(),
        host: "127.0.0.1:9".into(),
        path: path.into(),
        query: query.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        headers: vec![("Content-Type".into(), "application/json".into())],
        ..Default::default()
    };
    let params = gpuctl_sign::SigningParams {
        algorithm: gpuctl_sign::Algorithm::JdCloud3,
        time: Timestamp::now().as_second(),
        nonce: ctx.new_id("n", 16),
        region: "cn-north-1".into(),
        service: "monitor".into(),
        action: String::new(),
        version: "v2".into(),
    };
    let s = gpuctl_sign::sign(&req, &gpuctl_sign::Credentials::new(ak, sk), &params).unwrap();
    let mut out = SimRequest::new("GET", path).with_body(s.body.clone());
    out.raw_query = s.raw_query.clone();
    out.headers = s.headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect();
    jd.tick(ctx);
    let r = jd.handle(&out, ctx);
    (r.status, r.json_body())
}

/// A running VM, the clock on a minute boundary.
fn running() -> (JdCloud, SimCtx, String, Timestamp) {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let id = create(&jd, &ctx, serde_json::json!({})).unwrap().remove(0);
    let now = ctx.now().as_second();
    ctx.clock().advance(SignedDuration::from_secs(120 - now.rem_euclid(60)));
    let t0 = Timestamp::from_second(ctx.now().as_second()).unwrap();
    (jd, ctx, id, t0)
}

fn values(v: &Value) -> Vec<f64> {
    v["result"]["metricDatas"][0]["data"]
        .as_array()
        .map(|d| d.iter().map(|p| p["value"].as_f64().unwrap()).collect())
        .unwrap_or_default()
}

#[test]
fn answers_interval_averages_of_what_was_set() {
    let (jd, ctx, id, t0) = running();
    let (s0, e0) = (format_time(t0 - SignedDuration::from_mins(5)), format_time(t0));
    let (s, v) = get(
        &jd,
        &ctx,
        PATH,
        &[("resourceId", &id), ("serviceCode", "vm"), ("startTime", &s0), ("endTime", &e0)],
    );
    assert_eq!((s, values(&v).len()), (200, 0), "no data before any setting: {v}");
    assert!(jd.set_gpu_usage(&id, t0, 20.0).unwrap());
    assert!(jd.set_gpu_usage(&id, t0 + SignedDuration::from_secs(150), 0.0).unwrap());
    assert!(!jd.set_gpu_usage("i-nothere", t0, 1.0).unwrap());
    ctx.clock().advance(SignedDuration::from_mins(5));
    let (s1, e1) = (format_time(t0), format_time(t0 + SignedDuration::from_mins(5)));
    let q = [("resourceId", id.as_str()), ("serviceCode", "vm"), ("startTime", &s1), ("endTime", &e1)];
    let (s, v) = get(&jd, &ctx, PATH, &q);
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        values(&v),
        vec![20.0, 20.0, 10.0, 0.0, 0.0],
        "one minute apart for a five-minute window: {v}"
    );
    assert_eq!(v["result"]["metricDatas"][0]["data"][0]["timestamp"].as_i64(), Some(t0.as_millisecond()));
    // groupBy: one series per GPU, tagged with its gpu_index.
    let mut g = q.to_vec();
    g.push(("groupBy", "true"));
    let (_, v) = get(&jd, &ctx, PATH, &g);
    assert_eq!(v["result"]["metricDatas"][0]["tags"]["gpu_index"], "0", "{v}");
    // timeInterval alone: the last hour.
    let (_, v) = get(&jd, &ctx, PATH, &[("resourceId", &id), ("timeInterval", "1h")]);
    assert_eq!(values(&v).len(), 5, "{v}");
    // Another VM: no series at all.
    let (_, v) = get(&jd, &ctx, PATH, &[("resourceId", "i-nothere"), ("timeInterval", "1h")]);
    assert_eq!(v["result"]["metricDatas"], serde_json::json!([]));
}

#[test]
fn refuses_what_the_request_class_forbids_with_invalid_argument() {
    let (jd, ctx, id, t0) = running();
    let bad = |q: &[(&str, &str)], path: &str| {
        let (s, v) = get(&jd, &ctx, path, q);
        (s, v["error"]["status"].as_str().unwrap_or("").to_string())
    };
    let want = (400, "INVALID_ARGUMENT".to_string());
    let start = format_time(t0 - SignedDuration::from_hours(1));
    assert_eq!(bad(&[("serviceCode", "vm")], PATH), want, "resourceId is required");
    assert_eq!(bad(&[("resourceId", &id), ("timeInterval", "2h")], PATH), want);
    assert_eq!(bad(&[("resourceId", &id), ("aggrType", "median")], PATH), want);
    assert_eq!(
        bad(&[("resourceId", &id), ("startTime", "2026-12-01 00:00:00")], PATH),
        want,
        "JD's time format"
    );
    let old = format_time(t0 - SignedDuration::from_hours(24 * 31));
    assert_eq!(bad(&[("resourceId", &id), ("startTime", &old)], PATH), want, "not earlier than 30 days ago");
    let later = format_time(t0 + SignedDuration::from_hours(1));
    assert_eq!(bad(&[("resourceId", &id), ("startTime", &later)], PATH), want, "not later than now");
    assert_eq!(bad(&[("resourceId", &id), ("startTime", &start), ("colour", "red")], PATH), want);
    let other = "/v2/regions/cn-north-1/metrics/vm.cpu.util/metricData";
    assert_eq!(bad(&[("resourceId", &id)], other), want);
    // A later endTime is taken as now, not refused.
    let (s, _) = get(&jd, &ctx, PATH, &[("resourceId", &id), ("startTime", &start), ("endTime", &later)]);
    assert_eq!(s, 200);
}

#[test]
fn the_client_reads_gpu_usage_over_http() {
    use gpuctl_cloud::cost::UsageQuery;
    let (jd, ctx, id, t0) = running();
    jd.set_gpu_usage(&id, t0, 7.5).unwrap();
    ctx.clock().advance(SignedDuration::from_mins(30));
    let (jd, ctx) = (std::sync::Arc::new(jd), std::sync::Arc::new(ctx));
    let c = client(&serve(jd.clone(), ctx.clone()));
    let q = UsageQuery {
        region: "cn-north-1".into(),
        instance_ids: vec![id.clone(), "i-gone".into()],
        start: t0,
        end: t0 + SignedDuration::from_mins(30),
        period_s: 300,
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let got = rt.block_on(gpuctl_cloud::services::Usage::gpu_usage(&c, &q)).unwrap();
    assert_eq!((got[0].period_s, got[0].points.len()), (60, 30), "{got:?}");
    assert!(got[0].points.iter().all(|p| p.percent == 7.5));
    assert!(got[1].points.is_empty());
    let old = UsageQuery { start: t0 - SignedDuration::from_hours(24 * 40), ..q };
    let e = rt.block_on(gpuctl_cloud::services::Usage::gpu_usage(&c, &old)).unwrap_err();
    assert_eq!(e.code, "INVALID_ARGUMENT", "{e:?}");
    assert!(e.request_id.is_some());
}
