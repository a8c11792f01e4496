"""JD Cloud conformance: every vm, disk and billing operation the local cloud serves, driven through
the official jdcloud_sdk. Answers must build the SDK's own models (vm Instance/InstanceType/
InstanceTypeState, disk Disk/Snapshot/SnapshotPolicy, billing OrderPrice) — with jdcloud_sdk 1.6.354
every field must be one the model declares — and errors must reach the SDK's ErrorResponse with JD's
HTTP code and status word.

This file runs with jdcloud_sdk >= 1.6.96 (JDCLOUD3 signing, the .venv interpreter); test_jdcloud2.py
re-runs the same cases with 1.6.93 (JDCLOUD2 signing, the .venv-jd2 interpreter).

Uses the harness fixture ``sim`` (conftest.py: ``sim.url``, ``sim.admin``) of a running ``gpuctl sim``
that sells gpuctl-core's shipped catalog.
"""

import datetime as dt
import inspect
import time
import uuid

import pytest
from jdcloud_sdk.core import const
from jdcloud_sdk.core.config import Config
from jdcloud_sdk.core.credential import Credential
from jdcloud_sdk.services.billing.apis.CalculateTotalPriceRequest import CalculateTotalPriceParameters, CalculateTotalPriceRequest
from jdcloud_sdk.services.billing.client.BillingClient import BillingClient
from jdcloud_sdk.services.billing.models.OrderPrice import OrderPrice
from jdcloud_sdk.services.charge.models.Charge import Charge
from jdcloud_sdk.services.common.models.Filter import Filter
from jdcloud_sdk.services.disk.apis.ApplySnapshotPoliciesRequest import ApplySnapshotPoliciesParameters, ApplySnapshotPoliciesRequest
from jdcloud_sdk.services.disk.apis.CreateSnapshotPolicyRequest import CreateSnapshotPolicyParameters, CreateSnapshotPolicyRequest
from jdcloud_sdk.services.disk.apis.CreateSnapshotRequest import CreateSnapshotParameters, CreateSnapshotRequest
from jdcloud_sdk.services.disk.apis.DeleteSnapshotRequest import DeleteSnapshotParameters, DeleteSnapshotRequest
from jdcloud_sdk.services.disk.apis.DescribeSnapshotsRequest import DescribeSnapshotsParameters, DescribeSnapshotsRequest
from jdcloud_sdk.services.disk.client.DiskClient import DiskClient
from jdcloud_sdk.services.disk.models.Disk import Disk
from jdcloud_sdk.services.disk.models.Snapshot import Snapshot
from jdcloud_sdk.services.disk.models.SnapshotPolicy import SnapshotPolicy
from jdcloud_sdk.services.vm.apis.CreateImageRequest import CreateImageParameters, CreateImageRequest
from jdcloud_sdk.services.vm.apis.CreateInstancesRequest import CreateInstancesParameters, CreateInstancesRequest
from jdcloud_sdk.services.vm.apis.DeleteInstanceRequest import DeleteInstanceParameters, DeleteInstanceRequest
from jdcloud_sdk.services.vm.apis.DescribeInstanceRequest import DescribeInstanceParameters, DescribeInstanceRequest
from jdcloud_sdk.services.vm.apis.DescribeInstancesRequest import DescribeInstancesParameters, DescribeInstancesRequest
from jdcloud_sdk.services.vm.apis.DescribeInstanceTypesRequest import DescribeInstanceTypesParameters, DescribeInstanceTypesRequest
from jdcloud_sdk.services.vm.client.VmClient import VmClient
from jdcloud_sdk.services.vm.models.Instance import Instance
from jdcloud_sdk.services.vm.models.InstanceDiskAttachment import InstanceDiskAttachment
from jdcloud_sdk.services.vm.models.InstanceType import InstanceType
from jdcloud_sdk.services.vm.models.InstanceTypeState import InstanceTypeState

try:
    from jdcloud_sdk.services.vm.apis.ModifyInstanceReleaseTimeRequest import (
        ModifyInstanceReleaseTimeParameters,
        ModifyInstanceReleaseTimeRequest,
    )
