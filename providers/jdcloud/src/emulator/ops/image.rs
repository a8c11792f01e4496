//! vm's describeImages (jdcloud_sdk 1.6.354 `jdcloud_sdk/services/vm/apis/DescribeImagesRequest.py`):
//! the official images (`imageSource = public`, "官方镜像") and the account's own (`private`), as
//! `services/vm/models/Image.py` shapes them.

use serde_json::{json, Value};

use super::{invalid, list, page, text, Answer, Call};
use crate::api::format_time;
use crate::emulator::state::{JdState, IMAGE_TAKES};

/// `imageSource` "如果没有指定 `ids` 参数，此参数必传"; `platform` matches the distribution;
/// `imageName` "根据镜像名称模糊查询"; paged by `pageNumber`/`pageSize` ("默认为20；取值范围[10, 100]").
pub fn describe_images(c: &Call, st: &JdState) -> Answer {
    let ids = list(c.p, "ids");
    let source = text(c.p, "imageSource");
    if ids.is_empty() && source.is_none() {
        return Err(invalid("imageSource is required when ids is not given"));
    }
    let platform = text(c.p, "platform");
    let name = text(c.p, "imageName");
    let pg = page(c.p)?;
    let wants = |s: &str| source.as_deref().is_none_or(|want| want == s);
    let mut found: Vec<(String, String, String, Value)> = Vec::new();
    if wants("public") {
        for i in gpuctl_simkit::images::JDCLOUD {
            found.push((
                i.id.into(),
                i.name.into(),
                i.platform.into(),
                json!({
                    "imageId": i.id, "name": i.name, "platform": i.platform, "osVersion": i.version,
                    "architecture": "x86_64", "systemDiskSizeGB": i.size_gb, "imageSource": "public",
                    "osType": "linux", "status": "ready", "createTime": i.created, "sizeMB": i.size_gb * 1024,
                    "desc": i.name, "launchPermission": "all", "rootDeviceType": "cloudDisk", "progress": 100,
                    "offline": false, "imported": false, "bootMode": "bios",
                }),
            ));
        }
    }
    if wants("private") {
        for i in st.images.values().filter(|i| i.region == c.region) {
            let ready = c.now.duration_since(i.created) >= IMAGE_TAKES;
            found.push((
                i.id.clone(),
                i.name.clone(),
                "Ubuntu".into(),
                json!({
                    "imageId": i.id, "name": i.name, "platform": "Ubuntu", "osVersion": "22.04",
                    "architecture": "x86_64", "imageSource": "private", "osType": "linux",
                    "status": if ready { "ready" } else { "creating" }, "createTime": format_time(i.created),
                    "desc": i.description, "launchPermission": "ownerOnly", "rootDeviceType": "cloudDisk",
                    "progress": if ready { 100 } else { 0 }, "instanceId": i.instance_id, "bootMode": "bios",
                }),
            ));
        }
    }
    let found: Vec<Value> = found
        .into_iter()
        .filter(|(id, ..)| ids.is_empty() || ids.contains(id))
        .filter(|(_, n, ..)| name.as_deref().is_none_or(|want| gpuctl_simkit::images::fuzzy(n, want)))
        .filter(|(_, _, p, _)| platform.as_deref().is_none_or(|want| want.eq_ignore_ascii_case(p)))
        .map(|(.., v)| v)
        .collect();
    let (total, shown) = pg.apply(found);
    Ok(json!({ "images": shown, "totalCount": total }))
}
