//! Signature verification for the emulators, behind one function ([`verify`]) so every emulator
//! checks signatures the same way and the implementation lives in one place.
//!
//! The emulator maps [`AuthError`] to its cloud's own auth error codes.

use jiff::{SignedDuration, Timestamp};

use crate::ctx::SimCtx;
use crate::request::SimRequest;

/// The signing schemes the three clouds' SDKs use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Tencent TC3-HMAC-SHA256.
    Tc3,
    /// Alibaba ACS3-HMAC-SHA256 (V3).
    Acs3,
    /// Alibaba legacy RPC signature (V2, HMAC-SHA1 in the `Signature` parameter).
    AcsRpc,
    /// JD Cloud JDCLOUD3-HMAC-SHA256 (jdcloud_sdk ≥ 1.6.96).
    JdCloud3,
    /// JD Cloud JDCLOUD2-HMAC-SHA256 (jdcloud_sdk ≤ 1.6.93).
    JdCloud2,
}

/// Who signed the request and what their credential scope says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub access_key: String,
    /// Service in the credential scope (TC3: "cvm"/"cbs"; JD: "vm"/"disk"/"billing").
    pub service: Option<String>,
    /// Region in the credential scope (JD only).
    pub region: Option<String>,
    /// When the client says it signed.
    pub signed_at: Timestamp,
}

/// Why a signature was refused. Never carries a secret or an expected signature.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("the request is not signed")]
    Missing,
    #[error("the signature is malformed: {0}")]
    Malformed(String),
    #[error("the access key {0} is not known")]
    UnknownKey(String),
    #[error("the signature does not match")]
    Mismatch,
    #[error("the request time is {skew_seconds}s away from the server time")]
    Expired { skew_seconds: i64 },
    #[error("the credential scope is wrong: {0}")]
    Scope(String),
    #[error("signature scheme {0:?} is not verified by this build")]
    Unsupported(Scheme),
}

/// Verify `req` under `scheme` against the keys `ctx` accepts for `provider`, with `max_skew`
/// between the signing time and the sim clock.
pub fn verify(
    scheme: Scheme,
    req: &SimRequest,
    ctx: &SimCtx,
    provider: &str,
    max_skew: SignedDuration,
) -> Result<Verified, AuthError> {
    match scheme {
        Scheme::Tc3 => tc3::verify(req, ctx, provider, max_skew),
        other => Err(AuthError::Unsupported(other)),
    }
}

fn check_skew(signed_at: Timestamp, now: Timestamp, max_skew: SignedDuration) -> Result<(), AuthError> {
    let skew = now.duration_since(signed_at);
    if skew.abs() > max_skew {
        return Err(AuthError::Expired { skew_seconds: skew.as_secs() });
    }
    Ok(())
}

mod tc3 {
    use hmac::{Hmac, Mac};
    use jiff::{tz::TimeZone, SignedDuration, Timestamp};
    use sha2::{Digest, Sha256};

    use super::{check_skew, AuthError, Verified};
    use crate::ctx::SimCtx;
    use crate::request::SimRequest;

    fn hmac(key: &[u8], msg: &str) -> Vec<u8> {
        let mut m = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
        m.update(msg.as_bytes());
        m.finalize().into_bytes().to_vec()
    }

    pub(super) fn verify(
        req: &SimRequest,
        ctx: &SimCtx,
        provider: &str,
        max_skew: SignedDuration,
    ) -> Result<Verified, AuthError> {
        let auth = req.header("authorization").ok_or(AuthError::Missing)?;
        let rest = auth
            .strip_prefix("TC3-HMAC-SHA256 ")
            .ok_or_else(|| AuthError::Malformed("expected TC3-HMAC-SHA256".into()))?;
        let (mut credential, mut signed_headers, mut signature) = (None, None, None);
        for part in rest.split(',') {
            let part = part.trim();
            if let Some(v) = part.strip_prefix("Credential=") {
                credential = Some(v);
            } else if let Some(v) = part.strip_prefix("SignedHeaders=") {
                signed_headers = Some(v);
            } else if let Some(v) = part.strip_prefix("Signature=") {
                signature = Some(v);
            }
        }
        let credential = credential.ok_or_else(|| AuthError::Malformed("no Credential".into()))?;
        let signed_headers = signed_headers.ok_or_else(|| AuthError::Malformed("no SignedHeaders".into()))?;
        let signature = signature.ok_or_else(|| AuthError::Malformed("no Signature".into()))?;
        let mut cred = credential.split('/');
        let (ak, date, service, term) = match (cred.next(), cred.next(), cred.next(), cred.next(), cred.next()) {
            (Some(a), Some(d), Some(s), Some(t), None) => (a, d, s, t),
            _ => return Err(AuthError::Malformed("Credential is not AK/date/service/tc3_request".into())),
        };
        if term != "tc3_request" {
            return Err(AuthError::Scope(format!("scope ends in {term}, not tc3_request")));
        }
        let ts_text = req.header("x-tc-timestamp").ok_or_else(|| AuthError::Malformed("no X-TC-Timestamp".into()))?;
        let ts: i64 = ts_text.trim().parse().map_err(|_| AuthError::Malformed("X-TC-Timestamp is not unix seconds".into()))?;
        let signed_at = Timestamp::from_second(ts).map_err(|_| AuthError::Malformed("X-TC-Timestamp out of range".into()))?;
        let secret = ctx.secret(provider, ak).ok_or_else(|| AuthError::UnknownKey(ak.to_string()))?;
        check_skew(signed_at, ctx.now(), max_skew)?;
        let scope_date = signed_at.to_zoned(TimeZone::UTC).strftime("%Y-%m-%d").to_string();
        if date != scope_date {
            return Err(AuthError::Scope(format!("scope date {date} is not the timestamp's date {scope_date}")));
        }
        let mut canonical_headers = String::new();
        for name in signed_headers.split(';') {
            let value = req
                .header(name)
                .ok_or_else(|| AuthError::Malformed(format!("signed header {name} is missing")))?;
            canonical_headers.push_str(&format!("{}:{}\n", name.to_ascii_lowercase(), value.trim()));
        }
        let canonical_request = format!(
            "{}\n/\n{}\n{}\n{}\n{}",
            req.method,
            req.raw_query,
            canonical_headers,
            signed_headers,
            hex::encode(Sha256::digest(&req.body))
        );
        let string_to_sign = format!(
            "TC3-HMAC-SHA256\n{ts}\n{date}/{service}/tc3_request\n{}",
            hex::encode(Sha256::digest(canonical_request.as_bytes()))
        );
        let k_date = hmac(format!("TC3{}", secret.expose()).as_bytes(), date);
        let k_service = hmac(&k_date, service);
        let k_signing = hmac(&k_service, "tc3_request");
        let expected = hex::encode(hmac(&k_signing, &string_to_sign));
        if !constant_time_eq(expected.as_bytes(), signature.as_bytes()) {
            return Err(AuthError::Mismatch);
        }
        Ok(Verified { access_key: ak.to_string(), service: Some(service.to_string()), region: None, signed_at })
    }

    fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}
