//! `gpuctl sweep`: finds instances that carry gpuctl's deployment tag but that no live record in the
//! state store owns — the state was lost, or another machine's run made them — with ¥/hour from the
//! catalog, and the leftovers that bill without an instance (unattached disks, unbound public IPs,
//! snapshots older than `--snapshot-age`, file systems no recorded deployment uses) with ¥/month from
//! core's cited storage prices; with `--release` it releases the instances and the leftovers that are
//! gpuctl's after asking. The rules and the cloud calls are gpuctl-provision's `sweep` module (and
//! `sweep::leftovers`); this file picks the regions, prices the instance rows and prints.

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::Args;
use gpuctl_cloud::cloud::InstanceState;
use gpuctl_core::{Catalog, Confidence, PriceOrigin, UnknownName};
use gpuctl_provision::plan::PriceFact;
use gpuctl_provision::state::ResourceState;
use gpuctl_provision::sweep::{leftovers, still_billed, Found, Orphan, Place, PlaceError, StillBilled};
use gpuctl_provision::{BillingMode, Provider};

use super::provisioning::{confirm, state_error, CloudArgs, Session, EXIT_PARTIAL};
use super::CliError;
use crate::output::{cny, hours, load_catalog, print_json, table};

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Search only this cloud (repeatable): tencent, alibaba, jdcloud. Default: every cloud gpuctl has credentials for
    #[arg(long = "provider", value_name = "PROVIDER")]
    pub providers: Vec<String>,
    /// Search only this region (repeatable). Default: every region the catalog lists for each cloud searched
    #[arg(long = "region", value_name = "REGION")]
    pub regions: Vec<String>,
    /// Release what was found (asks first; `--yes` skips the question), and wait until the clouds no longer list it
    #[arg(long)]
    pub release: bool,
    /// Do not ask before releasing
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// How many regions to search at once (each call is still paced by --calls-per-second)
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// A snapshot is a leftover once the cloud says it is at least this old: days (`30d`) or hours (`12h`)
    #[arg(long, value_name = "AGE", default_value = "30d", value_parser = parse_age)]
    pub snapshot_age: jiff::SignedDuration,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

/// One row of `sweep --json`'s `orphans`.
#[derive(serde::Serialize)]
struct Row<'a> {
    provider: Provider,
    region: &'a str,
    zone: &'a str,
    instance_id: &'a str,
    name: Option<&'a str>,
    instance_type: &'a str,
    /// The cloud's state in gpuctl's words (`running`, `pending`, `stopped`, …; other words verbatim).
    state: String,
    billing: Option<BillingMode>,
    deployment: &'a str,
    pool: Option<&'a str>,
    tags: &'a BTreeMap<String, String>,
    launched_at: Option<&'a str>,
    /// Hours since `launched_at`; `null` when the cloud did not say.
    age_hours: Option<f64>,
    auto_release_at: Option<&'a str>,
    /// This store's record of the instance when it says released/failed yet the cloud still has it.
    recorded_as: Option<ResourceState>,
    /// The catalog's price for this type, region and billing mode, with its source and date;
    /// `null` when the catalog has none (or the cloud did not say the billing mode).
    price: Option<PriceFact>,
}

#[derive(serde::Serialize)]
struct Out<'a> {
    orphans: Vec<Row<'a>>,
    /// Sum of the known ¥/hour of the orphans (catalog prices, not the cloud's bill).
    total_cny_per_hour: f64,
    /// Orphans whose price is unknown, so not in the total.
    unpriced: usize,
    /// Tagged instances a live record owns (left alone).
    owned: usize,
    /// Tagged instances already terminating (left alone).
    leaving: usize,
    searched: &'a [Place],
    /// Regions where the search failed: it is incomplete there.
    errors: &'a [PlaceError],
    /// With `--release`: the instance ids released (gone from the cloud); `null` without it.
    released: Option<Vec<String>>,
    /// With `--release`: one message per orphan not released.
    release_errors: Vec<String>,
    /// Recorded instances still billed until their prepaid term ends (after `--release`, those whose
    /// term still runs), with the estimated cost left to the term's end.
    billing_until: Vec<StillBilled>,
    /// The sum of `billing_until`'s known `cost_to_expiry_cny`.
    billing_until_cny: f64,
    /// What bills without an instance (issue 15): disks, public IPs, snapshots, file systems.
    leftovers: LeftoversOut<'a>,
}