except ImportError:  # jdcloud_sdk 1.6.93 predates the API; send it through the SDK's generic request
    from jdcloud_sdk.core.jdcloudrequest import JDCloudRequest

    class ModifyInstanceReleaseTimeRequest(JDCloudRequest):
        def __init__(self, parameters, header=None, version="v1"):
            super().__init__("/regions/{regionId}/instances:modifyInstanceReleaseTime", "POST", header, version)
            self.parameters = parameters

    class ModifyInstanceReleaseTimeParameters:
        def __init__(self, regionId):
            self.regionId, self.instanceIds, self.autoReleaseTime = regionId, None, None

        def setInstanceIds(self, instanceIds):
            self.instanceIds = instanceIds

        def setAutoReleaseTime(self, autoReleaseTime):
            self.autoReleaseTime = autoReleaseTime

# The documented test key pair the sim accepts without a config file (README "Local cloud").
AK = "JDCgpuctlSimJdcloudTestKey000000"
SK = "gpuctlSimJdcloudTestSecret000000"

REGION = "cn-north-1"
AZ = "cn-north-1a"
TYPE = "p.n1p40.3xlarge"  # catalogued for cn-north-1 (gpuctl-core data/instances.toml)
# The one JD type with a catalogued price (data/prices.toml): GCS 24 GB, ¥1.89/h in cn-central-xy1.
PRICED_TYPE, PRICED_REGION, PRICED_HOURLY = "gcs.classic.24g", "cn-central-xy1", 1.89

#: Which signing generation this file exercises; test_jdcloud2.py sets it to 2.
SIGNING = 3


def signing_generation():
    return 3 if hasattr(const, "JDCLOUD3_ALGORITHM") else 2




class Jd:
    """The three service clients against the sim, and the strictness of model checks."""

    def __init__(self, sim, ak=AK, sk=SK):
        host = sim.url.split("://", 1)[1]
        cred, cfg = Credential(ak, sk), Config(host, scheme="http")
        self.vm, self.disk, self.billing = VmClient(cred, cfg), DiskClient(cred, cfg), BillingClient(cred, cfg)
        # 1.6.354's models know every field the sim sends; 1.6.93's are older, so for them only the
        # fields they declare are checked.
        self.strict = signing_generation() == 3


@pytest.fixture
def jd(sim):
    if signing_generation() != SIGNING:
        pytest.skip(f"this file exercises JDCLOUD{SIGNING}; the installed jdcloud_sdk signs JDCLOUD{signing_generation()}")
    return Jd(sim)


def ok(resp):
    """The result of a successful call (the SDK leaves errors in resp.error, it does not raise)."""
    assert resp.error is None, f"{resp.error.code} {resp.error.status}: {resp.error.message}"
    assert resp.request_id
    return resp.result


def err(resp):
    assert resp.error is not None, f"expected an error, got {resp.result}"
    return resp.error.code, resp.error.status


def model(cls, data, strict):
    """Build the SDK model from the answer: strictly, every key must be a declared field."""
    declared = set(inspect.signature(cls.__init__).parameters) - {"self"}
    unknown = set(data) - declared
    if strict:
        assert not unknown, f"{cls.__name__} has no field(s) {sorted(unknown)}"
    return cls(**{k: v for k, v in data.items() if k in declared})


def sim_now(sim):
    """The sim's clock in Beijing time (tests may have moved it): the emulator judges times by it."""
    raw = sim.admin("GET", "/_sim/clock")["now"]
    return dt.datetime.fromisoformat(raw[:19] + "+00:00").astimezone(dt.timezone(dt.timedelta(hours=8)))


def create(jd, count=1, token=None, **spec):
    body = {"az": AZ, "instanceType": TYPE, "imageId": "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204", "name": "conformance"}
    body.update(spec)
    p = CreateInstancesParameters(REGION, body)
    p.setMaxCount(count)
    if token:
        p.setClientToken(token)
    return jd.vm.send(CreateInstancesRequest(p))


