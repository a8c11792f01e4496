//! The node agent end to end (issue 15): a pool with an `idle` policy (or a spot `on_notice` hook) is
//! provisioned by the `gpuctl` binary against `gpuctl sim`; the agent program and its config are taken
//! from the user data the cloud received, only the metadata base and the API endpoints are pointed at
//! the local cloud, and the very program that was rendered runs with the official SDKs of
//! `.venv-contract` and **no user credentials in its environment**: its keys come from the instance
//! role through the metadata service, as on a real node. gpuctl itself is not running meanwhile.
//! Needs `.venv-contract` (scripts/pyenv; step 10 makes it first): without it the test says so and
//! passes, unless `CI` or `GPUCTL_REQUIRE_TOOLS` is set.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use gpuctl_e2e::e2e::{self, SimProcess};
use serde_json::{json, Value};

const QUICK: &str = "seed = 11\n[knobs]\nboot_seconds = 1\n";

fn python() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv-contract/bin/python");
    if p.exists() {
        Some(p)
    } else if std::env::var_os("CI").is_some() || std::env::var_os("GPUCTL_REQUIRE_TOOLS").is_some() {
        panic!("{} is missing: scripts/pyenv makes it", p.display());
    } else {
        eprintln!("skipped: {} is missing (scripts/pyenv makes it)", p.display());
        None
    }
}

/// A one-instance pool of `provider`'s test type with `extra` pool lines, billed `billing`.
fn spec(provider: &str, dep: &str, billing: &str, extra: &str) -> String {
    e2e::spec_text(provider, dep, 1).replace("billing = \"hourly\"", &format!("billing = \"{billing}\""))
        + extra
}

struct Node {
    id: String,
    program: PathBuf,
    config: PathBuf,
}

/// Provisions `text`, then writes the rendered agent and its config (endpoints pointed at the sim) to
/// `dir`. Checks that the user data holds no key of the user's.
fn provision(sim: &SimProcess, dir: &Path, provider: &str, dep: &str, text: &str) -> Node {
    let spec_path = dir.join(format!("{dep}.toml"));
    std::fs::write(&spec_path, text).unwrap();
    e2e::ok_json(&sim.url, dir, &["provision", spec_path.to_str().unwrap(), "--yes", "--json"]);
    let live = sim.live(provider, Some(dep));
    assert_eq!(live.len(), 1, "{live:?}");
    let id = e2e::instance_id(&live[0]);
    let b64 = live[0]["UserData"].as_str().expect("user data");
    let user_data =
        String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b64).unwrap()).unwrap();
    for (name, value) in e2e::SIM_KEYS {
        assert!(!user_data.contains(value), "{provider}: the boot config holds {name}");
    }
    let files = gpuctl_provision::agent::written_files(&user_data);
    let file = |path: &str| {
        files
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, c)| c.clone())
            .unwrap_or_else(|| panic!("no {path} in {user_data}"))
    };
    let program = dir.join(format!("{dep}-agent.py"));
    std::fs::write(&program, file(gpuctl_provision::agent::PROGRAM_PATH)).unwrap();
    let mut cfg: Value = serde_json::from_str(&file(gpuctl_provision::agent::CONFIG_PATH)).unwrap();
    // Only where things are changes: the local cloud instead of the real hosts, a temporary state
    // folder, and quick polling.
    let host = sim.url.trim_start_matches("http://").to_string();
    cfg["metadata_base"] = json!(format!("{}/_metadata/{provider}/{id}", sim.url));
    cfg["compute_endpoint"] = json!(host);
    cfg["monitor_endpoint"] = json!(host);
    cfg["scheme"] = json!("http");
    cfg["state_dir"] = json!(dir.join(format!("{dep}-state")));
    cfg["poll"] = json!({"notice_s": 0.2, "idle_s": 0});
    let config = dir.join(format!("{dep}-agent.json"));
    std::fs::write(&config, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    Node { id, program, config }
}

/// Runs the agent for at most `rounds` rounds, bounded to 90 s, with an environment holding no
/// credential: (exit code, its log).
fn run_agent(py: &Path, dir: &Path, node: &Node, rounds: u32) -> (i32, String) {
    let log = dir.join("agent.log");
    let mut child = Command::new(py)
        .arg(&node.program)
        .arg(&node.config)
        .args(["--rounds", &rounds.to_string()])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::from(std::fs::File::options().append(true).open(&log).unwrap()))
        .spawn()
        .expect("the agent starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code().unwrap_or(-1);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the agent ran past 90 s: {}", std::fs::read_to_string(&log).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (code, std::fs::read_to_string(&log).unwrap_or_default())
}

