//! The JD Cloud operations (vm, disk, billing): each reads its parameters, checks them, changes the
//! state and renders JD's `result` (field names from jdcloud_sdk's models: vm Instance,
//! InstanceType, disk Disk/Snapshot/SnapshotPolicy, billing OrderPrice).

use gpuctl_simkit::params::{as_bool, as_i64, as_string};
use gpuctl_simkit::{Idem, Offer, SimCtx};
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use super::state::{Disk, Image, Instance, JdState, Snapshot, SnapshotPolicy, IMAGE_TAKES, SNAPSHOT_TAKES};
use super::{JdError, PROVIDER};
use crate::api::{format_release_time, format_time, parse_offset_time, parse_release_time, status};

pub struct Call<'a> {
    pub region: String,
    /// The path parameter after the collection (`instances/{id}`), if any.
    pub id: Option<String>,
    pub p: &'a Value,
    pub ctx: &'a SimCtx,
    pub now: Timestamp,
    pub boot: SignedDuration,
    /// The caller's access key: clientTokens are remembered per account.
    pub account: String,
}

type Answer = Result<Value, JdError>;

fn invalid(msg: impl Into<String>) -> JdError {
    JdError::new(status::INVALID_ARGUMENT, msg)
}

fn get<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    v.get(name).filter(|x| !x.is_null())
}

fn text(v: &Value, name: &str) -> Option<String> {
    get(v, name).and_then(as_string).filter(|s| !s.is_empty())
}

fn required(v: &Value, name: &str) -> Result<String, JdError> {
    text(v, name).ok_or_else(|| invalid(format!("{name} is required")))
}

fn int(v: &Value, name: &str) -> Result<Option<i64>, JdError> {
    match get(v, name) {
        None => Ok(None),
        Some(x) => as_i64(x).map(Some).ok_or_else(|| invalid(format!("{name} must be an integer, got {x}"))),
    }
}

fn list(v: &Value, name: &str) -> Vec<String> {
    match get(v, name) {
        Some(Value::Array(items)) => items.iter().filter_map(as_string).collect(),
        _ => Vec::new(),
    }
}

/// `filters: [{name, values: [...]}]` → the values of one filter name, if given.
fn filter(p: &Value, name: &str) -> Option<Vec<String>> {
    let Some(Value::Array(filters)) = get(p, "filters") else { return None };
    filters.iter().find(|f| f.get("name").and_then(Value::as_str) == Some(name)).map(|f| list(f, "values"))
}

fn page(p: &Value) -> Result<(usize, usize), JdError> {
    let number = int(p, "pageNumber")?.unwrap_or(1).max(1);
    let size = int(p, "pageSize")?.unwrap_or(20).clamp(10, 100);
    Ok((number as usize, size as usize))
}

fn paged<T>(items: Vec<T>, (number, size): (usize, usize)) -> (usize, Vec<T>) {
    let total = items.len();
    (total, items.into_iter().skip((number - 1) * size).take(size).collect())
}

fn not_found(kind: &str, id: &str) -> JdError {
    JdError::new(status::NOT_FOUND, format!("{kind} {id} not found"))
}

/// Replay or refuse a clientToken seen before; `None` → do the work.
fn token_check(st: &JdState, op: &str, c: &Call) -> Result<Option<Value>, JdError> {
    let p = c.p;
    let Some(t) = text(p, "clientToken") else { return Ok(None) };
    if t.len() > 64 {
        return Err(invalid("clientToken must be at most 64 characters"));
    }
    match st.tokens.check(&format!("{}:{op}:{t}", c.account), &fingerprint(p)) {
        Idem::New => Ok(None),
        Idem::Replay(v) => Ok(Some(v)),
        // *unverified*: JD documents no dedicated code for a reused token with other parameters.
        Idem::Mismatch => {
            Err(invalid(format!("clientToken {t} was already used by a request with different parameters")))
        }
    }
}

