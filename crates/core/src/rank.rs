//! Rank: every (instance type, billing mode) offer across providers that fits the job, sorted by
//! total cost, under an optional deadline and budget — and the ones that don't, with why.

use serde::{Deserialize, Serialize};

use crate::catalog::{
    best_of, BillingMode, Catalog, Confidence, Gpu, InstanceType, Price, PriceOrigin, Provider, Stack,
};
use crate::cluster::{cluster_time, Cluster, Sharding, MAX_AUTO_NODES, SLOW_LINK_GBPS};
use crate::compat::{check as check_compat, CompatQuery, Severity};
use crate::explain::{self, Assumption, PriceAge, Reason};
use crate::fit::{fit_explained, FitReport, Hardware, Job, Method};
use crate::price::{cost_of, Usage};
use crate::time::{estimate_time_explained, SpotRisk, TimeEstimate};
use crate::warning::Warning;
use jiff::civil::Date;

/// Prices older than this many days get a warning.
pub const STALE_PRICE_DAYS: i64 = 90;

/// What the user asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub job: Job,
    pub usage: Usage,
    /// Only these providers (empty = all).
    #[serde(default)]
    pub providers: Vec<Provider>,
    /// Only these regions (empty = all).
    #[serde(default)]
    pub regions: Vec<String>,
    /// Only these GPU ids (empty = all).
    #[serde(default)]
    pub gpus: Vec<String>,
    /// Only instance types with exactly this many GPUs.
    #[serde(default)]
    pub gpu_count: Option<u32>,
    /// Only these billing modes (empty = all).
    #[serde(default)]
    pub modes: Vec<BillingMode>,
    /// Wall-clock limit for the work, hours (calendar: at `usage.hours_per_day`).
    #[serde(default)]
    pub deadline_hours: Option<f64>,
    /// Budget for the whole job, ¥ (checked against the high cost estimate).
    #[serde(default)]
    pub budget_cny: Option<f64>,
    /// Today, for price age (the engine reads no clock).
    pub today: Date,
    /// Leave out spot offers (work that cannot tolerate interruption).
    #[serde(default)]
    pub no_spot: bool,
    /// Software the job needs (frameworks, CUDA, driver): GPUs it cannot run on are infeasible.
    #[serde(default)]
    pub compat: CompatQuery,
    /// Also rank types the evidence marks invite-only or "contact sales" ([`InstanceType::restricted`]);
    /// by default they are left out, since nobody can simply buy them.
    #[serde(default)]
    pub include_restricted: bool,
    /// Training on exactly this many instances of each type (a cluster in one zone, issue 14).
    /// `None`: one instance, or — where one instance cannot hold the job or misses the deadline —
    /// the fewest instances (up to [`MAX_AUTO_NODES`]) that can.
    #[serde(default)]
    pub nodes: Option<u32>,
    /// What spot offers' time to finish assumes about reclaims (issue 15): rate, checkpoint
    /// interval, restart time. Its defaults are assumptions ([`SpotRisk`]).
    #[serde(default)]
    pub spot: SpotRisk,
}

impl Question {
    pub fn new(job: Job, today: Date) -> Question {
        Question {
            job,
            usage: Usage::default(),
            providers: vec![],
            regions: vec![],
            gpus: vec![],
            gpu_count: None,
            modes: vec![],
            deadline_hours: None,
            budget_cny: None,
            today,
            no_spot: false,
            compat: CompatQuery::default(),
            include_restricted: false,
            nodes: None,
            spot: SpotRisk::default(),
        }
    }

    /// Hours of work (low, high) for a time estimate: the job's own estimate when tokens are given,
    /// else the usage's total hours.
    pub fn work_hours(&self, t: &TimeEstimate) -> Option<(f64, f64)> {
        if self.job.tokens > 0.0 {
            Some((t.hours_low, t.hours_high))
        } else {
            self.usage.total_hours.map(|h| (h, h))
        }
    }
}

