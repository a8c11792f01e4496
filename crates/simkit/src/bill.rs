//! What the local cloud bills (issue 15): a ledger of what each emulator ran, at the price its own
//! quote API gave, turned into bill lines on the sim clock. Each emulator renders the lines in its
//! cloud's bill format (Tencent `DescribeBillDetail`, Alibaba `DescribeInstanceBill`, JD
//! `queryBillDetail`); what is the same for all three lives here.
//!
//! The rules, and which are assumptions (no cloud documents them; docs/research/cost-control.md §5):
//! - Pay-as-you-go and spot are settled per clock hour in UTC+8 (Tencent's ActionTypes 按量计费小时结 /
//!   竞价实例小时结 name hourly settlement); a line bills the seconds the resource ran in that hour at its
//!   hourly price. *Assumption:* per-second usage inside the hour, as the clouds' price pages say
//!   pay-as-you-go is metered by the second and settled by the hour.
//! - A prepaid term is one line at purchase for the whole term (the order), in the purchase month.
//!   *Assumption:* an early release's refund is not modelled.
//! - **Settlement lag** (`Knobs::bill_lag_seconds`, default one day): an hour's line appears only that
//!   long after the hour ends. *Assumption:* no cloud documents its lag; Tencent only says its `Total`
//!   is cached for 24 hours.
//! - **Discount** (`Knobs::discounts`, the account's percent off list, the same knob JD's price API
//!   reports): each line carries the list amount and the amount after the discount.
//! - Amounts are exact decimals: integer units of 10⁻⁸ CNY, each line rounded (half up) to the cloud's
//!   precision (Tencent 8 decimals, Alibaba and JD 2), so a total is the sum of the lines' text.

use jiff::civil::Date;
use jiff::tz::{Offset, TimeZone};
use jiff::{SignedDuration, Timestamp};

use crate::{Knobs, Provider};

/// Units of [`Amount`] per CNY.
const SCALE: i128 = 100_000_000;

/// An exact amount of CNY in units of 10⁻⁸.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Amount(pub i128);

impl Amount {
    /// A catalog price (at most 8 decimals, as every shipped price has) in exact units.
    pub fn from_price(cny: f64) -> Amount {
        Amount((cny * SCALE as f64).round() as i128)
    }

    /// The amount as decimal text with `decimals` places (0–8), as the cloud writes it.
    pub fn text(self, decimals: u32) -> String {
        let d = decimals.min(8);
        let step = 10i128.pow(8 - d);
        let units = self.0 / step;
        let sign = if units < 0 { "-" } else { "" };
        let units = units.abs();
        let whole = units / 10i128.pow(d);
        if d == 0 {
            return format!("{sign}{whole}");
        }
        let frac = units % 10i128.pow(d);
        format!("{sign}{whole}.{frac:0width$}", width = d as usize)
    }

    /// As a float, for clouds whose bill fields are JSON numbers (Alibaba BSS).
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / SCALE as f64
    }
}

impl std::ops::Add for Amount {
    type Output = Amount;
    fn add(self, o: Amount) -> Amount {
        Amount(self.0 + o.0)
    }
}

impl std::iter::Sum for Amount {
    fn sum<I: Iterator<Item = Amount>>(it: I) -> Amount {
        Amount(it.map(|a| a.0).sum())
    }
}

/// `n / d` rounded half away from zero (d > 0).
fn div_round(n: i128, d: i128) -> i128 {
    if n >= 0 {
        (n + d / 2) / d
    } else {
        -((-n + d / 2) / d)
    }
}

/// How a resource is charged.
#[derive(Clone, Debug, PartialEq)]
pub enum Charge {
    /// Per hour of running, at this list price per hour (pay-as-you-go or spot).
    Hourly { list_per_hour: f64 },
    /// One up-front payment at purchase for a term ending at `until`.
    Upfront { list_total: f64, until: Timestamp },
}