fn token_remember(st: &mut JdState, op: &str, c: &Call, result: &Value) {
    if let Some(t) = text(c.p, "clientToken") {
        st.tokens.remember(&format!("{}:{op}:{t}", c.account), &fingerprint(c.p), result.clone());
    }
}

/// The request without its token and null fields (the SDK sends unset fields as null).
fn fingerprint(p: &Value) -> Value {
    match p {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, v)| k.as_str() != "clientToken" && !v.is_null())
                .map(|(k, v)| (k.clone(), fingerprint(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(fingerprint).collect()),
        other => other.clone(),
    }
}

/// Validate `charge` of an instance spec; returns (chargeMode, expiry for prepaid).
fn charge_of(spec: &Value, now: Timestamp) -> Result<(String, Option<Timestamp>), JdError> {
    let charge = get(spec, "charge").cloned().unwrap_or(Value::Null);
    let mode = text(&charge, "chargeMode").unwrap_or_else(|| "postpaid_by_duration".into());
    match mode.as_str() {
        "postpaid_by_duration" | "postpaid_by_usage" => Ok((mode, None)),
        "prepaid_by_duration" => {
            let unit = text(&charge, "chargeUnit").unwrap_or_else(|| "month".into());
            let n = int(&charge, "chargeDuration")?.ok_or_else(|| invalid("charge.chargeDuration is required for prepaid_by_duration"))?;
            let days = match unit.as_str() {
                "month" if (1..=9).contains(&n) => 30 * n,
                "year" if (1..=3).contains(&n) => 365 * n,
                _ => return Err(invalid(format!("charge.chargeDuration {n} is not valid for chargeUnit {unit} (month: 1-9, year: 1-3)"))),
            };
            Ok((mode, Some(now + SignedDuration::from_hours(24 * days))))
        }
        other => Err(invalid(format!("charge.chargeMode {other} is not one of prepaid_by_duration, postpaid_by_usage, postpaid_by_duration"))),
    }
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
    let (charge_mode, charge_expires) = charge_of(spec, c.now)?;
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
    let subnet = get(spec, "primaryNetworkInterface")
        .and_then(|n| get(n, "networkInterface"))
        .and_then(|n| text(n, "subnetId"))
        .unwrap_or_default();
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
                &charge_mode,
            )?;
            system_disk_id = Some(d.id.clone());
            st.disks.insert(d.id.clone(), d);
        }
        for (k, dd) in data_specs.iter().enumerate() {
            let spec = get(dd, "cloudDiskSpec").cloned().unwrap_or(Value::Null);
            let device = text(dd, "deviceName").unwrap_or_else(|| format!("vd{}", (b'b' + k as u8) as char));
            let auto_delete = get(dd, "autoDelete").and_then(as_bool).unwrap_or(true);
            let d = new_disk(c, &az, &id, &spec, &device, auto_delete, 20, &charge_mode)?;
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
            charge_mode: charge_mode.clone(),
            charge_expires,
            created: c.now,
            failed,
            auto_release: None,
            tags: tags.clone(),
            subnet_id: subnet.clone(),
            vpc_id: if subnet.is_empty() {
                String::new()
            } else {
                format!("vpc-{}", subnet.trim_start_matches("subnet-"))
            },
            private_ip: format!("10.0.{}.{}", st.instances.len() / 250, st.instances.len() % 250 + 2),
            system_disk_id,
            data_disk_ids: disk_ids,
            key_names: list(spec, "keyNames"),
        };
        st.instances.insert(id.clone(), inst);
        ids.push(id);
    }
    let result = json!({ "instanceIds": ids });
    token_remember(st, "createInstances", c, &result);
    Ok(result)
}

#[allow(clippy::too_many_arguments)]
fn new_disk(
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
    })
}

fn charge_json(mode: &str, start: Timestamp, expires: Option<Timestamp>) -> Value {
    json!({
        "chargeMode": mode,
        "chargeStatus": "normal",
        "chargeStartTime": format_time(start),
        "chargeExpiredTime": expires.map(format_time),
        "chargeRetireTime": null,
    })
}