/// `sweep --json`'s `leftovers`.
#[derive(serde::Serialize)]
struct LeftoversOut<'a> {
    /// Every leftover found, gpuctl's or not, grouped by kind (disk, public_ip, snapshot, file_system).
    items: &'a [leftovers::Found],
    /// Per kind: how many, their known ¥/month, how many of unknown price.
    by_kind: BTreeMap<&'static str, KindTotal>,
    /// The sum of the known ¥/month of every leftover (gpuctl's or not).
    total_cny_per_month: f64,
    unpriced: usize,
    /// Leftovers that are not gpuctl's (listed, never released).
    not_gpuctls: usize,
    /// The retention age: older snapshots are leftovers.
    snapshot_age_days: f64,
    young_snapshots: usize,
    snapshots_of_unknown_age: usize,
    file_systems_in_use: usize,
    /// Listings that failed: the search is incomplete there.
    errors: &'a [PlaceError],
    /// With `--release`: the ids released (gone from the clouds' listings); `null` without it.
    released: Option<Vec<String>>,
    release_errors: Vec<String>,
}

#[derive(serde::Serialize, Default)]
struct KindTotal {
    count: usize,
    cny_per_month: f64,
    unpriced: usize,
}

fn kind_totals(items: &[leftovers::Found]) -> BTreeMap<&'static str, KindTotal> {
    let mut out: BTreeMap<&'static str, KindTotal> = BTreeMap::new();
    for f in items {
        let t = out.entry(f.leftover.kind.as_str()).or_default();
        t.count += 1;
        match f.cost.cny_per_month {
            Some(c) => t.cny_per_month += c,
            None => t.unpriced += 1,
        }
    }
    out
}

/// `30d` or `12h` (a whole number of days or hours, at most ten years).
fn parse_age(s: &str) -> Result<jiff::SignedDuration, String> {
    let bad = || format!("`{s}`: give a whole number of days or hours, like 30d or 12h");
    let (n, unit) = s.split_at(s.len().saturating_sub(1));
    let n: i64 = n.parse().map_err(|_| bad())?;
    let hours = match unit {
        "d" => n.checked_mul(24).ok_or_else(bad)?,
        "h" => n,
        _ => return Err(bad()),
    };
    if !(0..=24 * 3660).contains(&hours) {
        return Err(bad());
    }
    Ok(jiff::SignedDuration::from_hours(hours))
}

fn state_name(s: &InstanceState) -> String {
    match s {
        InstanceState::Pending => "pending".into(),
        InstanceState::Running => "running".into(),
        InstanceState::Stopping => "stopping".into(),
        InstanceState::Stopped => "stopped".into(),
        InstanceState::Terminating => "terminating".into(),
        InstanceState::Terminated => "terminated".into(),
        InstanceState::Failed => "failed".into(),
        InstanceState::Other(s) => s.clone(),
    }
}

