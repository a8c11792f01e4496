//! `gpuctl cost` (issue 15): the bill against the estimate. For one calendar month (UTC+8, as the
//! clouds bill), each instance gpuctl recorded that lived in it gets its **estimate** — the ¥/hour
//! recorded at creation × the hours it lived in the month — beside what the cloud **billed** for it
//! (the sum of its bill lines, `Cloud::bill_lines`), the difference and what explains it where the
//! lines say (the discount: list − billed; hours not billed yet). Lines for resources gpuctl never
//! recorded (someone else's instances, or disks, traffic and snapshots gpuctl did not estimate) are
//! listed apart as untracked; every line is counted once, so the report's billed total is the sum of
//! the cloud's lines, exactly (`Amount` is integer 10⁻⁸ CNY).
//!
//! Settlement rules — *assumptions*, as no cloud documents its lag (docs/research/cost-control.md §5):
//! a line appears some time after the hour it bills; a month is `open` until it ends, `settling`
//! while any recorded hour of it is not billed yet or for [`CLOSE_AFTER`] after it ends, and `settled`
//! after that with every recorded hour billed.
//!
//! Budgets: a deployment's `budget.monthly_cny` (kept in the state store) is held against the billed
//! sum and against billed + the estimate of the hours not billed yet; either over it is reported.

use std::collections::{BTreeMap, BTreeSet};

use gpuctl_cloud::cost::{Amount, BillLine, BillQuery};
use jiff::tz::{Offset, TimeZone};
use jiff::{SignedDuration, Timestamp};

use crate::apply::{ApplyError, Engine};
use crate::provider::Provider;
use crate::state::{ReclaimRecord, Resource, ResourceState};

/// How long after a month ends before gpuctl calls it settled once every recorded hour is billed.
/// *Assumption:* one day, the local cloud's default settlement lag; no cloud documents when a month closes.
pub const CLOSE_AFTER: SignedDuration = SignedDuration::from_hours(24);

/// How far gpuctl's recorded times may be from the cloud's for the same event (the call's latency).
/// *Assumption:* a minute; a gap under it between the recorded life and the lines is not "unbilled".
pub const CLOCK_SLACK_HOURS: f64 = 1.0 / 60.0;

/// A calendar month in UTC+8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Month {
    pub year: i16,
    pub month: i8,
}

fn china() -> TimeZone {
    TimeZone::fixed(Offset::constant(8))
}

impl Month {
    /// `YYYY-MM`; an error in words otherwise.
    pub fn parse(s: &str) -> Result<Month, String> {
        let bad = || format!("`{s}` is not a month; write YYYY-MM, e.g. 2026-12");
        let (y, m) = s.split_once('-').ok_or_else(bad)?;
        if y.len() != 4 || m.len() != 2 || !y.bytes().chain(m.bytes()).all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let (year, month) = (y.parse::<i16>().map_err(|_| bad())?, m.parse::<i8>().map_err(|_| bad())?);
        if !(1..=12).contains(&month) || year < 2000 {
            return Err(bad());
        }
        Ok(Month { year, month })
    }

    pub fn of(t: Timestamp) -> Month {
        let d = t.to_zoned(china()).date();
        Month { year: d.year(), month: d.month() }
    }

    pub fn start(self) -> Timestamp {
        jiff::civil::date(self.year, self.month, 1)
            .to_zoned(china())
            .map(|z| z.timestamp())
            .unwrap_or(Timestamp::MIN)
    }

    pub fn end(self) -> Timestamp {
        let next = if self.month == 12 {
            Month { year: self.year + 1, month: 1 }
        } else {
            Month { year: self.year, month: self.month + 1 }
        };
        next.start()
    }
}

impl std::fmt::Display for Month {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

impl serde::Serialize for Month {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Where a month's bill stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Settlement {
    /// The month has not ended: more lines will come.
    Open,
    /// Ended, but recorded hours are not billed yet or the month ended less than [`CLOSE_AFTER`] ago.
    Settling,
    /// Ended, every recorded hour billed, and [`CLOSE_AFTER`] past its end.
    Settled,
}

impl Settlement {
    pub fn as_str(self) -> &'static str {
        match self {
            Settlement::Open => "open",
            Settlement::Settling => "settling",
            Settlement::Settled => "settled",
        }
    }
}

