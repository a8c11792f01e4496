#!/usr/bin/env python3
"""Generate gpuctl-sign's conformance vectors with the clouds' official Python SDKs.

Each case is one folder under crates/sign/vectors/: request.json (what gpuctl's `sign` gets),
wire.json (the request as the SDK sends it, which `verify` must accept), canonical_request.txt,
string_to_sign.txt and authorization.txt (signature.txt for Alibaba RPC). Every stage comes out of
the SDK's own signing code: we only pin its clock and nonce source and record what it hashes and
HMACs. `cargo test` reads the committed folders and needs no Python.

Run from the repository root after `scripts/pyenv`:
    .venv/bin/python crates/sign/vectors/gen/generate.py       # TC3, ACS3, RPC, JDCLOUD3
    .venv-jd2/bin/python crates/sign/vectors/gen/generate.py   # JDCLOUD2 (jdcloud_sdk 1.6.93)
"""
import hashlib
import hmac
import json
import os
import sys
import time
import uuid
from urllib.parse import unquote, unquote_plus, urlencode, urlparse

# GPUCTL_VECTORS_OUT lets CI regenerate into a scratch folder and diff against the committed set.
OUT = os.environ.get("GPUCTL_VECTORS_OUT") or os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# ---- recording the SDKs' own hashing (they look these up at call time) ---------------------------
_real_sha256 = hashlib.sha256
_real_hmac_new = hmac.new
SHA_INPUTS = []
HMAC_MSGS = []


def _rec_sha256(data=b"", **kw):
    SHA_INPUTS.append(bytes(data))
    return _real_sha256(data, **kw)


def _rec_hmac_new(key, msg=None, digestmod=""):
    HMAC_MSGS.append(msg)
    return _real_hmac_new(key, msg, digestmod)


hashlib.sha256 = _rec_sha256
hmac.new = _rec_hmac_new

_real_time = time.time
_real_uuid4 = uuid.uuid4


class Pinned:
    """Pin time.time() and uuid.uuid4() (what the SDKs read) for one signing."""

    def __init__(self, unix, nonce=None):
        self.unix, self.nonce = unix, nonce

    def __enter__(self):
        SHA_INPUTS.clear()
        HMAC_MSGS.clear()
        time.time = lambda: float(self.unix)
        if self.nonce is not None:
            pinned = uuid.UUID(self.nonce) if _is_uuid(self.nonce) else None
            uuid.uuid4 = (lambda: pinned) if pinned else (lambda: self.nonce)
        return self

    def __exit__(self, *exc):
        time.time = _real_time
        uuid.uuid4 = _real_uuid4

    def stages(self, rpc_method=None):
        """(canonical_request, string_to_sign) from what the SDK just hashed."""
        sts = HMAC_MSGS[-1]
        sts = sts.decode("utf-8") if isinstance(sts, (bytes, bytearray)) else sts
        if rpc_method:  # METHOD&%2F&quote_plus(canonical)
            return unquote(sts.split("&", 2)[2]), sts
        digest = sts.split("\n")[-1]
        for data in reversed(SHA_INPUTS):
            if _real_sha256(data).hexdigest() == digest:
                return data.decode("utf-8"), sts
        raise SystemExit("could not find the canonical request among the SDK's hash inputs")


def _is_uuid(s):
    try:
        uuid.UUID(s)
        return True
    except ValueError:
        return False


def pairs_from_raw(raw):
    """Decoded (key, value) pairs the way a server reads a query; parts without '=' are dropped."""
    out = []
    for part in raw.split("&"):
        if "=" in part:
            k, v = part.split("=", 1)
            out.append([unquote_plus(k), unquote_plus(v)])
    return out


