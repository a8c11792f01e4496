//! Stages: the staged rollout (阶梯式部署) — validate cheaply, tune the real job, then produce
//! (serve) on a long term. Each stage is a ranked question; its answer is the cheapest offer.

use serde::{Deserialize, Serialize};

use crate::catalog::{BillingMode, Catalog};
use crate::explain::{self, Assumption};
use crate::fit::Method;
use crate::price::Usage;
use crate::rank::{rank, Offer, Question};

/// One stage of the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// "validate", "tune" or "produce".
    pub name: String,
    pub purpose: String,
    /// The question this stage asked the ranker.
    pub question: Question,
    /// The cheapest feasible offer, if any.
    pub offer: Option<Offer>,
    /// Runner-up offers from other providers (for fallback).
    pub alternatives: Vec<Offer>,
    pub why: String,
}

/// The whole staged plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StagePlan {
    pub stages: Vec<Stage>,
    pub total_cost_high: f64,
    /// The English text of each of `assumption_codes`.
    pub assumptions: Vec<String>,
    pub assumption_codes: Vec<Assumption>,
}

/// Share of the training tokens the validation stage runs.
pub const VALIDATE_SHARE: f64 = 0.01;
/// Days of serving the produce stage prices.
pub const PRODUCE_DAYS: f64 = 30.0;

/// Build the plan for `q` (its job is the stage-2 "tune" job).
pub fn stages(catalog: &Catalog, q: &Question) -> StagePlan {
    let mut out = Vec::new();

    // 1. Validate: QLoRA-4 on 1 % of the data (≥ 1 hour), pay-as-you-go, released after.
    let mut v = q.clone();
    v.job.method = if q.job.method == Method::Inference { Method::Inference } else { Method::Qlora4 };
    v.job.tokens = (q.job.tokens * VALIDATE_SHARE).max(0.0);
    v.job.epochs = 1.0;
    v.modes = vec![BillingMode::Hourly];
    v.deadline_hours = None;
    v.budget_cny = None;
    if v.job.tokens <= 0.0 {
        v.usage = Usage::hours(4.0);
    }
    out.push(stage(
        catalog,
        "validate",
        "check the pipeline end to end on the cheapest card that fits: QLoRA-4, 1 % of the data, pay-as-you-go with auto-release",
        v,
    ));

    // 2. Tune: the job as asked, every billing mode.
    out.push(stage(
        catalog,
        "tune",
        "the real fine-tune, on the cheapest offer that meets the deadline and budget",
        q.clone(),
    ));

    // 3. Produce: serve the tuned model 24 h/day for a month.
    let mut p = q.clone();
    p.job.method = Method::Inference;
    p.job.tokens = 0.0;
    p.usage = Usage::hours(PRODUCE_DAYS * 24.0);
    p.modes = vec![];
    p.no_spot = true;
    p.deadline_hours = None;
    p.budget_cny = None;
    p.gpu_count = None;
    out.push(stage(
        catalog,
        "produce",
        "serve the tuned model around the clock for a month (longer terms win here; spot excluded)",
        p,
    ));

    let total_cost_high = out.iter().filter_map(|s| s.offer.as_ref()).map(|o| o.cost_high).sum();
    let assumption_codes = vec![
        Assumption::ValidateShare { pct: VALIDATE_SHARE * 100.0 },
        Assumption::ProduceDays { days: PRODUCE_DAYS },
        Assumption::BuySameConfig,
    ];
    StagePlan {
        stages: out,
        total_cost_high,
        assumptions: explain::texts(&assumption_codes),
        assumption_codes,
    }
}

fn stage(catalog: &Catalog, name: &str, purpose: &str, q: Question) -> Stage {
    let r = rank(catalog, &q);
    let mut offers = r.offers.into_iter();
    let offer = offers.next();
    let alternatives: Vec<Offer> = match &offer {
        Some(best) => offers.filter(|o| o.provider != best.provider).take(2).collect(),
        None => vec![],
    };
    let why = match &offer {
        Some(o) => {
            let (lo, hi) = (crate::price::money(o.cost_low), crate::price::money(o.cost_high));
            let cost = if lo == hi { format!("¥{hi}") } else { format!("¥{lo}–{hi}") };
            format!(
                "{} {} ({} × {}) {} in {}: {cost}",
                o.provider, o.instance, o.gpu_count, o.gpu_name, o.mode, o.region
            )
        }
        None => "no offer fits this stage".into(),
    };
    Stage { name: name.into(), purpose: purpose.into(), question: q, offer, alternatives, why }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::parse_date;
    use crate::fit::Job;
    use crate::model::preset;

    #[test]
    fn three_stages_each_with_an_offer() {
        let mut j = Job::new(preset("qwen2.5-7b").unwrap(), Method::Lora);
        j.tokens = 50e6;
        j.epochs = 3.0;
        let q = Question::new(j, parse_date("2026-11-30").unwrap());
        let plan = stages(Catalog::shipped(), &q);
        let names: Vec<_> = plan.stages.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["validate", "tune", "produce"]);
        for s in &plan.stages {
            assert!(s.offer.is_some(), "{}: {}", s.name, s.why);
        }
        let v = plan.stages[0].offer.as_ref().unwrap();
        assert_eq!(v.mode, BillingMode::Hourly);
        assert!(v.cost_high < plan.stages[1].offer.as_ref().unwrap().cost_high);
        assert_ne!(plan.stages[2].offer.as_ref().unwrap().mode, BillingMode::Spot);
    }
}
