//! VPC operations for `network = "auto"` (issue 13): Create/Describe/Delete of VPCs, subnets and
//! security groups, and security group policies. Parameters and fields follow tccli 3.1.189.1
//! `tccli/services/vpc/v20170312/api.json`; error codes tencentcloud-sdk-python 3.1.195
//! `tencentcloud/vpc/v20170312/errorcodes.py` (CVM's own codes for RunInstances' network check from
//! `tencentcloud/cvm/v20170312/errorcodes.py`).
//!
//! The emulated account has the CVM default network (`vpc-default0`) unless the `no_default_network`
//! knob names the zone (an empty account, `gpuctl sim --empty-account`): there RunInstances must name a
//! VPC, subnet and security groups this emulator made.

use std::net::Ipv4Addr;

use gpuctl_simkit::Cidr;
use jiff::Timestamp;
use serde_json::{json, Value};

use crate::api::codes;
use crate::emulator::error::{Result, TcError};
use crate::emulator::p::{filters, page, P};
use crate::emulator::state::{cvm_time, State};
use crate::emulator::{Call, PROVIDER};

/// "最大长度不能超过60个字节" (CreateVpcRequest.VpcName, CreateSubnetRequest.SubnetName) and
/// "不得超过60个字符" (CreateSecurityGroupRequest.GroupName).
const NAME_MAX: usize = 60;
/// The emulated account's quotas per region (VPCs, security groups) and per VPC (subnets).
/// Tencent's console states 20 VPCs per region and 50 groups per region by default *(unverified:
/// the API definition names only the `LimitExceeded` code)*.
const VPC_QUOTA: usize = 20;
const SUBNET_QUOTA: usize = 100;
const GROUP_QUOTA: usize = 50;

#[derive(Clone, Debug)]
pub(crate) struct Vpc {
    pub id: String,
    pub region: String,
    pub name: String,
    pub cidr: Cidr,
    pub tags: Vec<(String, String)>,
    pub created: Timestamp,
}

#[derive(Clone, Debug)]
pub(crate) struct Subnet {
    pub id: String,
    pub region: String,
    pub vpc_id: String,
    pub zone: String,
    pub name: String,
    pub cidr: Cidr,
    pub tags: Vec<(String, String)>,
    pub created: Timestamp,
}

#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub id: String,
    pub region: String,
    pub name: String,
    pub description: String,
    pub tags: Vec<(String, String)>,
    pub ingress: Vec<Value>,
    pub egress: Vec<Value>,
    pub created: Timestamp,
}

fn err(code: &'static str, msg: impl Into<String>) -> TcError {
    TcError::new(code, msg)
}

fn name(v: &P, field: &str) -> Result<String> {
    let n = v.req_str(field)?;
    if n.len() > NAME_MAX {
        return Err(err(
            "InvalidParameterValue.TooLong",
            format!("{field} is longer than {NAME_MAX} bytes."),
        ));
    }
    Ok(n)
}

fn tags(v: &P) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for t in v.obj_list("Tags")? {
        out.push((t.req_str("Key")?, t.opt_str("Value")?.unwrap_or_default()));
    }
    Ok(out)
}

fn tag_json(tags: &[(String, String)]) -> Vec<Value> {
    tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect()
}

fn cidr(v: &P, field: &str) -> Result<Option<Cidr>> {
    match v.opt_str(field)? {
        None => Ok(None),
        Some(s) => Cidr::parse(&s)
            .map(Some)
            .ok_or_else(|| err(codes::MALFORMED, format!("{field} `{s}` is not an IPv4 CIDR block."))),
    }
}

/// Whether `tags` pass the `tag-key` / `tag:<key>` filters (the other names are each API's own).
pub(crate) fn tag_filter(name: &str, values: &[String], tags: &[(String, String)]) -> Option<bool> {
    if name == "tag-key" {
        return Some(tags.iter().any(|(k, _)| values.contains(k)));
    }
    let key = name.strip_prefix("tag:")?;
    Some(tags.iter().any(|(k, v)| k == key && values.contains(v)))
}

/// `Filters` as (name, values) pairs.
type Filters = Vec<(String, Vec<String>)>;

