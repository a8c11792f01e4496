//! JD's route table: method + `/v1/regions/{region}/...` path (with `:verb` custom actions) → the
//! operation, the service whose credential scope must sign it, and the path's id. Paths follow the
//! jdcloud_sdk request classes (vm, disk, billing, vpc, zfs; renewal under `/v2/`).

/// One routed call: which operation, for which service, region and path id.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub action: &'static str,
    pub service: &'static str,
    pub region: String,
    pub id: Option<String>,
}

/// Match method + path against the operations the emulator serves.
pub fn route(method: &str, path: &str) -> Option<Route> {
    let path = percent_encoding::percent_decode_str(path).decode_utf8_lossy().into_owned();
    // The renewal service's requests are v2 (jdcloud_sdk 1.6.354 services/renewal/apis/*: version="v2").
    if let Some(rest) = path.strip_prefix("/v2/regions/") {
        let (region, tail) = rest.split_once('/')?;
        return match (method, tail) {
            ("PUT", "instances:autoRenewStatus") => {
                Some(Route { action: "setRenewal", service: "renewal", region: region.to_string(), id: None })
            }
            // 云监控 (jdcloud_sdk 1.6.354 services/monitor/apis/DescribeMetricDataRequest.py:
            // '/regions/{regionId}/metrics/{metric}/metricData', version v2; host monitor.jdcloud-api.com).
            ("GET", t) => match t.split('/').collect::<Vec<_>>().as_slice() {
                ["metrics", metric, "metricData"] if !metric.is_empty() => Some(Route {
                    action: "describeMetricData",
                    service: "monitor",
                    region: region.to_string(),
                    id: Some(metric.to_string()),
                }),
                _ => None,
            },
            _ => None,
        };
    }
    let rest = path.strip_prefix("/v1/regions/")?;
    let (region, tail) = rest.split_once('/')?;
    let segs: Vec<&str> = tail.split('/').collect();
    let (action, service, id) = match (method, segs.as_slice()) {
        ("POST", ["instances"]) => ("createInstances", "vm", None),
        ("GET", ["instances"]) => ("describeInstances", "vm", None),
        ("GET", ["instances", id]) => ("describeInstance", "vm", Some(*id)),
        ("DELETE", ["instances", id]) => ("deleteInstance", "vm", Some(*id)),
        ("GET", ["instancesCustomData"]) => ("describeInstancesCustomData", "vm", None),
        ("GET", ["instanceTypes"]) => ("describeInstanceTypes", "vm", None),
        ("POST", ["instances:modifyInstanceReleaseTime"]) => ("modifyInstanceReleaseTime", "vm", None),
        ("POST", ["instances", id]) if id.ends_with(":createImage") => {
            ("createImage", "vm", Some(id.trim_end_matches(":createImage")))
        }
        ("POST", ["keypairs:import"]) => ("importKeypair", "vm", None),
        ("GET", ["keypairs"]) => ("describeKeypairs", "vm", None),
        ("GET", ["images"]) => ("describeImages", "vm", None),
        ("POST", ["snapshots"]) => ("createSnapshot", "disk", None),
        ("GET", ["snapshots"]) => ("describeSnapshots", "disk", None),
        ("DELETE", ["snapshots", id]) => ("deleteSnapshot", "disk", Some(*id)),
        ("GET", ["disks"]) => ("describeDisks", "disk", None),
        ("DELETE", ["disks", id]) if !id.is_empty() => ("deleteDisk", "disk", Some(*id)),
        ("GET", ["elasticIps", ""]) => ("describeElasticIps", "vpc", None),
        ("DELETE", ["elasticIps", id]) if !id.is_empty() => ("deleteElasticIp", "vpc", Some(*id)),
        ("POST", ["snapshotPolicy"]) => ("createSnapshotPolicy", "disk", None),
        ("POST", ["snapshotPolicies:apply"]) => ("applySnapshotPolicies", "disk", None),
        ("POST", ["calculateTotalPrice"]) => ("calculateTotalPrice", "billing", None),
        // The bill's lines (issue 15: jdcloud_sdk 1.6.354 services/billing/apis/QueryBillDetailRequest.py
        // '/regions/{regionId}/billDetail:list', POST).
        ("POST", ["billDetail:list"]) => ("queryBillDetail", "billing", None),
        // The vpc service's collection paths end in `/` (jdcloud_sdk 1.6.354 services/vpc/apis/
        // CreateVpcRequest.py '/regions/{regionId}/vpcs/', and so on), which the SDK sends as is.
        ("POST", ["vpcs", ""]) => ("createVpc", "vpc", None),
        ("GET", ["vpcs", ""]) => ("describeVpcs", "vpc", None),
        ("DELETE", ["vpcs", id]) if !id.is_empty() => ("deleteVpc", "vpc", Some(*id)),
        ("POST", ["subnets", ""]) => ("createSubnet", "vpc", None),
        ("GET", ["subnets", ""]) => ("describeSubnets", "vpc", None),
        ("DELETE", ["subnets", id]) if !id.is_empty() => ("deleteSubnet", "vpc", Some(*id)),
        ("POST", ["networkSecurityGroups", ""]) => ("createNetworkSecurityGroup", "vpc", None),
        ("GET", ["networkSecurityGroups", ""]) => ("describeNetworkSecurityGroups", "vpc", None),
        ("POST", ["networkSecurityGroups", id]) if id.ends_with(":addNetworkSecurityGroupRules") => (
            "addNetworkSecurityGroupRules",
            "vpc",
            Some(id.trim_end_matches(":addNetworkSecurityGroupRules")),
        ),
        ("GET", ["networkSecurityGroups", id]) if !id.is_empty() => {
            ("describeNetworkSecurityGroup", "vpc", Some(*id))
        }
        ("DELETE", ["networkSecurityGroups", id]) if !id.is_empty() => {
            ("deleteNetworkSecurityGroup", "vpc", Some(*id))
        }
        // 云文件服务 (jdcloud_sdk 1.6.354 services/zfs/apis/*Request.py: '/regions/{regionId}/fileSystems',
        // '/regions/{regionId}/fileSystems/{fileSystemId}', '/regions/{regionId}/mountTargets',
        // '/regions/{regionId}/mountTargets/{mountTargetId}'; host zfs.jdcloud-api.com, scope `zfs`).
        ("POST", ["fileSystems"]) => ("createFileSystem", "zfs", None),
        ("GET", ["fileSystems"]) => ("describeFileSystems", "zfs", None),
        ("GET", ["fileSystems", id]) if !id.is_empty() => ("describeFileSystem", "zfs", Some(*id)),
        ("DELETE", ["fileSystems", id]) if !id.is_empty() => ("deleteFileSystem", "zfs", Some(*id)),
        ("POST", ["mountTargets"]) => ("createMountTarget", "zfs", None),
        ("GET", ["mountTargets"]) => ("describeMountTargets", "zfs", None),
        ("DELETE", ["mountTargets", id]) if !id.is_empty() => ("deleteMountTarget", "zfs", Some(*id)),
        _ => return None,
    };
    Some(Route { action, service, region: region.to_string(), id: id.map(str::to_string) })
}
