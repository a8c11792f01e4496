#!/usr/bin/env python3
"""gpuctl node agent: stops or releases this instance when its GPUs stay idle; runs the spot notice hook
once. Signs with the instance role's temporary keys (metadata service) via the cloud's SDK; logs no key."""
import datetime as dt
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request


def log(msg):
    print(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) + " gpuctl-agent: " + msg, flush=True)


class Metadata:
    """The metadata service (with Alibaba's hardened-mode token when it gives one)."""

    def __init__(self, cfg):
        self.base = cfg["metadata_base"].rstrip("/")
        self.hardened = cfg["provider"] == "alibaba"
        self.token, self.token_until = None, 0

    def _token(self):
        if not self.hardened or time.time() < self.token_until:
            return self.token
        req = urllib.request.Request(self.base + "/latest/api/token", method="PUT",
                                     headers={"X-aliyun-ecs-metadata-token-ttl-seconds": "21600"})
        try:
            with urllib.request.urlopen(req, timeout=3) as r:
                self.token, self.token_until = r.read().decode(), time.time() + 21000
        except (urllib.error.URLError, OSError):
            self.token = None  # the plain mode answers unless hardening is enforced
        return self.token

    def get(self, path):
        """(status, text); status 0 when the service cannot be reached."""
        headers = {}
        token = self._token()
        if token:
            headers["X-aliyun-ecs-metadata-token"] = token
        try:
            with urllib.request.urlopen(urllib.request.Request(self.base + path, headers=headers), timeout=3) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, ""
        except (urllib.error.URLError, OSError):
            return 0, ""