/// The clouds and regions to search: the named ones (a region goes to each named cloud whose catalog
/// lists it, or to the one cloud named), else every cloud with credentials and its catalog regions.
fn places(
    args: &SweepArgs,
    catalog: &Catalog,
    has_cloud: impl Fn(Provider) -> bool,
) -> Result<Vec<Place>, CliError> {
    let mut providers = Vec::new();
    for p in &args.providers {
        let p = gpuctl_core::parse_provider(p).map_err(|e| CliError::usage(e.to_string()))?;
        if !providers.contains(&p) {
            providers.push(p);
        }
    }
    if providers.is_empty() {
        providers = Provider::ALL.into_iter().filter(|p| has_cloud(*p)).collect();
        if providers.is_empty() {
            return Err(CliError::usage(
                "no cloud credentials found (see README \"Signing, credentials\"); nothing to search",
            ));
        }
    }
    let regions_of = |p: Provider| {
        catalog
            .provider(p)
            .map(|i| i.regions.iter().map(|r| r.id.clone()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    if args.regions.is_empty() {
        for &p in &providers {
            out.extend(regions_of(p).into_iter().map(|region| Place { provider: p, region }));
        }
    } else {
        for r in &args.regions {
            let takers: Vec<Provider> = if providers.len() == 1 {
                providers.clone()
            } else {
                providers.iter().copied().filter(|p| regions_of(*p).contains(r)).collect()
            };
            if takers.is_empty() {
                let all: Vec<String> = providers.iter().flat_map(|p| regions_of(*p)).collect();
                let e = UnknownName::new("region", r, all.iter().map(String::as_str));
                return Err(CliError::usage(format!("{e} (no searched cloud's catalog lists it; name the cloud with --provider to search it anyway)")));
            }
            out.extend(takers.into_iter().map(|provider| Place { provider, region: r.clone() }));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn price_of(catalog: &Catalog, o: &Orphan) -> Option<PriceFact> {
    let mode = o.instance.billing?;
    catalog
        .price(
            o.provider,
            catalog.catalog_type(o.provider, &o.instance.instance_type),
            &o.instance.region,
            mode,
        )
        .map(PriceFact::from)
}

fn age_hours(launched_at: Option<&str>, now: jiff::Timestamp) -> Option<f64> {
    let t = launched_at?.parse::<jiff::Timestamp>().ok()?;
    Some((now.duration_since(t).as_secs_f64() / 3600.0).max(0.0))
}

fn row<'a>(o: &'a Orphan, catalog: &Catalog, now: jiff::Timestamp) -> Row<'a> {
    let i = &o.instance;
    Row {
        provider: o.provider,
        region: &i.region,
        zone: &i.zone,
        instance_id: &i.instance_id,
        name: i.name.as_deref(),
        instance_type: &i.instance_type,
        state: state_name(&i.state),
        billing: i.billing,
        deployment: &o.deployment,
        pool: o.pool.as_deref(),
        tags: &i.tags,
        launched_at: i.launched_at.as_deref(),
        age_hours: age_hours(i.launched_at.as_deref(), now),
        auto_release_at: i.auto_release_at.as_deref(),
        recorded_as: o.recorded_as,
        price: price_of(catalog, o),
    }
}

/// "¥8.68 (estimated, 2026-01-01)" or "¥8.68 (source, date)"; "unknown" without a catalog price.
fn price_text(p: Option<&PriceFact>) -> String {
    match p {
        None => "unknown".into(),
        Some(f) if f.confidence == Confidence::Estimate || f.origin == PriceOrigin::Derived => {
            format!("{} (estimated, {})", cny(f.cny_per_hour), f.as_of)
        }
        Some(f) => format!("{} ({}, {})", cny(f.cny_per_hour), f.source, f.as_of),
    }
}

pub fn run(args: SweepArgs) -> Result<ExitCode, CliError> {
    let catalog = load_catalog(None)?;
    let need: Vec<Provider> =
        args.providers.iter().filter_map(|p| gpuctl_core::parse_provider(p).ok()).collect();
    let session = Session::open(&args.cloud, &need)?;
    let places = places(&args, &catalog, |p| session.engine.has_cloud(p))?;
    let found: Found = session
        .runtime
        .block_on(session.engine.find_orphans(&places, args.concurrency))
        .map_err(state_error)?;
    let left = session
        .runtime
        .block_on(session.engine.find_leftovers(&places, args.concurrency, args.snapshot_age))
        .map_err(state_error)?;
    let mine: Vec<leftovers::Found> = left.leftovers.iter().filter(|f| f.is_gpuctls()).cloned().collect();
    let now = jiff::Timestamp::now();
    let rows: Vec<Row> = found.orphans.iter().map(|o| row(o, &catalog, now)).collect();
    // Folded from +0.0: f64's `Sum` starts at -0.0, which `--json` would print when nothing is priced.
    let total: f64 =
        rows.iter().filter_map(|r| r.price.as_ref()).map(|p| p.cny_per_hour).fold(0.0, |a, b| a + b);
    let unpriced = rows.iter().filter(|r| r.price.is_none()).count();

    if !args.cloud.json {
        print_found(&found, &rows, total, unpriced);
    }
    let (mut released, mut release_errors) = (None, Vec::new());
    let mut billing_until = found.billing_until.clone();
    if args.release && !billing_until.is_empty() {
        // Releases that waited for a term's end: the cloud deletes those whose term is over.
        let done = session.runtime.block_on(session.engine.finish_terms());
        if !args.cloud.json {
            for id in &done.released {
                crate::outln!("released {} (its prepaid term is over)", printable(id));
            }
        }
        released.get_or_insert_with(Vec::new).extend(done.released);
        release_errors.extend(done.errors);
        let recorded = session.engine.store(|s| s.resources(None)).map_err(state_error)?;
        billing_until = still_billed(&recorded, now);
    }
    if !args.cloud.json {
        print_billing_until(&billing_until);
        print_leftovers(&left, args.snapshot_age);
    }
    if args.release && (!found.orphans.is_empty() || !mine.is_empty()) {
        let mut parts = Vec::new();
        if !found.orphans.is_empty() {
            let ids: Vec<String> = found.orphans.iter().map(|o| printable(&o.instance.instance_id)).collect();
            parts.push(format!(
                "{} instance(s) no recorded deployment owns ({}/hour): {}",
                ids.len(),
                cny(total),
                ids.join(", ")
            ));
        }
        if !mine.is_empty() {
            let ids: Vec<String> = mine
                .iter()
                .map(|f| format!("{} {}", f.leftover.kind.as_str(), printable(&f.leftover.id)))
                .collect();
            let month: f64 = mine.iter().filter_map(|f| f.cost.cny_per_month).fold(0.0, |a, b| a + b);
            parts.push(format!(
                "{} leftover(s) gpuctl made ({}/month known): {}",
                ids.len(),
                cny(month),
                ids.join(", ")
            ));
        }
        confirm(&format!("release {}?", parts.join("; and ")), args.yes)?;
    }
    if args.release && !found.orphans.is_empty() {
        let ids: Vec<String> = found.orphans.iter().map(|o| printable(&o.instance.instance_id)).collect();
        if !args.cloud.json {
            eprintln!(
                "releasing {} instance(s) and waiting until the clouds no longer list them…",
                ids.len()
            );
        }
        let (done, errors) = session.runtime.block_on(session.engine.release_orphans(&found.orphans));
        if !args.cloud.json {
            for id in &done {
                crate::outln!("released {}", printable(id));
            }
            for e in &errors {
                crate::outln!("error: {}", printable(e));
            }
        }
        released.get_or_insert_with(Vec::new).extend(done);
        release_errors.extend(errors);
    } else if args.release {
        released.get_or_insert_with(Vec::new);
    }
    let (mut left_released, mut left_errors) = (None, Vec::new());
    if args.release && !mine.is_empty() {
        if !args.cloud.json {
            eprintln!(
                "deleting {} leftover(s) gpuctl made and waiting until the clouds no longer list them…",
                mine.len()
            );
        }
        let (done, errors) = session.runtime.block_on(session.engine.release_leftovers(&mine));
        if !args.cloud.json {
            for id in &done {
                crate::outln!("released {}", printable(id));
            }
            for e in &errors {
                crate::outln!("error: {}", printable(e));
            }
        }
        left_released = Some(done);
        left_errors = errors;
    } else if args.release {
        left_released = Some(Vec::new());
    }
    let code = exit_code(&found, released.as_deref(), &release_errors).max_with(leftover_code(
        &left,
        &mine,
        left_released.as_deref(),
        &left_errors,
    ));
    if args.cloud.json {
        print_json(&Out {
            orphans: rows,
            total_cny_per_hour: total,
            unpriced,
            owned: found.owned,
            leaving: found.leaving,
            searched: &found.searched,
            errors: &found.errors,
            released,
            release_errors,
            billing_until_cny: billing_until
                .iter()
                .filter_map(|b| b.cost_to_expiry_cny)
                .fold(0.0, |a, b| a + b),
            billing_until,
            leftovers: LeftoversOut {
                items: &left.leftovers,
                by_kind: kind_totals(&left.leftovers),
                total_cny_per_month: left
                    .leftovers
                    .iter()
                    .filter_map(|f| f.cost.cny_per_month)
                    .fold(0.0, |a, b| a + b),
                unpriced: left.leftovers.iter().filter(|f| f.cost.cny_per_month.is_none()).count(),
                not_gpuctls: left.leftovers.iter().filter(|f| !f.is_gpuctls()).count(),
                snapshot_age_days: args.snapshot_age.as_secs_f64() / 86_400.0,
                young_snapshots: left.young_snapshots,
                snapshots_of_unknown_age: left.snapshots_of_unknown_age,
                file_systems_in_use: left.file_systems_in_use,
                errors: &left.errors,
                released: left_released,
                release_errors: left_errors,
            },
        })?;
    }
    Ok(code)
}

/// The instances still billed until their term ends, in words.
fn print_billing_until(billed: &[StillBilled]) {
    for b in billed {
        crate::outln!(
            "still billing: {} {} ({}/{}) until {}{} — released as far as {} allows, renewal off",
            b.provider,
            printable(b.instance_id.as_deref().unwrap_or("—")),
            b.deployment,
            b.pool,
            b.until.map(|t| t.to_string()).unwrap_or_else(|| "?".into()),
            b.cost_to_expiry_cny.map(|c| format!(", {} of the term left", cny(c))).unwrap_or_default(),
            b.provider
        );
    }
}

/// The exit status for the leftovers, by the same rule as [`exit_code`]'s.
fn leftover_code(
    left: &leftovers::Search,
    mine: &[leftovers::Found],
    released: Option<&[String]>,
    errors: &[String],
) -> Severity {
    let released_none = released.is_some_and(|r| r.is_empty()) && !mine.is_empty() && !errors.is_empty();
    if released_none {
        Severity::Failed
    } else if !left.errors.is_empty() || !errors.is_empty() {
        Severity::Partial
    } else {
        Severity::Ok
    }
}

/// How a part of the command ended; the worse of the parts is the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Severity {
    Ok,
    Partial,
    Failed,
}

impl Severity {
    fn max_with(self, other: Severity) -> ExitCode {
        match self.max(other) {
            Severity::Ok => ExitCode::SUCCESS,
            Severity::Partial => ExitCode::from(EXIT_PARTIAL),
            Severity::Failed => ExitCode::FAILURE,
        }
    }
}

/// "¥12.50/month (source, as of)" or "price unknown: why".
fn month_text(c: &leftovers::LeftoverCost) -> String {
    match c.cny_per_month {
        Some(m) => format!("{}/month ({}; {})", cny(m), c.basis, c.source.as_deref().unwrap_or("no source")),
        None => c.basis.clone(),
    }
}

/// The leftovers, one table per kind with its total, then the grand total.
fn print_leftovers(left: &leftovers::Search, age: jiff::SignedDuration) {
    let days = age.as_secs_f64() / 86_400.0;
    if left.leftovers.is_empty() {
        crate::outln!(
            "no leftovers: no unattached disk, unbound public IP, snapshot older than {days} days or unused file system ({} younger snapshot(s), {} file system(s) in use)",
            left.young_snapshots,
            left.file_systems_in_use
        );
    }
    for kind in gpuctl_cloud::cost::LeftoverKind::ALL {
        let rows: Vec<&leftovers::Found> =
            left.leftovers.iter().filter(|f| f.leftover.kind == kind).collect();
        if rows.is_empty() {
            continue;
        }
        let mut t = table(["where", "id", "name", "size/class", "age", "whose", "¥/month"]);
        for f in &rows {
            let l = &f.leftover;
            let size = match (l.size_gb, l.class.as_deref()) {
                (Some(g), Some(c)) => format!("{} GB {}", gpuctl_core::money(g), printable(c)),
                (Some(g), None) => format!("{} GB", gpuctl_core::money(g)),
                (None, Some(c)) => printable(c),
                (None, None) => "—".into(),
            };
            let whose = match (f.owner, f.deployment.as_deref()) {
                (leftovers::Owner::NotGpuctl, _) => "not gpuctl's, left alone".to_string(),
                (_, Some(d)) => format!("gpuctl: {}", printable(d)),
                (_, None) => "gpuctl".to_string(),
            };
            t.add_row([
                format!("{} {}", f.provider, l.region),
                printable(&l.id),
                printable(l.name.as_deref().unwrap_or("")),
                size,
                f.age_days.map(|d| format!("{d:.0} d")).unwrap_or_else(|| "unknown".into()),
                whose,
                month_text(&f.cost),
            ]);
        }
        let known: f64 = rows.iter().filter_map(|f| f.cost.cny_per_month).fold(0.0, |a, b| a + b);
        let unknown = rows.iter().filter(|f| f.cost.cny_per_month.is_none()).count();
        crate::outln!("{}s:", kind.as_str().replace('_', " "));
        crate::outln!("{t}");
        crate::outln!(
            "  {} {}(s): {}/month{}",
            rows.len(),
            kind.as_str().replace('_', " "),
            cny(known),
            if unknown > 0 { format!(" + {unknown} of unknown price") } else { String::new() }
        );
    }
    if !left.leftovers.is_empty() {
        let total: f64 = left.leftovers.iter().filter_map(|f| f.cost.cny_per_month).fold(0.0, |a, b| a + b);
        let theirs = left.leftovers.iter().filter(|f| !f.is_gpuctls()).count();
        crate::outln!(
            "{} leftover(s) billing without an instance: {}/month (storage list prices; the cloud's bill is authoritative); {theirs} not gpuctl's (left alone), snapshots count from {days} days, {} younger, {} file system(s) in use",
            left.leftovers.len(),
            cny(total),
            left.young_snapshots,
            left.file_systems_in_use
        );
    }
    for e in &left.errors {
        crate::outln!(
            "error: {} {}: {} — the search is incomplete there",
            e.place.provider,
            e.place.region,
            e.error
        );
    }
}

/// 0: searched everywhere (and released everything asked); 4: part of it failed; 1: all of it failed.
fn exit_code(found: &Found, released: Option<&[String]>, release_errors: &[String]) -> Severity {
    let searched_none = found.searched.is_empty() && !found.errors.is_empty();
    let released_none = released.is_some_and(|r| r.is_empty()) && !release_errors.is_empty();
    if searched_none || released_none {
        Severity::Failed
    } else if !found.errors.is_empty() || !release_errors.is_empty() {
        Severity::Partial
    } else {
        Severity::Ok
    }
}

/// Text from the cloud (names, tag values) as the terminal should show it: control characters, which
/// could move the cursor or recolour the screen, become '?'.
fn printable(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

fn print_found(found: &Found, rows: &[Row], total: f64, unpriced: usize) {
    let regions = found.searched.len() + found.errors.len();
    if rows.is_empty() {
        crate::outln!("no leaks: every instance tagged {} in {} region(s) is owned by a recorded deployment ({} owned, {} terminating)", gpuctl_cloud::cloud::TAG_DEPLOYMENT, found.searched.len(), found.owned, found.leaving);
    } else {
        let mut t =
            table(["where", "instance", "name", "type", "state", "deployment/pool", "launched", "¥/hour"]);
        for r in rows {
            let launched = match (r.launched_at, r.age_hours) {
                (Some(at), Some(h)) => format!("{at} ({} ago)", hours(h)),
                (Some(at), None) => at.to_string(),
                _ => "unknown".into(),
            };
            let recorded = r.recorded_as.map(|s| format!(" (recorded as {})", s.name())).unwrap_or_default();
            t.add_row([
                format!("{} {} {}", r.provider, r.region, r.zone),
                format!("{}{recorded}", printable(r.instance_id)),
                printable(r.name.unwrap_or("")),
                printable(r.instance_type),
                printable(&r.state),
                printable(&format!("{}/{}", r.deployment, r.pool.unwrap_or("?"))),
                launched,
                price_text(r.price.as_ref()),
            ]);
        }
        crate::outln!("{t}");
        let unknown =
            if unpriced > 0 { format!(" + {unpriced} instance(s) of unknown price") } else { String::new() };
        crate::outln!(
            "{} instance(s) tagged by gpuctl that no recorded deployment owns: {}/hour{unknown} (catalog prices; the cloud's bill is authoritative). {} owned, {} terminating, {regions} region(s) searched.",
            rows.len(),
            cny(total),
            found.owned,
            found.leaving
        );
    }
    for e in &found.errors {
        crate::outln!(
            "error: {} {}: {} — the search is incomplete there",
            e.place.provider,
            e.place.region,
            e.error
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(providers: &[&str], regions: &[&str]) -> SweepArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct P {
            #[command(flatten)]
            a: SweepArgs,
        }
        let mut argv = vec!["sweep".to_string()];
        for p in providers {
            argv.extend(["--provider".into(), p.to_string()]);
        }
        for r in regions {
            argv.extend(["--region".into(), r.to_string()]);
        }
        P::parse_from(argv).a
    }

    /// (providers, regions, clouds with credentials) → the places searched, or the error's text.
    fn check(providers: &[&str], regions: &[&str], creds: &[Provider], want: Result<&[(&str, &str)], &str>) {
        let catalog = load_catalog(None).unwrap();
        let got = places(&args(providers, regions), &catalog, |p| creds.contains(&p));
        match (got, want) {
            (Ok(got), Ok(want)) => {
                let got: Vec<(String, String)> =
                    got.into_iter().map(|p| (p.provider.to_string(), p.region)).collect();
                let want: Vec<(String, String)> =
                    want.iter().map(|(p, r)| (p.to_string(), r.to_string())).collect();
                assert_eq!(got, want, "{providers:?} {regions:?}");
            }
            (Err(e), Err(want)) => {
                assert!(e.message.contains(want) && e.code == 2, "{providers:?} {regions:?}: {}", e.message)
            }
            (got, want) => panic!(
                "{providers:?} {regions:?}: got {:?}, want {want:?}",
                got.map(|_| ()).map_err(|e| e.message)
            ),
        }
    }

    #[test]
    fn which_regions_are_searched() {
        let all = Provider::ALL;
        check(&["jdcloud"], &["cn-north-1"], &all, Ok(&[("jdcloud", "cn-north-1")]));
        // A region goes to the clouds whose catalog lists it.
        check(
            &[],
            &["ap-guangzhou", "cn-hangzhou"],
            &all,
            Ok(&[("tencent", "ap-guangzhou"), ("alibaba", "cn-hangzhou")]),
        );
        // One cloud named: any region goes to it (the cloud judges it).
        check(&["tencent"], &["ap-nowhere-9"], &all, Ok(&[("tencent", "ap-nowhere-9")]));
        // Several clouds and a typo: the closest names.
        check(&[], &["ap-guangzhuo"], &all, Err("ap-guangzhou"));
        check(&["tencnet"], &[], &all, Err("tencent"));
        check(&[], &[], &[], Err("no cloud credentials"));
        // No regions: every catalog region of every cloud with credentials.
        let catalog = load_catalog(None).unwrap();
        let jd = places(&args(&[], &[]), &catalog, |p| p == Provider::JdCloud).unwrap();
        let want: Vec<String> =
            catalog.provider(Provider::JdCloud).unwrap().regions.iter().map(|r| r.id.clone()).collect();
        assert!(!want.is_empty());
        assert_eq!(jd.iter().map(|p| p.region.clone()).collect::<Vec<_>>(), {
            let mut w = want;
            w.sort();
            w
        });
        assert!(jd.iter().all(|p| p.provider == Provider::JdCloud));
    }

    #[test]
    fn ages_and_prices_for_people() {
        let now: jiff::Timestamp = "2026-11-30T12:00:00Z".parse().unwrap();
        assert_eq!(age_hours(Some("2026-11-30T09:30:00Z"), now), Some(2.5));
        assert_eq!(age_hours(Some("not a time"), now), None);
        assert_eq!(age_hours(None, now), None);
        assert_eq!(price_text(None), "unknown");
        assert_eq!(printable("lost\u{1b}[2J-work\n"), "lost?[2J-work?");
    }
}