fn disk_json(d: &Disk, st: &JdState) -> Value {
    let attached = d.instance_id.as_ref().filter(|i| st.instances.contains_key(*i));
    json!({
        "diskId": d.id,
        "az": d.az,
        "name": d.name,
        "description": "",
        "diskType": d.disk_type,
        "diskSizeGB": d.size_gb,
        "iops": null,
        "throughput": null,
        "status": if attached.is_some() { "in-use" } else { "available" },
        "attachments": attached.map(|i| vec![json!({"instanceId": i, "instanceType": "vm", "attachTime": format_time(d.created), "status": "attached"})]).unwrap_or_default(),
        "snapshotId": d.snapshot_id,
        "multiAttachable": false,
        "encrypted": false,
        "enabled": true,
        "createTime": format_time(d.created),
        "charge": charge_json(&d.charge_mode, d.created, None),
        "tags": [],
        "snapshotPolicies": d.policy_ids.iter().map(|p| json!({"id": p})).collect::<Vec<_>>(),
    })
}

fn attachment_json(d: &Disk, st: &JdState, now: Timestamp, boot: SignedDuration) -> Value {
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
        "elasticIpId": null,
        "elasticIpAddress": null,
        "status": i.status(now, boot),
        "description": i.description,
        "imageId": i.image_id,
        "systemDisk": system,
        "dataDisks": i.data_disk_ids.iter().filter_map(|d| st.disks.get(d)).map(|d| attachment_json(d, st, now, boot)).collect::<Vec<_>>(),
        "primaryNetworkInterface": {"deviceIndex": 0, "autoDelete": true, "networkInterface": {"subnetId": i.subnet_id, "vpcId": i.vpc_id, "primaryIp": {"privateIpAddress": i.private_ip}}},
        "secondaryNetworkInterfaces": [],
        "launchTime": format_time(i.created),
        "az": i.az,
        "keyNames": i.key_names,
        "charge": charge_json(&i.charge_mode, i.created, i.charge_expires),
        "tags": i.tags.iter().map(|(k, v)| json!({"key": k, "value": v})).collect::<Vec<_>>(),
        "chargeOnStopped": "keepCharging",
        "osType": "linux",
        "architecture": "x86_64",
        "autoReleaseTime": i.auto_release.map(format_release_time),
    })
}

fn find_instance<'s>(st: &'s JdState, c: &Call) -> Result<&'s Instance, JdError> {
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
    let (total, items) = paged(matching, pg);
    Ok(json!({
        "instances": items.iter().map(|i| instance_json(i, st, c.now, c.boot)).collect::<Vec<_>>(),
        "totalCount": total,
    }))
}

pub fn describe_instance(c: &Call, st: &JdState) -> Answer {
    let i = find_instance(st, c)?;
    Ok(json!({ "instance": instance_json(i, st, c.now, c.boot) }))
}

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
    st.remove_instance(&id);
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

