//! What storage costs on each cloud (issue 15): cloud disks by class, snapshots, an unbound public IP's
//! holding fee, shared file systems, object storage (standard / infrequent access / archive) with
//! retrieval fees and minimum storage days, and whether a prepaid instance's system disk is bundled.
//!
//! The figures are `data/storage.toml`'s rows (source, date and confidence each), compiled by build.rs
//! into a static table: no parsing at run time, and a build that never calls this module (the browser
//! page) links none of it. Each row keeps the unit its source printed (per GB-month, GB-hour or
//! GB-day); [`StoragePrice::usage_per_month`] and [`StoragePrice::usage_per_hour`] convert with the
//! catalog's month of 730 hours and say how in their text. Unknown stays unknown: a row without a
//! figure, a class no row names, or a region the source does not print all come back as "price
//! unknown" with the reason, never as another class's or cloud's figure.
//!
//! [`archive_savings`] answers "what would moving checkpoints older than N days off the disk or file
//! system into infrequent-access or archive object storage save a month?" for one cloud, net of
//! retrieval fees for the restores expected and of minimum-storage-duration charges, each line cited.
//!
//! Lookups take the cloud's own class word — what its API takes and its listings return (Tencent
//! `CLOUD_PREMIUM`, Alibaba `cloud_essd`, JD `ssd.gp1`, `STANDARD_IA`, …) — or gpuctl's word for it
//! (a spec's disk `category` `ssd`/`premium`, a file system `tier` `capacity`/`performance`, an object
//! tier `standard`/`ia`/`archive`), case-insensitively.

use std::fmt;

use serde::Serialize;

use crate::catalog::{Confidence, Provider};

/// The catalog's month (`price`, plans): 730 hours.
pub const HOURS_PER_MONTH: f64 = 730.0;
/// The same month in days, for what the clouds bill per day (JD) and for minimum storage durations.
pub const DAYS_PER_MONTH: f64 = HOURS_PER_MONTH / 24.0;

/// What a row prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StorageKind {
    /// A cloud disk, per GB: `monthly` is the prepaid price, `hourly` the pay-as-you-go one.
    Disk,
    /// A disk snapshot, per GB stored.
    Snapshot,
    /// A public IP held but not bound to anything, per IP.
    IdleIp,
    /// A shared file system (CFS / NAS / 云文件服务), per GB stored.
    FileSystem,
    /// Object storage (COS / OSS / 对象存储), per GB stored, by storage class.
    Object,
    /// No price: the rule for a prepaid instance's system disk (bundled or billed), in `notes`.
    SystemDisk,
}

impl StorageKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StorageKind::Disk => "disk",
            StorageKind::Snapshot => "snapshot",
            StorageKind::IdleIp => "idle IP",
            StorageKind::FileSystem => "file system",
            StorageKind::Object => "object storage",
            StorageKind::SystemDisk => "system disk rule",
        }
    }

    /// What one unit is: a GB, or an IP.
    pub fn unit(self) -> &'static str {
        if self == StorageKind::IdleIp {
            "IP"
        } else {
            "GB"
        }
    }
}

/// One row of `data/storage.toml`. Prices in CNY, in the unit the source printed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoragePrice {
    pub provider: Provider,
    pub kind: StorageKind,
    /// The cloud's own word for the class (its API's and listings').
    pub class: &'static str,
    /// gpuctl's word that maps to this class, where one does.
    pub gpuctl: Option<&'static str>,
    /// What the cloud calls the product.
    pub product: &'static str,
    /// The regions the figure is printed for; empty: the source gives one example region or none, and
    /// the figure stands for every region of the cloud (said in `source`).
    pub regions: &'static [&'static str],
    /// Per GB-month (per IP-month): a disk's prepaid price; for the rest, the usage rate.
    pub monthly: Option<f64>,
    /// Per GB-hour (per IP-hour) as printed: a disk's pay-as-you-go price.
    pub hourly: Option<f64>,
    /// Per GB-day (per IP-day) as printed.
    pub daily: Option<f64>,
    /// Per GB read back out of an infrequent-access or archive class.
    pub retrieval_per_gb: Option<f64>,
    /// Minimum storage duration: an object removed or moved earlier is billed the remaining days.
    pub min_days: Option<u32>,
    pub as_of: &'static str,
    pub source: &'static str,
    pub confidence: Confidence,
    pub notes: &'static str,
}

