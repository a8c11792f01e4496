//! The ECS operations: each reads its parameters, checks them as ECS does, changes the state and
//! renders ECS's answer (field names from alibabacloud_ecs20140526's response models).

use gpuctl_simkit::{Idem, Offer, SimCtx};
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use super::params::Params;
use super::state::{AutoSnapshotPolicy, Disk, EcsState, Image, Instance, Snapshot, Status, Timings};
use super::{EcsError, PROVIDER};
use crate::api::{codes, format_time, parse_time};

/// Everything an operation needs besides the state.
pub struct Call<'a> {
    pub p: Params<'a>,
    pub ctx: &'a SimCtx,
    pub now: Timestamp,
    pub timings: Timings,
    /// The caller's access key: ClientTokens are remembered per account.
    pub account: String,
}

type Answer = Result<Value, EcsError>;

/// Far-future expiry ECS shows for pay-as-you-go instances.
const NEVER_EXPIRES: &str = "2099-12-31T15:59Z";

fn region(c: &Call) -> Result<String, EcsError> {
    let region = c.p.required("RegionId")?;
    if c.ctx.regions(PROVIDER).contains(&region) {
        Ok(region)
    } else {
        Err(EcsError::new(
            404,
            codes::REGION_NOT_FOUND,
            format!("The specified RegionId \"{region}\" does not exist."),
        ))
    }
}

/// The catalog names ECS types without the API's `ecs.` prefix (`gn7i-c8g1.2xlarge`); requests
/// and answers use the API name (`ecs.gn7i-c8g1.2xlarge`). Either spelling finds the offer.
fn find_offer<'c>(ctx: &'c SimCtx, region: &str, api_type: &str) -> Option<&'c Offer> {
    ctx.offer(PROVIDER, region, api_type)
        .or_else(|| ctx.offer(PROVIDER, region, api_type.strip_prefix("ecs.")?))
}

/// The API spelling of a catalog name (`ecs.` prefixed).
fn api_name(catalog_name: &str) -> String {
    if catalog_name.starts_with("ecs.") {
        catalog_name.to_string()
    } else {
        format!("ecs.{catalog_name}")
    }
}

/// Stock-out knobs may name the type either way.
fn sold_out(ctx: &SimCtx, offer: &Offer, zone: &str) -> bool {
    ctx.is_sold_out(PROVIDER, &offer.instance_type, zone)
        || ctx.is_sold_out(PROVIDER, &api_name(&offer.instance_type), zone)
}

fn dry_run_passed() -> EcsError {
    EcsError::new(400, codes::DRY_RUN, "Request validation has been passed with DryRun flag set.")
}

fn instance_not_found(id: &str) -> EcsError {
    EcsError::new(
        404,
        codes::INSTANCE_NOT_FOUND,
        format!("The specified InstanceId \"{id}\" does not exist."),
    )
}

/// ECS's AutoReleaseTime window: at least 30 minutes and at most 3 years ahead; seconds are
/// rounded down.
fn auto_release_time(raw: &str, now: Timestamp) -> Result<Timestamp, EcsError> {
    let t = parse_time(raw).ok_or_else(|| {
        EcsError::new(
            400,
            codes::AUTO_RELEASE_MALFORMED,
            format!(
                "The specified AutoReleaseTime \"{raw}\" is not in the format yyyy-MM-ddTHH:mm:ssZ (UTC)."
            ),
        )
    })?;
    let t = Timestamp::from_second(t.as_second() - t.as_second().rem_euclid(60)).unwrap_or(t);
    let ahead = t.duration_since(now);
    if ahead < SignedDuration::from_mins(30) || ahead > SignedDuration::from_hours(24 * 365 * 3) {
        return Err(EcsError::new(
            400,
            codes::AUTO_RELEASE_OUT_OF_RANGE,
            format!("The specified AutoReleaseTime \"{raw}\" must be at least 30 minutes and at most 3 years from now."),
        ));
    }
    Ok(t)
}

