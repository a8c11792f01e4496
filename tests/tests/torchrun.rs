//! Issue 14's launch, for real: `gpuctl run <deployment>/<pool> --torchrun -- train.py …` against a
//! two-node cluster the local cloud (`gpuctl sim --empty-account`) provisioned. Each node is a Linux
//! network namespace holding the private address the cloud gave it, with its own real sshd; the
//! cloud's admin API points each instance's public address at that same address, which this host
//! reaches over a bridge. gpuctl logs in to both nodes over OpenSSH and starts PyTorch's `torchrun`
//! (PyPI torch 2.5.1 in `.venv-torch`, scripts/test.d/07-torch.sh), which does the rendezvous on node
//! 0's private address; `train.py` (below) takes one DDP step with gloo on the CPU, checks an
//! all_reduce across both ranks and that both replicas agree, and rank 0 writes a checkpoint into a
//! folder both nodes see at the same path (the cluster's shared storage, here this host's temp dir).
//!
//! Needs root (namespaces), `ip`, `/usr/sbin/sshd`, `ssh` and `.venv-torch`: without them the test
//! prints why and passes, unless `CI` or `GPUCTL_REQUIRE_TOOLS` is set (scripts/test sets it after
//! installing them), when it fails.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use gpuctl_e2e::e2e::{self, SimProcess};
use gpuctl_e2e::netns::{Lan, IFACE};
use gpuctl_e2e::sshd::{is_root, keygen, keygen_of, point_at, Listen, Sshd};

/// The training script: a tiny model, one DDP step with gloo, an all_reduce every rank checks, the
/// replicas compared after the step, and rank 0's checkpoint in the shared folder (argv[1]). argv[2]
/// is printed back as Python received it, to show the user's words arrive as one argument each.
const TRAIN_PY: &str = r#"
import os, sys
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

shared, note = sys.argv[1], sys.argv[2]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
print(f"rank {rank} of {world} on {os.environ.get('GPUCTL_TEST_NODE', '?')} note={note!r}", flush=True)
torch.manual_seed(0)
model = nn.Linear(4, 2)
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
torch.manual_seed(100 + rank)  # each rank its own batch: DDP averages the gradients
x, y = torch.randn(8, 4), torch.randn(8, 2)
nn.functional.mse_loss(ddp(x), y).backward()
opt.step()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
want = world * (world + 1) / 2
print(f"rank {rank} all_reduce sum {t.item():g} expected {want:g}", flush=True)
assert t.item() == want
w = torch.cat([p.detach().flatten() for p in model.parameters()])
every = [torch.zeros_like(w) for _ in range(world)]
dist.all_gather(every, w)
agree = all(torch.equal(every[0], v) for v in every)
print(f"rank {rank} replicas agree after the DDP step: {agree}", flush=True)
assert agree
if rank == 0:
    torch.save({"model": model.state_dict(), "world": world}, os.path.join(shared, "ckpt.pt"))
    print("rank 0 wrote ckpt.pt", flush=True)
dist.barrier()
dist.destroy_process_group()
"#;

/// A user argument with everything a shell would act on.
const NOTE: &str = "it's $HOME; touch /tmp/gpuctl-pwned `id` \"q\"";

fn required() -> bool {
    std::env::var_os("CI").is_some() || std::env::var_os("GPUCTL_REQUIRE_TOOLS").is_some()
}

fn venv_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv-torch/bin")
}

/// What this machine lacks for the test, each with where it comes from.
fn missing() -> Vec<String> {
    let mut m = Vec::new();
    if !is_root() {
        m.push("root (network namespaces)".to_string());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        m.push("`ip` (Debian iproute2)".into());
    }
    if !Path::new("/usr/sbin/sshd").is_file() {
        m.push("/usr/sbin/sshd (scripts/boot-tools)".into());
    }
    if Command::new("ssh").arg("-V").output().is_err() {
        m.push("ssh (scripts/boot-tools)".into());
    }
    if !venv_bin().join("torchrun").is_file() {
        m.push(format!("{} (scripts/test.d/07-torch.sh)", venv_bin().join("torchrun").display()));
    }
    m
}