/// One recorded instance in the month: the estimate beside the bill.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ResourceCost {
    pub deployment: String,
    pub pool: String,
    pub provider: Provider,
    pub region: String,
    pub instance_id: String,
    pub instance_type: String,
    pub billing: gpuctl_core::BillingMode,
    /// The ¥/hour recorded at creation (`None`: no price was known, so no estimate).
    pub price_cny_per_hour: Option<f64>,
    /// Hours it lived in the month (created or running → released, or now).
    pub hours: f64,
    /// ¥/hour × hours, to 10⁻⁸.
    pub estimated_cny: Option<Amount>,
    /// The sum of its bill lines: what the cloud billed.
    pub billed_cny: Amount,
    /// The sum of its lines' list amounts (before discounts), where the lines say.
    pub list_cny: Amount,
    /// list − billed: what the account's discount took off.
    pub discount_cny: Amount,
    /// billed − estimated (negative: billed less than estimated so far).
    pub difference_cny: Option<Amount>,
    pub lines: usize,
    /// Hours it lived in the month that no line covers yet (lines lag the hours they bill).
    pub unbilled_hours: f64,
    /// Whether every hour it lived in the month is billed.
    pub settled: bool,
    /// What explains the difference, in words.
    pub notes: Vec<String>,
}

/// Bill lines of one resource gpuctl did not record (or a line with no resource).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Untracked {
    pub provider: Provider,
    pub resource_id: String,
    pub product: String,
    pub billed_cny: Amount,
    pub lines: usize,
}

/// A deployment's monthly budget held to the month's bill.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BudgetCheck {
    pub deployment: String,
    pub monthly_cny: f64,
    pub billed_cny: Amount,
    /// billed + the estimate of the hours not billed yet.
    pub billed_and_unbilled_cny: Amount,
    /// Billed alone is over the budget.
    pub exceeded: bool,
    /// Billed + unbilled is over it (a warning while the month is open or settling).
    pub forecast_exceeded: bool,
}

