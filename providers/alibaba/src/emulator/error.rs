//! ECS's error: an HTTP status, a code and a message, rendered as the
//! `{RequestId, HostId, Code, Message, Recommend}` body (`crate::api::ErrorBody`), and how auth and
//! parameter failures map onto ECS's codes.

use gpuctl_simkit::auth::AuthError;
use gpuctl_simkit::params::as_string;
use gpuctl_simkit::validate::{Kind, Violation};
use gpuctl_simkit::{ParamErrors, SimCtx, SimRequest, SimResponse};
use serde_json::Value;

use crate::api::{codes, ErrorBody};

/// An ECS error answer: HTTP status, code and message (the request id is added when rendering).
#[derive(Clone, Debug, PartialEq)]
pub struct EcsError {
    pub status: u16,
    pub code: String,
    pub message: String,
}

impl EcsError {
    pub fn new(status: u16, code: &str, message: impl Into<String>) -> Self {
        Self { status, code: code.to_string(), message: message.into() }
    }
}

/// A missing parameter is `MissingParameter`, a bad one `InvalidParameter` quoting what arrived;
/// the gateway reads an empty value (`Period=`) as not given.
impl ParamErrors for EcsError {
    const EMPTY_IS_UNSET: bool = true;

    fn missing(name: &str) -> Self {
        EcsError::new(
            400,
            codes::MISSING_PARAMETER,
            format!("The input parameter \"{name}\" that is mandatory for processing this request is not supplied."),
        )
    }

    fn invalid(name: &str, _want: &str, got: &Value) -> Self {
        EcsError::new(
            400,
            codes::INVALID_PARAMETER,
            format!(
                "The specified parameter \"{name}\" is not valid: {}.",
                as_string(got).unwrap_or_else(|| got.to_string())
            ),
        )
    }
}

pub(crate) fn render_error(req: &SimRequest, ctx: &SimCtx, e: &EcsError) -> SimResponse {
    let body = ErrorBody {
        request_id: ctx.request_id().to_uppercase(),
        host_id: req.header("host").unwrap_or("ecs.aliyuncs.com").to_string(),
        code: e.code.clone(),
        message: e.message.clone(),
        recommend: format!("https://api.aliyun.com/troubleshoot?q={}&product=Ecs", e.code),
    };
    SimResponse::json(e.status, &serde_json::to_value(body).unwrap_or(Value::Null))
}

/// A request that breaks its action's request model (simkit's validator, issue 12), in ECS's codes:
/// HTTP 400 `MissingParameter` for a missing required parameter and `InvalidParameter` for anything
/// else the model forbids (an undefined name, a wrong type, a value not allowed, out of range, a bad
/// format), the two generic parameter codes of ECS's error center (https://api.aliyun.com/document/Ecs/2014-05-26/errorCode,
/// also the `MissingParameter`/`InvalidParameter` entries the ECS API docs list per action).
pub(crate) fn violation(v: &Violation) -> EcsError {
    let name = if v.path.is_empty() { "-" } else { v.path.as_str() };
    match v.kind {
        Kind::Missing => EcsError::new(
            400,
            codes::MISSING_PARAMETER,
            format!("The input parameter \"{name}\" that is mandatory for processing this request is not supplied."),
        ),
        // A term the Period/PeriodUnit rule does not allow keeps the code the operation's own check
        // (ops/instances.rs `prepaid_term`) has always answered, and the SDK conformance test expects.
        Kind::NotAllowed | Kind::OutOfRange if v.path == "Period" => EcsError::new(
            400,
            codes::INVALID_PERIOD,
            format!("The specified parameter \"Period\" is not valid: {} ({}).", v.what, v.source),
        ),
        _ => EcsError::new(
            400,
            codes::INVALID_PARAMETER,
            format!("The specified parameter \"{name}\" is not valid: {} ({}).", v.what, v.source),
        ),
    }
}

pub(crate) fn auth_error(e: AuthError) -> EcsError {
    match e {
        AuthError::UnknownKey(_) => EcsError::new(404, codes::INVALID_ACCESS_KEY_ID, "Specified access key is not found."),
        AuthError::Mismatch | AuthError::Scope(_) => {
            EcsError::new(400, codes::SIGNATURE_MISMATCH, "Specified signature is not matched with our calculation.")
        }
        AuthError::Expired { skew_seconds } => EcsError::new(
            400,
            codes::TIMESTAMP_EXPIRED,
            format!("Specified time stamp or date value is expired ({skew_seconds}s from the server time; the window is 15 minutes)."),
        ),
        AuthError::Missing | AuthError::Malformed(_) | AuthError::Unsupported(_) => {
            EcsError::new(400, "IncompleteSignature", format!("The request signature does not conform to Aliyun standards: {e}."))
        }
    }
}
