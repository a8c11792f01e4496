"""Tencent CVM + CBS conformance: every operation the local cloud's Tencent serves, driven through the
official SDK (tencentcloud-sdk-python-cvm / -cbs) with TC3 signing, over POST/JSON and GET/flattened
parameters. Answers must parse into the SDK's models (ids, states, prices); errors must surface as
TencentCloudSDKException with Tencent's codes.
"""

import datetime as dt
import time
import uuid

import pytest
from tencentcloud.cbs.v20170312 import cbs_client
from tencentcloud.cbs.v20170312 import models as cbsm
from tencentcloud.common import credential
from tencentcloud.common.exception.tencent_cloud_sdk_exception import TencentCloudSDKException
from tencentcloud.common.profile.client_profile import ClientProfile
from tencentcloud.common.profile.http_profile import HttpProfile
from tencentcloud.cvm.v20170312 import cvm_client
from tencentcloud.cvm.v20170312 import models as m

# The documented test key pair the sim accepts without a config file (README "Local cloud").
AK = "AKIDgpuctlSimTencentTestKey000000000"
SK = "gpuctlSimTencentTestSecret000000"
REGION = "ap-guangzhou"
IMAGE = "img-487zeit5"


def profile(sim, method="POST"):
    host = sim.url.split("://", 1)[1]
    return ClientProfile(httpProfile=HttpProfile(endpoint=host, protocol="http", reqMethod=method, reqTimeout=10))


def cvm(sim, method="POST", ak=AK, sk=SK, region=REGION):
    return cvm_client.CvmClient(credential.Credential(ak, sk), region, profile(sim, method))


def cbs(sim, method="POST"):
    return cbs_client.CbsClient(credential.Credential(AK, SK), REGION, profile(sim, method))


@pytest.fixture(params=["POST", "GET"])
def method(request):
    return request.param


def code_of(fn):
    with pytest.raises(TencentCloudSDKException) as e:
        fn()
    return e.value.get_code()


def offer(sim):
    """A type sold pay-as-you-go in REGION, with its zone and catalogued hourly price, as the sim lists it."""
    req = m.DescribeZoneInstanceConfigInfosRequest()
    req.from_json_string('{"Filters":[{"Name":"instance-charge-type","Values":["POSTPAID_BY_HOUR"]}]}')
    items = cvm(sim).DescribeZoneInstanceConfigInfos(req).InstanceTypeQuotaSet
    sold = [i for i in items if i.Status == "SELL"]
    assert sold, "the sim sells nothing pay-as-you-go in " + REGION
    item = sold[0]
    return item.InstanceType, item.Zone, item.Price.UnitPrice


def run_request(itype, zone, count=1, **extra):
    req = m.RunInstancesRequest()
    body = {
        "InstanceChargeType": "POSTPAID_BY_HOUR",
        "Placement": {"Zone": zone},
        "InstanceType": itype,
        "ImageId": IMAGE,
        "InstanceCount": count,
        "SystemDisk": {"DiskType": "CLOUD_PREMIUM", "DiskSize": 50},
        "DataDisks": [{"DiskType": "CLOUD_PREMIUM", "DiskSize": 100, "DeleteWithInstance": True}],
        "TagSpecification": [{"ResourceType": "instance", "Tags": [{"Key": "gpuctl:deployment", "Value": "conf"}]}],
    }
    body.update(extra)
    import json

    req.from_json_string(json.dumps(body))
    return req


