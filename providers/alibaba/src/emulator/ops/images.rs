//! ECS images: CreateImage, DescribeImages.

use serde_json::json;

use super::snapshots::{new_snapshot, require_settled};
use super::{instance_not_found, region, token_check, token_remember, Answer, Call};
use crate::api::{codes, format_time};
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

/// DescribeImages (alibabacloud_ecs20140526 7.11.8 `models/_describe_images_request.py`): the region's
/// public images (`ImageOwnerAlias = system`, "Images provided by Alibaba Cloud") and the account's
/// own (`self`); "An empty value indicates that images with the system, self, and others values are
/// returned". `ImageName` "Fuzzy search is supported"; `ImageId` takes several, comma-separated;
/// `PageSize` "Maximum value: 100. Default value: 10".
pub fn describe_images(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let alias = c.p.text("ImageOwnerAlias");
    let ids: Vec<String> =
        c.p.text("ImageId").map(|s| s.split(',').map(|x| x.trim().to_owned()).collect()).unwrap_or_default();
    let name = c.p.text("ImageName");
    // `Status`: "Default value: Available ... supports multiple values at the same time, separated by
    // commas (,). When the value is set to ALL, images in all statuses are queried. ALL cannot be used
    // together with other status values." (alibabacloud_ecs20140526 7.11.8 _describe_images_request.py)
    let statuses: Vec<String> =
        c.p.text("Status")
            .unwrap_or_else(|| "Available".into())
            .split(',')
            .map(|x| x.trim().to_owned())
            .collect();
    const STATUSES: [&str; 7] =
        ["Creating", "Waiting", "Available", "UnAvailable", "CreateFailed", "Deprecated", "ALL"];
    if let Some(bad) = statuses.iter().find(|s| !STATUSES.contains(&s.as_str())) {
        return Err(EcsError::new(
            400,
            codes::INVALID_PARAMETER,
            format!("Status {bad:?} is not one of {}.", STATUSES.join(", ")),
        ));
    }
    if statuses.len() > 1 && statuses.iter().any(|s| s == "ALL") {
        return Err(EcsError::new(
            400,
            codes::INVALID_PARAMETER,
            "Status ALL cannot be used together with other statuses.",
        ));
    }
    let shown = |status: &str| statuses.iter().any(|s| s == "ALL" || s == status);
    let w = c.p.page_number(("PageNumber", "PageSize"), 10, 1..=100)?;
    let wants = |owner: &str| alias.as_deref().is_none_or(|a| a == owner);
    let mut found: Vec<(String, String, serde_json::Value)> = Vec::new();
    if wants("system") {
        for i in gpuctl_simkit::images::ALIBABA {
            found.push((
                i.id.to_owned(),
                i.id.to_owned(),
                json!({
                    "ImageId": i.id,
                    // A public image's ImageName is its id; OSName/OSNameEn carry the words.
                    "ImageName": i.id,
                    "OSName": i.name,
                    "OSNameEn": i.name,
                    "Platform": i.platform,
                    "OSType": "linux",
                    "Architecture": "x86_64",
                    "ImageOwnerAlias": "system",
                    "IsPublic": true,
                    "IsSupportCloudinit": true,
                    "Size": i.size_gb,
                    "Status": "Available",
                    "Usage": "instance",
                    "CreationTime": i.created,
                    "Description": i.name,
                    "Progress": "100%",
                }),
            ));
        }
    }
    if wants("self") {
        for i in st.images.values().filter(|i| i.region == region) {
            let ready = c.now.duration_since(i.created) >= c.timings.image;
            found.push((
                i.id.clone(),
                i.name.clone(),
                json!({
                    "ImageId": i.id,
                    "ImageName": i.name,
                    "OSName": "Ubuntu  22.04 64位",
                    "OSNameEn": "Ubuntu  22.04 64 bit",
                    "Platform": "Ubuntu",
                    "OSType": "linux",
                    "Architecture": "x86_64",
                    "ImageOwnerAlias": "self",
                    "IsPublic": false,
                    "IsSupportCloudinit": true,
                    "Status": if ready { "Available" } else { "Creating" },
                    "Usage": "none",
                    "CreationTime": format_time(i.created),
                    "Progress": if ready { "100%" } else { "0%" },
                }),
            ));
        }
    }
    let found: Vec<serde_json::Value> = found
        .into_iter()
        .filter(|(id, _, _)| ids.is_empty() || ids.contains(id))
        .filter(|(_, n, _)| name.as_deref().is_none_or(|want| gpuctl_simkit::images::fuzzy(n, want)))
        .filter(|(.., v)| shown(v["Status"].as_str().unwrap_or_default()))
        .map(|(.., v)| v)
        .collect();
    let total = found.len();
    let page: Vec<serde_json::Value> =
        found.into_iter().skip((w.number() - 1).saturating_mul(w.size())).take(w.size()).collect();
    Ok(json!({
        "Images": { "Image": page },
        "TotalCount": total,
        "PageNumber": w.number(),
        "PageSize": w.size(),
        "RegionId": region,
    }))
}
