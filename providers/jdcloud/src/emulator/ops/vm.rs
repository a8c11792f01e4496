//! JD vm: createInstances, describeInstances, describeInstance, deleteInstance,
//! describeInstanceTypes, modifyInstanceReleaseTime, createImage (jdcloud_sdk vm models: Instance,
//! InstanceType).

use base64::Engine as _;
use gpuctl_cloud::provider::{boot_script_runs, Provider};
use gpuctl_simkit::params::as_bool;
use gpuctl_simkit::Offer;
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use super::disk::{disk_json, new_snapshot};
use super::{
    filter, get, int, invalid, list, not_found, page, required, text, token_check, token_remember, Answer,
    Call,
};
use crate::api::{format_release_time, format_time, parse_release_time, status};
use crate::emulator::error::JdError;
use crate::emulator::state::{Disk, ElasticIp, Image, Instance, JdState};
use crate::emulator::PROVIDER;

/// A create's `charge`, checked: the mode, and for prepaid the term's end and length.
pub(crate) struct ChargeSpec {
    pub mode: String,
    pub expires: Option<Timestamp>,
    pub term: Option<SignedDuration>,
    /// `charge.autoRenew` (jdcloud_sdk 1.6.354 services/charge/models/ChargeSpec.py: 默认为false, prepaid
    /// only; the term renews by the length bought).
    pub auto_renew: bool,
}

/// Validate `charge` of an instance spec.
pub(crate) fn charge_of(spec: &Value, now: Timestamp) -> Result<ChargeSpec, JdError> {
    let charge = get(spec, "charge").cloned().unwrap_or(Value::Null);
    let mode = text(&charge, "chargeMode").unwrap_or_else(|| "postpaid_by_duration".into());
    match mode.as_str() {
        "postpaid_by_duration" | "postpaid_by_usage" => {
            Ok(ChargeSpec { mode, expires: None, term: None, auto_renew: false })
        }
        "prepaid_by_duration" => {
            let unit = text(&charge, "chargeUnit").unwrap_or_else(|| "month".into());
            let n = int(&charge, "chargeDuration")?.ok_or_else(|| invalid("charge.chargeDuration is required for prepaid_by_duration"))?;
            let days = match unit.as_str() {
                "month" if (1..=9).contains(&n) => 30 * n,
                "year" if (1..=3).contains(&n) => 365 * n,
                _ => return Err(invalid(format!("charge.chargeDuration {n} is not valid for chargeUnit {unit} (month: 1-9, year: 1-3)"))),
            };
            let auto_renew = match get(&charge, "autoRenew") {
                None | Some(Value::Null) => false,
                Some(v) => as_bool(v).ok_or_else(|| invalid("charge.autoRenew must be true or false"))?,
            };
            let term = SignedDuration::from_hours(24 * days);
            Ok(ChargeSpec { mode, expires: Some(now + term), term: Some(term), auto_renew })
        }
        other => Err(invalid(format!("charge.chargeMode {other} is not one of prepaid_by_duration, postpaid_by_usage, postpaid_by_duration"))),
    }
}

/// `[{key, value}]` pairs of a spec field (metadata, userdata); a pair without a key is skipped.
fn key_values(spec: &Value, field: &str) -> Vec<(String, String)> {
    match get(spec, field) {
        Some(Value::Array(a)) => {
            a.iter().filter_map(|t| Some((text(t, "key")?, text(t, "value").unwrap_or_default()))).collect()
        }
        _ => Vec::new(),
    }
}

/// The most a launch script may be before base64 (jdcloud_sdk 1.6.354 services/vm/models/Userdata.py:
/// 编码前长度不能超过16KB).
const LAUNCH_SCRIPT_MAX: usize = 16 * 1024;

