//! Signature verification for the emulators, behind one function ([`verify`]) so every emulator
//! checks signatures the same way; the cryptography is gpuctl-sign's.
//!
//! The emulator maps [`AuthError`] to its cloud's own auth error codes.

use jiff::{SignedDuration, Timestamp};

use crate::Provider;

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
    /// The request is signed with another scheme than this endpoint accepts.
    #[error("this endpoint expects {0:?} signatures")]
    Unsupported(Scheme),
}

/// Verify `req` under `scheme` against the keys `ctx` accepts for `provider`, with `max_skew`
/// between the signing time and the wall clock. The work is gpuctl-sign's `verify` — the same
/// canonical-request code the client side signs with — so this is the one place emulators meet it.
pub fn verify(
    scheme: Scheme,
    req: &SimRequest,
    ctx: &SimCtx,
    provider: Provider,
    max_skew: SignedDuration,
) -> Result<Verified, AuthError> {
    let incoming = gpuctl_sign::IncomingRequest {
        method: req.method.clone(),
        path: req.path.clone(),
        raw_query: req.raw_query.clone(),
        headers: req.headers.clone(),
        body: req.body.to_vec(),
    };
    let lookup = |ak: &str| ctx.secret(provider, ak);
    // Skew is judged against the wall clock, not the sim clock: SDKs sign with the machine's time,
    // and a test that advances the sim clock (to fire auto-release) must still be able to call.
    let wall = Timestamp::now().as_second();
    let v = gpuctl_sign::verify(&incoming, lookup, wall, max_skew.as_secs()).map_err(|e| {
        use gpuctl_sign::VerifyErrorKind as K;
        match e.kind {
            K::MissingAuthorization => AuthError::Missing,
            K::Malformed => AuthError::Malformed(e.detail),
            K::UnsupportedAlgorithm => AuthError::Unsupported(scheme),
            K::UnknownAccessKey => AuthError::UnknownKey(access_key_of(req).unwrap_or_default()),
            K::Expired => AuthError::Expired { skew_seconds: skew_of(&e.detail) },
            K::ScopeMismatch => AuthError::Scope(e.detail),
            K::SignatureMismatch => AuthError::Mismatch,
        }
    })?;
    if v.algorithm != scheme.algorithm() {
        return Err(AuthError::Unsupported(scheme));
    }
    let signed_at = Timestamp::from_second(v.timestamp)
        .map_err(|_| AuthError::Malformed("request time out of range".into()))?;
    Ok(Verified { access_key: v.access_key_id, service: v.service, region: v.region, signed_at })
}

impl Scheme {
    fn algorithm(self) -> gpuctl_sign::Algorithm {
        use gpuctl_sign::Algorithm as A;
        match self {
            Scheme::Tc3 => A::Tc3,
            Scheme::Acs3 => A::Acs3,
            Scheme::AcsRpc => A::AlibabaRpcV2,
            Scheme::JdCloud3 => A::JdCloud3,
            Scheme::JdCloud2 => A::JdCloud2,
        }
    }
}

/// The access key the request names (for the cloud's "key not found" message).
fn access_key_of(req: &SimRequest) -> Option<String> {
    if let Some(auth) = req.header("authorization") {
        let cred = auth.split("Credential=").nth(1)?;
        let cred = cred.split([',', ' ']).next()?;
        return Some(cred.split('/').next().unwrap_or(cred).to_string());
    }
    req.query_pairs().into_iter().find(|(k, _)| k == "AccessKeyId").map(|(_, v)| v)
}

/// The skew in seconds, read back from gpuctl-sign's message ("request time T is N s from server
/// time S; …"); 0 if the wording ever changes (the code then still says "expired").
fn skew_of(detail: &str) -> i64 {
    detail
        .split(" is ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SimConfig;
    use crate::creds::TEST_KEY_PAIRS;

    fn signed(ak: &str, sk: &str, time: i64) -> SimRequest {
        crate::testing::tc3_with(
            "127.0.0.1:9",
            "cvm",
            "ap-guangzhou",
            "DescribeInstances",
            r#"{"Limit":1}"#,
            ak,
            sk,
            time,
        )
    }

    #[test]
    fn verify_maps_each_outcome() {
        let ctx = SimCtx::new(SimConfig::default(), Vec::new());
        let (_, ak, sk) = TEST_KEY_PAIRS[0];
        let now = Timestamp::now().as_second();
        let skew = SignedDuration::from_mins(5);
        ctx.clock().advance(SignedDuration::from_hours(3)); // the sim clock does not affect skew
        let ok = verify(Scheme::Tc3, &signed(ak, sk, now), &ctx, Provider::Tencent, skew).unwrap();
        assert_eq!((ok.access_key.as_str(), ok.service.as_deref()), (ak, Some("cvm")));
        let check = |req: SimRequest, scheme: Scheme, provider: Provider| {
            verify(scheme, &req, &ctx, provider, skew).unwrap_err()
        };
        assert_eq!(check(signed(ak, "wrong", now), Scheme::Tc3, Provider::Tencent), AuthError::Mismatch);
        assert_eq!(
            check(signed("AKIDnobody", sk, now), Scheme::Tc3, Provider::Tencent),
            AuthError::UnknownKey("AKIDnobody".into())
        );
        assert_eq!(
            check(signed(ak, sk, now), Scheme::Tc3, Provider::Alibaba),
            AuthError::UnknownKey(ak.into()),
            "keys are per provider"
        );
        // Skew is judged on the wall clock, which may tick into the next second between `now` and the
        // check (a loaded machine made it 601 once): 600 s old, give or take that tick.
        match check(signed(ak, sk, now - 600), Scheme::Tc3, Provider::Tencent) {
            AuthError::Expired { skew_seconds } => {
                assert!((600..=602).contains(&skew_seconds), "{skew_seconds}")
            }
            other => panic!("want Expired, got {other:?}"),
        }
        assert_eq!(check(SimRequest::new("POST", "/"), Scheme::Tc3, Provider::Tencent), AuthError::Missing);
        assert_eq!(
            check(signed(ak, sk, now), Scheme::Acs3, Provider::Tencent),
            AuthError::Unsupported(Scheme::Acs3)
        );
    }
}
