//! What outlives instances (issue 15): VPC's elastic public IPs (DescribeAddresses, ReleaseAddresses),
//! CBS's TerminateDisks, the tag filters the listings share, and the admin API's planting. Parameters
//! and fields follow tccli 3.1.189.1 `tccli/services/{vpc,cbs}/v20170312/api.json`
//! (DescribeAddressesRequest, Address, ReleaseAddressesRequest, TerminateDisksRequest); error codes
//! tencentcloud-sdk-python 3.1.195 `tencentcloud/{vpc,cbs}/v20170312/errorcodes.py`.
//!
//! gpuctl never allocates an EIP on Tencent (an instance's public IP belongs to the instance and goes
//! with it, see `state::PublicIp`), so an address here is one a test planted: bound to an instance
//! (`BIND`) or to nothing (`UNBIND`). Its binding ends with the instance, as an EIP's does.

use gpuctl_simkit::{Plant, PlantKind, SimCtx};
use jiff::Timestamp;
use serde_json::{json, Value};

use crate::api::codes;
use crate::emulator::error::{Result, TcError};
use crate::emulator::p::{filters, page};
use crate::emulator::state::{cbs_time, cvm_time, Disk, Snapshot, State};
use crate::emulator::Call;

/// An elastic public IP (VPC `Address`).
#[derive(Clone, Debug)]
pub(crate) struct Eip {
    pub id: String,
    pub region: String,
    pub address: String,
    pub name: String,
    /// The instance it is bound to; `None`: `UNBIND`.
    pub instance_id: Option<String>,
    /// `Address.InternetChargeType` (e.g. BANDWIDTH_POSTPAID_BY_HOUR, TRAFFIC_POSTPAID_BY_HOUR).
    pub charge_type: String,
    pub tags: Vec<(String, String)>,
    pub created: Timestamp,
}

/// Whether `tags` pass the listings' tag filters: `tag-key` (a key among the values), `tag-value` (a
/// value among them), `tag:<key>` (that key with a value among them) — DescribeDisksRequest.Filters and
/// DescribeAddressesRequest.Filters; any other filter name passes here (the caller judges it).
pub(crate) fn tags_pass(name: &str, values: &[String], tags: &[(String, String)]) -> Option<bool> {
    let any = |x: &str| values.iter().any(|v| v == x);
    Some(match name {
        "tag-key" => tags.iter().any(|(k, _)| any(k)),
        "tag-value" => tags.iter().any(|(_, v)| any(v)),
        n => match n.strip_prefix("tag:") {
            Some(key) => tags.iter().any(|(k, v)| k == key && any(v)),
            None => return None,
        },
    })
}

fn status(e: &Eip) -> &'static str {
    if e.instance_id.is_some() {
        "BIND"
    } else {
        "UNBIND"
    }
}

