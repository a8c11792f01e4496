//! JD vpc for `network = "auto"` (issue 13): createVpc / describeVpcs / deleteVpc, createSubnet /
//! describeSubnets / deleteSubnet, createNetworkSecurityGroup / describeNetworkSecurityGroups /
//! describeNetworkSecurityGroup / addNetworkSecurityGroupRules / deleteNetworkSecurityGroup, and
//! createInstances' network check. Parameters follow jdcloud_sdk 1.6.354
//! `jdcloud_sdk/services/vpc/apis/*Request.py`, the listed fields `services/vpc/models/{Vpc,Subnet,
//! NetworkSecurityGroup,SecurityGroupRule,AddSecurityGroupRules}.py`.
//!
//! JD's VPC API takes no clientToken on any create, and a security group carries no tags (neither
//! CreateNetworkSecurityGroupParameters nor NetworkSecurityGroup.py has them): gpuctl finds its
//! group by name inside its own tagged VPC. JD sells no default network (createInstances needs
//! `primaryNetworkInterface.subnetId`), so an account's pre-existing subnets are not modelled: an
//! id the emulator never made is taken as the user's own (as before), except in an empty account
//! (`gpuctl sim --empty-account`), where only what this emulator made exists.
//!
//! JD's error pages name no status word for most refusals below: they use JD's common words
//! (INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION) and say *unverified* where that is a guess.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use gpuctl_simkit::Cidr;
use jiff::Timestamp;
use serde_json::{json, Value};

use super::{filter, get, int, invalid, list, not_found, page, required, text, Answer, Call};
use crate::api::{format_time, status};
use crate::emulator::error::JdError;
use crate::emulator::state::JdState;
use crate::emulator::PROVIDER;

#[derive(Clone, Debug)]
pub struct Vpc {
    pub id: String,
    pub region: String,
    pub name: String,
    /// Optional on JD: "如果为空，则不限制网段" (CreateVpcParameters.addressPrefix).
    pub cidr: Option<Cidr>,
    pub description: String,
    pub tags: Vec<(String, String)>,
    pub created: Timestamp,
}

#[derive(Clone, Debug)]
pub struct Subnet {
    pub id: String,
    pub region: String,
    pub vpc_id: String,
    pub name: String,
    pub cidr: Cidr,
    pub description: String,
    pub tags: Vec<(String, String)>,
    pub created: Timestamp,
}

#[derive(Clone, Debug)]
pub struct Rule {
    pub id: String,
    /// 0 inbound, 1 outbound.
    pub direction: i64,
    /// 300 all, 6 TCP, 17 UDP, 1 ICMP.
    pub protocol: i64,
    pub address_prefix: String,
    pub from_port: i64,
    pub to_port: i64,
    pub action: String,
    pub priority: i64,
    pub description: String,
    pub created: Timestamp,
}

#[derive(Clone, Debug)]
pub struct Group {
    pub id: String,
    pub region: String,
    pub vpc_id: String,
    pub name: String,
    pub description: String,
    pub rules: Vec<Rule>,
    pub created: Timestamp,
}

/// "只允许输入中文、数字、大小写字母、英文下划线“_”及中划线“-”，不允许为空且不超过32字符"
/// (CreateVpcParameters.vpcName, CreateSubnetParameters.subnetName,
/// CreateNetworkSecurityGroupParameters.networkSecurityGroupName).
pub(super) fn name(p: &Value, field: &str) -> Result<String, JdError> {
    let n = required(p, field)?;
    let ok = !n.is_empty()
        && n.chars().count() <= 32
        && n.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if !ok {
        return Err(invalid(format!(
            "{field} {n:?} must be 1-32 Chinese characters, letters, digits, `_` or `-`"
        )));
    }
    Ok(n)
}

/// "允许输入UTF-8编码下的全部字符，不超过256字符" (the creates' `description`).
pub(super) fn description(p: &Value) -> Result<String, JdError> {
    let d = text(p, "description").unwrap_or_default();
    if d.chars().count() > 256 {
        return Err(invalid("description must be at most 256 characters"));
    }
    Ok(d)
}

