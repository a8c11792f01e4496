//! A cluster pool's Kubernetes engine (issue 14, `engine = "k3s"`): `gpuctl k3s up`, `gpuctl
//! kubeconfig`, and `gpuctl run --trainjob` / `--trainjob-image`. What runs on the nodes is rendered
//! by `gpuctl_provision::k3s`; this file only sends it over the system `ssh` (remote.rs' options,
//! known_hosts and quoting), each script as one `sh -c` word run as root (`sudo -n` for a non-root
//! login), and whatever must stay secret on the session's standard input.
//!
//! Secrets: the join token is made here, held as a `Secret`, written only to ssh's stdin, and read
//! back from the server (for the agents) into memory only; the kubeconfig is read into memory and
//! written to a 0600 file (stdout only with `--out -`). Neither reaches a log, the state store,
//! `--json` or an error message: a failing step's message is the remote's stderr, and no script
//! prints either.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use clap::{Args, Subcommand};
use gpuctl_provision::k3s::{self, SharedVolume, TrainJobArgs};
use gpuctl_provision::spec::{ClusterEngine, Pool};
use gpuctl_provision::state::ClusterResource;
use gpuctl_sign::Secret;

use super::provisioning::{state_error, CloudArgs, Session};
use super::remote::{self, Host, LoginArgs, Node, Ssh, Target};
use super::CliError;
use crate::output::print_json;

#[derive(Args, Debug)]
pub struct K3sArgs {
    #[command(subcommand)]
    pub command: K3sCommand,
}

#[derive(Subcommand, Debug)]
pub enum K3sCommand {
    /// Install k3s on a cluster pool (`engine = "k3s"`): the server on node 0, every other node joined
    /// as an agent with a generated token, the NVIDIA device plugin, the shared file system as a
    /// ReadWriteMany volume and Kubeflow Trainer; waits (bounded) for every node to be Ready
    Up(K3sUpArgs),
}

