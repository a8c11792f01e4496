//! Tencent VPC (vpc 2017-03-12): the VPC, subnet and security group gpuctl makes for
//! `network = "auto"` (issue 13). Parameters and fields: tccli 3.1.189.1
//! `tccli/services/vpc/v20170312/api.json` (CreateVpcRequest, CreateSubnetRequest,
//! CreateSecurityGroupRequest, CreateSecurityGroupPoliciesRequest, DescribeVpcsRequest,
//! DescribeSubnetsRequest, DescribeSecurityGroupsRequest, DescribeSecurityGroupPoliciesRequest,
//! Delete{Vpc,Subnet,SecurityGroup}Request). None of the creates takes a ClientToken, so the engine
//! looks each piece up by its `gpuctl-network` tag (`Filters` `tag:<key>`, documented on all three
//! Describe* calls) before creating it.

use gpuctl_cloud::cloud::{CloudError, NetKind, NetSpec, SshRules};
use gpuctl_cloud::services::Networks;
use gpuctl_cloud::Provider;
use serde_json::{json, Value};

use super::Client;
use crate::api::VPC;

/// The wire names of one kind: the Describe/Create/Delete actions, the answer's list and the id field.
struct Names {
    describe: &'static str,
    create: &'static str,
    delete: &'static str,
    set: &'static str,
    created: &'static str,
    id: &'static str,
}

fn names(kind: NetKind) -> Names {
    match kind {
        NetKind::Vpc => Names {
            describe: "DescribeVpcs",
            create: "CreateVpc",
            delete: "DeleteVpc",
            set: "VpcSet",
            created: "Vpc",
            id: "VpcId",
        },
        NetKind::Subnet => Names {
            describe: "DescribeSubnets",
            create: "CreateSubnet",
            delete: "DeleteSubnet",
            set: "SubnetSet",
            created: "Subnet",
            id: "SubnetId",
        },
        NetKind::SecurityGroup => Names {
            describe: "DescribeSecurityGroups",
            create: "CreateSecurityGroup",
            delete: "DeleteSecurityGroup",
            set: "SecurityGroupSet",
            created: "SecurityGroup",
            id: "SecurityGroupId",
        },
    }
}

/// `Tags: [{Key, Value}]` (api.json objects.Tag), in the tags' order.
fn tags(spec: &NetSpec) -> Value {
    spec.tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect()
}

/// The Describe* body that finds `spec`'s piece: every gpuctl tag as a `tag:<key>` filter (filters
/// AND together, "若存在多个过滤条件（Filter），Filter之间的关系为逻辑与（AND）关系"), plus the zone
/// and VPC for a subnet. Offset/Limit are strings in this API's definition.
pub(crate) fn find_body(spec: &NetSpec) -> Value {
    let mut filters: Vec<Value> =
        spec.tags.iter().map(|(k, v)| json!({ "Name": format!("tag:{k}"), "Values": [v] })).collect();
    if spec.kind == NetKind::Subnet {
        filters.push(json!({ "Name": "zone", "Values": [spec.zone] }));
        if let Some(vpc) = &spec.vpc {
            filters.push(json!({ "Name": "vpc-id", "Values": [vpc] }));
        }
    }
    json!({ "Filters": filters, "Offset": "0", "Limit": "100" })
}

pub(crate) fn create_body(spec: &NetSpec) -> Value {
    match spec.kind {
        NetKind::Vpc => json!({
            "VpcName": spec.name,
            "CidrBlock": spec.cidr.clone().unwrap_or_default(),
            "Tags": tags(spec),
        }),
        NetKind::Subnet => json!({
            "VpcId": spec.vpc.clone().unwrap_or_default(),
            "SubnetName": spec.name,
            "CidrBlock": spec.cidr.clone().unwrap_or_default(),
            "Zone": spec.zone,
            "Tags": tags(spec),
        }),
        // A Tencent security group belongs to a project, not to a VPC ("项目ID，默认0").
        NetKind::SecurityGroup => json!({
            "GroupName": spec.name,
            "GroupDescription": "gpuctl: SSH from ssh_from and all traffic inside the group",
            "ProjectId": "0",
            "Tags": tags(spec),
        }),
    }
}

