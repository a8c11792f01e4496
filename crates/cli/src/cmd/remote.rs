//! What `ssh`, `run`, `cp` and `provision --wait-ready` share (issue 13): naming instances
//! (`DEPLOY/POOL[/N]`), finding their address, login user and private key, and building the
//! command line of the system OpenSSH client (`ssh`, `scp`).
//!
//! gpuctl has no SSH implementation of its own: every connection is the user's `ssh`/`scp`, spawned
//! with `std::process::Command` and one argument per argv entry — no local shell ever sees a path or
//! a command. Host keys go to gpuctl's own `known_hosts` beside the state store
//! (`StrictHostKeyChecking=accept-new`: the first key an instance shows is kept, a changed one is
//! refused), so the user's `~/.ssh/known_hosts` is neither read nor filled with short-lived
//! instances. gpuctl never reads the private key: it only checks that the file exists, and ssh reads it.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use gpuctl_cloud::Provider;
use gpuctl_provision::spec::{self, LoginKey, Spec};
use gpuctl_provision::state::Resource;

use super::provisioning::{state_error, Session};
use super::CliError;

/// How a pool's instances are logged in to; every field overrides what gpuctl would choose.
#[derive(Args, Debug, Clone, Default)]
pub struct LoginArgs {
    /// The private key to log in with. Default: the pool's `login_key = { public_key = "X.pub" }` without
    /// `.pub`; needed for a pool that names a key pair by id
    #[arg(long, short = 'i', value_name = "FILE")]
    pub identity: Option<PathBuf>,
    /// The login user. Default per cloud: Tencent `ubuntu` on Ubuntu images, else `root`; Alibaba and JD `root`
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,
    /// The instances' SSH port (default 22), for an image whose sshd listens elsewhere
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// Seconds ssh waits for the TCP connection to an instance
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub connect_timeout: u64,
}

/// `DEPLOY/POOL[/N]`: the instances a command acts on. `pool: None` (only `wait-ready`): every pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub deployment: String,
    pub pool: Option<String>,
    pub index: Option<u32>,
}

/// Deployment and pool names as the spec parser allows them (`[a-z][a-z0-9-]*`), so a target can be
/// told from a local path in `cp` and can never look like an option.
fn is_name(s: &str) -> bool {
    s.len() <= 64
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

impl Target {
    /// Parses `DEPLOY/POOL[/N]` (`DEPLOY` alone when `pool_optional`).
    pub fn parse(text: &str, pool_optional: bool) -> Result<Target, String> {
        let form = if pool_optional { "DEPLOY[/POOL[/N]]" } else { "DEPLOY/POOL[/N]" };
        let parts: Vec<&str> = text.split('/').collect();
        let bad = || {
            format!(
                "{text:?} is not {form} (a deployment name as in the spec, a pool name, an instance number)"
            )
        };
        let (d, p, n) = match parts[..] {
            [d] if pool_optional => (d, None, None),
            [d, p] => (d, Some(p), None),
            [d, p, n] => (d, Some(p), Some(n)),
            _ => return Err(bad()),
        };
        if !is_name(d) || !p.is_none_or(is_name) {
            return Err(bad());
        }
        let index = match n {
            Some(n) => Some(
                n.parse::<u32>()
                    .map_err(|_| format!("{text:?}: instance number {n:?} is not a whole number"))?,
            ),
            None => None,
        };
        Ok(Target { deployment: d.into(), pool: p.map(String::from), index })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.deployment)?;
        if let Some(p) = &self.pool {
            write!(f, "/{p}")?;
        }
        if let Some(n) = self.index {
            write!(f, "/{n}")?;
        }
        Ok(())
    }
}

/// One instance to connect to.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Host {
    /// `pool/N`, the instance as the user names it.
    pub label: String,
    pub instance_id: String,
    pub provider: Provider,
    pub address: IpAddr,
    pub user: String,
    /// `None`: ssh's own choice (agent, `~/.ssh/id_*`), for a pool with no `login_key`.
    #[serde(skip)]
    pub identity: Option<PathBuf>,
    /// Whether the pool has gpuctl's boot environment, whose script writes the ready marker.
    #[serde(skip)]
    pub has_env: bool,
}

/// The options every ssh/scp call gets.
#[derive(Debug, Clone)]
pub struct Ssh {
    pub known_hosts: PathBuf,
    pub port: Option<u16>,
    pub connect_timeout: u64,
}

/// The login user a cloud's public Linux images use when the spec or `--user` does not say:
/// - Tencent: Ubuntu public images log in as `ubuntu` (root login is off there), other Linux images
///   as `root` (Tencent Cloud CVM docs, "使用标准登录方式登录 Linux 实例": "Ubuntu 系统默认用户名为
///   ubuntu，其他 Linux 系统默认用户名为 root"). Image ids are opaque, so only an image named like
///   Ubuntu is known to be one.
/// - Alibaba ECS: `root` for public Linux images ("通过密钥认证登录Linux实例": 用户名 root).
/// - JD Cloud: `root` ("登录 Linux 实例": 用户名 root).
pub fn default_user(p: Provider, image: Option<&str>) -> &'static str {
    match p {
        Provider::Tencent if image.is_some_and(|i| i.to_ascii_lowercase().contains("ubuntu")) => "ubuntu",
        Provider::Tencent | Provider::Alibaba | Provider::JdCloud => "root",
    }
}

