//! Request authentication through real HTTP: a `gpuctl sim` process, and requests signed with
//! gpuctl-sign exactly as the clients sign them, for every scheme the clouds' SDKs use — Tencent TC3,
//! Alibaba ACS3 and RPC (HMAC-SHA1), JD JDCLOUD3 and JDCLOUD2. Each scheme gets: a correct request
//! (accepted), a tampered one (changed after signing), an unknown key, an expired timestamp, a replayed
//! nonce and a mismatched credential scope, each answered with the cloud's own HTTP status, error code
//! and request id (/work/shared/reference/cloud-apis.md).
//!
//! What does not apply is asserted as such: TC3 has no nonce, so Tencent accepts a replay inside its
//! 5-minute window (as the real cloud does: the timestamp is the only guard); ACS3 and RPC carry no
//! credential scope (`Credential=<AK>` only), so the closest check, a signed action swapped after
//! signing, is a signature mismatch.

use std::io::{Read, Write};
use std::net::TcpStream;

use gpuctl_e2e::e2e::{SimProcess, SIM_KEYS};
use gpuctl_sign::{Algorithm, Credentials, SignableRequest, Signed, SigningParams};
use serde_json::Value;

/// One answer: HTTP status, the cloud's error code (None on success), its request id, its message.
#[derive(Debug)]
struct Answer {
    status: u16,
    code: Option<String>,
    request_id: Option<String>,
    message: String,
}

