//! What outlives instances (issue 15): disk `describeDisks` / `deleteDisk`, vpc `describeElasticIps` /
//! `deleteElasticIp`, and the admin API's planting. Paths and parameters follow jdcloud_sdk 1.6.354
//! `services/disk/apis/{DescribeDisks,DeleteDisk}Request.py` and
//! `services/vpc/apis/{DescribeElasticIps,DeleteElasticIp}Request.py`; fields `disk/models/Disk.py`,
//! `vpc/models/ElasticIp.py`.
//!
//! Leftovers arise here the natural way too: deleteInstance leaves data disks made with
//! `autoDelete=false` and, by default, the elastic IP (`state::ElasticIp`).

use gpuctl_simkit::{Plant, PlantKind, SimCtx};
use serde_json::{json, Value};

use super::disk::disk_json;
use super::zfs::FileSystem;
use super::{filter, get, list, not_found, page, Answer, Call};
use crate::api::{format_time, status};
use crate::emulator::error::JdError;
use crate::emulator::state::{Disk, ElasticIp, JdState, Snapshot};

/// `tags: [{key, values}]` (disk/vpc TagFilter): every filter's key held with one of its values.
fn tags_pass(p: &Value, held: &[(String, String)]) -> bool {
    let Some(Value::Array(filters)) = get(p, "tags") else { return true };
    filters.iter().all(|f| {
        let key = f.get("key").and_then(Value::as_str).unwrap_or_default();
        let values = list(f, "values");
        held.iter().any(|(k, v)| k == key && (values.is_empty() || values.contains(v)))
    })
}

fn tags_json(tags: &[(String, String)]) -> Value {
    json!(tags.iter().map(|(k, v)| json!({ "key": k, "value": v })).collect::<Vec<_>>())
}

fn disk_status(d: &Disk, st: &JdState) -> &'static str {
    if d.instance_id.as_ref().is_some_and(|i| st.instances.contains_key(i)) {
        "in-use"
    } else {
        "available"
    }
}

/// describeDisks: filters `diskId`, `diskType`, `instanceId`, `status`, `az` (exact, several values),
/// `tags`; `pageSize` "[10,100]".
pub fn describe_disks(c: &Call, st: &JdState) -> Answer {
    let w = page(c.p)?;
    let ids = filter(c.p, "diskId");
    let types = filter(c.p, "diskType");
    let instances = filter(c.p, "instanceId");
    let statuses = filter(c.p, "status");
    let azs = filter(c.p, "az");
    let matching = st
        .disks
        .values()
        .filter(|d| d.region == c.region)
        .filter(|d| ids.as_ref().is_none_or(|v| v.contains(&d.id)))
        .filter(|d| types.as_ref().is_none_or(|v| v.contains(&d.disk_type)))
        .filter(|d| instances.as_ref().is_none_or(|v| d.instance_id.as_ref().is_some_and(|i| v.contains(i))))
        .filter(|d| statuses.as_ref().is_none_or(|v| v.iter().any(|s| s == disk_status(d, st))))
        .filter(|d| azs.as_ref().is_none_or(|v| v.contains(&d.az)))
        .filter(|d| tags_pass(c.p, &d.tags));
    let (total, items) = w.apply(matching);
    Ok(json!({
        "disks": items.iter().map(|d| disk_json(d, st)).collect::<Vec<_>>(),
        "totalCount": total,
    }))
}

/// deleteDisk: an in-use disk cannot be deleted. *Assumption:* JD's answer is `FAILED_PRECONDITION`
/// (its status for an operation the resource's state forbids; the SDK names no code).
pub fn delete_disk(c: &Call, st: &mut JdState) -> Answer {
    let id = c.id.clone().unwrap_or_default();
    let d = st.disks.get(&id).filter(|d| d.region == c.region).ok_or_else(|| not_found("disk", &id))?;
    if disk_status(d, st) == "in-use" {
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!(
                "disk {id} is in-use (attached to {}); detach it first",
                d.instance_id.clone().unwrap_or_default()
            ),
        ));
    }
    st.disks.remove(&id);
    Ok(json!({}))
}

fn eip_status(e: &ElasticIp) -> &'static str {
    if e.instance_id.is_some() {
        "ASSOCIATED"
    } else {
        "NOT_ASSOCIATED"
    }
}

pub(crate) fn eip_json(e: &ElasticIp) -> Value {
    json!({
        "elasticIpId": e.id,
        "elasticIpAddress": e.address,
        "bandwidthMbps": e.bandwidth_mbps,
        "provider": e.provider,
        "instanceId": e.instance_id.clone().unwrap_or_default(),
        "instanceType": if e.instance_id.is_some() { "compute" } else { "" },
        "charge": { "chargeMode": e.charge_mode, "chargeStatus": "normal" },
        "createdTime": format_time(e.created),
        "tags": tags_json(&e.tags),
        "ipType": "standard",
        "status": eip_status(e),
        "state": "UP",
    })
}

