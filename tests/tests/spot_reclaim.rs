//! Issue 15's spot reclaim, end to end against `gpuctl sim`: a 3-node spot cluster pool with shared
//! storage and a checkpoint hook (`spot = { on_notice = … }`) runs; the cloud reclaims node 1 (`POST
//! /_sim/reclaim`, with a notice); node 1's own node agent — the program rendered into its user data,
//! run against the local cloud's metadata service — runs the hook, which writes a checkpoint into the
//! shared folder by the checkpoint convention (a temporary folder stands for the NFS share); the sim
//! clock passes the termination time and the cloud takes the instance; `gpuctl recover` records the
//! reclaim and replaces exactly that node under a new client token, its boot config telling it its
//! rank, node 0's address, what it replaces and — run against the share — the checkpoint the hook
//! wrote; a re-run of `recover` or `provision` buys nothing more; `status --json` shows the reclaim
//! with its hours lost (the hook's 5 minutes and the replacement's boot) and billed, and its
//! replacement. Then node 0 is reclaimed under a notice the API shows (Alibaba's `Recycling`) and is
//! replaced before it goes. A second test kills `recover` again and again: one replacement.

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;

use gpuctl_e2e::e2e::{self, SimProcess};

const SPEC: &str = r#"deployment = "spotrun"
hours = 10

[budget]
total_cny = 1000000

[[pool]]
name = "train"
count = 3
cluster = true
billing = "spot"
provider = "alibaba"
region = "cn-hangzhou"
zone = "cn-hangzhou-i"
instance_type = "ecs.gn7i-c8g1.2xlarge"
image = "ubuntu_22_04_x64_20G_alibase_20240926.vhd"
network = "auto"
ssh_from = ["203.0.113.7/32"]
shared_storage = { mount = "/mnt/shared", size_gb = 100 }
"#;

/// The node agent's Python (`.venv-contract`, the official SDKs): as `tests/tests/idle_agent.rs` finds it.
fn python() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv-contract/bin/python");
    if p.exists() {
        Some(p)
    } else if std::env::var_os("CI").is_some() {
        panic!("{} is missing: scripts/pyenv makes it", p.display());
    } else {
        None
    }
}

/// Runs the node agent rendered into `user_data` for a few rounds, its metadata and API pointed at the
/// local cloud (the instance `id`'s metadata), with no credential in its environment — as
/// `tests/tests/idle_agent.rs` does. Returns its log.
fn run_agent(py: &Path, dir: &Path, sim: &SimProcess, id: &str, user_data: &str) -> String {
    let files = gpuctl_provision::agent::written_files(user_data);
    let file = |path: &str| {
        files.iter().find(|(p, _)| p == path).map(|(_, c)| c.clone()).unwrap_or_else(|| panic!("no {path}"))
    };
    let program = dir.join("agent.py");
    std::fs::write(&program, file(gpuctl_provision::agent::PROGRAM_PATH)).unwrap();
    let mut cfg: serde_json::Value =
        serde_json::from_str(&file(gpuctl_provision::agent::CONFIG_PATH)).unwrap();
    let host = sim.url.trim_start_matches("http://").to_string();
    cfg["metadata_base"] = serde_json::json!(format!("{}/_metadata/alibaba/{id}", sim.url));
    cfg["compute_endpoint"] = serde_json::json!(host);
    cfg["monitor_endpoint"] = serde_json::json!(host);
    cfg["scheme"] = serde_json::json!("http");
    cfg["state_dir"] = serde_json::json!(dir.join("agent-state"));
    cfg["poll"] = serde_json::json!({"notice_s": 0.2, "idle_s": 0});
    let config = dir.join("agent.json");
    std::fs::write(&config, cfg.to_string()).unwrap();
    let o = Command::new(py)
        .arg(&program)
        .arg(&config)
        .args(["--rounds", "6"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the agent runs");
    let log = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{log}");
    log
}

fn user_data(i: &serde_json::Value) -> String {
    let b64 = i["UserData"].as_str().unwrap_or_else(|| panic!("no UserData in {i}"));
    String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b64).expect("base64")).unwrap()
}

