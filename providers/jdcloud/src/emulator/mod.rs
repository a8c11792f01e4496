//! The local cloud's JD Cloud: routes `/v1/regions/{region}/...` paths (with `:verb` custom
//! actions) to the vm, disk and billing operations, verifies JDCLOUD3 or JDCLOUD2 signatures
//! through simkit (the scope's service and region must match the route), and answers with JD's
//! `{"requestId", "result"}` / `{"requestId", "error": {code, status, message}}` shapes.

mod ops;
pub mod state;

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use gpuctl_simkit::auth::{self, AuthError, Scheme};
use gpuctl_simkit::params::unflatten;
use gpuctl_simkit::{Emulator, SimCtx, SimRequest, SimResponse};
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use crate::api::{status, ErrorBody, ErrorDetail};
use state::JdState;

pub(crate) const PROVIDER: &str = "jdcloud";

/// *unverified*: JD does not publish its signing-time window; 5 minutes, as Tencent's.
const MAX_SKEW: SignedDuration = SignedDuration::from_mins(5);

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

/// One routed call: which operation, for which service, region and path id.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub action: &'static str,
    pub service: &'static str,
    pub region: String,
    pub id: Option<String>,
}

/// Match method + path against the operations the emulator serves.
pub fn route(method: &str, path: &str) -> Option<Route> {
    let path = percent_encoding::percent_decode_str(path).decode_utf8_lossy().into_owned();
    let rest = path.strip_prefix("/v1/regions/")?;
    let (region, tail) = rest.split_once('/')?;
    let segs: Vec<&str> = tail.split('/').collect();
    let (action, service, id) = match (method, segs.as_slice()) {
        ("POST", ["instances"]) => ("createInstances", "vm", None),
        ("GET", ["instances"]) => ("describeInstances", "vm", None),
        ("GET", ["instances", id]) => ("describeInstance", "vm", Some(*id)),
        ("DELETE", ["instances", id]) => ("deleteInstance", "vm", Some(*id)),
        ("GET", ["instanceTypes"]) => ("describeInstanceTypes", "vm", None),
        ("POST", ["instances:modifyInstanceReleaseTime"]) => ("modifyInstanceReleaseTime", "vm", None),
        ("POST", ["instances", id]) if id.ends_with(":createImage") => {
            ("createImage", "vm", Some(id.trim_end_matches(":createImage")))
        }
        ("POST", ["snapshots"]) => ("createSnapshot", "disk", None),
        ("GET", ["snapshots"]) => ("describeSnapshots", "disk", None),
        ("DELETE", ["snapshots", id]) => ("deleteSnapshot", "disk", Some(*id)),
        ("POST", ["snapshotPolicy"]) => ("createSnapshotPolicy", "disk", None),
        ("POST", ["snapshotPolicies:apply"]) => ("applySnapshotPolicies", "disk", None),
        ("POST", ["calculateTotalPrice"]) => ("calculateTotalPrice", "billing", None),
        _ => return None,
    };
    Some(Route { action, service, region: region.to_string(), id: id.map(str::to_string) })
}

