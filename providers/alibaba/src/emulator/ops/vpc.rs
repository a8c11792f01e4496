//! The account's network: VPC CreateVpc / DescribeVpcs / DeleteVpc, CreateVSwitch /
//! DescribeVSwitches / DeleteVSwitch (API 2016-04-28), and ECS CreateSecurityGroup /
//! DescribeSecurityGroups / AuthorizeSecurityGroup / DescribeSecurityGroupAttribute /
//! DeleteSecurityGroup, plus RunInstances' network check.
//!
//! A real account gets a default VPC per region, a default vSwitch in each zone it first buys in and a
//! default security group in that VPC (Alibaba Cloud's "Default VPCs and default vSwitches" page: the
//! first instance in a region without a VPC creates them). The local cloud's account holds that from
//! the start, for every zone where the catalog sells in the region, except the zones a
//! `no_default_network` knob names (`gpuctl sim --empty-account` names them all): there only what the
//! caller made exists, and RunInstances must name it. The default pieces' ids are a fixed function of
//! region and zone, so every call (and every sim run) answers the same ones; what a caller makes is
//! kept in [`Network`].
//!
//! Parameters: alibabacloud_vpc20160428 7.2.2 `models/_create_vpc_request.py`,
//! `_create_vswitch_request.py`, `_describe_vpcs_request.py`, `_describe_vswitches_request.py`,
//! `_delete_vpc_request.py`, `_delete_vswitch_request.py`; alibabacloud_ecs20140526 7.11.8
//! `models/_create_security_group_request.py`, `_authorize_security_group_request.py`,
//! `_describe_security_group_attribute_request.py`, `_describe_security_groups_request.py`,
//! `_delete_security_group_request.py`, and the matching `_response_body.py` models for the answers.
//! Error codes: ECS's and VPC's API error-code tables as published (help.aliyun.com); those the
//! emulator could not confirm there are marked *unverified* where they are raised.

use std::collections::{BTreeMap, BTreeSet};

use gpuctl_simkit::{Cidr, ParamErrors as _, SimCtx};
use jiff::Timestamp;
use serde_json::{json, Value};

use super::{dry_run, region, tags_json, tags_match, token_check, token_remember, Answer, Call};
use crate::api::vpc::{VSWITCH_AVAILABLE, VSWITCH_PAGE_MAX};
use crate::api::{codes, format_time};
use crate::emulator::error::EcsError;
use crate::emulator::params::{EcsParams, Params};
use crate::emulator::state::{EcsState, Timings};
use crate::emulator::PROVIDER;

/// The emulated account's quotas: VPCs per region (the console's default of 10), vSwitches per VPC
/// (150) and security groups per region *(unverified figures: the API definitions name no number)*.
const VPC_QUOTA: usize = 10;
const VSWITCH_QUOTA: usize = 150;
const GROUP_QUOTA: usize = 100;
/// "出方向和入方向安全组规则总和不能超过200条" (AuthorizeSecurityGroup's usage notes).
const RULE_QUOTA: usize = 200;

/// When the default pieces were "made": before any sim run.
const DEFAULT_CREATED: &str = "2026-01-01T00:00:00Z";

#[derive(Clone, Debug)]
pub struct Vpc {
    pub id: String,
    pub region: String,
    pub name: String,
    pub description: String,
    pub cidr: Cidr,
    pub tags: Vec<(String, String)>,
    pub created: Option<Timestamp>,
    pub default: bool,
}

impl Vpc {
    /// `Pending` for `t.vpc` after CreateVpc, then `Available` (DescribeVpcs' `Status`).
    fn available(&self, now: Timestamp, t: &Timings) -> bool {
        self.created.is_none_or(|c| now.duration_since(c) >= t.vpc)
    }
}

#[derive(Clone, Debug)]
pub struct VSwitch {
    pub id: String,
    pub region: String,
    pub vpc_id: String,
    pub zone: String,
    pub name: String,
    pub cidr: Cidr,
    pub tags: Vec<(String, String)>,
    pub created: Option<Timestamp>,
    pub default: bool,
}

/// One ingress rule as AuthorizeSecurityGroup keeps it (its `Permissions.N` fields).
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// Upper case: TCP, UDP, ICMP, ICMPV6, GRE, ALL.
    pub protocol: String,
    /// `start/end`; `-1/-1` for protocols without ports.
    pub port_range: String,
    pub source_cidr: String,
    pub source_group: String,
    /// `Accept` or `Drop`, as DescribeSecurityGroupAttribute spells them.
    pub policy: String,
    pub priority: i64,
    pub description: String,
    pub id: String,
    pub created: Timestamp,
}

impl Rule {
    /// The fields that make two rules the same rule ("以下任意一组参数可以确定一条安全组规则").
    fn same(&self, o: &Rule) -> bool {
        self.protocol == o.protocol
            && self.port_range == o.port_range
            && self.source_cidr == o.source_cidr
            && self.source_group == o.source_group
            && self.policy == o.policy
            && self.priority == o.priority
    }
}

#[derive(Clone, Debug)]
pub struct Group {
    pub id: String,
    pub region: String,
    pub vpc_id: String,
    pub name: String,
    pub description: String,
    pub group_type: String,
    pub tags: Vec<(String, String)>,
    pub rules: Vec<Rule>,
    pub created: Option<Timestamp>,
    pub default: bool,
}

/// What callers made, and the rules they added to the default groups.
#[derive(Debug, Default)]
pub struct Network {
    pub vpcs: BTreeMap<String, Vpc>,
    pub vswitches: BTreeMap<String, VSwitch>,
    pub groups: BTreeMap<String, Group>,
    pub default_group_rules: BTreeMap<String, Vec<Rule>>,
}

// ---------------------------------------------------------------------------- the default network

