//! Properties over generated requests (proptest): whatever a caller asks to sign, `verify` accepts
//! exactly that request and rejects it once anything signed changes; `verify` never panics on
//! arbitrary input and never puts the secret in an error.

use gpuctl_sign::{
    sign, verify, Algorithm, Credentials, IncomingRequest, Secret, SignableRequest, SigningParams,
};
use proptest::prelude::*;

const SECRET: &str = "prop-secret-0123456789";

fn text() -> impl Strategy<Value = String> {
    // Printable ASCII plus a few characters the encoders treat specially, and some CJK.
    proptest::string::string_regex("[ -~中文é]{0,12}").unwrap()
}

fn algorithm() -> impl Strategy<Value = Algorithm> {
    prop::sample::select(Algorithm::ALL.to_vec())
}

prop_compose! {
    fn signable()(
        method in prop::sample::select(vec!["GET", "POST", "PUT", "DELETE"]),
        path in proptest::string::string_regex("(/[a-zA-Z0-9:._~-]{1,8}){0,4}").unwrap(),
        query in prop::collection::vec((text(), text()), 0..6),
        header_values in prop::collection::vec(proptest::string::string_regex("[!-~][ -~]{0,10}[!-~]").unwrap(), 0..3),
        body in text(),
        port in prop::option::of(1024u16..65535),
    ) -> SignableRequest {
        let host = match port { Some(p) => format!("127.0.0.1:{p}"), None => "api.example.com".to_owned() };
        let headers = header_values.into_iter().enumerate().map(|(i, v)| (format!("x-extra-{i}"), v)).collect();
        SignableRequest {
            method: method.into(), scheme: "https".into(), host, path, query, headers, body: body.into_bytes(),
        }
    }
}

fn params(alg: Algorithm, time: i64) -> SigningParams {
    SigningParams {
        algorithm: alg,
        time,
        nonce: "nonce-1".into(),
        region: "cn-north-1".into(),
        service: "vm".into(),
        action: "DescribeInstances".into(),
        version: "2014-05-26".into(),
    }
}

fn lookup(ak: &str) -> Option<Secret> {
    (ak == "AKID").then(|| Secret::new(SECRET))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn what_sign_sends_verify_accepts(req in signable(), alg in algorithm(), time in 0i64..4_000_000_000) {
        let creds = Credentials::new("AKID", SECRET);
        let signed = sign(&req, &creds, &params(alg, time)).unwrap();
        let incoming = signed.to_incoming();
        let tail = if signed.raw_query.is_empty() { signed.path.clone() } else { format!("{}?{}", signed.path, signed.raw_query) };
        let url_ends_with_path_and_query = signed.url.ends_with(&tail);
        prop_assert!(url_ends_with_path_and_query, "{} vs {}", signed.url, tail);
        let v = verify(&incoming, lookup, time, 300);
        prop_assert!(v.is_ok(), "{alg}: {:?}\nurl {}\ncanonical {:?}", v, signed.url, signed.canonical_request);

        let mut changed = incoming.clone();
        changed.method.push('X');
        prop_assert!(verify(&changed, lookup, time, 300).is_err());
    }

    #[test]
    fn verify_survives_anything(
        method in text(), path in text(), raw_query in text(),
        headers in prop::collection::vec((prop::sample::select(vec![
            "Authorization", "X-TC-Timestamp", "x-acs-date", "x-acs-signature-nonce", "x-jdcloud-date",
            "x-jdcloud-nonce", "host", "content-type"]), text()), 0..8),
        auth in prop::sample::select(vec![
            "TC3-HMAC-SHA256 Credential=AKID/2024-01-01/cvm/tc3_request, SignedHeaders=content-type;host, Signature=00",
            "ACS3-HMAC-SHA256 Credential=AKID,SignedHeaders=host;x-acs-date,Signature=00",
            "JDCLOUD3-HMAC-SHA256 Credential=AKID/20240101/cn-north-1/vm/jdcloud3_request, SignedHeaders=host, Signature=00",
            "JDCLOUD2-HMAC-SHA256 Credential=AKID/2024/x, SignedHeaders=, Signature=",
            "", "TC3-HMAC-SHA256", "Credential=", "ACS3-HMAC-SHA256 ,,,==="]),
        now in any::<i64>(), skew in any::<i64>(),
    ) {
        let mut headers: Vec<(String, String)> = headers.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        headers.insert(0, ("Authorization".into(), auth.to_owned()));
        let req = IncomingRequest { method, path, raw_query, headers, body: vec![] };
        if let Err(e) = verify(&req, lookup, now, skew) {
            prop_assert!(!e.to_string().contains(SECRET));
        }
    }
}
