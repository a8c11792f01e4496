//! Alibaba Cloud signature V3, ACS3-HMAC-SHA256 (SDK: alibabacloud_tea_openapi/utils.py
//! `get_authorization`). The query is decoded and re-encoded per RFC 3986, sorted; every
//! signed header is canonicalised (repeated names joined with `,`); the key is the secret itself.

use crate::canonical::{canonical_headers, hmac_sha256, sha256_hex, CanonicalRequest, HeaderRule, Stages};
use crate::encode::{join_query, parse_query, rfc3986};
use crate::request::IncomingRequest;

pub(crate) const ALGORITHM: &str = "ACS3-HMAC-SHA256";
const RULE: HeaderRule = HeaderRule { trim: true, sort_repeated: true };

/// RFC 3986 both sides, sorted by encoded key then value (the SDK has unique keys; the doc's order
/// for repeated keys is by value).
pub(crate) fn canonical_query(raw: &str) -> String {
    let mut pairs: Vec<(String, String)> =
        parse_query(raw).into_iter().map(|(k, v)| (rfc3986(&k), rfc3986(&v))).collect();
    pairs.sort();
    join_query(&pairs, |s| s.to_owned())
}

pub(crate) fn stages(
    wire: &IncomingRequest,
    signed_headers: &[String],
    secret: &str,
) -> Result<Stages, String> {
    let headers = canonical_headers(&wire.headers, signed_headers, RULE)?;
    let query = canonical_query(&wire.raw_query);
    let signed = signed_headers.join(";");
    let payload_hash = sha256_hex(&wire.body);
    let canonical_request = CanonicalRequest {
        method: &wire.method,
        uri: if wire.path.is_empty() { "/" } else { &wire.path },
        query: &query,
        headers: &headers,
        signed_headers: &signed,
        payload_hash: &payload_hash,
    }
    .render();
    let string_to_sign = format!("{ALGORITHM}\n{}", sha256_hex(canonical_request.as_bytes()));
    let signature = hex::encode(hmac_sha256(secret.as_bytes(), string_to_sign.as_bytes()));
    Ok(Stages { canonical_request, string_to_sign, signature })
}

pub(crate) fn authorization(access_key_id: &str, signed_headers: &[String], signature: &str) -> String {
    format!(
        "{ALGORITHM} Credential={access_key_id},SignedHeaders={},Signature={signature}",
        signed_headers.join(";")
    )
}
