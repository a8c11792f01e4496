//! Reading Tencent request parameters out of JSON with Tencent's errors: a missing required
//! parameter is `MissingParameter`, a wrong type or value `InvalidParameterValue`, naming the field.

use gpuctl_simkit::params::{as_bool, as_i64, as_string};
use serde_json::Value;

use super::{Result, TcError};
use crate::api::codes;

pub(crate) fn get<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    for seg in path.split('.') {
        cur = cur.get(seg)?;
    }
    (!cur.is_null()).then_some(cur)
}

pub(crate) fn opt_str(v: &Value, path: &str) -> Result<Option<String>> {
    match get(v, path) {
        None => Ok(None),
        Some(x) => as_string(x).map(Some).ok_or_else(|| invalid(path, "a string")),
    }
}

pub(crate) fn req_str(v: &Value, path: &str) -> Result<String> {
    opt_str(v, path)?.filter(|s| !s.is_empty()).ok_or_else(|| {
        TcError::new(
            codes::MISSING_PARAMETER,
            format!("The request is missing a required parameter `{path}`."),
        )
    })
}

pub(crate) fn opt_i64(v: &Value, path: &str) -> Result<Option<i64>> {
    match get(v, path) {
        None => Ok(None),
        Some(x) => as_i64(x).map(Some).ok_or_else(|| invalid(path, "an integer")),
    }
}

pub(crate) fn opt_f64(v: &Value, path: &str) -> Result<Option<f64>> {
    match get(v, path) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(Value::String(s)) => s.trim().parse().map(Some).map_err(|_| invalid(path, "a number")),
        Some(_) => Err(invalid(path, "a number")),
    }
}

pub(crate) fn opt_bool(v: &Value, path: &str) -> Result<Option<bool>> {
    match get(v, path) {
        None => Ok(None),
        Some(x) => as_bool(x).map(Some).ok_or_else(|| invalid(path, "a boolean")),
    }
}

/// An array of strings (absent → empty).
pub(crate) fn str_list(v: &Value, path: &str) -> Result<Vec<String>> {
    match get(v, path) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => {
            items.iter().map(|x| as_string(x).ok_or_else(|| invalid(path, "a list of strings"))).collect()
        }
        Some(_) => Err(invalid(path, "a list of strings")),
    }
}

/// An array of objects (absent → empty).
pub(crate) fn obj_list<'a>(v: &'a Value, path: &str) -> Result<Vec<&'a Value>> {
    match get(v, path) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) if items.iter().all(Value::is_object) => Ok(items.iter().collect()),
        Some(_) => Err(invalid(path, "a list of objects")),
    }
}

pub(crate) fn invalid(path: &str, want: &str) -> TcError {
    TcError::new(codes::INVALID_PARAMETER_VALUE, format!("The parameter `{path}` must be {want}."))
}

/// `Offset`/`Limit` paging with Tencent's defaults (0 / 20) and bounds (Limit ≤ 100).
pub(crate) fn page(v: &Value) -> Result<(usize, usize)> {
    let offset = opt_i64(v, "Offset")?.unwrap_or(0);
    let limit = opt_i64(v, "Limit")?.unwrap_or(20);
    if offset < 0 {
        return Err(TcError::new(codes::VALUE_RANGE, "The parameter `Offset` must be ≥ 0."));
    }
    if !(1..=100).contains(&limit) {
        return Err(TcError::new(
            codes::VALUE_RANGE,
            format!("The parameter `Limit` must be between 1 and 100, not {limit}."),
        ));
    }
    Ok((offset as usize, limit as usize))
}

/// `Filters: [{Name, Values}]` as (name, values); `allowed` names the filters this API knows.
pub(crate) fn filters(v: &Value, allowed: &[&str]) -> Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for f in obj_list(v, "Filters")? {
        let name = req_str(f, "Name")?;
        let values = str_list(f, "Values")?;
        let known =
            allowed.contains(&name.as_str()) || (allowed.contains(&"tag:") && name.starts_with("tag:"));
        if !known {
            return Err(TcError::new(
                codes::INVALID_FILTER,
                format!("The filter `{name}` is not supported here; supported: {}.", allowed.join(", ")),
            ));
        }
        out.push((name, values));
    }
    Ok(out)
}
