//! `gpuctl status [DEPLOYMENT]`: what gpuctl holds now across the three clouds, from the state store:
//! each instance with its ¥/hour (the catalog price recorded at creation, with its date) and the
//! spend so far estimated from it, then the placement groups and shared file systems it made that the
//! cloud may still hold (a kept file system bills with no instance left). `--json` lists instances only.

use std::process::ExitCode;

use clap::Args;
use gpuctl_provision::state::{ClusterResource, ReclaimRecord, Resource, ResourceState};
use gpuctl_provision::usage::{GpuUtilization, UsageAsk};

use super::provisioning::{state_error, CloudArgs, Session};
use super::CliError;
use crate::output::{cny, print_json, table};

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Only this deployment
    pub deployment: Option<String>,
    /// Include released and failed instances
    #[arg(long)]
    pub all: bool,
    /// GPU utilization over this last window, from each cloud's monitoring (e.g. 30m, 2h; 5m to 24h)
    #[arg(long, default_value = "30m", value_parser = parse_window)]
    pub window: jiff::SignedDuration,
    /// An instance is idle when every point in the window is below this GPU utilization (e.g. 5%)
    #[arg(long = "idle-below", default_value = "5%", value_parser = parse_percent)]
    pub idle_below: f64,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

/// One row of `status --json`.
#[derive(serde::Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    resource: &'a Resource,
    /// Hours since the instance was created (to now, or to its release).
    hours: f64,
    /// ¥/hour × hours: an estimate from the recorded catalog price, not the cloud's bill.
    spend_cny_estimate: Option<f64>,
    /// A spot instance the cloud reclaimed (issue 15): when, the hours lost and billed, the replacement.
    #[serde(skip_serializing_if = "Option::is_none")]
    reclaim: Option<ReclaimView<'a>>,
    /// GPU utilization over the window, from the cloud's monitoring (issue 15); live instances only.
    #[serde(skip_serializing_if = "Option::is_none")]
    gpu: Option<&'a GpuUtilization>,
}

/// A reclaim as `status` shows it: the record plus what it adds up to (docs/json.md).
#[derive(serde::Serialize)]
struct ReclaimView<'a> {
    #[serde(flatten)]
    record: &'a ReclaimRecord,
    /// Work done again plus the replacement's boot, once it runs.
    lost_hours: f64,
    /// The reclaimed instance's billed hours at its recorded price (an estimate, not the bill).
    billed_cny: Option<f64>,
    /// The lost hours at the same price: what the reclaim cost beyond the work kept.
    lost_cny: Option<f64>,
    /// The replacement's instance id, once made.
    replaced_by_instance: Option<String>,
}

/// Reclaims by the reclaimed record's token, with each replacement's instance id (issue 15).
fn reclaim_views<'a>(reclaims: &'a [ReclaimRecord], all: &[Resource]) -> Vec<(&'a str, ReclaimView<'a>)> {
    reclaims
        .iter()
        .map(|r| {
            let by = r.replaced_by.as_deref().and_then(|t| all.iter().find(|x| x.client_token == t));
            let view = ReclaimView {
                record: r,
                lost_hours: r.lost_hours(),
                billed_cny: r.billed_cny(),
                lost_cny: r.lost_cny(),
                replaced_by_instance: by.and_then(|x| x.instance_id.clone()),
            };
            (r.client_token.as_str(), view)
        })
        .collect()
}

/// The reclaims, one line each: when, which node, the hours lost and billed, and the replacement.
fn print_reclaims<'a>(views: impl IntoIterator<Item = &'a ReclaimView<'a>>) {
    for v in views {
        let r = v.record;
        let boot = r
            .replacement_boot_hours
            .map(|b| format!(" + {b:.2} h the replacement took to boot"))
            .unwrap_or_default();
        let money = v.lost_cny.map(|c| format!(" ≈ {}", cny(c))).unwrap_or_default();
        let replaced = match (&r.replaced_by, &v.replaced_by_instance) {
            (Some(_), Some(id)) => format!("replaced by {id}"),
            (Some(t), None) => format!("replacement {t} not running yet"),
            (None, _) => "not replaced yet: `gpuctl recover` (or `provision` again) replaces it".into(),
        };
        crate::outln!(
            "reclaimed: {}/{} #{} {} ({} {}), seen gone {}: {:.2} h lost ({:.2} h of work since the last checkpoint, {}{boot}){money}; {:.2} h billed{}; {replaced}",
            r.deployment,
            r.pool,
            r.index,
            r.instance_id,
            r.provider,
            r.instance_type,
            r.seen_gone_at,
            v.lost_hours,
            r.lost_work_hours,
            r.checkpoint_from,
            r.billed_hours,
            v.billed_cny.map(|c| format!(" ≈ {}", cny(c))).unwrap_or_default(),
        );
    }
}

