#!/usr/bin/env python3
"""The wire contract check (issue 12): holds recorded requests against the schema that gen.py
derived from the clouds' own definitions.

  check.py TRAFFIC_DIR...        check every request gpuctl's client sent (the *.jsonl files a sim
                                 wrote with GPUCTL_SIM_RECORD set)
  check.py --responses           check that every response field a client reads (response-fields.json)
                                 exists in the SDK's response model

Only gpuctl's own client traffic is checked: requests whose User-Agent is `gpuctl/<version>`
(crates/provision/src/http.rs). Requests that tests build by hand to provoke errors (tests/tests/auth.rs,
the sim's own tests) and the official SDKs' requests (step 40) carry other user agents and are
counted as "other traffic", never as passes. A request gpuctl sent is checked whatever the emulator
answered: a wrong request that the emulator refused is still a wrong request.

Output: one line per distinct problem, `cloud action param: what is wrong (rule source)`, sorted;
then the actions with their request counts and the client actions that never appeared; last line
`N passed, N failed` (requests). Exit status 1 when any request failed or a client action is missing.
Standard library only: check.py runs without the SDKs (gen.py needs them).
"""
import glob
import json
import os
import re
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
CLOUDS = ("tencent", "alibaba", "jdcloud")
# Alibaba RPC's common parameters (the signature travels in `Signature`, dropped by the recorder).
ALI_COMMON = {"Action", "Version", "Format", "AccessKeyId", "SignatureMethod", "SignatureVersion",
              "SignatureNonce", "SignatureType", "Timestamp", "SecurityToken", "Signature"}
