//! `gpuctl cost [--deployment D] [--month YYYY-MM]`: the cloud's bill against gpuctl's estimate, per
//! recorded instance, with whether the month has settled, the lines gpuctl did not record, and each
//! deployment's monthly budget (exit 3, as a plan over budget, when the billed sum exceeds one).
//! The engine is `gpuctl_provision::cost`; this prints. `status_budget` is `gpuctl status`'s budget
//! warning, written here so the two commands hold budgets one way.

use std::process::ExitCode;

use clap::Args;
use gpuctl_provision::cost::{CostReport, Month};

use super::provisioning::{apply_error, state_error, CloudArgs, Session, EXIT_OVER_BUDGET};
use super::CliError;
use crate::output::{print_json, table};

#[derive(Args, Debug)]
pub struct CostArgs {
    /// Only this deployment's instances (its budget is held to its own lines)
    #[arg(long)]
    pub deployment: Option<String>,
    /// The calendar month, YYYY-MM, in UTC+8 as the clouds bill (default: this month)
    #[arg(long)]
    pub month: Option<String>,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

pub fn run(args: CostArgs) -> Result<ExitCode, CliError> {
    let now = gpuctl_provision::clock::now();
    let month = match &args.month {
        Some(m) => Month::parse(m).map_err(CliError::usage)?,
        None => Month::of(now),
    };
    let session = Session::open(&args.cloud, &[])?;
    let report = session
        .runtime
        .block_on(session.engine.cost(month, args.deployment.as_deref(), now))
        .map_err(apply_error)?;
    if args.cloud.json {
        print_json(&report)?;
    } else {
        print(&report);
    }
    warn_budgets(&report);
    Ok(exit_code(&report))
}

/// Exit 3 when a budget is exceeded, 4 when a cloud's bill could not be read, else 0.
fn exit_code(r: &CostReport) -> ExitCode {
    if r.over_budget() {
        ExitCode::from(EXIT_OVER_BUDGET)
    } else if !r.errors.is_empty() {
        ExitCode::from(super::provisioning::EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    }
}

fn print(r: &CostReport) {
    crate::outln!(
        "{} bill{}: {} (as of {})",
        r.month,
        r.deployment.as_ref().map(|d| format!(" of {d}")).unwrap_or_default(),
        r.settlement.as_str(),
        r.now
    );
    if r.resources.is_empty() {
        crate::outln!("gpuctl recorded no instance living in {}", r.month);
    } else {
        let mut t = table([
            "deployment/pool",
            "instance",
            "billing",
            "hours",
            "estimated ¥",
            "billed ¥",
            "difference ¥",
            "discount ¥",
            "lines",
            "settled",
        ]);
        for c in &r.resources {
            t.add_row([
                format!("{}/{}", c.deployment, c.pool),
                format!("{} {} {}", c.provider, c.instance_id, c.instance_type),
                c.billing.to_string(),
                format!("{:.2}", c.hours),
                c.estimated_cny.map(|a| a.text(2)).unwrap_or_else(|| "unknown".into()),
                c.billed_cny.exact_text(),
                c.difference_cny.map(|a| a.exact_text()).unwrap_or_else(|| "—".into()),
                c.discount_cny.exact_text(),
                c.lines.to_string(),
                if c.settled { "yes".into() } else { format!("no ({:.2} h unbilled)", c.unbilled_hours) },
            ]);
        }
        crate::outln!("{t}");
        for c in r.resources.iter().filter(|c| !c.notes.is_empty()) {
            crate::outln!("  {}: {}", c.instance_id, c.notes.join("; "));
        }
    }
    if !r.untracked.is_empty() {
        crate::outln!(
            "bill lines for resources gpuctl did not record (not gpuctl's, or not estimated by it):"
        );
        for u in &r.untracked {
            let id = if u.resource_id.is_empty() { "(no resource)" } else { u.resource_id.as_str() };
            crate::outln!(
                "  {} {id} ({}): ¥{} in {} line(s)",
                u.provider,
                u.product,
                u.billed_cny.exact_text(),
                u.lines
            );
        }
    }
    crate::outln!(
        "billed ¥{} in {} line(s) (gpuctl's ¥{}, untracked ¥{}); estimated ¥{}",
        r.billed_cny.exact_text(),
        r.lines,
        r.tracked_billed_cny.exact_text(),
        r.untracked_billed_cny.exact_text(),
        r.estimated_cny.text(2)
    );
    for e in &r.errors {
        crate::outln!("could not read {} {}'s bill: {}", e.provider, e.region, e.error);
    }
    for a in &r.assumptions {
        crate::outln!("assumption: {a}");
    }
}

/// Budget warnings on stderr (stdout may be JSON).
fn warn_budgets(r: &CostReport) {
    for b in &r.budgets {
        if b.exceeded {
            eprintln!(
                "over budget: {} billed ¥{} in {}, over its monthly budget of ¥{:.2}",
                b.deployment,
                b.billed_cny.exact_text(),
                r.month,
                b.monthly_cny
            );
        } else if b.forecast_exceeded {
            eprintln!(
                "warning: {} billed ¥{} in {}; with the hours not billed yet about ¥{}, over its monthly budget of ¥{:.2}",
                b.deployment,
                b.billed_cny.exact_text(),
                r.month,
                b.billed_and_unbilled_cny.text(2),
                b.monthly_cny
            );
        }
    }
}

/// `gpuctl status`'s budget lines: when a shown deployment has a monthly budget, this month's bill is
/// read and held to it (warnings on stderr). Returns the exit code status ends with: 3 when a budget
/// is exceeded. Deployments without a budget cost no cloud call.
pub fn status_budget(session: &Session, deployment: Option<&str>) -> Result<ExitCode, CliError> {
    let deps = match deployment {
        Some(d) => vec![d.to_string()],
        None => session.engine.store(|s| s.deployments()).map_err(state_error)?,
    };
    let mut code = ExitCode::SUCCESS;
    let now = gpuctl_provision::clock::now();
    for d in deps {
        if session.engine.store(|s| s.monthly_budget(&d)).map_err(state_error)?.is_none() {
            continue;
        }
        let report = session
            .runtime
            .block_on(session.engine.cost(Month::of(now), Some(&d), now))
            .map_err(apply_error)?;
        warn_budgets(&report);
        if report.over_budget() {
            code = ExitCode::from(EXIT_OVER_BUDGET);
        }
    }
    Ok(code)
}