/// Sends a signed request over a fresh connection, byte for byte as signed.
fn send(sim: &SimProcess, s: &Signed) -> Answer {
    let host = sim.url.trim_start_matches("http://");
    let target = if s.raw_query.is_empty() { s.path.clone() } else { format!("{}?{}", s.path, s.raw_query) };
    let mut raw = format!("{} {target} HTTP/1.1\r\n", s.method).into_bytes();
    for (k, v) in &s.headers {
        raw.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    raw.extend_from_slice(
        format!("Content-Length: {}\r\nConnection: close\r\n\r\n", s.body.len()).as_bytes(),
    );
    raw.extend_from_slice(&s.body);
    let mut conn = TcpStream::connect(host).unwrap();
    conn.write_all(&raw).unwrap();
    let mut resp = Vec::new();
    conn.read_to_end(&mut resp).unwrap();
    let resp = String::from_utf8_lossy(&resp);
    let status = resp.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = resp.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {resp}"));
    let str_at =
        |ptrs: &[&str]| ptrs.iter().find_map(|p| v.pointer(p).and_then(Value::as_str)).map(String::from);
    Answer {
        status,
        code: str_at(&["/Response/Error/Code", "/Code", "/error/status"]),
        request_id: str_at(&["/Response/RequestId", "/RequestId", "/requestId"]),
        message: str_at(&["/Response/Error/Message", "/Message", "/error/message"]).unwrap_or_default(),
    }
}

fn keys(provider: &str) -> Credentials {
    let prefix = match provider {
        "tencent" => "TENCENTCLOUD_SECRET",
        "alibaba" => "ALIBABA_CLOUD_ACCESS",
        _ => "JDCLOUD_",
    };
    let mut it = SIM_KEYS.iter().filter(|(k, _)| k.starts_with(prefix)).map(|(_, v)| *v);
    Credentials::new(it.next().unwrap(), it.next().unwrap())
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// What one variant of a request should get back: HTTP status, the cloud's code (None: accepted), and
/// words its message must hold (so a refusal is for the right reason; "" for none).
type Want = (u16, Option<&'static str>, &'static str);

/// Runs `cases` (name, signed request, expected answer) against `sim`, collecting every mismatch.
fn check_all(
    sim: &SimProcess,
    scheme: &str,
    cases: Vec<(&str, Signed, Want)>,
    failures: &mut Vec<String>,
    seen: &mut Vec<String>,
) {
    for (name, signed, (status, code, words)) in cases {
        let a = send(sim, &signed);
        let got = (a.status, a.code.as_deref());
        if got != (status, code) || !a.message.to_lowercase().contains(words) {
            failures.push(format!(
                "{scheme} {name}: want {status} {code:?} saying {words:?}, got {got:?} ({})",
                a.message
            ));
            continue;
        }
        // Every answer, refused or not, carries the cloud's request id (what a user quotes to support).
        if a.request_id.as_deref().is_none_or(str::is_empty) {
            failures.push(format!("{scheme} {name}: no request id ({a:?})"));
        }
        seen.push(format!("{scheme} {name} → {status} {}", code.unwrap_or("ok")));
    }
}

fn tc3(sim: &SimProcess, creds: &Credentials, time: i64, service: &str, action: &str, body: &str) -> Signed {
    let req = SignableRequest {
        method: "POST".into(),
        scheme: "http".into(),
        host: sim.url.trim_start_matches("http://").into(),
        path: "/".into(),
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
        ..Default::default()
    };
    let p = SigningParams {
        algorithm: Algorithm::Tc3,
        time,
        nonce: String::new(),
        region: "ap-guangzhou".into(),
        service: service.into(),
        action: action.into(),
        version: "2017-03-12".into(),
    };
    gpuctl_sign::sign(&req, creds, &p).unwrap()
}

fn alibaba(
    sim: &SimProcess,
    alg: Algorithm,
    creds: &Credentials,
    time: i64,
    nonce: &str,
    action: &str,
) -> Signed {
    let req = SignableRequest {
        method: "POST".into(),
        scheme: "http".into(),
        host: sim.url.trim_start_matches("http://").into(),
        path: "/".into(),
        query: vec![("RegionId".into(), "cn-hangzhou".into()), ("PageSize".into(), "10".into())],
        ..Default::default()
    };
    let p = SigningParams {
        algorithm: alg,
        time,
        nonce: nonce.into(),
        region: String::new(),
        service: String::new(),
        action: action.into(),
        version: "2014-05-26".into(),
    };
    gpuctl_sign::sign(&req, creds, &p).unwrap()
}

fn jd(
    sim: &SimProcess,
    alg: Algorithm,
    creds: &Credentials,
    time: i64,
    nonce: &str,
    region: &str,
    service: &str,
) -> Signed {
    let req = SignableRequest {
        method: "GET".into(),
        scheme: "http".into(),
        host: sim.url.trim_start_matches("http://").into(),
        path: "/v1/regions/cn-north-1/instances".into(),
        query: vec![("pageNumber".into(), "1".into()), ("pageSize".into(), "10".into())],
        headers: vec![("Content-Type".into(), "application/json".into())],
        ..Default::default()
    };
    let p = SigningParams {
        algorithm: alg,
        time,
        nonce: nonce.into(),
        region: region.into(),
        service: service.into(),
        action: String::new(),
        version: "v1".into(),
    };
    gpuctl_sign::sign(&req, creds, &p).unwrap()
}

/// A copy with `header` (any case) set to `value`.
fn with_header(s: &Signed, header: &str, value: &str) -> Signed {
    let mut s = s.clone();
    for (k, v) in s.headers.iter_mut() {
        if k.eq_ignore_ascii_case(header) {
            *v = value.to_string();
        }
    }
    s
}

#[test]
fn each_cloud_refuses_bad_signatures_with_its_own_error() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), "seed = 1\n", &[]);
    let (mut failures, mut seen) = (Vec::new(), Vec::new());
    let hour_ago = now() - 3600;

    // Tencent TC3: every answer is HTTP 200 with the error in the body.
    let tc = keys("tencent");
    let body = r#"{"Limit":1}"#;
    let ok = tc3(&sim, &tc, now(), "cvm", "DescribeInstances", body);
    let mut tampered = ok.clone();
    tampered.body = br#"{"Limit":2}"#.to_vec();
    let yesterday = jiff::Timestamp::from_second(now() - 86_400).unwrap().strftime("%Y-%m-%d").to_string();
    let today = jiff::Timestamp::from_second(now()).unwrap().strftime("%Y-%m-%d").to_string();
    let auth = ok.authorization.clone().unwrap();
    let scope_date = with_header(
        &ok,
        "Authorization",
        &auth.replace(&format!("/{today}/cvm/"), &format!("/{yesterday}/cvm/")),
    );
    check_all(
        &sim,
        "TC3",
        vec![
            ("correct", ok.clone(), (200, None, "")),
            ("replayed (TC3 has no nonce: accepted inside the 5-minute window)", ok.clone(), (200, None, "")),
            (
                "tampered body",
                tampered,
                (200, Some("AuthFailure.SignatureFailure"), "could not be validated"),
            ),
            (
                "unknown SecretId",
                tc3(
                    &sim,
                    &Credentials::new("AKIDnobody0000000000000000000000000", "x"),
                    now(),
                    "cvm",
                    "DescribeInstances",
                    body,
                ),
                (200, Some("AuthFailure.SecretIdNotFound"), "not found"),
            ),
            (
                "expired timestamp",
                tc3(&sim, &tc, hour_ago, "cvm", "DescribeInstances", body),
                (200, Some("AuthFailure.SignatureExpire"), "expired"),
            ),
            (
                "scope date not the timestamp's",
                scope_date,
                (200, Some("AuthFailure.SignatureFailure"), "scope"),
            ),
            (
                "scope service cbs for a cvm action",
                tc3(&sim, &tc, now(), "cbs", "DescribeInstances", body),
                (200, Some("AuthFailure.SignatureFailure"), "scope"),
            ),
        ],
        &mut failures,
        &mut seen,
    );

    // Alibaba, V3 (ACS3, signed headers) and RPC (HMAC-SHA1 in the query): 4xx with the code in the body.
    let ali = keys("alibaba");
    for (alg, name) in [(Algorithm::Acs3, "ACS3"), (Algorithm::AlibabaRpcV2, "RPC")] {
        let n = |tag: &str| format!("{name}-{tag}-{}", now());
        let ok = alibaba(&sim, alg, &ali, now(), &n("ok"), "DescribeInstances");
        let fresh = alibaba(&sim, alg, &ali, now(), &n("t"), "DescribeInstances");
        let mut tampered = fresh.clone();
        tampered.raw_query = tampered.raw_query.replace("PageSize=10", "PageSize=50");
        assert_ne!(tampered.raw_query, fresh.raw_query);
        // No credential scope in either scheme: the signed action swapped afterwards is the nearest thing.
        let other = alibaba(&sim, alg, &ali, now(), &n("a"), "DescribeInstances");
        let swapped = match alg {
            Algorithm::Acs3 => with_header(&other, "x-acs-action", "DeleteInstances"),
            _ => {
                let mut s = other.clone();
                s.raw_query = s.raw_query.replace("Action=DescribeInstances", "Action=DeleteInstances");
                s
            }
        };
        check_all(
            &sim,
            name,
            vec![
                ("correct", ok.clone(), (200, None, "")),
                ("replayed nonce", ok, (400, Some("SignatureNonceUsed"), "nonce")),
                ("tampered query", tampered, (400, Some("SignatureDoesNotMatch"), "signature")),
                (
                    "unknown AccessKeyId",
                    alibaba(
                        &sim,
                        alg,
                        &Credentials::new("LTAInobody", "x"),
                        now(),
                        &n("k"),
                        "DescribeInstances",
                    ),
                    (404, Some("InvalidAccessKeyId.NotFound"), "not found"),
                ),
                (
                    "expired timestamp",
                    alibaba(&sim, alg, &ali, hour_ago, &n("e"), "DescribeInstances"),
                    (400, Some("InvalidTimeStamp.Expired"), "expired"),
                ),
                (
                    "signed action swapped (no scope in this scheme)",
                    swapped,
                    (400, Some("SignatureDoesNotMatch"), "signature"),
                ),
            ],
            &mut failures,
            &mut seen,
        );
    }

    // JD, JDCLOUD3 (current SDK) and JDCLOUD2 (SDK ≤ 1.6.93): 401 UNAUTHENTICATED for every auth failure.
    let jdk = keys("jdcloud");
    for (alg, name) in [(Algorithm::JdCloud3, "JDCLOUD3"), (Algorithm::JdCloud2, "JDCLOUD2")] {
        let n = |tag: &str| format!("{name}-{tag}-{}", now());
        let ok = jd(&sim, alg, &jdk, now(), &n("ok"), "cn-north-1", "vm");
        let mut tampered = jd(&sim, alg, &jdk, now(), &n("t"), "cn-north-1", "vm");
        tampered.raw_query = tampered.raw_query.replace("pageSize=10", "pageSize=100");
        check_all(
            &sim,
            name,
            vec![
                ("correct", ok.clone(), (200, None, "")),
                ("replayed nonce", ok, (401, Some("UNAUTHENTICATED"), "nonce")),
                ("tampered query", tampered, (401, Some("UNAUTHENTICATED"), "signature")),
                (
                    "unknown access key",
                    jd(&sim, alg, &Credentials::new("JDCnobody", "x"), now(), &n("k"), "cn-north-1", "vm"),
                    (401, Some("UNAUTHENTICATED"), "not found"),
                ),
                (
                    "expired timestamp",
                    jd(&sim, alg, &jdk, hour_ago, &n("e"), "cn-north-1", "vm"),
                    (401, Some("UNAUTHENTICATED"), "away from the server time"),
                ),
                (
                    "scope region not the path's",
                    jd(&sim, alg, &jdk, now(), &n("r"), "cn-east-2", "vm"),
                    (401, Some("UNAUTHENTICATED"), "region"),
                ),
                (
                    "scope service disk for a vm path",
                    jd(&sim, alg, &jdk, now(), &n("s"), "cn-north-1", "disk"),
                    (401, Some("UNAUTHENTICATED"), "service"),
                ),
            ],
            &mut failures,
            &mut seen,
        );
    }

    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        failures.len() + seen.len(),
        failures.join("\n")
    );
    eprintln!("auth: {} cases over real HTTP:\n  {}", seen.len(), seen.join("\n  "));
}