/// A VPC's or subnet's block: "10.0.0.0/8、172.16.0.0/12和192.168.0.0/16及它们包含的子网，且子网掩码长度为16-28之间"
/// (CreateVpcParameters.addressPrefix, CreateSubnetParameters.addressPrefix).
fn private_block(field: &str, s: &str) -> Result<Cidr, JdError> {
    let c = Cidr::parse(s).ok_or_else(|| invalid(format!("{field} {s:?} is not an IPv4 CIDR block")))?;
    let private = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"];
    if !(16..=28).contains(&c.len) || !private.iter().filter_map(|p| Cidr::parse(p)).any(|p| p.contains(&c)) {
        return Err(invalid(format!(
            "{field} {s} must be inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 with a mask of 16-28"
        )));
    }
    Ok(c)
}

/// `userTags: [{key, value}]` (vpc.Tag).
fn user_tags(p: &Value) -> Vec<(String, String)> {
    match get(p, "userTags") {
        Some(Value::Array(a)) => {
            a.iter().filter_map(|t| Some((text(t, "key")?, text(t, "value").unwrap_or_default()))).collect()
        }
        _ => Vec::new(),
    }
}

/// Whether `tags` pass `tags: [{key, values}]` (vpc.TagFilter): every filter's key present with one
/// of its values (any value when none are given).
pub(super) fn tags_pass(p: &Value, tags: &[(String, String)]) -> bool {
    let Some(Value::Array(filters)) = get(p, "tags") else { return true };
    filters.iter().all(|f| {
        let key = text(f, "key").unwrap_or_default();
        let values = list(f, "values");
        tags.iter().any(|(k, v)| *k == key && (values.is_empty() || values.contains(v)))
    })
}

pub(super) fn tag_json(tags: &[(String, String)]) -> Vec<Value> {
    tags.iter().map(|(k, v)| json!({ "key": k, "value": v })).collect()
}

pub(super) fn within(f: &Option<Vec<String>>, v: &str) -> bool {
    f.as_ref().is_none_or(|f| f.iter().any(|x| x == v))
}

/// `dryRun` (CreateSubnetParameters): "true：不会创建子网，只会对参数进行校验".
fn dry_run(p: &Value) -> bool {
    matches!(get(p, "dryRun"), Some(Value::Bool(true)))
}

pub(super) fn id_of(c: &Call) -> String {
    c.id.clone().unwrap_or_default()
}

// ------------------------------------------------------------------------------------------ VPCs

pub fn create_vpc(c: &Call, st: &mut JdState) -> Answer {
    let vpc_name = name(c.p, "vpcName")?;
    let cidr = text(c.p, "addressPrefix").map(|s| private_block("addressPrefix", &s)).transpose()?;
    let vpc = Vpc {
        id: c.ctx.new_id("vpc-", 10),
        region: c.region.clone(),
        name: vpc_name,
        cidr,
        description: description(c.p)?,
        tags: user_tags(c.p),
        created: c.now,
    };
    let id = vpc.id.clone();
    st.vpcs.insert(id.clone(), vpc);
    Ok(json!({ "vpcId": id }))
}

fn vpc_json(v: &Vpc, st: &JdState) -> Value {
    json!({
        "vpcId": v.id,
        "vpcName": v.name,
        "addressPrefix": v.cidr.map(|c| c.text()),
        "description": v.description,
        "aclIds": [],
        "routeTableIds": [],
        "subnets": st.subnets.values().filter(|s| s.vpc_id == v.id).map(|s| subnet_json(s, st)).collect::<Vec<_>>(),
        "createdTime": format_time(v.created),
        "tags": tag_json(&v.tags),
    })
}

pub fn describe_vpcs(c: &Call, st: &JdState) -> Answer {
    let ids = filter(c.p, "vpcIds");
    let names = filter(c.p, "vpcNames");
    let pg = page(c.p)?;
    let found: Vec<&Vpc> = st
        .vpcs
        .values()
        .filter(|v| v.region == c.region && within(&ids, &v.id) && within(&names, &v.name))
        .filter(|v| tags_pass(c.p, &v.tags))
        .collect();
    let (total, items) = pg.apply(found);
    Ok(json!({ "vpcs": items.iter().map(|v| vpc_json(v, st)).collect::<Vec<_>>(), "totalCount": total }))
}

fn vpc_at<'s>(st: &'s JdState, c: &Call, id: &str) -> Result<&'s Vpc, JdError> {
    st.vpcs.get(id).filter(|v| v.region == c.region).ok_or_else(|| not_found("vpc", id))
}

