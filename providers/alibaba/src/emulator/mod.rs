//! The local cloud's Alibaba ECS: routes RPC-style calls (`x-acs-action` header with ACS3 signing,
//! or the `Action` parameter with the legacy HMAC-SHA1 `Signature`), verifies the signature through
//! simkit, runs the operation against [`state::EcsState`] and renders ECS's JSON and error shapes.

mod ops;
mod params;
pub mod state;

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use gpuctl_simkit::auth::{self, AuthError, Scheme};
use gpuctl_simkit::params::unflatten;
use gpuctl_simkit::{Emulator, SimCtx, SimRequest, SimResponse};
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use crate::api::{codes, ErrorBody};
use state::{EcsState, Timings};

pub(crate) const PROVIDER: &str = "alibaba";

/// ECS refuses requests signed more than 15 minutes away from its clock.
const MAX_SKEW: SignedDuration = SignedDuration::from_mins(15);

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

#[derive(Default)]
pub struct Ecs {
    state: Mutex<EcsState>,
    /// Signature nonces seen in the skew window (nonce → when), for `SignatureNonceUsed`.
    nonces: Mutex<BTreeMap<String, Timestamp>>,
    /// The sim time and boot timings of the last tick, so `/_sim/state` shows sim-clock statuses.
    last_tick: Mutex<Option<(Timestamp, Timings)>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Boot phases from the sim's boot time: the first 40% Pending, the rest Starting.
fn timings(ctx: &SimCtx) -> Timings {
    let boot = ctx.boot_time();
    let pending = boot * 2 / 5;
    Timings { pending, starting: boot - pending, ..Timings::default() }
}

impl Ecs {
    pub fn new() -> Self {
        Self::default()
    }

    fn render_error(&self, req: &SimRequest, ctx: &SimCtx, e: &EcsError) -> SimResponse {
        let body = ErrorBody {
            request_id: ctx.request_id().to_uppercase(),
            host_id: req.header("host").unwrap_or("ecs.aliyuncs.com").to_string(),
            code: e.code.clone(),
            message: e.message.clone(),
            recommend: format!("https://api.aliyun.com/troubleshoot?q={}&product=Ecs", e.code),
        };
        SimResponse::json(e.status, &serde_json::to_value(body).unwrap_or(Value::Null))
    }

    /// Check the signature; the signer's access key names the account (ClientTokens are per account).
    fn authenticate(&self, req: &SimRequest, ctx: &SimCtx, params: &Value) -> Result<String, EcsError> {
        let scheme = if req.header("authorization").is_some_and(|a| a.starts_with("ACS3-HMAC-SHA256")) {
            Scheme::Acs3
        } else if params.get("Signature").is_some() {
            Scheme::AcsRpc
        } else {
            return Err(EcsError::new(
                400,
                "MissingSignature",
                "The request is not signed: no Authorization header and no Signature parameter.",
            ));
        };
        let verified = auth::verify(scheme, req, ctx, PROVIDER, MAX_SKEW).map_err(|e| match e {
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
        })?;
        // Each nonce may be used once within the skew window.
        let nonce = req
            .header("x-acs-signature-nonce")
            .map(str::to_string)
            .or_else(|| params.get("SignatureNonce").and_then(Value::as_str).map(str::to_string));
        if let Some(nonce) = nonce {
            // Nonces live in the signature window, which is judged on the wall clock (as skew is).
            let now = Timestamp::now();
            let mut seen = lock(&self.nonces);
            seen.retain(|_, t| now.duration_since(*t) <= MAX_SKEW * 2);
            if seen.insert(nonce, now).is_some() {
                return Err(EcsError::new(
                    400,
                    codes::NONCE_USED,
                    "Specified signature nonce was used already.",
                ));
            }
        }
        Ok(verified.access_key)
    }

