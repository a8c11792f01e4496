//! `gpuctl snapshot <instance|deployment/pool>`: snapshot the system and data cloud disks of each
//! instance, wait until the snapshots are available, record them.

use std::process::ExitCode;

use clap::Args;

use super::provisioning::{resolve, snapshot_instance, CloudArgs, Session, Target};
use super::CliError;
use crate::output::{print_json, table};

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// An instance id gpuctl recorded, or deployment/pool
    pub target: String,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

pub fn run(args: SnapshotArgs) -> Result<ExitCode, CliError> {
    let session = Session::open(&args.cloud, &[])?;
    let targets = resolve(&session.engine, &Target::parse(&args.target))?;
    let mut all = Vec::new();
    for r in &targets {
        let Some(id) = r.instance_id.as_deref() else { continue };
        all.extend(snapshot_instance(&session, r.provider, &r.region, id, Some(r))?);
    }
    if args.cloud.json {
        print_json(&all)?;
    } else {
        let mut t = table(["instance", "disk", "kind", "snapshot", "state"]);
        for s in &all {
            t.add_row([
                s.instance_id.clone(),
                s.disk_id.clone(),
                s.disk_kind.clone(),
                s.snapshot_id.clone(),
                s.state.clone(),
            ]);
        }
        crate::outln!("{t}");
    }
    Ok(ExitCode::SUCCESS)
}
