//! Secrets never leak. Every command runs with known fake keys — from environment variables, from the
//! clouds' CLI credential files, and from gpuctl's credentials.toml — with RUST_LOG=trace, across
//! success paths (a real `gpuctl sim` that accepts exactly these keys) and failure paths (wrong secret,
//! closed port, injected 5xx, malformed credential files that hold the secret, bad specs). Then
//! stdout, stderr, `--json` output, and every file gpuctl wrote (the SQLite state store with its WAL,
//! lock files, written specs) are scanned: the secrets and session tokens occur zero times.
//! A credentials file readable by group/others is warned about; one at mode 600 is not.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use gpuctl_e2e::e2e::{gpuctl_bin, instance_id, placement, SimProcess};

const TENCENT: (&str, &str) = ("AKIDleakCanaryTencent000000000000000", "canaryTencentSECRET7f3a9c");
const ALIBABA: (&str, &str) = ("LTAI5leakCanaryAlibaba", "canaryAlibabaSECRET19be04");
const JDCLOUD: (&str, &str) = ("JDCleakCanaryJdcloud000000000000", "canaryJdcloudSECRETc0ffee");
const TOKENS: [&str; 2] = ["canaryTencentTOKENd00d1e", "canaryAlibabaTOKENfeed42"];

fn needles() -> Vec<&'static str> {
    let mut v = vec![TENCENT.1, ALIBABA.1, JDCLOUD.1];
    v.extend(TOKENS);
    v
}

/// Where the keys come from in one pass.
#[derive(Clone, Copy, Debug)]
enum Source {
    Env,
    CliFiles,
    GpuctlFile,
}

struct Run<'a> {
    home: &'a Path,
    url: String,
    source: Source,
    /// Every byte gpuctl printed, for the scan.
    seen: Vec<(String, Vec<u8>)>,
}

impl Run<'_> {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(gpuctl_bin());
        c.args(args);
        if args[0] != "debug" {
            c.args(["--state", self.home.join("state.db").to_str().unwrap(), "--poll-ms", "100"]);
        }
        c.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default()).env("HOME", self.home).env("RUST_LOG", "trace").env("RUST_BACKTRACE", "1").env("GPUCTL_TODAY", "2026-11-30");
        for p in ["TENCENT", "ALIBABA", "JDCLOUD"] {
            c.env(format!("GPUCTL_{p}_ENDPOINT"), &self.url);
        }
        if let Source::Env = self.source {
            c.env("TENCENTCLOUD_SECRET_ID", TENCENT.0).env("TENCENTCLOUD_SECRET_KEY", TENCENT.1);
            c.env("ALIBABA_CLOUD_ACCESS_KEY_ID", ALIBABA.0).env("ALIBABA_CLOUD_ACCESS_KEY_SECRET", ALIBABA.1);
            c.env("JDCLOUD_ACCESS_KEY", JDCLOUD.0).env("JDCLOUD_SECRET_KEY", JDCLOUD.1);
        }
        c.stdin(std::process::Stdio::null());
        c
    }

    /// Runs and keeps the output for the scan; returns (exit code, stdout, stderr).
    fn run(&mut self, args: &[&str]) -> (Option<i32>, String, String) {
        let o = self.cmd(args).output().unwrap();
        self.seen.push((format!("{:?} {args:?} stdout", self.source), o.stdout.clone()));
        self.seen.push((format!("{:?} {args:?} stderr", self.source), o.stderr.clone()));
        (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
    }

    fn ok(&mut self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(code, Some(0), "{:?} {args:?}\nstdout: {out}\nstderr: {err}", self.source);
        out
    }
}

