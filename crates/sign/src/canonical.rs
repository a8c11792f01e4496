//! Owns the one canonical-request builder that every scheme uses in both directions: `sign`
//! builds the wire request first and then calls the same code `verify` runs on what it received,
//! so a signer and a verifier in this crate cannot disagree about a byte.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::encode::py_strip;

/// The six lines every HMAC-SHA256 scheme hashes (TC3, ACS3, JDCLOUD2/3).
pub(crate) struct CanonicalRequest<'a> {
    pub method: &'a str,
    pub uri: &'a str,
    pub query: &'a str,
    /// `name:value\n` per signed header.
    pub headers: &'a str,
    /// `a;b;c`
    pub signed_headers: &'a str,
    pub payload_hash: &'a str,
}

impl CanonicalRequest<'_> {
    pub fn render(&self) -> String {
        let mut s = String::with_capacity(
            self.method.len()
                + self.uri.len()
                + self.query.len()
                + self.headers.len()
                + self.signed_headers.len()
                + 70,
        );
        for (i, part) in
            [self.method, self.uri, self.query, self.headers, self.signed_headers, self.payload_hash]
                .into_iter()
                .enumerate()
        {
            if i > 0 {
                s.push('\n');
            }
            s.push_str(part);
        }
        s
    }
}

/// How a scheme turns header values into canonical form.
#[derive(Clone, Copy)]
pub(crate) struct HeaderRule {
    /// Trim surrounding whitespace from each value (all but JDCLOUD2).
    pub trim: bool,
    /// Sort repeated values before joining them with `,` (ACS3).
    pub sort_repeated: bool,
}

/// `name:value\n` for each name in `signed` (already lower-case, in the order given).
/// Err(name) when a signed header is absent from the request.
pub(crate) fn canonical_headers(
    headers: &[(String, String)],
    signed: &[String],
    rule: HeaderRule,
) -> Result<String, String> {
    let mut out = String::new();
    for name in signed {
        let mut values: Vec<&str> = headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| if rule.trim { py_strip(v) } else { v.as_str() })
            .collect();
        if values.is_empty() {
            return Err(name.clone());
        }
        if rule.sort_repeated {
            values.sort_unstable();
        }
        out.push_str(name);
        out.push(':');
        out.push_str(&values.join(","));
        out.push('\n');
    }
    Ok(out)
}

/// First value of a header, case-insensitive name.
pub(crate) fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

pub(crate) fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

pub(crate) fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(msg);
    mac.finalize().into_bytes().into()
}

/// Equal-time comparison, so a verifier does not leak how many leading bytes matched.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What one signing computation produced, stage by stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stages {
    pub canonical_request: String,
    pub string_to_sign: String,
    pub signature: String,
}
