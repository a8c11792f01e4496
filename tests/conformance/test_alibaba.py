"""Alibaba ECS conformance: every operation the local cloud's ECS serves, driven through the official
SDK (alibabacloud_ecs20140526 + alibabacloud_tea_openapi), in its default ACS3 (V3) signing mode and in
its legacy RPC mode (``signature_algorithm='v2'``, HMAC-SHA1 ``Signature`` parameter). Each answer
must parse into the SDK's own models; errors must surface as the SDK's exceptions with ECS's codes.

Uses the harness fixture ``sim`` (conftest.py: ``sim.url``, ``sim.admin``) of a running ``gpuctl sim``
that sells gpuctl-core's shipped catalog.
"""

import datetime as dt
import json
import time
import uuid

import pytest
from alibabacloud_ecs20140526 import models as m
from alibabacloud_ecs20140526.client import Client
from alibabacloud_tea_openapi.exceptions import ClientException, ThrottlingException
from alibabacloud_tea_openapi.models import Config
from alibabacloud_vpc20160428 import models as vm
from alibabacloud_vpc20160428.client import Client as VpcClient

# The documented test key pair the sim accepts without a config file (README "Local cloud").
AK = "LTAI5gpuctlSimAlibabaTest"
SK = "gpuctlSimAlibabaTestSecret0000"

REGION = "cn-shanghai"
# A catalogued type with a catalogued hourly price in REGION (gpuctl-core data/prices.toml).
TYPE = "ecs.gn7i-c8g1.2xlarge"
HOURLY = 9.74
IMAGE = "ubuntu_22_04_x64_20G_alibase_20240926.vhd"






def client(sim, mode, ak=AK, sk=SK):
    host = sim.url.split("://", 1)[1]
    cfg = dict(access_key_id=ak, access_key_secret=sk, endpoint=host, protocol="http", region_id=REGION)
    if mode == "v2":
        cfg["signature_algorithm"] = "v2"
    return Client(Config(**cfg))


@pytest.fixture(params=["v3", "v2"])
def ecs(request, sim):
    return client(sim, request.param)


def wait_running(ecs, ids, timeout=20.0):
    """Poll as an SDK user would, in real time: the sim judges signature times against its clock,
    so moving that clock far would make every later signed call "expired"."""
    deadline = time.monotonic() + timeout
    while True:
        status = ecs.describe_instance_status(m.DescribeInstanceStatusRequest(region_id=REGION, instance_id=ids)).body
        seen = {s.instance_id: s.status for s in status.instance_statuses.instance_status}
        if all(seen.get(i) == "Running" for i in ids) or time.monotonic() > deadline:
            return seen
        time.sleep(0.5)


SIM = {}


@pytest.fixture(autouse=True)
def _remember_sim(sim):
    SIM["sim"] = sim


def sim_now():
    """The sim's clock (tests may have moved it): times the emulator judges are relative to it."""
    raw = SIM["sim"].admin("GET", "/_sim/clock")["now"]
    return dt.datetime.fromisoformat(raw[:19] + "+00:00")