class Credentials:
    """The role's temporary keys, fetched again 5 min before expiry or after a refusal."""

    def __init__(self, cfg, md):
        self.cfg, self.md, self.keys, self.until = cfg, md, None, 0

    def get(self):
        if self.keys and time.time() < self.until - 300:
            return self.keys
        status, text = self.md.get(self.cfg["credentials_path"] + self.cfg["role"])
        if status != 200:
            raise RuntimeError("no role credentials from the metadata service (HTTP %s): is role %r attached?"
                               % (status, self.cfg["role"]))
        j = json.loads(text)
        if j.get("Code") != "Success":
            raise RuntimeError("the metadata service did not issue credentials (Code %r)" % j.get("Code"))
        if self.cfg["provider"] == "tencent":
            self.keys = (j["TmpSecretId"], j["TmpSecretKey"], j["Token"])
            self.until = int(j["ExpiredTime"])
        else:
            self.keys = (j["AccessKeyId"], j["AccessKeySecret"], j["SecurityToken"])
            self.until = dt.datetime.strptime(j["Expiration"], "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=dt.timezone.utc).timestamp()
        return self.keys

    def drop(self):
        self.keys = None


def host(cfg, key, region):
    return cfg[key].replace("{region}", region)


class Tencent:
    def __init__(self, cfg, creds, region, instance):
        from tencentcloud.common import credential
        from tencentcloud.common.profile.client_profile import ClientProfile
        from tencentcloud.common.profile.http_profile import HttpProfile
        self.cfg, self.creds, self.region, self.instance = cfg, creds, region, instance
        self._credential, self._cp, self._hp = credential, ClientProfile, HttpProfile

    def _profile(self, key):
        hp = self._hp(endpoint=host(self.cfg, key, self.region), protocol=self.cfg["scheme"], reqTimeout=30)
        return self._cp(httpProfile=hp)

    def _cred(self):
        return self._credential.Credential(*self.creds.get())

    def points(self, start):
        from tencentcloud.monitor.v20180724 import models, monitor_client
        ns, metric, dim, period = self.cfg["metric"]
        req = models.GetMonitorDataRequest()
        req.from_json_string(json.dumps({
            "Namespace": ns, "MetricName": metric, "Period": period,
            "Instances": [{"Dimensions": [{"Name": dim, "Value": self.instance}]}],
            "StartTime": dt.datetime.fromtimestamp(start, dt.timezone(dt.timedelta(hours=8))).isoformat()}))
        resp = monitor_client.MonitorClient(self._cred(), self.region, self._profile("monitor_endpoint")).GetMonitorData(req)
        # Judged on the cloud's clock: EndTime defaults to its now.
        end = dt.datetime.fromisoformat(resp.EndTime).timestamp()
        pts = []
        for d in resp.DataPoints or []:
            pts += list(zip(d.Timestamps or [], d.Values or []))
        return end, sorted((float(t), float(v)) for t, v in pts)

    def act(self, then):
        from tencentcloud.cvm.v20170312 import cvm_client, models
        client = cvm_client.CvmClient(self._cred(), self.region, self._profile("compute_endpoint"))
        if then == "stop":
            req = models.StopInstancesRequest()
            req.from_json_string(json.dumps({"InstanceIds": [self.instance], "StoppedMode": "STOP_CHARGING"}))
            return client.StopInstances(req).RequestId
        req = models.TerminateInstancesRequest()
        req.from_json_string(json.dumps({"InstanceIds": [self.instance]}))
        return client.TerminateInstances(req).RequestId


class Alibaba:
    def __init__(self, cfg, creds, region, instance):
        from alibabacloud_tea_openapi.models import Config
        self.cfg, self.creds, self.region, self.instance, self._config = cfg, creds, region, instance, Config

    def _conf(self, key):
        ak, sk, token = self.creds.get()
        return self._config(access_key_id=ak, access_key_secret=sk, security_token=token, region_id=self.region,
                            endpoint=host(self.cfg, key, self.region), protocol=self.cfg["scheme"])

    def points(self, start):
        from alibabacloud_cms20190101 import models
        from alibabacloud_cms20190101.client import Client
        ns, metric, dim, period = self.cfg["metric"]
        req = models.DescribeMetricListRequest(
            namespace=ns, metric_name=metric, period=str(period), start_time=str(int(start * 1000)),
            dimensions=json.dumps([{dim: self.instance}]))
        body = Client(self._conf("monitor_endpoint")).describe_metric_list(req).body
        rows = json.loads(body.datapoints or "[]")
        pts = sorted((r["timestamp"] / 1000.0, float(r.get("Maximum", r.get("Average")))) for r in rows)
        # No end time in the answer: the newest point's period end stands for it.
        end = pts[-1][0] + period if pts else time.time()
        return end, pts

    def act(self, then):
        from alibabacloud_ecs20140526 import models
        from alibabacloud_ecs20140526.client import Client
        client = Client(self._conf("compute_endpoint"))
        if then == "stop":
            req = models.StopInstancesRequest(region_id=self.region, instance_id=[self.instance],
                                              stopped_mode="StopCharging")
            return client.stop_instances(req).body.request_id
        req = models.DeleteInstanceRequest(instance_id=self.instance, force=True)
        return client.delete_instance(req).body.request_id


def idle_verdict(end, pts, idle, period):
    """True: all of the last for_s below the threshold, no gap; False: busy; None: too little data."""
    start = end - idle["for_s"]
    inside = [(t, v) for t, v in pts if start <= t < end]
    if any(v >= idle["below_percent"] for _, v in inside):
        return False
    times = [start - period] + [t for t, _ in inside] + [end - period]
    if not inside or any(b - a > 2 * period for a, b in zip(times, times[1:])):
        return None
    return True


def error_text(e):
    """Code and message only (no request, no keys)."""
    code = getattr(e, "code", None) or getattr(e, "get_code", lambda: None)()
    msg = getattr(e, "message", None) or str(e)
    return "%s: %s" % (code, str(msg)[:300]) if code else type(e).__name__ + ": " + str(msg)[:300]


def notice_time(provider, text):
    if provider == "tencent":  # "2018-08-18 12:05:33", UTC+8
        t = dt.datetime.strptime(text.strip(), "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.timezone(dt.timedelta(hours=8)))
    else:  # "2015-01-05T18:02:00Z"
        t = dt.datetime.strptime(text.strip(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    return t.timestamp()


def run_hook(cfg, at):
    notice = cfg["notice"]
    marker = os.path.join(cfg["state_dir"], "notice-handled")
    if os.path.exists(marker):
        return
    with open(marker, "w") as f:  # first: once, even if the agent dies mid-hook
        f.write(str(int(at)) + "\n")
    left = at - time.time()
    timeout = max(1, min(notice["timeout_s"], left - 10))
    log("spot reclaim at %s: running the on_notice hook (timeout %ds)" % (time.strftime("%H:%M:%SZ", time.gmtime(at)), timeout))
    env = dict(os.environ, GPUCTL_RECLAIM_AT=str(int(at)))
    try:
        rc = subprocess.run(["bash", "-c", notice["command"]], env=env, timeout=timeout).returncode
        log("on_notice hook exited %d" % rc)
    except subprocess.TimeoutExpired:
        log("on_notice hook still running after %ds: stopped" % timeout)


def main(argv):
    cfg = json.load(open(argv[1]))
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else -1
    os.makedirs(cfg["state_dir"], exist_ok=True)
    md = Metadata(cfg)
    status, instance = md.get("/latest/meta-data/instance-id")
    status2, region = md.get(cfg["region_path"])
    if status != 200 or status2 != 200:
        log("the metadata service does not answer (HTTP %s/%s); retrying later" % (status, status2))
        return 1
    creds = Credentials(cfg, md) if cfg.get("idle") else None
    cloud = (Tencent if cfg["provider"] == "tencent" else Alibaba)(cfg, creds, region, instance) if creds else None
    log("watching %s in %s (idle: %s; spot notice: %s)" % (instance, region, json.dumps(cfg.get("idle")),
                                                          "hook" if cfg.get("notice") else "none"))
    poll, last_idle = cfg["poll"], 0.0
    while rounds != 0:
        rounds -= 1
        if cfg.get("notice"):
            status, text = md.get(cfg["notice_path"])
            if status == 200 and text.strip():
                try:
                    run_hook(cfg, notice_time(cfg["provider"], text))
                except ValueError:
                    log("unreadable termination time %r" % text[:40])
        if cloud and time.time() - last_idle >= poll["idle_s"]:
            last_idle = time.time()
            idle, period = cfg["idle"], cfg["metric"][3]
            try:
                end, pts = cloud.points(time.time() - idle["for_s"] - idle["lookback_s"])
                verdict = idle_verdict(end, pts, idle, period)
                if verdict:
                    log("GPU utilization below %g%% for %ds: %s" % (idle["below_percent"], idle["for_s"], idle["then"]))
                    log("%s accepted, request %s" % (idle["then"], cloud.act(idle["then"])))
                    return 0
                log("not idle" if verdict is False else "not enough utilization data yet: not idle")
            except Exception as e:  # any refusal: log it, drop the keys, retry next round
                creds.drop()
                log("idle check failed: " + error_text(e))
        if rounds != 0:
            time.sleep(poll["notice_s"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