/// `Ids` and `Filters` together are refused: "不支持同时指定VpcIds和Filters参数" (and the same words for
/// SubnetIds and SecurityGroupIds).
fn ids_and_filters(v: &P, ids_field: &str, allowed: &[&str]) -> Result<(Vec<String>, Filters)> {
    let ids = v.str_list(ids_field)?;
    let fs = filters(v, allowed)?;
    if !ids.is_empty() && !fs.is_empty() {
        return Err(err(
            codes::INVALID_PARAMETER,
            format!("{ids_field} and Filters cannot be given together."),
        ));
    }
    Ok((ids, fs))
}

// ------------------------------------------------------------------------------------------ VPCs

pub(crate) fn create_vpc(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let vpc_name = name(&v, "VpcName")?;
    // "仅能在10.0.0.0/12，172.16.0.0/12，192.168.0.0/16这三个内网网段内" (CreateVpcRequest.CidrBlock).
    // The definition makes it optional and states no default: the emulator takes 172.16.0.0/16.
    let block =
        cidr(&v, "CidrBlock")?.unwrap_or(Cidr { base: u32::from(Ipv4Addr::new(172, 16, 0, 0)), len: 16 });
    let allowed = ["10.0.0.0/12", "172.16.0.0/12", "192.168.0.0/16"];
    if !allowed.iter().filter_map(|a| Cidr::parse(a)).any(|a| a.contains(&block)) {
        return Err(err(
            codes::SUBNET_RANGE,
            format!(
                "CidrBlock `{}` is not inside 10.0.0.0/12, 172.16.0.0/12 or 192.168.0.0/16.",
                block.text()
            ),
        ));
    }
    if state.vpcs.iter().filter(|x| x.region == call.region).count() >= VPC_QUOTA {
        return Err(err(codes::LIMIT_EXCEEDED, format!("The region holds {VPC_QUOTA} VPCs already.")));
    }
    let vpc = Vpc {
        id: call.ctx.new_id("vpc-", 8),
        region: call.region.clone(),
        name: vpc_name,
        cidr: block,
        tags: tags(&v)?,
        created: call.ctx.now(),
    };
    let out = vpc_json(&vpc);
    state.vpcs.push(vpc);
    Ok(json!({ "Vpc": out }))
}

fn vpc_json(x: &Vpc) -> Value {
    json!({
        "VpcId": x.id, "VpcName": x.name, "CidrBlock": x.cidr.text(), "IsDefault": false,
        "EnableMulticast": false, "CreatedTime": cvm_time(x.created), "DnsServerSet": [],
        "DomainName": "", "TagSet": tag_json(&x.tags),
    })
}

pub(crate) fn describe_vpcs(state: &State, call: &Call) -> Result<Value> {
    let v = call.p();
    let window = page(&v)?;
    let (ids, fs) = ids_and_filters(
        &v,
        "VpcIds",
        &["vpc-name", "is-default", "vpc-id", "cidr-block", "tag-key", "tag:"],
    )?;
    let found: Vec<&Vpc> = state
        .vpcs
        .iter()
        .filter(|x| x.region == call.region && (ids.is_empty() || ids.contains(&x.id)))
        .filter(|x| {
            fs.iter().all(|(n, vs)| match n.as_str() {
                "vpc-name" => vs.iter().any(|s| x.name.contains(s.as_str())),
                "is-default" => vs.iter().any(|s| s == "false"),
                "vpc-id" => vs.contains(&x.id),
                "cidr-block" => vs.contains(&x.cidr.text()),
                other => tag_filter(other, vs, &x.tags).unwrap_or(false),
            })
        })
        .collect();
    let (total, shown) = window.apply(found);
    Ok(json!({ "TotalCount": total, "VpcSet": shown.into_iter().map(vpc_json).collect::<Vec<_>>() }))
}

pub(crate) fn delete_vpc(state: &mut State, call: &Call) -> Result<Value> {
    let id = call.p().req_str("VpcId")?;
    let Some(at) = state.vpcs.iter().position(|x| x.region == call.region && x.id == id) else {
        return Err(err(codes::RESOURCE_NOT_FOUND, format!("The VPC `{id}` does not exist.")));
    };
    // The cloud refuses deleting a VPC that still holds subnets (资源被占用).
    if let Some(s) = state.subnets.iter().find(|s| s.vpc_id == id) {
        return Err(err(codes::RESOURCE_IN_USE, format!("The VPC `{id}` still holds subnet `{}`.", s.id)));
    }
    state.vpcs.remove(at);
    Ok(json!({}))
}