/// The ingress policies `rules` asks for that `held` (DescribeSecurityGroupPolicies'
/// `SecurityGroupPolicySet.Ingress`) lacks: tcp/22 ACCEPT from each CIDR, and ALL ACCEPT from the
/// group itself (SecurityGroupPolicy.SecurityGroupId: "安全组实例ID"; Protocol ALL needs Port all,
/// "如果Protocol设置为ALL，则Port也需要设置为all").
pub(crate) fn missing_ingress(sg: &str, rules: &SshRules, held: &[Value]) -> Vec<Value> {
    let has = |proto: &str, port: &str, cidr: Option<&str>, group: Option<&str>| {
        held.iter().any(|p| {
            let s = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("");
            s("Protocol").eq_ignore_ascii_case(proto)
                && s("Port").eq_ignore_ascii_case(port)
                && s("Action") == "ACCEPT"
                && cidr.is_none_or(|c| s("CidrBlock") == c)
                && group.is_none_or(|g| s("SecurityGroupId") == g)
        })
    };
    let mut out = Vec::new();
    for cidr in &rules.ssh_from {
        if !has("TCP", "22", Some(cidr), None) {
            out.push(json!({
                "Protocol": "TCP", "Port": "22", "CidrBlock": cidr, "Action": "ACCEPT",
                "PolicyDescription": "gpuctl: ssh_from",
            }));
        }
    }
    if !has("ALL", "all", None, Some(sg)) {
        out.push(json!({
            "Protocol": "ALL", "Port": "all", "SecurityGroupId": sg, "Action": "ACCEPT",
            "PolicyDescription": "gpuctl: inside the group",
        }));
    }
    out
}

impl Networks for Client {
    const NET_PROVIDER: Provider = Provider::Tencent;

    async fn find_net(&self, spec: &NetSpec) -> Result<Option<String>, CloudError> {
        let n = names(spec.kind);
        let a = self.call(VPC, &spec.region, n.describe, find_body(spec)).await?;
        Ok(a.get(n.set).items().iter().find_map(|x| x.get(n.id).opt_text()))
    }

    async fn create_net(&self, spec: &NetSpec) -> Result<String, CloudError> {
        let n = names(spec.kind);
        let a = self.call(VPC, &spec.region, n.create, create_body(spec)).await?;
        a.get(n.created).get(n.id).text_required().map_err(|missing| {
            CloudError::bad_response(
                Provider::Tencent,
                n.create,
                format!("{} answered without an id ({missing})", n.create),
            )
            .with_request_id(a.request_id.clone())
        })
    }

    async fn authorize_ssh(&self, region: &str, id: &str, rules: &SshRules) -> Result<(), CloudError> {
        let a =
            self.call(VPC, region, "DescribeSecurityGroupPolicies", json!({ "SecurityGroupId": id })).await?;
        let held: Vec<Value> = a
            .get("SecurityGroupPolicySet")
            .get("Ingress")
            .items()
            .iter()
            .map(|p| p.value().clone())
            .collect();
        let add = missing_ingress(id, rules, &held);
        if add.is_empty() {
            return Ok(());
        }
        let body = json!({ "SecurityGroupId": id, "SecurityGroupPolicySet": { "Ingress": add } });
        self.call(VPC, region, "CreateSecurityGroupPolicies", body).await.map(|_| ())
    }

    async fn delete_net(&self, region: &str, kind: NetKind, id: &str) -> Result<(), CloudError> {
        let n = names(kind);
        self.call(VPC, region, n.delete, json!({ n.id: id })).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: NetKind) -> NetSpec {
        NetSpec {
            kind,
            region: "ap-guangzhou".into(),
            zone: "ap-guangzhou-3".into(),
            name: "gpuctl-ap-guangzhou-3".into(),
            vpc: Some("vpc-1".into()),
            cidr: Some("10.0.0.0/24".into()),
            tags: [("gpuctl-network".to_string(), "ap-guangzhou-3".to_string())].into(),
            client_token: "t".into(),
        }
    }

    #[test]
    fn a_subnet_is_found_by_tag_zone_and_vpc() {
        assert_eq!(
            find_body(&spec(NetKind::Subnet)),
            json!({ "Offset": "0", "Limit": "100", "Filters": [
                { "Name": "tag:gpuctl-network", "Values": ["ap-guangzhou-3"] },
                { "Name": "zone", "Values": ["ap-guangzhou-3"] },
                { "Name": "vpc-id", "Values": ["vpc-1"] },
            ] })
        );
    }

    #[test]
    fn only_missing_ingress_rules_are_added() {
        let rules = SshRules { ssh_from: vec!["203.0.113.0/24".into(), "198.51.100.7/32".into()] };
        let held = vec![
            json!({ "Protocol": "tcp", "Port": "22", "CidrBlock": "203.0.113.0/24", "Action": "ACCEPT" }),
        ];
        let add = missing_ingress("sg-1", &rules, &held);
        assert_eq!(add.len(), 2, "{add:?}");
        assert_eq!(add[0]["CidrBlock"], "198.51.100.7/32");
        assert_eq!(add[1]["SecurityGroupId"], "sg-1");
        let all: Vec<Value> = held.into_iter().chain(add).collect();
        assert!(missing_ingress("sg-1", &rules, &all).is_empty());
    }
}
