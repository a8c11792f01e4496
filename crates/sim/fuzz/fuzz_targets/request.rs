//! Fuzz the local cloud's request handling: routing, each emulator's action/parameter parsing, and the
//! signature checks, on arbitrary requests shaped like each cloud's (Tencent JSON POST with X-TC-Action,
//! Alibaba ACS3 headers or RPC query, JD `/v1/regions/...` paths). Property: `Sim::call` never panics
//! and always answers (a response or a deliberate drop), whatever the bytes.
#![no_main]

use gpuctl_sim::Sim;
use gpuctl_simkit::request::SimRequest;
use gpuctl_simkit::SimConfig;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    shape: u8,
    method: String,
    path: String,
    raw_query: String,
    action: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

thread_local! {
    static SIM: Sim = Sim::new(SimConfig::default());
}

fuzz_target!(|i: Input| {
    let mut headers = i.headers;
    let (method, path) = match i.shape % 4 {
        0 => {
            headers.push(("x-tc-action".into(), i.action.clone()));
            headers.push(("authorization".into(), format!("TC3-HMAC-SHA256 Credential=AKIDgpuctlSimTencentTestKey000000000/2026-11-30/cvm/tc3_request, SignedHeaders=content-type;host, Signature={}", i.path)));
            ("POST".to_string(), "/".to_string())
        }
        1 => {
            headers.push(("x-acs-action".into(), i.action.clone()));
            ("POST".to_string(), "/".to_string())
        }
        2 => ("GET".to_string(), format!("/v1/regions/{}", i.path)),
        _ => (i.method, i.path),
    };
    let req = SimRequest { method, path, raw_query: i.raw_query, headers, body: bytes::Bytes::from(i.body), peer: None };
    SIM.with(|sim| {
        let _ = sim.call(&req);
    });
});
