//! The local cloud's JD Cloud: routes `/v1/regions/{region}/...` paths (with `:verb` custom
//! actions) to the vm, disk, billing, renewal, vpc and zfs operations, verifies JDCLOUD3 or JDCLOUD2 signatures
//! through simkit (the scope's service and region must match the route), and answers with JD's
//! `{"requestId", "result"}` / `{"requestId", "error": {code, status, message}}` shapes.

//!
//! This module claims, authenticates and dispatches; `route` is the path table, `state` the model
//! with its `tick`, `ops/` one file per service (vm, disk, billing, renewal, vpc, zfs), `error` JD's error and its
//! rendering.

mod error;
mod ops;
mod route;
pub mod state;

use std::sync::{LazyLock, Mutex};

use gpuctl_simkit::auth::{self, AuthError, Scheme};
use gpuctl_simkit::params::unflatten;
use gpuctl_simkit::validate::{Input, Schema};
use gpuctl_simkit::{lock, Emulator, NonceStore, Provider, SimCtx, SimRequest, SimResponse};
use jiff::SignedDuration;
use serde_json::Value;

use crate::api::status;
use error::render;
pub use error::JdError;
use ops::{bill, billing, disk, image, keypair, leftover, monitor, renewal, vm, vpc, zfs};
pub use route::{route, Route};
use state::JdState;

pub(crate) const PROVIDER: Provider = Provider::JdCloud;

/// *unverified*: JD does not publish its signing-time window; 5 minutes, as Tencent's.
const MAX_SKEW: SignedDuration = SignedDuration::from_mins(5);

#[derive(Default)]
pub struct JdCloud {
    state: Mutex<JdState>,
    /// `x-jdcloud-nonce` values seen in the skew window: a replayed request is refused.
    nonces: NonceStore,
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
            if !self.nonces.first_use(nonce, MAX_SKEW) {
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
            "createInstances" => vm::create_instances(&c, &mut st),
            "describeInstances" => vm::describe_instances(&c, &st),
            "describeInstance" => vm::describe_instance(&c, &st),
            "describeInstancesCustomData" => vm::describe_instances_custom_data(&c, &st),
            "deleteInstance" => vm::delete_instance(&c, &mut st),
            "describeInstanceTypes" => vm::describe_instance_types(&c, &st),
            "modifyInstanceReleaseTime" => vm::modify_instance_release_time(&c, &mut st),
            "createImage" => vm::create_image(&c, &mut st),
            "describeImages" => image::describe_images(&c, &st),
            "importKeypair" => keypair::import_keypair(&c, &mut st),
            "describeKeypairs" => keypair::describe_keypairs(&c, &st),
            "createSnapshot" => disk::create_snapshot(&c, &mut st),
            "describeSnapshots" => disk::describe_snapshots(&c, &st),
            "deleteSnapshot" => disk::delete_snapshot(&c, &mut st),
            "describeDisks" => leftover::describe_disks(&c, &st),
            "deleteDisk" => leftover::delete_disk(&c, &mut st),
            "describeElasticIps" => leftover::describe_elastic_ips(&c, &st),
            "deleteElasticIp" => leftover::delete_elastic_ip(&c, &mut st),
            "createSnapshotPolicy" => disk::create_snapshot_policy(&c, &mut st),
            "applySnapshotPolicies" => disk::apply_snapshot_policies(&c, &mut st),
            "calculateTotalPrice" => billing::calculate_total_price(&c),
            "queryBillDetail" => bill::query_bill_detail(&c, &st),
            "setRenewal" => renewal::set_renewal(&c, &mut st),
            "describeMetricData" => monitor::describe_metric_data(&c, &st),
            "createVpc" => vpc::create_vpc(&c, &mut st),
            "describeVpcs" => vpc::describe_vpcs(&c, &st),
            "deleteVpc" => vpc::delete_vpc(&c, &mut st),
            "createSubnet" => vpc::create_subnet(&c, &mut st),
            "describeSubnets" => vpc::describe_subnets(&c, &st),
            "deleteSubnet" => vpc::delete_subnet(&c, &mut st),
            "createNetworkSecurityGroup" => vpc::create_network_security_group(&c, &mut st),
            "describeNetworkSecurityGroups" => vpc::describe_network_security_groups(&c, &st),
            "describeNetworkSecurityGroup" => vpc::describe_network_security_group(&c, &st),
            "addNetworkSecurityGroupRules" => vpc::add_network_security_group_rules(&c, &mut st),
            "deleteNetworkSecurityGroup" => vpc::delete_network_security_group(&c, &mut st),
            "createFileSystem" => zfs::create_file_system(&c, &mut st),
            "describeFileSystems" => zfs::describe_file_systems(&c, &st),
            "describeFileSystem" => zfs::describe_file_system(&c, &st),
            "deleteFileSystem" => zfs::delete_file_system(&c, &mut st),
            "createMountTarget" => zfs::create_mount_target(&c, &mut st),
            "describeMountTargets" => zfs::describe_mount_targets(&c, &st),
            "deleteMountTarget" => zfs::delete_mount_target(&c, &mut st),
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

/// The schema the emulator holds every request to: `contract/schema/jdcloud.json`, generated by
/// `contract/gen.py` from jdcloud_sdk 1.6.354's request classes and models
/// (`jdcloud_sdk/services/{vm,disk,billing,renewal,vpc,zfs}/apis/*Request.py`, `.../models/*.py`) plus
/// `contract/rules.json`, and diffed against a fresh generation in CI (scripts/test.d/45-contract.sh).
pub(crate) static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    Schema::parse(include_str!("../../../../contract/schema/jdcloud.json"))
        .unwrap_or_else(|e| panic!("contract/schema/jdcloud.json (a committed, generated file): {e}"))
});

