//! JD Cloud JDCLOUD3-HMAC-SHA256 and JDCLOUD2-HMAC-SHA256 (SDK: jdcloud_sdk/core/signer.py in
//! 1.6.354 and 1.6.93). They differ only in how the URI and query are canonicalised, whether
//! header values are trimmed, and the key prefix / scope terminator.

use crate::canonical::{canonical_headers, hmac_sha256, sha256_hex, CanonicalRequest, HeaderRule, Stages};
use crate::encode::{py_quote, py_strip, rfc3986, rfc3986_path, unquote_plus};
use crate::request::IncomingRequest;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Version {
    V2,
    V3,
}

impl Version {
    pub fn algorithm(self) -> &'static str {
        match self {
            Version::V2 => "JDCLOUD2-HMAC-SHA256",
            Version::V3 => "JDCLOUD3-HMAC-SHA256",
        }
    }
    pub fn terminator(self) -> &'static str {
        match self {
            Version::V2 => "jdcloud2_request",
            Version::V3 => "jdcloud3_request",
        }
    }
    fn key_prefix(self) -> &'static str {
        match self {
            Version::V2 => "JDCLOUD2",
            Version::V3 => "JDCLOUD3",
        }
    }
}

/// The SDK never signs these (a proxy may rewrite them).
pub(crate) const UNSIGNED: [&str; 2] = ["authorization", "user-agent"];

/// V3: decode (`+` is a space), collapse runs of `/`, re-encode keeping `/` and `~`.
/// V2: `quote(path)` as is.
pub(crate) fn canonical_uri(path: &str, v: Version) -> String {
    match v {
        Version::V2 => {
            let p = py_quote(path);
            if p.is_empty() {
                "/".to_owned()
            } else {
                p
            }
        }
        Version::V3 => {
            let decoded = unquote_plus(path);
            let mut collapsed = String::with_capacity(decoded.len());
            for c in decoded.chars() {
                if !(c == '/' && collapsed.ends_with('/')) {
                    collapsed.push(c);
                }
            }
            if collapsed.is_empty() {
                return "/".to_owned();
            }
            let enc = rfc3986_path(&collapsed);
            if enc.starts_with('/') {
                enc
            } else {
                format!("/{enc}")
            }
        }
    }
}

/// V3: each part split at the first `=`, decoded and re-encoded, sorted; parts with an empty key or
/// without `=` are dropped. V2: parts split at every `=`, each piece whitespace-stripped, sorted,
/// *not* re-encoded (so the wire encoding is what gets signed).
pub(crate) fn canonical_query(raw: &str, v: Version) -> String {
    let mut parts: Vec<Vec<String>> = match v {
        Version::V3 => raw
            .split('&')
            .filter(|s| !s.is_empty())
            .map(|s| s.splitn(2, '=').map(|x| rfc3986(&unquote_plus(x))).collect())
            .collect(),
        Version::V2 => raw
            .split('&')
            .filter(|s| !s.is_empty())
            .map(|s| s.split('=').map(|x| py_strip(x).to_owned()).collect())
            .collect(),
    };
    // Python sorts the pieces as lists: element by element, a shorter prefix first.
    parts.sort();
    let mut out: Vec<String> = Vec::with_capacity(parts.len());
    for p in parts {
        match (v, p.len()) {
            (Version::V3, 2) if !p[0].is_empty() => out.push(format!("{}={}", p[0], p[1])),
            (Version::V3, _) => {}
            (Version::V2, 1) => out.push(format!("{}=", p[0])),
            (Version::V2, 2) => out.push(format!("{}={}", p[0], p[1])),
            (Version::V2, _) => out.push(format!("{}={}", p[0], p[1..].join("%3D"))),
        }
    }
    out.join("&")
}

pub(crate) struct Scope<'a> {
    /// `x-jdcloud-date`, `YYYYMMDDTHHMMSSZ`
    pub jd_date: &'a str,
    /// `YYYYMMDD`
    pub date: &'a str,
    pub region: &'a str,
    pub service: &'a str,
}

pub(crate) fn scope_string(scope: &Scope<'_>, v: Version) -> String {
    format!("{}/{}/{}/{}", scope.date, scope.region, scope.service, v.terminator())
}

pub(crate) fn stages(
    wire: &IncomingRequest,
    signed_headers: &[String],
    scope: &Scope<'_>,
    v: Version,
    secret: &str,
) -> Result<Stages, String> {
    let rule = HeaderRule { trim: v == Version::V3, sort_repeated: false };
    let headers = canonical_headers(&wire.headers, signed_headers, rule)?;
    let uri = canonical_uri(&wire.path, v);
    let query = canonical_query(&wire.raw_query, v);
    let signed = signed_headers.join(";");
    let payload_hash = sha256_hex(&wire.body);
    let canonical_request = CanonicalRequest {
        method: &wire.method,
        uri: &uri,
        query: &query,
        headers: &headers,
        signed_headers: &signed,
        payload_hash: &payload_hash,
    }
    .render();
    let string_to_sign = format!(
        "{}\n{}\n{}\n{}",
        v.algorithm(),
        scope.jd_date,
        scope_string(scope, v),
        sha256_hex(canonical_request.as_bytes())
    );
    let k_date = hmac_sha256(format!("{}{secret}", v.key_prefix()).as_bytes(), scope.date.as_bytes());
    let k_region = hmac_sha256(&k_date, scope.region.as_bytes());
    let k_service = hmac_sha256(&k_region, scope.service.as_bytes());
    let k_signing = hmac_sha256(&k_service, v.terminator().as_bytes());
    let signature = hex::encode(hmac_sha256(&k_signing, string_to_sign.as_bytes()));
    Ok(Stages { canonical_request, string_to_sign, signature })
}

pub(crate) fn authorization(
    access_key_id: &str,
    scope: &Scope<'_>,
    v: Version,
    signed_headers: &[String],
    signature: &str,
) -> String {
    format!(
        "{} Credential={access_key_id}/{}, SignedHeaders={}, Signature={signature}",
        v.algorithm(),
        scope_string(scope, v),
        signed_headers.join(";")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_uri_and_query_follow_the_sdk() {
        assert_eq!(canonical_uri("", Version::V3), "/");
        assert_eq!(canonical_uri("v1", Version::V3), "/v1");
        assert_eq!(canonical_uri("///v1//a b+c", Version::V3), "/v1/a%20b%20c");
        assert_eq!(canonical_uri("%2Fv1%2F%2Fx", Version::V3), "/v1/x");
        assert_eq!(canonical_query("=a&a=a&b", Version::V3), "a=a");
        assert_eq!(canonical_query("b=2&a=%20x&a=1", Version::V3), "a=%20x&a=1&b=2");
    }

    #[test]
    fn v2_query_is_not_reencoded() {
        assert_eq!(canonical_query("b=2&a=%20x&a= 1 &c", Version::V2), "a=%20x&a=1&b=2&c=");
        assert_eq!(canonical_query("a=b=c", Version::V2), "a=b%3Dc");
    }
}
