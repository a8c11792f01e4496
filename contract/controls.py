#!/usr/bin/env python3
"""Negative controls for the wire contract check (issue 12): the check must pass what the clouds'
official SDKs send and fail what they would refuse.

1. For every action a gpuctl client sends, a request is built by the official SDK itself — the
   Tencent request model's own serialisation (`from_json_string` / `to_json_string`), the Alibaba
   request model's `to_map()` flattened by tea-openapi's `Utils.query` (what the ECS client puts on
   the wire), JD's request class through jdcloud_sdk's own `parameterbuilder` — no network. Each must
   pass check.py with no problem line.
2. Planted wrong requests (per cloud: an unknown parameter, a missing required one, an out-of-range
   value, a wrong type) must each fail with exactly the expected line.
3. The same requests, decoded the way the emulators decode them, with check.py's verdict, must equal
   the committed `contract/planted.json`: the fixture the Rust validator (crates/simkit/src/validate.rs,
   crates/simkit/tests/planted.rs) is held to, so the Python and Rust checkers agree.
   `controls.py --write-fixture` regenerates it.

Run with .venv-contract's python (the SDKs). Ends with `N passed, N failed`; exit 1 on any failure.
"""
import copy
import importlib
import json
import os
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check  # noqa: E402

UA = {"user-agent": "gpuctl/controls"}  # checked as client traffic


# ---------------------------------------------------------------- Tencent (request models' JSON)
# CFS is 2019-07-19 (tencentcloud-sdk-python-cfs 3.1.178); the other services 2017-03-12.
TC_VERSIONS = {"billing": ("v20180709", "2018-07-09"), "cfs": ("v20190719", "2019-07-19"),
               "monitor": ("v20180724", "2018-07-24")}


def tencent(action, service, body):
    module, version = TC_VERSIONS.get(service, ("v20170312", "2017-03-12"))
    models = importlib.import_module(f"tencentcloud.{service}.{module}.models")
    req = getattr(models, action + "Request")()
    req.from_json_string(json.dumps(body))
    wire = req.to_json_string()
    h = dict(UA, **{"x-tc-action": action, "x-tc-version": version, "x-tc-region": "ap-guangzhou",
                    "content-type": "application/json"})
    return {"method": "POST", "path": "/", "query": "", "headers": h, "body": wire}


