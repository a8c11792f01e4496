#!/usr/bin/env python3
"""Derives the wire contract schema of every action gpuctl's clients send and its emulators serve,
from the clouds' own published definitions (issue 12), and writes contract/schema/<cloud>.json.

Sources (pinned in scripts/pyenv, installed into .venv-contract):
  Tencent  tccli 3.1.189.1        tccli/services/<svc>/<version>/api.json: members, types, required
  Alibaba  alibabacloud-ecs20140526 7.11.8  alibabacloud_ecs20140526/models/_<action>_request.py:
           wire names (to_map keys), types (constructor annotations), required and value docs (the
           doc comments above each field); the *_response_body.py models give the response tree;
           alibabacloud-vpc20160428 7.2.2 the same way for the VPC actions (ALIBABA_VPC), and
           alibabacloud-nas20170626 3.7.5 for the NAS actions (ALIBABA_NAS)
  JD       jdcloud_sdk 1.6.354    jdcloud_sdk/services/<svc>/apis/<Action>Request.py: REST path and
           method, parameter names, `(Optional)` markers and docstrings; models/*.py for nested
           objects. The Python SDK states no types and does not say which model a nested parameter
           is: contract/jdcloud-models.json names the model of each nested parameter (checked here
           against the classes), and types come only from rules.json.

Value rules that the definitions state only in prose (enums, ranges, steps, conditional
requirements) are in contract/rules.json, each with the package path it comes from and a quote
of the definition's words; this script fails when a quote is not found in the doc text of the
parameter it is attached to, so a rule can never drift from its source.

Usage: gen.py [OUT_DIR]   (default contract/schema). Deterministic: sorted keys, no timestamps.
"""
import ast
import importlib
import inspect
import json
import os
import re
import sys
import typing

HERE = os.path.dirname(os.path.abspath(__file__))

# What gpuctl sends (providers/*/src/client.rs) and serves (providers/*/src/emulator/), per cloud.
TENCENT = {
    "cvm": ["RunInstances", "DescribeInstances", "DescribeInstancesStatus", "TerminateInstances",
            "InquiryPriceRunInstances", "DescribeZoneInstanceConfigInfos", "CreateImage", "DescribeImages",
            "ImportKeyPair", "DescribeKeyPairs",
            # a cluster's placement (issue 14): the HPC cluster HCC types require.
            "CreateHpcCluster", "DescribeHpcClusters", "DeleteHpcClusters",
            # the node agent's idle stop (issue 15), signed with the instance role's credentials.
            "StopInstances"],
    "cbs": ["CreateSnapshot", "DescribeSnapshots", "DeleteSnapshots", "DescribeDisks",
            "CreateAutoSnapshotPolicy", "BindAutoSnapshotPolicy",
            # `gpuctl sweep` (issue 15): a leftover disk's return.
            "TerminateDisks"],
    # network = "auto" (issue 13): the VPC, subnet and security group gpuctl makes and deletes.
    "vpc": ["CreateVpc", "DescribeVpcs", "DeleteVpc", "CreateSubnet", "DescribeSubnets", "DeleteSubnet",
            "CreateSecurityGroup", "DescribeSecurityGroups", "DeleteSecurityGroup",
            "CreateSecurityGroupPolicies", "DescribeSecurityGroupPolicies",
            # `gpuctl sweep` (issue 15): elastic IPs bound to nothing, and their release.
            "DescribeAddresses", "ReleaseAddresses"],
    # a cluster's shared file system (issue 14); the mount target is made with it.
    "cfs": ["CreateCfsFileSystem", "DescribeCfsFileSystems", "DescribeMountTargets", "DeleteCfsFileSystem"],
    # GPU utilization (issue 15): Cloud Monitor, host monitor.tencentcloudapi.com.
    "monitor": ["GetMonitorData"],
    # the bill's lines (issue 15): billing, host billing.tencentcloudapi.com.
    "billing": ["DescribeBillDetail"],
}
TENCENT_VERSION = {"cvm": "v20170312", "cbs": "v20170312", "vpc": "v20170312", "cfs": "v20190719",
                   "monitor": "v20180724", "billing": "v20180709"}