/// A rate in CNY with how it was reached from the printed figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rate {
    pub cny: f64,
    /// E.g. "0.0025 CNY/GB-hour × 730 h" or "0.35 CNY/GB-month as printed".
    pub how: String,
}

static TABLE: &[StoragePrice] = include!(concat!(env!("OUT_DIR"), "/storage_table.rs"));

/// Every row, in the data file's order.
pub fn table() -> &'static [StoragePrice] {
    TABLE
}

/// Why a lookup has no price.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum NoPrice {
    /// No row names this class for this cloud.
    UnknownClass { provider: Provider, kind: StorageKind, word: String },
    /// The class is priced only for other regions.
    NotForRegion { provider: Provider, class: &'static str, region: String },
}

impl fmt::Display for NoPrice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoPrice::UnknownClass { provider, kind, word } => write!(
                f,
                "price unknown: gpuctl records no {} {} class \"{word}\" (known: {})",
                provider.as_str(),
                kind.as_str(),
                classes(*provider, *kind).join(", ")
            ),
            NoPrice::NotForRegion { provider, class, region } => write!(
                f,
                "price unknown: {} {class} is priced for {} only, not {region}",
                provider.as_str(),
                regions_of(*provider, class).join(", ")
            ),
        }
    }
}

impl std::error::Error for NoPrice {}

fn matches(row: &StoragePrice, word: &str) -> bool {
    row.class.eq_ignore_ascii_case(word) || row.gpuctl.is_some_and(|g| g.eq_ignore_ascii_case(word))
}

/// The class words recorded for `provider` and `kind`, each once.
pub fn classes(provider: Provider, kind: StorageKind) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in TABLE.iter().filter(|r| r.provider == provider && r.kind == kind) {
        if !out.contains(&r.class) {
            out.push(r.class);
        }
    }
    out
}

fn regions_of(provider: Provider, class: &str) -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|r| r.provider == provider && r.class == class)
        .flat_map(|r| r.regions.iter().copied())
        .collect()
}

/// The row for `word` (the cloud's class word or gpuctl's) on `provider` in `region`: a row printed for
/// that region first, else one printed without regions. A row found may still carry no figure (its
/// `source` says where it was looked for).
pub fn lookup(
    provider: Provider,
    kind: StorageKind,
    word: &str,
    region: &str,
) -> Result<&'static StoragePrice, NoPrice> {
    let mut rows =
        TABLE.iter().filter(|r| r.provider == provider && r.kind == kind && matches(r, word)).peekable();
    let Some(first) = rows.peek().copied() else {
        return Err(NoPrice::UnknownClass { provider, kind, word: word.to_string() });
    };
    let rows: Vec<&StoragePrice> = rows.collect();
    rows.iter()
        .find(|r| r.regions.contains(&region))
        .or_else(|| rows.iter().find(|r| r.regions.is_empty()))
        .copied()
        .ok_or_else(|| NoPrice::NotForRegion { provider, class: first.class, region: region.to_string() })
}

/// The rule for a prepaid instance's system disk on `provider` (bundled or billed; in `notes`).
pub fn system_disk_rule(provider: Provider) -> Option<&'static StoragePrice> {
    TABLE.iter().find(|r| r.provider == provider && r.kind == StorageKind::SystemDisk)
}