def write_case(name, algorithm, source, request, params, creds, wire, cr, sts, auth, sign=True, note=None):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    req = {
        "algorithm": algorithm,
        "source": source,
        "sign": sign,
        "request": request,
        "params": params,
        "credentials": creds,
    }
    if note:
        req["note"] = note
    with open(os.path.join(d, "request.json"), "w", encoding="utf-8") as f:
        json.dump(req, f, ensure_ascii=False, indent=2)
        f.write("\n")
    with open(os.path.join(d, "wire.json"), "w", encoding="utf-8") as f:
        json.dump(wire, f, ensure_ascii=False, indent=2)
        f.write("\n")
    for fname, text in (("canonical_request.txt", cr), ("string_to_sign.txt", sts)):
        with open(os.path.join(d, fname), "w", encoding="utf-8", newline="") as f:
            f.write(text)
    fname = "signature.txt" if algorithm == "AlibabaRpcV2" else "authorization.txt"
    with open(os.path.join(d, fname), "w", encoding="utf-8", newline="") as f:
        f.write(auth)
    print("wrote", name)


def params_of(unix, nonce="", region="", service="", action="", version=""):
    return {"time": unix, "nonce": nonce, "region": region, "service": service, "action": action, "version": version}


def headers_list(d):
    return [[k, str(v)] for k, v in d.items()]


# ---- Tencent TC3 ---------------------------------------------------------------------------------
def tencent():
    from tencentcloud.common import credential
    from tencentcloud.common.abstract_client import AbstractClient
    from tencentcloud.common.http.request import RequestInternal
    from tencentcloud.common.profile.client_profile import ClientProfile
    from tencentcloud.common.profile.http_profile import HttpProfile
    from tencentcloud.cvm.v20170312 import cvm_client
    from tencentcloud.cbs.v20170312 import cbs_client

    ak, sk = "AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE", "Gu5t9xGARNpq86cd98joQYCN3EXAMPLE"
    cases = [
        # name, client class, endpoint, protocol, method, region, action, params
        ("tc3-post-json-describe-instances", cvm_client.CvmClient, "cvm.tencentcloudapi.com", "https", "POST",
         "ap-guangzhou", "DescribeInstances",
         {"Limit": 1, "Filters": [{"Name": "instance-name", "Values": ["unnamed", "中文 名*~+/="]}]}),
        ("tc3-get-filters-flattened", cvm_client.CvmClient, "cvm.tencentcloudapi.com", "https", "GET",
         "ap-guangzhou", "DescribeInstances",
         {"Limit": 2, "Offset": 0, "Filters": [{"Name": "zone", "Values": ["ap-guangzhou-3", "ap-guangzhou-4"]},
                                               {"Name": "instance-name", "Values": ["a b*~+/=中文"]}]}),
        ("tc3-get-empty-params-cbs", cbs_client.CbsClient, "cbs.tencentcloudapi.com", "https", "GET",
         "ap-shanghai", "DescribeDisks", {}),
        ("tc3-post-loopback-port", cvm_client.CvmClient, "127.0.0.1:8443", "http", "POST",
         "ap-beijing", "RunInstances",
         {"InstanceType": "GN7.2XLARGE32", "ClientToken": "tok-1",
          "Placement": {"Zone": "ap-beijing-7"}, "InstanceCount": 1}),
        ("tc3-post-empty-body-object", cvm_client.CvmClient, "cvm.tencentcloudapi.com", "https", "POST",
         "", "DescribeRegions", {}),
        # ClientProfile(unsignedPayload=True): the literal "UNSIGNED-PAYLOAD" is hashed, not the body.
        ("tc3-post-unsigned-payload", cbs_client.CbsClient, "cbs.tencentcloudapi.com", "https", "POST",
         "ap-guangzhou", "DescribeDisks", {"Limit": 5}),
    ]
    unix = 1551113065  # the doc's example time, 2019-02-25T16:44:25Z
    for name, cls, endpoint, proto, method, region, action, params in cases:
        hp = HttpProfile(endpoint=endpoint, protocol=proto, reqMethod=method)
        profile = ClientProfile(httpProfile=hp)
        profile.unsignedPayload = name.endswith("unsigned-payload")
        client = cls(credential.Credential(ak, sk), region, profile)
        req = RequestInternal(client._get_endpoint(), method, client._requestPath, header={})
        with Pinned(unix) as p:
            client._build_req_inter(action, params, req)
            cr, sts = p.stages()
        raw_query = req.data if method == "GET" else ""
        body = "" if method == "GET" else req.data
        wire = {"method": method, "path": "/", "raw_query": raw_query, "headers": headers_list(req.header), "body": body}
        # What gpuctl signs: the same parameters as decoded pairs in the SDK's order, its unsigned
        # client header as an extra header, everything else from SigningParams.
        extra = [["X-TC-Content-SHA256", "UNSIGNED-PAYLOAD"]] if profile.unsignedPayload else []
        request = {"method": method, "scheme": proto, "host": endpoint, "path": "/",
                   "query": pairs_from_raw(raw_query), "headers": extra, "body": body}
        write_case(name, "Tc3", "tencentcloud-sdk-python-common 3.1.195 AbstractClient._build_req_with_tc3_signature",
                   request, params_of(unix, region=region, service=client._service, action=action,
                                      version=client._apiVersion),
                   {"access_key_id": ak, "secret": sk}, wire, cr, sts, req.header["Authorization"])


