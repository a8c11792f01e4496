//! Owns `sign`: turns a `SignableRequest` into the exact request to send. It first builds the wire
//! form (query encoded the scheme's way, the scheme's headers added), then signs that wire form with
//! the same `schemes::*::stages` that `verify` runs, so what we send is what a verifier recomputes.

use crate::canonical::{header, sha256_hex, Stages};
use crate::encode::{form, join_query, rfc3986, url_path};
use crate::request::{Algorithm, IncomingRequest, SignableRequest, Signed, SigningParams};
use crate::schemes::{acs3, jdcloud, rpc, tc3};
use crate::secret::Credentials;
use crate::time::{self, Format};

/// Why a request could not be signed. Never contains the secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignError {
    #[error("time {0} (unix seconds) is outside the range that can be signed")]
    BadTime(i64),
    #[error("{field} must not be empty for {algorithm}")]
    MissingParam { algorithm: Algorithm, field: &'static str },
    #[error("host {0:?} is not a valid host[:port]")]
    BadHost(String),
    #[error("header {name:?} is not a valid header name or has a line break in its value")]
    BadHeader { name: String },
}

/// Sign `req` with `creds` under `params` (algorithm, injected time and nonce, scope).
pub fn sign(req: &SignableRequest, creds: &Credentials, params: &SigningParams) -> Result<Signed, SignError> {
    check_input(req)?;
    let alg = params.algorithm;
    let need = |field: &'static str, value: &str| {
        if value.is_empty() {
            Err(SignError::MissingParam { algorithm: alg, field })
        } else {
            Ok(())
        }
    };
    if creds.access_key_id.is_empty() {
        return Err(SignError::MissingParam { algorithm: alg, field: "access_key_id" });
    }
    let secret = creds.secret.expose();
    let mut wire = IncomingRequest {
        method: req.method.clone(),
        path: if req.path.is_empty() { "/".to_owned() } else { url_path(&req.path) },
        raw_query: String::new(),
        headers: req.headers.clone(),
        body: req.body.clone(),
    };
    let put = |wire: &mut IncomingRequest, name: &str, value: String| {
        if header(&wire.headers, name).is_none() {
            wire.headers.push((name.to_owned(), value));
        }
    };

    let (stages, authorization): (Stages, Option<String>) = match alg {
        Algorithm::Tc3 => {
            need("service", &params.service)?;
            need("action", &params.action)?;
            need("version", &params.version)?;
            let date = time::format(params.time, Format::IsoDate).ok_or(SignError::BadTime(params.time))?;
            let timestamp = params.time.to_string();
            // The SDK sends GET parameters form-encoded (`urlencode`) and signs that string as is.
            wire.raw_query = join_query(&req.query, form);
            let default_ct = if req.method.eq_ignore_ascii_case("GET") {
                "application/x-www-form-urlencoded"
            } else {
                "application/json"
            };
            put(&mut wire, "Content-Type", default_ct.to_owned());
            put(&mut wire, "Host", req.host.clone());
            put(&mut wire, "X-TC-Action", params.action.clone());
            put(&mut wire, "X-TC-Timestamp", timestamp.clone());
            put(&mut wire, "X-TC-Version", params.version.clone());
            if !params.region.is_empty() {
                put(&mut wire, "X-TC-Region", params.region.clone());
            }
            if let Some(token) = &creds.security_token {
                put(&mut wire, "X-TC-Token", token.expose().to_owned());
            }
            // The SDK signs exactly these two, whatever else is sent.
            let signed = vec!["content-type".to_owned(), "host".to_owned()];
            let st =
                tc3::stages(&wire, &signed, &timestamp, &date, &params.service, secret).map_err(internal)?;
            let auth =
                tc3::authorization(&creds.access_key_id, &date, &params.service, &signed, &st.signature);
            (st, Some(auth))
        }
        Algorithm::Acs3 => {
            need("action", &params.action)?;
            need("version", &params.version)?;
            need("nonce", &params.nonce)?;
            let date =
                time::format(params.time, Format::IsoSeconds).ok_or(SignError::BadTime(params.time))?;
            wire.raw_query = join_query(&req.query, rfc3986);
            put(&mut wire, "host", req.host.clone());
            put(&mut wire, "x-acs-action", params.action.clone());
            put(&mut wire, "x-acs-version", params.version.clone());
            put(&mut wire, "x-acs-date", date);
            put(&mut wire, "x-acs-signature-nonce", params.nonce.clone());
            put(&mut wire, "x-acs-content-sha256", sha256_hex(&req.body));
            if !req.body.is_empty() {
                // RPC-style APIs (all of ECS) send form bodies; callers with JSON say so in `headers`.
                put(&mut wire, "content-type", "application/x-www-form-urlencoded".to_owned());
            }
            if let Some(token) = &creds.security_token {
                // Like the SDK: STS requests also name the key id in a (signed) header.
                put(&mut wire, "x-acs-accesskey-id", creds.access_key_id.clone());
                put(&mut wire, "x-acs-security-token", token.expose().to_owned());
            }
            // Like the SDK: every header present is signed.
            let signed = signed_names(&wire.headers, &["authorization"]);
            let st = acs3::stages(&wire, &signed, secret).map_err(internal)?;
            let auth = acs3::authorization(&creds.access_key_id, &signed, &st.signature);
            (st, Some(auth))
        }
        Algorithm::AlibabaRpcV2 => {
            need("action", &params.action)?;
            need("version", &params.version)?;
            need("nonce", &params.nonce)?;
            let ts = time::format(params.time, Format::IsoSeconds).ok_or(SignError::BadTime(params.time))?;
            let mut query = req.query.clone();
            let mut add = |k: &str, v: String| {
                if !query.iter().any(|(qk, _)| qk == k) {
                    query.push((k.to_owned(), v));
                }
            };
            add("Action", params.action.clone());
            add("Format", "JSON".to_owned());
            add("Version", params.version.clone());
            add("AccessKeyId", creds.access_key_id.clone());
            add("SignatureMethod", "HMAC-SHA1".to_owned());
            add("SignatureVersion", "1.0".to_owned());
            add("SignatureNonce", params.nonce.clone());
            add("Timestamp", ts);
            if let Some(token) = &creds.security_token {
                add("SecurityToken", token.expose().to_owned());
            }
            put(&mut wire, "host", req.host.clone());
            if !req.body.is_empty() {
                put(&mut wire, "content-type", "application/x-www-form-urlencoded".to_owned());
            }
            wire.raw_query = join_query(&query, rfc3986);
            let st = rpc::stages(&wire.method, &rpc::signed_params(&wire), secret);
            wire.raw_query.push_str(&format!("&Signature={}", rfc3986(&st.signature)));
            (st, None)
        }
        Algorithm::JdCloud3 | Algorithm::JdCloud2 => {
            need("region", &params.region)?;
            need("service", &params.service)?;
            need("nonce", &params.nonce)?;
            let v = if alg == Algorithm::JdCloud3 { jdcloud::Version::V3 } else { jdcloud::Version::V2 };
            let jd_date =
                time::format(params.time, Format::Compact).ok_or(SignError::BadTime(params.time))?;
            wire.raw_query = join_query(&req.query, rfc3986);
            put(&mut wire, "Host", req.host.clone());
            // The SDK sends this on every method, GET included.
            put(&mut wire, "Content-Type", "application/json".to_owned());
            if let Some(token) = &creds.security_token {
                put(&mut wire, "x-jdcloud-security-token", token.expose().to_owned());
            }
            // Like the SDKs: JDCLOUD2 always signs date and nonce; JDCLOUD3 signs the headers it is
            // given and adds date and nonce after signing (callers who want them signed pass them
            // in `headers`, as JD's own signer tests do).
            let signed = if v == jdcloud::Version::V3 {
                let signed = signed_names(&wire.headers, &jdcloud::UNSIGNED);
                put(&mut wire, "x-jdcloud-date", jd_date.clone());
                put(&mut wire, "x-jdcloud-nonce", params.nonce.clone());
                signed
            } else {
                put(&mut wire, "x-jdcloud-date", jd_date.clone());
                put(&mut wire, "x-jdcloud-nonce", params.nonce.clone());
                signed_names(&wire.headers, &jdcloud::UNSIGNED)
            };
            // A caller-given x-jdcloud-date wins, as in the SDK; the scope date follows it.
            let jd_date = header(&wire.headers, "x-jdcloud-date").unwrap_or(&jd_date).to_owned();
            let date = jd_date.trim().get(..8).unwrap_or_default().to_owned();
            let scope = jdcloud::Scope {
                jd_date: &jd_date,
                date: &date,
                region: &params.region,
                service: &params.service,
            };
            let st = jdcloud::stages(&wire, &signed, &scope, v, secret).map_err(internal)?;
            let auth = jdcloud::authorization(&creds.access_key_id, &scope, v, &signed, &st.signature);
            // Added after signing, like the SDK: informational, not covered by the signature.
            put(&mut wire, "x-jdcloud-content-sha256", sha256_hex(&req.body));
            (st, Some(auth))
        }
    };

    if let Some(auth) = &authorization {
        wire.headers.retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
        wire.headers.push(("Authorization".to_owned(), auth.clone()));
    }
    let mut url = format!("{}://{}{}", req.scheme, req.host, wire.path);
    if !wire.raw_query.is_empty() {
        url.push('?');
        url.push_str(&wire.raw_query);
    }
    Ok(Signed {
        algorithm: alg,
        method: wire.method,
        path: wire.path,
        canonical_request: stages.canonical_request,
        string_to_sign: stages.string_to_sign,
        signature: stages.signature,
        authorization,
        url,
        raw_query: wire.raw_query,
        headers: wire.headers,
        body: wire.body,
    })
}

/// Lower-case names of all headers but `except`, sorted and de-duplicated.
fn signed_names(headers: &[(String, String)], except: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = headers
        .iter()
        .map(|(k, _)| k.to_ascii_lowercase())
        .filter(|k| !except.contains(&k.as_str()))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn check_input(req: &SignableRequest) -> Result<(), SignError> {
    let host_ok = !req.host.is_empty()
        && req
            .host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']' | '_'));
    if !host_ok {
        return Err(SignError::BadHost(req.host.clone()));
    }
    for (name, value) in &req.headers {
        let name_ok = !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b':');
        if !name_ok || value.contains(['\r', '\n']) {
            return Err(SignError::BadHeader { name: name.clone() });
        }
    }
    Ok(())
}

/// Every header the signer lists was just added by it, so a missing one is a bug here.
fn internal(missing: String) -> SignError {
    SignError::BadHeader { name: missing }
}
