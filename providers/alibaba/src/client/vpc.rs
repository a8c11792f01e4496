//! The network an instance goes into. `network = "default"`: the zone's default vSwitch (VPC
//! DescribeVSwitches, API 2016-04-28) and a security group of its VPC (ECS DescribeSecurityGroups).
//! `network = "auto"` (issue 13, the `Networks` impl at the end): the VPC, vSwitch and security group
//! gpuctl makes (VPC CreateVpc / CreateVSwitch, ECS CreateSecurityGroup / AuthorizeSecurityGroup),
//! finds again by its `gpuctl-network` tag (the `Tag.N` filter of DescribeVpcs, DescribeVSwitches
//! and DescribeSecurityGroups) and deletes (DeleteSecurityGroup, DeleteVSwitch, DeleteVpc). Every GPU family gpuctl sells on ECS is VPC-only, and RunInstances
//! requires both for a VPC instance (alibabacloud_ecs20140526 7.11.8
//! `models/_run_instances_request.py`: `v_switch_id` "If you create a VPC-type ECS instance, you must
//! specify a vSwitch ID"; `security_group_id` "If you do not specify LaunchTemplateId or
//! LaunchTemplateName ..., the security group ID is required"), so the client looks them up before
//! the create, once per zone a run, and refuses — before anything is bought — in a zone without one.

use std::collections::HashMap;

use gpuctl_cloud::cloud::{CloudError, ErrorKind, NetKind, NetSpec, SshRules};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::services::Networks;
use gpuctl_cloud::{NetworkIds, Provider};

use super::ecs::{kv, tag_params};
use super::Client;
use crate::api::vpc::{DESCRIBE_SECURITY_GROUPS, DESCRIBE_VSWITCHES, VSWITCH_AVAILABLE, VSWITCH_PAGE_MAX};

/// What each (region, zone) was found to hold: its default network, or none. Lookups are serialized
/// by the lock, so a pool's concurrent creates in one zone ask the cloud once.
pub(super) type Defaults = tokio::sync::Mutex<HashMap<(String, String), Result<NetworkIds, &'static str>>>;

/// gpuctl's own code for a zone where the account has no default network.
pub const NO_DEFAULT_NETWORK: &str = "no-default-network";

/// The refusal, naming the zone and what to write in the spec instead.
fn no_default(region: &str, zone: &str, what: &str) -> CloudError {
    CloudError::new(
        Provider::Alibaba,
        DESCRIBE_VSWITCHES,
        ErrorKind::Invalid,
        NO_DEFAULT_NETWORK,
        format!(
            "the account has {what} in zone {zone} ({region}), so `network = \"default\"` cannot place an \
             instance there; nothing was created. Set the pool's network.alibaba = {{ vpc = \"vpc-…\", \
             subnet = \"vsw-…\", security_groups = [\"sg-…\"] }} (a vSwitch in {zone}), or create a \
             default vSwitch in {zone} (VPC CreateDefaultVSwitch)"
        ),
    )
}

/// A vSwitch instances can go into: the zone's default, ready (`Status` Available).
fn usable(v: &Field, zone: &str) -> bool {
    v.get("ZoneId").value() == zone
        && v.get("IsDefault").value().as_bool() == Some(true)
        && v.get("Status").value() == VSWITCH_AVAILABLE
}

impl Client {
    /// The zone's default network: its default vSwitch, that vSwitch's VPC and a security group in it.
    /// Found once per zone and kept (a failed lookup is not kept: it is asked again next time).
    pub(super) async fn default_network(&self, region: &str, zone: &str) -> Result<NetworkIds, CloudError> {
        let mut known = self.defaults.lock().await;
        let key = (region.to_string(), zone.to_string());
        let found = match known.get(&key) {
            Some(found) => found.clone(),
            None => {
                let found = self.look_up(region, zone).await?;
                known.insert(key, found.clone());
                found
            }
        };
        found.map_err(|what| no_default(region, zone, what))
    }

