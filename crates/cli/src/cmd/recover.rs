//! `gpuctl recover [DEPLOYMENT]` (issue 15): finds the spot instances the clouds reclaimed from a
//! deployment (every recorded deployment when none is named), records each with the hours it cost,
//! and replaces exactly those — nothing else created, nothing released — from the spec file the
//! deployment was provisioned from, under the next token generation (a re-run or a retry after a
//! crash meets the replacement already made). Each replacement resumes from the shared storage's
//! newest checkpoint (`GPUCTL_RESUME_FROM` in its cluster facts) or its data disk from the reclaimed
//! instance's latest snapshot. `provision` re-run does the same as part of its plan. Safe to run from
//! cron: with nothing reclaimed it changes nothing.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use gpuctl_provision::state::ReclaimRecord;

use super::provision::{exit_for, print_report};
use super::provisioning::{apply_error, confirm, load_spec, state_error, workflow_error, CloudArgs, Session};
use super::CliError;
use crate::output::{load_catalog, print_json, today};

#[derive(Args, Debug)]
pub struct RecoverArgs {
    /// Only this deployment (default: every deployment the state records)
    pub deployment: Option<String>,
    /// Do not ask before creating the replacements
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// A price overlay file (your negotiated prices); also GPUCTL_PRICE_OVERLAY
    #[arg(long)]
    pub overlay: Option<PathBuf>,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

/// One deployment's outcome, as `recover --json` prints it (docs/json.md).
#[derive(serde::Serialize)]
struct Recovered {
    deployment: String,
    /// Reclaims this run found (recorded now).
    found: Vec<ReclaimRecord>,
    /// Slots this run replaced (or tried to): the engine's report, as `provision --json` prints it.
    report: Option<gpuctl_provision::apply::Report>,
}

pub fn run(args: RecoverArgs) -> Result<ExitCode, CliError> {
    let catalog = load_catalog(args.overlay.as_deref())?;
    let session = Session::open(&args.cloud, &[])?;
    let deployments = match &args.deployment {
        Some(d) => vec![d.clone()],
        None => session.engine.store(|s| s.deployments()).map_err(state_error)?,
    };
    let mut out = Vec::new();
    let mut code = ExitCode::SUCCESS;
    for deployment in deployments {
        let file = session
            .engine
            .store(|s| s.spec_file(&deployment))
            .map_err(state_error)?
            .ok_or_else(|| CliError::usage(format!("no deployment `{deployment}` in the state store")))?;
        let spec = load_spec(std::path::Path::new(&file), &catalog).map_err(|e| {
            CliError::usage(format!("{deployment}: its spec {file} (recorded at provision): {}", e.message))
        })?;
        let mut job = session.engine.begin_provision(spec, &catalog, today()?).map_err(state_error)?;
        let found = session
            .runtime
            .block_on(job.find_reclaims(&catalog, today()?, gpuctl_provision::clock::now()))
            .map_err(workflow_error)?;
        job.only_replacements().map_err(state_error)?;
        if !args.cloud.json {
            print_found(&deployment, &found);
        }
        if job.plan().creates() == 0 {
            if !args.cloud.json {
                crate::outln!("{deployment}: nothing to replace");
            }
            out.push(Recovered { deployment, found, report: None });
            continue;
        }
        session.runtime.block_on(job.resolve_images()).map_err(apply_error)?;
        confirm(
            &format!("replace {} reclaimed instance(s) of {deployment}?", job.plan().creates()),
            args.yes,
        )?;
        let report =
            session.runtime.block_on(job.apply(gpuctl_provision::clock::now())).map_err(workflow_error)?;
        session.bars.finish();
        if !args.cloud.json {
            print_report(&report);
        }
        let c = exit_for(&report);
        if c != ExitCode::SUCCESS {
            code = c;
        }
        out.push(Recovered { deployment, found, report: Some(report) });
    }
    if args.cloud.json {
        print_json(&out)?;
    }
    Ok(code)
}

pub fn print_found(deployment: &str, found: &[ReclaimRecord]) {
    for r in found {
        crate::outln!(
            "{deployment}/{} #{}: {} ({} {}) was reclaimed by the cloud; {:.2} h of work lost since the last checkpoint ({}), {:.2} h billed",
            r.pool,
            r.index,
            r.instance_id,
            r.provider,
            r.instance_type,
            r.lost_work_hours,
            r.checkpoint_from,
            r.billed_hours
        );
    }
}
