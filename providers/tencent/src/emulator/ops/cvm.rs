//! CVM operations: RunInstances, DescribeInstances, DescribeInstancesStatus, TerminateInstances,
//! InquiryPriceRunInstances, DescribeZoneInstanceConfigInfos, CreateImage, DescribeImages (the HPC
//! clusters RunInstances places HCC types in are `hpc.rs`'s).
//! Field names and shapes follow tencentcloud-sdk-python-cvm 3.1.178 `models.py`.

use base64::Engine as _;
use gpuctl_simkit::bill;
use gpuctl_simkit::money::round_cents;
use gpuctl_simkit::{Idem, Offer};
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use crate::api::{charge, codes, states, CLIENT_TOKEN_MAX};
use crate::emulator::error::{Result, TcError};
use crate::emulator::p::{filters, p, page, P};
use crate::emulator::state::{cvm_time, Disk, Image, Instance, PublicIp, Snapshot, State};
use crate::emulator::{Call, PROVIDER};

/// What RunInstances and InquiryPriceRunInstances both read, validated against the catalog.
struct LaunchSpec<'a> {
    charge_type: String,
    zone: String,
    offer: &'a Offer,
    image_id: String,
    count: i64,
    name: String,
    system_disk: (String, i64),
    /// (type, size GB, delete with instance)
    data_disks: Vec<(String, i64, bool)>,
    auto_release_at: Option<Timestamp>,
    tags: Vec<(String, String)>,
    spot_max_price: Option<f64>,
    period_months: Option<i64>,
    vpc_id: String,
    subnet_id: String,
    security_groups: Vec<String>,
    /// InternetAccessible's (charge type, outbound Mbps) when a public IP is assigned.
    public_ip: Option<(String, i64)>,
    /// `UserData` as sent (base64).
    user_data: Option<String>,
    /// `CamRoleName`: the instance role whose temporary credentials the metadata service hands out
    /// (tccli 3.1.189.1 cvm api.json RunInstancesRequest.CamRoleName "实例绑定的角色名称").
    cam_role: Option<String>,
}

/// RunInstances' InternetAccessible, per tccli 3.1.189.1 services/cvm/v20170312/api.json
/// objects.InternetAccessible: InternetMaxBandwidthOut defaults to 0; PublicIpAssigned defaults to true
/// when the bandwidth is above 0 ("默认开通公网IP") and "当公网带宽为0，则不允许分配公网IP". The charge type
/// enum is enforced by the schema (rules.json); its default follows the instance's billing.
fn internet_accessible(v: &P, charge_type: &str) -> Result<Option<(String, i64)>> {
    let bandwidth = v.opt_i64("InternetAccessible.InternetMaxBandwidthOut")?.unwrap_or(0);
    if bandwidth < 0 {
        return Err(TcError::new(
            codes::INVALID_PARAMETER_VALUE,
            format!("InternetAccessible.InternetMaxBandwidthOut `{bandwidth}` must not be negative."),
        ));
    }
    let assigned = v.opt_bool("InternetAccessible.PublicIpAssigned")?;
    if assigned == Some(true) && bandwidth == 0 {
        return Err(TcError::new(
            codes::INVALID_PARAMETER_COMBINATION,
            "InternetAccessible.PublicIpAssigned cannot be true while InternetMaxBandwidthOut is 0.",
        ));
    }
    if bandwidth == 0 || assigned == Some(false) {
        return Ok(None);
    }
    let default_charge =
        if charge_type == charge::PREPAID { "BANDWIDTH_PREPAID" } else { "BANDWIDTH_POSTPAID_BY_HOUR" };
    let charge = v.opt_str("InternetAccessible.InternetChargeType")?.unwrap_or_else(|| default_charge.into());
    Ok(Some((charge, bandwidth)))
}

/// tccli 3.1.189.1 services/cvm/v20170312/api.json RunInstancesRequest.UserData: "需要以 base64 方式编码，
/// 支持的最大数据大小为 16KB" — refused otherwise, as the cloud does, with InvalidParameterValue.
const USER_DATA_MAX: usize = 16 * 1024;

fn user_data_of(v: &P) -> Result<Option<String>> {
    let Some(u) = v.opt_str("UserData")? else { return Ok(None) };
    if u.len() > USER_DATA_MAX {
        return Err(TcError::new(
            codes::INVALID_PARAMETER_VALUE,
            format!("UserData is {} bytes; at most {USER_DATA_MAX} are accepted.", u.len()),
        ));
    }
    if base64::engine::general_purpose::STANDARD.decode(u.as_bytes()).is_err() {
        return Err(TcError::new(codes::INVALID_PARAMETER_VALUE, "UserData must be base64-encoded."));
    }
    Ok(Some(u))
}

