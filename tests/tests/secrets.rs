//! Secrets never leak. Every gpuctl command runs with known fake canary keys, taken from each place
//! gpuctl reads keys (environment variables; the tccli, aliyun and jdc CLI files; gpuctl's own
//! credentials.toml; named profiles in both, with session tokens), logging everything
//! (`GPUCTL_LOG=trace`: gpuctl's own, the HTTP client's and the sim's logs on stderr), across the
//! success path (a real `gpuctl sim` that accepts exactly these keys) and the failure paths (wrong
//! secret and unknown key → the cloud's auth error; injected 503s; a sold-out type; a closed port; bad
//! specs; malformed credential files that hold the secret). Then stdout, stderr, `--json` output, the
//! sim's own log, and every file gpuctl wrote (the SQLite state store with any -wal/-journal, price
//! overlays, written specs, temp files) are scanned as raw bytes for the secrets and tokens: raw, hex,
//! base64 (every alignment), percent-encoded once and twice, and the HMAC signing keys TC3 and
//! JDCLOUD2/3 derive from the secret. Zero occurrences.
//!
//! What counts as secret (README "Reliability"): the secret keys, session tokens and every key derived
//! from them. Access key ids are not: they name the key (the clouds print them in their own errors).
//! A request's signature and Authorization header are not secret either (each is good for one request
//! within minutes), but only `gpuctl debug sign`, whose job is to show them, may print them.
//!
//! A credentials file readable by group/others is warned about (exact text), and the command still runs.
//! The scanner itself is shown to fail on planted copies (`scan_finds_planted_copies`).

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use base64::Engine as _;
use gpuctl_e2e::e2e::{gpuctl_bin, instance_id, placement, spec_text, SimProcess};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// (access key id, secret). The secrets carry `+` and `/` so percent-encoded copies differ from raw ones.
const TENCENT: (&str, &str) = ("AKIDleakCanaryTencent000000000000000", "canaryTencentSECRET+7f3a/9c");
const ALIBABA: (&str, &str) = ("LTAI5leakCanaryAlibaba", "canaryAlibabaSECRET/19b+e04");
const JDCLOUD: (&str, &str) = ("JDCleakCanaryJdcloud000000000000", "canaryJdcloudSECRET+c0f/fee");
/// Session tokens: Tencent (tccli `token`, `TENCENTCLOUD_SECURITY_TOKEN`) and Alibaba (`sts_token`).
const TOKENS: [&str; 2] = ["canaryTencentTOKEN+d00d/1e", "canaryAlibabaTOKEN/fe+ed42"];
/// A different secret the sim does not accept (the wrong-key path).
const WRONG_SECRET: &str = "canaryWrongSECRET+0bad/cafe";
/// A secret written as a bare number (a TOML integer, a JSON number): the wrong type, but still secret.
const NUMERIC_SECRET: &str = "73509824611302";

const ALL_SECRETS: [&str; 7] =
    [TENCENT.1, ALIBABA.1, JDCLOUD.1, TOKENS[0], TOKENS[1], WRONG_SECRET, NUMERIC_SECRET];

/// Markers of a signed request: only `debug sign` may print them.
const SIGNATURE_MARKERS: [&str; 6] = [
    "TC3-HMAC-SHA256",
    "ACS3-HMAC-SHA256",
    "JDCLOUD3-HMAC-SHA256",
    "JDCLOUD2-HMAC-SHA256",
    "Credential=",
    "Signature=",
];

// ------------------------------------------------------------------------------------------------
// The needles: every form a secret could take in the output.

type HmacSha256 = Hmac<Sha256>;