fn num(x: f64) -> String {
    // Short, exact enough for a derivation text: the printed figures have at most 9 significant digits.
    let s = format!("{x:.9}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl StoragePrice {
    /// Whether the row carries any figure.
    pub fn is_priced(&self) -> bool {
        self.monthly.is_some() || self.hourly.is_some() || self.daily.is_some()
    }

    /// Per unit per hour, billed on use (a pay-as-you-go disk; anything stored or held): the printed
    /// hourly figure, else the daily one / 24, else — for everything but a disk, whose monthly figure
    /// is the prepaid price — the monthly usage rate / 730.
    pub fn usage_per_hour(&self) -> Option<Rate> {
        let u = self.kind.unit();
        if let Some(h) = self.hourly {
            return Some(Rate { cny: h, how: format!("{} CNY/{u}-hour as printed", num(h)) });
        }
        if let Some(d) = self.daily {
            return Some(Rate { cny: d / 24.0, how: format!("{} CNY/{u}-day ÷ 24 h", num(d)) });
        }
        match (self.kind, self.monthly) {
            (StorageKind::Disk, _) | (_, None) => None,
            (_, Some(m)) => {
                Some(Rate { cny: m / HOURS_PER_MONTH, how: format!("{} CNY/{u}-month ÷ 730 h", num(m)) })
            }
        }
    }

    /// Per unit for a month (730 h) billed on use — what a pay-as-you-go disk, a snapshot, a held IP
    /// or stored data costs a month: the printed monthly usage rate as it stands, else the hourly
    /// figure × 730 or the daily one × 730/24. A disk's monthly figure is its prepaid price, not this.
    pub fn usage_per_month(&self) -> Option<Rate> {
        let u = self.kind.unit();
        if self.kind != StorageKind::Disk {
            if let Some(m) = self.monthly {
                return Some(Rate { cny: m, how: format!("{} CNY/{u}-month as printed", num(m)) });
            }
        }
        if let Some(h) = self.hourly {
            return Some(Rate { cny: h * HOURS_PER_MONTH, how: format!("{} CNY/{u}-hour × 730 h", num(h)) });
        }
        self.daily
            .map(|d| Rate { cny: d * DAYS_PER_MONTH, how: format!("{} CNY/{u}-day × 730/24 days", num(d)) })
    }

    /// A disk's prepaid (包年包月) price per GB-month, as printed; `None` for other kinds.
    pub fn prepaid_per_month(&self) -> Option<Rate> {
        match (self.kind, self.monthly) {
            (StorageKind::Disk, Some(m)) => {
                Some(Rate { cny: m, how: format!("{} CNY/GB-month prepaid as printed", num(m)) })
            }
            _ => None,
        }
    }

    /// "source, as_of, confidence X" — the citation a printed line carries.
    pub fn citation(&self) -> String {
        format!("{} ({}, confidence {})", self.source, self.as_of, self.confidence.as_str())
    }
}

/// How a quantity is billed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Billing {
    /// Pay-as-you-go / on use, by the hour or day.
    Usage,
    /// A disk bought by the month (包年包月).
    Prepaid,
}

/// What `quantity` units (GB, or IPs) of one class cost a month, with the derivation and its source;
/// `cny_per_month` is `None` ("price unknown") with the reason in `basis` when there is no figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MonthlyCost {
    pub provider: Provider,
    pub kind: StorageKind,
    /// The word asked for, as given.
    pub class: String,
    pub region: String,
    pub quantity: f64,
    pub billing: Billing,
    pub cny_per_month: Option<f64>,
    /// "100 GB × 0.0025 CNY/GB-hour × 730 h", or "price unknown: …".
    pub basis: String,
    /// The row used, with its source, date and confidence; `None` when no row applies.
    pub price: Option<&'static StoragePrice>,
}

/// What `quantity` GB (IPs for [`StorageKind::IdleIp`]) of class `word` on `provider` in `region`
/// costs a month billed as `billing` (the figure H2's sweep and `cost` price leftovers and estimates
/// with). `Prepaid` applies to disks only; other kinds are always billed on use.
pub fn monthly_cost(
    provider: Provider,
    kind: StorageKind,
    word: &str,
    region: &str,
    quantity: f64,
    billing: Billing,
) -> MonthlyCost {
    let billing = if kind == StorageKind::Disk { billing } else { Billing::Usage };
    let (cny, basis, price) = match lookup(provider, kind, word, region) {
        Err(e) => (None, e.to_string(), None),
        Ok(row) => {
            let rate = match billing {
                Billing::Usage => row.usage_per_month(),
                Billing::Prepaid => row.prepaid_per_month(),
            };
            match rate {
                Some(r) => (
                    Some(r.cny * quantity),
                    format!("{} {} × {}", num(quantity), kind.unit(), r.how),
                    Some(row),
                ),
                None => (
                    None,
                    format!(
                        "price unknown: no {} figure for {} {} ({})",
                        if billing == Billing::Prepaid { "prepaid" } else { "pay-as-you-go" },
                        provider.as_str(),
                        row.class,
                        row.source
                    ),
                    Some(row),
                ),
            }
        }
    };
    MonthlyCost {
        provider,
        kind,
        class: word.to_string(),
        region: region.to_string(),
        quantity,
        billing,
        cny_per_month: cny,
        basis,
        price,
    }
}