/// A fixed, id-shaped name for `what` (FNV-1a of it, 16 hex digits): the same on every call and run.
fn fixed_id(prefix: &str, what: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in what.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{prefix}sim{h:016x}")
}

/// The default VPC of `region`.
pub fn default_vpc(region: &str) -> String {
    fixed_id("vpc-", region)
}

/// The default security group in `region`'s default VPC.
pub fn default_security_group(region: &str) -> String {
    fixed_id("sg-", region)
}

/// The zones of `region` the catalog sells in, in order.
fn zones(ctx: &SimCtx, region: &str) -> Vec<String> {
    let set: BTreeSet<&String> =
        ctx.offers(PROVIDER).filter(|o| o.region == region).flat_map(|o| o.zones.iter()).collect();
    set.into_iter().cloned().collect()
}

/// The account's default vSwitches in `region`: one per zone it sells in, but a knob's gaps, each a
/// /20 of the default VPC's 172.16.0.0/12 (as the console makes them).
pub fn default_vswitches(ctx: &SimCtx, region: &str) -> Vec<VSwitch> {
    zones(ctx, region)
        .into_iter()
        .enumerate()
        .filter(|(_, z)| ctx.has_default_network(PROVIDER, z))
        .map(|(i, zone)| VSwitch {
            id: fixed_id("vsw-", &zone),
            region: region.to_owned(),
            vpc_id: default_vpc(region),
            cidr: Cidr {
                base: (172 << 24) | ((16 + i as u32 / 16) << 16) | (((i as u32 % 16) * 16) << 8),
                len: 20,
            },
            name: String::new(),
            tags: Vec::new(),
            created: None,
            default: true,
            zone,
        })
        .collect()
}

/// The default VPC and group exist where at least one zone of the region has its default vSwitch.
fn has_defaults(ctx: &SimCtx, region: &str) -> bool {
    !default_vswitches(ctx, region).is_empty()
}

fn default_vpc_of(region: &str) -> Vpc {
    Vpc {
        id: default_vpc(region),
        region: region.to_owned(),
        name: String::new(),
        description: String::new(),
        cidr: Cidr { base: 172 << 24 | 16 << 16, len: 12 },
        tags: Vec::new(),
        created: None,
        default: true,
    }
}

fn default_group_of(st: &EcsState, region: &str) -> Group {
    let id = default_security_group(region);
    Group {
        rules: st.net.default_group_rules.get(&id).cloned().unwrap_or_default(),
        id,
        region: region.to_owned(),
        vpc_id: default_vpc(region),
        name: "default".into(),
        description: "System created security group.".into(),
        group_type: "normal".into(),
        tags: Vec::new(),
        created: None,
        default: true,
    }
}

/// Every VPC of `region`: the default one (where it exists), then the made ones.
pub fn vpcs(ctx: &SimCtx, st: &EcsState, region: &str) -> Vec<Vpc> {
    let default = has_defaults(ctx, region).then(|| default_vpc_of(region));
    default.into_iter().chain(st.net.vpcs.values().filter(|v| v.region == region).cloned()).collect()
}

/// Every vSwitch of `region`: the defaults, then the made ones.
pub fn vswitches(ctx: &SimCtx, st: &EcsState, region: &str) -> Vec<VSwitch> {
    default_vswitches(ctx, region)
        .into_iter()
        .chain(st.net.vswitches.values().filter(|v| v.region == region).cloned())
        .collect()
}

/// Every security group of `region`: the default one (where it exists), then the made ones.
pub fn groups(ctx: &SimCtx, st: &EcsState, region: &str) -> Vec<Group> {
    let default = has_defaults(ctx, region).then(|| default_group_of(st, region));
    default.into_iter().chain(st.net.groups.values().filter(|g| g.region == region).cloned()).collect()
}

// ------------------------------------------------------------------------------------------ checks

fn time(t: Option<Timestamp>) -> String {
    t.map(format_time).unwrap_or_else(|| DEFAULT_CREATED.into())
}

fn vpc_tags_json(tags: &[(String, String)]) -> Value {
    json!({ "Tag": tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect::<Vec<_>>() })
}

/// "The name must be 1 to 128 characters in length and cannot start with `http://` or `https://`"
/// (VpcName, VSwitchName); the descriptions are 1 to 256 with the same rule.
fn check_text(field: &str, code: &str, v: &Option<String>, max: usize) -> Result<(), EcsError> {
    let Some(v) = v else { return Ok(()) };
    let n = v.chars().count();
    if n == 0 || n > max || v.starts_with("http://") || v.starts_with("https://") {
        return Err(EcsError::new(
            400,
            code,
            format!("The specified {field} is not valid: 1 to {max} characters, not starting with http:// or https://."),
        ));
    }
    Ok(())
}

fn cidr_param(c: &Call, field: &str) -> Result<Option<Cidr>, EcsError> {
    match c.p.text(field) {
        None => Ok(None),
        Some(s) => Cidr::parse(&s).map(Some).ok_or_else(|| {
            EcsError::new(
                400,
                "InvalidCidrBlock.Malformed",
                format!("The specified {field} \"{s}\" is not a CIDR block."),
            )
        }),
    }
}

/// "100.64.0.0/10, 224.0.0.0/4, 127.0.0.0/8, or 169.254.0.0/16" are never a VPC's or vSwitch's.
fn reserved(b: &Cidr) -> bool {
    ["100.64.0.0/10", "224.0.0.0/4", "127.0.0.0/8", "169.254.0.0/16"]
        .iter()
        .filter_map(|r| Cidr::parse(r))
        .any(|r| r.overlaps(b))
}

fn vpc_not_found(id: &str) -> EcsError {
    EcsError::new(404, "InvalidVpcId.NotFound", format!("The specified VpcId \"{id}\" does not exist."))
}