def wait_running(client, ids, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        req = m.DescribeInstancesStatusRequest()
        req.InstanceIds = ids
        seen = {s.InstanceId: s.InstanceState for s in client.DescribeInstancesStatus(req).InstanceStatusSet}
        if all(seen.get(i) == "RUNNING" for i in ids) or time.monotonic() > deadline:
            return seen
        time.sleep(0.3)


def test_instance_lifecycle_through_the_sdk(sim, method):
    sim.admin("POST", "/_sim/reset")
    c = cvm(sim, method)
    itype, zone, hourly = offer(sim)
    token = str(uuid.uuid4())
    ids = c.RunInstances(run_request(itype, zone, count=2, ClientToken=token)).InstanceIdSet
    assert len(ids) == 2 and all(i.startswith("ins-") for i in ids)
    # Same token, same parameters: the same instances, nothing new.
    again = c.RunInstances(run_request(itype, zone, count=2, ClientToken=token)).InstanceIdSet
    assert again == ids
    # Same token, other parameters: Tencent's token error.
    assert code_of(lambda: c.RunInstances(run_request(itype, zone, count=1, ClientToken=token))) == "InvalidParameter.InvalidClientToken"

    status = c.DescribeInstancesStatus(m.DescribeInstancesStatusRequest()).InstanceStatusSet
    assert {s.InstanceState for s in status} <= {"PENDING", "RUNNING"}
    assert wait_running(c, ids) == {i: "RUNNING" for i in ids}

    req = m.DescribeInstancesRequest()
    req.from_json_string('{"Filters":[{"Name":"tag:gpuctl:deployment","Values":["conf"]}],"Limit":1}')
    page = c.DescribeInstances(req)
    assert page.TotalCount == 2 and len(page.InstanceSet) == 1
    inst = page.InstanceSet[0]
    assert isinstance(inst, m.Instance)
    assert inst.InstanceType == itype and inst.Placement.Zone == zone and inst.InstanceState == "RUNNING"
    assert inst.SystemDisk.DiskId.startswith("disk-") and inst.DataDisks[0].DiskSize == 100
    assert inst.Tags[0].Key == "gpuctl:deployment" and inst.InstanceChargeType == "POSTPAID_BY_HOUR"

    term = m.TerminateInstancesRequest()
    term.InstanceIds = ids
    c.TerminateInstances(term)
    assert code_of(lambda: c.TerminateInstances(term)) == "UnsupportedOperation.InstanceStateTerminating"
    sim.admin("POST", "/_sim/clock", {"advance_seconds": 60})
    assert sim.admin("GET", "/_sim/state")["providers"]["tencent"]["instances"] == []
    assert sim.admin("GET", "/_sim/state")["providers"]["tencent"]["disks"] == []


def test_price_inquiry_and_stock(sim):
    sim.admin("POST", "/_sim/reset")
    c = cvm(sim)
    itype, zone, hourly = offer(sim)
    assert hourly > 0
    price = c.InquiryPriceRunInstances(_inquiry(itype, zone, 3)).Price
    assert isinstance(price, m.Price)
    assert price.InstancePrice.ChargeUnit == "HOUR"
    assert price.InstancePrice.UnitPrice == pytest.approx(round(hourly * 3, 2))

    sim.admin("POST", "/_sim/stock_outs", {"provider": "tencent", "instance_type": itype, "zone": zone})
    req = m.DescribeZoneInstanceConfigInfosRequest()
    req.from_json_string('{"Filters":[{"Name":"instance-type","Values":["%s"]},{"Name":"zone","Values":["%s"]}]}' % (itype, zone))
    items = c.DescribeZoneInstanceConfigInfos(req).InstanceTypeQuotaSet
    assert items and all(i.Status == "SOLD_OUT" for i in items)
    assert code_of(lambda: c.RunInstances(run_request(itype, zone))) == "ResourceInsufficient.ZoneSoldOutForSpecifiedInstance"
    sim.admin("POST", "/_sim/reset")
    assert code_of(lambda: c.RunInstances(run_request(itype, zone, DryRun=True))) == "DryRunOperation"
    assert sim.admin("GET", "/_sim/state")["providers"]["tencent"]["instances"] == []


def _inquiry(itype, zone, count):
    req = m.InquiryPriceRunInstancesRequest()
    body = run_request(itype, zone, count=count)._serialize()
    import json

    req.from_json_string(json.dumps({k: v for k, v in body.items() if k != "ClientToken"}))
    return req


def test_auto_release_on_the_sim_clock(sim):
    sim.admin("POST", "/_sim/reset")
    c = cvm(sim)
    itype, zone, _ = offer(sim)
    now = dt.datetime.strptime(sim.admin("GET", "/_sim/clock")["now"][:19], "%Y-%m-%dT%H:%M:%S")
    at = (now + dt.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ids = c.RunInstances(run_request(itype, zone, ActionTimer={"TimerAction": "TerminateInstances", "ActionTime": at})).InstanceIdSet
    assert code_of(lambda: c.RunInstances(run_request(itype, zone, ActionTimer={"TimerAction": "TerminateInstances", "ActionTime": "tomorrow"}))) == "InvalidParameterValue.InvalidTimeFormat"
    sim.admin("POST", "/_sim/clock", {"advance_seconds": 3600})
    assert wait_running(c, ids)[ids[0]] == "RUNNING"
    sim.admin("POST", "/_sim/clock", {"advance_seconds": 3700})
    gone = c.DescribeInstances(m.DescribeInstancesRequest())
    assert gone.TotalCount == 0


def test_snapshots_images_and_policies(sim, method):
    sim.admin("POST", "/_sim/reset")
    c, b = cvm(sim, method), cbs(sim, method)
    itype, zone, _ = offer(sim)
    [iid] = c.RunInstances(run_request(itype, zone)).InstanceIdSet

    dreq = cbsm.DescribeDisksRequest()
    dreq.from_json_string('{"Filters":[{"Name":"instance-id","Values":["%s"]}]}' % iid)
    disks = b.DescribeDisks(dreq).DiskSet
    assert {d.DiskUsage for d in disks} == {"SYSTEM_DISK", "DATA_DISK"}
    assert all(isinstance(d, cbsm.Disk) and d.InstanceId == iid and d.Placement.Zone == zone for d in disks)
    system = next(d for d in disks if d.DiskUsage == "SYSTEM_DISK")

    sreq = cbsm.CreateSnapshotRequest()
    sreq.DiskId = system.DiskId
    sreq.SnapshotName = "before-upgrade"
    sid = b.CreateSnapshot(sreq).SnapshotId
    assert sid.startswith("snap-")
    q = cbsm.DescribeSnapshotsRequest()
    q.SnapshotIds = [sid]
    [snap] = b.DescribeSnapshots(q).SnapshotSet
    assert snap.DiskId == system.DiskId and snap.DiskUsage == "SYSTEM_DISK" and snap.SnapshotState in ("CREATING", "NORMAL")

    img = m.CreateImageRequest()
    img.ImageName = "from-snapshot"
    img.SnapshotIds = [sid]
    image_id = c.CreateImage(img).ImageId
    iq = m.DescribeImagesRequest()
    iq.ImageIds = [image_id]
    [image] = c.DescribeImages(iq).ImageSet
    assert isinstance(image, m.Image) and image.ImageType == "PRIVATE_IMAGE" and image.SnapshotSet[0].SnapshotId == sid
    img2 = m.CreateImageRequest()
    img2.ImageName = "whole-instance"
    img2.InstanceId = iid
    assert c.CreateImage(img2).ImageId.startswith("img-")

    d = cbsm.DeleteSnapshotsRequest()
    d.SnapshotIds = [sid]
    assert code_of(lambda: b.DeleteSnapshots(d)) == "InvalidSnapshot.NotSupported"
    d.DeleteBindImages = True
    b.DeleteSnapshots(d)
    assert code_of(lambda: b.DeleteSnapshots(d)) == "InvalidSnapshotId.NotFound"

    p = cbsm.CreateAutoSnapshotPolicyRequest()
    p.from_json_string('{"Policy":[{"DayOfWeek":[0,1,2,3,4,5,6],"Hour":[2]}],"AutoSnapshotPolicyName":"nightly","RetentionDays":2}')
    created = b.CreateAutoSnapshotPolicy(p)
    assert created.AutoSnapshotPolicyId.startswith("asp-") and created.NextTriggerTime
    bind = cbsm.BindAutoSnapshotPolicyRequest()
    bind.AutoSnapshotPolicyId = created.AutoSnapshotPolicyId
    bind.DiskIds = [x.DiskId for x in disks]
    b.BindAutoSnapshotPolicy(bind)
    sim.admin("POST", "/_sim/clock", {"advance_seconds": 5 * 86400})
    q2 = cbsm.DescribeSnapshotsRequest()
    q2.from_json_string('{"Filters":[{"Name":"disk-id","Values":["%s"]}]}' % system.DiskId)
    autos = [s for s in b.DescribeSnapshots(q2).SnapshotSet if s.AutoSnapshotPolicyId == created.AutoSnapshotPolicyId]
    assert 2 <= len(autos) <= 3, "a nightly policy with 2-day retention keeps 2-3 snapshots"
    bind.AutoSnapshotPolicyId = "asp-00000000"
    assert code_of(lambda: b.BindAutoSnapshotPolicy(bind)) == "InvalidAutoSnapshotPolicyId.NotFound"


@pytest.mark.parametrize(
    "ak,sk,code",
    [
        (AK, "not-the-secret", "AuthFailure.SignatureFailure"),
        ("AKIDnobodyknowsthiskey00000000000000", SK, "AuthFailure.SecretIdNotFound"),
    ],
)
def test_auth_errors(sim, ak, sk, code):
    assert code_of(lambda: cvm(sim, ak=ak, sk=sk).DescribeInstances(m.DescribeInstancesRequest())) == code


def test_expired_signature(sim, monkeypatch):
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() - 3600)
    assert code_of(lambda: cvm(sim).DescribeInstances(m.DescribeInstancesRequest())) == "AuthFailure.SignatureExpire"


def test_request_errors(sim):
    c = cvm(sim)
    itype, zone, _ = offer(sim)
    assert code_of(lambda: cvm(sim, region="ap-nowhere").DescribeInstances(m.DescribeInstancesRequest())) == "UnsupportedRegion"
    assert code_of(lambda: c.RunInstances(run_request(itype, zone, ClientToken="x" * 65))) == "InvalidClientToken.TooLong"
    assert code_of(lambda: c.RunInstances(run_request("NOPE.LARGE8", zone))) == "InvalidParameterValue.InstanceTypeNotFound"
    assert code_of(lambda: c.RunInstances(run_request(itype, "ap-shanghai-2"))) == "InvalidZone.MismatchRegion"
    bad = m.DescribeInstancesRequest()
    bad.from_json_string('{"Filters":[{"Name":"colour","Values":["red"]}]}')
    assert code_of(lambda: c.DescribeInstances(bad)) == "InvalidFilter"
    ids = m.TerminateInstancesRequest()
    ids.InstanceIds = ["ins-00000000"]
    assert code_of(lambda: c.TerminateInstances(ids)) == "InvalidInstanceId.NotFound"


def test_throttling_and_server_errors(sim):
    sim.admin("POST", "/_sim/reset")
    c = cvm(sim)
    sim.admin("POST", "/_sim/rate_limits", {"provider": "tencent", "action": "DescribeInstances", "per_second": 0.001, "burst": 1})
    c.DescribeInstances(m.DescribeInstancesRequest())
    assert code_of(lambda: c.DescribeInstances(m.DescribeInstancesRequest())) == "RequestLimitExceeded"
    sim.admin("POST", "/_sim/faults", {"provider": "tencent", "action": "DescribeInstancesStatus", "kind": "server_error", "status": 502, "count": 1})
    assert code_of(lambda: c.DescribeInstancesStatus(m.DescribeInstancesStatusRequest())) == "ServerNetworkError"
    c.DescribeInstancesStatus(m.DescribeInstancesStatusRequest())
    sim.admin("POST", "/_sim/reset")


def test_describe_by_tag_key_matches_any_value(sim, method):
    """`gpuctl sweep`'s filter: Filters tag-key (any value), paged with Offset/Limit, as the SDK sends it."""
    c = cvm(sim, method)
    itype, zone, _ = offer(sim)
    key = f"gpuctl-deployment-{uuid.uuid4().hex[:8]}"
    made = {}
    for value in ("a", "b"):
        made[value] = c.RunInstances(run_request(itype, zone, TagSpecification=[{"ResourceType": "instance", "Tags": [{"Key": key, "Value": value}]}])).InstanceIdSet[0]
    # A value equal to the key, and no tag of ours: neither matches.
    c.RunInstances(run_request(itype, zone, TagSpecification=[{"ResourceType": "instance", "Tags": [{"Key": "team", "Value": key}]}]))
    c.RunInstances(run_request(itype, zone, TagSpecification=[]))

    def by_key(**page):
        req = m.DescribeInstancesRequest()
        req.Filters = [m.Filter()]
        req.Filters[0].Name, req.Filters[0].Values = "tag-key", [key]
        for k, v in page.items():
            setattr(req, k, v)
        return c.DescribeInstances(req)

    found = by_key(Limit=100)
    assert found.TotalCount == 2
    assert sorted(i.InstanceId for i in found.InstanceSet) == sorted(made.values())
    assert {(t.Key, t.Value) for i in found.InstanceSet for t in i.Tags} == {(key, "a"), (key, "b")}
    second = by_key(Offset=1, Limit=1)
    assert second.TotalCount == 2 and len(second.InstanceSet) == 1