TC = [
    ("RunInstances", "cvm", {
        "Placement": {"Zone": "ap-guangzhou-3"}, "InstanceType": "GN7.2XLARGE32", "ImageId": "img-pi0ii46r",
        "InstanceCount": 1, "InstanceName": "w-0", "ClientToken": "t" * 40,
        "SystemDisk": {"DiskType": "CLOUD_PREMIUM", "DiskSize": 50},
        "DataDisks": [{"DiskType": "CLOUD_PREMIUM", "DiskSize": 50, "DeleteWithInstance": True}],
        "InstanceChargeType": "SPOTPAID",
        "InstanceMarketOptions": {"MarketType": "spot",
                                  "SpotOptions": {"MaxPrice": "9.5", "SpotInstanceType": "one-time"}},
        "ActionTimer": {"TimerAction": "TerminateInstances", "ActionTime": "2026-12-01T10:00:00Z"},
        "TagSpecification": [{"ResourceType": "instance", "Tags": [{"Key": "k", "Value": "v"}]}],
        "VirtualPrivateCloud": {"VpcId": "vpc-1", "SubnetId": "subnet-1"}, "SecurityGroupIds": ["sg-1"],
        # the node agent's instance role (issue 15)
        "CamRoleName": "gpuctl-node-agent"}),
    # the node agent's idle stop (issue 15), sent with the role's credentials
    ("StopInstances", "cvm", {"InstanceIds": ["ins-1"], "StoppedMode": "STOP_CHARGING"}),
    ("InquiryPriceRunInstances", "cvm", {
        "Placement": {"Zone": "ap-guangzhou-3"}, "InstanceType": "GN7.2XLARGE32", "ImageId": "img-pi0ii46r",
        "InstanceChargeType": "PREPAID",
        "InstanceChargePrepaid": {"Period": 24, "RenewFlag": "NOTIFY_AND_MANUAL_RENEW"}}),
    ("DescribeInstances", "cvm", {"Offset": 0, "Limit": 100,
                                  "Filters": [{"Name": "tag:gpuctl-deployment", "Values": ["d"]}]}),
    ("TerminateInstances", "cvm", {"InstanceIds": ["ins-1", "ins-2"]}),
    ("DescribeZoneInstanceConfigInfos", "cvm", {"Filters": [{"Name": "zone", "Values": ["ap-guangzhou-3"]}]}),
    ("DescribeDisks", "cbs", {"Filters": [{"Name": "instance-id", "Values": ["ins-1"]}]}),
    ("DescribeSnapshots", "cbs", {"SnapshotIds": ["snap-1"]}),
    ("CreateSnapshot", "cbs", {"DiskId": "disk-1", "SnapshotName": "s"}),
    # login_key = { public_key = ... }: look the key up by its name, import it when absent.
    ("DescribeKeyPairs", "cvm", {"Filters": [{"Name": "key-name", "Values": ["gpuctl_0123456789abcdef"]}],
                                 "Limit": 100}),
    ("ImportKeyPair", "cvm", {"KeyName": "gpuctl_0123456789abcdef", "ProjectId": 0,
                              "PublicKey": "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDy"}),
    # image = "ubuntu-22.04": the region's public images, page by page.
    ("DescribeImages", "cvm", {"Filters": [{"Name": "image-type", "Values": ["PUBLIC_IMAGE"]}],
                               "Offset": 0, "Limit": 100}),
    # clone --from-snapshot / snapshot --image: a custom image, found again by its name.
    ("CreateImage", "cvm", {"InstanceId": "ins-1", "ImageName": "gpuctl-img-0123456789ab",
                            "ImageDescription": "gpuctl",
                            "TagSpecification": [{"ResourceType": "image",
                                                  "Tags": [{"Key": "gpuctl-token", "Value": "t" * 40}]}]}),
    ("DescribeImages", "cvm", {"Filters": [{"Name": "image-type", "Values": ["PRIVATE_IMAGE"]},
                                           {"Name": "image-name", "Values": ["gpuctl-img-0123456789ab"]}],
                               "Offset": 0, "Limit": 100}),
    # network = "auto": the zone's VPC, subnet and security group, found by tag, made, deleted.
    ("DescribeVpcs", "vpc", {"Filters": [{"Name": "tag:gpuctl-network", "Values": ["ap-guangzhou-3"]}],
                             "Offset": "0", "Limit": "100"}),
    ("CreateVpc", "vpc", {"VpcName": "gpuctl-ap-guangzhou-3", "CidrBlock": "10.0.0.0/16",
                          "Tags": [{"Key": "gpuctl-network", "Value": "ap-guangzhou-3"}]}),
    ("DeleteVpc", "vpc", {"VpcId": "vpc-1"}),
    ("DescribeSubnets", "vpc", {"Filters": [{"Name": "zone", "Values": ["ap-guangzhou-3"]}],
                                "Offset": "0", "Limit": "100"}),
    ("CreateSubnet", "vpc", {"VpcId": "vpc-1", "SubnetName": "gpuctl-ap-guangzhou-3", "CidrBlock": "10.0.0.0/20",
                             "Zone": "ap-guangzhou-3"}),
    ("DeleteSubnet", "vpc", {"SubnetId": "subnet-1"}),
    ("DescribeSecurityGroups", "vpc", {"Filters": [{"Name": "tag:gpuctl-network", "Values": ["ap-guangzhou-3"]}],
                                       "Offset": "0", "Limit": "100"}),
    ("CreateSecurityGroup", "vpc", {"GroupName": "gpuctl-ap-guangzhou-3", "GroupDescription": "gpuctl",
                                    "ProjectId": "0"}),
    ("DeleteSecurityGroup", "vpc", {"SecurityGroupId": "sg-1"}),
    ("DescribeSecurityGroupPolicies", "vpc", {"SecurityGroupId": "sg-1"}),
    # A cluster of HCC nodes (issue 14): its HPC cluster, found by name and zone (no ClientToken).
    ("DescribeHpcClusters", "cvm", {"Name": "d-train", "Zone": "ap-guangzhou-3", "Offset": 0, "Limit": 100}),
    ("CreateHpcCluster", "cvm", {"Zone": "ap-guangzhou-3", "Name": "d-train", "Remark": "gpuctl cluster placement",
                                 "TagSpecification": [{"ResourceType": "hpc",
                                                       "Tags": [{"Key": "gpuctl-deployment", "Value": "d"}]}]}),
    ("DeleteHpcClusters", "cvm", {"HpcClusterIds": ["hpc-0eixl8xv"]}),
    # A cluster's shared file system (issue 14): found by zone and tags, made with its mount target, deleted.
    ("DescribeCfsFileSystems", "cfs", {"Offset": 0, "Limit": 10, "Filters": [{"Name": "Zone", "Values": ["ap-guangzhou-3"]}],
                                       "Tags": [{"TagKey": "gpuctl-deployment", "TagValue": "d"}]}),
    ("CreateCfsFileSystem", "cfs", {"Zone": "ap-guangzhou-3", "NetInterface": "VPC", "PGroupId": "pgroupbasic",
                                    "Protocol": "NFS", "StorageType": "SD", "VpcId": "vpc-1", "SubnetId": "subnet-1",
                                    "FsName": "d-train", "ClientToken": "t" * 40,
                                    "ResourceTags": [{"TagKey": "gpuctl-deployment", "TagValue": "d"}]}),
    ("DescribeCfsFileSystems", "cfs", {"FileSystemId": "cfs-ocakq8tt", "Offset": 0}),
    ("DescribeMountTargets", "cfs", {"FileSystemId": "cfs-ocakq8tt"}),
    ("DeleteCfsFileSystem", "cfs", {"FileSystemId": "cfs-ocakq8tt"}),
    # GPU utilization (issue 15): what providers/tencent/src/client/monitor.rs asks Cloud Monitor.
    ("GetMonitorData", "monitor", {"Namespace": "QCE/CVM", "MetricName": "GpuUtil", "Period": 60,
                                   "Instances": [{"Dimensions": [{"Name": "InstanceId", "Value": "ins-1"}]},
                                                 {"Dimensions": [{"Name": "InstanceId", "Value": "ins-2"}]}],
                                   "StartTime": "2026-12-05T02:00:00+08:00", "EndTime": "2026-12-05T08:00:00+08:00"}),
    ("CreateSecurityGroupPolicies", "vpc", {"SecurityGroupId": "sg-1", "SecurityGroupPolicySet": {"Ingress": [
        {"Protocol": "TCP", "Port": "22", "CidrBlock": "203.0.113.0/24", "Action": "ACCEPT"}]}}),
    # gpuctl cost (issue 15): a month's bill lines, 300 a page (tencentcloud-sdk-python-billing 3.1.177).
    ("DescribeBillDetail", "billing", {"Offset": 300, "Limit": 300, "Month": "2026-12",
                                       "Context": "2026-12-300"}),
    # gpuctl sweep (issue 15): what providers/tencent/src/client/leftover.rs lists and deletes.
    ("DescribeDisks", "cbs", {"Filters": [{"Name": "disk-state", "Values": ["UNATTACHED"]}],
                              "Offset": 100, "Limit": 100}),
    ("TerminateDisks", "cbs", {"DiskIds": ["disk-1"]}),
    ("DescribeAddresses", "vpc", {"Filters": [{"Name": "address-status", "Values": ["UNBIND"]}],
                                  "Offset": 0, "Limit": 100}),
    ("ReleaseAddresses", "vpc", {"AddressIds": ["eip-1"]}),
    ("DescribeSnapshots", "cbs", {"Offset": 100, "Limit": 100}),
    ("DeleteSnapshots", "cbs", {"SnapshotIds": ["snap-1"]}),
    ("DescribeCfsFileSystems", "cfs", {"Offset": 10, "Limit": 10}),
]


# ---------------------------------------------------------------- Alibaba (to_map + Utils.query)
# The VPC actions come from their own SDK and carry its API version (alibabacloud_vpc20160428 client.py).
ALI_VPC = {"DescribeVSwitches", "CreateVpc", "DescribeVpcs", "DeleteVpc", "CreateVSwitch", "DeleteVSwitch",
           "DescribeEipAddresses", "ReleaseEipAddress"}
# The NAS actions likewise (alibabacloud_nas20170626 3.7.5 client.py: version 2017-06-26); no NAS request
# model has a RegionId (the region travels in the host nas.<region>.aliyuncs.com).
ALI_NAS = {"CreateFileSystem", "DescribeFileSystems", "CreateMountTarget", "DescribeMountTargets",
           "DeleteMountTarget", "DeleteFileSystem"}

# CloudMonitor (alibabacloud_cms20190101 4.0.10 client.py: version 2019-01-01, host metrics.<region>.aliyuncs.com).
ALI_CMS = {"DescribeMetricList"}
# BSS OpenAPI (alibabacloud_bssopenapi20171214 5.1.2 client.py: version 2017-12-14, host business.aliyuncs.com).
ALI_BSS = {"DescribeInstanceBill"}

def alibaba(action, wire_map):
    from alibabacloud_tea_openapi.utils import Utils
    if action in ALI_VPC:
        from alibabacloud_vpc20160428 import models
        version = "2016-04-28"
    elif action in ALI_BSS:
        from alibabacloud_bssopenapi20171214 import models
        version = "2017-12-14"
    elif action in ALI_CMS:
        from alibabacloud_cms20190101 import models
        version = "2019-01-01"
    elif action in ALI_NAS:
        from alibabacloud_nas20170626 import models
        version = "2017-06-26"
    else:
        from alibabacloud_ecs20140526 import models
        version = "2014-05-26"
    req = getattr(models, action + "Request")().from_map(wire_map)
    flat = Utils.query(req.to_map())
    h = dict(UA, **{"x-acs-action": action, "x-acs-version": version})
    return {"method": "POST", "path": "/", "query": urllib.parse.urlencode(sorted(flat.items())), "headers": h,
            "body": ""}


