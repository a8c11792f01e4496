//! Reading ECS request parameters: every parameter arrives flattened in the query (or a form body)
//! and simkit unflattens it to JSON; this module coerces fields the way ECS does (bools as
//! `True`/`true`, numbers as strings, some lists as JSON strings such as `InstanceIds='["i-a"]'`)
//! and turns a bad or missing field into ECS's own error.

use gpuctl_simkit::params::{as_bool, as_i64, as_string};
use serde_json::Value;

use super::EcsError;
use crate::api::codes;

/// The parameters of one call.
pub struct Params<'a>(pub &'a Value);

impl Params<'_> {
    pub fn str(&self, name: &str) -> Option<String> {
        self.0.get(name).and_then(as_string).filter(|s| !s.is_empty())
    }

    /// Present even when empty (ModifyInstanceAutoReleaseTime: empty cancels).
    pub fn raw(&self, name: &str) -> Option<String> {
        self.0.get(name).and_then(as_string)
    }

    pub fn required(&self, name: &str) -> Result<String, EcsError> {
        self.str(name).ok_or_else(|| {
            EcsError::new(
                400,
                codes::MISSING_PARAMETER,
                format!("The input parameter \"{name}\" that is mandatory for processing this request is not supplied."),
            )
        })
    }

    pub fn bool(&self, name: &str) -> Result<bool, EcsError> {
        match self.0.get(name) {
            None => Ok(false),
            Some(v) => as_bool(v).ok_or_else(|| invalid(name, v)),
        }
    }

    pub fn int(&self, name: &str) -> Result<Option<i64>, EcsError> {
        match self.0.get(name) {
            None => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(v) => as_i64(v).map(Some).ok_or_else(|| invalid(name, v)),
        }
    }

    pub fn float(&self, name: &str) -> Result<Option<f64>, EcsError> {
        match self.0.get(name) {
            None => Ok(None),
            Some(v) => as_string(v).and_then(|s| s.parse().ok()).map(Some).ok_or_else(|| invalid(name, v)),
        }
    }

    /// A repeated list: `InstanceId.1=a&InstanceId.2=b` → `["a","b"]`.
    pub fn list(&self, name: &str) -> Vec<String> {
        match self.0.get(name) {
            Some(Value::Array(items)) => items.iter().filter_map(as_string).collect(),
            Some(v) => as_string(v).into_iter().collect(),
            None => Vec::new(),
        }
    }

    /// A list sent as a JSON string: `InstanceIds='["i-a","i-b"]'`.
    pub fn json_list(&self, name: &str) -> Result<Option<Vec<String>>, EcsError> {
        let Some(raw) = self.str(name) else { return Ok(None) };
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

    /// `Tag.N.Key` / `Tag.N.Value` pairs, in N order.
    pub fn tags(&self, name: &str) -> Vec<(String, String)> {
        match self.0.get(name) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|t| {
                    let key = t.get("Key").and_then(as_string)?;
                    Some((key, t.get("Value").and_then(as_string).unwrap_or_default()))
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A nested struct (`SystemDisk.Category` → `SystemDisk`), or an empty object.
    pub fn child(&self, name: &str) -> Params<'_> {
        static EMPTY: Value = Value::Null;
        Params(self.0.get(name).unwrap_or(&EMPTY))
    }

    /// The array items of a repeated struct (`DataDisk.N.*`).
    pub fn items(&self, name: &str) -> Vec<Params<'_>> {
        match self.0.get(name) {
            Some(Value::Array(items)) => items.iter().map(Params).collect(),
            _ => Vec::new(),
        }
    }

    /// The parameters that define the call for ClientToken comparison: everything except the
    /// token, DryRun and the legacy-signature bookkeeping (which differ between honest retries).
    pub fn fingerprint(&self) -> Value {
        const VARYING: &[&str] = &[
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
        match self.0 {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| !VARYING.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

pub fn invalid(name: &str, v: &Value) -> EcsError {
    EcsError::new(
        400,
        codes::INVALID_PARAMETER,
        format!(
            "The specified parameter \"{name}\" is not valid: {}.",
            as_string(v).unwrap_or_else(|| v.to_string())
        ),
    )
}