// --------------------------------------------------------------------------------------- Subnets

pub(crate) fn create_subnet(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let vpc_id = v.req_str("VpcId")?;
    let subnet_name = name(&v, "SubnetName")?;
    let zone = v.req_str("Zone")?;
    if !call.ctx.offers(PROVIDER).any(|o| o.region == call.region && o.zones.contains(&zone)) {
        return Err(err(
            codes::INVALID_PARAMETER_VALUE,
            format!("The zone `{zone}` is not a zone of `{}`.", call.region),
        ));
    }
    let Some(vpc) = state.vpcs.iter().find(|x| x.region == call.region && x.id == vpc_id) else {
        return Err(err(codes::RESOURCE_NOT_FOUND, format!("The VPC `{vpc_id}` does not exist.")));
    };
    // "子网网段必须在VPC网段内，相同VPC内子网网段不能重叠" (CreateSubnetRequest.CidrBlock). Optional in
    // the definition with no default stated: the emulator refuses a subnet without one.
    let Some(block) = cidr(&v, "CidrBlock")? else {
        return Err(err(codes::MISSING_PARAMETER, "CidrBlock is required for an IPv4 subnet."));
    };
    if !vpc.cidr.contains(&block) {
        return Err(err(
            codes::SUBNET_RANGE,
            format!("CidrBlock `{}` is not inside the VPC's `{}`.", block.text(), vpc.cidr.text()),
        ));
    }
    let mine: Vec<&Subnet> = state.subnets.iter().filter(|s| s.vpc_id == vpc_id).collect();
    if let Some(s) = mine.iter().find(|s| s.cidr.overlaps(&block)) {
        return Err(err(
            codes::SUBNET_CONFLICT,
            format!("CidrBlock `{}` overlaps subnet `{}` ({}).", block.text(), s.id, s.cidr.text()),
        ));
    }
    if mine.len() >= SUBNET_QUOTA {
        return Err(err(codes::LIMIT_EXCEEDED, format!("The VPC holds {SUBNET_QUOTA} subnets already.")));
    }
    let s = Subnet {
        id: call.ctx.new_id("subnet-", 8),
        region: call.region.clone(),
        vpc_id,
        zone,
        name: subnet_name,
        cidr: block,
        tags: tags(&v)?,
        created: call.ctx.now(),
    };
    let out = subnet_json(state, &s);
    state.subnets.push(s);
    Ok(json!({ "Subnet": out }))
}

fn subnet_json(state: &State, s: &Subnet) -> Value {
    let total = s.cidr.size();
    let used = state.instances.iter().filter(|i| i.subnet_id == s.id).count() as u64;
    json!({
        "VpcId": s.vpc_id, "SubnetId": s.id, "SubnetName": s.name, "CidrBlock": s.cidr.text(),
        "IsDefault": false, "EnableBroadcast": false, "Zone": s.zone, "CreatedTime": cvm_time(s.created),
        "TotalIpAddressCount": total, "AvailableIpAddressCount": total.saturating_sub(used + 3),
        "TagSet": tag_json(&s.tags),
    })
}

pub(crate) fn describe_subnets(state: &State, call: &Call) -> Result<Value> {
    let v = call.p();
    let window = page(&v)?;
    let (ids, fs) = ids_and_filters(
        &v,
        "SubnetIds",
        &["subnet-id", "vpc-id", "cidr-block", "is-default", "subnet-name", "zone", "tag-key", "tag:"],
    )?;
    let found: Vec<&Subnet> = state
        .subnets
        .iter()
        .filter(|s| s.region == call.region && (ids.is_empty() || ids.contains(&s.id)))
        .filter(|s| {
            fs.iter().all(|(n, vs)| match n.as_str() {
                "subnet-id" => vs.contains(&s.id),
                "vpc-id" => vs.contains(&s.vpc_id),
                "cidr-block" => vs.contains(&s.cidr.text()),
                "is-default" => vs.iter().any(|x| x == "false"),
                "subnet-name" => vs.contains(&s.name),
                "zone" => vs.contains(&s.zone),
                other => tag_filter(other, vs, &s.tags).unwrap_or(false),
            })
        })
        .collect();
    let (total, shown) = window.apply(found);
    Ok(json!({
        "TotalCount": total,
        "SubnetSet": shown.into_iter().map(|s| subnet_json(state, s)).collect::<Vec<_>>(),
    }))
}