/// A spec of two 1-GPU nodes (`ecs.gn7i-c8g1.2xlarge`, 1 × A10: `--nproc-per-node` defaults to 1) in
/// one Alibaba zone, logging in with the test's RSA key (Alibaba imports no Ed25519).
fn spec(dir: &Path) -> String {
    format!(
        "deployment = \"trainrun\"\nhours = 2\n[budget]\ntotal_cny = 100000\n[[pool]]\nname = \"train\"\n\
         count = 2\ncluster = true\nbilling = \"hourly\"\nimage = \"ubuntu-22.04\"\nnetwork = \"auto\"\n\
         ssh_from = [\"127.0.0.1/32\"]\nlogin_key = {{ public_key = \"{}\" }}\n[[pool.candidates]]\n\
         provider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\n\
         instance_type = \"ecs.gn7i-c8g1.2xlarge\"\n",
        dir.join("id_rsa.pub").display()
    )
}

/// Runs `cmd` to its end or for at most `limit`, then kills it; (output, timed out).
fn output_within(mut cmd: Command, limit: Duration) -> (Output, bool) {
    let out_f = tempfile::NamedTempFile::new().unwrap();
    let err_f = tempfile::NamedTempFile::new().unwrap();
    let mut child = cmd
        .stdout(Stdio::from(out_f.reopen().unwrap()))
        .stderr(Stdio::from(err_f.reopen().unwrap()))
        .spawn()
        .expect("gpuctl runs");
    let deadline = Instant::now() + limit;
    let (status, timed_out) = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break (st, false);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            break (child.wait().unwrap(), true);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let read = |f: &tempfile::NamedTempFile| std::fs::read(f.path()).unwrap_or_default();
    (Output { status, stdout: read(&out_f), stderr: read(&err_f) }, timed_out)
}

/// A tag unique to this test run on this host: the pid, and a counter for a second run in the process.
fn tag() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{:05}{}", std::process::id() % 100_000, N.fetch_add(1, Ordering::SeqCst) % 10)
}

