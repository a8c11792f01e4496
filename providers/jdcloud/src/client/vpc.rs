//! `network = "auto"` on JD Cloud (issue 13): the VPC, subnet and security group gpuctl makes with
//! the vpc service (jdcloud_sdk 1.6.354 `services/vpc/apis/`: CreateVpc, CreateSubnet,
//! CreateNetworkSecurityGroup, AddNetworkSecurityGroupRules), finds again and deletes.
//!
//! - The VPC and subnet carry gpuctl's `gpuctl-network` tag (`userTags`, vpc.Tag) and are found by it
//!   (`tags` TagFilter of DescribeVpcs / DescribeSubnets, the subnet also by `vpcId`).
//! - A JD security group takes no tags (CreateNetworkSecurityGroupParameters has none): gpuctl's is
//!   found by its name `gpuctl-<zone>` inside gpuctl's own tagged VPC (the `vpcId` and
//!   `networkSecurityGroupNames` filters of DescribeNetworkSecurityGroups).
//! - A JD rule's source is a CIDR block or a prefix list, never a group (AddSecurityGroupRules.py
//!   `addressPrefix`): "all traffic inside the group" is all traffic from the VPC's own block, which
//!   only gpuctl's instances use.
//! - No create takes a clientToken: the engine's find-before-create (and the re-run's find by tag)
//!   is what keeps a retried or killed run from making a second one.
//!
//! JD subnets are regional (CreateSubnetParameters has no zone), so one per zone's VPC is enough.

use gpuctl_cloud::cloud::{CloudError, NetKind, NetSpec, SshRules};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::services::Networks;
use gpuctl_cloud::Provider;
use serde_json::{json, Value};

use super::{filter_query, Call, Client};

fn vpc<'a>(action: &'a str, method: &'a str, path: &'a str) -> Call<'a> {
    Call { service: "vpc", version: crate::api::API_VERSION, action, method, path }
}

/// The collection path of a piece, as the request classes spell it (with the trailing `/`:
/// '/regions/{regionId}/vpcs/', '/subnets/', '/networkSecurityGroups/').
fn collection(kind: NetKind) -> &'static str {
    match kind {
        NetKind::Vpc => "vpcs/",
        NetKind::Subnet => "subnets/",
        NetKind::SecurityGroup => "networkSecurityGroups/",
    }
}

/// The describe call that finds `spec`'s piece: (action, query, answer list, id field).
pub(crate) fn find_call(spec: &NetSpec) -> (&'static str, Vec<(String, String)>, &'static str, &'static str) {
    let vpc_id = spec.vpc.clone().unwrap_or_default();
    let mut q = match spec.kind {
        NetKind::Vpc => Vec::new(),
        NetKind::Subnet => filter_query(&[("vpcId", vec![vpc_id])]),
        NetKind::SecurityGroup => {
            filter_query(&[("vpcId", vec![vpc_id]), ("networkSecurityGroupNames", vec![spec.name.clone()])])
        }
    };
    if spec.kind != NetKind::SecurityGroup {
        for (i, (k, v)) in spec.tags.iter().enumerate() {
            q.push((format!("tags.{}.key", i + 1), k.clone()));
            q.push((format!("tags.{}.values.1", i + 1), v.clone()));
        }
    }
    // "分页大小，默认为20，取值范围：[10,100]": a zone's piece is one item.
    q.extend([("pageNumber".to_string(), "1".to_string()), ("pageSize".to_string(), "10".to_string())]);
    match spec.kind {
        NetKind::Vpc => ("describeVpcs", q, "vpcs", "vpcId"),
        NetKind::Subnet => ("describeSubnets", q, "subnets", "subnetId"),
        NetKind::SecurityGroup => {
            ("describeNetworkSecurityGroups", q, "networkSecurityGroups", "networkSecurityGroupId")
        }
    }
}

/// The create call for `spec`: (action, body, id field).
pub(crate) fn create_call(spec: &NetSpec) -> (&'static str, Value, &'static str) {
    let tags: Vec<Value> = spec.tags.iter().map(|(k, v)| json!({ "key": k, "value": v })).collect();
    let region = &spec.region;
    match spec.kind {
        // vpcName / subnetName / networkSecurityGroupName: "不允许为空且不超过32字符" — `gpuctl-<zone>` is.
        NetKind::Vpc => (
            "createVpc",
            json!({
                "regionId": region, "vpcName": spec.name, "addressPrefix": spec.cidr,
                "description": "gpuctl: network = \"auto\"", "userTags": tags,
            }),
            "vpcId",
        ),
        NetKind::Subnet => (
            "createSubnet",
            json!({
                "regionId": region, "vpcId": spec.vpc, "subnetName": spec.name, "addressPrefix": spec.cidr,
                "description": "gpuctl: network = \"auto\"", "userTags": tags,
            }),
            "subnetId",
        ),
        NetKind::SecurityGroup => (
            "createNetworkSecurityGroup",
            json!({
                "regionId": region, "vpcId": spec.vpc, "networkSecurityGroupName": spec.name,
                "description": "gpuctl: SSH from ssh_from and all traffic inside the VPC",
            }),
            "networkSecurityGroupId",
        ),
    }
}