/// One way to run the job: an instance type in a region under a billing mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Offer {
    pub provider: Provider,
    pub instance: String,
    pub family: String,
    pub gpu: String,
    pub gpu_name: String,
    pub gpu_count: f64,
    pub vcpu: u32,
    pub ram_gb: f64,
    pub region: String,
    pub mode: BillingMode,
    pub price: Price,
    pub fit: FitReport,
    pub time: TimeEstimate,
    /// Hours of work (low, high) billed or spanned.
    pub hours_low: f64,
    pub hours_high: f64,
    /// Calendar days the work spans at the usage's hours per day (high estimate).
    pub calendar_days: f64,
    /// Terms billed (hours for hourly/spot).
    pub terms_high: f64,
    pub cost_low: f64,
    pub cost_high: f64,
    pub cny_per_1m_tokens_low: Option<f64>,
    pub cny_per_1m_tokens_high: Option<f64>,
    pub price_age_days: i64,
    /// The English text of each of `warning_codes`, in order (what the CLI prints).
    pub warnings: Vec<String>,
    /// The warnings as stable codes with their parameters (the browser renders them in its language).
    pub warning_codes: Vec<Warning>,
    /// Instances of this type the job runs on (1 but for clusters). `price` is one instance's;
    /// `cost_*` and `cny_per_1m_tokens_*` are the whole cluster's.
    #[serde(default = "one_node")]
    pub nodes: u32,
    /// A multi-node offer's sharding and network figures (absent for one instance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Cluster>,
    /// Spot offers with a time estimate (issue 15): the expected reclaims over the work (high
    /// estimate), already counted in `hours_*` and `cost_*` (see the `spot-restarts` assumption).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot_restarts: Option<f64>,
}

fn one_node() -> u32 {
    1
}

/// An instance type (or an offer of it) that cannot do the job, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Infeasible {
    pub provider: Provider,
    pub instance: String,
    pub gpu: String,
    pub gpu_count: f64,
    /// Set when only this billing mode failed (budget, deadline); `None` = the instance type as a whole.
    pub mode: Option<BillingMode>,
    /// The English text of each of `reason_codes`, in order.
    pub reasons: Vec<String>,
    /// Why, as stable codes with their parameters (the browser words them in its language).
    pub reason_codes: Vec<Reason>,
}

/// The answer to a [`Question`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    /// Feasible offers, cheapest (high estimate) first.
    pub offers: Vec<Offer>,
    pub infeasible: Vec<Infeasible>,
    /// Warnings about the answer as a whole: the English text of each of `warning_codes`.
    pub warnings: Vec<String>,
    pub warning_codes: Vec<Warning>,
    /// Assumptions behind every number (fit, time, price): the English text of each of `assumption_codes`.
    pub assumptions: Vec<String>,
    pub assumption_codes: Vec<Assumption>,
    /// How old the prices are on `today`: `price_age_code`'s English text.
    pub price_age: String,
    pub price_age_code: PriceAge,
}

/// The hardware an instance type gives one job.
pub fn hardware(inst: &InstanceType, gpu: &Gpu) -> Hardware {
    Hardware {
        vram_gb: inst.vram_per_device_gb(gpu),
        devices: inst.devices(),
        flash_attention: gpu.flash_attention2,
        bf16: gpu.bf16,
    }
}

impl Question {
    /// Why work of `hours` (low, high) misses the deadline, if it does.
    fn misses_deadline(&self, hours: (f64, f64)) -> Option<Reason> {
        let dl = self.deadline_hours?;
        let wall = self.usage.calendar_days(hours.1) * 24.0;
        (wall > dl).then_some(Reason::MissesDeadline { wall_hours: wall, deadline_hours: dl })
    }
}

/// The job on `nodes` instances of `inst`: hybrid sharding when one node holds it (`single` is that
/// node's fit), else ZeRO/FSDP over every GPU of every node. Why not, when it cannot.
fn cluster_at(
    q: &Question,
    inst: &InstanceType,
    gpu: &Gpu,
    hw: &Hardware,
    single: &FitReport,
    nodes: u32,
) -> Result<(FitReport, TimeEstimate, Cluster), Vec<Reason>> {
    let (sharding, f) = if single.fits {
        (Sharding::Hybrid, single.clone())
    } else {
        let all = Hardware { devices: hw.devices * nodes, ..*hw };
        (Sharding::Full, fit_explained(&q.job, &all, false).0)
    };
    if !f.fits {
        return Err(vec![Reason::DoesNotFit { need_gb: f.need_gb, vram_gb: f.vram_gb }]);
    }
    let Some((t, c, _)) = cluster_time(&q.job, gpu, inst, nodes, sharding, f.zero_stage, false) else {
        return Err(vec![Reason::NoNetworkFigure]);
    };
    match q.misses_deadline(q.work_hours(&t).unwrap_or((1.0, 1.0))) {
        Some(r) => Err(vec![r]),
        None => Ok((f, t, c)),
    }
}

