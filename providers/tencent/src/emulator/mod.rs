//! The local cloud's Tencent CVM + CBS + VPC + CFS: routes TC3-signed requests by `X-TC-Action`, verifies the
//! signature, region and version, runs the operation on the in-memory model and answers in
//! Tencent's envelope (`{"Response":{…,"RequestId"}}`, errors with HTTP 200 and `Response.Error`).
//!
//! This module claims and routes; `state` owns the model (instances, disks, snapshots, images,
//! policies, networks, HPC clusters, file systems) and its time-driven changes; `ops/<service>.rs` own
//! the operations of each service (`ops/hpc.rs` CVM's HPC clusters); `error` is Tencent's error and its rendering; `p` reads parameters through simkit.

mod error;
mod metadata;
mod ops;
mod p;
mod state;

use std::sync::{LazyLock, Mutex, MutexGuard};

use gpuctl_simkit::auth::{self, Scheme};
use gpuctl_simkit::params::unflatten;
use gpuctl_simkit::validate::{Input, Schema};
use gpuctl_simkit::{lock, Emulator, Provider, SimCtx, SimRequest, SimResponse};
use jiff::SignedDuration;
use serde_json::Value;

use crate::api::{self, codes};
pub use error::TcError;
use error::{auth_error, envelope, Result};
use ops::{billing, cbs, cfs, cvm, hpc, keypair, leftover, monitor, vpc};
use p::P;
use state::State;

const PROVIDER: Provider = Provider::Tencent;

/// One call, after auth: what the operation sees.
pub(crate) struct Call<'a> {
    pub ctx: &'a SimCtx,
    /// The signer's SecretId: ClientTokens are remembered per account.
    pub account: String,
    pub region: String,
    pub params: Value,
}

impl Call<'_> {
    /// The parameters, read with Tencent's errors.
    pub fn p(&self) -> P<'_> {
        p::p(&self.params)
    }
}

/// Tencent CVM + CBS + VPC + CFS.
#[derive(Default)]
pub struct Tencent {
    state: Mutex<State>,
}