fn launch_spec<'a>(call: &'a Call) -> Result<LaunchSpec<'a>> {
    let v = call.p();
    let charge_type = v.opt_str("InstanceChargeType")?.unwrap_or_else(|| charge::POSTPAID_BY_HOUR.into());
    if ![charge::POSTPAID_BY_HOUR, charge::PREPAID, charge::SPOTPAID].contains(&charge_type.as_str()) {
        return Err(TcError::new(
            codes::INVALID_PARAMETER_VALUE,
            format!("InstanceChargeType `{charge_type}` is not one of POSTPAID_BY_HOUR, PREPAID, SPOTPAID."),
        ));
    }
    let zone = v.req_str("Placement.Zone")?;
    let instance_type = v.req_str("InstanceType")?;
    let image_id = v.req_str("ImageId")?;
    if !is_id(&image_id, "img-") {
        return Err(TcError::new(
            codes::INVALID_IMAGE_ID_MALFORMED,
            format!("The ImageId `{image_id}` is malformed."),
        ));
    }
    let region_offers: Vec<&Offer> = call.ctx.offers(PROVIDER).filter(|o| o.region == call.region).collect();
    if !region_offers.iter().any(|o| o.zones.contains(&zone)) {
        return Err(TcError::new(
            codes::INVALID_ZONE_MISMATCH_REGION,
            format!("The zone `{zone}` does not belong to region `{}`.", call.region),
        ));
    }
    let offer = call.ctx.offer(PROVIDER, &call.region, &instance_type).ok_or_else(|| {
        TcError::new(
            codes::INSTANCE_TYPE_NOT_FOUND,
            format!("The instance type `{instance_type}` is not sold in region `{}`.", call.region),
        )
    })?;
    let count = v.opt_i64("InstanceCount")?.unwrap_or(1);
    if !(1..=100).contains(&count) {
        return Err(TcError::new(
            codes::VALUE_RANGE,
            format!("InstanceCount must be between 1 and 100, not {count}."),
        ));
    }
    let system_disk = (
        v.opt_str("SystemDisk.DiskType")?.unwrap_or_else(|| "CLOUD_PREMIUM".into()),
        v.opt_i64("SystemDisk.DiskSize")?.unwrap_or(50),
    );
    let mut data_disks = Vec::new();
    for d in v.obj_list("DataDisks")? {
        let size = d
            .opt_i64("DiskSize")?
            .ok_or_else(|| TcError::new(codes::MISSING_PARAMETER, "DataDisks.DiskSize is required."))?;
        data_disks.push((
            d.opt_str("DiskType")?.unwrap_or_else(|| "CLOUD_PREMIUM".into()),
            size,
            d.opt_bool("DeleteWithInstance")?.unwrap_or(true),
        ));
    }
    let auto_release_at = match v.get("ActionTimer").map(p) {
        None => None,
        Some(t) => {
            let action = t.opt_str("TimerAction")?.unwrap_or_default();
            if action != "TerminateInstances" {
                return Err(TcError::new(
                    codes::INVALID_PARAMETER_VALUE,
                    format!("ActionTimer.TimerAction must be `TerminateInstances`, not `{action}`."),
                ));
            }
            let text = t.req_str("ActionTime")?;
            let at = parse_cvm_time(&text).ok_or_else(|| {
                TcError::new(
                    codes::INVALID_TIME_FORMAT,
                    format!("ActionTimer.ActionTime `{text}` is not YYYY-MM-DDThh:mm:ssZ."),
                )
            })?;
            let earliest = call.ctx.now().checked_add(SignedDuration::from_mins(5)).unwrap_or(at);
            if at <= earliest {
                return Err(TcError::new(
                    codes::INVALID_PARAMETER_VALUE,
                    format!("ActionTimer.ActionTime `{text}` must be more than 5 minutes in the future."),
                ));
            }
            Some(at)
        }
    };
    let mut tags = Vec::new();
    for spec in v.obj_list("TagSpecification")? {
        let rt = spec.opt_str("ResourceType")?.unwrap_or_default();
        if rt != "instance" {
            continue;
        }
        for t in spec.obj_list("Tags")? {
            tags.push((t.req_str("Key")?, t.opt_str("Value")?.unwrap_or_default()));
        }
    }
    // tccli 3.1.189.1 services/cvm/v20170312/api.json objects.SpotMarketOptions: MaxPrice is
    // required (the bid, ¥/hour); a spot launch or quote without it is refused, not priced. A bid
    // below the spot price is `InvalidParameterValue.InsufficientPrice` ("竞价失败",
    // tencentcloud-sdk-python-cvm 3.1.178 tencentcloud/cvm/v20170312/errorcodes.py), in `quote`.
    let spot_max_price = if charge_type == charge::SPOTPAID {
        Some(v.opt_f64("InstanceMarketOptions.SpotOptions.MaxPrice")?.ok_or_else(|| {
            TcError::new(
                codes::MISSING_PARAMETER,
                "InstanceMarketOptions.SpotOptions.MaxPrice is required for SPOTPAID.",
            )
        })?)
    } else {
        None
    };
    if charge_type == charge::SPOTPAID {
        if let Some(mt) = v.opt_str("InstanceMarketOptions.MarketType")? {
            if mt != "spot" {
                return Err(TcError::new(
                    codes::INVALID_PARAMETER_VALUE,
                    format!("InstanceMarketOptions.MarketType must be `spot`, not `{mt}`."),
                ));
            }
        }
    }
    let period_months = if charge_type == charge::PREPAID {
        let period = v.opt_i64("InstanceChargePrepaid.Period")?.ok_or_else(|| {
            TcError::new(codes::MISSING_PARAMETER, "InstanceChargePrepaid.Period is required for PREPAID.")
        })?;
        if ![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 24, 36, 48, 60].contains(&period) {
            return Err(TcError::new(
                codes::VALUE_RANGE,
                format!("InstanceChargePrepaid.Period `{period}` is not a purchasable term."),
            ));
        }
        Some(period)
    } else {
        None
    };
    let public_ip = internet_accessible(&v, &charge_type)?;
    Ok(LaunchSpec {
        public_ip,
        charge_type,
        zone,
        offer,
        image_id,
        count,
        name: v.opt_str("InstanceName")?.unwrap_or_else(|| "未命名".into()),
        system_disk,
        data_disks,
        auto_release_at,
        tags,
        spot_max_price,
        period_months,
        vpc_id: v.opt_str("VirtualPrivateCloud.VpcId")?.unwrap_or_else(|| "vpc-default0".into()),
        subnet_id: v.opt_str("VirtualPrivateCloud.SubnetId")?.unwrap_or_else(|| "subnet-default0".into()),
        security_groups: v.str_list("SecurityGroupIds")?,
        user_data: user_data_of(&v)?,
        cam_role: v.opt_str("CamRoleName")?.filter(|r| !r.is_empty()),
    })
}