    /// The zone's default network, or what it lacks.
    async fn look_up(
        &self,
        region: &str,
        zone: &str,
    ) -> Result<Result<NetworkIds, &'static str>, CloudError> {
        // DescribeVSwitches pages by PageNumber/PageSize only (alibabacloud_vpc20160428 7.2.2
        // `models/_describe_vswitches_request.py`); a zone has one default vSwitch, so one page.
        let vswitches = page::all(Style::PageNumber, |at| async move {
            let p = vec![
                kv("ZoneId", zone),
                kv("IsDefault", "true"),
                kv("PageNumber", at.number()),
                kv("PageSize", VSWITCH_PAGE_MAX),
            ];
            let a = self.call_vpc(region, DESCRIBE_VSWITCHES, p).await?;
            let items = a
                .get("VSwitches")
                .get("VSwitch")
                .items()
                .iter()
                .filter(|v| usable(v, zone))
                .map(|v| (v.get("VSwitchId").text(), v.get("VpcId").text()))
                .collect::<Vec<_>>();
            Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
        })
        .await?;
        let Some((vswitch, vpc)) = vswitches.into_iter().find(|(id, vpc)| !id.is_empty() && !vpc.is_empty())
        else {
            return Ok(Err("no default vSwitch"));
        };
        // The default VPC's groups; a new account's default VPC holds one, the default group, and
        // the first listed is taken. MaxResults 10 is the model's least ("Maximum value: 100").
        let p = vec![kv("VpcId", &vpc), kv("NetworkType", "vpc"), kv("MaxResults", 10)];
        let a = self.call(region, DESCRIBE_SECURITY_GROUPS, p).await?;
        let group = a.get("SecurityGroups").get("SecurityGroup").at(0).get("SecurityGroupId").opt_text();
        Ok(group
            .map(|g| NetworkIds { vpc, subnet: vswitch, security_groups: vec![g] })
            .ok_or("no security group in its default vSwitch's VPC"))
    }
}

// ------------------------------------------------------------------------------ network = "auto"

/// How long a new VPC may stay `Pending` before gpuctl gives up on it, and how often it asks.
/// CreateVSwitch refuses a VPC that is not `Available` yet (`IncorrectVpcStatus`, the code
/// terraform-provider-alicloud waits out); the cloud takes seconds.
const VPC_READY_WAIT: std::time::Duration = std::time::Duration::from_secs(60);
const VPC_READY_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// One network call: to the VPC product (else ECS), the action and its parameters.
pub(crate) struct NetCall {
    vpc_product: bool,
    action: &'static str,
    params: Vec<(String, String)>,
}

fn net_call(vpc_product: bool, action: &'static str, params: Vec<(String, String)>) -> NetCall {
    NetCall { vpc_product, action, params }
}