pub(crate) fn describe_addresses(state: &State, call: &Call) -> Result<Value> {
    let v = call.p();
    let window = page(&v)?;
    let ids = v.str_list("AddressIds")?;
    // "每次请求的`Filters`的上限为10，`Filter.Values`的上限为100" (DescribeAddressesRequest.Filters).
    let fs = filters(
        &v,
        &[
            "address-id",
            "address-name",
            "address-ip",
            "address-status",
            "instance-id",
            "tag-key",
            "tag-value",
            "tag:",
        ],
    )?;
    if fs.len() > 10 || fs.iter().any(|(_, vs)| vs.len() > 100) {
        return Err(TcError::new(
            codes::LIMIT_EXCEEDED,
            "At most 10 Filters with at most 100 Values each are accepted.",
        ));
    }
    if !ids.is_empty() && !fs.is_empty() {
        return Err(TcError::new(
            codes::INVALID_PARAMETER_COMBINATION,
            "AddressIds and Filters cannot be given together.",
        ));
    }
    let found: Vec<&Eip> = state
        .eips
        .iter()
        .filter(|e| e.region == call.region && (ids.is_empty() || ids.contains(&e.id)))
        .filter(|e| {
            fs.iter().all(|(n, vs)| {
                let any = |x: &str| vs.iter().any(|v| v == x);
                match n.as_str() {
                    "address-id" => any(&e.id),
                    "address-name" => any(&e.name),
                    "address-ip" => any(&e.address),
                    "address-status" => any(status(e)),
                    "instance-id" => e.instance_id.as_deref().is_some_and(any),
                    n => tags_pass(n, vs, &e.tags).unwrap_or(false),
                }
            })
        })
        .collect();
    Ok(json!({
        "TotalCount": found.len(),
        "AddressSet": window.apply(found.iter()).1.into_iter().map(|e| json!({
            "AddressId": e.id,
            "AddressName": e.name,
            "AddressStatus": status(e),
            "AddressIp": e.address,
            "InstanceId": e.instance_id,
            "CreatedTime": cvm_time(e.created),
            "IsArrears": false,
            "IsBlocked": false,
            "IsEipDirectConnection": false,
            "AddressType": "EIP",
            "CascadeRelease": false,
            "InternetServiceProvider": "BGP",
            "LocalBgp": false,
            "Bandwidth": 1,
            "InternetChargeType": e.charge_type,
            "TagSet": e.tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect::<Vec<_>>(),
            "InstanceType": if e.instance_id.is_some() { json!("CVM") } else { Value::Null },
        })).collect::<Vec<_>>(),
    }))
}

/// ReleaseAddresses: "只有状态为 UNBIND 的 EIP 才能进行释放操作" — a bound one is
/// `UnsupportedOperation.AddressStatusNotPermit` (该地址状态不支持此操作), an unknown one
/// `InvalidAddressId.NotFound`. The whole request is refused when one id is (nothing released).
pub(crate) fn release_addresses(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let ids = v.str_list("AddressIds")?;
    if ids.is_empty() {
        return Err(TcError::new(
            codes::MISSING_PARAMETER,
            "The request is missing a required parameter `AddressIds`.",
        ));
    }
    for id in &ids {
        let e = state.eips.iter().find(|e| &e.id == id && e.region == call.region).ok_or_else(|| {
            TcError::new(codes::INVALID_ADDRESS_ID_NOT_FOUND, format!("The EIP `{id}` does not exist."))
        })?;
        if e.instance_id.is_some() {
            return Err(TcError::new(
                codes::ADDRESS_STATUS_NOT_PERMIT,
                format!("The EIP `{id}` is BIND; only an UNBIND address can be released."),
            ));
        }
    }
    let gone: Vec<String> =
        state.eips.iter().filter(|e| ids.contains(&e.id)).map(|e| e.address.clone()).collect();
    for a in &gone {
        state.addresses.release(a);
    }
    state.eips.retain(|e| !ids.contains(&e.id));
    Ok(json!({ "TaskId": call.ctx.new_id("", 8) }))
}

/// TerminateDisks: "每次请求批量云硬盘的上限为100。如果批量云盘存在不允许操作的，请求会以特定错误码返回" — an
/// attached disk is `ResourceUnavailable.Attached` (云硬盘已挂载至其他云服务器上), an unknown one
/// `InvalidDiskId.NotFound`; nothing is returned when one is refused.
pub(crate) fn terminate_disks(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let ids = v.str_list("DiskIds")?;
    if ids.is_empty() {
        return Err(TcError::new(
            codes::MISSING_PARAMETER,
            "The request is missing a required parameter `DiskIds`.",
        ));
    }
    if ids.len() > 100 {
        return Err(TcError::new(codes::LIMIT_EXCEEDED, "At most 100 DiskIds per request."));
    }
    for id in &ids {
        let d = state.disks.iter().find(|d| &d.id == id && d.region == call.region).ok_or_else(|| {
            TcError::new(codes::INVALID_DISK_ID_NOT_FOUND, format!("The disk `{id}` does not exist."))
        })?;
        if !d.instance_id.is_empty() {
            return Err(TcError::new(
                codes::DISK_ATTACHED,
                format!("The disk `{id}` is attached to `{}`; detach it first.", d.instance_id),
            ));
        }
    }
    state.disks.retain(|d| !ids.contains(&d.id));
    Ok(json!({}))
}