/// The per-instance price of a launch from the catalog: (unit price per hour for pay-per-hour
/// modes, total for the prepaid term). Unknown catalog prices are errors, never invented.
struct Quote {
    hourly: Option<f64>,
    prepaid_total: Option<f64>,
}

fn quote(spec: &LaunchSpec) -> Result<Quote> {
    let prices = &spec.offer.prices;
    let missing = |mode: &str| {
        TcError::new(
            codes::INVALID_PARAMETER_VALUE,
            format!("`{}` has no {mode} price in the local cloud's catalog, so it cannot be bought that way here.", spec.offer.instance_type),
        )
    };
    match spec.charge_type.as_str() {
        charge::POSTPAID_BY_HOUR => Ok(Quote {
            hourly: Some(prices.hourly.ok_or_else(|| missing("pay-as-you-go"))?),
            prepaid_total: None,
        }),
        charge::SPOTPAID => {
            let spot = prices.spot_hourly.ok_or_else(|| missing("spot"))?;
            if let Some(max) = spec.spot_max_price {
                if max < spot {
                    return Err(TcError::new(
                        codes::INSUFFICIENT_PRICE,
                        format!("The spot MaxPrice {max} is below the current spot price {spot}."),
                    ));
                }
            }
            Ok(Quote { hourly: Some(spot), prepaid_total: None })
        }
        _ => {
            let months = spec.period_months.unwrap_or(1);
            let total = match months {
                12 if prices.yearly.is_some() => prices.yearly,
                36 if prices.three_year.is_some() => prices.three_year,
                m => prices.monthly.map(|p| p * m as f64),
            };
            Ok(Quote { hourly: None, prepaid_total: Some(total.ok_or_else(|| missing("prepaid"))?) })
        }
    }
}

fn is_id(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix).is_some_and(|t| t.len() == 8 && t.bytes().all(|b| b.is_ascii_alphanumeric()))
}

fn parse_cvm_time(s: &str) -> Option<Timestamp> {
    let dt = jiff::civil::DateTime::strptime("%Y-%m-%dT%H:%M:%SZ", s).ok()?;
    dt.to_zoned(jiff::tz::TimeZone::UTC).ok().map(|z| z.timestamp())
}

