//! `gpuctl catalog`: list instance types with their prices per billing mode, GPUs, or model presets.

use std::path::PathBuf;
use std::process::ExitCode;

use gpuctl_core::{BillingMode, Catalog, Confidence, InstanceType, Price, Provider};
use serde::Serialize;

use super::CliError;
use crate::output::{self, cny, table};

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CatalogArgs {
    /// `refresh`: ask the clouds' price APIs and write a dated price overlay.
    #[command(subcommand)]
    pub action: Option<CatalogAction>,
    /// What to list: instances (default), gpus or models.
    #[arg(default_value = "instances")]
    pub what: String,
    /// Only this provider (tencent, alibaba, jdcloud); repeatable.
    #[arg(long = "provider")]
    pub providers: Vec<String>,
    /// Only this GPU (id or name, e.g. a10, "A100 80GB SXM4"); repeatable.
    #[arg(long = "gpu")]
    pub gpus: Vec<String>,
    /// Only GPUs with at least this much VRAM per card, GB.
    #[arg(long)]
    pub min_vram: Option<f64>,
    /// Only instance types sold in this region; prices shown are for it.
    #[arg(long)]
    pub region: Option<String>,
    /// Price overlay file (TOML or JSON) with your own quotes; also GPUCTL_PRICE_OVERLAY.
    #[arg(long)]
    pub overlay: Option<PathBuf>,
    /// Machine-readable output (shapes in docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Subcommand)]
pub enum CatalogAction {
    /// Ask each cloud's price API for the catalog's types and write them to the price overlay
    Refresh(super::refresh::RefreshArgs),
}

/// One instance type with its prices (`--json`).
#[derive(Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    instance: &'a InstanceType,
    vram_gb_per_gpu: f64,
    billing_modes: Vec<BillingMode>,
    prices: Vec<&'a Price>,
}

#[derive(Serialize)]
struct Out<'a> {
    schema_version: u32,
    today: gpuctl_core::Date,
    price_age: String,
    /// How the listed prices split between observed and derived, and the observed ones' dates.
    evidence_mix: gpuctl_core::EvidenceMix,
    instance_types: Vec<Row<'a>>,
}

pub fn run(args: CatalogArgs) -> Result<ExitCode, CliError> {
    if let Some(CatalogAction::Refresh(r)) = args.action {
        return super::refresh::run(r);
    }
    let cat = output::load_catalog(args.overlay.as_deref())?;
    let today = output::today()?;
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
    if let Some(r) = &args.region {
        let all: Vec<&str> =
            cat.providers().iter().flat_map(|p| p.regions.iter().map(|r| r.id.as_str())).collect();
        if !all.contains(&r.as_str()) {
            return Err(output::unknown(gpuctl_core::UnknownName::new("region", r, all)));
        }
    }
    match args.what.as_str() {
        "instances" | "instance" | "types" => instances(&cat, &args, &providers, &gpus, today),
        "gpus" | "gpu" => list_gpus(&cat, &args, &gpus),
        "models" | "model" => list_models(&args),
        other => Err(output::unknown(gpuctl_core::UnknownName::new(
            "list",
            other,
            ["instances", "gpus", "models"],
        ))),
    }
}