ALI = [
    ("RunInstances", {
        "RegionId": "cn-hangzhou", "ZoneId": "cn-hangzhou-i", "InstanceType": "ecs.gn7i-c8g1.2xlarge",
        "ImageId": "ubuntu_22_04_x64_20G_alibase_20240926.vhd", "InstanceName": "w-0", "Amount": 1,
        "ClientToken": "t" * 40, "VSwitchId": "vsw-1", "SecurityGroupIds": ["sg-1"],
        "SystemDisk": {"Category": "cloud_essd", "Size": "50"},
        "DataDisk": [{"Category": "cloud_essd", "Size": 50, "DeleteWithInstance": True}],
        "InstanceChargeType": "PrePaid", "Period": 1, "PeriodUnit": "Week",
        "Tag": [{"Key": "k", "Value": "v"}], "RamRoleName": "gpuctl-node-agent"}),
    # the node agent (issue 15): stop without charge, or release
    ("StopInstances", {"RegionId": "cn-hangzhou", "InstanceId": ["i-1"], "StoppedMode": "StopCharging"}),
    ("DeleteInstance", {"InstanceId": "i-1", "Force": True}),
    ("DescribeInstances", {"RegionId": "cn-hangzhou", "InstanceIds": "[\"i-1\"]", "MaxResults": 100,
                           "Tag": [{"Key": "k", "Value": "v"}]}),
    ("DescribeDisks", {"RegionId": "cn-hangzhou", "InstanceId": "i-1"}),
    ("DeleteInstances", {"RegionId": "cn-hangzhou", "InstanceId": ["i-1", "i-2"], "Force": True}),
    # What releasing a subscription sends first (the client's end_terms): InstanceIds a JSON array.
    ("ModifyInstanceChargeType", {"RegionId": "cn-hangzhou", "InstanceIds": "[\"i-1\"]",
                                  "InstanceChargeType": "PostPaid", "AutoPay": True}),
    ("CreateSnapshot", {"DiskId": "d-1", "SnapshotName": "s", "ClientToken": "t"}),
    ("DescribeSnapshots", {"RegionId": "cn-hangzhou", "SnapshotIds": "[\"s-1\"]"}),
    ("DescribePrice", {"RegionId": "cn-hangzhou", "ResourceType": "instance",
                       "InstanceType": "ecs.gn7i-c8g1.2xlarge", "PriceUnit": "Month", "Period": 1,
                       "SystemDisk": {"Category": "cloud_essd"}}),
    ("DescribeAvailableResource", {"RegionId": "cn-hangzhou", "DestinationResource": "InstanceType",
                                   "ZoneId": "cn-hangzhou-i", "InstanceChargeType": "PostPaid"}),
    # network = "default": the zone's default vSwitch (VPC API), then a security group of its VPC.
    ("DescribeVSwitches", {"RegionId": "cn-hangzhou", "ZoneId": "cn-hangzhou-i", "IsDefault": True,
                           "PageNumber": 1, "PageSize": 50}),
    ("DescribeSecurityGroups", {"RegionId": "cn-hangzhou", "VpcId": "vpc-1", "NetworkType": "vpc",
                                "MaxResults": 10}),
    ("DescribeKeyPairs", {"RegionId": "cn-hangzhou", "KeyPairName": "gpuctl_0123456789abcdef"}),
    ("ImportKeyPair", {"RegionId": "cn-hangzhou", "KeyPairName": "gpuctl_0123456789abcdef",
                       "PublicKeyBody": "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAA"}),
    ("DescribeImages", {"RegionId": "cn-hangzhou", "ImageOwnerAlias": "system", "PageNumber": 1,
                        "PageSize": 100}),
    ("CreateImage", {"RegionId": "cn-hangzhou", "InstanceId": "i-1", "ImageName": "gpuctl-img-0123456789ab",
                     "Description": "gpuctl", "ClientToken": "t" * 40,
                     "Tag": [{"Key": "gpuctl-token", "Value": "t" * 40}]}),
    ("DescribeImages", {"RegionId": "cn-hangzhou", "ImageOwnerAlias": "self", "ImageName": "gpuctl-img-0123456789ab",
                        "Status": "ALL", "PageNumber": 1, "PageSize": 100}),
    # network = "auto" (issue 13): what the client sends to find, make and delete the zone's network.
    ("CreateVpc", {"RegionId": "cn-hangzhou", "ClientToken": "gpuctl-vpc-cn-hangzhou-i-0123456789ab",
                   "VpcName": "gpuctl-cn-hangzhou-i", "CidrBlock": "10.0.0.0/16", "Description": "gpuctl",
                   "Tag": [{"Key": "gpuctl-network", "Value": "cn-hangzhou-i"}]}),
    ("DescribeVpcs", {"RegionId": "cn-hangzhou", "PageNumber": 1, "PageSize": 50,
                      "Tag": [{"Key": "gpuctl-network", "Value": "cn-hangzhou-i"}]}),
    ("DeleteVpc", {"RegionId": "cn-hangzhou", "VpcId": "vpc-1"}),
    ("CreateVSwitch", {"RegionId": "cn-hangzhou", "ClientToken": "t", "VpcId": "vpc-1", "ZoneId": "cn-hangzhou-i",
                       "CidrBlock": "10.0.0.0/20", "VSwitchName": "gpuctl-cn-hangzhou-i",
                       "Tag": [{"Key": "gpuctl-network", "Value": "cn-hangzhou-i"}]}),
    ("DeleteVSwitch", {"RegionId": "cn-hangzhou", "VSwitchId": "vsw-1"}),
    ("CreateSecurityGroup", {"RegionId": "cn-hangzhou", "ClientToken": "t", "VpcId": "vpc-1",
                             "SecurityGroupName": "gpuctl-cn-hangzhou-i", "SecurityGroupType": "normal",
                             "Description": "gpuctl", "Tag": [{"Key": "gpuctl-network", "Value": "cn-hangzhou-i"}]}),
    ("AuthorizeSecurityGroup", {"RegionId": "cn-hangzhou", "SecurityGroupId": "sg-1", "Permissions": [
        {"IpProtocol": "TCP", "PortRange": "22/22", "SourceCidrIp": "203.0.113.0/24", "Policy": "accept",
         "Description": "gpuctl: ssh_from"},
        {"IpProtocol": "ALL", "PortRange": "-1/-1", "SourceGroupId": "sg-1", "Policy": "accept"}]}),
    ("DescribeSecurityGroupAttribute", {"RegionId": "cn-hangzhou", "SecurityGroupId": "sg-1",
                                        "Direction": "ingress"}),
    ("DeleteSecurityGroup", {"RegionId": "cn-hangzhou", "SecurityGroupId": "sg-1"}),
    # A cluster's low-latency deployment set (issue 14): whether the type's family may join one, the set
    # found by its name and strategy, made, deleted (providers/alibaba/src/client/cluster.rs).
    ("DescribeDeploymentSetSupportedInstanceTypeFamily", {"RegionId": "cn-hangzhou", "Strategy": "LowLatency"}),
    ("DescribeDeploymentSets", {"RegionId": "cn-hangzhou", "DeploymentSetName": "d-train", "Strategy": "LowLatency",
                                "PageNumber": 1, "PageSize": 50}),
    ("CreateDeploymentSet", {"RegionId": "cn-hangzhou", "Strategy": "LowLatency", "DeploymentSetName": "d-train",
                             "Description": "gpuctl: the nodes of cluster d-train in cn-hangzhou-i",
                             "ClientToken": "gpuctl-0123456789abcdef0123456789abcdef01234567"}),
    ("DeleteDeploymentSet", {"RegionId": "cn-hangzhou", "DeploymentSetId": "ds-bp1frxuzdg87zh4pzqkc"}),
    # A cluster's shared file system (issue 14, the NAS API): found by type and tags (or by id), made,
    # its mount target in the cluster's vSwitch listed and made, both deleted.
    ("DescribeFileSystems", {"FileSystemType": "standard", "Tag": [{"Key": "gpuctl-deployment", "Value": "d"}],
                             "PageNumber": 1, "PageSize": 100}),
    ("CreateFileSystem", {"FileSystemType": "standard", "ProtocolType": "NFS", "StorageType": "Capacity",
                          "ZoneId": "cn-hangzhou-i", "Description": "d-train",
                          "ClientToken": "gpuctl-0123456789abcdef0123456789abcdef01234567",
                          "Tag": [{"Key": "gpuctl-deployment", "Value": "d"}]}),
    ("DescribeFileSystems", {"FileSystemId": "0b5c24a1b2", "PageNumber": 1, "PageSize": 100}),
    ("DescribeMountTargets", {"FileSystemId": "0b5c24a1b2", "PageNumber": 1, "PageSize": 100}),
    ("CreateMountTarget", {"FileSystemId": "0b5c24a1b2", "NetworkType": "Vpc", "VpcId": "vpc-1", "VSwitchId": "vsw-1",
                           "AccessGroupName": "DEFAULT_VPC_GROUP_NAME"}),
    ("DeleteMountTarget", {"FileSystemId": "0b5c24a1b2",
                           "MountTargetDomain": "0b5c24a1b2-wxy12.cn-hangzhou.nas.aliyuncs.com"}),
    ("DeleteFileSystem", {"FileSystemId": "0b5c24a1b2"}),
    # GPU utilization (issue 15): what providers/alibaba/src/client/monitor.rs asks CloudMonitor, a page at a time.
    ("DescribeMetricList", {"RegionId": "cn-hangzhou", "Namespace": "acs_ecs_dashboard",
                            "MetricName": "instance_gpu_gpu_usedutilization",
                            "Dimensions": '[{"instanceId":"i-1"},{"instanceId":"i-2"}]', "Period": "60",
                            "StartTime": "1796436000000", "EndTime": "1796457600000", "Length": "1440",
                            "NextToken": "1440"}),
    # gpuctl cost (issue 15): what providers/alibaba/src/client/bill.rs asks BSS, a page at a time.
    ("DescribeInstanceBill", {"BillingCycle": "2026-12", "Granularity": "MONTHLY", "MaxResults": 300,
                              "InstanceID": "i-1", "NextToken": "t"}),
    # gpuctl sweep (issue 15): what providers/alibaba/src/client/leftover.rs lists and deletes.
    ("DescribeDisks", {"RegionId": "cn-hangzhou", "Status": "Available", "MaxResults": 100, "NextToken": "n"}),
    ("DeleteDisk", {"DiskId": "d-1"}),
    ("DescribeEipAddresses", {"RegionId": "cn-hangzhou", "Status": "Available", "PageNumber": 1, "PageSize": 100}),
    ("ReleaseEipAddress", {"RegionId": "cn-hangzhou", "AllocationId": "eip-1"}),
    ("DescribeSnapshots", {"RegionId": "cn-hangzhou", "MaxResults": 100}),
    ("DeleteSnapshot", {"SnapshotId": "s-1"}),
    ("DescribeFileSystems", {"PageNumber": 2, "PageSize": 100}),
]


