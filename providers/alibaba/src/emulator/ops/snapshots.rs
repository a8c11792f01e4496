//! ECS snapshots: CreateSnapshot, DescribeSnapshots, DeleteSnapshot.

use jiff::Timestamp;
use serde_json::{json, Value};

use super::{region, tags_json, token_check, token_remember, Answer, Call};
use crate::api::{codes, format_time};
use crate::emulator::error::EcsError;
use crate::emulator::params::EcsParams;
use crate::emulator::state::{EcsState, Snapshot, Status, Timings};

/// Refuse to snapshot or image an instance that is still booting, as ECS does.
pub(crate) fn require_settled(st: &EcsState, instance_id: &str, c: &Call) -> Result<(), EcsError> {
    if let Some(i) = st.instances.get(instance_id) {
        let s = i.status(c.now, &c.timings);
        if !matches!(s, Status::Running | Status::Stopped) {
            return Err(EcsError::new(
                403,
                codes::INCORRECT_STATUS,
                format!("The current status of the resource does not support this operation: instance {instance_id} is {}.", s.as_str()),
            ));
        }
    }
    Ok(())
}

pub(crate) fn new_snapshot(
    st: &mut EcsState,
    c: &Call,
    disk_id: &str,
    name: String,
    kind: &'static str,
) -> Result<String, EcsError> {
    let disk = st
        .disks
        .get(disk_id)
        .ok_or_else(|| {
            EcsError::new(
                404,
                codes::DISK_NOT_FOUND,
                format!("The specified DiskId \"{disk_id}\" does not exist."),
            )
        })?
        .clone();
    let id = c.ctx.new_id("s-", 20);
    st.snapshots.insert(
        id.clone(),
        Snapshot {
            id: id.clone(),
            region: disk.region.clone(),
            name,
            description: c.p.text("Description").unwrap_or_default(),
            disk_id: disk.id.clone(),
            disk_size_gib: disk.size_gib,
            disk_kind: if disk.kind == "system" { "System" } else { "Data" },
            created: c.now,
            retention_days: c.p.opt_i64("RetentionDays").ok().flatten(),
            snapshot_type: kind,
            tags: c.p.tags("Tag"),
            used_by_images: Vec::new(),
        },
    );
    Ok(id)
}

pub fn create_snapshot(c: &Call, st: &mut EcsState) -> Answer {
    let disk_id = c.p.required("DiskId")?;
    if let Some(replay) = token_check(st, "CreateSnapshot", c)? {
        return Ok(replay);
    }
    let disk = st.disks.get(&disk_id).ok_or_else(|| {
        EcsError::new(
            404,
            codes::DISK_NOT_FOUND,
            format!("The specified DiskId \"{disk_id}\" does not exist."),
        )
    })?;
    if let Some(i) = disk.instance_id.clone() {
        require_settled(st, &i, c)?;
    }
    let id = new_snapshot(st, c, &disk_id, c.p.text("SnapshotName").unwrap_or_default(), "user")?;
    let answer = json!({ "SnapshotId": id });
    token_remember(st, "CreateSnapshot", c, &answer);
    Ok(answer)
}

pub(crate) fn snapshot_json(s: &Snapshot, now: Timestamp, t: &Timings) -> Value {
    let done = s.accomplished(now, t);
    json!({
        "SnapshotId": s.id,
        "SnapshotName": s.name,
        "Description": s.description,
        "RegionId": s.region,
        "SourceDiskId": s.disk_id,
        "SourceDiskSize": s.disk_size_gib.to_string(),
        "SourceDiskType": s.disk_kind,
        "SourceStorageType": "disk",
        "Status": if done { "accomplished" } else { "progressing" },
        "Progress": if done { "100%" } else { "50%" },
        "Available": done,
        "CreationTime": format_time(s.created),
        "LastModifiedTime": format_time(s.created),
        "RetentionDays": s.retention_days.unwrap_or(0),
        "SnapshotType": s.snapshot_type,
        "Category": "standard",
        "InstantAccess": false,
        "Encrypted": false,
        "Usage": if s.used_by_images.is_empty() { "none" } else { "image" },
        "ProductCode": "",
        "Tags": tags_json(&s.tags),
    })
}

pub fn describe_snapshots(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let ids = c.p.json_list("SnapshotIds")?;
    let disk = c.p.text("DiskId");
    let instance = c.p.text("InstanceId");
    let kind = c.p.text("SnapshotType").filter(|k| k != "all");
    let status = c.p.text("Status").filter(|k| k != "all");
    let tags = c.p.tags("Tag");
    let pg = c.p.listing(100, 100)?;
    let instance_disks: Option<Vec<&String>> = instance
        .as_ref()
        .map(|i| st.disks.values().filter(|d| d.instance_id.as_ref() == Some(i)).map(|d| &d.id).collect());
    let matching: Vec<&Snapshot> = st
        .snapshots
        .values()
        .filter(|s| s.region == region)
        .filter(|s| ids.as_ref().is_none_or(|ids| ids.contains(&s.id)))
        .filter(|s| disk.as_ref().is_none_or(|d| *d == s.disk_id))
        .filter(|s| instance_disks.as_ref().is_none_or(|ds| ds.contains(&&s.disk_id)))
        .filter(|s| kind.as_ref().is_none_or(|k| k == s.snapshot_type))
        .filter(|s| {
            status.as_ref().is_none_or(|want| (want == "accomplished") == s.accomplished(c.now, &c.timings))
        })
        .filter(|s| super::tags_match(&s.tags, &tags))
        .collect();
    let (total, items) = pg.apply(matching);
    Ok(json!({
        "Snapshots": { "Snapshot": items.iter().map(|s| snapshot_json(s, c.now, &c.timings)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": pg.number(),
        "PageSize": pg.size(),
        "NextToken": pg.next_token(total),
    }))
}

pub fn delete_snapshot(c: &Call, st: &mut EcsState) -> Answer {
    let id = c.p.required("SnapshotId")?;
    let snap = st.snapshots.get(&id).ok_or_else(|| {
        EcsError::new(
            404,
            codes::SNAPSHOT_NOT_FOUND,
            format!("The specified SnapshotId \"{id}\" does not exist."),
        )
    })?;
    if !snap.used_by_images.is_empty() && !c.p.opt_bool("Force")?.unwrap_or(false) {
        return Err(EcsError::new(
            403,
            codes::SNAPSHOT_USED_BY_IMAGE,
            format!(
                "The snapshot {id} is used by image {}; delete the image first or pass Force=true.",
                snap.used_by_images.join(", ")
            ),
        ));
    }
    st.snapshots.remove(&id);
    Ok(json!({}))
}
