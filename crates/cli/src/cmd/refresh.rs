//! `gpuctl catalog refresh`: asks each cloud's price API (Tencent InquiryPriceRunInstances, Alibaba
//! DescribePrice, JD calculateTotalPrice) for the catalog's instance types in the user's regions, and
//! writes the answers as a dated price overlay that `catalog`, `estimate` and `plan` then use.
//!
//! Owns: which (type, region, mode) to ask about, the quote request, and merging the answers into the
//! overlay file (the user's other rows are kept; the file is replaced atomically, and only once the
//! merged file loads as a valid overlay). Calls go through the provisioner's engine, so they are paced
//! per provider API and retried on throttling exactly like provisioning's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use gpuctl_cloud::cloud::CreateRequest;
use gpuctl_cloud::{Disk, DiskCategory};
use gpuctl_core::{BillingMode, Catalog, Provider};
use serde::Serialize;

use super::provisioning::{CloudArgs, Session, EXIT_PARTIAL};
use super::CliError;
use crate::output::{self, cny, table};

#[derive(Args, Debug)]
pub struct RefreshArgs {
    /// Only this provider (tencent, alibaba, jdcloud); repeatable. Default: every provider.
    #[arg(long = "provider")]
    pub providers: Vec<String>,
    /// Only this region (e.g. ap-guangzhou, cn-hangzhou, cn-north-1); repeatable. Default: every
    /// region the catalog lists for each type.
    #[arg(long = "region")]
    pub regions: Vec<String>,
    /// Only instance types with this GPU (id or name); repeatable.
    #[arg(long = "gpu")]
    pub gpus: Vec<String>,
    /// Only these instance types (the cloud's id); repeatable.
    #[arg(long = "instance")]
    pub instances: Vec<String>,
    /// Only these billing modes (hourly, spot, weekly, monthly, year1, year3); repeatable.
    #[arg(long = "mode")]
    pub modes: Vec<String>,
    /// The overlay file to write (merged into when it exists). Default: $GPUCTL_PRICE_OVERLAY, else
    /// $XDG_CONFIG_HOME/gpuctl/prices.toml (~/.config/gpuctl/prices.toml), which every command reads.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The image Tencent's price inquiry names (its API requires one; the price does not depend on a
    /// public image).
    #[arg(long, default_value = TENCENT_IMAGE)]
    pub tencent_image: String,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

/// Believed to be Tencent's public Ubuntu Server 22.04 LTS image; UNVERIFIED against a live account
/// (the local cloud checks only its shape). `--tencent-image` overrides it.
const TENCENT_IMAGE: &str = "img-487zeit5";
/// The system disk the quotes include where the cloud prices one in: 50 GB SSD-class cloud disk.
const SYSTEM_DISK_GB: u32 = 50;

/// One (type, region, mode) to ask about.
#[derive(Debug, Clone)]
struct Ask {
    provider: Provider,
    instance: String,
    region: String,
    zone: String,
    mode: BillingMode,
}

/// A price the cloud quoted (`--json` `quoted[]`).
#[derive(Debug, Serialize)]
struct Quoted {
    provider: Provider,
    instance: String,
    region: String,
    zone: String,
    mode: BillingMode,
    /// ¥ per term of `mode` (hour for hourly/spot, 7 days, month, year, the whole 3 years).
    cny: f64,
    request_id: Option<String>,
}

/// A (type, region, mode) the cloud did not quote (`--json` `not_quoted[]`).
#[derive(Debug, Serialize)]
struct NotQuoted {
    provider: Provider,
    instance: String,
    region: String,
    zone: String,
    mode: BillingMode,
    /// stock-out, invalid (not sold / not sold that way), throttled, transient, quota, auth, not-found,
    /// or `no-price` when the cloud answered without a price.
    kind: String,
    code: String,
    message: String,
    request_id: Option<String>,
}

/// Whether a type was on sale in the zone its prices were asked for (`--json` `stock[]`).
#[derive(Debug, Serialize)]
struct Stock {
    provider: Provider,
    instance: String,
    region: String,
    zone: String,
    /// `null`: unknown (the stock call failed; `error` says why).
    in_stock: Option<bool>,
    request_id: Option<String>,
    error: Option<String>,
}

#[derive(Serialize)]
struct Out {
    schema_version: u32,
    overlay: String,
    as_of: gpuctl_core::Date,
    quoted: Vec<Quoted>,
    not_quoted: Vec<NotQuoted>,
    stock: Vec<Stock>,
    /// Throttled or transient calls retried, and the seconds spent waiting for them.
    retries: u64,
    retry_wait_ms: u64,
}

pub fn run(args: RefreshArgs) -> Result<ExitCode, CliError> {
    // The shipped catalog only: the types and regions to ask about, never the user's own rows.
    let cat = Catalog::shipped();
    let today = output::today()?;
    let asks = asks(cat, &args)?;
    if asks.is_empty() {
        return Err(CliError::usage(
            "no catalog instance type matches these filters; nothing to ask the clouds",
        ));
    }
    let out_path = match &args.out {
        Some(p) => p.clone(),
        None => output::overlay_path().ok_or_else(|| {
            CliError::usage("no place for the overlay: pass --out FILE, or set GPUCTL_PRICE_OVERLAY or HOME")
        })?,
    };
    let mut need: Vec<Provider> = asks.iter().map(|a| a.provider).collect();
    need.sort();
    need.dedup();
    let session = Session::open(&args.cloud, &need)?;
    if !args.cloud.json {
        eprintln!(
            "asking {} price(s) from {}",
            asks.len(),
            need.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
        );
    }
    let stock = session.runtime.block_on(ask_stock(&session.engine, &asks));
    let (quoted, not_quoted) = session.runtime.block_on(ask_all(&session.engine, asks, &args.tencent_image));
    let (retries, retry_wait_ms) = session.engine.retry_totals();
    if !quoted.is_empty() {
        write_overlay(&out_path, &quoted, &stock, today)?;
    }
    let code = match (quoted.is_empty(), not_quoted.is_empty()) {
        (_, true) => ExitCode::SUCCESS,
        (true, false) => ExitCode::FAILURE,
        (false, false) => ExitCode::from(EXIT_PARTIAL),
    };
    if args.cloud.json {
        output::print_json(&Out {
            schema_version: gpuctl_core::SCHEMA_VERSION,
            overlay: out_path.display().to_string(),
            as_of: today,
            quoted,
            not_quoted,
            stock,
            retries,
            retry_wait_ms,
        })?;
        return Ok(code);
    }
    if !quoted.is_empty() {
        let mut t = table(["provider", "instance type", "region", "mode", "price", "request id"]);
        for q in &quoted {
            t.add_row(vec![
                q.provider.to_string(),
                q.instance.clone(),
                q.region.clone(),
                q.mode.as_str().into(),
                cny(q.cny),
                q.request_id.clone().unwrap_or_default(),
            ]);
        }
        crate::outln!("{t}");
    }
    for n in &not_quoted {
        let rid = n.request_id.as_ref().map(|r| format!(" (request id {r})")).unwrap_or_default();
        crate::outln!(
            "not quoted: {} {} {} {} in {}: {}: {}: {}{rid}",
            n.provider,
            n.instance,
            n.region,
            n.mode.as_str(),
            n.zone,
            n.kind,
            n.code,
            n.message
        );
    }
    for s in &stock {
        let rid = s.request_id.as_ref().map(|r| format!(" (request id {r})")).unwrap_or_default();
        match (s.in_stock, &s.error) {
            (Some(false), _) => crate::outln!("sold out: {} {} in {}{rid}", s.provider, s.instance, s.zone),
            (None, Some(e)) => {
                crate::outln!("stock unknown: {} {} in {}: {e}", s.provider, s.instance, s.zone)
            }
            _ => {}
        }
    }
    if retries > 0 {
        crate::outln!(
            "retried {retries} throttled/transient calls, waiting {:.1} s in all",
            retry_wait_ms as f64 / 1000.0
        );
    }
    if quoted.is_empty() {
        crate::outln!("no prices quoted; {} left unchanged", out_path.display());
    } else {
        crate::outln!(
            "{} price(s) as of {today} written to {}; {} not quoted",
            quoted.len(),
            out_path.display(),
            not_quoted.len()
        );
    }
    Ok(code)
}

/// Every (type, region, mode) the filters select, in catalog order. A mode the cloud's API cannot buy
/// (JD spot, Tencent weekly) is left out: there is nothing to quote.
fn asks(cat: &Catalog, args: &RefreshArgs) -> Result<Vec<Ask>, CliError> {
    let providers = args
        .providers
        .iter()
        .map(|p| gpuctl_core::parse_provider(p).map_err(output::unknown))
        .collect::<Result<Vec<_>, _>>()?;
    let gpus = args
        .gpus
        .iter()
        .map(|g| cat.find_gpu(g).map(|g| g.id.clone()).map_err(output::unknown))
        .collect::<Result<Vec<_>, _>>()?;
    let modes = args.modes.iter().map(|m| parse_mode(m)).collect::<Result<Vec<_>, _>>()?;
    let all_regions: Vec<&str> =
        cat.providers().iter().flat_map(|p| p.regions.iter().map(|r| r.id.as_str())).collect();
    for r in &args.regions {
        if !all_regions.contains(&r.as_str()) {
            return Err(output::unknown(gpuctl_core::UnknownName::new(
                "region",
                r,
                all_regions.iter().copied(),
            )));
        }
    }
    for i in &args.instances {
        if !cat.instance_types().iter().any(|t| &t.id == i) {
            return Err(output::unknown(gpuctl_core::UnknownName::new(
                "instance type",
                i,
                cat.instance_types().iter().map(|t| t.id.as_str()),
            )));
        }
    }
    let mut out = Vec::new();
    for i in cat.instance_types() {
        if !(providers.is_empty() || providers.contains(&i.provider))
            || !(gpus.is_empty() || gpus.contains(&i.gpu))
            || !(args.instances.is_empty() || args.instances.contains(&i.id))
        {
            continue;
        }
        let Some(info) = cat.provider(i.provider) else { continue };
        for region in i.regions.iter().filter(|r| args.regions.is_empty() || args.regions.contains(r)) {
            // Prices are per region; the first zone stands for the region (clouds quote per zone).
            let Some(zone) = info.regions.iter().find(|r| &r.id == region).and_then(|r| r.zones.first())
            else {
                continue;
            };
            for mode in cat.billing_modes(i) {
                if (!modes.is_empty() && !modes.contains(&mode))
                    || gpuctl_cloud::provider::api_offers(i.provider, mode).is_err()
                {
                    continue;
                }
                out.push(Ask {
                    provider: i.provider,
                    instance: i.id.clone(),
                    region: region.clone(),
                    zone: zone.clone(),
                    mode,
                });
            }
        }
    }
    Ok(out)
}

fn parse_mode(s: &str) -> Result<BillingMode, CliError> {
    BillingMode::ALL.into_iter().find(|m| m.as_str() == s).ok_or_else(|| {
        output::unknown(gpuctl_core::UnknownName::new(
            "billing mode",
            s,
            BillingMode::ALL.iter().map(|m| m.as_str()),
        ))
    })
}

/// The price request for one ask: one instance, one term of its mode, the default network.
fn request(a: &Ask, tencent_image: &str) -> CreateRequest {
    let instance_type = Catalog::shipped().api_type(a.provider, &a.instance);
    CreateRequest {
        client_token: String::new(),
        name: "gpuctl-price-quote".into(),
        region: a.region.clone(),
        zone: a.zone.clone(),
        instance_type,
        billing: a.mode,
        // One week / one month; year modes carry their own length.
        term: 1,
        // A Tencent spot quote must carry a bid (tccli 3.1.189.1 services/cvm/v20170312/api.json
        // objects.SpotMarketOptions.MaxPrice, required): the pay-as-you-go price, as `plan` bids.
        spot_max_price: (a.mode == BillingMode::Spot
            && gpuctl_provision::provider::spot_bid_required(a.provider))
        .then(|| Catalog::shipped().price(a.provider, &a.instance, &a.region, BillingMode::Hourly))
        .flatten()
        .map(|p| p.cny_per_hour),
        image_id: tencent_image.into(),
        system_disk: Disk { category: DiskCategory::Ssd, size_gb: SYSTEM_DISK_GB, snapshot_id: None },
        data_disks: vec![],
        network: None,
        placement: None,
        login_key: None,
        // The instance's own price: a public IP is priced separately (per GB or per Mbps·hour).
        public_ip: None,
        auto_release_at: None,
        tags: BTreeMap::new(),
        user_data: None,
        instance_role: None,
        dry_run: false,
    }
}

/// Asks each (type, zone) once whether it is on sale, all at once (paced per API by the engine).
async fn ask_stock(engine: &gpuctl_provision::apply::Engine, asks: &[Ask]) -> Vec<Stock> {
    let mut seen: Vec<(Provider, String, String, String)> =
        asks.iter().map(|a| (a.provider, a.instance.clone(), a.region.clone(), a.zone.clone())).collect();
    seen.dedup();
    let mut tasks = tokio::task::JoinSet::new();
    for (n, (provider, instance, region, zone)) in seen.into_iter().enumerate() {
        let engine = engine.clone();
        tasks.spawn(async move {
            let api_type = Catalog::shipped().api_type(provider, &instance);
            let r = engine.in_stock(provider, &region, &zone, &api_type).await;
            let (in_stock, request_id, error) = match r {
                Ok(Some((s, rid))) => (Some(s), rid, None),
                Ok(None) => (None, None, Some("this client does not ask for stock".to_string())),
                Err(e) => (None, None, Some(e.to_string())),
            };
            (n, Stock { provider, instance, region, zone, in_stock, request_id, error })
        });
    }
    let mut out = Vec::new();
    while let Some(Ok(x)) = tasks.join_next().await {
        out.push(x);
    }
    out.sort_by_key(|(n, _)| *n);
    out.into_iter().map(|(_, s)| s).collect()
}

/// Asks every price at once; the engine's pacer holds each provider API to its rate.
async fn ask_all(
    engine: &gpuctl_provision::apply::Engine,
    asks: Vec<Ask>,
    tencent_image: &str,
) -> (Vec<Quoted>, Vec<NotQuoted>) {
    let mut tasks = tokio::task::JoinSet::new();
    for (n, a) in asks.into_iter().enumerate() {
        let engine = engine.clone();
        let req = request(&a, tencent_image);
        tasks.spawn(async move {
            let r = engine.quote(a.provider, &req).await;
            (n, a, r)
        });
    }
    let mut done = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        if let Ok(x) = joined {
            done.push(x);
        }
    }
    done.sort_by_key(|(n, _, _)| *n);
    let (mut quoted, mut not_quoted) = (Vec::new(), Vec::new());
    for (_, a, r) in done {
        match r {
            Ok(q) if q.cny.is_finite() && q.cny > 0.0 => quoted.push(Quoted {
                provider: a.provider,
                instance: a.instance,
                region: a.region,
                zone: a.zone,
                mode: a.mode,
                cny: q.cny,
                request_id: q.request_id,
            }),
            Ok(q) => not_quoted.push(NotQuoted {
                provider: a.provider,
                instance: a.instance,
                region: a.region,
                zone: a.zone,
                mode: a.mode,
                kind: "no-price".into(),
                code: "no-price".into(),
                message: format!("the cloud answered without a price ({})", q.cny),
                request_id: q.request_id,
            }),
            Err(e) => not_quoted.push(NotQuoted {
                provider: a.provider,
                instance: a.instance,
                region: a.region,
                zone: a.zone,
                mode: a.mode,
                kind: e.kind.as_str().into(),
                code: e.code,
                message: e.message,
                request_id: e.request_id,
            }),
        }
    }
    (quoted, not_quoted)
}