/// Validate `instanceSpec.userdata` as JD does and return the launch script (base64, as sent). JD
/// takes only the key `launch-script`, base64-encoded, at most 16 KB before encoding, and on Linux
/// only a script whose first line is `#!/bin/bash` or `#!/usr/bin/env python` (InstanceSpec.py
/// `userdata`, Userdata.py); anything else is INVALID_ARGUMENT.
fn launch_script_of(spec: &Value) -> Result<Option<String>, JdError> {
    let mut script = None;
    for (key, value) in key_values(spec, "userdata") {
        if key != "launch-script" {
            return Err(invalid(format!(
                "instanceSpec.userdata key {key:?} is not supported; only launch-script is"
            )));
        }
        let raw = base64::engine::general_purpose::STANDARD
            .decode(value.as_bytes())
            .map_err(|_| invalid("instanceSpec.userdata launch-script must be base64-encoded"))?;
        if raw.len() > LAUNCH_SCRIPT_MAX {
            return Err(invalid(format!(
                "instanceSpec.userdata launch-script is {} bytes before encoding; at most {LAUNCH_SCRIPT_MAX} are accepted",
                raw.len()
            )));
        }
        let text = String::from_utf8_lossy(&raw);
        boot_script_runs(Provider::JdCloud, &text)
            .map_err(|why| invalid(format!("instanceSpec.userdata launch-script {why}")))?;
        script = Some(value);
    }
    Ok(script)
}