#[derive(Default)]
pub struct JdCloud {
    state: Mutex<JdState>,
    /// `x-jdcloud-nonce` values seen in the skew window: a replayed request is refused.
    nonces: Mutex<BTreeMap<String, Timestamp>>,
    /// Sim time and boot time of the last tick, for `/_sim/state`.
    last_tick: Mutex<Option<(Timestamp, SignedDuration)>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl JdCloud {
    pub fn new() -> Self {
        Self::default()
    }

    /// Let only `n` more instances of this type in this az be created; later ones in the same
    /// createInstances fail (`error`, then deleted) — JD's documented partial success.
    pub fn limit_stock(&self, instance_type: &str, az: &str, n: u32) {
        lock(&self.state).available.insert((instance_type.to_string(), az.to_string()), n);
    }

    fn render(&self, ctx: &SimCtx, result: Result<Value, JdError>) -> SimResponse {
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

    /// Check the signature and its scope; the signer's access key names the account (clientTokens
    /// are per account).
    fn authenticate(&self, req: &SimRequest, ctx: &SimCtx, route: &Route) -> Result<String, JdError> {
        let unauthenticated = |msg: String| JdError::new(status::UNAUTHENTICATED, msg);
        let auth_header = req.header("authorization").unwrap_or("");
        let scheme = if auth_header.starts_with("JDCLOUD3-HMAC-SHA256") {
            Scheme::JdCloud3
        } else if auth_header.starts_with("JDCLOUD2-HMAC-SHA256") {
            Scheme::JdCloud2
        } else {
            return Err(unauthenticated(
                "the request is not signed with JDCLOUD3-HMAC-SHA256 or JDCLOUD2-HMAC-SHA256".into(),
            ));
        };
        let v = auth::verify(scheme, req, ctx, PROVIDER, MAX_SKEW).map_err(|e| match e {
            AuthError::UnknownKey(ak) => unauthenticated(format!("access key {ak} not found")),
            AuthError::Mismatch => unauthenticated("signature does not match".into()),
            AuthError::Expired { skew_seconds } => unauthenticated(format!(
                "x-jdcloud-date is {skew_seconds}s away from the server time (allowed: 300s)"
            )),
            other => unauthenticated(format!("invalid signature: {other}")),
        })?;
        if v.service.as_deref() != Some(route.service) {
            return Err(unauthenticated(format!(
                "credential scope service {} does not match {} ({} is a {} API)",
                v.service.as_deref().unwrap_or("(none)"),
                route.service,
                route.action,
                route.service
            )));
        }
        if v.region.as_deref() != Some(route.region.as_str()) {
            return Err(unauthenticated(format!(
                "credential scope region {} does not match the path's region {}",
                v.region.as_deref().unwrap_or("(none)"),
                route.region
            )));
        }
        if let Some(nonce) = req.header("x-jdcloud-nonce") {
            // Nonces live in the signature window, which is judged on the wall clock (as skew is).
            let now = Timestamp::now();
            let mut seen = lock(&self.nonces);
            seen.retain(|_, t| now.duration_since(*t) <= MAX_SKEW * 2);
            if seen.insert(nonce.to_string(), now).is_some() {
                return Err(unauthenticated(format!("x-jdcloud-nonce {nonce} was already used")));
            }
        }
        Ok(v.access_key)
    }

    fn dispatch(&self, account: &str, route: &Route, params: &Value, ctx: &SimCtx) -> Result<Value, JdError> {
        if !ctx.regions(PROVIDER).contains(&route.region) {
            return Err(JdError::new(
                status::INVALID_ARGUMENT,
                format!("regionId {} is not a JD Cloud region the local cloud serves", route.region),
            ));
        }
        let c = ops::Call {
            region: route.region.clone(),
            id: route.id.clone(),
            p: params,
            ctx,
            now: ctx.now(),
            boot: ctx.boot_time(),
            account: account.to_string(),
        };
        let mut st = lock(&self.state);
        match route.action {
            "createInstances" => ops::create_instances(&c, &mut st),
            "describeInstances" => ops::describe_instances(&c, &st),
            "describeInstance" => ops::describe_instance(&c, &st),
            "deleteInstance" => ops::delete_instance(&c, &mut st),
            "describeInstanceTypes" => ops::describe_instance_types(&c, &st),
            "modifyInstanceReleaseTime" => ops::modify_instance_release_time(&c, &mut st),
            "createImage" => ops::create_image(&c, &mut st),
            "createSnapshot" => ops::create_snapshot(&c, &mut st),
            "describeSnapshots" => ops::describe_snapshots(&c, &st),
            "deleteSnapshot" => ops::delete_snapshot(&c, &mut st),
            "createSnapshotPolicy" => ops::create_snapshot_policy(&c, &mut st),
            "applySnapshotPolicies" => ops::apply_snapshot_policies(&c, &mut st),
            "calculateTotalPrice" => ops::calculate_total_price(&c),
            other => Err(JdError::new(
                status::NOT_IMPLEMENTED,
                format!("{other} is not served by the local cloud"),
            )),
        }
    }

    /// GET/DELETE carry parameters in the query (`filters.1.values.1=...`); the others a JSON body.
    fn params(req: &SimRequest) -> Result<Value, JdError> {
        if matches!(req.method.as_str(), "GET" | "DELETE" | "HEAD") {
            return Ok(unflatten(&req.query_pairs()));
        }
        req.json_body()
            .map_err(|e| JdError::new(status::INVALID_ARGUMENT, format!("the request body is not JSON: {e}")))
    }
}

impl Emulator for JdCloud {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn claims(&self, req: &SimRequest) -> bool {
        req.path.starts_with("/v1/regions/")
    }

    fn action(&self, req: &SimRequest) -> String {
        route(&req.method, &req.path).map(|r| r.action.to_string()).unwrap_or_default()
    }

    fn handle(&self, req: &SimRequest, ctx: &SimCtx) -> SimResponse {
        let Some(route) = route(&req.method, &req.path) else {
            return self.render(
                ctx,
                Err(JdError::new(
                    status::NOT_FOUND,
                    format!("{} {} is not a JD Cloud API the local cloud serves", req.method, req.path),
                )),
            );
        };
        let result = self.authenticate(req, ctx, &route).and_then(|account| {
            let params = Self::params(req)?;
            self.dispatch(&account, &route, &params, ctx)
        });
        self.render(ctx, result)
    }

    fn throttled(&self, _req: &SimRequest, ctx: &SimCtx) -> SimResponse {
        self.render(ctx, Err(JdError::new(status::RATE_LIMIT, "request rate exceeds the limit; retry later")))
    }

    fn server_error(&self, _req: &SimRequest, ctx: &SimCtx, code: u16) -> SimResponse {
        let e = match code {
            503 => JdError::new(status::UNAVAILABLE, "service temporarily unavailable"),
            502 => JdError::new((502, "SOURCE_UNAVAILABLE"), "upstream service unavailable"),
            c => JdError { code: c, status: "INTERNAL", message: "internal error".into() },
        };
        self.render(ctx, Err(e))
    }

    fn state(&self) -> Value {
        let (now, boot) =
            lock(&self.last_tick).unwrap_or_else(|| (Timestamp::now(), SignedDuration::from_secs(3)));
        ops::state_json(&lock(&self.state), now, boot)
    }

    fn reset(&self) {
        *lock(&self.state) = JdState::default();
        lock(&self.nonces).clear();
        *lock(&self.last_tick) = None;
    }

    fn tick(&self, ctx: &SimCtx) {
        let (now, boot) = (ctx.now(), ctx.boot_time());
        *lock(&self.last_tick) = Some((now, boot));
        lock(&self.state).tick(now, boot, &mut |prefix| ctx.new_id(prefix, 10));
    }
}

#[cfg(test)]
mod tests;