/// Hours from `from` to `to` (now, while the instance is not released).
fn hours_between(from: jiff::Timestamp, to: Option<jiff::Timestamp>) -> f64 {
    let to = to.unwrap_or_else(jiff::Timestamp::now);
    (to.duration_since(from).as_secs_f64() / 3600.0).max(0.0)
}

/// Placement groups and shared file systems gpuctl made and the cloud may still hold (issue 14): a
/// kept file system bills per GB stored while it exists, with no instance left to show it.
fn print_cluster_resources(rows: &[ClusterResource]) {
    for r in rows.iter().filter(|r| r.state != "deleted") {
        let what =
            if r.kind == ClusterResource::FILE_SYSTEM { "shared file system" } else { "placement group" };
        let price = gpuctl_provision::shared_price::of(r)
            .map(|p| match p.cny_per_gb_month {
                Some(c) => format!(", {} at ¥{c:.2}/GB·month stored ({})", p.product, p.source),
                None => format!(", {}: price unknown", p.product),
            })
            .unwrap_or_default();
        let how = match r.state.as_str() {
            "kept" => " — kept by destroy with its data; `gpuctl destroy SPEC --delete-storage` deletes it",
            _ => "",
        };
        crate::outln!(
            "{what} {} of {}/{} on {} {}: {}{price}{how}",
            r.cloud_id,
            r.deployment,
            r.pool,
            r.provider,
            r.zone,
            r.state
        );
    }
}

pub fn run(args: StatusArgs) -> Result<ExitCode, CliError> {
    let session = Session::open(&args.cloud, &[])?;
    // Monthly budgets (issue 15): warnings on stderr; exit 3 when one is exceeded.
    let budget_exit = super::cost::status_budget(&session, args.deployment.as_deref())?;
    let all = session.engine.store(|s| s.resources(args.deployment.as_deref())).map_err(state_error)?;
    let cluster =
        session.engine.store(|s| s.cluster_resources_of(args.deployment.as_deref())).map_err(state_error)?;
    let reclaims = session.engine.store(|s| s.reclaims(args.deployment.as_deref())).map_err(state_error)?;
    let gpu = gpu_utilization(&session, &all, &args);
    let mut views = reclaim_views(&reclaims, &all);
    // A reclaimed instance is shown without --all: what it cost is part of what gpuctl holds to account.
    let shown: Vec<&Resource> =
        all.iter().filter(|r| args.all || r.state.is_live() || r.state == ResourceState::Reclaimed).collect();
    let rows: Vec<Row> = shown
        .iter()
        .map(|r| {
            let hours = hours_between(r.running_at.unwrap_or(r.created_at), r.released_at);
            let reclaim = views.iter().position(|(t, _)| *t == r.client_token).map(|i| views.remove(i).1);
            Row {
                resource: r,
                hours,
                spend_cny_estimate: r.price_cny_per_hour.map(|p| p * hours),
                reclaim,
                gpu: gpu.get(&r.client_token),
            }
        })
        .collect();
    if args.cloud.json {
        print_json(&rows)?;
        return Ok(budget_exit);
    }
    if rows.is_empty() {
        crate::outln!(
            "gpuctl holds no {}instances{}",
            if args.all { "" } else { "live " },
            args.deployment.as_ref().map(|d| format!(" in {d}")).unwrap_or_default()
        );
        print_cluster_resources(&cluster);
        return Ok(budget_exit);
    }
    let mut t = table([
        "deployment/pool",
        "#",
        "instance",
        "where",
        "billing",
        "state",
        "public ip",
        "private ip",
        "¥/hour",
        "spend so far (est.)",
        "auto-release",
    ]);
    for row in &rows {
        let r = row.resource;
        t.add_row([
            format!("{}/{}", r.deployment, r.pool),
            r.index.to_string(),
            r.instance_id.clone().unwrap_or_else(|| "—".into()),
            format!("{} {} {}", r.provider, r.zone, r.instance_type),
            r.billing.to_string(),
            match (r.state, r.billed_until) {
                (ResourceState::BilledUntil, Some(t)) => format!("billed until {t}"),
                (state, _) => state.name().to_string(),
            },
            r.public_ip.clone().unwrap_or_else(|| "—".into()),
            r.private_ip.clone().unwrap_or_else(|| "—".into()),
            r.price_cny_per_hour
                .map(|p| format!("{} ({})", cny(p), r.price_as_of.as_deref().unwrap_or("?")))
                .unwrap_or_else(|| "unknown".into()),
            row.spend_cny_estimate.map(cny).unwrap_or_else(|| "unknown".into()),
            r.auto_release_at.map(|t| t.to_string()).unwrap_or_else(|| "none".into()),
        ]);
    }
    crate::outln!("{t}");
    print_reclaims(rows.iter().filter_map(|r| r.reclaim.as_ref()));
    print_gpu(&rows, &args);
    let per_hour: f64 = rows
        .iter()
        .filter(|r| r.resource.state.is_live())
        .filter_map(|r| r.resource.price_cny_per_hour)
        .sum();
    crate::outln!(
        "live: {}/hour (recorded catalog prices; the cloud's bill is authoritative)",
        cny(per_hour)
    );
    print_cluster_resources(&cluster);
    Ok(budget_exit)
}

