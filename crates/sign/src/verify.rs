//! Owns `verify`: what a cloud does with an incoming request. It finds the scheme from the
//! `Authorization` header (or the RPC `Signature` parameter), checks the key, the clock skew and
//! the scope, and recomputes the signature with the same `schemes::*::stages` that `sign` uses.
//! Errors carry a kind each emulator maps to its cloud's own auth error code.

use crate::canonical::{constant_time_eq, header, Stages};
use crate::encode::parse_query;
use crate::request::{Algorithm, IncomingRequest};
use crate::schemes::{acs3, jdcloud, rpc, tc3};
use crate::secret::Secret;
use crate::time::{self, Format};

/// What kind of failure; each cloud has its own error code for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VerifyErrorKind {
    /// No `Authorization` header and no `Signature` parameter.
    MissingAuthorization,
    /// A required header/parameter is missing or unparseable (`detail` says which).
    Malformed,
    /// The algorithm named is not one gpuctl knows (e.g. `ACS3-HMAC-SM3`).
    UnsupportedAlgorithm,
    /// The access key id is not known to the lookup.
    UnknownAccessKey,
    /// The request time is further from `now` than the allowed skew.
    Expired,
    /// The credential scope does not fit: its date is not the request's date, a wrong terminator,
    /// or (via `Verified::expect_scope`) the wrong service or region.
    ScopeMismatch,
    /// Everything parsed, but the signature is not the one the secret gives.
    SignatureMismatch,
}

/// A verification failure. `detail` is for people (it may include the server's string-to-sign,
/// as real clouds do) and never contains a secret or the expected signature.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind:?}: {detail}")]
pub struct VerifyError {
    pub kind: VerifyErrorKind,
    pub detail: String,
    /// Which scheme the request claimed, when that much could be read.
    pub algorithm: Option<Algorithm>,
}

impl VerifyError {
    fn new(kind: VerifyErrorKind, algorithm: Option<Algorithm>, detail: impl Into<String>) -> Self {
        Self { kind, detail: detail.into(), algorithm }
    }
}

/// A request whose signature checked out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub algorithm: Algorithm,
    pub access_key_id: String,
    /// JD: from the scope. Tencent: the `X-TC-Region` header. Alibaba: none.
    pub region: Option<String>,
    /// Tencent and JD: from the scope. Alibaba: none.
    pub service: Option<String>,
    /// The scope date as written (`2024-01-02` TC3, `20240102` JD); none for Alibaba.
    pub date: Option<String>,
    /// The request time, unix seconds.
    pub timestamp: i64,
    /// Alibaba and JD; replay tracking is the caller's job.
    pub nonce: Option<String>,
    /// `X-TC-Action` / `x-acs-action` / `Action`; none for JD.
    pub action: Option<String>,
    /// `X-TC-Version` / `x-acs-version` / `Version`; none for JD.
    pub version: Option<String>,
    pub signed_headers: Vec<String>,
}

impl Verified {
    /// Check the scope against what this endpoint serves. `None` skips that part.
    pub fn expect_scope(&self, service: Option<&str>, region: Option<&str>) -> Result<(), VerifyError> {
        let alg = Some(self.algorithm);
        if let (Some(want), Some(got)) = (service, &self.service) {
            if want != got {
                return Err(VerifyError::new(
                    VerifyErrorKind::ScopeMismatch,
                    alg,
                    format!("credential scope names service {got:?}, this endpoint is {want:?}"),
                ));
            }
        }
        if let (Some(want), Some(got)) = (region, &self.region) {
            if want != got {
                return Err(VerifyError::new(
                    VerifyErrorKind::ScopeMismatch,
                    alg,
                    format!("request names region {got:?}, this endpoint serves {want:?}"),
                ));
            }
        }
        Ok(())
    }
}