# ---------------------------------------------------------------- JD (parameterbuilder)
def jd_model(ref, **kw):
    svc, name = ref.split(".")
    return getattr(importlib.import_module(f"jdcloud_sdk.services.{svc}.models.{name}"), name)(**kw)


def jdcloud(service, action, required, optional=None):
    from jdcloud_sdk.core import parameterbuilder
    cls = action[0].upper() + action[1:]
    mod = importlib.import_module(f"jdcloud_sdk.services.{service}.apis.{cls}Request")
    params = getattr(mod, cls + "Parameters")(**required)
    for k, v in (optional or {}).items():
        getattr(params, "set" + k[0].upper() + k[1:])(v)
    req = getattr(mod, cls + "Request")(params)
    builder = (parameterbuilder.WithBodyBuilder() if req.method in ("POST", "PUT", "PATCH")
               else parameterbuilder.WithoutBodyBuilder())
    url = urllib.parse.urlsplit(builder.build_url(req, "http", "127.0.0.1"))
    h = dict(UA, **{"content-type": "application/json"})
    return {"method": req.method, "path": urllib.parse.unquote(url.path), "query": url.query, "headers": h,
            "body": builder.build_body(req)}


def jd_cases():
    disk = jd_model("vm.InstanceDiskAttachmentSpec", diskCategory="cloud", autoDelete=True,
                    cloudDiskSpec=jd_model("vm.CloudDiskSpec", diskType="ssd.gp1", diskSizeGB=50))
    spec = jd_model("vm.InstanceSpec", name="w-0", az="cn-north-1a", instanceType="p.n1v100.2xlarge",
                    imageId="img-ubuntu2204", systemDisk=disk, dataDisks=[disk],
                    charge=jd_model("charge.ChargeSpec", chargeMode="prepaid_by_duration", chargeUnit="year",
                                    chargeDuration=1),
                    primaryNetworkInterface=jd_model(
                        "vm.InstanceNetworkInterfaceAttachmentSpec",
                        networkInterface=jd_model("vm.NetworkInterfaceSpec", subnetId="subnet-1",
                                                  securityGroups=["sg-1"])),
                    userdata=[jd_model("vm.Userdata", key="launch-script", value="IyEvYmluL2Jhc2gK")],
                    userTags=[jd_model("vm.Tag", key="k", value="v")], keyNames=["key-1"])
    order = jd_model("billing.OrderPriceProtocol", serviceCode="vm", region="cn-north-1", az="cn-north-1a",
                     billingType=3, timeSpan=1, timeUnit=3, count=1,
                     formula=[jd_model("billing.Formula", key="instanceType", value=1)])
    f = [jd_model("common.Filter", name="instanceId", values=["i-1", "i-2"])]
    return [
        ("createInstances", jdcloud("vm", "createInstances", {"regionId": "cn-north-1", "instanceSpec": spec},
                                    {"maxCount": 1, "clientToken": "t" * 40})),
        ("describeInstances", jdcloud("vm", "describeInstances", {"regionId": "cn-north-1"},
                                      {"filters": f, "pageNumber": 1, "pageSize": 100})),
        ("describeInstance", jdcloud("vm", "describeInstance", {"regionId": "cn-north-1", "instanceId": "i-1"})),
        ("deleteInstance", jdcloud("vm", "deleteInstance", {"regionId": "cn-north-1", "instanceId": "i-1"})),
        ("describeInstanceTypes", jdcloud("vm", "describeInstanceTypes", {"regionId": "cn-north-1"},
                                          {"filters": f})),
        ("modifyInstanceReleaseTime", jdcloud("vm", "modifyInstanceReleaseTime", {"regionId": "cn-north-1"},
                                              {"instanceIds": ["i-1"], "autoReleaseTime": "2026-12-01 10:00:00"})),
        ("createSnapshot", jdcloud("disk", "createSnapshot", {
            "regionId": "cn-north-1", "clientToken": "t",
            "snapshotSpec": jd_model("disk.SnapshotSpec", name="s", diskId="vol-1")})),
        ("describeSnapshots", jdcloud("disk", "describeSnapshots", {"regionId": "cn-north-1"}, {"filters": f})),
        ("setRenewal", jdcloud("renewal", "setRenewal", {
            "regionId": "cn-north-1",
            "setRenewalParam": jd_model("renewal.SetRenewalParam", appCode="jcloud", serviceCode="vm",
                                        instanceIds="i-1", autoRenewStatus="CLOSE")})),
        ("describeKeypairs", jdcloud("vm", "describeKeypairs", {"regionId": "cn-north-1"},
                                     {"filters": [jd_model("common.Filter", name="keyNames",
                                                           values=["gpuctl_0123456789abcdef"])]})),
        ("describeImages", jdcloud("vm", "describeImages", {"regionId": "cn-north-1"},
                                   {"imageSource": "public", "pageNumber": 1, "pageSize": 100})),
        ("importKeypair", jdcloud("vm", "importKeypair", {"regionId": "cn-north-1",
                                                          "keyName": "gpuctl_0123456789abcdef",
                                                          "publicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA"})),
        ("calculateTotalPrice", jdcloud("billing", "calculateTotalPrice",
                                        {"regionId": "cn-north-1", "cmd": 1, "packageCount": 1},
                                        {"orderList": [order]})),
        ("createImage", jdcloud("vm", "createImage", {"regionId": "cn-north-1", "instanceId": "i-1",
                                                      "name": "gpuctl-img-0123456789ab"},
                                {"description": "gpuctl"})),
        ("describeImages", jdcloud("vm", "describeImages", {"regionId": "cn-north-1"},
                                   {"ids": ["img-1"]})),
        # network = "auto" (issue 13): what providers/jdcloud/src/client/vpc.rs sends.
        ("createVpc", jdcloud("vpc", "createVpc", {"regionId": "cn-north-1", "vpcName": "gpuctl-cn-north-1a"},
                              {"addressPrefix": "10.0.0.0/16", "description": "gpuctl",
                               "userTags": [jd_model("vpc.Tag", key="gpuctl-network", value="cn-north-1a")]})),
        ("describeVpcs", jdcloud("vpc", "describeVpcs", {"regionId": "cn-north-1"},
                                 {"tags": [jd_model("vpc.TagFilter", key="gpuctl-network", values=["cn-north-1a"])],
                                  "pageNumber": 1, "pageSize": 10})),
        ("deleteVpc", jdcloud("vpc", "deleteVpc", {"regionId": "cn-north-1", "vpcId": "vpc-1"})),
        ("createSubnet", jdcloud("vpc", "createSubnet", {"regionId": "cn-north-1", "vpcId": "vpc-1",
                                                         "subnetName": "gpuctl-cn-north-1a",
                                                         "addressPrefix": "10.0.0.0/20"},
                                 {"userTags": [jd_model("vpc.Tag", key="gpuctl-network", value="cn-north-1a")]})),
        ("describeSubnets", jdcloud("vpc", "describeSubnets", {"regionId": "cn-north-1"},
                                    {"filters": [jd_model("common.Filter", name="vpcId", values=["vpc-1"])],
                                     "tags": [jd_model("vpc.TagFilter", key="gpuctl-network", values=["cn-north-1a"])]})),
        ("deleteSubnet", jdcloud("vpc", "deleteSubnet", {"regionId": "cn-north-1", "subnetId": "subnet-1"})),
        ("createNetworkSecurityGroup", jdcloud("vpc", "createNetworkSecurityGroup", {
            "regionId": "cn-north-1", "vpcId": "vpc-1", "networkSecurityGroupName": "gpuctl-cn-north-1a"})),
        ("describeNetworkSecurityGroups", jdcloud("vpc", "describeNetworkSecurityGroups", {"regionId": "cn-north-1"},
                                                  {"filters": [jd_model("common.Filter", name="vpcId", values=["vpc-1"])]})),
        ("describeNetworkSecurityGroup", jdcloud("vpc", "describeNetworkSecurityGroup", {
            "regionId": "cn-north-1", "networkSecurityGroupId": "sg-1"})),
        ("addNetworkSecurityGroupRules", jdcloud("vpc", "addNetworkSecurityGroupRules", {
            "regionId": "cn-north-1", "networkSecurityGroupId": "sg-1",
            "networkSecurityGroupRuleSpecs": [
                jd_model("vpc.AddSecurityGroupRules", protocol=6, direction=0, addressPrefix="203.0.113.0/24",
                         fromPort=22, toPort=22, ruleAction="ALLOW"),
                jd_model("vpc.AddSecurityGroupRules", protocol=300, direction=0, addressPrefix="10.0.0.0/16")]})),
        ("deleteNetworkSecurityGroup", jdcloud("vpc", "deleteNetworkSecurityGroup", {
            "regionId": "cn-north-1", "networkSecurityGroupId": "sg-1"})),
        # A cluster's shared file system (issue 14, 云文件服务 zfs): what providers/jdcloud/src/client/cluster.rs
        # sends to find it by name, make it and its one mount target, and delete both.
        ("describeFileSystems", jdcloud("zfs", "describeFileSystems", {"regionId": "cn-north-1"},
                                        {"filters": [jd_model("common.Filter", name="name", values=["d-train"])],
                                         "pageNumber": 1, "pageSize": 100})),
        ("createFileSystem", jdcloud("zfs", "createFileSystem", {
            "regionId": "cn-north-1", "name": "d-train",
            "description": "gpuctl shared file system d-train (gpuctl-deployment=d)",
            "clientToken": "gpuctl0123456789abcdef0123456789abcdef01234567486ea853d6980e6d"}, {"fileSystemType": "std1"})),
        ("describeFileSystem", jdcloud("zfs", "describeFileSystem", {"regionId": "cn-north-1",
                                                                     "fileSystemId": "fs-5dhzqbe8fq"})),
        ("describeMountTargets", jdcloud("zfs", "describeMountTargets", {"regionId": "cn-north-1"},
                                         {"filters": [jd_model("common.Filter", name="fileSystemId",
                                                               values=["fs-5dhzqbe8fq"])],
                                          "pageNumber": 1, "pageSize": 100})),
        ("createMountTarget", jdcloud("zfs", "createMountTarget", {
            "regionId": "cn-north-1", "fileSystemId": "fs-5dhzqbe8fq", "subnetId": "subnet-1", "vpcId": "vpc-1",
            "clientToken": "gpuctl0123456789abcdef0123456789abcdef01234567moe7216f6dec5001c2"})),
        ("deleteMountTarget", jdcloud("zfs", "deleteMountTarget", {"regionId": "cn-north-1",
                                                                   "mountTargetId": "mt-0dk5lnh2rv"})),
        ("deleteFileSystem", jdcloud("zfs", "deleteFileSystem", {"regionId": "cn-north-1",
                                                                 "fileSystemId": "fs-5dhzqbe8fq"})),
        # gpuctl cost (issue 15): what providers/jdcloud/src/client/bill.rs asks for a month, a page at a time.
        ("queryBillDetail", jdcloud("billing", "queryBillDetail",
                                    {"regionId": "cn-north-1", "startTime": "2026-12-01 00:00:00",
                                     "endTime": "2026-12-31 23:59:59"},
                                    {"pageIndex": 2, "pageSize": 1000, "resourceIds": ["i-1"]})),
        # GPU utilization (issue 15): what providers/jdcloud/src/client/monitor.rs asks 云监控, per VM.
        ("describeMetricData", jdcloud("monitor", "describeMetricData",
                                       {"regionId": "cn-north-1", "metric": "vm.gpu.util.gpu", "resourceId": "i-1"},
                                       {"serviceCode": "vm", "startTime": "2026-12-05T02:00:00+0800",
                                        "endTime": "2026-12-05T08:00:00+0800", "aggrType": "avg",
                                        "downSampleType": "avg"})),
        # gpuctl sweep (issue 15): what providers/jdcloud/src/client/leftover.rs lists and deletes.
        ("describeDisks", jdcloud("disk", "describeDisks", {"regionId": "cn-north-1"},
                                  {"filters": [jd_model("common.Filter", name="status", values=["available"])],
                                   "pageNumber": 1, "pageSize": 100})),
        ("deleteDisk", jdcloud("disk", "deleteDisk", {"regionId": "cn-north-1", "diskId": "vol-1"})),
        ("describeElasticIps", jdcloud("vpc", "describeElasticIps", {"regionId": "cn-north-1"},
                                       {"filters": [jd_model("common.Filter", name="status",
                                                             values=["NOT_ASSOCIATED"])],
                                        "pageNumber": 2, "pageSize": 100})),
        ("deleteElasticIp", jdcloud("vpc", "deleteElasticIp", {"regionId": "cn-north-1", "elasticIpId": "fip-1"})),
        ("describeSnapshots", jdcloud("disk", "describeSnapshots", {"regionId": "cn-north-1"},
                                      {"pageNumber": 1, "pageSize": 100})),
        ("deleteSnapshot", jdcloud("disk", "deleteSnapshot", {"regionId": "cn-north-1", "snapshotId": "snapshot-1"})),
        ("describeFileSystems", jdcloud("zfs", "describeFileSystems", {"regionId": "cn-north-1"},
                                        {"pageNumber": 1, "pageSize": 100})),
    ]