/// A cloud whose bill could not be read (the rest of the report stands).
#[derive(Debug, Clone, serde::Serialize)]
pub struct BillError {
    pub provider: Provider,
    pub region: String,
    pub error: String,
    pub code: Option<String>,
    pub request_id: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct CostReport {
    pub month: Month,
    pub deployment: Option<String>,
    pub now: Timestamp,
    pub settlement: Settlement,
    pub resources: Vec<ResourceCost>,
    pub untracked: Vec<Untracked>,
    /// Sum of every line read (tracked and untracked): the bill's total for what was asked.
    pub billed_cny: Amount,
    /// Sum of the tracked resources' lines.
    pub tracked_billed_cny: Amount,
    pub untracked_billed_cny: Amount,
    pub estimated_cny: Amount,
    /// Number of bill lines read.
    pub lines: usize,
    pub budgets: Vec<BudgetCheck>,
    /// Spot instances the clouds reclaimed in the month (seen gone in it), as `status` shows them.
    pub reclaims: Vec<ReclaimRecord>,
    pub errors: Vec<BillError>,
    pub assumptions: Vec<String>,
}

impl CostReport {
    /// Whether any deployment's billed sum is over its monthly budget (the CLI exits non-zero).
    pub fn over_budget(&self) -> bool {
        self.budgets.iter().any(|b| b.exceeded)
    }
}

/// The span `[from, to)` of `r`'s life inside `[a, b)`, in hours (0 when none).
fn hours_within(from: Timestamp, to: Timestamp, a: Timestamp, b: Timestamp) -> f64 {
    let (x, y) = (from.max(a), to.min(b));
    if x >= y {
        0.0
    } else {
        y.duration_since(x).as_secs_f64() / 3600.0
    }
}

/// When `r` started and stopped billing as gpuctl recorded it (`None` for one that never ran).
/// `gone` is when gpuctl saw a reclaimed instance gone (`reclaims.seen_gone_at`), by client token.
pub fn lifetime(
    r: &Resource,
    now: Timestamp,
    gone: &BTreeMap<String, Timestamp>,
) -> Option<(Timestamp, Timestamp)> {
    r.instance_id.as_ref()?;
    if r.state == ResourceState::Failed {
        return None;
    }
    let end = match (r.released_at, gone.get(&r.client_token)) {
        (Some(t), _) => t,
        // Reclaimed by the cloud: billed until it was gone, at the latest when gpuctl saw it gone.
        (None, Some(t)) => *t,
        (None, None) if r.state.is_live() => now,
        // Gone without a recorded end: its last known time is all there is.
        (None, None) => r.running_at.unwrap_or(r.created_at),
    };
    Some((r.created_at, end.max(r.created_at)))
}

/// Pure: the report from the records, each provider's lines, the budgets and now.
#[allow(clippy::too_many_arguments)]
pub fn reconcile(
    month: Month,
    deployment: Option<&str>,
    recorded: &[Resource],
    reclaims: Vec<ReclaimRecord>,
    lines: &[(Provider, BillLine)],
    budgets: &BTreeMap<String, f64>,
    errors: Vec<BillError>,
    now: Timestamp,
) -> CostReport {
    let gone: BTreeMap<String, Timestamp> =
        reclaims.iter().map(|r| (r.client_token.clone(), r.seen_gone_at)).collect();
    let (m_start, m_end) = (month.start(), month.end());
    let mut by_id: BTreeMap<(Provider, &str), Vec<&BillLine>> = BTreeMap::new();
    for (p, l) in lines {
        by_id.entry((*p, l.resource_id.as_str())).or_default().push(l);
    }
    let mut claimed: BTreeSet<(Provider, &str)> = BTreeSet::new();
    let mut resources = Vec::new();
    for r in recorded {
        let Some((from, to)) = lifetime(r, now, &gone) else { continue };
        let hours = hours_within(from, to, m_start, m_end);
        let id = r.instance_id.as_deref().unwrap_or_default();
        let own = by_id.get(&(r.provider, id)).cloned().unwrap_or_default();
        if hours <= 0.0 && own.is_empty() {
            continue;
        }
        claimed.insert((r.provider, id));
        let billed: Amount = own.iter().map(|l| parse_or_zero(&l.billed_cny)).sum();
        let list: Amount = own
            .iter()
            .map(|l| l.list_cny.as_deref().map_or_else(|| parse_or_zero(&l.billed_cny), parse_or_zero))
            .sum();
        // Hours the lines cover, inside the month and the recorded life; a line that states only a
        // duration (Alibaba's `ServicePeriod`: a cycle's or day's use, already inside the month) covers that.
        let covered: f64 = own
            .iter()
            .filter_map(|l| match (l.start, l.end) {
                (Some(a), Some(b)) => Some(hours_within(a, b, from.max(m_start), to.min(m_end))),
                _ => l.billed_seconds.map(|s| s as f64 / 3600.0),
            })
            .sum();
        let term = matches!(
            r.billing,
            gpuctl_core::BillingMode::Weekly
                | gpuctl_core::BillingMode::Monthly
                | gpuctl_core::BillingMode::Year1
                | gpuctl_core::BillingMode::Year3
        );
        let unbilled_hours = if term && !own.is_empty() { 0.0 } else { (hours - covered).max(0.0) };
        // gpuctl records a create or release when the cloud answers, the cloud bills from its own
        // clock: up to a minute apart is the same hour billed, not an hour missing.
        let unbilled_hours =
            if unbilled_hours < CLOCK_SLACK_HOURS { 0.0 } else { (unbilled_hours * 1e6).round() / 1e6 };
        let estimated = r.price_cny_per_hour.map(|p| Amount::from_f64(p * hours));
        let discount = list - billed;
        let mut notes = Vec::new();
        if discount.0 != 0 {
            notes.push(format!("the account's discount took ¥{} off the list price", discount.exact_text()));
        }
        if unbilled_hours > 0.0 {
            notes.push(format!(
                "{unbilled_hours:.2} h lived this month are not billed yet (lines lag the hours they bill)"
            ));
        }
        if term {
            notes.push("a prepaid term is billed once, up front, in the month it was bought".into());
        }
        if estimated.is_none() {
            notes.push("no price was recorded at creation, so there is no estimate".into());
        }
        if let Some(rc) = reclaims.iter().find(|c| c.client_token == r.client_token) {
            notes.push(format!(
                "reclaimed by the cloud (seen gone {}): {:.2} h of work lost",
                rc.seen_gone_at,
                rc.lost_hours()
            ));
        }
        resources.push(ResourceCost {
            deployment: r.deployment.clone(),
            pool: r.pool.clone(),
            provider: r.provider,
            region: r.region.clone(),
            instance_id: id.to_string(),
            instance_type: r.instance_type.clone(),
            billing: r.billing,
            price_cny_per_hour: r.price_cny_per_hour,
            hours: (hours * 1e6).round() / 1e6,
            estimated_cny: estimated,
            billed_cny: billed,
            list_cny: list,
            discount_cny: discount,
            difference_cny: estimated.map(|e| billed - e),
            lines: own.len(),
            unbilled_hours,
            settled: unbilled_hours == 0.0,
            notes,
        });
    }
    let mut untracked_map: BTreeMap<(Provider, String), Untracked> = BTreeMap::new();
    for (p, l) in lines {
        if claimed.contains(&(*p, l.resource_id.as_str())) {
            continue;
        }
        let u = untracked_map.entry((*p, l.resource_id.clone())).or_insert_with(|| Untracked {
            provider: *p,
            resource_id: l.resource_id.clone(),
            product: l.product.clone(),
            billed_cny: Amount::ZERO,
            lines: 0,
        });
        u.billed_cny = u.billed_cny + parse_or_zero(&l.billed_cny);
        u.lines += 1;
    }
    // A deployment's report lists only its own resources; the account's other lines are not its.
    let untracked: Vec<Untracked> =
        if deployment.is_some() { Vec::new() } else { untracked_map.into_values().collect() };
    let tracked_billed: Amount = resources.iter().map(|r| r.billed_cny).sum();
    let untracked_billed: Amount = untracked.iter().map(|u| u.billed_cny).sum();
    let estimated: Amount = resources.iter().filter_map(|r| r.estimated_cny).sum();
    let line_count =
        resources.iter().map(|r| r.lines).sum::<usize>() + untracked.iter().map(|u| u.lines).sum::<usize>();
    let settlement = if now < m_end {
        Settlement::Open
    } else if resources.iter().all(|r| r.settled) && now >= m_end + CLOSE_AFTER && errors.is_empty() {
        Settlement::Settled
    } else {
        Settlement::Settling
    };
    let mut budget_checks = Vec::new();
    for (dep, cap) in budgets {
        let mine: Vec<&ResourceCost> = resources.iter().filter(|r| &r.deployment == dep).collect();
        let billed: Amount = mine.iter().map(|r| r.billed_cny).sum();
        let unbilled: Amount = mine
            .iter()
            .filter_map(|r| r.price_cny_per_hour.map(|p| Amount::from_f64(p * r.unbilled_hours)))
            .sum();
        let cap_amount = Amount::from_f64(*cap);
        budget_checks.push(BudgetCheck {
            deployment: dep.clone(),
            monthly_cny: *cap,
            billed_cny: billed,
            billed_and_unbilled_cny: billed + unbilled,
            exceeded: billed > cap_amount,
            forecast_exceeded: billed + unbilled > cap_amount,
        });
    }
    CostReport {
        month,
        deployment: deployment.map(str::to_string),
        now,
        settlement,
        resources,
        untracked,
        billed_cny: tracked_billed + untracked_billed,
        tracked_billed_cny: tracked_billed,
        untracked_billed_cny: untracked_billed,
        estimated_cny: estimated,
        lines: line_count,
        budgets: budget_checks,
        reclaims: reclaims.into_iter().filter(|r| Month::of(r.seen_gone_at) == month).collect(),
        errors,
        assumptions: vec![
            "months and billing hours are UTC+8, as the three clouds bill".into(),
            format!(
                "no cloud documents when its lines appear or a month closes: a month is called settled once every recorded hour is billed and {} h have passed since it ended",
                CLOSE_AFTER.as_hours()
            ),
            "the estimate is the ¥/hour recorded at creation × the hours gpuctl recorded the instance living in the month".into(),
        ],
    }
}

/// A line amount the client already checked; a malformed one counts as zero rather than panicking.
fn parse_or_zero(s: &str) -> Amount {
    Amount::parse(s).unwrap_or_default()
}

impl Engine {
    /// Reads the month's bill of every cloud holding a recorded resource (Tencent and Alibaba bill the
    /// account, one query each; JD bills per region) and reconciles it with the records.
    pub async fn cost(
        &self,
        month: Month,
        deployment: Option<&str>,
        now: Timestamp,
    ) -> Result<CostReport, ApplyError> {
        let recorded = self.store(|s| s.resources(deployment))?;
        let reclaims = self.store(|s| s.reclaims(deployment))?;
        let gone: BTreeMap<String, Timestamp> =
            reclaims.iter().map(|r| (r.client_token.clone(), r.seen_gone_at)).collect();
        let in_month: Vec<Resource> = recorded
            .into_iter()
            .filter(|r| lifetime(r, now, &gone).is_some_and(|(a, b)| a < month.end() && b > month.start()))
            .collect();
        let mut places: BTreeSet<(Provider, String)> = BTreeSet::new();
        for r in &in_month {
            let region = if account_wide(r.provider) { String::new() } else { r.region.clone() };
            places.insert((r.provider, region));
        }
        let mut lines = Vec::new();
        let mut errors = Vec::new();
        for (provider, region) in places {
            let region_q = if region.is_empty() {
                in_month.iter().find(|r| r.provider == provider).map(|r| r.region.clone()).unwrap_or_default()
            } else {
                region.clone()
            };
            // A deployment's report asks for its own resources only (ids when the cloud filters by them).
            let ids: Vec<String> = match deployment {
                Some(_) => in_month
                    .iter()
                    .filter(|r| r.provider == provider && (region.is_empty() || r.region == region))
                    .filter_map(|r| r.instance_id.clone())
                    .collect(),
                None => Vec::new(),
            };
            let q = BillQuery { month: month.to_string(), region: region_q.clone(), resource_ids: ids };
            let cloud = self.cloud(provider)?;
            let got = self
                .call(provider, "bill", &format!("bill-{provider}-{region_q}-{month}"), || {
                    cloud.bill_lines(&q)
                })
                .await;
            match got {
                Ok(ls) => lines.extend(ls.into_iter().map(|l| (provider, l))),
                Err(e) => errors.push(BillError {
                    provider,
                    region: region_q,
                    error: e.to_string(),
                    code: Some(e.code.clone()),
                    request_id: e.request_id.clone(),
                }),
            }
        }
        let mut budgets = BTreeMap::new();
        let deps: BTreeSet<String> =
            in_month.iter().map(|r| r.deployment.clone()).chain(deployment.map(str::to_string)).collect();
        for d in deps {
            if let Some(b) = self.store(|s| s.monthly_budget(&d))? {
                budgets.insert(d, b);
            }
        }
        Ok(reconcile(month, deployment, &in_month, reclaims, &lines, &budgets, errors, now))
    }
}

/// Tencent's and Alibaba's bills are the account's, whatever the region; JD's are per region
/// (`/regions/{regionId}/billDetail:list`).
fn account_wide(p: Provider) -> bool {
    !matches!(p, Provider::JdCloud)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn rec(id: &str, created: &str, released: Option<&str>, price: f64) -> Resource {
        Resource {
            client_token: format!("t-{id}"),
            deployment: "d".into(),
            pool: "p".into(),
            index: 0,
            provider: Provider::Tencent,
            region: "ap-guangzhou".into(),
            zone: "ap-guangzhou-3".into(),
            instance_type: "GN7.2XLARGE32".into(),
            billing: gpuctl_core::BillingMode::Hourly,
            instance_id: Some(id.into()),
            state: if released.is_some() { ResourceState::Released } else { ResourceState::Running },
            public_ip: None,
            private_ip: None,
            price_cny_per_hour: Some(price),
            price_source: None,
            price_as_of: None,
            auto_release_at: None,
            created_at: ts(created),
            running_at: None,
            released_at: released.map(ts),
            last_error: None,
            billed_until: None,
        }
    }

    fn line(id: &str, start: &str, end: &str, list: &str, billed: &str) -> (Provider, BillLine) {
        (
            Provider::Tencent,
            BillLine {
                resource_id: id.into(),
                product: "p_cvm".into(),
                region: None,
                pay_mode: None,
                start: Some(ts(start)),
                end: Some(ts(end)),
                list_cny: Some(list.into()),
                billed_cny: billed.into(),
                billed_seconds: None,
            },
        )
    }

    #[test]
    fn month_parses_strictly_and_bounds_in_utc8() {
        let m = Month::parse("2026-12").unwrap();
        assert_eq!(m.start(), ts("2026-11-30T16:00:00Z"));
        assert_eq!(m.end(), ts("2026-12-31T16:00:00Z"));
        for bad in ["2026-13", "26-12", "2026-1", "2026/12", "x"] {
            assert!(Month::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reconciles_exactly_and_lists_the_untracked() {
        let m = Month::parse("2026-12").unwrap();
        let recs = [rec("ins-a", "2026-12-01T00:00:00Z", Some("2026-12-01T02:00:00Z"), 10.0)];
        let lines = [
            line("ins-a", "2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z", "10.00000000", "8.00000001"),
            line("ins-a", "2026-12-01T01:00:00Z", "2026-12-01T02:00:00Z", "10.00000000", "8.00000002"),
            line("disk-x", "2026-12-01T00:00:00Z", "2026-12-01T01:00:00Z", "0.1", "0.1"),
        ];
        let mut budgets = BTreeMap::new();
        budgets.insert("d".to_string(), 16.0);
        let r = reconcile(m, None, &recs, vec![], &lines, &budgets, vec![], ts("2027-01-05T00:00:00Z"));
        assert_eq!(r.resources.len(), 1);
        let a = &r.resources[0];
        assert_eq!(a.estimated_cny, Some(Amount::parse("20").unwrap()));
        assert_eq!(a.billed_cny.exact_text(), "16.00000003");
        assert_eq!(a.discount_cny.exact_text(), "3.99999997");
        assert!(a.settled);
        assert_eq!(r.untracked.len(), 1);
        assert_eq!(r.billed_cny.exact_text(), "16.10000003");
        assert_eq!(r.settlement, Settlement::Settled);
        assert!(r.over_budget(), "16.00000003 > 16");
    }

    #[test]
    fn a_reclaimed_instance_lived_until_it_was_seen_gone() {
        let mut r = rec("ins-s", "2026-12-01T00:00:00Z", None, 2.0);
        r.state = ResourceState::Reclaimed;
        let mut gone = BTreeMap::new();
        assert_eq!(lifetime(&r, ts("2026-12-09T00:00:00Z"), &gone).unwrap().1, ts("2026-12-01T00:00:00Z"));
        gone.insert(r.client_token.clone(), ts("2026-12-03T00:00:00Z"));
        assert_eq!(
            lifetime(&r, ts("2026-12-09T00:00:00Z"), &gone),
            Some((ts("2026-12-01T00:00:00Z"), ts("2026-12-03T00:00:00Z")))
        );
        // A live one lives until now; a failed one never billed.
        r.state = ResourceState::Running;
        assert_eq!(
            lifetime(&r, ts("2026-12-09T00:00:00Z"), &BTreeMap::new()).unwrap().1,
            ts("2026-12-09T00:00:00Z")
        );
        r.state = ResourceState::Failed;
        assert_eq!(lifetime(&r, ts("2026-12-09T00:00:00Z"), &BTreeMap::new()), None);
    }

    #[test]
    fn unbilled_hours_keep_the_month_settling() {
        let m = Month::parse("2026-12").unwrap();
        let recs = [rec("ins-a", "2026-12-31T10:00:00Z", Some("2026-12-31T14:00:00Z"), 1.0)];
        let lines = [line("ins-a", "2026-12-31T10:00:00Z", "2026-12-31T11:00:00Z", "1", "1")];
        let r = reconcile(
            m,
            Some("d"),
            &recs,
            vec![],
            &lines,
            &BTreeMap::new(),
            vec![],
            ts("2026-12-31T16:30:00Z"),
        );
        assert_eq!(r.settlement, Settlement::Settling);
        assert_eq!(r.resources[0].unbilled_hours, 3.0);
        let r = reconcile(
            m,
            Some("d"),
            &recs,
            vec![],
            &lines,
            &BTreeMap::new(),
            vec![],
            ts("2026-12-20T00:00:00Z"),
        );
        assert_eq!(r.settlement, Settlement::Open);
    }
}