impl Tencent {
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    fn run(&self, req: &SimRequest, ctx: &SimCtx) -> Result<Value> {
        let action = req.header("x-tc-action").unwrap_or_default().to_string();
        let verified =
            auth::verify(Scheme::Tc3, req, ctx, PROVIDER, SignedDuration::from_secs(api::MAX_SKEW_SECS))
                .map_err(auth_error)?;
        let service = verified.service.clone().unwrap_or_default();
        let known = match service.as_str() {
            api::CVM => api::CVM_ACTIONS.contains(&action.as_str()),
            api::CBS => api::CBS_ACTIONS.contains(&action.as_str()),
            api::VPC => api::VPC_ACTIONS.contains(&action.as_str()),
            api::CFS => api::CFS_ACTIONS.contains(&action.as_str()),
            api::BILLING => api::BILLING_ACTIONS.contains(&action.as_str()),
            api::MONITOR => api::MONITOR_ACTIONS.contains(&action.as_str()),
            _ => false,
        };
        if !known {
            // The real cloud routes by host (cvm./cbs.tencentcloudapi.com) and the scope's service must match
            // it, so an action of the other service signed for this one fails the signature check.
            let other = [
                (api::CVM, api::CVM_ACTIONS),
                (api::CBS, api::CBS_ACTIONS),
                (api::VPC, api::VPC_ACTIONS),
                (api::CFS, api::CFS_ACTIONS),
                (api::BILLING, api::BILLING_ACTIONS),
                (api::MONITOR, api::MONITOR_ACTIONS),
            ]
            .into_iter()
            .find(|(s, actions)| *s != service && actions.contains(&action.as_str()))
            .map(|(s, _)| s);
            if let Some(other) = other {
                return Err(TcError::new(
                    codes::AUTH_SIGNATURE_FAILURE,
                    format!("The credential scope service `{service}` does not match `{action}`, a `{other}` action."),
                ));
            }
            return Err(TcError::new(
                codes::INVALID_ACTION,
                format!("The action `{action}` is not supported by service `{service}`."),
            ));
        }
        // CFS is 2019-07-19, the others 2017-03-12 (each service's api.json metadata.apiVersion).
        let want = api::version(&service);
        match req.header("x-tc-version") {
            Some(v) if v == want => {}
            other => {
                return Err(TcError::new(
                    codes::NO_SUCH_VERSION,
                    format!("The API version `{}` does not exist; use {want}.", other.unwrap_or("")),
                ))
            }
        }
        let region = req.header("x-tc-region").unwrap_or_default().to_string();
        if region.is_empty() {
            return Err(TcError::new(
                codes::MISSING_PARAMETER,
                "The request is missing the X-TC-Region header.",
            ));
        }
        if !ctx.regions(PROVIDER).contains(&region) {
            return Err(TcError::new(
                codes::UNSUPPORTED_REGION,
                format!("The region `{region}` is not supported."),
            ));
        }
        let params = params(req, &action)?;
        if let Some(session) = ctx.role_session(PROVIDER, &verified.access_key) {
            metadata::admit(&session, req, ctx, &action, &params)?;
        }
        let call = Call { ctx, account: verified.access_key.clone(), region, params };
        let mut state = self.state();
        match action.as_str() {
            "RunInstances" => cvm::run_instances(&mut state, &call),
            "DescribeInstances" => cvm::describe_instances(&state, &call),
            "DescribeInstancesStatus" => cvm::describe_instances_status(&state, &call),
            "TerminateInstances" => cvm::terminate_instances(&mut state, &call),
            "StopInstances" => cvm::stop_instances(&mut state, &call),
            "InquiryPriceRunInstances" => cvm::inquiry_price_run_instances(&call),
            "DescribeZoneInstanceConfigInfos" => cvm::describe_zone_instance_config_infos(&call),
            "CreateImage" => cvm::create_image(&mut state, &call),
            "DescribeImages" => cvm::describe_images(&state, &call),
            "ImportKeyPair" => keypair::import_key_pair(&mut state, &call),
            "DescribeKeyPairs" => keypair::describe_key_pairs(&state, &call),
            "CreateHpcCluster" => hpc::create_hpc_cluster(&mut state, &call),
            "DescribeHpcClusters" => hpc::describe_hpc_clusters(&state, &call),
            "DeleteHpcClusters" => hpc::delete_hpc_clusters(&mut state, &call),
            "CreateCfsFileSystem" => cfs::create_cfs_file_system(&mut state, &call),
            "DescribeCfsFileSystems" => cfs::describe_cfs_file_systems(&state, &call),
            "DescribeMountTargets" => cfs::describe_mount_targets(&state, &call),
            "DeleteCfsFileSystem" => cfs::delete_cfs_file_system(&mut state, &call),
            "GetMonitorData" => monitor::get_monitor_data(&state, &call),
            "DescribeBillDetail" => billing::describe_bill_detail(&state, &call),
            "CreateVpc" => vpc::create_vpc(&mut state, &call),
            "DescribeVpcs" => vpc::describe_vpcs(&state, &call),
            "DeleteVpc" => vpc::delete_vpc(&mut state, &call),
            "CreateSubnet" => vpc::create_subnet(&mut state, &call),
            "DescribeSubnets" => vpc::describe_subnets(&state, &call),
            "DeleteSubnet" => vpc::delete_subnet(&mut state, &call),
            "CreateSecurityGroup" => vpc::create_security_group(&mut state, &call),
            "DescribeSecurityGroups" => vpc::describe_security_groups(&state, &call),
            "DeleteSecurityGroup" => vpc::delete_security_group(&mut state, &call),
            "CreateSecurityGroupPolicies" => vpc::create_security_group_policies(&mut state, &call),
            "DescribeSecurityGroupPolicies" => vpc::describe_security_group_policies(&state, &call),
            "CreateSnapshot" => cbs::create_snapshot(&mut state, &call),
            "DescribeSnapshots" => cbs::describe_snapshots(&state, &call),
            "DeleteSnapshots" => cbs::delete_snapshots(&mut state, &call),
            "DescribeDisks" => cbs::describe_disks(&state, &call),
            "TerminateDisks" => leftover::terminate_disks(&mut state, &call),
            "DescribeAddresses" => leftover::describe_addresses(&state, &call),
            "ReleaseAddresses" => leftover::release_addresses(&mut state, &call),
            "CreateAutoSnapshotPolicy" => cbs::create_auto_snapshot_policy(&mut state, &call),
            "BindAutoSnapshotPolicy" => cbs::bind_auto_snapshot_policy(&mut state, &call),
            _ => Err(TcError::new(codes::INVALID_ACTION, format!("The action `{action}` is not supported."))),
        }
    }
}

/// The schema the emulator holds every request to: `contract/schema/tencent.json`, generated by
/// `contract/gen.py` from tccli's API metadata (tccli 3.1.189.1, `tccli/services/{cvm,cbs,vpc}/v20170312/api.json`,
/// `tccli/services/cfs/v20190719/api.json`)
/// plus `contract/rules.json`, and diffed against a fresh generation in CI (scripts/test.d/45-contract.sh).
pub(crate) static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    Schema::parse(include_str!("../../../../contract/schema/tencent.json"))
        .unwrap_or_else(|e| panic!("contract/schema/tencent.json (a committed, generated file): {e}"))
});