fn vswitch_not_found(id: &str) -> EcsError {
    EcsError::new(
        404,
        "InvalidVSwitchId.NotFound",
        format!("The specified VSwitchId \"{id}\" does not exist."),
    )
}

fn group_not_found(id: &str) -> EcsError {
    EcsError::new(
        404,
        "InvalidSecurityGroupId.NotFound",
        format!("The specified SecurityGroupId \"{id}\" does not exist."),
    )
}

/// The local cloud computes its default network from the catalog, so it cannot delete a piece of it.
fn default_kept(id: &str) -> EcsError {
    EcsError::new(
        403,
        "Forbidden.DefaultNetwork",
        format!(
            "The local cloud keeps its default network ({id}); start it with --empty-account for an account without one."
        ),
    )
}

// ------------------------------------------------------------------------------------------ VPCs

pub fn create_vpc(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    if let Some(replay) = token_check(st, "CreateVpc", c)? {
        return Ok(replay);
    }
    // "The subnet mask must be 16 to 28 bits in length" for the recommended RFC 1918 blocks; any
    // other block but the reserved ones may be used. Without one the console's 172.16.0.0/12.
    let block = cidr_param(c, "CidrBlock")?.unwrap_or(Cidr { base: 172 << 24 | 16 << 16, len: 12 });
    if c.p.text("CidrBlock").is_some() && !(8..=28).contains(&block.len) || reserved(&block) {
        return Err(EcsError::new(
            400,
            "InvalidCidrBlock.Malformed",
            format!("The specified CidrBlock \"{}\" cannot be a VPC's (a mask of 8 to 28 bits, outside the reserved ranges).", block.text()),
        ));
    }
    let name = c.p.text("VpcName");
    check_text("VpcName", "InvalidVpcName.Malformed", &name, 128)?;
    let description = c.p.text("Description");
    check_text("Description", "InvalidDescription.Malformed", &description, 256)?;
    if st.net.vpcs.values().filter(|v| v.region == region).count() >= VPC_QUOTA {
        // *unverified* code: the VPC API's quota refusal.
        return Err(EcsError::new(
            400,
            "QuotaExceeded.Vpc",
            format!("The region holds {VPC_QUOTA} VPCs already."),
        ));
    }
    dry_run(c)?;
    let id = c.ctx.new_id("vpc-", 20);
    let vpc = Vpc {
        id: id.clone(),
        region: region.clone(),
        name: name.unwrap_or_default(),
        description: description.unwrap_or_default(),
        cidr: block,
        tags: c.p.tags("Tag"),
        created: Some(c.now),
        default: false,
    };
    st.net.vpcs.insert(id.clone(), vpc);
    let answer = json!({
        "VpcId": id,
        "VRouterId": format!("vrt-{}", &id[4..]),
        "RouteTableId": format!("vtb-{}", &id[4..]),
        "ResourceGroupId": "rg-acfmsimdefault",
    });
    token_remember(st, "CreateVpc", c, &answer);
    Ok(answer)
}

fn vpc_json(c: &Call, st: &EcsState, v: &Vpc) -> Value {
    let vsws: Vec<String> =
        vswitches(c.ctx, st, &v.region).into_iter().filter(|s| s.vpc_id == v.id).map(|s| s.id).collect();
    json!({
        "VpcId": v.id,
        "VpcName": v.name,
        "Description": v.description,
        "RegionId": v.region,
        "CidrBlock": v.cidr.text(),
        "IsDefault": v.default,
        "Status": if v.available(c.now, &c.timings) { "Available" } else { "Pending" },
        "CreationTime": time(v.created),
        "VRouterId": format!("vrt-{}", &v.id[4..]),
        "VSwitchIds": { "VSwitchId": vsws },
        "ResourceGroupId": "rg-acfmsimdefault",
        "Tags": vpc_tags_json(&v.tags),
        "EnabledIpv6": false,
        "Ipv6CidrBlock": "",
        "UserCidrs": { "UserCidr": [] },
        "NatGatewayIds": { "NatGatewayIds": [] },
        "RouterTableIds": { "RouterTableIds": [format!("vtb-{}", &v.id[4..])] },
        "SecondaryCidrBlocks": { "SecondaryCidrBlock": [] },
        "DhcpOptionsSetId": "",
        "DhcpOptionsSetStatus": "",
        "DnsHostnameStatus": "DISABLED",
        "CenStatus": "",
        "OwnerId": 0,
    })
}

