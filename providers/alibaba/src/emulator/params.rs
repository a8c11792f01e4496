//! Reading ECS request parameters over simkit's reader: every parameter arrives flattened in the
//! query (or a form body) and simkit unflattens it to JSON and reads it with ECS's errors (see
//! `error.rs`'s `ParamErrors`: bools as `True`/`true`, numbers as strings, an empty value as unset).
//! What is ECS's own lives here: lists sent as JSON strings (`InstanceIds='["i-a"]'`), `Tag.N.Key`
//! pairs, and which parameters an honest ClientToken retry may change.

use gpuctl_simkit::params::as_string;
use serde_json::Value;

use super::error::EcsError;

/// The parameters of one call (or a nested struct of them), read with ECS's errors.
pub type Params<'a> = gpuctl_simkit::Params<'a, EcsError>;

/// What differs between honest retries of one ClientToken request, so is left out of its
/// fingerprint: the token, DryRun and the legacy-signature bookkeeping.
pub const TOKEN_VARYING: &[&str] = &[
    "ClientToken",
    "DryRun",
    "Action",
    "Version",
    "Format",
    "AccessKeyId",
    "Signature",
    "SignatureMethod",
    "SignatureVersion",
    "SignatureNonce",
    "Timestamp",
    "SecurityToken",
];

/// ECS's own parameter shapes.
pub trait EcsParams {
    /// A list sent as a JSON string: `InstanceIds='["i-a","i-b"]'`.
    fn json_list(&self, name: &str) -> Result<Option<Vec<String>>, EcsError>;

    /// `Tag.N.Key` / `Tag.N.Value` pairs, in N order.
    fn tags(&self, name: &str) -> Vec<(String, String)>;
}

impl EcsParams for Params<'_> {
    fn json_list(&self, name: &str) -> Result<Option<Vec<String>>, EcsError> {
        let Some(raw) = self.text(name) else { return Ok(None) };
        let parsed: Result<Vec<Value>, _> = serde_json::from_str(&raw);
        match parsed {
            Ok(items) => Ok(Some(items.iter().filter_map(as_string).collect())),
            Err(_) => Err(EcsError::new(
                400,
                &format!("Invalid{name}.Malformed"),
                format!("The specified parameter \"{name}\" is not valid: expected a JSON array such as [\"a\",\"b\"]."),
            )),
        }
    }

    fn tags(&self, name: &str) -> Vec<(String, String)> {
        self.items(name)
            .iter()
            .filter_map(|t| Some((t.raw_text("Key")?, t.raw_text("Value").unwrap_or_default())))
            .collect()
    }
}