/// A POSIX login name, as `useradd` takes it: it goes into `user@address`, so nothing else may.
fn check_user(user: &str) -> Result<(), CliError> {
    let ok = !user.is_empty()
        && user.len() <= 32
        && user.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && user.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(CliError::usage(format!(
            "--user {user:?} is not a login name (lower-case letters, digits, `_`, `-`, `.`; at most 32)"
        )))
    }
}

/// The private key beside a public key file: `id_ed25519.pub` → `id_ed25519`, as ssh-keygen writes them.
pub fn private_key_for(public: &Path) -> Option<PathBuf> {
    let name = public.file_name()?.to_str()?;
    name.strip_suffix(".pub").filter(|n| !n.is_empty()).map(|n| public.with_file_name(n))
}

/// The key to log in to `pool` on `p` with: `--identity`, else the private half of the imported
/// public key. Checked to exist; never opened.
fn identity_for(
    given: Option<&Path>,
    key: Option<&LoginKey>,
    pool: &str,
    p: Provider,
) -> Result<Option<PathBuf>, CliError> {
    let path = match (given, key) {
        (Some(g), _) => g.to_path_buf(),
        (None, Some(LoginKey::Import { path, .. })) => private_key_for(path).ok_or_else(|| {
            CliError::usage(format!(
                "pool {pool}'s public key {} does not end in `.pub`, so its private key cannot be found: pass --identity FILE",
                path.display()
            ))
        })?,
        (None, Some(LoginKey::Id(id))) => {
            return Err(CliError::usage(format!(
                "pool {pool} logs in on {p} with the key pair {id}; gpuctl does not know which private key that is: pass --identity FILE"
            )))
        }
        (None, None) => return Ok(None),
    };
    if path.extension().is_some_and(|e| e == "pub") {
        return Err(CliError::usage(format!(
            "{} is a public key; --identity takes the private key (the same path without `.pub`)",
            path.display()
        )));
    }
    if !path.is_file() {
        return Err(CliError::usage(format!(
            "the private key {} for pool {pool} does not exist (or is not a file); pass --identity FILE",
            path.display()
        )));
    }
    Ok(Some(path))
}

/// gpuctl's known_hosts: beside the state store, so each state (and each test) keeps its own.
/// A team's PostgreSQL store has no folder of its own (its "path" is the redacted URL): host keys
/// are then this machine's, in the user's data folder where the SQLite store would be.
pub fn known_hosts(session: &Session) -> Result<PathBuf, CliError> {
    let state = session.engine.store(|s| s.path().to_path_buf());
    let dir = if state.to_string_lossy().contains("://") {
        std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
            .map(|d| d.join("gpuctl"))
            .ok_or_else(|| CliError::usage("no folder for known_hosts: set HOME or XDG_DATA_HOME"))?
    } else {
        state.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::failed(format!("cannot make {}: {e}", dir.display())))?;
    Ok(dir.join("known_hosts"))
}

/// The live instances `target` names, each with its address (the cloud's describe answer, else the
/// address the state recorded), user and key. `spec`: the deployment's spec when the caller has it
/// (provision); otherwise the spec file the state recorded is read again for the pools' login keys.
pub fn resolve(
    session: &Session,
    target: &Target,
    login: &LoginArgs,
    spec: Option<&Spec>,
) -> Result<Vec<Host>, CliError> {
    if let Some(u) = &login.user {
        check_user(u)?;
    }
    let dep = &target.deployment;
    let all = session.engine.store(|s| s.resources(Some(dep))).map_err(state_error)?;
    let live: Vec<Resource> = all.into_iter().filter(|r| r.state.is_live()).collect();
    if live.is_empty() {
        return Err(CliError::usage(format!(
            "gpuctl holds no live instance of deployment {dep} (see `gpuctl status`)"
        )));
    }
    let mut chosen: Vec<Resource> =
        live.iter().filter(|r| target.pool.as_ref().is_none_or(|p| &r.pool == p)).cloned().collect();
    if chosen.is_empty() {
        let mut pools: Vec<&str> = live.iter().map(|r| r.pool.as_str()).collect();
        pools.dedup();
        return Err(CliError::usage(format!(
            "deployment {dep} has no live instance in pool {}; its pools: {}",
            target.pool.as_deref().unwrap_or(""),
            pools.join(", ")
        )));
    }
    if let Some(n) = target.index {
        let have: Vec<String> = chosen.iter().map(|r| r.index.to_string()).collect();
        chosen.retain(|r| r.index == n);
        if chosen.is_empty() {
            return Err(CliError::usage(format!(
                "{target}: no live instance number {n}; live ones: {}",
                have.join(", ")
            )));
        }
    }
    chosen.sort_by(|a, b| (&a.pool, a.index).cmp(&(&b.pool, b.index)));
    let loaded = match spec {
        Some(_) => Ok(None),
        None => recorded_spec(session, dep).map(Some),
    };
    let spec = spec.or_else(|| loaded.as_ref().ok().and_then(Option::as_ref));
    let mut hosts = Vec::new();
    for r in &chosen {
        let pool = spec.and_then(|s| s.pools.iter().find(|p| p.name.value == r.pool));
        let key = pool.and_then(|p| p.login_key.as_ref()).and_then(|k| k.for_provider(r.provider));
        if spec.is_none() && login.identity.is_none() {
            // Without the spec gpuctl cannot know the key; say why instead of letting ssh guess.
            let why = loaded.as_ref().err().map(|e| e.message.clone()).unwrap_or_default();
            return Err(CliError::usage(format!("{why}; pass --identity FILE")));
        }
        let identity = identity_for(login.identity.as_deref(), key, &r.pool, r.provider)?;
        let image = pool.and_then(|p| p.image.for_provider(r.provider)).map(String::as_str);
        let user = login.user.clone().unwrap_or_else(|| default_user(r.provider, image).to_string());
        let address = address_of(session, r)?;
        hosts.push(Host {
            label: format!("{}/{}", r.pool, r.index),
            instance_id: r.instance_id.clone().unwrap_or_default(),
            provider: r.provider,
            address,
            user,
            identity,
            has_env: pool.is_some_and(|p| p.env.is_some()),
        });
    }
    Ok(hosts)
}

