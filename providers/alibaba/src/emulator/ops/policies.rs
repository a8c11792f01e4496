//! ECS automatic snapshot policies: CreateAutoSnapshotPolicy, ApplyAutoSnapshotPolicy.

use serde_json::json;

use super::{Answer, Call};
use crate::api::codes;
use crate::emulator::error::EcsError;
use crate::emulator::params::EcsParams;
use crate::emulator::state::{AutoSnapshotPolicy, EcsState};

/// `timePoints='["0","13"]'`: hours 0-23; `repeatWeekdays='["1","7"]'`: 1 = Monday … 7 = Sunday.
pub(crate) fn small_numbers(
    c: &Call,
    name: &str,
    range: std::ops::RangeInclusive<u8>,
) -> Result<Vec<u8>, EcsError> {
    let raw = c.p.json_list(name)?.ok_or_else(|| c.p.required(name).unwrap_err())?;
    let bad = || {
        let mut code = String::from("Invalid");
        code.push_str(&name[..1].to_ascii_uppercase());
        code.push_str(&name[1..]);
        code.push_str(".Malformed");
        EcsError::new(
            400,
            &code,
            format!("The specified {name} {raw:?} must be numbers in {}-{}.", range.start(), range.end()),
        )
    };
    let nums: Vec<u8> = raw
        .iter()
        .map(|s| s.trim().parse::<u8>().ok().filter(|n| range.contains(n)))
        .collect::<Option<_>>()
        .ok_or_else(bad)?;
    if nums.is_empty() {
        return Err(bad());
    }
    Ok(nums)
}

pub fn create_auto_snapshot_policy(c: &Call, st: &mut EcsState) -> Answer {
    // This API's parameters are lower camel case on the wire (regionId, timePoints, ...).
    let region = c.p.required("regionId")?;
    let time_points = small_numbers(c, "timePoints", 0..=23)?;
    let repeat_weekdays = small_numbers(c, "repeatWeekdays", 1..=7)?;
    let retention_days =
        c.p.opt_i64("retentionDays")?.ok_or_else(|| c.p.required("retentionDays").unwrap_err())?;
    if !(retention_days == -1 || (1..=65536).contains(&retention_days)) {
        return Err(EcsError::new(
            400,
            "InvalidRetentionDays.Malformed",
            format!("retentionDays must be -1 or 1-65536, got {retention_days}."),
        ));
    }
    let id = c.ctx.new_id("sp-", 20);
    st.auto_snapshot_policies.insert(
        id.clone(),
        AutoSnapshotPolicy {
            id: id.clone(),
            region,
            name: c.p.text("autoSnapshotPolicyName").unwrap_or_default(),
            time_points,
            repeat_weekdays,
            retention_days,
            created: c.now,
            evaluated_until: c.now,
        },
    );
    Ok(json!({ "AutoSnapshotPolicyId": id }))
}

pub fn apply_auto_snapshot_policy(c: &Call, st: &mut EcsState) -> Answer {
    let _region = c.p.required("regionId")?;
    let policy = c.p.required("autoSnapshotPolicyId")?;
    let disks = c.p.json_list("diskIds")?.ok_or_else(|| c.p.required("diskIds").unwrap_err())?;
    if !st.auto_snapshot_policies.contains_key(&policy) {
        return Err(EcsError::new(
            404,
            codes::POLICY_NOT_FOUND,
            format!("The specified autoSnapshotPolicyId \"{policy}\" does not exist."),
        ));
    }
    for d in &disks {
        if !st.disks.contains_key(d) {
            return Err(EcsError::new(
                404,
                codes::DISK_NOT_FOUND,
                format!("The specified DiskId \"{d}\" does not exist."),
            ));
        }
    }
    for d in &disks {
        if let Some(disk) = st.disks.get_mut(d) {
            disk.auto_snapshot_policy_id = Some(policy.clone());
        }
    }
    Ok(json!({}))
}
