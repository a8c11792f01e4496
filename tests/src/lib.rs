//! Workspace end-to-end tests live in tests/tests/*.rs; this library holds shared helpers.
//!
//! [`e2e`]: the real `gpuctl` binary and a real `gpuctl sim` process, as a user runs them — used by the
//! reliability tests (crash, faults, sweep, secrets), which kill, starve and scan those processes.

pub mod e2e {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Output, Stdio};

    use serde_json::Value;

    /// The `gpuctl` binary of this workspace, rebuilt once per test process so it is never stale.
    pub fn gpuctl_bin() -> PathBuf {
        static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
        BIN.get_or_init(|| {
            let exe = std::env::current_exe().expect("test binary path");
            let dir = exe.parent().and_then(Path::parent).expect("target/<profile>");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let ok = Command::new(cargo)
                .args(["build", "--quiet", "-p", "gpuctl", "--bin", "gpuctl"])
                .status()
                .expect("cargo runs")
                .success();
            assert!(ok, "building gpuctl failed");
            dir.join(format!("gpuctl{}", std::env::consts::EXE_SUFFIX))
        })
        .clone()
    }

    /// The local cloud's documented test keys, as the clouds' CLIs read them from the environment.
    pub const SIM_KEYS: [(&str, &str); 6] = [
        ("TENCENTCLOUD_SECRET_ID", "AKIDgpuctlSimTencentTestKey000000000"),
        ("TENCENTCLOUD_SECRET_KEY", "gpuctlSimTencentTestSecret000000"),
        ("ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAI5gpuctlSimAlibabaTest"),
        ("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "gpuctlSimAlibabaTestSecret0000"),
        ("JDCLOUD_ACCESS_KEY", "JDCgpuctlSimJdcloudTestKey000000"),
        ("JDCLOUD_SECRET_KEY", "gpuctlSimJdcloudTestSecret000000"),
    ];

    pub const PROVIDERS: [&str; 3] = ["tencent", "alibaba", "jdcloud"];

    /// `gpuctl sim` on a free port, a separate process; killed when dropped.
    pub struct SimProcess {
        child: Child,
        pub url: String,
    }

    impl SimProcess {
        /// Starts the sim with `config` (TOML, written to `dir/sim.toml`) and extra flags.
        pub fn start(dir: &Path, config: &str, flags: &[&str]) -> SimProcess {
            Self::start_with(dir, config, flags, Stdio::null(), &[])
        }

        /// As [`SimProcess::start`], with the sim's stderr sent to `stderr` (a log file the secrets test
        /// scans) and extra environment variables (e.g. `RUST_LOG`).
        pub fn start_with(
            dir: &Path,
            config: &str,
            flags: &[&str],
            stderr: Stdio,
            envs: &[(&str, &str)],
        ) -> SimProcess {
            let cfg = dir.join("sim.toml");
            std::fs::write(&cfg, config).unwrap();
            let mut child = Command::new(gpuctl_bin())
                .args(["sim", "--port", "0", "--config"])
                .arg(&cfg)
                .args(flags)
                .envs(envs.iter().copied())
                .stdout(Stdio::piped())
                .stderr(stderr)
                .spawn()
                .expect("gpuctl sim starts");
            let mut first = String::new();
            BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
            let url = first
                .split_whitespace()
                .find(|w| w.starts_with("http://"))
                .unwrap_or_else(|| panic!("no URL in {first:?}"))
                .to_string();
            SimProcess { child, url }
        }

        /// One plain HTTP/1.0 request to the sim's admin API; returns (status, body).
        pub fn admin(&self, method: &str, path: &str, body: &str) -> (u16, String) {
            admin_request(&self.url, method, path, body)
                .unwrap_or_else(|e| panic!("{method} {path} to the sim: {e}"))
        }

        /// Runs the sim clock `speedup` times faster than the wall clock until the returned guard is
        /// dropped, so commands that wait on the cloud (boot, stop, snapshot, terminate) finish in
        /// fractions of their sim-time duration without any test waiting on its own.
        pub fn fast_clock(&self, speedup: f64) -> FastClock {
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (flag, url) = (stop.clone(), self.url.clone());
            let tick = std::time::Duration::from_millis(20);
            let thread = std::thread::spawn(move || {
                let body =
                    format!("{{\"advance_seconds\": {}}}", tick.as_secs_f64() * (speedup - 1.0).max(0.0));
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    // The sim may be shutting down at the end of a test; a failed tick is harmless.
                    let _ = admin_request(&url, "POST", "/_sim/clock", &body);
                }
            });
            FastClock { stop, thread: Some(thread) }
        }

        /// GET /_sim/state.
        pub fn state(&self) -> Value {
            let (_, body) = self.admin("GET", "/_sim/state", "");
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("state is not JSON ({e}): {body}"))
        }

        /// Instances of `provider` that are not on their way out, optionally only those tagged with
        /// deployment `dep` (gpuctl's `gpuctl-deployment` tag, whatever shape the cloud gives tags).
        pub fn live(&self, provider: &str, dep: Option<&str>) -> Vec<Value> {
            let st = self.state();
            let all = st["providers"][provider]["instances"].as_array().cloned().unwrap_or_default();
            all.into_iter()
                .filter(|i| {
                    is_live(i) && dep.is_none_or(|d| tag_value(i, "gpuctl-deployment").as_deref() == Some(d))
                })
                .collect()
        }
    }

    /// One plain HTTP/1.0 request to the sim at `url`; returns (status, body).
    fn admin_request(url: &str, method: &str, path: &str, body: &str) -> std::io::Result<(u16, String)> {
        let host = url.trim_start_matches("http://");
        let mut s = TcpStream::connect(host)?;
        write!(s, "{method} {path} HTTP/1.0\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len())?;
        let mut resp = String::new();
        s.read_to_string(&mut resp)?;
        let status = resp.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        Ok((status, resp.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default()))
    }

    /// A running [`SimProcess::fast_clock`]; stops when dropped.
    pub struct FastClock {
        stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    impl Drop for FastClock {
        fn drop(&mut self) {
            self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    impl Drop for SimProcess {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// Not terminating or gone, in any of the three clouds' words.
    pub fn is_live(i: &Value) -> bool {
        let state =
            i["InstanceState"].as_str().or(i["Status"].as_str()).or(i["status"].as_str()).unwrap_or("");
        !matches!(
            state,
            "TERMINATING" | "SHUTDOWN" | "LAUNCH_FAILED" | "deleting" | "deleted" | "Deleted" | "error"
        )
    }

    /// The release time the cloud itself will act on, read from its own record of the instance in
    /// `/_sim/state` (each cloud's field and format, parsed here, not with gpuctl's code): Tencent
    /// `AutoReleaseTime` (the `ActionTimer` it accepted, RFC 3339), Alibaba `AutoReleaseTime`
    /// (`yyyy-MM-ddTHH:mm:ssZ`, empty when none), JD `autoReleaseTime` (`YYYY-MM-DD HH:mm:ss`, Beijing
    /// time). `None` when the cloud holds no release time.
    pub fn cloud_release_time(provider: &str, i: &Value) -> Option<jiff::Timestamp> {
        match provider {
            "tencent" | "alibaba" => i["AutoReleaseTime"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().unwrap_or_else(|e| panic!("{provider} AutoReleaseTime {s:?}: {e}"))),
            "jdcloud" => i["autoReleaseTime"].as_str().filter(|s| !s.is_empty()).map(|s| {
                let civil = jiff::civil::DateTime::strptime("%Y-%m-%d %H:%M:%S", s)
                    .unwrap_or_else(|e| panic!("jdcloud autoReleaseTime {s:?}: {e}"));
                civil.to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(8))).unwrap().timestamp()
            }),
            other => panic!("no such provider {other}"),
        }
    }

    /// The instance id in any of the three clouds' field names.
    pub fn instance_id(i: &Value) -> String {
        i["InstanceId"].as_str().or(i["instanceId"].as_str()).unwrap_or_default().to_string()
    }

    /// The value of tag `key`: Tencent `Tags[{Key,Value}]`, Alibaba `Tags.Tag[{TagKey,TagValue}]`, JD `tags[{key,value}]`.
    pub fn tag_value(i: &Value, key: &str) -> Option<String> {
        let lists = [&i["Tags"], &i["Tags"]["Tag"], &i["tags"]];
        for list in lists {
            for t in list.as_array().into_iter().flatten() {
                let k = t["Key"].as_str().or(t["TagKey"].as_str()).or(t["key"].as_str());
                if k == Some(key) {
                    return t["Value"]
                        .as_str()
                        .or(t["TagValue"].as_str())
                        .or(t["value"].as_str())
                        .map(String::from);
                }
            }
        }
        None
    }

    /// A `gpuctl` command against `sim` with its own state file in `dir` and the sim's test keys.
    /// The state store runs in `dir` use (issue 17): the PostgreSQL database named in `dir/state.url`
    /// ([`use_postgres`]), else the SQLite file `dir/state.db`.
    pub fn state_arg(dir: &Path) -> String {
        match std::fs::read_to_string(dir.join("state.url")) {
            Ok(url) => url.trim().to_string(),
            Err(_) => dir.join("state.db").to_str().unwrap().to_string(),
        }
    }

    /// Opens the store runs in `dir` use, as they open it.
    pub fn open_store(
        dir: &Path,
    ) -> Result<gpuctl_provision::state::Store, gpuctl_provision::state::StateError> {
        let loc = gpuctl_provision::state::Location::parse(&state_arg(dir), &|_| None, None)?;
        gpuctl_provision::state::Store::open_at(&loc)
    }

    /// Makes runs in `dir` use a fresh PostgreSQL database (`GPUCTL_TEST_POSTGRES`); `false` when
    /// there is none and none is required (the caller skips).
    pub fn use_postgres(dir: &Path) -> bool {
        match gpuctl_provision::state::pg::test_database() {
            Some(url) => {
                std::fs::write(dir.join("state.url"), url).unwrap();
                true
            }
            None => false,
        }
    }

    /// Makes runs in `dir` share `other`'s store (two machines, one team database).
    pub fn share_store(dir: &Path, other: &Path) {
        std::fs::write(dir.join("state.url"), state_arg(other)).unwrap();
    }

    pub fn gpuctl_cmd(sim_url: &str, dir: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(gpuctl_bin());
        c.args(args).args(["--state", &state_arg(dir), "--poll-ms", "100"]);
        c.env("GPUCTL_TODAY", "2026-11-30")
            .env("HOME", dir)
            .env_remove("GPUCTL_PRICE_OVERLAY")
            .env_remove("GPUCTL_STATE")
            .env_remove("XDG_CONFIG_HOME");
        for p in ["TENCENT", "ALIBABA", "JDCLOUD"] {
            c.env(format!("GPUCTL_{p}_ENDPOINT"), sim_url);
        }
        for (k, v) in SIM_KEYS {
            c.env(k, v);
        }
        c.stdin(Stdio::null());
        c
    }

    pub fn gpuctl(sim_url: &str, dir: &Path, args: &[&str]) -> Output {
        gpuctl_cmd(sim_url, dir, args).output().expect("gpuctl runs")
    }

    /// Runs gpuctl, requires success and JSON on stdout.
    pub fn ok_json(sim_url: &str, dir: &Path, args: &[&str]) -> Value {
        let o = gpuctl(sim_url, dir, args);
        let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(o.status.success(), "{args:?} exited {:?}\nstdout: {out}\nstderr: {err}", o.status.code());
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out}"))
    }

    /// Where each provider sells the catalog type the tests rent, as spec lines.
    pub fn placement(provider: &str) -> &'static str {
        match provider {
            "tencent" => "provider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-3\"\ninstance_type = \"GN7.2XLARGE32\"\nimage = \"img-pi0ii46r\"\n",
            "alibaba" => "provider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\ninstance_type = \"ecs.gn7i-c8g1.2xlarge\"\nimage = \"ubuntu_22_04_x64_20G_alibase_20240926.vhd\"\n",
            _ => "provider = \"jdcloud\"\nregion = \"cn-north-1\"\nzone = \"cn-north-1a\"\ninstance_type = \"p.n1v100.2xlarge\"\nimage = \"7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204\"\nnetwork = { vpc = \"vpc-1\", subnet = \"subnet-1\", security_groups = [\"sg-1\"] }\n",
        }
    }

    /// A one-pool spec: `count` hourly instances of `provider`'s test type in deployment `dep`.
    pub fn spec_text(provider: &str, dep: &str, count: u32) -> String {
        format!("deployment = \"{dep}\"\nhours = 4\n[budget]\ntotal_cny = 100000\n[[pool]]\nname = \"work\"\ncount = {count}\nbilling = \"hourly\"\ndata_disks = [{{ size_gb = 50 }}]\n{}", placement(provider))
    }

    /// SplitMix64: a seeded, dependency-free source of kill times and fault choices.
    pub struct Rng(pub u64);

    impl Rng {
        pub fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        /// Uniform in [lo, hi).
        pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
            lo + self.next_u64() % (hi - lo).max(1)
        }
    }
}