pub(crate) fn run_instances(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let token = v.opt_str("ClientToken")?.filter(|t| !t.is_empty());
    if let Some(t) = &token {
        if t.len() > CLIENT_TOKEN_MAX || !t.is_ascii() {
            return Err(TcError::new(
                codes::INVALID_CLIENT_TOKEN_TOO_LONG,
                "ClientToken must be at most 64 ASCII characters.",
            ));
        }
    }
    // The parameters that define the request: everything but the token and DryRun. Tokens belong
    // to the account that sent them.
    let presented = match &token {
        None => None,
        Some(t) => {
            let (presented, outcome) = state.run_tokens.present(
                &call.account,
                "RunInstances",
                t,
                v.value(),
                &["ClientToken", "DryRun"],
            );
            match outcome {
                Idem::Replay(ids) => return Ok(json!({ "InstanceIdSet": ids })),
                Idem::Mismatch => {
                    return Err(TcError::new(
                        codes::INVALID_CLIENT_TOKEN,
                        format!("ClientToken `{t}` was already used with different parameters."),
                    ))
                }
                Idem::New => Some(presented),
            }
        }
    };
    let spec = launch_spec(call)?;
    // The price the bill charges (issue 15) is the one this quote gives.
    let priced = quote(&spec)?;
    // An image the region does not have (neither a public one nor one of the account's) is refused with
    // CVM's own code (tencentcloud-sdk-python 3.1.195 `tencentcloud/cvm/v20170312/errorcodes.py`:
    // INVALIDIMAGEID_NOTFOUND "未找到该镜像").
    let known = gpuctl_simkit::images::TENCENT.iter().any(|i| i.id == spec.image_id)
        || state.images.iter().any(|i| i.id == spec.image_id && i.region == call.region);
    if !known {
        return Err(TcError::new(
            codes::INVALID_IMAGE_ID_NOT_FOUND,
            format!("The ImageId `{}` does not exist in region `{}`.", spec.image_id, call.region),
        ));
    }
    let key_ids = super::keypair::login_key_ids(state, call)?;
    super::vpc::check_launch(state, call, &spec.zone)?;
    let hpc_cluster = super::hpc::check_launch(state, call, &spec.offer.instance_type, &spec.zone)?;
    if call.ctx.is_sold_out(PROVIDER, &spec.offer.instance_type, &spec.zone) {
        return Err(TcError::new(
            codes::ZONE_SOLD_OUT_FOR_SPECIFIED_INSTANCE,
            format!("The instance type `{}` is sold out in zone `{}`.", spec.offer.instance_type, spec.zone),
        ));
    }
    if v.opt_bool("DryRun")?.unwrap_or(false) {
        return Err(TcError::new(codes::DRY_RUN_OPERATION, "DryRun: the request would have succeeded."));
    }
    // A stock knob with `available` left: all the instances or none (the call is refused as sold out).
    if (call.ctx.take_stock(PROVIDER, &[&spec.offer.instance_type], &spec.zone, spec.count as u32, true)
        as i64)
        < spec.count
    {
        return Err(TcError::new(
            codes::ZONE_SOLD_OUT_FOR_SPECIFIED_INSTANCE,
            format!("The instance type `{}` is sold out in zone `{}`.", spec.offer.instance_type, spec.zone),
        ));
    }
    // All the addresses or none, like the stock above: a launch short of public IPs is refused whole.
    let addresses = match spec.public_ip {
        None => Vec::new(),
        Some(_) => state
            .addresses
            .assign_all(spec.count as usize)
            .ok_or_else(|| TcError::new(codes::EIP_INSUFFICIENT, "The public IP resources are sold out."))?,
    };
    let mut addresses = addresses.into_iter();
    let now = call.ctx.now();
    let boot = call.ctx.boot_time();
    let mut ids = Vec::new();
    for n in 0..spec.count {
        let id = call.ctx.new_id("ins-", 8);
        let disk = |usage: &'static str, (ty, size, del): (String, i64, bool)| Disk {
            id: call.ctx.new_id("disk-", 8),
            region: call.region.clone(),
            zone: spec.zone.clone(),
            usage,
            disk_type: ty,
            size_gb: size,
            instance_id: id.clone(),
            delete_with_instance: del,
            charge_type: spec.charge_type.clone(),
            created: now,
            policy_ids: Vec::new(),
            name: String::new(),
            // TagSpecification.ResourceType names no disk ("云服务器为“instance”…"): a disk made
            // with its instance carries no tag.
            tags: Vec::new(),
        };
        let sys = disk("SYSTEM_DISK", (spec.system_disk.0.clone(), spec.system_disk.1, true));
        let data: Vec<Disk> = spec.data_disks.iter().map(|d| disk("DATA_DISK", d.clone())).collect();
        let name = if spec.count > 1 { format!("{}-{}", spec.name, n + 1) } else { spec.name.clone() };
        state.instances.push(Instance {
            id: id.clone(),
            region: call.region.clone(),
            zone: spec.zone.clone(),
            instance_type: spec.offer.instance_type.clone(),
            cpu: spec.offer.vcpu,
            memory_gib: spec.offer.memory_gib,
            gpu_count: spec.offer.gpu_count,
            image_id: spec.image_id.clone(),
            name,
            charge_type: spec.charge_type.clone(),
            created: now,
            running_at: now.checked_add(boot).unwrap_or(now),
            terminating_since: None,
            shutdown: false,
            auto_release_at: spec.auto_release_at,
            expires_at: spec
                .period_months
                .and_then(|m| now.checked_add(SignedDuration::from_hours(730 * m)).ok()),
            tags: spec.tags.clone(),
            system_disk: sys.id.clone(),
            data_disks: data.iter().map(|d| d.id.clone()).collect(),
            private_ip: gpuctl_simkit::cidr::free_address(
                state.instances.len(),
                |n| format!("10.0.{}.{}", (n / 250) % 250, n % 250 + 2),
                state.instances.iter().map(|i| i.private_ip.as_str()),
            ),
            vpc_id: spec.vpc_id.clone(),
            subnet_id: spec.subnet_id.clone(),
            security_groups: spec.security_groups.clone(),
            key_ids: key_ids.clone(),
            public_ip: spec.public_ip.as_ref().zip(addresses.next()).map(|((charge, bw), address)| {
                PublicIp { address, charge_type: charge.clone(), bandwidth_out: *bw }
            }),
            user_data: spec.user_data.clone(),
            hpc_cluster_id: hpc_cluster.clone(),
            cam_role: spec.cam_role.clone(),
            reclaim_at: None,
            stopped: None,
        });
        // Monitoring data can exist from the boot on (issue 15).
        state.gpu.power(&id, now.checked_add(boot).unwrap_or(now), true);
        state.bills.open(bill_usage(&spec, &priced, &id, &call.region, now));
        state.disks.push(sys);
        state.disks.extend(data);
        ids.push(id);
    }
    if let Some(presented) = presented {
        state.run_tokens.remember(presented, ids.clone());
    }
    Ok(json!({ "InstanceIdSet": ids }))
}

/// What the bill charges one instance of a launch: per hour at the quoted hourly price, or the quoted
/// prepaid total once for its term (`gpuctl_simkit::bill` has the rules).
fn bill_usage(spec: &LaunchSpec, q: &Quote, id: &str, region: &str, now: Timestamp) -> bill::Usage {
    let charge = match (q.hourly, q.prepaid_total) {
        (Some(h), _) => bill::Charge::Hourly { list_per_hour: h },
        (None, total) => bill::Charge::Upfront {
            list_total: total.unwrap_or(0.0),
            until: now
                .checked_add(SignedDuration::from_hours(730 * spec.period_months.unwrap_or(1)))
                .unwrap_or(now),
        },
    };
    bill::Usage {
        resource_id: id.to_string(),
        product: "cvm".into(),
        region: region.to_string(),
        zone: spec.zone.clone(),
        instance_type: spec.offer.instance_type.clone(),
        pay_mode: spec.charge_type.clone(),
        charge,
        start: now,
        end: None,
    }
}

