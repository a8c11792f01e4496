//! JD disk: createSnapshot, describeSnapshots, deleteSnapshot, createSnapshotPolicy,
//! applySnapshotPolicies (jdcloud_sdk disk models: Disk, Snapshot, SnapshotPolicy).

use gpuctl_simkit::params::as_i64;
use jiff::Timestamp;
use serde_json::{json, Value};

use super::vm::charge_json;
use super::{
    filter, get, int, invalid, not_found, page, required, text, token_check, token_remember, Answer, Call,
};
use crate::api::{format_time, parse_offset_time, status};
use crate::emulator::error::JdError;
use crate::emulator::state::{Disk, JdState, Snapshot, SnapshotPolicy, SNAPSHOT_TAKES};

pub(crate) fn disk_json(d: &Disk, st: &JdState) -> Value {
    let attached = d.instance_id.as_ref().filter(|i| st.instances.contains_key(*i));
    json!({
        "diskId": d.id,
        "az": d.az,
        "name": d.name,
        "description": "",
        "diskType": d.disk_type,
        "diskSizeGB": d.size_gb,
        "iops": null,
        "throughput": null,
        "status": if attached.is_some() { "in-use" } else { "available" },
        "attachments": attached.map(|i| vec![json!({"instanceId": i, "instanceType": "vm", "attachTime": format_time(d.created), "status": "attached"})]).unwrap_or_default(),
        "snapshotId": d.snapshot_id,
        "multiAttachable": false,
        "encrypted": false,
        "enabled": true,
        "createTime": format_time(d.created),
        "charge": charge_json(&d.charge_mode, d.created, None, d.created),
        "tags": d.tags.iter().map(|(k, v)| json!({ "key": k, "value": v })).collect::<Vec<_>>(),
        "snapshotPolicies": d.policy_ids.iter().map(|p| json!({"id": p})).collect::<Vec<_>>(),
    })
}

pub(crate) fn new_snapshot(
    st: &mut JdState,
    c: &Call,
    disk_id: &str,
    name: String,
    description: String,
) -> Result<String, JdError> {
    let disk = st
        .disks
        .get(disk_id)
        .filter(|d| d.region == c.region)
        .ok_or_else(|| not_found("disk", disk_id))?
        .clone();
    let id = c.ctx.new_id("snapshot-", 10);
    st.snapshots.insert(
        id.clone(),
        Snapshot {
            id: id.clone(),
            region: c.region.clone(),
            name,
            description,
            disk_id: disk.id,
            size_gb: disk.size_gb,
            created: c.now,
            expires: None,
            images: Vec::new(),
        },
    );
    Ok(id)
}

pub fn create_snapshot(c: &Call, st: &mut JdState) -> Answer {
    let spec = get(c.p, "snapshotSpec").ok_or_else(|| invalid("snapshotSpec is required"))?;
    let disk = required(spec, "diskId")?;
    let name = required(spec, "name")?;
    if let Some(replay) = token_check(st, "createSnapshot", c)? {
        return Ok(replay);
    }
    let id = new_snapshot(st, c, &disk, name, text(spec, "description").unwrap_or_default())?;
    let result = json!({ "snapshotId": id });
    token_remember(st, "createSnapshot", c, &result);
    Ok(result)
}

pub(crate) fn snapshot_json(s: &Snapshot, now: Timestamp) -> Value {
    json!({
        "snapshotId": s.id,
        "snapshotSource": "self",
        "diskId": s.disk_id,
        "snapshotSizeGB": s.size_gb,
        "images": s.images,
        "name": s.name,
        "description": s.description,
        "status": if now.duration_since(s.created) >= SNAPSHOT_TAKES { "available" } else { "creating" },
        "createTime": format_time(s.created),
        "expireTime": s.expires.map(format_time),
        "encrypted": false,
    })
}

pub fn describe_snapshots(c: &Call, st: &JdState) -> Answer {
    let ids = filter(c.p, "snapshotId");
    let disks = filter(c.p, "diskId");
    let statuses = filter(c.p, "status");
    let names = filter(c.p, "name");
    let pg = page(c.p)?;
    let within = |f: &Option<Vec<String>>, v: &str| f.as_ref().is_none_or(|f| f.iter().any(|x| x == v));
    let matching: Vec<&Snapshot> = st
        .snapshots
        .values()
        .filter(|s| s.region == c.region && within(&ids, &s.id) && within(&disks, &s.disk_id))
        .filter(|s| within(&statuses, snapshot_json(s, c.now)["status"].as_str().unwrap_or("")))
        .filter(|s| names.as_ref().is_none_or(|n| n.iter().any(|n| s.name.contains(n.as_str()))))
        .collect();
    let (total, items) = pg.apply(matching);
    Ok(
        json!({ "snapshots": items.iter().map(|s| snapshot_json(s, c.now)).collect::<Vec<_>>(), "totalCount": total }),
    )
}

