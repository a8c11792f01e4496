//! The local cloud over a real socket: each injected fault kind as a client sees it, throttling,
//! latency, routing and the admin endpoints. Raw HTTP/1.1 over std's TcpStream, so what is checked
//! is exactly what reaches the wire (a reset is a reset, a hang is silence).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use gpuctl_sim::BackgroundSim;
use gpuctl_simkit::SimConfig;

/// An unsigned Tencent request: routed to Tencent, answered with its auth error (HTTP 200).
fn tencent_call(action: &str) -> String {
    format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-TC-Action: {action}\r\nX-TC-Version: 2017-03-12\r\nX-TC-Region: ap-guangzhou\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    )
}

fn admin(method: &str, path: &str, body: &str) -> String {
    format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
}

/// Send and read to the end: Ok(response text) or the read error's kind.
fn send(sim: &BackgroundSim, raw: &str, timeout: Duration) -> Result<String, ErrorKind> {
    let mut s = TcpStream::connect(sim.addr()).unwrap();
    s.set_read_timeout(Some(timeout)).unwrap();
    s.write_all(raw.as_bytes()).unwrap();
    let mut out = Vec::new();
    match s.read_to_end(&mut out) {
        Ok(_) => Ok(String::from_utf8_lossy(&out).into_owned()),
        Err(e) => Err(e.kind()),
    }
}

fn fault(sim: &BackgroundSim, json: &str) {
    let r = send(sim, &admin("POST", "/_sim/faults", json), Duration::from_secs(5)).unwrap();
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
}

fn start() -> BackgroundSim {
    BackgroundSim::start(SimConfig::default()).unwrap()
}

#[test]
fn tencent_requests_are_routed_and_answered_in_tencents_shape() {
    let sim = start();
    let r = send(&sim, &tencent_call("DescribeInstances"), Duration::from_secs(5)).unwrap();
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    assert!(r.contains("\"Code\":\"AuthFailure.InvalidAuthorization\""), "{r}");
    assert!(r.contains("\"RequestId\""), "{r}");
    let unknown =
        send(&sim, "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", Duration::from_secs(5))
            .unwrap();
    assert!(unknown.starts_with("HTTP/1.1 404") && unknown.contains("no emulator claims"), "{unknown}");
}

#[test]
fn server_error_fault_answers_5xx_once() {
    let sim = start();
    fault(
        &sim,
        r#"{"provider":"tencent","action":"DescribeInstances","kind":"server_error","status":502,"count":1}"#,
    );
    let r = send(&sim, &tencent_call("DescribeInstances"), Duration::from_secs(5)).unwrap();
    assert!(r.starts_with("HTTP/1.1 502") && r.contains("InternalError"), "{r}");
    let r = send(&sim, &tencent_call("DescribeInstances"), Duration::from_secs(5)).unwrap();
    assert!(r.starts_with("HTTP/1.1 200"), "the fault was spent: {r}");
}