ISO8601_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z$")
FORMATS = {
    "iso8601-utc": (ISO8601_UTC, "YYYY-MM-DDThh:mm:ssZ (UTC)"),
    "iso8601": (re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$"), "ISO 8601"),
    "datetime": (re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$"), "YYYY-MM-DD hh:mm:ss"),
}


def load_schema(schema_dir):
    out = {}
    for c in CLOUDS:
        with open(os.path.join(schema_dir, f"{c}.json"), encoding="utf-8") as f:
            out[c] = json.load(f)
    return out


class Problems:
    """Problems of one request, as the lines check.py prints."""

    def __init__(self, cloud, action, spec):
        self.cloud, self.action, self.lines = cloud, action, []
        self.source = spec["source"].split(" ", 2)[-1] if spec else ""

    def add(self, param, what, node=None, model=None):
        src = self.source
        if model:
            src = f"{src} {model}"
        if node is not None and node.get("rule_sources"):
            src = "; ".join(node["rule_sources"])
        self.lines.append(f"{self.cloud} {self.action} {param or '-'}: {what} ({src})")


def json_type(v):
    if v is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(v), type(v).__name__)


class Flat(str):
    """A value that arrived as a flattened query/form string: it is parsed as its declared type."""


def coerce(node, v):
    """(ok, value as the declared type) for a flattened string; JSON values pass through."""
    t = node.get("type")
    if not isinstance(v, Flat):
        return True, v
    if t == "integer":
        return (True, int(v)) if re.fullmatch(r"-?\d+", v) else (False, v)
    if t == "number":
        try:
            return True, float(v)
        except ValueError:
            return False, v
    if t == "boolean":
        return (True, v.lower() == "true") if v.lower() in ("true", "false") else (False, v)
    return True, str(v)


def resolve(root, dotted):
    """A sibling parameter's value by its path from the action root (`PeriodUnit`, `a.b.c`)."""
    v = root
    for part in dotted.split("."):
        if not isinstance(v, dict) or part not in v:
            return None
        v = v[part]
    return v.rstrip() if isinstance(v, str) else v


def check_value(node, v, path, root, probs):
    t = node.get("type", "any")
    ok, val = coerce(node, v)
    if not ok:
        probs.add(path, f"is {v!r}, not {'an' if t == 'integer' else 'a'} {t}", node)
        return
    jt = json_type(val)
    type_ok = (t == "any" or jt == t or (t == "number" and jt == "integer"))
    if not type_ok:
        # The value itself is left out: lines must not vary with ids, names or instance types.
        probs.add(path, f"is a JSON {jt}, the definition says {t}", node)
        return
    if t == "object":
        check_object(node, val, path, root, probs)
        return
    if t == "array":
        items = node.get("items") or {"type": "any"}
        for i, x in enumerate(val):
            check_value(items, x, f"{path}[]", root, probs)
        return
    if "enum" in node and val not in node["enum"]:
        probs.add(path, f"is {val!r}, allowed: {', '.join(map(str, node['enum']))}", node)
    if "not_enum" in node and val in node["not_enum"]:
        probs.add(path, f"is {val!r}: {node.get('message', 'not allowed')}", node)
    if "enum_by" in node:
        eb = node["enum_by"]
        unit = resolve(root, eb["param"])
        unit = eb["default"] if unit is None else unit
        allowed = eb["values"].get(str(unit))
        if allowed is not None and val not in allowed:
            probs.add(path, f"is {val!r} with {eb['param']}={unit}, allowed: {', '.join(map(str, allowed))}", node)
    if "range" in node and isinstance(val, (int, float)):
        lo, hi = node["range"]
        if (lo is not None and val < lo) or (hi is not None and val > hi):
            probs.add(path, f"is {val!r}, out of range [{lo}, {'' if hi is None else hi}]", node)
    if "step" in node and isinstance(val, (int, float)):
        q = val / node["step"]
        if abs(q - round(q)) > 1e-6:
            probs.add(path, f"is {val!r}, not a multiple of {node['step']}", node)
    if "format" in node and isinstance(val, str) and node["format"] in FORMATS:
        rx, words = FORMATS[node["format"]]
        if not rx.match(val):
            probs.add(path, f"is not in the format {words}", node)


def check_object(node, obj, path, root, probs):
    members = node.get("members")
    if members is None:  # a free-form map or a cut-off recursive structure
        return
    model = node.get("model")
    prefix = f"{path}." if path else ""
    for k, v in obj.items():
        if v is None:
            continue  # JD's SDK sends unset fields as null: absent
        m = members.get(k)
        if m is None:
            probs.add(prefix + k, "unknown parameter", model=model)
            continue
        check_value(m, v, prefix + k, root, probs)
        ow = m.get("only_when")
        if ow:
            cur = resolve(root, ow["param"])
            cur = ow["default"] if cur is None else cur
            if cur not in ow["in"]:
                probs.add(prefix + k, f"applies only when {ow['param']} is {' or '.join(ow['in'])}, "
                                      f"sent with {ow['param']}={cur}", m)
        if m.get("deprecated"):
            probs.add(prefix + k, f"deprecated: {m['deprecated']}", m)
    for k, m in members.items():
        present = obj.get(k) is not None
        if present:
            continue
        if m.get("required"):
            probs.add(prefix + k, "required parameter missing", m, model=model)
        rw = m.get("required_when")
        if rw and resolve(root, rw["param"]) == rw["equals"]:
            probs.add(prefix + k, f"required when {rw['param']}={rw['equals']}, missing", m)


def unflatten(pairs, params, base, probs, model=None):
    """Flattened names (`DataDisk.1.Size`, `Filters.0.Values.0`) -> a JSON tree, by the schema: a
    segment after an array is an index (`base` is where indices start), else a member name."""
    root = {}
    for name, value in pairs:
        segs = name.split(".")
        node, cur, path = {"type": "object", "members": params, "model": model}, root, ""
        ok = True
        for i, seg in enumerate(segs):
            last = i == len(segs) - 1
            t = node.get("type")
            if t == "array":
                if not seg.isdigit() or int(seg) < base:
                    probs.add(path, f"flattened index {seg!r} (indices start at {base})")
                    ok = False
                    break
                key, child, path = int(seg), node.get("items") or {"type": "any"}, path + "[]"
            elif t == "object" and node.get("members") is not None:
                if seg not in node["members"]:
                    probs.add(f"{path}.{seg}" if path else seg, "unknown parameter", model=node.get("model"))
                    ok = False
                    break
                key, child, path = seg, node["members"][seg], f"{path}.{seg}" if path else seg
            else:
                # A scalar with a further segment, or a free-form map: keep the rest as one key.
                key, child, last = ".".join(segs[i:]), {"type": "any"}, True
            if last:
                cur[key] = Flat(value)
                break
            nxt = cur.get(key)
            if not isinstance(nxt, dict):
                nxt = {}
                cur[key] = nxt
            cur, node = nxt, child
        if not ok:
            continue
    return listify(root, {"type": "object", "members": params})


def root_node(spec):
    return {"type": "object", "members": spec["params"], "model": spec.get("model")}


def listify(tree, node):
    """Index-keyed dicts under array nodes become lists, in index order."""
    if not isinstance(tree, dict):
        return tree
    if node.get("type") == "array":
        items = node.get("items") or {"type": "any"}
        return [listify(tree[k], items) for k in sorted(k for k in tree if isinstance(k, int))]
    members = node.get("members") or {}
    return {k: listify(v, members.get(k, {"type": "any"})) for k, v in tree.items()}


def form_pairs(s):
    return urllib.parse.parse_qsl(s, keep_blank_values=True)


# ---------------------------------------------------------------- per cloud
def json_body(body, probs):
    """A JSON body as parameters (empty: none), or None after reporting that it is not JSON."""
    try:
        params = json.loads(body) if body.strip() else {}
    except ValueError:
        probs.add(None, "body is not JSON")
        return None
    if not isinstance(params, dict):
        probs.add(None, "body is not a JSON object")
        return None
    return params


def identify(rec, schema):
    """(cloud, action, spec, params tree or None, problems) for one recorded request."""
    h = rec.get("headers", {})
    query = form_pairs(rec.get("query", ""))
    body = rec.get("body", "")
    ct = h.get("content-type", "")
    if "x-tc-action" in h:
        action = h["x-tc-action"]
        spec = schema["tencent"]["actions"].get(action)
        probs = Problems("tencent", action, spec)
        if spec is None:
            probs.add(None, "unknown action (not in tccli's cvm/cbs api.json)")
            return "tencent", action, None, None, probs
        if h.get("x-tc-version") != spec["version"]:
            probs.add("X-TC-Version", f"is {h.get('x-tc-version')!r}, the API version is {spec['version']}")
        if "x-tc-region" not in h:
            probs.add("X-TC-Region", "required header missing")
        if rec["method"] == "POST" and ct.startswith("application/json"):
            params = json_body(body, probs)
        else:
            pairs = query + (form_pairs(body) if "x-www-form-urlencoded" in ct else [])
            params = unflatten(pairs, spec["params"], 0, probs, spec.get("model"))
        return "tencent", action, spec, params, probs
    qd = dict(query)
    if "x-acs-action" in h or ("Action" in qd and rec["path"] == "/"):
        action = h.get("x-acs-action") or qd.get("Action")
        version = h.get("x-acs-version") or qd.get("Version")
        spec = schema["alibaba"]["actions"].get(action)
        probs = Problems("alibaba", action, spec)
        if spec is None:
            probs.add(None, "unknown action (no request model in alibabacloud_ecs20140526, _vpc20160428 or _nas20170626)")
            return "alibaba", action, None, None, probs
        if version != spec["version"]:
            probs.add("Version", f"is {version!r}, the API version is {spec['version']}")
        pairs = query + (form_pairs(body) if "x-www-form-urlencoded" in ct else [])
        pairs = [(k, v) for k, v in pairs if k not in ALI_COMMON]
        return "alibaba", action, spec, unflatten(pairs, spec["params"], 1, probs, spec.get("model")), probs
    if rec["path"].startswith(("/v1/regions/", "/v2/regions/")):
        for action, spec in schema["jdcloud"]["actions"].items():
            if spec["method"] != rec["method"]:
                continue
            rx = "^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/:]+)", re.escape(spec["path"])) + "$"
            m = re.match(rx, rec["path"])
            if not m:
                continue
            probs = Problems("jdcloud", action, spec)
            if rec["method"] in ("POST", "PUT", "PATCH"):
                params = json_body(body, probs)
                if params is None:
                    return "jdcloud", action, spec, None, probs
            else:
                params = unflatten(query, spec["params"], 1, probs, spec.get("model"))
            # Path parameters are parameters of the request class too (the SDK puts them in the path).
            for k, v in m.groupdict().items():
                if k in params and params[k] != v:
                    probs.add(k, f"body says {params[k]!r}, the path {v!r}")
                params.setdefault(k, urllib.parse.unquote(v))
            return "jdcloud", action, spec, params, probs
        probs = Problems("jdcloud", f"{rec['method']} {rec['path']}", None)
        probs.add(None, "no request class of jdcloud_sdk has this method and path")
        return "jdcloud", probs.action, None, None, probs
    return None, None, None, None, None


