//! ECS deployment sets (issue 14): CreateDeploymentSet, DescribeDeploymentSets, DeleteDeploymentSet,
//! DescribeDeploymentSetSupportedInstanceTypeFamily, and the checks RunInstances makes of a
//! `DeploymentSetId` (`check_launch`). Every rule cites its source; the facts are collected in
//! docs/research/clusters.md §1 (Alibaba) and `crate::api::deployment_set`.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::{region, token_check, token_remember, Answer, Call};
use crate::api::deployment_set::{
    codes as ds, family_of, name_ok, INSTANCES_PER_ZONE, LOW_LATENCY, PAGE_MAX, STRATEGIES,
};
use crate::api::{codes, format_time};
use crate::emulator::error::EcsError;
use crate::emulator::params::EcsParams;
use crate::emulator::state::{DeploymentSet, EcsState};
use crate::emulator::PROVIDER;

const CREATE: &str = "CreateDeploymentSet";

/// The families a strategy takes in `region`. The clouds publish no per-family list for GPU types
/// (the limits page says to ask DescribeDeploymentSetSupportedInstanceTypeFamily and names none), so
/// the local cloud's assumption is: every family it sells in the region, for every strategy, but
/// those a `no_low_latency` knob drops from `LowLatency` (simkit `Knobs::no_low_latency`; a test or
/// `PUT /_sim/knobs` sets it).
pub(crate) fn supported_families(c: &Call, region: &str, strategy: &str) -> BTreeSet<String> {
    let dropped = c.ctx.knobs().no_low_latency;
    c.ctx
        .offers(PROVIDER)
        .filter(|o| o.region == region)
        .map(|o| o.family.clone())
        .filter(|f| strategy != LOW_LATENCY || !dropped.iter().any(|r| r.matches(PROVIDER, f)))
        .collect()
}

/// `Strategy`: one of the three (alibabacloud_ecs20140526 7.11.8 `_create_deployment_set_request.py`
/// "Valid values: - Availability ... - AvailabilityGroup ... - LowLatency", "Default value:
/// Availability"); another is 400 `InvalidParameter.Strategy` (AlibabaCloudDocs/ecs
/// `…/Deployment sets/CreateDeploymentSet.md`).
fn strategy(c: &Call) -> Result<String, EcsError> {
    let s = c.p.text("Strategy").unwrap_or_else(|| "Availability".into());
    if STRATEGIES.contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(EcsError::new(
            400,
            ds::BAD_STRATEGY,
            format!(
                "The specified Strategy \"{s}\" is not valid: Availability, AvailabilityGroup or LowLatency."
            ),
        ))
    }
}

fn not_found(id: &str) -> EcsError {
    EcsError::new(404, ds::NOT_FOUND, format!("The specified DeploymentSetId \"{id}\" does not exist."))
}

pub fn create_deployment_set(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    let strategy = strategy(c)?;
    let name = c.p.text("DeploymentSetName").unwrap_or_default();
    // `DeploymentSetName` "2 to 128 characters ... must start with a letter or a Chinese character
    // ..." (`_create_deployment_set_request.py`); 400 `InvalidDeploymentSetName.Malformed`
    // (CreateDeploymentSet.md).
    if !name.is_empty() && !name_ok(&name) {
        return Err(EcsError::new(
            400,
            ds::NAME_MALFORMED,
            format!("The specified DeploymentSetName \"{name}\" is not valid: 2 to 128 characters, starting with a letter; letters, digits, `:`, `_` and `-`."),
        ));
    }
    // `Description` "2 to 256 characters in length and cannot start with `http://` or `https://`";
    // 400 `InvalidDescription.Malformed` (CreateDeploymentSet.md).
    let description = c.p.text("Description").unwrap_or_default();
    let len = description.chars().count();
    if !description.is_empty()
        && (!(2..=256).contains(&len)
            || description.starts_with("http://")
            || description.starts_with("https://"))
    {
        return Err(EcsError::new(
            400,
            "InvalidDescription.Malformed",
            "The specified Description is not valid: 2 to 256 characters, not starting with http:// or https://.",
        ));
    }
    // `ClientToken` "supports only ASCII characters and cannot exceed 64 characters": a repeat answers
    // the set the first call made.
    if let Some(replay) = token_check(st, CREATE, c)? {
        return Ok(replay);
    }
    let id = c.ctx.new_id("ds-", 20);
    st.deployment_sets.insert(
        id.clone(),
        DeploymentSet { id: id.clone(), region, name, description, strategy, created: c.now },
    );
    let answer = json!({ "DeploymentSetId": id });
    token_remember(st, CREATE, c, &answer);
    Ok(answer)
}

