//! The local cloud's Alibaba ECS (and the VPC API's vSwitch listing): routes RPC-style calls (`x-acs-action` header with ACS3 signing,
//! or the `Action` parameter with the legacy HMAC-SHA1 `Signature`), verifies the signature through
//! simkit, runs the operation against [`state::EcsState`] and renders ECS's JSON and error shapes.

//!
//! This module claims, authenticates and routes; `state` is the model with its `tick`, `ops/` one
//! file per ECS resource, `error` ECS's error and its rendering, `params` ECS's parameter shapes.

mod error;
mod metadata;
mod ops;
mod params;
pub mod state;

use std::sync::{LazyLock, Mutex};

use gpuctl_simkit::auth::{self, Scheme};
use gpuctl_simkit::params::unflatten;
use gpuctl_simkit::validate::{Input, Schema};
use gpuctl_simkit::{lock, Emulator, NonceStore, Provider, SimCtx, SimRequest, SimResponse};
use jiff::SignedDuration;
use serde_json::{json, Value};

use crate::api::codes;
pub use error::EcsError;
use error::{auth_error, render_error};
use ops::{
    bss, cms, deployment_sets, disks, images, instances, keypairs, leftover, nas, policies, prices,
    snapshots, vpc,
};
use state::{EcsState, Timings};

pub(crate) const PROVIDER: Provider = Provider::Alibaba;

/// ECS refuses requests signed more than 15 minutes away from its clock.
const MAX_SKEW: SignedDuration = SignedDuration::from_mins(15);