fn new_snapshot(
    st: &mut JdState,
    c: &Call,
    disk_id: &str,
    name: String,
    description: String,
) -> Result<String, JdError> {
    let disk = st
        .disks
        .get(disk_id)
        .filter(|d| d.region == c.region)
        .ok_or_else(|| not_found("disk", disk_id))?
        .clone();
    let id = c.ctx.new_id("snapshot-", 10);
    st.snapshots.insert(
        id.clone(),
        Snapshot {
            id: id.clone(),
            region: c.region.clone(),
            name,
            description,
            disk_id: disk.id,
            size_gb: disk.size_gb,
            created: c.now,
            expires: None,
            images: Vec::new(),
        },
    );
    Ok(id)
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

pub fn create_snapshot(c: &Call, st: &mut JdState) -> Answer {
    let spec = get(c.p, "snapshotSpec").ok_or_else(|| invalid("snapshotSpec is required"))?;
    let disk = required(spec, "diskId")?;
    let name = required(spec, "name")?;
    if let Some(replay) = token_check(st, "createSnapshot", c)? {
        return Ok(replay);
    }
    let id = new_snapshot(st, c, &disk, name, text(spec, "description").unwrap_or_default())?;
    let result = json!({ "snapshotId": id });
    token_remember(st, "createSnapshot", c, &result);
    Ok(result)
}

fn snapshot_json(s: &Snapshot, now: Timestamp) -> Value {
    json!({
        "snapshotId": s.id,
        "snapshotSource": "self",
        "diskId": s.disk_id,
        "snapshotSizeGB": s.size_gb,
        "images": s.images,
        "name": s.name,
        "description": s.description,
        "status": if now.duration_since(s.created) >= SNAPSHOT_TAKES { "available" } else { "creating" },
        "createTime": format_time(s.created),
        "expireTime": s.expires.map(format_time),
        "encrypted": false,
    })
}

pub fn describe_snapshots(c: &Call, st: &JdState) -> Answer {
    let ids = filter(c.p, "snapshotId");
    let disks = filter(c.p, "diskId");
    let statuses = filter(c.p, "status");
    let names = filter(c.p, "name");
    let pg = page(c.p)?;
    let within = |f: &Option<Vec<String>>, v: &str| f.as_ref().is_none_or(|f| f.iter().any(|x| x == v));
    let matching: Vec<&Snapshot> = st
        .snapshots
        .values()
        .filter(|s| s.region == c.region && within(&ids, &s.id) && within(&disks, &s.disk_id))
        .filter(|s| within(&statuses, snapshot_json(s, c.now)["status"].as_str().unwrap_or("")))
        .filter(|s| names.as_ref().is_none_or(|n| n.iter().any(|n| s.name.contains(n.as_str()))))
        .collect();
    let (total, items) = paged(matching, pg);
    Ok(
        json!({ "snapshots": items.iter().map(|s| snapshot_json(s, c.now)).collect::<Vec<_>>(), "totalCount": total }),
    )
}

pub fn delete_snapshot(c: &Call, st: &mut JdState) -> Answer {
    let id = c.id.clone().unwrap_or_default();
    let snap =
        st.snapshots.get(&id).filter(|s| s.region == c.region).ok_or_else(|| not_found("snapshot", &id))?;
    if !snap.images.is_empty() {
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!("snapshot {id} is used by image {}; delete the image first", snap.images.join(", ")),
        ));
    }
    st.snapshots.remove(&id);
    Ok(json!({}))
}

fn policy_json(p: &SnapshotPolicy, st: &JdState, now: Timestamp) -> Value {
    json!({
        "id": p.id,
        "name": p.name,
        "pin": "gpuctl-sim",
        "interval": p.interval,
        "effectiveTime": format_time(p.effective),
        "lastTriggerTime": p.last_run.map(format_time),
        "nextTriggerTime": format_time(p.next_run_after(now)),
        "snapshotLifecycle": p.lifecycle,
        "contactInfo": p.contact_info,
        "createTime": format_time(p.created),
        "updateTime": format_time(p.created),
        "status": p.status,
        "diskCount": st.disks.values().filter(|d| d.policy_ids.contains(&p.id)).count(),
    })
}

