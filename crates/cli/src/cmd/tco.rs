//! `gpuctl tco`: a self-built GPU cluster against the cheapest cloud way to get the same GPU-hours,
//! with the break-even utilization.

use std::path::PathBuf;
use std::process::ExitCode;

use gpuctl_core::{tco, TcoInput};

use super::CliError;
use crate::output::{self, cny, table};

#[derive(clap::Args)]
pub struct TcoArgs {
    /// GPU to compare (id or name); the cloud side uses instances with this GPU.
    #[arg(long, default_value = "a100-sxm4-80g")]
    pub gpu: String,
    /// GPUs in the self-built cluster.
    #[arg(long, default_value_t = 8)]
    pub gpus: u32,
    #[arg(long, default_value_t = 8)]
    pub gpus_per_server: u32,
    /// Price of one card, ¥.
    #[arg(long)]
    pub card_price: Option<f64>,
    /// Price of one server without GPUs, ¥.
    #[arg(long)]
    pub server_price: Option<f64>,
    /// Network and shared storage for the cluster, ¥.
    #[arg(long)]
    pub network_storage: Option<f64>,
    /// Depreciation period, years.
    #[arg(long)]
    pub years: Option<f64>,
    /// Power per server at load, kW.
    #[arg(long)]
    pub server_kw: Option<f64>,
    #[arg(long)]
    pub pue: Option<f64>,
    /// Electricity tariff, ¥ per kWh.
    #[arg(long)]
    pub kwh_price: Option<f64>,
    /// Ops staff cost per year for this cluster, ¥.
    #[arg(long)]
    pub ops: Option<f64>,
    /// Share of the year the GPUs do useful work: 0.4 or 40%.
    #[arg(long)]
    pub utilization: Option<String>,
    /// Price overlay file (TOML or JSON); also GPUCTL_PRICE_OVERLAY.
    #[arg(long)]
    pub overlay: Option<PathBuf>,
    /// Machine-readable output (shapes in docs/json.md).
    #[arg(long)]
    pub json: bool,
}

fn positive(flag: &str, v: Option<f64>, default: f64) -> Result<f64, CliError> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && x > 0.0 => Ok(x),
        Some(x) => Err(CliError::usage(format!("--{flag} {x}: must be a positive number"))),
    }
}

pub fn run(args: TcoArgs) -> Result<ExitCode, CliError> {
    let cat = output::load_catalog(args.overlay.as_deref())?;
    let today = output::today()?;
    let gpu = cat.find_gpu(&args.gpu).map_err(output::unknown)?;
    let d = TcoInput::default();
    if args.gpus == 0 || args.gpus_per_server == 0 {
        return Err(CliError::usage("--gpus and --gpus-per-server must be at least 1"));
    }
    let utilization = match &args.utilization {
        None => d.utilization,
        Some(s) => {
            let (num, pct) = match s.strip_suffix('%') {
                Some(n) => (n, true),
                None => (s.as_str(), false),
            };
            let v: f64 = num
                .trim()
                .parse()
                .map_err(|_| CliError::usage(format!("--utilization {s}: write 0.4 or 40%")))?;
            let v = if pct || v > 1.0 { v / 100.0 } else { v };
            if !(0.0..=1.0).contains(&v) {
                return Err(CliError::usage(format!("--utilization {s}: must be between 0 and 100 %")));
            }
            v
        }
    };
    let input = TcoInput {
        gpu: gpu.id.clone(),
        gpus: args.gpus,
        gpus_per_server: args.gpus_per_server,
        card_cny: positive("card-price", args.card_price, d.card_cny)?,
        server_cny: positive("server-price", args.server_price, d.server_cny)?,
        network_storage_cny: positive("network-storage", args.network_storage, d.network_storage_cny)?,
        depreciation_years: positive("years", args.years, d.depreciation_years)?,
        server_kw: positive("server-kw", args.server_kw, d.server_kw)?,
        idle_power_share: d.idle_power_share,
        pue: positive("pue", args.pue, d.pue)?,
        cny_per_kwh: positive("kwh-price", args.kwh_price, d.cny_per_kwh)?,
        ops_cny_per_year: positive("ops", args.ops, d.ops_cny_per_year)?,
        utilization,
    };
    let r = tco(&cat, &input);
    if args.json {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            schema_version: u32,
            today: gpuctl_core::Date,
            price_age: String,
            #[serde(flatten)]
            report: &'a gpuctl_core::TcoReport,
        }
        output::print_json(&Out {
            schema_version: gpuctl_core::SCHEMA_VERSION,
            today,
            price_age: cat.price_age_line(today),
            report: &r,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let s = &r.self_built;
    crate::outln!(
        "Self-built: {} × {} in {} server(s), {:.0} % utilization",
        input.gpus,
        gpu.name,
        (input.gpus as f64 / input.gpus_per_server as f64).ceil(),
        utilization * 100.0
    );
    crate::outln!(
        "  capex {} → depreciation {}/yr over {} years",
        cny(s.capex_cny),
        cny(s.depreciation_per_year),
        input.depreciation_years
    );
    crate::outln!("  power {}/yr, ops {}/yr", cny(s.power_per_year), cny(s.ops_per_year));
    crate::outln!(
        "  total {}/yr = {} per GPU-hour of useful work",
        cny(s.total_per_year),
        cny(s.cny_per_gpu_hour_used)
    );
    crate::outln!();
    if r.cloud.is_empty() {
        crate::outln!("Cloud: no price for {} in the catalog.", gpu.id);
    } else {
        let mut t = table([
            "cloud mode",
            "cheapest instance",
            "region",
            "¥/GPU-hour",
            "¥/year for these GPU-hours",
            "price",
        ]);
        for c in &r.cloud {
            t.add_row(vec![
                c.mode.to_string(),
                format!("{} {}", c.price.provider, c.price.instance),
                c.price.region.clone(),
                cny(c.cny_per_gpu_hour),
                cny(c.total_per_year),
                format!("{} ({})", c.price.confidence.as_str(), c.price.as_of),
            ]);
        }
        crate::outln!("{t}");
    }
    match r.break_even_utilization_vs_hourly {
        Some(u) => crate::outln!(
            "Break-even vs pay-as-you-go: self-built is cheaper above {:.0} % utilization.",
            u * 100.0
        ),
        None => crate::outln!(
            "Break-even vs pay-as-you-go: self-built is never cheaper at any utilization with these inputs."
        ),
    }
    crate::outln!(
        "At {:.0} % utilization: {} is cheaper.",
        utilization * 100.0,
        if r.self_built_cheaper {
            "self-built".to_string()
        } else {
            format!("cloud ({})", r.cloud.first().map_or("—".into(), |c| c.mode.to_string()))
        }
    );
    crate::outln!("{}", cat.price_age_line(today));
    for w in &r.warnings {
        crate::outln!("warning: {w}");
    }
    crate::outln!();
    crate::outln!("Assumptions:");
    for a in &r.assumptions {
        crate::outln!("  - {a}");
    }
    Ok(ExitCode::SUCCESS)
}
