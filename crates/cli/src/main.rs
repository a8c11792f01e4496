//! `gpuctl`: the command-line face of the engine, the signer, the local cloud and the provisioner.
//! This file only parses arguments and dispatches; each command lives in `cmd/<name>.rs`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;
mod output;

#[derive(Parser)]
#[command(name = "gpuctl", version, about = "Rent GPUs on Tencent, Alibaba and JD Cloud at the lowest cost for the job")]
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
    /// Serve the browser calculator (web/dist) locally
    Web(cmd::web::WebArgs),
    /// Tools for chasing problems (`debug sign`: show every signing stage of one request)
    Debug(cmd::debug::DebugArgs),
    /// Run the local cloud: Tencent, Alibaba and JD Cloud emulators on one loopback port
    Sim(cmd::sim::SimArgs),
}

fn run(cli: Cli) -> anyhow_free::Result {
    match cli.command {
        Command::Catalog(args) => cmd::catalog::run(args),
        Command::Estimate(args) => cmd::estimate::run(args),
        Command::Tco(args) => cmd::tco::run(args),
        Command::Web(args) => cmd::web::run(args),
        Command::Debug(args) => cmd::debug::run(args),
        Command::Sim(args) => cmd::sim::run(args),
    }
}

/// Exit codes shared by every command (documented in README "Exit codes").
mod anyhow_free {
    pub type Result = std::result::Result<std::process::ExitCode, crate::cmd::CliError>;
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}