# ---- Alibaba ACS3 and RPC ------------------------------------------------------------------------
def alibaba():
    from alibabacloud_tea_openapi import client as oc
    from alibabacloud_tea_openapi import utils as ou
    from alibabacloud_tea_openapi.utils import Utils
    from alibabacloud_tea_openapi.utils_models import Params, OpenApiRequest, Config
    from darabonba.runtime import RuntimeOptions
    from darabonba.core import DaraCore

    class Captured(Exception):
        pass

    seen = []

    def capture(request, runtime=None, *a, **kw):
        seen.append((request, DaraCore.compose_url(request)))
        raise Captured()

    oc.DaraCore.do_action = staticmethod(capture)
    Utils.get_user_agent = staticmethod(lambda ua=None: "AlibabaCloud (Linux; x86_64) Python/3.11 Core/0.4.6 TeaDSL/2")

    ak, sk = "LTAI5tExampleAccessKeyId", "ExampleAccessKeySecret0123456789"
    unix = 1698315752  # 2023-10-26T10:22:32Z, the doc example's x-acs-date
    nonce = "3156853299f313e23d1673dc12e1703d"

    def run_v3(name, endpoint, proto, method, query, body, body_type="formData", token=None):
        Utils.get_nonce = staticmethod(lambda: nonce)
        Utils.get_timestamp = staticmethod(lambda: "2023-10-26T10:22:32Z")
        client = oc.Client(Config(access_key_id=ak, access_key_secret=sk, endpoint=endpoint, protocol=proto,
                                  security_token=token))
        params = Params(action="DescribeInstances" if not body else "RunInstances", version="2014-05-26",
                        protocol=proto, pathname="/", method=method, auth_type="AK", style="RPC",
                        req_body_type=body_type, body_type="json")
        with Pinned(unix) as p:
            try:
                client.do_request(params, OpenApiRequest(query=query, body=body), RuntimeOptions())
                raise SystemExit("the SDK did not try to send")
            except Exception:  # the SDK wraps our Captured in its retry exception
                r, url = seen.pop()
            cr, sts = p.stages()
        raw_query = urlparse(url).query
        body_text = r.body if isinstance(r.body, str) else (r.body.decode() if r.body else "")
        wire = {"method": r.method, "path": r.pathname, "raw_query": raw_query, "headers": headers_list(r.headers),
                "body": body_text}
        # gpuctl adds host, x-acs-action/version/date/signature-nonce/content-sha256 itself and
        # content-type for a body; the SDK's other headers are given as extra headers.
        own = {"host", "x-acs-action", "x-acs-version", "x-acs-date", "x-acs-signature-nonce",
               "x-acs-content-sha256", "authorization"}
        extra = [[k, v] for k, v in headers_list(r.headers) if k.lower() not in own]
        request = {"method": method, "scheme": proto, "host": endpoint, "path": "/",
                   "query": [[k, str(v)] for k, v in r.query.items()], "headers": extra, "body": body_text}
        write_case(name, "Acs3", "alibabacloud-tea-openapi 0.4.6 Client.do_request (ACS3-HMAC-SHA256)", request,
                   params_of(unix, nonce=nonce, action=params.action, version=params.version),
                   {"access_key_id": ak, "secret": sk}, wire, cr, sts, r.headers["Authorization"])

    run_v3("acs3-post-query-datadisk", "ecs.cn-hangzhou.aliyuncs.com", "https", "POST",
           {"RegionId": "cn-hangzhou", "InstanceType": "ecs.gn7i-c8g1.2xlarge", "DataDisk.1.Size": "100",
            "DataDisk.1.Category": "cloud_essd", "Tag.1.Key": "gpuctl", "Tag.1.Value": "a b*~+/=中文"}, None)
    run_v3("acs3-post-form-body-loopback", "127.0.0.1:9443", "http", "POST",
           {"RegionId": "cn-beijing"}, {"InstanceIds": '["i-a","i-b"]', "PageSize": "10", "Name": "x y+z"})
    run_v3("acs3-get-empty-query", "ecs.cn-shanghai.aliyuncs.com", "https", "GET", {}, None)
    # STS credentials: the SDK adds and signs x-acs-accesskey-id and x-acs-security-token.
    run_v3("acs3-sts-token", "ecs.cn-hangzhou.aliyuncs.com", "https", "POST", {"RegionId": "cn-hangzhou"}, None,
           token="CAIS+sts/token=example")

    # The published V3 example (help.aliyun.com "V3 request structure and signature"): RunInstances,
    # signature 06563a9e…83c0, signed with the SDK's own get_authorization.
    class Req:
        pass

    ex = Req()
    ex.method, ex.pathname = "POST", "/"
    ex.query = {"ImageId": "win2019_1809_x64_dtc_zh-cn_40G_alibase_20230811.vhd", "RegionId": "cn-shanghai"}
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    ex.headers = {"host": "ecs.cn-shanghai.aliyuncs.com", "x-acs-action": "RunInstances",
                  "x-acs-version": "2014-05-26", "x-acs-date": "2023-10-26T10:22:32Z",
                  "x-acs-signature-nonce": nonce, "x-acs-content-sha256": empty}
    with Pinned(unix) as p:
        auth = Utils.get_authorization(ex, "ACS3-HMAC-SHA256", empty, "YourAccessKeyId", "YourAccessKeySecret")
        cr, sts = p.stages()
    sig = auth.rsplit("=", 1)[1]
    assert sig.startswith("06563a9e") and sig.endswith("83c0"), sig
    wire = {"method": "POST", "path": "/", "raw_query": urlencode(ex.query), "headers": headers_list(ex.headers) +
            [["Authorization", auth]], "body": ""}
    request = {"method": "POST", "scheme": "https", "host": "ecs.cn-shanghai.aliyuncs.com", "path": "/",
               "query": [[k, v] for k, v in ex.query.items()], "headers": [], "body": ""}
    write_case("acs3-published-runinstances-example", "Acs3",
               "help.aliyun.com V3 signature doc example, reproduced by alibabacloud-tea-openapi 0.4.6 Utils.get_authorization",
               request, params_of(unix, nonce=nonce, action="RunInstances", version="2014-05-26"),
               {"access_key_id": "YourAccessKeyId", "secret": "YourAccessKeySecret"}, wire, cr, sts, auth)

    # Legacy RPC (HMAC-SHA1): the published DescribeRegions example, then the SDK's v2 client path.
    pub = {"AccessKeyId": "testid", "Action": "DescribeRegions", "Format": "XML", "SignatureMethod": "HMAC-SHA1",
           "SignatureNonce": "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf", "SignatureVersion": "1.0",
           "Timestamp": "2016-02-23T12:46:24Z", "Version": "2014-05-26"}
    with Pinned(1456231584) as p:
        sig = Utils.get_rpcsignature(pub, "GET", "testsecret")
        cr, sts = p.stages(rpc_method="GET")
    assert sig == "OLeaidS1JvxuMvnyHOwuJ+uX5qY=", sig
    q = dict(pub)
    q["Signature"] = sig
    wire = {"method": "GET", "path": "/", "raw_query": urlencode(q), "headers": [["host", "ecs.aliyuncs.com"]], "body": ""}
    request = {"method": "GET", "scheme": "https", "host": "ecs.aliyuncs.com", "path": "/",
               "query": [["Format", "XML"]], "headers": [], "body": ""}
    write_case("rpc-published-describeregions-example", "AlibabaRpcV2",
               "Alibaba ECS signature doc example (testid/testsecret), reproduced by alibabacloud-tea-openapi 0.4.6 Utils.get_rpcsignature",
               request, params_of(1456231584, nonce="3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf",
                                  action="DescribeRegions", version="2014-05-26"),
               {"access_key_id": "testid", "secret": "testsecret"}, wire, cr, sts, sig)

    def run_rpc(name, endpoint, proto, method, query, body):
        Utils.get_nonce = staticmethod(lambda: nonce)
        Utils.get_timestamp = staticmethod(lambda: "2023-10-26T10:22:32Z")
        client = oc.Client(Config(access_key_id=ak, access_key_secret=sk, endpoint=endpoint, protocol=proto,
                                  signature_algorithm="v2"))
        with Pinned(unix) as p:
            try:
                client.do_rpcrequest("DescribeInstances", "2014-05-26", proto, method, "AK", "json",
                                     OpenApiRequest(query=query, body=body), RuntimeOptions())
                raise SystemExit("the SDK did not try to send")
            except Exception:
                r, url = seen.pop()
            cr, sts = p.stages(rpc_method=method)
        body_text = r.body if isinstance(r.body, str) else (r.body.decode() if r.body else "")
        wire = {"method": r.method, "path": r.pathname or "/", "raw_query": urlparse(url).query,
                "headers": headers_list(r.headers), "body": body_text}
        # gpuctl's RPC signer adds Action/Version/AccessKeyId/Signature*/Timestamp; the SDK's
        # lower-case `json` Format is passed through as a query parameter.
        own = {"Action", "Version", "AccessKeyId", "SignatureMethod", "SignatureVersion", "SignatureNonce",
               "Timestamp", "Signature"}
        extra_q = [[k, str(v)] for k, v in r.query.items() if k not in own]
        own_h = {"host", "content-type"}
        extra_h = [[k, v] for k, v in headers_list(r.headers) if k.lower() not in own_h]
        request = {"method": method, "scheme": proto, "host": endpoint, "path": "/", "query": extra_q,
                   "headers": extra_h, "body": body_text}
        write_case(name, "AlibabaRpcV2", "alibabacloud-tea-openapi 0.4.6 Client.do_rpcrequest (signature_algorithm='v2')",
                   request, params_of(unix, nonce=nonce, action="DescribeInstances", version="2014-05-26"),
                   {"access_key_id": ak, "secret": sk}, wire, cr, sts, r.query["Signature"])

    run_rpc("rpc-post-query-loopback", "127.0.0.1:9443", "http", "POST",
            {"RegionId": "cn-hangzhou", "InstanceIds": '["i-a","i-b"]', "Tag.1.Key": "a b*~+/=中文"}, None)
    run_rpc("rpc-post-form-body", "ecs.cn-hangzhou.aliyuncs.com", "https", "POST",
            {"RegionId": "cn-hangzhou"}, {"PageSize": "10", "InstanceName": "x y+z"})