/// One billed resource as the emulator ran it.
#[derive(Clone, Debug, PartialEq)]
pub struct Usage {
    pub resource_id: String,
    /// The cloud's product code (`cvm`, `ecs`, `vm`).
    pub product: String,
    pub region: String,
    pub zone: String,
    /// What the discount knob matches on, and what the bill names.
    pub instance_type: String,
    /// The cloud's own pay-mode word (`POSTPAID_BY_HOUR`, `PayAsYouGo`…): the emulator renders it.
    pub pay_mode: String,
    pub charge: Charge,
    pub start: Timestamp,
    /// When it stopped billing (termination began); `None` while it runs.
    pub end: Option<Timestamp>,
}

/// One settled bill line: a resource's charge for one hour (or one prepaid order).
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub usage: usize,
    /// The billing period this line settles: the clock hour, or the order's term.
    pub period_start: Timestamp,
    pub period_end: Timestamp,
    /// The part of the period the resource ran (what the line bills).
    pub used_start: Timestamp,
    pub used_end: Timestamp,
    /// When the line appeared on the bill (period end + lag; a prepaid order at purchase).
    pub settled_at: Timestamp,
    pub list: Amount,
    pub billed: Amount,
}

/// A calendar month as the clouds bill it (UTC+8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Month {
    pub year: i16,
    pub month: i8,
}

impl Month {
    /// `YYYY-MM`, strictly; `None` otherwise.
    pub fn parse(s: &str) -> Option<Month> {
        let b = s.as_bytes();
        if b.len() != 7 || b[4] != b'-' || !b.iter().enumerate().all(|(i, c)| i == 4 || c.is_ascii_digit()) {
            return None;
        }
        let year: i16 = s[..4].parse().ok()?;
        let month: i8 = s[5..].parse().ok()?;
        (1..=12).contains(&month).then_some(Month { year, month })
    }

    /// The month (UTC+8) that `t` falls in.
    pub fn of(t: Timestamp) -> Month {
        let d = t.to_zoned(china()).date();
        Month { year: d.year(), month: d.month() }
    }

    pub fn start(self) -> Timestamp {
        Date::new(self.year, self.month, 1)
            .ok()
            .and_then(|d| d.to_zoned(china()).ok())
            .map(|z| z.timestamp())
            .unwrap_or(Timestamp::MIN)
    }

    pub fn next(self) -> Month {
        if self.month == 12 {
            Month { year: self.year + 1, month: 1 }
        } else {
            Month { year: self.year, month: self.month + 1 }
        }
    }

    pub fn end(self) -> Timestamp {
        self.next().start()
    }

    /// Whole months from `self` back to `earlier` (0 for the same month).
    pub fn months_since(self, earlier: Month) -> i32 {
        (self.year as i32 - earlier.year as i32) * 12 + (self.month as i32 - earlier.month as i32)
    }

    pub fn text(self) -> String {
        format!("{:04}-{:02}", self.year, self.month)
    }
}

/// UTC+8, the time zone all three clouds bill in.
pub fn china() -> TimeZone {
    TimeZone::fixed(Offset::constant(8))
}

/// `yyyy-mm-dd hh:mm:ss` in UTC+8, the clouds' bill time format.
pub fn china_text(t: Timestamp) -> String {
    t.to_zoned(china()).strftime("%Y-%m-%d %H:%M:%S").to_string()
}

/// Reads [`china_text`]'s format back.
pub fn parse_china_text(s: &str) -> Option<Timestamp> {
    let dt: jiff::civil::DateTime =
        jiff::fmt::strtime::parse("%Y-%m-%d %H:%M:%S", s).ok()?.to_datetime().ok()?;
    dt.to_zoned(china()).ok().map(|z| z.timestamp())
}

/// What an emulator has billed: every resource it ran, open or closed.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    pub usages: Vec<Usage>,
}

impl Ledger {
    /// A resource starts billing.
    pub fn open(&mut self, u: Usage) {
        self.usages.push(u);
    }

    /// `resource_id` stops billing at `at` (the first close wins: a second terminate bills nothing more).
    pub fn close(&mut self, resource_id: &str, at: Timestamp) {
        for u in self.usages.iter_mut().filter(|u| u.resource_id == resource_id && u.end.is_none()) {
            u.end = Some(at.max(u.start));
        }
    }