/// Instances that hold a network resource: every one not yet gone (terminating ones still do).
fn live_users<'a>(
    state: &'a State,
    uses: impl Fn(&crate::emulator::state::Instance) -> bool + 'a,
) -> Option<String> {
    state.instances.iter().find(|i| !i.shutdown && uses(i)).map(|i| i.id.clone())
}

pub(crate) fn delete_subnet(state: &mut State, call: &Call) -> Result<Value> {
    let id = call.p().req_str("SubnetId")?;
    let Some(at) = state.subnets.iter().position(|s| s.region == call.region && s.id == id) else {
        return Err(err(codes::RESOURCE_NOT_FOUND, format!("The subnet `{id}` does not exist.")));
    };
    if let Some(i) = live_users(state, |i| i.subnet_id == id) {
        return Err(err(codes::RESOURCE_IN_USE, format!("The subnet `{id}` still holds instance `{i}`.")));
    }
    state.subnets.remove(at);
    Ok(json!({}))
}

// ------------------------------------------------------------------------------- Security groups

pub(crate) fn create_security_group(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let group_name = name(&v, "GroupName")?;
    let description = v.req_str("GroupDescription")?;
    // "项目ID，默认0": the emulated account has only the default project.
    let project = v.opt_i64("ProjectId")?.unwrap_or(0);
    if project != 0 {
        return Err(err(
            codes::INVALID_PROJECT_ID_NOT_FOUND,
            format!("The project `{project}` does not exist."),
        ));
    }
    if state.groups.iter().filter(|g| g.region == call.region).count() >= GROUP_QUOTA {
        return Err(err(
            codes::LIMIT_EXCEEDED,
            format!("The region holds {GROUP_QUOTA} security groups already."),
        ));
    }
    let g = Group {
        id: call.ctx.new_id("sg-", 8),
        region: call.region.clone(),
        name: group_name,
        description,
        tags: tags(&v)?,
        ingress: Vec::new(),
        egress: Vec::new(),
        created: call.ctx.now(),
    };
    let out = group_json(&g);
    state.groups.push(g);
    Ok(json!({ "SecurityGroup": out }))
}

fn group_json(g: &Group) -> Value {
    json!({
        "SecurityGroupId": g.id, "SecurityGroupName": g.name, "SecurityGroupDesc": g.description,
        "ProjectId": "0", "IsDefault": false, "CreatedTime": cvm_time(g.created),
        "UpdateTime": cvm_time(g.created), "TagSet": tag_json(&g.tags),
    })
}

pub(crate) fn describe_security_groups(state: &State, call: &Call) -> Result<Value> {
    let v = call.p();
    let window = page(&v)?;
    let (ids, fs) = ids_and_filters(
        &v,
        "SecurityGroupIds",
        &["security-group-id", "project-id", "security-group-name", "tag-key", "tag:"],
    )?;
    let found: Vec<&Group> = state
        .groups
        .iter()
        .filter(|g| g.region == call.region && (ids.is_empty() || ids.contains(&g.id)))
        .filter(|g| {
            fs.iter().all(|(n, vs)| match n.as_str() {
                "security-group-id" => vs.contains(&g.id),
                "project-id" => vs.iter().any(|p| p == "0"),
                "security-group-name" => vs.contains(&g.name),
                other => tag_filter(other, vs, &g.tags).unwrap_or(false),
            })
        })
        .collect();
    let (total, shown) = window.apply(found);
    Ok(json!({
        "TotalCount": total,
        "SecurityGroupSet": shown.into_iter().map(group_json).collect::<Vec<_>>(),
    }))
}

fn group_at(state: &State, call: &Call, id: &str) -> Result<usize> {
    if !id.starts_with("sg-") {
        return Err(err(
            codes::SECURITY_GROUP_MALFORMED,
            format!("The security group id `{id}` is malformed."),
        ));
    }
    state.groups.iter().position(|g| g.region == call.region && g.id == id).ok_or_else(|| {
        err(codes::SECURITY_GROUP_NOT_FOUND, format!("The security group `{id}` does not exist."))
    })
}