/// A real OpenSSH server for the `ssh`/`run`/`cp` tests (issue 13): Debian's `/usr/sbin/sshd` on a
/// free loopback port with a temp host key and one authorized key, and the local cloud's admin call
/// that points an instance's public address at it.
pub mod sshd {
    use std::net::{IpAddr, TcpListener, TcpStream};
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use crate::e2e::SimProcess;

    /// `sshd -D -e` on 127.0.0.1:`port` (or where [`Listen`] says), killed when dropped.
    pub struct Sshd {
        child: Child,
    }

    /// Where an sshd listens and what its config adds: [`Sshd::start`] is loopback in this host's
    /// network; `run --torchrun`'s test starts one inside each node's network namespace.
    pub struct Listen<'a> {
        /// `ip netns exec NETNS sshd …` when set.
        pub netns: Option<&'a str>,
        pub address: IpAddr,
        pub port: u16,
        /// More sshd_config lines (e.g. `SetEnv PATH=…` for the remote commands).
        pub extra_config: &'a str,
    }

    impl Sshd {
        /// Starts sshd with `host_key` and `authorized` as its only key files, logging to `log`.
        pub fn start(dir: &Path, port: u16, host_key: &Path, authorized: &Path) -> Sshd {
            let at = Listen { netns: None, address: IpAddr::from([127, 0, 0, 1]), port, extra_config: "" };
            Self::start_at(dir, host_key, authorized, &at)
        }

        /// As [`Sshd::start`], listening where `at` says; its config and log in `dir` (one folder per sshd).
        pub fn start_at(dir: &Path, host_key: &Path, authorized: &Path, at: &Listen) -> Sshd {
            let (address, port) = (at.address, at.port);
            let cfg = dir.join("sshd_config");
            std::fs::write(
                &cfg,
                format!(
                    "Port {port}\nListenAddress {address}\nHostKey {}\nAuthorizedKeysFile {}\nPidFile none\n\
                     PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                     UsePAM no\nStrictModes no\nSubsystem sftp internal-sftp\nLogLevel VERBOSE\n{}",
                    host_key.display(),
                    authorized.display(),
                    at.extra_config
                ),
            )
            .unwrap();
            if is_root() {
                // sshd's privilege separation needs its empty folder (the Debian package makes it at boot).
                std::fs::create_dir_all("/run/sshd").unwrap();
            }
            let log = std::fs::File::create(dir.join("sshd.log")).unwrap();
            let mut cmd = match at.netns {
                // `ip netns exec` enters the namespace and execs sshd: the child is sshd itself.
                Some(ns) => {
                    let mut c = Command::new("ip");
                    c.args(["netns", "exec", ns, "/usr/sbin/sshd"]);
                    c
                }
                None => Command::new("/usr/sbin/sshd"),
            };
            let child = cmd
                .args(["-D", "-e", "-f"])
                .arg(&cfg)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("/usr/sbin/sshd starts (scripts/boot-tools installs openssh-server)");
            let mut me = Sshd { child };
            let deadline = Instant::now() + Duration::from_secs(10);
            while TcpStream::connect_timeout(&(address, port).into(), Duration::from_secs(1)).is_err() {
                if let Ok(Some(st)) = me.child.try_wait() {
                    panic!(
                        "sshd exited {st}: {}",
                        std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default()
                    );
                }
                assert!(Instant::now() < deadline, "sshd did not listen on {address}:{port} within 10 s");
                std::thread::sleep(Duration::from_millis(50));
            }
            me
        }
    }

    impl Drop for Sshd {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    pub fn is_root() -> bool {
        Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
    }

    pub fn whoami() -> String {
        let o = Command::new("id").arg("-un").output().expect("id runs");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    pub fn free_port() -> u16 {
        TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port()
    }

    pub fn keygen(path: &Path) {
        keygen_of("ed25519", path);
    }

    /// A key pair of OpenSSH type `kind` (`ed25519`, `rsa`) at `path` and `path.pub`, no passphrase.
    pub fn keygen_of(kind: &str, path: &Path) {
        let ok = Command::new("ssh-keygen")
            .args(["-q", "-t", kind, "-N", "", "-C", "gpuctl-test", "-f"])
            .arg(path)
            .status()
            .expect("ssh-keygen runs")
            .success();
        assert!(ok, "ssh-keygen -t {kind} -f {}", path.display());
    }

    /// Points each instance's public address at 127.0.0.1 (the admin API of the local cloud).
    pub fn point_at_localhost(sim: &SimProcess, ids: &[String]) {
        for id in ids {
            point_at(sim, id, "127.0.0.1");
        }
    }

    /// Points instance `id`'s public address at `address` (the admin API of the local cloud).
    pub fn point_at(sim: &SimProcess, id: &str, address: &str) {
        let (status, body) = sim.admin(
            "POST",
            "/_sim/public_address",
            &format!("{{\"instance_id\": \"{id}\", \"address\": \"{address}\"}}"),
        );
        assert_eq!(status, 200, "{body}");
    }
}

/// Linux network namespaces standing in for a cluster's nodes (issue 14, `run --torchrun`): one
/// namespace per node holding the private address the local cloud gave it, each joined by a veth pair
/// to one bridge in this host's namespace, so the nodes reach each other and this host reaches each
/// node (its sshd) at that address. Needs root and Debian's iproute2 (`ip`). Everything made is
/// removed when the [`Lan`] is dropped, a failed test included: the processes left in each namespace
/// are killed by id first.
pub mod netns {
    use std::net::Ipv4Addr;
    use std::process::Command;

    /// The interface each namespace sees (names are per namespace, so every node has the same one).
    pub const IFACE: &str = "gpuctl0";

    /// The namespaces, veths and bridge made so far, removed on drop.
    pub struct Lan {
        pub bridge: String,
        /// This host's address on the bridge (a /32 in the nodes' /24, routes to each node's /32).
        pub host_address: Ipv4Addr,
        namespaces: Vec<String>,
        host_ends: Vec<String>,
    }

    fn ip(args: &[&str]) {
        let o = Command::new("ip").args(args).output().expect("`ip` runs (Debian's iproute2)");
        assert!(o.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr));
    }

    impl Lan {
        /// One namespace per address, named `gpuctl-<tag>-<i>`; `tag` must make the names unique on
        /// this host (the caller's pid and a counter) and be at most 6 characters, since the host's
        /// interface names (`gtb<tag>`, `gtv<tag><i>`) are limited to 15.
        pub fn new(tag: &str, addresses: &[Ipv4Addr]) -> Lan {
            assert!(tag.len() <= 6 && addresses.len() <= 9, "tag {tag:?}, {} nodes", addresses.len());
            let [a, b, c, _] = addresses[0].octets();
            let host_address = (1..=254u8)
                .rev()
                .map(|d| Ipv4Addr::new(a, b, c, d))
                .find(|x| !addresses.contains(x))
                .expect("a free address in the nodes' /24");
            let mut lan = Lan {
                bridge: format!("gtb{tag}"),
                host_address,
                namespaces: Vec::new(),
                host_ends: Vec::new(),
            };
            let br = lan.bridge.clone();
            ip(&["link", "add", &br, "type", "bridge"]);
            // Pushed as soon as made, so a failure below still removes it.
            lan.host_ends.push(br.clone());
            ip(&["addr", "add", &format!("{host_address}/32"), "dev", &br]);
            ip(&["link", "set", &br, "up"]);
            for (i, addr) in addresses.iter().enumerate() {
                let ns = format!("gpuctl-{tag}-{i}");
                ip(&["netns", "add", &ns]);
                lan.namespaces.push(ns.clone());
                let (host_end, node_end) = (format!("gtv{tag}{i}"), format!("gtn{tag}{i}"));
                ip(&["link", "add", &host_end, "type", "veth", "peer", "name", &node_end]);
                lan.host_ends.push(host_end.clone());
                ip(&["link", "set", &host_end, "master", &br]);
                ip(&["link", "set", &host_end, "up"]);
                ip(&["link", "set", &node_end, "netns", &ns]);
                let inside = |args: &[&str]| {
                    let mut all = vec!["netns", "exec", &ns, "ip"];
                    all.extend_from_slice(args);
                    ip(&all);
                };
                inside(&["link", "set", &node_end, "name", IFACE]);
                inside(&["link", "set", "lo", "up"]);
                inside(&["addr", "add", &format!("{addr}/32"), "dev", IFACE]);
                inside(&["link", "set", IFACE, "up"]);
                // Every other address is on the bridge's segment: node to node, and back to this host.
                inside(&["route", "add", "default", "dev", IFACE]);
                ip(&["route", "add", &format!("{addr}/32"), "dev", &br]);
            }
            lan
        }

        /// Namespace of node `i`.
        pub fn namespace(&self, i: usize) -> &str {
            &self.namespaces[i]
        }

        /// The processes still in namespace `ns` (`ip netns pids`).
        pub fn pids(ns: &str) -> Vec<u32> {
            Command::new("ip")
                .args(["netns", "pids", ns])
                .output()
                .map(|o| {
                    String::from_utf8_lossy(&o.stdout)
                        .split_whitespace()
                        .filter_map(|p| p.parse().ok())
                        .collect()
                })
                .unwrap_or_default()
        }
    }

    impl Drop for Lan {
        fn drop(&mut self) {
            for ns in &self.namespaces {
                // Only processes inside the test's own namespaces: the sshds and what they started.
                for pid in Lan::pids(ns) {
                    let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
                }
                let _ = Command::new("ip").args(["netns", "del", ns]).status();
            }
            for link in self.host_ends.iter().rev() {
                let _ = Command::new("ip").args(["link", "del", link]).output();
            }
        }
    }
}