ALIBABA = ["RunInstances", "DescribeInstances", "DescribeInstanceStatus", "DeleteInstances", "DeleteInstance",
           "StopInstances", "StopInstance", "DescribePrice", "DescribeAvailableResource", "DescribeDisks",
           "CreateSnapshot", "DescribeSnapshots", "DeleteSnapshot", "CreateImage", "DescribeImages",
           "ModifyInstanceAutoReleaseTime", "ModifyInstanceChargeType", "CreateAutoSnapshotPolicy",
           "ApplyAutoSnapshotPolicy", "DescribeSecurityGroups", "ImportKeyPair", "DescribeKeyPairs",
           # network = "auto" (issue 13): the security group gpuctl makes, its rules, and its deletion.
           "CreateSecurityGroup", "AuthorizeSecurityGroup", "DescribeSecurityGroupAttribute", "DeleteSecurityGroup",
           # a cluster's low-latency deployment set (issue 14).
           "CreateDeploymentSet", "DescribeDeploymentSets", "DeleteDeploymentSet",
           "DescribeDeploymentSetSupportedInstanceTypeFamily",
           # `gpuctl sweep` (issue 15): a leftover disk's release.
           "DeleteDisk"]
# The VPC API (its own host and version 2016-04-28): the zone's default vSwitch for network = "default",
# and the VPC and vSwitch gpuctl makes and deletes for network = "auto".
ALIBABA_VPC = ["DescribeVSwitches", "CreateVpc", "DescribeVpcs", "DeleteVpc", "CreateVSwitch", "DeleteVSwitch",
               # `gpuctl sweep` (issue 15): elastic IPs bound to nothing, and their release.
               "DescribeEipAddresses", "ReleaseEipAddress"]
# The NAS API (its own host nas.<region>.aliyuncs.com and version 2017-06-26): a cluster's shared file
# system and its mount target (issue 14).
ALIBABA_NAS = ["CreateFileSystem", "DescribeFileSystems", "CreateMountTarget", "DescribeMountTargets",
               "DeleteMountTarget", "DeleteFileSystem"]