def in_an_hour():
    return (sim_now() + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_vswitch(ecs, zone=None):
    """(zone, vSwitch id) to launch TYPE into, found as a user of the SDKs finds them: the first zone
    DescribeAvailableResource offers TYPE in (unless the caller names one), and the account's default
    vSwitch there through VPC DescribeVSwitches (alibabacloud-vpc20160428 7.2.2,
    models/_describe_vswitches_request.py: ZoneId, IsDefault). RunInstances must name a vSwitch: every
    GPU family is VPC-only (alibabacloud-ecs20140526 7.11.8, models/_run_instances_request.py
    v_switch_id: "If you create a VPC-type ECS instance, you must specify a vSwitch ID"), and the sim
    refuses a create without one with MissingParameter, as ECS does."""
    if zone is None:
        zone = ecs.describe_available_resource(m.DescribeAvailableResourceRequest(
            region_id=REGION, destination_resource="InstanceType", instance_type=TYPE)).body.available_zones.available_zone[0].zone_id
    host = SIM["sim"].url.split("://", 1)[1]
    vpc = VpcClient(Config(access_key_id=AK, access_key_secret=SK, endpoint=host, protocol="http", region_id=REGION))
    found = vpc.describe_vswitches(vm.DescribeVSwitchesRequest(region_id=REGION, zone_id=zone, is_default=True)).body
    switches = found.v_switches.v_switch
    assert len(switches) == 1 and switches[0].zone_id == zone, found.to_map()
    return zone, switches[0].v_switch_id


def run(ecs, amount=1, **kw):
    zone, vsw = default_vswitch(ecs, kw.pop("zone_id", None))
    req = m.RunInstancesRequest(region_id=REGION, instance_type=TYPE, image_id=IMAGE, amount=amount,
                                zone_id=zone, v_switch_id=vsw, **kw)
    return ecs.run_instances(req).body


def error_code(call):
    with pytest.raises(ClientException) as e:
        call()
    return e.value.code


def test_available_resource_and_price(ecs):
    avail = ecs.describe_available_resource(
        m.DescribeAvailableResourceRequest(region_id=REGION, destination_resource="InstanceType", instance_type=TYPE)
    ).body
    assert isinstance(avail, m.DescribeAvailableResourceResponseBody)
    zones = avail.available_zones.available_zone
    assert zones and all(z.region_id == REGION for z in zones)
    res = zones[0].available_resources.available_resource[0].supported_resources.supported_resource[0]
    assert (res.value, res.status_category) == (TYPE, "WithStock")

    price = ecs.describe_price(
        m.DescribePriceRequest(region_id=REGION, resource_type="instance", instance_type=TYPE, price_unit="Hour")
    ).body
    assert isinstance(price.price_info.price, m.DescribePriceResponseBodyPriceInfoPrice)
    assert (price.price_info.price.trade_price, price.price_info.price.currency) == (HOURLY, "CNY")


def test_run_describe_and_delete(ecs):
    token = f"conf-{uuid.uuid4()}"
    tags = [m.RunInstancesRequestTag(key="gpuctl:deployment", value="conformance")]
    release = in_an_hour()
    disks = [m.RunInstancesRequestDataDisk(size=100, category="cloud_essd")]
    body = run(ecs, amount=2, client_token=token, tag=tags, auto_release_time=release, data_disk=disks)
    ids = body.instance_id_sets.instance_id_set
    assert len(ids) == 2 and all(i.startswith("i-") for i in ids)
    assert body.trade_price == pytest.approx(2 * HOURLY)
    # Same token, same parameters: the same instances. Changed parameters: ECS's mismatch error.
    again = run(ecs, amount=2, client_token=token, tag=tags, auto_release_time=release, data_disk=disks)
    assert again.instance_id_sets.instance_id_set == ids
    assert error_code(lambda: run(ecs, amount=3, client_token=token)) == "IdempotentParameterMismatch"

    listed = ecs.describe_instances(m.DescribeInstancesRequest(region_id=REGION, instance_ids=json.dumps(ids))).body
    assert isinstance(listed, m.DescribeInstancesResponseBody) and listed.total_count == 2
    inst = listed.instances.instance[0]
    assert isinstance(inst, m.DescribeInstancesResponseBodyInstancesInstance)
    assert inst.instance_type == TYPE and inst.status in ("Pending", "Starting", "Running")
    assert (inst.tags.tag[0].tag_key, inst.tags.tag[0].tag_value) == ("gpuctl:deployment", "conformance")
    assert inst.auto_release_time

    assert wait_running(ecs, ids) == {i: "Running" for i in ids}

    disks = ecs.describe_disks(m.DescribeDisksRequest(region_id=REGION, instance_id=ids[0])).body
    assert sorted(d.type for d in disks.disks.disk) == ["data", "system"]

    # Running instances need Force; then they are gone.
    code = error_code(lambda: ecs.delete_instances(m.DeleteInstancesRequest(region_id=REGION, instance_id=ids, force=False)))
    assert code == "IncorrectInstanceStatus"
    ecs.delete_instances(m.DeleteInstancesRequest(region_id=REGION, instance_id=[ids[0]], force=True))
    # A stopped instance goes without Force.
    ecs.stop_instance(m.StopInstanceRequest(instance_id=ids[1]))
    deadline = time.monotonic() + 20
    while wait_running(ecs, [ids[1]], timeout=0)[ids[1]] != "Stopped" and time.monotonic() < deadline:
        time.sleep(0.5)
    ecs.delete_instance(m.DeleteInstanceRequest(instance_id=ids[1]))
    gone = ecs.describe_instances(m.DescribeInstancesRequest(region_id=REGION, instance_ids=json.dumps(ids))).body
    assert gone.total_count == 0
    code = error_code(lambda: ecs.delete_instance(m.DeleteInstanceRequest(instance_id=ids[1], force=True)))
    assert code == "InvalidInstanceId.NotFound"


def test_dry_run_weekly_term_and_bad_parameters(ecs):
    assert error_code(lambda: run(ecs, dry_run=True)) == "DryRunOperation"
    weekly = run(ecs, instance_charge_type="PrePaid", period=1, period_unit="Week")
    assert len(weekly.instance_id_sets.instance_id_set) == 1 and weekly.order_id
    wid = weekly.instance_id_sets.instance_id_set[0]
    # TerminateSubscription releases *expired* subscriptions only (models/_delete_instance_request.py);
    # an unexpired one leaves its term by converting to pay-as-you-go first.
    assert error_code(lambda: ecs.delete_instance(m.DeleteInstanceRequest(instance_id=wid, force=True, terminate_subscription=True))) \
        == "ChargeTypeViolation"
    converted = ecs.modify_instance_charge_type(m.ModifyInstanceChargeTypeRequest(
        region_id=REGION, instance_ids=json.dumps([wid]), instance_charge_type="PostPaid")).body
    assert converted.order_id
    ecs.delete_instance(m.DeleteInstanceRequest(instance_id=wid, force=True))
    assert error_code(lambda: run(ecs, instance_charge_type="PrePaid", period=5, period_unit="Week")) == "InvalidPeriod"
    assert error_code(lambda: ecs.run_instances(m.RunInstancesRequest(
        region_id=REGION, instance_type="ecs.nope", image_id=IMAGE, v_switch_id=default_vswitch(ecs)[1]))) \
        == "InvalidInstanceType.ValueNotSupported"
    soon = (sim_now() + dt.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert error_code(lambda: run(ecs, auto_release_time=soon)).startswith("InvalidAutoReleaseTime")


def test_snapshots_images_and_policies(ecs):
    iid = run(ecs).instance_id_sets.instance_id_set[0]
    assert wait_running(ecs, [iid]) == {iid: "Running"}
    disk = ecs.describe_disks(m.DescribeDisksRequest(region_id=REGION, instance_id=iid, disk_type="system")).body.disks.disk[0]
    snap = ecs.create_snapshot(m.CreateSnapshotRequest(disk_id=disk.disk_id, snapshot_name="before-tune", client_token=str(uuid.uuid4()))).body
    assert isinstance(snap, m.CreateSnapshotResponseBody) and snap.snapshot_id.startswith("s-")
    found = ecs.describe_snapshots(m.DescribeSnapshotsRequest(region_id=REGION, snapshot_ids=json.dumps([snap.snapshot_id]))).body
    s = found.snapshots.snapshot[0]
    assert isinstance(s, m.DescribeSnapshotsResponseBodySnapshotsSnapshot)
    assert (s.source_disk_id, s.status in ("progressing", "accomplished")) == (disk.disk_id, True)

    image = ecs.create_image(m.CreateImageRequest(region_id=REGION, instance_id=iid, image_name="golden")).body
    assert image.image_id.startswith("m-")
    ecs.delete_snapshot(m.DeleteSnapshotRequest(snapshot_id=snap.snapshot_id))
    assert error_code(lambda: ecs.delete_snapshot(m.DeleteSnapshotRequest(snapshot_id=snap.snapshot_id))) == "InvalidSnapshotId.NotFound"

    pol = ecs.create_auto_snapshot_policy(m.CreateAutoSnapshotPolicyRequest(
        region_id=REGION, time_points=json.dumps([str(h) for h in range(24)]),
        repeat_weekdays=json.dumps([str(d) for d in range(1, 8)]), retention_days=1, auto_snapshot_policy_name="hourly")).body
    assert pol.auto_snapshot_policy_id.startswith("sp-")
    ecs.apply_auto_snapshot_policy(m.ApplyAutoSnapshotPolicyRequest(
        region_id=REGION, auto_snapshot_policy_id=pol.auto_snapshot_policy_id, disk_ids=json.dumps([disk.disk_id])))
    # (The policy firing on the sim clock is covered by the emulator's unit tests: advancing the
    # clock hours here would expire the SDK's signatures.)
    applied = ecs.describe_disks(m.DescribeDisksRequest(region_id=REGION, disk_ids=json.dumps([disk.disk_id]))).body.disks.disk[0]
    assert applied.auto_snapshot_policy_id == pol.auto_snapshot_policy_id

    ecs.modify_instance_auto_release_time(m.ModifyInstanceAutoReleaseTimeRequest(region_id=REGION, instance_id=iid, auto_release_time=in_an_hour()))
    ecs.modify_instance_auto_release_time(m.ModifyInstanceAutoReleaseTimeRequest(region_id=REGION, instance_id=iid, auto_release_time=""))
    ecs.delete_instance(m.DeleteInstanceRequest(instance_id=iid, force=True))


def test_auth_stock_and_throttling_errors(sim):
    for mode in ("v3", "v2"):
        bad_secret = client(sim, mode, sk="not-the-secret")
        assert error_code(lambda: bad_secret.describe_instances(m.DescribeInstancesRequest(region_id=REGION))) == "SignatureDoesNotMatch"
        nobody = client(sim, mode, ak="LTAInobodyKnowsThisKey")
        assert error_code(lambda: nobody.describe_instances(m.DescribeInstancesRequest(region_id=REGION))) == "InvalidAccessKeyId.NotFound"

    knobs = sim.admin("GET", "/_sim/knobs")
    try:
        ecs = client(sim, "v3")
        zone = ecs.describe_available_resource(m.DescribeAvailableResourceRequest(
            region_id=REGION, destination_resource="InstanceType", instance_type=TYPE)).body.available_zones.available_zone[0].zone_id
        sim.admin("POST", "/_sim/stock_outs", {"provider": "alibaba", "instance_type": TYPE, "zone": zone})
        assert error_code(lambda: run(ecs, zone_id=zone)) == "OperationDenied.NoStock"
        avail = ecs.describe_available_resource(m.DescribeAvailableResourceRequest(
            region_id=REGION, destination_resource="InstanceType", instance_type=TYPE, zone_id=zone)).body
        assert avail.available_zones.available_zone[0].status_category == "WithoutStock"

        sim.admin("POST", "/_sim/rate_limits", {"provider": "alibaba", "action": "DescribeInstanceStatus", "per_second": 0.001, "burst": 1})
        ecs.describe_instance_status(m.DescribeInstanceStatusRequest(region_id=REGION))
        with pytest.raises(ThrottlingException) as e:
            ecs.describe_instance_status(m.DescribeInstanceStatusRequest(region_id=REGION))
        assert e.value.code == "Throttling.User"
    finally:
        sim.admin("PUT", "/_sim/knobs", knobs)


def unknown_fields(raw, parsed, path=""):
    """Keys the emulator sent that the SDK model dropped (the models ignore names they do not know,
    so a misspelt field would otherwise pass unnoticed)."""
    if isinstance(raw, dict):
        out = []
        for k, v in raw.items():
            if v is None:
                continue
            if not isinstance(parsed, dict) or k not in parsed:
                out.append(path + k)
            else:
                out += unknown_fields(v, parsed[k], path + k + ".")
        return out
    if isinstance(raw, list) and isinstance(parsed, list):
        return [u for r, p in zip(raw, parsed) for u in unknown_fields(r, p, path + "[].")]
    return []


def test_every_field_is_one_the_sdk_models_declare(ecs, sim):
    iid = run(ecs).instance_id_sets.instance_id_set[0]
    wait_running(ecs, [iid])
    disk = ecs.describe_disks(m.DescribeDisksRequest(region_id=REGION, instance_id=iid)).body.disks.disk[0]
    snap = ecs.create_snapshot(m.CreateSnapshotRequest(disk_id=disk.disk_id)).body.snapshot_id
    # /_sim/state renders with the same code as the answers, so it shows the raw field names.
    state = sim.admin("GET", "/_sim/state")["providers"]["alibaba"]
    raw_instance = next(i for i in state["instances"] if i["InstanceId"] == iid)
    raw_disk = next(d for d in state["disks"] if d["DiskId"] == disk.disk_id)
    raw_snap = next(s for s in state["snapshots"] if s["SnapshotId"] == snap)
    for cls, raw in [
        (m.DescribeInstancesResponseBodyInstancesInstance, raw_instance),
        (m.DescribeDisksResponseBodyDisksDisk, raw_disk),
        (m.DescribeSnapshotsResponseBodySnapshotsSnapshot, raw_snap),
    ]:
        assert unknown_fields(raw, cls().from_map(raw).to_map()) == [], cls.__name__
    ecs.delete_instance(m.DeleteInstanceRequest(instance_id=iid, force=True))


def test_auto_release_and_snapshot_policy_fire_on_the_sim_clock(ecs, sim):
    iid = run(ecs, auto_release_time=in_an_hour()).instance_id_sets.instance_id_set[0]
    wait_running(ecs, [iid])
    disk = ecs.describe_disks(m.DescribeDisksRequest(region_id=REGION, instance_id=iid)).body.disks.disk[0].disk_id
    pol = ecs.create_auto_snapshot_policy(m.CreateAutoSnapshotPolicyRequest(
        region_id=REGION, time_points=json.dumps([str(h) for h in range(24)]),
        repeat_weekdays=json.dumps([str(d) for d in range(1, 8)]), retention_days=-1)).body.auto_snapshot_policy_id
    ecs.apply_auto_snapshot_policy(m.ApplyAutoSnapshotPolicyRequest(region_id=REGION, auto_snapshot_policy_id=pol, disk_ids=json.dumps([disk])))
    # The sim clock moves; signatures are judged on the wall clock, so the SDK keeps working.
    sim.admin("POST", "/_sim/clock", {"advance_seconds": 2 * 3600})
    gone = ecs.describe_instances(m.DescribeInstancesRequest(region_id=REGION, instance_ids=json.dumps([iid]))).body
    assert gone.total_count == 0, "released at its AutoReleaseTime"
    autos = ecs.describe_snapshots(m.DescribeSnapshotsRequest(region_id=REGION, disk_id=disk, snapshot_type="auto")).body
    assert autos.total_count >= 1, "the hourly policy ran before the release"
    assert all(s.snapshot_type == "auto" for s in autos.snapshots.snapshot)


def test_describe_by_tag_key_alone_matches_any_value(ecs):
    """`gpuctl sweep`'s filter: Tag.1.Key without Tag.1.Value, paged, in both signing modes."""
    key = f"gpuctl-deployment-{uuid.uuid4().hex[:8]}"
    made = []
    for value in ("a", "b"):
        made += run(ecs, tag=[m.RunInstancesRequestTag(key=key, value=value)]).instance_id_sets.instance_id_set
    run(ecs, tag=[m.RunInstancesRequestTag(key="team", value=key)])
    run(ecs)
    req = m.DescribeInstancesRequest(region_id=REGION, tag=[m.DescribeInstancesRequestTag(key=key)], page_size=100)
    found = ecs.describe_instances(req).body
    assert found.total_count == 2
    assert sorted(i.instance_id for i in found.instances.instance) == sorted(made)
    assert {(t.tag_key, t.tag_value) for i in found.instances.instance for t in i.tags.tag} == {(key, "a"), (key, "b")}
    page = ecs.describe_instances(m.DescribeInstancesRequest(region_id=REGION, tag=[m.DescribeInstancesRequestTag(key=key)], page_size=1, page_number=2)).body
    assert page.total_count == 2 and len(page.instances.instance) == 1


def vpc_client(sim, mode="v3"):
    host = sim.url.split("://", 1)[1]
    cfg = dict(access_key_id=AK, access_key_secret=SK, endpoint=host, protocol="http", region_id=REGION)
    if mode == "v2":
        cfg["signature_algorithm"] = "v2"
    return VpcClient(Config(**cfg))


def raw_call(client, action, version, query):
    """The answer's raw JSON, as the SDK's own `*_with_options` methods fetch it before parsing:
    to check that every field the emulator sends is one the response model declares."""
    from alibabacloud_tea_openapi import utils_models as um
    from alibabacloud_tea_openapi.utils import Utils
    from darabonba.runtime import RuntimeOptions
    params = um.Params(action=action, version=version, protocol="HTTPS", pathname="/", method="POST",
                       auth_type="AK", style="RPC", req_body_type="formData", body_type="json")
    return client.call_api(params, um.OpenApiRequest(query=Utils.query(query)), RuntimeOptions())["body"]


def test_auto_network_through_the_sdks(ecs, sim):
    """network = "auto" (issue 13) as the official SDKs make it: VPC CreateVpc (Pending, then
    Available), CreateVSwitch, ECS CreateSecurityGroup and AuthorizeSecurityGroup, found again by tag,
    an instance launched into them, each piece refused deletion while in use, then deleted."""
    vpc = vpc_client(sim, "v2" if ecs._signature_algorithm == "v2" else "v3")
    key, zone = f"gpuctl-network-{uuid.uuid4().hex[:8]}", default_vswitch(ecs)[0]
    made = vpc.create_vpc(vm.CreateVpcRequest(region_id=REGION, cidr_block="10.0.0.0/16", vpc_name="gpuctl-t",
                                              client_token=key, tag=[vm.CreateVpcRequestTag(key=key, value=zone)])).body
    assert made.vpc_id.startswith("vpc-")
    again = vpc.create_vpc(vm.CreateVpcRequest(region_id=REGION, cidr_block="10.0.0.0/16", vpc_name="gpuctl-t",
                                               client_token=key, tag=[vm.CreateVpcRequestTag(key=key, value=zone)])).body
    assert again.vpc_id == made.vpc_id, "a ClientToken retry answers the same VPC"
    deadline = time.monotonic() + 10
    while True:
        found = vpc.describe_vpcs(vm.DescribeVpcsRequest(region_id=REGION, tag=[vm.DescribeVpcsRequestTag(key=key, value=zone)])).body
        assert [v.vpc_id for v in found.vpcs.vpc] == [made.vpc_id]
        if found.vpcs.vpc[0].status == "Available" or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert found.vpcs.vpc[0].status == "Available"
    assert [(t.key, t.value) for t in found.vpcs.vpc[0].tags.tag] == [(key, zone)]
    vsw = vpc.create_vswitch(vm.CreateVSwitchRequest(region_id=REGION, vpc_id=made.vpc_id, zone_id=zone,
                                                      cidr_block="10.0.0.0/20", client_token=key + "-vsw",
                                                      tag=[vm.CreateVSwitchRequestTag(key=key, value=zone)])).body.v_switch_id
    with pytest.raises(ClientException) as e:
        vpc.create_vswitch(vm.CreateVSwitchRequest(region_id=REGION, vpc_id=made.vpc_id, zone_id=zone, cidr_block="10.0.8.0/24"))
    assert e.value.code == "InvalidCidrBlock.Overlapped"
    listed = vpc.describe_vswitches(vm.DescribeVSwitchesRequest(region_id=REGION, vpc_id=made.vpc_id, zone_id=zone,
                                                                tag=[vm.DescribeVSwitchesRequestTag(key=key, value=zone)])).body
    assert [s.v_switch_id for s in listed.v_switches.v_switch] == [vsw]
    sg = ecs.create_security_group(m.CreateSecurityGroupRequest(region_id=REGION, vpc_id=made.vpc_id, security_group_name="gpuctl-t",
                                                                client_token=key + "-sg",
                                                                tag=[m.CreateSecurityGroupRequestTag(key=key, value=zone)])).body.security_group_id
    perms = [m.AuthorizeSecurityGroupRequestPermissions(ip_protocol="TCP", port_range="22/22", source_cidr_ip="203.0.113.0/24"),
             m.AuthorizeSecurityGroupRequestPermissions(ip_protocol="ALL", port_range="-1/-1", source_group_id=sg)]
    ecs.authorize_security_group(m.AuthorizeSecurityGroupRequest(region_id=REGION, security_group_id=sg, permissions=perms))
    attr = ecs.describe_security_group_attribute(m.DescribeSecurityGroupAttributeRequest(region_id=REGION, security_group_id=sg, direction="ingress")).body
    assert sorted((p.ip_protocol, p.port_range, p.source_cidr_ip or p.source_group_id) for p in attr.permissions.permission) == [
        ("ALL", "-1/-1", sg), ("TCP", "22/22", "203.0.113.0/24")]
    groups = ecs.describe_security_groups(m.DescribeSecurityGroupsRequest(region_id=REGION, vpc_id=made.vpc_id,
                                                                         tag=[m.DescribeSecurityGroupsRequestTag(key=key, value=zone)])).body
    assert [g.security_group_id for g in groups.security_groups.security_group] == [sg]

    # Every field the emulator answers with is one the SDK's response models declare.
    for client, action, version, query, cls in [
        (vpc, "DescribeVpcs", "2016-04-28", {"RegionId": REGION, "VpcId": made.vpc_id}, vm.DescribeVpcsResponseBody),
        (vpc, "DescribeVSwitches", "2016-04-28", {"RegionId": REGION, "VSwitchId": vsw}, vm.DescribeVSwitchesResponseBody),
        (ecs, "DescribeSecurityGroupAttribute", "2014-05-26", {"RegionId": REGION, "SecurityGroupId": sg}, m.DescribeSecurityGroupAttributeResponseBody),
        (ecs, "DescribeSecurityGroups", "2014-05-26", {"RegionId": REGION, "SecurityGroupId": sg}, m.DescribeSecurityGroupsResponseBody),
    ]:
        raw = raw_call(client, action, version, query)
        assert unknown_fields(raw, cls().from_map(raw).to_map()) == [], action

    iid = ecs.run_instances(m.RunInstancesRequest(region_id=REGION, instance_type=TYPE, image_id=IMAGE, zone_id=zone,
                                                  v_switch_id=vsw, security_group_ids=[sg])).body.instance_id_sets.instance_id_set[0]
    assert error_code(lambda: ecs.delete_security_group(m.DeleteSecurityGroupRequest(region_id=REGION, security_group_id=sg))) == "DependencyViolation"
    assert error_code(lambda: vpc.delete_vpc(vm.DeleteVpcRequest(region_id=REGION, vpc_id=made.vpc_id))) == "DependencyViolation.VSwitch"
    ecs.delete_instance(m.DeleteInstanceRequest(instance_id=iid, force=True))
    ecs.delete_security_group(m.DeleteSecurityGroupRequest(region_id=REGION, security_group_id=sg))
    vpc.delete_vswitch(vm.DeleteVSwitchRequest(region_id=REGION, v_switch_id=vsw))
    vpc.delete_vpc(vm.DeleteVpcRequest(region_id=REGION, vpc_id=made.vpc_id))
    assert vpc.describe_vpcs(vm.DescribeVpcsRequest(region_id=REGION, vpc_id=made.vpc_id)).body.total_count == 0