/// Period/PeriodUnit as RunInstances accepts them for PrePaid: Week 1-4, Month 1-9/12/24/36/48/60.
fn prepaid_term(p: &Params) -> Result<(u32, String), EcsError> {
    let unit = p.str("PeriodUnit").unwrap_or_else(|| "Month".into());
    let period = p.int("Period")?.ok_or_else(|| {
        EcsError::new(
            400,
            codes::MISSING_PARAMETER,
            "The input parameter \"Period\" that is mandatory for PrePaid instances is not supplied.",
        )
    })?;
    let ok = match unit.as_str() {
        "Week" => (1..=4).contains(&period),
        "Month" => (1..=9).contains(&period) || [12, 24, 36, 48, 60].contains(&period),
        _ => false,
    };
    if !ok {
        return Err(EcsError::new(
            400,
            codes::INVALID_PERIOD,
            format!("The specified Period {period} with PeriodUnit \"{unit}\" is not supported (Week: 1-4; Month: 1-9, 12, 24, 36, 48, 60)."),
        ));
    }
    Ok((period as u32, unit))
}

/// The catalogued price of `amount` instances for the chosen billing, or None when the catalog has
/// no price for that mode.
fn price_for(offer: &Offer, charge: &str, spot: &str, term: &Option<(u32, String)>) -> Option<f64> {
    let p = &offer.prices;
    match (charge, term) {
        ("PrePaid", Some((n, unit))) if unit == "Week" => p.weekly.map(|w| w * f64::from(*n)),
        ("PrePaid", Some((n, _))) => match n {
            12 => p.yearly,
            36 => p.three_year,
            n => p.monthly.map(|m| m * f64::from(*n)),
        },
        _ if spot != "NoSpot" => p.spot_hourly,
        _ => p.hourly,
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

pub fn run_instances(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    let instance_type = c.p.required("InstanceType")?;
    let image_id = c.p.required("ImageId")?;
    let offer = find_offer(c.ctx, &region, &instance_type).ok_or_else(|| {
        EcsError::new(
            400,
            codes::BAD_INSTANCE_TYPE,
            format!("The specified InstanceType \"{instance_type}\" is not supported in region {region}."),
        )
    })?;
    let instance_type = api_name(&offer.instance_type);
    let zone = match c.p.str("ZoneId") {
        Some(z) if offer.zones.contains(&z) => z,
        Some(z) => {
            return Err(EcsError::new(
                400,
                codes::BAD_INSTANCE_TYPE,
                format!("The specified InstanceType \"{instance_type}\" is not supported in zone \"{z}\" (sold in: {}).", offer.zones.join(", ")),
            ))
        }
        None => offer
            .zones
            .iter()
            .find(|z| !sold_out(c.ctx, offer, z))
            .or(offer.zones.first())
            .cloned()
            .unwrap_or_default(),
    };
    let amount = c.p.int("Amount")?.unwrap_or(1);
    if !(1..=100).contains(&amount) {
        return Err(EcsError::new(
            400,
            "InvalidAmount.ValueNotSupported",
            format!("Amount must be 1-100, got {amount}."),
        ));
    }
    let charge = c.p.str("InstanceChargeType").unwrap_or_else(|| "PostPaid".into());
    let term = match charge.as_str() {
        "PostPaid" => None,
        "PrePaid" => Some(prepaid_term(&c.p)?),
        other => return Err(super::params::invalid("InstanceChargeType", &json!(other))),
    };
    let spot = c.p.str("SpotStrategy").unwrap_or_else(|| "NoSpot".into());
    if !["NoSpot", "SpotWithPriceLimit", "SpotAsPriceGo"].contains(&spot.as_str()) {
        return Err(super::params::invalid("SpotStrategy", &json!(spot)));
    }
    if spot != "NoSpot" && charge != "PostPaid" {
        return Err(EcsError::new(
            400,
            codes::INVALID_PARAMETER,
            "SpotStrategy applies only to PostPaid instances.",
        ));
    }
    let spot_limit = c.p.float("SpotPriceLimit")?;
    if spot == "SpotWithPriceLimit" && spot_limit.is_none() {
        return Err(EcsError::new(400, codes::MISSING_PARAMETER, "SpotWithPriceLimit needs SpotPriceLimit."));
    }
    if let (Some(limit), Some(market)) =
        (spot_limit, offer.prices.spot_hourly.filter(|_| spot == "SpotWithPriceLimit"))
    {
        if limit < market {
            // *unverified* code; the rule (a limit under the market price cannot launch) is ECS's.
            return Err(EcsError::new(
                400,
                "InvalidSpotPriceLimit.LowerThanPublicPrice",
                format!("SpotPriceLimit {limit} is below the current spot price {market} of {instance_type} (catalog: {}, as of {}).", offer.source, offer.as_of),
            ));
        }
    }
    let auto_release = match c.p.str("AutoReleaseTime") {
        Some(raw) => Some(auto_release_time(&raw, c.now)?),
        None => None,
    };
    let token = c.p.str("ClientToken");
    if let Some(t) = &token {
        if t.len() > 64 || !t.is_ascii() {
            return Err(EcsError::new(
                400,
                "InvalidClientToken.Malformed",
                "ClientToken must be at most 64 ASCII characters.",
            ));
        }
        if let Some(replay) = token_check(st, "RunInstances", c)? {
            return Ok(replay);
        }
    }
    if sold_out(c.ctx, offer, &zone) {
        return Err(EcsError::new(
            403,
            codes::NO_STOCK,
            format!("The requested resource is sold out in the specified zone; try other types of resources or other regions and zones. ({instance_type} in {zone})"),
        ));
    }
    let unit_price = price_for(offer, &charge, &spot, &term);
    if c.p.bool("DryRun")? {
        return Err(dry_run_passed());
    }
    // A stock knob with `available` left: all `Amount` instances or none (refused as sold out).
    if c.ctx.take_stock(
        PROVIDER,
        &[&offer.instance_type, &api_name(&offer.instance_type)],
        &zone,
        amount as u32,
        true,
    ) < amount as u32
    {
        return Err(EcsError::new(
            403,
            codes::NO_STOCK,
            format!("The requested resource is sold out in the specified zone; try other types of resources or other regions and zones. ({instance_type} in {zone})"),
        ));
    }

    let sys = c.p.child("SystemDisk");
    let name = c.p.str("InstanceName").unwrap_or_default();
    let mut ids = Vec::new();
    for _ in 0..amount {
        let id = c.ctx.new_id("i-", 20);
        let ip_tail = st.instances.len() % 250 + 2;
        let inst = Instance {
            id: id.clone(),
            region: region.clone(),
            zone: zone.clone(),
            instance_type: instance_type.clone(),
            image_id: image_id.clone(),
            name: if name.is_empty() { id.clone() } else { name.clone() },
            description: c.p.str("Description").unwrap_or_default(),
            host_name: c.p.str("HostName").unwrap_or_else(|| format!("iZ{}Z", &id[2..])),
            charge_type: charge.clone(),
            spot_strategy: spot.clone(),
            spot_price_limit: spot_limit,
            term: term.clone(),
            created: c.now,
            auto_release,
            expires: term.as_ref().map(|(n, unit)| {
                let days = if unit == "Week" { 7 * i64::from(*n) } else { 30 * i64::from(*n) };
                c.now + SignedDuration::from_hours(24 * days)
            }),
            tags: c.p.tags("Tag"),
            security_group_ids: c
                .p
                .str("SecurityGroupId")
                .into_iter()
                .chain(c.p.list("SecurityGroupIds"))
                .collect(),
            vswitch_id: c.p.str("VSwitchId").unwrap_or_default(),
            private_ip: format!("172.16.{}.{}", ip_tail / 250, ip_tail),
            internet_max_bandwidth_out: c.p.int("InternetMaxBandwidthOut")?.unwrap_or(0),
            deletion_protection: c.p.bool("DeletionProtection")?,
            stopped_at: None,
            cpu: i64::from(offer.vcpu),
            memory_mib: (offer.memory_gib * 1024.0) as i64,
            gpu_amount: i64::from(offer.gpu_count),
            gpu_spec: offer.gpu_model.clone(),
            family: api_name(&offer.family),
        };
        let disk_charge = if charge == "PrePaid" { "PrePaid" } else { "PostPaid" };
        let mut disks = vec![Disk {
            id: c.ctx.new_id("d-", 20),
            region: region.clone(),
            zone: zone.clone(),
            instance_id: Some(id.clone()),
            kind: "system",
            category: sys.str("Category").unwrap_or_else(|| "cloud_essd".into()),
            size_gib: sys.int("Size")?.unwrap_or(40),
            device: "/dev/xvda".into(),
            image_id: image_id.clone(),
            source_snapshot_id: String::new(),
            created: c.now,
            delete_with_instance: true,
            auto_snapshot_policy_id: sys.str("AutoSnapshotPolicyId"),
            charge_type: disk_charge.into(),
            name: sys.str("DiskName").unwrap_or_default(),
        }];
        for (n, dd) in c.p.items("DataDisk").iter().enumerate() {
            let delete = match dd.0.get("DeleteWithInstance") {
                None => true,
                Some(_) => dd.bool("DeleteWithInstance")?,
            };
            disks.push(Disk {
                id: c.ctx.new_id("d-", 20),
                region: region.clone(),
                zone: zone.clone(),
                instance_id: Some(id.clone()),
                kind: "data",
                category: dd.str("Category").unwrap_or_else(|| "cloud_efficiency".into()),
                size_gib: dd.int("Size")?.unwrap_or(20),
                device: format!("/dev/xvd{}", (b'b' + n as u8) as char),
                image_id: String::new(),
                source_snapshot_id: dd.str("SnapshotId").unwrap_or_default(),
                created: c.now,
                delete_with_instance: delete,
                auto_snapshot_policy_id: dd.str("AutoSnapshotPolicyId"),
                charge_type: disk_charge.into(),
                name: dd.str("DiskName").unwrap_or_default(),
            });
        }
        for d in disks {
            st.disks.insert(d.id.clone(), d);
        }
        st.instances.insert(id.clone(), inst);
        ids.push(id);
    }
    let mut answer = json!({ "InstanceIdSets": { "InstanceIdSet": ids } });
    if let Some(price) = unit_price {
        answer["TradePrice"] = json!(round2(price * amount as f64));
    }
    if charge == "PrePaid" {
        answer["OrderId"] = json!(c
            .ctx
            .new_id("", 15)
            .chars()
            .map(|ch| if ch.is_ascii_digit() { ch } else { '7' })
            .collect::<String>());
    }
    if token.is_some() {
        token_remember(st, "RunInstances", c, &answer);
    }
    Ok(answer)
}

fn tags_json(tags: &[(String, String)]) -> Value {
    json!({ "Tag": tags.iter().map(|(k, v)| json!({"TagKey": k, "TagValue": v})).collect::<Vec<_>>() })
}

fn instance_json(i: &Instance, now: Timestamp, t: &Timings) -> Value {
    let status = i.status(now, t);
    json!({
        "InstanceId": i.id,
        "InstanceName": i.name,
        "Description": i.description,
        "HostName": i.host_name,
        "RegionId": i.region,
        "ZoneId": i.zone,
        "InstanceType": i.instance_type,
        "InstanceTypeFamily": i.family,
        "Cpu": i.cpu,
        "Memory": i.memory_mib,
        "GPUAmount": i.gpu_amount,
        "GPUSpec": i.gpu_spec,
        "ImageId": i.image_id,
        "OSType": "linux",
        "Status": status.as_str(),
        "CreationTime": format_time(i.created),
        "StartTime": if status == Status::Running { format_time(i.created + t.pending + t.starting) } else { String::new() },
        "ExpiredTime": i.expires.map(format_time).unwrap_or_else(|| NEVER_EXPIRES.into()),
        "AutoReleaseTime": i.auto_release.map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()).unwrap_or_default(),
        "InstanceChargeType": i.charge_type,
        "InternetChargeType": "PayByTraffic",
        "InternetMaxBandwidthOut": i.internet_max_bandwidth_out,
        "InternetMaxBandwidthIn": 200,
        "SpotStrategy": i.spot_strategy,
        "SpotPriceLimit": i.spot_price_limit.unwrap_or(0.0),
        "SpotInterruptionBehavior": "Terminate",
        "InstanceNetworkType": "vpc",
        "IoOptimized": true,
        "DeletionProtection": i.deletion_protection,
        "SerialNumber": format!("{}-sim", i.id),
        "StoppedMode": if status == Status::Stopped { "KeepCharging" } else { "Not-applicable" },
        "Tags": tags_json(&i.tags),
        "SecurityGroupIds": { "SecurityGroupId": i.security_group_ids },
        "VpcAttributes": {
            "VpcId": if i.vswitch_id.is_empty() { String::new() } else { format!("vpc-{}", &i.vswitch_id.trim_start_matches("vsw-")) },
            "VSwitchId": i.vswitch_id,
            "PrivateIpAddress": { "IpAddress": [i.private_ip] },
            "NatIpAddress": "",
        },
        "PublicIpAddress": { "IpAddress": [] },
        "InnerIpAddress": { "IpAddress": [] },
        "EipAddress": { "AllocationId": "", "IpAddress": "", "Bandwidth": 0, "InternetChargeType": "" },
        "OperationLocks": { "LockReason": [] },
        "NetworkInterfaces": { "NetworkInterface": [] },
    })
}

/// PageNumber/PageSize as ECS reads them (PageSize capped at `max`).
fn page(p: &Params, default_size: i64, max: i64) -> Result<(usize, usize), EcsError> {
    let number = p.int("PageNumber")?.unwrap_or(1).max(1);
    let size = p.int("PageSize")?.unwrap_or(default_size).clamp(1, max);
    Ok((number as usize, size as usize))
}

fn paged<T>(items: Vec<T>, (number, size): (usize, usize)) -> (usize, Vec<T>) {
    let total = items.len();
    (total, items.into_iter().skip((number - 1) * size).take(size).collect())
}

pub fn describe_instances(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let ids = c.p.json_list("InstanceIds")?;
    let zone = c.p.str("ZoneId");
    let itype = c.p.str("InstanceType");
    let status = c.p.str("Status");
    let name = c.p.str("InstanceName");
    let charge = c.p.str("InstanceChargeType");
    let tags = c.p.tags("Tag");
    let pg = page(&c.p, 10, 100)?;
    let matching: Vec<&Instance> = st
        .instances
        .values()
        .filter(|i| i.region == region)
        .filter(|i| ids.as_ref().is_none_or(|ids| ids.contains(&i.id)))
        .filter(|i| zone.as_ref().is_none_or(|z| *z == i.zone))
        .filter(|i| itype.as_ref().is_none_or(|t| *t == i.instance_type))
        .filter(|i| status.as_ref().is_none_or(|s| s == i.status(c.now, &c.timings).as_str()))
        .filter(|i| name.as_ref().is_none_or(|n| glob_match(n, &i.name)))
        .filter(|i| charge.as_ref().is_none_or(|ch| *ch == i.charge_type))
        .filter(|i| {
            tags.iter().all(|(k, v)| i.tags.iter().any(|(tk, tv)| tk == k && (v.is_empty() || tv == v)))
        })
        .collect();
    let (total, page_items) = paged(matching, pg);
    Ok(json!({
        "Instances": { "Instance": page_items.iter().map(|i| instance_json(i, c.now, &c.timings)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": pg.0,
        "PageSize": pg.1,
        "NextToken": "",
    }))
}

/// InstanceName filters accept `*` as a wildcard, as on ECS.
fn glob_match(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((pre, post)) => name.starts_with(pre) && name[pre.len()..].ends_with(post.trim_end_matches('*')),
    }
}

pub fn describe_instance_status(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let ids = c.p.list("InstanceId");
    let zone = c.p.str("ZoneId");
    let pg = page(&c.p, 10, 50)?;
    let matching: Vec<&Instance> = st
        .instances
        .values()
        .filter(|i| i.region == region)
        .filter(|i| ids.is_empty() || ids.contains(&i.id))
        .filter(|i| zone.as_ref().is_none_or(|z| *z == i.zone))
        .collect();
    let (total, items) = paged(matching, pg);
    Ok(json!({
        "InstanceStatuses": { "InstanceStatus": items.iter().map(|i| json!({"InstanceId": i.id, "Status": i.status(c.now, &c.timings).as_str()})).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": pg.0,
        "PageSize": pg.1,
    }))
}

/// Whether ECS lets this instance be deleted now: only Stopped ones, or any with Force; a
/// subscription (PrePaid) instance needs TerminateSubscription.
fn check_deletable(
    i: &Instance,
    force: bool,
    terminate_subscription: bool,
    c: &Call,
) -> Result<(), EcsError> {
    if i.charge_type == "PrePaid" && !terminate_subscription && i.expires.is_some_and(|e| e > c.now) {
        return Err(EcsError::new(
            403,
            codes::CHARGE_TYPE_VIOLATION,
            format!("The operation is not permitted due to charge type of the instance {} (PrePaid); set TerminateSubscription=true.", i.id),
        ));
    }
    if i.deletion_protection {
        return Err(EcsError::new(
            403,
            "InvalidOperation.DeletionProtection",
            format!("Instance {} has deletion protection enabled.", i.id),
        ));
    }
    let status = i.status(c.now, &c.timings);
    if status != Status::Stopped && !force {
        return Err(EcsError::new(
            403,
            codes::INCORRECT_STATUS,
            format!("The current status of the resource does not support this operation: instance {} is {}; stop it first or pass Force=true.", i.id, status.as_str()),
        ));
    }
    Ok(())
}

pub fn delete_instances(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    let ids = c.p.list("InstanceId");
    if ids.is_empty() {
        return Err(c.p.required("InstanceId.1").unwrap_err());
    }
    let force = c.p.bool("Force")?;
    let terminate_subscription = c.p.bool("TerminateSubscription")?;
    for id in &ids {
        let inst =
            st.instances.get(id).filter(|i| i.region == region).ok_or_else(|| instance_not_found(id))?;
        check_deletable(inst, force, terminate_subscription, c)?;
    }
    if c.p.bool("DryRun")? {
        return Err(dry_run_passed());
    }
    for id in &ids {
        st.remove_instance(id);
    }
    Ok(json!({}))
}

pub fn delete_instance(c: &Call, st: &mut EcsState) -> Answer {
    let id = c.p.required("InstanceId")?;
    let inst = st.instances.get(&id).ok_or_else(|| instance_not_found(&id))?;
    check_deletable(inst, c.p.bool("Force")?, c.p.bool("TerminateSubscription")?, c)?;
    if c.p.bool("DryRun")? {
        return Err(dry_run_passed());
    }
    st.remove_instance(&id);
    Ok(json!({}))
}

/// StopInstances (InstanceId.N) / StopInstance (InstanceId): Running → Stopping → Stopped.
/// Only a Running instance can be stopped.
pub fn stop_instances(c: &Call, st: &mut EcsState, ids: Vec<String>) -> Answer {
    if ids.is_empty() {
        return Err(c.p.required("InstanceId").unwrap_err());
    }
    for id in &ids {
        let i = st.instances.get(id).ok_or_else(|| instance_not_found(id))?;
        let s = i.status(c.now, &c.timings);
        if s != Status::Running {
            return Err(EcsError::new(
                403,
                codes::INCORRECT_STATUS,
                format!("The current status of the resource does not support this operation: instance {id} is {}.", s.as_str()),
            ));
        }
    }
    if c.p.bool("DryRun")? {
        return Err(dry_run_passed());
    }
    for id in &ids {
        if let Some(i) = st.instances.get_mut(id) {
            i.stopped_at = Some(c.now);
        }
    }
    Ok(json!({}))
}

pub fn describe_price(c: &Call) -> Answer {
    let region = region(c)?;
    let resource = c.p.str("ResourceType").unwrap_or_else(|| "instance".into());
    if resource != "instance" {
        return Err(EcsError::new(
            400,
            "InvalidResourceType.NotSupported",
            format!("The local cloud prices ResourceType=instance only, not \"{resource}\"."),
        ));
    }
    let instance_type = c.p.required("InstanceType")?;
    let offer = find_offer(c.ctx, &region, &instance_type).ok_or_else(|| {
        EcsError::new(
            400,
            codes::BAD_INSTANCE_TYPE,
            format!("The specified InstanceType \"{instance_type}\" is not supported in region {region}."),
        )
    })?;
    let unit = c.p.str("PriceUnit").unwrap_or_else(|| "Hour".into());
    let period = c.p.int("Period")?.unwrap_or(1).max(1) as u32;
    let spot = c.p.str("SpotStrategy").unwrap_or_else(|| "NoSpot".into());
    let price = match unit.as_str() {
        "Hour" => price_for(offer, "PostPaid", &spot, &None),
        "Week" => price_for(offer, "PrePaid", &spot, &Some((period, "Week".into()))),
        "Month" => price_for(offer, "PrePaid", &spot, &Some((period, "Month".into()))),
        "Year" => price_for(offer, "PrePaid", &spot, &Some((period * 12, "Month".into()))),
        other => return Err(super::params::invalid("PriceUnit", &json!(other))),
    };
    let price = price.ok_or_else(|| {
        EcsError::new(
            400,
            codes::PRICE_NOT_FOUND,
            format!(
                "The catalog has no {unit} price for {instance_type} in {region} (source: {}, as of {}).",
                offer.source, offer.as_of
            ),
        )
    })?;
    let price = round2(price);
    Ok(json!({
        "PriceInfo": {
            "Price": {
                "OriginalPrice": price,
                "DiscountPrice": 0.0,
                "TradePrice": price,
                "Currency": "CNY",
                "DetailInfos": { "DetailInfo": [
                    { "Resource": "instanceType", "OriginalPrice": price, "DiscountPrice": 0.0, "TradePrice": price, "SubRules": { "Rule": [] } }
                ] },
            },
            "Rules": { "Rule": [] },
        },
    }))
}

pub fn describe_available_resource(c: &Call) -> Answer {
    let region = region(c)?;
    let destination = c.p.required("DestinationResource")?;
    let zone_filter = c.p.str("ZoneId");
    let type_filter = c.p.str("InstanceType");
    let offers: Vec<&Offer> = c
        .ctx
        .offers(PROVIDER)
        .filter(|o| {
            o.region == region && type_filter.as_ref().is_none_or(|t| *t == api_name(&o.instance_type))
        })
        .collect();
    let mut zones: Vec<String> = offers.iter().flat_map(|o| o.zones.iter().cloned()).collect();
    zones.sort();
    zones.dedup();
    let stock = |with: bool| if with { ("Available", "WithStock") } else { ("SoldOut", "WithoutStock") };
    let mut out = Vec::new();
    for zone in zones.iter().filter(|z| zone_filter.as_ref().is_none_or(|f| f == *z)) {
        let here: Vec<(&Offer, bool)> = offers
            .iter()
            .filter(|o| o.zones.contains(zone))
            .map(|o| (*o, !sold_out(c.ctx, o, zone)))
            .collect();
        let any = here.iter().any(|(_, s)| *s);
        let (zstatus, zcat) = stock(any);
        let supported: Vec<Value> = match destination.as_str() {
            "Zone" => vec![json!({"Value": zone, "Status": zstatus, "StatusCategory": zcat})],
            "InstanceType" => here
                .iter()
                .map(|(o, s)| {
                    let (st, cat) = stock(*s);
                    json!({"Value": api_name(&o.instance_type), "Status": st, "StatusCategory": cat})
                })
                .collect(),
            other => {
                return Err(EcsError::new(
                    400,
                    "InvalidDestinationResource.ValueNotSupported",
                    format!(
                        "The local cloud answers DestinationResource Zone or InstanceType, not \"{other}\"."
                    ),
                ))
            }
        };
        out.push(json!({
            "RegionId": region,
            "ZoneId": zone,
            "Status": zstatus,
            "StatusCategory": zcat,
            "AvailableResources": { "AvailableResource": [
                { "Type": destination, "SupportedResources": { "SupportedResource": supported } }
            ] },
        }));
    }
    Ok(json!({ "AvailableZones": { "AvailableZone": out } }))
}

fn disk_json(d: &Disk, st: &EcsState) -> Value {
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
        "Tags": tags_json(&[]),
        "OperationLocks": { "OperationLock": [] },
        "Attachments": { "Attachment": attached.map(|i| vec![json!({"InstanceId": i, "Device": d.device, "AttachedTime": format_time(d.created)})]).unwrap_or_default() },
    })
}

pub fn describe_disks(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let ids = c.p.json_list("DiskIds")?;
    let instance = c.p.str("InstanceId");
    let kind = c.p.str("DiskType").filter(|k| k != "all");
    let zone = c.p.str("ZoneId");
    let pg = page(&c.p, 10, 100)?;
    let matching: Vec<&Disk> = st
        .disks
        .values()
        .filter(|d| d.region == region)
        .filter(|d| ids.as_ref().is_none_or(|ids| ids.contains(&d.id)))
        .filter(|d| instance.as_ref().is_none_or(|i| d.instance_id.as_ref() == Some(i)))
        .filter(|d| kind.as_ref().is_none_or(|k| k == d.kind))
        .filter(|d| zone.as_ref().is_none_or(|z| *z == d.zone))
        .collect();
    let (total, items) = paged(matching, pg);
    Ok(json!({
        "Disks": { "Disk": items.iter().map(|d| disk_json(d, st)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": pg.0,
        "PageSize": pg.1,
        "NextToken": "",
    }))
}

/// Refuse to snapshot or image an instance that is still booting, as ECS does.
fn require_settled(st: &EcsState, instance_id: &str, c: &Call) -> Result<(), EcsError> {
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

/// Replay or refuse a ClientToken seen before; `None` → do the work.
fn token_check(st: &EcsState, action: &str, c: &Call) -> Result<Option<Value>, EcsError> {
    let Some(t) = c.p.str("ClientToken") else { return Ok(None) };
    match st.tokens.check(&format!("{}:{action}:{t}", c.account), &c.p.fingerprint()) {
        Idem::New => Ok(None),
        Idem::Replay(v) => Ok(Some(v)),
        Idem::Mismatch => Err(EcsError::new(
            400,
            codes::IDEMPOTENT_MISMATCH,
            "The specified ClientToken was used by an earlier request with different parameters.",
        )),
    }
}

fn token_remember(st: &mut EcsState, action: &str, c: &Call, answer: &Value) {
    if let Some(t) = c.p.str("ClientToken") {
        st.tokens.remember(&format!("{}:{action}:{t}", c.account), &c.p.fingerprint(), answer.clone());
    }
}

fn new_snapshot(
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
            description: c.p.str("Description").unwrap_or_default(),
            disk_id: disk.id.clone(),
            disk_size_gib: disk.size_gib,
            disk_kind: if disk.kind == "system" { "System" } else { "Data" },
            created: c.now,
            retention_days: c.p.int("RetentionDays").ok().flatten(),
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
    let id = new_snapshot(st, c, &disk_id, c.p.str("SnapshotName").unwrap_or_default(), "user")?;
    let answer = json!({ "SnapshotId": id });
    token_remember(st, "CreateSnapshot", c, &answer);
    Ok(answer)
}

fn snapshot_json(s: &Snapshot, now: Timestamp, t: &Timings) -> Value {
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
    let disk = c.p.str("DiskId");
    let instance = c.p.str("InstanceId");
    let kind = c.p.str("SnapshotType").filter(|k| k != "all");
    let status = c.p.str("Status").filter(|k| k != "all");
    let pg = page(&c.p, 10, 100)?;
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
        .collect();
    let (total, items) = paged(matching, pg);
    Ok(json!({
        "Snapshots": { "Snapshot": items.iter().map(|s| snapshot_json(s, c.now, &c.timings)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": pg.0,
        "PageSize": pg.1,
        "NextToken": "",
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
    if !snap.used_by_images.is_empty() && !c.p.bool("Force")? {
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

pub fn create_image(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    if let Some(replay) = token_check(st, "CreateImage", c)? {
        return Ok(replay);
    }
    let image_id = c.ctx.new_id("m-", 20);
    let mut snapshot_ids = Vec::new();
    let source_instance = c.p.str("InstanceId");
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
        let mut wanted: Vec<String> = c.p.str("SnapshotId").into_iter().collect();
        wanted.extend(c.p.items("DiskDeviceMapping").iter().filter_map(|m| m.str("SnapshotId")));
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
            name: c.p.str("ImageName").unwrap_or_else(|| image_id.clone()),
            source_instance_id: source_instance,
            snapshot_ids,
            created: c.now,
        },
    );
    let answer = json!({ "ImageId": image_id });
    token_remember(st, "CreateImage", c, &answer);
    Ok(answer)
}

pub fn modify_instance_auto_release_time(c: &Call, st: &mut EcsState) -> Answer {
    let id = c.p.required("InstanceId")?;
    let raw = c.p.raw("AutoReleaseTime").unwrap_or_default();
    let when = if raw.trim().is_empty() { None } else { Some(auto_release_time(&raw, c.now)?) };
    let inst = st.instances.get_mut(&id).ok_or_else(|| instance_not_found(&id))?;
    if inst.charge_type == "PrePaid" && when.is_some() {
        return Err(EcsError::new(
            403,
            codes::CHARGE_TYPE_VIOLATION,
            format!("Instance {id} is PrePaid; only PostPaid instances can be released automatically."),
        ));
    }
    inst.auto_release = when;
    Ok(json!({}))
}

/// `timePoints='["0","13"]'`: hours 0-23; `repeatWeekdays='["1","7"]'`: 1 = Monday … 7 = Sunday.
fn small_numbers(c: &Call, name: &str, range: std::ops::RangeInclusive<u8>) -> Result<Vec<u8>, EcsError> {
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
        c.p.int("retentionDays")?.ok_or_else(|| c.p.required("retentionDays").unwrap_err())?;
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
            name: c.p.str("autoSnapshotPolicyName").unwrap_or_default(),
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

/// `/_sim/state` view: the same shapes the cloud answers with, grouped by kind.
pub fn state_json(st: &EcsState, now: Timestamp, t: &Timings) -> Value {
    json!({
        "instances": st.instances.values().map(|i| instance_json(i, now, t)).collect::<Vec<_>>(),
        "disks": st.disks.values().map(|d| disk_json(d, st)).collect::<Vec<_>>(),
        "snapshots": st.snapshots.values().map(|s| snapshot_json(s, now, t)).collect::<Vec<_>>(),
        "images": st.images.values().map(|i| json!({
            "ImageId": i.id,
            "ImageName": i.name,
            "RegionId": i.region,
            "SourceInstanceId": i.source_instance_id,
            "SnapshotIds": i.snapshot_ids,
            "CreationTime": format_time(i.created),
            "Status": if now.duration_since(i.created) >= t.image { "Available" } else { "Creating" },
        })).collect::<Vec<_>>(),
        "auto_snapshot_policies": st.auto_snapshot_policies.values().collect::<Vec<_>>(),
    })
}