pub fn create_snapshot_policy(c: &Call, st: &mut JdState) -> Answer {
    let name = required(c.p, "name")?;
    let interval = int(c.p, "interval")?.ok_or_else(|| invalid("interval is required"))?;
    if interval < 12 * 3600 {
        return Err(invalid(format!("interval must be at least 43200 seconds (12 hours), got {interval}")));
    }
    let raw = required(c.p, "effectiveTime")?;
    let effective = parse_offset_time(&raw).ok_or_else(|| {
        invalid(format!("effectiveTime {raw} is not in the format YYYY-MM-DDTHH:mm:ss+08:00"))
    })?;
    let lifecycle = int(c.p, "snapshotLifecycle")?.ok_or_else(|| invalid("snapshotLifecycle is required"))?;
    if lifecycle < 0 {
        return Err(invalid("snapshotLifecycle must be 0 (keep) or a number of seconds"));
    }
    let status_code = int(c.p, "status")?.ok_or_else(|| invalid("status is required"))?;
    if ![1, 2].contains(&status_code) {
        return Err(invalid("status must be 1 (enabled) or 2 (disabled)"));
    }
    let id = c.ctx.new_id("policy-", 10);
    let policy = SnapshotPolicy {
        id: id.clone(),
        region: c.region.clone(),
        name,
        interval,
        effective,
        lifecycle,
        status: status_code,
        created: c.now,
        last_run: None,
        contact_info: get(c.p, "contactInfo").cloned().unwrap_or(Value::Null),
    };
    let result = policy_json(&policy, st, c.now);
    st.snapshot_policies.insert(id, policy);
    Ok(result)
}

/// `relations: [{diskId, diskRegion, policyId, op}]`; `op` 1 (or "bind") binds, 2 ("unbind")
/// unbinds. Each relation is answered on its own, as JD's `opResults` do.
pub fn apply_snapshot_policies(c: &Call, st: &mut JdState) -> Answer {
    let relations = match get(c.p, "relations") {
        Some(Value::Array(a)) if !a.is_empty() => a.clone(),
        _ => return Err(invalid("relations is required")),
    };
    let mut results = Vec::new();
    for r in &relations {
        let disk = text(r, "diskId").unwrap_or_default();
        let policy = text(r, "policyId").unwrap_or_default();
        let op = get(r, "op").cloned().unwrap_or(Value::Null);
        let bind = match (as_i64(&op), op.as_str()) {
            (Some(1), _) | (_, Some("bind")) => Some(true),
            (Some(2), _) | (_, Some("unbind")) => Some(false),
            _ => None,
        };
        let outcome = match bind {
            None => Err(format!("op {op} is not 1 (bind) or 2 (unbind)")),
            Some(_) if !st.snapshot_policies.contains_key(&policy) => {
                Err(format!("snapshot policy {policy} not found"))
            }
            Some(bind) => match st.disks.get_mut(&disk) {
                None => Err(format!("disk {disk} not found")),
                Some(d) => {
                    d.policy_ids.retain(|p| *p != policy);
                    if bind {
                        d.policy_ids.push(policy.clone());
                    }
                    Ok(())
                }
            },
        };
        let (code, message) = match outcome {
            Ok(()) => (0, "success".to_string()),
            Err(m) => (404, m),
        };
        results.push(json!({
            "code": code,
            "message": message,
            "diskId": disk,
            "diskRegion": text(r, "diskRegion").unwrap_or_else(|| c.region.clone()),
            "policyId": policy,
            "op": if bind == Some(false) { 2 } else { 1 },
        }));
    }
    Ok(json!({ "opResults": results }))
}

