//! What gpuctl asks a cloud after the plan (issue 15), in the users' words: how busy an instance's GPUs
//! were (the clouds' monitoring APIs), what is left billing after the instances are gone (unattached
//! disks, unbound public IPs, snapshots, file systems) and what the cloud actually billed (bill lines).
//! The facts behind each field are in `docs/research/cost-control.md`; each client cites its definition.

use std::collections::BTreeMap;

/// One question to a monitoring API: GPU utilization of some instances of one region over a window.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UsageQuery {
    pub region: String,
    /// At most 50 per call on Tencent and Alibaba; a client splits longer lists itself.
    pub instance_ids: Vec<String>,
    pub start: jiff::Timestamp,
    pub end: jiff::Timestamp,
    /// Seconds between points; each client rounds to a period its cloud allows.
    pub period_s: u32,
}

impl UsageQuery {
    /// The period a client asks its cloud for: the shortest of the cloud's `allowed` periods (seconds,
    /// ascending) that is at least `period_s`, or the longest when none is: a coarser answer rather than
    /// a refused request.
    pub fn period_among(&self, allowed: &[u32]) -> u32 {
        allowed
            .iter()
            .copied()
            .find(|&p| p >= self.period_s)
            .or_else(|| allowed.last().copied())
            .unwrap_or(self.period_s)
    }

    /// How many periods of `period_s` seconds the window touches (aligned to multiples of the period,
    /// as the clouds align their points): what a request's point count is made of.
    pub fn periods_touched(&self, period_s: u32) -> u64 {
        let p = i64::from(period_s.max(1));
        let first = self.start.as_second().div_euclid(p);
        let last = self.end.as_second().div_euclid(p);
        (last - first + 1).max(0) as u64
    }
}

/// One sample: the average GPU utilization (percent, 0–100) over the period that starts at `at`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct UsagePoint {
    pub at: jiff::Timestamp,
    pub percent: f64,
}

/// An instance's GPU utilization as its cloud's monitoring reported it. `points` is empty when the
/// cloud has no data (no monitoring agent on the instance, or the window is before its launch):
/// unknown, never "idle".
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GpuUsage {
    pub instance_id: String,
    /// The cloud's metric name (e.g. Tencent `GpuUtil` in `QCE/CVM`), so a user can find it in the console.
    pub metric: String,
    pub period_s: u32,
    pub points: Vec<UsagePoint>,
}

/// A kind of resource that can outlive the instances it served and go on billing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeftoverKind {
    /// A cloud disk attached to nothing.
    Disk,
    /// An elastic / public IP bound to nothing (Tencent and JD charge for holding one).
    PublicIp,
    /// A disk snapshot (any age: the engine applies the retention age).
    Snapshot,
    /// A shared file system (the engine decides whether a deployment still uses it).
    FileSystem,
}

impl LeftoverKind {
    pub const ALL: [LeftoverKind; 4] =
        [LeftoverKind::Disk, LeftoverKind::PublicIp, LeftoverKind::Snapshot, LeftoverKind::FileSystem];

    pub fn as_str(self) -> &'static str {
        match self {
            LeftoverKind::Disk => "disk",
            LeftoverKind::PublicIp => "public_ip",
            LeftoverKind::Snapshot => "snapshot",
            LeftoverKind::FileSystem => "file_system",
        }
    }
}

/// A resource a listing found that may be left over: the cloud's facts, no judgement.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Leftover {
    pub kind: LeftoverKind,
    pub id: String,
    pub region: String,
    pub zone: Option<String>,
    pub name: Option<String>,
    /// Disks: size; snapshots: the size the cloud bills (or the source disk's when that is all it says);
    /// file systems: the capacity used or provisioned, as the cloud reports it.
    pub size_gb: Option<f64>,
    /// The cloud's own word for the storage class or disk type (`CLOUD_SSD`, `cloud_essd`, `ssd.gp1`,
    /// `SD`…), which the engine prices; for IPs, the billing of its bandwidth.
    pub class: Option<String>,
    pub created: Option<jiff::Timestamp>,
    /// The cloud's tags; empty where the listing gives none (JD snapshots).
    pub tags: BTreeMap<String, String>,
}