/// The Describe* call that finds `spec`'s piece by tag (a vSwitch also by zone and VPC, a group by
/// VPC), the answer's list path and the id field.
pub(crate) fn find_call(spec: &NetSpec) -> (NetCall, [&'static str; 2], &'static str) {
    let mut p = tag_params(&spec.tags);
    let vpc = spec.vpc.clone().unwrap_or_default();
    match spec.kind {
        // DescribeVpcs and DescribeVSwitches page by PageNumber/PageSize, 50 at most; one zone's
        // tagged piece is one item.
        NetKind::Vpc => {
            p.extend([kv("PageNumber", 1), kv("PageSize", VSWITCH_PAGE_MAX)]);
            (net_call(true, "DescribeVpcs", p), ["Vpcs", "Vpc"], "VpcId")
        }
        NetKind::Subnet => {
            p.extend([
                kv("VpcId", vpc),
                kv("ZoneId", &spec.zone),
                kv("PageNumber", 1),
                kv("PageSize", VSWITCH_PAGE_MAX),
            ]);
            (net_call(true, DESCRIBE_VSWITCHES, p), ["VSwitches", "VSwitch"], "VSwitchId")
        }
        NetKind::SecurityGroup => {
            p.extend([kv("VpcId", vpc), kv("NetworkType", "vpc"), kv("MaxResults", 10)]);
            (
                net_call(false, DESCRIBE_SECURITY_GROUPS, p),
                ["SecurityGroups", "SecurityGroup"],
                "SecurityGroupId",
            )
        }
    }
}

/// The create call for `spec`, and the answer's id field.
pub(crate) fn create_call(spec: &NetSpec) -> (NetCall, &'static str) {
    // Every create takes a ClientToken (alibabacloud_vpc20160428 7.2.2 `_create_vpc_request.py`,
    // `_create_vswitch_request.py`; alibabacloud_ecs20140526 7.11.8 `_create_security_group_request.py`).
    let mut p = vec![kv("ClientToken", &spec.client_token)];
    p.extend(tag_params(&spec.tags));
    let vpc = spec.vpc.clone().unwrap_or_default();
    let cidr = spec.cidr.clone().unwrap_or_default();
    match spec.kind {
        NetKind::Vpc => {
            p.extend([
                kv("VpcName", &spec.name),
                kv("CidrBlock", cidr),
                kv("Description", "gpuctl: network = \"auto\""),
            ]);
            (net_call(true, "CreateVpc", p), "VpcId")
        }
        NetKind::Subnet => {
            p.extend([
                kv("VpcId", vpc),
                kv("ZoneId", &spec.zone),
                kv("CidrBlock", cidr),
                kv("VSwitchName", &spec.name),
            ]);
            (net_call(true, "CreateVSwitch", p), "VSwitchId")
        }
        // "2 to 128 characters ... must start with a letter" (SecurityGroupName): `gpuctl-<zone>` is.
        NetKind::SecurityGroup => {
            p.extend([
                kv("VpcId", vpc),
                kv("SecurityGroupName", &spec.name),
                kv("SecurityGroupType", "normal"),
                kv("Description", "gpuctl: SSH from ssh_from and all traffic inside the group"),
            ]);
            (net_call(false, "CreateSecurityGroup", p), "SecurityGroupId")
        }
    }
}

/// The ingress rules `rules` asks for that `held` (DescribeSecurityGroupAttribute's
/// `Permissions.Permission`) lacks, as `Permissions.N.*` parameters: tcp 22/22 from each CIDR, and
/// every protocol (`ALL`, `-1/-1`) from the group itself. alibabacloud_ecs20140526 7.11.8
/// `_authorize_security_group_request.py` `Permissions`: "Valid values for the array length: 1 to 100".
pub(crate) fn missing_rules(sg: &str, rules: &SshRules, held: &[Field]) -> Vec<(String, String)> {
    let has = |proto: &str, range: &str, cidr: Option<&str>, group: Option<&str>| {
        held.iter().any(|p| {
            p.get("IpProtocol").text().eq_ignore_ascii_case(proto)
                && p.get("PortRange").text() == range
                && p.get("Policy").text().eq_ignore_ascii_case("accept")
                && p.get("Direction").opt_text().is_none_or(|d| d == "ingress")
                && cidr.is_none_or(|c| p.get("SourceCidrIp").text() == c)
                && group.is_none_or(|g| p.get("SourceGroupId").text() == g)
        })
    };
    let mut wanted: Vec<[(&str, String); 4]> = Vec::new();
    for cidr in &rules.ssh_from {
        if !has("TCP", "22/22", Some(cidr), None) {
            wanted.push([
                ("IpProtocol", "TCP".into()),
                ("PortRange", "22/22".into()),
                ("SourceCidrIp", cidr.clone()),
                ("Description", "gpuctl: ssh_from".into()),
            ]);
        }
    }
    if !has("ALL", "-1/-1", None, Some(sg)) {
        wanted.push([
            ("IpProtocol", "ALL".into()),
            ("PortRange", "-1/-1".into()),
            ("SourceGroupId", sg.into()),
            ("Description", "gpuctl: inside the group".into()),
        ]);
    }
    wanted
        .into_iter()
        .enumerate()
        .flat_map(|(i, fields)| {
            let n = i + 1;
            fields
                .into_iter()
                .map(move |(k, v)| kv(format!("Permissions.{n}.{k}"), v))
                .chain([kv(format!("Permissions.{n}.Policy"), "accept")])
        })
        .collect()
}

impl Client {
    async fn send_to(&self, region: &str, c: NetCall) -> Result<gpuctl_cloud::send::Answer, CloudError> {
        if c.vpc_product {
            self.call_vpc(region, c.action, c.params).await
        } else {
            self.call(region, c.action, c.params).await
        }
    }

    /// Waits until DescribeVpcs shows the new VPC `Available`, within [`VPC_READY_WAIT`].
    async fn vpc_ready(&self, region: &str, id: &str) -> Result<(), CloudError> {
        let started = std::time::Instant::now();
        loop {
            let a = self.call_vpc(region, "DescribeVpcs", vec![kv("VpcId", id)]).await?;
            let status = a.get("Vpcs").get("Vpc").at(0).get("Status").text();
            if status == "Available" {
                return Ok(());
            }
            if started.elapsed() >= VPC_READY_WAIT {
                return Err(CloudError::new(
                    Provider::Alibaba,
                    "DescribeVpcs",
                    ErrorKind::Transient,
                    "IncorrectVpcStatus",
                    format!(
                        "VPC {id} is still `{status}` {} s after CreateVpc; the next run finds it by its tag and goes on",
                        VPC_READY_WAIT.as_secs()
                    ),
                )
                .with_request_id(a.request_id.clone()));
            }
            tokio::time::sleep(VPC_READY_POLL).await;
        }
    }
}

impl Networks for Client {
    const NET_PROVIDER: Provider = Provider::Alibaba;

    async fn find_net(&self, spec: &NetSpec) -> Result<Option<String>, CloudError> {
        let (call, [list, item], id) = find_call(spec);
        let a = self.send_to(&spec.region, call).await?;
        let found = a.get(list).get(item).items().iter().find_map(|x| x.get(id).opt_text());
        // A VPC found while still Pending (a run stopped right after creating it) is waited for too.
        if let (NetKind::Vpc, Some(vpc)) = (spec.kind, &found) {
            self.vpc_ready(&spec.region, vpc).await?;
        }
        Ok(found)
    }

    async fn create_net(&self, spec: &NetSpec) -> Result<String, CloudError> {
        let (call, id) = create_call(spec);
        let action = call.action;
        let a = self.send_to(&spec.region, call).await?;
        let made = a.get(id).text_required().map_err(|missing| {
            CloudError::bad_response(
                Provider::Alibaba,
                action,
                format!("{action} answered without an id ({missing})"),
            )
            .with_request_id(a.request_id.clone())
        })?;
        if spec.kind == NetKind::Vpc {
            self.vpc_ready(&spec.region, &made).await?;
        }
        Ok(made)
    }

    async fn authorize_ssh(&self, region: &str, id: &str, rules: &SshRules) -> Result<(), CloudError> {
        let p = vec![kv("SecurityGroupId", id), kv("Direction", "ingress")];
        let a = self.call(region, "DescribeSecurityGroupAttribute", p).await?;
        let held = a.get("Permissions").get("Permission").items();
        let add = missing_rules(id, rules, &held);
        if add.is_empty() {
            return Ok(());
        }
        let mut p = vec![kv("SecurityGroupId", id)];
        p.extend(add);
        self.call(region, "AuthorizeSecurityGroup", p).await.map(|_| ())
    }

    async fn delete_net(&self, region: &str, kind: NetKind, id: &str) -> Result<(), CloudError> {
        let (vpc_product, action, field) = match kind {
            NetKind::Vpc => (true, "DeleteVpc", "VpcId"),
            NetKind::Subnet => (true, "DeleteVSwitch", "VSwitchId"),
            NetKind::SecurityGroup => (false, "DeleteSecurityGroup", "SecurityGroupId"),
        };
        self.send_to(region, net_call(vpc_product, action, vec![kv(field, id)])).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(kind: NetKind) -> NetSpec {
        NetSpec {
            kind,
            region: "cn-hangzhou".into(),
            zone: "cn-hangzhou-i".into(),
            name: "gpuctl-cn-hangzhou-i".into(),
            vpc: Some("vpc-1".into()),
            cidr: Some("10.0.0.0/20".into()),
            tags: [("gpuctl-network".to_string(), "cn-hangzhou-i".to_string())].into(),
            client_token: "gpuctl-subnet-cn-hangzhou-i-0123456789ab".into(),
        }
    }

    #[test]
    fn a_vswitch_is_found_by_tag_zone_and_vpc_and_made_with_a_token() {
        let (NetCall { vpc_product, action, params: p }, ..) = find_call(&spec(NetKind::Subnet));
        assert!(vpc_product);
        assert_eq!(action, "DescribeVSwitches");
        for want in [
            ("Tag.1.Key", "gpuctl-network"),
            ("Tag.1.Value", "cn-hangzhou-i"),
            ("VpcId", "vpc-1"),
            ("ZoneId", "cn-hangzhou-i"),
        ] {
            assert!(p.contains(&kv(want.0, want.1)), "{want:?} in {p:?}");
        }
        let (NetCall { action, params: p, .. }, id) = create_call(&spec(NetKind::Subnet));
        assert_eq!((action, id), ("CreateVSwitch", "VSwitchId"));
        assert!(p.contains(&kv("ClientToken", "gpuctl-subnet-cn-hangzhou-i-0123456789ab")), "{p:?}");
        assert!(p.contains(&kv("CidrBlock", "10.0.0.0/20")));
        let (NetCall { vpc_product, action, .. }, _) = create_call(&spec(NetKind::SecurityGroup));
        assert_eq!((vpc_product, action), (false, "CreateSecurityGroup"), "a group is ECS's");
    }

    #[test]
    fn only_missing_rules_are_authorized() {
        let rules = SshRules { ssh_from: vec!["203.0.113.0/24".into(), "198.51.100.7/32".into()] };
        let held = json!([
            { "Direction": "ingress", "IpProtocol": "TCP", "PortRange": "22/22", "SourceCidrIp": "203.0.113.0/24", "Policy": "Accept" },
        ]);
        let items = Field::root("", &held).items();
        let add = missing_rules("sg-1", &rules, &items);
        assert!(add.contains(&kv("Permissions.1.SourceCidrIp", "198.51.100.7/32")), "{add:?}");
        assert!(add.contains(&kv("Permissions.2.SourceGroupId", "sg-1")), "{add:?}");
        assert!(add.contains(&kv("Permissions.2.PortRange", "-1/-1")));
        assert!(!add.iter().any(|(_, v)| v == "203.0.113.0/24"), "held already");
        let all = json!([
            { "IpProtocol": "TCP", "PortRange": "22/22", "SourceCidrIp": "203.0.113.0/24", "Policy": "Accept" },
            { "IpProtocol": "TCP", "PortRange": "22/22", "SourceCidrIp": "198.51.100.7/32", "Policy": "Accept" },
            { "IpProtocol": "ALL", "PortRange": "-1/-1", "SourceGroupId": "sg-1", "Policy": "Accept" },
        ]);
        assert!(missing_rules("sg-1", &rules, &Field::root("", &all).items()).is_empty());
    }
}
