//! CBS operations: CreateSnapshot, DescribeSnapshots, DeleteSnapshots, DescribeDisks,
//! CreateAutoSnapshotPolicy, BindAutoSnapshotPolicy. Field names follow
//! tencentcloud-sdk-python-cbs 3.1.175 `models.py`.

use jiff::Timestamp;
use serde_json::{json, Value};

use crate::api::codes;
use crate::emulator::error::{Result, TcError};
use crate::emulator::p::{filters, page};
use crate::emulator::state::{cbs_time, Policy, Snapshot, State};
use crate::emulator::Call;

fn parse_cbs_time(s: &str) -> Option<Timestamp> {
    let dt = jiff::civil::DateTime::strptime("%Y-%m-%d %H:%M:%S", s).ok()?;
    dt.to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(8))).ok().map(|z| z.timestamp())
}

pub(crate) fn create_snapshot(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let disk_id = v.req_str("DiskId")?;
    let disk = state
        .disks
        .iter()
        .find(|d| d.id == disk_id && d.region == call.region)
        .ok_or_else(|| {
            TcError::new(codes::INVALID_DISK_ID_NOT_FOUND, format!("The disk `{disk_id}` does not exist."))
        })?
        .clone();
    if disk.is_local() {
        return Err(TcError::new(
            codes::DISK_NOT_SUPPORT_SNAPSHOT,
            format!("The disk `{disk_id}` is a local disk and cannot be snapshotted."),
        ));
    }
    let deadline = match v.opt_str("Deadline")? {
        None => None,
        Some(s) => Some(parse_cbs_time(&s).ok_or_else(|| {
            TcError::new(
                codes::INVALID_PARAMETER_VALUE,
                format!("Deadline `{s}` is not YYYY-MM-DD HH:MM:SS."),
            )
        })?),
    };
    // CreateSnapshotRequest.Tags: "快照绑定的标签" ([{Key, Value}], both required).
    let mut tags = Vec::new();
    for t in v.obj_list("Tags")? {
        tags.push((t.req_str("Key")?, t.req_str("Value")?));
    }
    let now = call.ctx.now();
    let id = call.ctx.new_id("snap-", 8);
    state.snapshots.push(Snapshot {
        id: id.clone(),
        region: call.region.clone(),
        zone: disk.zone.clone(),
        name: v.opt_str("SnapshotName")?.unwrap_or_else(|| "未命名".into()),
        disk_id,
        disk_usage: disk.usage,
        disk_size_gb: disk.size_gb,
        created: now,
        ready_at: now.checked_add(call.ctx.boot_time()).unwrap_or(now),
        policy_id: None,
        deadline,
        image_ids: Vec::new(),
        tags,
    });
    Ok(json!({ "SnapshotId": id }))
}

pub(crate) fn describe_snapshots(state: &State, call: &Call) -> Result<Value> {
    let v = call.p();
    let window = page(&v)?;
    let ids = v.str_list("SnapshotIds")?;
    let fs = filters(
        &v,
        &["snapshot-id", "disk-id", "disk-usage", "snapshot-name", "snapshot-state", "zone", "snapshot-type"],
    )?;
    if !ids.is_empty() && !fs.is_empty() {
        return Err(TcError::new(
            codes::INVALID_PARAMETER,
            "SnapshotIds and Filters cannot be given together.",
        ));
    }
    let now = call.ctx.now();
    let state_of = |s: &Snapshot| if now >= s.ready_at { "NORMAL" } else { "CREATING" };
    let found: Vec<&Snapshot> = state
        .snapshots
        .iter()
        .filter(|s| s.region == call.region && (ids.is_empty() || ids.contains(&s.id)))
        .filter(|s| {
            fs.iter().all(|(n, vs)| {
                let any = |x: &str| vs.iter().any(|v| v == x);
                match n.as_str() {
                    "snapshot-id" => any(&s.id),
                    "disk-id" => any(&s.disk_id),
                    "disk-usage" => any(s.disk_usage),
                    "snapshot-name" => any(&s.name),
                    "snapshot-state" => any(state_of(s)),
                    "zone" => any(&s.zone),
                    "snapshot-type" => any("PRIVATE_SNAPSHOT"),
                    _ => false,
                }
            })
        })
        .collect();
    Ok(json!({
        "TotalCount": found.len(),
        "SnapshotSet": window.apply(found.iter()).1.into_iter().map(|s| json!({
            "Placement": { "Zone": s.zone, "ProjectId": 0 },
            "CopyFromRemote": false,
            "SnapshotState": state_of(s),
            "IsPermanent": s.deadline.is_none(),
            "SnapshotName": s.name,
            "DeadlineTime": s.deadline.map(cbs_time),
            "Percent": if now >= s.ready_at { 100 } else { 0 },
            "Images": s.image_ids.iter().map(|i| json!({ "ImageId": i, "ImageName": "" })).collect::<Vec<_>>(),
            "ShareReference": 0,
            "SnapshotType": "PRIVATE_SNAPSHOT",
            "DiskSize": s.disk_size_gb,
            "DiskId": s.disk_id,
            "CopyingToRegions": [],
            "Encrypt": false,
            "CreateTime": cbs_time(s.created),
            "ImageCount": s.image_ids.len(),
            "DiskUsage": s.disk_usage,
            "SnapshotId": s.id,
            "TimeStartShare": Value::Null,
            "Tags": s.tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect::<Vec<_>>(),
            "IsLocked": false,
            "AutoSnapshotPolicyId": s.policy_id,
            "SnapshotMode": "",
        })).collect::<Vec<_>>(),
    }))
}