#[derive(Args, Debug)]
pub struct K3sUpArgs {
    /// DEPLOY/POOL: a cluster pool with `engine = "k3s"`
    pub target: String,
    /// The k3s release to install (INSTALL_K3S_VERSION, e.g. v1.33.5+k3s1). Default: the mirror's stable channel
    #[arg(long, value_name = "VERSION")]
    pub k3s_version: Option<String>,
    /// Where Kubeflow Trainer's kustomize overlays are (a folder or URL holding `manager` and
    /// `runtimes`). Default: github.com/kubeflow/trainer at the release gpuctl validates against
    #[arg(long, value_name = "URL")]
    pub trainer_manifests: Option<String>,
    /// Do not install Kubeflow Trainer
    #[arg(long)]
    pub no_trainer: bool,
    /// Seconds to wait for the nodes to be Ready, and again for Trainer's controller
    #[arg(long = "timeout", value_name = "SECS", default_value_t = 600)]
    pub timeout: u64,
    #[command(flatten)]
    pub login: LoginArgs,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

#[derive(Args, Debug)]
pub struct KubeconfigArgs {
    /// DEPLOY/POOL: a cluster pool on which `gpuctl k3s up` ran
    pub target: String,
    /// Where to write it (mode 0600); `-` prints it. Default: DEPLOY-POOL.kubeconfig here
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub login: LoginArgs,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

/// What `run --trainjob…` was given (ssh.rs' `RunArgs` carries the flags).
pub struct TrainJobRun<'a> {
    pub file: Option<&'a Path>,
    pub image: Option<&'a str>,
    pub name: Option<&'a str>,
    pub gpus_per_node: Option<u32>,
    pub command: &'a [String],
    pub login: &'a LoginArgs,
    pub json: bool,
}

/// The largest TrainJob file `--trainjob` reads.
const MAX_TRAINJOB_BYTES: u64 = 1 << 20;
/// The largest answer read back from a node (a kubeconfig, a token).
const MAX_CAPTURE_BYTES: u64 = 1 << 20;

/// `script` as the remote command: one `sh -c` word, run as root (`sudo -n` when the login is not
/// root: it never prompts, so a missing sudo rule fails at once).
fn as_root(host: &Host, script: &str) -> String {
    let sh = format!("sh -c {}", remote::sh_quote(script));
    if host.user == "root" {
        sh
    } else {
        format!("sudo -n {sh}")
    }
}

/// What one remote step came to; `stdout` only when captured.
struct Step {
    ok: bool,
    stdout: Vec<u8>,
    why: String,
}

/// Runs `script` as root on `host`, `input` on its stdin. Captured stdout stays in memory (bounded);
/// otherwise the remote's stdout goes to our stderr with `label` (our stdout is the command's answer).
/// The remote's stderr is streamed to ours, its last lines kept for the error.
fn step(
    ssh: &Ssh,
    host: &Host,
    label: &str,
    script: &str,
    input: &[u8],
    capture: bool,
) -> Result<Step, CliError> {
    let args: Vec<OsString> = ssh.ssh_args(host, true, &[as_root(host, script)])?;
    let mut child = Command::new("ssh")
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| CliError::failed(format!("cannot start ssh: {e} (is OpenSSH's client installed?)")))?;
    let (mut si, so, se) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let mut out = Vec::new();
    let mut tail: Vec<String> = Vec::new();
    std::thread::scope(|s| {
        s.spawn(move || {
            if let Some(si) = si.as_mut() {
                // A remote that ends early closes the pipe; its exit status says why.
                let _ = si.write_all(input);
            }
            drop(si);
        });
        let err = s.spawn(move || {
            let mut kept = Vec::new();
            if let Some(se) = se {
                for line in std::io::BufRead::lines(std::io::BufReader::new(se)).map_while(Result::ok) {
                    eprintln!("[{label}] {line}");
                    kept.push(line);
                    if kept.len() > 10 {
                        kept.remove(0);
                    }
                }
            }
            kept
        });
        if let Some(so) = so {
            if capture {
                let _ = so.take(MAX_CAPTURE_BYTES).read_to_end(&mut out);
            } else {
                for line in std::io::BufRead::lines(std::io::BufReader::new(so)).map_while(Result::ok) {
                    eprintln!("[{label}] {line}");
                }
            }
        }
        tail = err.join().unwrap_or_default();
    });
    let status = child.wait().map_err(|e| CliError::failed(format!("waiting for ssh: {e}")))?;
    let why = match status.code() {
        Some(0) => String::new(),
        Some(remote::SSH_FAILED) => {
            format!("ssh to {} failed (unreachable, host key changed, or login refused)", host.address)
        }
        Some(c) => format!("exited with {c}: {}", tail.join(" | ")),
        None => "ssh ended by a signal".to_string(),
    };
    Ok(Step { ok: status.success(), stdout: out, why })
}

fn must(s: Step, what: &str) -> Result<Vec<u8>, CliError> {
    if s.ok {
        Ok(s.stdout)
    } else {
        Err(CliError::failed(format!("{what}: {}", s.why)))
    }
}

/// The cluster: its nodes (rank order), each with its login, and the pool's spec.
struct Cluster {
    nodes: Vec<(Node, Host)>,
    pool: Pool,
}

fn cluster(session: &Session, t: &Target, login: &LoginArgs, what: &str) -> Result<Cluster, CliError> {
    let nodes = remote::cluster_nodes(session, t)?;
    let spec = remote::recorded_spec(session, &t.deployment)?;
    let pool_name = t.pool.as_deref().unwrap_or_default();
    let pool = spec.pools.iter().find(|p| p.name.value == pool_name).cloned().ok_or_else(|| {
        CliError::usage(format!("deployment {}'s spec has no pool {pool_name}", t.deployment))
    })?;
    if pool.engine != ClusterEngine::K3s {
        return Err(CliError::usage(format!(
            "{what} needs a Kubernetes cluster: pool {t} runs engine = \"{}\"; set engine = \"k3s\" (and env = {{ container = true }}) in its spec, or use `gpuctl run {t} --torchrun -- …`",
            pool.engine.as_str()
        )));
    }
    let hosts = remote::resolve(session, t, login, Some(&spec))?;
    let mut out = Vec::new();
    for n in nodes {
        let h = hosts.iter().find(|h| h.instance_id == n.instance_id).cloned().ok_or_else(|| {
            CliError::failed(format!("node {} ({}) has no address to log in to", n.rank, n.instance_id))
        })?;
        out.push((n, h));
    }
    Ok(Cluster { nodes: out, pool })
}

