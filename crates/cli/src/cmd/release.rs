//! `gpuctl release <instance|deployment/pool>`: terminate, wait until the cloud no longer has the
//! instances, and mark them released (the records are kept). A prepaid instance whose cloud refuses
//! the release until its term ends (JD) is marked billed until then, renewal off; the exit status is
//! still success (the cloud did all it allows; the README's `release` section says why).

use std::process::ExitCode;

use clap::Args;

use super::provisioning::{
    apply_error, confirm, print_billed_until, resolve, state_error, CloudArgs, Session, Target,
};
use super::CliError;
use crate::output::print_json;

#[derive(Args, Debug)]
pub struct ReleaseArgs {
    /// An instance id gpuctl recorded, or deployment/pool
    pub target: String,
    /// Snapshot the instances' disks first
    #[arg(long)]
    pub snapshot: bool,
    /// Do not ask before releasing
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

pub fn run(args: ReleaseArgs) -> Result<ExitCode, CliError> {
    let session = Session::open(&args.cloud, &[])?;
    let targets = resolve(&session.engine, &Target::parse(&args.target))?;
    let ids: Vec<&str> = targets.iter().filter_map(|r| r.instance_id.as_deref()).collect();
    confirm(&format!("release {} instance(s): {}?", targets.len(), ids.join(", ")), args.yes)?;
    let job = session.engine.begin_release(targets, args.snapshot).map_err(state_error)?;
    let out = session.runtime.block_on(job.run()).map_err(apply_error);
    session.bars.finish();
    let out = out?;
    if args.cloud.json {
        print_json(&out)?;
    } else {
        for id in &out.released {
            crate::outln!("released {id}");
        }
        print_billed_until(&out.billed_until);
        for e in &out.errors {
            crate::outln!("error: {e}");
        }
    }
    Ok(if out.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
