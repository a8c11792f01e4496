//! Owns the public data types of both directions: what a client asks to sign
//! (`SignableRequest` + `SigningParams`), what it gets back (`Signed`), and what a server
//! received (`IncomingRequest`).

use serde::{Deserialize, Serialize};

/// The five signing schemes. `name()` is the string on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Algorithm {
    /// Tencent Cloud `TC3-HMAC-SHA256`.
    Tc3,
    /// Alibaba Cloud signature V3, `ACS3-HMAC-SHA256`.
    Acs3,
    /// Alibaba Cloud legacy RPC signature (V2): HMAC-SHA1 in the `Signature` query parameter.
    AlibabaRpcV2,
    /// JD Cloud `JDCLOUD3-HMAC-SHA256`, what JD's current official SDK sends (the default for JD).
    JdCloud3,
    /// JD Cloud `JDCLOUD2-HMAC-SHA256`, the scheme JD's public doc describes (SDK ≤ 1.6.93).
    JdCloud2,
}

impl Algorithm {
    pub const ALL: [Algorithm; 5] =
        [Algorithm::Tc3, Algorithm::Acs3, Algorithm::AlibabaRpcV2, Algorithm::JdCloud3, Algorithm::JdCloud2];

    /// The algorithm string as it appears on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Tc3 => "TC3-HMAC-SHA256",
            Algorithm::Acs3 => "ACS3-HMAC-SHA256",
            Algorithm::AlibabaRpcV2 => "HMAC-SHA1",
            Algorithm::JdCloud3 => "JDCLOUD3-HMAC-SHA256",
            Algorithm::JdCloud2 => "JDCLOUD2-HMAC-SHA256",
        }
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A request before signing. The query is given as decoded pairs (order kept, keys may repeat);
/// the signer encodes it the way the scheme's official SDK does and reports the result in
/// `Signed::url`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignableRequest {
    /// `GET`, `POST`, … (sent as given; the clouds expect upper case).
    pub method: String,
    /// `https` for real endpoints, `http` only for loopback (the local cloud).
    pub scheme: String,
    /// Host with a port when it is not the scheme's default, e.g. `127.0.0.1:8080`.
    pub host: String,
    /// Path as it goes on the wire (`/` for Tencent and Alibaba RPC-style APIs).
    pub path: String,
    pub query: Vec<(String, String)>,
    /// Extra headers to send; the scheme's own headers are added unless already given here.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Everything besides the request and the keys that a signature depends on. Time and nonce are
/// injected so that signing is a pure function (tests pin both).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SigningParams {
    pub algorithm: Algorithm,
    /// Unix seconds.
    pub time: i64,
    /// Alibaba `x-acs-signature-nonce` / `SignatureNonce`, JD `x-jdcloud-nonce`; unused by TC3.
    pub nonce: String,
    /// Tencent `X-TC-Region` (omitted when empty), JD scope region; unused by Alibaba.
    pub region: String,
    /// Scope service: Tencent `cvm`/`cbs`, JD `vm`/`disk`/`billing`; unused by Alibaba.
    pub service: String,
    /// `X-TC-Action` / `x-acs-action` / `Action`; unused by JD (the action is in the path).
    pub action: String,
    /// `X-TC-Version` / `x-acs-version` / `Version`; unused by JD (the version is in the path).
    pub version: String,
}

/// The signed request, ready to send: `method` + `url` + `headers` + `body`, plus every
/// intermediate stage for debugging (`gpuctl debug sign` prints them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signed {
    pub algorithm: Algorithm,
    pub method: String,
    /// The path as sent (characters a URL cannot hold raw are percent-encoded).
    pub path: String,
    pub canonical_request: String,
    pub string_to_sign: String,
    /// Hex (HMAC-SHA256 schemes) or base64 (Alibaba RPC).
    pub signature: String,
    /// The `Authorization` header value; `None` for Alibaba RPC, which signs in the query.
    pub authorization: Option<String>,
    /// Full URL with the query encoded exactly as it is sent.
    pub url: String,
    /// The query string exactly as sent (what follows `?` in `url`; empty if none).
    pub raw_query: String,
    /// Every header to send: the caller's, the scheme's, `Host`, `Content-Type`, `Authorization`.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Signed {
    /// A copy safe to print or log: every occurrence of `secret` (a session token travels in a
    /// header or, for Alibaba RPC, the query), raw or percent-encoded, becomes `******`.
    pub fn redacted(&self, secret: &crate::Secret) -> Signed {
        let raw = secret.expose();
        if raw.is_empty() {
            return self.clone();
        }
        // Raw, as sent in a query (%20 or +), and twice-encoded as in the RPC string to sign.
        let once = crate::encode::rfc3986(raw);
        let forms = [raw.to_owned(), crate::encode::rfc3986(&once), once, crate::encode::form(raw)];
        let hide = |s: &str| forms.iter().fold(s.to_owned(), |acc, f| acc.replace(f.as_str(), "******"));
        Signed {
            canonical_request: hide(&self.canonical_request),
            string_to_sign: hide(&self.string_to_sign),
            authorization: self.authorization.as_deref().map(hide),
            url: hide(&self.url),
            raw_query: hide(&self.raw_query),
            headers: self.headers.iter().map(|(k, v)| (k.clone(), hide(v))).collect(),
            ..self.clone()
        }
    }

    /// The request as the server will receive it (what `verify` takes).
    pub fn to_incoming(&self) -> IncomingRequest {
        IncomingRequest {
            method: self.method.clone(),
            path: self.path.clone(),
            raw_query: self.raw_query.clone(),
            headers: self.headers.clone(),
            body: self.body.clone(),
        }
    }
}

/// A request as a server received it: the path and query exactly as on the wire (not decoded).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncomingRequest {
    pub method: String,
    pub path: String,
    /// What follows `?`, undecoded; empty when there is none.
    pub raw_query: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}