# CloudMonitor (its own host metrics.<region>.aliyuncs.com and version 2019-01-01): GPU utilization (issue 15).
ALIBABA_CMS = ["DescribeMetricList"]
# BSS OpenAPI (its own host business.aliyuncs.com and version 2017-12-14): the account's bill (issue 15).
ALIBABA_BSS = ["DescribeInstanceBill"]
JDCLOUD = {
    "vm": ["createInstances", "describeInstances", "describeInstance", "deleteInstance", "describeInstanceTypes",
           "modifyInstanceReleaseTime", "createImage", "describeInstancesCustomData", "importKeypair",
           "describeKeypairs", "describeImages"],
    "disk": ["createSnapshot", "describeSnapshots", "deleteSnapshot", "createSnapshotPolicy",
             "applySnapshotPolicies",
             # `gpuctl sweep` (issue 15): disks attached to nothing, and their deletion.
             "describeDisks", "deleteDisk"],
    # the bill's lines (issue 15): queryBillDetail, POST /regions/{regionId}/billDetail:list.
    "billing": ["calculateTotalPrice", "queryBillDetail"],
    "renewal": ["setRenewal"],
    # network = "auto" (issue 13): the VPC, subnet and security group gpuctl makes and deletes.
    "vpc": ["createVpc", "describeVpcs", "deleteVpc", "createSubnet", "describeSubnets", "deleteSubnet",
            "createNetworkSecurityGroup", "describeNetworkSecurityGroups", "describeNetworkSecurityGroup",
            "addNetworkSecurityGroupRules", "deleteNetworkSecurityGroup",
            # `gpuctl sweep` (issue 15): elastic IPs bound to nothing, and their deletion.
            "describeElasticIps", "deleteElasticIp"],
    # A cluster's shared file system (issue 14): 云文件服务, host zfs.jdcloud-api.com.
    "zfs": ["createFileSystem", "describeFileSystems", "describeFileSystem", "deleteFileSystem",
            "createMountTarget", "describeMountTargets", "deleteMountTarget"],
    # GPU utilization (issue 15): 云监控 v2, host monitor.jdcloud-api.com.
    "monitor": ["describeMetricData"],
}
# Which actions each client sends today (the README's table and the "never appeared" list).
CLIENT_ACTIONS = {
    "tencent": ["RunInstances", "DescribeInstances", "TerminateInstances", "InquiryPriceRunInstances",
                "DescribeZoneInstanceConfigInfos", "DescribeDisks", "DescribeSnapshots", "CreateSnapshot",
                "ImportKeyPair", "DescribeKeyPairs", "DescribeImages", "CreateVpc", "DescribeVpcs", "DeleteVpc",
                "CreateSubnet", "DescribeSubnets", "DeleteSubnet", "CreateSecurityGroup", "DescribeSecurityGroups",
                "DeleteSecurityGroup", "CreateSecurityGroupPolicies", "DescribeSecurityGroupPolicies",
                "CreateImage", "CreateHpcCluster", "DescribeHpcClusters", "DeleteHpcClusters",
                "CreateCfsFileSystem", "DescribeCfsFileSystems", "DescribeMountTargets", "DeleteCfsFileSystem",
                "TerminateDisks", "DescribeAddresses", "ReleaseAddresses", "DeleteSnapshots",
                "GetMonitorData", "DescribeBillDetail"],
    "alibaba": ["RunInstances", "DescribeInstances", "DescribeDisks", "DeleteInstances", "CreateSnapshot",
                "DescribeSnapshots", "DescribePrice", "DescribeAvailableResource", "ModifyInstanceChargeType",
                "DescribeVSwitches", "DescribeSecurityGroups", "ImportKeyPair", "DescribeKeyPairs",
                "DescribeImages", "CreateVpc", "DescribeVpcs", "DeleteVpc", "CreateVSwitch", "DeleteVSwitch",
                "CreateSecurityGroup", "AuthorizeSecurityGroup", "DescribeSecurityGroupAttribute",
                "DeleteSecurityGroup", "CreateImage", "CreateDeploymentSet", "DescribeDeploymentSets",
                "DeleteDeploymentSet", "DescribeDeploymentSetSupportedInstanceTypeFamily", "CreateFileSystem",
                "DescribeFileSystems", "CreateMountTarget", "DescribeMountTargets", "DeleteMountTarget",
                "DeleteFileSystem", "DeleteDisk", "DescribeEipAddresses", "ReleaseEipAddress", "DeleteSnapshot",
                "DescribeMetricList", "DescribeInstanceBill"],
    "jdcloud": ["describeInstanceTypes", "createInstances", "modifyInstanceReleaseTime", "describeInstances",
                "describeInstance", "deleteInstance", "createSnapshot", "describeSnapshots",
                "calculateTotalPrice", "queryBillDetail", "setRenewal", "importKeypair", "describeKeypairs", "describeImages",
                "createVpc", "describeVpcs", "deleteVpc", "createSubnet", "describeSubnets", "deleteSubnet",
                "createNetworkSecurityGroup", "describeNetworkSecurityGroups", "describeNetworkSecurityGroup",
                "addNetworkSecurityGroupRules", "deleteNetworkSecurityGroup", "createImage", "createFileSystem",
                "describeFileSystems", "describeFileSystem", "deleteFileSystem", "createMountTarget",
                "describeMountTargets", "deleteMountTarget", "describeDisks", "deleteDisk", "describeElasticIps",
                "deleteElasticIp", "deleteSnapshot", "describeMetricData"],
}


def site_file(module):
    return os.path.relpath(inspect.getfile(module), os.path.dirname(os.path.dirname(inspect.getfile(module))))


def pkg_version(dist):
    from importlib import metadata
    return metadata.version(dist)


# ---------------------------------------------------------------- Tencent
TC_SCALAR = {"string": "string", "int": "integer", "float": "number", "bool": "boolean"}
TC_FORMAT = {"datetime_iso": "iso8601", "datetime": "datetime"}