/// The spec file the state recorded for `dep`, read again (bounded, by the spec parser).
pub fn recorded_spec(session: &Session, dep: &str) -> Result<Spec, CliError> {
    let file = session
        .engine
        .store(|s| s.spec_file(dep))
        .map_err(state_error)?
        .ok_or_else(|| CliError::usage(format!("the state records no spec for deployment {dep}")))?;
    spec::parse_file(Path::new(&file), &spec::Limits::default()).map_err(|e| {
        CliError::usage(format!("cannot read deployment {dep}'s spec {file} again for its login key ({e})"))
    })
}

/// The instance's public address: what the cloud says now (an address can change, e.g. JD's elastic
/// IP re-bound), else what the state recorded when describe cannot answer.
fn address_of(session: &Session, r: &Resource) -> Result<IpAddr, CliError> {
    let label = format!("{}/{}/{}", r.deployment, r.pool, r.index);
    let id = r
        .instance_id
        .as_deref()
        .ok_or_else(|| CliError::failed(format!("{label} has no instance id yet (still being created?)")))?;
    let described = session.runtime.block_on(session.engine.describe_one(r.provider, &r.region, id));
    let ip = match described {
        Ok(inst) => inst.public_ip,
        Err(e) => {
            eprintln!("warning: cannot describe {label} ({id}): {e}; using the address the state recorded");
            r.public_ip.clone()
        }
    };
    let ip = ip.filter(|s| !s.is_empty()).ok_or_else(|| {
        let private =
            r.private_ip.as_deref().map(|p| format!(" (its private address is {p})")).unwrap_or_default();
        CliError::failed(format!(
            "{label} ({id}) has no public IP{private}: its pool was provisioned with `public_ip = false`, so \
             gpuctl cannot reach it. Set `public_ip = true` (the default) and provision again, or connect \
             through a host in the same VPC"
        ))
    })?;
    ip.parse::<IpAddr>().map_err(|_| {
        CliError::failed(format!("{label}: the cloud gave {ip:?} as its public IP, not an address"))
    })
}

/// `-o Name=value` for ssh's config parser, which splits on spaces unless the value is quoted.
fn option(name: &str, value: &Path) -> Result<OsString, CliError> {
    let v = value.to_str().filter(|v| !v.contains('"')).ok_or_else(|| {
        CliError::usage(format!("{} cannot be passed to ssh (not UTF-8, or holds `\"`)", value.display()))
    })?;
    Ok(if v.contains(char::is_whitespace) { format!("{name}=\"{v}\"") } else { format!("{name}={v}") }.into())
}

impl Ssh {
    /// The options ssh and scp share. `batch`: never prompt (run, cp, wait-ready).
    fn common(&self, host: &Host, batch: bool) -> Result<Vec<OsString>, CliError> {
        let mut a: Vec<OsString> = Vec::new();
        let mut o = |v: OsString| {
            a.push("-o".into());
            a.push(v);
        };
        o(option("UserKnownHostsFile", &self.known_hosts)?);
        // Only gpuctl's file: a system-wide entry for a recycled cloud address must not decide.
        o("GlobalKnownHostsFile=/dev/null".into());
        o("StrictHostKeyChecking=accept-new".into());
        o(format!("ConnectTimeout={}", self.connect_timeout.max(1)).into());
        // A dead instance ends a long `run` within a minute instead of hanging it.
        o("ServerAliveInterval=15".into());
        o("ServerAliveCountMax=4".into());
        if batch {
            o("BatchMode=yes".into());
        }
        if host.identity.is_some() {
            o("IdentitiesOnly=yes".into());
        }
        if let Some(k) = &host.identity {
            a.push("-i".into());
            a.push(k.into());
        }
        Ok(a)
    }