pub fn create_instances(c: &Call, st: &mut JdState) -> Answer {
    let spec = get(c.p, "instanceSpec").ok_or_else(|| invalid("instanceSpec is required"))?;
    let az = required(spec, "az")?;
    let itype = required(spec, "instanceType")?;
    let image = required(spec, "imageId")?;
    let name = required(spec, "name")?;
    let count = int(c.p, "maxCount")?.unwrap_or(1);
    if !(1..=100).contains(&count) {
        return Err(JdError::new(status::OUT_OF_RANGE, format!("maxCount must be in [1,100], got {count}")));
    }
    let offer = c
        .ctx
        .offer(PROVIDER, &c.region, &itype)
        .ok_or_else(|| invalid(format!("instanceType {itype} is not sold in region {}", c.region)))?;
    if !offer.zones.contains(&az) {
        return Err(invalid(format!(
            "instanceType {itype} is not sold in az {az} (sold in: {})",
            offer.zones.join(", ")
        )));
    }
    // An image the region has neither as an official image nor as one of the account's is refused
    // (*unverified* word: JD's createInstances docs name no code for it).
    let known = gpuctl_simkit::images::JDCLOUD.iter().any(|i| i.id == image)
        || st.images.values().any(|i| i.id == image && i.region == c.region);
    if !known {
        return Err(invalid(format!("imageId {image} does not exist in region {}", c.region)));
    }
    let charge = charge_of(spec, c.now)?;
    let launch_script = launch_script_of(spec)?;
    let key_names = super::keypair::login_keys(c, st, spec)?;
    // bandwidthMbps [1-1000] and the chargeMode enum are the schema's (rules.json); the narrower
    // range by traffic depends on the sibling mode: jdcloud_sdk 1.6.354 services/vpc/models/
    // ElasticIpSpec.py "计费类型为按流量时，取值范围为[1-200]".
    let eip_spec = get(spec, "elasticIp").cloned();
    let eip_of = |v: &Value| -> Result<(i64, String, String), JdError> {
        let bw = int(v, "bandwidthMbps")?.ok_or_else(|| invalid("elasticIp.bandwidthMbps is required"))?;
        let provider = required(v, "provider")?;
        let mode = get(v, "chargeSpec")
            .and_then(|s| text(s, "chargeMode"))
            .unwrap_or_else(|| "postpaid_by_duration".into());
        if mode == "postpaid_by_usage" && bw > 200 {
            // INVALID_ARGUMENT, as the schema's own range refusals answer.
            return Err(JdError::new(
                status::INVALID_ARGUMENT,
                format!(
                    "instanceSpec.elasticIp.bandwidthMbps must be in [1,200] for postpaid_by_usage, got {bw}"
                ),
            ));
        }
        Ok((bw, provider, mode))
    };
    let eip = eip_spec.as_ref().map(eip_of).transpose()?;
    let metadata = key_values(spec, "metadata");
    if let Some(replay) = token_check(st, "createInstances", c)? {
        return Ok(replay);
    }
    // A plain stock-out knob refuses the call; one with `available` counts instances down, and those
    // past it are accepted and then fail (JD's documented partial success), as `limit_stock` does.
    let closed =
        c.ctx.knobs().stock_outs.iter().any(|s| s.available.is_none() && s.matches(PROVIDER, &itype, &az));
    if closed {
        // *unverified* status: JD documents the stock flag (describeInstanceTypes inStock) but not the
        // error a create answers when none is left.
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!("instanceType {itype} is sold out in {az}"),
        ));
    }
    let granted = c.ctx.take_stock(PROVIDER, &[&itype], &az, count as u32, false);
    let sys = get(spec, "systemDisk").cloned().unwrap_or(Value::Null);
    let sys_cloud = text(&sys, "diskCategory").is_none_or(|k| k == "cloud");
    let sys_spec = get(&sys, "cloudDiskSpec").cloned().unwrap_or(Value::Null);
    let data_specs: Vec<Value> = match get(spec, "dataDisks") {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    let nic = get(spec, "primaryNetworkInterface").and_then(|n| get(n, "networkInterface"));
    let subnet = nic.and_then(|n| text(n, "subnetId")).unwrap_or_default();
    let groups = nic.map(|n| list(n, "securityGroups")).unwrap_or_default();
    let placement = super::vpc::check_launch(c, st, &az, &subnet, &groups, count as usize)?;
    let tags: Vec<(String, String)> = match get(spec, "userTags") {
        Some(Value::Array(a)) => {
            a.iter().filter_map(|t| Some((text(t, "key")?, text(t, "value").unwrap_or_default()))).collect()
        }
        _ => Vec::new(),
    };
    let mut ids = Vec::new();
    for n in 0..count {
        let id = c.ctx.new_id("i-", 10);
        // Partial success: once the limited stock is used up the rest fail and are deleted later.
        let failed = n as u32 >= granted
            || match st.available.get_mut(&(itype.clone(), az.clone())) {
                Some(0) => true,
                Some(left) => {
                    *left -= 1;
                    false
                }
                None => false,
            };
        let mut disk_ids = Vec::new();
        let mut system_disk_id = None;
        if sys_cloud {
            let d = new_disk(
                c,
                &az,
                &id,
                &sys_spec,
                "vda",
                as_bool(get(&sys, "autoDelete").unwrap_or(&Value::Bool(true))).unwrap_or(true),
                40,
                &charge.mode,
            )?;
            system_disk_id = Some(d.id.clone());
            st.disks.insert(d.id.clone(), d);
        }
        for (k, dd) in data_specs.iter().enumerate() {
            let spec = get(dd, "cloudDiskSpec").cloned().unwrap_or(Value::Null);
            let device = text(dd, "deviceName").unwrap_or_else(|| format!("vd{}", (b'b' + k as u8) as char));
            let auto_delete = get(dd, "autoDelete").and_then(as_bool).unwrap_or(true);
            let d = new_disk(c, &az, &id, &spec, &device, auto_delete, 20, &charge.mode)?;
            disk_ids.push(d.id.clone());
            st.disks.insert(d.id.clone(), d);
        }
        let inst = Instance {
            id: id.clone(),
            region: c.region.clone(),
            az: az.clone(),
            instance_type: itype.clone(),
            image_id: image.clone(),
            name: if count > 1 { format!("{name}{}", n + 1) } else { name.clone() },
            hostname: text(spec, "hostname").unwrap_or_else(|| id.clone()),
            description: text(spec, "description").unwrap_or_default(),
            charge_mode: charge.mode.clone(),
            charge_expires: charge.expires,
            charge_term: charge.term,
            auto_renew: charge.auto_renew,
            created: c.now,
            failed,
            auto_release: None,
            tags: tags.clone(),
            subnet_id: subnet.clone(),
            vpc_id: placement.vpc_id.clone(),
            private_ip: if placement.made {
                super::vpc::next_address(st, &subnet, &[]).unwrap_or_default()
            } else {
                gpuctl_simkit::cidr::free_address(
                    st.instances.len(),
                    |n| format!("10.0.{}.{}", (n / 250) % 250, n % 250 + 2),
                    st.instances.values().map(|i| i.private_ip.as_str()),
                )
            },
            security_groups: groups.clone(),
            system_disk_id,
            data_disk_ids: disk_ids,
            key_names: key_names.clone(),
            metadata: metadata.clone(),
            launch_script: launch_script.clone(),
        };
        // Instances that fail (partial success) get no address; the rest each get one, or the create
        // stops here with what it made so far, as JD's quota answer does.
        if let (Some((bw, provider, mode)), false) = (&eip, failed) {
            let address = st.addresses.assign().ok_or_else(|| {
                JdError::new(status::QUOTA_EXCEEDED, "no elastic IP address is left in this region")
            })?;
            let eip_id = c.ctx.new_id("fip-", 10);
            st.elastic_ips.insert(
                eip_id.clone(),
                ElasticIp {
                    id: eip_id,
                    region: c.region.clone(),
                    address,
                    bandwidth_mbps: *bw,
                    provider: provider.clone(),
                    charge_mode: mode.clone(),
                    instance_id: Some(id.clone()),
                    created: c.now,
                    tags: Vec::new(),
                },
            );
        }
        // Monitoring data can exist once the VM runs (issue 15); a failed create never runs.
        if !inst.failed {
            st.gpu.power(&id, c.now + c.boot, true);
        }
        st.instances.insert(id.clone(), inst);
        // The bill charges from the creation at the catalog's price for the charge mode (issue 15).
        super::bill::open(st, c, &id);
        ids.push(id);
    }
    let result = json!({ "instanceIds": ids });
    token_remember(st, "createInstances", c, &result);
    Ok(result)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn new_disk(
    c: &Call,
    az: &str,
    instance: &str,
    spec: &Value,
    device: &str,
    auto_delete: bool,
    default_gb: i64,
    charge: &str,
) -> Result<Disk, JdError> {
    Ok(Disk {
        id: c.ctx.new_id("vol-", 10),
        region: c.region.clone(),
        az: az.to_string(),
        name: text(spec, "name").unwrap_or_default(),
        disk_type: text(spec, "diskType").unwrap_or_else(|| "ssd.gp1".into()),
        size_gb: int(spec, "diskSizeGB")?.unwrap_or(default_gb),
        instance_id: Some(instance.to_string()),
        device: device.to_string(),
        auto_delete,
        snapshot_id: text(spec, "snapshotId").unwrap_or_default(),
        created: c.now,
        policy_ids: Vec::new(),
        charge_mode: charge.to_string(),
        tags: Vec::new(),
    })
}

pub(crate) fn charge_json(mode: &str, start: Timestamp, expires: Option<Timestamp>, now: Timestamp) -> Value {
    // `overdue` is "已到期", a prepaid term past its end (jdcloud_sdk 1.6.354 services/charge/models/Charge.py).
    let status = if expires.is_some_and(|e| e <= now) { "overdue" } else { "normal" };
    json!({
        "chargeMode": mode,
        "chargeStatus": status,
        "chargeStartTime": format_time(start),
        "chargeExpiredTime": expires.map(format_time),
        "chargeRetireTime": null,
    })
}

pub(crate) fn attachment_json(d: &Disk, st: &JdState, now: Timestamp, boot: SignedDuration) -> Value {
    json!({
        "diskCategory": "cloud",
        "autoDelete": d.auto_delete,
        "localDisk": null,
        "cloudDisk": disk_json(d, st),
        "deviceName": d.device,
        "status": if now.duration_since(d.created) < boot { "attaching" } else { "attached" },
    })
}

pub fn instance_json(i: &Instance, st: &JdState, now: Timestamp, boot: SignedDuration) -> Value {
    let eip = st.elastic_ips.values().find(|e| e.instance_id.as_deref() == Some(i.id.as_str()));
    let system = i
        .system_disk_id
        .as_ref()
        .and_then(|d| st.disks.get(d))
        .map(|d| attachment_json(d, st, now, boot))
        .unwrap_or_else(|| json!({"diskCategory": "local", "autoDelete": true, "localDisk": {"diskType": "local", "diskSizeGB": 40}, "cloudDisk": null, "deviceName": "vda", "status": "attached"}));
    json!({
        "instanceId": i.id,
        "instanceName": i.name,
        "hostname": i.hostname,
        "instanceType": i.instance_type,
        "vpcId": i.vpc_id,
        "subnetId": i.subnet_id,
        "privateIpAddress": i.private_ip,
        "elasticIpId": eip.map(|e| e.id.clone()),
        "elasticIpAddress": eip.map(|e| e.address.clone()),
        "status": i.status(now, boot),
        "description": i.description,
        "imageId": i.image_id,
        "systemDisk": system,
        "dataDisks": i.data_disk_ids.iter().filter_map(|d| st.disks.get(d)).map(|d| attachment_json(d, st, now, boot)).collect::<Vec<_>>(),
        "primaryNetworkInterface": {"deviceIndex": 0, "autoDelete": true, "networkInterface": {
            "subnetId": i.subnet_id, "vpcId": i.vpc_id, "primaryIp": {"privateIpAddress": i.private_ip},
            "securityGroups": i.security_groups.iter().map(|g| json!({
                "groupId": g, "groupName": st.security_groups.get(g).map(|x| x.name.clone()),
            })).collect::<Vec<_>>(),
        }},
        "secondaryNetworkInterfaces": [],
        "launchTime": format_time(i.created),
        "az": i.az,
        "keyNames": i.key_names,
        "charge": charge_json(&i.charge_mode, i.created, i.charge_expires, now),
        "tags": i.tags.iter().map(|(k, v)| json!({"key": k, "value": v})).collect::<Vec<_>>(),
        "chargeOnStopped": "keepCharging",
        "osType": "linux",
        "architecture": "x86_64",
        "autoReleaseTime": i.auto_release.map(format_release_time),
    })
}

pub(crate) fn find_instance<'s>(st: &'s JdState, c: &Call) -> Result<&'s Instance, JdError> {
    let id = c.id.clone().unwrap_or_default();
    st.instances.get(&id).filter(|i| i.region == c.region).ok_or_else(|| not_found("instance", &id))
}