/// describeElasticIps: filters `elasticIpIds`, `elasticIpAddress`, `status` ("ASSOCIATED（被绑定）、
/// NOT_ASSOCIATED（未被绑定）、ALL（全部）。支持单个"), `tags`; `pageSize` "[10,100]".
pub fn describe_elastic_ips(c: &Call, st: &JdState) -> Answer {
    let w = page(c.p)?;
    let ids = filter(c.p, "elasticIpIds");
    let address = filter(c.p, "elasticIpAddress");
    let wanted = match filter(c.p, "status") {
        None => None,
        Some(v) if v.len() == 1 && ["ASSOCIATED", "NOT_ASSOCIATED", "ALL"].contains(&v[0].as_str()) => {
            Some(v[0].clone()).filter(|s| s != "ALL")
        }
        Some(v) => {
            return Err(JdError::new(
                status::INVALID_ARGUMENT,
                format!("filter status takes one of ASSOCIATED, NOT_ASSOCIATED, ALL, not {v:?}"),
            ))
        }
    };
    let matching = st
        .elastic_ips
        .values()
        .filter(|e| e.region == c.region)
        .filter(|e| ids.as_ref().is_none_or(|v| v.contains(&e.id)))
        .filter(|e| address.as_ref().is_none_or(|v| v.contains(&e.address)))
        .filter(|e| wanted.as_deref().is_none_or(|s| s == eip_status(e)))
        .filter(|e| tags_pass(c.p, &e.tags));
    let (total, items) = w.apply(matching);
    Ok(json!({
        "elasticIps": items.iter().map(|e| eip_json(e)).collect::<Vec<_>>(),
        "totalCount": total,
    }))
}

/// deleteElasticIp. *Assumption:* a bound one is refused with `FAILED_PRECONDITION` (the SDK names no
/// code; the console asks to unbind first).
pub fn delete_elastic_ip(c: &Call, st: &mut JdState) -> Answer {
    let id = c.id.clone().unwrap_or_default();
    let e = st
        .elastic_ips
        .get(&id)
        .filter(|e| e.region == c.region)
        .ok_or_else(|| not_found("elasticIp", &id))?;
    if let Some(i) = &e.instance_id {
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!("elastic IP {id} is associated with {i}; disassociate it first"),
        ));
    }
    if let Some(e) = st.elastic_ips.remove(&id) {
        st.addresses.release(&e.address);
    }
    Ok(json!({}))
}

/// Makes what the admin API's `POST /_sim/plant` asks for (see `gpuctl_simkit::plant`).
pub(crate) fn plant(st: &mut JdState, p: &Plant, ctx: &SimCtx) -> Result<String, String> {
    if !ctx.regions(crate::emulator::PROVIDER).contains(&p.region) {
        return Err(format!("no region {} on JD Cloud", p.region));
    }
    let created = p.created.unwrap_or(ctx.now());
    let attached = match &p.attached_to {
        None => None,
        Some(i) if st.instances.get(i).is_some_and(|x| x.region == p.region) => Some(i.clone()),
        Some(i) => return Err(format!("no JD instance {i} in {}", p.region)),
    };
    let az = p.zone.clone().unwrap_or_else(|| format!("{}a", p.region));
    match p.kind {
        PlantKind::Disk => {
            let id = ctx.new_id("vol-", 10);
            st.disks.insert(
                id.clone(),
                Disk {
                    id: id.clone(),
                    region: p.region.clone(),
                    az,
                    name: p.name.clone().unwrap_or_default(),
                    disk_type: p.class.clone().unwrap_or_else(|| "ssd.gp1".into()),
                    size_gb: p.size_or(20),
                    instance_id: attached,
                    device: "vdz".into(),
                    auto_delete: false,
                    snapshot_id: String::new(),
                    created,
                    policy_ids: Vec::new(),
                    charge_mode: "postpaid_by_duration".into(),
                    tags: p.tag_pairs(),
                },
            );
            Ok(id)
        }
        PlantKind::PublicIp => {
            let address = st.addresses.assign().ok_or("the address pool is exhausted")?;
            let id = ctx.new_id("fip-", 10);
            st.elastic_ips.insert(
                id.clone(),
                ElasticIp {
                    id: id.clone(),
                    region: p.region.clone(),
                    address,
                    bandwidth_mbps: 1,
                    provider: "bgp".into(),
                    charge_mode: p.class.clone().unwrap_or_else(|| "postpaid_by_usage".into()),
                    instance_id: attached,
                    created,
                    tags: p.tag_pairs(),
                },
            );
            Ok(id)
        }
        PlantKind::Snapshot => {
            let disk = p.disk_id.as_ref().and_then(|d| st.disks.get(d));
            let id = ctx.new_id("snapshot-", 10);
            let snap = Snapshot {
                id: id.clone(),
                region: p.region.clone(),
                name: p.name.clone().unwrap_or_default(),
                description: String::new(),
                disk_id: p.disk_id.clone().unwrap_or_else(|| ctx.new_id("vol-", 10)),
                size_gb: disk.map_or(p.size_or(20), |d| d.size_gb),
                created,
                expires: None,
                images: Vec::new(),
            };
            st.snapshots.insert(id.clone(), snap);
            Ok(id)
        }
        PlantKind::FileSystem => {
            let id = ctx.new_id("fs-", 10);
            st.file_systems.insert(
                id.clone(),
                FileSystem {
                    id: id.clone(),
                    region: p.region.clone(),
                    az,
                    name: p.name.clone().unwrap_or_default(),
                    description: String::new(),
                    fs_type: p.class.clone().unwrap_or_else(|| "std1".into()),
                    created,
                    deleting: None,
                    tags: p.tag_pairs(),
                    used_bytes: p.size_or(20) << 30,
                },
            );
            Ok(id)
        }
    }
}
