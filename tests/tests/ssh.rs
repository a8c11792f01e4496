//! `gpuctl ssh` / `run` / `cp` / `wait-ready` / `provision --wait-ready` over a real OpenSSH server
//! (issue 13). A pool of two JD Cloud instances (JD imports an ed25519 key) is provisioned by the
//! `gpuctl` binary against `gpuctl sim` with `login_key = { public_key = … }`; the local cloud's
//! admin API then points both instances' public address at 127.0.0.1, where this test runs Debian's
//! `/usr/sbin/sshd` on a free port (`--port`, as for any image whose sshd is not on 22) with a temp
//! host key and the temp key in its `AuthorizedKeysFile`. Both "instances" are therefore this host.
//!
//! The ready marker is boot.rs's own path (`/var/lib/gpuctl/ready`), written by the test as the boot
//! script would; that needs root (as on CI). Run as another user, that one phase is skipped with a
//! message: a marker path override would test a path no instance ever has.
//!
//! Needs `ssh`, `scp`, `ssh-keygen` and `/usr/sbin/sshd` (scripts/boot-tools installs them); without
//! them the test fails and says so, rather than passing without testing anything.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gpuctl_e2e::e2e::{self, SimProcess};
use gpuctl_e2e::sshd::{free_port, is_root, keygen, point_at_localhost, whoami, Sshd};
use gpuctl_provision::boot::{FAILED_MARKER, READY_MARKER};
use serde_json::Value;

const QUICK: &str = "seed = 13\n[knobs]\nboot_seconds = 1\n";

/// Removes boot.rs's markers when created and when dropped, so no run leaves them behind.
struct Markers;

impl Markers {
    fn clear() {
        let _ = std::fs::remove_file(READY_MARKER);
        let _ = std::fs::remove_file(FAILED_MARKER);
    }
}

impl Drop for Markers {
    fn drop(&mut self) {
        Markers::clear();
    }
}

struct Run {
    out: String,
    err: String,
    code: Option<i32>,
}

/// Every output seen, for the secrets check at the end.
#[derive(Default)]
struct Seen(String);

impl Seen {
    fn run(&mut self, sim: &SimProcess, dir: &Path, args: &[&str]) -> Run {
        let o = gpuctl(sim, dir, args);
        let r = Run {
            out: String::from_utf8_lossy(&o.stdout).into_owned(),
            err: String::from_utf8_lossy(&o.stderr).into_owned(),
            code: o.status.code(),
        };
        self.0.push_str(&r.out);
        self.0.push_str(&r.err);
        r
    }
}

/// `e2e::gpuctl`, with the words after `--` (the remote command) kept last: the helper appends its
/// `--state` and `--poll-ms` after the arguments, which would put them in the remote command.
fn gpuctl(sim: &SimProcess, dir: &Path, args: &[&str]) -> Output {
    let cut = args.iter().position(|a| *a == "--").unwrap_or(args.len());
    e2e::gpuctl_cmd(&sim.url, dir, &args[..cut]).args(&args[cut..]).output().expect("gpuctl runs")
}