pub fn delete_vpc(c: &Call, st: &mut JdState) -> Answer {
    let id = id_of(c);
    vpc_at(st, c, &id)?;
    // *unverified* word: a VPC with subnets or security groups left cannot be deleted.
    let subnets = st.subnets.values().filter(|s| s.vpc_id == id).count();
    let groups = st.security_groups.values().filter(|g| g.vpc_id == id).count();
    if subnets + groups > 0 {
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!("vpc {id} still holds {subnets} subnet(s) and {groups} security group(s)"),
        ));
    }
    st.vpcs.remove(&id);
    Ok(json!({}))
}

// --------------------------------------------------------------------------------------- subnets

pub fn create_subnet(c: &Call, st: &mut JdState) -> Answer {
    let vpc_id = required(c.p, "vpcId")?;
    let subnet_name = name(c.p, "subnetName")?;
    let block = private_block("addressPrefix", &required(c.p, "addressPrefix")?)?;
    let vpc = vpc_at(st, c, &vpc_id)?;
    // "如果vpc含有cidr，则必须为vpc所在cidr的子网"; "vpc内子网网段不能重叠".
    if let Some(v) = vpc.cidr.filter(|v| !v.contains(&block)) {
        return Err(invalid(format!(
            "addressPrefix {} is not inside vpc {vpc_id}'s {}",
            block.text(),
            v.text()
        )));
    }
    if let Some(s) = st.subnets.values().find(|s| s.vpc_id == vpc_id && s.cidr.overlaps(&block)) {
        return Err(invalid(format!(
            "addressPrefix {} overlaps subnet {} ({}) of vpc {vpc_id}",
            block.text(),
            s.id,
            s.cidr.text()
        )));
    }
    let description = description(c.p)?;
    if dry_run(c.p) {
        return Ok(json!({ "subnetId": null }));
    }
    let subnet = Subnet {
        id: c.ctx.new_id("subnet-", 10),
        region: c.region.clone(),
        vpc_id,
        name: subnet_name,
        cidr: block,
        description,
        tags: user_tags(c.p),
        created: c.now,
    };
    let id = subnet.id.clone();
    st.subnets.insert(id.clone(), subnet);
    Ok(json!({ "subnetId": id }))
}

/// The subnet's usable range: "子网第1个地位为路由器网关保留，第2个地址为dhcp服务保留" (Subnet.py startIp).
fn usable(s: &Subnet) -> (u32, u32) {
    let last = s.cidr.base + (s.cidr.size() as u32).saturating_sub(1);
    (s.cidr.base + 3, last.saturating_sub(1))
}

fn subnet_json(s: &Subnet, st: &JdState) -> Value {
    let (start, end) = usable(s);
    let used = (st.instances.values().filter(|i| i.subnet_id == s.id).count()
        + st.mount_targets.values().filter(|m| m.subnet_id == s.id).count()) as u64;
    json!({
        "subnetId": s.id,
        "subnetName": s.name,
        "vpcId": s.vpc_id,
        "addressPrefix": s.cidr.text(),
        "availableIpCount": u64::from(end - start + 1).saturating_sub(used),
        "description": s.description,
        "startIp": Ipv4Addr::from(start).to_string(),
        "endIp": Ipv4Addr::from(end).to_string(),
        "createdTime": format_time(s.created),
        "subnetType": "standard",
        "az": null,
        "publicSubnet": false,
        "tags": tag_json(&s.tags),
        "type": "normal",
    })
}

pub fn describe_subnets(c: &Call, st: &JdState) -> Answer {
    let ids = filter(c.p, "subnetIds");
    let names = filter(c.p, "subnetNames");
    let vpcs = filter(c.p, "vpcId");
    let pg = page(c.p)?;
    let found: Vec<&Subnet> = st
        .subnets
        .values()
        .filter(|s| s.region == c.region && within(&ids, &s.id) && within(&names, &s.name))
        .filter(|s| within(&vpcs, &s.vpc_id) && tags_pass(c.p, &s.tags))
        .collect();
    let (total, items) = pg.apply(found);
    Ok(
        json!({ "subnets": items.iter().map(|s| subnet_json(s, st)).collect::<Vec<_>>(), "totalCount": total }),
    )
}