/// The path's parameters by the names the request class gives them: `regionId` and the id the
/// schema's path template names (`/v1/regions/{regionId}/instances/{instanceId}`). They are
/// parameters of the request class like the others (its `*Parameters` constructor takes them; the
/// SDK's parameterbuilder moves them into the path), so the validator sees them as such.
fn path_params(spec: &Value, route: &Route) -> Vec<(String, String)> {
    let mut out = vec![("regionId".to_string(), route.region.clone())];
    let template = spec.get("path").and_then(Value::as_str).unwrap_or("");
    let id_name = template
        .split('{')
        .skip(1)
        .filter_map(|s| s.split_once('}'))
        .map(|(n, _)| n)
        .find(|n| *n != "regionId");
    if let (Some(name), Some(id)) = (id_name, &route.id) {
        out.push((name.to_string(), id.clone()));
    }
    out
}

/// Refuse what the request class forbids (issue 12), after auth and before the operation runs.
/// GET/DELETE parameters are flattened from 1 (`filters.1.values.1`: jdcloud_sdk's
/// parameterbuilder `WithoutBodyBuilder`); the others are the JSON body.
fn check_definition(req: &SimRequest, route: &Route, params: &Value) -> Result<(), JdError> {
    let Some(spec) = SCHEMA.action(route.action) else { return Ok(()) };
    let from_path = path_params(spec, route);
    let refusal = if matches!(req.method.as_str(), "GET" | "DELETE" | "HEAD") {
        let mut pairs = req.query_pairs();
        pairs.extend(from_path);
        SCHEMA.refusal(route.action, Input::Flat { pairs: &pairs, base: 1 })
    } else {
        let mut tree = params.clone();
        let Value::Object(map) = &mut tree else {
            return Err(JdError::new(status::INVALID_ARGUMENT, "the request body is not a JSON object"));
        };
        for (k, v) in from_path {
            match map.get(&k) {
                Some(Value::String(b)) if *b != v => {
                    return Err(JdError::new(
                        status::INVALID_ARGUMENT,
                        format!("{k}: the body says {b}, the path {v}"),
                    ))
                }
                // Present in the body too: the validator judges its type.
                Some(b) if !b.is_null() => {}
                _ => {
                    map.insert(k, Value::String(v));
                }
            }
        }
        SCHEMA.refusal(route.action, Input::Json(&tree))
    };
    match refusal {
        Some(v) => Err(error::violation(&v)),
        None => Ok(()),
    }
}

impl Emulator for JdCloud {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn claims(&self, req: &SimRequest) -> bool {
        req.path.starts_with("/v1/regions/") || req.path.starts_with("/v2/regions/")
    }

    fn action(&self, req: &SimRequest) -> String {
        route(&req.method, &req.path).map(|r| r.action.to_string()).unwrap_or_default()
    }

    fn handle(&self, req: &SimRequest, ctx: &SimCtx) -> SimResponse {
        let Some(route) = route(&req.method, &req.path) else {
            return render(
                ctx,
                Err(JdError::new(
                    status::NOT_FOUND,
                    format!("{} {} is not a JD Cloud API the local cloud serves", req.method, req.path),
                )),
            );
        };
        let result = self.authenticate(req, ctx, &route).and_then(|account| {
            let params = Self::params(req)?;
            check_definition(req, &route, &params)?;
            self.dispatch(&account, &route, &params, ctx)
        });
        render(ctx, result)
    }

    fn throttled(&self, _req: &SimRequest, ctx: &SimCtx) -> SimResponse {
        render(ctx, Err(JdError::new(status::RATE_LIMIT, "request rate exceeds the limit; retry later")))
    }

    fn server_error(&self, _req: &SimRequest, ctx: &SimCtx, code: u16) -> SimResponse {
        let e = match code {
            503 => JdError::new(status::UNAVAILABLE, "service temporarily unavailable"),
            502 => JdError::new((502, "SOURCE_UNAVAILABLE"), "upstream service unavailable"),
            c => JdError { code: c, status: "INTERNAL", message: "internal error".into() },
        };
        render(ctx, Err(e))
    }

    fn state(&self, ctx: &SimCtx) -> Value {
        ops::state_json(&lock(&self.state), ctx.now(), ctx.boot_time())
    }

    fn reset(&self) {
        *lock(&self.state) = JdState::default();
        self.nonces.clear();
    }

    fn tick(&self, ctx: &SimCtx) {
        lock(&self.state).tick(ctx.now(), ctx.boot_time(), &mut |prefix| ctx.new_id(prefix, 10));
    }

    fn point_public_address(&self, instance_id: &str, address: &str) -> Result<bool, String> {
        let mut st = lock(&self.state);
        let st = &mut *st;
        if !st.instances.contains_key(instance_id) {
            return Ok(false);
        }
        // JD's public address is the elastic IP bound to the instance (its own resource).
        let Some(eip) = st.elastic_ips.values_mut().find(|e| e.instance_id.as_deref() == Some(instance_id))
        else {
            return Err(format!(
                "{instance_id} has no elastic IP bound (created without instanceSpec.elasticIp)"
            ));
        };
        st.addresses.release(&eip.address);
        eip.address = address.to_string();
        Ok(true)
    }

    fn set_gpu_usage(&self, instance_id: &str, from: jiff::Timestamp, percent: f64) -> Result<bool, String> {
        let mut st = lock(&self.state);
        if !st.instances.contains_key(instance_id) {
            return Ok(false);
        }
        st.gpu.set(instance_id, from, percent);
        Ok(true)
    }

    fn plant(&self, p: &gpuctl_simkit::Plant, ctx: &SimCtx) -> Result<String, String> {
        leftover::plant(&mut lock(&self.state), p, ctx)
    }
}

#[cfg(test)]
mod tests;