#[derive(Default)]
pub struct Ecs {
    state: Mutex<EcsState>,
    /// Signature nonces seen in the skew window, for `SignatureNonceUsed`.
    nonces: NonceStore,
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
        let verified = auth::verify(scheme, req, ctx, PROVIDER, MAX_SKEW).map_err(auth_error)?;
        if let Some(session) = ctx.role_session(PROVIDER, &verified.access_key) {
            metadata::admit(&session, req, ctx, &self.action(req), params)?;
        }
        // Each nonce may be used once within the skew window.
        let nonce = req
            .header("x-acs-signature-nonce")
            .map(str::to_string)
            .or_else(|| params.get("SignatureNonce").and_then(Value::as_str).map(str::to_string));
        if let Some(nonce) = nonce {
            if !self.nonces.first_use(&nonce, MAX_SKEW) {
                return Err(EcsError::new(
                    400,
                    codes::NONCE_USED,
                    "Specified signature nonce was used already.",
                ));
            }
        }
        Ok(verified.access_key)
    }

    fn call<'a>(account: &str, params: &'a Value, ctx: &'a SimCtx) -> ops::Call<'a> {
        ops::Call {
            p: params::Params::new(params),
            ctx,
            now: ctx.now(),
            timings: timings(ctx),
            account: account.to_string(),
        }
    }

    /// The VPC API's operations (VPCs and vSwitches: see `ops/vpc.rs`).
    fn dispatch_vpc(
        &self,
        account: &str,
        action: &str,
        params: &Value,
        ctx: &SimCtx,
    ) -> Result<Value, EcsError> {
        let c = Self::call(account, params, ctx);
        let mut st = lock(&self.state);
        match action {
            "CreateVpc" => vpc::create_vpc(&c, &mut st),
            "DescribeVpcs" => vpc::describe_vpcs(&c, &st),
            "DeleteVpc" => vpc::delete_vpc(&c, &mut st),
            "CreateVSwitch" => vpc::create_vswitch(&c, &mut st),
            "DescribeVSwitches" => vpc::describe_vswitches(&c, &st),
            "DeleteVSwitch" => vpc::delete_vswitch(&c, &mut st),
            "DescribeEipAddresses" => leftover::describe_eip_addresses(&c, &st),
            "ReleaseEipAddress" => leftover::release_eip_address(&c, &mut st),
            other => Err(EcsError::new(
                404,
                codes::ACTION_NOT_FOUND,
                format!("Specified api \"{other}\" is not found in the local cloud's VPC, please check your url and method."),
            )),
        }
    }

    /// The NAS API's operations (file systems and mount targets: see `ops/nas.rs`). `host_region` is
    /// the region the host names (`nas.<region>.aliyuncs.com`), `None` behind the local cloud's address.
    fn dispatch_nas(
        &self,
        account: &str,
        action: &str,
        params: &Value,
        ctx: &SimCtx,
        host_region: Option<&str>,
    ) -> Result<Value, EcsError> {
        let c = Self::call(account, params, ctx);
        let mut st = lock(&self.state);
        match action {
            "CreateFileSystem" => nas::create_file_system(&c, &mut st, host_region),
            "DescribeFileSystems" => nas::describe_file_systems(&c, &st, host_region),
            "DeleteFileSystem" => nas::delete_file_system(&c, &mut st, host_region),
            "CreateMountTarget" => nas::create_mount_target(&c, &mut st, host_region),
            "DescribeMountTargets" => nas::describe_mount_targets(&c, &st, host_region),
            "DeleteMountTarget" => nas::delete_mount_target(&c, &mut st, host_region),
            other => Err(EcsError::new(
                404,
                codes::ACTION_NOT_FOUND,
                format!("Specified api \"{other}\" is not found in the local cloud's NAS, please check your url and method."),
            )),
        }
    }

    /// CloudMonitor's operations (GPU utilization, issue 15: see `ops/cms.rs`).
    fn dispatch_cms(
        &self,
        account: &str,
        action: &str,
        params: &Value,
        ctx: &SimCtx,
    ) -> Result<Value, EcsError> {
        let c = Self::call(account, params, ctx);
        let st = lock(&self.state);
        match action {
            "DescribeMetricList" => cms::describe_metric_list(&c, &st),
            other => Err(EcsError::new(
                404,
                codes::ACTION_NOT_FOUND,
                format!("Specified api \"{other}\" is not found in the local cloud's CloudMonitor, please check your url and method."),
            )),
        }
    }

    /// BSS OpenAPI's operations (the account's bill, issue 15: see `ops/bss.rs`).
    fn dispatch_bss(
        &self,
        account: &str,
        action: &str,
        params: &Value,
        ctx: &SimCtx,
    ) -> Result<Value, EcsError> {
        let c = Self::call(account, params, ctx);
        let st = lock(&self.state);
        match action {
            "DescribeInstanceBill" => bss::describe_instance_bill(&c, &st),
            other => Err(EcsError::new(
                404,
                codes::ACTION_NOT_FOUND,
                format!("Specified api \"{other}\" is not found in the local cloud's BSS OpenAPI, please check your url and method."),
            )),
        }
    }

    fn dispatch(&self, account: &str, action: &str, params: &Value, ctx: &SimCtx) -> Result<Value, EcsError> {
        let c = Self::call(account, params, ctx);
        let mut st = lock(&self.state);
        match action {
            "RunInstances" => instances::run_instances(&c, &mut st),
            "DescribeInstances" => instances::describe_instances(&c, &st),
            "DescribeInstanceStatus" => instances::describe_instance_status(&c, &st),
            "DeleteInstances" => instances::delete_instances(&c, &mut st),
            "DeleteInstance" => instances::delete_instance(&c, &mut st),
            "StopInstances" => instances::stop_instances(&c, &mut st, c.p.list("InstanceId")),
            "StopInstance" => instances::stop_instances(&c, &mut st, c.p.text("InstanceId").into_iter().collect()),
            "DescribePrice" => prices::describe_price(&c),
            "DescribeAvailableResource" => prices::describe_available_resource(&c),
            "DescribeDisks" => disks::describe_disks(&c, &st),
            "DeleteDisk" => leftover::delete_disk(&c, &mut st),
            "CreateSnapshot" => snapshots::create_snapshot(&c, &mut st),
            "DescribeSnapshots" => snapshots::describe_snapshots(&c, &st),
            "DeleteSnapshot" => snapshots::delete_snapshot(&c, &mut st),
            "CreateImage" => images::create_image(&c, &mut st),
            "DescribeImages" => images::describe_images(&c, &st),
            "ModifyInstanceChargeType" => instances::modify_instance_charge_type(&c, &mut st),
            "ModifyInstanceAutoReleaseTime" => instances::modify_instance_auto_release_time(&c, &mut st),
            "CreateAutoSnapshotPolicy" => policies::create_auto_snapshot_policy(&c, &mut st),
            "ApplyAutoSnapshotPolicy" => policies::apply_auto_snapshot_policy(&c, &mut st),
            "CreateSecurityGroup" => vpc::create_security_group(&c, &mut st),
            "DescribeSecurityGroups" => vpc::describe_security_groups(&c, &st),
            "AuthorizeSecurityGroup" => vpc::authorize_security_group(&c, &mut st),
            "DescribeSecurityGroupAttribute" => vpc::describe_security_group_attribute(&c, &st),
            "DeleteSecurityGroup" => vpc::delete_security_group(&c, &mut st),
            "ImportKeyPair" => keypairs::import_key_pair(&c, &mut st),
            "DescribeKeyPairs" => keypairs::describe_key_pairs(&c, &st),
            "CreateDeploymentSet" => deployment_sets::create_deployment_set(&c, &mut st),
            "DescribeDeploymentSets" => deployment_sets::describe_deployment_sets(&c, &st),
            "DeleteDeploymentSet" => deployment_sets::delete_deployment_set(&c, &mut st),
            "DescribeDeploymentSetSupportedInstanceTypeFamily" => deployment_sets::describe_supported_families(&c),
            other => Err(EcsError::new(
                404,
                codes::ACTION_NOT_FOUND,
                format!("Specified api \"{other}\" is not found in the local cloud's ECS, please check your url and method."),
            )),
        }
    }
}

