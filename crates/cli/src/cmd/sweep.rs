//! `gpuctl sweep`: finds instances that carry gpuctl's deployment tag but that no live record in the
//! state store owns — the state was lost, or another machine's run made them — with ¥/hour from the
//! catalog, and with `--release` releases them after asking. The rule and the cloud calls are
//! gpuctl-provision's `sweep` module; this file picks the regions, prices the rows and prints.

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::Args;
use gpuctl_cloud::cloud::InstanceState;
use gpuctl_core::{Catalog, Confidence, PriceOrigin, UnknownName};
use gpuctl_provision::plan::PriceFact;
use gpuctl_provision::state::ResourceState;
use gpuctl_provision::sweep::{still_billed, Found, Orphan, Place, PlaceError, StillBilled};
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
    }
    if args.release && !found.orphans.is_empty() {
        let ids: Vec<String> = found.orphans.iter().map(|o| printable(&o.instance.instance_id)).collect();
        confirm(
            &format!(
                "release {} instance(s) no recorded deployment owns ({}/hour): {}?",
                ids.len(),
                cny(total),
                ids.join(", ")
            ),
            args.yes,
        )?;
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
    let code = exit_code(&found, released.as_deref(), &release_errors);
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

/// 0: searched everywhere (and released everything asked); 4: part of it failed; 1: all of it failed.
fn exit_code(found: &Found, released: Option<&[String]>, release_errors: &[String]) -> ExitCode {
    let searched_none = found.searched.is_empty() && !found.errors.is_empty();
    let released_none = released.is_some_and(|r| r.is_empty()) && !release_errors.is_empty();
    if searched_none || released_none {
        ExitCode::FAILURE
    } else if !found.errors.is_empty() || !release_errors.is_empty() {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
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
