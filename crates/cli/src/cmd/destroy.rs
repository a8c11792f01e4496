//! `gpuctl destroy SPEC`: release every instance gpuctl recorded for the spec's deployment —
//! snapshotting first where the pool's policy says so — and verify each is gone. Re-running finishes
//! what an interrupted run left.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::provisioning::{confirm, load_spec, snapshot_instance, state_error, CloudArgs, Session};
use super::release::Released;
use super::CliError;
use crate::output::{load_catalog, print_json};

#[derive(Args, Debug)]
pub struct DestroyArgs {
    /// The deployment spec that created the instances
    pub spec: PathBuf,
    /// Do not ask before releasing
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

pub fn run(args: DestroyArgs) -> Result<ExitCode, CliError> {
    let spec = load_spec(&args.spec, &*load_catalog(None)?)?;
    let session = Session::open(&args.cloud, &[])?;
    let deployment = &spec.deployment.value;
    let _lock = session.engine.store(|s| s.lock(deployment)).map_err(state_error)?;
    let live: Vec<_> = session
        .engine
        .store(|s| s.resources(Some(deployment)))
        .map_err(state_error)?
        .into_iter()
        .filter(|r| r.state.is_live())
        .collect();
    if live.is_empty() {
        if args.cloud.json {
            print_json(&Released { released: vec![], errors: vec![] })?;
        } else {
            println!("gpuctl holds no live instance of {deployment}; nothing to do");
        }
        return Ok(ExitCode::SUCCESS);
    }
    confirm(&format!("release all {} instance(s) of {deployment}?", live.len()), args.yes)?;
    for r in &live {
        let policy = spec
            .pools
            .iter()
            .find(|p| p.name.value == r.pool)
            .map(|p| p.snapshot.before_release)
            .unwrap_or(false);
        if let (true, Some(id)) = (policy, r.instance_id.as_deref()) {
            snapshot_instance(&session, r.provider, &r.region, id, Some(r))?;
        }
    }
    session.bars.pool("release", live.len() as u64, "releasing");
    let (released, errors) = session.runtime.block_on(session.engine.release(&live));
    session.bars.finish();
    let out = Released { released, errors };
    if args.cloud.json {
        print_json(&out)?;
    } else {
        println!("released {} instance(s) of {deployment}", out.released.len());
        for e in &out.errors {
            println!("error: {e}");
        }
    }
    Ok(if out.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