    /// `ssh … -- user@address [CMD…]`. The command words go to ssh as they are; ssh joins them with
    /// spaces for the remote shell, exactly as when the user types `ssh host CMD…`.
    pub fn ssh_args(&self, host: &Host, batch: bool, command: &[String]) -> Result<Vec<OsString>, CliError> {
        let mut a = self.common(host, batch)?;
        if let Some(p) = self.port {
            a.push("-p".into());
            a.push(p.to_string().into());
        }
        a.push("--".into());
        a.push(format!("{}@{}", host.user, host.address).into());
        a.extend(command.iter().map(OsString::from));
        Ok(a)
    }

    /// `scp -s … -- SRC DST` (`-s`: the SFTP protocol, so the remote path is a path and never goes
    /// through the remote shell).
    pub fn scp_args(
        &self,
        host: &Host,
        recursive: bool,
        from: &CpEnd,
        to: &CpEnd,
    ) -> Result<Vec<OsString>, CliError> {
        let mut a = self.common(host, true)?;
        a.insert(0, "-s".into());
        a.push("-q".into());
        if recursive {
            a.push("-r".into());
        }
        if let Some(p) = self.port {
            a.push("-P".into());
            a.push(p.to_string().into());
        }
        a.push("--".into());
        a.push(from.scp_operand(host));
        a.push(to.scp_operand(host));
        Ok(a)
    }
}

/// One side of `gpuctl cp`.
#[derive(Debug, Clone, PartialEq)]
pub enum CpEnd {
    Local(PathBuf),
    Remote { target: Target, path: String },
}

impl CpEnd {
    /// `DEPLOY/POOL[/N]:PATH` is remote; anything else is a local path (write a local path with a `:`
    /// as `./a:b`).
    pub fn parse(text: &str) -> Result<CpEnd, String> {
        if let Some((t, path)) = text.split_once(':') {
            if t.contains('/') && !t.starts_with(['.', '/', '~']) && Target::parse(t, false).is_ok() {
                if path.is_empty() {
                    return Err(format!("{text:?}: give the remote path after `:`"));
                }
                return Ok(CpEnd::Remote { target: Target::parse(t, false)?, path: path.into() });
            }
        }
        Ok(CpEnd::Local(PathBuf::from(text)))
    }

    /// The operand scp gets. A local relative path with a `:` before any `/` would be read by scp as
    /// `host:path`, so it is prefixed with `./`.
    fn scp_operand(&self, host: &Host) -> OsString {
        match self {
            CpEnd::Local(p) => {
                let s = p.as_os_str().to_string_lossy();
                let colon_first = s.find(':').is_some_and(|c| s.find('/').is_none_or(|sl| c < sl));
                if p.is_relative() && colon_first {
                    Path::new(".").join(p).into_os_string()
                } else {
                    p.clone().into_os_string()
                }
            }
            CpEnd::Remote { path, .. } => {
                let addr = match host.address {
                    IpAddr::V6(a) => format!("[{a}]"),
                    IpAddr::V4(a) => a.to_string(),
                };
                format!("{}@{addr}:{path}", host.user).into()
            }
        }
    }
}

/// What one instance's `run` (or `cp`) came to.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Outcome {
    pub instance: String,
    pub instance_id: String,
    pub provider: Provider,
    pub address: String,
    /// The command's exit code; `None` when it did not finish (ssh failed, or a signal).
    pub exit_code: Option<i32>,
    /// ssh itself failed (exit 255: unreachable, host key refused, authentication).
    pub ssh_failed: bool,
    pub duration_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Outcome {
    pub fn ok(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// ssh's exit status when ssh itself failed (ssh(1), "EXIT STATUS"); scp uses 255 the same way.
pub const SSH_FAILED: i32 = 255;

/// Reads `r` line by line (bytes that are not UTF-8 shown lossily), handing each line to `f`.
fn each_line(r: impl Read, mut f: impl FnMut(String)) {
    let mut r = BufReader::new(r);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match r.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                    buf.pop();
                }
                f(String::from_utf8_lossy(&buf).into_owned());
            }
        }
    }
}

/// Runs `program args` for `host`: each output line streamed with the instance's prefix (stdout to
/// stdout, stderr to stderr) unless `capture`, when the lines are kept for `--json` instead.
pub fn run_one(program: &str, args: &[OsString], host: &Host, capture: bool) -> Outcome {
    run_one_prefixed(program, args, host, capture, &format!("[{} {}]", host.label, host.instance_id))
}