fn instance_json(state: &State, i: &Instance, now: Timestamp) -> Value {
    let disk = |id: &str| state.disks.iter().find(|d| d.id == id);
    let sys = disk(&i.system_disk);
    json!({
        "Placement": { "Zone": i.zone, "ProjectId": 0 },
        "InstanceId": i.id,
        "InstanceType": i.instance_type,
        "CPU": i.cpu,
        "Memory": i.memory_gib.round() as i64,
        "RestrictState": "NORMAL",
        "InstanceName": i.name,
        "InstanceChargeType": i.charge_type,
        "SystemDisk": { "DiskType": sys.map(|d| d.disk_type.clone()), "DiskId": i.system_disk, "DiskSize": sys.map(|d| d.size_gb) },
        "DataDisks": i.data_disks.iter().filter_map(|id| disk(id)).map(|d| json!({
            "DiskSize": d.size_gb, "DiskType": d.disk_type, "DiskId": d.id, "DeleteWithInstance": d.delete_with_instance,
        })).collect::<Vec<_>>(),
        "PrivateIpAddresses": [i.private_ip],
        "PublicIpAddresses": i.public_ip.as_ref().map(|p| json!([p.address])),
        "InternetAccessible": match &i.public_ip {
            Some(p) => json!({ "InternetChargeType": p.charge_type, "InternetMaxBandwidthOut": p.bandwidth_out }),
            None => json!({ "InternetChargeType": "TRAFFIC_POSTPAID_BY_HOUR", "InternetMaxBandwidthOut": 0 }),
        },
        "VirtualPrivateCloud": { "VpcId": i.vpc_id, "SubnetId": i.subnet_id, "AsVpcGateway": false },
        "ImageId": i.image_id,
        "RenewFlag": if i.charge_type == charge::PREPAID { Value::from("NOTIFY_AND_MANUAL_RENEW") } else { Value::Null },
        "CreatedTime": cvm_time(i.created),
        "ExpiredTime": i.expires_at.map(cvm_time),
        "OsName": "Ubuntu Server 22.04 LTS 64bit",
        "SecurityGroupIds": i.security_groups,
        "LoginSettings": { "KeyIds": i.key_ids },
        "InstanceState": i.state(now),
        "Tags": i.tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>(),
        // Instance.StopChargingMode: STOP_CHARGING / KEEP_CHARGING for a stopped instance (the mode it
        // was stopped with), NOT_APPLICABLE otherwise (tccli 3.1.189.1 cvm api.json objects.Instance).
        "StopChargingMode": match (&i.stopped, i.state(now)) {
            (Some((_, mode)), states::STOPPED | states::STOPPING) => mode.as_str(),
            _ => "NOT_APPLICABLE",
        },
        "CamRoleName": i.cam_role.clone().unwrap_or_default(),
        "Uuid": format!("{}-sim", i.id),
        "LatestOperation": if i.terminating_since.is_some() { "TerminateInstances" } else if i.stopped.is_some() { "StopInstances" } else { "RunInstances" },
        "LatestOperationState": if i.state(now) == "PENDING" { "OPERATING" } else { "SUCCESS" },
        "GPUInfo": if i.gpu_count > 0 { json!({ "GPUCount": i.gpu_count as f64, "GPUId": [], "GPUType": Value::Null }) } else { Value::Null },
        "DisableApiTermination": false,
        "DefaultLoginUser": "ubuntu",
        "DefaultLoginPort": 22,
        "HpcClusterId": i.hpc_cluster_id,
    })
}

fn check_instance_ids(ids: &[String]) -> Result<()> {
    if ids.len() > 100 {
        return Err(TcError::new(codes::VALUE_RANGE, "At most 100 InstanceIds per request."));
    }
    for id in ids {
        if !is_id(id, "ins-") {
            return Err(TcError::new(
                codes::INVALID_INSTANCE_ID_MALFORMED,
                format!("The instance id `{id}` is malformed."),
            ));
        }
    }
    Ok(())
}

/// The region's instances selected by `InstanceIds` or `Filters` (not both).
fn select<'a>(state: &'a State, call: &Call, filter_names: &[&str]) -> Result<Vec<&'a Instance>> {
    let v = call.p();
    let ids = v.str_list("InstanceIds")?;
    let fs = filters(&v, filter_names)?;
    if !ids.is_empty() && !fs.is_empty() {
        return Err(TcError::new(
            codes::INVALID_PARAMETER,
            "InstanceIds and Filters cannot be given together.",
        ));
    }
    check_instance_ids(&ids)?;
    Ok(state
        .instances
        .iter()
        .filter(|i| i.region == call.region)
        .filter(|i| ids.is_empty() || ids.contains(&i.id))
        .filter(|i| {
            fs.iter().all(|(name, values)| {
                let any = |x: &str| values.iter().any(|v| v == x);
                match name.as_str() {
                    "zone" => any(&i.zone),
                    "instance-id" => any(&i.id),
                    "instance-name" => any(&i.name),
                    "instance-type" => any(&i.instance_type),
                    "instance-charge-type" => any(&i.charge_type),
                    "instance-state" => any(i.state(call.ctx.now())),
                    "image-id" => any(&i.image_id),
                    "tag-key" => i.tags.iter().any(|(k, _)| any(k)),
                    other => match other.strip_prefix("tag:") {
                        Some(key) => i.tags.iter().any(|(k, val)| k == key && any(val)),
                        None => false,
                    },
                }
            })
        })
        .collect())
}

const INSTANCE_FILTERS: &[&str] = &[
    "zone",
    "instance-id",
    "instance-name",
    "instance-type",
    "instance-charge-type",
    "instance-state",
    "image-id",
    "tag-key",
    "tag:",
];