# ---- JD Cloud ------------------------------------------------------------------------------------
def jdcloud():
    from jdcloud_sdk.core import const
    from importlib.metadata import version as pkg_version
    from jdcloud_sdk.core.credential import Credential
    from jdcloud_sdk.core.config import Config
    from jdcloud_sdk.core.logger import Logger
    from jdcloud_sdk.core.signer import Signer
    import jdcloud_sdk.core.jdcloudclient as jc

    v3 = hasattr(Signer, "signV3")
    alg = "JdCloud3" if v3 else "JdCloud2"
    prefix = "jd3" if v3 else "jd2"
    src = f"jdcloud_sdk {pkg_version('jdcloud_sdk')}"

    class Captured(Exception):
        pass

    def capture(method, url, data=None, headers=None, timeout=None):
        raise Captured(method, url, data, dict(headers))

    jc.requests.request = capture
    from jdcloud_sdk.services.vm.client.VmClient import VmClient
    from jdcloud_sdk.services.vm.apis.DescribeInstancesRequest import DescribeInstancesRequest, DescribeInstancesParameters
    from jdcloud_sdk.services.vm.apis.StopInstanceRequest import StopInstanceRequest, StopInstanceParameters
    from jdcloud_sdk.services.disk.apis.CreateDisksRequest import CreateDisksRequest, CreateDisksParameters
    from jdcloud_sdk.services.disk.client.DiskClient import DiskClient

    ak, sk = "JDC_0123456789ABCDEF0123456789AB", "0123456789ABCDEF0123456789ABCDEF"
    unix = 1568702828  # 2019-09-17T06:47:08Z, the SDK signer test's date
    nonce = "ebf8b26d-c3be-402f-9f10-f8b6573fd823"

    def client_case(name, client_cls, service, endpoint, scheme, request):
        client = client_cls(Credential(ak, sk), Config(endpoint, scheme=scheme), Logger(0))
        with Pinned(unix, nonce) as p:
            try:
                client.send(request)
                raise SystemExit("the SDK did not try to send")
            except Captured as c:
                method, url, data, headers = c.args
            cr, sts = p.stages()
        u = urlparse(url)
        wire_headers = headers_list(headers)
        wire_headers.append(["Host", u.netloc])  # requests adds it from the URL
        wire = {"method": method, "path": u.path, "raw_query": u.query, "headers": wire_headers, "body": data or ""}
        extra = [[k, v] for k, v in headers_list(headers) if k.lower() == "user-agent"]
        req = {"method": method, "scheme": scheme, "host": u.netloc, "path": u.path, "query": pairs_from_raw(u.query),
               "headers": extra, "body": data or ""}
        write_case(name, alg, f"{src} JDCloudClient.send", req,
                   params_of(unix, nonce=nonce, region="cn-north-1", service=service),
                   {"access_key_id": ak, "secret": sk}, wire, cr, sts, headers["Authorization"])

    f1 = {"name": "instanceId", "values": ["i-a", "i-b"]}
    f2 = {"name": "name", "values": ["a b*~+/中文"]}
    client_case(f"{prefix}-get-filters", VmClient, "vm", "vm.jdcloud-api.com", "https",
                _describe(DescribeInstancesRequest, DescribeInstancesParameters, [f1, f2]))
    client_case(f"{prefix}-post-action-loopback", VmClient, "vm", "127.0.0.1:8000", "http",
                StopInstanceRequest(StopInstanceParameters("cn-north-1", "i-abc123")))
    disk_params = CreateDisksParameters("cn-north-1", {"az": "cn-north-1a", "name": "data 1", "diskType": "ssd",
                                                       "diskSizeGB": 100, "charge": {"chargeMode": "postpaid_by_duration"}},
                                        1, "token-1")
    client_case(f"{prefix}-post-json-disk", DiskClient, "disk", "disk.jdcloud-api.com", "https", CreateDisksRequest(disk_params))

    if v3:
        jd_signer_tests(alg, src)


