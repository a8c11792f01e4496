//! Alibaba Cloud legacy RPC signature (V2): HMAC-SHA1 over `METHOD&%2F&encode(sorted params)`,
//! base64, in the `Signature` parameter (SDK: alibabacloud_tea_openapi/utils.py `get_rpcsignature`).
//! Parameters come from the query and, for form bodies, from the body.

use base64::Engine;
use hmac::{Hmac, Mac};
use sha1::Sha1;

use crate::canonical::{header, Stages};
use crate::encode::{parse_query, rfc3986};
use crate::request::IncomingRequest;

/// Every signed parameter (query, then form body; a later key wins like the SDK's dict merge),
/// without `Signature`, sorted by key.
pub(crate) fn signed_params(wire: &IncomingRequest) -> Vec<(String, String)> {
    let mut all = parse_query(&wire.raw_query);
    let is_form = header(&wire.headers, "content-type").is_some_and(|ct| {
        ct.trim_start().to_ascii_lowercase().starts_with("application/x-www-form-urlencoded")
    });
    if is_form {
        all.extend(parse_query(&String::from_utf8_lossy(&wire.body)));
    }
    let mut unique: std::collections::BTreeMap<String, String> = Default::default();
    for (k, v) in all {
        if k != "Signature" {
            unique.insert(k, v);
        }
    }
    unique.into_iter().collect()
}

pub(crate) fn stages(method: &str, params: &[(String, String)], secret: &str) -> Stages {
    let canonical_request =
        params.iter().map(|(k, v)| format!("{}={}", rfc3986(k), rfc3986(v))).collect::<Vec<_>>().join("&");
    // `quote_plus(s, safe='~')` of an already-encoded string equals `rfc3986(s)`: it has no spaces.
    let string_to_sign = format!("{method}&%2F&{}", rfc3986(&canonical_request));
    let mut mac =
        Hmac::<Sha1>::new_from_slice(format!("{secret}&").as_bytes()).expect("HMAC takes any key length");
    mac.update(string_to_sign.as_bytes());
    let signature = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    Stages { canonical_request, string_to_sign, signature }
}