    /// The lines of `month` settled by `now`, in the order a bill lists them (by period, then resource),
    /// with `decimals` places, after `provider`'s discount knob and the settlement lag knob.
    pub fn lines(
        &self,
        month: Month,
        now: Timestamp,
        knobs: &Knobs,
        provider: Provider,
        decimals: u32,
    ) -> Vec<Line> {
        let lag = SignedDuration::from_secs(knobs.bill_lag_seconds.min(i64::MAX as u64) as i64);
        let step = 10i128.pow(8 - decimals.min(8));
        let (m_start, m_end) = (month.start(), month.end());
        let mut out = Vec::new();
        for (i, u) in self.usages.iter().enumerate() {
            // The discount as integer basis points of what is paid (10000 = no discount).
            let paid_bp = (knobs.price_factor(provider, &u.instance_type) * 10_000.0).round() as i128;
            let after = |list: i128| div_round(list * paid_bp, 10_000 * step) * step;
            match &u.charge {
                Charge::Upfront { list_total, until } => {
                    if u.start < m_start || u.start >= m_end || u.start > now {
                        continue;
                    }
                    let list = div_round(Amount::from_price(*list_total).0, step) * step;
                    out.push(Line {
                        usage: i,
                        period_start: u.start,
                        period_end: *until,
                        used_start: u.start,
                        used_end: *until,
                        settled_at: u.start,
                        list: Amount(list),
                        billed: Amount(after(list)),
                    });
                }
                Charge::Hourly { list_per_hour } => {
                    let price = Amount::from_price(*list_per_hour).0;
                    // Metered by the whole second (the span's text then says exactly what a line bills).
                    let run_end = u.end.unwrap_or(now).min(now);
                    let from = whole_second(u.start.max(m_start));
                    let to = whole_second(run_end.min(m_end));
                    if from >= to {
                        continue;
                    }
                    let mut hour = hour_floor(from);
                    while hour < to {
                        let next = hour + SignedDuration::from_hours(1);
                        let settled_at = next + lag;
                        if settled_at > now {
                            break;
                        }
                        let (a, b) = (from.max(hour), to.min(next));
                        if a < b {
                            let secs = b.duration_since(a).as_secs() as i128;
                            let list = div_round(price * secs, 3600 * step) * step;
                            out.push(Line {
                                usage: i,
                                period_start: hour,
                                period_end: next,
                                used_start: a,
                                used_end: b,
                                settled_at,
                                list: Amount(list),
                                billed: Amount(after(list)),
                            });
                        }
                        hour = next;
                    }
                }
            }
        }
        out.sort_by_key(|x| (x.period_start, x.usage));
        out
    }
}