/// The pool's shared file system as a volume: the state's live mount target, the spec's folder.
fn shared_volume(session: &Session, t: &Target, pool: &Pool) -> Result<Option<SharedVolume>, CliError> {
    let Some(st) = &pool.shared_storage else { return Ok(None) };
    let rows = session.engine.store(|s| s.cluster_resources(&t.deployment)).map_err(state_error)?;
    let source = rows
        .iter()
        .rev()
        .find(|r| {
            Some(r.pool.as_str()) == t.pool.as_deref()
                && r.kind == ClusterResource::FILE_SYSTEM
                && r.state == "live"
                && r.mount_address.is_some()
        })
        .and_then(|r| r.mount_address.clone());
    match source {
        Some(source) => Ok(Some(SharedVolume { source, mount: st.mount.clone(), size_gb: st.size_gb })),
        None => {
            eprintln!(
                "warning: {t} has shared_storage but the state records no live file system with a mount target; no shared volume"
            );
            Ok(None)
        }
    }
}

#[derive(serde::Serialize)]
struct UpReport {
    cluster: String,
    server: String,
    nodes: usize,
    shared_volume: Option<String>,
    trainer: Option<String>,
}

pub fn k3s(args: K3sArgs) -> Result<ExitCode, CliError> {
    match args.command {
        K3sCommand::Up(a) => up(a),
    }
}