/// Makes what the admin API's `POST /_sim/plant` asks for (see `gpuctl_simkit::plant`).
pub(crate) fn plant(state: &mut State, p: &Plant, ctx: &SimCtx) -> std::result::Result<String, String> {
    if !ctx.regions(crate::emulator::PROVIDER).contains(&p.region) {
        return Err(format!("no region {} on Tencent", p.region));
    }
    let now = ctx.now();
    let created = p.created.unwrap_or(now);
    let attached = match &p.attached_to {
        None => None,
        Some(i) => {
            let inst = state.instances.iter().find(|x| &x.id == i && x.region == p.region);
            Some(inst.ok_or_else(|| format!("no Tencent instance {i} in {}", p.region))?.id.clone())
        }
    };
    let zone = p.zone.clone().unwrap_or_else(|| format!("{}-3", p.region));
    match p.kind {
        PlantKind::Disk => {
            let id = ctx.new_id("disk-", 8);
            state.disks.push(Disk {
                id: id.clone(),
                region: p.region.clone(),
                zone,
                usage: "DATA_DISK",
                disk_type: p.class.clone().unwrap_or_else(|| "CLOUD_PREMIUM".into()),
                size_gb: p.size_or(10),
                instance_id: attached.unwrap_or_default(),
                delete_with_instance: false,
                charge_type: "POSTPAID_BY_HOUR".into(),
                created,
                policy_ids: Vec::new(),
                name: p.name.clone().unwrap_or_default(),
                tags: p.tag_pairs(),
            });
            Ok(id)
        }
        PlantKind::PublicIp => {
            let address = state.addresses.assign().ok_or("the address pool is exhausted")?;
            let id = ctx.new_id("eip-", 8);
            state.eips.push(Eip {
                id: id.clone(),
                region: p.region.clone(),
                address,
                name: p.name.clone().unwrap_or_default(),
                instance_id: attached,
                charge_type: p.class.clone().unwrap_or_else(|| "BANDWIDTH_POSTPAID_BY_HOUR".into()),
                tags: p.tag_pairs(),
                created,
            });
            Ok(id)
        }
        PlantKind::Snapshot => {
            let disk = p.disk_id.as_ref().and_then(|d| state.disks.iter().find(|x| &x.id == d));
            let id = ctx.new_id("snap-", 8);
            state.snapshots.push(Snapshot {
                id: id.clone(),
                region: p.region.clone(),
                zone: disk.map_or(zone, |d| d.zone.clone()),
                name: p.name.clone().unwrap_or_else(|| "未命名".into()),
                disk_id: p.disk_id.clone().unwrap_or_else(|| ctx.new_id("disk-", 8)),
                disk_usage: "DATA_DISK",
                disk_size_gb: disk.map_or(p.size_or(10), |d| d.size_gb),
                created,
                ready_at: created,
                policy_id: None,
                deadline: None,
                image_ids: Vec::new(),
                tags: p.tag_pairs(),
            });
            Ok(id)
        }
        PlantKind::FileSystem => {
            let id = crate::emulator::ops::cfs::plant(state, p, &zone, created, ctx)?;
            Ok(id)
        }
    }
}

/// The addresses for `/_sim/state`: every EIP held (and billed), bound or not.
pub(crate) fn eips_json(state: &State) -> Value {
    json!(state
        .eips
        .iter()
        .map(|e| json!({
            "AddressId": e.id, "Region": e.region, "AddressIp": e.address, "AddressStatus": status(e),
            "InstanceId": e.instance_id, "CreatedTime": cbs_time(e.created),
            "Tags": e.tags.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        }))
        .collect::<Vec<_>>())
}