/// `t` without its fraction of a second.
fn whole_second(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

/// The start of the clock hour `t` falls in (UTC+8 hours are UTC hours: the offset is whole).
fn hour_floor(t: Timestamp) -> Timestamp {
    let s = t.as_second();
    Timestamp::from_second(s - s.rem_euclid(3600)).unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn usage(start: &str, end: Option<&str>, price: f64) -> Usage {
        Usage {
            resource_id: "ins-1".into(),
            product: "cvm".into(),
            region: "ap-guangzhou".into(),
            zone: "ap-guangzhou-3".into(),
            instance_type: "GN7.2XLARGE32".into(),
            pay_mode: "POSTPAID_BY_HOUR".into(),
            charge: Charge::Hourly { list_per_hour: price },
            start: ts(start),
            end: end.map(ts),
        }
    }

    #[test]
    fn amounts_print_at_the_clouds_precision() {
        assert_eq!(Amount(123_456_789).text(8), "1.23456789");
        assert_eq!(Amount(123_456_789).text(2), "1.23");
        assert_eq!(Amount(-5_000_000).text(2), "-0.05");
        assert_eq!(Amount(0).text(8), "0.00000000");
        assert_eq!(Amount::from_price(8.68).text(2), "8.68");
    }

    #[test]
    fn month_parse_and_bounds_are_utc8() {
        assert_eq!(Month::parse("2026-02"), Some(Month { year: 2026, month: 2 }));
        for bad in ["2026-13", "2026-2", "202602", "2026/02", "2026-00"] {
            assert_eq!(Month::parse(bad), None, "{bad}");
        }
        let m = Month::parse("2026-12").unwrap();
        assert_eq!(m.start(), ts("2026-11-30T16:00:00Z"));
        assert_eq!(m.end(), ts("2026-12-31T16:00:00Z"));
        assert_eq!(Month::of(ts("2026-11-30T16:00:00Z")), m);
        assert_eq!(Month::parse("2027-01").unwrap().months_since(m), 1);
        assert_eq!(
            parse_china_text(&china_text(ts("2026-12-05T01:02:03Z"))),
            Some(ts("2026-12-05T01:02:03Z"))
        );
    }

    #[test]
    fn hourly_lines_bill_seconds_run_and_wait_for_the_lag() {
        let mut l = Ledger::default();
        l.open(usage("2026-12-01T00:30:00Z", None, 10.0));
        l.close("ins-1", ts("2026-12-01T02:15:00Z"));
        let month = Month::parse("2026-12").unwrap();
        let mut knobs = Knobs { bill_lag_seconds: 3600, ..Knobs::default() };
        // At 03:00 only the first hour has settled (it ended at 01:00, lag one hour… 02:00 ≤ 03:00),
        // the second ended at 02:00 → 03:00 (settled), the third at 03:00 → 04:00 (not yet).
        let lines = l.lines(month, ts("2026-12-01T03:00:00Z"), &knobs, Provider::Tencent, 8);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].list.text(8), "5.00000000"); // half an hour
        assert_eq!(lines[1].list.text(8), "10.00000000");
        let lines = l.lines(month, ts("2026-12-02T00:00:00Z"), &knobs, Provider::Tencent, 8);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2].list.text(8), "2.50000000"); // a quarter hour
        assert_eq!(lines.iter().map(|x| x.list).sum::<Amount>().text(8), "17.50000000");
        // A 20 % discount bills 80 % of each line.
        knobs.discounts = vec![crate::knobs::Discount {
            provider: Some(Provider::Tencent),
            instance_type: None,
            percent: 20.0,
        }];
        let lines = l.lines(month, ts("2026-12-02T00:00:00Z"), &knobs, Provider::Tencent, 8);
        assert_eq!(lines.iter().map(|x| x.billed).sum::<Amount>().text(8), "14.00000000");
        // Another month has none of them.
        assert!(l.lines(month.next(), ts("2027-02-01T00:00:00Z"), &knobs, Provider::Tencent, 8).is_empty());
    }

    #[test]
    fn lines_round_per_line_at_two_decimals() {
        let mut l = Ledger::default();
        l.open(usage("2026-12-01T00:00:00Z", Some("2026-12-01T00:00:20Z"), 1.0));
        let lines = l.lines(
            Month::parse("2026-12").unwrap(),
            ts("2026-12-03T00:00:00Z"),
            &Knobs::default(),
            Provider::Alibaba,
            2,
        );
        // 20 s of ¥1/h is ¥0.00555…, which is ¥0.01 at two decimals.
        assert_eq!(lines[0].list.text(2), "0.01");
    }

    #[test]
    fn upfront_is_one_line_in_the_purchase_month() {
        let mut l = Ledger::default();
        let mut u = usage("2026-12-03T00:00:00Z", None, 0.0);
        u.charge = Charge::Upfront { list_total: 3000.0, until: ts("2027-01-03T00:00:00Z") };
        l.open(u);
        let dec = Month::parse("2026-12").unwrap();
        let lines = l.lines(dec, ts("2026-12-03T00:00:00Z"), &Knobs::default(), Provider::Tencent, 8);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].billed.text(8), "3000.00000000");
        assert!(l
            .lines(dec.next(), ts("2027-02-01T00:00:00Z"), &Knobs::default(), Provider::Tencent, 8)
            .is_empty());
    }
}