// ---- archiving old checkpoints ------------------------------------------------------------------

/// The question "what would moving checkpoints older than N days off the disk / file system into the
/// cloud's infrequent-access or archive object storage save a month?", for one cloud.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArchiveQuestion {
    pub provider: Provider,
    pub region: String,
    /// Where the checkpoints are now: [`StorageKind::Disk`] or [`StorageKind::FileSystem`].
    pub from: StorageKind,
    /// Its class: the cloud's word or gpuctl's (`ssd`, `premium`, `capacity`, `performance`).
    pub from_class: String,
    /// How the disk is billed (a file system is always billed on use).
    pub billing: Billing,
    /// GB of checkpoints older than `older_than_days`: what would move.
    pub gb: f64,
    /// The age at which a checkpoint moves (stated in the assumptions; the GB above are those older).
    pub older_than_days: u32,
    /// Restores expected a month, each reading `restore_gb` back.
    pub restores_per_month: f64,
    pub restore_gb: f64,
    /// How long an archived checkpoint is kept before it is deleted; `None`: kept. Shorter than a
    /// class's minimum storage duration, the rest of the minimum is billed at deletion.
    pub keep_days: Option<u32>,
}

/// One target class and what it would cost and save a month.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArchiveOption {
    /// gpuctl's tier word: `ia` or `archive`.
    pub tier: &'static str,
    /// The row priced (class, product, source, date, confidence); `None` when the cloud has none.
    pub price: Option<&'static StoragePrice>,
    /// Storing `gb` there a month.
    pub storage_cny: Option<f64>,
    /// Retrieval fees for the expected restores a month.
    pub retrieval_cny: Option<f64>,
    /// The minimum-storage-duration charge a month (0 when checkpoints are kept past it).
    pub minimum_duration_cny: Option<f64>,
    /// The three above; `None` when any is unknown.
    pub total_cny: Option<f64>,
    /// What stays on the disk / file system today minus `total_cny`: the saving a month (negative:
    /// moving costs more).
    pub saving_cny: Option<f64>,
    /// How each figure was reached, and what is unknown ("price unknown: …").
    pub lines: Vec<String>,
}

/// What archiving would save on one cloud: today's cost, each target class, the assumptions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArchiveSavings {
    pub question: ArchiveQuestion,
    /// What the checkpoints cost a month where they are now.
    pub current: MonthlyCost,
    pub options: Vec<ArchiveOption>,
    pub assumptions: Vec<String>,
}

/// The answer for one cloud; every figure per month (730 h), each with its derivation and source.
pub fn archive_savings(q: &ArchiveQuestion) -> ArchiveSavings {
    let current = monthly_cost(q.provider, q.from, &q.from_class, &q.region, q.gb, q.billing);
    let options =
        ["ia", "archive"].into_iter().map(|tier| archive_option(q, tier, current.cny_per_month)).collect();
    let mut assumptions = vec![
        format!(
            "{} GB are the checkpoints older than {} days; they leave the {} and are stored in one object-storage class instead",
            num(q.gb),
            q.older_than_days,
            q.from.as_str()
        ),
        "a month is 730 hours (30.4 days); prices are list prices without discounts or resource packs".to_string(),
        "copying in and restoring within the region: no traffic fee assumed; request fees left out (checkpoints are few, large objects)".to_string(),
        "a restored object's temporary copy is not priced".to_string(),
    ];
    match q.keep_days {
        None => assumptions.push("archived checkpoints are kept: no minimum-storage-duration charge".into()),
        Some(k) => assumptions.push(format!("archived checkpoints are deleted after {k} days")),
    }
    if q.from == StorageKind::Disk {
        assumptions.push(format!(
            "the disk shrinks by {} GB (its {} price per GB)",
            num(q.gb),
            if q.billing == Billing::Prepaid { "prepaid" } else { "pay-as-you-go" }
        ));
    }
    ArchiveSavings { question: q.clone(), current, options, assumptions }
}