pub fn describe_instances(c: &Call, st: &JdState) -> Answer {
    let ids = filter(c.p, "instanceId");
    let azs = filter(c.p, "az");
    let statuses = filter(c.p, "status");
    let names = filter(c.p, "name");
    let images = filter(c.p, "imageId");
    let tag_filters: Vec<(String, Vec<String>)> = match get(c.p, "tags") {
        Some(Value::Array(a)) => {
            a.iter().filter_map(|t| Some((text(t, "key")?, list(t, "values")))).collect()
        }
        _ => Vec::new(),
    };
    let pg = page(c.p)?;
    let within = |f: &Option<Vec<String>>, v: &str| f.as_ref().is_none_or(|f| f.iter().any(|x| x == v));
    let matching: Vec<&Instance> = st
        .instances
        .values()
        .filter(|i| i.region == c.region)
        .filter(|i| {
            within(&ids, &i.id)
                && within(&azs, &i.az)
                && within(&statuses, i.status(c.now, c.boot))
                && within(&images, &i.image_id)
        })
        .filter(|i| names.as_ref().is_none_or(|n| n.iter().any(|n| i.name.contains(n.as_str()))))
        .filter(|i| {
            tag_filters
                .iter()
                .all(|(k, vs)| i.tags.iter().any(|(tk, tv)| tk == k && (vs.is_empty() || vs.contains(tv))))
        })
        .collect();
    let (total, items) = pg.apply(matching);
    Ok(json!({
        "instances": items.iter().map(|i| instance_json(i, st, c.now, c.boot)).collect::<Vec<_>>(),
        "totalCount": total,
    }))
}

