//! The account's network: VPC DescribeVSwitches (API 2016-04-28) and ECS DescribeSecurityGroups.
//!
//! A real account gets a default VPC per region, a default vSwitch in each zone it first buys in and a
//! default security group in that VPC (Alibaba Cloud's "Default VPCs and default vSwitches" page: the
//! first instance in a region without a VPC creates them). The local cloud's account holds that from
//! the start, for every zone where the catalog sells in the region, except the zones a
//! `no_default_network` knob names (an account whose default vSwitch there was deleted), so that a
//! client's refusal can be tested. The ids are a fixed function of region and zone, so every call
//! (and every sim run) answers the same ones and a create can name them.
//!
//! Field names: alibabacloud_vpc20160428 7.2.2 `models/_describe_vswitches_response_body.py` and
//! alibabacloud_ecs20140526 7.11.8 `models/_describe_security_groups_response_body.py`.

use std::collections::BTreeSet;

use gpuctl_simkit::SimCtx;
use serde_json::{json, Value};

use super::{region, Answer, Call};
use crate::api::vpc::{VSWITCH_AVAILABLE, VSWITCH_PAGE_MAX};
use crate::emulator::error::EcsError;
use crate::emulator::params::EcsParams;
use crate::emulator::PROVIDER;

/// One default vSwitch of the account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VSwitch {
    pub id: String,
    pub vpc_id: String,
    pub zone: String,
    /// Its CIDR block inside the default VPC's 172.16.0.0/12 (a /20 per zone, as the console makes).
    pub cidr: String,
}

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

/// The account's default vSwitches in `region`: one per zone it sells in, but a knob's gaps.
pub fn default_vswitches(ctx: &SimCtx, region: &str) -> Vec<VSwitch> {
    zones(ctx, region)
        .into_iter()
        .enumerate()
        .filter(|(_, z)| ctx.has_default_network(PROVIDER, z))
        .map(|(i, zone)| VSwitch {
            id: fixed_id("vsw-", &zone),
            vpc_id: default_vpc(region),
            cidr: format!("172.{}.{}.0/20", 16 + i / 16, (i % 16) * 16),
            zone,
        })
        .collect()
}