def tencent():
    import tccli
    root = os.path.dirname(tccli.__file__)
    out = {}
    for svc, actions in TENCENT.items():
        rel = f"tccli/services/{svc}/{TENCENT_VERSION[svc]}/api.json"
        with open(os.path.join(root, "services", svc, TENCENT_VERSION[svc], "api.json"), encoding="utf-8") as f:
            api = json.load(f)
        objects = api["objects"]

        def node(m, depth=0):
            t, member = m["type"], m["member"]
            n = {"required": bool(m.get("required", False)), "doc": m.get("document", "")}
            if t == "list":
                n["type"] = "array"
                n["items"] = elem(member, depth)
            elif t == "object":
                n.update(obj(member, depth))
            else:
                n["type"] = TC_SCALAR[t]
                if member in TC_FORMAT:
                    n["format"] = TC_FORMAT[member]
                if member == "uint64":
                    n["range"] = [0, None]
            return n

        def elem(member, depth):
            if member in objects:
                return obj(member, depth)
            scalar = {"string": "string", "int64": "integer", "uint64": "integer", "float": "number",
                      "bool": "boolean"}[member]
            return {"type": scalar}

        def obj(name, depth):
            if depth > 8:  # recursive structures (filters of filters) stop here
                return {"type": "object", "model": f"objects.{name}", "members": None}
            return {"type": "object", "model": f"objects.{name}",
                    "members": {m["name"]: node(m, depth + 1) for m in objects[name]["members"]
                                if not m.get("disabled")}}

        for a in actions:
            meta = api["actions"][a]
            req = obj(meta["input"], 0)["members"]
            resp = obj(meta["output"], 0)["members"]
            out[a] = {"model": f"objects.{meta['input']}", "cloud": "tencent", "service": svc, "version": api["metadata"]["apiVersion"],
                      "method": "POST", "path": "/", "source": f"tccli {pkg_version('tccli')} {rel}",
                      "params": req, "response": resp}
    return out


# ---------------------------------------------------------------- Alibaba
def ali_fields(cls):
    """(attr, wire name, annotation, doc comment) of a DaraModel class, read from its source."""
    src = inspect.getsource(cls)
    to_map = inspect.getsource(cls.to_map)
    # Scalars and objects: `result['Name'] = self.attr[.to_map()]`; lists: `result['Name'] = []`
    # followed by `if self.attr is not None:` and a loop.
    wire = {attr: name for name, attr in re.findall(r"result\['([^']+)'\] = self\.(\w+)", to_map)}
    wire.update({attr: name for name, attr in
                 re.findall(r"result\['([^']+)'\] = \[\]\s*\n\s*if self\.(\w+) is not None", to_map)})
    init = inspect.getsource(cls.__init__)
    ann = {}
    tree = ast.parse("class _X:\n" + init if init.startswith(" ") else init)
    fn = tree.body[0].body[0] if isinstance(tree.body[0], ast.ClassDef) else tree.body[0]
    for arg in fn.args.args[1:]:
        ann[arg.arg] = ast.unparse(arg.annotation) if arg.annotation is not None else "Any"
    docs, pending = {}, []
    for line in init.splitlines():
        s = line.strip()
        if s.startswith("#"):
            pending.append(s[1:].strip())
        elif s.startswith("self."):
            attr = s[5:].split("=")[0].strip()
            docs[attr] = "\n".join(pending).strip()
            pending = []
        elif s:
            pending = []
    return [(attr, wire[attr], ann.get(attr, "Any"), docs.get(attr, "")) for attr in ann if attr in wire]


def ali_type(annotation, models, depth):
    a = annotation.replace("main_models.", "")
    m = re.fullmatch(r"List\[(.+)\]", a)
    if m:
        return {"type": "array", "items": ali_type(m.group(1), models, depth)}
    if re.fullmatch(r"Dict\[.+\]", a):
        return {"type": "object", "members": None}
    scalar = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "Any": "any"}
    if a in scalar:
        return {"type": scalar[a]}
    cls = getattr(models, a)
    return ali_model(cls, models, depth + 1)


def ali_model(cls, models, depth=0):
    members = {}
    for attr, name, annotation, doc in ali_fields(cls):
        n = ali_type(annotation, models, depth)
        # The SDK's doc comments mark required fields with this sentence (e.g. RegionId, DiskId).
        n["required"] = "This parameter is required." in doc
        n["doc"] = doc
        members[name] = n
    return {"type": "object", "model": cls.__name__, "members": members}