/// The schema the emulator holds every request to: `contract/schema/alibaba.json`, generated by
/// `contract/gen.py` from the request models of alibabacloud-ecs20140526 7.11.8
/// (`alibabacloud_ecs20140526/models/_<action>_request.py`) plus `contract/rules.json`, and diffed
/// against a fresh generation in CI (scripts/test.d/45-contract.sh).
pub(crate) static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    Schema::parse(include_str!("../../../../contract/schema/alibaba.json"))
        .unwrap_or_else(|e| panic!("contract/schema/alibaba.json (a committed, generated file): {e}"))
});

/// RPC's common parameters: they belong to the protocol, not to any request model (the same set
/// as contract/check.py's ALI_COMMON; alibabacloud-tea-openapi puts them beside the model's
/// `to_map()` when it builds the query, and `Signature` is the RPC signature).
const COMMON: [&str; 11] = [
    "Action",
    "Version",
    "Format",
    "AccessKeyId",
    "SignatureMethod",
    "SignatureVersion",
    "SignatureNonce",
    "SignatureType",
    "Timestamp",
    "SecurityToken",
    "Signature",
];

/// Refuse what the action's request model forbids (issue 12), before the operation runs. ECS and
/// VPC both flatten lists from 1 (`InstanceId.1`, `Tag.1.Key`: tea-openapi's `Utils.query`). An
/// action is held to the definition of the product it was sent to (the schema's `service`, `ecs`
/// from alibabacloud-ecs20140526, `vpc` from alibabacloud-vpc20160428 7.2.2); one the product does
/// not serve falls through to its dispatcher's `InvalidAction.NotFound`.
fn check_definition(req: &SimRequest, product: Product, action: &str) -> Result<(), EcsError> {
    let service = match product {
        Product::Ecs => "ecs",
        Product::Vpc => "vpc",
        Product::Nas => "nas",
        Product::Cms => "cms",
        Product::Bss => "bss",
    };
    let served = SCHEMA.action(action).and_then(|a| a.get("service")).and_then(Value::as_str);
    if served != Some(service) {
        return Ok(());
    }
    let pairs: Vec<(String, String)> =
        req.form_params().into_iter().filter(|(k, _)| !COMMON.contains(&k.as_str())).collect();
    match SCHEMA.refusal(action, Input::Flat { pairs: &pairs, base: 1 }) {
        Some(v) => Err(error::violation(&v)),
        None => Ok(()),
    }
}

/// The three products this emulator serves. On the cloud each has its own host (`ecs.<region>…`,
/// `vpc.<region>…`, `nas.<region>…`); behind the local cloud's one address the signed API version
/// tells them apart (ECS 2014-05-26, VPC 2016-04-28, NAS 2017-06-26), as every SDK sends it
/// (`x-acs-version`, or `Version`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Product {
    Ecs,
    Vpc,
    Nas,
    /// CloudMonitor, 2019-01-01, host `metrics.<region>.aliyuncs.com` (issue 15).
    Cms,
    /// BSS OpenAPI, 2017-12-14, host `business.aliyuncs.com` (issue 15).
    Bss,
}

/// The region a NAS host names (`nas.cn-hangzhou.aliyuncs.com` → `cn-hangzhou`), where it is one the
/// local cloud sells in; `None` for the local cloud's own address.
fn host_region(req: &SimRequest, ctx: &SimCtx) -> Option<String> {
    let host = req.header("host")?;
    let region = host.strip_prefix("nas.")?.strip_suffix(".aliyuncs.com")?;
    ctx.regions(PROVIDER).into_iter().find(|r| r == region)
}