fn archive_option(q: &ArchiveQuestion, tier: &'static str, current: Option<f64>) -> ArchiveOption {
    let mut lines = Vec::new();
    let row = match lookup(q.provider, StorageKind::Object, tier, &q.region) {
        Ok(r) => Some(r),
        Err(e) => {
            lines.push(e.to_string());
            None
        }
    };
    let rate = row.and_then(|r| r.usage_per_month());
    let storage = match (row, &rate) {
        (Some(r), Some(rate)) => {
            lines.push(format!(
                "storage: {} GB × {} = {} CNY ({})",
                num(q.gb),
                rate.how,
                money(rate.cny * q.gb),
                r.citation()
            ));
            Some(rate.cny * q.gb)
        }
        (Some(r), None) => {
            lines.push(format!("storage: price unknown ({})", r.source));
            None
        }
        (None, _) => None,
    };
    let restored_gb = q.restores_per_month * q.restore_gb;
    let retrieval = if restored_gb <= 0.0 {
        lines.push("retrieval: no restores expected".into());
        Some(0.0)
    } else {
        match row.and_then(|r| r.retrieval_per_gb) {
            Some(fee) => {
                lines.push(format!(
                    "retrieval: {} restores × {} GB × {} CNY/GB = {} CNY",
                    num(q.restores_per_month),
                    num(q.restore_gb),
                    num(fee),
                    money(fee * restored_gb)
                ));
                Some(fee * restored_gb)
            }
            None => {
                if row.is_some() {
                    lines.push("retrieval: price unknown (no retrieval fee recorded for this class)".into());
                }
                None
            }
        }
    };
    let minimum = match q.keep_days {
        None => Some(0.0),
        Some(k) => match (row.and_then(|r| r.min_days), &rate) {
            (Some(m), _) if k >= m => {
                lines.push(format!("minimum storage {m} days: kept {k} days, nothing extra"));
                Some(0.0)
            }
            (Some(m), Some(rate)) => {
                // Steady state: each month DAYS_PER_MONTH / k of the stock is deleted, each GB billed
                // (m − k) days more: gb × monthly rate × (m − k) / k.
                let extra = q.gb * rate.cny * f64::from(m - k) / f64::from(k.max(1));
                lines.push(format!(
                    "minimum storage {m} days, deleted after {k}: {} GB × {} CNY/GB-month × ({m} − {k}) / {k} = {} CNY",
                    num(q.gb),
                    num(rate.cny),
                    money(extra)
                ));
                Some(extra)
            }
            (None, _) => {
                if row.is_some() {
                    lines.push("minimum storage duration: unknown for this class".into());
                }
                None
            }
            (Some(_), None) => None,
        },
    };
    let total = match (storage, retrieval, minimum) {
        (Some(a), Some(b), Some(c)) => Some(a + b + c),
        _ => None,
    };
    let saving = current.zip(total).map(|(c, t)| c - t);
    ArchiveOption {
        tier,
        price: row,
        storage_cny: storage,
        retrieval_cny: retrieval,
        minimum_duration_cny: minimum,
        total_cny: total,
        saving_cny: saving,
        lines,
    }
}