/// [`run_one`] with the prefix of each streamed line given (`run --torchrun`: `[node 1]`).
pub fn run_one_prefixed(
    program: &str,
    args: &[OsString],
    host: &Host,
    capture: bool,
    prefix: &str,
) -> Outcome {
    let start = Instant::now();
    let prefix = prefix.to_string();
    let mut out = Outcome {
        instance: host.label.clone(),
        instance_id: host.instance_id.clone(),
        provider: host.provider,
        address: host.address.to_string(),
        exit_code: None,
        ssh_failed: false,
        duration_s: 0.0,
        stdout: capture.then(Vec::new),
        stderr: capture.then(Vec::new),
        error: None,
    };
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child: Child = match child {
        Ok(c) => c,
        Err(e) => {
            out.error = Some(format!("cannot start {program}: {e} (is OpenSSH's client installed?)"));
            out.ssh_failed = true;
            return out;
        }
    };
    let (so, se) = (child.stdout.take(), child.stderr.take());
    let (mut got_out, mut got_err) = (Vec::new(), Vec::new());
    std::thread::scope(|s| {
        let p = &prefix;
        let a = s.spawn(move || {
            let mut kept = Vec::new();
            if let Some(so) = so {
                each_line(so, |l| if capture { kept.push(l) } else { crate::outln!("{p} {l}") });
            }
            kept
        });
        let b = s.spawn(move || {
            let mut kept = Vec::new();
            if let Some(se) = se {
                each_line(se, |l| if capture { kept.push(l) } else { eprintln!("{p} {l}") });
            }
            kept
        });
        got_out = a.join().unwrap_or_default();
        got_err = b.join().unwrap_or_default();
    });
    let status = child.wait();
    out.duration_s = start.elapsed().as_secs_f64();
    if capture {
        out.stdout = Some(got_out);
        out.stderr = Some(got_err);
    }
    match status {
        Ok(st) => match st.code() {
            Some(SSH_FAILED) => {
                out.ssh_failed = true;
                out.error = Some(format!(
                    "{program} failed (exit 255): {} unreachable, its host key changed, or the login was refused",
                    host.address
                ));
            }
            Some(c) => out.exit_code = Some(c),
            None => out.error = Some(format!("{program} ended by a signal")),
        },
        Err(e) => out.error = Some(format!("waiting for {program}: {e}")),
    }
    out
}

/// Runs `job` for every host, at most `parallel` at a time; outcomes in the hosts' order.
pub fn for_each_host<T: Send>(hosts: &[Host], parallel: usize, job: impl Fn(&Host) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, T)> = Vec::with_capacity(hosts.len());
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..parallel.clamp(1, hosts.len().max(1)))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(h) = hosts.get(i) else { break };
                        mine.push((i, job(h)));
                    }
                    mine
                })
            })
            .collect();
        for w in workers {
            // A worker panics only on a bug; its hosts then have no outcome, which callers report.
            if let Ok(mine) = w.join() {
                results.extend(mine);
            }
        }
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, t)| t).collect()
}

/// `run --torchrun`'s choices (issue 14).
#[derive(Debug, Clone)]
pub struct Torchrun {
    /// Processes per node; `None`: the instance type's GPU count in the catalog, or 1.
    pub nproc_per_node: Option<u32>,
    /// The c10d rendezvous port on node 0.
    pub rdzv_port: u16,
}

/// One node of a cluster pool, as `run --torchrun` launches it.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub instance_id: String,
    /// The node's rank: its place among the pool's nodes by instance number.
    pub rank: usize,
    pub private_ip: IpAddr,
    /// GPUs of its instance type in the catalog (`None`: the catalog has no such type).
    pub gpus: Option<u32>,
}

/// The nodes of cluster pool `target` (`DEPLOY/POOL`), each with the private address the state
/// recorded. Refused (usage, exit 2): an instance number in the target, a pool that is not `cluster
/// = true` in the deployment's recorded spec, fewer live nodes than its `count`, a node that is not
/// running, a node without a recorded private IP.
pub fn cluster_nodes(session: &Session, target: &Target) -> Result<Vec<Node>, CliError> {
    let (dep, Some(pool)) = (&target.deployment, &target.pool) else {
        return Err(CliError::usage(format!("--torchrun needs DEPLOY/POOL, not {target}")));
    };
    if target.index.is_some() {
        return Err(CliError::usage(format!(
            "--torchrun starts every node of a cluster pool together: name the pool ({dep}/{pool}), not one instance"
        )));
    }
    let spec = recorded_spec(session, dep)?;
    let p = spec
        .pools
        .iter()
        .find(|p| &p.name.value == pool)
        .ok_or_else(|| CliError::usage(format!("deployment {dep}'s spec has no pool {pool}")))?;
    if !p.cluster {
        return Err(CliError::usage(format!(
            "pool {dep}/{pool} is not a cluster (`cluster = true` in its spec): --torchrun runs one training job over a \
             cluster's nodes; use `gpuctl run {dep}/{pool} -- …` for a command on each instance"
        )));
    }
    let all = session.engine.store(|s| s.resources(Some(dep))).map_err(state_error)?;
    let mut live: Vec<Resource> = all.into_iter().filter(|r| &r.pool == pool && r.state.is_live()).collect();
    live.sort_by_key(|r| r.index);
    let want = p.count.value as usize;
    if live.len() != want {
        return Err(CliError::usage(format!(
            "cluster {dep}/{pool} has {} live node(s) of its {want}: run `gpuctl provision` until all are running",
            live.len()
        )));
    }
    let catalog = gpuctl_core::Catalog::shipped();
    let mut nodes = Vec::new();
    for (rank, r) in live.iter().enumerate() {
        let label = format!("{dep}/{pool}/{}", r.index);
        if r.state != gpuctl_provision::state::ResourceState::Running {
            return Err(CliError::usage(format!(
                "node {label} is {}, not running: every node of the cluster must run before --torchrun",
                r.state.name()
            )));
        }
        let ip = r.private_ip.as_deref().filter(|s| !s.is_empty()).ok_or_else(|| {
            CliError::usage(format!(
                "node {label} has no recorded private IP, so the nodes cannot be told where node 0 is \
                 (run `gpuctl provision` again to record it)"
            ))
        })?;
        let private_ip = ip.parse::<IpAddr>().map_err(|_| {
            CliError::usage(format!("node {label}: the recorded private IP {ip:?} is not an address"))
        })?;
        let id = catalog.catalog_type(r.provider, &r.instance_type);
        let gpus = catalog.instance_type(r.provider, id).map(|t| t.devices());
        nodes.push(Node { instance_id: r.instance_id.clone().unwrap_or_default(), rank, private_ip, gpus });
    }
    Ok(nodes)
}