/// Verify `req`. `lookup` maps an access key id to its secret; `now` is unix seconds;
/// `max_skew_secs` is how far the request time may be from `now` either way (Tencent: 300).
pub fn verify(
    req: &IncomingRequest,
    lookup: impl Fn(&str) -> Option<Secret>,
    now: i64,
    max_skew_secs: i64,
) -> Result<Verified, VerifyError> {
    verify_explained(req, lookup, now, max_skew_secs).map(|e| e.verified)
}

/// A verified request plus the stages the server computed (for logs and conformance tests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explained {
    pub verified: Verified,
    pub canonical_request: String,
    pub string_to_sign: String,
}

/// `verify`, also returning the server-side canonical request and string-to-sign.
pub fn verify_explained(
    req: &IncomingRequest,
    lookup: impl Fn(&str) -> Option<Secret>,
    now: i64,
    max_skew_secs: i64,
) -> Result<Explained, VerifyError> {
    let Some(auth) = header(&req.headers, "authorization") else {
        if parse_query(&req.raw_query).iter().any(|(k, _)| k == "Signature") {
            return verify_rpc(req, &lookup, now, max_skew_secs);
        }
        return Err(VerifyError::new(
            VerifyErrorKind::MissingAuthorization,
            None,
            "no Authorization header and no Signature parameter",
        ));
    };
    let auth = auth.trim();
    let (alg_name, rest) = auth.split_once(' ').unwrap_or((auth, ""));
    let alg = match alg_name {
        "TC3-HMAC-SHA256" => Algorithm::Tc3,
        "ACS3-HMAC-SHA256" => Algorithm::Acs3,
        "JDCLOUD3-HMAC-SHA256" => Algorithm::JdCloud3,
        "JDCLOUD2-HMAC-SHA256" => Algorithm::JdCloud2,
        other => {
            return Err(VerifyError::new(
                VerifyErrorKind::UnsupportedAlgorithm,
                None,
                format!("unsupported signature algorithm {:?}", truncate(other)),
            ))
        }
    };
    let fields =
        AuthFields::parse(rest).map_err(|d| VerifyError::new(VerifyErrorKind::Malformed, Some(alg), d))?;
    match alg {
        Algorithm::Tc3 => verify_tc3(req, &fields, &lookup, now, max_skew_secs),
        Algorithm::Acs3 => verify_acs3(req, &fields, &lookup, now, max_skew_secs),
        Algorithm::JdCloud3 => verify_jd(req, &fields, jdcloud::Version::V3, &lookup, now, max_skew_secs),
        Algorithm::JdCloud2 => verify_jd(req, &fields, jdcloud::Version::V2, &lookup, now, max_skew_secs),
        Algorithm::AlibabaRpcV2 => unreachable!("RPC is not an Authorization scheme"),
    }
}

/// `Credential=…, SignedHeaders=…, Signature=…` (commas with or without spaces).
struct AuthFields {
    credential: String,
    signed_headers: Vec<String>,
    signature: String,
}

