//! ECS instances: RunInstances, DescribeInstances, DescribeInstanceStatus, DeleteInstance(s),
//! StopInstance(s), ModifyInstanceAutoReleaseTime (alibabacloud_ecs20140526 request/response models).

use base64::Engine as _;
use gpuctl_simkit::money::round_cents;
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use gpuctl_simkit::ParamErrors;

use super::prices::price_for;
use super::{
    dry_run, instance_not_found, offer_for, region, sold_out, tags_json, tags_match, token_check,
    token_remember, Answer, Call, NEVER_EXPIRES,
};
use crate::api::{codes, format_time, parse_time};
use crate::emulator::error::EcsError;
use crate::emulator::params::{EcsParams, Params};
use crate::emulator::state::{Disk, EcsState, Instance, Status, Timings};
use crate::emulator::PROVIDER;

/// ECS's AutoReleaseTime window: at least 30 minutes and at most 3 years ahead; seconds are
/// rounded down.
pub(crate) fn auto_release_time(raw: &str, now: Timestamp) -> Result<Timestamp, EcsError> {
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
pub(crate) fn prepaid_term(p: &Params) -> Result<(u32, String), EcsError> {
    let unit = p.text("PeriodUnit").unwrap_or_else(|| "Month".into());
    let period = p.opt_i64("Period")?.ok_or_else(|| {
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

/// alibabacloud_ecs20140526 7.11.8 models/_run_instances_request.py `user_data`: "must be Base64-encoded.
/// The size of instance user data cannot exceed 32 KB before Base64 encoding." Refused otherwise with
/// ECS's InvalidUserData.* codes.
const USER_DATA_MAX: usize = 32 * 1024;

fn user_data_of(c: &Call) -> Result<Option<String>, EcsError> {
    let Some(u) = c.p.text("UserData") else { return Ok(None) };
    let Ok(raw) = base64::engine::general_purpose::STANDARD.decode(u.as_bytes()) else {
        return Err(EcsError::new(
            400,
            "InvalidUserData.Base64FormatInvalid",
            "The specified UserData is not valid Base64.",
        ));
    };
    if raw.len() > USER_DATA_MAX {
        return Err(EcsError::new(
            400,
            "InvalidUserData.SizeExceeded",
            format!(
                "The specified UserData is {} bytes before encoding; at most {USER_DATA_MAX} are accepted.",
                raw.len()
            ),
        ));
    }
    Ok(Some(u))
}

pub fn run_instances(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    let instance_type = c.p.required("InstanceType")?;
    let image_id = c.p.required("ImageId")?;
    let offer = offer_for(c, &region, &instance_type)?;
    let instance_type = offer.instance_type.clone();
    // An image the region has neither as a public image nor as one of the account's is refused
    // (ECS RunInstances' error list: 404 InvalidImageId.NotFound "The specified ImageId does not
    // exist."; *unverified* against a live account).
    let known = gpuctl_simkit::images::ALIBABA.iter().any(|i| i.id == image_id)
        || st.images.values().any(|i| i.id == image_id && i.region == region);
    if !known {
        return Err(EcsError::new(
            404,
            "InvalidImageId.NotFound",
            format!("The specified ImageId \"{image_id}\" does not exist in region {region}."),
        ));
    }
    let zone = match c.p.text("ZoneId") {
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
    let amount = c.p.opt_i64("Amount")?.unwrap_or(1);
    if !(1..=100).contains(&amount) {
        return Err(EcsError::new(
            400,
            "InvalidAmount.ValueNotSupported",
            format!("Amount must be 1-100, got {amount}."),
        ));
    }
    let charge = c.p.text("InstanceChargeType").unwrap_or_else(|| "PostPaid".into());
    let term = match charge.as_str() {
        "PostPaid" => None,
        "PrePaid" => Some(prepaid_term(&c.p)?),
        other => return Err(EcsError::invalid("InstanceChargeType", "a supported value", &json!(other))),
    };
    let spot = c.p.text("SpotStrategy").unwrap_or_else(|| "NoSpot".into());
    if !["NoSpot", "SpotWithPriceLimit", "SpotAsPriceGo"].contains(&spot.as_str()) {
        return Err(EcsError::invalid("SpotStrategy", "a supported value", &json!(spot)));
    }
    if spot != "NoSpot" && charge != "PostPaid" {
        return Err(EcsError::new(
            400,
            codes::INVALID_PARAMETER,
            "SpotStrategy applies only to PostPaid instances.",
        ));
    }
    let spot_limit = c.p.opt_f64("SpotPriceLimit")?;
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
    let auto_release = match c.p.text("AutoReleaseTime") {
        Some(raw) => Some(auto_release_time(&raw, c.now)?),
        None => None,
    };
    let token = c.p.text("ClientToken");
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
    let key_pair_name = super::keypairs::login_key(c, st, &region)?;
    super::vpc::check_launch(c, st, &region, &zone)?;
    let deployment_set = super::deployment_sets::check_launch(
        c,
        st,
        &region,
        &zone,
        &instance_type,
        spot != "NoSpot",
        amount as usize,
    )?;
    dry_run(c)?;
    // A stock knob with `available` left: all `Amount` instances or none (refused as sold out).
    if c.ctx.take_stock(PROVIDER, &[&offer.instance_type], &zone, amount as u32, true) < amount as u32 {
        return Err(EcsError::new(
            403,
            codes::NO_STOCK,
            format!("The requested resource is sold out in the specified zone; try other types of resources or other regions and zones. ({instance_type} in {zone})"),
        ));
    }

    // The range (0 to 100) and the charge-type enum are the schema's (rules.json); above 0 each
    // instance gets an address, all of them or none.
    let bandwidth_out = c.p.opt_i64("InternetMaxBandwidthOut")?.unwrap_or(0);
    let internet_charge = c.p.text("InternetChargeType").unwrap_or_else(|| "PayByTraffic".into());
    let addresses = match bandwidth_out {
        0 => Vec::new(),
        // *unverified* code: ECS's sold-out answer, for the local cloud's 762 addresses.
        _ => st
            .addresses
            .assign_all(amount as usize)
            .ok_or_else(|| EcsError::new(403, codes::NO_STOCK, "No public IP address is left to assign."))?,
    };
    let mut addresses = addresses.into_iter();
    let sys = c.p.child("SystemDisk");
    let user_data = user_data_of(c)?;
    let name = c.p.text("InstanceName").unwrap_or_default();
    let mut ids = Vec::new();
    for _ in 0..amount {
        let id = c.ctx.new_id("i-", 20);
        let private_ip = gpuctl_simkit::cidr::free_address(
            st.instances.len(),
            |n| format!("172.16.{}.{}", (n / 250) % 250, n % 250 + 2),
            st.instances.values().map(|i| i.private_ip.as_str()),
        );
        let inst = Instance {
            id: id.clone(),
            region: region.clone(),
            zone: zone.clone(),
            instance_type: instance_type.clone(),
            image_id: image_id.clone(),
            name: if name.is_empty() { id.clone() } else { name.clone() },
            description: c.p.text("Description").unwrap_or_default(),
            host_name: c.p.text("HostName").unwrap_or_else(|| format!("iZ{}Z", &id[2..])),
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
                .text("SecurityGroupId")
                .into_iter()
                .chain(c.p.list("SecurityGroupIds"))
                .collect(),
            vpc_id: super::vpc::vpc_of(c.ctx, st, &region, &c.p.text("VSwitchId").unwrap_or_default()),
            vswitch_id: c.p.text("VSwitchId").unwrap_or_default(),
            private_ip,
            key_pair_name: key_pair_name.clone(),
            internet_max_bandwidth_out: bandwidth_out,
            internet_charge_type: internet_charge.clone(),
            public_ip: addresses.next(),
            deletion_protection: c.p.opt_bool("DeletionProtection")?.unwrap_or(false),
            stopped_at: None,
            cpu: i64::from(offer.vcpu),
            memory_mib: (offer.memory_gib * 1024.0) as i64,
            gpu_amount: i64::from(offer.gpu_count),
            gpu_spec: offer.gpu_model.clone(),
            family: offer.family.clone(),
            user_data: user_data.clone(),
            deployment_set_id: deployment_set.clone(),
            ram_role: c.p.text("RamRoleName").filter(|r| !r.is_empty()),
            stopped_mode: None,
            reclaim_at: None,
        };
        let disk_charge = if charge == "PrePaid" { "PrePaid" } else { "PostPaid" };
        let mut disks = vec![Disk {
            id: c.ctx.new_id("d-", 20),
            region: region.clone(),
            zone: zone.clone(),
            instance_id: Some(id.clone()),
            kind: "system",
            category: sys.text("Category").unwrap_or_else(|| "cloud_essd".into()),
            size_gib: sys.opt_i64("Size")?.unwrap_or(40),
            device: "/dev/xvda".into(),
            image_id: image_id.clone(),
            source_snapshot_id: String::new(),
            created: c.now,
            delete_with_instance: true,
            auto_snapshot_policy_id: sys.text("AutoSnapshotPolicyId"),
            charge_type: disk_charge.into(),
            name: sys.text("DiskName").unwrap_or_default(),
            tags: c.p.tags("Tag"),
        }];
        for (n, dd) in c.p.items("DataDisk").iter().enumerate() {
            let delete = match dd.get("DeleteWithInstance") {
                None => true,
                Some(_) => dd.opt_bool("DeleteWithInstance")?.unwrap_or(false),
            };
            disks.push(Disk {
                id: c.ctx.new_id("d-", 20),
                region: region.clone(),
                zone: zone.clone(),
                instance_id: Some(id.clone()),
                kind: "data",
                category: dd.text("Category").unwrap_or_else(|| "cloud_efficiency".into()),
                size_gib: dd.opt_i64("Size")?.unwrap_or(20),
                device: format!("/dev/xvd{}", (b'b' + n as u8) as char),
                image_id: String::new(),
                source_snapshot_id: dd.text("SnapshotId").unwrap_or_default(),
                created: c.now,
                delete_with_instance: delete,
                auto_snapshot_policy_id: dd.text("AutoSnapshotPolicyId"),
                charge_type: disk_charge.into(),
                name: dd.text("DiskName").unwrap_or_default(),
                tags: c.p.tags("Tag"),
            });
        }
        for d in disks {
            st.disks.insert(d.id.clone(), d);
        }
        st.instances.insert(id.clone(), inst);
        // Monitoring data can exist once the instance runs (issue 15).
        st.gpu.power(&id, c.now + c.timings.pending + c.timings.starting, true);
        // The bill charges from the launch at the price this call's quote gives (issue 15).
        super::bss::open(st, &id, unit_price, c.now);
        ids.push(id);
    }
    let mut answer = json!({ "InstanceIdSets": { "InstanceIdSet": ids } });
    if let Some(price) = unit_price {
        answer["TradePrice"] = json!(round_cents(price * amount as f64));
    }
    if charge == "PrePaid" {
        answer["OrderId"] = json!(order_id(c));
    }
    if token.is_some() {
        token_remember(st, "RunInstances", c, &answer);
    }
    Ok(answer)
}

pub(crate) fn instance_json(i: &Instance, now: Timestamp, t: &Timings) -> Value {
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
        "InternetChargeType": i.internet_charge_type,
        "InternetMaxBandwidthOut": i.internet_max_bandwidth_out,
        "KeyPairName": i.key_pair_name,
        "InternetMaxBandwidthIn": 200,
        "SpotStrategy": i.spot_strategy,
        "SpotPriceLimit": i.spot_price_limit.unwrap_or(0.0),
        "SpotInterruptionBehavior": "Terminate",
        "InstanceNetworkType": "vpc",
        "IoOptimized": true,
        "DeletionProtection": i.deletion_protection,
        "SerialNumber": format!("{}-sim", i.id),
        "StoppedMode": match (status, &i.stopped_mode) {
            (Status::Stopped, Some(mode)) => mode.as_str(),
            (Status::Stopped, None) => "KeepCharging",
            _ => "Not-applicable",
        },
        "Tags": tags_json(&i.tags),
        "SecurityGroupIds": { "SecurityGroupId": i.security_group_ids },
        "DeploymentSetId": i.deployment_set_id.clone().unwrap_or_default(),
        "VpcAttributes": {
            "VpcId": i.vpc_id,
            "VSwitchId": i.vswitch_id,
            "PrivateIpAddress": { "IpAddress": [i.private_ip] },
            "NatIpAddress": "",
        },
        "PublicIpAddress": { "IpAddress": i.public_ip.iter().collect::<Vec<_>>() },
        "InnerIpAddress": { "IpAddress": [] },
        "EipAddress": { "AllocationId": "", "IpAddress": "", "Bandwidth": 0, "InternetChargeType": "" },
        // A spot instance about to be reclaimed carries the `Recycling` lock (the ECS spot best-practice
        // page, docs/research/cost-control.md section 3).
        "OperationLocks": { "LockReason": if i.reclaim_at.is_some() { json!([{"LockReason": "Recycling"}]) } else { json!([]) } },
        "NetworkInterfaces": { "NetworkInterface": [] },
    })
}

pub fn describe_instances(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let ids = c.p.json_list("InstanceIds")?;
    let zone = c.p.text("ZoneId");
    let itype = c.p.text("InstanceType");
    let status = c.p.text("Status");
    let name = c.p.text("InstanceName");
    let charge = c.p.text("InstanceChargeType");
    let tags = c.p.tags("Tag");
    let pg = c.p.listing(100, 100)?;
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
        .filter(|i| tags_match(&i.tags, &tags))
        .collect();
    let (total, page_items) = pg.apply(matching);
    Ok(json!({
        "Instances": { "Instance": page_items.iter().map(|i| instance_json(i, c.now, &c.timings)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": pg.number(),
        "PageSize": pg.size(),
        "NextToken": pg.next_token(total),
    }))
}

/// InstanceName filters accept `*` as a wildcard, as on ECS.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((pre, post)) => name.starts_with(pre) && name[pre.len()..].ends_with(post.trim_end_matches('*')),
    }
}

pub fn describe_instance_status(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let ids = c.p.list("InstanceId");
    let zone = c.p.text("ZoneId");
    let pg = c.p.page_number(("PageNumber", "PageSize"), 10, 1..=50)?;
    let matching: Vec<&Instance> = st
        .instances
        .values()
        .filter(|i| i.region == region)
        .filter(|i| ids.is_empty() || ids.contains(&i.id))
        .filter(|i| zone.as_ref().is_none_or(|z| *z == i.zone))
        .collect();
    let (total, items) = pg.apply(matching);
    Ok(json!({
        "InstanceStatuses": { "InstanceStatus": items.iter().map(|i| json!({"InstanceId": i.id, "Status": i.status(c.now, &c.timings).as_str()})).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": pg.number(),
        "PageSize": pg.size(),
    }))
}

/// Whether ECS lets this instance be deleted now: only Stopped ones, or any with Force. A
/// subscription (PrePaid) instance is released only once its term has expired, and then only with
/// TerminateSubscription=true: alibabacloud_ecs20140526 7.11.8,
/// models/_delete_instances_request.py, `terminate_subscription`: "Specifies whether to release an
/// *expired* subscription instance". An unexpired one must first leave its term the documented way
/// (ModifyInstanceChargeType to PostPaid), so TerminateSubscription never releases it.
pub(crate) fn check_deletable(
    i: &Instance,
    force: bool,
    terminate_subscription: bool,
    c: &Call,
) -> Result<(), EcsError> {
    if i.charge_type == "PrePaid" {
        let expired = i.expires.is_some_and(|e| e <= c.now);
        if !expired {
            return Err(EcsError::new(
                403,
                codes::CHARGE_TYPE_VIOLATION,
                format!("The operation is not permitted due to charge type of the instance {} (PrePaid, not expired); convert it to PostPaid with ModifyInstanceChargeType first.", i.id),
            ));
        }
        if !terminate_subscription {
            return Err(EcsError::new(
                403,
                codes::CHARGE_TYPE_VIOLATION,
                format!("The operation is not permitted due to charge type of the instance {} (expired PrePaid); set TerminateSubscription=true.", i.id),
            ));
        }
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
    let force = c.p.opt_bool("Force")?.unwrap_or(false);
    let terminate_subscription = c.p.opt_bool("TerminateSubscription")?.unwrap_or(false);
    for id in &ids {
        let inst =
            st.instances.get(id).filter(|i| i.region == region).ok_or_else(|| instance_not_found(id))?;
        check_deletable(inst, force, terminate_subscription, c)?;
    }
    dry_run(c)?;
    for id in &ids {
        st.release_instance(id, c.now);
    }
    Ok(json!({}))
}

pub fn delete_instance(c: &Call, st: &mut EcsState) -> Answer {
    let id = c.p.required("InstanceId")?;
    let inst = st.instances.get(&id).ok_or_else(|| instance_not_found(&id))?;
    check_deletable(
        inst,
        c.p.opt_bool("Force")?.unwrap_or(false),
        c.p.opt_bool("TerminateSubscription")?.unwrap_or(false),
        c,
    )?;
    dry_run(c)?;
    st.release_instance(&id, c.now);
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
    dry_run(c)?;
    // StoppedMode (alibabacloud-ecs20140526 7.11.8 models/_stop_instances_request.py): StopCharging
    // suspends vCPU, memory and GPU billing; it does not apply to subscription instances (nor those
    // with local SSDs), which are then stopped normally, without an error. The default is StopCharging
    // only where economical mode is enabled for the account: the local cloud has no such switch, so
    // its default is KeepCharging (assumption).
    let asked = c.p.text("StoppedMode").unwrap_or_else(|| "KeepCharging".into());
    for id in &ids {
        if let Some(i) = st.instances.get_mut(id) {
            i.stopped_at = Some(c.now);
            // A stopped instance reports no GPU data (gpuctl_simkit::usage), whatever starts it again.
            st.gpu.power(id, c.now, false);
            let applies = i.charge_type == "PostPaid";
            i.stopped_mode = Some(if applies { asked.clone() } else { "KeepCharging".into() });
        }
    }
    Ok(json!({}))
}

pub fn modify_instance_auto_release_time(c: &Call, st: &mut EcsState) -> Answer {
    let id = c.p.required("InstanceId")?;
    let raw = c.p.raw_text("AutoReleaseTime").unwrap_or_default();
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

/// ModifyInstanceChargeType: the documented way out of a subscription term early. Per
/// alibabacloud_ecs20140526 7.11.8, models/_modify_instance_charge_type_request.py: `InstanceIds` is
/// a JSON array of up to 20 IDs (required); `InstanceChargeType` is `PrePaid` (the default,
/// pay-as-you-go → subscription) or `PostPaid` (subscription → pay-as-you-go, refunding the unused
/// term). The response (…_response_body.py) carries `OrderId` and `FeeOfInstances`. The local cloud
/// serves the PostPaid direction only (gpuctl buys terms through RunInstances); PrePaid is refused
/// with the cloud's own code rather than pretended.
pub fn modify_instance_charge_type(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    let raw = c.p.required("InstanceIds")?;
    let ids: Vec<String> = serde_json::from_str(&raw)
        .map_err(|_| EcsError::invalid("InstanceIds", "a JSON array of instance IDs", &json!(raw)))?;
    if ids.is_empty() || ids.len() > 20 {
        return Err(EcsError::invalid("InstanceIds", "a JSON array of 1 to 20 instance IDs", &json!(raw)));
    }
    let target = c.p.text("InstanceChargeType").unwrap_or_else(|| "PrePaid".into());
    match target.as_str() {
        "PostPaid" => {}
        "PrePaid" => {
            return Err(EcsError::new(
                403,
                codes::CHARGE_TYPE_VIOLATION,
                "The local cloud converts subscription instances to pay-as-you-go only; buy a term with RunInstances.",
            ))
        }
        other => return Err(EcsError::invalid("InstanceChargeType", "PrePaid or PostPaid", &json!(other))),
    }
    for id in &ids {
        let i = st.instances.get(id).filter(|i| i.region == region).ok_or_else(|| instance_not_found(id))?;
        if i.charge_type != "PrePaid" {
            return Err(EcsError::new(
                403,
                codes::CHARGE_TYPE_VIOLATION,
                format!(
                    "The operation is not permitted due to charge type of the instance {id} (already {}).",
                    i.charge_type
                ),
            ));
        }
    }
    dry_run(c)?;
    for id in &ids {
        if let Some(i) = st.instances.get_mut(id) {
            i.charge_type = "PostPaid".into();
            i.term = None;
            i.expires = None;
        }
        for d in st.disks.values_mut().filter(|d| d.instance_id.as_deref() == Some(id.as_str())) {
            d.charge_type = "PostPaid".into();
        }
    }
    Ok(json!({
        "OrderId": order_id(c),
        "FeeOfInstances": { "FeeOfInstance": ids.iter().map(|id| json!({"InstanceId": id, "Fee": "0", "Currency": "CNY"})).collect::<Vec<_>>() },
    }))
}

/// An order number as ECS shows them: digits only.
fn order_id(c: &Call) -> String {
    c.ctx.new_id("", 15).chars().map(|ch| if ch.is_ascii_digit() { ch } else { '7' }).collect()
}