/// A bill query: one calendar month (`YYYY-MM`, UTC+8 as the clouds bill), in one region for clouds
/// whose billing API is regional (JD); Tencent's and Alibaba's are account-wide and ignore `region`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BillQuery {
    pub month: String,
    pub region: String,
    /// Only these resources when non-empty (Tencent `ResourceId`, Alibaba `InstanceId`, JD `resourceIds`).
    pub resource_ids: Vec<String>,
}

/// One line of a cloud's bill. Amounts are CNY in the cloud's own decimal text, kept exact: the
/// engine sums them as decimals so totals reconcile to the bill to the last digit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BillLine {
    pub resource_id: String,
    /// The product in the cloud's words (`cvm`, `ecs`, `vm`, `cbs`…).
    pub product: String,
    pub region: Option<String>,
    /// The cloud's pay mode words (`postPay`, `PayAsYouGo`, JD billingType name).
    pub pay_mode: Option<String>,
    /// The span this line bills (RFC 3339), when the cloud says.
    pub start: Option<jiff::Timestamp>,
    pub end: Option<jiff::Timestamp>,
    /// Before discounts (Tencent `Cost`, Alibaba `PretaxGrossAmount`, JD `totalFee`).
    pub list_cny: Option<String>,
    /// After discounts, what is owed (Tencent `RealCost`, Alibaba `PretaxAmount`, JD `realTotalFee`).
    pub billed_cny: String,
    /// Seconds of use the line bills, where the cloud states a duration but no span (Alibaba's instance
    /// bill: `ServicePeriod` with its unit); `None` where `start`/`end` say it, or nothing does.
    pub billed_seconds: Option<u64>,
}

/// A bill field's amount, exact: its text (a JSON string, or a number's own spelling) as an [`Amount`];
/// missing or empty is zero; anything else — or more decimals than an `Amount` keeps — is the cloud's
/// bad answer, never rounded silently.
pub fn amount_of(
    f: &crate::json::Field<'_>,
    provider: crate::Provider,
    action: &str,
) -> Result<Amount, crate::cloud::CloudError> {
    match f.opt_text() {
        None => Ok(Amount::ZERO),
        Some(t) => Amount::parse(&t).ok_or_else(|| {
            crate::cloud::CloudError::bad_response(
                provider,
                action,
                format!("{} is not an amount gpuctl can keep exact: {t:?}", f.path()),
            )
        }),
    }
}

/// A creation time as the clouds' listings write it: RFC 3339 (`2026-11-30T08:00:00Z`, JD's
/// `2026-11-30T16:00:00+08:00`), Alibaba's minute form (`2026-11-30T08:00Z`, ECS `CreationTime`), or
/// Tencent's CBS/CFS local form (`2026-11-30 16:00:00`, UTC+8 as those APIs answer). `None` for anything
/// else: an age the cloud did not say stays unknown.
pub fn listed_time(s: &str) -> Option<jiff::Timestamp> {
    let s = s.trim();
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Some(t);
    }
    if let Some(minute) = s.strip_suffix('Z').filter(|m| m.len() == 16) {
        return format!("{minute}:00Z").parse().ok();
    }
    let dt = jiff::civil::DateTime::strptime("%Y-%m-%d %H:%M:%S", s).ok()?;
    dt.to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(8))).ok().map(|z| z.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_times_in_each_clouds_form() {
        let want: jiff::Timestamp = "2026-11-30T08:00:00Z".parse().unwrap();
        for s in
            ["2026-11-30T08:00:00Z", "2026-11-30T16:00:00+08:00", "2026-11-30T08:00Z", "2026-11-30 16:00:00"]
        {
            assert_eq!(listed_time(s), Some(want), "{s}");
        }
        assert_eq!(listed_time(""), None);
        assert_eq!(listed_time("yesterday"), None);
    }
}

/// An exact amount of CNY, in units of 10⁻⁸ (the finest any of the three clouds' bills writes:
/// Tencent's eight decimals). Integers, not floats, so a month of lines sums to the bill's total to the
/// last digit; not a decimal crate, because parsing, adding and printing fixed-point text is all the
/// engine does with bill amounts (ARCHITECTURE.md, gpuctl-cloud).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(pub i128);