impl AuthFields {
    fn parse(rest: &str) -> Result<Self, String> {
        let (mut credential, mut signed, mut signature) = (None, None, None);
        for part in rest.split(',') {
            let part = part.trim();
            let Some((k, v)) = part.split_once('=') else {
                return Err(format!("Authorization part {:?} is not key=value", truncate(part)));
            };
            let slot = match k {
                "Credential" => &mut credential,
                "SignedHeaders" => &mut signed,
                "Signature" => &mut signature,
                _ => return Err(format!("unknown Authorization field {:?}", truncate(k))),
            };
            if slot.replace(v.to_owned()).is_some() {
                return Err(format!("Authorization field {k} appears twice"));
            }
        }
        let missing = |f: &str| format!("Authorization has no {f}=");
        let signed_headers: String = signed.ok_or_else(|| missing("SignedHeaders"))?;
        let signed_headers: Vec<String> = signed_headers.split(';').map(str::to_owned).collect();
        if signed_headers.iter().any(|h| h.is_empty() || h.bytes().any(|b| b.is_ascii_uppercase())) {
            return Err("SignedHeaders must be lower-case names separated by ';'".into());
        }
        Ok(Self {
            credential: credential.ok_or_else(|| missing("Credential"))?,
            signed_headers,
            signature: signature.ok_or_else(|| missing("Signature"))?,
        })
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(64).collect()
}

fn find_secret(
    alg: Algorithm,
    ak: &str,
    lookup: &impl Fn(&str) -> Option<Secret>,
) -> Result<Secret, VerifyError> {
    lookup(ak).ok_or_else(|| {
        VerifyError::new(
            VerifyErrorKind::UnknownAccessKey,
            Some(alg),
            format!("access key id {:?} is not known", truncate(ak)),
        )
    })
}

fn check_skew(alg: Algorithm, t: i64, now: i64, max_skew: i64) -> Result<(), VerifyError> {
    let diff = t.saturating_sub(now).saturating_abs();
    if diff > max_skew {
        return Err(VerifyError::new(
            VerifyErrorKind::Expired,
            Some(alg),
            format!("request time {t} is {diff} s from server time {now}; allowed skew is {max_skew} s"),
        ));
    }
    Ok(())
}

fn require_signed(alg: Algorithm, signed: &[String], names: &[&str]) -> Result<(), VerifyError> {
    for n in names {
        if !signed.iter().any(|s| s == n) {
            return Err(VerifyError::new(
                VerifyErrorKind::Malformed,
                Some(alg),
                format!("header {n} must be signed"),
            ));
        }
    }
    Ok(())
}

fn compare(alg: Algorithm, st: Result<Stages, String>, given: &str) -> Result<Stages, VerifyError> {
    let st = st.map_err(|name| {
        VerifyError::new(
            VerifyErrorKind::Malformed,
            Some(alg),
            format!("signed header {name} is not in the request"),
        )
    })?;
    if constant_time_eq(st.signature.as_bytes(), given.as_bytes()) {
        Ok(st)
    } else {
        Err(VerifyError::new(
            VerifyErrorKind::SignatureMismatch,
            Some(alg),
            format!(
                "the signature does not match; the server's string to sign is {:?} and canonical request {:?}",
                st.string_to_sign, st.canonical_request
            ),
        ))
    }
}

/// What every scheme checks, in the same order, once its request is parsed: the key is known, the
/// clock is within the skew, the scope fits, and `compute(secret)` gives the signature sent.
fn finish(
    claimed: Verified,
    scope: Result<(), VerifyError>,
    given_signature: &str,
    lookup: &impl Fn(&str) -> Option<Secret>,
    now: i64,
    skew: i64,
    compute: impl FnOnce(&str) -> Result<Stages, String>,
) -> Result<Explained, VerifyError> {
    let alg = claimed.algorithm;
    let secret = find_secret(alg, &claimed.access_key_id, lookup)?;
    check_skew(alg, claimed.timestamp, now, skew)?;
    scope?;
    let st = compare(alg, compute(secret.expose()), given_signature)?;
    Ok(Explained {
        verified: claimed,
        canonical_request: st.canonical_request,
        string_to_sign: st.string_to_sign,
    })
}

fn malformed(alg: Algorithm, detail: impl Into<String>) -> VerifyError {
    VerifyError::new(VerifyErrorKind::Malformed, Some(alg), detail)
}

fn verify_tc3(
    req: &IncomingRequest,
    f: &AuthFields,
    lookup: &impl Fn(&str) -> Option<Secret>,
    now: i64,
    skew: i64,
) -> Result<Explained, VerifyError> {
    let alg = Algorithm::Tc3;
    let parts: Vec<&str> = f.credential.split('/').collect();
    let [ak, date, service, terminator] = parts[..] else {
        return Err(malformed(alg, "Credential must be <SecretId>/<date>/<service>/tc3_request"));
    };
    let ts_text =
        header(&req.headers, "X-TC-Timestamp").ok_or_else(|| malformed(alg, "missing X-TC-Timestamp"))?;
    let ts: i64 = ts_text.trim().parse().map_err(|_| malformed(alg, "X-TC-Timestamp is not unix seconds"))?;
    require_signed(alg, &f.signed_headers, &["content-type", "host"])?;
    let want_date = time::format(ts, Format::IsoDate).unwrap_or_default();
    let scope = if date != want_date || terminator != tc3::TERMINATOR {
        Err(VerifyError::new(
            VerifyErrorKind::ScopeMismatch,
            Some(alg),
            format!(
                "credential scope {date}/{service}/{terminator} should be {want_date}/<service>/tc3_request"
            ),
        ))
    } else {
        Ok(())
    };
    let claimed = Verified {
        algorithm: alg,
        access_key_id: ak.to_owned(),
        region: header(&req.headers, "X-TC-Region").map(str::to_owned),
        service: Some(service.to_owned()),
        date: Some(date.to_owned()),
        timestamp: ts,
        nonce: None,
        action: header(&req.headers, "X-TC-Action").map(str::to_owned),
        version: header(&req.headers, "X-TC-Version").map(str::to_owned),
        signed_headers: f.signed_headers.clone(),
    };
    finish(claimed, scope, &f.signature, lookup, now, skew, |secret| {
        tc3::stages(req, &f.signed_headers, ts_text.trim(), date, service, secret)
    })
}

fn verify_acs3(
    req: &IncomingRequest,
    f: &AuthFields,
    lookup: &impl Fn(&str) -> Option<Secret>,
    now: i64,
    skew: i64,
) -> Result<Explained, VerifyError> {
    let alg = Algorithm::Acs3;
    let ak = f.credential.as_str();
    let date = header(&req.headers, "x-acs-date").ok_or_else(|| malformed(alg, "missing x-acs-date"))?;
    let ts = time::parse(date.trim(), Format::IsoSeconds)
        .ok_or_else(|| malformed(alg, "x-acs-date is not yyyy-MM-ddTHH:mm:ssZ"))?;
    let nonce = header(&req.headers, "x-acs-signature-nonce")
        .ok_or_else(|| malformed(alg, "missing x-acs-signature-nonce"))?;
    // The doc: host and every x-acs-* header present must be signed.
    let mut must: Vec<String> = vec!["host".into()];
    must.extend(req.headers.iter().map(|(k, _)| k.to_ascii_lowercase()).filter(|k| k.starts_with("x-acs-")));
    let must: Vec<&str> = must.iter().map(String::as_str).collect();
    require_signed(alg, &f.signed_headers, &must)?;
    let claimed = Verified {
        algorithm: alg,
        access_key_id: ak.to_owned(),
        region: None,
        service: None,
        date: None,
        timestamp: ts,
        nonce: Some(nonce.to_owned()),
        action: header(&req.headers, "x-acs-action").map(str::to_owned),
        version: header(&req.headers, "x-acs-version").map(str::to_owned),
        signed_headers: f.signed_headers.clone(),
    };
    finish(claimed, Ok(()), &f.signature, lookup, now, skew, |secret| {
        acs3::stages(req, &f.signed_headers, secret)
    })
}

fn verify_jd(
    req: &IncomingRequest,
    f: &AuthFields,
    v: jdcloud::Version,
    lookup: &impl Fn(&str) -> Option<Secret>,
    now: i64,
    skew: i64,
) -> Result<Explained, VerifyError> {
    let alg = if v == jdcloud::Version::V3 { Algorithm::JdCloud3 } else { Algorithm::JdCloud2 };
    let parts: Vec<&str> = f.credential.split('/').collect();
    let [ak, date, region, service, terminator] = parts[..] else {
        return Err(malformed(
            alg,
            "Credential must be <AccessKey>/<YYYYMMDD>/<region>/<service>/<terminator>",
        ));
    };
    let jd_date_raw =
        header(&req.headers, "x-jdcloud-date").ok_or_else(|| malformed(alg, "missing x-jdcloud-date"))?;
    let jd_date = jd_date_raw.trim();
    let ts = time::parse(jd_date, Format::Compact)
        .ok_or_else(|| malformed(alg, "x-jdcloud-date is not YYYYMMDDTHHMMSSZ"))?;
    let nonce =
        header(&req.headers, "x-jdcloud-nonce").ok_or_else(|| malformed(alg, "missing x-jdcloud-nonce"))?;
    match v {
        jdcloud::Version::V3 => require_signed(alg, &f.signed_headers, &["host"])?,
        // JD's doc: date and nonce "必须在请求中包含并且参与签名".
        jdcloud::Version::V2 => {
            require_signed(alg, &f.signed_headers, &["host", "x-jdcloud-date", "x-jdcloud-nonce"])?
        }
    }
    let scope_check = if date != &jd_date[..8] || terminator != v.terminator() {
        Err(VerifyError::new(
            VerifyErrorKind::ScopeMismatch,
            Some(alg),
            format!(
                "credential scope {date}/{region}/{service}/{terminator} should start with {} and end with {}",
                &jd_date[..8],
                v.terminator()
            ),
        ))
    } else {
        Ok(())
    };
    let claimed = Verified {
        algorithm: alg,
        access_key_id: ak.to_owned(),
        region: Some(region.to_owned()),
        service: Some(service.to_owned()),
        date: Some(date.to_owned()),
        timestamp: ts,
        nonce: Some(nonce.trim().to_owned()),
        action: None,
        version: None,
        signed_headers: f.signed_headers.clone(),
    };
    // The SDKs put the header value into the string to sign untrimmed.
    let scope = jdcloud::Scope { jd_date: jd_date_raw, date, region, service };
    finish(claimed, scope_check, &f.signature, lookup, now, skew, |secret| {
        jdcloud::stages(req, &f.signed_headers, &scope, v, secret)
    })
}

fn verify_rpc(
    req: &IncomingRequest,
    lookup: &impl Fn(&str) -> Option<Secret>,
    now: i64,
    skew: i64,
) -> Result<Explained, VerifyError> {
    let alg = Algorithm::AlibabaRpcV2;
    let params = rpc::signed_params(req);
    let get = |k: &str| params.iter().find(|(pk, _)| pk == k).map(|(_, v)| v.as_str());
    let given = parse_query(&req.raw_query)
        .into_iter()
        .find(|(k, _)| k == "Signature")
        .map(|(_, v)| v)
        .unwrap_or_default();
    match get("SignatureMethod") {
        Some("HMAC-SHA1") => {}
        Some(other) => {
            return Err(VerifyError::new(
                VerifyErrorKind::UnsupportedAlgorithm,
                Some(alg),
                format!("unsupported SignatureMethod {:?}", truncate(other)),
            ))
        }
        None => return Err(malformed(alg, "missing SignatureMethod")),
    }
    if get("SignatureVersion") != Some("1.0") {
        return Err(malformed(alg, "SignatureVersion must be 1.0"));
    }
    let ak = get("AccessKeyId").ok_or_else(|| malformed(alg, "missing AccessKeyId"))?;
    let ts_text = get("Timestamp").ok_or_else(|| malformed(alg, "missing Timestamp"))?;
    let ts = time::parse(ts_text, Format::IsoSeconds)
        .ok_or_else(|| malformed(alg, "Timestamp is not yyyy-MM-ddTHH:mm:ssZ"))?;
    let nonce = get("SignatureNonce").ok_or_else(|| malformed(alg, "missing SignatureNonce"))?;
    let claimed = Verified {
        algorithm: alg,
        access_key_id: ak.to_owned(),
        region: get("RegionId").map(str::to_owned),
        service: None,
        date: None,
        timestamp: ts,
        nonce: Some(nonce.to_owned()),
        action: get("Action").map(str::to_owned),
        version: get("Version").map(str::to_owned),
        signed_headers: Vec::new(),
    };
    finish(claimed, Ok(()), &given, lookup, now, skew, |secret| Ok(rpc::stages(&req.method, &params, secret)))
}