pub(crate) fn delete_security_group(state: &mut State, call: &Call) -> Result<Value> {
    let id = call.p().req_str("SecurityGroupId")?;
    let at = group_at(state, call, &id)?;
    if let Some(i) = live_users(state, |i| i.security_groups.contains(&id)) {
        return Err(err(
            codes::RESOURCE_IN_USE,
            format!("The security group `{id}` is in use by instance `{i}`."),
        ));
    }
    // A group another group's policy refers to is in use too.
    if let Some(g) = state.groups.iter().find(|g| {
        g.id != id
            && g.ingress
                .iter()
                .chain(&g.egress)
                .any(|p| p.get("SecurityGroupId").and_then(Value::as_str) == Some(&id))
    }) {
        return Err(err(
            codes::RESOURCE_IN_USE,
            format!("The security group `{id}` is referred to by `{}`.", g.id),
        ));
    }
    state.groups.remove(at);
    Ok(json!({}))
}

/// One policy, checked: "协议, 取值: TCP,UDP,ICMP,ICMPv6,ALL", "如果Protocol设置为ALL，则Port也需要设置为all",
/// "ACCEPT 或 DROP" (objects.SecurityGroupPolicy), and a source (CidrBlock or SecurityGroupId).
fn policy(state: &State, call: &Call, p: &P) -> Result<Value> {
    let proto = p.opt_str("Protocol")?.unwrap_or_default().to_ascii_uppercase();
    if !["TCP", "UDP", "ICMP", "ICMPV6", "ALL"].contains(&proto.as_str()) {
        return Err(err(
            codes::VALUE_RANGE,
            format!("Protocol `{proto}` is not TCP, UDP, ICMP, ICMPv6 or ALL."),
        ));
    }
    let port = p.opt_str("Port")?.unwrap_or_else(|| "all".into());
    if proto == "ALL" && !port.eq_ignore_ascii_case("all") {
        return Err(err(codes::VALUE_RANGE, "Port must be `all` when Protocol is ALL."));
    }
    if !port.eq_ignore_ascii_case("all") && !port_ok(&port) {
        return Err(err(
            codes::VALUE_RANGE,
            format!("Port `{port}` is not all, a port, a list or a range of 1–65535."),
        ));
    }
    let action = p.opt_str("Action")?.unwrap_or_default();
    if action != "ACCEPT" && action != "DROP" {
        return Err(err(codes::VALUE_RANGE, format!("Action `{action}` is not ACCEPT or DROP.")));
    }
    let cidr_block = p.opt_str("CidrBlock")?;
    let group = p.opt_str("SecurityGroupId")?;
    match (&cidr_block, &group) {
        (Some(c), None) => {
            Cidr::parse(c).ok_or_else(|| {
                err(codes::MALFORMED, format!("CidrBlock `{c}` is not an IPv4 CIDR block."))
            })?;
        }
        (None, Some(g)) => {
            group_at(state, call, g)?;
        }
        _ => {
            return Err(err(
                codes::INVALID_PARAMETER_VALUE,
                "A policy takes exactly one source: CidrBlock or SecurityGroupId.",
            ))
        }
    }
    Ok(json!({
        "Protocol": proto, "Port": port, "Action": action,
        "CidrBlock": cidr_block.unwrap_or_default(), "SecurityGroupId": group.unwrap_or_default(),
        "PolicyDescription": p.opt_str("PolicyDescription")?.unwrap_or_default(),
    }))
}

/// "端口(all, 离散port, range)": `22`, `80,443`, `3000-3010`, each within 1–65535.
fn port_ok(port: &str) -> bool {
    let one = |s: &str| s.trim().parse::<u16>().is_ok_and(|n| n >= 1);
    port.split(',').all(|part| match part.split_once('-') {
        Some((a, b)) => one(a) && one(b) && a.trim().parse::<u16>().ok() <= b.trim().parse::<u16>().ok(),
        None => one(part),
    })
}

fn same_rule(a: &Value, b: &Value) -> bool {
    ["Protocol", "Port", "Action", "CidrBlock", "SecurityGroupId"].iter().all(|k| a.get(k) == b.get(k))
}