#[test]
fn ssh_run_cp_and_wait_ready_over_a_real_sshd() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = d.join("id_ed25519");
    keygen(&key);
    let host_key = d.join("host_key");
    keygen(&host_key);
    let authorized = d.join("authorized_keys");
    std::fs::copy(key.with_extension("pub"), &authorized).unwrap();
    let port = free_port();
    let mut sshd = Sshd::start(d, port, &host_key, &authorized);
    let p = port.to_string();
    let user = whoami();

    let sim = SimProcess::start(d, QUICK, &[]);
    let spec = d.join("spec.toml");
    std::fs::write(
        &spec,
        e2e::spec_text("jdcloud", "sshdep", 2)
            + &format!("login_key = {{ public_key = \"{}\" }}\n", key.with_extension("pub").display())
            + "\n[pool.env]\nsetup = \"true\"\n",
    )
    .unwrap();
    let spec_s = spec.to_str().unwrap();
    let mut seen = Seen::default();

    let report = e2e::ok_json(&sim.url, d, &["provision", spec_s, "--yes", "--json"]);
    let ids: Vec<String> = report["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["instance_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{report}");

    // Before the admin call the addresses are RFC 5737 documentation ones: nothing answers there.
    // The admin API refuses what is not an address, and an instance it does not hold.
    let (st, body) =
        sim.admin("POST", "/_sim/public_address", "{\"instance_id\": \"i-x\", \"address\": \"localhost\"}");
    assert_eq!(st, 400, "{body}");
    let (st, body) = sim.admin(
        "POST",
        "/_sim/public_address",
        "{\"instance_id\": \"i-nope\", \"address\": \"127.0.0.1\"}",
    );
    assert_eq!(st, 404, "{body}");
    point_at_localhost(&sim, &ids);
    let status = e2e::ok_json(&sim.url, d, &["status", "sshdep", "--json"]);
    assert!(status.as_array().unwrap().len() == 2, "{status}");

    let login = ["--port", p.as_str(), "--user", user.as_str(), "--connect-timeout", "5"];
    let with =
        |base: &[&str]| -> Vec<String> { base.iter().chain(login.iter()).map(|s| s.to_string()).collect() };
    let call = |seen: &mut Seen, v: Vec<String>| {
        let refs: Vec<&str> = v.iter().map(String::as_str).collect();
        seen.run(&sim, d, &refs)
    };

    // run: every instance, in parallel, each line prefixed with the instance; stdout and stderr apart.
    let r = call(
        &mut seen,
        [with(&["run", "sshdep/work"]), vec!["--".into(), "echo out-line; echo err-line >&2".into()]]
            .concat(),
    );
    assert_eq!(r.code, Some(0), "stdout: {}\nstderr: {}", r.out, r.err);
    for (n, id) in ids.iter().enumerate() {
        assert!(r.out.contains(&format!("[work/{n} {id}] out-line")), "{}", r.out);
        assert!(r.err.contains(&format!("[work/{n} {id}] err-line")), "{}", r.err);
    }
    assert!(!r.out.contains("err-line") && !r.err.contains("out-line"), "kept apart:\n{}\n{}", r.out, r.err);
    let kh = d.join("known_hosts");
    let known = std::fs::read_to_string(&kh).expect("gpuctl's known_hosts beside the state");
    // Debian's ssh_config hashes the names (HashKnownHosts), so look the entry up as ssh would.
    let found = Command::new("ssh-keygen")
        .arg("-F")
        .arg(format!("[127.0.0.1]:{port}"))
        .arg("-f")
        .arg(&kh)
        .output()
        .unwrap();
    assert!(found.status.success(), "no entry for [127.0.0.1]:{port} in {known}");
    let host_pub = std::fs::read_to_string(host_key.with_extension("pub")).unwrap();
    let host_blob = host_pub.split_whitespace().nth(1).unwrap();
    assert!(known.contains(host_blob), "the host key the sshd showed is the one kept: {known}");

    // One instance's command fails (the second to take the lock exits 3): per-instance codes in --json,
    // the process exits non-zero, and the code is the command's, not ssh's.
    let lock = d.join("once");
    let cmd = format!("mkdir {} 2>/dev/null || exit 3", lock.display());
    let r = call(&mut seen, [with(&["run", "sshdep/work", "--json"]), vec!["--".into(), cmd]].concat());
    assert_eq!(r.code, Some(1), "{}\n{}", r.out, r.err);
    let rows: Value = serde_json::from_str(&r.out).unwrap_or_else(|e| panic!("{e}: {}", r.out));
    let mut codes: Vec<i64> =
        rows.as_array().unwrap().iter().map(|o| o["exit_code"].as_i64().unwrap()).collect();
    codes.sort();
    assert_eq!(codes, [0, 3], "{rows}");
    assert!(rows
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["ssh_failed"] == false && o["duration_s"].as_f64().is_some()));
    assert_eq!(std::fs::read_to_string(&kh).unwrap(), known, "the kept host key is reused, not added again");

    // ssh -- CMD: one instance; the pool has two, so naming none is refused.
    let r = call(
        &mut seen,
        [with(&["ssh", "sshdep/work/1"]), vec!["--".into(), "echo".into(), "via-ssh".into()]].concat(),
    );
    assert_eq!((r.code, r.out.trim()), (Some(0), "via-ssh"), "{}", r.err);
    let r = call(&mut seen, [with(&["ssh", "sshdep/work"]), vec!["--".into(), "true".into()]].concat());
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert!(r.err.contains("sshdep/work/N"), "{}", r.err);

    // cp there and back, a name with a space and `;` kept one argument; to every instance when N is left out.
    let local = d.join("my file;x.txt");
    std::fs::write(&local, "weights v1\n").unwrap();
    let remote = d.join("remote dir");
    std::fs::create_dir(&remote).unwrap();
    let dest = format!("sshdep/work/0:{}/up;1.txt", remote.display());
    let r = call(&mut seen, with(&["cp", local.to_str().unwrap(), &dest]));
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert_eq!(std::fs::read_to_string(remote.join("up;1.txt")).unwrap(), "weights v1\n");
    let all = format!("sshdep/work:{}/all.txt", remote.display());
    let r = call(&mut seen, with(&["cp", local.to_str().unwrap(), &all]));
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert!(r.out.contains("[work/0") && r.out.contains("[work/1"), "{}", r.out);
    let back = d.join("back.txt");
    let from = format!("sshdep/work/1:{}/all.txt", remote.display());
    let r = call(&mut seen, with(&["cp", &from, back.to_str().unwrap()]));
    assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
    assert_eq!(std::fs::read_to_string(&back).unwrap(), "weights v1\n");
    let r = call(
        &mut seen,
        with(&["cp", &format!("sshdep/work:{}/all.txt", remote.display()), back.to_str().unwrap()]),
    );
    assert_eq!(r.code, Some(2), "download from a whole pool is refused: {}", r.err);

    // --wait-ready: not ready before the marker, ready after it (boot.rs's path; needs root).
    if is_root() {
        Markers::clear();
        let _guard = Markers;
        let r = call(&mut seen, with(&["wait-ready", "sshdep", "--timeout", "2"]));
        assert_eq!(r.code, Some(1), "{}\n{}", r.out, r.err);
        assert!(r.out.contains("work/0") && r.out.contains("not ready in time"), "{}", r.out);
        std::fs::create_dir_all(Path::new(READY_MARKER).parent().unwrap()).unwrap();
        std::fs::write(READY_MARKER, "2026-11-30T00:00:00Z\n").unwrap();
        let r = call(
            &mut seen,
            with(&["provision", spec_s, "--yes", "--wait-ready", "--wait-ready-timeout", "20"]),
        );
        assert_eq!(r.code, Some(0), "{}\n{}", r.out, r.err);
        assert!(
            r.out.contains("work/1")
                && r.out.contains("ready (boot environment finished 2026-11-30T00:00:00Z)"),
            "{}",
            r.out
        );
        Markers::clear();
        std::fs::write(FAILED_MARKER, "2026-11-30T00:00:00Z step=setup\n").unwrap();
        let r = call(&mut seen, with(&["wait-ready", "sshdep/work/0", "--timeout", "20"]));
        assert_eq!(r.code, Some(1), "{}\n{}", r.out, r.err);
        assert!(r.out.contains("FAILED at step setup"), "{}", r.out);
    } else {
        eprintln!("not root: the ready-marker phase is skipped ({READY_MARKER} is root's)");
    }

    // No key content ever reaches gpuctl's output.
    let private = std::fs::read_to_string(&key).unwrap();
    for line in private.lines().filter(|l| !l.starts_with("-----")) {
        assert!(!seen.0.contains(line), "private key material in gpuctl's output");
    }

    // A changed host key on the same address is refused: ssh's own failure, reported as such.
    drop(sshd);
    std::fs::remove_file(&host_key).unwrap();
    std::fs::remove_file(host_key.with_extension("pub")).unwrap();
    keygen(&host_key);
    sshd = Sshd::start(d, port, &host_key, &authorized);
    let r = call(
        &mut seen,
        [with(&["run", "sshdep/work/0", "--json"]), vec!["--".into(), "true".into()]].concat(),
    );
    assert_eq!(r.code, Some(1), "{}\n{}", r.out, r.err);
    let rows: Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(rows[0]["ssh_failed"], true, "{rows}");
    assert_eq!(rows[0]["exit_code"], Value::Null, "{rows}");
    assert!(rows[0]["stderr"].to_string().contains("IDENTIFICATION HAS CHANGED"), "{rows}");
    drop(sshd);

    // A key file that is not there: a clear error naming it, before any connection.
    let r = call(
        &mut seen,
        [with(&["run", "sshdep/work", "--identity", "/nonexistent/key"]), vec!["--".into(), "true".into()]]
            .concat(),
    );
    assert_eq!(r.code, Some(2), "{}", r.err);
    assert!(r.err.contains("/nonexistent/key") && r.err.contains("does not exist"), "{}", r.err);

    e2e::ok_json(&sim.url, d, &["destroy", spec_s, "--yes", "--json"]);
}