def _describe(req_cls, params_cls, filters):
    p = params_cls("cn-north-1")
    p.setPageNumber(1)
    p.setPageSize(20)
    p.setFilters(filters)
    return req_cls(p)


def jd_signer_tests(alg, src):
    """JD's own signer test cases (jdcloud_sdk/core/signer_test.py), with its expected signatures."""
    from jdcloud_sdk.core.credential import Credential
    from jdcloud_sdk.core.logger import Logger
    from jdcloud_sdk.core.signer import Signer
    from jdcloud_sdk.core import const

    host = "apigw-internal-dev.cn-north-1.jcloudcs.com:8000"
    ori = "/v1/regions/cn-north-1/instances"
    special = "/ /`!@#$%^*()+/0123456789/[]\\;',<>?:\"{}|/abcdefghijklmnopqrstuvwxyz/ABCDEFGHIJKLMNOPQRSTUVWXYZ/-_.~"
    cases = [
        # name, path, query, nonce, expected signature (from signer_test.py)
        ("path-special-characters", "/v1/regions/cn-north-1/instances/ /`!@#$%^&*()=+/0123456789/[]\\;',<>?:\"{}|/abcdefghijklmnopqrstuvwxyz/ABCDEFGHIJKLMNOPQRSTUVWXYZ/-_.~:GET", "", None,
         "925b9455228ef23ee7ec2dd3e33f7e645bcbcb3f4732894c17e4a0cf1d41d1e6"),
        ("path-chinese", "/v1/regions/cn-north-1/instances/中文:GET", "", None,
         "936ed2dcb6fb4271ad640e0f46f1fe61763a0bad8bb4f4eb1224261f969612fa"),
        ("path-null", "", "", None, "44c5ec30b6185516986ae171d8276552bc0f37f6a536a44e4f578958fc1c12be"),
        ("path-no-leading-slash", "v1", "", None, "92cd3ed582c13af58b4c81ddad150c350e656c6cc9e78ec154d7385e499b91b6"),
        ("path-double-slashes", "///v1/regions/cn-north-1/instances//// //`!@#$%^&*()=+/0123456789/[]\\;',<>?:\"{}|/////abcdefghijklmnopqrstuvwxyz//ABCDEFGHIJKLMNOPQRSTUVWXYZ/-_.~:GET/", "", None,
         "92e4897d2a74a899399f5443615ddf110978363b9097932e522e079e6eb5f65b"),
        ("path-encoded-slashes", "%2Fv1%2Fregions%2F%2F%2Fcn-north-1%2Finstances", "", None,
         "33df199719f9edc6de860e6b53c61d4824e1f389e6030fd37ddc977fda29e467"),
        ("path-wrong-percent-encode", "/v1/%2/%2f/%2b%f", "", None,
         "6610271450ea321baab326f8debc51a2e4dd7e73b04200275a1d9b3897045caf"),
        ("path-part-encoded-plus-space", "/v1%2Fregions/cn-north-1%2F%2F%2Finstances/ + /+/ +/+ /%2B%20%2B%2F%2F", "", None,
         "7286237483a7fcc51ff7621c9a5c586a0ec85fd06cbf91c20adde2ec3b5e4d97"),
        ("query-null-key", ori, "=a&a=a", None, "43efb5fb00e86faf35d8bf0bed3b72e84cfc98ee4754065e29c3caa7bcaa12cb"),
        ("query-repeated-keys", ori, "aa=aa&aa%3Daa=&aa=aa%3D&aa=&aa=aaa&aaa=aaa&aaa=aa&aaa=a&ab=aa&ab=aa&cc=&cc=&bb=aa&bb=", None,
         "8ccc3c9af11e964b3c5d6020d2af49e97e27fbb23e2b8f57bdc84815e471d54b"),
        ("query-special-characters", ori, "special key=" + special + "&" + special + "=special value", None,
         "684a4397896f81eaefbba29c42be66080b32993dce700e1647608a64595fd655"),
        ("query-part-encoded", ori, " =blank&%20=blank&+= 2&%2b= 1&blank= &blank=+&blank=%20", None,
         "78c0a4db84050d773533c78c1a0f73bf974faf5df881e39b18c3e0de8110324e"),
        ("query-wrong-percent-encode", ori, " =blank&%2=blank&+=jia0&%2b=jia1&%2B=jia2&blank= %2b%2f%2/&blank=+&%2/blank=%0%f", None,
         "972987a6f95be456935cde8be8f106114e2ad27465a507644e61f021a98a7218"),
        ("query-chinese", ori, "中文参数=中文参数值", None, "7e3094d23adde49fcc99b7d0de911d7ecaa7767590edd57769d7bdbaca919276"),
        ("header-one-blank", ori, "", " X-Jdcloud- -Nonce ", "5d955d1de475eac2b4378473ca0adce8fddd13f45d2be53bc2ffb6eee6450ba4"),
        ("header-more-blank", ori, "", "  X-Jdcloud-  -Nonce  ", "a03bb8d755cb93e4d8846fe5fcad180f319fa50356f63e8afdc749bd1a95695f"),
        ("header-special-characters", ori, "", "/`!@#$%^&*()=+/0123456789/[]\\;',<>?:\"{}|/abcdefghijklmnopqrstuvwxyz/ABCDEFGHIJKLMNOPQRSTUVWXYZ/-_.~",
         "9046b11889b993a808fccf1322f7f04e7e5a7e0cc22d8b65e9986a8aab986ad7"),
        ("header-escapes", ori, "", " \\n  as\\r\\n \\r df\\r\\n   ", "b30037126cdc4385e957e24e6d73ea28a8fb66f71ee68b8f60de12d3292d19c6"),
    ]
    service, region = "apigatewaytestproductline", "cn-north-1"
    unix = 1568702828  # x-jdcloud-date 20190917T064708Z
    for name, path, query, nonce, expected in cases:
        nonce = nonce if nonce is not None else "X-Jdcloud-Nonce"
        headers = {"x-jdcloud-date": "20190917T064708Z", "x-jdcloud-nonce": nonce, "content-type": "application/json"}
        with Pinned(unix) as p:
            Signer(Logger(0)).signV3(method="GET", region=region, host="http://" + host, path=path, query=query,
                                     headers=headers, data="", credential=Credential("ak", "sk"), security_token="",
                                     service=service)
            cr, sts = p.stages()
        auth = headers[const.JDCLOUD_AUTH]
        assert auth.endswith("Signature=" + expected), (name, auth)
        wire_headers = headers_list(headers) + [["Host", host]]
        wire = {"method": "GET", "path": path, "raw_query": query, "headers": wire_headers, "body": ""}
        request = {"method": "GET", "scheme": "http", "host": host, "path": path, "query": pairs_from_raw(query),
                   "headers": headers_list({k: headers[k] for k in ("x-jdcloud-date", "x-jdcloud-nonce", "content-type")}),
                   "body": ""}
        write_case("jd3-sdk-signer-test-" + name, alg, f"{src} signer_test.py (JD's own signer test, expected signature asserted)",
                   request, params_of(unix, nonce=nonce, region=region, service=service),
                   {"access_key_id": "ak", "secret": "sk"}, wire, cr, sts, auth)


if __name__ == "__main__":
    import jdcloud_sdk.core.signer as _s
    if hasattr(_s.Signer, "signV3"):
        tencent()
        alibaba()
    jdcloud()