fn set_usage(sim: &SimProcess, provider: &str, id: &str, percent: f64) {
    let (status, body) = sim.admin(
        "POST",
        "/_sim/gpu_usage",
        &json!({"provider": provider, "instance_id": id, "percent": percent}).to_string(),
    );
    assert_eq!(status, 200, "{body}");
}

fn advance(sim: &SimProcess, seconds: u64) {
    let (status, body) = sim.admin("POST", "/_sim/clock", &format!("{{\"advance_seconds\": {seconds}}}"));
    assert_eq!(status, 200, "{body}");
}

fn instance(sim: &SimProcess, provider: &str, id: &str) -> Option<Value> {
    let st = sim.state();
    st["providers"][provider]["instances"].as_array()?.iter().find(|i| e2e::instance_id(i) == id).cloned()
}

/// (state, stopped mode) as the cloud's own fields say.
fn stopped(provider: &str, i: &Value) -> (String, String) {
    let s = |k: &str| i[k].as_str().unwrap_or("").to_string();
    match provider {
        "tencent" => (s("InstanceState"), s("StoppedMode")),
        _ => (s("Status"), s("StoppedMode")),
    }
}

fn idle_policy_acts(provider: &str) {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let idle = |then: &str| format!("idle = {{ below = \"5%\", for = \"10m\", then = \"{then}\" }}\n");
    let quiet =
        provision(&sim, dir.path(), provider, "quiet", &spec(provider, "quiet", "hourly", &idle("stop")));
    let busy =
        provision(&sim, dir.path(), provider, "busy", &spec(provider, "busy", "hourly", &idle("stop")));
    let gone =
        provision(&sim, dir.path(), provider, "gone", &spec(provider, "gone", "hourly", &idle("release")));
    set_usage(&sim, provider, &quiet.id, 2.0);
    set_usage(&sim, provider, &busy.id, 60.0);
    set_usage(&sim, provider, &gone.id, 1.0);

    // Too early: less than `for` of data is "not enough", never idle.
    advance(&sim, 240);
    let (code, log) = run_agent(&py, dir.path(), &quiet, 1);
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("not enough utilization data yet"), "{log}");
    assert_eq!(
        stopped(provider, &instance(&sim, provider, &quiet.id).unwrap()).0,
        if provider == "tencent" { "RUNNING" } else { "Running" }
    );

    advance(&sim, 600);
    let (code, log) = run_agent(&py, dir.path(), &quiet, 3);
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("stop accepted"), "{log}");
    let (code, busy_log) = run_agent(&py, dir.path(), &busy, 2);
    assert_eq!(code, 0, "{busy_log}");
    assert!(busy_log.contains("not idle") && !busy_log.contains("accepted"), "{busy_log}");
    let (code, gone_log) = run_agent(&py, dir.path(), &gone, 3);
    assert_eq!(code, 0, "{gone_log}");
    assert!(gone_log.contains("release accepted"), "{gone_log}");

    advance(&sim, 120);
    let q = stopped(provider, &instance(&sim, provider, &quiet.id).expect("a stopped instance is kept"));
    let want = if provider == "tencent" { ("STOPPED", "STOP_CHARGING") } else { ("Stopped", "StopCharging") };
    assert_eq!((q.0.as_str(), q.1.as_str()), want, "stopped without charge");
    let b = stopped(provider, &instance(&sim, provider, &busy.id).unwrap());
    assert_eq!(
        b.0,
        if provider == "tencent" { "RUNNING" } else { "Running" },
        "a busy instance is left alone"
    );
    assert!(instance(&sim, provider, &gone.id).is_none_or(|i| !e2e::is_live(&i)), "released");
    for log in [&log, &busy_log, &gone_log] {
        for (name, value) in e2e::SIM_KEYS {
            assert!(!log.contains(value), "the agent's log holds {name}");
        }
        assert!(!log.contains("TmpSecretKey") && !log.contains("SecurityToken\""), "{log}");
    }
    role_is_refused_outside_its_policy(&py, &sim, provider, &busy);
}

/// The role's own keys, used for something its policy does not allow (stopping another instance,
/// listing instances): refused with the cloud's code.
fn role_is_refused_outside_its_policy(py: &Path, sim: &SimProcess, provider: &str, node: &Node) {
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(&node.config).unwrap()).unwrap();
    let other = sim
        .live(provider, Some("quiet"))
        .first()
        .map(e2e::instance_id)
        .unwrap_or_else(|| "ins-00000000".into());
    let script = r#"