/// The request's parameters as JSON: the body of a JSON POST, or the flattened query/form
/// (`Filters.0.Values.0=…`) of a GET or form POST; refused with Tencent's codes when they break
/// the action's definition (issue 12: the emulator refuses what the definition forbids).
fn params(req: &SimRequest, action: &str) -> Result<Value> {
    let ct = req.header("content-type").unwrap_or("").to_ascii_lowercase();
    if req.method == "POST" && ct.starts_with("application/json") {
        let v = req.json_body().map_err(|e| {
            TcError::new(codes::INVALID_PARAMETER, format!("The request body is not valid JSON: {e}."))
        })?;
        if !v.is_object() {
            return Err(TcError::new(codes::INVALID_PARAMETER, "The request body must be a JSON object."));
        }
        if let Some(v) = SCHEMA.refusal(action, Input::Json(&v)) {
            return Err(error::violation(action, &v));
        }
        return Ok(v);
    }
    let pairs: Vec<(String, String)> = req
        .form_params()
        .into_iter()
        // Common parameters of the GET signature style are not operation parameters.
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "Action"
                    | "Version"
                    | "Region"
                    | "Timestamp"
                    | "Nonce"
                    | "SecretId"
                    | "Signature"
                    | "SignatureMethod"
                    | "Token"
                    | "Language"
            )
        })
        .collect();
    // Tencent's flattened indices start at 0 (`Filters.0.Name`: tencentcloud-sdk-python's
    // AbstractModel._format_params numbers list members from 0).
    if let Some(v) = SCHEMA.refusal(action, Input::Flat { pairs: &pairs, base: 0 }) {
        return Err(error::violation(action, &v));
    }
    Ok(unflatten(&pairs))
}

/// The TC3 credential scope's service, read without verifying (routing only).
fn scope_service(req: &SimRequest) -> Option<String> {
    let auth = req.header("authorization")?;
    let cred = auth.split("Credential=").nth(1)?.split([',', ' ']).next()?;
    cred.split('/').nth(2).map(str::to_string)
}

impl Emulator for Tencent {
    fn provider(&self) -> Provider {
        PROVIDER
    }

    fn claims(&self, req: &SimRequest) -> bool {
        if req.header("x-tc-action").is_none() {
            return false;
        }
        // Prefer the scope's service; an unsigned request is still Tencent's (it gets an auth error).
        match scope_service(req) {
            Some(s) => {
                [api::CVM, api::CBS, api::VPC, api::CFS, api::MONITOR, api::BILLING].contains(&s.as_str())
            }
            None => req.header("authorization").is_none_or(|a| !a.contains("Credential=")),
        }
    }

    fn action(&self, req: &SimRequest) -> String {
        req.header("x-tc-action").unwrap_or_default().to_string()
    }

    fn handle(&self, req: &SimRequest, ctx: &SimCtx) -> SimResponse {
        envelope(ctx, self.run(req, ctx))
    }

    fn throttled(&self, _req: &SimRequest, ctx: &SimCtx) -> SimResponse {
        envelope(
            ctx,
            Err(TcError::new(
                codes::REQUEST_LIMIT_EXCEEDED,
                "Your current request times equals to `limit`, please retry later.",
            )),
        )
    }

    fn server_error(&self, _req: &SimRequest, ctx: &SimCtx, status: u16) -> SimResponse {
        let mut r = envelope(
            ctx,
            Err(TcError::new(codes::INTERNAL_ERROR, "An internal error occurred; retry later.")),
        );
        r.status = status;
        r
    }

    fn state(&self, ctx: &SimCtx) -> Value {
        self.state().to_json(ctx.now())
    }

    fn reset(&self) {
        *self.state() = State::default();
    }

    fn tick(&self, ctx: &SimCtx) {
        self.state().tick(ctx);
    }

    fn point_public_address(&self, instance_id: &str, address: &str) -> std::result::Result<bool, String> {
        let mut st = self.state();
        let st = &mut *st;
        let Some(inst) = st.instances.iter_mut().find(|i| i.id == instance_id) else { return Ok(false) };
        let Some(ip) = inst.public_ip.as_mut() else {
            return Err(format!("{instance_id} has no public IP (created without InternetAccessible)"));
        };
        st.addresses.release(&ip.address);
        ip.address = address.to_string();
        Ok(true)
    }

    fn set_gpu_usage(
        &self,
        instance_id: &str,
        from: jiff::Timestamp,
        percent: f64,
    ) -> std::result::Result<bool, String> {
        let mut st = self.state();
        if !st.instances.iter().any(|i| i.id == instance_id) {
            return Ok(false);
        }
        st.gpu.set(instance_id, from, percent);
        Ok(true)
    }

    fn plant(&self, p: &gpuctl_simkit::Plant, ctx: &SimCtx) -> std::result::Result<String, String> {
        leftover::plant(&mut self.state(), p, ctx)
    }

    fn reclaim(
        &self,
        instance_id: &str,
        notice: Option<SignedDuration>,
        ctx: &SimCtx,
    ) -> std::result::Result<Option<jiff::Timestamp>, String> {
        metadata::reclaim(&mut self.state(), instance_id, notice, ctx)
    }

    fn metadata(&self, instance_id: &str, path: &str, req: &SimRequest, ctx: &SimCtx) -> Option<SimResponse> {
        metadata::serve(&self.state(), instance_id, path, req, ctx)
    }
}

#[cfg(test)]
mod tests;