pub fn describe_instance(c: &Call, st: &JdState) -> Answer {
    let i = find_instance(st, c)?;
    Ok(json!({ "instance": instance_json(i, st, c.now, c.boot) }))
}

/// describeInstancesCustomData: the metadata and launch script of the instances the
/// `instanceId` filter selects, one page (jdcloud_sdk 1.6.354 services/vm/apis/DescribeInstancesCustomDataRequest.py,
/// models/CustomData.py).
pub fn describe_instances_custom_data(c: &Call, st: &JdState) -> Answer {
    let ids = filter(c.p, "instanceId");
    let pg = page(c.p)?;
    let matching: Vec<&Instance> = st
        .instances
        .values()
        .filter(|i| i.region == c.region && ids.as_ref().is_none_or(|f| f.contains(&i.id)))
        .collect();
    let (total, items) = pg.apply(matching);
    let pairs =
        |kv: &[(String, String)]| kv.iter().map(|(k, v)| json!({"key": k, "value": v})).collect::<Vec<_>>();
    let data: Vec<Value> = items
        .iter()
        .map(|i| {
            let userdata: Vec<Value> =
                i.launch_script.iter().map(|v| json!({"key": "launch-script", "value": v})).collect();
            json!({ "instanceId": i.id, "metadata": pairs(&i.metadata), "userdata": userdata })
        })
        .collect();
    Ok(json!({ "customData": data, "totalCount": total }))
}