pub(crate) fn delete_snapshots(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let ids = v.str_list("SnapshotIds")?;
    if ids.is_empty() {
        return Err(TcError::new(
            codes::MISSING_PARAMETER,
            "The request is missing a required parameter `SnapshotIds`.",
        ));
    }
    let delete_images = v.opt_bool("DeleteBindImages")?.unwrap_or(false);
    for id in &ids {
        let s = state.snapshots.iter().find(|s| &s.id == id && s.region == call.region).ok_or_else(|| {
            TcError::new(codes::INVALID_SNAPSHOT_ID_NOT_FOUND, format!("The snapshot `{id}` does not exist."))
        })?;
        if !s.image_ids.is_empty() && !delete_images {
            return Err(TcError::new(
                codes::SNAPSHOT_NOT_SUPPORTED,
                format!(
                    "The snapshot `{id}` backs image(s) {}; pass DeleteBindImages=true to delete them too.",
                    s.image_ids.join(", ")
                ),
            ));
        }
    }
    let images: Vec<String> =
        state.snapshots.iter().filter(|s| ids.contains(&s.id)).flat_map(|s| s.image_ids.clone()).collect();
    state.images.retain(|i| !images.contains(&i.id));
    state.snapshots.retain(|s| !ids.contains(&s.id));
    Ok(json!({}))
}

pub(crate) fn describe_disks(state: &State, call: &Call) -> Result<Value> {
    let v = call.p();
    let window = page(&v)?;
    let ids = v.str_list("DiskIds")?;
    let fs = filters(
        &v,
        &[
            "disk-id",
            "instance-id",
            "disk-usage",
            "zone",
            "disk-type",
            "disk-state",
            "disk-charge-type",
            "tag-key",
            "tag-value",
            "tag:",
        ],
    )?;
    if !ids.is_empty() && !fs.is_empty() {
        return Err(TcError::new(codes::INVALID_PARAMETER, "DiskIds and Filters cannot be given together."));
    }
    let with_policies = v.opt_bool("ReturnBindAutoSnapshotPolicy")?.unwrap_or(false);
    let disk_state = |attached: bool| if attached { "ATTACHED" } else { "UNATTACHED" };
    let found: Vec<_> = state
        .disks
        .iter()
        .filter(|d| d.region == call.region && (ids.is_empty() || ids.contains(&d.id)))
        .filter(|d| {
            fs.iter().all(|(n, vs)| {
                let any = |x: &str| vs.iter().any(|v| v == x);
                match n.as_str() {
                    "disk-id" => any(&d.id),
                    "instance-id" => any(&d.instance_id),
                    "disk-usage" => any(d.usage),
                    "zone" => any(&d.zone),
                    "disk-type" => any(&d.disk_type),
                    "disk-state" => any(disk_state(!d.instance_id.is_empty())),
                    "disk-charge-type" => any(&disk_charge(&d.charge_type)),
                    n => crate::emulator::ops::leftover::tags_pass(n, vs, &d.tags).unwrap_or(false),
                }
            })
        })
        .collect();
    Ok(json!({
        "TotalCount": found.len(),
        "DiskSet": window.apply(found.iter()).1.into_iter().map(|d| {
            let attached = !d.instance_id.is_empty();
            json!({
                "DeleteWithInstance": d.delete_with_instance,
                "RenewFlag": "NOTIFY_AND_MANUAL_RENEW",
                "DiskType": d.disk_type,
                "DiskState": disk_state(attached),
                "SnapshotCount": state.snapshots.iter().filter(|s| s.disk_id == d.id).count(),
                "AutoRenewFlagError": false,
                "Rollbacking": false,
                "InstanceIdList": if attached { vec![d.instance_id.clone()] } else { vec![] },
                "Encrypt": false,
                "DiskName": d.name,
                "BackupDisk": false,
                "Tags": d.tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect::<Vec<_>>(),
                "InstanceId": d.instance_id,
                "AttachMode": "PF",
                "AutoSnapshotPolicyIds": if with_policies { json!(d.policy_ids) } else { Value::Null },
                "ThroughputPerformance": 0,
                "Migrating": false,
                "DiskId": d.id,
                "SnapshotSize": 0,
                "Placement": { "Zone": d.zone, "ProjectId": 0 },
                "IsReturnable": false,
                "Attached": attached,
                "DiskSize": d.size_gb,
                "MigratePercent": 0,
                "DiskUsage": d.usage,
                "DiskChargeType": disk_charge(&d.charge_type),
                "Portable": d.usage == "DATA_DISK",
                "SnapshotAbility": !d.is_local(),
                "DeadlineError": false,
                "RollbackPercent": 0,
                "DifferDaysOfDeadline": 0,
                "Shareable": false,
                "CreateTime": cbs_time(d.created),
                "DeleteSnapshot": 0,
                "DiskBackupQuota": 0,
                "DiskBackupCount": 0,
                "InstanceType": "CVM",
                "LastAttachInsId": d.instance_id,
                "ErrorPrompt": "",
                "BurstPerformance": false,
            })
        }).collect::<Vec<_>>(),
    }))
}