fn hmac256(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

/// TC3's (kDate, kService, kSigning) for `date` (YYYY-MM-DD) and `service` (Tencent API 3.0 docs).
fn tc3_keys(secret: &str, date: &str, service: &str) -> [Vec<u8>; 3] {
    let k_date = hmac256(format!("TC3{secret}").as_bytes(), date.as_bytes());
    let k_service = hmac256(&k_date, service.as_bytes());
    let k_signing = hmac256(&k_service, b"tc3_request");
    [k_date, k_service, k_signing]
}

/// JDCLOUD3 / JDCLOUD2 (`version` 3 or 2): (kDate, kRegion, kService, kSigning), date YYYYMMDD.
fn jd_keys(secret: &str, version: u8, date: &str, region: &str, service: &str) -> [Vec<u8>; 4] {
    let k_date = hmac256(format!("JDCLOUD{version}{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac256(&k_date, region.as_bytes());
    let k_service = hmac256(&k_region, service.as_bytes());
    let k_signing = hmac256(&k_service, format!("jdcloud{version}_request").as_bytes());
    [k_date, k_region, k_service, k_signing]
}

/// The base64 text that appears inside the encoding of any longer text containing `secret`, for each
/// of the three alignments (bytes before it mod 3), standard and URL-safe alphabets.
fn base64_forms(secret: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for pad in 0..3usize {
        let mut buf = vec![0u8; pad];
        buf.extend_from_slice(secret);
        let whole = (buf.len() / 3) * 3; // drop the tail group: its chars depend on what follows
        for engine in [
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            let enc = engine.encode(&buf[..whole]);
            // The first 4 chars mix in the bytes before the secret when pad > 0.
            let skip = if pad == 0 { 0 } else { 4 };
            if enc.len() > skip + 8 {
                out.push(enc.as_bytes()[skip..].to_vec());
            }
        }
    }
    out
}

/// One needle: what it is (for the report) and its bytes.
struct Needle {
    what: String,
    bytes: Vec<u8>,
}

/// Every form of every secret to look for. Derived keys are computed for the UTC dates around now
/// and for every region and service the spec's clouds are called in.
fn needles(secrets: &[&str]) -> Vec<Needle> {
    let mut v = Vec::new();
    let mut add = |what: String, bytes: Vec<u8>| v.push(Needle { what, bytes });
    for s in secrets {
        add(format!("{s} (raw)"), s.as_bytes().to_vec());
        add(format!("{s} (hex)"), hex::encode(s).into_bytes());
        add(format!("{s} (HEX)"), hex::encode_upper(s).into_bytes());
        for (i, b) in base64_forms(s.as_bytes()).into_iter().enumerate() {
            add(format!("{s} (base64 form {i})"), b);
        }
        let once = pct(s);
        add(format!("{s} (percent-encoded twice)"), pct(&once).into_bytes());
        add(format!("{s} (percent-encoded)"), once.into_bytes());
        add(format!("{s} (percent-encoded, lower-case)"), percent_lower(s).into_bytes());
        add(
            format!("{s} (JSON-escaped)"),
            serde_json::to_string(s).unwrap().replace('/', "\\/").trim_matches('"').as_bytes().to_vec(),
        );
    }
    let now = jiff::Timestamp::now();
    let days: Vec<jiff::civil::Date> = [-1i64, 0, 1]
        .iter()
        .map(|d| (now + jiff::SignedDuration::from_hours(24 * d)).to_zoned(jiff::tz::TimeZone::UTC).date())
        .collect();
    let mut keys: Vec<(String, Vec<u8>)> = Vec::new();
    for day in &days {
        for service in ["cvm", "cbs"] {
            for (i, k) in
                tc3_keys(TENCENT.1, &day.strftime("%Y-%m-%d").to_string(), service).into_iter().enumerate()
            {
                keys.push((format!("TC3 key {i} {day} {service}"), k));
            }
        }
        for version in [3u8, 2] {
            for region in ["cn-north-1", "cn-east-1", "cn-east-2", "cn-south-1"] {
                for service in ["vm", "disk", "billing"] {
                    for (i, k) in
                        jd_keys(JDCLOUD.1, version, &day.strftime("%Y%m%d").to_string(), region, service)
                            .into_iter()
                            .enumerate()
                    {
                        keys.push((format!("JDCLOUD{version} key {i} {day} {region} {service}"), k));
                    }
                }
            }
        }
    }
    for (what, k) in keys {
        add(format!("{what} (hex)"), hex::encode(&k).into_bytes());
        add(format!("{what} (base64)"), base64::engine::general_purpose::STANDARD.encode(&k).into_bytes());
        add(format!("{what} (raw bytes)"), k);
    }
    v
}

/// RFC 3986 percent-encoding: everything but the unreserved characters (what the clouds' signers use).
fn pct(s: &str) -> String {
    const UNRESERVED: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');
    percent_encoding::utf8_percent_encode(s, UNRESERVED).to_string()
}

/// Percent-encoding with lower-case hex digits (some encoders write `%2b`).
fn percent_lower(s: &str) -> String {
    pct(s)
        .split('%')
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part.to_owned()
            } else {
                format!("%{}{}", part.get(..2).unwrap_or(part).to_lowercase(), part.get(2..).unwrap_or(""))
            }
        })
        .collect()
}