/// DescribeVSwitches: the region's vSwitches, filtered by `ZoneId`, `VpcId`, `VSwitchId` and
/// `IsDefault` (alibabacloud_vpc20160428 7.2.2 `models/_describe_vswitches_request.py`), paged by
/// `PageNumber`/`PageSize` (size 1 to 50, default 10). The account holds default vSwitches only, so
/// `IsDefault=false` lists none.
pub fn describe_vswitches(c: &Call) -> Answer {
    // "Specify at least one of the RegionId and VpcId parameters": a VpcId names its region.
    let region = match (c.p.text("RegionId"), c.p.text("VpcId")) {
        (None, Some(vpc)) => {
            c.ctx.regions(PROVIDER).into_iter().find(|r| default_vpc(r) == vpc).ok_or_else(|| {
                EcsError::new(
                    404,
                    "InvalidVpcId.NotFound",
                    format!("The specified VpcId \"{vpc}\" does not exist."),
                )
            })?
        }
        _ => region(c)?,
    };
    let zone = c.p.text("ZoneId");
    let vpc = c.p.text("VpcId");
    let id = c.p.text("VSwitchId");
    let is_default = c.p.opt_bool("IsDefault")?;
    let pg = c.p.page_number(("PageNumber", "PageSize"), 10, 1..=i64::from(VSWITCH_PAGE_MAX))?;
    let matching: Vec<VSwitch> = default_vswitches(c.ctx, &region)
        .into_iter()
        .filter(|v| zone.as_ref().is_none_or(|z| *z == v.zone))
        .filter(|v| vpc.as_ref().is_none_or(|x| *x == v.vpc_id))
        .filter(|v| id.as_ref().is_none_or(|x| *x == v.id))
        .filter(|_| is_default != Some(false))
        .collect();
    let (total, items) = pg.apply(matching);
    Ok(json!({
        "VSwitches": { "VSwitch": items.iter().map(|v| vswitch_json(v, &region)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": pg.number(),
        "PageSize": pg.size(),
    }))
}

fn vswitch_json(v: &VSwitch, region: &str) -> Value {
    json!({
        "VSwitchId": v.id,
        "VpcId": v.vpc_id,
        "ZoneId": v.zone,
        "IsDefault": true,
        "Status": VSWITCH_AVAILABLE,
        "CidrBlock": v.cidr,
        "VSwitchName": "",
        "Description": "",
        "AvailableIpAddressCount": 4092,
        "CreationTime": "2026-01-01T00:00:00Z",
        "ResourceGroupId": "",
        "NetworkAclId": "",
        "ShareType": "",
        "EnabledIpv6": false,
        "Ipv6CidrBlock": "",
        "RouteTable": { "RouteTableId": fixed_id("vtb-", region), "RouteTableType": "System" },
        "Tags": { "Tag": [] },
    })
}

/// DescribeSecurityGroups: the default security group of the region's default VPC, filtered by
/// `VpcId`, `SecurityGroupId`, `SecurityGroupIds` (a JSON list) and `NetworkType`, paged by
/// `NextToken`/`MaxResults` (at most 100) or the deprecated `PageNumber`/`PageSize` (at most 50;
/// alibabacloud_ecs20140526 7.11.8 `models/_describe_security_groups_request.py`).
pub fn describe_security_groups(c: &Call) -> Answer {
    let region = region(c)?;
    let vpc = c.p.text("VpcId");
    let id = c.p.text("SecurityGroupId");
    let ids = c.p.json_list("SecurityGroupIds")?;
    let network = c.p.text("NetworkType");
    let pg = c.p.listing(100, 50)?;
    let sg = default_security_group(&region);
    let matching: Vec<String> = [sg]
        .into_iter()
        .filter(|_| vpc.as_ref().is_none_or(|v| *v == default_vpc(&region)))
        .filter(|s| id.as_ref().is_none_or(|x| x == s))
        .filter(|s| ids.as_ref().is_none_or(|xs| xs.contains(s)))
        .filter(|_| network.as_deref().is_none_or(|n| n == "vpc"))
        .collect();
    let (total, items) = pg.apply(matching);
    Ok(json!({
        "SecurityGroups": { "SecurityGroup": items.iter().map(|s| json!({
            "SecurityGroupId": s,
            "SecurityGroupName": "default",
            "Description": "System created security group.",
            "SecurityGroupType": "normal",
            "VpcId": default_vpc(&region),
            "CreationTime": "2026-01-01T00:00:00Z",
            "ResourceGroupId": "",
            "ServiceManaged": false,
            "RuleCount": 0,
            "GroupToGroupRuleCount": 0,
            "Tags": { "Tag": [] },
        })).collect::<Vec<_>>() },
        "RegionId": region,
        "TotalCount": total,
        "PageNumber": pg.number(),
        "PageSize": pg.size(),
        "NextToken": pg.next_token(total),
    }))
}

/// The account's network as `/_sim/state` shows it: every region's default vSwitches and group.
pub fn network_json(ctx: &SimCtx) -> Value {
    let vswitches: Vec<Value> = ctx
        .regions(PROVIDER)
        .iter()
        .flat_map(|r| default_vswitches(ctx, r).into_iter().map(move |v| vswitch_json(&v, r)))
        .collect();
    let groups: Vec<Value> = ctx
        .regions(PROVIDER)
        .iter()
        .map(|r| json!({ "SecurityGroupId": default_security_group(r), "VpcId": default_vpc(r), "RegionId": r }))
        .collect();
    json!({ "vswitches": vswitches, "security_groups": groups })
}
