//! ECS images: CreateImage.

use serde_json::json;

use super::snapshots::{new_snapshot, require_settled};
use super::{instance_not_found, region, token_check, token_remember, Answer, Call};
use crate::api::codes;
use crate::emulator::error::EcsError;
use crate::emulator::state::{EcsState, Image};

pub fn create_image(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    if let Some(replay) = token_check(st, "CreateImage", c)? {
        return Ok(replay);
    }
    let image_id = c.ctx.new_id("m-", 20);
    let mut snapshot_ids = Vec::new();
    let source_instance = c.p.text("InstanceId");
    if let Some(iid) = &source_instance {
        if st.instances.get(iid).is_none_or(|i| i.region != region) {
            return Err(instance_not_found(iid));
        }
        require_settled(st, iid, c)?;
        let disks: Vec<String> =
            st.disks.values().filter(|d| d.instance_id.as_ref() == Some(iid)).map(|d| d.id.clone()).collect();
        for d in disks {
            snapshot_ids.push(new_snapshot(st, c, &d, format!("image_{image_id}_{d}"), "user")?);
        }
    } else {
        let mut wanted: Vec<String> = c.p.text("SnapshotId").into_iter().collect();
        wanted.extend(c.p.items("DiskDeviceMapping").iter().filter_map(|m| m.text("SnapshotId")));
        if wanted.is_empty() {
            return Err(EcsError::new(
                400,
                codes::MISSING_PARAMETER,
                "CreateImage needs InstanceId, SnapshotId or DiskDeviceMapping.N.SnapshotId.",
            ));
        }
        for s in &wanted {
            if !st.snapshots.contains_key(s) {
                return Err(EcsError::new(
                    404,
                    codes::SNAPSHOT_NOT_FOUND,
                    format!("The specified SnapshotId \"{s}\" does not exist."),
                ));
            }
        }
        snapshot_ids = wanted;
    }
    for s in &snapshot_ids {
        if let Some(snap) = st.snapshots.get_mut(s) {
            snap.used_by_images.push(image_id.clone());
        }
    }
    st.images.insert(
        image_id.clone(),
        Image {
            id: image_id.clone(),
            region,
            name: c.p.text("ImageName").unwrap_or_else(|| image_id.clone()),
            source_instance_id: source_instance,
            snapshot_ids,
            created: c.now,
        },
    );
    let answer = json!({ "ImageId": image_id });
    token_remember(st, "CreateImage", c, &answer);
    Ok(answer)
}