/// The instances in set `id`, by zone.
fn members<'a>(st: &'a EcsState, id: &str) -> Vec<(&'a str, &'a str)> {
    st.instances
        .values()
        .filter(|i| i.deployment_set_id.as_deref() == Some(id))
        .map(|i| (i.id.as_str(), i.zone.as_str()))
        .collect()
}

fn set_json(st: &EcsState, s: &DeploymentSet) -> Value {
    let held = members(st, &s.id);
    let zones: BTreeSet<&str> = held.iter().map(|(_, z)| *z).collect();
    json!({
        "DeploymentSetId": s.id,
        "DeploymentSetName": s.name,
        "DeploymentSetDescription": s.description,
        "DeploymentStrategy": s.strategy,
        "Strategy": s.strategy,
        "Type": "host",
        "Affinity": 1,
        "GroupCount": 0,
        "Domain": "Default",
        "Granularity": "Host",
        "InstanceAmount": held.len(),
        "InstanceIds": { "InstanceId": held.iter().map(|(i, _)| *i).collect::<Vec<_>>() },
        "Capacities": { "Capacity": zones.iter().map(|z| {
            let used = held.iter().filter(|(_, hz)| hz == z).count();
            json!({ "ZoneId": z, "UsedAmount": used, "AvailableAmount": INSTANCES_PER_ZONE.saturating_sub(used) })
        }).collect::<Vec<_>>() },
        "CreationTime": format_time(s.created),
    })
}

