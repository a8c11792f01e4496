//! `gpuctl clone <instance|deployment/pool>` — "购买相同配置": describe the source instance, normalize
//! it into a spec (same zone, type, image, disks, network, security groups, billing, tags), then the
//! normal plan → provision path. Works for instances gpuctl did not create (give --provider and
//! --region). `--from-snapshot` snapshots the source first and creates the data disks from those
//! snapshots; the system disk comes from the source's image. `--spec-out` keeps the spec for reuse.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use gpuctl_provision::workflow::{CloneOptions, CloneSource};

use super::plan::print_plan;
use super::provision::{exit_for, print_report};
use super::provisioning::{confirm, resolve, workflow_error, CloudArgs, Session, Target, EXIT_OVER_BUDGET};
use super::CliError;
use crate::output::{load_catalog, print_json, today};

#[derive(Args, Debug)]
pub struct CloneArgs {
    /// The source: an instance id, or deployment/pool (its first live instance)
    pub source: String,
    /// How many copies
    #[arg(long, default_value_t = 1)]
    pub count: u32,
    /// Snapshot the source's disks and create the copies' data disks from them
    #[arg(long)]
    pub from_snapshot: bool,
    /// Also write the normalized spec to this file
    #[arg(long, value_name = "FILE")]
    pub spec_out: Option<PathBuf>,
    /// Deployment name for the copies (default: <source deployment>-clone, or clone-<instance id>)
    #[arg(long)]
    pub deployment: Option<String>,
    /// The source's cloud, for an instance gpuctl has no record of
    #[arg(long)]
    pub provider: Option<String>,
    /// The source's region, for an instance gpuctl has no record of
    #[arg(long)]
    pub region: Option<String>,
    /// Write/print the spec and the plan; create nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask before creating
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

pub fn run(args: CloneArgs) -> Result<ExitCode, CliError> {
    if args.count == 0 {
        return Err(CliError::usage("--count must be at least 1"));
    }
    let session = Session::open(&args.cloud, &[])?;
    let target = Target::parse(&args.source);
    // Where the source is: from the state, or from --provider/--region for instances gpuctl did not create.
    let source = match (&target, &args.provider, &args.region) {
        (Target::Instance(id), Some(p), Some(r)) => CloneSource::Foreign {
            provider: gpuctl_core::parse_provider(p).map_err(|e| CliError::usage(e.to_string()))?,
            region: r.clone(),
            instance_id: id.clone(),
        },
        _ => CloneSource::Recorded(Box::new(resolve(&session.engine, &target)?.remove(0))),
    };
    let opts = CloneOptions {
        count: args.count,
        from_snapshot: args.from_snapshot,
        deployment: args.deployment.clone(),
        spec_file: args.spec_out.as_ref().map(|p| p.display().to_string()),
        dry_run: args.dry_run,
    };
    let catalog = load_catalog(None)?;
    let job = session
        .runtime
        .block_on(session.engine.begin_clone(&source, &opts, &catalog, today()?))
        .map_err(workflow_error)?;
    let text = job.spec_text();
    if let Some(out) = &args.spec_out {
        std::fs::write(out, text)
            .map_err(|e| CliError::failed(format!("cannot write {}: {e}", out.display())))?;
    }
    let plan = job.plan();
    if args.dry_run {
        if args.cloud.json {
            print_json(&serde_json::json!({ "spec": text, "plan": plan }))?;
        } else {
            crate::out!("{text}");
            print_plan(plan);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !plan.over_budget.is_empty() {
        return Ok(ExitCode::from(EXIT_OVER_BUDGET));
    }
    if !args.cloud.json {
        print_plan(plan);
    }
    let pool = job.spec().pools.first().map(|p| p.name.value.as_str()).unwrap_or_default();
    confirm(
        &format!(
            "create {} copy(ies) of {} as {}/{pool}?",
            plan.creates(),
            job.source_instance(),
            plan.deployment
        ),
        args.yes,
    )?;
    let report = session.runtime.block_on(job.apply(gpuctl_provision::clock::now())).map_err(workflow_error);
    session.bars.finish();
    let report = report?;
    if args.cloud.json {
        print_json(&report)?;
    } else {
        print_report(&report);
    }
    Ok(exit_for(&report))
}