# ---------------------------------------------------------------- planted faults
def with_json(rec, edit):
    r = copy.deepcopy(rec)
    b = json.loads(r["body"])
    edit(b)
    r["body"] = json.dumps(b)
    return r


def with_query(rec, edit):
    r = copy.deepcopy(rec)
    q = dict(urllib.parse.parse_qsl(r["query"]))
    edit(q)
    r["query"] = urllib.parse.urlencode(q)
    return r


def planted(sdk):
    tc = sdk[("tencent", "RunInstances")]
    tc_price = sdk[("tencent", "InquiryPriceRunInstances")]
    ali = sdk[("alibaba", "RunInstances")]
    ali_snap = sdk[("alibaba", "CreateSnapshot")]
    jd = sdk[("jdcloud", "createInstances")]
    jd_snap = sdk[("jdcloud", "createSnapshot")]
    jd_price = sdk[("jdcloud", "calculateTotalPrice")]
    tsrc = "tccli/services/cvm/v20170312/api.json"
    asrc = "alibabacloud_ecs20140526/models"
    return [
        ("tencent unknown parameter", with_json(tc, lambda b: b.update(Bogus=1)),
         f"tencent RunInstances Bogus: unknown parameter ({tsrc} objects.RunInstancesRequest)"),
        ("tencent missing required", with_json(tc, lambda b: b["InstanceMarketOptions"]["SpotOptions"].pop("MaxPrice")),
         f"tencent RunInstances InstanceMarketOptions.SpotOptions.MaxPrice: required parameter missing ({tsrc} objects.SpotMarketOptions)"),
        ("tencent out of range", with_json(tc_price, lambda b: b["InstanceChargePrepaid"].update(Period=13)),
         f"tencent InquiryPriceRunInstances InstanceChargePrepaid.Period: is 13, allowed: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 24, 36, 48, 60 ({tsrc} objects.InstanceChargePrepaid.Period)"),
        ("tencent wrong type", with_json(tc, lambda b: b.update(InstanceCount="1")),
         f"tencent RunInstances InstanceCount: is a JSON string, the definition says integer ({tsrc})"),
        ("alibaba unknown parameter", with_query(ali, lambda q: q.update(Bogus="1")),
         f"alibaba RunInstances Bogus: unknown parameter ({asrc}/_run_instances_request.py RunInstancesRequest)"),
        ("alibaba missing required", with_query(ali_snap, lambda q: q.pop("DiskId")),
         f"alibaba CreateSnapshot DiskId: required parameter missing ({asrc}/_create_snapshot_request.py CreateSnapshotRequest)"),
        ("alibaba out of range", with_query(ali, lambda q: q.update(Period="5")),
         f"alibaba RunInstances Period: is 5 with PeriodUnit=Week, allowed: 1, 2, 3, 4 ({asrc}/_run_instances_request.py RunInstancesRequest.period)"),
        ("alibaba wrong type", with_query(ali, lambda q: q.update(Amount="one")),
         f"alibaba RunInstances Amount: is 'one', not an integer ({asrc}/_run_instances_request.py RunInstancesRequest.amount)"),
        ("jdcloud unknown parameter", with_json(jd, lambda b: b["instanceSpec"].update(bogus=1)),
         "jdcloud createInstances instanceSpec.bogus: unknown parameter (jdcloud_sdk/services/vm/apis/CreateInstancesRequest.py vm.InstanceSpec)"),
        ("jdcloud missing required", with_json(jd_snap, lambda b: b["snapshotSpec"].pop("diskId")),
         "jdcloud createSnapshot snapshotSpec.diskId: required parameter missing (jdcloud_sdk/services/disk/apis/CreateSnapshotRequest.py disk.SnapshotSpec)"),
        ("jdcloud out of range", with_json(jd, lambda b: b["instanceSpec"]["charge"].update(chargeDuration=4)),
         "jdcloud createInstances instanceSpec.charge.chargeDuration: is 4 with instanceSpec.charge.chargeUnit=year, allowed: 1, 2, 3 (jdcloud_sdk/services/charge/models/ChargeSpec.py chargeDuration)"),
        ("jdcloud wrong type", with_json(jd_price, lambda b: b["orderList"][0]["formula"][0].update(value="p.n1v100.2xlarge")),
         "jdcloud calculateTotalPrice orderList[].formula[].value: is a JSON string, the definition says number (jdcloud_sdk/services/billing/models/Formula.py value (用量: a usage quantity))"),
        # The facts of shared/reference/cloud-apis.md section 5 that the e2e traffic may not exercise:
        # the rules that catch them, shown on requests the SDKs built.
        ("jdcloud boot script in metadata", with_json(jd, lambda b: b["instanceSpec"].update(
            metadata=[{"key": "user-data", "value": "I2Nsb3VkLWNvbmZpZwo="}], userdata=None)),
         "jdcloud createInstances instanceSpec.metadata[].key: is 'user-data': metadata is only readable through the metadata service, never run; a boot script goes in instanceSpec.userdata with key launch-script (Userdata.py) (jdcloud_sdk/services/vm/models/InstanceSpec.py metadata, userdata)"),
        # A JD rule for all protocols carries no ports: 0 is outside the stated 1-65535.
        ("jdcloud all-protocol rule with port 0", with_json(sdk[("jdcloud", "addNetworkSecurityGroupRules")],
                                                             lambda b: b["networkSecurityGroupRuleSpecs"][1].update(fromPort=0)),
         "jdcloud addNetworkSecurityGroupRules networkSecurityGroupRuleSpecs[].fromPort: is 0, out of range [1, 65535] (jdcloud_sdk/services/vpc/models/AddSecurityGroupRules.py fromPort)"),
        ("alibaba a 10-month term", with_query(ali, lambda q: q.update(PeriodUnit="Month", Period="10")),
         f"alibaba RunInstances Period: is 10 with PeriodUnit=Month, allowed: 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 24, 36, 48, 60 ({asrc}/_run_instances_request.py RunInstancesRequest.period)"),
        ("jdcloud a 12-month term", with_json(jd, lambda b: b["instanceSpec"]["charge"].update(chargeUnit="month", chargeDuration=12)),
         "jdcloud createInstances instanceSpec.charge.chargeDuration: is 12 with instanceSpec.charge.chargeUnit=month, allowed: 1, 2, 3, 4, 5, 6, 7, 8, 9 (jdcloud_sdk/services/charge/models/ChargeSpec.py chargeDuration)"),
        # Issue 14's actions: NAS takes no RegionId (the host says the region), a mount target needs its
        # NetworkType, JD lists file systems 10 to 100 a page and knows two file system types.
        ("alibaba NAS has no RegionId", with_query(sdk[("alibaba", "CreateFileSystem")],
                                                   lambda q: q.update(RegionId="cn-hangzhou")),
         "alibaba CreateFileSystem RegionId: unknown parameter (alibabacloud_nas20170626/models/_create_file_system_request.py CreateFileSystemRequest)"),
        ("alibaba mount target without its network type", with_query(sdk[("alibaba", "CreateMountTarget")],
                                                                     lambda q: q.pop("NetworkType")),
         "alibaba CreateMountTarget NetworkType: required parameter missing (alibabacloud_nas20170626/models/_create_mount_target_request.py CreateMountTargetRequest)"),
        ("alibaba deployment set delete without its id", with_query(sdk[("alibaba", "DeleteDeploymentSet")],
                                                                    lambda q: q.pop("DeploymentSetId")),
         f"alibaba DeleteDeploymentSet DeploymentSetId: required parameter missing ({asrc}/_delete_deployment_set_request.py DeleteDeploymentSetRequest)"),
        ("jdcloud file systems 5 a page", with_query(sdk[("jdcloud", "describeFileSystems")],
                                                     lambda q: q.update(pageSize="5")),
         "jdcloud describeFileSystems pageSize: is 5, out of range [10, 100] (jdcloud_sdk/services/zfs/apis/DescribeFileSystemsRequest.py DescribeFileSystemsParameters.pageSize)"),
        ("jdcloud unknown file system type", with_json(sdk[("jdcloud", "createFileSystem")],
                                                       lambda b: b.update(fileSystemType="gp2")),
         "jdcloud createFileSystem fileSystemType: is 'gp2', allowed: gp1, std1 (jdcloud_sdk/services/zfs/apis/CreateFileSystemRequest.py CreateFileSystemParameters.fileSystemType)"),
        ("jdcloud file system without its description", with_json(sdk[("jdcloud", "createFileSystem")],
                                                                  lambda b: b.pop("description")),
         "jdcloud createFileSystem description: required parameter missing (jdcloud_sdk/services/zfs/apis/CreateFileSystemRequest.py CreateFileSystemParameters.description)"),
        # GPU utilization (issue 15): a query without its namespace, a period CloudMonitor does not offer,
        # a time interval 云监控 does not know.
        ("tencent monitor query without its namespace", with_json(sdk[("tencent", "GetMonitorData")],
                                                                  lambda b: b.pop("Namespace")),
         "tencent GetMonitorData Namespace: required parameter missing (tccli/services/monitor/v20180724/api.json objects.GetMonitorDataRequest)"),
        ("alibaba a 5-minute CloudMonitor period", with_query(sdk[("alibaba", "DescribeMetricList")],
                                                              lambda q: q.update(Period="300")),
         "alibaba DescribeMetricList Period: is '300', allowed: 15, 60, 900, 3600 (alibabacloud_cms20190101/models/_describe_metric_list_request.py DescribeMetricListRequest.period)"),
        ("jdcloud a 2-hour time interval", with_query(sdk[("jdcloud", "describeMetricData")],
                                                      lambda q: q.update(timeInterval="2h")),
         "jdcloud describeMetricData timeInterval: is '2h', allowed: 1h, 6h, 12h, 1d, 3d, 7d, 14d (jdcloud_sdk/services/monitor/apis/DescribeMetricDataRequest.py DescribeMetricDataParameters.timeInterval)"),
        ("tencent bill page over 300", with_json(sdk[("tencent", "DescribeBillDetail")], lambda b: b.update(Limit=301)),
         "tencent DescribeBillDetail Limit: is 301, out of range [1, 300] (tccli/services/billing/v20180709/api.json objects.DescribeBillDetailRequest.Limit)"),
        ("jdcloud bill page over 1000", with_json(sdk[("jdcloud", "queryBillDetail")],
                                                  lambda b: b.update(pageSize=1001)),
         "jdcloud queryBillDetail pageSize: is 1001, out of range [1, 1000] (jdcloud_sdk/services/billing/apis/QueryBillDetailRequest.py QueryBillDetailParameters.pageSize)"),
        ("alibaba bill page over 300", with_query(sdk[("alibaba", "DescribeInstanceBill")],
                                                  lambda q: q.update(MaxResults="301")),
         "alibaba DescribeInstanceBill MaxResults: is 301, out of range [1, 300] (alibabacloud_bssopenapi20171214/models/_describe_instance_bill_request.py DescribeInstanceBillRequest.max_results)"),
        ("alibaba auto-release on a subscription", with_query(ali, lambda q: q.update(AutoReleaseTime="2026-12-01T10:00:00Z")),
         f"alibaba RunInstances AutoReleaseTime: applies only when InstanceChargeType is PostPaid, sent with InstanceChargeType=PrePaid ({asrc}/_run_instances_request.py RunInstancesRequest.auto_release_time)"),
        # gpuctl sweep (issue 15): a disk return names its disks, EIP and elastic-IP pages have their ceilings.
        ("tencent disk return without its disks", with_json(sdk[("tencent", "TerminateDisks")], lambda b: b.pop("DiskIds")),
         "tencent TerminateDisks DiskIds: required parameter missing (tccli/services/cbs/v20170312/api.json objects.TerminateDisksRequest)"),
        ("alibaba EIPs 101 a page", with_query(sdk[("alibaba", "DescribeEipAddresses")], lambda q: q.update(PageSize="101")),
         "alibaba DescribeEipAddresses PageSize: is 101, out of range [1, 100] (alibabacloud_vpc20160428/models/_describe_eip_addresses_request.py DescribeEipAddressesRequest.page_size)"),
        # The node agent (issue 15): a stop mode the definitions do not list.
        ("tencent stop mode misspelt", with_json(sdk[("tencent", "StopInstances")], lambda b: b.update(StoppedMode="STOP")),
         "tencent StopInstances StoppedMode: is 'STOP', allowed: KEEP_CHARGING, STOP_CHARGING (tccli/services/cvm/v20170312/api.json objects.StopInstancesRequest.StoppedMode)"),
        ("alibaba stop mode misspelt", with_query(sdk[("alibaba", "StopInstances")], lambda q: q.update(StoppedMode="Economical")),
         "alibaba StopInstances StoppedMode: is 'Economical', allowed: StopCharging, KeepCharging (alibabacloud_ecs20140526/models/_stop_instances_request.py StopInstancesRequest.stopped_mode)"),
        ("jdcloud elastic IPs 200 a page", with_query(sdk[("jdcloud", "describeElasticIps")], lambda q: q.update(pageSize="200")),
         "jdcloud describeElasticIps pageSize: is 200, out of range [10, 100] (jdcloud_sdk/services/vpc/apis/DescribeElasticIpsRequest.py DescribeElasticIpsParameters.pageSize)"),
    ]


