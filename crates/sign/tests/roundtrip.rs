//! Sign → verify round trips for every scheme, and the failure kinds `verify` reports.

use gpuctl_sign::{
    sign, verify, Algorithm, Credentials, IncomingRequest, Secret, SignableRequest, SigningParams,
    VerifyErrorKind,
};

const NOW: i64 = 1_717_243_200; // 2024-06-01T12:00:00Z

fn request(alg: Algorithm) -> SignableRequest {
    let (method, path, body) = match alg {
        Algorithm::Tc3 => ("POST", "/", br#"{"Limit":1}"#.to_vec()),
        Algorithm::Acs3 | Algorithm::AlibabaRpcV2 => ("POST", "/", Vec::new()),
        Algorithm::JdCloud3 | Algorithm::JdCloud2 => ("GET", "/v1/regions/cn-north-1/instances", Vec::new()),
    };
    SignableRequest {
        method: method.into(),
        scheme: "http".into(),
        host: "127.0.0.1:8443".into(),
        path: path.into(),
        query: vec![("filters.1.name".into(), "instanceId".into()), ("a b".into(), "x*~+/= 中".into())],
        headers: vec![],
        body,
    }
}

fn params(alg: Algorithm) -> SigningParams {
    SigningParams {
        algorithm: alg,
        time: NOW,
        nonce: "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf".into(),
        region: "cn-north-1".into(),
        service: "vm".into(),
        action: "DescribeInstances".into(),
        version: "2017-03-12".into(),
    }
}

fn creds() -> Credentials {
    Credentials::new("AKID", "the-secret")
}

fn lookup(ak: &str) -> Option<Secret> {
    (ak == "AKID").then(|| Secret::new("the-secret"))
}

fn signed_incoming(alg: Algorithm) -> IncomingRequest {
    let req = request(alg);
    let signed = sign(&req, &creds(), &params(alg)).unwrap();
    signed.to_incoming()
}

#[test]
fn every_scheme_round_trips() {
    for alg in Algorithm::ALL {
        let incoming = signed_incoming(alg);
        let v = verify(&incoming, lookup, NOW + 10, 300).unwrap_or_else(|e| panic!("{alg}: {e}"));
        assert_eq!(v.algorithm, alg);
        assert_eq!(v.access_key_id, "AKID");
        assert_eq!(v.timestamp, NOW);
    }
}

#[test]
fn failures_have_the_right_kind() {
    for alg in Algorithm::ALL {
        let good = signed_incoming(alg);
        let kind = |r: &IncomingRequest, now: i64| verify(r, lookup, now, 300).unwrap_err().kind;

        assert_eq!(kind(&good, NOW + 301), VerifyErrorKind::Expired, "{alg}");
        assert_eq!(kind(&good, NOW - 301), VerifyErrorKind::Expired, "{alg}");
        let unknown = verify(&good, |_| None, NOW, 300).unwrap_err();
        assert_eq!(unknown.kind, VerifyErrorKind::UnknownAccessKey, "{alg}");

        let mut tampered = good.clone();
        tampered.body.push(b' ');
        if alg == Algorithm::AlibabaRpcV2 {
            // RPC signs parameters, not the body: tamper a parameter instead.
            tampered.raw_query = tampered.raw_query.replacen("instanceId", "instanceIe", 1);
        }
        let e = verify(&tampered, lookup, NOW, 300).unwrap_err();
        assert_eq!(e.kind, VerifyErrorKind::SignatureMismatch, "{alg}: {e}");
        assert!(!e.detail.contains("the-secret"));

        let mut stripped = good.clone();
        stripped.headers.retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
        stripped.raw_query = stripped.raw_query.split("&Signature=").next().unwrap().to_owned();
        assert_eq!(kind(&stripped, NOW), VerifyErrorKind::MissingAuthorization, "{alg}");
    }
}

#[test]
fn unsupported_algorithm_and_malformed_headers() {
    let mut r = signed_incoming(Algorithm::Acs3);
    for (k, v) in r.headers.iter_mut() {
        if k == "Authorization" {
            *v = v.replace("ACS3-HMAC-SHA256", "ACS3-HMAC-SM3");
        }
    }
    assert_eq!(verify(&r, lookup, NOW, 300).unwrap_err().kind, VerifyErrorKind::UnsupportedAlgorithm);

    let mut r = signed_incoming(Algorithm::JdCloud3);
    r.headers.retain(|(k, _)| k != "x-jdcloud-date");
    assert_eq!(verify(&r, lookup, NOW, 300).unwrap_err().kind, VerifyErrorKind::Malformed);
}

#[test]
fn scope_checks() {
    let v = verify(&signed_incoming(Algorithm::JdCloud3), lookup, NOW, 300).unwrap();
    assert_eq!(v.region.as_deref(), Some("cn-north-1"));
    assert_eq!(v.service.as_deref(), Some("vm"));
    assert_eq!(v.nonce.as_deref(), Some("3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf"));
    assert!(v.expect_scope(Some("vm"), Some("cn-north-1")).is_ok());
    assert_eq!(v.expect_scope(Some("disk"), None).unwrap_err().kind, VerifyErrorKind::ScopeMismatch);
    assert_eq!(v.expect_scope(None, Some("cn-east-2")).unwrap_err().kind, VerifyErrorKind::ScopeMismatch);

    // A TC3 scope date that is not the timestamp's date.
    let mut r = signed_incoming(Algorithm::Tc3);
    for (k, v) in r.headers.iter_mut() {
        if k == "Authorization" {
            *v = v.replace("2024-06-01", "2024-06-02");
        }
    }
    assert_eq!(verify(&r, lookup, NOW, 300).unwrap_err().kind, VerifyErrorKind::ScopeMismatch);
}

#[test]
fn redacted_hides_a_session_token_everywhere() {
    // A token with characters that percent-encoding changes, so the encoded form must go too.
    let token = "tok+en/with=chars ok";
    for alg in Algorithm::ALL {
        let mut creds = creds();
        creds.security_token = Some(Secret::new(token));
        let signed = sign(&request(alg), &creds, &params(alg)).unwrap();
        let shown = format!("{:?}", signed.redacted(creds.security_token.as_ref().unwrap()));
        // "chars" occurs only inside the token, in each of its raw, %20 and + encodings.
        assert!(!shown.contains("chars"), "{alg}: {shown}");
        assert!(shown.contains("******"), "{alg}: the token was not in the request at all");
        // The unredacted request still verifies: redaction is for display only.
        verify(&signed.to_incoming(), lookup, NOW, 300).unwrap();
    }
}

#[test]
fn tc3_signs_the_content_type_as_sent() {
    // The trap in shared/reference/cloud-apis.md: `application/json` and
    // `application/json; charset=utf-8` sign differently, so a proxy or client that rewrites it breaks the signature.
    let mut req = request(Algorithm::Tc3);
    req.headers.push(("Content-Type".into(), "application/json; charset=utf-8".into()));
    let signed = sign(&req, &creds(), &params(Algorithm::Tc3)).unwrap();
    assert!(signed.canonical_request.contains("\ncontent-type:application/json; charset=utf-8\n"));
    let mut incoming = signed.to_incoming();
    verify(&incoming, lookup, NOW, 300).unwrap();
    for (k, v) in incoming.headers.iter_mut() {
        if k == "Content-Type" {
            *v = "application/json".into();
        }
    }
    assert_eq!(verify(&incoming, lookup, NOW, 300).unwrap_err().kind, VerifyErrorKind::SignatureMismatch);
}