pub(crate) fn describe_instances(state: &State, call: &Call) -> Result<Value> {
    let window = page(&call.p())?;
    let found = select(state, call, INSTANCE_FILTERS)?;
    let now = call.ctx.now();
    Ok(json!({
        "TotalCount": found.len(),
        "InstanceSet": window.apply(found.iter()).1.into_iter().map(|i| instance_json(state, i, now)).collect::<Vec<_>>(),
    }))
}

pub(crate) fn describe_instances_status(state: &State, call: &Call) -> Result<Value> {
    let window = page(&call.p())?;
    let found = select(state, call, &[])?;
    let now = call.ctx.now();
    Ok(json!({
        "TotalCount": found.len(),
        "InstanceStatusSet": window.apply(found.iter()).1.into_iter()
            .map(|i| json!({ "InstanceId": i.id, "InstanceState": i.state(now) })).collect::<Vec<_>>(),
    }))
}

pub(crate) fn terminate_instances(state: &mut State, call: &Call) -> Result<Value> {
    let ids = call.p().str_list("InstanceIds")?;
    if ids.is_empty() {
        return Err(TcError::new(
            codes::MISSING_PARAMETER,
            "The request is missing a required parameter `InstanceIds`.",
        ));
    }
    check_instance_ids(&ids)?;
    for id in &ids {
        let Some(i) = state.instances.iter().find(|i| &i.id == id && i.region == call.region) else {
            return Err(TcError::new(
                codes::INVALID_INSTANCE_ID_NOT_FOUND,
                format!("The instance `{id}` does not exist."),
            ));
        };
        if i.terminating_since.is_some() || i.shutdown {
            return Err(TcError::new(
                codes::INSTANCE_STATE_TERMINATING,
                format!("The instance `{id}` is already being terminated."),
            ));
        }
    }
    let now = call.ctx.now();
    for id in &ids {
        state.terminate(id, now);
    }
    Ok(json!({}))
}

/// StopInstances (tccli 3.1.189.1 cvm api.json StopInstancesRequest): only RUNNING instances; they go
/// STOPPING, then STOPPED. `StoppedMode` STOP_CHARGING ("关机不收费") applies to pay-as-you-go
/// instances only; asked of another, it is refused with `UnsupportedOperation.StoppedModeStopCharging`
/// ("不支持关机不收费特性", tencentcloud-sdk-python-cvm 3.1.178 cvm/v20170312/errorcodes.py). Which
/// pay-as-you-go families support it is not documented in a definition (docs/research/cost-control.md
/// section 2): the local cloud lets every POSTPAID_BY_HOUR instance (assumption).
pub(crate) fn stop_instances(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let ids = v.str_list("InstanceIds")?;
    if ids.is_empty() {
        return Err(TcError::new(
            codes::MISSING_PARAMETER,
            "The request is missing a required parameter `InstanceIds`.",
        ));
    }
    check_instance_ids(&ids)?;
    let mode = v.opt_str("StoppedMode")?.unwrap_or_else(|| "KEEP_CHARGING".into());
    let now = call.ctx.now();
    for id in &ids {
        let Some(i) = state.instances.iter().find(|i| &i.id == id && i.region == call.region) else {
            return Err(TcError::new(
                codes::INVALID_INSTANCE_ID_NOT_FOUND,
                format!("The instance `{id}` does not exist."),
            ));
        };
        let st = i.state(now);
        if st != states::RUNNING {
            let code = match st {
                states::STOPPED => "UnsupportedOperation.InstanceStateStopped",
                states::STOPPING => "UnsupportedOperation.InstanceStateStopping",
                states::PENDING => "UnsupportedOperation.InstanceStatePending",
                states::SHUTDOWN => "UnsupportedOperation.InstanceStateShutdown",
                _ => codes::INSTANCE_STATE_TERMINATING,
            };
            return Err(TcError::new(
                code,
                format!("The instance `{id}` is {st}; only RUNNING instances can be stopped."),
            ));
        }
        if mode == "STOP_CHARGING" && i.charge_type != charge::POSTPAID_BY_HOUR {
            return Err(TcError::new(
                "UnsupportedOperation.StoppedModeStopCharging",
                format!(
                    "The instance `{id}` is {}; stopping without charge applies to pay-as-you-go instances.",
                    i.charge_type
                ),
            ));
        }
    }
    for i in state.instances.iter_mut().filter(|i| ids.contains(&i.id)) {
        i.stopped = Some((now, mode.clone()));
        // A stopped instance reports no GPU data (gpuctl_simkit::usage).
        state.gpu.power(&i.id, now, false);
    }
    Ok(json!({}))
}

pub(crate) fn inquiry_price_run_instances(call: &Call) -> Result<Value> {
    let spec = launch_spec(call)?;
    let q = quote(&spec)?;
    let n = spec.count as f64;
    let instance_price = match (q.hourly, q.prepaid_total) {
        (Some(h), _) => json!({
            "UnitPrice": round_cents(h * n), "UnitPriceDiscount": round_cents(h * n), "ChargeUnit": "HOUR", "Discount": 100.0,
        }),
        (None, Some(total)) => json!({
            "OriginalPrice": round_cents(total * n), "DiscountPrice": round_cents(total * n), "Discount": 100.0,
        }),
        _ => json!({}),
    };
    Ok(json!({
        "Price": {
            "InstancePrice": instance_price,
            "BandwidthPrice": { "UnitPrice": 0.0, "UnitPriceDiscount": 0.0, "ChargeUnit": "GB", "Discount": 100.0 },
        },
    }))
}