def is_client(rec):
    return rec.get("headers", {}).get("user-agent", "").startswith("gpuctl/")


def check_records(records, schema):
    lines, counts, passed, failed, other, unknown_cloud = set(), {}, 0, 0, 0, 0
    for rec in records:
        if not is_client(rec):
            other += 1
            continue
        cloud, action, spec, params, probs = identify(rec, schema)
        if cloud is None:
            unknown_cloud += 1
            failed += 1
            lines.add(f"- {rec['method']} {rec['path']}: no cloud's protocol markers (-)")
            continue
        if spec is not None and params is not None:
            check_object(root_node(spec), params, "", params, probs)
        counts[(cloud, action)] = counts.get((cloud, action), 0) + 1
        if probs.lines:
            failed += 1
            lines.update(probs.lines)
        else:
            passed += 1
    return sorted(lines), counts, passed, failed, other


def read_traffic(dirs):
    records, files = [], []
    for d in dirs:
        files += sorted(glob.glob(os.path.join(d, "**", "*.jsonl"), recursive=True))
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    records.append(json.loads(line))
                except ValueError:
                    # A sim killed mid-write can leave a torn last line; anything else is an error.
                    print(f"{f}:{n}: not a JSON line, skipped", file=sys.stderr)
    return records, files


# ---------------------------------------------------------------- responses
def response_problems(schema, fields=None):
    if fields is None:
        with open(os.path.join(HERE, "response-fields.json"), encoding="utf-8") as f:
            fields = json.load(f)["reads"]
    out, n = [], 0
    for cloud, actions in fields.items():
        for action, paths in actions.items():
            spec = schema[cloud]["actions"].get(action)
            for p in paths:
                n += 1
                if spec is None:
                    out.append(f"{cloud} {action} response.{p}: unknown action")
                    continue
                node = {"type": "object", "members": spec["response"]}
                ok = True
                for part in p.split("."):
                    many = part.endswith("[]")
                    part = part[:-2] if many else part
                    members = node.get("members")
                    if members is None or part not in members:
                        ok = False
                        break
                    node = members[part]
                    if many:
                        if node.get("type") != "array":
                            ok = False
                            break
                        node = node.get("items") or {}
                if not ok:
                    src = spec["source"].split(" ", 2)[-1].replace("_request.py", "_response_body.py")
                    out.append(f"{cloud} {action} response.{p}: not in the SDK's response model ({src})")
    return out, n