/// CBS names the instance's charge type its own way.
fn disk_charge(instance_charge: &str) -> String {
    match instance_charge {
        "PREPAID" => "PREPAID".into(),
        _ => "POSTPAID_BY_HOUR".into(),
    }
}

pub(crate) fn create_auto_snapshot_policy(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let rules = v.obj_list("Policy")?;
    if rules.is_empty() {
        return Err(TcError::new(
            codes::MISSING_PARAMETER,
            "The request is missing a required parameter `Policy`.",
        ));
    }
    let (mut hours, mut days) = (Vec::new(), Vec::new());
    for r in rules {
        for h in r.str_list("Hour")? {
            match h.parse::<u32>() {
                Ok(h) if h < 24 => hours.push(h),
                _ => {
                    return Err(TcError::new(
                        codes::INVALID_PARAMETER_VALUE,
                        format!("Policy.Hour `{h}` must be 0..23."),
                    ))
                }
            }
        }
        let dow = r.str_list("DayOfWeek")?;
        let interval = r.opt_i64("IntervalDays")?;
        if dow.is_empty() && interval.is_some() {
            days.extend(0..7); // every day; the interval itself is not modelled beyond daily
        }
        for d in dow {
            match d.parse::<u32>() {
                Ok(d) if d < 7 => days.push(d),
                _ => {
                    return Err(TcError::new(
                        codes::INVALID_PARAMETER_VALUE,
                        format!("Policy.DayOfWeek `{d}` must be 0..6."),
                    ))
                }
            }
        }
    }
    if hours.is_empty() || days.is_empty() {
        return Err(TcError::new(
            codes::INVALID_PARAMETER_VALUE,
            "Policy needs Hour and DayOfWeek (or IntervalDays).",
        ));
    }
    hours.sort_unstable();
    hours.dedup();
    days.sort_unstable();
    days.dedup();
    let retention_days = v.opt_i64("RetentionDays")?.unwrap_or(7);
    if !(1..=65535).contains(&retention_days) {
        return Err(TcError::new(codes::VALUE_RANGE, "RetentionDays must be between 1 and 65535."));
    }
    let now = call.ctx.now();
    let mut policy = Policy {
        id: call.ctx.new_id("asp-", 8),
        region: call.region.clone(),
        name: v.opt_str("AutoSnapshotPolicyName")?.unwrap_or_else(|| "未命名".into()),
        hours,
        days_of_week: days,
        activated: v.opt_bool("IsActivated")?.unwrap_or(true),
        permanent: v.opt_bool("IsPermanent")?.unwrap_or(false),
        retention_days,
        created: now,
        next_trigger: None,
    };
    policy.next_trigger = policy.next_after(now);
    if v.opt_bool("DryRun")?.unwrap_or(false) {
        return Ok(
            json!({ "AutoSnapshotPolicyId": "", "NextTriggerTime": policy.next_trigger.map(cbs_time) }),
        );
    }
    let out =
        json!({ "AutoSnapshotPolicyId": policy.id, "NextTriggerTime": policy.next_trigger.map(cbs_time) });
    state.policies.push(policy);
    Ok(out)
}

pub(crate) fn bind_auto_snapshot_policy(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let pid = v.req_str("AutoSnapshotPolicyId")?;
    let disk_ids = v.str_list("DiskIds")?;
    if disk_ids.is_empty() {
        return Err(TcError::new(
            codes::MISSING_PARAMETER,
            "The request is missing a required parameter `DiskIds`.",
        ));
    }
    if !state.policies.iter().any(|p| p.id == pid && p.region == call.region) {
        return Err(TcError::new(
            codes::INVALID_POLICY_ID_NOT_FOUND,
            format!("The automatic snapshot policy `{pid}` does not exist."),
        ));
    }
    for id in &disk_ids {
        if !state.disks.iter().any(|d| &d.id == id && d.region == call.region) {
            return Err(TcError::new(
                codes::INVALID_DISK_ID_NOT_FOUND,
                format!("The disk `{id}` does not exist."),
            ));
        }
    }
    for d in state.disks.iter_mut().filter(|d| disk_ids.contains(&d.id)) {
        if !d.policy_ids.contains(&pid) {
            d.policy_ids.push(pid.clone());
        }
    }
    Ok(json!({}))
}