/// A word as POSIX `sh` reads it back unchanged: as it is when it holds only characters no shell
/// treats specially, else in single quotes (a `'` inside written `'\''`). ssh hands the remote
/// command to the login shell as one string, so every word the user gave goes through this.
pub fn sh_quote(word: &str) -> String {
    // One rule for every remote word: the engine's, which its rendered k3s scripts use too.
    gpuctl_provision::k3s::sh_word(word)
}

/// The remote command that starts PyTorch's own launcher on `node`: torchrun does the rendezvous
/// (c10d, on node 0's private address), gpuctl only starts it on every node at once.
///
/// No NCCL settings: docs/research/clusters.md found none that Tencent CVM or Alibaba ECS document for
/// plain instances (their RDMA/HCC images document their own), so NCCL's defaults stand; a job sets
/// its own `NCCL_*` in its script or the image's environment.
pub fn torchrun_command(
    nodes: &[Node],
    node: &Node,
    t: &Torchrun,
    rdzv_id: &str,
    script: &[String],
) -> String {
    let nproc = t.nproc_per_node.or(node.gpus).unwrap_or(1).max(1);
    let master = match nodes.first().map(|n| n.private_ip) {
        Some(IpAddr::V6(a)) => format!("[{a}]"),
        Some(IpAddr::V4(a)) => a.to_string(),
        None => node.private_ip.to_string(),
    };
    let mut words = vec![
        "torchrun".to_string(),
        format!("--nnodes={}", nodes.len()),
        format!("--node-rank={}", node.rank),
        format!("--nproc-per-node={nproc}"),
        "--rdzv-backend=c10d".to_string(),
        format!("--rdzv-endpoint={master}:{}", t.rdzv_port),
        format!("--rdzv-id={rdzv_id}"),
        // Node 0 hosts the rendezvous store. Said, not guessed: torchrun's own guess compares the
        // endpoint with what the node's host name resolves to, which an image need not map to the
        // private address.
        format!("--rdzv-conf=is_host={}", u8::from(node.rank == 0)),
        // The node's own address for the workers' store, rather than whatever its host name resolves to.
        format!("--local-addr={}", node.private_ip),
    ];
    words.extend(script.iter().cloned());
    words.iter().map(|w| sh_quote(w)).collect::<Vec<_>>().join(" ")
}

/// What a readiness probe found on one instance.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "ready", rename_all = "snake_case")]
pub enum Readiness {
    /// The boot script's ready marker exists; `at` is its timestamp.
    Ready { at: String },
    /// The boot script's failure marker exists: the step that failed and the boot log's tail.
    Failed { step: String, log_tail: Vec<String> },
    /// The pool has no rendered env, so nothing marks readiness: SSH answered, that is all.
    Reachable,
    /// Not yet (SSH did not answer, or no marker) when the bound ran out.
    NotReady { last: String },
}

/// The remote command of a readiness probe: one line saying which marker exists, then its contents
/// (and on failure the cloud-init log's tail, where cloud-init keeps the script's output). Built
/// from boot.rs's constants only: no user input reaches the remote shell here.
fn probe_command() -> String {
    use gpuctl_provision::boot::{FAILED_MARKER, READY_MARKER};
    format!(
        "if [ -e {READY_MARKER} ]; then echo gpuctl-ready; cat {READY_MARKER}; \
         elif [ -e {FAILED_MARKER} ]; then echo gpuctl-failed; cat {FAILED_MARKER}; \
         tail -n 20 /var/log/cloud-init-output.log 2>/dev/null || true; else echo gpuctl-waiting; fi"
    )
}

/// Reads a probe's answer; `None`: keep waiting.
fn read_probe(lines: &[String]) -> Option<Readiness> {
    match lines.first().map(String::as_str) {
        Some("gpuctl-ready") => Some(Readiness::Ready { at: lines.get(1).cloned().unwrap_or_default() }),
        Some("gpuctl-failed") => {
            let marker = lines.get(1).cloned().unwrap_or_default();
            let step =
                marker.split_whitespace().find_map(|w| w.strip_prefix("step=")).unwrap_or("?").to_string();
            Some(Readiness::Failed { step, log_tail: lines.iter().skip(2).cloned().collect() })
        }
        _ => None,
    }
}