/// `--window`: a duration such as `30m` or `2h` (jiff's friendly form), from 5 minutes to a day: at
/// least a few of the clouds' 1-minute points, at most what one monitoring request of every cloud holds.
fn parse_window(s: &str) -> Result<jiff::SignedDuration, String> {
    let secs = s
        .trim()
        .parse::<jiff::Span>()
        .ok()
        .and_then(|sp| sp.total((jiff::Unit::Second, jiff::SpanRelativeTo::days_are_24_hours())).ok());
    match secs {
        Some(x) if (300.0..=86_400.0).contains(&x) => Ok(jiff::SignedDuration::from_secs(x as i64)),
        _ => Err(format!("'{s}' is not a window from 5m to 24h; write e.g. 30m or 2h")),
    }
}

/// `--idle-below`: a GPU utilization such as `5%` (or `5`), above 0 and below 100.
fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim();
    match t.strip_suffix('%').unwrap_or(t).trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(p),
        _ => Err(format!("'{s}' is not a GPU utilization above 0 % and below 100 %; write e.g. 5%")),
    }
}

/// Each live instance's GPU utilization over the window, by client token (issue 15): one monitoring
/// query per cloud and region, on the engine's clock.
fn gpu_utilization(
    session: &Session,
    all: &[Resource],
    args: &StatusArgs,
) -> std::collections::BTreeMap<String, GpuUtilization> {
    let ask =
        UsageAsk { window: args.window, idle_below: args.idle_below, now: gpuctl_provision::clock::now() };
    session.runtime.block_on(session.engine.gpu_utilization(all, &ask))
}

/// One line per live instance: its GPU utilization over the window, and for an idle one since when
/// and what it has cost idle.
fn print_gpu(rows: &[Row], args: &StatusArgs) {
    let with: Vec<(&Resource, &GpuUtilization)> =
        rows.iter().filter_map(|r| r.gpu.map(|g| (r.resource, g))).collect();
    if with.is_empty() {
        return;
    }
    crate::outln!(
        "GPU utilization over the last {} (idle: every point below {} %):",
        window_text(args.window),
        args.idle_below
    );
    for (r, g) in with {
        let who =
            format!("{}/{} #{} {}", r.deployment, r.pool, r.index, r.instance_id.as_deref().unwrap_or("—"));
        let Some(avg) = g.average_percent else {
            let why = g.note.as_deref().unwrap_or("no data (monitoring agent?)");
            let rid = g.request_id.as_deref().map(|id| format!(", request id {id}")).unwrap_or_default();
            crate::outln!("  {who}: {why}{rid}");
            continue;
        };
        let latest = g.latest_percent.map(|l| format!(", latest {l:.1} %")).unwrap_or_default();
        let idle = if g.idle {
            let cost = match g.idle_cost_cny {
                Some(c) => format!(" ≈ {} at the recorded ¥/hour", cny(c)),
                None => ", price unknown".into(),
            };
            format!(
                " — IDLE since {} ({:.2} h{cost})",
                g.idle_since.map(|t| t.to_string()).unwrap_or_else(|| "?".into()),
                g.idle_hours.unwrap_or(0.0)
            )
        } else {
            String::new()
        };
        crate::outln!("  {who}: average {avg:.1} %{latest} ({} points){idle}", g.points);
    }
}

fn window_text(w: jiff::SignedDuration) -> String {
    let m = w.as_secs() / 60;
    if m % 60 == 0 {
        format!("{} h", m / 60)
    } else {
        format!("{m} min")
    }
}