/// JD's protocol numbers (AddSecurityGroupRules.py: "300:All; 6:TCP; 17:UDP; 1:ICMP").
const ALL: i64 = 300;
const TCP: i64 = 6;

/// The rules `rules` asks for that `held` (the group's `securityGroupRules`) lacks, as
/// `networkSecurityGroupRuleSpecs` items: inbound tcp 22 from each `ssh_from` block, inbound
/// everything from the VPC's block `inside`, and outbound everything (JD's definitions do not say
/// what a new group lets out, so gpuctl asks for it: the boot environment fetches packages).
pub(crate) fn missing_rules(rules: &SshRules, inside: &str, held: &[Field]) -> Vec<Value> {
    let has = |direction: i64, protocol: i64, prefix: &str, port: Option<i64>| {
        held.iter().any(|r| {
            r.get("direction").value().as_i64() == Some(direction)
                && r.get("protocol").value().as_i64() == Some(protocol)
                && r.get("addressPrefix").text() == prefix
                && r.get("ruleAction").opt_text().is_none_or(|a| a == "ALLOW")
                && port.is_none_or(|p| {
                    r.get("fromPort").value().as_i64() == Some(p)
                        && r.get("toPort").value().as_i64() == Some(p)
                })
        })
    };
    let mut want = Vec::new();
    for cidr in &rules.ssh_from {
        if !has(0, TCP, cidr, Some(22)) {
            want.push(json!({
                "protocol": TCP, "direction": 0, "ruleAction": "ALLOW", "addressPrefix": cidr,
                "fromPort": 22, "toPort": 22, "description": "gpuctl: ssh_from",
            }));
        }
    }
    // Ports are left out for protocol 300: "若protocol不是传输层协议，恒为0", and 0 is outside the
    // stated range 1-65535.
    if !has(0, ALL, inside, None) {
        want.push(json!({
            "protocol": ALL, "direction": 0, "ruleAction": "ALLOW", "addressPrefix": inside,
            "description": "gpuctl: inside the VPC",
        }));
    }
    if !has(1, ALL, "0.0.0.0/0", None) {
        want.push(json!({
            "protocol": ALL, "direction": 1, "ruleAction": "ALLOW", "addressPrefix": "0.0.0.0/0",
            "description": "gpuctl: outbound",
        }));
    }
    want
}

impl Networks for Client {
    const NET_PROVIDER: Provider = Provider::JdCloud;

    async fn find_net(&self, spec: &NetSpec) -> Result<Option<String>, CloudError> {
        let (action, q, list, id) = find_call(spec);
        let a = self.call(vpc(action, "GET", collection(spec.kind)), &spec.region, q, None).await?;
        Ok(a.get(list).items().iter().find_map(|x| x.get(id).opt_text()))
    }

    async fn create_net(&self, spec: &NetSpec) -> Result<String, CloudError> {
        let (action, body, id) = create_call(spec);
        let a =
            self.call(vpc(action, "POST", collection(spec.kind)), &spec.region, vec![], Some(body)).await?;
        a.get(id).text_required().map_err(|missing| {
            CloudError::bad_response(
                Provider::JdCloud,
                action,
                format!("{action} answered without an id ({missing})"),
            )
            .with_request_id(a.request_id.clone())
        })
    }