/// Polls every host over SSH (BatchMode) until its boot environment's marker exists, or (no env)
/// until SSH answers, within `timeout` in all.
pub fn wait_ready(ssh: &Ssh, hosts: &[Host], timeout: Duration, poll: Duration) -> Vec<Readiness> {
    let deadline = Instant::now() + timeout;
    let probe = probe_command();
    for_each_host(hosts, 16, |h| {
        let command = if h.has_env { vec![probe.clone()] } else { vec!["true".to_string()] };
        let args = match ssh.ssh_args(h, true, &command) {
            Ok(a) => a,
            Err(e) => return Readiness::NotReady { last: e.message },
        };
        loop {
            let o = run_one("ssh", &args, h, true);
            let lines = o.stdout.clone().unwrap_or_default();
            let last = if o.exit_code == Some(0) {
                if !h.has_env {
                    return Readiness::Reachable;
                }
                if let Some(r) = read_probe(&lines) {
                    return r;
                }
                "SSH answers; the boot script has not finished".to_string()
            } else {
                let err = o.stderr.unwrap_or_default().join(" ");
                match (o.error, o.exit_code) {
                    (Some(e), _) => format!("{e}: {err}"),
                    (None, Some(c)) => format!("the probe exited {c}: {err}"),
                    (None, None) => err,
                }
            };
            if Instant::now() + poll >= deadline {
                return Readiness::NotReady { last };
            }
            std::thread::sleep(poll);
        }
    })
}

