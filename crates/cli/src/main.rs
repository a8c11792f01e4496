//! `gpuctl`: the command-line face of the engine, the signer, the local cloud and the provisioner.
//! This file only parses arguments and dispatches; each command lives in `cmd/<name>.rs`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;
mod output;

#[derive(Parser)]
#[command(
    name = "gpuctl",
    version,
    about = "Rent GPUs on Tencent, Alibaba and JD Cloud at the lowest cost for the job"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    // Each command adds one variant here and one arm in `run` below.
    /// List GPU instance types with prices per billing mode (or `gpus`, `models`)
    Catalog(cmd::catalog::CatalogArgs),
    /// Rank every offer for a training or inference job: fit, time, cost per billing mode
    Estimate(cmd::estimate::EstimateArgs),
    /// Self-built GPU cluster vs cloud: yearly cost and break-even utilization
    Tco(cmd::tco::TcoArgs),
    /// Storage prices per cloud (`prices`), and what archiving old checkpoints to IA/archive object storage saves (`archive`)
    Storage(cmd::storage::StorageArgs),
    /// Serve the browser calculator (web/dist) locally
    Web(cmd::web::WebArgs),
    /// Tools for chasing problems (`debug sign`: show every signing stage of one request)
    Debug(cmd::debug::DebugArgs),
    /// Run the local cloud: Tencent, Alibaba and JD Cloud emulators on one loopback port
    Sim(cmd::sim::SimArgs),
    /// What `provision` would create, keep and release, with ¥/hour and totals (exit 3 over budget)
    Plan(cmd::plan::PlanArgs),
    /// Create the instances a spec asks for, wait until running, record them
    Provision(cmd::provision::ProvisionArgs),
    /// What gpuctl holds now across the clouds, with ¥/hour and spend so far
    Status(cmd::status::StatusArgs),
    /// The month's bill against gpuctl's estimate per instance, settled or not, and monthly budgets (exit 3 over one)
    Cost(cmd::cost::CostArgs),
    /// Replace the spot instances the clouds reclaimed (recorded with the hours lost), resuming from the last checkpoint
    Recover(cmd::recover::RecoverArgs),
    /// Snapshot the system and data disks of an instance or a deployment/pool
    Snapshot(cmd::snapshot::SnapshotArgs),
    /// Buy the same configuration again (购买相同配置): describe, normalize to a spec, provision
    Clone(cmd::clone::CloneArgs),
    /// Release an instance or a deployment/pool: terminate, verify gone, keep the record
    Release(cmd::release::ReleaseArgs),
    /// Release everything a spec's deployment holds
    Destroy(cmd::destroy::DestroyArgs),
    /// Find instances tagged by gpuctl that no recorded deployment owns (lost state, someone else's run), with ¥/hour; `--release` them
    Sweep(cmd::sweep::SweepArgs),
    /// Log in to an instance with the system `ssh` (or run `-- CMD…` there)
    Ssh(cmd::ssh::SshArgs),
    /// Run `-- CMD…` on every instance of a pool over ssh, in parallel; output prefixed per instance
    Run(cmd::ssh::RunArgs),
    /// Copy files to every instance of a pool, or from one, with the system `scp`
    Cp(cmd::ssh::CpArgs),
    /// Wait until the instances' boot environment wrote its ready marker (checked over ssh)
    WaitReady(cmd::ssh::WaitReadyArgs),
    /// A cluster pool's Kubernetes (`engine = "k3s"`): `k3s up` installs k3s, the NVIDIA device plugin and Kubeflow Trainer over ssh
    K3s(cmd::k8s::K3sArgs),
    /// Fetch a k3s cluster pool's kubeconfig from node 0 over ssh (written 0600; it holds the admin credential)
    Kubeconfig(cmd::k8s::KubeconfigArgs),
    /// The state store itself: `state migrate --to postgres://…` moves it to a team's PostgreSQL, verifiably
    State(cmd::state::StateArgs),
}

fn run(cli: Cli) -> anyhow_free::Result {
    match cli.command {
        Command::Catalog(args) => cmd::catalog::run(args),
        Command::Estimate(args) => cmd::estimate::run(args),
        Command::Tco(args) => cmd::tco::run(args),
        Command::Storage(args) => cmd::storage::run(args),
        Command::Web(args) => cmd::web::run(args),
        Command::Debug(args) => cmd::debug::run(args),
        Command::Sim(args) => cmd::sim::run(args),
        Command::Plan(args) => cmd::plan::run(args),
        Command::Provision(args) => cmd::provision::run(args),
        Command::Status(args) => cmd::status::run(args),
        Command::Cost(args) => cmd::cost::run(args),
        Command::Recover(args) => cmd::recover::run(args),
        Command::Snapshot(args) => cmd::snapshot::run(args),
        Command::Clone(args) => cmd::clone::run(args),
        Command::Release(args) => cmd::release::run(args),
        Command::Destroy(args) => cmd::destroy::run(args),
        Command::Sweep(args) => cmd::sweep::run(args),
        Command::Ssh(args) => cmd::ssh::ssh(args),
        Command::Run(args) => cmd::ssh::run(args),
        Command::Cp(args) => cmd::ssh::cp(args),
        Command::WaitReady(args) => cmd::ssh::wait_ready(args),
        Command::K3s(args) => cmd::k8s::k3s(args),
        Command::Kubeconfig(args) => cmd::k8s::kubeconfig(args),
        Command::State(args) => cmd::state::run(args),
    }
}

/// Exit codes shared by every command (documented in README "Exit codes").
mod anyhow_free {
    pub type Result = std::result::Result<std::process::ExitCode, crate::cmd::CliError>;
}

/// Diagnostic logs on stderr, only when asked: `GPUCTL_LOG=debug` (or `trace`, or filters such as
/// `gpuctl_provision=debug`). Off by default so ordinary output stays as documented; a separate
/// variable from `RUST_LOG` so a value set for other programs does not change gpuctl's output.
/// Secrets never reach a log: the signer's `Secret` prints as `******` (README "Reliability").
fn init_logging() {
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("GPUCTL_LOG") {
        use std::io::IsTerminal;
        let ansi = std::io::stderr().is_terminal();
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(ansi)
            .try_init();
    }
}

fn main() -> ExitCode {
    init_logging();
    let cli = Cli::parse();
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    };
    // Output that could not be written is a failure the caller must see, once the work is done.
    match output::stdout_error() {
        Some(why) if code == ExitCode::SUCCESS => {
            eprintln!("error: {why}");
            ExitCode::FAILURE
        }
        _ => code,
    }
}
