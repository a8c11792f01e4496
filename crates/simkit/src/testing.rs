//! Signed requests for tests and benches of the emulators: what an SDK would send, built with
//! gpuctl-sign (the same signer the client side uses), as a [`SimRequest`] or as raw HTTP/1.1.

use crate::request::SimRequest;

/// A Tencent TC3-signed JSON POST to `/` for `service`/`action` in `region`, signed now with the
/// documented test pair. `host` is what the Host header says (the signature covers it).
pub fn tc3(host: &str, service: &str, region: &str, action: &str, body: &str) -> SimRequest {
    let (_, ak, sk) = crate::creds::TEST_KEY_PAIRS[0];
    tc3_with(host, service, region, action, body, ak, sk, jiff::Timestamp::now().as_second())
}

/// [`tc3`] with any key pair and signing time (for auth-error tests).
#[allow(clippy::too_many_arguments)]
pub fn tc3_with(
    host: &str,
    service: &str,
    region: &str,
    action: &str,
    body: &str,
    ak: &str,
    sk: &str,
    time: i64,
) -> SimRequest {
    let req = gpuctl_sign::SignableRequest {
        method: "POST".into(),
        scheme: "http".into(),
        host: host.into(),
        path: "/".into(),
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
        ..Default::default()
    };
    let params = gpuctl_sign::SigningParams {
        algorithm: gpuctl_sign::Algorithm::Tc3,
        time,
        nonce: String::new(),
        region: region.into(),
        service: service.into(),
        action: action.into(),
        version: "2017-03-12".into(),
    };
    // Signing only fails on missing parameters, which this function always gives.
    let s = gpuctl_sign::sign(&req, &gpuctl_sign::Credentials::new(ak, sk), &params)
        .expect("TC3 parameters are complete");
    let mut out = SimRequest::new("POST", "/").with_body(s.body.clone());
    out.raw_query = s.raw_query.clone();
    out.headers = s.headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect();
    out
}

/// The request as HTTP/1.1 bytes with `Connection: close` (for socket-level tests).
pub fn to_http1(req: &SimRequest) -> String {
    let target =
        if req.raw_query.is_empty() { req.path.clone() } else { format!("{}?{}", req.path, req.raw_query) };
    let mut raw = format!("{} {target} HTTP/1.1\r\n", req.method);
    for (k, v) in req.headers.iter().filter(|(k, _)| k != "content-length" && k != "connection") {
        raw.push_str(&format!("{k}: {v}\r\n"));
    }
    raw.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n", req.body.len()));
    raw.push_str(&String::from_utf8_lossy(&req.body));
    raw
}