import json, sys, urllib.request
cfg = json.load(open(sys.argv[1])); other = sys.argv[2]
base = cfg["metadata_base"]; role = cfg["role"]
creds = json.load(urllib.request.urlopen(base + cfg["credentials_path"] + role))
region = urllib.request.urlopen(base + cfg["region_path"]).read().decode()
if cfg["provider"] == "tencent":
    from tencentcloud.common import credential
    from tencentcloud.common.profile.client_profile import ClientProfile
    from tencentcloud.common.profile.http_profile import HttpProfile
    from tencentcloud.cvm.v20170312 import cvm_client, models
    c = cvm_client.CvmClient(credential.Credential(creds["TmpSecretId"], creds["TmpSecretKey"], creds["Token"]), region,
                             ClientProfile(httpProfile=HttpProfile(endpoint=cfg["compute_endpoint"], protocol="http")))
    for call, body in [("StopInstances", {"InstanceIds": [other]}), ("DescribeInstances", {})]:
        req = getattr(models, call + "Request")(); req.from_json_string(json.dumps(body))
        try:
            getattr(c, call)(req); print(call, "ALLOWED")
        except Exception as e:
            print(call, e.code)
else:
    from alibabacloud_tea_openapi.models import Config
    from alibabacloud_ecs20140526.client import Client
    from alibabacloud_ecs20140526 import models
    c = Client(Config(access_key_id=creds["AccessKeyId"], access_key_secret=creds["AccessKeySecret"],
                      security_token=creds["SecurityToken"], region_id=region, endpoint=cfg["compute_endpoint"], protocol="http"))
    for call, req in [("StopInstances", models.StopInstancesRequest(region_id=region, instance_id=[other])),
                      ("DescribeInstances", models.DescribeInstancesRequest(region_id=region))]:
        try:
            getattr(c, {"StopInstances": "stop_instances", "DescribeInstances": "describe_instances"}[call])(req)
            print(call, "ALLOWED")
        except Exception as e:
            print(call, getattr(e, "code", type(e).__name__))
"#;
    let out = Command::new(py)
        .args(["-c", script])
        .arg(&node.config)
        .arg(&other)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let want = if provider == "tencent" { "UnauthorizedOperation.PermissionDenied" } else { "Forbidden.RAM" };
    assert!(text.contains(&format!("StopInstances {want}")), "{text}");
    assert!(text.contains(&format!("DescribeInstances {want}")), "{text}");
    let _ = cfg;
}

#[test]
fn tencent_idle_instance_is_stopped_by_its_own_agent() {
    idle_policy_acts("tencent");
}

#[test]
fn alibaba_idle_instance_is_stopped_by_its_own_agent() {
    idle_policy_acts("alibaba");
}

fn notice_runs_the_hook_once(provider: &str) {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let mark = dir.path().join("hook-ran");
    let hook = format!(
        "spot = {{ on_notice = \"echo \\\"saved $GPUCTL_RECLAIM_AT\\\" >> {}\", timeout = \"30s\" }}\n",
        mark.display()
    );
    let node = provision(&sim, dir.path(), provider, "spotty", &spec(provider, "spotty", "spot", &hook));
    // Not marked yet: the hook does not run.
    let (code, log) = run_agent(&py, dir.path(), &node, 3);
    assert_eq!(code, 0, "{log}");
    assert!(!mark.exists(), "{log}");
    let (status, body) = sim.admin(
        "POST",
        "/_sim/reclaim",
        &json!({"provider": provider, "instance_id": node.id, "notice_s": 120}).to_string(),
    );
    assert_eq!(status, 200, "{body}");
    let at: Value = serde_json::from_str(&body).unwrap();
    let at: jiff::Timestamp = at["termination_time"].as_str().unwrap().parse().unwrap();
    let (code, log) = run_agent(&py, dir.path(), &node, 6);
    assert_eq!(code, 0, "{log}");
    let ran = std::fs::read_to_string(&mark).unwrap_or_else(|_| panic!("the hook did not run: {log}"));
    assert_eq!(ran, format!("saved {}\n", at.as_second()), "once, told the reclaim time: {log}");
    // Another run of the agent (a restart) does not run it again.
    run_agent(&py, dir.path(), &node, 3);
    assert_eq!(std::fs::read_to_string(&mark).unwrap().lines().count(), 1);
    // And the cloud takes the instance at the termination time.
    advance(&sim, 121);
    assert!(instance(&sim, provider, &node.id).is_none_or(|i| !e2e::is_live(&i)), "reclaimed");
}

#[test]
fn tencent_spot_notice_runs_the_hook_once() {
    notice_runs_the_hook_once("tencent");
}

#[test]
fn alibaba_spot_notice_runs_the_hook_once() {
    notice_runs_the_hook_once("alibaba");
}
