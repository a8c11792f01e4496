//! `gpuctl ssh`, `gpuctl run`, `gpuctl cp`, `gpuctl wait-ready` (issue 13): the system OpenSSH
//! client pointed at a deployment's instances (how: `remote.rs`).

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use super::provisioning::{CloudArgs, Session};
use super::remote::{self, CpEnd, Host, LoginArgs, Outcome, Ssh, Target};
use super::CliError;
use crate::output::print_json;

#[derive(Args, Debug)]
pub struct SshArgs {
    /// DEPLOY/POOL[/N]: the instance (N may be left out when the pool has one instance)
    pub target: String,
    /// A command to run instead of a login shell (after `--`)
    #[arg(last = true)]
    pub command: Vec<String>,
    #[command(flatten)]
    pub login: LoginArgs,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// DEPLOY/POOL[/N]: every instance of the pool, or instance N
    pub target: String,
    /// The command (after `--`), run by each instance's login shell (with --trainjob-image: the
    /// training container's command)
    #[arg(last = true, required_unless_present = "trainjob")]
    pub command: Vec<String>,
    /// How many instances at a time
    #[arg(long, default_value_t = 16)]
    pub parallel: usize,
    /// Apply this Kubeflow Trainer TrainJob (YAML; `-` for stdin) with node 0's kubectl, on a cluster
    /// pool with `engine = "k3s"` after `gpuctl k3s up`
    #[arg(long, value_name = "FILE", conflicts_with_all = ["torchrun", "trainjob_image"])]
    pub trainjob: Option<std::path::PathBuf>,
    /// Render a TrainJob instead: this image, the command after `--`, every node of the pool, its GPUs
    /// (`nvidia.com/gpu`), the `torch-distributed` runtime and the shared volume
    #[arg(long, value_name = "IMAGE", conflicts_with = "torchrun")]
    pub trainjob_image: Option<String>,
    /// The rendered TrainJob's name. Default: the pool's name and the time
    #[arg(long, value_name = "NAME", requires = "trainjob_image")]
    pub trainjob_name: Option<String>,
    /// GPUs per node the rendered TrainJob asks for. Default: the instance type's GPU count
    #[arg(long, value_name = "N", requires = "trainjob_image", value_parser = clap::value_parser!(u32).range(0..=1024))]
    pub gpus_per_node: Option<u32>,
    /// Start PyTorch's `torchrun` on every node of a cluster pool at once, the command being the
    /// training script and its arguments (`-- train.py --lr 1e-4`); rendezvous on node 0's private IP
    #[arg(long)]
    pub torchrun: bool,
    /// Processes per node (torchrun's --nproc-per-node). Default: the instance type's GPU count, or 1
    #[arg(long, value_name = "N", requires = "torchrun", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub nproc_per_node: Option<u32>,
    /// The rendezvous port on node 0 (torchrun's c10d store)
    #[arg(long, value_name = "PORT", requires = "torchrun", default_value_t = 29400)]
    pub rdzv_port: u16,
    #[command(flatten)]
    pub login: LoginArgs,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

#[derive(Args, Debug)]
pub struct CpArgs {
    /// From: a local path, or DEPLOY/POOL/N:PATH
    pub from: String,
    /// To: DEPLOY/POOL[/N]:PATH (every instance of the pool when N is left out), or a local path
    pub to: String,
    /// Copy folders and what they hold
    #[arg(long, short = 'r')]
    pub recursive: bool,
    /// How many instances at a time
    #[arg(long, default_value_t = 16)]
    pub parallel: usize,
    #[command(flatten)]
    pub login: LoginArgs,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

#[derive(Args, Debug)]
pub struct WaitReadyArgs {
    /// DEPLOY[/POOL[/N]]
    pub target: String,
    /// Give up after this many seconds in all
    #[arg(long = "timeout", value_name = "SECS", default_value_t = 300)]
    pub timeout: u64,
    #[command(flatten)]
    pub login: LoginArgs,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

fn target(text: &str, pool_optional: bool) -> Result<Target, CliError> {
    Target::parse(text, pool_optional).map_err(CliError::usage)
}

fn ssh_for(session: &Session, login: &LoginArgs) -> Result<Ssh, CliError> {
    Ok(Ssh {
        known_hosts: remote::known_hosts(session)?,
        port: login.port,
        connect_timeout: login.connect_timeout,
    })
}

pub fn ssh(args: SshArgs) -> Result<ExitCode, CliError> {
    let t = target(&args.target, false)?;
    let session = Session::open(&args.cloud, &[])?;
    let hosts = remote::resolve(&session, &t, &args.login, None)?;
    let [host] = &hosts[..] else {
        let names: Vec<&str> = hosts.iter().map(|h| h.label.as_str()).collect();
        return Err(CliError::usage(format!(
            "{t} has {} instances ({}); name one: {t}/N, or use `gpuctl run` for all of them",
            hosts.len(),
            names.join(", ")
        )));
    };
    let ssh = ssh_for(&session, &args.login)?;
    // Interactive: ssh owns the terminal, may prompt for a key's passphrase; its exit code is ours.
    let status =
        std::process::Command::new("ssh").args(ssh.ssh_args(host, false, &args.command)?).status().map_err(
            |e| CliError::failed(format!("cannot start ssh: {e} (is OpenSSH's client installed?)")),
        )?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

/// Exit 0 when every instance's command succeeded, else 1; printed per instance.
fn finish(outcomes: &[Outcome], json: bool, what: &str) -> Result<ExitCode, CliError> {
    if json {
        print_json(&outcomes)?;
    } else {
        for o in outcomes {
            let who = format!("[{} {}]", o.instance, o.instance_id);
            match (&o.error, o.exit_code) {
                (Some(e), _) => eprintln!("{who} {e}"),
                (None, Some(0)) => {}
                (None, Some(c)) => eprintln!("{who} {what} exited with {c}"),
                (None, None) => eprintln!("{who} {what} did not finish"),
            }
        }
    }
    let failed = outcomes.iter().filter(|o| !o.ok()).count();
    if !json && outcomes.len() > 1 {
        eprintln!("{what}: {} of {} instance(s) succeeded", outcomes.len() - failed, outcomes.len());
    }
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

pub fn run(args: RunArgs) -> Result<ExitCode, CliError> {
    let t = target(&args.target, false)?;
    let session = Session::open(&args.cloud, &[])?;
    if args.torchrun {
        return torchrun(&args, &t, &session);
    }
    if args.trainjob.is_some() || args.trainjob_image.is_some() {
        let r = super::k8s::TrainJobRun {
            file: args.trainjob.as_deref(),
            image: args.trainjob_image.as_deref(),
            name: args.trainjob_name.as_deref(),
            gpus_per_node: args.gpus_per_node,
            command: &args.command,
            login: &args.login,
            json: args.cloud.json,
        };
        return super::k8s::trainjob(&session, &t, r);
    }
    let hosts = remote::resolve(&session, &t, &args.login, None)?;
    let ssh = ssh_for(&session, &args.login)?;
    let json = args.cloud.json;
    let prepared: Vec<Vec<std::ffi::OsString>> =
        hosts.iter().map(|h| ssh.ssh_args(h, true, &args.command)).collect::<Result<_, _>>()?;
    let outcomes = remote::for_each_host(&hosts, args.parallel, |h| {
        let i = hosts.iter().position(|x| x.label == h.label).unwrap_or(0);
        remote::run_one("ssh", &prepared[i], h, json)
    });
    finish(&outcomes, json, "the command")
}

pub fn cp(args: CpArgs) -> Result<ExitCode, CliError> {
    let from = CpEnd::parse(&args.from).map_err(CliError::usage)?;
    let to = CpEnd::parse(&args.to).map_err(CliError::usage)?;
    let (t, upload) = match (&from, &to) {
        (CpEnd::Local(_), CpEnd::Remote { target, .. }) => (target.clone(), true),
        (CpEnd::Remote { target, .. }, CpEnd::Local(_)) => (target.clone(), false),
        _ => {
            return Err(CliError::usage(
                "cp copies between here and instances: exactly one side is DEPLOY/POOL[/N]:PATH (write a local path with `:` as ./a:b)",
            ))
        }
    };
    if upload {
        if let CpEnd::Local(p) = &from {
            if !p.exists() {
                return Err(CliError::usage(format!("{} does not exist", p.display())));
            }
        }
    }
    let session = Session::open(&args.cloud, &[])?;
    let hosts = remote::resolve(&session, &t, &args.login, None)?;
    if !upload && hosts.len() > 1 {
        return Err(CliError::usage(format!(
            "{t} has {} instances; copy from one at a time: {t}/N:PATH",
            hosts.len()
        )));
    }
    let ssh = ssh_for(&session, &args.login)?;
    let json = args.cloud.json;
    let prepared: Vec<Vec<std::ffi::OsString>> =
        hosts.iter().map(|h| ssh.scp_args(h, args.recursive, &from, &to)).collect::<Result<_, _>>()?;
    let outcomes = remote::for_each_host(&hosts, args.parallel, |h| {
        let i = hosts.iter().position(|x| x.label == h.label).unwrap_or(0);
        remote::run_one("scp", &prepared[i], h, json)
    });
    if !json {
        for o in outcomes.iter().filter(|o| o.ok()) {
            crate::outln!("[{} {}] copied", o.instance, o.instance_id);
        }
    }
    finish(&outcomes, json, "scp")
}

pub fn wait_ready(args: WaitReadyArgs) -> Result<ExitCode, CliError> {
    let t = target(&args.target, true)?;
    let session = Session::open(&args.cloud, &[])?;
    let hosts = remote::resolve(&session, &t, &args.login, None)?;
    let ssh = ssh_for(&session, &args.login)?;
    let ok = wait_and_print(&ssh, &hosts, args.timeout, args.cloud.poll_ms, args.cloud.json, false)?;
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Waits for `hosts` (bounded by `timeout_s`) and prints each one's readiness; true when all are ready.
pub fn wait_and_print(
    ssh: &Ssh,
    hosts: &[Host],
    timeout_s: u64,
    poll_ms: u64,
    json: bool,
    to_stderr: bool,
) -> Result<bool, CliError> {
    if !json {
        eprintln!("waiting up to {timeout_s} s for {} instance(s) to be ready over SSH", hosts.len());
    }
    let got = remote::wait_ready(
        ssh,
        hosts,
        Duration::from_secs(timeout_s),
        Duration::from_millis(poll_ms.clamp(100, 60_000)),
    );
    let ok = got.iter().all(|r| matches!(r, remote::Readiness::Ready { .. } | remote::Readiness::Reachable));
    if json {
        let rows: Vec<serde_json::Value> = hosts
            .iter()
            .zip(&got)
            .map(|(h, r)| {
                let mut v = serde_json::to_value(h).unwrap_or_default();
                if let (Some(m), Ok(serde_json::Value::Object(r))) =
                    (v.as_object_mut(), serde_json::to_value(r))
                {
                    m.extend(r);
                }
                v
            })
            .collect();
        print_json(&rows)?;
    } else {
        remote::print_readiness(hosts, &got, to_stderr);
    }
    Ok(ok)
}

/// `run --torchrun` (issue 14): torchrun on every node of a cluster pool, all at once (a rendezvous
/// waits for every node, so `--parallel` does not apply), each node's lines prefixed `[node i]`.
fn torchrun(args: &RunArgs, t: &Target, session: &Session) -> Result<ExitCode, CliError> {
    let nodes = remote::cluster_nodes(session, t)?;
    let hosts = remote::resolve(session, t, &args.login, None)?;
    let ssh = ssh_for(session, &args.login)?;
    let opts = remote::Torchrun { nproc_per_node: args.nproc_per_node, rdzv_port: args.rdzv_port };
    let rdzv_id = format!("{}-{}", t.deployment, t.pool.as_deref().unwrap_or_default());
    let mut prepared = Vec::new();
    for n in &nodes {
        let host = hosts.iter().find(|h| h.instance_id == n.instance_id).ok_or_else(|| {
            CliError::failed(format!("node {} ({}) has no address to log in to", n.rank, n.instance_id))
        })?;
        let command = remote::torchrun_command(&nodes, n, &opts, &rdzv_id, &args.command);
        prepared.push((n.rank, host.clone(), ssh.ssh_args(host, true, &[command])?));
    }
    let json = args.cloud.json;
    if !json {
        eprintln!(
            "torchrun on {} node(s) of {t}, rendezvous {}:{} (id {rdzv_id})",
            nodes.len(),
            nodes[0].private_ip,
            args.rdzv_port
        );
    }
    let hosts: Vec<Host> = prepared.iter().map(|(_, h, _)| h.clone()).collect();
    let outcomes = remote::for_each_host(&hosts, hosts.len(), |h| {
        let i = hosts.iter().position(|x| x.instance_id == h.instance_id).unwrap_or(0);
        let (rank, _, a) = &prepared[i];
        remote::run_one_prefixed("ssh", a, h, json, &format!("[node {rank}]"))
    });
    if json {
        print_json(&outcomes)?;
    }
    let mut failed = 0;
    for ((rank, h, _), o) in prepared.iter().zip(&outcomes) {
        if o.ok() {
            continue;
        }
        failed += 1;
        if !json {
            let why = match (&o.error, o.exit_code) {
                (Some(e), _) => e.clone(),
                (None, Some(c)) => format!("torchrun exited with {c}"),
                (None, None) => "torchrun did not finish".into(),
            };
            eprintln!("[node {rank}] {} {}: {why}", h.label, h.instance_id);
        }
    }
    if !json {
        eprintln!("torchrun: {} of {} node(s) succeeded", nodes.len() - failed, nodes.len());
    }
    Ok(if failed == 0 && outcomes.len() == nodes.len() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
