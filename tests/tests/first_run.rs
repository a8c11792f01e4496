//! Issue 13's "Done when", as a new user types it, on each of the three clouds, against `gpuctl sim
//! --empty-account` (no default network anywhere) and a real `sshd`:
//!
//! ```text
//! gpuctl estimate --model qwen2.5-7b --method qlora4 --tokens 50M --provider P --spec-out s.toml
//! gpuctl provision s.toml --yes
//! gpuctl run <deployment>/train -- <command>      # over real SSH
//! gpuctl destroy s.toml --yes
//! ```
//!
//! The exported spec names the image by name, the user's public key (`~/.ssh/…`, HOME is the test's
//! folder) and `network = "auto"`; provision makes the zone's network, imports the key and gives the
//! instance a public IP; a second deployment from the same spec (renamed) shares the network, so
//! destroying the first keeps it, and destroying the second leaves no instance, no public IP and no
//! network gpuctl made in `/_sim/state`.

use std::path::Path;
use std::process::{Command, Output};

use gpuctl_e2e::e2e::{self, SimProcess};
use gpuctl_e2e::sshd::{free_port, keygen, keygen_of, point_at_localhost, whoami, Sshd};
use serde_json::Value;

/// The estimate, as typed: no `--state` (estimate reads no state), HOME the test folder.
fn estimate(sim: &SimProcess, home: &Path, args: &[&str]) -> Output {
    let mut c = Command::new(e2e::gpuctl_bin());
    c.args(args).env("HOME", home).env("GPUCTL_TODAY", "2026-11-30").env_remove("GPUCTL_PRICE_OVERLAY");
    for p in ["TENCENT", "ALIBABA", "JDCLOUD"] {
        c.env(format!("GPUCTL_{p}_ENDPOINT"), &sim.url);
    }
    c.output().expect("gpuctl runs")
}

/// `e2e::gpuctl` with the remote command kept after gpuctl's own flags.
fn run_remote(sim: &SimProcess, dir: &Path, args: &[&str], remote: &[&str]) -> Output {
    e2e::gpuctl_cmd(&sim.url, dir, args).arg("--").args(remote).output().expect("gpuctl runs")
}

/// What gpuctl made in `/_sim/state` for `provider`: (VPCs, subnets, groups, public IPs).
fn made(sim: &SimProcess, provider: &str) -> (usize, usize, usize, usize) {
    let st = sim.state();
    let n = |what: &str| {
        st["providers"][provider][what]
            .as_array()
            .map(|a| a.iter().filter(|x| x["default"] != true).count())
            .unwrap_or(0)
    };
    (n("vpcs"), n("subnets"), n("security_groups"), public_ips(&st, provider))
}

/// The public IPs the local cloud holds (and bills) for `provider`: every emulator lists them.
fn public_ips(st: &Value, provider: &str) -> usize {
    st["providers"][provider]["public_ips"].as_array().map(Vec::len).unwrap_or(0)
}

fn first_run(provider: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The user's own key pairs, where ssh-keygen puts them; the export picks the one the cloud imports.
    std::fs::create_dir_all(d.join(".ssh")).unwrap();
    keygen(&d.join(".ssh/id_ed25519"));
    keygen_of("rsa", &d.join(".ssh/id_rsa"));
    let host_key = d.join("host_key");
    keygen(&host_key);
    let authorized = d.join("authorized_keys");
    let both = [".ssh/id_ed25519.pub", ".ssh/id_rsa.pub"]
        .iter()
        .map(|k| std::fs::read_to_string(d.join(k)).unwrap())
        .collect::<String>();
    std::fs::write(&authorized, both).unwrap();
    let port = free_port();
    let _sshd = Sshd::start(d, port, &host_key, &authorized);
    let sim = SimProcess::start(d, "seed = 21\n[knobs]\nboot_seconds = 1\n", &["--empty-account"]);

    let spec = d.join("s.toml");
    let spec_s = spec.to_str().unwrap();
    let o = estimate(
        &sim,
        d,
        &[
            "estimate",
            "--model",
            "qwen2.5-7b",
            "--method",
            "qlora4",
            "--tokens",
            "50M",
            "--provider",
            provider,
            "--spec-out",
            spec_s,
            "--ssh-from",
            "127.0.0.1/32",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&spec).unwrap();
    for want in
        ["network = \"auto\"", "ssh_from = [\"127.0.0.1/32\"]", "image = \"ubuntu-22.04\"", "login_key"]
    {
        assert!(text.contains(want), "{provider}: {want} in\n{text}");
    }
    let deployment = text
        .lines()
        .find_map(|l| l.strip_prefix("deployment = \""))
        .and_then(|l| l.split('"').next())
        .expect("a deployment name")
        .to_string();

    let report = e2e::ok_json(&sim.url, d, &["provision", spec_s, "--yes", "--json"]);
    let unit = &report["units"][0];
    assert_eq!(unit["state"], "running", "{provider}: {report}");
    let id = unit["instance_id"].as_str().unwrap().to_string();
    assert!(unit["public_ip"].as_str().is_some_and(|ip| !ip.is_empty()), "{provider}: a public IP: {unit}");
    assert_eq!(made(&sim, provider), (1, 1, 1, 1), "{provider}: {}", sim.state());

    // The instance's public address is this host's sshd; `run` logs in with the imported key.
    point_at_localhost(&sim, std::slice::from_ref(&id));
    let (p, user) = (port.to_string(), whoami());
    let target = format!("{deployment}/train");
    let login = ["--port", p.as_str(), "--user", user.as_str(), "--connect-timeout", "5"];
    let args: Vec<&str> = ["run", target.as_str()].into_iter().chain(login).collect();
    let o = run_remote(&sim, d, &args, &["echo", "gpu-ready"]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{provider}: stdout {out}\nstderr {err}");
    assert!(out.contains(&format!("[train/0 {id}] gpu-ready")), "{provider}: {out}");

    // A second deployment from the same spec shares the zone's network.
    let second = d.join("s2.toml");
    std::fs::write(
        &second,
        text.replace(&format!("deployment = \"{deployment}\""), "deployment = \"second\""),
    )
    .unwrap();
    let second_s = second.to_str().unwrap();
    let report = e2e::ok_json(&sim.url, d, &["provision", second_s, "--yes", "--json"]);
    assert_eq!(report["units"][0]["state"], "running", "{provider}: {report}");
    assert_eq!(made(&sim, provider), (1, 1, 1, 2), "{provider}: one network, two public IPs");

    e2e::ok_json(&sim.url, d, &["destroy", spec_s, "--yes", "--json"]);
    assert!(sim.live(provider, Some(&deployment)).is_empty(), "{provider}");
    assert_eq!(made(&sim, provider), (1, 1, 1, 1), "{provider}: the network stays for `second`");
    e2e::ok_json(&sim.url, d, &["destroy", second_s, "--yes", "--json"]);
    assert!(sim.live(provider, None).is_empty(), "{provider}: no instance left");
    assert_eq!(
        made(&sim, provider),
        (0, 0, 0, 0),
        "{provider}: nothing gpuctl made is left: {}",
        sim.state()
    );
}

#[test]
fn tencent_from_estimate_to_run_to_destroy() {
    first_run("tencent");
}

#[test]
fn alibaba_from_estimate_to_run_to_destroy() {
    first_run("alibaba");
}

#[test]
fn jdcloud_from_estimate_to_run_to_destroy() {
    first_run("jdcloud");
}