fn instances(
    cat: &Catalog,
    args: &CatalogArgs,
    providers: &[Provider],
    gpus: &[String],
    today: gpuctl_core::Date,
) -> Result<ExitCode, CliError> {
    let rows: Vec<Row> = cat
        .instance_types()
        .iter()
        .filter(|i| providers.is_empty() || providers.contains(&i.provider))
        .filter(|i| gpus.is_empty() || gpus.contains(&i.gpu))
        .filter(|i| args.region.as_ref().is_none_or(|r| i.regions.contains(r)))
        .filter_map(|i| {
            let g = cat.gpu(&i.gpu)?;
            let vram = i.vram_per_device_gb(g);
            if args.min_vram.is_some_and(|m| vram < m) {
                return None;
            }
            let prices = cat
                .prices_of(i.provider, &i.id)
                .iter()
                .filter(|p| args.region.as_ref().is_none_or(|r| &p.region == r))
                .collect();
            Some(Row { instance: i, vram_gb_per_gpu: vram, billing_modes: cat.billing_modes(i), prices })
        })
        .collect();
    let age = cat.price_age_line(today);
    if args.json {
        let mix = Catalog::evidence_mix(rows.iter().flat_map(|r| r.prices.iter().copied()));
        output::print_json(&Out {
            schema_version: gpuctl_core::SCHEMA_VERSION,
            today,
            price_age: age,
            evidence_mix: mix,
            instance_types: rows,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        crate::outln!("no instance types match these filters");
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = table([
        "provider",
        "instance type",
        "GPU",
        "×",
        "VRAM",
        "vCPU",
        "RAM",
        "net Gbit/s",
        "¥/hour",
        "spot ¥/h",
        "¥/week",
        "¥/month",
        "¥/year",
        "¥/3 years",
    ]);
    // The prices the table shows, for the evidence-mix line under it.
    let mut shown: Vec<&Price> = Vec::new();
    let mut restricted = 0;
    for r in &rows {
        let i = r.instance;
        let regions: Vec<String> = args.region.iter().cloned().collect();
        let mut cell = |m: BillingMode| match cat.best_price(i.provider, &i.id, m, &regions) {
            Some(p) => {
                shown.push(p);
                mark(p)
            }
            None => "—".to_string(),
        };
        let cells = [
            cell(BillingMode::Hourly),
            cell(BillingMode::Spot),
            cell(BillingMode::Weekly),
            cell(BillingMode::Monthly),
            cell(BillingMode::Year1),
            cell(BillingMode::Year3),
        ];
        restricted += usize::from(i.restricted.is_some());
        let rdma = i.rdma_gbps.map_or_else(|| "RDMA".to_string(), |g| format!("RDMA {g}"));
        let net = match (i.net_gbps, &i.rdma) {
            (Some(n), Some(_)) => format!("{n} +{rdma}"),
            (Some(n), None) => format!("{n}"),
            (None, Some(_)) => rdma,
            (None, None) => "—".to_string(),
        };
        let [hourly, spot, weekly, monthly, year1, year3] = cells;
        t.add_row(vec![
            i.provider.to_string(),
            if i.restricted.is_some() { format!("{} †", i.id) } else { i.id.clone() },
            i.gpu.clone(),
            format!("{}", i.gpu_count),
            format!("{:.0} GB", r.vram_gb_per_gpu),
            if i.vcpu == 0 { "?".into() } else { i.vcpu.to_string() },
            if i.ram_gb == 0.0 { "?".into() } else { format!("{:.0} GB", i.ram_gb) },
            net,
            hourly,
            spot,
            weekly,
            monthly,
            year1,
            year3,
        ]);
    }
    crate::outln!("{t}");
    crate::outln!("{} instance types; per mode the cheapest region with an observed price, else the cheapest estimate{}", rows.len(), args.region.as_ref().map_or(String::new(), |r| format!(" in {r}")));
    crate::outln!("{age}");
    crate::outln!("{}", Catalog::evidence_mix(shown).line(today));
    crate::outln!("marks: ~ estimate (derived, see --json derivation)  ? brief-quoted, unverified  ! your overlay  (none) observed (source, date, confidence in --json)");
    if restricted > 0 {
        crate::outln!("† invite-only or contact sales ({restricted} listed): ranked by `estimate` only with --include-restricted");
    }
    Ok(ExitCode::SUCCESS)
}

/// A price with its confidence mark.
fn mark(p: &Price) -> String {
    let m = match p.confidence {
        Confidence::Estimate => "~",
        Confidence::Brief => "?",
        Confidence::User => "!",
        _ => "",
    };
    format!("{m}{}", cny(p.cny))
}

fn list_gpus(cat: &Catalog, args: &CatalogArgs, gpus: &[String]) -> Result<ExitCode, CliError> {
    let list: Vec<_> = cat
        .gpus()
        .iter()
        .filter(|g| gpus.is_empty() || gpus.contains(&g.id))
        .filter(|g| args.min_vram.is_none_or(|m| g.vram_gb >= m))
        .collect();
    if args.json {
        output::print_json(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = table([
        "id",
        "name",
        "VRAM",
        "GB/s",
        // Both tensor figures: training runs FP32 accumulate (the engine's rate); GeForce cards
        // double only with FP16 accumulate, the figure their boxes print.
        "TF train (FP32 acc)",
        "TF FP16 acc",
        "BF16",
        "trains",
        "link",
        "stack",
        "CC",
        "conf",
    ]);
    for g in list {
        t.add_row(vec![
            g.id.clone(),
            g.name.clone(),
            format!("{:.0} GB", g.vram_gb),
            format!("{:.0}", g.mem_bw_gbps),
            format!("{}", g.fp16_tflops),
            g.fp16_acc16_tflops.map_or_else(|| "same".into(), |t| format!("{t}")),
            if g.bf16 { "yes" } else { "no" }.into(),
            if g.fp16_training { "yes" } else { "NO" }.into(),
            g.interconnect.clone(),
            format!("{:?}", g.stack).to_lowercase(),
            g.compute_capability.clone(),
            g.confidence.as_str().into(),
        ]);
    }
    crate::outln!("{t}");
    Ok(ExitCode::SUCCESS)
}

fn list_models(args: &CatalogArgs) -> Result<ExitCode, CliError> {
    let list = gpuctl_core::presets();
    if args.json {
        output::print_json(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = table(["model", "params", "active", "layers", "hidden", "heads", "KV heads", "vocab"]);
    for m in list {
        // An MoE model computes with fewer parameters than it holds: both decide the estimate.
        let active = match m.moe {
            Some(e) => {
                format!("{:.1}B ({} of {} experts)", m.active_params() / 1e9, e.experts_per_token, e.experts)
            }
            None => "all".into(),
        };
        t.add_row(vec![
            m.name.clone(),
            format!("{:.2}B", m.params / 1e9),
            active,
            m.layers.to_string(),
            m.hidden.to_string(),
            m.heads.to_string(),
            m.kv_heads.to_string(),
            m.vocab.to_string(),
        ]);
    }
    crate::outln!("{t}");
    Ok(ExitCode::SUCCESS)
}