/// `DeploymentSetIds` "A maximum of 100 IDs are supported"; `PageSize` "Maximum value: 50. Default
/// value: 10"; `PageNumber` "Minimum value: 1" (`_describe_deployment_sets_request.py`). Out-of-range
/// sizes are clamped, as the emulator's other PageNumber listings do.
pub fn describe_deployment_sets(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let ids = c.p.json_list("DeploymentSetIds")?;
    if ids.as_ref().is_some_and(|i| i.len() > 100) {
        return Err(EcsError::new(
            400,
            codes::INVALID_PARAMETER,
            "The specified parameter \"DeploymentSetIds\" is not valid: at most 100 IDs.",
        ));
    }
    let name = c.p.text("DeploymentSetName");
    let strategy = c.p.text("Strategy");
    let w = c.p.page_number(("PageNumber", "PageSize"), 10, 1..=i64::from(PAGE_MAX))?;
    let matching = st
        .deployment_sets
        .values()
        .filter(|s| s.region == region)
        .filter(|s| ids.as_ref().is_none_or(|ids| ids.contains(&s.id)))
        .filter(|s| name.as_ref().is_none_or(|n| *n == s.name))
        .filter(|s| strategy.as_ref().is_none_or(|x| *x == s.strategy));
    let (total, page) = w.apply(matching);
    Ok(json!({
        "RegionId": region,
        "DeploymentSets": { "DeploymentSet": page.iter().map(|s| set_json(st, s)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": w.number(),
        "PageSize": w.size(),
    }))
}

/// `RegionId` and `DeploymentSetId` are required (the schema); a set that still holds instances is
/// 403 `DependencyViolation.NotEmpty` (AlibabaCloudDocs/ecs `…/Deployment sets/DeleteDeploymentSet.md`,
/// 2020-11-03). An unknown id is 404 `DeploymentSet.NotFound`: that page lists no not-found code, so
/// RunInstances' code for an unknown set is used (*unverified* for this action).
pub fn delete_deployment_set(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    let id = c.p.required("DeploymentSetId")?;
    if st.deployment_sets.get(&id).is_none_or(|s| s.region != region) {
        return Err(not_found(&id));
    }
    let held = members(st, &id).len();
    if held > 0 {
        return Err(EcsError::new(
            403,
            ds::NOT_EMPTY,
            format!("The deployment set {id} still holds {held} instance(s); release them first."),
        ));
    }
    st.deployment_sets.remove(&id);
    Ok(json!({}))
}

/// `InstanceTypeFamilies`: the families as one comma-separated string (`ecs.i2g,ecs.i1,…`:
/// `_describe_deployment_set_supported_instance_type_family_response_body.py`,
/// https://help.aliyun.com/document_detail/175267.html).
pub fn describe_supported_families(c: &Call) -> Answer {
    let region = region(c)?;
    let strategy = strategy(c)?;
    let families: Vec<String> = supported_families(c, &region, &strategy).into_iter().collect();
    Ok(json!({ "InstanceTypeFamilies": families.join(",") }))
}

/// RunInstances' `DeploymentSetId` (alibabacloud_ecs20140526 7.11.8 `_run_instances_request.py`):
/// the set must exist (404 `DeploymentSet.NotFound`, RunInstances.md 2021-06-15); a deployment set
/// holds no spot instance (the limits page: "cannot hold spot (抢占式) instances"; no error code is
/// documented for it, so the generic 400 `InvalidParameter` ECS's error centre gives every action);
/// the strategy must take the type's family (no code documented either: the closest documented one,
/// RunInstances' 400 `InvalidInstanceType.ValueNotSupported`); and a set holds at most 20 instances
/// per zone, a LowLatency one in one zone only (403 `QuotaExceed.DeploymentSetInstanceQuotaFull`,
/// RunInstances.md; the one-zone rule is the limits page's, its code there *unverified*).
pub fn check_launch(
    c: &Call,
    st: &EcsState,
    region: &str,
    zone: &str,
    instance_type: &str,
    spot: bool,
    amount: usize,
) -> Result<Option<String>, EcsError> {
    let Some(id) = c.p.text("DeploymentSetId") else { return Ok(None) };
    let set = st.deployment_sets.get(&id).filter(|s| s.region == region).ok_or_else(|| not_found(&id))?;
    if spot {
        return Err(EcsError::new(
            400,
            codes::INVALID_PARAMETER,
            format!("A deployment set cannot hold spot instances: SpotStrategy must be NoSpot with DeploymentSetId {id}."),
        ));
    }
    let family = family_of(instance_type);
    if !supported_families(c, region, &set.strategy).contains(family) {
        return Err(EcsError::new(
            400,
            codes::BAD_INSTANCE_TYPE,
            format!("The instance family {family} is not supported by the {} strategy of deployment set {id} (DescribeDeploymentSetSupportedInstanceTypeFamily lists what is).", set.strategy),
        ));
    }
    let held = members(st, &id);
    let elsewhere = set.strategy == LOW_LATENCY && held.iter().any(|(_, z)| *z != zone);
    let in_zone = held.iter().filter(|(_, z)| *z == zone).count();
    if elsewhere || in_zone + amount > INSTANCES_PER_ZONE {
        return Err(EcsError::new(
            403,
            ds::QUOTA_FULL,
            format!("The deployment set {id} cannot take {amount} more instance(s) in {zone}: it holds {in_zone} there (at most {INSTANCES_PER_ZONE} per zone{}).", if elsewhere { ", and a LowLatency set keeps to one zone" } else { "" }),
        ));
    }
    Ok(Some(id))
}