/// billing calculateTotalPrice for new vm purchases (`cmd` 1). Each order names its type in
/// `formula` (`{"key":"instanceType","value":"g.n2.xlarge"}`); `billingType` 1 (by configuration)
/// is priced per hour, 3 (subscription) per `timeSpan` × `timeUnit` (3 month, 4 year, 5 week).
/// Prices come from the catalog, whose source and date are named in `remark`.
pub fn calculate_total_price(c: &Call) -> Answer {
    let cmd = int(c.p, "cmd")?.ok_or_else(|| invalid("cmd is required"))?;
    if cmd != 1 {
        return Err(JdError::new(
            status::NOT_IMPLEMENTED,
            format!("the local cloud prices new purchases (cmd 1) only, not cmd {cmd}"),
        ));
    }
    let packages = int(c.p, "packageCount")?.unwrap_or(1).max(1) as f64;
    let orders = match get(c.p, "orderList") {
        Some(Value::Array(a)) if !a.is_empty() => a.clone(),
        _ => return Err(invalid("orderList is required")),
    };
    let mut details = Vec::new();
    let mut total = 0.0;
    let mut sources = Vec::new();
    for o in &orders {
        let service = text(o, "serviceCode").unwrap_or_default();
        if service != "vm" {
            return Err(JdError::new(
                status::NOT_IMPLEMENTED,
                format!("the local cloud prices serviceCode vm only, not {service:?}"),
            ));
        }
        let itype = match get(o, "formula") {
            Some(Value::Array(f)) => f
                .iter()
                .find(|x| text(x, "key").as_deref() == Some("instanceType"))
                .and_then(|x| text(x, "value")),
            _ => None,
        }
        .ok_or_else(|| invalid("orderList[].formula needs {\"key\":\"instanceType\",\"value\":<type>}"))?;
        let region = text(o, "region").unwrap_or_else(|| c.region.clone());
        let offer = c
            .ctx
            .offer(PROVIDER, &region, &itype)
            .ok_or_else(|| invalid(format!("instanceType {itype} is not sold in {region}")))?;
        let billing = int(o, "billingType")?.unwrap_or(1);
        let span = int(o, "timeSpan")?.unwrap_or(1).max(1) as f64;
        let unit = int(o, "timeUnit")?.unwrap_or(0);
        let p = &offer.prices;
        let unit_price = match (billing, unit) {
            (1, _) => p.hourly,
            (3, 3) => p.monthly.map(|m| m * span),
            (3, 4) if span == 3.0 => p.three_year,
            (3, 4) => p.yearly.map(|y| y * span),
            (3, 5) => p.weekly.map(|w| w * span),
            _ => return Err(invalid(format!("billingType {billing} with timeUnit {unit} is not priced by the local cloud"))),
        }
        .ok_or_else(|| {
            JdError::new(
                status::FAILED_PRECONDITION,
                format!("the catalog has no price for {itype} with billingType {billing}/timeUnit {unit} (source: {}, as of {})", offer.source, offer.as_of),
            )
        })?;
        let count = int(o, "count")?.unwrap_or(1).max(1) as f64;
        let price = unit_price * count * packages;
        total += price;
        sources.push(format!("{itype}: {} as of {}", offer.source, offer.as_of));
        details.push(json!({
            "price": price, "priceScale4": price, "discount": 0.0, "discountedPrice": round2(price),
            "afterFavorablePrice": price, "erasePrice": price - round2(price), "originalPrice": price,
            "serviceCode": "vm", "region": region, "az": text(o, "az"), "billingType": billing,
            "timeSpan": span as i64, "timeUnit": unit, "formula": get(o, "formula"),
        }));
    }
    Ok(json!({
        "totalPrice": round2(total),
        "totalPriceScale4": (total * 10000.0).round() / 10000.0,
        "discountedTotalPrice": round2(total),
        "totalDiscount": 0.0,
        "list": details,
        "totalOriginalPrice": round2(total),
        "favorableInfos": [],
        "remark": format!("catalog prices in CNY; {}", sources.join("; ")),
    }))
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `/_sim/state` view.
pub fn state_json(st: &JdState, now: Timestamp, boot: SignedDuration) -> Value {
    json!({
        "instances": st.instances.values().map(|i| instance_json(i, st, now, boot)).collect::<Vec<_>>(),
        "disks": st.disks.values().map(|d| disk_json(d, st)).collect::<Vec<_>>(),
        "snapshots": st.snapshots.values().map(|s| snapshot_json(s, now)).collect::<Vec<_>>(),
        "images": st.images.values().map(|i| json!({
            "imageId": i.id, "name": i.name, "description": i.description, "instanceId": i.instance_id,
            "snapshotIds": i.snapshot_ids, "createTime": format_time(i.created),
            "status": if now.duration_since(i.created) >= IMAGE_TAKES { "ready" } else { "creating" },
        })).collect::<Vec<_>>(),
        "snapshot_policies": st.snapshot_policies.values().map(|p| policy_json(p, st, now)).collect::<Vec<_>>(),
    })
}