pub fn delete_subnet(c: &Call, st: &mut JdState) -> Answer {
    let id = id_of(c);
    st.subnets.get(&id).filter(|s| s.region == c.region).ok_or_else(|| not_found("subnet", &id))?;
    // A zfs mount target holds a network interface in its subnet (jdcloud_sdk 1.6.354
    // services/zfs/apis/DeleteMountTargetRequest.py: "删除挂载目标的同时会删除相关的网络接口").
    let users: Vec<&str> = st
        .instances
        .values()
        .filter(|i| i.subnet_id == id)
        .map(|i| i.id.as_str())
        .chain(st.mount_targets.values().filter(|m| m.subnet_id == id).map(|m| m.id.as_str()))
        .collect();
    if !users.is_empty() {
        // *unverified* word.
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!("subnet {id} is used by {}", users.join(", ")),
        ));
    }
    st.subnets.remove(&id);
    Ok(json!({}))
}

// ------------------------------------------------------------------------------- security groups

pub fn create_network_security_group(c: &Call, st: &mut JdState) -> Answer {
    let vpc_id = required(c.p, "vpcId")?;
    let group_name = name(c.p, "networkSecurityGroupName")?;
    vpc_at(st, c, &vpc_id)?;
    let group = Group {
        id: c.ctx.new_id("sg-", 10),
        region: c.region.clone(),
        vpc_id,
        name: group_name,
        description: description(c.p)?,
        rules: Vec::new(),
        created: c.now,
    };
    let id = group.id.clone();
    st.security_groups.insert(id.clone(), group);
    Ok(json!({ "networkSecurityGroupId": id }))
}

fn rule_json(r: &Rule) -> Value {
    json!({
        "ruleId": r.id,
        "direction": r.direction,
        "ruleAction": r.action,
        "priority": r.priority,
        "protocol": r.protocol,
        "addressPrefixType": "CIDR",
        "addressPrefix": r.address_prefix,
        "ipVersion": 4,
        "fromPort": r.from_port,
        "toPort": r.to_port,
        "createdTime": format_time(r.created),
        "description": r.description,
        "ruleType": "custom",
    })
}

fn group_json(g: &Group, st: &JdState) -> Value {
    json!({
        "networkSecurityGroupId": g.id,
        "networkSecurityGroupName": g.name,
        "description": g.description,
        "vpcId": g.vpc_id,
        "securityGroupRules": g.rules.iter().map(rule_json).collect::<Vec<_>>(),
        "createdTime": format_time(g.created),
        "networkSecurityGroupType": "custom",
        // The instances' primary interfaces stand for their network interfaces.
        "networkInterfaceIds": st.instances.values().filter(|i| i.security_groups.contains(&g.id)).map(|i| format!("port-{}", i.id.trim_start_matches("i-"))).collect::<Vec<_>>(),
    })
}

pub fn describe_network_security_groups(c: &Call, st: &JdState) -> Answer {
    let ids = filter(c.p, "networkSecurityGroupIds");
    let names = filter(c.p, "networkSecurityGroupNames");
    let vpcs = filter(c.p, "vpcId");
    let pg = page(c.p)?;
    let found: Vec<&Group> = st
        .security_groups
        .values()
        .filter(|g| g.region == c.region && within(&ids, &g.id) && within(&names, &g.name))
        .filter(|g| within(&vpcs, &g.vpc_id))
        .collect();
    let (total, items) = pg.apply(found);
    Ok(json!({
        "networkSecurityGroups": items.iter().map(|g| group_json(g, st)).collect::<Vec<_>>(),
        "totalCount": total,
    }))
}

pub(super) fn group_at<'s>(st: &'s JdState, c: &Call, id: &str) -> Result<&'s Group, JdError> {
    st.security_groups
        .get(id)
        .filter(|g| g.region == c.region)
        .ok_or_else(|| not_found("networkSecurityGroup", id))
}

pub fn describe_network_security_group(c: &Call, st: &JdState) -> Answer {
    let g = group_at(st, c, &id_of(c))?;
    Ok(json!({ "networkSecurityGroup": group_json(g, st) }))
}