def alibaba():
    from alibabacloud_ecs20140526 import models as ecs
    from alibabacloud_vpc20160428 import models as vpc
    from alibabacloud_nas20170626 import models as nas
    from alibabacloud_cms20190101 import models as cms
    from alibabacloud_bssopenapi20171214 import models as bss
    out = {}
    for pkg, service, version, models, actions in (
            ("alibabacloud_ecs20140526", "ecs", "2014-05-26", ecs, ALIBABA),
            ("alibabacloud_vpc20160428", "vpc", "2016-04-28", vpc, ALIBABA_VPC),
            ("alibabacloud_nas20170626", "nas", "2017-06-26", nas, ALIBABA_NAS),
            ("alibabacloud_cms20190101", "cms", "2019-01-01", cms, ALIBABA_CMS),
            ("alibabacloud_bssopenapi20171214", "bss", "2017-12-14", bss, ALIBABA_BSS)):
        ver = pkg_version(pkg.replace("_", "-"))
        for a in actions:
            req_cls = getattr(models, a + "Request")
            body_cls = getattr(models, a + "ResponseBody")
            # The model's own file (`_describe_vswitches_request.py`: not the action's snake case).
            path = f"{pkg}/models/{os.path.basename(inspect.getfile(req_cls))}"
            out[a] = {"model": req_cls.__name__, "cloud": "alibaba", "service": service, "version": version,
                      "method": "POST", "path": "/",
                      "source": f"{pkg.replace('_', '-')} {ver} {path}",
                      "params": ali_model(req_cls, models)["members"],
                      "response": ali_model(body_cls, models)["members"]}
    return out


# ---------------------------------------------------------------- JD Cloud
def jd_doc_params(doc):
    """`:param name: text` entries of a JD docstring -> {name: (optional, text)}."""
    out = {}
    parts = re.split(r"^\s*:param (\w+):", doc or "", flags=re.M)
    for i in range(1, len(parts), 2):
        text = parts[i + 1].strip()
        out[parts[i]] = (text.startswith("(Optional)"), text)
    return out


def jd_class_fields(cls):
    """(name, optional, doc) of a JD parameters/model class: constructor arguments and setters."""
    fields = {}
    sig = inspect.signature(cls.__init__)
    docs = jd_doc_params(cls.__init__.__doc__)
    # JD's generator makes required fields the constructor arguments without a default.
    for p in list(sig.parameters.values())[1:]:
        fields[p.name] = (p.default is not inspect.Parameter.empty, docs.get(p.name, (True, ""))[1])
    # Optional request parameters have no constructor argument: they are attributes set to None with
    # a setX method whose docstring carries the doc.
    for name, fn in inspect.getmembers(cls, inspect.isfunction):
        if name.startswith("set") and name != "__init__":
            for pname, (optional, text) in jd_doc_params(fn.__doc__).items():
                fields.setdefault(pname, (optional, text))
    src = inspect.getsource(cls.__init__)
    for attr in re.findall(r"self\.(\w+) = None", src):
        fields.setdefault(attr, (True, ""))
    return fields


def jdcloud():
    ver = pkg_version("jdcloud_sdk")
    with open(os.path.join(HERE, "jdcloud-models.json"), encoding="utf-8") as f:
        curated = json.load(f)
    nested, responses = curated["nested"], curated["responses"]
    used = set()

    def model_class(ref):
        svc, name = ref.split(".")
        return getattr(importlib.import_module(f"jdcloud_sdk.services.{svc}.models.{name}"), name)

    def tree(cls, prefix, depth=0):
        members = {}
        for name, (optional, text) in sorted(jd_class_fields(cls).items()):
            key = f"{prefix}.{name}"
            n = {"required": not optional, "doc": text}
            ref = nested.get(key)
            if ref is not None:
                used.add(key)
                many = ref.endswith("[]")
                sub = model_class(ref.rstrip("[]"))
                t = {"type": "object", "model": ref.rstrip("[]"),
                     "members": tree(sub, ref.rstrip("[]"), depth + 1) if depth < 6 else None}
                n.update({"type": "array", "items": t} if many else t)
            else:
                n["type"] = "any"
            members[name] = n
        return members

    out = {}
    for svc, actions in JDCLOUD.items():
        for a in actions:
            cls_name = a[0].upper() + a[1:]
            mod = importlib.import_module(f"jdcloud_sdk.services.{svc}.apis.{cls_name}Request")
            req_cls = getattr(mod, cls_name + "Request")
            params_cls = getattr(mod, cls_name + "Parameters")
            # The REST path and method are the first two arguments the request class passes to
            # JDCloudRequest; read them from its source rather than guessing from the name.
            m = re.search(r"__init__\(\s*'([^']+)',\s*'([A-Z]+)'", inspect.getsource(req_cls.__init__))
            path, method = m.group(1), m.group(2)
            # The API version is the request class's `version` default (v1 for vm/disk/billing, v2
            # for renewal), which the SDK puts before the path.
            v = re.search(r'version="(v\d+)"', inspect.getsource(req_cls.__init__))
            version = v.group(1) if v else "v1"
            rel = f"jdcloud_sdk/services/{svc}/apis/{cls_name}Request.py"
            params = tree(params_cls, f"{svc}.{cls_name}Parameters")
            resp = responses.get(a, {})
            if isinstance(resp, str):
                response = tree(model_class(resp), resp)
            else:
                response = {}
                for field, ref in sorted(resp.items()):
                    if ref is None:
                        response[field] = {"type": "any", "required": False}
                        continue
                    base = ref.rstrip("[]")
                    t = {"type": "object", "model": base, "members": tree(model_class(base), base)}
                    response[field] = {"type": "array", "items": t} if ref.endswith("[]") else t
            out[a] = {"model": params_cls.__name__, "cloud": "jdcloud", "service": svc, "version": version, "method": method,
                      "path": f"/{version}" + path, "source": f"jdcloud_sdk {ver} {rel}", "params": params,
                      "response": response}
    unknown = sorted(set(nested) - used)
    if unknown:
        sys.exit(f"gen.py: contract/jdcloud-models.json names parameters the SDK does not have: {unknown}")
    return out