/// Finds every needle in every blob; returns "needle in blob" lines. Indexed by each needle's first
/// four bytes so a few megabytes scan quickly even in a debug build.
fn scan(blobs: &[(String, Vec<u8>)], needles: &[Needle]) -> Vec<String> {
    let mut by_prefix: HashMap<[u8; 4], Vec<&Needle>> = HashMap::new();
    for n in needles {
        assert!(n.bytes.len() >= 8, "needle too short to be meaningful: {}", n.what);
        by_prefix.entry(n.bytes[..4].try_into().unwrap()).or_default().push(n);
    }
    let mut found = Vec::new();
    for (what, bytes) in blobs {
        for i in 0..bytes.len().saturating_sub(3) {
            let Some(cands) = by_prefix.get(&bytes[i..i + 4]) else { continue };
            for n in cands {
                if bytes[i..].starts_with(&n.bytes) {
                    found.push(format!("{} in {what} at byte {i}", n.what));
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

// ------------------------------------------------------------------------------------------------
// Where the keys come from.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Source {
    /// The clouds' environment variables.
    Env,
    /// tccli `default.credential`, aliyun `config.json` (AK), jdc `config` [default].
    CliFiles,
    /// gpuctl's `credentials.toml` [default.*].
    GpuctlFile,
    /// `--profile work` in the CLI files: tccli with a token, aliyun in StsToken mode, jdc [work].
    CliProfile,
    /// `--profile work` in gpuctl's `credentials.toml`, with session tokens.
    GpuctlProfile,
}

const SOURCES: [Source; 5] =
    [Source::Env, Source::CliFiles, Source::GpuctlFile, Source::CliProfile, Source::GpuctlProfile];

impl Source {
    fn profile(self) -> Option<&'static str> {
        matches!(self, Source::CliProfile | Source::GpuctlProfile).then_some("work")
    }
}

fn write_mode(path: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The clouds' CLI files under `home` for `profile`, with `secrets` = (tencent, alibaba, jdcloud).
fn cli_files(home: &Path, profile: &str, mode: u32, with_tokens: bool) {
    let token = if with_tokens { format!(", \"token\": \"{}\"", TOKENS[0]) } else { String::new() };
    write_mode(
        &home.join(format!(".tccli/{profile}.credential")),
        &format!("{{\"secretId\": \"{}\", \"secretKey\": \"{}\"{token}}}", TENCENT.0, TENCENT.1),
        mode,
    );
    let (ali_mode, sts) = if with_tokens {
        ("StsToken", format!(", \"sts_token\": \"{}\"", TOKENS[1]))
    } else {
        ("AK", String::new())
    };
    write_mode(
        &home.join(".aliyun/config.json"),
        &format!("{{\"current\": \"default\", \"profiles\": [{{\"name\": \"{profile}\", \"mode\": \"{ali_mode}\", \"access_key_id\": \"{}\", \"access_key_secret\": \"{}\"{sts}, \"region_id\": \"cn-hangzhou\"}}]}}", ALIBABA.0, ALIBABA.1),
        mode,
    );
    write_mode(
        &home.join(".jdc/config"),
        &format!(
            "[{profile}]\naccess_key = {}\nsecret_key = {}\nregion_id = cn-north-1\n",
            JDCLOUD.0, JDCLOUD.1
        ),
        mode,
    );
    write_mode(&home.join(".jdc/current"), profile, 0o600);
}

/// gpuctl's credentials.toml under `home` with one table per cloud for `profile`.
fn gpuctl_file(home: &Path, profile: &str, mode: u32, tencent_secret: &str, with_tokens: bool) {
    let tok = |t: &str| if with_tokens { format!("security_token = \"{t}\"\n") } else { String::new() };
    let text = format!(
        "[{profile}.tencent]\naccess_key_id = \"{}\"\naccess_key_secret = \"{tencent_secret}\"\n{}[{profile}.alibaba]\naccess_key_id = \"{}\"\naccess_key_secret = \"{}\"\n{}[{profile}.jdcloud]\naccess_key_id = \"{}\"\naccess_key_secret = \"{}\"\n",
        TENCENT.0,
        tok(TOKENS[0]),
        ALIBABA.0,
        ALIBABA.1,
        tok(TOKENS[1]),
        JDCLOUD.0,
        JDCLOUD.1
    );
    write_mode(&home.join(".config/gpuctl/credentials.toml"), &text, mode);
}

/// The exact warning line gpuctl prints for a secrets file others can read.
fn permission_warning(path: &Path, mode: u32) -> String {
    format!(
        "warning: {} holds secrets but is readable by group/others (mode {mode:03o}); run: chmod 600 {}",
        path.display(),
        path.display()
    )
}

// ------------------------------------------------------------------------------------------------
// Running gpuctl and keeping every byte it printed.

/// The longest one command may take (the slowest, destroy with snapshots, takes about a second).
const COMMAND_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Commands that take the provisioning flags (`--state`, `--poll-ms`, `--profile`).
const PROVISIONING: [&str; 8] =
    ["plan", "provision", "status", "snapshot", "clone", "release", "destroy", "sweep"];

struct Run {
    home: PathBuf,
    url: String,
    source: Source,
    /// Extra environment for every command (the Env source's keys, or a wrong one).
    env: Vec<(String, String)>,
    /// Every byte gpuctl printed, labelled, for the scan.
    seen: Vec<(String, Vec<u8>)>,
    commands: usize,
}

impl Run {
    fn new(home: &Path, url: &str, source: Source) -> Run {
        let mut env = Vec::new();
        if source == Source::Env {
            for (k, v) in [
                ("TENCENTCLOUD_SECRET_ID", TENCENT.0),
                ("TENCENTCLOUD_SECRET_KEY", TENCENT.1),
                ("ALIBABA_CLOUD_ACCESS_KEY_ID", ALIBABA.0),
                ("ALIBABA_CLOUD_ACCESS_KEY_SECRET", ALIBABA.1),
                ("JDCLOUD_ACCESS_KEY", JDCLOUD.0),
                ("JDCLOUD_SECRET_KEY", JDCLOUD.1),
            ] {
                env.push((k.to_owned(), v.to_owned()));
            }
        }
        Run { home: home.to_owned(), url: url.to_owned(), source, env, seen: Vec::new(), commands: 0 }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(gpuctl_bin());
        c.args(args);
        let sub = args.first().copied().unwrap_or_default();
        let refresh = args.starts_with(&["catalog", "refresh"]);
        if PROVISIONING.contains(&sub) || refresh {
            c.args(["--state", self.home.join("state.db").to_str().unwrap(), "--poll-ms", "50"]);
        }
        if let Some(p) = self.source.profile() {
            if PROVISIONING.contains(&sub) || refresh || sub == "debug" {
                c.args(["--profile", p]);
            }
        }
        let tmp = self.home.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", &tmp)
            .env("GPUCTL_LOG", "trace")
            .env("RUST_LOG", "trace")
            .env("RUST_BACKTRACE", "1")
            .env("GPUCTL_TODAY", "2026-11-30");
        for p in ["TENCENT", "ALIBABA", "JDCLOUD"] {
            c.env(format!("GPUCTL_{p}_ENDPOINT"), &self.url);
        }
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        c.stdin(Stdio::null());
        c
    }

    /// Runs `c` (killed after [`COMMAND_LIMIT`]: a hang fails the test by name) and keeps its output
    /// for the scan; returns (exit code, stdout, stderr).
    fn run_cmd(&mut self, mut c: Command, label: &str) -> (Option<i32>, String, String) {
        let dir = self.home.join("cmdout");
        std::fs::create_dir_all(&dir).unwrap();
        let (out_path, err_path) =
            (dir.join(format!("{}.out", self.commands)), dir.join(format!("{}.err", self.commands)));
        c.stdout(std::fs::File::create(&out_path).unwrap()).stderr(std::fs::File::create(&err_path).unwrap());
        let started = Instant::now();
        let mut child = c.spawn().unwrap();
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if started.elapsed() > COMMAND_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{:?} `{label}` ran past {COMMAND_LIMIT:?}; stderr:\n{}",
                    self.source,
                    String::from_utf8_lossy(&std::fs::read(&err_path).unwrap())
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let (stdout, stderr) = (std::fs::read(&out_path).unwrap(), std::fs::read(&err_path).unwrap());
        self.commands += 1;
        let (o, e) =
            (String::from_utf8_lossy(&stdout).into_owned(), String::from_utf8_lossy(&stderr).into_owned());
        self.seen.push((format!("{:?} `{label}` stdout", self.source), stdout));
        self.seen.push((format!("{:?} `{label}` stderr", self.source), stderr));
        (status.code(), o, e)
    }

    fn run(&mut self, args: &[&str]) -> (Option<i32>, String, String) {
        let c = self.cmd(args);
        self.run_cmd(c, &args.join(" "))
    }

    /// Runs and requires `code`.
    fn expect(&mut self, code: i32, args: &[&str]) -> (String, String) {
        let (got, out, err) = self.run(args);
        assert_eq!(got, Some(code), "{:?} {args:?}\nstdout: {out}\nstderr: {err}", self.source);
        (out, err)
    }

    fn ok(&mut self, args: &[&str]) -> String {
        self.expect(0, args).0
    }

    fn input(&self, name: &str, text: &str) -> String {
        let p = self.home.join("input").join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_owned()
    }
}

/// One pool per cloud, one instance each; Tencent and Alibaba snapshot before release.
fn three_cloud_spec(dep: &str) -> String {
    let mut s = format!("deployment = \"{dep}\"\nhours = 24\n[budget]\ntotal_cny = 100000\n");
    for p in ["tencent", "alibaba", "jdcloud"] {
        let snap = if p == "jdcloud" { "" } else { "snapshot = { before_release = true }\n" };
        s.push_str(&format!("[[pool]]\nname = \"{p}\"\ncount = 1\nbilling = \"hourly\"\ndata_disks = [{{ size_gb = 20 }}]\n{snap}{}", placement(p)));
    }
    s
}

/// What `debug sign` gets: one request per signing scheme, the secret left to the credential lookup.
fn sign_requests() -> [(&'static str, String); 5] {
    let get = |p: &str, host: &str, region: &str, service: &str| {
        format!(
            r#"{{"provider":"{p}","method":"GET","host":"{host}","path":"/v1/regions/{region}/instances","region":"{region}","service":"{service}","action":"DescribeInstances","version":"2014-05-26","query":{{"pageSize":"10"}}}}"#
        )
    };
    [
        ("tencent", r#"{"provider":"tencent","method":"POST","host":"cvm.tencentcloudapi.com","body":"{}","service":"cvm","action":"DescribeRegions","version":"2017-03-12","region":"ap-guangzhou"}"#.to_owned()),
        ("alibaba", r#"{"provider":"alibaba","method":"POST","host":"ecs.cn-hangzhou.aliyuncs.com","action":"DescribeRegions","version":"2014-05-26"}"#.to_owned()),
        ("alibaba-rpc", r#"{"provider":"alibaba-rpc","method":"GET","host":"ecs.aliyuncs.com","action":"DescribeRegions","version":"2014-05-26","query":{"RegionId":"cn-hangzhou"}}"#.to_owned()),
        ("jdcloud", get("jdcloud", "vm.jdcloud-api.com", "cn-north-1", "vm")),
        ("jdcloud2", get("jdcloud2", "vm.jdcloud-api.com", "cn-north-1", "vm")),
    ]
}

/// Every command, success and failure paths, with the keys from `r.source`, against `sim`.
fn exercise(sim: &SimProcess, r: &mut Run) {
    // 20×: boots, stops and snapshots take a fraction of a second, while the specs' auto-release
    // (4 h at the least) stays over 12 minutes of wall time away even on a loaded machine.
    let _clock = sim.fast_clock(20.0);
    let dep = format!("leak-{}", format!("{:?}", r.source).to_lowercase());

    // Commands that need no cloud: they still run with the keys loaded in their environment.
    for args in [
        &["--version"][..],
        &["--help"],
        &["sim", "--help"],
        &["web", "--help"],
        &["debug", "sign", "--help"],
        &["sweep", "--help"],
    ] {
        r.ok(args);
    }
    r.ok(&["catalog", "--provider", "jdcloud"]);
    r.ok(&["catalog", "gpus", "--json"]);
    r.ok(&["estimate", "--model", "qwen2.5-7b", "--tokens", "20M", "--top", "3"]);
    r.ok(&["estimate", "--model", "qwen2.5-7b", "--tokens", "20M", "--top", "3", "--json"]);
    r.ok(&["tco", "--json"]);

    // catalog refresh: real price calls, signed with the keys; then the overlay is read back.
    let overlay = r.home.join("prices.toml");
    let ov = overlay.to_str().unwrap().to_owned();
    let mut refresh = vec!["catalog", "refresh", "--mode", "hourly", "--json", "--out", &ov];
    for (p, t, reg) in [
        ("tencent", "GN7.2XLARGE32", "ap-guangzhou"),
        ("alibaba", "gn7i-c8g1.2xlarge", "cn-hangzhou"),
        ("jdcloud", "p.n1v100.2xlarge", "cn-north-1"),
    ] {
        refresh.extend(["--provider", p, "--instance", t, "--region", reg]);
    }
    let (code, out, err) = r.run(&refresh);
    assert!(matches!(code, Some(0 | 4)), "catalog refresh exited {code:?}\n{out}\n{err}");
    assert!(overlay.exists(), "catalog refresh wrote no overlay: {err}");
    r.ok(&["catalog", "--overlay", &ov, "--json"]);

    // The whole lifecycle.
    let sp = r.input(&format!("{dep}.toml"), &three_cloud_spec(&dep));
    r.ok(&["plan", &sp]);
    r.ok(&["plan", &sp, "--json"]);
    r.ok(&["provision", &sp, "--dry-run", "--json"]);
    let out = r.ok(&["provision", &sp, "--yes", "--json"]);
    assert!(out.contains("\"running\""), "{out}");
    r.ok(&["provision", &sp, "--yes"]); // the re-run adopts
    r.ok(&["status"]);
    r.ok(&["status", "--all", "--json"]);
    r.ok(&["snapshot", &format!("{dep}/tencent"), "--json"]);
    r.ok(&["snapshot", &format!("{dep}/alibaba")]);
    let clone_spec = r.home.join("clone-spec.toml");
    r.ok(&[
        "clone",
        &format!("{dep}/jdcloud"),
        "--count",
        "1",
        "--yes",
        "--json",
        "--spec-out",
        clone_spec.to_str().unwrap(),
    ]);
    let live = sim.live("jdcloud", Some(&format!("{dep}-clone")));
    assert_eq!(live.len(), 1, "the clone runs: {live:?}");
    r.ok(&["release", &instance_id(&live[0]), "--yes", "--json"]);
    for (name, req) in sign_requests() {
        let path = r.input(&format!("sign-{name}.json"), &req);
        r.ok(&["debug", "sign", "--request", &path]);
    }
    let regions = ["--region", "ap-guangzhou", "--region", "cn-hangzhou", "--region", "cn-north-1"];
    r.ok(&[&["sweep", "--json"][..], &regions].concat());

    // Cloud faults: two 503s on create (retried with the same client token; the run completes)...
    let (status, body) = sim.admin(
        "POST",
        "/_sim/faults",
        r#"{"action":"RunInstances","kind":"server_error","status":503,"count":2}"#,
    );
    assert!(status < 300, "POST /_sim/faults: {status} {body}");
    let sp2 = r.input(&format!("{dep}-2.toml"), &spec_text("alibaba", &format!("{dep}-2"), 1));
    let report: serde_json::Value =
        serde_json::from_str(&r.ok(&["provision", &sp2, "--yes", "--json"])).unwrap();
    assert!(report["retries"].as_u64() >= Some(2), "the two 503s are retried: {report}");
    // ...and a sold-out type with nowhere to fall back to: the cloud's code, a failed exit.
    let (status, body) = sim.admin("POST", "/_sim/stock_outs", r#"{"provider":"tencent"}"#);
    assert!(status < 300, "POST /_sim/stock_outs: {status} {body}");
    let sp3 = r.input(&format!("{dep}-3.toml"), &spec_text("tencent", &format!("{dep}-3"), 1));
    let (code, out, err) = r.run(&["provision", &sp3, "--yes"]);
    assert_ne!(code, Some(0), "a sold-out provision must fail\n{out}\n{err}");
    r.run(&["provision", &sp3, "--yes", "--json"]);
    clear_knobs(sim);
    r.ok(&["destroy", &sp3, "--yes"]);
    r.ok(&["destroy", &sp, "--yes", "--json"]);
    r.ok(&["destroy", &sp2, "--yes"]);
    r.ok(&[&["sweep", "--release", "--yes"][..], &regions].concat());

    // A spec with a key pasted into it by mistake: named by key and position, never echoed.
    let pasted = r.input(
        "pasted.toml",
        &format!("deployment = \"x\"\nhours = 2\naccess_key_secret = \"{}\"\n", TENCENT.1),
    );
    let (_, err) = r.expect(2, &["plan", &pasted]);
    assert!(err.contains("pasted.toml:3:1: unknown key `access_key_secret`"), "{err}");
    let wrong_type = r.input("wrong-type.toml", "deployment = \"x\"\nhours = \"two\"\n");
    r.expect(2, &["provision", &wrong_type, "--yes"]);

    // A closed port: the connection is refused (the run stops within its retry budget).
    let mut closed = Run::new(&r.home, "http://127.0.0.1:9", r.source);
    closed.env = r.env.clone();
    // (A fresh deployment: re-provisioning a destroyed one against a closed port waited past the retry
    // budget when this was written — reported, not this test's subject.)
    let sp4 = closed.input(&format!("{dep}-4.toml"), &spec_text("alibaba", &format!("{dep}-4"), 1));
    let (code, out, err) = closed.run(&[
        "provision",
        &sp4,
        "--yes",
        "--json",
        "--unit-retry-secs",
        "1",
        "--run-retry-secs",
        "2",
    ]);
    assert_ne!(code, Some(0), "{out}\n{err}");
    closed.run(&["status", "--json"]);
    r.commands += closed.commands;
    r.seen.append(&mut closed.seen);
}

/// Takes the injected faults and stock-outs out again, keeping the instances.
fn clear_knobs(sim: &SimProcess) {
    let (_, body) = sim.admin("GET", "/_sim/knobs", "");
    let mut knobs: serde_json::Value = serde_json::from_str(&body).unwrap();
    knobs["faults"] = serde_json::json!([]);
    knobs["stock_outs"] = serde_json::json!([]);
    let (status, body) = sim.admin("PUT", "/_sim/knobs", &knobs.to_string());
    assert!(status < 300, "PUT /_sim/knobs: {status} {body}");
}

/// A sim that accepts exactly the canary keys, logging at trace level into `dir/sim.log`.
fn canary_sim(dir: &Path) -> SimProcess {
    let mut config = "seed = 3\n[knobs]\nboot_seconds = 1\n".to_owned();
    for (p, (ak, sk)) in [("tencent", TENCENT), ("alibaba", ALIBABA), ("jdcloud", JDCLOUD)] {
        config.push_str(&format!(
            "[[credentials]]\nprovider = \"{p}\"\naccess_key = \"{ak}\"\nsecret = \"{sk}\"\n"
        ));
    }
    let log = std::fs::File::create(dir.join("sim.log")).unwrap();
    SimProcess::start_with(dir, &config, &[], Stdio::from(log), &[("GPUCTL_LOG", "trace")])
}

/// Sets up `source`'s credential files (checking the permission warnings on the way) and runs
/// every command. Returns what was printed and the number of commands.
fn one_source(source: Source, home: &Path, sim: &SimProcess) -> (Vec<(String, Vec<u8>)>, usize) {
    let mut r = Run::new(home, &sim.url, source);
    match source {
        Source::Env => {}
        Source::CliFiles => {
            // Readable by others: each file is warned about, by path, with the fix; the command runs.
            cli_files(home, "default", 0o644, false);
            let (_, err) = r.expect(0, &["status"]);
            for f in [".tccli/default.credential", ".aliyun/config.json", ".jdc/config"] {
                let line = permission_warning(&home.join(f), 0o644);
                assert!(err.lines().any(|l| l == line), "no warning line `{line}` in:\n{err}");
            }
            // Malformed, holding the secret: the error points into the file, without its content.
            write_mode(
                &home.join(".tccli/default.credential"),
                &format!("{{\"secretId\": \"{}\", \"secretKey\": \"{}\",,}}", TENCENT.0, TENCENT.1),
                0o600,
            );
            let tencent = r.input("tencent.toml", &spec_text("tencent", "cred-errors", 1));
            let (_, err) = r.expect(2, &["provision", &tencent, "--yes"]);
            assert!(
                err.contains(&format!("{}:1:", home.join(".tccli/default.credential").display())),
                "the error should point into the file: {err}"
            );
            write_mode(
                &home.join(".jdc/config"),
                &format!("access_key = {}\nsecret_key = {}\n", JDCLOUD.0, JDCLOUD.1),
                0o600,
            );
            let jd = r.input("jdcloud.toml", &spec_text("jdcloud", "cred-errors", 1));
            let (_, err) = r.expect(2, &["provision", &jd, "--yes"]);
            assert!(
                err.contains(&format!("{}:1:", home.join(".jdc/config").display())),
                "the error should point into the file: {err}"
            );
            cli_files(home, "default", 0o600, false);
            let (_, err) = r.expect(0, &["status"]);
            assert!(!err.contains("readable by group/others"), "{err}");
        }
        Source::GpuctlFile => {
            let path = home.join(".config/gpuctl/credentials.toml");
            gpuctl_file(home, "default", 0o640, TENCENT.1, false);
            let (_, err) = r.expect(0, &["status"]);
            let line = permission_warning(&path, 0o640);
            assert!(err.lines().any(|l| l == line), "no warning line `{line}` in:\n{err}");
            // A TOML error in the file: position and message, never the line it quotes.
            write_mode(
                &path,
                &format!(
                    "[default.tencent]\naccess_key_id = \"{}\"\naccess_key_secret = \"{}\n",
                    TENCENT.0, TENCENT.1
                ),
                0o600,
            );
            let tencent = r.input("tencent.toml", &spec_text("tencent", "cred-errors", 1));
            let (_, err) = r.expect(2, &["provision", &tencent, "--yes"]);
            assert!(
                err.contains(&format!("{}:3:", path.display())),
                "the error should point into the file: {err}"
            );
            // A secret of the wrong type: the kind is named, the value is not.
            write_mode(
                &path,
                &format!(
                    "[default.tencent]\naccess_key_id = \"{}\"\naccess_key_secret = {NUMERIC_SECRET}\n",
                    TENCENT.0
                ),
                0o600,
            );
            let (_, err) = r.expect(2, &["provision", &tencent, "--yes"]);
            assert!(err.contains("[default.tencent]: invalid type: integer, expected a string"), "{err}");
            gpuctl_file(home, "default", 0o600, TENCENT.1, false);
            let (_, err) = r.expect(0, &["status"]);
            assert!(!err.contains("readable by group/others"), "{err}");
        }
        Source::CliProfile => cli_files(home, "work", 0o600, true),
        Source::GpuctlProfile => gpuctl_file(home, "work", 0o600, TENCENT.1, true),
    }
    exercise(sim, &mut r);

    // Session tokens from the environment, through `debug sign` (they travel in headers or the query).
    if source == Source::Env {
        let mut t = Run::new(home, &sim.url, source);
        t.env.push(("TENCENTCLOUD_SECURITY_TOKEN".into(), TOKENS[0].into()));
        t.env.push(("ALIBABA_CLOUD_SECURITY_TOKEN".into(), TOKENS[1].into()));
        for (name, req) in sign_requests() {
            let path = t.input(&format!("sign-token-{name}.json"), &req);
            t.ok(&["debug", "sign", "--request", &path]);
        }
        // A request with the secret as a number, or pasted into the wrong field: exit 2, not echoed.
        for (name, fields) in [
            ("number", format!(r#""access_key_secret":{NUMERIC_SECRET}"#)),
            ("misplaced", format!(r#""access_key_secret":"{}","timestamp":"{}""#, TENCENT.1, TENCENT.1)),
        ] {
            let path = t.input(
                &format!("sign-{name}.json"),
                &format!(
                    r#"{{"provider":"tencent","method":"POST","host":"h","access_key_id":"{}",{fields}}}"#,
                    TENCENT.0
                ),
            );
            let (_, err) = t.expect(2, &["debug", "sign", "--request", &path]);
            assert!(err.contains("invalid type: "), "{err}");
        }
        // A wrong secret and an unknown key id: the cloud's auth error, with code and request id.
        let mut w = Run::new(home, &sim.url, source);
        for (k, v) in w.env.iter_mut() {
            if k.ends_with("SECRET_KEY") || k.ends_with("KEY_SECRET") {
                *v = WRONG_SECRET.into();
            }
        }
        for p in ["tencent", "alibaba", "jdcloud"] {
            let sp = w.input(&format!("wrong-{p}.toml"), &spec_text(p, &format!("wrong-{p}"), 1));
            let (code, out, err) = w.run(&["provision", &sp, "--yes"]);
            assert_ne!(code, Some(0), "{out}{err}");
            // (provision prints its report, failures included, on stdout)
            let all = format!("{out}{err}");
            assert!(
                all.contains("failed (auth)") && all.contains("request id"),
                "the cloud's auth error with its request id: {code:?}\n{all}"
            );
        }
        w.env.retain(|(k, _)| k != "TENCENTCLOUD_SECRET_ID");
        w.env.push(("TENCENTCLOUD_SECRET_ID".into(), "AKIDnobodyKnowsThisKey000000000000000".into()));
        let sp = w.input("wrong-tencent.toml", &spec_text("tencent", "wrong-tencent", 1));
        w.run(&["provision", &sp, "--yes", "--json"]);
        r.commands += t.commands + w.commands;
        r.seen.append(&mut t.seen);
        r.seen.append(&mut w.seen);
    }
    (r.seen, r.commands)
}

/// What gpuctl wrote under `dir`: everything but the credential files, the test's own inputs and the
/// captured outputs (scanned as outputs already).
fn written_files(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if matches!(
            name.as_str(),
            ".tccli" | ".aliyun" | ".jdc" | "credentials.toml" | "input" | "cmdout" | "sim.toml"
        ) {
            continue;
        }
        if p.is_dir() {
            written_files(&p, out);
        } else {
            out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
}

/// What one key source's commands left behind: (where, bytes) pairs to scan.
type Outputs = Vec<(String, Vec<u8>)>;

#[test]
fn no_secret_in_any_output_log_json_or_state() {
    gpuctl_bin(); // build once, before the threads start and the clock
    let started = Instant::now();
    let dirs: Vec<(tempfile::TempDir, tempfile::TempDir)> =
        SOURCES.iter().map(|_| (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap())).collect();
    // One sim and one home per source, all at once.
    let results: Vec<(Outputs, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = SOURCES
            .iter()
            .zip(&dirs)
            .map(|(&source, (home, sim_dir))| {
                s.spawn(move || {
                    let sim = canary_sim(sim_dir.path());
                    let got = one_source(source, home.path(), &sim);
                    drop(sim);
                    got
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    let mut outputs = Vec::new();
    let mut commands = 0;
    for (seen, n) in results {
        outputs.extend(seen);
        commands += n;
    }
    // Only `debug sign` shows signatures and Authorization headers.
    let mut marked = Vec::new();
    for (what, bytes) in &outputs {
        if what.contains("`debug sign") {
            continue;
        }
        for m in SIGNATURE_MARKERS {
            if bytes.windows(m.len()).any(|w| w == m.as_bytes()) {
                marked.push(format!("{m} in {what}"));
            }
        }
    }
    let mut files = Vec::new();
    for (home, sim_dir) in &dirs {
        written_files(home.path(), &mut files);
        written_files(sim_dir.path(), &mut files);
    }
    assert!(
        files.iter().any(|(n, _)| n.ends_with("state.db")),
        "the state store must be among the scanned files"
    );
    // The logs were on and are part of what is scanned.
    let has = |b: &[u8], m: &str| b.windows(m.len()).any(|w| w == m.as_bytes());
    let log_lines: usize = outputs
        .iter()
        .chain(&files)
        .filter(|(n, _)| n.ends_with("stderr") || n.ends_with("sim.log"))
        .map(|(_, b)| {
            b.split(|&c| c == b'\n')
                .filter(|l| has(l, " TRACE ") || has(l, " DEBUG ") || has(l, " WARN "))
                .count()
        })
        .sum();
    assert!(
        files.iter().any(|(n, b)| n.ends_with("sim.log") && has(b, "sim call")),
        "the sim's log must hold its calls"
    );
    assert!(
        outputs.iter().any(|(n, b)| n.ends_with("stderr") && has(b, " TRACE ")),
        "gpuctl's trace log must be on"
    );
    assert!(
        files.iter().any(|(n, _)| n.ends_with("prices.toml")),
        "the refreshed overlay must be among the scanned files"
    );
    let everything: Vec<(String, Vec<u8>)> = outputs.iter().chain(&files).cloned().collect();
    let bytes: usize = everything.iter().map(|(_, b)| b.len()).sum();
    let needles = needles(&ALL_SECRETS);
    let leaks = scan(&everything, &needles);
    assert!(leaks.is_empty(), "secrets leaked:\n{}", leaks.join("\n"));
    assert!(marked.is_empty(), "signatures printed outside `debug sign`:\n{}", marked.join("\n"));
    eprintln!(
        "secrets: {commands} commands from {} key sources; {} outputs ({log_lines} log lines) and {} files ({bytes} bytes) scanned for {} forms of {} secrets/tokens: 0 found ({:.1} s)",
        SOURCES.len(),
        outputs.len(),
        files.len(),
        needles.len(),
        ALL_SECRETS.len(),
        started.elapsed().as_secs_f64()
    );
}

/// The scan can fail: copies of a secret planted in gpuctl's real output and in a state store's
/// deleted rows are found, in every encoding; the derived keys are the ones the signer uses.
#[test]
fn scan_finds_planted_copies() {
    let needles = needles(&ALL_SECRETS);
    let s = TENCENT.1;
    // Each encoding, inside other text, at every base64 alignment.
    let mut planted: Vec<(String, Vec<u8>)> = Vec::new();
    for pre in ["", "a", "ab", "abc"] {
        let text = format!("{pre}{s} and more");
        planted.push((
            format!("base64 std after {pre:?}"),
            base64::engine::general_purpose::STANDARD.encode(&text).into_bytes(),
        ));
        planted.push((
            format!("base64 url after {pre:?}"),
            base64::engine::general_purpose::URL_SAFE.encode(&text).into_bytes(),
        ));
    }
    planted.push(("hex".into(), format!("x={}", hex::encode(s)).into_bytes()));
    planted.push(("percent".into(), format!("q=1&k={}&z", pct(s)).into_bytes()));
    planted.push(("form".into(), format!("k={}", pct(s).replace("%20", "+")).into_bytes()));
    planted.push(("json".into(), serde_json::to_vec(&serde_json::json!({ "k": s })).unwrap()));
    for (what, blob) in &planted {
        assert!(
            !scan(&[(what.clone(), blob.clone())], &needles).is_empty(),
            "the scan misses the secret as {what}: {}",
            String::from_utf8_lossy(blob)
        );
    }

    // Through gpuctl itself: `debug sign` prints the URL, so a secret put into the query shows up
    // (percent-encoded), while the same request with the secret only as the key shows nothing.
    let dir = tempfile::tempdir().unwrap();
    let mut r = Run::new(dir.path(), "http://127.0.0.1:9", Source::Env);
    let plant = r.input("plant.json", &format!(r#"{{"provider":"alibaba-rpc","method":"GET","host":"ecs.aliyuncs.com","action":"DescribeRegions","version":"2014-05-26","query":{{"Leak":"{}"}}}}"#, ALIBABA.1));
    r.ok(&["debug", "sign", "--request", &plant]);
    assert!(!scan(&r.seen, &needles).is_empty(), "a secret planted in debug sign's query is not found");

    // The derived keys: a signature recomputed with them equals the one gpuctl prints.
    let mut r = Run::new(dir.path(), "http://127.0.0.1:9", Source::Env);
    for (name, req) in sign_requests() {
        let Some(scheme) = ["tencent", "jdcloud", "jdcloud2"].into_iter().find(|p| *p == name) else {
            continue;
        };
        let path = r.input(&format!("sign-{name}.json"), &req);
        let out: serde_json::Value =
            serde_json::from_str(&r.ok(&["debug", "sign", "--request", &path])).unwrap();
        let sts = out["string_to_sign"].as_str().unwrap();
        let scope: Vec<&str> = sts.lines().nth(2).unwrap().split('/').collect(); // date/…/terminator
        let k_signing = match scheme {
            "tencent" => tc3_keys(TENCENT.1, scope[0], scope[1])[2].clone(),
            _ => jd_keys(JDCLOUD.1, if scheme == "jdcloud" { 3 } else { 2 }, scope[0], scope[1], scope[2])[3]
                .clone(),
        };
        assert_eq!(
            hex::encode(hmac256(&k_signing, sts.as_bytes())),
            out["signature"].as_str().unwrap(),
            "{scheme}: the test's key derivation differs from the signer's"
        );
        let sig_key = (format!("{scheme} signing key"), hex::encode(&k_signing).into_bytes());
        let today = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date();
        if scope[0] == today.strftime("%Y-%m-%d").to_string()
            || scope[0] == today.strftime("%Y%m%d").to_string()
        {
            assert!(
                !scan(&[sig_key], &needles).is_empty(),
                "{scheme}: today's signing key is not among the needles"
            );
        }
    }

    // A deleted row still sits in the SQLite file's bytes; the scan reads raw bytes and finds it.
    let db = dir.path().join("planted.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("CREATE TABLE t (v TEXT); CREATE TABLE pad (v TEXT);").unwrap();
    conn.execute("INSERT INTO t VALUES (?1)", [JDCLOUD.1]).unwrap();
    conn.execute("DELETE FROM t", []).unwrap();
    drop(conn);
    let mut files = Vec::new();
    written_files(dir.path(), &mut files);
    let found = scan(&files, &needles);
    assert!(
        found.iter().any(|f| f.contains("planted.db")),
        "the deleted row's secret is not found in the file bytes: {found:?}"
    );
}