/// One `networkSecurityGroupRuleSpecs` item (vpc.AddSecurityGroupRules), checked.
fn rule_of(c: &Call, spec: &Value) -> Result<Rule, JdError> {
    let protocol = int(spec, "protocol")?
        .ok_or_else(|| invalid("networkSecurityGroupRuleSpecs.protocol is required"))?;
    // "规则限定协议。300:All; 6:TCP; 17:UDP; 1:ICMP"; "安全组规则方向。0：入规则; 1：出规则".
    if ![300, 6, 17, 1].contains(&protocol) {
        return Err(invalid(format!(
            "protocol {protocol} is not one of 300 (all), 6 (TCP), 17 (UDP), 1 (ICMP)"
        )));
    }
    let direction = int(spec, "direction")?
        .ok_or_else(|| invalid("networkSecurityGroupRuleSpecs.direction is required"))?;
    if ![0, 1].contains(&direction) {
        return Err(invalid(format!("direction {direction} is not 0 (inbound) or 1 (outbound)")));
    }
    // "取值范围为CIDR、PREFIXLIST, 默认CIDR": the emulator holds no prefix lists.
    let kind = text(spec, "addressPrefixType").unwrap_or_else(|| "CIDR".into());
    if kind != "CIDR" {
        return Err(invalid(format!(
            "addressPrefixType {kind}: the local cloud has no prefix lists; use CIDR"
        )));
    }
    let prefix = required(spec, "addressPrefix")?;
    Cidr::parse(&prefix)
        .ok_or_else(|| invalid(format!("addressPrefix {prefix:?} is not an IPv4 CIDR block")))?;
    // "取值范围:1-65535, 若protocol为传输层协议，默认值为1 [fromPort] / 65535 [toPort]，若protocol不是传输层协议，恒为0".
    let transport = matches!(protocol, 6 | 17);
    let (from, to) = if transport {
        let from = int(spec, "fromPort")?.unwrap_or(1);
        let to = int(spec, "toPort")?.unwrap_or(65535);
        if !(1..=65535).contains(&from) || !(1..=65535).contains(&to) || from > to {
            return Err(invalid(format!(
                "fromPort {from} / toPort {to} must be 1-65535 with fromPort <= toPort"
            )));
        }
        (from, to)
    } else {
        (0, 0)
    };
    // "访问控制策略：ALLOW:允许，DENY：拒绝"; "取值范围为[1,100]". Neither states a default: ALLOW and
    // 100 (the lowest priority) *unverified*.
    let action = text(spec, "ruleAction").unwrap_or_else(|| "ALLOW".into());
    if action != "ALLOW" && action != "DENY" {
        return Err(invalid(format!("ruleAction {action} is not ALLOW or DENY")));
    }
    let priority = int(spec, "priority")?.unwrap_or(100);
    if !(1..=100).contains(&priority) {
        return Err(invalid(format!("priority {priority} is not in [1,100]")));
    }
    let description = description(spec)?;
    Ok(Rule {
        id: c.ctx.new_id("sgr-", 10),
        direction,
        protocol,
        address_prefix: prefix,
        from_port: from,
        to_port: to,
        action,
        priority,
        description,
        created: c.now,
    })
}

pub fn add_network_security_group_rules(c: &Call, st: &mut JdState) -> Answer {
    let id = id_of(c);
    group_at(st, c, &id)?;
    let specs = match get(c.p, "networkSecurityGroupRuleSpecs") {
        Some(Value::Array(a)) if !a.is_empty() => a.clone(),
        _ => return Err(invalid("networkSecurityGroupRuleSpecs is required")),
    };
    let rules = specs.iter().map(|s| rule_of(c, s)).collect::<Result<Vec<_>, _>>()?;
    // JD documents no refusal of a rule the group holds already: it is added again.
    if let Some(g) = st.security_groups.get_mut(&id) {
        g.rules.extend(rules);
    }
    Ok(json!({}))
}

pub fn delete_network_security_group(c: &Call, st: &mut JdState) -> Answer {
    let id = id_of(c);
    group_at(st, c, &id)?;
    let users: Vec<&str> =
        st.instances.values().filter(|i| i.security_groups.contains(&id)).map(|i| i.id.as_str()).collect();
    if !users.is_empty() {
        // *unverified* word.
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!("networkSecurityGroup {id} is bound to {}", users.join(", ")),
        ));
    }
    st.security_groups.remove(&id);
    Ok(json!({}))
}

// ------------------------------------------------------------------ createInstances' network check

/// What an instance's primary interface goes into: its VPC, and whether the subnet is one this
/// emulator made (its instances get addresses from its block).
pub struct Placement {
    pub vpc_id: String,
    pub made: bool,
}

/// "要绑定的安全组ID列表，最多指定5个安全组" (vm NetworkInterfaceSpec.py securityGroups).
const GROUPS_MAX: usize = 5;

