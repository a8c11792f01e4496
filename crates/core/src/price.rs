//! Price: what a job costs under each billing mode, given how the team really uses the GPUs.
//!
//! Per-hour modes (hourly, spot) bill the hours the job runs; term modes (weekly, monthly, 1-year,
//! 3-year) bill whole terms for the calendar time the work spans (hours ÷ hours-per-day). Break-even
//! points say from how much use a longer term beats a shorter one.

use serde::{Deserialize, Serialize};

use crate::catalog::{BillingMode, Price};

/// How the GPUs are used: a number of hours in total, spread over days at some hours per day.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Hours of GPU work per calendar day (24 = run straight through; 2 = two hours a day, released in between).
    pub hours_per_day: f64,
    /// Total hours of work. `None` = as long as the job's time estimate says.
    #[serde(default)]
    pub total_hours: Option<f64>,
}

impl Default for Usage {
    fn default() -> Self {
        Usage { hours_per_day: 24.0, total_hours: None }
    }
}

impl Usage {
    /// `hours_per_day` for `days` days.
    pub fn daily(hours_per_day: f64, days: f64) -> Usage {
        Usage { hours_per_day, total_hours: Some(hours_per_day * days) }
    }
    /// Straight through for `hours`.
    pub fn hours(hours: f64) -> Usage {
        Usage { hours_per_day: 24.0, total_hours: Some(hours) }
    }
    /// Calendar days spanned by `hours` of work.
    pub fn calendar_days(&self, hours: f64) -> f64 {
        hours / self.hours_per_day.clamp(1e-9, 24.0)
    }
}

/// The cost of some hours of work under one billing mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeCost {
    pub mode: BillingMode,
    pub price: Price,
    /// Terms billed for the low and high hour estimates (hours for per-hour modes).
    pub terms_low: f64,
    pub terms_high: f64,
    pub cost_low: f64,
    pub cost_high: f64,
    /// ¥ per million tokens processed, when tokens are known.
    pub cny_per_1m_tokens_low: Option<f64>,
    pub cny_per_1m_tokens_high: Option<f64>,
}

impl ModeCost {
    /// The same mode for a cluster of `nodes` instances: every node bills the same way, so the costs
    /// (and ¥ per million tokens, the cluster processing the same tokens) scale with the node count.
    pub fn for_nodes(&mut self, nodes: u32) {
        let n = f64::from(nodes);
        self.cost_low *= n;
        self.cost_high *= n;
        self.cny_per_1m_tokens_low = self.cny_per_1m_tokens_low.map(|x| x * n);
        self.cny_per_1m_tokens_high = self.cny_per_1m_tokens_high.map(|x| x * n);
    }
}

/// From how much use a longer billing term is cheaper than a shorter one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakEven {
    pub longer: BillingMode,
    pub shorter: BillingMode,
    /// The longer term wins above this much use of the shorter unit within one longer term.
    pub threshold: f64,
    /// Unit of `threshold`: "hours per week", "hours per month", "weeks per month", "months per year", "years".
    pub unit: String,
    pub text: String,
}

/// Costs per mode, the cheapest, and break-even points, for one instance in one region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobPrice {
    /// Sorted by `cost_high`.
    pub modes: Vec<ModeCost>,
    pub cheapest: Option<BillingMode>,
    pub break_even: Vec<BreakEven>,
    pub warnings: Vec<String>,
}

/// Terms of `mode` billed for `hours` of work at `usage.hours_per_day`.
pub fn terms_for(mode: BillingMode, hours: f64, usage: &Usage) -> f64 {
    if mode.is_per_hour() {
        return hours;
    }
    let calendar_hours = usage.calendar_days(hours) * 24.0;
    (calendar_hours / mode.term_hours() - 1e-9).ceil().max(1.0)
}