/// A pool provisioned with `public_ip = false` cannot be reached: the error says why and what to do,
/// and the admin API refuses to point an address it does not have.
#[test]
fn an_instance_without_a_public_ip_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = d.join("id_ed25519");
    keygen(&key);
    let sim = SimProcess::start(d, QUICK, &[]);
    let spec: PathBuf = d.join("spec.toml");
    std::fs::write(
        &spec,
        e2e::spec_text("jdcloud", "private", 1)
            + &format!(
                "login_key = {{ public_key = \"{}\" }}\npublic_ip = false\n",
                key.with_extension("pub").display()
            ),
    )
    .unwrap();
    let report = e2e::ok_json(&sim.url, d, &["provision", spec.to_str().unwrap(), "--yes", "--json"]);
    let id = report["units"][0]["instance_id"].as_str().unwrap().to_string();
    let (st, body) = sim.admin(
        "POST",
        "/_sim/public_address",
        &format!("{{\"instance_id\": \"{id}\", \"address\": \"127.0.0.1\"}}"),
    );
    assert_eq!(st, 409, "{body}");
    let o = gpuctl(&sim, d, &["run", "private/work", "--", "true"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("no public IP") && err.contains("public_ip = false") && err.contains(&id), "{err}");
    e2e::ok_json(&sim.url, d, &["destroy", spec.to_str().unwrap(), "--yes", "--json"]);
}