pub(crate) fn describe_zone_instance_config_infos(call: &Call) -> Result<Value> {
    let fs = filters(
        &call.p(),
        &["zone", "instance-family", "instance-type", "instance-charge-type", "sort-keys"],
    )?;
    let pass = |name: &str, value: &str| {
        fs.iter().filter(|(n, _)| n == name).all(|(_, vs)| vs.iter().any(|v| v == value))
    };
    let mut set = Vec::new();
    for o in call.ctx.offers(PROVIDER).filter(|o| o.region == call.region) {
        let modes = [
            (charge::POSTPAID_BY_HOUR, o.prices.hourly, "HOUR"),
            (charge::SPOTPAID, o.prices.spot_hourly, "HOUR"),
            (charge::PREPAID, o.prices.monthly, "MONTH"),
        ];
        for zone in &o.zones {
            for (ct, price, unit) in modes {
                let Some(price) = price else { continue };
                if !(pass("zone", zone)
                    && pass("instance-family", &o.family)
                    && pass("instance-type", &o.instance_type)
                    && pass("instance-charge-type", ct))
                {
                    continue;
                }
                let sold_out = call.ctx.is_sold_out(PROVIDER, &o.instance_type, zone);
                let price = if unit == "HOUR" {
                    json!({ "UnitPrice": price, "UnitPriceDiscount": price, "ChargeUnit": unit, "Discount": 100.0 })
                } else {
                    json!({ "OriginalPrice": price, "DiscountPrice": price, "Discount": 100.0 })
                };
                set.push(json!({
                    "Zone": zone,
                    "InstanceType": o.instance_type,
                    "InstanceChargeType": ct,
                    "NetworkCard": 0,
                    "Externals": {},
                    "Cpu": o.vcpu,
                    "Memory": o.memory_gib.round() as i64,
                    "InstanceFamily": o.family,
                    "TypeName": format!("{} ({} × {})", o.family, o.gpu_count, o.gpu_model),
                    "LocalDiskTypeList": [],
                    "Status": if sold_out { "SOLD_OUT" } else { "SELL" },
                    "Price": price,
                    "SoldOutReason": if sold_out { "sold out (local cloud stock-out knob)" } else { "" },
                    "InstanceBandwidth": 0.0,
                    "InstancePps": 0,
                    "StorageBlockAmount": 0,
                    "CpuType": "",
                    "Gpu": o.gpu_count,
                    "Fpga": 0,
                    "Remark": format!("prices: {} (as of {})", o.source, o.as_of),
                    "GpuCount": o.gpu_count as f64,
                    "Frequency": "",
                    "StatusCategory": if sold_out { "WithoutStock" } else { "EnoughStock" },
                }));
            }
        }
    }
    Ok(json!({ "InstanceTypeQuotaSet": set }))
}

pub(crate) fn create_image(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let name = v.req_str("ImageName")?;
    let instance_id = v.opt_str("InstanceId")?.filter(|s| !s.is_empty());
    let data_disk_ids = v.str_list("DataDiskIds")?;
    let snapshot_ids = v.str_list("SnapshotIds")?;
    let now = call.ctx.now();
    let (snapshots, size, source) = match (&instance_id, snapshot_ids.is_empty()) {
        (Some(id), true) => {
            let inst = state
                .instances
                .iter()
                .find(|i| {
                    &i.id == id && i.region == call.region && i.terminating_since.is_none() && !i.shutdown
                })
                .ok_or_else(|| {
                    TcError::new(
                        codes::INVALID_INSTANCE_ID_NOT_FOUND,
                        format!("The instance `{id}` does not exist."),
                    )
                })?;
            for d in &data_disk_ids {
                if !inst.data_disks.contains(d) {
                    return Err(TcError::new(
                        codes::INVALID_PARAMETER_VALUE,
                        format!("The data disk `{d}` does not belong to instance `{id}`."),
                    ));
                }
            }
            let sys = state.disks.iter().find(|d| d.id == inst.system_disk).map_or(50, |d| d.size_gb);
            // The image is backed by fresh snapshots of the system disk and the named data disks,
            // created below once the request is known to succeed.
            let mut backing = vec![inst.system_disk.clone()];
            backing.extend(data_disk_ids.iter().cloned());
            (backing, sys, Some(id.clone()))
        }
        (None, false) => {
            let mut size = 0;
            let mut has_system = false;
            for sid in &snapshot_ids {
                let s = state.snapshots.iter().find(|s| &s.id == sid && s.region == call.region).ok_or_else(
                    || {
                        TcError::new(
                            codes::INVALID_PARAMETER_VALUE,
                            format!("The snapshot `{sid}` does not exist."),
                        )
                    },
                )?;
                if s.disk_usage == "SYSTEM_DISK" {
                    has_system = true;
                    size = s.disk_size_gb;
                }
            }
            if !has_system {
                return Err(TcError::new(
                    codes::INVALID_PARAMETER_VALUE,
                    "SnapshotIds must include a system disk snapshot.",
                ));
            }
            (snapshot_ids.clone(), size, None)
        }
        (Some(_), false) => {
            return Err(TcError::new(codes::INVALID_PARAMETER, "Give InstanceId or SnapshotIds, not both."))
        }
        (None, true) => {
            return Err(TcError::new(
                codes::MISSING_PARAMETER,
                "CreateImage needs InstanceId or SnapshotIds.",
            ))
        }
    };
    if v.opt_bool("DryRun")?.unwrap_or(false) {
        return Err(TcError::new(codes::DRY_RUN_OPERATION, "DryRun: the request would have succeeded."));
    }
    let id = call.ctx.new_id("img-", 8);
    let snapshots = if source.is_some() {
        // `snapshots` holds disk ids here: snapshot each one for the image.
        let mut made = Vec::new();
        for disk_id in &snapshots {
            let Some(d) = state.disks.iter().find(|d| &d.id == disk_id).cloned() else { continue };
            let sid = call.ctx.new_id("snap-", 8);
            state.snapshots.push(Snapshot {
                id: sid.clone(),
                region: d.region.clone(),
                zone: d.zone.clone(),
                name: format!("Created by CreateImage {id}"),
                disk_id: d.id.clone(),
                disk_usage: d.usage,
                disk_size_gb: d.size_gb,
                created: now,
                ready_at: now.checked_add(call.ctx.boot_time()).unwrap_or(now),
                policy_id: None,
                deadline: None,
                image_ids: Vec::new(),
                tags: Vec::new(),
            });
            made.push(sid);
        }
        made
    } else {
        snapshots
    };
    for sid in &snapshots {
        if let Some(s) = state.snapshots.iter_mut().find(|s| &s.id == sid) {
            s.image_ids.push(id.clone());
        }
    }
    state.images.push(Image {
        id: id.clone(),
        region: call.region.clone(),
        name,
        description: v.opt_str("ImageDescription")?.unwrap_or_default(),
        created: now,
        ready_at: now.checked_add(call.ctx.boot_time()).unwrap_or(now),
        size_gb: size,
        snapshot_ids: snapshots,
        source_instance: source,
    });
    Ok(json!({ "ImageId": id }))
}