def problems(rec, schema):
    cloud, action, spec, params, probs = check.identify(rec, schema)
    if spec is not None and params is not None:
        check.check_object(check.root_node(spec), params, "", params, probs)
    return (cloud, action), probs.lines


def decoded(rec, schema):
    """What the validator gets from an emulator: a JSON tree, or flattened pairs (with the index base);
    JD's path parameters join the parameters as check.py joins them."""
    cloud, action, spec, _, _ = check.identify(rec, schema)
    query = check.form_pairs(rec.get("query", ""))
    path_params = []
    if cloud == "jdcloud":
        rx = "^" + check.re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/:]+)", check.re.escape(spec["path"])) + "$"
        path_params = [(k, urllib.parse.unquote(v)) for k, v in check.re.match(rx, rec["path"]).groupdict().items()]
    # A body is JSON for every method that has one, as check.py and the emulators read it (JD's
    # setRenewal is a PUT: jdcloud_sdk 1.6.354 services/renewal/apis/SetRenewalRequest.py).
    if rec["method"] in ("POST", "PUT", "PATCH") and rec["body"].strip().startswith("{"):
        tree = json.loads(rec["body"])
        for k, v in path_params:
            tree.setdefault(k, v)
        return {"cloud": cloud, "action": action, "json": tree}
    pairs = query + (check.form_pairs(rec["body"]) if "x-www-form-urlencoded" in
                     rec["headers"].get("content-type", "") else [])
    if cloud == "alibaba":
        pairs = [(k, v) for k, v in pairs if k not in check.ALI_COMMON]
    base = 0 if cloud == "tencent" else 1
    return {"cloud": cloud, "action": action, "flat": [list(p) for p in pairs + path_params], "base": base}


