//! `gpuctl state migrate --to postgres://…` (issue 17): moves the current store (by default the
//! SQLite file) into a team's PostgreSQL, verifiably — counts per record kind and a checksum over
//! every record, printed for both sides; a non-empty target is refused unless it already holds
//! exactly the same records. URLs are only ever printed redacted.

use clap::{Args, Subcommand};
use gpuctl_provision::state::{self, Store};
use gpuctl_sign::credentials::Env;

use super::provisioning::{state_error, state_location};
use super::CliError;

#[derive(Args, Debug)]
pub struct StateArgs {
    #[command(subcommand)]
    command: StateCommand,
}

#[derive(Subcommand, Debug)]
enum StateCommand {
    /// Copy every record of the store (`--state`, $GPUCTL_STATE or the default file) into another
    /// (`--to`), then compare counts and checksums of both
    Migrate {
        /// The source store (FILE or URL); default as for every command
        #[arg(long, value_name = "FILE|URL")]
        state: Option<String>,
        /// The target store, e.g. postgres://gpuctl@db.internal/gpuctl?sslmode=verify-full
        #[arg(long, value_name = "URL|FILE")]
        to: String,
    },
}

pub fn run(args: StateArgs) -> Result<std::process::ExitCode, CliError> {
    let StateCommand::Migrate { state, to } = args.command;
    let env = Env::from_process();
    let from = state_location(state.as_deref(), &env)?;
    let to = state_location(Some(&to), &env)?;
    if from.shown() == to.shown() {
        return Err(CliError::usage(format!("--to {} is the source store itself", to.shown())));
    }
    let source = Store::open_at(&from).map_err(state_error)?;
    let target = Store::open_at(&to).map_err(state_error)?;
    let m = state::migrate(&source, &target).map_err(state_error)?;
    crate::outln!("from {}: {}", from.shown(), state::counts_text(&m.source));
    crate::outln!("  checksum {}", m.source.checksum);
    crate::outln!("to   {}: {}", to.shown(), state::counts_text(&m.target));
    crate::outln!("  checksum {}", m.target.checksum);
    let total: usize = m.source.counts.iter().map(|(_, n)| n).sum();
    if m.copied {
        crate::outln!("moved {total} records; both sides match");
    } else {
        crate::outln!("the target already holds exactly these {total} records; nothing written");
    }
    Ok(std::process::ExitCode::SUCCESS)
}