/// The `latest_checkpoint` function of a rendered boot script, as written there.
fn latest_checkpoint_fn(script: &str) -> String {
    let start =
        script.find("latest_checkpoint() {").unwrap_or_else(|| panic!("no latest_checkpoint in {script}"));
    let rest = &script[start..];
    // The function ends at the first line that is a lone closing brace (indented as the cloud-config
    // block indents the script).
    let end = rest.lines().position(|l| l.trim() == "}").expect("the function ends");
    let lines: Vec<&str> = rest.lines().take(end + 1).collect();
    lines.iter().map(|l| l.strip_prefix("      ").unwrap_or(l)).collect::<Vec<_>>().join("\n")
}

fn node(status: &serde_json::Value, index: u64, state: &str) -> serde_json::Value {
    status
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["pool"] == "train" && r["index"] == index && r["state"] == state)
        .cloned()
        .unwrap_or_else(|| panic!("no {state} node {index} in {status}"))
}

#[test]
fn a_reclaimed_node_is_replaced_once_and_resumes_from_the_hooks_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sim = SimProcess::start(d, "seed = 15\n[knobs]\nboot_seconds = 1\n", &["--empty-account"]);
    // The checkpoint hook the node agent runs on the reclaim notice, by the checkpoint convention:
    // checkpoints in `checkpoints/` of the shared folder, the newest named in `latest`. A temporary
    // folder stands for the share (on a node: `$GPUCTL_CHECKPOINT_DIR` of /etc/gpuctl/cluster.env).
    let share = d.join("share");
    let ckpt = share.join("checkpoints");
    let hook = format!(
        "spot = {{ on_notice = \"mkdir -p {c} && echo weights-at-step-300 > {c}/step-300.pt && echo step-300.pt > {c}/latest\", timeout = \"30s\" }}\n",
        c = ckpt.display()
    );
    let spec = d.join("spot.toml");
    std::fs::write(&spec, format!("{SPEC}{hook}")).unwrap();
    let spec = spec.to_str().unwrap();

    let o = e2e::gpuctl(&sim.url, d, &["provision", spec, "--yes"]);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    let before = sim.live("alibaba", Some("spotrun"));
    assert_eq!(before.len(), 3, "{out}");
    let status = e2e::ok_json(&sim.url, d, &["status", "--json"]);
    let (node0, node1) = (node(&status, 0, "running"), node(&status, 1, "running"));
    let reclaimed_id = node1["instance_id"].as_str().unwrap().to_string();
    let reclaimed_token = node1["client_token"].as_str().unwrap().to_string();

    // The cloud reclaims node 1 with a 120 s notice; node 1's own agent (the program rendered into its
    // user data) reads the notice from the metadata service and runs the hook.
    let (code, body) = sim.admin(
        "POST",
        "/_sim/reclaim",
        &format!(r#"{{"provider": "alibaba", "instance_id": "{reclaimed_id}", "notice_s": 120}}"#),
    );
    assert_eq!(code, 200, "{body}");
    let gone_node = before.iter().find(|i| e2e::instance_id(i) == reclaimed_id).unwrap();
    match python() {
        Some(py) => {
            let log = run_agent(&py, d, &sim, &reclaimed_id, &user_data(gone_node));
            assert!(ckpt.join("latest").exists(), "the hook wrote its checkpoint: {log}");
        }
        None => {
            // Without the agent's Python (a machine without scripts/pyenv), the hook's writes by hand.
            eprintln!("no .venv-contract: the checkpoint is written as the hook would write it");
            std::fs::create_dir_all(&ckpt).unwrap();
            std::fs::write(ckpt.join("step-300.pt"), "weights-at-step-300\n").unwrap();
            std::fs::write(ckpt.join("latest"), "step-300.pt\n").unwrap();
        }
    }
    assert_eq!(std::fs::read_to_string(ckpt.join("step-300.pt")).unwrap(), "weights-at-step-300\n");
    // An older checkpoint copied in later must not be taken for the newest: `latest` names it.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(ckpt.join("step-200.pt"), b"an older step, copied in late").unwrap();
    // The sim clock passes the termination time: the cloud takes node 1.
    let (code, body) = sim.admin("POST", "/_sim/clock", r#"{"advance_seconds": 400}"#);
    assert_eq!(code, 200, "{body}");
    let left = sim.live("alibaba", Some("spotrun"));
    assert_eq!(left.len(), 2, "the cloud took node 1: {left:?}");

    // From here gpuctl's records follow the sim clock, 400 s ahead of the wall clock.
    let gpuctl = |args: &[&str]| {
        e2e::gpuctl_cmd(&sim.url, d, args).env("GPUCTL_CLOCK_OFFSET_S", "400").output().expect("gpuctl runs")
    };
    let ok_json = |args: &[&str]| -> serde_json::Value {
        let o = gpuctl(args);
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    };
    let rec = ok_json(&["recover", "spotrun", "--yes", "--json"]);
    let found = rec[0]["found"].as_array().unwrap_or_else(|| panic!("{rec}"));
    assert_eq!(found.len(), 1, "{rec}");
    assert_eq!(
        (found[0]["index"].as_u64(), found[0]["instance_id"].as_str()),
        (Some(1), Some(&*reclaimed_id))
    );
    // The report lists the kept nodes too (adopted); one unit is made.
    let units: Vec<&serde_json::Value> = rec[0]["report"]["units"]
        .as_array()
        .unwrap_or_else(|| panic!("{rec}"))
        .iter()
        .filter(|u| u["adopted"] == false)
        .collect();
    assert_eq!(units.len(), 1, "exactly the reclaimed node is made again: {rec}");
    assert_eq!((units[0]["index"].as_u64(), units[0]["state"].as_str()), (Some(1), Some("running")), "{rec}");
    let new_token = units[0]["client_token"].as_str().unwrap().to_string();
    assert_ne!(new_token, reclaimed_token, "the replacement has its own (next-generation) token");

    let after = sim.live("alibaba", Some("spotrun"));
    assert_eq!(after.len(), 3, "{after:?}");
    let replacement = after
        .iter()
        .find(|i| !before.iter().any(|b| e2e::instance_id(b) == e2e::instance_id(i)))
        .expect("one new instance");
    assert_eq!(e2e::tag_value(replacement, "gpuctl-token").as_deref(), Some(&*new_token));
    // Its boot config: node 1 of 3, node 0's address, what it replaces, and the resume point found
    // on the share at boot.
    let text = user_data(replacement);
    assert!(text.contains("'GPUCTL_NODE_RANK=1'") && text.contains("'GPUCTL_NODES=3'"), "{text}");
    let master = node0["private_ip"].as_str().unwrap();
    assert!(text.contains(&format!("'MASTER_ADDR={master}'")), "{text}");
    assert!(text.contains(&format!("'GPUCTL_REPLACES={reclaimed_id}'")), "{text}");
    assert!(text.contains("'GPUCTL_CHECKPOINT_DIR=/mnt/shared/checkpoints'"), "{text}");
    assert!(text.contains("\"GPUCTL_RESUME_FROM=$(latest_checkpoint '/mnt/shared/checkpoints')\""), "{text}");
    // The rendered function, run on the folder standing for the share, names the hook's checkpoint.
    let f = latest_checkpoint_fn(&text);
    let run = |dir: &Path| {
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!("{f}\nlatest_checkpoint \"$1\"",))
            .arg("bash")
            .arg(dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    assert_eq!(run(&ckpt), ckpt.join("step-300.pt").to_str().unwrap());
    // Without the pointer, the newest entry; with nothing there, nothing.
    std::fs::remove_file(ckpt.join("latest")).unwrap();
    assert_eq!(run(&ckpt), ckpt.join("step-200.pt").to_str().unwrap());
    assert_eq!(run(&share.join("none")), "");
    // The other nodes were not touched.
    for b in &before {
        if e2e::instance_id(b) != reclaimed_id {
            assert!(after.iter().any(|a| e2e::instance_id(a) == e2e::instance_id(b)));
        }
    }

    // Again, and provision again: nothing more is bought.
    let rec = ok_json(&["recover", "spotrun", "--yes", "--json"]);
    assert_eq!(rec[0]["found"].as_array().map(Vec::len), Some(0), "{rec}");
    assert!(rec[0]["report"].is_null(), "{rec}");
    let o = gpuctl(&["provision", spec, "--yes"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(sim.live("alibaba", Some("spotrun")).len(), 3);

    // status: the reclaim, with its hours, and what replaced it.
    let status = ok_json(&["status", "--json"]);
    let gone = node(&status, 1, "reclaimed");
    let r = &gone["reclaim"];
    assert_eq!(r["instance_id"].as_str(), Some(&*reclaimed_id), "{gone}");
    assert_eq!(r["replaced_by"].as_str(), Some(&*new_token), "{gone}");
    assert_eq!(r["replaced_by_instance"], replacement["InstanceId"], "{gone}");
    let (lost, work, billed) = (
        r["lost_hours"].as_f64().unwrap(),
        r["lost_work_hours"].as_f64().unwrap(),
        r["billed_hours"].as_f64().unwrap(),
    );
    // The pool's hook checkpointed at the notice, taken as 5 minutes before the end: those 5 minutes
    // are the work lost; the 400 s the clock moved (and the seconds the commands took) are billed.
    assert!((work - 5.0 / 60.0).abs() < 1e-9, "{r}");
    assert!((400.0 / 3600.0..460.0 / 3600.0).contains(&billed), "{r}");
    assert!(r["checkpoint_from"].as_str().unwrap().starts_with("the pool's on-notice hook"), "{r}");
    assert!(lost > work, "the replacement's boot is lost too: {r}");
    assert!(r["billed_cny"].as_f64().unwrap() > 0.0, "{r}");
    assert_eq!(node(&status, 1, "running")["client_token"].as_str(), Some(&*new_token));
    let text = String::from_utf8_lossy(&gpuctl(&["status"]).stdout).to_string();
    assert!(text.contains(&format!("reclaimed: spotrun/train #1 {reclaimed_id}")), "{text}");
    assert!(text.contains("replaced by"), "{text}");

    // Node 0 under a reclaim notice, still running: the cloud describes it `Recycling`, so recover
    // records the reclaim now (the notice seen, the end 5 minutes on) and node 0 is made again while
    // the old one runs out its notice. The new node 0 reads its own address at boot.
    let node0_id = node0["instance_id"].as_str().unwrap().to_string();
    let (code, body) = sim.admin(
        "POST",
        "/_sim/reclaim",
        &format!(r#"{{"provider": "alibaba", "instance_id": "{node0_id}", "notice_s": 300}}"#),
    );
    assert_eq!(code, 200, "{body}");
    let rec = ok_json(&["recover", "spotrun", "--yes", "--json"]);
    let found = rec[0]["found"].as_array().unwrap_or_else(|| panic!("{rec}"));
    assert_eq!(found.len(), 1, "{rec}");
    assert_eq!(found[0]["instance_id"].as_str(), Some(&*node0_id), "{rec}");
    let (noticed, gone) =
        (found[0]["notice_at"].as_str().unwrap(), found[0]["seen_gone_at"].as_str().unwrap());
    let lead =
        gone.parse::<jiff::Timestamp>().unwrap().duration_since(noticed.parse::<jiff::Timestamp>().unwrap());
    assert_eq!(lead.as_secs(), 300, "the end is the notice lead after the notice: {rec}");
    let ids: Vec<String> = sim.live("alibaba", Some("spotrun")).iter().map(e2e::instance_id).collect();
    assert_eq!(ids.len(), 4, "the old node 0 runs out its notice beside its replacement: {ids:?}");
    let status = ok_json(&["status", "--json"]);
    let new0 = node(&status, 0, "running");
    let new0_id = new0["instance_id"].as_str().unwrap();
    assert_ne!(new0_id, node0_id);
    let i =
        sim.live("alibaba", Some("spotrun")).into_iter().find(|i| e2e::instance_id(i) == new0_id).unwrap();
    let text = user_data(&i);
    assert!(text.contains("'GPUCTL_NODE_RANK=0'") && text.contains("\"MASTER_ADDR=$(hostname -I"), "{text}");
    assert!(text.contains(&format!("'GPUCTL_REPLACES={node0_id}'")), "{text}");
    assert_eq!(node(&status, 0, "reclaimed")["reclaim"]["replaced_by"], new0["client_token"]);
    // The cloud takes it at its termination time; nothing more is bought.
    sim.admin("POST", "/_sim/clock", r#"{"advance_seconds": 400}"#);
    assert_eq!(sim.live("alibaba", Some("spotrun")).len(), 3);
    let rec = ok_json(&["recover", "spotrun", "--yes", "--json"]);
    assert_eq!(rec[0]["found"].as_array().map(Vec::len), Some(0), "{rec}");
    assert_eq!(sim.live("alibaba", Some("spotrun")).len(), 3);
}

/// `gpuctl recover` killed anywhere (SIGKILL: no flush, no unlock but the kernel's), again and again,
/// then run to its end: the reclaimed node is replaced exactly once, every instance the cloud runs is
/// one the state records, and the reclaim names its replacement.
#[test]
fn a_killed_recover_never_makes_a_second_replacement() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // 25 ms on every cloud call: a recover takes long enough for kills to land inside it.
    let sim =
        SimProcess::start(d, "seed = 16\n[knobs]\nboot_seconds = 1\nlatency_ms = 25\n", &["--empty-account"]);
    let spec = d.join("spot.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let spec = spec.to_str().unwrap();
    let o = e2e::gpuctl(&sim.url, d, &["provision", spec, "--yes"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let status = e2e::ok_json(&sim.url, d, &["status", "--json"]);
    let reclaimed_id = node(&status, 2, "running")["instance_id"].as_str().unwrap().to_string();
    let (code, body) = sim.admin(
        "POST",
        "/_sim/reclaim",
        &format!(r#"{{"provider": "alibaba", "instance_id": "{reclaimed_id}", "notice_s": 60}}"#),
    );
    assert_eq!(code, 200, "{body}");
    sim.admin("POST", "/_sim/clock", r#"{"advance_seconds": 90}"#);
    assert_eq!(sim.live("alibaba", Some("spotrun")).len(), 2);

    let mut landed = 0;
    for at in [100u64, 300, 600, 900, 1300, 1800] {
        let mut child = e2e::gpuctl_cmd(&sim.url, d, &["recover", "spotrun", "--yes", "--json"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(at));
        if child.try_wait().unwrap().is_none() {
            landed += 1;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(sim.live("alibaba", Some("spotrun")).len() <= 3, "killed at {at} ms: a second replacement");
    }
    assert!(landed >= 3, "most kills should land while recover runs ({landed} of 6)");
    let rec = e2e::ok_json(&sim.url, d, &["recover", "spotrun", "--yes", "--json"]);
    let live = sim.live("alibaba", Some("spotrun"));
    assert_eq!(live.len(), 3, "{rec}");
    let all = e2e::ok_json(&sim.url, d, &["status", "--json", "--all"]);
    let recorded: Vec<&str> =
        all.as_array().unwrap().iter().filter_map(|r| r["client_token"].as_str()).collect();
    for i in &live {
        let token = e2e::tag_value(i, "gpuctl-token").unwrap_or_default();
        assert!(recorded.contains(&token.as_str()), "untracked instance {i}");
    }
    // Every other instance the cloud made for the deployment is gone: nothing made twice.
    let st = sim.state();
    let made: Vec<&serde_json::Value> = st["providers"]["alibaba"]["instances"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| e2e::tag_value(i, "gpuctl-deployment").as_deref() == Some("spotrun"))
        .filter(|i| e2e::is_live(i))
        .collect();
    assert_eq!(made.len(), 3, "{made:?}");
    let gone = node(&all, 2, "reclaimed");
    let now = node(&all, 2, "running");
    assert_eq!(gone["reclaim"]["replaced_by"], now["client_token"], "{gone}");
}
