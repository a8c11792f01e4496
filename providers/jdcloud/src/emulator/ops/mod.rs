//! The JD Cloud operations (vm, disk, billing): each reads its parameters, checks them, changes the
//! state and renders JD's `result` (field names from jdcloud_sdk's models: vm Instance,
//! InstanceType, disk Disk/Snapshot/SnapshotPolicy, billing OrderPrice).

//!
//! One file per service: `vm.rs` (with its key pairs in `keypair.rs`), `disk.rs`, `billing.rs`, `vpc.rs`, `zfs.rs`; this file holds the call, JD's reading
//! of parameters over simkit's reader, the clientToken gate and the `/_sim/state` view.

pub(crate) mod bill;
pub(crate) mod billing;
pub(crate) mod disk;
pub(crate) mod image;
pub(crate) mod keypair;
pub(crate) mod leftover;
pub(crate) mod monitor;
pub(crate) mod renewal;
pub(crate) mod vm;
pub(crate) mod vpc;
pub(crate) mod zfs;

use gpuctl_simkit::params::as_string;
use gpuctl_simkit::{Idem, Params, SimCtx, Window};
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use super::error::JdError;
use super::state::{JdState, IMAGE_TAKES};
use crate::api::{format_time, status};
use disk::{disk_json, policy_json, snapshot_json};
use vm::instance_json;

pub struct Call<'a> {
    pub region: String,
    /// The path parameter after the collection (`instances/{id}`), if any.
    pub id: Option<String>,
    pub p: &'a Value,
    pub ctx: &'a SimCtx,
    pub now: Timestamp,
    pub boot: SignedDuration,
    /// The caller's access key: clientTokens are remembered per account.
    pub account: String,
}

pub(crate) type Answer = Result<Value, JdError>;

pub(crate) fn invalid(msg: impl Into<String>) -> JdError {
    JdError::new(status::INVALID_ARGUMENT, msg)
}

/// JD's parameters (or a nested struct of them), read with JD's errors.
fn r(v: &Value) -> Params<'_, JdError> {
    Params::new(v)
}

pub(crate) fn get<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    r(v).get(name)
}

pub(crate) fn text(v: &Value, name: &str) -> Option<String> {
    r(v).text(name)
}

pub(crate) fn required(v: &Value, name: &str) -> Result<String, JdError> {
    r(v).required(name)
}

pub(crate) fn int(v: &Value, name: &str) -> Result<Option<i64>, JdError> {
    r(v).opt_i64(name)
}

/// A JSON array's scalars; JD's lists are always arrays, so anything else reads as none.
pub(crate) fn list(v: &Value, name: &str) -> Vec<String> {
    match get(v, name) {
        Some(Value::Array(items)) => items.iter().filter_map(as_string).collect(),
        _ => Vec::new(),
    }
}

/// `filters: [{name, values: [...]}]` → the values of one filter name, if given.
pub(crate) fn filter(p: &Value, name: &str) -> Option<Vec<String>> {
    let Some(Value::Array(filters)) = get(p, "filters") else { return None };
    filters.iter().find(|f| f.get("name").and_then(Value::as_str) == Some(name)).map(|f| list(f, "values"))
}

/// `pageNumber`/`pageSize`: page 1 and 20 by default, the size clamped to 10-100 as JD does.
pub(crate) fn page(p: &Value) -> Result<Window, JdError> {
    r(p).page_number(("pageNumber", "pageSize"), 20, 10..=100)
}

pub(crate) fn not_found(kind: &str, id: &str) -> JdError {
    JdError::new(status::NOT_FOUND, format!("{kind} {id} not found"))
}

/// What differs between honest retries of one clientToken request: only the token (unset fields
/// arrive as null, which the gate leaves out anyway).
const TOKEN_VARYING: &[&str] = &["clientToken"];

/// Replay or refuse a clientToken seen before; `None` → do the work.
pub(crate) fn token_check(st: &JdState, op: &str, c: &Call) -> Result<Option<Value>, JdError> {
    let p = c.p;
    let Some(t) = text(p, "clientToken") else { return Ok(None) };
    if t.len() > 64 {
        return Err(invalid("clientToken must be at most 64 characters"));
    }
    match st.tokens.present(&c.account, op, &t, p, TOKEN_VARYING).1 {
        Idem::New => Ok(None),
        Idem::Replay(v) => Ok(Some(v)),
        // *unverified*: JD documents no dedicated code for a reused token with other parameters.
        Idem::Mismatch => {
            Err(invalid(format!("clientToken {t} was already used by a request with different parameters")))
        }
    }
}

pub(crate) fn token_remember(st: &mut JdState, op: &str, c: &Call, result: &Value) {
    if let Some(t) = text(c.p, "clientToken") {
        let (presented, _) = st.tokens.present(&c.account, op, &t, c.p, TOKEN_VARYING);
        st.tokens.remember(presented, result.clone());
    }
}

/// `/_sim/state` view.
pub fn state_json(st: &JdState, now: Timestamp, boot: SignedDuration) -> Value {
    let (vpcs, subnets, security_groups) = vpc::network_json(st);
    json!({
        // The describe view plus what only the renewal service knows.
        "instances": st.instances.values().map(|i| {
            let mut v = instance_json(i, st, now, boot);
            v["autoRenew"] = i.auto_renew.into();
            // The launch script as JD keeps it (base64; describeInstancesCustomData's view).
            v["launchScript"] = json!(i.launch_script);
            v
        }).collect::<Vec<_>>(),
        "disks": st.disks.values().map(|d| disk_json(d, st)).collect::<Vec<_>>(),
        // Every elastic IP that exists (and bills), bound or not.
        "public_ips": st.elastic_ips.values().map(|e| json!({
            "elasticIpId": e.id, "elasticIpAddress": e.address, "instanceId": e.instance_id,
            "bandwidthMbps": e.bandwidth_mbps, "provider": e.provider, "chargeMode": e.charge_mode,
            "region": e.region, "tags": e.tags.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        })).collect::<Vec<_>>(),
        "snapshots": st.snapshots.values().map(|s| snapshot_json(s, now)).collect::<Vec<_>>(),
        "images": st.images.values().map(|i| json!({
            "imageId": i.id, "name": i.name, "description": i.description, "instanceId": i.instance_id,
            "snapshotIds": i.snapshot_ids, "createTime": format_time(i.created),
            "status": if now.duration_since(i.created) >= IMAGE_TAKES { "ready" } else { "creating" },
        })).collect::<Vec<_>>(),
        "snapshot_policies": st.snapshot_policies.values().map(|p| policy_json(p, st, now)).collect::<Vec<_>>(),
        "key_pairs": st.key_pairs.view(),
        "vpcs": vpcs,
        "subnets": subnets,
        "security_groups": security_groups,
        "file_systems": zfs::state_view(st, now),
    })
}