/// DescribeVpcs: by `VpcId` ("up to 20 VPC IDs, separated by commas"), `VpcName`, `IsDefault` and
/// `Tag.N`, paged by `PageNumber`/`PageSize` (at most 50, default 10).
pub fn describe_vpcs(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let ids: Option<Vec<String>> =
        c.p.text("VpcId").map(|s| s.split(',').map(|x| x.trim().to_owned()).collect());
    let name = c.p.text("VpcName");
    let is_default = c.p.opt_bool("IsDefault")?;
    let tags = c.p.tags("Tag");
    let pg = c.p.page_number(("PageNumber", "PageSize"), 10, 1..=50)?;
    let matching: Vec<Vpc> = vpcs(c.ctx, st, &region)
        .into_iter()
        .filter(|v| ids.as_ref().is_none_or(|xs| xs.contains(&v.id)))
        .filter(|v| name.as_ref().is_none_or(|n| *n == v.name))
        .filter(|v| is_default.is_none_or(|d| d == v.default))
        .filter(|v| tags_match(&v.tags, &tags))
        .collect();
    let (total, items) = pg.apply(matching);
    Ok(json!({
        "Vpcs": { "Vpc": items.iter().map(|v| vpc_json(c, st, v)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": pg.number(),
        "PageSize": pg.size(),
    }))
}

pub fn delete_vpc(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    let id = c.p.required("VpcId")?;
    if id == default_vpc(&region) && has_defaults(c.ctx, &region) {
        return Err(default_kept(&id));
    }
    if st.net.vpcs.get(&id).is_none_or(|v| v.region != region) {
        return Err(vpc_not_found(&id));
    }
    // The codes terraform-provider-alicloud's VPC deleter waits out (DependencyViolation.VSwitch,
    // DependencyViolation.SecurityGroup): a VPC that still holds either is refused.
    if let Some(v) = st.net.vswitches.values().find(|v| v.vpc_id == id) {
        return Err(EcsError::new(
            400,
            "DependencyViolation.VSwitch",
            format!("The specified VPC still holds vSwitch {}.", v.id),
        ));
    }
    if let Some(g) = st.net.groups.values().find(|g| g.vpc_id == id) {
        return Err(EcsError::new(
            400,
            "DependencyViolation.SecurityGroup",
            format!("The specified VPC still holds security group {}.", g.id),
        ));
    }
    dry_run(c)?;
    st.net.vpcs.remove(&id);
    Ok(json!({}))
}

// -------------------------------------------------------------------------------------- vSwitches

/// The first free block of `len` bits inside `vpc` that overlaps none of `taken`.
fn free_block(vpc: &Cidr, len: u8, taken: &[Cidr]) -> Option<Cidr> {
    let step = 1u64 << (32 - u32::from(len));
    let end = u64::from(vpc.base) + vpc.size();
    let mut at = u64::from(vpc.base);
    while at + step <= end {
        let b = Cidr { base: at as u32, len };
        if !taken.iter().any(|t| t.overlaps(&b)) {
            return Some(b);
        }
        at += step;
    }
    None
}

pub fn create_vswitch(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    if let Some(replay) = token_check(st, "CreateVSwitch", c)? {
        return Ok(replay);
    }
    let vpc_id = c.p.required("VpcId")?;
    let zone = c.p.required("ZoneId")?;
    if !zones(c.ctx, &region).contains(&zone) {
        return Err(EcsError::new(
            400,
            codes::ZONE_NOT_FOUND,
            format!("The specified ZoneId \"{zone}\" is not a zone of {region}."),
        ));
    }
    let Some(vpc) = vpcs(c.ctx, st, &region).into_iter().find(|v| v.id == vpc_id) else {
        return Err(vpc_not_found(&vpc_id));
    };
    // terraform-provider-alicloud's vSwitch creator waits out IncorrectVpcStatus: a VPC still Pending.
    if !vpc.available(c.now, &c.timings) {
        return Err(EcsError::new(
            400,
            "IncorrectVpcStatus",
            format!("The specified VPC {vpc_id} is not Available yet (Pending)."),
        ));
    }
    let taken: Vec<Cidr> =
        vswitches(c.ctx, st, &region).iter().filter(|v| v.vpc_id == vpc_id).map(|v| v.cidr).collect();
    // "The mask length of the vSwitch CIDR block must be 16 to 29 bits"; "You must specify at least
    // one of CidrBlock and CidrMask".
    let block = match (cidr_param(c, "CidrBlock")?, c.p.opt_i64("CidrMask")?) {
        (Some(b), _) => b,
        (None, Some(mask)) if (16..=29).contains(&mask) => free_block(&vpc.cidr, mask as u8, &taken).ok_or_else(|| {
            EcsError::new(400, "InvalidCidrBlock.Overlapped", format!("No free /{mask} is left in {}.", vpc.cidr.text()))
        })?,
        (None, Some(mask)) => {
            return Err(EcsError::new(400, "InvalidCidrMask.Malformed", format!("CidrMask {mask} is not 16 to 29.")))
        }
        (None, None) => {
            return Err(EcsError::new(
                400,
                codes::MISSING_PARAMETER,
                "The input parameter \"CidrBlock\" that is mandatory for processing this request is not supplied (or give CidrMask).",
            ))
        }
    };
    if !(16..=29).contains(&block.len) || !vpc.cidr.contains(&block) || reserved(&block) {
        return Err(EcsError::new(
            400,
            "InvalidCidrBlock.Malformed",
            format!(
                "The specified CidrBlock \"{}\" must be a /16 to /29 inside the VPC's {}.",
                block.text(),
                vpc.cidr.text()
            ),
        ));
    }
    if let Some(t) = taken.iter().find(|t| t.overlaps(&block)) {
        return Err(EcsError::new(
            400,
            "InvalidCidrBlock.Overlapped",
            format!("The specified CidrBlock \"{}\" overlaps {} of the VPC.", block.text(), t.text()),
        ));
    }
    if taken.len() >= VSWITCH_QUOTA {
        // *unverified* code.
        return Err(EcsError::new(
            400,
            "QuotaExceeded.VSwitch",
            format!("The VPC holds {VSWITCH_QUOTA} vSwitches already."),
        ));
    }
    let name = c.p.text("VSwitchName");
    check_text("VSwitchName", "InvalidVSwitchName.Malformed", &name, 128)?;
    check_text("Description", "InvalidDescription.Malformed", &c.p.text("Description"), 256)?;
    dry_run(c)?;
    let id = c.ctx.new_id("vsw-", 20);
    st.net.vswitches.insert(
        id.clone(),
        VSwitch {
            id: id.clone(),
            region,
            vpc_id,
            zone,
            name: name.unwrap_or_default(),
            cidr: block,
            tags: c.p.tags("Tag"),
            created: Some(c.now),
            default: false,
        },
    );
    let answer = json!({ "VSwitchId": id });
    token_remember(st, "CreateVSwitch", c, &answer);
    Ok(answer)
}

fn vswitch_json(st: &EcsState, v: &VSwitch) -> Value {
    let used = st.instances.values().filter(|i| i.vswitch_id == v.id).count() as u64;
    json!({
        "VSwitchId": v.id,
        "VpcId": v.vpc_id,
        "ZoneId": v.zone,
        "IsDefault": v.default,
        "Status": VSWITCH_AVAILABLE,
        "CidrBlock": v.cidr.text(),
        "VSwitchName": v.name,
        "Description": "",
        // Four addresses of every vSwitch are the system's.
        "AvailableIpAddressCount": v.cidr.size().saturating_sub(4 + used),
        "CreationTime": time(v.created),
        "ResourceGroupId": "",
        "NetworkAclId": "",
        "ShareType": "",
        "EnabledIpv6": false,
        "Ipv6CidrBlock": "",
        "RouteTable": { "RouteTableId": fixed_id("vtb-", &v.vpc_id), "RouteTableType": "System" },
        "Tags": vpc_tags_json(&v.tags),
    })
}

/// DescribeVSwitches: the region's vSwitches, filtered by `ZoneId`, `VpcId`, `VSwitchId`,
/// `VSwitchName`, `IsDefault` and `Tag.N`, paged by `PageNumber`/`PageSize` (size 1 to 50, default
/// 10). "Specify at least one of the RegionId and VpcId parameters": a VpcId names its region.
pub fn describe_vswitches(c: &Call, st: &EcsState) -> Answer {
    let region = match (c.p.text("RegionId"), c.p.text("VpcId")) {
        (None, Some(vpc)) => c
            .ctx
            .regions(PROVIDER)
            .into_iter()
            .find(|r| vpcs(c.ctx, st, r).iter().any(|v| v.id == vpc))
            .ok_or_else(|| vpc_not_found(&vpc))?,
        _ => region(c)?,
    };
    let zone = c.p.text("ZoneId");
    let vpc = c.p.text("VpcId");
    let id = c.p.text("VSwitchId");
    let name = c.p.text("VSwitchName");
    let is_default = c.p.opt_bool("IsDefault")?;
    let tags = c.p.tags("Tag");
    let pg = c.p.page_number(("PageNumber", "PageSize"), 10, 1..=i64::from(VSWITCH_PAGE_MAX))?;
    let matching: Vec<VSwitch> = vswitches(c.ctx, st, &region)
        .into_iter()
        .filter(|v| zone.as_ref().is_none_or(|z| *z == v.zone))
        .filter(|v| vpc.as_ref().is_none_or(|x| *x == v.vpc_id))
        .filter(|v| id.as_ref().is_none_or(|x| *x == v.id))
        .filter(|v| name.as_ref().is_none_or(|x| *x == v.name))
        .filter(|v| is_default.is_none_or(|d| d == v.default))
        .filter(|v| tags_match(&v.tags, &tags))
        .collect();
    let (total, items) = pg.apply(matching);
    Ok(json!({
        "VSwitches": { "VSwitch": items.iter().map(|v| vswitch_json(st, v)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": pg.number(),
        "PageSize": pg.size(),
    }))
}

pub fn delete_vswitch(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    let id = c.p.required("VSwitchId")?;
    if default_vswitches(c.ctx, &region).iter().any(|v| v.id == id) {
        return Err(default_kept(&id));
    }
    if st.net.vswitches.get(&id).is_none_or(|v| v.region != region) {
        return Err(vswitch_not_found(&id));
    }
    // An instance not yet released still holds its address in the vSwitch. *unverified* code.
    if let Some(i) = st.instances.values().find(|i| i.vswitch_id == id) {
        return Err(EcsError::new(
            400,
            "DependencyViolation",
            format!("The specified vSwitch still holds instance {}.", i.id),
        ));
    }
    dry_run(c)?;
    st.net.vswitches.remove(&id);
    Ok(json!({}))
}

// ------------------------------------------------------------------------------- Security groups

pub fn create_security_group(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    if let Some(replay) = token_check(st, "CreateSecurityGroup", c)? {
        return Ok(replay);
    }
    // The model makes VpcId optional for the classic network; the local cloud's account has no
    // classic network (every GPU family is VPC-only), so a group belongs to a VPC.
    let Some(vpc_id) = c.p.text("VpcId") else {
        return Err(EcsError::new(
            400,
            codes::MISSING_PARAMETER,
            "The input parameter \"VpcId\" that is mandatory for processing this request is not supplied (the account has no classic network).",
        ));
    };
    if !vpcs(c.ctx, st, &region).iter().any(|v| v.id == vpc_id) {
        return Err(vpc_not_found(&vpc_id));
    }
    // "2 to 128 characters in length. It must start with a letter and cannot start with http:// or
    // https://" (SecurityGroupName); Description "2 to 256 characters".
    let name = c.p.text("SecurityGroupName");
    if let Some(n) = &name {
        let len = n.chars().count();
        if !(2..=128).contains(&len)
            || !n.starts_with(|ch: char| ch.is_alphabetic())
            || n.starts_with("http://")
            || n.starts_with("https://")
        {
            return Err(EcsError::new(
                400,
                "InvalidSecurityGroupName.Malformed",
                format!("The specified SecurityGroupName \"{n}\" is not 2 to 128 characters starting with a letter."),
            ));
        }
    }
    let description = c.p.text("Description");
    if description.as_ref().is_some_and(|d| !(2..=256).contains(&d.chars().count())) {
        return Err(EcsError::new(
            400,
            "InvalidDescription.Malformed",
            "The Description is not 2 to 256 characters.",
        ));
    }
    let group_type = c.p.text("SecurityGroupType").unwrap_or_else(|| "normal".into());
    if st.net.groups.values().filter(|g| g.region == region).count() >= GROUP_QUOTA {
        // *unverified* code.
        return Err(EcsError::new(
            400,
            "QuotaExceed.SecurityGroup",
            format!("The region holds {GROUP_QUOTA} security groups already."),
        ));
    }
    let id = c.ctx.new_id("sg-", 20);
    st.net.groups.insert(
        id.clone(),
        Group {
            id: id.clone(),
            region,
            vpc_id,
            name: name.unwrap_or_default(),
            description: description.unwrap_or_default(),
            group_type,
            tags: c.p.tags("Tag"),
            rules: Vec::new(),
            created: Some(c.now),
            default: false,
        },
    );
    let answer = json!({ "SecurityGroupId": id });
    token_remember(st, "CreateSecurityGroup", c, &answer);
    Ok(answer)
}

/// DescribeSecurityGroups: the region's groups, filtered by `VpcId`, `SecurityGroupId`,
/// `SecurityGroupIds` (a JSON list), `SecurityGroupName`, `NetworkType` and `Tag.N`, paged by
/// `NextToken`/`MaxResults` (at most 100) or the deprecated `PageNumber`/`PageSize` (at most 50).
pub fn describe_security_groups(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let vpc = c.p.text("VpcId");
    let id = c.p.text("SecurityGroupId");
    let ids = c.p.json_list("SecurityGroupIds")?;
    let name = c.p.text("SecurityGroupName");
    let network = c.p.text("NetworkType");
    let tags = c.p.tags("Tag");
    let pg = c.p.listing(100, 50)?;
    let matching: Vec<Group> = groups(c.ctx, st, &region)
        .into_iter()
        .filter(|g| vpc.as_ref().is_none_or(|v| *v == g.vpc_id))
        .filter(|g| id.as_ref().is_none_or(|x| *x == g.id))
        .filter(|g| ids.as_ref().is_none_or(|xs| xs.contains(&g.id)))
        .filter(|g| name.as_ref().is_none_or(|x| *x == g.name))
        .filter(|_| network.as_deref().is_none_or(|n| n == "vpc"))
        .filter(|g| tags_match(&g.tags, &tags))
        .collect();
    let (total, items) = pg.apply(matching);
    Ok(json!({
        "SecurityGroups": { "SecurityGroup": items.iter().map(|g| json!({
            "SecurityGroupId": g.id,
            "SecurityGroupName": g.name,
            "Description": g.description,
            "SecurityGroupType": g.group_type,
            "VpcId": g.vpc_id,
            "CreationTime": time(g.created),
            "ResourceGroupId": "",
            "ServiceManaged": false,
            "RuleCount": g.rules.len(),
            "GroupToGroupRuleCount": g.rules.iter().filter(|r| !r.source_group.is_empty()).count(),
            "Tags": tags_json(&g.tags),
        })).collect::<Vec<_>>() },
        "RegionId": region,
        "TotalCount": total,
        "PageNumber": pg.number(),
        "PageSize": pg.size(),
        "NextToken": pg.next_token(total),
    }))
}

/// One `Permissions.N` (or the deprecated top-level fields), checked as AuthorizeSecurityGroup's
/// model states: IpProtocol "TCP, UDP, ICMP, ICMPv6, GRE, ALL" (case-insensitive); PortRange "TCP or
/// UDP: 1 to 65535 ... 1/200; ICMP: -1/-1; GRE: -1/-1; ALL: -1/-1"; Policy "accept | drop" (default
/// accept); Priority "1 to 100" (default 1); a source, an IPv4 block or a group of the same VPC.
fn rule(c: &Call, st: &EcsState, p: &Params<'_>, group: &Group) -> Result<Rule, EcsError> {
    let proto = p.text("IpProtocol").unwrap_or_default().to_ascii_uppercase();
    if !["TCP", "UDP", "ICMP", "ICMPV6", "GRE", "ALL"].contains(&proto.as_str()) {
        return Err(EcsError::new(
            400,
            "InvalidIpProtocol.ValueNotSupported",
            format!("The specified IpProtocol \"{proto}\" is not TCP, UDP, ICMP, ICMPv6, GRE or ALL."),
        ));
    }
    let range = p.text("PortRange").ok_or_else(|| {
        EcsError::new(400, codes::MISSING_PARAMETER, "The input parameter \"PortRange\" that is mandatory for processing this request is not supplied.")
    })?;
    let ports_ok = match proto.as_str() {
        "TCP" | "UDP" => {
            range.split_once('/').is_some_and(|(a, b)| match (a.parse::<u32>(), b.parse::<u32>()) {
                (Ok(a), Ok(b)) => (1..=65535).contains(&a) && (1..=65535).contains(&b) && a <= b,
                _ => false,
            })
        }
        _ => range == "-1/-1",
    };
    if !ports_ok {
        return Err(EcsError::new(
            400,
            "InvalidIpPortRange.Malformed",
            format!("The specified PortRange \"{range}\" does not suit IpProtocol {proto}."),
        ));
    }
    let policy = match p.text("Policy").map(|s| s.to_ascii_lowercase()).as_deref() {
        None | Some("accept") => "Accept",
        Some("drop") => "Drop",
        Some(other) => {
            return Err(EcsError::new(
                400,
                "InvalidPolicy.Malformed",
                format!("The specified Policy \"{other}\" is not accept or drop."),
            ))
        }
    };
    let priority = p.opt_i64("Priority")?.unwrap_or(1);
    if !(1..=100).contains(&priority) {
        return Err(EcsError::new(
            400,
            "InvalidPriority.Malformed",
            format!("The specified Priority {priority} is not 1 to 100."),
        ));
    }
    let cidr = p.text("SourceCidrIp").unwrap_or_default();
    let source_group = p.text("SourceGroupId").unwrap_or_default();
    match (cidr.is_empty(), source_group.is_empty()) {
        (false, true) => {
            // "Both CIDR format and IPv4 format address ranges are supported."
            let ok = Cidr::parse(&cidr).is_some() || cidr.parse::<std::net::Ipv4Addr>().is_ok();
            if !ok {
                return Err(EcsError::new(
                    400,
                    "InvalidSourceCidrIp.Malformed",
                    format!("The specified SourceCidrIp \"{cidr}\" is not an IPv4 address or CIDR block."),
                ));
            }
        }
        (true, false) => {
            let Some(src) = groups(c.ctx, st, &group.region).into_iter().find(|g| g.id == source_group)
            else {
                return Err(EcsError::new(
                    404,
                    "InvalidSourceGroupId.NotFound",
                    format!("The specified SourceGroupId \"{source_group}\" does not exist."),
                ));
            };
            if src.vpc_id != group.vpc_id {
                return Err(EcsError::new(
                    400,
                    "InvalidSourceGroup.NotInSameVpc",
                    format!(
                        "The source group {source_group} is not in the VPC of {}. (*unverified* code)",
                        group.id
                    ),
                ));
            }
        }
        _ => {
            return Err(EcsError::new(
                400,
                codes::MISSING_PARAMETER,
                "A rule takes exactly one source: SourceCidrIp or SourceGroupId.",
            ))
        }
    }
    Ok(Rule {
        protocol: proto,
        port_range: range,
        source_cidr: cidr,
        source_group,
        policy: policy.into(),
        priority,
        description: p.text("Description").unwrap_or_default(),
        id: c.ctx.new_id("sgr-", 20),
        created: c.now,
    })
}

fn group_in(c: &Call, st: &EcsState, region: &str, id: &str) -> Result<Group, EcsError> {
    groups(c.ctx, st, region).into_iter().find(|g| g.id == id).ok_or_else(|| group_not_found(id))
}

/// AuthorizeSecurityGroup: "如果匹配的安全组规则已存在，此次AuthorizeSecurityGroup调用成功，但不会增加规则数"
/// (the call succeeds and adds nothing for a rule the group already holds).
pub fn authorize_security_group(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    if let Some(replay) = token_check(st, "AuthorizeSecurityGroup", c)? {
        return Ok(replay);
    }
    let id = c.p.required("SecurityGroupId")?;
    let group = group_in(c, st, &region, &id)?;
    let mut sets = c.p.items("Permissions");
    if sets.is_empty() && c.p.text("IpProtocol").is_some() {
        sets.push(c.p);
    }
    if sets.is_empty() || sets.len() > 100 {
        return Err(EcsError::new(
            400,
            codes::MISSING_PARAMETER,
            "Permissions must hold 1 to 100 rules (or the deprecated IpProtocol, PortRange and source).",
        ));
    }
    let mut add: Vec<Rule> = Vec::new();
    for p in &sets {
        let r = rule(c, st, p, &group)?;
        if !group.rules.iter().chain(&add).any(|h| h.same(&r)) {
            add.push(r);
        }
    }
    if group.rules.len() + add.len() > RULE_QUOTA {
        // *unverified* code.
        return Err(EcsError::new(
            400,
            "QuotaExceed.SecurityGroupRule",
            format!("A security group holds at most {RULE_QUOTA} rules."),
        ));
    }
    let held = if group.default {
        st.net.default_group_rules.entry(id.clone()).or_default()
    } else {
        &mut st.net.groups.get_mut(&id).expect("found above").rules
    };
    held.extend(add);
    let answer = json!({});
    token_remember(st, "AuthorizeSecurityGroup", c, &answer);
    Ok(answer)
}

/// DescribeSecurityGroupAttribute: the group and its rules; `Direction` `all` (default), `ingress`
/// or `egress` (the local cloud keeps ingress rules only: gpuctl adds no egress rule, and a new
/// group's egress allows everything).
pub fn describe_security_group_attribute(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let id = c.p.required("SecurityGroupId")?;
    let g = group_in(c, st, &region, &id)?;
    let direction = c.p.text("Direction").unwrap_or_else(|| "all".into());
    if !["all", "ingress", "egress"].contains(&direction.as_str()) {
        return Err(EcsError::invalid("Direction", "all, ingress or egress", &json!(direction)));
    }
    let shown: Vec<Value> = if direction == "egress" {
        Vec::new()
    } else {
        g.rules
            .iter()
            .map(|r| {
                json!({
                    "Direction": "ingress",
                    "SecurityGroupRuleId": r.id,
                    "IpProtocol": r.protocol,
                    "PortRange": r.port_range,
                    "SourceCidrIp": r.source_cidr,
                    "SourceGroupId": r.source_group,
                    "SourceGroupName": "",
                    "SourcePortRange": "",
                    "DestCidrIp": "",
                    "Policy": r.policy,
                    "Priority": r.priority.to_string(),
                    "NicType": "intranet",
                    "Description": r.description,
                    "CreateTime": format_time(r.created),
                })
            })
            .collect()
    };
    Ok(json!({
        "SecurityGroupId": g.id,
        "SecurityGroupName": g.name,
        "Description": g.description,
        "VpcId": g.vpc_id,
        "RegionId": region,
        "InnerAccessPolicy": "Accept",
        "Permissions": { "Permission": shown },
    }))
}

pub fn delete_security_group(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    let id = c.p.required("SecurityGroupId")?;
    if id == default_security_group(&region) && has_defaults(c.ctx, &region) {
        return Err(default_kept(&id));
    }
    if st.net.groups.get(&id).is_none_or(|g| g.region != region) {
        return Err(group_not_found(&id));
    }
    // "make sure that the security group does not contain instances and is not referenced by other
    // security groups. Otherwise, the DeleteSecurityGroup request fails" (DeleteSecurityGroup's
    // usage notes). *unverified* code for both.
    if let Some(i) = st.instances.values().find(|i| i.security_group_ids.contains(&id)) {
        return Err(EcsError::new(
            403,
            "DependencyViolation",
            format!("There is still instance(s) in the specified security group ({}).", i.id),
        ));
    }
    if let Some(g) =
        st.net.groups.values().find(|g| g.id != id && g.rules.iter().any(|r| r.source_group == id))
    {
        return Err(EcsError::new(
            403,
            "DependencyViolation",
            format!("The specified security group is referenced by a rule of {}.", g.id),
        ));
    }
    st.net.groups.remove(&id);
    Ok(json!({}))
}

// --------------------------------------------------------------------- RunInstances' network check

/// RunInstances' `VSwitchId` and security groups. In a zone with the default network the emulator
/// keeps accepting any ids it does not hold (a spec's own network, as before); a vSwitch it holds,
/// and every id in a zone without the default network (the empty account), must exist, sit in the
/// launch's zone, and share its VPC with every group. *unverified* codes for the mismatches
/// (`InvalidParameter.Mismatch`); the not-found codes are ECS's.
pub fn check_launch(c: &Call, st: &EcsState, region: &str, zone: &str) -> Result<(), EcsError> {
    let vsw_id = c.p.text("VSwitchId").unwrap_or_default();
    let group_ids: Vec<String> =
        c.p.text("SecurityGroupId").into_iter().chain(c.p.list("SecurityGroupIds")).collect();
    let made = st.net.vswitches.contains_key(&vsw_id);
    if c.ctx.has_default_network(PROVIDER, zone) && !made {
        return Ok(());
    }
    if vsw_id.is_empty() {
        return Err(EcsError::new(
            400,
            codes::MISSING_PARAMETER,
            format!("The account has no default vSwitch in {zone}: the input parameter \"VSwitchId\" is mandatory."),
        ));
    }
    let Some(vsw) = vswitches(c.ctx, st, region).into_iter().find(|v| v.id == vsw_id) else {
        return Err(vswitch_not_found(&vsw_id));
    };
    if vsw.zone != zone {
        return Err(EcsError::new(
            400,
            "InvalidParameter.Mismatch",
            format!("Specified virtual switch {vsw_id} is in {}, not in zone {zone}.", vsw.zone),
        ));
    }
    if group_ids.is_empty() {
        return Err(EcsError::new(
            400,
            codes::MISSING_PARAMETER,
            "The input parameter \"SecurityGroupId\" that is mandatory for processing this request is not supplied.",
        ));
    }
    for g in &group_ids {
        let group = group_in(c, st, region, g)?;
        if group.vpc_id != vsw.vpc_id {
            return Err(EcsError::new(
                400,
                "InvalidParameter.Mismatch",
                format!("Specified security group {g} and virtual switch {vsw_id} are not in the same VPC."),
            ));
        }
    }
    Ok(())
}

/// The VPC a vSwitch belongs to; for an id the local cloud does not hold (a spec's own network in a
/// zone with the default network), one named after the vSwitch.
pub fn vpc_of(ctx: &SimCtx, st: &EcsState, region: &str, vswitch: &str) -> String {
    if vswitch.is_empty() {
        return String::new();
    }
    vswitches(ctx, st, region)
        .into_iter()
        .find(|v| v.id == vswitch)
        .map(|v| v.vpc_id)
        .unwrap_or_else(|| format!("vpc-{}", vswitch.trim_start_matches("vsw-")))
}

/// The account's network as `/_sim/state` shows it, every region's: `vpcs`, `subnets` (vSwitches)
/// and `security_groups` in the shape every emulator's state uses (`id`, `tags` as a map, `default`
/// for the account's own default pieces).
pub fn network_json(ctx: &SimCtx, st: &EcsState, now: Timestamp, t: &Timings) -> Value {
    let map = |tags: &[(String, String)]| tags.iter().cloned().collect::<BTreeMap<_, _>>();
    let regions = ctx.regions(PROVIDER);
    let vpcs: Vec<Value> = regions
        .iter()
        .flat_map(|r| vpcs(ctx, st, r))
        .map(|v| {
            json!({
                "id": v.id, "region": v.region, "name": v.name, "cidr": v.cidr.text(), "default": v.default,
                "status": if v.available(now, t) { "Available" } else { "Pending" }, "tags": map(&v.tags),
            })
        })
        .collect();
    let subnets: Vec<Value> = regions
        .iter()
        .flat_map(|r| vswitches(ctx, st, r))
        .map(|v| {
            json!({
                "id": v.id, "region": v.region, "vpc_id": v.vpc_id, "zone": v.zone, "name": v.name,
                "cidr": v.cidr.text(), "default": v.default, "tags": map(&v.tags),
            })
        })
        .collect();
    let groups: Vec<Value> = regions
        .iter()
        .flat_map(|r| groups(ctx, st, r))
        .map(|g| {
            json!({
                "id": g.id, "region": g.region, "vpc_id": g.vpc_id, "name": g.name, "default": g.default,
                "tags": map(&g.tags),
                "ingress": g.rules.iter().map(|r| json!({
                    "IpProtocol": r.protocol, "PortRange": r.port_range, "SourceCidrIp": r.source_cidr,
                    "SourceGroupId": r.source_group, "Policy": r.policy, "Priority": r.priority,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "vpcs": vpcs, "subnets": subnets, "security_groups": groups })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_block_skips_what_is_taken() {
        let vpc = Cidr::parse("10.0.0.0/16").unwrap();
        let taken = [Cidr::parse("10.0.0.0/20").unwrap()];
        assert_eq!(free_block(&vpc, 20, &taken).map(|b| b.text()), Some("10.0.16.0/20".into()));
        let full = [vpc];
        assert_eq!(free_block(&vpc, 24, &full), None);
    }
}
