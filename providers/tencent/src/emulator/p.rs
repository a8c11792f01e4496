//! Tencent's reading of request parameters, over simkit's reader: a missing required parameter is
//! `MissingParameter`, a wrong type or value `InvalidParameterValue` naming the field (see
//! [`super::error`]'s `ParamErrors`), paging is `Offset`/`Limit` with Tencent's defaults and bounds,
//! and `Filters: [{Name, Values}]` is checked against the names each API documents.

use gpuctl_simkit::{Params, Window};
use serde_json::Value;

use super::error::{Result, TcError};
use crate::api::codes;

/// The parameters (or a nested struct of them) with Tencent's errors.
pub(crate) type P<'a> = Params<'a, TcError>;

pub(crate) fn p(v: &Value) -> P<'_> {
    Params::new(v)
}

/// `Offset`/`Limit` paging: defaults 0 / 20, Limit at most 100 (DescribeInstances' documented
/// range, tencentcloud-sdk-python-cvm 3.1.178 `DescribeInstancesRequest`); out of range is an error.
pub(crate) fn page(v: &P) -> Result<Window> {
    v.offset_limit(("Offset", "Limit"), 20, 100)
}

/// `Filters: [{Name, Values}]` as (name, values); `allowed` names the filters this API knows.
pub(crate) fn filters(v: &P, allowed: &[&str]) -> Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for f in v.obj_list("Filters")? {
        let name = f.req_str("Name")?;
        let values = f.str_list("Values")?;
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
