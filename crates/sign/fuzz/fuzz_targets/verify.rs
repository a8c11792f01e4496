//! Fuzz `verify` on arbitrary requests. Half the inputs get a well-formed Authorization header (or
//! RPC query) around fuzzed fields so the fuzzer reaches the canonicalisers, not just the parser.
//! Properties: never panics; a rejection never shows the secret; the result is deterministic;
//! an accepted request stops verifying when its method changes.
#![no_main]

use gpuctl_sign::{verify, IncomingRequest, Secret};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

const SECRET: &str = "fuzz-secret-VALUE";

#[derive(Arbitrary, Debug)]
struct Input {
    template: u8,
    method: String,
    path: String,
    raw_query: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    credential: String,
    signed_headers: String,
    signature: String,
    date: String,
    now: i64,
    skew: i64,
}

fuzz_target!(|i: Input| {
    let mut headers = i.headers;
    let mut raw_query = i.raw_query;
    let auth = match i.template % 6 {
        0 => Some(format!("TC3-HMAC-SHA256 Credential={}, SignedHeaders={}, Signature={}", i.credential, i.signed_headers, i.signature)),
        1 => Some(format!("ACS3-HMAC-SHA256 Credential={},SignedHeaders={},Signature={}", i.credential, i.signed_headers, i.signature)),
        2 => Some(format!("JDCLOUD3-HMAC-SHA256 Credential={}, SignedHeaders={}, Signature={}", i.credential, i.signed_headers, i.signature)),
        3 => Some(format!("JDCLOUD2-HMAC-SHA256 Credential={}, SignedHeaders={}, Signature={}", i.credential, i.signed_headers, i.signature)),
        4 => {
            raw_query.push_str(&format!(
                "&SignatureMethod=HMAC-SHA1&SignatureVersion=1.0&AccessKeyId={}&Timestamp={}&SignatureNonce=n&Signature={}",
                i.credential, i.date, i.signature
            ));
            None
        }
        _ => None,
    };
    if let Some(a) = auth {
        headers.push(("Authorization".into(), a));
        headers.push(("X-TC-Timestamp".into(), i.date.clone()));
        headers.push(("x-acs-date".into(), i.date.clone()));
        headers.push(("x-acs-signature-nonce".into(), "n".into()));
        headers.push(("x-jdcloud-date".into(), i.date.clone()));
        headers.push(("x-jdcloud-nonce".into(), "n".into()));
    }
    let req = IncomingRequest { method: i.method, path: i.path, raw_query, headers, body: i.body };
    let lookup = |_: &str| Some(Secret::new(SECRET));
    let first = verify(&req, lookup, i.now, i.skew);
    match &first {
        Err(e) => {
            assert!(!e.to_string().contains(SECRET));
            assert!(!format!("{e:?}").contains(SECRET));
        }
        Ok(_) => {
            // Every scheme signs the method: changing it must break an accepted signature.
            let mut changed = req.clone();
            changed.method.push('X');
            assert!(verify(&changed, lookup, i.now, i.skew).is_err(), "accepted with a changed method");
        }
    }
    assert_eq!(first, verify(&req, lookup, i.now, i.skew), "verify is deterministic");
});