def describe(jd, instance_id):
    return jd.vm.send(DescribeInstanceRequest(DescribeInstanceParameters(REGION, instance_id)))


def wait_running(jd, instance_id, timeout=20.0):
    """Poll in real time (the sim judges signature times on its clock; moving it far would expire them)."""
    deadline = time.monotonic() + timeout
    while True:
        status = ok(describe(jd, instance_id))["instance"]["status"]
        if status == "running" or time.monotonic() > deadline:
            return status
        time.sleep(0.5)


def test_instance_types_show_stock(jd):
    p = DescribeInstanceTypesParameters(REGION)
    p.setFilters([Filter("instanceTypes", [TYPE])])
    result = ok(jd.vm.send(DescribeInstanceTypesRequest(p)))
    assert result["totalCount"] == 1
    it = model(InstanceType, result["instanceTypes"][0], jd.strict)
    assert it.instanceType == TYPE and it.cpu > 0 and it.memoryMB > 0
    states = [model(InstanceTypeState, s, jd.strict) for s in it.state]
    assert AZ in [s.az for s in states] and all(s.inStock is True for s in states)


def test_create_describe_release_delete(jd, sim):
    token = f"conf-{uuid.uuid4()}"
    tags = [{"key": "gpuctl:deployment", "value": "conformance"}]
    disks = [{"diskCategory": "cloud", "autoDelete": True, "cloudDiskSpec": {"diskType": "ssd.gp1", "diskSizeGB": 100}}]
    ids = ok(create(jd, 2, token, userTags=tags, dataDisks=disks))["instanceIds"]
    assert len(ids) == 2 and all(i.startswith("i-") for i in ids)
    # clientToken: same parameters → the same instances; other parameters → refused.
    assert ok(create(jd, 2, token, userTags=tags, dataDisks=disks))["instanceIds"] == ids
    assert err(create(jd, 3, token)) == (400, "INVALID_ARGUMENT")

    p = DescribeInstancesParameters(REGION)
    p.setFilters([Filter("instanceId", ids)])
    p.setPageNumber(1)
    p.setPageSize(20)
    listed = ok(jd.vm.send(DescribeInstancesRequest(p)))
    assert listed["totalCount"] == 2
    inst = model(Instance, listed["instances"][0], jd.strict)
    assert inst.instanceType == TYPE and inst.status in ("pending", "running") and inst.az == AZ
    assert inst.tags == tags
    system = model(InstanceDiskAttachment, inst.systemDisk, jd.strict)
    model(Disk, system.cloudDisk, jd.strict)
    model(Charge, inst.charge, jd.strict)
    assert model(Disk, inst.dataDisks[0]["cloudDisk"], jd.strict).diskSizeGB == 100

    assert wait_running(jd, ids[0]) == "running"
    release = (sim_now(sim) + dt.timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S")
    p = ModifyInstanceReleaseTimeParameters(REGION)
    p.setInstanceIds(ids)
    p.setAutoReleaseTime(release)
    ok(jd.vm.send(ModifyInstanceReleaseTimeRequest(p)))
    assert ok(describe(jd, ids[0]))["instance"]["autoReleaseTime"] == release
    p.setAutoReleaseTime("2000-01-01 00:00:00")
    assert err(jd.vm.send(ModifyInstanceReleaseTimeRequest(p))) == (400, "OUT_OF_RANGE")

    for i in ids:
        wait_running(jd, i)
        jd.vm.send(DeleteInstanceRequest(DeleteInstanceParameters(REGION, i)))
    assert err(describe(jd, ids[0])) == (404, "NOT_FOUND")


def test_images_snapshots_and_policies(jd, sim):
    iid = ok(create(jd))["instanceIds"][0]
    assert wait_running(jd, iid) == "running"
    disk_id = ok(describe(jd, iid))["instance"]["systemDisk"]["cloudDisk"]["diskId"]

    image = ok(jd.vm.send(CreateImageRequest(CreateImageParameters(REGION, iid, "golden-env"))))
    assert image["imageId"].startswith("img-")

    snap = ok(jd.disk.send(CreateSnapshotRequest(CreateSnapshotParameters(REGION, {"name": "before-tune", "diskId": disk_id}, str(uuid.uuid4())))))
    sid = snap["snapshotId"]
    p = DescribeSnapshotsParameters(REGION)
    p.setFilters([Filter("snapshotId", [sid])])
    found = ok(jd.disk.send(DescribeSnapshotsRequest(p)))
    s = model(Snapshot, found["snapshots"][0], jd.strict)
    assert (s.snapshotId, s.diskId, s.status in ("creating", "available")) == (sid, disk_id, True)
    ok(jd.disk.send(DeleteSnapshotRequest(DeleteSnapshotParameters(REGION, sid))))
    assert err(jd.disk.send(DeleteSnapshotRequest(DeleteSnapshotParameters(REGION, sid)))) == (404, "NOT_FOUND")

    effective = (sim_now(sim) + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S+08:00")
    policy = ok(jd.disk.send(CreateSnapshotPolicyRequest(CreateSnapshotPolicyParameters(REGION, "twice-a-day", 43200, effective, 7 * 86400, 1))))
    pol = model(SnapshotPolicy, policy, jd.strict)
    assert pol.id and pol.interval == 43200
    p = ApplySnapshotPoliciesParameters(REGION)
    p.setRelations([{"diskId": disk_id, "diskRegion": REGION, "policyId": pol.id, "op": 1}])
    applied = ok(jd.disk.send(ApplySnapshotPoliciesRequest(p)))
    assert [(r["diskId"], r["code"]) for r in applied["opResults"]] == [(disk_id, 0)]
    jd.vm.send(DeleteInstanceRequest(DeleteInstanceParameters(REGION, iid)))


def test_calculate_total_price_from_the_catalog(jd):
    p = CalculateTotalPriceParameters(PRICED_REGION, 1, 2)
    p.setOrderList([{"serviceCode": "vm", "region": PRICED_REGION, "billingType": 1, "timeSpan": 1, "timeUnit": 1, "count": 1,
                     # Formula.value is 用量, a quantity (billing/models/Formula.py), not the type's name.
                     "formula": [{"key": PRICED_TYPE, "value": 1, "number": 1}]}])
    price = model(OrderPrice, ok(jd.billing.send(CalculateTotalPriceRequest(p))), jd.strict)
    assert price.totalPrice == pytest.approx(2 * PRICED_HOURLY)
    # No discount configured in the sim: what is charged is the list price.
    assert price.discountedTotalPrice == pytest.approx(price.totalPrice)
    assert "as of" in price.remark




def test_auth_stock_out_and_throttling_errors(jd, sim):
    assert err(create(Jd(sim, sk="not-the-secret"))) == (401, "UNAUTHENTICATED")
    assert err(create(Jd(sim, ak="JDCnobodyKnowsThisKey"))) == (401, "UNAUTHENTICATED")
    knobs = sim.admin("GET", "/_sim/knobs")
    try:
        sim.admin("POST", "/_sim/stock_outs", {"provider": "jdcloud", "instance_type": TYPE, "zone": AZ})
        assert err(create(jd)) == (400, "FAILED_PRECONDITION")
        p = DescribeInstanceTypesParameters(REGION)
        p.setFilters([Filter("instanceTypes", [TYPE]), Filter("az", [AZ])])
        state = ok(jd.vm.send(DescribeInstanceTypesRequest(p)))["instanceTypes"][0]["state"]
        assert [(s["az"], s["inStock"]) for s in state] == [(AZ, False)]

        sim.admin("POST", "/_sim/rate_limits", {"provider": "jdcloud", "action": "describeInstanceTypes", "per_second": 0.001, "burst": 1})
        ok(jd.vm.send(DescribeInstanceTypesRequest(DescribeInstanceTypesParameters(REGION))))
        assert err(jd.vm.send(DescribeInstanceTypesRequest(DescribeInstanceTypesParameters(REGION)))) == (429, "RATE_LIMIT")
    finally:
        sim.admin("PUT", "/_sim/knobs", knobs)


def test_release_time_and_snapshot_policy_fire_on_the_sim_clock(jd, sim):
    iid = ok(create(jd))["instanceIds"][0]
    assert wait_running(jd, iid) == "running"
    disk_id = ok(describe(jd, iid))["instance"]["systemDisk"]["cloudDisk"]["diskId"]
    effective = (sim_now(sim) + dt.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%S+08:00")
    pol = ok(jd.disk.send(CreateSnapshotPolicyRequest(CreateSnapshotPolicyParameters(REGION, "clock", 43200, effective, 0, 1))))
    p = ApplySnapshotPoliciesParameters(REGION)
    p.setRelations([{"diskId": disk_id, "diskRegion": REGION, "policyId": pol["id"], "op": 1}])
    ok(jd.disk.send(ApplySnapshotPoliciesRequest(p)))
    p = ModifyInstanceReleaseTimeParameters(REGION)
    p.setInstanceIds([iid])
    p.setAutoReleaseTime((sim_now(sim) + dt.timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S"))
    ok(jd.vm.send(ModifyInstanceReleaseTimeRequest(p)))
    # The sim clock moves; signatures are judged on the wall clock, so the SDK keeps working.
    sim.admin("POST", "/_sim/clock", {"advance_seconds": 3 * 3600})
    assert err(describe(jd, iid)) == (404, "NOT_FOUND"), "deleted at its autoReleaseTime"
    q = DescribeSnapshotsParameters(REGION)
    q.setFilters([Filter("diskId", [disk_id])])
    snaps = ok(jd.disk.send(DescribeSnapshotsRequest(q)))["snapshots"]
    assert len(snaps) == 1, "the policy ran once (at +5 min) before the release at +2 h"


def test_describe_by_tag_key_without_values(jd):
    """`gpuctl sweep`'s filter: a TagFilter with a key and no values matches the key whatever its value."""
    from jdcloud_sdk.services.vm.models.TagFilter import TagFilter

    if not hasattr(DescribeInstancesParameters, "setTags"):
        pytest.skip("this jdcloud_sdk's describeInstances has no tags parameter (1.6.93 predates it)")
    key = f"gpuctl-deployment-{uuid.uuid4().hex[:8]}"
    made = []
    for value in ("a", "b"):
        made += ok(create(jd, userTags=[{"key": key, "value": value}]))["instanceIds"]
    ok(create(jd, userTags=[{"key": "team", "value": key}]))
    ok(create(jd))
    p = DescribeInstancesParameters(REGION)
    p.setTags([TagFilter(key=key)])
    p.setPageSize(100)
    found = ok(jd.vm.send(DescribeInstancesRequest(p)))
    assert found["totalCount"] == 2
    insts = [model(Instance, i, jd.strict) for i in found["instances"]]
    assert sorted(i.instanceId for i in insts) == sorted(made)
    assert sorted(t["value"] for i in insts for t in i.tags if t["key"] == key) == ["a", "b"]


def test_auto_network_through_the_sdks(jd, sim):
    """network = "auto" (issue 13) as jdcloud_sdk's vpc classes make it: createVpc and createSubnet
    with userTags found again by TagFilter, createNetworkSecurityGroup found by name in its VPC,
    addNetworkSecurityGroupRules, an instance launched into them, each piece refused deletion while in
    use, then deleted."""
    if not jd.strict:
        pytest.skip("jdcloud_sdk 1.6.93's vpc request classes predate userTags and TagFilter")
    from jdcloud_sdk.services.vpc.apis.AddNetworkSecurityGroupRulesRequest import (
        AddNetworkSecurityGroupRulesParameters, AddNetworkSecurityGroupRulesRequest)
    from jdcloud_sdk.services.vpc.apis.CreateNetworkSecurityGroupRequest import (
        CreateNetworkSecurityGroupParameters, CreateNetworkSecurityGroupRequest)
    from jdcloud_sdk.services.vpc.apis.CreateSubnetRequest import CreateSubnetParameters, CreateSubnetRequest
    from jdcloud_sdk.services.vpc.apis.CreateVpcRequest import CreateVpcParameters, CreateVpcRequest
    from jdcloud_sdk.services.vpc.apis.DeleteNetworkSecurityGroupRequest import (
        DeleteNetworkSecurityGroupParameters, DeleteNetworkSecurityGroupRequest)
    from jdcloud_sdk.services.vpc.apis.DeleteSubnetRequest import DeleteSubnetParameters, DeleteSubnetRequest
    from jdcloud_sdk.services.vpc.apis.DeleteVpcRequest import DeleteVpcParameters, DeleteVpcRequest
    from jdcloud_sdk.services.vpc.apis.DescribeNetworkSecurityGroupRequest import (
        DescribeNetworkSecurityGroupParameters, DescribeNetworkSecurityGroupRequest)
    from jdcloud_sdk.services.vpc.apis.DescribeNetworkSecurityGroupsRequest import (
        DescribeNetworkSecurityGroupsParameters, DescribeNetworkSecurityGroupsRequest)
    from jdcloud_sdk.services.vpc.apis.DescribeSubnetsRequest import DescribeSubnetsParameters, DescribeSubnetsRequest
    from jdcloud_sdk.services.vpc.apis.DescribeVpcsRequest import DescribeVpcsParameters, DescribeVpcsRequest
    from jdcloud_sdk.services.vpc.client.VpcClient import VpcClient
    from jdcloud_sdk.services.vpc.models.AddSecurityGroupRules import AddSecurityGroupRules
    from jdcloud_sdk.services.vpc.models.NetworkSecurityGroup import NetworkSecurityGroup
    from jdcloud_sdk.services.vpc.models.SecurityGroupRule import SecurityGroupRule
    from jdcloud_sdk.services.vpc.models.Subnet import Subnet
    from jdcloud_sdk.services.vpc.models.Tag import Tag
    from jdcloud_sdk.services.vpc.models.TagFilter import TagFilter
    from jdcloud_sdk.services.vpc.models.Vpc import Vpc

    host = sim.url.split("://", 1)[1]
    vpc = VpcClient(Credential(AK, SK), Config(host, scheme="http"))
    key = f"gpuctl-network-{uuid.uuid4().hex[:8]}"
    p = CreateVpcParameters(REGION, "gpuctl-t")
    p.setAddressPrefix("10.0.0.0/16")
    p.setUserTags([vars(Tag(key=key, value=AZ))])
    vpc_id = ok(vpc.send(CreateVpcRequest(p)))["vpcId"]
    assert vpc_id.startswith("vpc-")
    bad = CreateVpcParameters(REGION, "x" * 33)
    assert err(vpc.send(CreateVpcRequest(bad))) == (400, "INVALID_ARGUMENT"), "a name of more than 32 characters"
    p = DescribeVpcsParameters(REGION)
    p.setTags([vars(TagFilter(key=key, values=[AZ]))])
    found = ok(vpc.send(DescribeVpcsRequest(p)))
    assert [v["vpcId"] for v in found["vpcs"]] == [vpc_id]
    assert model(Vpc, found["vpcs"][0], True).addressPrefix == "10.0.0.0/16"

    p = CreateSubnetParameters(REGION, vpc_id, "gpuctl-t", "10.0.0.0/20")
    p.setUserTags([vars(Tag(key=key, value=AZ))])
    subnet = ok(vpc.send(CreateSubnetRequest(p)))["subnetId"]
    for block in ("10.0.8.0/24", "10.1.0.0/20"):
        assert err(vpc.send(CreateSubnetRequest(CreateSubnetParameters(REGION, vpc_id, "x", block)))) == (400, "INVALID_ARGUMENT"), block
    p = DescribeSubnetsParameters(REGION)
    p.setFilters([Filter("vpcId", [vpc_id])])
    p.setTags([vars(TagFilter(key=key, values=[AZ]))])
    listed = ok(vpc.send(DescribeSubnetsRequest(p)))
    assert [s["subnetId"] for s in listed["subnets"]] == [subnet]
    model(Subnet, listed["subnets"][0], True)

    sg = ok(vpc.send(CreateNetworkSecurityGroupRequest(CreateNetworkSecurityGroupParameters(REGION, vpc_id, "gpuctl-t"))))["networkSecurityGroupId"]
    rules = [vars(AddSecurityGroupRules(protocol=6, direction=0, addressPrefix="203.0.113.0/24", fromPort=22, toPort=22)),
             vars(AddSecurityGroupRules(protocol=300, direction=0, addressPrefix="10.0.0.0/16"))]
    rules = [{k: v for k, v in r.items() if v is not None} for r in rules]
    ok(vpc.send(AddNetworkSecurityGroupRulesRequest(AddNetworkSecurityGroupRulesParameters(REGION, sg, rules))))
    bad = [{"protocol": 42, "direction": 0, "addressPrefix": "10.0.0.0/16"}]
    assert err(vpc.send(AddNetworkSecurityGroupRulesRequest(AddNetworkSecurityGroupRulesParameters(REGION, sg, bad)))) == (400, "INVALID_ARGUMENT")
    group = ok(vpc.send(DescribeNetworkSecurityGroupRequest(DescribeNetworkSecurityGroupParameters(REGION, sg))))["networkSecurityGroup"]
    group = model(NetworkSecurityGroup, group, True)
    held = sorted((r.protocol, r.addressPrefix, r.fromPort) for r in (model(SecurityGroupRule, x, True) for x in group.securityGroupRules))
    assert held == [(6, "203.0.113.0/24", 22), (300, "10.0.0.0/16", 0)]
    p = DescribeNetworkSecurityGroupsParameters(REGION)
    p.setFilters([Filter("vpcId", [vpc_id]), Filter("networkSecurityGroupNames", ["gpuctl-t"])])
    assert [g["networkSecurityGroupId"] for g in ok(vpc.send(DescribeNetworkSecurityGroupsRequest(p)))["networkSecurityGroups"]] == [sg]

    nic = {"networkInterface": {"subnetId": subnet, "securityGroups": [sg]}}
    iid = ok(create(jd, primaryNetworkInterface=nic))["instanceIds"][0]
    inst = ok(describe(jd, iid))["instance"]
    assert inst["vpcId"] == vpc_id and inst["privateIpAddress"].startswith("10.0.")
    assert [g["groupId"] for g in inst["primaryNetworkInterface"]["networkInterface"]["securityGroups"]] == [sg]
    assert err(vpc.send(DeleteNetworkSecurityGroupRequest(DeleteNetworkSecurityGroupParameters(REGION, sg))))[1] == "FAILED_PRECONDITION"
    assert err(vpc.send(DeleteSubnetRequest(DeleteSubnetParameters(REGION, subnet))))[1] == "FAILED_PRECONDITION"
    assert err(vpc.send(DeleteVpcRequest(DeleteVpcParameters(REGION, vpc_id))))[1] == "FAILED_PRECONDITION"
    wait_running(jd, iid)
    ok(jd.vm.send(DeleteInstanceRequest(DeleteInstanceParameters(REGION, iid))))
    ok(vpc.send(DeleteNetworkSecurityGroupRequest(DeleteNetworkSecurityGroupParameters(REGION, sg))))
    ok(vpc.send(DeleteSubnetRequest(DeleteSubnetParameters(REGION, subnet))))
    ok(vpc.send(DeleteVpcRequest(DeleteVpcParameters(REGION, vpc_id))))
    p = DescribeVpcsParameters(REGION)
    p.setFilters([Filter("vpcIds", [vpc_id])])
    assert ok(vpc.send(DescribeVpcsRequest(p)))["totalCount"] == 0