fn up(args: K3sUpArgs) -> Result<ExitCode, CliError> {
    let t = Target::parse(&args.target, false).map_err(CliError::usage)?;
    if let Some(v) = &args.k3s_version {
        k3s::check_version(v).map_err(CliError::usage)?;
    }
    let session = Session::open(&args.cloud, &[])?;
    let c = cluster(&session, &t, &args.login, "k3s up")?;
    let ssh = ssh_for(&session, &args.login)?;
    let shared = shared_volume(&session, &t, &c.pool)?;
    let manifests = k3s::to_yaml(&k3s::cluster_manifests(shared.as_ref()).map_err(CliError::failed)?);
    let (n0, server) = &c.nodes[0];
    let version = args.k3s_version.as_deref();
    eprintln!("k3s server on node 0 ({} {}, private {})", server.label, server.address, n0.private_ip);
    let fresh = k3s::new_token();
    must(
        step(
            &ssh,
            server,
            "node 0",
            &k3s::server_script(n0.private_ip, server.address, version),
            &line(&fresh),
            false,
        )?,
        "installing the k3s server on node 0",
    )?;
    drop(fresh);
    // The server's token file is the one that counts (a second `up` keeps the first token).
    let read = must(
        step(&ssh, server, "node 0", &k3s::read_token_command(), b"", true)?,
        "reading the join token on node 0",
    )?;
    let token = Secret::new(String::from_utf8_lossy(&read).trim().to_string());
    drop(read);
    if !k3s::token_looks_right(token.expose()) {
        return Err(CliError::failed(format!("node 0's {} does not hold a join token", k3s::TOKEN_FILE)));
    }
    let agents: Vec<Host> = c.nodes[1..].iter().map(|(_, h)| h.clone()).collect();
    let results = remote::for_each_host(&agents, 16, |h| {
        let node = c.nodes.iter().find(|(_, x)| x.instance_id == h.instance_id).map(|(n, _)| n);
        let Some(node) = node else { return Err(CliError::failed("lost a node")) };
        let label = format!("node {}", node.rank);
        eprintln!("k3s agent on {label} ({} {})", h.label, h.address);
        let script = k3s::agent_script(n0.private_ip, node.private_ip, version);
        must(step(&ssh, h, &label, &script, &line(&token), false)?, &format!("joining {label}")).map(|_| ())
    });
    drop(token);
    for r in results {
        r?;
    }
    must(
        step(
            &ssh,
            server,
            "node 0",
            &k3s::nodes_ready_script(c.nodes.len() as u32, args.timeout),
            b"",
            false,
        )?,
        "waiting for the nodes to be Ready",
    )?;
    eprintln!(
        "applying the NVIDIA device plugin{}",
        if shared.is_some() { " and the shared volume" } else { "" }
    );
    must(
        step(&ssh, server, "node 0", &k3s::apply_stdin_command(), manifests.as_bytes(), false)?,
        "applying the cluster's manifests",
    )?;
    let trainer = if args.no_trainer {
        None
    } else {
        eprintln!("installing Kubeflow Trainer {}", k3s::TRAINER_VERSION);
        let script = k3s::trainer_install_script(args.trainer_manifests.as_deref(), args.timeout);
        must(step(&ssh, server, "node 0", &script, b"", false)?, "installing Kubeflow Trainer")?;
        Some(k3s::trainer_kustomization("manager", args.trainer_manifests.as_deref()))
    };
    let report = UpReport {
        cluster: t.to_string(),
        server: server.address.to_string(),
        nodes: c.nodes.len(),
        shared_volume: shared.as_ref().map(|v| format!("{} at {}", v.source, v.mount)),
        trainer,
    };
    if args.cloud.json {
        print_json(&report)?;
    } else {
        crate::outln!(
            "k3s runs on {} node(s) of {t}; `gpuctl kubeconfig {t}` fetches its kubeconfig, `gpuctl run {t} --trainjob job.yaml` starts a TrainJob",
            report.nodes
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The token as the one line a node's script reads.
fn line(token: &Secret) -> Vec<u8> {
    let mut v = token.expose().as_bytes().to_vec();
    v.push(b'\n');
    v
}

fn ssh_for(session: &Session, login: &LoginArgs) -> Result<Ssh, CliError> {
    Ok(Ssh {
        known_hosts: remote::known_hosts(session)?,
        port: login.port,
        connect_timeout: login.connect_timeout,
    })
}

pub fn kubeconfig(args: KubeconfigArgs) -> Result<ExitCode, CliError> {
    let t = Target::parse(&args.target, false).map_err(CliError::usage)?;
    let session = Session::open(&args.cloud, &[])?;
    let c = cluster(&session, &t, &args.login, "kubeconfig")?;
    let ssh = ssh_for(&session, &args.login)?;
    let server = &c.nodes[0].1;
    let raw = must(
        step(&ssh, server, "node 0", &k3s::read_kubeconfig_command(), b"", true)?,
        &format!("reading {} on node 0 (did `gpuctl k3s up {t}` run?)", k3s::KUBECONFIG_PATH),
    )?;
    let text = String::from_utf8(raw).map_err(|_| CliError::failed("node 0's kubeconfig is not UTF-8"))?;
    let config = k3s::kubeconfig_for(&text, server.address).map_err(CliError::failed)?;
    drop(text);
    let out = args.out.unwrap_or_else(|| {
        PathBuf::from(format!("{}-{}.kubeconfig", t.deployment, t.pool.as_deref().unwrap_or_default()))
    });
    if out.as_os_str() == "-" {
        crate::output::write_out(format_args!("{config}"));
        return Ok(ExitCode::SUCCESS);
    }
    write_private(&out, config.as_bytes())?;
    if args.cloud.json {
        print_json(
            &serde_json::json!({ "kubeconfig": out, "server": format!("https://{}:{}", server.address, k3s::API_PORT) }),
        )?;
    } else {
        crate::outln!("{}", out.display());
        eprintln!(
            "wrote {} (mode 0600; it holds the cluster's admin credential). export KUBECONFIG={}; the API is https://{}:{}: \
             open that port to your address in the security group to use it from here",
            out.display(),
            out.display(),
            server.address,
            k3s::API_PORT
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `bytes` to `path` readable by its owner only: a 0600 file beside it, renamed over it.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let fail = |e: std::io::Error| CliError::failed(format!("cannot write {}: {e}", path.display()));
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name =
        path.file_name().ok_or_else(|| CliError::usage(format!("{} is not a file name", path.display())))?;
    let tmp = dir.join(format!(".{}.tmp{}", name.to_string_lossy(), std::process::id()));
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let r = o.open(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = r.and_then(|_| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(e));
    }
    Ok(())
}

/// `run --trainjob FILE` (the YAML as given, `-` for stdin) or `run --trainjob-image IMG -- CMD…`
/// (a TrainJob rendered on the `torch-distributed` runtime over every node, the shared volume
/// mounted): applied with node 0's kubectl, the YAML on the session's stdin.
pub fn trainjob(session: &Session, t: &Target, r: TrainJobRun<'_>) -> Result<ExitCode, CliError> {
    let c = cluster(session, t, r.login, "--trainjob")?;
    let yaml = match (r.file, r.image) {
        (Some(f), _) if f.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::stdin()
                .take(MAX_TRAINJOB_BYTES)
                .read_to_string(&mut s)
                .map_err(|e| CliError::usage(format!("cannot read the TrainJob from stdin: {e}")))?;
            s
        }
        (Some(f), _) => gpuctl_sign::file::read_string_bounded(f, MAX_TRAINJOB_BYTES)
            .map_err(|e| CliError::usage(e.to_string()))?,
        (None, Some(image)) => {
            let shared = shared_volume(session, t, &c.pool)?;
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or_default();
            let pool = t.pool.as_deref().unwrap_or("job");
            let name = r.name.map(str::to_string).unwrap_or_else(|| {
                let base: String = pool.replace('_', "-").chars().take(28).collect();
                format!("{}-{stamp}", base.trim_end_matches('-'))
            });
            let job = k3s::train_job(&TrainJobArgs {
                name,
                image: image.to_string(),
                command: r.command.to_vec(),
                num_nodes: c.nodes.len() as u32,
                gpus_per_node: r.gpus_per_node.or(c.nodes[0].0.gpus),
                shared_mount: shared.map(|v| v.mount),
            })
            .map_err(CliError::usage)?;
            k3s::to_yaml(&[job])
        }
        (None, None) => return Err(CliError::usage("give --trainjob FILE or --trainjob-image IMAGE")),
    };
    let ssh = ssh_for(session, r.login)?;
    let server = &c.nodes[0].1;
    let s = step(&ssh, server, "node 0", &k3s::apply_stdin_command(), yaml.as_bytes(), true)?;
    let applied = String::from_utf8_lossy(&s.stdout).trim().to_string();
    let ok = s.ok;
    must(s, "applying the TrainJob on node 0")?;
    if r.json {
        print_json(&serde_json::json!({ "cluster": t.to_string(), "applied": applied, "ok": ok }))?;
    } else {
        crate::outln!("{applied}");
        eprintln!("follow it with: KUBECONFIG=… kubectl get trainjob, or `gpuctl ssh {t}/0 -- sudo k3s kubectl get trainjob`");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuctl_cloud::Provider;

    fn host(user: &str) -> Host {
        Host {
            label: "train/0".into(),
            instance_id: "ins-1".into(),
            provider: Provider::Tencent,
            address: "203.0.113.5".parse().unwrap(),
            user: user.into(),
            identity: None,
            has_env: true,
        }
    }

    #[test]
    fn scripts_run_as_root_in_one_word_and_the_token_is_no_word() {
        let token = k3s::new_token();
        let script = k3s::agent_script("10.0.0.7".parse().unwrap(), "10.0.0.9".parse().unwrap(), None);
        let ssh = Ssh { known_hosts: "/s/known_hosts".into(), port: None, connect_timeout: 5 };
        for user in ["root", "ubuntu"] {
            let h = host(user);
            let a = ssh.ssh_args(&h, true, &[as_root(&h, &script)]).unwrap();
            let a: Vec<String> = a.iter().map(|s| s.to_string_lossy().into_owned()).collect();
            let dd = a.iter().position(|s| s == "--").unwrap();
            assert_eq!(a.len(), dd + 3, "one remote word: {a:?}");
            let cmd = &a[dd + 2];
            assert!(cmd.starts_with(if user == "root" { "sh -c '" } else { "sudo -n sh -c '" }), "{cmd}");
            assert!(a.iter().all(|w| !w.contains(token.expose())), "the token is never an argument");
        }
        assert_eq!(line(&token).len(), 65);
    }

    #[test]
    fn the_kubeconfig_file_is_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.kubeconfig");
        std::fs::write(&p, "old").unwrap();
        write_private(&p, b"apiVersion: v1\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "apiVersion: v1\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left");
    }
}