def main(argv):
    schema_dir = os.path.join(HERE, "schema")
    if argv and argv[0].startswith("--schema="):
        schema_dir = argv.pop(0).split("=", 1)[1]
    schema = load_schema(schema_dir)
    if argv == ["--responses"]:
        probs, n = response_problems(schema)
        for p in probs:
            print(p)
        print(f"{n - len(probs)} passed, {len(probs)} failed")
        return 1 if probs else 0
    if not argv:
        print("usage: check.py [--schema=DIR] TRAFFIC_DIR... | --responses", file=sys.stderr)
        return 2
    records, files = read_traffic(argv)
    if not files or not any(is_client(r) for r in records):
        print(f"check.py: no recorded gpuctl client traffic in {', '.join(argv)} ({len(files)} files, "
              f"{len(records)} requests): run the e2e suites with GPUCTL_SIM_RECORD=<dir> first "
              "(scripts/test.d/10-rust.sh does)", file=sys.stderr)
        return 2
    lines, counts, passed, failed, other = check_records(records, schema)
    for line in lines:
        print(line)
    print()
    print("requests per action (gpuctl client traffic):")
    for cloud in CLOUDS:
        for action in sorted(a for c, a in counts if c == cloud):
            print(f"  {cloud:8} {action:34} {counts[(cloud, action)]}")
    missing = [f"{c} {a}" for c in CLOUDS for a in schema[c]["client_actions"] if (c, a) not in counts]
    print(f"client actions never sent: {', '.join(missing) if missing else 'none'}")
    print(f"other traffic (not gpuctl's client, not checked): {other} requests")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