pub(crate) fn create_security_group_policies(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let id = v.req_str("SecurityGroupId")?;
    let at = group_at(state, call, &id)?;
    let set = v.child("SecurityGroupPolicySet");
    let mut add: Vec<(bool, Value)> = Vec::new();
    for (ingress, list) in [(true, "Ingress"), (false, "Egress")] {
        for p in set.obj_list(list)? {
            let rule = policy(state, call, &p)?;
            let held = if ingress { &state.groups[at].ingress } else { &state.groups[at].egress };
            if held
                .iter()
                .chain(add.iter().filter(|(i, _)| *i == ingress).map(|(_, r)| r))
                .any(|h| same_rule(h, &rule))
            {
                return Err(err(codes::DUPLICATE, "The security group already holds this policy."));
            }
            add.push((ingress, rule));
        }
    }
    if add.is_empty() {
        return Err(err(
            codes::MISSING_PARAMETER,
            "SecurityGroupPolicySet holds no Ingress or Egress policy.",
        ));
    }
    let g = &mut state.groups[at];
    for (ingress, rule) in add {
        if ingress {
            g.ingress.push(rule)
        } else {
            g.egress.push(rule)
        }
    }
    Ok(json!({}))
}

pub(crate) fn describe_security_group_policies(state: &State, call: &Call) -> Result<Value> {
    let v = call.p();
    let id = v.req_str("SecurityGroupId")?;
    let g = &state.groups[group_at(state, call, &id)?];
    let indexed = |list: &[Value]| -> Vec<Value> {
        list.iter()
            .enumerate()
            .map(|(n, p)| {
                let mut p = p.clone();
                p["PolicyIndex"] = json!(n);
                p
            })
            .collect()
    };
    Ok(json!({
        "SecurityGroupPolicySet": {
            "Version": (g.ingress.len() + g.egress.len()).to_string(),
            "Ingress": indexed(&g.ingress),
            "Egress": indexed(&g.egress),
        }
    }))
}

// --------------------------------------------------------------------- RunInstances' network check

/// RunInstances' `VirtualPrivateCloud` and `SecurityGroupIds` in a zone without the default network
/// (the empty account): the VPC and subnet must exist, match and sit in the launch's zone, and every
/// group must exist (CVM's codes: InvalidParameterValue.VpcIdNotExist 指定的VpcId不存在,
/// .SubnetNotExist, .VpcIdSubnetIdNotMatch, .SubnetIdZoneIdNotMatch). With the default network the
/// emulator keeps accepting any ids, as before.
pub(crate) fn check_launch(state: &State, call: &Call, zone: &str) -> Result<()> {
    let v = call.p();
    let vpc = v.opt_str("VirtualPrivateCloud.VpcId")?;
    let subnet = v.opt_str("VirtualPrivateCloud.SubnetId")?;
    let known_vpc =
        vpc.as_ref().and_then(|id| state.vpcs.iter().find(|x| x.region == call.region && &x.id == id));
    if call.ctx.has_default_network(PROVIDER, zone) && known_vpc.is_none() {
        return Ok(());
    }
    let Some(vpc) = vpc else {
        return Err(err(
            "InvalidParameterValue.VpcIdNotExist",
            format!("The account has no default VPC in `{zone}`: name VirtualPrivateCloud.VpcId."),
        ));
    };
    if known_vpc.is_none() {
        return Err(err("InvalidParameterValue.VpcIdNotExist", format!("The VPC `{vpc}` does not exist.")));
    }
    let subnet = subnet.unwrap_or_default();
    let Some(s) = state.subnets.iter().find(|s| s.region == call.region && s.id == subnet) else {
        return Err(err(
            "InvalidParameterValue.SubnetNotExist",
            format!("The subnet `{subnet}` does not exist."),
        ));
    };
    if s.vpc_id != vpc {
        return Err(err(
            "InvalidParameterValue.VpcIdSubnetIdNotMatch",
            format!("The subnet `{subnet}` is not in VPC `{vpc}`."),
        ));
    }
    if s.zone != zone {
        return Err(err(
            "InvalidParameterValue.SubnetIdZoneIdNotMatch",
            format!("The subnet `{subnet}` is in `{}`, not `{zone}`.", s.zone),
        ));
    }
    for g in v.str_list("SecurityGroupIds")? {
        group_at(state, call, &g)?;
    }
    Ok(())
}