pub(crate) fn describe_images(state: &State, call: &Call) -> Result<Value> {
    let v = call.p();
    let window = page(&v)?;
    let ids = v.str_list("ImageIds")?;
    // The filters of tccli 3.1.189.1 `cvm/v20170312/api.json` DescribeImagesRequest.Filters that the sim
    // keeps: image-id, image-type, image-name and platform (the last two "支持模糊查询"/"支持模糊匹配").
    let fs = filters(&v, &["image-id", "image-type", "image-name", "platform"])?;
    if !ids.is_empty() && !fs.is_empty() {
        return Err(TcError::new(codes::INVALID_PARAMETER, "ImageIds and Filters cannot be given together."));
    }
    let now = call.ctx.now();
    // (id, type, name, platform, the image as CVM answers it), custom images first, then public ones.
    let custom =
        state.images.iter().filter(|i| i.region == call.region).map(|i| {
            (i.id.as_str(), "PRIVATE_IMAGE", i.name.as_str(), "Ubuntu", custom_image(state, i, now))
        });
    let public = gpuctl_simkit::images::TENCENT
        .iter()
        .map(|i| (i.id, "PUBLIC_IMAGE", i.name, i.platform, public_image(i)));
    let found: Vec<Value> = custom
        .chain(public)
        .filter(|(id, ..)| ids.is_empty() || ids.iter().any(|x| x == id))
        .filter(|(id, ty, name, platform, _)| {
            fs.iter().all(|(n, vs)| match n.as_str() {
                "image-id" => vs.iter().any(|x| x == id),
                "image-type" => vs.iter().any(|x| x == ty),
                "image-name" => vs.iter().any(|x| gpuctl_simkit::images::fuzzy(name, x)),
                "platform" => vs.iter().any(|x| gpuctl_simkit::images::fuzzy(platform, x)),
                _ => false,
            })
        })
        .map(|(.., img)| img)
        .collect();
    Ok(json!({
        "TotalCount": found.len(),
        "ImageSet": window.apply(found.iter()).1,
    }))
}

fn custom_image(state: &State, i: &Image, now: Timestamp) -> Value {
    json!({
        "ImageId": i.id,
        "OsName": "Ubuntu Server 22.04 LTS 64bit",
        "ImageType": "PRIVATE_IMAGE",
        "CreatedTime": cvm_time(i.created),
        "ImageName": i.name,
        "ImageDescription": i.description,
        "ImageSize": i.size_gb,
        "Architecture": "x86_64",
        "ImageState": if now >= i.ready_at { "NORMAL" } else { "CREATING" },
        "Platform": "Ubuntu",
        "ImageCreator": "gpuctl-sim",
        "ImageSource": "CREATE_IMAGE",
        "SyncPercent": if now >= i.ready_at { 100 } else { 0 },
        "IsSupportCloudinit": true,
        "SnapshotSet": i.snapshot_ids.iter().filter_map(|sid| state.snapshots.iter().find(|s| &s.id == sid)).map(|s| json!({
            "SnapshotId": s.id, "DiskUsage": s.disk_usage, "DiskSize": s.disk_size_gb,
        })).collect::<Vec<_>>(),
        "Tags": [],
        "LicenseType": "TencentCloud",
        "ImageFamily": "",
        "ImageDeprecated": false,
    })
}

/// A public image as CVM lists it: `ImageType` PUBLIC_IMAGE, `ImageSource` OFFICIAL, no snapshots.
fn public_image(i: &gpuctl_simkit::images::PublicImage) -> Value {
    json!({
        "ImageId": i.id,
        "OsName": i.name,
        "ImageType": "PUBLIC_IMAGE",
        "CreatedTime": i.created,
        "ImageName": i.name,
        "ImageDescription": i.name,
        "ImageSize": i.size_gb,
        "Architecture": "x86_64",
        "ImageState": "NORMAL",
        "Platform": i.platform,
        "ImageCreator": "",
        "ImageSource": "OFFICIAL",
        "SyncPercent": 100,
        "IsSupportCloudinit": true,
        "SnapshotSet": [],
        "Tags": [],
        "LicenseType": "TencentCloud",
        "ImageFamily": "",
        "ImageDeprecated": false,
    })
}
