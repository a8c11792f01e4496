//! TCO: a self-built GPU cluster (cards, servers, network/storage, depreciation, power × PUE × tariff,
//! ops staff, utilization) against the cheapest cloud way to get the same GPU-hours, and the
//! utilization at which the two cost the same.
//!
//! Defaults come from catalog-facts.md §4 and are mostly estimates; each is listed in `assumptions`.

use serde::{Deserialize, Serialize};

use crate::catalog::{BillingMode, Catalog, Price};
use crate::explain::{self, Assumption};
use crate::warning::Warning;

/// Inputs for a self-built cluster. Money in CNY.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TcoInput {
    /// GPU id used for the cloud comparison (instances with this GPU).
    pub gpu: String,
    pub gpus: u32,
    pub gpus_per_server: u32,
    pub card_cny: f64,
    /// Server chassis, CPUs, RAM, disks — per server, without GPUs.
    pub server_cny: f64,
    /// Network (switches, NICs, cabling) and shared storage for the whole cluster.
    pub network_storage_cny: f64,
    pub depreciation_years: f64,
    /// Power per server at full load, kW.
    pub server_kw: f64,
    /// Share of full power drawn when idle.
    pub idle_power_share: f64,
    pub pue: f64,
    pub cny_per_kwh: f64,
    /// Ops staff cost per year for this cluster (fully loaded salary × FTE share).
    pub ops_cny_per_year: f64,
    /// Share of the year the GPUs do useful work (0–1).
    pub utilization: f64,
}

impl Default for TcoInput {
    /// 8 × A100 80 GB in one server, mid-range inputs from catalog-facts.md §4.
    fn default() -> Self {
        TcoInput {
            gpu: "a100-sxm4-80g".into(),
            gpus: 8,
            gpus_per_server: 8,
            card_cny: 110_000.0,
            server_cny: 150_000.0,
            network_storage_cny: 200_000.0,
            depreciation_years: 4.0,
            server_kw: 3.4,
            idle_power_share: 0.3,
            pue: 1.4,
            cny_per_kwh: 0.8,
            ops_cny_per_year: 175_000.0,
            utilization: 0.4,
        }
    }
}

impl TcoInput {
    /// Where the default numbers come from (shown with every TCO answer).
    pub fn default_assumptions() -> Vec<String> {
        explain::texts(&Self::default_assumption_codes())
    }

    /// [`TcoInput::default_assumptions`] as codes.
    pub fn default_assumption_codes() -> Vec<Assumption> {
        use Assumption::*;
        vec![
            DefaultCardPrice,
            DefaultServerPrice,
            DefaultNetworkStorage,
            DefaultDepreciation,
            DefaultServerPower,
            DefaultPue,
            DefaultTariff,
            DefaultOps,
        ]
    }

    fn servers(&self) -> f64 {
        (self.gpus as f64 / self.gpus_per_server.max(1) as f64).ceil()
    }
}

/// Self-built yearly costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfBuilt {
    pub capex_cny: f64,
    pub depreciation_per_year: f64,
    pub power_per_year: f64,
    pub ops_per_year: f64,
    pub total_per_year: f64,
    /// ¥ per GPU-hour of useful work at the given utilization.
    pub cny_per_gpu_hour_used: f64,
}

/// The cloud's cost for the same GPU-hours under one billing mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloudOption {
    pub mode: BillingMode,
    /// The cheapest price per GPU found for this mode (instance, region, source).
    pub price: Price,
    pub gpus_per_instance: f64,
    pub cny_per_gpu_hour: f64,
    pub total_per_year: f64,
}

/// One point of the cost-vs-utilization curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TcoPoint {
    pub utilization: f64,
    pub self_built_per_year: f64,
    pub cloud_best_per_year: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TcoReport {
    pub input: TcoInput,
    pub self_built: SelfBuilt,
    /// Per billing mode (spot excluded: it can be reclaimed), cheapest first, at the input's utilization.
    pub cloud: Vec<CloudOption>,
    /// Utilization above which self-built beats pay-as-you-go; `None` if it never does.
    pub break_even_utilization_vs_hourly: Option<f64>,
    /// Whether self-built beats the cheapest cloud option at the input's utilization.
    pub self_built_cheaper: bool,
    pub curve: Vec<TcoPoint>,
    /// The English text of each of `assumption_codes`, in order (what the CLI prints).
    pub assumptions: Vec<String>,
    pub assumption_codes: Vec<Assumption>,
    /// The English text of each of `warning_codes`, in order (what the CLI prints).
    pub warnings: Vec<String>,
    pub warning_codes: Vec<Warning>,
}

const HOURS_PER_YEAR: f64 = 8760.0;

fn self_built_at(i: &TcoInput, u: f64) -> SelfBuilt {
    let servers = i.servers();
    let capex = i.card_cny * i.gpus as f64 + i.server_cny * servers + i.network_storage_cny;
    let depreciation = capex / i.depreciation_years.max(0.1);
    let load = i.idle_power_share + (1.0 - i.idle_power_share) * u;
    let power = servers * i.server_kw * load * i.pue * i.cny_per_kwh * HOURS_PER_YEAR;
    let total = depreciation + power + i.ops_cny_per_year;
    let used = i.gpus as f64 * HOURS_PER_YEAR * u;
    SelfBuilt {
        capex_cny: capex,
        depreciation_per_year: depreciation,
        power_per_year: power,
        ops_per_year: i.ops_cny_per_year,
        total_per_year: total,
        cny_per_gpu_hour_used: if used > 0.0 { total / used } else { f64::INFINITY },
    }
}

