//! The ECS operations: each reads its parameters, checks them as ECS does, changes the state and
//! renders ECS's answer (field names from alibabacloud_ecs20140526's response models).

//!
//! One file per ECS resource: `instances`, `keypairs`, `disks`, `snapshots`, `images`, `policies` (automatic
//! snapshot policies) and `prices` (DescribePrice, DescribeAvailableResource); this file holds what
//! several of them share and the `/_sim/state` view.

pub(crate) mod bss;
pub(crate) mod cms;
pub(crate) mod deployment_sets;
pub(crate) mod disks;
pub(crate) mod images;
pub(crate) mod instances;
pub(crate) mod keypairs;
pub(crate) mod leftover;
pub(crate) mod nas;
pub(crate) mod policies;
pub(crate) mod prices;
pub(crate) mod snapshots;
pub(crate) mod vpc;

use gpuctl_simkit::{Idem, Offer, SimCtx};
use jiff::Timestamp;
use serde_json::{json, Value};

use super::error::EcsError;
use super::params::{Params, TOKEN_VARYING};
use super::state::{EcsState, Timings};
use super::PROVIDER;
use crate::api::{codes, format_time};
use disks::disk_json;
use instances::instance_json;
use snapshots::snapshot_json;

/// Everything an operation needs besides the state.
pub struct Call<'a> {
    pub p: Params<'a>,
    pub ctx: &'a SimCtx,
    pub now: Timestamp,
    pub timings: Timings,
    /// The caller's access key: ClientTokens are remembered per account.
    pub account: String,
}

pub(crate) type Answer = Result<Value, EcsError>;

/// Far-future expiry ECS shows for pay-as-you-go instances.
pub(crate) const NEVER_EXPIRES: &str = "2099-12-31T15:59Z";

pub(crate) fn region(c: &Call) -> Result<String, EcsError> {
    let region = c.p.required("RegionId")?;
    if c.ctx.regions(PROVIDER).contains(&region) {
        Ok(region)
    } else {
        Err(EcsError::new(
            404,
            codes::REGION_NOT_FOUND,
            format!("The specified RegionId \"{region}\" does not exist."),
        ))
    }
}

/// The offer for a requested type, or ECS's answer for a type not sold in the region. Offers carry
/// the API's spelling (`ecs.gn7i-c8g1.2xlarge`, the local cloud's `offers.rs`), so a type named
/// without the prefix is not sold, as on ECS.
pub(crate) fn offer_for<'c>(c: &Call<'c>, region: &str, instance_type: &str) -> Result<&'c Offer, EcsError> {
    c.ctx.offer(PROVIDER, region, instance_type).ok_or_else(|| {
        EcsError::new(
            400,
            codes::BAD_INSTANCE_TYPE,
            format!("The specified InstanceType \"{instance_type}\" is not supported in region {region}."),
        )
    })
}

/// Stock-out knobs name the type as the API does.
pub(crate) fn sold_out(ctx: &SimCtx, offer: &Offer, zone: &str) -> bool {
    ctx.is_sold_out(PROVIDER, &offer.instance_type, zone)
}

pub(crate) fn dry_run_passed() -> EcsError {
    EcsError::new(400, codes::DRY_RUN, "Request validation has been passed with DryRun flag set.")
}

pub(crate) fn instance_not_found(id: &str) -> EcsError {
    EcsError::new(
        404,
        codes::INSTANCE_NOT_FOUND,
        format!("The specified InstanceId \"{id}\" does not exist."),
    )
}

pub(crate) fn tags_json(tags: &[(String, String)]) -> Value {
    json!({ "Tag": tags.iter().map(|(k, v)| json!({"TagKey": k, "TagValue": v})).collect::<Vec<_>>() })
}

/// Whether `held` carries every `Tag.N` pair a Describe* call filters by; a pair without a value
/// matches any value of its key (DescribeInstances, DescribeVpcs, DescribeVSwitches,
/// DescribeSecurityGroups).
pub(crate) fn tags_match(held: &[(String, String)], wanted: &[(String, String)]) -> bool {
    wanted.iter().all(|(k, v)| held.iter().any(|(hk, hv)| hk == k && (v.is_empty() || hv == v)))
}

/// `DryRun=true`: the checks passed, so answer ECS's `DryRunOperation` instead of doing the work.
pub(crate) fn dry_run(c: &Call) -> Result<(), EcsError> {
    if c.p.opt_bool("DryRun")?.unwrap_or(false) {
        return Err(dry_run_passed());
    }
    Ok(())
}

/// Replay or refuse a ClientToken seen before; `None` → do the work.
pub(crate) fn token_check(st: &EcsState, action: &str, c: &Call) -> Result<Option<Value>, EcsError> {
    let Some(t) = c.p.text("ClientToken") else { return Ok(None) };
    match st.tokens.present(&c.account, action, &t, c.p.value(), TOKEN_VARYING).1 {
        Idem::New => Ok(None),
        Idem::Replay(v) => Ok(Some(v)),
        Idem::Mismatch => Err(EcsError::new(
            400,
            codes::IDEMPOTENT_MISMATCH,
            "The specified ClientToken was used by an earlier request with different parameters.",
        )),
    }
}

pub(crate) fn token_remember(st: &mut EcsState, action: &str, c: &Call, answer: &Value) {
    if let Some(t) = c.p.text("ClientToken") {
        let (presented, _) = st.tokens.present(&c.account, action, &t, c.p.value(), TOKEN_VARYING);
        st.tokens.remember(presented, answer.clone());
    }
}

/// `/_sim/state` view: the same shapes the cloud answers with, grouped by kind.
pub fn state_json(st: &EcsState, now: Timestamp, t: &Timings) -> Value {
    json!({
        "instances": st.instances.values().map(|i| {
            let mut v = instance_json(i, now, t);
            // Not part of DescribeInstances' answer: the state view adds what the boot received.
            v["UserData"] = json!(i.user_data);
            v
        }).collect::<Vec<_>>(),
        "disks": st.disks.values().map(|d| disk_json(d, st)).collect::<Vec<_>>(),
        "snapshots": st.snapshots.values().map(|s| snapshot_json(s, now, t)).collect::<Vec<_>>(),
        "images": st.images.values().map(|i| json!({
            "ImageId": i.id,
            "ImageName": i.name,
            "RegionId": i.region,
            "SourceInstanceId": i.source_instance_id,
            "SnapshotIds": i.snapshot_ids,
            "CreationTime": format_time(i.created),
            "Status": if now.duration_since(i.created) >= t.image { "Available" } else { "Creating" },
        })).collect::<Vec<_>>(),
        "auto_snapshot_policies": st.auto_snapshot_policies.values().collect::<Vec<_>>(),
        "deployment_sets": st.deployment_sets.values().collect::<Vec<_>>(),
        "file_systems": st.file_systems.values().map(|f| nas::file_system_json(f, now, t)).collect::<Vec<_>>(),
        "key_pairs": st.key_pairs.view(),
        "eips": leftover::eips_json(st),
        // Every public IP held (and billed) now; empty once every instance asking for one is gone.
        "public_ips": st.instances.values().filter_map(|i| i.public_ip.as_ref().map(|ip| json!({
            "IpAddress": ip, "InstanceId": i.id,
            "InternetChargeType": i.internet_charge_type, "InternetMaxBandwidthOut": i.internet_max_bandwidth_out,
        }))).collect::<Vec<_>>(),
    })
}
