//! `gpuctl snapshot <instance|deployment/pool> [--image]`: snapshot the system and data cloud disks of
//! each instance, wait until the snapshots are available, record them. `--image` also makes a custom
//! image of each instance's system disk (what `clone --from-snapshot` boots its clones from).

use std::process::ExitCode;

use clap::Args;

use super::provisioning::{apply_error, resolve, snapshot_instance, CloudArgs, Session, Target};
use super::CliError;
use crate::output::{print_json, table};

#[derive(Args, Debug)]
pub struct SnapshotArgs {
    /// An instance id gpuctl recorded, or deployment/pool
    pub target: String,
    /// Also make a custom image of each instance's system disk (Tencent/Alibaba CreateImage, JD
    /// createImage), wait until it is available and record it
    #[arg(long)]
    pub image: bool,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

pub fn run(args: SnapshotArgs) -> Result<ExitCode, CliError> {
    let session = Session::open(&args.cloud, &[])?;
    let targets = resolve(&session.engine, &Target::parse(&args.target))?;
    let mut all = Vec::new();
    let mut images = Vec::new();
    for r in &targets {
        let Some(id) = r.instance_id.as_deref() else { continue };
        all.extend(snapshot_instance(&session, r.provider, &r.region, id, Some(r))?);
        if args.image {
            let made =
                session.runtime.block_on(session.engine.image_next(r.provider, &r.region, id, Some(r)));
            images.push(made.map_err(apply_error)?);
        }
    }
    if args.cloud.json {
        if args.image {
            print_json(&serde_json::json!({ "snapshots": all, "images": images }))?;
        } else {
            print_json(&all)?;
        }
    } else {
        if !images.is_empty() {
            let mut t = table(["instance", "image", "name", "state"]);
            for i in &images {
                t.add_row([i.instance_id.clone(), i.image_id.clone(), i.name.clone(), i.state.clone()]);
            }
            crate::outln!("{t}");
        }
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