    async fn authorize_ssh(&self, region: &str, id: &str, rules: &SshRules) -> Result<(), CloudError> {
        let path = format!("networkSecurityGroups/{id}");
        let a = self.call(vpc("describeNetworkSecurityGroup", "GET", &path), region, vec![], None).await?;
        let group = a.get("networkSecurityGroup");
        let held = group.get("securityGroupRules").items();
        let vpc_id = group.get("vpcId").text();
        // The VPC's own block is the source of "inside" (a VPC made without one cannot say it).
        let q = filter_query(&[("vpcIds", vec![vpc_id.clone()])]);
        let v = self.call(vpc("describeVpcs", "GET", "vpcs/"), region, q, None).await?;
        let inside = v.get("vpcs").at(0).get("addressPrefix").opt_text().ok_or_else(|| {
            CloudError::bad_response(
                Provider::JdCloud,
                "describeVpcs",
                format!("VPC {vpc_id} of security group {id} has no address prefix to allow traffic from"),
            )
            .with_request_id(v.request_id.clone())
        })?;
        let add = missing_rules(rules, &inside, &held);
        if add.is_empty() {
            return Ok(());
        }
        let path = format!("networkSecurityGroups/{id}:addNetworkSecurityGroupRules");
        let body =
            json!({ "regionId": region, "networkSecurityGroupId": id, "networkSecurityGroupRuleSpecs": add });
        self.call(vpc("addNetworkSecurityGroupRules", "POST", &path), region, vec![], Some(body))
            .await
            .map(|_| ())
    }

    async fn delete_net(&self, region: &str, kind: NetKind, id: &str) -> Result<(), CloudError> {
        let action = match kind {
            NetKind::Vpc => "deleteVpc",
            NetKind::Subnet => "deleteSubnet",
            NetKind::SecurityGroup => "deleteNetworkSecurityGroup",
        };
        let path = format!("{}{id}", collection(kind));
        self.call(vpc(action, "DELETE", &path), region, vec![], None).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: NetKind) -> NetSpec {
        NetSpec {
            kind,
            region: "cn-north-1".into(),
            zone: "cn-north-1a".into(),
            name: "gpuctl-cn-north-1a".into(),
            vpc: Some("vpc-1".into()),
            cidr: Some("10.0.0.0/20".into()),
            tags: [("gpuctl-network".to_string(), "cn-north-1a".to_string())].into(),
            client_token: "unused-on-jd".into(),
        }
    }

    #[test]
    fn pieces_are_found_by_tag_or_by_name_in_the_vpc() {
        let (action, q, ..) = find_call(&spec(NetKind::Subnet));
        assert_eq!(action, "describeSubnets");
        for want in [
            ("filters.1.name", "vpcId"),
            ("filters.1.values.1", "vpc-1"),
            ("tags.1.key", "gpuctl-network"),
            ("tags.1.values.1", "cn-north-1a"),
        ] {
            assert!(q.contains(&(want.0.to_string(), want.1.to_string())), "{want:?} in {q:?}");
        }
        let (action, q, ..) = find_call(&spec(NetKind::SecurityGroup));
        assert_eq!(action, "describeNetworkSecurityGroups");
        assert!(q.contains(&("filters.2.values.1".into(), "gpuctl-cn-north-1a".into())), "{q:?}");
        assert!(!q.iter().any(|(k, _)| k.starts_with("tags.")), "a JD group has no tags: {q:?}");
        let (action, body, id) = create_call(&spec(NetKind::Vpc));
        assert_eq!((action, id), ("createVpc", "vpcId"));
        assert_eq!(body["userTags"], json!([{ "key": "gpuctl-network", "value": "cn-north-1a" }]));
        assert_eq!(body["addressPrefix"], "10.0.0.0/20");
        assert!(body.get("clientToken").is_none(), "CreateVpcParameters has no clientToken");
    }

    #[test]
    fn only_missing_rules_are_added_and_protocol_300_has_no_ports() {
        let rules = SshRules { ssh_from: vec!["203.0.113.0/24".into(), "198.51.100.7/32".into()] };
        let held = json!([
            { "direction": 0, "protocol": 6, "addressPrefix": "203.0.113.0/24", "fromPort": 22, "toPort": 22, "ruleAction": "ALLOW" },
            { "direction": 1, "protocol": 300, "addressPrefix": "0.0.0.0/0", "fromPort": 0, "toPort": 0, "ruleAction": "ALLOW" },
        ]);
        let add = missing_rules(&rules, "10.0.0.0/16", &Field::root("", &held).items());
        assert_eq!(add.len(), 2, "{add:?}");
        assert_eq!(
            (add[0]["addressPrefix"].as_str(), add[0]["fromPort"].as_i64()),
            (Some("198.51.100.7/32"), Some(22))
        );
        assert_eq!(
            (add[1]["protocol"].as_i64(), add[1]["addressPrefix"].as_str()),
            (Some(300), Some("10.0.0.0/16"))
        );
        assert!(add[1].get("fromPort").is_none());
        let mut all = held.as_array().unwrap().clone();
        all.extend(add);
        assert!(missing_rules(&rules, "10.0.0.0/16", &Field::root("", &Value::Array(all)).items()).is_empty());
    }
}