fn write_private(path: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn cli_files(home: &Path, mode: u32) {
    write_private(&home.join(".tccli/default.credential"), &format!("{{\"secretId\": \"{}\", \"secretKey\": \"{}\"}}", TENCENT.0, TENCENT.1), mode);
    write_private(
        &home.join(".aliyun/config.json"),
        &format!("{{\"current\": \"default\", \"profiles\": [{{\"name\": \"default\", \"mode\": \"AK\", \"access_key_id\": \"{}\", \"access_key_secret\": \"{}\", \"region_id\": \"cn-hangzhou\"}}]}}", ALIBABA.0, ALIBABA.1),
        mode,
    );
    write_private(&home.join(".jdc/config"), &format!("[default]\naccess_key = {}\nsecret_key = {}\nregion_id = cn-north-1\n", JDCLOUD.0, JDCLOUD.1), mode);
    write_private(&home.join(".jdc/current"), "default", 0o600);
}

fn gpuctl_file(home: &Path, mode: u32) {
    let text = format!(
        "[default.tencent]\naccess_key_id = \"{}\"\naccess_key_secret = \"{}\"\n[default.alibaba]\naccess_key_id = \"{}\"\naccess_key_secret = \"{}\"\n[default.jdcloud]\naccess_key_id = \"{}\"\naccess_key_secret = \"{}\"\n",
        TENCENT.0, TENCENT.1, ALIBABA.0, ALIBABA.1, JDCLOUD.0, JDCLOUD.1
    );
    write_private(&home.join(".config/gpuctl/credentials.toml"), &text, mode);
}

/// One pool per cloud, one instance each.
fn spec(dep: &str) -> String {
    let mut s = format!("deployment = \"{dep}\"\nhours = 2\n[budget]\ntotal_cny = 100000\n");
    for p in ["tencent", "alibaba", "jdcloud"] {
        s.push_str(&format!("[[pool]]\nname = \"{p}\"\ncount = 1\nbilling = \"hourly\"\nsnapshot = {{ before_release = true }}\n{}", placement(p)));
    }
    s
}

/// The success path and the failure paths for one credential source.
fn exercise(sim: &SimProcess, home: &Path, source: Source, seen: &mut Vec<(String, Vec<u8>)>) {
    let mut r = Run { home, url: sim.url.clone(), source, seen: Vec::new() };
    let dep = format!("leak-{}", format!("{source:?}").to_lowercase());
    let spec_path = home.join(format!("{dep}.toml"));
    std::fs::write(&spec_path, spec(&dep)).unwrap();
    let sp = spec_path.to_str().unwrap();

    r.ok(&["plan", sp]);
    r.ok(&["plan", sp, "--json"]);
    r.ok(&["provision", sp, "--dry-run", "--json"]);
    let out = r.ok(&["provision", sp, "--yes", "--json"]);
    assert!(out.contains("\"running\""), "{out}");
    r.ok(&["provision", sp, "--yes"]); // the re-run adopts
    r.ok(&["status"]);
    r.ok(&["status", "--all", "--json"]);
    r.ok(&["snapshot", &format!("{dep}/tencent"), "--json"]);
    r.ok(&["snapshot", &format!("{dep}/alibaba")]);
    let clone_spec = home.join(format!("{dep}-clone.toml"));
    r.ok(&["clone", &format!("{dep}/jdcloud"), "--count", "1", "--yes", "--json", "--spec-out", clone_spec.to_str().unwrap()]);
    let live = sim.live("jdcloud", Some(&format!("{dep}-clone")));
    let one = instance_id(&live[0]);
    r.ok(&["release", &one, "--yes", "--json"]);
    let req = home.join("req.json");
    std::fs::write(&req, r#"{"provider":"tencent","method":"POST","host":"cvm.tencentcloudapi.com","body":"{}","timestamp":1551113065,"service":"cvm","action":"DescribeRegions","version":"2017-03-12"}"#).unwrap();
    r.ok(&["debug", "sign", "--request", req.to_str().unwrap()]);
    for prov in ["alibaba", "jdcloud"] {
        std::fs::write(&req, format!(r#"{{"provider":"{prov}","method":"GET","host":"h.example","region":"cn-north-1","service":"vm","action":"DescribeRegions","version":"2014-05-26"}}"#)).unwrap();
        r.run(&["debug", "sign", "--request", req.to_str().unwrap()]);
    }

    // Failure path: two creates answer 503 (retried with the same token), the run still succeeds.
    // (A sim answering *every* RunInstances with 500 kept `provision` running for over 7 minutes when
    // this test was written; that path is left out until it is bounded.)
    let (status, body) = sim.admin("POST", "/_sim/faults", r#"{"action":"RunInstances","kind":"server_error","status":503,"count":2}"#);
    assert!(status < 300, "POST /_sim/faults: {status} {body}");
    let bad_spec = home.join(format!("{dep}-2.toml"));
    std::fs::write(&bad_spec, spec(&format!("{dep}-2"))).unwrap();
    r.run(&["provision", bad_spec.to_str().unwrap(), "--yes", "--json"]);
    clear_faults(sim);
    r.ok(&["destroy", sp, "--yes", "--json"]);
    r.ok(&["destroy", bad_spec.to_str().unwrap(), "--yes"]);
    let closed = Run { home, url: "http://127.0.0.1:9".into(), source, seen: Vec::new() };
    let mut closed = closed;
    let (code, _, _) = closed.run(&["provision", sp, "--yes", "--json"]);
    assert_ne!(code, Some(0));
    closed.run(&["status", "--json"]);
    // A bad spec with the secret pasted into it must not echo it back.
    let pasted = home.join("pasted.toml");
    std::fs::write(&pasted, format!("deployment = \"{}\"\n", TENCENT.1)).unwrap();
    let (code, _, _) = r.run(&["plan", pasted.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    std::fs::remove_file(&pasted).unwrap();
    seen.append(&mut r.seen);
    seen.append(&mut closed.seen);
}

/// Takes the injected fault rules out again (PUT /_sim/knobs without them), keeping the instances.
fn clear_faults(sim: &SimProcess) {
    let (_, body) = sim.admin("GET", "/_sim/knobs", "");
    let mut knobs: serde_json::Value = serde_json::from_str(&body).unwrap();
    knobs["faults"] = serde_json::json!([]);
    let (status, body) = sim.admin("PUT", "/_sim/knobs", &knobs.to_string());
    assert!(status < 300, "PUT /_sim/knobs: {status} {body}");
}

/// Scans what gpuctl wrote under `home`, except the credential files and what the test itself wrote.
fn scan_files(dir: &Path, seen: &mut Vec<(String, Vec<u8>)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if matches!(name.as_str(), ".tccli" | ".aliyun" | ".jdc" | ".config" | "sim.toml") {
            continue;
        }
        if p.is_dir() {
            scan_files(&p, seen);
        } else {
            seen.push((p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
}

#[test]
#[ignore = "reason: unverified — when written, a run did not finish within 8 minutes on the loaded 2-core machine (an earlier run showed `provision` hanging > 7 min against an all-500 RunInstances); run with --ignored"]
fn no_secret_in_any_output_log_json_or_state() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let sim_dir = tempfile::tempdir().unwrap();
    let config = format!(
        "seed = 3\n[knobs]\nboot_seconds = 1\n[[credentials]]\nprovider = \"tencent\"\naccess_key = \"{}\"\nsecret = \"{}\"\n[[credentials]]\nprovider = \"alibaba\"\naccess_key = \"{}\"\nsecret = \"{}\"\n[[credentials]]\nprovider = \"jdcloud\"\naccess_key = \"{}\"\nsecret = \"{}\"\n",
        TENCENT.0, TENCENT.1, ALIBABA.0, ALIBABA.1, JDCLOUD.0, JDCLOUD.1
    );
    let sim = SimProcess::start(sim_dir.path(), &config, &[]);
    let mut seen = Vec::new();

    exercise(&sim, home, Source::Env, &mut seen);

    // The clouds' CLI files, readable by others: each is warned about, by path, with the fix.
    cli_files(home, 0o644);
    let mut r = Run { home, url: sim.url.clone(), source: Source::CliFiles, seen: Vec::new() };
    let (_, _, err) = r.run(&["status"]);
    for f in [".tccli/default.credential", ".aliyun/config.json", ".jdc/config"] {
        assert!(err.contains(&format!("{} holds secrets but is readable by group/others (mode 644); run: chmod 600", home.join(f).display())), "no warning for {f}: {err}");
    }
    seen.append(&mut r.seen);
    cli_files(home, 0o600);
    let (_, _, err) = r.run(&["status"]);
    assert!(!err.contains("readable by group/others"), "{err}");
    exercise(&sim, home, Source::CliFiles, &mut seen);

    // Malformed CLI files that hold the secret: the error names file:line:column, not the content.
    write_private(&home.join(".tccli/default.credential"), &format!("{{\"secretId\": \"{}\", \"secretKey\": \"{}\",,}}", TENCENT.0, TENCENT.1), 0o600);
    write_private(&home.join(".jdc/config"), &format!("access_key = {}\nsecret_key = {}\n", JDCLOUD.0, JDCLOUD.1), 0o600);
    let mut r = Run { home, url: sim.url.clone(), source: Source::CliFiles, seen: Vec::new() };
    let (code, _, err) = r.run(&["provision", home.join("leak-clifiles.toml").to_str().unwrap(), "--yes"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("default.credential:1:"), "the error should point into the file: {err}");
    seen.append(&mut r.seen);
    for d in [".tccli", ".aliyun", ".jdc"] {
        std::fs::remove_dir_all(home.join(d)).unwrap();
    }

    // gpuctl's own credentials.toml, readable by others, then private.
    gpuctl_file(home, 0o640);
    let mut r = Run { home, url: sim.url.clone(), source: Source::GpuctlFile, seen: Vec::new() };
    let (_, _, err) = r.run(&["status"]);
    assert!(err.contains("credentials.toml holds secrets but is readable by group/others (mode 640)"), "{err}");
    seen.append(&mut r.seen);
    gpuctl_file(home, 0o600);
    exercise(&sim, home, Source::GpuctlFile, &mut seen);
    // A wrong secret: the cloud refuses the signature; the message names its code, not the secret.
    write_private(&home.join(".config/gpuctl/credentials.toml"), &std::fs::read_to_string(home.join(".config/gpuctl/credentials.toml")).unwrap().replace(TENCENT.1, TOKENS[0]), 0o600);
    let mut r = Run { home, url: sim.url.clone(), source: Source::GpuctlFile, seen: Vec::new() };
    let (code, out, err) = r.run(&["provision", home.join("leak-gpuctlfile.toml").to_str().unwrap(), "--yes"]);
    assert_ne!(code, Some(0), "{out}{err}");
    seen.append(&mut r.seen);

    // Session tokens in the environment (temporary credentials), through `debug sign`.
    let mut r = Run { home, url: sim.url.clone(), source: Source::Env, seen: Vec::new() };
    let req = home.join("req-token.json");
    std::fs::write(&req, r#"{"provider":"tencent","method":"POST","host":"cvm.tencentcloudapi.com","body":"{}","timestamp":1551113065,"service":"cvm","action":"DescribeRegions","version":"2017-03-12"}"#).unwrap();
    let mut c = r.cmd(&["debug", "sign", "--request", req.to_str().unwrap()]);
    c.env("TENCENTCLOUD_SECURITY_TOKEN", TOKENS[0]).env("ALIBABA_CLOUD_SECURITY_TOKEN", TOKENS[1]);
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    r.seen.push(("debug sign with a token stdout".into(), o.stdout));
    r.seen.push(("debug sign with a token stderr".into(), o.stderr));
    seen.append(&mut r.seen);

    let outputs = seen.len();
    scan_files(home, &mut seen);
    let files = seen.len() - outputs;
    assert!(seen.iter().any(|(n, _)| n.ends_with("state.db")), "the state store must be among the scanned files");
    let mut leaks = Vec::new();
    for (what, bytes) in &seen {
        for n in needles() {
            if bytes.windows(n.len()).any(|w| w == n.as_bytes()) {
                leaks.push(format!("{n} in {what}"));
            }
        }
    }
    assert!(leaks.is_empty(), "secrets leaked:\n{}", leaks.join("\n"));
    eprintln!("secrets: {outputs} outputs and {files} files scanned for {} secrets/tokens: 0 occurrences", needles().len());
}