/// Deletes "按配置计费、或包年包月已到期的单个云主机" (jdcloud_sdk 1.6.354,
/// services/vm/apis/DeleteInstanceRequest.py): a prepaid VM whose term still runs is refused.
pub fn delete_instance(c: &Call, st: &mut JdState) -> Answer {
    let i = find_instance(st, c)?;
    if i.charge_mode == "prepaid_by_duration" && i.charge_expires.is_some_and(|e| e > c.now) {
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!("instance {} is prepaid_by_duration and has not expired; it cannot be deleted through the API", i.id),
        ));
    }
    if i.status(c.now, c.boot) == "pending" {
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!("instance {} is pending; wait until it is running", i.id),
        ));
    }
    let id = i.id.clone();
    let with_eip = get(c.p, "deletePrimaryNetworkInterfaceAllElasticIp").and_then(as_bool).unwrap_or(false);
    st.release_instance(&id, with_eip, c.now);
    Ok(json!({}))
}

pub fn describe_instance_types(c: &Call, st: &JdState) -> Answer {
    let types = filter(c.p, "instanceTypes");
    let azs = filter(c.p, "az");
    let offers: Vec<&Offer> = c
        .ctx
        .offers(PROVIDER)
        .filter(|o| o.region == c.region && types.as_ref().is_none_or(|t| t.contains(&o.instance_type)))
        .collect();
    let knobs = c.ctx.knobs();
    let out: Vec<Value> = offers
        .iter()
        .map(|o| {
            let state: Vec<Value> = o
                .zones
                .iter()
                .filter(|z| azs.as_ref().is_none_or(|a| a.contains(z)))
                .map(|z| {
                    // A count (`limit_stock`, or a knob's `available`) is reported as availableCount.
                    let knob = knobs
                        .stock_outs
                        .iter()
                        .filter(|s| s.matches(PROVIDER, &o.instance_type, z))
                        .filter_map(|s| s.available)
                        .min();
                    let limit = match (st.available.get(&(o.instance_type.clone(), z.clone())).copied(), knob)
                    {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    let in_stock = !c.ctx.is_sold_out(PROVIDER, &o.instance_type, z) && limit != Some(0);
                    let mut s = json!({"az": z, "inStock": in_stock});
                    if let Some(n) = limit {
                        s["availableCount"] = json!(if in_stock { n } else { 0 });
                    }
                    s
                })
                .collect();
            json!({
                "family": o.family,
                "instanceType": o.instance_type,
                "cpu": o.vcpu,
                "memoryMB": (o.memory_gib * 1024.0) as i64,
                "architecture": "x86_64",
                "nicLimit": 8,
                "cloudDiskCountLimit": 8,
                "desc": format!("{} x {} ({} GiB)", o.gpu_count, o.gpu_model, o.gpu_memory_gib),
                "state": state,
                "localDisks": [],
                "cloudDiskTypes": ["ssd.gp1", "ssd.io1", "hdd.std1"],
            })
        })
        .collect();
    Ok(json!({ "instanceTypes": out, "totalCount": offers.len() }))
}

pub fn modify_instance_release_time(c: &Call, st: &mut JdState) -> Answer {
    let ids = list(c.p, "instanceIds");
    if ids.is_empty() {
        return Err(invalid("instanceIds is required"));
    }
    let when = match text(c.p, "autoReleaseTime") {
        None => None,
        Some(raw) => {
            let t = parse_release_time(&raw).ok_or_else(|| {
                invalid(format!("autoReleaseTime {raw} is not in the format YYYY-MM-DD HH:mm:ss"))
            })?;
            let ahead = t.duration_since(c.now);
            if ahead < SignedDuration::from_hours(1) || ahead > SignedDuration::from_hours(24 * 3653) {
                return Err(JdError::new(
                    status::OUT_OF_RANGE,
                    format!("autoReleaseTime {raw} must be between 1 hour and 10 years from now"),
                ));
            }
            Some(t)
        }
    };
    for id in &ids {
        if st.instances.get(id).is_none_or(|i| i.region != c.region) {
            return Err(not_found("instance", id));
        }
    }
    for id in &ids {
        if let Some(i) = st.instances.get_mut(id) {
            i.auto_release = when;
        }
    }
    Ok(json!({}))
}

pub fn create_image(c: &Call, st: &mut JdState) -> Answer {
    let inst = find_instance(st, c)?.clone();
    let name = required(c.p, "name")?;
    if !(2..=32).contains(&name.chars().count()) {
        return Err(invalid("name must be 2-32 characters"));
    }
    if inst.status(c.now, c.boot) != "running" {
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!(
                "instance {} is {}; images are made from running instances",
                inst.id,
                inst.status(c.now, c.boot)
            ),
        ));
    }
    let image_id = c.ctx.new_id("img-", 10);
    let mut snaps = Vec::new();
    for d in inst.system_disk_id.iter().chain(inst.data_disk_ids.iter()) {
        snaps.push(new_snapshot(
            st,
            c,
            d,
            format!("{image_id}-{d}"),
            format!("made by createImage {image_id}"),
        )?);
    }
    for s in &snaps {
        if let Some(snap) = st.snapshots.get_mut(s) {
            snap.images.push(image_id.clone());
        }
    }
    st.images.insert(
        image_id.clone(),
        Image {
            id: image_id.clone(),
            region: c.region.clone(),
            name,
            description: text(c.p, "description").unwrap_or_default(),
            instance_id: inst.id,
            snapshot_ids: snaps,
            created: c.now,
        },
    );
    Ok(json!({ "imageId": image_id }))
}