/// The cloud and API named in each row's `source`.
fn api_name(p: Provider) -> &'static str {
    match p {
        Provider::Tencent => "Tencent InquiryPriceRunInstances",
        Provider::Alibaba => "Alibaba DescribePrice",
        Provider::JdCloud => "JD Cloud calculateTotalPrice",
    }
}

/// Merges the quotes into the overlay at `path`: rows with the same (provider, instance, region, mode)
/// are replaced, everything else in the file (the user's own rows, comments, other tables) is kept.
/// The result must load as an overlay before it replaces the old file (written beside it, then renamed).
fn write_overlay(
    path: &Path,
    quoted: &[Quoted],
    stock: &[Stock],
    today: gpuctl_core::Date,
) -> Result<(), CliError> {
    use toml_edit::{value, ArrayOfTables, DocumentMut, Item, Table};
    let existing = match gpuctl_sign::file::read_string_bounded(path, crate::output::MAX_OVERLAY_BYTES) {
        Ok(t) => Some(t),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(CliError::failed(format!("cannot read {}: {}", path.display(), e.reason()))),
    };
    let mut doc = match &existing {
        Some(t) if t.trim_start().starts_with('{') => {
            return Err(CliError::usage(format!(
                "{} is a JSON overlay; refresh writes TOML — pass --out FILE.toml",
                path.display()
            )))
        }
        Some(t) => t
            .parse::<DocumentMut>()
            .map_err(|e| CliError::usage(format!("{}: not a TOML overlay: {e}", path.display())))?,
        None => {
            let mut d = DocumentMut::new();
            d.decor_mut().set_prefix("# gpuctl price overlay (see README \"Prices\"). Rows from `gpuctl catalog refresh` name their API in `source`.\n");
            d["schema_version"] = value(1);
            d
        }
    };
    let key = |t: &Table| {
        let s = |k: &str| t.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_string();
        (s("provider"), s("instance"), s("region"), s("mode"))
    };
    let fresh: Vec<_> = quoted
        .iter()
        .map(|q| {
            (
                q.provider.as_str().to_string(),
                q.instance.clone(),
                q.region.clone(),
                q.mode.as_str().to_string(),
            )
        })
        .collect();
    let mut rows = ArrayOfTables::new();
    if let Some(old) = doc.get("price").and_then(Item::as_array_of_tables) {
        for t in old.iter().filter(|t| !fresh.contains(&key(t))) {
            rows.push(t.clone());
        }
    }
    for q in quoted {
        let mut t = Table::new();
        t["provider"] = value(q.provider.as_str());
        t["instance"] = value(&q.instance);
        t["region"] = value(&q.region);
        t["mode"] = value(q.mode.as_str());
        t["cny"] = value(q.cny);
        t["as_of"] = value(today.to_string());
        t["source"] = value(format!("{} via gpuctl catalog refresh", api_name(q.provider)));
        // A: the cloud's own API answered (observed, not derived).
        t["confidence"] = value("A");
        let rid = q.request_id.as_ref().map(|r| format!(", request id {r}")).unwrap_or_default();
        let on_sale = stock
            .iter()
            .find(|s| s.provider == q.provider && s.instance == q.instance && s.zone == q.zone)
            .and_then(|s| s.in_stock);
        let on_sale = match on_sale {
            Some(true) => "; on sale then",
            Some(false) => "; SOLD OUT there then",
            None => "; stock unknown",
        };
        t["notes"] = value(format!("quoted for zone {} with a {SYSTEM_DISK_GB} GB SSD system disk where the API prices one in{rid}{on_sale}", q.zone));
        rows.push(t);
    }
    doc["price"] = Item::ArrayOfTables(rows);
    let text = doc.to_string();
    Catalog::shipped().with_overlay(&path.display().to_string(), &text).map_err(|e| {
        CliError::failed(format!(
            "the refreshed overlay would not load, so {} was left unchanged: {e}",
            path.display()
        ))
    })?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::failed(format!("cannot create {}: {e}", dir.display())))?;
    }
    let tmp = path.with_extension("toml.refresh-tmp");
    std::fs::write(&tmp, text)
        .map_err(|e| CliError::failed(format!("cannot write {}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, path)
        .map_err(|e| CliError::failed(format!("cannot replace {}: {e}", path.display())))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(flags: &[&str]) -> RefreshArgs {
        #[derive(clap::Parser)]
        struct P {
            #[command(flatten)]
            r: RefreshArgs,
        }
        let mut v = vec!["refresh"];
        v.extend_from_slice(flags);
        <P as clap::Parser>::parse_from(v).r
    }

    #[test]
    fn asks_follow_filters_and_skip_modes_the_api_cannot_buy() {
        let cat = Catalog::shipped();
        let all = asks(cat, &args(&["--provider", "jdcloud"])).unwrap();
        assert!(!all.is_empty());
        assert!(all.iter().all(|a| a.provider == Provider::JdCloud
            && a.mode != BillingMode::Spot
            && a.mode != BillingMode::Weekly));
        let one =
            asks(cat, &args(&["--provider", "tencent", "--region", "ap-guangzhou", "--mode", "hourly"]))
                .unwrap();
        assert!(!one.is_empty());
        assert!(one.iter().all(|a| a.region == "ap-guangzhou"
            && a.mode == BillingMode::Hourly
            && a.zone.starts_with("ap-guangzhou-")));
        let e = asks(cat, &args(&["--region", "ap-guangzou"])).unwrap_err();
        assert!(e.message.contains("ap-guangzhou"), "{}", e.message);
        let e = asks(cat, &args(&["--mode", "houry"])).unwrap_err();
        assert!(e.message.contains("hourly"), "{}", e.message);
    }
}