/// `code`'s English text, worded once per ranking (see `worded` in [`rank`]).
fn word(worded: &mut Vec<(Warning, String)>, code: &Warning) -> String {
    if let Some((_, text)) = worded.iter().find(|(c, _)| c == code) {
        return text.clone();
    }
    let text = code.to_string();
    worded.push((code.clone(), text.clone()));
    text
}

/// Rank every offer in `catalog` for `q`.
pub fn rank(catalog: &Catalog, q: &Question) -> Ranking {
    let mut offers = Vec::new();
    let mut explained: Vec<(bool, bool)> = Vec::new();
    let mut infeasible = Vec::new();
    let mut assumptions: Vec<Assumption> = Vec::new();
    let note = |v: &mut Vec<Assumption>, a: Assumption| {
        if !v.contains(&a) {
            v.push(a);
        }
    };
    let mut warnings: Vec<Warning> = Vec::new();
    // Offers share a handful of warnings (spot, a price's age, an estimate): each distinct one is
    // worded once per ranking and copied, instead of formatted again for every offer.
    let mut worded: Vec<(Warning, String)> = Vec::new();

    if q.job.tokens <= 0.0 && q.usage.total_hours.is_none() {
        warnings.push(Warning::NoTokensOrHours);
    }
    if matches!(q.job.method, Method::Full | Method::FullPure16) {
        let bytes = if q.job.method == Method::Full { 16.0 } else { 8.0 };
        warnings.push(Warning::FullFineTuneMemory {
            bytes_per_param: bytes,
            gb: bytes * q.job.model.params / 1e9,
            model: q.job.model.name.clone(),
            params: q.job.model.params,
        });
    }
    if q.job.model.shape_estimated {
        note(
            &mut assumptions,
            Assumption::ShapeInferred {
                params: q.job.model.params,
                layers: q.job.model.layers,
                hidden: q.job.model.hidden,
            },
        );
    }

    for inst in catalog.instance_types() {
        if !q.providers.is_empty() && !q.providers.contains(&inst.provider) {
            continue;
        }
        if inst.restricted.is_some() && !q.include_restricted {
            continue;
        }
        if !q.gpus.is_empty() && !q.gpus.iter().any(|g| g.eq_ignore_ascii_case(&inst.gpu)) {
            continue;
        }
        if let Some(n) = q.gpu_count {
            if inst.gpu_count != n as f64 {
                continue;
            }
        }
        let Some(gpu) = catalog.gpu(&inst.gpu) else {
            continue;
        };
        let hw = hardware(inst, gpu);
        // Assumption text depends on the method, FlashAttention support and the stack, not on the
        // instance: format it for the first instance of each kind only.
        let kind = (hw.flash_attention, gpu.stack == Stack::Ascend);
        let explain = !explained.contains(&kind);
        if explain {
            explained.push(kind);
        }
        let (f, fa) = fit_explained(&q.job, &hw, explain);
        let (t, ta) = estimate_time_explained(&q.job, gpu, inst.gpu_count, explain);
        // Assumptions are collected once for the whole ranking rather than copied into every
        // offer; what varies per offer is in the offer's numbers (`fit.zero_stage`, `time.mfu`).
        for a in fa.into_iter().chain(ta) {
            if !matches!(
                a,
                Assumption::Mfu { .. } | Assumption::DataParallel { .. } | Assumption::InferenceDecode { .. }
            ) {
                note(&mut assumptions, a);
            }
        }
        let mut reasons = Vec::new();
        if !f.fits {
            reasons.push(Reason::DoesNotFit { need_gb: f.need_gb, vram_gb: f.vram_gb });
        }
        if t.unsuitable.is_some() {
            reasons.push(Reason::UnsuitableForTraining {
                gpu: gpu.name.clone(),
                note: gpu.training_note.clone(),
            });
        }
        if !q.compat.is_empty() {
            reasons.extend(
                check_compat(gpu, &q.compat)
                    .into_iter()
                    .filter(|i| i.severity == Severity::Error)
                    .map(|i| Reason::Incompatible { message: i.message }),
            );
        }
        let mut hours = q.work_hours(&t).unwrap_or((1.0, 1.0));
        if let Some(r) = q.misses_deadline(hours) {
            reasons.push(r);
        }
        // One price per billing mode: observed before estimated, then the cheapest region.
        let all_prices = catalog.prices_of(inst.provider, &inst.id);
        let prices: Vec<&Price> = BillingMode::ALL
            .iter()
            .filter(|m| q.modes.is_empty() || q.modes.contains(m))
            .filter(|m| !(q.no_spot && **m == BillingMode::Spot))
            .filter_map(|&m| best_of(all_prices, m, &q.regions))
            .collect();
        if prices.is_empty() {
            reasons.push(Reason::NoPrice);
        }
        // A cluster of this type (issue 14): asked for with `nodes`, or the fewest nodes that hold the
        // job or meet the deadline when one instance cannot. Only memory and time can be bought with
        // more nodes: a GPU that cannot train, software it cannot run or a missing price stay.
        let (mut f, mut t, mut nodes, mut cluster) = (f, t, 1, None);
        let only_size =
            reasons.iter().all(|r| matches!(r, Reason::DoesNotFit { .. } | Reason::MissesDeadline { .. }));
        let trains_in_clusters = q.job.method.is_training() && inst.gpu_count >= 1.0 && only_size;
        // The node counts to try, fewest first (none when `lo > hi`).
        let (lo, hi) = match q.nodes {
            Some(n) if n > 1 && trains_in_clusters => (n, n),
            None if trains_in_clusters && !reasons.is_empty() => (2, MAX_AUTO_NODES),
            _ => (1, 0),
        };
        let asked = q.nodes.is_some_and(|n| n > 1);
        for n in lo..=hi {
            match cluster_at(q, inst, gpu, &hw, &f, n) {
                Ok((cf, ct, c)) => {
                    hours = q.work_hours(&ct).unwrap_or((1.0, 1.0));
                    (f, t, nodes, cluster) = (cf, ct, n, Some(c));
                    reasons.clear();
                    break;
                }
                // `--nodes N` that cannot work says why at that size; an automatic search that
                // found nothing keeps the one-instance reasons.
                Err(why) if asked => reasons = why,
                Err(_) => {}
            }
        }
        if !reasons.is_empty() {
            infeasible.push(Infeasible {
                provider: inst.provider,
                instance: inst.id.clone(),
                gpu: inst.gpu.clone(),
                gpu_count: inst.gpu_count,
                mode: None,
                reasons: explain::texts(&reasons),
                reason_codes: reasons,
            });
            continue;
        }
        let tokens = q.job.total_tokens();
        for p in prices {
            // A spot offer's time to finish counts the expected reclaims (issue 15), when the hours
            // are the job's own estimate (not a rental's fixed total).
            let spot = p.mode == BillingMode::Spot && q.job.tokens > 0.0;
            let (hours, spot_restarts) = if spot {
                let h = (q.spot.hours(hours.0, nodes), q.spot.hours(hours.1, nodes));
                (h, Some(q.spot.restarts(hours.1, nodes)))
            } else {
                (hours, None)
            };
            if let Some(r) = q.misses_deadline(hours).filter(|_| spot) {
                let why = vec![r];
                infeasible.push(Infeasible {
                    provider: inst.provider,
                    instance: inst.id.clone(),
                    gpu: inst.gpu.clone(),
                    gpu_count: inst.gpu_count,
                    mode: Some(p.mode),
                    reasons: explain::texts(&why),
                    reason_codes: why,
                });
                continue;
            }
            let mut c = cost_of(p, hours, &q.usage, tokens);
            c.for_nodes(nodes);
            let mut w = Vec::new();
            if let Some(gbps) = cluster.as_ref().map(|c| c.net_gbps).filter(|&g| g < SLOW_LINK_GBPS) {
                w.push(Warning::SlowNodeLink { gbps });
            }
            if p.mode == BillingMode::Spot {
                w.push(Warning::SpotReclaim);
            }
            let age = p.age_days(q.today);
            if age > STALE_PRICE_DAYS {
                w.push(Warning::StalePrice { days: age, as_of: p.as_of });
            }
            match p.confidence {
                Confidence::Estimate => w.push(Warning::EstimatedPrice),
                Confidence::Brief => w.push(Warning::BriefPrice),
                _ => {}
            }
            if p.origin == PriceOrigin::Derived && p.confidence != Confidence::Estimate {
                w.push(Warning::DerivedPrice);
            }
            if gpu.stack == Stack::Ascend {
                w.push(Warning::AscendStack);
            }
            if inst.gpu_count < 1.0 {
                w.push(Warning::VgpuSlice { share: inst.gpu_count, gpu: gpu.name.clone() });
            }
            if q.job.method.is_training() && !gpu.bf16 && gpu.fp16_training {
                w.push(Warning::NoBf16 { gpu: gpu.name.clone() });
            }
            if q.job.method == Method::Inference && gpu.cc().is_some_and(|cc| cc < 7.0) {
                w.push(Warning::VllmComputeCapability);
            }
            if let Some(b) = q.budget_cny {
                if c.cost_high > b {
                    let why = vec![Reason::OverBudget { cost_high: c.cost_high, budget: b }];
                    infeasible.push(Infeasible {
                        provider: inst.provider,
                        instance: inst.id.clone(),
                        gpu: inst.gpu.clone(),
                        gpu_count: inst.gpu_count,
                        mode: Some(p.mode),
                        reasons: explain::texts(&why),
                        reason_codes: why,
                    });
                    continue;
                }
            }
            offers.push(Offer {
                provider: inst.provider,
                instance: inst.id.clone(),
                family: inst.family.clone(),
                gpu: inst.gpu.clone(),
                gpu_name: gpu.name.clone(),
                gpu_count: inst.gpu_count,
                vcpu: inst.vcpu,
                ram_gb: inst.ram_gb,
                region: p.region.clone(),
                mode: p.mode,
                price: c.price,
                fit: f.clone(),
                time: t.clone(),
                hours_low: hours.0,
                hours_high: hours.1,
                calendar_days: q.usage.calendar_days(hours.1),
                terms_high: c.terms_high,
                cost_low: c.cost_low,
                cost_high: c.cost_high,
                cny_per_1m_tokens_low: c.cny_per_1m_tokens_low,
                cny_per_1m_tokens_high: c.cny_per_1m_tokens_high,
                price_age_days: age,
                warnings: w.iter().map(|c| word(&mut worded, c)).collect(),
                warning_codes: w,
                nodes,
                cluster: cluster.clone(),
                spot_restarts,
            });
        }
    }
    // Sort an index, then move each offer once: offers are large, and a sort moves them many times.
    let mut order: Vec<usize> = (0..offers.len()).collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (&offers[i], &offers[j]);
        a.cost_high
            .total_cmp(&b.cost_high)
            .then(a.hours_high.total_cmp(&b.hours_high))
            // Equal estimates: the smaller machine first (estimates scale per GPU and ignore vCPU/RAM).
            .then(a.vcpu.cmp(&b.vcpu))
            .then_with(|| (a.provider, &a.instance, a.mode).cmp(&(b.provider, &b.instance, b.mode)))
    });
    let mut slots: Vec<Option<Offer>> = offers.into_iter().map(Some).collect();
    let offers: Vec<Offer> = order.into_iter().filter_map(|i| slots[i].take()).collect();
    if offers.iter().any(|o| o.mode == BillingMode::Spot) && !warnings.contains(&Warning::SpotReclaim) {
        warnings.push(Warning::SpotReclaim);
    }
    if offers.is_empty() {
        warnings.push(Warning::NoOfferFits);
    }
    note(
        &mut assumptions,
        if q.job.method.is_training() { Assumption::MfuBands } else { Assumption::InferenceTime },
    );
    note(&mut assumptions, Assumption::TermBilling);
    note(&mut assumptions, Assumption::OneInstancePerOffer);
    if offers.iter().any(|o| o.spot_restarts.is_some()) {
        note(&mut assumptions, q.spot.assumption());
    }
    if offers.iter().any(|o| o.nodes > 1) {
        note(
            &mut assumptions,
            Assumption::Clusters {
                link_low_pct: crate::cluster::LINK_EFFICIENCY.0 * 100.0,
                link_high_pct: crate::cluster::LINK_EFFICIENCY.1 * 100.0,
                rdma_low_pct: crate::cluster::RDMA_EFFICIENCY.0 * 100.0,
                rdma_high_pct: crate::cluster::RDMA_EFFICIENCY.1 * 100.0,
                sequences_per_step: crate::cluster::MIN_SEQUENCES_PER_STEP,
                slow_link_gbps: SLOW_LINK_GBPS,
            },
        );
    }
    let price_age = catalog.price_age(q.today);
    Ranking {
        offers,
        infeasible,
        warnings: explain::texts(&warnings),
        warning_codes: warnings,
        assumptions: explain::texts(&assumptions),
        assumption_codes: assumptions,
        price_age: price_age.to_string(),
        price_age_code: price_age,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::parse_date;
    use crate::model::preset;

    fn question(model: &str, method: Method, tokens: f64) -> Question {
        let mut j = Job::new(preset(model).unwrap(), method);
        j.tokens = tokens;
        Question::new(j, parse_date("2026-11-30").unwrap())
    }

    #[test]
    fn seven_b_qlora_ranks_and_p4_is_rejected() {
        let r = rank(Catalog::shipped(), &question("qwen2.5-7b", Method::Qlora4, 50e6));
        assert!(!r.offers.is_empty());
        for w in r.offers.windows(2) {
            assert!(w[0].cost_high <= w[1].cost_high);
        }
        assert!(r.offers.iter().all(|o| o.fit.fits && o.time.unsuitable.is_none()));
        let p4 = r.infeasible.iter().find(|i| i.instance == "GN6S.LARGE20").expect("P4 listed as infeasible");
        assert!(p4.reasons.iter().any(|x| x.contains("unsuitable for training")), "{:?}", p4.reasons);
        assert!(r.offers.iter().any(|o| o.gpu == "t4"), "a 16 GB T4 should be feasible for 7B QLoRA");
        assert!(r.price_age.contains("days old"));
    }

    #[test]
    fn full_7b_rejects_24gb_cards() {
        let r = rank(Catalog::shipped(), &question("llama-2-7b", Method::Full, 10e6));
        assert!(r.offers.iter().filter(|o| o.nodes == 1).all(|o| o.gpu_count > 1.0 || o.fit.vram_gb > 24.0));
        // One A10 cannot hold it: the type is offered only as a cluster sharded over every node.
        let mut one = question("llama-2-7b", Method::Full, 10e6);
        one.nodes = Some(1);
        let r1 = rank(Catalog::shipped(), &one);
        let a10 = r1.infeasible.iter().find(|i| i.instance == "gn7i-c8g1.2xlarge").unwrap();
        assert!(a10.reasons[0].contains("does not fit"), "{:?}", a10.reasons);
        assert!(r1.offers.iter().all(|o| o.nodes == 1 && o.cluster.is_none()));
        let a10 =
            r.offers.iter().find(|o| o.instance == "gn7i-c8g1.2xlarge").expect("a cluster of one-A10 nodes");
        let c = a10.cluster.as_ref().unwrap();
        assert!(a10.nodes > 1 && c.sharding == Sharding::Full && a10.fit.fits, "{a10:?}");
    }

    /// Issue 14's question: a 72B LoRA lists multi-node offers, each billed for every node, with the
    /// communication assumption stated once and slow links marked.
    #[test]
    fn clusters_where_one_node_cannot_and_billed_per_node() {
        let r = rank(Catalog::shipped(), &question("qwen2.5-72b", Method::Lora, 500e6));
        let clusters: Vec<&Offer> = r.offers.iter().filter(|o| o.nodes > 1).collect();
        assert!(clusters.len() >= 5, "{} multi-node offers", clusters.len());
        for o in &clusters {
            let c = o.cluster.as_ref().unwrap();
            assert_eq!(c.nodes, o.nodes);
            assert!(o.fit.fits && o.hours_low <= o.hours_high && o.hours_low > 0.0, "{o:?}");
            assert_eq!(o.time.gpus, o.gpu_count * f64::from(o.nodes));
            if o.mode.is_per_hour() {
                let want = o.price.cny * o.hours_high * f64::from(o.nodes);
                assert!((o.cost_high - want).abs() < 1e-6 * want, "{} vs {want}", o.cost_high);
            }
            let slow = o.warning_codes.iter().any(|w| matches!(w, Warning::SlowNodeLink { .. }));
            assert_eq!(slow, c.net_gbps < SLOW_LINK_GBPS, "{o:?}");
            // The fewest nodes: one node fewer would not hold the job.
            let mut fewer = question("qwen2.5-72b", Method::Lora, 500e6);
            fewer.nodes = Some(o.nodes - 1);
            fewer.providers = vec![o.provider];
            if o.nodes > 2 {
                let r2 = rank(Catalog::shipped(), &fewer);
                assert!(
                    !r2.offers.iter().any(|x| x.instance == o.instance),
                    "{} fits on {} nodes",
                    o.instance,
                    o.nodes - 1
                );
            }
        }
        assert!(r.assumption_codes.iter().any(|a| matches!(a, Assumption::Clusters { .. })));
        // A model every whole GPU holds: no clusters, no cluster assumption.
        let small = rank(Catalog::shipped(), &question("bert-base", Method::Lora, 50e6));
        assert!(small.offers.iter().all(|o| o.nodes == 1));
        assert!(!small.assumption_codes.iter().any(|a| matches!(a, Assumption::Clusters { .. })));
    }

    /// `nodes = Some(n)` asks for exactly n nodes of every type; a type with no published network
    /// bandwidth cannot be timed as a cluster and says so.
    #[test]
    fn asked_node_counts_are_kept_and_unknown_networks_refused() {
        let mut q = question("qwen2.5-7b", Method::Lora, 50e6);
        q.nodes = Some(3);
        let r = rank(Catalog::shipped(), &q);
        assert!(!r.offers.is_empty());
        assert!(r.offers.iter().all(|o| o.nodes == 3 && o.cluster.as_ref().is_some_and(|c| c.nodes == 3)));
        // One A100 holds a 7B LoRA: each node keeps a replica.
        let a100 = r.offers.iter().find(|o| o.gpu == "a100-sxm4-80g").unwrap();
        assert_eq!(a100.cluster.as_ref().unwrap().sharding, Sharding::Hybrid);
        let no_net = Catalog::shipped()
            .instance_types()
            .iter()
            .find(|i| {
                i.net_gbps.is_none() && i.rdma_gbps.is_none() && i.gpu_count >= 1.0 && i.restricted.is_none()
            })
            .expect("a type without a network figure");
        let why = r.infeasible.iter().find(|i| i.instance == no_net.id).expect("listed as infeasible");
        assert!(why.reason_codes.contains(&Reason::NoNetworkFigure), "{why:?}");
    }

    #[test]
    fn budget_and_deadline_filter() {
        let mut q = question("llama-2-7b", Method::Lora, 100e6);
        q.budget_cny = Some(500.0);
        q.deadline_hours = Some(48.0);
        let r = rank(Catalog::shipped(), &q);
        assert!(r.offers.iter().all(|o| o.cost_high <= 500.0 && o.hours_high <= 48.0));
        assert!(r.infeasible.iter().any(|i| i.reasons.iter().any(|x| x.contains("over budget"))));
        assert!(r.infeasible.iter().any(|i| i.reasons.iter().any(|x| x.contains("deadline"))));
    }

    #[test]
    fn software_needs_make_gpus_infeasible() {
        let mut q = question("qwen2.5-7b", Method::Inference, 1e6);
        q.compat.frameworks = vec!["vllm".into()];
        let r = rank(Catalog::shipped(), &q);
        assert!(r.offers.iter().all(|o| o.gpu != "p4" && o.gpu != "p40"));
        let p40 = r.infeasible.iter().find(|i| i.gpu == "p40").unwrap();
        assert!(p40.reasons.iter().any(|x| x.contains("vLLM needs compute capability")), "{:?}", p40.reasons);
    }

    #[test]
    fn filters_narrow_the_offers() {
        let mut q = question("qwen2.5-7b", Method::Lora, 10e6);
        q.providers = vec![Provider::Alibaba];
        q.modes = vec![BillingMode::Hourly];
        q.gpus = vec!["a10".into()];
        let r = rank(Catalog::shipped(), &q);
        assert!(!r.offers.is_empty());
        assert!(r
            .offers
            .iter()
            .all(|o| o.provider == Provider::Alibaba && o.mode == BillingMode::Hourly && o.gpu == "a10"));
    }
}
