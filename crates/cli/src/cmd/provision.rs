//! `gpuctl provision SPEC`: plan, refuse over budget, confirm, then create what is missing — intent
//! recorded before each create, a progress bar per pool while instances start — and print a summary
//! (ids, IPs, ¥/hour, auto-release time). A re-run adopts what an earlier run created.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use gpuctl_provision::apply::Report;
use gpuctl_provision::workflow::Provisioning;

use super::plan::print_plan;
use super::provisioning::{
    apply_error, confirm, load_spec, state_error, workflow_error, CloudArgs, Session, EXIT_OVER_BUDGET,
    EXIT_PARTIAL,
};
use super::CliError;
use crate::output::{cny, load_catalog, print_json, table, today};

#[derive(Args, Debug)]
pub struct ProvisionArgs {
    /// The deployment spec (TOML; see infra/stage1.toml)
    pub spec: PathBuf,
    /// Do not ask before creating
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Ask each cloud to check the creates (stock, quota, parameters) without creating anything
    #[arg(long)]
    pub dry_run: bool,
    /// A price overlay file (your negotiated prices); also GPUCTL_PRICE_OVERLAY
    #[arg(long)]
    pub overlay: Option<PathBuf>,
    /// Once the instances run, wait over ssh until each one's boot environment is ready
    #[arg(long)]
    pub wait_ready: bool,
    /// How long `--wait-ready` waits in all, in seconds
    #[arg(long, value_name = "SECS", default_value_t = 300, requires = "wait_ready")]
    pub wait_ready_timeout: u64,
    #[command(flatten)]
    pub login: super::remote::LoginArgs,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

pub fn print_report(r: &Report) {
    let mut t = table(["pool", "#", "instance", "where", "state", "ip", "¥/hour", "auto-release", "note"]);
    for u in &r.units {
        let mut note = Vec::new();
        if u.adopted {
            note.push("adopted".to_string());
        }
        if !u.fell_back_from.is_empty() {
            note.push(format!("fell back from {}", u.fell_back_from.join(", ")));
        }
        if let Some(e) = &u.error {
            note.push(e.clone());
        }
        t.add_row([
            u.pool.clone(),
            u.index.to_string(),
            u.instance_id.clone().unwrap_or_else(|| "—".into()),
            format!("{} {} {}", u.provider, u.zone, u.instance_type),
            u.state.name().to_string(),
            u.public_ip.clone().or_else(|| u.private_ip.clone()).unwrap_or_default(),
            u.cny_per_hour.map(cny).unwrap_or_else(|| "unknown".into()),
            u.auto_release_at.map(|t| t.to_string()).unwrap_or_else(|| "none".into()),
            note.join("; "),
        ]);
    }
    crate::outln!("{t}");
    if !r.released.is_empty() {
        crate::outln!("released: {}", r.released.join(", "));
    }
    super::provisioning::print_billed_until(&r.billed_until);
    if r.retries > 0 {
        crate::outln!(
            "retried {} throttled/transient calls, waiting {:.1} s in all",
            r.retries,
            r.retry_wait_ms as f64 / 1000.0
        );
    }
    for e in &r.errors {
        crate::outln!("error: {e}");
    }
}

pub fn exit_for(r: &Report) -> ExitCode {
    let ok = r.units.iter().filter(|u| u.error.is_none()).count();
    match (r.errors.is_empty(), ok) {
        (true, _) => ExitCode::SUCCESS,
        (false, 0) => ExitCode::FAILURE,
        (false, _) => ExitCode::from(EXIT_PARTIAL),
    }
}

pub fn run(args: ProvisionArgs) -> Result<ExitCode, CliError> {
    let catalog = load_catalog(args.overlay.as_deref())?;
    let spec = load_spec(&args.spec, &catalog)?;
    // The clouds the pools may be created on, from the spec and catalog alone: their keys must load.
    let providers = gpuctl_provision::plan::providers(&spec, &catalog);
    let session = Session::open(&args.cloud, &providers)?;
    let ready_spec = args.wait_ready.then(|| spec.clone());
    let mut job = session.engine.begin_provision(spec, &catalog, today()?).map_err(state_error)?;
    // Spot instances the cloud reclaimed since the last run are recorded, and their slots planned anew.
    if !args.dry_run {
        let found = session
            .runtime
            .block_on(job.find_reclaims(&catalog, today()?, gpuctl_provision::clock::now()))
            .map_err(workflow_error)?;
        if !args.cloud.json {
            super::recover::print_found(&job.plan().deployment, &found);
        }
    }
    session.runtime.block_on(job.resolve_images()).map_err(apply_error)?;
    let plan = job.plan();
    if !plan.over_budget.is_empty() {
        if args.cloud.json {
            print_json(plan)?;
        } else {
            print_plan(plan);
            eprintln!("error: the plan is over the spec's budget; nothing was created");
        }
        return Ok(ExitCode::from(EXIT_OVER_BUDGET));
    }
    if !plan.moved.is_empty() {
        if args.cloud.json {
            print_json(plan)?;
        } else {
            print_plan(plan);
        }
        return Err(CliError::failed(format!("{}; nothing was created", plan.moved.join("; "))));
    }
    if !args.cloud.json {
        print_plan(plan);
    }
    if args.dry_run {
        return dry_run(&session, &job, args.cloud.json);
    }
    if plan.creates() == 0 && plan.release.is_empty() {
        if !args.cloud.json {
            crate::outln!("nothing to do: every instance the spec asks for is recorded as running");
        }
    } else {
        confirm(
            &format!(
                "create {} and release {} instance(s) for {}?",
                plan.creates(),
                plan.release.len(),
                plan.deployment
            ),
            args.yes,
        )?;
    }
    let report =
        session.runtime.block_on(job.apply(gpuctl_provision::clock::now())).map_err(workflow_error)?;
    session.bars.finish();
    if args.cloud.json {
        print_json(&report)?;
    } else {
        print_report(&report);
    }
    let code = exit_for(&report);
    match ready_spec {
        Some(spec) if code == ExitCode::SUCCESS => wait_ready(&session, &spec, &args),
        _ => Ok(code),
    }
}

/// `--wait-ready`: every live instance of the deployment, polled over ssh (exit 1 if any is not ready).
fn wait_ready(
    session: &Session,
    spec: &gpuctl_provision::spec::Spec,
    args: &ProvisionArgs,
) -> Result<ExitCode, CliError> {
    use super::remote;
    let target = remote::Target { deployment: spec.deployment.value.clone(), pool: None, index: None };
    let hosts = remote::resolve(session, &target, &args.login, Some(spec))?;
    let ssh = remote::Ssh {
        known_hosts: remote::known_hosts(session)?,
        port: args.login.port,
        connect_timeout: args.login.connect_timeout,
    };
    // With --json the report is already on stdout: readiness goes to stderr as text, so stdout stays one document.
    let ok = super::ssh::wait_and_print(
        &ssh,
        &hosts,
        args.wait_ready_timeout,
        args.cloud.poll_ms,
        false,
        args.cloud.json,
    )?;
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `--dry-run`: the cloud checks each first-choice create (Tencent/Alibaba DryRun, JD stock query).
fn dry_run(session: &Session, job: &Provisioning<'_>, json: bool) -> Result<ExitCode, CliError> {
    let results: Vec<serde_json::Value> = session
        .runtime
        .block_on(job.dry_run())
        .into_iter()
        .map(|d| {
            let c = &d.choice;
            serde_json::json!({ "pool": d.pool, "provider": c.provider, "zone": c.zone, "instance_type": c.instance_type, "ok": d.verdict.is_ok(), "error": d.verdict.err() })
        })
        .collect();
    let ok = results.iter().all(|r| r["ok"] == serde_json::json!(true));
    if json {
        print_json(&results)?;
    } else {
        for r in &results {
            crate::outln!(
                "dry run {} ({} {} {}): {}",
                r["pool"].as_str().unwrap_or(""),
                r["provider"].as_str().unwrap_or(""),
                r["zone"].as_str().unwrap_or(""),
                r["instance_type"].as_str().unwrap_or(""),
                r["error"].as_str().unwrap_or("the cloud would accept it")
            );
        }
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
