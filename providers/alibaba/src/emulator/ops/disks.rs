//! ECS disks: DescribeDisks.

use serde_json::{json, Value};

use super::{region, tags_json, Answer, Call};
use crate::api::format_time;
use crate::emulator::params::EcsParams;
use crate::emulator::state::{Disk, EcsState};

/// `In_use` while attached to an instance that exists, else `Available`.
fn disk_status(d: &Disk, st: &EcsState) -> &'static str {
    if d.instance_id.as_ref().is_some_and(|i| st.instances.contains_key(i)) {
        "In_use"
    } else {
        "Available"
    }
}

pub(crate) fn disk_json(d: &Disk, st: &EcsState) -> Value {
    let attached = d.instance_id.as_ref().filter(|i| st.instances.contains_key(*i));
    json!({
        "DiskId": d.id,
        "DiskName": d.name,
        "Description": "",
        "RegionId": d.region,
        "ZoneId": d.zone,
        "Type": d.kind,
        "Category": d.category,
        "Size": d.size_gib,
        "Status": if attached.is_some() { "In_use" } else { "Available" },
        "InstanceId": attached.cloned().unwrap_or_default(),
        "Device": if attached.is_some() { d.device.clone() } else { String::new() },
        "ImageId": d.image_id,
        "SourceSnapshotId": d.source_snapshot_id,
        "CreationTime": format_time(d.created),
        "AttachedTime": if attached.is_some() { format_time(d.created) } else { String::new() },
        "DeleteWithInstance": d.delete_with_instance,
        "DeleteAutoSnapshot": false,
        "EnableAutoSnapshot": d.auto_snapshot_policy_id.is_some(),
        "EnableAutomatedSnapshotPolicy": d.auto_snapshot_policy_id.is_some(),
        "AutoSnapshotPolicyId": d.auto_snapshot_policy_id.clone().unwrap_or_default(),
        "DiskChargeType": d.charge_type,
        "Portable": d.kind == "data",
        "Encrypted": false,
        "PerformanceLevel": if d.category == "cloud_essd" { "PL1" } else { "" },
        "Tags": tags_json(&d.tags),
        "OperationLocks": { "OperationLock": [] },
        "Attachments": { "Attachment": attached.map(|i| vec![json!({"InstanceId": i, "Device": d.device, "AttachedTime": format_time(d.created)})]).unwrap_or_default() },
    })
}

pub fn describe_disks(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let ids = c.p.json_list("DiskIds")?;
    let instance = c.p.text("InstanceId");
    let kind = c.p.text("DiskType").filter(|k| k != "all");
    let zone = c.p.text("ZoneId");
    // Status: "In_use, Available, Attaching, Detaching, Creating, ReIniting, All" (the model); the
    // emulator's disks are only ever In_use or Available. Tag.N: "1 to 20".
    let status = c.p.text("Status").filter(|s| s != "All");
    let tags = c.p.tags("Tag");
    let pg = c.p.listing(500, 100)?;
    let matching: Vec<&Disk> = st
        .disks
        .values()
        .filter(|d| d.region == region)
        .filter(|d| ids.as_ref().is_none_or(|ids| ids.contains(&d.id)))
        .filter(|d| instance.as_ref().is_none_or(|i| d.instance_id.as_ref() == Some(i)))
        .filter(|d| kind.as_ref().is_none_or(|k| k == d.kind))
        .filter(|d| zone.as_ref().is_none_or(|z| *z == d.zone))
        .filter(|d| status.as_ref().is_none_or(|s| s == disk_status(d, st)))
        .filter(|d| super::tags_match(&d.tags, &tags))
        .collect();
    let (total, items) = pg.apply(matching);
    Ok(json!({
        "Disks": { "Disk": items.iter().map(|d| disk_json(d, st)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": pg.number(),
        "PageSize": pg.size(),
        "NextToken": pg.next_token(total),
    }))
}