impl Amount {
    pub const ZERO: Amount = Amount(0);
    /// Decimal places kept.
    pub const DECIMALS: u32 = 8;
    const SCALE: i128 = 100_000_000;

    /// Reads a cloud's decimal text (`"12.34"`, `"-0.00000001"`, `"3"`, `"+1.5"`); `None` for anything
    /// else, or more than eight decimals (which would need rounding: never silently done).
    pub fn parse(s: &str) -> Option<Amount> {
        let s = s.trim();
        let (neg, body) = match s.as_bytes().first()? {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let (whole, frac) = body.split_once('.').unwrap_or((body, ""));
        if whole.is_empty() && frac.is_empty()
            || !whole.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
            || frac.len() > Self::DECIMALS as usize
            || whole.len() > 20
        {
            return None;
        }
        let w: i128 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
        let f: i128 = if frac.is_empty() {
            0
        } else {
            frac.parse::<i128>().ok()? * 10i128.pow(Self::DECIMALS - frac.len() as u32)
        };
        let v = w.checked_mul(Self::SCALE)?.checked_add(f)?;
        Some(Amount(if neg { -v } else { v }))
    }

    /// A price the engine holds as a float (a record's ¥/hour × hours), rounded to 10⁻⁸.
    pub fn from_f64(cny: f64) -> Amount {
        Amount((cny * Self::SCALE as f64).round() as i128)
    }

    pub fn as_f64(self) -> f64 {
        self.0 as f64 / Self::SCALE as f64
    }

    /// As decimal text with `decimals` places (at most 8), truncating nothing when the amount has no
    /// finer digits (every sum of one cloud's lines has at most that cloud's places).
    pub fn text(self, decimals: u32) -> String {
        let d = decimals.min(Self::DECIMALS);
        let step = 10i128.pow(Self::DECIMALS - d);
        let units = self.0.abs() / step;
        let sign = if self.0 < 0 && units != 0 { "-" } else { "" };
        let whole = units / 10i128.pow(d);
        if d == 0 {
            return format!("{sign}{whole}");
        }
        format!("{sign}{whole}.{:0w$}", units % 10i128.pow(d), w = d as usize)
    }

    /// The fewest decimals (2 to 8) that print this amount exactly.
    pub fn exact_text(self) -> String {
        let mut d = 2;
        while d < Self::DECIMALS && self.0 % 10i128.pow(Self::DECIMALS - d) != 0 {
            d += 1;
        }
        self.text(d)
    }
}

impl std::ops::Add for Amount {
    type Output = Amount;
    fn add(self, o: Amount) -> Amount {
        Amount(self.0 + o.0)
    }
}

impl std::ops::Sub for Amount {
    type Output = Amount;
    fn sub(self, o: Amount) -> Amount {
        Amount(self.0 - o.0)
    }
}

impl std::iter::Sum for Amount {
    fn sum<I: Iterator<Item = Amount>>(it: I) -> Amount {
        Amount(it.map(|a| a.0).sum())
    }
}

/// Written as its exact decimal text, so `--json` carries the amount, not a float's approximation.
impl serde::Serialize for Amount {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.exact_text())
    }
}

#[cfg(test)]
mod amount_tests {
    use super::Amount;

    #[test]
    fn parses_and_prints_exactly() {
        for (t, units) in
            [("12.34", 1_234_000_000), ("-0.00000001", -1), ("3", 300_000_000), (".5", 50_000_000)]
        {
            assert_eq!(Amount::parse(t), Some(Amount(units)), "{t}");
        }
        for bad in ["", "-", "1.234567891", "1e5", "1,2", "abc", "1.2.3"] {
            assert_eq!(Amount::parse(bad), None, "{bad}");
        }
        assert_eq!(Amount::parse("80.43264806").unwrap().text(8), "80.43264806");
        assert_eq!(Amount::parse("-80.89").unwrap().exact_text(), "-80.89");
        assert_eq!(Amount::parse("0.1").unwrap().exact_text(), "0.10");
        // 0.1 + 0.2 is 0.3 here, as a bill adds it.
        let s: Amount = ["0.1", "0.2"].iter().map(|t| Amount::parse(t).unwrap()).sum();
        assert_eq!(s, Amount::parse("0.3").unwrap());
    }
}