pub fn delete_snapshot(c: &Call, st: &mut JdState) -> Answer {
    let id = c.id.clone().unwrap_or_default();
    let snap =
        st.snapshots.get(&id).filter(|s| s.region == c.region).ok_or_else(|| not_found("snapshot", &id))?;
    if !snap.images.is_empty() {
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!("snapshot {id} is used by image {}; delete the image first", snap.images.join(", ")),
        ));
    }
    st.snapshots.remove(&id);
    Ok(json!({}))
}

pub(crate) fn policy_json(p: &SnapshotPolicy, st: &JdState, now: Timestamp) -> Value {
    json!({
        "id": p.id,
        "name": p.name,
        "pin": "gpuctl-sim",
        "interval": p.interval,
        "effectiveTime": format_time(p.effective),
        "lastTriggerTime": p.last_run.map(format_time),
        "nextTriggerTime": format_time(p.next_run_after(now)),
        "snapshotLifecycle": p.lifecycle,
        "contactInfo": p.contact_info,
        "createTime": format_time(p.created),
        "updateTime": format_time(p.created),
        "status": p.status,
        "diskCount": st.disks.values().filter(|d| d.policy_ids.contains(&p.id)).count(),
    })
}

pub fn create_snapshot_policy(c: &Call, st: &mut JdState) -> Answer {
    let name = required(c.p, "name")?;
    let interval = int(c.p, "interval")?.ok_or_else(|| invalid("interval is required"))?;
    if interval < 12 * 3600 {
        return Err(invalid(format!("interval must be at least 43200 seconds (12 hours), got {interval}")));
    }
    let raw = required(c.p, "effectiveTime")?;
    let effective = parse_offset_time(&raw).ok_or_else(|| {
        invalid(format!("effectiveTime {raw} is not in the format YYYY-MM-DDTHH:mm:ss+08:00"))
    })?;
    let lifecycle = int(c.p, "snapshotLifecycle")?.ok_or_else(|| invalid("snapshotLifecycle is required"))?;
    if lifecycle < 0 {
        return Err(invalid("snapshotLifecycle must be 0 (keep) or a number of seconds"));
    }
    let status_code = int(c.p, "status")?.ok_or_else(|| invalid("status is required"))?;
    if ![1, 2].contains(&status_code) {
        return Err(invalid("status must be 1 (enabled) or 2 (disabled)"));
    }
    let id = c.ctx.new_id("policy-", 10);
    let policy = SnapshotPolicy {
        id: id.clone(),
        region: c.region.clone(),
        name,
        interval,
        effective,
        lifecycle,
        status: status_code,
        created: c.now,
        last_run: None,
        contact_info: get(c.p, "contactInfo").cloned().unwrap_or(Value::Null),
    };
    let result = policy_json(&policy, st, c.now);
    st.snapshot_policies.insert(id, policy);
    Ok(result)
}

/// `relations: [{diskId, diskRegion, policyId, op}]`; `op` 1 (or "bind") binds, 2 ("unbind")
/// unbinds. Each relation is answered on its own, as JD's `opResults` do.
pub fn apply_snapshot_policies(c: &Call, st: &mut JdState) -> Answer {
    let relations = match get(c.p, "relations") {
        Some(Value::Array(a)) if !a.is_empty() => a.clone(),
        _ => return Err(invalid("relations is required")),
    };
    let mut results = Vec::new();
    for r in &relations {
        let disk = text(r, "diskId").unwrap_or_default();
        let policy = text(r, "policyId").unwrap_or_default();
        let op = get(r, "op").cloned().unwrap_or(Value::Null);
        let bind = match (as_i64(&op), op.as_str()) {
            (Some(1), _) | (_, Some("bind")) => Some(true),
            (Some(2), _) | (_, Some("unbind")) => Some(false),
            _ => None,
        };
        let outcome = match bind {
            None => Err(format!("op {op} is not 1 (bind) or 2 (unbind)")),
            Some(_) if !st.snapshot_policies.contains_key(&policy) => {
                Err(format!("snapshot policy {policy} not found"))
            }
            Some(bind) => match st.disks.get_mut(&disk) {
                None => Err(format!("disk {disk} not found")),
                Some(d) => {
                    d.policy_ids.retain(|p| *p != policy);
                    if bind {
                        d.policy_ids.push(policy.clone());
                    }
                    Ok(())
                }
            },
        };
        let (code, message) = match outcome {
            Ok(()) => (0, "success".to_string()),
            Err(m) => (404, m),
        };
        results.push(json!({
            "code": code,
            "message": message,
            "diskId": disk,
            "diskRegion": text(r, "diskRegion").unwrap_or_else(|| c.region.clone()),
            "policyId": policy,
            "op": if bind == Some(false) { 2 } else { 1 },
        }));
    }
    Ok(json!({ "opResults": results }))
}