/// Which product the request is for; another version is refused as the gateway does. A request
/// with no version at all is read as ECS's (what the emulator always did).
fn product(req: &SimRequest, params: &Value) -> Result<Product, EcsError> {
    let version = req.header("x-acs-version").or_else(|| params.get("Version").and_then(Value::as_str));
    match version {
        None => Ok(Product::Ecs),
        Some(v) if v == crate::api::API_VERSION => Ok(Product::Ecs),
        Some(v) if v == crate::api::vpc::VPC_API_VERSION => Ok(Product::Vpc),
        Some(v) if v == crate::api::nas::NAS_API_VERSION => Ok(Product::Nas),
        Some(v) if v == crate::api::cms::CMS_API_VERSION => Ok(Product::Cms),
        Some(v) if v == crate::api::bss::BSS_API_VERSION => Ok(Product::Bss),
        Some(v) => Err(EcsError::new(
            400,
            "InvalidVersion",
            format!(
                "Specified parameter Version \"{v}\" is not valid; ECS serves {}, VPC {}, NAS {}, CloudMonitor {}, BSS OpenAPI {}.",
                crate::api::API_VERSION,
                crate::api::vpc::VPC_API_VERSION,
                crate::api::nas::NAS_API_VERSION,
                crate::api::cms::CMS_API_VERSION,
                crate::api::bss::BSS_API_VERSION
            ),
        )),
    }
}

impl Emulator for Ecs {
    fn provider(&self) -> Provider {
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
            let product = product(req, &params)?;
            check_definition(req, product, &action)?;
            match product {
                Product::Ecs => self.dispatch(&account, &action, &params, ctx),
                Product::Vpc => self.dispatch_vpc(&account, &action, &params, ctx),
                Product::Nas => {
                    self.dispatch_nas(&account, &action, &params, ctx, host_region(req, ctx).as_deref())
                }
                Product::Cms => self.dispatch_cms(&account, &action, &params, ctx),
                Product::Bss => self.dispatch_bss(&account, &action, &params, ctx),
            }
        });
        match result {
            Ok(mut body) => {
                if let Value::Object(map) = &mut body {
                    map.insert("RequestId".into(), json!(ctx.request_id().to_uppercase()));
                }
                SimResponse::json(200, &body)
            }
            Err(e) => render_error(req, ctx, &e),
        }
    }

    fn throttled(&self, req: &SimRequest, ctx: &SimCtx) -> SimResponse {
        let e = EcsError::new(400, codes::THROTTLED, "Request was denied due to user flow control.");
        // The SDK turns a 4xx with x-acs-retry-after (milliseconds) into its ThrottlingException.
        render_error(req, ctx, &e).with_header("x-acs-retry-after", "1000")
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
        render_error(req, ctx, &e)
    }

    fn state(&self, ctx: &SimCtx) -> Value {
        let held = lock(&self.state);
        let mut st = ops::state_json(&held, ctx.now(), &timings(ctx));
        if let (Value::Object(map), Value::Object(net)) =
            (&mut st, vpc::network_json(ctx, &held, ctx.now(), &timings(ctx)))
        {
            map.extend(net);
        }
        st
    }

    fn reset(&self) {
        *lock(&self.state) = EcsState::default();
        self.nonces.clear();
    }

    fn tick(&self, ctx: &SimCtx) {
        lock(&self.state).tick(ctx.now(), &timings(ctx), &mut |prefix| ctx.new_id(prefix, 20));
    }

    fn set_gpu_usage(&self, instance_id: &str, from: jiff::Timestamp, percent: f64) -> Result<bool, String> {
        let mut st = lock(&self.state);
        if !st.instances.contains_key(instance_id) {
            return Ok(false);
        }
        st.gpu.set(instance_id, from, percent);
        Ok(true)
    }

    fn point_public_address(&self, instance_id: &str, address: &str) -> Result<bool, String> {
        let mut st = lock(&self.state);
        let st = &mut *st;
        let Some(inst) = st.instances.get_mut(instance_id) else { return Ok(false) };
        let Some(ip) = inst.public_ip.as_mut() else {
            return Err(format!("{instance_id} has no public IP (created with InternetMaxBandwidthOut 0)"));
        };
        st.addresses.release(ip);
        *ip = address.to_string();
        Ok(true)
    }

    fn plant(&self, p: &gpuctl_simkit::Plant, ctx: &SimCtx) -> Result<String, String> {
        leftover::plant(&mut lock(&self.state), p, ctx)
    }

    fn reclaim(
        &self,
        instance_id: &str,
        notice: Option<SignedDuration>,
        ctx: &SimCtx,
    ) -> Result<Option<jiff::Timestamp>, String> {
        metadata::reclaim(&mut lock(&self.state), instance_id, notice, ctx)
    }

    fn metadata(&self, instance_id: &str, path: &str, req: &SimRequest, ctx: &SimCtx) -> Option<SimResponse> {
        metadata::serve(&lock(&self.state), instance_id, path, req, ctx)
    }
}

#[cfg(test)]
mod tests;