/// Terms of `mode` billed for `hours` of work when at least `min_terms` terms are bought up front
/// (a prepaid order names its term count: 3 months bought are 3 months billed even if the work takes
/// one). Per-hour modes bill the hours and ignore `min_terms`. `terms_for` is this with a minimum of one
/// term; a deployment plan passes its pool's `term`, so every total the engine gives for a pool comes
/// from this one rule.
pub fn terms_bought(mode: BillingMode, hours: f64, usage: &Usage, min_terms: u32) -> f64 {
    let terms = terms_for(mode, hours, usage);
    if mode.is_per_hour() {
        terms
    } else {
        terms.max(f64::from(min_terms))
    }
}

/// Cost of one price for `hours` (low, high) of work.
pub fn cost_of(price: &Price, hours: (f64, f64), usage: &Usage, tokens: f64) -> ModeCost {
    let terms_low = terms_for(price.mode, hours.0, usage);
    let terms_high = terms_for(price.mode, hours.1, usage);
    let cost_low = terms_low * price.cny;
    let cost_high = terms_high * price.cny;
    let per_m = |c: f64| (tokens > 0.0).then(|| c / (tokens / 1e6));
    ModeCost {
        mode: price.mode,
        price: price.clone(),
        terms_low,
        terms_high,
        cost_low,
        cost_high,
        cny_per_1m_tokens_low: per_m(cost_low),
        cny_per_1m_tokens_high: per_m(cost_high),
    }
}

/// Break-even points between the modes present in `prices` (one instance, one region).
pub fn break_even(prices: &[&Price]) -> Vec<BreakEven> {
    let get = |m: BillingMode| prices.iter().find(|p| p.mode == m).map(|p| p.cny);
    let pairs = [
        (BillingMode::Weekly, BillingMode::Hourly, "hours per week"),
        (BillingMode::Monthly, BillingMode::Hourly, "hours per month"),
        (BillingMode::Monthly, BillingMode::Weekly, "weeks per month"),
        (BillingMode::Year1, BillingMode::Monthly, "months per year"),
        (BillingMode::Year3, BillingMode::Year1, "years"),
    ];
    pairs
        .iter()
        .filter_map(|&(longer, shorter, unit)| {
            let (l, s) = (get(longer)?, get(shorter)?);
            let threshold = l / s;
            let text = format!(
                "{longer} (¥{}/{}) beats {shorter} (¥{}/{}) above {threshold:.1} {unit}",
                money(l),
                longer.unit(),
                money(s),
                shorter.unit()
            );
            Some(BreakEven { longer, shorter, threshold, unit: unit.to_string(), text })
        })
        .collect()
}

/// Cost of `hours` (low, high) of work under every mode in `prices` (one instance, one region).
pub fn price_job(prices: &[&Price], hours: (f64, f64), usage: &Usage, tokens: f64) -> JobPrice {
    let mut modes: Vec<ModeCost> = prices.iter().map(|p| cost_of(p, hours, usage, tokens)).collect();
    modes.sort_by(|a, b| a.cost_high.total_cmp(&b.cost_high).then(a.mode.cmp(&b.mode)));
    let mut warnings = Vec::new();
    if prices.iter().any(|p| p.mode == BillingMode::Spot) {
        warnings.push(SPOT_WARNING.to_string());
    }
    JobPrice { cheapest: modes.first().map(|m| m.mode), break_even: break_even(prices), modes, warnings }
}