    fn dispatch(&self, account: &str, action: &str, params: &Value, ctx: &SimCtx) -> Result<Value, EcsError> {
        let c = ops::Call {
            p: params::Params(params),
            ctx,
            now: ctx.now(),
            timings: timings(ctx),
            account: account.to_string(),
        };
        let mut st = lock(&self.state);
        match action {
            "RunInstances" => ops::run_instances(&c, &mut st),
            "DescribeInstances" => ops::describe_instances(&c, &st),
            "DescribeInstanceStatus" => ops::describe_instance_status(&c, &st),
            "DeleteInstances" => ops::delete_instances(&c, &mut st),
            "DeleteInstance" => ops::delete_instance(&c, &mut st),
            "StopInstances" => ops::stop_instances(&c, &mut st, c.p.list("InstanceId")),
            "StopInstance" => ops::stop_instances(&c, &mut st, c.p.str("InstanceId").into_iter().collect()),
            "DescribePrice" => ops::describe_price(&c),
            "DescribeAvailableResource" => ops::describe_available_resource(&c),
            "DescribeDisks" => ops::describe_disks(&c, &st),
            "CreateSnapshot" => ops::create_snapshot(&c, &mut st),
            "DescribeSnapshots" => ops::describe_snapshots(&c, &st),
            "DeleteSnapshot" => ops::delete_snapshot(&c, &mut st),
            "CreateImage" => ops::create_image(&c, &mut st),
            "ModifyInstanceAutoReleaseTime" => ops::modify_instance_auto_release_time(&c, &mut st),
            "CreateAutoSnapshotPolicy" => ops::create_auto_snapshot_policy(&c, &mut st),
            "ApplyAutoSnapshotPolicy" => ops::apply_auto_snapshot_policy(&c, &mut st),
            other => Err(EcsError::new(
                404,
                codes::ACTION_NOT_FOUND,
                format!("Specified api \"{other}\" is not found in the local cloud's ECS, please check your url and method."),
            )),
        }
    }
}

/// ECS serves one API version; another one is refused as the gateway does.
fn check_version(req: &SimRequest, params: &Value) -> Result<(), EcsError> {
    let version = req.header("x-acs-version").or_else(|| params.get("Version").and_then(Value::as_str));
    match version {
        Some(v) if v != crate::api::API_VERSION => Err(EcsError::new(
            400,
            "InvalidVersion",
            format!(
                "Specified parameter Version \"{v}\" is not valid; ECS serves {}.",
                crate::api::API_VERSION
            ),
        )),
        _ => Ok(()),
    }
}

impl Emulator for Ecs {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn claims(&self, req: &SimRequest) -> bool {
        req.header("x-acs-action").is_some() || req.query_pairs().iter().any(|(k, _)| k == "Action")
    }

    fn action(&self, req: &SimRequest) -> String {
        req.header("x-acs-action")
            .map(str::to_string)
            .or_else(|| req.query_pairs().into_iter().find(|(k, _)| k == "Action").map(|(_, v)| v))
            .unwrap_or_default()
    }

    fn handle(&self, req: &SimRequest, ctx: &SimCtx) -> SimResponse {
        let params = unflatten(&req.form_params());
        let action = self.action(req);
        let result = self.authenticate(req, ctx, &params).and_then(|account| {
            check_version(req, &params)?;
            self.dispatch(&account, &action, &params, ctx)
        });
        match result {
            Ok(mut body) => {
                if let Value::Object(map) = &mut body {
                    map.insert("RequestId".into(), json!(ctx.request_id().to_uppercase()));
                }
                SimResponse::json(200, &body)
            }
            Err(e) => self.render_error(req, ctx, &e),
        }
    }

    fn throttled(&self, req: &SimRequest, ctx: &SimCtx) -> SimResponse {
        let e = EcsError::new(400, codes::THROTTLED, "Request was denied due to user flow control.");
        // The SDK turns a 4xx with x-acs-retry-after (milliseconds) into its ThrottlingException.
        self.render_error(req, ctx, &e).with_header("x-acs-retry-after", "1000")
    }

    fn server_error(&self, req: &SimRequest, ctx: &SimCtx, status: u16) -> SimResponse {
        let e = if status == 503 {
            EcsError::new(
                503,
                codes::SERVICE_UNAVAILABLE,
                "The request has failed due to a temporary failure of the server.",
            )
        } else {
            EcsError::new(
                status,
                codes::INTERNAL_ERROR,
                "The request processing has failed due to some unknown error, exception or failure.",
            )
        };
        self.render_error(req, ctx, &e)
    }

    fn state(&self) -> Value {
        let (now, t) = lock(&self.last_tick).unwrap_or_else(|| (Timestamp::now(), Timings::default()));
        ops::state_json(&lock(&self.state), now, &t)
    }

    fn reset(&self) {
        *lock(&self.state) = EcsState::default();
        lock(&self.nonces).clear();
        *lock(&self.last_tick) = None;
    }

    fn tick(&self, ctx: &SimCtx) {
        let now = ctx.now();
        *lock(&self.last_tick) = Some((now, timings(ctx)));
        lock(&self.state).tick(now, &mut |prefix| ctx.new_id(prefix, 20));
    }
}

#[cfg(test)]
mod tests;