/// Prints the readiness of each host (on stderr when `to_stderr`: stdout already holds a JSON
/// document); true when every one is ready (or reachable).
pub fn print_readiness(hosts: &[Host], got: &[Readiness], to_stderr: bool) -> bool {
    let say = |line: String| if to_stderr { eprintln!("{line}") } else { crate::outln!("{line}") };
    let mut all = true;
    for (h, r) in hosts.iter().zip(got) {
        let who = format!("{} ({})", h.label, h.instance_id);
        match r {
            Readiness::Ready { at } => say(format!("{who}: ready (boot environment finished {at})")),
            Readiness::Reachable => say(format!(
                "{who}: SSH answers (the pool has no `env`, so nothing marks readiness beyond that)"
            )),
            Readiness::Failed { step, log_tail } => {
                all = false;
                say(format!("{who}: boot environment FAILED at step {step}; log tail:"));
                for l in log_tail {
                    say(format!("  {l}"));
                }
            }
            Readiness::NotReady { last } => {
                all = false;
                say(format!("{who}: not ready in time ({last})"));
            }
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> Host {
        Host {
            label: "train/0".into(),
            instance_id: "ins-1".into(),
            provider: Provider::Tencent,
            address: "127.0.0.1".parse().unwrap(),
            user: "ubuntu".into(),
            identity: Some(PathBuf::from("/keys/my key; rm -rf ~")),
            has_env: true,
        }
    }

    fn ssh() -> Ssh {
        Ssh { known_hosts: PathBuf::from("/state dir/known_hosts"), port: Some(2222), connect_timeout: 5 }
    }

    #[test]
    fn targets_parse_and_refuse_what_is_not_a_name() {
        let t = Target::parse("stage1/train/1", false).unwrap();
        assert_eq!((t.deployment.as_str(), t.pool.as_deref(), t.index), ("stage1", Some("train"), Some(1)));
        assert_eq!(Target::parse("stage1/train", false).unwrap().index, None);
        assert_eq!(Target::parse("stage1", true).unwrap().pool, None);
        for bad in ["stage1", "-oProxyCommand=x/p", "a/b/c/d", "a/B", "a//", "a/b/x"] {
            assert!(Target::parse(bad, false).is_err(), "{bad}");
        }
    }

    #[test]
    fn ssh_arguments_keep_every_path_and_word_one_argument() {
        let cmd = vec!["echo".to_string(), "a b; touch /tmp/pwned".to_string()];
        let a = ssh().ssh_args(&host(), true, &cmd).unwrap();
        let a: Vec<String> = a.iter().map(|s| s.to_string_lossy().into_owned()).collect();
        // The key path with a space and `;` is one argv entry right after -i.
        let i = a.iter().position(|s| s == "-i").unwrap();
        assert_eq!(a[i + 1], "/keys/my key; rm -rf ~");
        assert!(a.contains(&"UserKnownHostsFile=\"/state dir/known_hosts\"".to_string()));
        assert!(a.contains(&"StrictHostKeyChecking=accept-new".to_string()));
        assert!(a.contains(&"BatchMode=yes".to_string()));
        let dd = a.iter().position(|s| s == "--").unwrap();
        assert_eq!(&a[dd + 1..], ["ubuntu@127.0.0.1", "echo", "a b; touch /tmp/pwned"]);
        assert_eq!(a[a.iter().position(|s| s == "-p").unwrap() + 1], "2222");
        // Interactive ssh may prompt (a key's passphrase).
        let b = ssh().ssh_args(&host(), false, &[]).unwrap();
        assert!(!b.iter().any(|s| s == "BatchMode=yes"));
    }

    #[test]
    fn scp_operands_are_never_mistaken_for_hosts_or_options() {
        let h = host();
        let local = CpEnd::parse("we:ird name;x").unwrap();
        assert_eq!(local, CpEnd::Local(PathBuf::from("we:ird name;x")));
        let remote = CpEnd::parse("stage1/train/0:/data/my file").unwrap();
        let a = ssh().scp_args(&h, false, &local, &remote).unwrap();
        let a: Vec<String> = a.iter().map(|s| s.to_string_lossy().into_owned()).collect();
        assert_eq!(a[0], "-s");
        let dd = a.iter().position(|s| s == "--").unwrap();
        assert_eq!(&a[dd + 1..], ["./we:ird name;x", "ubuntu@127.0.0.1:/data/my file"]);
        assert_eq!(a[a.iter().position(|s| s == "-P").unwrap() + 1], "2222");
        // An absolute path or one with `/` first stays as it is; `-x` follows `--`.
        assert_eq!(CpEnd::Local("/a:b".into()).scp_operand(&h), "/a:b");
        assert_eq!(CpEnd::Local("d/a:b".into()).scp_operand(&h), "d/a:b");
        assert_eq!(CpEnd::parse("./s/p:x").unwrap(), CpEnd::Local("./s/p:x".into()));
        assert!(CpEnd::parse("s/p:").is_err());
    }

    #[test]
    fn users_and_keys() {
        assert_eq!(default_user(Provider::Tencent, Some("ubuntu-22.04")), "ubuntu");
        assert_eq!(default_user(Provider::Tencent, Some("img-pi0ii46r")), "root");
        assert_eq!(
            default_user(Provider::Alibaba, Some("ubuntu_22_04_x64_20G_alibase_20240220.vhd")),
            "root"
        );
        assert_eq!(default_user(Provider::JdCloud, None), "root");
        assert!(check_user("root").is_ok() && check_user("ec2-user").is_ok());
        for bad in ["-oProxyCommand=x", "a@b", "Root", "a b", ""] {
            assert!(check_user(bad).is_err(), "{bad}");
        }
        assert_eq!(private_key_for(Path::new("/k/id_ed25519.pub")), Some(PathBuf::from("/k/id_ed25519")));
        assert_eq!(private_key_for(Path::new("/k/id_ed25519")), None);
        assert_eq!(private_key_for(Path::new("/k/.pub")), None);
        let e =
            identity_for(None, Some(&LoginKey::Id("skey-1".into())), "train", Provider::Tencent).unwrap_err();
        assert!(e.message.contains("--identity"), "{}", e.message);
        let e =
            identity_for(Some(Path::new("/nonexistent/k")), None, "train", Provider::Tencent).unwrap_err();
        assert!(e.message.contains("does not exist"), "{}", e.message);
        let e = identity_for(Some(Path::new("/k/id.pub")), None, "train", Provider::Tencent).unwrap_err();
        assert!(e.message.contains("public key"), "{}", e.message);
    }

    #[test]
    fn torchrun_commands_quote_every_word_and_name_node_0() {
        assert_eq!(sh_quote("train.py"), "train.py");
        assert_eq!(sh_quote("--lr=1e-4"), "--lr=1e-4");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(sh_quote("a b; rm -rf ~"), "'a b; rm -rf ~'");
        assert_eq!(sh_quote("it's $HOME `id`"), "'it'\\''s $HOME `id`'");
        let node = |rank: usize, ip: &str, gpus| Node {
            instance_id: format!("i-{rank}"),
            rank,
            private_ip: ip.parse().unwrap(),
            gpus,
        };
        let nodes = [node(0, "10.0.0.7", Some(8)), node(1, "10.0.0.9", Some(8))];
        let t = Torchrun { nproc_per_node: None, rdzv_port: 29400 };
        let script = ["train.py".to_string(), "--note".to_string(), "x; touch /tmp/p".to_string()];
        let c = torchrun_command(&nodes, &nodes[1], &t, "cluster-train", &script);
        assert_eq!(
            c,
            "torchrun --nnodes=2 --node-rank=1 --nproc-per-node=8 --rdzv-backend=c10d \
             --rdzv-endpoint=10.0.0.7:29400 --rdzv-id=cluster-train --rdzv-conf=is_host=0 \
             --local-addr=10.0.0.9 train.py --note 'x; touch /tmp/p'"
        );
        let c0 = torchrun_command(
            &nodes,
            &nodes[0],
            &Torchrun { nproc_per_node: Some(2), rdzv_port: 1234 },
            "d-p",
            &[],
        );
        assert!(
            c0.contains("--nproc-per-node=2 ") && c0.contains(":1234 ") && c0.contains("is_host=1"),
            "{c0}"
        );
        // A type the catalog does not know runs one process per node.
        let unknown = [node(0, "fd00::1", None)];
        let c = torchrun_command(&unknown, &unknown[0], &t, "d-p", &[]);
        assert!(c.contains("--nproc-per-node=1 ") && c.contains("--rdzv-endpoint=[fd00::1]:29400"), "{c}");
    }

    #[test]
    fn probe_answers_are_read() {
        assert!(probe_command().contains(gpuctl_provision::boot::READY_MARKER));
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(read_probe(&l(&["gpuctl-waiting"])), None);
        assert_eq!(
            read_probe(&l(&["gpuctl-ready", "2026-12-01T00:00:00Z"])),
            Some(Readiness::Ready { at: "2026-12-01T00:00:00Z".into() })
        );
        assert_eq!(
            read_probe(&l(&["gpuctl-failed", "2026-12-01T00:00:00Z step=container", "E: no"])),
            Some(Readiness::Failed { step: "container".into(), log_tail: l(&["E: no"]) })
        );
    }
}