/// ¥ amounts for text: two decimals below 100, whole yuan with thousands separators above.
pub fn money(v: f64) -> String {
    if v.abs() < 100.0 {
        return format!("{v:.2}");
    }
    let s = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Shown wherever a spot price is offered.
pub const SPOT_WARNING: &str =
    "spot instances can be reclaimed at any time (typically with ~5 minutes' notice): checkpoint often and expect restarts";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Catalog, Provider};

    fn gn7i() -> Vec<&'static Price> {
        Catalog::shipped().prices_for(Provider::Alibaba, "gn7i-c8g1.2xlarge", "cn-shanghai")
    }

    #[test]
    fn bursty_use_favours_hourly_and_steady_use_favours_terms() {
        let ps = gn7i();
        // 2 h/day for 10 days: 20 h of pay-as-you-go beats a week or a month.
        let u = Usage::daily(2.0, 10.0);
        let jp = price_job(&ps, (20.0, 20.0), &u, 0.0);
        let hourly = jp.modes.iter().find(|m| m.mode == BillingMode::Hourly).unwrap();
        assert_eq!(hourly.cost_high, 20.0 * 9.74);
        assert!(matches!(jp.cheapest, Some(BillingMode::Hourly | BillingMode::Spot)));
        // 24 h/day for 30 days: the month wins over hourly.
        let u = Usage::hours(720.0);
        let jp = price_job(&ps, (720.0, 720.0), &u, 0.0);
        let cost = |m| jp.modes.iter().find(|c| c.mode == m).unwrap().cost_high;
        assert!(cost(BillingMode::Monthly) < cost(BillingMode::Hourly));
        assert_eq!(cost(BillingMode::Monthly), 4675.66);
        assert!(jp.warnings[0].contains("reclaimed"));
    }

    #[test]
    fn break_even_between_hourly_and_monthly() {
        let be = break_even(&gn7i());
        let m =
            be.iter().find(|b| b.longer == BillingMode::Monthly && b.shorter == BillingMode::Hourly).unwrap();
        // 4,675.66 / 9.74 = 480.05 hours per month.
        assert!((m.threshold - 480.05).abs() < 0.01, "{}", m.text);
        // Check it really is the break-even: just below, hourly is cheaper; just above, monthly.
        let u = Usage::hours(730.0);
        let below = price_job(&gn7i(), (479.0, 479.0), &u, 0.0);
        let above = price_job(&gn7i(), (481.0, 481.0), &u, 0.0);
        let cost = |jp: &JobPrice, m| jp.modes.iter().find(|c| c.mode == m).unwrap().cost_high;
        assert!(cost(&below, BillingMode::Hourly) < cost(&below, BillingMode::Monthly));
        assert!(cost(&above, BillingMode::Hourly) > cost(&above, BillingMode::Monthly));
    }

    #[test]
    fn terms_round_up_over_calendar_time() {
        for (mode, hours, hpd, want) in [
            (BillingMode::Weekly, 20.0, 2.0, 2.0),   // 10 days → 2 weeks
            (BillingMode::Weekly, 168.0, 24.0, 1.0), // exactly one week
            (BillingMode::Monthly, 20.0, 2.0, 1.0),
            (BillingMode::Year3, 100.0, 24.0, 1.0),
            (BillingMode::Hourly, 20.5, 2.0, 20.5),
        ] {
            let u = Usage { hours_per_day: hpd, total_hours: None };
            assert_eq!(terms_for(mode, hours, &u), want, "{mode} {hours} h at {hpd} h/day");
        }
    }

    #[test]
    fn terms_bought_keep_the_prepaid_minimum() {
        let straight = Usage::hours(0.0);
        // Three months bought: three billed, however short the work, and more when it runs longer.
        assert_eq!(terms_bought(BillingMode::Monthly, 10.0, &straight, 3), 3.0);
        assert_eq!(terms_bought(BillingMode::Monthly, 4.0 * 730.0, &straight, 3), 4.0);
        // No minimum beyond one term, as `terms_for` bills.
        assert_eq!(terms_bought(BillingMode::Weekly, 10.0, &straight, 0), 1.0);
        assert_eq!(
            terms_bought(BillingMode::Weekly, 200.0, &straight, 1),
            terms_for(BillingMode::Weekly, 200.0, &straight)
        );
        // Per-hour modes bill hours, never a term count.
        assert_eq!(terms_bought(BillingMode::Hourly, 2.5, &straight, 3), 2.5);
        assert_eq!(terms_bought(BillingMode::Spot, 7.0, &straight, 12), 7.0);
    }

    #[test]
    fn cost_per_million_tokens() {
        let ps = gn7i();
        let hourly = ps.iter().find(|p| p.mode == BillingMode::Hourly).unwrap();
        let c = cost_of(hourly, (10.0, 20.0), &Usage::default(), 50e6);
        assert_eq!(c.cny_per_1m_tokens_low, Some(97.4 / 50.0));
        assert_eq!(c.cny_per_1m_tokens_high, Some(194.8 / 50.0));
    }
}
