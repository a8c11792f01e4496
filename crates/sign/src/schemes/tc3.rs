//! Tencent Cloud TC3-HMAC-SHA256 (SDK: tencentcloud/common/abstract_client.py `_get_tc3_signature`).
//! The canonical query is the raw query exactly as sent (never re-sorted or re-encoded).

use crate::canonical::{
    canonical_headers, header, hmac_sha256, sha256_hex, CanonicalRequest, HeaderRule, Stages,
};
use crate::request::IncomingRequest;

pub(crate) const ALGORITHM: &str = "TC3-HMAC-SHA256";
pub(crate) const TERMINATOR: &str = "tc3_request";
const RULE: HeaderRule = HeaderRule { trim: true, sort_repeated: false };

/// `date` is the UTC `YYYY-MM-DD` of `timestamp`; Err(header name) when a signed header is missing.
pub(crate) fn stages(
    wire: &IncomingRequest,
    signed_headers: &[String],
    timestamp: &str,
    date: &str,
    service: &str,
    secret: &str,
) -> Result<Stages, String> {
    let headers = canonical_headers(&wire.headers, signed_headers, RULE)?;
    let payload_hash = match header(&wire.headers, "X-TC-Content-SHA256") {
        // The SDK's `unsignedPayload` option hashes this literal instead of the body.
        Some("UNSIGNED-PAYLOAD") => sha256_hex(b"UNSIGNED-PAYLOAD"),
        _ => sha256_hex(&wire.body),
    };
    let signed = signed_headers.join(";");
    let canonical_request = CanonicalRequest {
        method: &wire.method,
        uri: if wire.path.is_empty() { "/" } else { &wire.path },
        query: &wire.raw_query,
        headers: &headers,
        signed_headers: &signed,
        payload_hash: &payload_hash,
    }
    .render();
    let string_to_sign = format!(
        "{ALGORITHM}\n{timestamp}\n{date}/{service}/{TERMINATOR}\n{}",
        sha256_hex(canonical_request.as_bytes())
    );
    let k_date = hmac_sha256(format!("TC3{secret}").as_bytes(), date.as_bytes());
    let k_service = hmac_sha256(&k_date, service.as_bytes());
    let k_signing = hmac_sha256(&k_service, TERMINATOR.as_bytes());
    let signature = hex::encode(hmac_sha256(&k_signing, string_to_sign.as_bytes()));
    Ok(Stages { canonical_request, string_to_sign, signature })
}

pub(crate) fn authorization(
    access_key_id: &str,
    date: &str,
    service: &str,
    signed_headers: &[String],
    signature: &str,
) -> String {
    format!(
        "{ALGORITHM} Credential={access_key_id}/{date}/{service}/{TERMINATOR}, SignedHeaders={}, Signature={signature}",
        signed_headers.join(";")
    )
}