# ---------------------------------------------------------------- curated value rules
def lookup(params, dotted):
    """The node at `A.B[].C` in a parameter tree, or None."""
    node = {"type": "object", "members": params}
    for part in dotted.split("."):
        many = part.endswith("[]")
        part = part[:-2] if many else part
        members = node.get("members") or {}
        if part not in members:
            return None
        node = members[part]
        if many:
            node = node.get("items")
            if node is None:
                return None
    return node


def apply_rules(schema):
    with open(os.path.join(HERE, "rules.json"), encoding="utf-8") as f:
        rules = json.load(f)["rules"]
    for r in rules:
        spec = schema[r["cloud"]].get(r["action"])
        if spec is None:
            sys.exit(f"gen.py: rules.json: {r['cloud']} has no action {r['action']}")
        node = lookup(spec["params"], r["param"])
        if node is None:
            sys.exit(f"gen.py: rules.json: {r['cloud']} {r['action']} has no parameter {r['param']}")
        # The words may sit on the parameter or, for a rule about its members, on the parent.
        quoted = lookup(spec["params"], r.get("quote_param", r["param"])) or {}
        doc = re.sub(r"\s+", " ", quoted.get("doc", ""))
        if re.sub(r"\s+", " ", r["quote"]) not in doc:
            sys.exit(f"gen.py: rules.json: the quote for {r['cloud']} {r['action']} {r['param']} is not in "
                     f"the definition's doc text any more: {r['quote']!r}")
        for k in ("enum", "range", "step", "format", "type", "required", "enum_by", "required_when",
                  "not_enum", "message", "only_when", "deprecated"):
            if k in r:
                node[k] = r[k]
        if r["source"] not in node.setdefault("rule_sources", []):
            node["rule_sources"].append(r["source"])


def strip_docs(x):
    """Docs are needed to check quotes, not in the committed schema (they would triple its size)."""
    if isinstance(x, dict):
        return {k: strip_docs(v) for k, v in x.items() if k != "doc"}
    if isinstance(x, list):
        return [strip_docs(v) for v in x]
    return x


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "schema")
    schema = {"tencent": tencent(), "alibaba": alibaba(), "jdcloud": jdcloud()}
    apply_rules(schema)
    os.makedirs(out_dir, exist_ok=True)
    for cloud, actions in schema.items():
        doc = {"cloud": cloud, "client_actions": CLIENT_ACTIONS[cloud], "actions": strip_docs(actions)}
        with open(os.path.join(out_dir, f"{cloud}.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, sort_keys=True, ensure_ascii=False)
            f.write("\n")
    print(f"wrote {', '.join(f'{c}: {len(a)} actions' for c, a in schema.items())} to {out_dir}")


if __name__ == "__main__":
    main()
