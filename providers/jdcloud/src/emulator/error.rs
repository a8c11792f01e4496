//! JD's error: an HTTP status code with its status word (`crate::api::status`), rendered as
//! `{"requestId", "error": {code, status, message}}`; successes as `{"requestId", "result"}`.

use gpuctl_simkit::validate::Violation;
use gpuctl_simkit::{ParamErrors, SimCtx, SimResponse};
use serde_json::{json, Value};

use crate::api::{status, ErrorBody, ErrorDetail};

/// A JD error answer (the request id is added when rendering).
#[derive(Clone, Debug, PartialEq)]
pub struct JdError {
    pub code: u16,
    pub status: &'static str,
    pub message: String,
}

impl JdError {
    pub fn new((code, status): (u16, &'static str), message: impl Into<String>) -> Self {
        Self { code, status, message: message.into() }
    }
}

/// Every bad parameter is `INVALID_ARGUMENT` (400) naming the field, as JD answers them.
impl ParamErrors for JdError {
    fn missing(name: &str) -> Self {
        JdError::new(status::INVALID_ARGUMENT, format!("{name} is required"))
    }

    fn invalid(name: &str, want: &str, got: &Value) -> Self {
        JdError::new(status::INVALID_ARGUMENT, format!("{name} must be {want}, got {got}"))
    }
}

/// A request that breaks its request class (simkit's validator, issue 12): JD answers every bad
/// parameter with HTTP 400 `INVALID_ARGUMENT` (JD Cloud's common error codes,
/// https://docs.jdcloud.com/cn/common-declaration/error-code), naming the field and what is wrong.
pub(crate) fn violation(v: &Violation) -> JdError {
    let name = if v.path.is_empty() { "request" } else { v.path.as_str() };
    JdError::new(status::INVALID_ARGUMENT, format!("{name}: {} ({})", v.what, v.source))
}

pub(crate) fn render(ctx: &SimCtx, result: Result<Value, JdError>) -> SimResponse {
    let request_id = ctx.request_id().replace('-', "");
    match result {
        Ok(result) => SimResponse::json(200, &json!({ "requestId": request_id, "result": result })),
        Err(e) => {
            let body = ErrorBody {
                request_id,
                error: ErrorDetail { code: e.code, status: e.status.to_string(), message: e.message },
            };
            SimResponse::json(e.code, &serde_json::to_value(body).unwrap_or(Value::Null))
        }
    }
}