/// createInstances' `primaryNetworkInterface.networkInterface`: a subnet this emulator made must hold
/// the groups (each in its VPC) and an address for each instance; in an empty account, only such
/// subnets exist. Any other subnet id is taken as the user's own (the VPC id is derived from it).
pub fn check_launch(
    c: &Call,
    st: &JdState,
    az: &str,
    subnet: &str,
    groups: &[String],
    count: usize,
) -> Result<Placement, JdError> {
    if groups.len() > GROUPS_MAX {
        return Err(invalid(format!(
            "primaryNetworkInterface.networkInterface.securityGroups names {} groups; at most {GROUPS_MAX} are allowed",
            groups.len()
        )));
    }
    let known = st.subnets.get(subnet).filter(|s| s.region == c.region);
    let Some(s) = known else {
        if !c.ctx.has_default_network(PROVIDER, az) {
            // *unverified* word for an unknown subnet.
            return Err(if subnet.is_empty() {
                invalid("primaryNetworkInterface.networkInterface.subnetId is required")
            } else {
                not_found("subnet", subnet)
            });
        }
        let vpc_id = if subnet.is_empty() {
            String::new()
        } else {
            format!("vpc-{}", subnet.trim_start_matches("subnet-"))
        };
        return Ok(Placement { vpc_id, made: false });
    };
    for g in groups {
        let group = group_at(st, c, g)?;
        if group.vpc_id != s.vpc_id {
            return Err(invalid(format!(
                "networkSecurityGroup {g} is in {}, not in subnet {subnet}'s vpc {}",
                group.vpc_id, s.vpc_id
            )));
        }
    }
    let (start, end) = usable(s);
    let taken = st.instances.values().filter(|i| i.subnet_id == s.id).count()
        + st.mount_targets.values().filter(|m| m.subnet_id == s.id).count();
    if u64::from(end - start + 1) < (taken + count) as u64 {
        // *unverified* word.
        return Err(JdError::new(
            status::QUOTA_EXCEEDED,
            format!("subnet {subnet} has no private address left for {count} instance(s)"),
        ));
    }
    Ok(Placement { vpc_id: s.vpc_id.clone(), made: true })
}

/// The next free address of a made subnet after the ones in `taken` (a create of several instances).
pub fn next_address(st: &JdState, subnet: &str, taken: &[String]) -> Option<String> {
    let s = st.subnets.get(subnet)?;
    let (start, end) = usable(s);
    let used: Vec<&str> = st
        .instances
        .values()
        .filter(|i| i.subnet_id == s.id)
        .map(|i| i.private_ip.as_str())
        .chain(st.mount_targets.values().filter(|m| m.subnet_id == s.id).map(|m| m.ip.as_str()))
        .collect();
    (start..=end)
        .map(|a| Ipv4Addr::from(a).to_string())
        .find(|a| !used.contains(&a.as_str()) && !taken.contains(a))
}

/// The network as `/_sim/state` shows it, in the shape every emulator's state uses (`id`, `tags` as a
/// map, `default` false: JD has no default network).
pub fn network_json(st: &JdState) -> (Value, Value, Value) {
    let map = |tags: &[(String, String)]| tags.iter().cloned().collect::<BTreeMap<_, _>>();
    let vpcs = st.vpcs.values().map(|v| json!({
        "id": v.id, "region": v.region, "name": v.name, "cidr": v.cidr.map(|c| c.text()), "default": false,
        "tags": map(&v.tags),
    })).collect::<Vec<_>>();
    let subnets = st.subnets.values().map(|s| json!({
        "id": s.id, "region": s.region, "vpc_id": s.vpc_id, "zone": null, "name": s.name, "cidr": s.cidr.text(), "default": false,
        "tags": map(&s.tags),
    })).collect::<Vec<_>>();
    let groups = st.security_groups.values().map(|g| json!({
        "id": g.id, "region": g.region, "vpc_id": g.vpc_id, "name": g.name, "default": false, "tags": {},
        "ingress": g.rules.iter().filter(|r| r.direction == 0).map(rule_json).collect::<Vec<_>>(),
        "egress": g.rules.iter().filter(|r| r.direction == 1).map(rule_json).collect::<Vec<_>>(),
    })).collect::<Vec<_>>();
    (json!(vpcs), json!(subnets), json!(groups))
}