#[test]
fn reset_fault_resets_the_connection() {
    let sim = start();
    fault(&sim, r#"{"action":"DescribeInstances","kind":"reset","count":1}"#);
    let got = send(&sim, &tencent_call("DescribeInstances"), Duration::from_secs(5));
    assert_eq!(got, Err(ErrorKind::ConnectionReset));
}

#[test]
fn timeout_fault_holds_the_connection_silent() {
    let sim = start();
    fault(&sim, r#"{"action":"DescribeInstances","kind":"timeout","seconds":3,"count":1}"#);
    let t0 = Instant::now();
    let got = send(&sim, &tencent_call("DescribeInstances"), Duration::from_millis(700));
    assert!(matches!(got, Err(ErrorKind::WouldBlock | ErrorKind::TimedOut)), "{got:?}");
    assert!(t0.elapsed() >= Duration::from_millis(650));
}

#[test]
fn success_then_drop_creates_the_instance_and_loses_the_answer() {
    let sim = start();
    fault(&sim, r#"{"provider":"tencent","action":"RunInstances","kind":"success_then_drop","count":1}"#);
    let offer = sim
        .sim()
        .ctx()
        .offers(gpuctl_simkit::Provider::Tencent)
        .find(|o| o.prices.hourly.is_some())
        .expect("the catalog sells something pay-as-you-go at Tencent")
        .clone();
    let body = serde_json::json!({
        "Placement": {"Zone": offer.zones[0]}, "InstanceType": offer.instance_type, "ImageId": "img-487zeit5",
        "ClientToken": "drop-1",
    });
    let raw = signed_tencent(&sim, &offer.region, "RunInstances", &body.to_string());
    let got = send(&sim, &raw, Duration::from_secs(5));
    assert_eq!(got, Ok(String::new()), "closed without a byte of answer");
    let state = sim.sim().state();
    let instances = state["providers"]["tencent"]["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 1, "the create happened: {state}");
    // The retry with the same token adopts it instead of creating a second one.
    let again = send(
        &sim,
        &signed_tencent(&sim, &offer.region, "RunInstances", &body.to_string()),
        Duration::from_secs(5),
    )
    .unwrap();
    assert!(again.contains(instances[0]["InstanceId"].as_str().unwrap()), "{again}");
    assert_eq!(sim.sim().state()["providers"]["tencent"]["instances"].as_array().unwrap().len(), 1);
}

/// A TC3-signed Tencent CVM call as raw HTTP/1.1, signed with the documented test pair.
fn signed_tencent(sim: &BackgroundSim, region: &str, action: &str, body: &str) -> String {
    gpuctl_simkit::testing::to_http1(&gpuctl_simkit::testing::tc3(
        &sim.addr().to_string(),
        "cvm",
        region,
        action,
        body,
    ))
}

#[test]
fn rate_limits_answer_tencents_throttling_error() {
    let sim = start();
    let r = send(
        &sim,
        &admin("POST", "/_sim/rate_limits", r#"{"provider":"tencent","per_second":0.001,"burst":1}"#),
        Duration::from_secs(5),
    )
    .unwrap();
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    let first = send(&sim, &tencent_call("DescribeInstances"), Duration::from_secs(5)).unwrap();
    assert!(!first.contains("RequestLimitExceeded"), "{first}");
    let second = send(&sim, &tencent_call("DescribeInstances"), Duration::from_secs(5)).unwrap();
    assert!(second.contains("\"Code\":\"RequestLimitExceeded\""), "{second}");
    let other_api = send(&sim, &tencent_call("DescribeInstancesStatus"), Duration::from_secs(5)).unwrap();
    assert!(!other_api.contains("RequestLimitExceeded"), "buckets are per API: {other_api}");
}

#[test]
fn latency_knob_delays_calls() {
    let mut config = SimConfig::default();
    config.knobs.latency_ms = 300;
    let sim = BackgroundSim::start(config).unwrap();
    let t0 = Instant::now();
    send(&sim, &tencent_call("DescribeInstances"), Duration::from_secs(5)).unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(300));
}

#[test]
fn admin_endpoints_report_and_refuse_clearly() {
    let sim = start();
    let state = send(&sim, &admin("GET", "/_sim/state", ""), Duration::from_secs(5)).unwrap();
    for provider in ["\"tencent\"", "\"alibaba\"", "\"jdcloud\""] {
        assert!(state.contains(provider), "{state}");
    }
    let back = send(&sim, &admin("POST", "/_sim/clock", r#"{"advance_seconds":-5}"#), Duration::from_secs(5))
        .unwrap();
    assert!(back.starts_with("HTTP/1.1 400") && back.contains("never runs backwards"), "{back}");
    let typo =
        send(&sim, &admin("POST", "/_sim/faults", r#"{"kind":"rest"}"#), Duration::from_secs(5)).unwrap();
    assert!(typo.starts_with("HTTP/1.1 400") && typo.contains("unknown variant"), "{typo}");
    let huge =
        send(&sim, &admin("POST", "/_sim/clock", r#"{"advance_seconds":1e300}"#), Duration::from_secs(5))
            .unwrap();
    assert!(huge.starts_with("HTTP/1.1 400"), "{huge}");
    let fwd =
        send(&sim, &admin("POST", "/_sim/clock", r#"{"advance_seconds":7200}"#), Duration::from_secs(5))
            .unwrap();
    assert!(fwd.contains("\"offset_seconds\":7200"), "{fwd}");
}
