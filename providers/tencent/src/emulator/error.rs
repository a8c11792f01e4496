//! Tencent's error: a code from [`api::codes`] and a message, answered with HTTP 200 in the
//! `{"Response":{"Error":{"Code","Message"},"RequestId"}}` envelope (the common error shape,
//! https://www.tencentcloud.com/document/product/213/33281), and how auth and parameter failures
//! map onto its codes.

use gpuctl_simkit::auth::AuthError;
use gpuctl_simkit::validate::{Kind, Violation};
use gpuctl_simkit::{ParamErrors, SimCtx, SimResponse};
use serde_json::{json, Value};

use crate::api::{self, codes};

/// A Tencent error: a code from [`api::codes`] and a message for people.
#[derive(Debug, Clone, PartialEq)]
pub struct TcError {
    pub code: &'static str,
    pub message: String,
}

impl TcError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

pub(crate) type Result<T> = std::result::Result<T, TcError>;

/// A missing required parameter is `MissingParameter`, a wrong type or value
/// `InvalidParameterValue`, a number out of its documented range `InvalidParameterValue.Range`.
impl ParamErrors for TcError {
    fn missing(name: &str) -> Self {
        TcError::new(
            codes::MISSING_PARAMETER,
            format!("The request is missing a required parameter `{name}`."),
        )
    }

    fn invalid(name: &str, want: &str, _got: &Value) -> Self {
        TcError::new(codes::INVALID_PARAMETER_VALUE, format!("The parameter `{name}` must be {want}."))
    }

    fn out_of_range(name: &str, got: i64, min: i64, max: Option<i64>) -> Self {
        let message = match max {
            Some(max) => format!("The parameter `{name}` must be between {min} and {max}, not {got}."),
            None => format!("The parameter `{name}` must be ≥ {min}."),
        };
        TcError::new(codes::VALUE_RANGE, message)
    }
}

/// A request that breaks its action's definition (simkit's validator, issue 12), in Tencent's common
/// error codes (https://www.tencentcloud.com/document/api/213/33281; the same codes are in
/// tencentcloud-sdk-python-cvm 3.1.178 `tencentcloud/cvm/v20170312/errorcodes.py`: `UNKNOWNPARAMETER`,
/// `MISSINGPARAMETER`, `INVALIDPARAMETER`, `INVALIDPARAMETERVALUE`, `INVALIDPARAMETERVALUE_RANGE`,
/// `INVALIDPARAMETERVALUE_INVALIDTIMEFORMAT`): an undefined name is `UnknownParameter`, a missing one
/// `MissingParameter`, a malformed one (wrong type, bad flattened index) `InvalidParameter`, a value not
/// allowed `InvalidParameterValue`, out of range `InvalidParameterValue.Range`, a time in the wrong
/// format `InvalidParameterValue.InvalidTimeFormat` (the schema's formats are all times). CFS names its own
/// code for each enum of CreateCfsFileSystem (tencentcloud-sdk-python-cfs 3.1.178
/// `tencentcloud/cfs/v20190719/errorcodes.py`: 存储类型参数错误, 协议参数错误, 无效的网络类型), answered instead.
pub(crate) fn violation(action: &str, v: &Violation) -> TcError {
    let own = match (action, v.path.as_str()) {
        ("CreateCfsFileSystem", "StorageType") => Some(codes::CFS_INVALID_STORAGE_TYPE),
        ("CreateCfsFileSystem", "Protocol") => Some(codes::CFS_INVALID_PROTOCOL),
        ("CreateCfsFileSystem", "NetInterface") => Some(codes::CFS_INVALID_NET_INTERFACE),
        _ => None,
    };
    let code = match v.kind {
        Kind::Unknown => codes::UNKNOWN_PARAMETER,
        Kind::Missing => codes::MISSING_PARAMETER,
        Kind::WrongType | Kind::BadIndex => codes::INVALID_PARAMETER,
        Kind::NotAllowed => own.unwrap_or(codes::INVALID_PARAMETER_VALUE),
        Kind::Deprecated => codes::INVALID_PARAMETER_VALUE,
        Kind::OutOfRange => codes::VALUE_RANGE,
        Kind::BadFormat => codes::INVALID_TIME_FORMAT,
    };
    let name = if v.path.is_empty() { "the request" } else { v.path.as_str() };
    TcError::new(code, format!("The parameter `{name}` {}.", v.what))
}

pub(crate) fn auth_error(e: AuthError) -> TcError {
    match e {
        AuthError::Missing => TcError::new(codes::AUTH_INVALID_AUTHORIZATION, "The Authorization header is missing."),
        AuthError::Malformed(d) => TcError::new(codes::AUTH_INVALID_AUTHORIZATION, format!("The Authorization header is invalid: {d}.")),
        AuthError::Unsupported(_) => TcError::new(codes::AUTH_INVALID_AUTHORIZATION, "Only TC3-HMAC-SHA256 signatures are accepted."),
        AuthError::UnknownKey(ak) => TcError::new(codes::AUTH_SECRET_ID_NOT_FOUND, format!("The SecretId `{ak}` is not found.")),
        AuthError::Expired { skew_seconds } => TcError::new(
            codes::AUTH_SIGNATURE_EXPIRE,
            format!("Signature expired: the request timestamp is {skew_seconds}s away from the server time (limit {}s).", api::MAX_SKEW_SECS),
        ),
        AuthError::Scope(d) => TcError::new(codes::AUTH_SIGNATURE_FAILURE, format!("The credential scope is invalid: {d}.")),
        AuthError::Mismatch => TcError::new(
            codes::AUTH_SIGNATURE_FAILURE,
            "The provided credentials could not be validated. Please check your signature is correct.",
        ),
    }
}

pub(crate) fn envelope(ctx: &SimCtx, result: Result<Value>) -> SimResponse {
    let request_id = ctx.request_id();
    let mut body = match result {
        Ok(Value::Object(m)) => m,
        Ok(_) => serde_json::Map::new(),
        Err(e) => {
            let mut m = serde_json::Map::new();
            m.insert("Error".into(), json!({ "Code": e.code, "Message": e.message }));
            m
        }
    };
    body.insert("RequestId".into(), Value::String(request_id));
    SimResponse::json(200, &json!({ "Response": body }))
}