#[test]
fn torchrun_trains_one_ddp_step_over_two_nodes() {
    let lacking = missing();
    if !lacking.is_empty() {
        let why = format!("this machine lacks: {}", lacking.join(", "));
        assert!(!required(), "{why} (CI / GPUCTL_REQUIRE_TOOLS is set: scripts/test installs them)");
        eprintln!("SKIPPED: {why} (set CI or GPUCTL_REQUIRE_TOOLS to fail instead)");
        return;
    }
    let t0 = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    keygen_of("rsa", &d.join("id_rsa"));
    let host_key = d.join("host_key");
    keygen(&host_key);
    let authorized = d.join("id_rsa.pub");
    let spec_path = d.join("cluster.toml");
    std::fs::write(&spec_path, spec(d)).unwrap();
    let spec_s = spec_path.to_str().unwrap();

    let sim = SimProcess::start(d, "seed = 14\n[knobs]\nboot_seconds = 1\n", &["--empty-account"]);
    let o = e2e::gpuctl(&sim.url, d, &["provision", spec_s, "--yes"]);
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{said}");

    // The private addresses the cloud gave the two nodes, as gpuctl recorded them.
    let mut nodes: Vec<(u32, String, Ipv4Addr)> = e2e::open_store(d)
        .unwrap()
        .resources(Some("trainrun"))
        .unwrap()
        .into_iter()
        .filter(|r| r.state.is_live())
        .map(|r| {
            let ip = r.private_ip.as_deref().expect("a recorded private IP").parse().expect("IPv4");
            (r.index, r.instance_id.expect("an instance id"), ip)
        })
        .collect();
    nodes.sort();
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    let addrs: Vec<Ipv4Addr> = nodes.iter().map(|n| n.2).collect();
    assert_ne!(addrs[0], addrs[1]);
    eprintln!("nodes (index, instance, private IP): {nodes:?}");

    // Declared before the sshds, so dropped after them: each namespace's leftovers are killed by pid.
    let lan = Lan::new(&tag(), &addrs);
    // What the image's environment would hold on a real node: torchrun on PATH (the venv, explicitly),
    // and gloo on the node's interface (its host name resolves to no address inside a namespace).
    let mut sshds = Vec::new();
    for (i, (_, id, addr)) in nodes.iter().enumerate() {
        let node_dir = d.join(format!("node{i}"));
        std::fs::create_dir_all(&node_dir).unwrap();
        let extra = format!(
            "SetEnv PATH={}:/usr/local/bin:/usr/bin:/bin GLOO_SOCKET_IFNAME={IFACE} GPUCTL_TEST_NODE=node{i}\n",
            venv_bin().display()
        );
        let at = Listen {
            netns: Some(lan.namespace(i)),
            address: IpAddr::V4(*addr),
            port: 22,
            extra_config: &extra,
        };
        sshds.push(Sshd::start_at(&node_dir, &host_key, &authorized, &at));
        point_at(&sim, id, &addr.to_string());
    }

    let shared = d.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let script = shared.join("train.py");
    std::fs::write(&script, TRAIN_PY).unwrap();
    let _ = std::fs::remove_file("/tmp/gpuctl-pwned");
    let mut cmd = e2e::gpuctl_cmd(
        &sim.url,
        d,
        &["run", "trainrun/train", "--torchrun", "--user", "root", "--connect-timeout", "5"],
    );
    cmd.arg("--").arg(&script).arg(&shared).arg(NOTE);
    let started = Instant::now();
    let (o, timed_out) = output_within(cmd, Duration::from_secs(240));
    let took = started.elapsed();
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let logs: String = (0..nodes.len())
        .map(|i| std::fs::read_to_string(d.join(format!("node{i}/sshd.log"))).unwrap_or_default())
        .collect();
    let all = format!("stdout:\n{out}\nstderr:\n{err}\nsshd logs:\n{logs}");
    assert!(!timed_out, "gpuctl run --torchrun did not finish in 240 s\n{all}");
    assert_eq!(o.status.code(), Some(0), "{all}");
    println!("{out}");
    for rank in 0..2 {
        assert!(out.contains(&format!("rank {rank} all_reduce sum 3 expected 3")), "rank {rank}: {all}");
        assert!(out.contains(&format!("rank {rank} replicas agree after the DDP step: True")), "{all}");
    }
    // Both nodes ran a worker, each line under its node's prefix.
    for node in 0..2 {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("[node {node}] rank ")) && l.contains(" of 2 on node"))
            .unwrap_or_else(|| panic!("node {node} printed no rank line: {all}"));
        assert!(line.contains(&format!("on node{node} ")), "{line}");
    }
    // The user's words reached Python as one argument, nothing of them ran in a shell.
    let expected_note = format!("note={}", python_repr(NOTE));
    assert!(out.contains(&expected_note), "want {expected_note}: {all}");
    assert!(!Path::new("/tmp/gpuctl-pwned").exists(), "a user argument reached a shell");
    assert!(out.contains("rank 0 wrote ckpt.pt"), "{all}");
    let ckpt = std::fs::metadata(shared.join("ckpt.pt")).expect("rank 0's checkpoint in the shared folder");
    assert!(ckpt.len() > 0);
    let o = Command::new(venv_bin().join("python"))
        .arg("-c")
        .arg("import sys, torch; c = torch.load(sys.argv[1]); assert c['world'] == 2, c; print(sorted(c['model']))")
        .arg(shared.join("ckpt.pt"))
        .output()
        .unwrap();
    let loaded = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && loaded.contains("['bias', 'weight']"),
        "{loaded}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(err.contains("torchrun: 2 of 2 node(s) succeeded"), "{all}");

    // Refused with exit 2: one node of the cluster, and a pool that is not a cluster.
    // (gpuctl_cmd adds `--state`, so the script comes after it.)
    let torchrun = |target: &str| {
        e2e::gpuctl_cmd(&sim.url, d, &["run", target, "--torchrun"]).args(["--", "x.py"]).output().unwrap()
    };
    let o = torchrun("trainrun/train/0");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("name the pool (trainrun/train)"), "{err}");
    let plain = d.join("plain.toml");
    let plain_text =
        e2e::spec_text("alibaba", "plain", 1) + "network = \"auto\"\nssh_from = [\"127.0.0.1/32\"]\n";
    std::fs::write(&plain, plain_text).unwrap();
    let o = e2e::gpuctl(&sim.url, d, &["provision", plain.to_str().unwrap(), "--yes"]);
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{said}");
    let o = torchrun("plain/work");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("is not a cluster"), "{err}\nprovision said: {said}");
    let o = e2e::gpuctl(&sim.url, d, &["destroy", plain.to_str().unwrap(), "--yes"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    drop(sshds);
    drop(lan);
    let o = e2e::gpuctl(&sim.url, d, &["destroy", spec_s, "--yes"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    eprintln!(
        "torchrun over two nodes: gpuctl run took {:.1} s, the whole test {:.1} s",
        took.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
}

/// Python's `repr` of [`NOTE`], which holds both `'` and `"`: single quotes, `\'` and `\\` escaped.
fn python_repr(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}