/// Yearly cloud cost for `gpus` GPUs used `u` of the year: per-hour modes pay for used hours,
/// term modes hold the GPUs all year.
fn cloud_per_year(o: &CloudOption, gpus: f64, u: f64) -> f64 {
    if o.mode.is_per_hour() {
        o.cny_per_gpu_hour * gpus * HOURS_PER_YEAR * u
    } else {
        o.cny_per_gpu_hour * gpus * HOURS_PER_YEAR
    }
}

/// Compare a self-built cluster with the cheapest cloud prices for the same GPU in `catalog`.
pub fn tco(catalog: &Catalog, input: &TcoInput) -> TcoReport {
    let u = input.utilization.clamp(0.0, 1.0);
    let gpus = input.gpus as f64;
    let mut warnings = Vec::new();
    // Cheapest price per GPU-hour for each mode, over instances with this GPU (whole GPUs only).
    let mut cloud: Vec<CloudOption> = Vec::new();
    for inst in catalog
        .instance_types()
        .iter()
        .filter(|i| i.gpu.eq_ignore_ascii_case(&input.gpu) && i.gpu_count >= 1.0)
    {
        for p in catalog.prices_of(inst.provider, &inst.id) {
            if p.mode == BillingMode::Spot {
                continue;
            }
            let per_gpu_hour = p.cny_per_hour / inst.gpu_count;
            let opt = CloudOption {
                mode: p.mode,
                price: p.clone(),
                gpus_per_instance: inst.gpu_count,
                cny_per_gpu_hour: per_gpu_hour,
                total_per_year: 0.0,
            };
            match cloud.iter_mut().find(|c| c.mode == p.mode) {
                Some(c) if c.cny_per_gpu_hour <= per_gpu_hour => {}
                Some(c) => *c = opt,
                None => cloud.push(opt),
            }
        }
    }
    for c in &mut cloud {
        c.total_per_year = cloud_per_year(c, gpus, u);
    }
    cloud.sort_by(|a, b| a.total_per_year.total_cmp(&b.total_per_year));
    if cloud.is_empty() {
        warnings.push(Warning::NoCloudPrice { gpu: input.gpu.clone() });
    }

    let sb = self_built_at(input, u);
    // Solve self_built(u) = hourly(u): fixed + P·idle + P·(1-idle)·u = r·g·8760·u.
    let break_even = cloud.iter().find(|c| c.mode == BillingMode::Hourly).and_then(|h| {
        let s0 = self_built_at(input, 0.0).total_per_year;
        let s1 = self_built_at(input, 1.0).total_per_year;
        let slope_self = s1 - s0;
        let slope_cloud = h.cny_per_gpu_hour * gpus * HOURS_PER_YEAR;
        let u = s0 / (slope_cloud - slope_self);
        (slope_cloud > slope_self && u <= 1.0).then_some(u)
    });
    let best_cloud = cloud.first().map(|c| c.total_per_year);
    let self_built_cheaper = best_cloud.is_some_and(|c| sb.total_per_year < c);
    let curve = (0..=20)
        .map(|k| {
            let uu = k as f64 / 20.0;
            TcoPoint {
                utilization: uu,
                self_built_per_year: self_built_at(input, uu).total_per_year,
                cloud_best_per_year: cloud
                    .iter()
                    .map(|c| cloud_per_year(c, gpus, uu))
                    .fold(f64::INFINITY, f64::min),
            }
        })
        .collect();
    if cloud.iter().any(|c| c.price.confidence == crate::catalog::Confidence::Estimate) {
        warnings.push(Warning::EstimatedCloudPrices);
    }
    let mut assumptions =
        vec![Assumption::CloudPaysUsedHours, Assumption::SpotExcludedFromTco, Assumption::SelfBuiltPower];
    assumptions.extend(TcoInput::default_assumption_codes());
    TcoReport {
        input: input.clone(),
        self_built: sb,
        cloud,
        break_even_utilization_vs_hourly: break_even,
        self_built_cheaper,
        curve,
        assumptions: explain::texts(&assumptions),
        assumption_codes: assumptions,
        warnings: explain::texts(&warnings),
        warning_codes: warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn break_even_utilization_equalizes_costs() {
        let c = Catalog::shipped();
        let input = TcoInput::default();
        let r = tco(c, &input);
        assert!(!r.cloud.is_empty());
        let u = r.break_even_utilization_vs_hourly.expect("a break-even exists for 8 × A100 80 GB");
        assert!(u > 0.0 && u < 1.0, "{u}");
        let hourly = r.cloud.iter().find(|o| o.mode == BillingMode::Hourly).unwrap();
        let s = self_built_at(&input, u).total_per_year;
        let cl = cloud_per_year(hourly, 8.0, u);
        assert!((s - cl).abs() / s < 1e-9, "{s} vs {cl}");
    }

    #[test]
    fn self_built_yearly_costs_add_up() {
        let input = TcoInput { utilization: 1.0, ..TcoInput::default() };
        let s = self_built_at(&input, 1.0);
        assert_eq!(s.capex_cny, 8.0 * 110_000.0 + 150_000.0 + 200_000.0);
        assert_eq!(s.depreciation_per_year, 1_230_000.0 / 4.0);
        // 3.4 kW × 1.4 × 0.8 ¥ × 8,760 h = 33,358.08 ¥.
        assert!((s.power_per_year - 33_358.08).abs() < 0.01, "{}", s.power_per_year);
        assert_eq!(s.total_per_year, s.depreciation_per_year + s.power_per_year + 175_000.0);
    }
}