fn money(x: f64) -> String {
    format!("{x:.2}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn every_row_is_cited_and_within_sane_bounds() {
        assert!(TABLE.len() > 30);
        for r in TABLE {
            assert!(!r.source.is_empty() && !r.product.is_empty() && !r.as_of.is_empty(), "{r:?}");
            // CNY per GB-month for storage is well under 5; an IP's hold under 1 CNY/hour.
            for m in r.usage_per_month().into_iter().chain(r.prepaid_per_month()) {
                assert!(m.cny > 0.0 && m.cny < 20.0, "{r:?}");
            }
            if r.kind == StorageKind::SystemDisk {
                assert!(!r.is_priced() && !r.notes.is_empty());
            }
        }
        // Every kind a cloud is asked about has a row, priced or not, so unknowns say where we looked.
        for p in Provider::ALL {
            for k in [StorageKind::Disk, StorageKind::Snapshot, StorageKind::IdleIp, StorageKind::FileSystem]
            {
                assert!(!classes(p, k).is_empty(), "{p:?} {k:?}");
            }
            for w in ["standard", "ia", "archive", "ssd", "premium", "capacity", "performance"] {
                let kind = match w {
                    "ssd" | "premium" => StorageKind::Disk,
                    "capacity" | "performance" => StorageKind::FileSystem,
                    _ => StorageKind::Object,
                };
                assert!(
                    TABLE.iter().any(|r| r.provider == p && r.kind == kind && matches(r, w)),
                    "{p:?} {w}"
                );
            }
            assert!(system_disk_rule(p).is_some());
        }
    }

    #[test]
    fn the_cloud_word_and_gpuctl_word_find_the_same_row() {
        let a = lookup(Provider::Tencent, StorageKind::Disk, "CLOUD_PREMIUM", "ap-guangzhou").unwrap();
        let b = lookup(Provider::Tencent, StorageKind::Disk, "premium", "ap-guangzhou").unwrap();
        let c = lookup(Provider::Tencent, StorageKind::Disk, "cloud_premium", "ap-guangzhou").unwrap();
        assert!(std::ptr::eq(a, b) && std::ptr::eq(a, c));
        assert_eq!((a.monthly, a.hourly), (Some(0.35), Some(0.0009)));
        // The region picks its own row: Nanjing's hourly figure differs.
        let nj = lookup(Provider::Tencent, StorageKind::Disk, "CLOUD_SSD", "ap-nanjing").unwrap();
        assert_eq!(nj.hourly, Some(0.0014));
        let ali = lookup(Provider::Alibaba, StorageKind::Disk, "ssd", "cn-hangzhou").unwrap();
        assert_eq!(ali.class, "cloud_essd");
        let jd = lookup(Provider::JdCloud, StorageKind::Disk, "premium", "cn-north-1").unwrap();
        assert_eq!(jd.class, "hdd.std1");
    }

    #[test]
    fn unknown_stays_unknown_with_the_reason() {
        let e = lookup(Provider::Tencent, StorageKind::Disk, "CLOUD_BASIC", "ap-guangzhou").unwrap_err();
        assert!(e.to_string().starts_with("price unknown") && e.to_string().contains("CLOUD_PREMIUM"), "{e}");
        let e = lookup(Provider::Tencent, StorageKind::Disk, "CLOUD_SSD", "ap-hongkong").unwrap_err();
        assert!(e.to_string().contains("not ap-hongkong"), "{e}");
        // A row without a figure: found, but unpriced.
        let bssd = lookup(Provider::Tencent, StorageKind::Disk, "CLOUD_BSSD", "ap-guangzhou").unwrap();
        assert!(!bssd.is_priced() && bssd.usage_per_month().is_none());
        let c =
            monthly_cost(Provider::Tencent, StorageKind::IdleIp, "EIP", "ap-guangzhou", 1.0, Billing::Usage);
        assert_eq!(c.cny_per_month, None);
        assert!(c.basis.starts_with("price unknown"), "{}", c.basis);
        let c = monthly_cost(
            Provider::Alibaba,
            StorageKind::Disk,
            "cloud_efficiency",
            "cn-beijing",
            100.0,
            Billing::Usage,
        );
        assert_eq!(c.cny_per_month, None);
    }

    #[test]
    fn conversions_are_the_printed_figure_times_the_month() {
        // Tencent CLOUD_SSD pay-as-you-go: 0.0025 CNY/GB-h × 730 h × 100 GB = 182.5 CNY.
        let c =
            monthly_cost(Provider::Tencent, StorageKind::Disk, "ssd", "ap-guangzhou", 100.0, Billing::Usage);
        assert!(close(c.cny_per_month.unwrap(), 182.5), "{c:?}");
        assert_eq!(c.basis, "100 GB × 0.0025 CNY/GB-hour × 730 h");
        // Prepaid: 1.0 CNY/GB-month × 100 GB = 100 CNY.
        let c = monthly_cost(
            Provider::Tencent,
            StorageKind::Disk,
            "ssd",
            "ap-guangzhou",
            100.0,
            Billing::Prepaid,
        );
        assert!(close(c.cny_per_month.unwrap(), 100.0));
        // JD snapshot: 0.00427 CNY/GB-day × 730/24 days × 200 GB = 25.9758… CNY.
        let c = monthly_cost(
            Provider::JdCloud,
            StorageKind::Snapshot,
            "snapshot",
            "cn-north-1",
            200.0,
            Billing::Prepaid,
        );
        assert_eq!(c.billing, Billing::Usage);
        assert!(close(c.cny_per_month.unwrap(), 0.00427 * 730.0 / 24.0 * 200.0));
        // JD idle IP: 0.48 CNY/day → 14.6 CNY a month.
        let c = monthly_cost(Provider::JdCloud, StorageKind::IdleIp, "eip", "cn-east-2", 1.0, Billing::Usage);
        assert!(close(c.cny_per_month.unwrap(), 14.6));
        // Alibaba EIP: 0.02 CNY/h × 730 = 14.6 CNY.
        let c =
            monthly_cost(Provider::Alibaba, StorageKind::IdleIp, "EIP", "cn-hangzhou", 2.0, Billing::Usage);
        assert!(close(c.cny_per_month.unwrap(), 29.2));
        // Tencent snapshot: printed monthly 0.13, used as printed (not 0.0001806 × 730 = 0.1318).
        let s = lookup(Provider::Tencent, StorageKind::Snapshot, "snapshot", "ap-beijing").unwrap();
        assert_eq!(s.usage_per_month().unwrap().cny, 0.13);
        // A file system's hourly rate: JD std1 as printed; Alibaba capacity from the month.
        let fs = lookup(Provider::Alibaba, StorageKind::FileSystem, "capacity", "cn-beijing").unwrap();
        assert!(close(fs.usage_per_hour().unwrap().cny, 0.35 / 730.0));
        // No pay-as-you-go rate is derived from a disk's prepaid figure: JD Suqian prints monthly only.
        let jd_sq = lookup(Provider::JdCloud, StorageKind::Disk, "ssd.gp1", "cn-east-1").unwrap();
        assert!(jd_sq.usage_per_hour().is_none() && jd_sq.prepaid_per_month().is_some());
    }

    fn question(provider: Provider, region: &str, from: StorageKind, class: &str) -> ArchiveQuestion {
        ArchiveQuestion {
            provider,
            region: region.into(),
            from,
            from_class: class.into(),
            billing: Billing::Usage,
            gb: 2048.0,
            older_than_days: 14,
            restores_per_month: 2.0,
            restore_gb: 100.0,
            keep_days: None,
        }
    }

    #[test]
    fn archive_savings_by_hand_alibaba_essd_to_ia() {
        // Today: 2048 GB of ESSD PL1 pay-as-you-go, 0.0021 CNY/GB-h × 730 h = 1.533 CNY/GB-month
        // → 3139.584 CNY. IA: 2048 × 0.08 = 163.84; two restores of 100 GB × 0.0325 = 6.5; kept, so
        // no minimum charge → 170.34; saving 2969.244 CNY a month.
        let a = archive_savings(&question(Provider::Alibaba, "cn-hangzhou", StorageKind::Disk, "ssd"));
        assert!(close(a.current.cny_per_month.unwrap(), 3139.584), "{:?}", a.current);
        let ia = &a.options[0];
        assert_eq!(ia.tier, "ia");
        assert!(close(ia.storage_cny.unwrap(), 163.84) && close(ia.retrieval_cny.unwrap(), 6.5));
        assert!(close(ia.total_cny.unwrap(), 170.34));
        assert!(close(ia.saving_cny.unwrap(), 2969.244));
        // Alibaba's archive price is not recorded: no saving is claimed.
        let ar = &a.options[1];
        assert_eq!((ar.storage_cny, ar.saving_cny), (None, None));
        assert!(ar.lines.iter().any(|l| l.contains("price unknown")), "{:?}", ar.lines);
    }

    #[test]
    fn archive_savings_by_hand_jd_file_system_to_archive_with_early_deletion() {
        // Today: 1000 GB on 云文件服务 std1 at 0.35 CNY/GB-month = 350 CNY.
        // Archive: 0.001 CNY/GB-day × 730/24 = 0.030416… CNY/GB-month × 1000 = 30.4167;
        // one restore of 50 GB × 0.06 = 3; deleted after 30 of a 60-day minimum:
        // 1000 × 0.030416… × (60 − 30) / 30 = 30.4167 → total 63.8333, saving 286.1667.
        let mut q = question(Provider::JdCloud, "cn-north-1", StorageKind::FileSystem, "capacity");
        (q.gb, q.restores_per_month, q.restore_gb, q.keep_days) = (1000.0, 1.0, 50.0, Some(30));
        let a = archive_savings(&q);
        assert!(close(a.current.cny_per_month.unwrap(), 350.0));
        let ar = a.options.iter().find(|o| o.tier == "archive").unwrap();
        let per_gb = 0.001 * 730.0 / 24.0;
        assert!(close(ar.storage_cny.unwrap(), 1000.0 * per_gb));
        assert!(close(ar.retrieval_cny.unwrap(), 3.0));
        assert!(close(ar.minimum_duration_cny.unwrap(), 1000.0 * per_gb));
        assert!(close(ar.saving_cny.unwrap(), 350.0 - 2.0 * 1000.0 * per_gb - 3.0), "{ar:?}");
        assert!((ar.saving_cny.unwrap() - 286.1667).abs() < 1e-3);
        // IA kept 30 days meets its 30-day minimum: nothing extra.
        let ia = a.options.iter().find(|o| o.tier == "ia").unwrap();
        assert_eq!(ia.minimum_duration_cny, Some(0.0));
        // 0.00267 × 730/24 × 1000 + 50 × 0.03 = 81.2125 + 1.5.
        assert!(close(ia.total_cny.unwrap(), 0.00267 * 730.0 / 24.0 * 1000.0 + 1.5));
    }

    #[test]
    fn archive_savings_unknown_fees_block_the_figure_only_when_they_apply() {
        // Tencent COS IA has no recorded retrieval fee: with restores expected the total is unknown…
        let q = question(Provider::Tencent, "ap-guangzhou", StorageKind::Disk, "CLOUD_PREMIUM");
        let a = archive_savings(&q);
        // 2048 GB × 0.0009 × 730 = 1345.536 CNY today.
        assert!(close(a.current.cny_per_month.unwrap(), 1345.536));
        let ia = &a.options[0];
        assert_eq!((ia.retrieval_cny, ia.total_cny, ia.saving_cny), (None, None, None));
        // …without restores it is known: 2048 × 0.08 = 163.84, saving 1181.696.
        let a = archive_savings(&ArchiveQuestion { restores_per_month: 0.0, ..q.clone() });
        assert!(close(a.options[0].saving_cny.unwrap(), 1345.536 - 163.84));
        // Tencent archive's minimum duration is unknown: deleting after 10 days leaves the total unknown.
        let a = archive_savings(&ArchiveQuestion { restores_per_month: 0.0, keep_days: Some(10), ..q });
        let ar = &a.options[1];
        assert_eq!(ar.minimum_duration_cny, None);
        assert!(ar.lines.iter().any(|l| l.contains("minimum storage duration: unknown")));
        // Moving costs more than it saves when restores dominate: a negative saving, said as such.
        let mut q = question(Provider::JdCloud, "cn-north-1", StorageKind::Disk, "premium");
        (q.gb, q.restores_per_month, q.restore_gb) = (10.0, 100.0, 10.0);
        let a = archive_savings(&q);
        assert!(a.options[1].saving_cny.unwrap() < 0.0);
    }
}