def fixture(cases, schema):
    out = []
    for name, rec in cases:
        case = dict(name=name, **decoded(rec, schema))
        case["lines"] = sorted(problems(rec, schema)[1])
        out.append(case)
    return json.dumps({"why": "written by contract/controls.py --write-fixture: requests as the emulators "
                              "decode them and check.py's verdict; crates/simkit/tests/planted.rs must agree",
                       "cases": out}, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def main():
    schema = check.load_schema(os.path.join(HERE, "schema"))
    built = [(("tencent", a), tencent(a, s, b)) for a, s, b in TC]
    built += [(("alibaba", a), alibaba(a, m)) for a, m in ALI]
    built += [(("jdcloud", a), r) for a, r in jd_cases()]
    passed = failed = 0
    sdk = {}
    for key, rec in built:
        got_key, lines = problems(rec, schema)
        if got_key != key:
            print(f"FAIL sdk {key}: identified as {got_key}")
            failed += 1
        elif lines:
            print(f"FAIL sdk {key[0]} {key[1]}: the SDK's own request was refused:\n  " + "\n  ".join(lines))
            failed += 1
        else:
            passed += 1
        sdk[key] = rec
    covered = {k for k, _ in built}
    for cloud in check.CLOUDS:
        for a in schema[cloud]["client_actions"]:
            if (cloud, a) not in covered:
                print(f"FAIL sdk {cloud} {a}: no SDK-built control for a client action")
                failed += 1
    for name, rec, expected in planted(sdk):
        _, lines = problems(rec, schema)
        if lines == [expected]:
            passed += 1
        else:
            print(f"FAIL planted {name}: expected exactly\n  {expected}\ngot\n  " + "\n  ".join(lines or ["(none)"]))
            failed += 1
    # The response check must fail a field the SDK's model does not have, on each cloud.
    bogus = {"tencent": {"DescribeInstances": ["InstanceSet[].Bogus"]},
             "alibaba": {"DescribePrice": ["PriceInfo.Price.Bogus"]},
             "jdcloud": {"calculateTotalPrice": ["bogus"]}}
    expected = [
        "tencent DescribeInstances response.InstanceSet[].Bogus: not in the SDK's response model (tccli/services/cvm/v20170312/api.json)",
        "alibaba DescribePrice response.PriceInfo.Price.Bogus: not in the SDK's response model (alibabacloud_ecs20140526/models/_describe_price_response_body.py)",
        "jdcloud calculateTotalPrice response.bogus: not in the SDK's response model (jdcloud_sdk/services/billing/apis/CalculateTotalPriceRequest.py)",
    ]
    got, _ = check.response_problems(schema, bogus)
    if got == expected:
        passed += 1
    else:
        print("FAIL planted response fields: expected\n  " + "\n  ".join(expected) + "\ngot\n  " + "\n  ".join(got))
        failed += 1
    cases = [(f"sdk {k[0]} {k[1]}", r) for k, r in built]
    cases += [(f"planted {name}", rec) for name, rec, _ in planted(sdk)]
    text = fixture(cases, schema)
    fixture_path = os.path.join(HERE, "planted.json")
    if "--write-fixture" in sys.argv[1:]:
        with open(fixture_path, "w", encoding="utf-8") as f:
            f.write(text)
    with open(fixture_path, encoding="utf-8") as f:
        if f.read() == text:
            passed += 1
        else:
            print("FAIL contract/planted.json is not what controls.py derives: run "
                  ".venv-contract/bin/python contract/controls.py --write-fixture and commit it")
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
