//! The catalog: GPUs, instance types per provider, and prices per billing mode.
//!
//! Owns the data model (its types are declared in `schema`, which build.rs shares; their methods are
//! here), the embedded data files (`crates/core/data/*.toml`), the user overlay
//! (their own quotes win over shipped rows) and price resolution: every (instance, region, mode)
//! the provider offers gets either an observed price row or an estimate derived from a monthly
//! anchor, and every resolved [`Price`] says which, with source, date and confidence.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use jiff::civil::Date;
use serde::{Deserialize, Serialize};

use crate::schema::DataFile;
// Where names are suggested; re-exported so `catalog::UnknownName` keeps working.
pub use crate::schema::{
    Anchor, BillingMode, Confidence, Gpu, InstanceType, ModeRatio, PriceRow, Provider, ProviderInfo, Region,
    Stack, SCHEMA_VERSION,
};
pub use crate::suggest::UnknownName;

/// The shipped data files as written, for the test that build.rs's binary form reads back the same
/// catalog as the TOML reader does. The binary never carries them: it decodes [`SHIPPED_BINARY`].
#[cfg(all(test, feature = "toml-files"))]
const SHIPPED_TOML: [(&str, &str); 3] = [
    ("gpus.toml", include_str!("../data/gpus.toml")),
    ("instances.toml", include_str!("../data/instances.toml")),
    ("prices.toml", include_str!("../data/prices.toml")),
];

/// The same files as build.rs read them into the schema types and wrote them, each with its name, in
/// borsh's binary form: every build (CLI and browser alike) starts from these bytes. Decoding them
/// takes no text parser (no TOML, no JSON deserializer in the browser bundle) and a fraction of the
/// TOML reader's time at every CLI start (issue 11); the same merge and checks then run on them. The
/// TOML reader is only for a user's overlay. Names stay `*.toml` for error messages.
///
/// Embedded in the CLI (feature `embedded-catalog`, and in core's own tests). The browser calculator
/// leaves it out of its code bundle and fetches the same bytes as `catalog.bin` instead, handing them
/// to [`Catalog::install_shipped`] (issue 18: the catalog would push the bundle past its 300 KB budget,
/// and a refreshed catalog should not invalidate the cached code).
#[cfg(any(test, feature = "embedded-catalog"))]
const SHIPPED_BINARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/catalog.borsh"));

/// The shipped catalog, once decoded (or installed by the browser).
static SHIPPED: OnceLock<Catalog> = OnceLock::new();

/// A provider by name or alias (`aliyun`, `qcloud`…); an unknown name comes back with the closest names.
pub fn parse_provider(s: &str) -> Result<Provider, UnknownName> {
    Provider::from_name(s).ok_or_else(|| UnknownName::new("provider", s, Provider::NAMES))
}

impl BillingMode {
    pub const ALL: [BillingMode; 6] = [
        BillingMode::Hourly,
        BillingMode::Spot,
        BillingMode::Weekly,
        BillingMode::Monthly,
        BillingMode::Year1,
        BillingMode::Year3,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BillingMode::Hourly => "hourly",
            BillingMode::Spot => "spot",
            BillingMode::Weekly => "weekly",
            BillingMode::Monthly => "monthly",
            BillingMode::Year1 => "year1",
            BillingMode::Year3 => "year3",
        }
    }

    pub fn parse(s: &str) -> Result<BillingMode, UnknownName> {
        match s.to_ascii_lowercase().as_str() {
            "hourly" | "payg" | "postpaid" | "on-demand" | "ondemand" => Ok(BillingMode::Hourly),
            "spot" | "preemptible" => Ok(BillingMode::Spot),
            "weekly" | "week" => Ok(BillingMode::Weekly),
            "monthly" | "month" | "prepaid" => Ok(BillingMode::Monthly),
            "year1" | "yearly" | "1y" | "1-year" => Ok(BillingMode::Year1),
            "year3" | "3y" | "3-year" => Ok(BillingMode::Year3),
            _ => Err(UnknownName::new("billing mode", s, BillingMode::ALL.iter().map(|m| m.as_str()))),
        }
    }

    /// Hours of one billing term (a month is 730 h, a year 8,760 h). Hourly and spot terms are 1 h.
    pub fn term_hours(self) -> f64 {
        match self {
            BillingMode::Hourly | BillingMode::Spot => 1.0,
            BillingMode::Weekly => 168.0,
            BillingMode::Monthly => 730.0,
            BillingMode::Year1 => 8760.0,
            BillingMode::Year3 => 3.0 * 8760.0,
        }
    }

    /// True for pay-per-hour modes (billed for hours used, released when done).
    pub fn is_per_hour(self) -> bool {
        matches!(self, BillingMode::Hourly | BillingMode::Spot)
    }

    /// The unit a price in this mode is quoted in, for people.
    pub fn unit(self) -> &'static str {
        match self {
            BillingMode::Hourly | BillingMode::Spot => "hour",
            BillingMode::Weekly => "week",
            BillingMode::Monthly => "month",
            BillingMode::Year1 => "year",
            BillingMode::Year3 => "3 years",
        }
    }
}

impl fmt::Display for BillingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::A => "A",
            Confidence::B => "B",
            Confidence::C => "C",
            Confidence::Brief => "brief",
            Confidence::Estimate => "estimate",
            Confidence::User => "user",
        }
    }
}

impl Gpu {
    /// Compute capability as a number (7.5), `None` for Ascend.
    pub fn cc(&self) -> Option<f64> {
        self.compute_capability.parse().ok()
    }
}

impl InstanceType {
    /// GPUs counted whole (a vGPU slice counts as 1 device).
    pub fn devices(&self) -> u32 {
        self.gpu_count.ceil().max(1.0) as u32
    }
    /// Usable VRAM per device in GB (a slice gets its share).
    pub fn vram_per_device_gb(&self, gpu: &Gpu) -> f64 {
        if self.gpu_count < 1.0 {
            gpu.vram_gb * self.gpu_count
        } else {
            gpu.vram_gb
        }
    }
}

/// Where a resolved price came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PriceOrigin {
    /// A row in the shipped data.
    Shipped,
    /// A row in the user's overlay.
    Overlay,
    /// Estimated from a monthly anchor with a mode ratio.
    Derived,
}

/// A resolved price for one instance, region and billing mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub provider: Provider,
    pub instance: String,
    pub region: String,
    pub mode: BillingMode,
    /// ¥ per term of `mode` (hour, week, month, year, 3 years).
    pub cny: f64,
    /// ¥ per hour of the term, for comparing modes (cny ÷ term hours).
    pub cny_per_hour: f64,
    pub as_of: Date,
    pub source: String,
    pub confidence: Confidence,
    pub origin: PriceOrigin,
    /// How an estimate was made; empty for observed prices.
    pub derivation: String,
}

impl Price {
    /// Age in days on `today` (the engine reads no clock: callers pass the date).
    pub fn age_days(&self, today: Date) -> i64 {
        days_between(self.as_of, today)
    }
}

/// [`Catalog::best_price`] over one instance type's prices (`Catalog::prices_of`): ranking looks the
/// instance up once and picks every mode from the slice. One pass keeps the cheapest observed and the
/// cheapest of all; ties go to the first region by name.
pub(crate) fn best_of<'a>(prices: &'a [Price], mode: BillingMode, regions: &[String]) -> Option<&'a Price> {
    let cheaper =
        |a: &Price, b: &Price| a.cny.total_cmp(&b.cny).then_with(|| a.region.cmp(&b.region)).is_lt();
    let (mut observed, mut any): (Option<&Price>, Option<&Price>) = (None, None);
    for p in prices.iter().filter(|p| p.mode == mode && (regions.is_empty() || regions.contains(&p.region))) {
        if any.is_none_or(|b| cheaper(p, b)) {
            any = Some(p);
        }
        if p.origin != PriceOrigin::Derived && observed.is_none_or(|b| cheaper(p, b)) {
            observed = Some(p);
        }
    }
    observed.or(any)
}

// ---- files ---------------------------------------------------------------------------------

/// Why a catalog or overlay file was refused. Carries line:column where known.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatalogError {
    #[error("{file}:{line}:{column}: {message}")]
    Parse { file: String, line: usize, column: usize, message: String },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

#[cfg(feature = "toml-files")]
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn parse_file(name: &str, text: &str) -> Result<DataFile, CatalogError> {
    let trimmed = text.trim_start();
    let parsed: DataFile = if trimmed.starts_with('{') {
        serde_json::from_str(text).map_err(|e| CatalogError::Parse {
            file: name.to_string(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?
    } else {
        parse_toml(name, text)?
    };
    check_schema(name, parsed)
}

fn check_schema(name: &str, parsed: DataFile) -> Result<DataFile, CatalogError> {
    if parsed.schema_version != SCHEMA_VERSION {
        return Err(CatalogError::Invalid {
            file: name.to_string(),
            message: format!(
                "schema_version = {} but this gpuctl reads schema_version = {SCHEMA_VERSION}",
                parsed.schema_version
            ),
        });
    }
    Ok(parsed)
}

#[cfg(feature = "toml-files")]
fn parse_toml(name: &str, text: &str) -> Result<DataFile, CatalogError> {
    toml::from_str(text).map_err(|e| {
        let (line, column) = e.span().map_or((1, 1), |s| line_col(text, s.start));
        CatalogError::Parse { file: name.to_string(), line, column, message: e.message().trim().to_string() }
    })
}

/// Without `toml-files` (the browser build) there is no TOML reader: say so rather than misparse.
#[cfg(not(feature = "toml-files"))]
fn parse_toml(name: &str, _text: &str) -> Result<DataFile, CatalogError> {
    Err(CatalogError::Invalid {
        file: name.to_string(),
        message: "this build reads JSON catalog files only (gpuctl-core without `toml-files`)".into(),
    })
}

// ---- the catalog ---------------------------------------------------------------------------

/// GPUs, providers, instance types and resolved prices. Cheap to query; build once.
#[derive(Debug, Clone)]
pub struct Catalog {
    gpus: Vec<Gpu>,
    providers: Vec<ProviderInfo>,
    instances: Vec<InstanceType>,
    rows: Vec<PriceRow>,
    row_origin: Vec<PriceOrigin>,
    anchors: Vec<Anchor>,
    ratios: Vec<ModeRatio>,
    /// Resolved prices, made on first use: a command that prices nothing (a `sweep` that finds
    /// nothing, `destroy`'s spec check) does not pay for ~2,000 prices and their derivation texts.
    /// The references they rest on are checked when the catalog is built, so making them cannot fail.
    resolved: OnceLock<Resolved>,
    /// True when an overlay was applied.
    pub overlaid: bool,
}

/// Every resolved price, and where each instance type's are.
#[derive(Debug, Clone)]
struct Resolved {
    /// Sorted by (provider, instance, region, mode).
    prices: Vec<Price>,
    /// Index: provider → instance id → range in `prices` (looked up by `&str`, no allocation).
    index: BTreeMap<Provider, BTreeMap<String, (usize, usize)>>,
}

/// The fields in their declared order, `prices` being the resolved prices (made if not yet): the same
/// JSON as when they were resolved at load.
impl Serialize for Catalog {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Catalog", 9)?;
        st.serialize_field("gpus", &self.gpus)?;
        st.serialize_field("providers", &self.providers)?;
        st.serialize_field("instances", &self.instances)?;
        st.serialize_field("rows", &self.rows)?;
        st.serialize_field("row_origin", &self.row_origin)?;
        st.serialize_field("anchors", &self.anchors)?;
        st.serialize_field("ratios", &self.ratios)?;
        st.serialize_field("prices", self.prices())?;
        st.serialize_field("overlaid", &self.overlaid)?;
        st.end()
    }
}

impl Catalog {
    /// The shipped catalog, decoded once: from the bytes embedded in the binary (`embedded-catalog`),
    /// or, in the browser, from the `catalog.bin` the page fetched and gave to
    /// [`Catalog::install_shipped`] before it rendered anything.
    pub fn shipped() -> &'static Catalog {
        #[cfg(any(test, feature = "embedded-catalog"))]
        {
            SHIPPED.get_or_init(|| {
                Catalog::decode_shipped().expect("shipped catalog is valid (checked by tests)")
            })
        }
        #[cfg(not(any(test, feature = "embedded-catalog")))]
        {
            // A programming error, not bad input: the page mounts only after a successful install.
            SHIPPED.get().expect("Catalog::install_shipped ran before the catalog was used")
        }
    }

    /// Decodes `bytes` (build.rs's binary form, as the browser fetched it) and makes it the catalog
    /// [`Catalog::shipped`] returns from now on. A catalog already in place (embedded and used, or
    /// installed before) stays: the first one wins, so every caller sees one catalog. Damaged or
    /// foreign bytes are refused with a message.
    pub fn install_shipped(bytes: &[u8]) -> Result<&'static Catalog, CatalogError> {
        let cat = Catalog::from_binary(bytes)?;
        Ok(SHIPPED.get_or_init(|| cat))
    }

    /// A fresh copy of the shipped catalog, decoded now (not the cached [`Catalog::shipped`]); for
    /// measuring start-up (`benches/catalog.rs`).
    #[doc(hidden)]
    #[cfg(any(test, feature = "embedded-catalog"))]
    pub fn decode_shipped() -> Result<Catalog, CatalogError> {
        Catalog::from_binary(SHIPPED_BINARY)
    }

    /// Build from data files (TOML, or JSON when the text starts with `{`); `(name, text)` pairs.
    pub fn from_files(files: &[(&str, &str)]) -> Result<Catalog, CatalogError> {
        Catalog::from_data(files.iter().map(|(name, text)| Ok((*name, parse_file(name, text)?))))
    }

    /// Build from build.rs's binary form (see [`SHIPPED_BINARY`]): the named data files in one blob.
    fn from_binary(bytes: &[u8]) -> Result<Catalog, CatalogError> {
        // A fixed message: formatting borsh's error would pull io::Error's text into the bundle,
        // and the shipped files are checked at build time anyway.
        let files =
            borsh::from_slice::<Vec<(String, DataFile)>>(bytes).map_err(|_| CatalogError::Invalid {
                file: "the shipped catalog".into(),
                message: "not a catalog in build.rs's binary form".into(),
            })?;
        Catalog::from_data(files.into_iter().map(|(name, file)| {
            let file = check_schema(&name, file)?;
            Ok((name, file))
        }))
    }

    fn from_data<N: AsRef<str>>(
        files: impl Iterator<Item = Result<(N, DataFile), CatalogError>>,
    ) -> Result<Catalog, CatalogError> {
        let mut cat = Catalog::empty();
        for file in files {
            let (name, file) = file?;
            cat.merge(name.as_ref(), file, PriceOrigin::Shipped)?;
        }
        cat.check().map_err(|message| CatalogError::Invalid { file: "catalog".into(), message })?;
        Ok(cat)
    }

    fn empty() -> Catalog {
        Catalog {
            gpus: vec![],
            providers: vec![],
            instances: vec![],
            rows: vec![],
            row_origin: vec![],
            anchors: vec![],
            ratios: vec![],
            resolved: OnceLock::new(),
            overlaid: false,
        }
    }

    /// This catalog with a user overlay applied: overlay rows replace shipped rows with the same key
    /// (GPU id; provider + instance id; provider + instance + region + mode for prices; GPU for anchors).
    /// `name` is used in error messages (`name:line:column`).
    pub fn with_overlay(&self, name: &str, text: &str) -> Result<Catalog, CatalogError> {
        let file = parse_file(name, text)?;
        let mut cat = self.clone();
        cat.merge(name, file, PriceOrigin::Overlay)?;
        cat.overlaid = true;
        cat.check().map_err(|message| CatalogError::Invalid { file: name.into(), message })?;
        Ok(cat)
    }

    fn merge(&mut self, name: &str, file: DataFile, origin: PriceOrigin) -> Result<(), CatalogError> {
        let invalid = |message: String| CatalogError::Invalid { file: name.to_string(), message };
        for g in file.gpu {
            upsert(&mut self.gpus, g, |a, b| a.id == b.id);
        }
        for p in file.provider {
            upsert(&mut self.providers, p, |a, b| a.id == b.id);
        }
        for i in file.instance {
            upsert(&mut self.instances, i, |a, b| a.provider == b.provider && a.id == b.id);
        }
        for (n, r) in file.price.into_iter().enumerate() {
            parse_date(&r.as_of)
                .map_err(|e| invalid(format!("price row {} ({}): {e}", n + 1, r.instance)))?;
            if !(r.cny.is_finite() && r.cny > 0.0) {
                return Err(invalid(format!(
                    "price row {} ({}): cny must be a positive number",
                    n + 1,
                    r.instance
                )));
            }
            let mut r = r;
            // An overlay row is the user's own figure (a quote, a contract): tag it `user`, unless they
            // marked it as an estimate or a brief quote themselves.
            if origin == PriceOrigin::Overlay
                && !matches!(r.confidence, Confidence::Estimate | Confidence::Brief)
            {
                r.confidence = Confidence::User;
            }
            let same_key = |x: &PriceRow| {
                x.provider == r.provider
                    && x.instance == r.instance
                    && x.region == r.region
                    && x.mode == r.mode
            };
            if origin == PriceOrigin::Overlay {
                // The user's figure replaces every shipped source for that key.
                let mut k = 0;
                while k < self.rows.len() {
                    if same_key(&self.rows[k]) {
                        self.rows.remove(k);
                        self.row_origin.remove(k);
                    } else {
                        k += 1;
                    }
                }
                self.rows.push(r);
                self.row_origin.push(origin);
                continue;
            }
            // Shipped rows: the same source again replaces its row; another source is kept beside it
            // (conflicting sources are kept apart, never averaged).
            match self.rows.iter().position(|x| same_key(x) && x.source == r.source) {
                Some(k) => {
                    self.rows[k] = r;
                    self.row_origin[k] = origin;
                }
                None => {
                    self.rows.push(r);
                    self.row_origin.push(origin);
                }
            }
        }
        for a in file.anchor {
            parse_date(&a.as_of).map_err(|e| invalid(format!("anchor for {}: {e}", a.gpu)))?;
            upsert(&mut self.anchors, a, |x, y| x.gpu == y.gpu);
        }
        for m in file.mode_ratio {
            upsert(&mut self.ratios, m, |a, b| a.mode == b.mode && a.provider == b.provider);
        }
        Ok(())
    }

    /// Check every reference the resolved prices rest on, and forget any prices resolved before (an
    /// overlay changes them); they are made again on first use ([`Catalog::resolved`]).
    fn check(&mut self) -> Result<(), String> {
        for i in &self.instances {
            if self.gpu(&i.gpu).is_none() {
                let e = UnknownName::new("GPU", &i.gpu, self.gpus.iter().map(|g| g.id.as_str()));
                return Err(format!("instance {} {}: {e}", i.provider, i.id));
            }
            let Some(p) = self.provider(i.provider) else {
                return Err(format!(
                    "instance {} {}: provider {} has no [[provider]] entry",
                    i.provider, i.id, i.provider
                ));
            };
            for r in &i.regions {
                if !p.regions.iter().any(|x| &x.id == r) {
                    let e = UnknownName::new("region", r, p.regions.iter().map(|x| x.id.as_str()));
                    return Err(format!("instance {} {}: {e}", i.provider, i.id));
                }
            }
            // A zone the source names must be one of this cloud's, in a region the type is sold in.
            for z in &i.zones {
                let in_regions = p.regions.iter().filter(|x| i.regions.contains(&x.id));
                if !in_regions.clone().any(|x| x.zones.contains(z)) {
                    let e = UnknownName::new(
                        "zone",
                        z,
                        in_regions.flat_map(|x| x.zones.iter().map(|z| z.as_str())),
                    );
                    return Err(format!("instance {} {}: {e} (zones of its regions)", i.provider, i.id));
                }
            }
            for (field, v) in [("net_gbps", i.net_gbps), ("rdma_gbps", i.rdma_gbps)] {
                if v.is_some_and(|n| !(n.is_finite() && n > 0.0)) {
                    return Err(format!(
                        "instance {} {}: {field} must be a positive number",
                        i.provider, i.id
                    ));
                }
            }
            if i.rdma_gbps.is_some() && i.rdma.is_none() {
                return Err(format!(
                    "instance {} {}: rdma_gbps needs `rdma`, the fabric it measures",
                    i.provider, i.id
                ));
            }
        }
        for r in &self.rows {
            let Some(inst) = self.instance_type(r.provider, &r.instance) else {
                let e = UnknownName::new(
                    "instance type",
                    &r.instance,
                    self.instances.iter().filter(|i| i.provider == r.provider).map(|i| i.id.as_str()),
                );
                return Err(format!("price for {} {}: {e}", r.provider, r.instance));
            };
            if r.region != "*" && !inst.regions.contains(&r.region) {
                let e = UnknownName::new("region", &r.region, inst.regions.iter().map(|s| s.as_str()));
                return Err(format!(
                    "price for {} {}: {e} (regions of this instance type)",
                    r.provider, r.instance
                ));
            }
        }
        for a in &self.anchors {
            if self.gpu(&a.gpu).is_none() {
                let e = UnknownName::new("GPU", &a.gpu, self.gpus.iter().map(|g| g.id.as_str()));
                return Err(format!("anchor: {e}"));
            }
        }
        self.resolved = OnceLock::new();
        Ok(())
    }

    /// The resolved prices: every (instance type, region, mode) sold gets its observed row or an
    /// estimate. Made once, on first use.
    fn resolved(&self) -> &Resolved {
        self.resolved.get_or_init(|| self.resolve())
    }

    fn resolve(&self) -> Resolved {
        let mut prices = Vec::new();
        for inst in &self.instances {
            let modes = self.billing_modes(inst);
            for region in &inst.regions {
                for &mode in &modes {
                    if let Some(p) = self.resolve_one(inst, region, mode) {
                        prices.push(p);
                    }
                }
            }
        }
        prices.sort_by(|a, b| {
            (a.provider, &a.instance, &a.region, a.mode).cmp(&(b.provider, &b.instance, &b.region, b.mode))
        });
        let mut index: BTreeMap<Provider, BTreeMap<String, (usize, usize)>> = BTreeMap::new();
        let mut start = 0;
        while start < prices.len() {
            let (provider, instance) = (prices[start].provider, &prices[start].instance);
            let mut end = start;
            while end < prices.len() && prices[end].provider == provider && &prices[end].instance == instance
            {
                end += 1;
            }
            index.entry(provider).or_default().insert(instance.clone(), (start, end));
            start = end;
        }
        Resolved { prices, index }
    }

    /// The observed row to use for exactly this region, else for `*`, with the other rows for the same
    /// key (other sources) and why the chosen one won. Sources are ranked, not averaged: a figure
    /// someone observed (A/B/C or the user's) beats a brief quote; among those, the newest wins (prices
    /// move; an old list price is kept beside it for comparison), then the better confidence.
    fn row_for(&self, inst: &InstanceType, region: &str, mode: BillingMode) -> Option<ChosenRow<'_>> {
        let find = |reg: &str| {
            let mut rows: Vec<(&PriceRow, PriceOrigin)> = self
                .rows
                .iter()
                .zip(self.row_origin.iter().copied())
                .filter(|(r, _)| {
                    r.provider == inst.provider && r.instance == inst.id && r.region == reg && r.mode == mode
                })
                .collect();
            rows.sort_by(|(a, ao), (b, bo)| {
                let rank = |r: &PriceRow, o: PriceOrigin| {
                    (
                        o != PriceOrigin::Overlay,
                        matches!(r.confidence, Confidence::Brief | Confidence::Estimate),
                    )
                };
                rank(a, *ao)
                    .cmp(&rank(b, *bo))
                    .then_with(|| b.as_of.cmp(&a.as_of))
                    .then_with(|| a.confidence.cmp(&b.confidence))
            });
            (!rows.is_empty()).then_some(rows)
        };
        let mut rows = find(region).or_else(|| find("*"))?;
        let (row, origin) = rows.remove(0);
        Some(ChosenRow { row, origin, others: rows.into_iter().map(|(r, _)| r).collect() })
    }

    /// The mode ratio for this cloud (its documented rule), else the fallback for every cloud.
    fn ratio_for(&self, provider: Provider, mode: BillingMode) -> Option<&ModeRatio> {
        let of = |p: Option<Provider>| self.ratios.iter().find(|x| x.mode == mode && x.provider == p);
        of(Some(provider)).or_else(|| of(None))
    }

    fn resolve_one(&self, inst: &InstanceType, region: &str, mode: BillingMode) -> Option<Price> {
        let make = |cny: f64, as_of: &str, source: &str, confidence, origin, derivation: String| Price {
            provider: inst.provider,
            instance: inst.id.clone(),
            region: region.to_string(),
            mode,
            cny,
            cny_per_hour: cny / mode.term_hours(),
            as_of: parse_date(as_of).expect("dates checked on merge"),
            source: source.to_string(),
            confidence,
            origin,
            derivation,
        };
        if let Some(ChosenRow { row: r, origin, others }) = self.row_for(inst, region, mode) {
            let mut d = r.derivation.clone();
            if r.region == "*" && d.is_empty() {
                d = "source gives no region; assumed the same in every region".into();
            }
            let mut notes: Vec<String> = others
                .iter()
                .map(|o| {
                    format!(
                        "also observed ¥{:.2} ({}, confidence {}, {}); this row used: {}",
                        o.cny,
                        o.as_of,
                        o.confidence.as_str(),
                        o.source,
                        if matches!(o.confidence, Confidence::Brief) && !matches!(r.confidence, Confidence::Brief) {
                            "an observed figure beats a brief quote"
                        } else if o.as_of < r.as_of {
                            "it is the newer one (prices move; the older is kept for comparison, not averaged)"
                        } else {
                            "it is the better-sourced one of the same date"
                        }
                    )
                })
                .collect();
            // An old observation next to a newer per-GPU anchor that disagrees with it: say which
            // was used and why (an anchor is another type's price scaled per GPU).
            if mode == BillingMode::Monthly {
                if let Some(a) = self.anchors.iter().find(|a| a.gpu == inst.gpu && a.as_of > r.as_of) {
                    let scaled = a.monthly_cny_per_gpu * inst.gpu_count;
                    if (scaled - r.cny).abs() > 0.15 * r.cny {
                        notes.push(format!(
                            "the newer per-GPU anchor ({}, ¥{:.2}/GPU: {}) would give ¥{scaled:.2}; this type's own observed price is used, since an anchor is another type's price scaled per GPU; `gpuctl catalog refresh` fetches today's",
                            a.as_of, a.monthly_cny_per_gpu, a.source
                        ));
                    }
                }
            }
            if !notes.is_empty() {
                if !d.is_empty() {
                    d.push_str("; ");
                }
                d.push_str(&notes.join("; "));
            }
            return Some(make(r.cny, &r.as_of, &r.source, r.confidence, origin, d));
        }
        // Estimate from a monthly figure: this instance's own monthly row (same region, else any), else the
        // per-GPU anchor × GPU count.
        let ratio = self.ratio_for(inst.provider, mode)?;
        let own_monthly = self.row_for(inst, region, BillingMode::Monthly).map(|c| c.row).or_else(|| {
            self.rows.iter().find(|r| {
                r.provider == inst.provider
                    && r.instance == inst.id
                    && r.mode == BillingMode::Monthly
                    && !matches!(r.confidence, Confidence::Brief)
            })
        });
        let (monthly, as_of, source, base) = if let Some(r) = own_monthly {
            (
                r.cny,
                r.as_of.clone(),
                r.source.clone(),
                format!(
                    "this type's monthly ¥{:.2} ({}, {}, confidence {})",
                    r.cny,
                    r.region,
                    r.as_of,
                    r.confidence.as_str()
                ),
            )
        } else {
            let a = self.anchors.iter().find(|a| a.gpu == inst.gpu)?;
            (
                a.monthly_cny_per_gpu * inst.gpu_count,
                a.as_of.clone(),
                a.source.clone(),
                format!(
                    "per-GPU monthly anchor ¥{:.2} for {} × {} GPU ({}; confidence {}{}); per-GPU scaling ignores vCPU/RAM differences",
                    a.monthly_cny_per_gpu,
                    a.gpu,
                    inst.gpu_count,
                    a.as_of,
                    a.confidence.as_str(),
                    if a.derivation.is_empty() { String::new() } else { format!(": {}", a.derivation) }
                ),
            )
        };
        Some(make(
            monthly * ratio.of_monthly,
            &as_of,
            &source,
            Confidence::Estimate,
            PriceOrigin::Derived,
            if mode == BillingMode::Monthly {
                base
            } else {
                format!("{base}; {} × {}: {}", mode, ratio.of_monthly, ratio.derivation)
            },
        ))
    }

    // ---- queries -----------------------------------------------------------------------------

    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    pub fn gpu(&self, id: &str) -> Option<&Gpu> {
        self.gpus.iter().find(|g| g.id.eq_ignore_ascii_case(id))
    }

    /// A GPU by id or display name, or the closest names.
    pub fn find_gpu(&self, name: &str) -> Result<&Gpu, UnknownName> {
        let norm = |s: &str| s.to_ascii_lowercase().replace([' ', '_', '-'], "");
        let n = norm(name);
        self.gpus
            .iter()
            .find(|g| {
                norm(&g.id) == n || norm(&g.name) == n || norm(g.name.trim_start_matches("NVIDIA ")) == n
            })
            .ok_or_else(|| UnknownName::new("GPU", name, self.gpus.iter().map(|g| g.id.as_str())))
    }

    pub fn providers(&self) -> &[ProviderInfo] {
        &self.providers
    }

    pub fn provider(&self, p: Provider) -> Option<&ProviderInfo> {
        self.providers.iter().find(|x| x.id == p)
    }

    /// The cloud API's spelling of a catalog instance-type (or family) id, from either spelling:
    /// the provider's `api_type_prefix` in front (`gn7i-c8g1.2xlarge` → `ecs.gn7i-c8g1.2xlarge`),
    /// the id unchanged where the provider has none.
    pub fn api_type(&self, provider: Provider, name: &str) -> String {
        let prefix = self.api_type_prefix(provider);
        format!("{prefix}{}", name.strip_prefix(prefix).unwrap_or(name))
    }

    /// The catalog's id of an instance type named in either spelling (a spec may say
    /// `ecs.gn7i-c8g1.2xlarge` or `gn7i-c8g1.2xlarge`; a cloud answers with the first).
    pub fn catalog_type<'a>(&self, provider: Provider, name: &'a str) -> &'a str {
        name.strip_prefix(self.api_type_prefix(provider)).unwrap_or(name)
    }

    fn api_type_prefix(&self, provider: Provider) -> &str {
        self.provider(provider).map_or("", |p| p.api_type_prefix.as_str())
    }

    pub fn instance_types(&self) -> &[InstanceType] {
        &self.instances
    }

    /// Instance types of one provider.
    pub fn instance_types_of(&self, p: Provider) -> impl Iterator<Item = &InstanceType> {
        self.instances.iter().filter(move |i| i.provider == p)
    }

    pub fn instance_type(&self, provider: Provider, id: &str) -> Option<&InstanceType> {
        self.instances.iter().find(|i| i.provider == provider && i.id == id)
    }

    /// An instance type by id, or the closest ids of that provider.
    pub fn find_instance_type(&self, provider: Provider, id: &str) -> Result<&InstanceType, UnknownName> {
        self.instance_type(provider, id)
            .or_else(|| {
                self.instances.iter().find(|i| i.provider == provider && i.id.eq_ignore_ascii_case(id))
            })
            .ok_or_else(|| {
                UnknownName::new("instance type", id, self.instance_types_of(provider).map(|i| i.id.as_str()))
            })
    }

    /// Billing modes offered for this instance type.
    pub fn billing_modes(&self, inst: &InstanceType) -> Vec<BillingMode> {
        match &inst.billing_modes {
            Some(m) => m.clone(),
            None => self.provider(inst.provider).map(|p| p.billing_modes.clone()).unwrap_or_default(),
        }
    }

    /// Every resolved price (observed, overlay or derived).
    pub fn prices(&self) -> &[Price] {
        &self.resolved().prices
    }

    /// All resolved prices for an instance type (every region and mode).
    pub fn prices_of(&self, provider: Provider, instance_id: &str) -> &[Price] {
        let r = self.resolved();
        match r.index.get(&provider).and_then(|m| m.get(instance_id)) {
            Some(&(a, b)) => &r.prices[a..b],
            None => &[],
        }
    }

    /// Resolved prices for an instance type in one region, one per billing mode offered.
    pub fn prices_for(&self, provider: Provider, instance_id: &str, region: &str) -> Vec<&Price> {
        self.prices_of(provider, instance_id).iter().filter(|p| p.region == region).collect()
    }

    /// One price.
    pub fn price(
        &self,
        provider: Provider,
        instance_id: &str,
        region: &str,
        mode: BillingMode,
    ) -> Option<&Price> {
        self.prices_of(provider, instance_id).iter().find(|p| p.region == region && p.mode == mode)
    }

    /// The price to quote for an instance type and mode: the cheapest observed (shipped or overlay)
    /// price among `regions` (empty = all), else the cheapest estimate. Evidence beats estimates, so a
    /// derived price in another region never undercuts an observed one.
    pub fn best_price(
        &self,
        provider: Provider,
        instance_id: &str,
        mode: BillingMode,
        regions: &[String],
    ) -> Option<&Price> {
        best_of(self.prices_of(provider, instance_id), mode, regions)
    }

    /// The price rows as written (shipped and overlay), with where each came from.
    pub fn price_rows(&self) -> impl Iterator<Item = (&PriceRow, PriceOrigin)> {
        self.rows.iter().zip(self.row_origin.iter().copied())
    }

    pub fn anchors(&self) -> &[Anchor] {
        &self.anchors
    }

    pub fn mode_ratios(&self) -> &[ModeRatio] {
        &self.ratios
    }

    /// How many of `prices` are observed (a shipped A/B/C row or the user's), brief-quoted or derived,
    /// and the date span of the observed ones: what a user bets on when reading them.
    pub fn evidence_mix<'a>(prices: impl IntoIterator<Item = &'a Price>) -> EvidenceMix {
        let mut m = EvidenceMix::default();
        for p in prices {
            match (p.origin, p.confidence) {
                (PriceOrigin::Derived, _) | (_, Confidence::Estimate) => m.derived += 1,
                (_, Confidence::Brief) => m.brief += 1,
                _ => {
                    m.observed += 1;
                    m.observed_oldest = Some(m.observed_oldest.map_or(p.as_of, |d: Date| d.min(p.as_of)));
                    m.observed_newest = Some(m.observed_newest.map_or(p.as_of, |d: Date| d.max(p.as_of)));
                }
            }
        }
        m
    }

    /// Oldest and newest `as_of` of all resolved prices, for "prices are N days old" lines.
    pub fn price_dates(&self) -> Option<(Date, Date)> {
        let prices = self.prices();
        let min = prices.iter().map(|p| p.as_of).min()?;
        let max = prices.iter().map(|p| p.as_of).max()?;
        Some((min, max))
    }

    /// One line for people on how old the prices are on `today`.
    pub fn price_age_line(&self, today: Date) -> String {
        self.price_age(today).to_string()
    }

    /// How old the prices are on `today`, as a code (the browser words it in its language).
    pub fn price_age(&self, today: Date) -> crate::explain::PriceAge {
        match self.price_dates() {
            Some((oldest, newest)) => crate::explain::PriceAge::Dated {
                oldest,
                newest,
                newest_days: days_between(newest, today),
                oldest_days: days_between(oldest, today),
                today,
                overlaid: self.overlaid,
            },
            None => crate::explain::PriceAge::NoPrices,
        }
    }
}

/// How the prices shown split between evidence and estimates ([`Catalog::evidence_mix`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EvidenceMix {
    /// Prices read in a source (shipped A/B/C rows) or given by the user (overlay).
    pub observed: usize,
    /// Figures quoted in the brief with no public source found.
    pub brief: usize,
    /// Estimates derived from a monthly figure with a mode ratio.
    pub derived: usize,
    pub observed_oldest: Option<Date>,
    pub observed_newest: Option<Date>,
}

impl EvidenceMix {
    /// One line for people, e.g. "prices shown: 120 observed (2019-01-01 … 2026-09-24, 30–2,890
    /// days old), 900 derived, 2 brief-quoted".
    pub fn line(&self, today: Date) -> String {
        let observed = match (self.observed_oldest, self.observed_newest) {
            (Some(o), Some(n)) => format!(
                "{} observed ({o} … {n}, {}–{} days old on {today})",
                self.observed,
                days_between(n, today),
                days_between(o, today)
            ),
            _ => "0 observed".to_string(),
        };
        format!(
            "prices shown: {observed}, {} derived (estimates), {} brief-quoted (unverified); `gpuctl catalog refresh` fetches today's prices from the clouds",
            self.derived, self.brief
        )
    }
}

/// The row [`Catalog::row_for`] picked, and the other sources for the same key.
struct ChosenRow<'a> {
    row: &'a PriceRow,
    origin: PriceOrigin,
    others: Vec<&'a PriceRow>,
}

/// Replace the element `same` as `item`, or append it: later files and overlays win.
fn upsert<T>(v: &mut Vec<T>, item: T, same: impl Fn(&T, &T) -> bool) {
    match v.iter().position(|x| same(x, &item)) {
        Some(k) => v[k] = item,
        None => v.push(item),
    }
}

/// Whole days from `from` to `to`. jiff's infallible `duration_since`, not `to - from`: that one
/// goes through a fallible span and an `expect`, which drags jiff's error texts into the bundle.
fn days_between(from: Date, to: Date) -> i64 {
    to.duration_since(from).as_secs() / 86_400
}

/// Parse `YYYY-MM-DD`, with jiff's ISO 8601 reader: its errors say exactly what is wrong.
#[cfg(feature = "iso-dates")]
pub fn parse_date(s: &str) -> Result<Date, String> {
    s.parse::<Date>().map_err(|e| format!("'{s}' is not a date (YYYY-MM-DD): {e}"))
}

/// Parse `YYYY-MM-DD`, plainly: without `iso-dates` (the browser, whose only dates are the shipped
/// catalog's, read at build time by the CLI's reader) jiff's parser and its error texts stay out of
/// the bundle.
#[cfg(not(feature = "iso-dates"))]
pub fn parse_date(s: &str) -> Result<Date, String> {
    let b = s.as_bytes();
    let num = |at: std::ops::Range<usize>| {
        let part = s.get(at)?;
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse::<i16>().ok())?
    };
    let ymd = || {
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        Date::new(y, m as i8, d as i8).ok()
    };
    ymd().ok_or_else(|| format!("'{s}' is not a date (YYYY-MM-DD)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `best_of`'s one pass picks what the rule says, written the obvious way (two passes, the
    /// observed first): every instance type × mode of the shipped catalog, all regions and each one.
    #[test]
    fn best_of_picks_the_cheapest_observed_price_else_the_cheapest_estimate() {
        let c = Catalog::shipped();
        let obvious = |ps: &[Price], mode: BillingMode, regions: &[String]| -> Option<Price> {
            let cands: Vec<&Price> = ps
                .iter()
                .filter(|p| p.mode == mode && (regions.is_empty() || regions.contains(&p.region)))
                .collect();
            let key = |p: &&&Price| (p.cny, p.region.clone());
            let min = |v: Vec<&&Price>| {
                v.into_iter()
                    .min_by(|a, b| key(a).partial_cmp(&key(b)).expect("prices are numbers"))
                    .map(|p| (*p).clone())
            };
            min(cands.iter().filter(|p| p.origin != PriceOrigin::Derived).collect())
                .or_else(|| min(cands.iter().collect()))
        };
        let (mut checked, mut derived_only) = (0, 0);
        for inst in c.instance_types() {
            let ps = c.prices_of(inst.provider, &inst.id);
            let mut regions: Vec<Vec<String>> = vec![vec![]];
            regions.extend(ps.iter().map(|p| vec![p.region.clone()]));
            for mode in BillingMode::ALL {
                for r in &regions {
                    let got = best_of(ps, mode, r).cloned();
                    assert_eq!(got, obvious(ps, mode, r), "{} {mode:?} {r:?}", inst.id);
                    checked += 1;
                    derived_only += usize::from(got.is_some_and(|p| p.origin == PriceOrigin::Derived));
                }
            }
        }
        assert!(checked > 1000 && derived_only > 0, "{checked} checked, {derived_only} derived-only");
    }

    #[test]
    fn instance_types_map_between_the_catalog_and_api_spellings() {
        let c = Catalog::shipped();
        for name in ["ecs.gn7i-c8g1.2xlarge", "gn7i-c8g1.2xlarge"] {
            assert_eq!(c.catalog_type(Provider::Alibaba, name), "gn7i-c8g1.2xlarge");
            assert_eq!(c.api_type(Provider::Alibaba, name), "ecs.gn7i-c8g1.2xlarge");
        }
        assert_eq!(c.api_type(Provider::Alibaba, "gn7i"), "ecs.gn7i");
        assert_eq!(c.catalog_type(Provider::Tencent, "GN7.2XLARGE32"), "GN7.2XLARGE32");
        assert_eq!(c.api_type(Provider::Tencent, "GN7.2XLARGE32"), "GN7.2XLARGE32");
        assert_eq!(c.api_type(Provider::JdCloud, "g.n2.xlarge"), "g.n2.xlarge");
    }

    /// The browser's catalog (build.rs's binary form) is the CLI's (the TOML files), field for
    /// field and bit for bit: every row, anchor, resolved price and index entry.
    #[test]
    #[cfg(feature = "toml-files")]
    fn prebuilt_binary_catalog_equals_the_toml_one() {
        let from_toml = Catalog::from_files(&SHIPPED_TOML).unwrap();
        let from_binary = Catalog::from_binary(SHIPPED_BINARY).unwrap();
        // Resolve both first, so that `Debug` compares the prices too.
        assert!(!from_toml.prices().is_empty());
        assert_eq!(from_binary.prices().len(), from_toml.prices().len());
        assert_eq!(format!("{from_binary:?}"), format!("{from_toml:?}"));
        assert_eq!(serde_json::to_string(&from_binary).unwrap(), serde_json::to_string(&from_toml).unwrap());
        // A damaged file is refused with a message, not a panic.
        let e = Catalog::from_binary(&SHIPPED_BINARY[..20]).unwrap_err().to_string();
        assert_eq!(e, "the shipped catalog: not a catalog in build.rs's binary form");
        // So is the whole file with anything after it (not what build.rs wrote).
        let mut longer = SHIPPED_BINARY.to_vec();
        longer.push(0);
        assert_eq!(Catalog::from_binary(&longer).unwrap_err().to_string(), e);
    }

    #[test]
    fn shipped_catalog_loads_and_covers_the_issue_families() {
        let c = Catalog::shipped();
        for (p, fam) in [
            (Provider::Tencent, "GN6S"),
            (Provider::Tencent, "GN7"),
            (Provider::Tencent, "GN8"),
            (Provider::Tencent, "GN10X"),
            (Provider::Tencent, "GN10Xp"),
            (Provider::Tencent, "GT4"),
            (Provider::Tencent, "PNV4"),
            (Provider::Tencent, "HCCPNV4h"),
            (Provider::Alibaba, "gn6i"),
            (Provider::Alibaba, "gn6v"),
            (Provider::Alibaba, "gn6e"),
            (Provider::Alibaba, "gn7i"),
            (Provider::Alibaba, "gn7s"),
            (Provider::Alibaba, "gn7"),
            (Provider::Alibaba, "gn7e"),
            (Provider::Alibaba, "gn8is"),
            (Provider::Alibaba, "gn8v"),
            (Provider::JdCloud, "p.n1p40"),
            (Provider::JdCloud, "p.n1v100"),
            (Provider::JdCloud, "gcs"),
        ] {
            assert!(c.instance_types_of(p).any(|i| i.family == fam), "{p} {fam} missing");
        }
        // Every instance type has at least one price, and every price says where it came from.
        for i in c.instance_types() {
            assert!(!c.prices_of(i.provider, &i.id).is_empty(), "{} {} has no price", i.provider, i.id);
        }
        for p in c.prices() {
            assert!(!p.source.is_empty(), "{p:?}");
            if p.confidence == Confidence::Estimate {
                assert!(!p.derivation.is_empty(), "{p:?}");
            }
        }
    }

    #[test]
    fn observed_rows_win_and_the_rest_are_marked_estimates() {
        let c = Catalog::shipped();
        let p = c.price(Provider::Alibaba, "gn7i-c8g1.2xlarge", "cn-shanghai", BillingMode::Hourly).unwrap();
        assert_eq!((p.cny, p.confidence, p.origin), (9.74, Confidence::C, PriceOrigin::Shipped));
        let p = c.price(Provider::Alibaba, "gn7i-c8g1.2xlarge", "cn-hangzhou", BillingMode::Hourly).unwrap();
        assert_eq!((p.confidence, p.origin), (Confidence::Estimate, PriceOrigin::Derived));
        assert!(p.derivation.contains("1.52"), "{}", p.derivation);
        let p = c.price(Provider::Alibaba, "gn7i-c8g1.2xlarge", "cn-shanghai", BillingMode::Weekly).unwrap();
        assert!(p.derivation.contains("4675.66"), "{}", p.derivation);
        // Tencent sells no weekly term.
        assert!(c.price(Provider::Tencent, "GN7.2XLARGE32", "ap-guangzhou", BillingMode::Weekly).is_none());
        let brief =
            c.price(Provider::JdCloud, "gcs.classic.24g", "cn-central-xy1", BillingMode::Hourly).unwrap();
        assert_eq!(brief.confidence, Confidence::Brief);
    }

    #[test]
    #[cfg(feature = "toml-files")] // TOML overlays
    fn overlay_rows_win_over_shipped_rows() {
        let overlay = r#"
schema_version = 1
[[price]]
provider = "alibaba"
instance = "gn7i-c8g1.2xlarge"
region = "cn-shanghai"
mode = "hourly"
cny = 7.5
as_of = "2026-11-20"
source = "our contract"
confidence = "A"
"#;
        let c = Catalog::shipped().with_overlay("mine.toml", overlay).unwrap();
        let p = c.price(Provider::Alibaba, "gn7i-c8g1.2xlarge", "cn-shanghai", BillingMode::Hourly).unwrap();
        assert_eq!((p.cny, p.origin, p.confidence), (7.5, PriceOrigin::Overlay, Confidence::User));
        // Other regions keep the shipped row.
        let p = c.price(Provider::Alibaba, "gn7i-c8g1.2xlarge", "cn-shenzhen", BillingMode::Hourly).unwrap();
        assert_eq!(p.cny, 9.74);
        assert!(c.overlaid);
        // JSON works too.
        let json = r#"{"schema_version": 1, "price": [{"provider": "tencent", "instance": "GN7.2XLARGE32", "region": "ap-guangzhou",
            "mode": "hourly", "cny": 3.2, "as_of": "2026-11-01", "source": "quote", "confidence": "user"}]}"#;
        let c = Catalog::shipped().with_overlay("mine.json", json).unwrap();
        assert_eq!(
            c.price(Provider::Tencent, "GN7.2XLARGE32", "ap-guangzhou", BillingMode::Hourly).unwrap().cny,
            3.2
        );
    }

    #[test]
    #[cfg(feature = "toml-files")] // TOML overlays
    fn overlay_can_add_an_instance_type_with_its_prices() {
        let overlay = r#"
schema_version = 1
[[instance]]
provider = "alibaba"
id = "gn7i-c8g1.2xlarge-contract"
family = "gn7i"
gpu = "a10"
gpu_count = 1.0
vcpu = 8
ram_gb = 30.0
regions = ["cn-hangzhou"]
billing_modes = ["monthly"]
confidence = "user"
[[price]]
provider = "alibaba"
instance = "gn7i-c8g1.2xlarge-contract"
region = "cn-hangzhou"
mode = "monthly"
cny = 3000.0
as_of = "2026-11-01"
source = "framework contract"
confidence = "user"
"#;
        let c = Catalog::shipped().with_overlay("contract.toml", overlay).unwrap();
        let ps = c.prices_for(Provider::Alibaba, "gn7i-c8g1.2xlarge-contract", "cn-hangzhou");
        assert_eq!(ps.len(), 1, "only the modes the overlay says are sold");
        assert_eq!((ps[0].cny, ps[0].origin), (3000.0, PriceOrigin::Overlay));
        assert_eq!(c.instance_types().len(), Catalog::shipped().instance_types().len() + 1);
    }

    #[test]
    #[cfg(feature = "toml-files")] // TOML overlays
    fn overlay_errors_say_where_and_suggest() {
        let check = |text: &str, expected: &str| {
            let e = Catalog::shipped().with_overlay("mine.toml", text).unwrap_err().to_string();
            assert!(e.contains(expected), "got: {e}\nwant: {expected}");
        };
        check("schema_version = 1\n[[price]]\nprovider = \"alibaba\"\ncny = \"x\"\n", "mine.toml:4:7");
        check("schema_version = 2\n", "schema_version = 2 but this gpuctl reads schema_version = 1");
        check(
            "schema_version = 1\n[[price]]\nprovider = \"alibaba\"\ninstance = \"gn7i-c8g1.2xlage\"\nregion = \"*\"\nmode = \"hourly\"\ncny = 1.0\nas_of = \"2026-01-01\"\nsource = \"x\"\nconfidence = \"A\"\n",
            "did you mean gn7i-c8g1.2xlarge",
        );
        check(
            "schema_version = 1\n[[price]]\nprovider = \"alibaba\"\ninstance = \"gn7i-c8g1.2xlarge\"\nregion = \"*\"\nmode = \"hourly\"\ncny = 1.0\nas_of = \"2026-13-01\"\nsource = \"x\"\nconfidence = \"A\"\n",
            "is not a date",
        );
        let e = Catalog::shipped()
            .with_overlay("m.json", "{\"schema_version\": 1,\n \"gpu\": 3}")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.json:2:"), "{e}");
    }

    /// Both readers (with and without `iso-dates`) agree on what the catalog holds.
    #[test]
    fn dates_are_read_as_yyyy_mm_dd() {
        for (text, ok) in [
            ("2026-11-30", Some((2026, 11, 30))),
            ("2024-02-29", Some((2024, 2, 29))),
            ("2026-02-29", None),
            ("2026-13-01", None),
            ("2026-1-01", None),
            ("26-11-30", None),
            ("", None),
            ("2026-11-3x", None),
        ] {
            let got = parse_date(text).map(|d| (d.year(), d.month(), d.day()));
            match ok {
                Some(ymd) => assert_eq!(got, Ok(ymd), "{text}"),
                None => {
                    assert!(got.unwrap_err().starts_with(&format!("'{text}' is not a date (YYYY-MM-DD)")))
                }
            }
        }
        let d = |s| parse_date(s).unwrap();
        assert_eq!(days_between(d("2026-02-27"), d("2026-03-01")), 2);
        assert_eq!(days_between(d("2025-11-30"), d("2026-11-30")), 365);
        assert_eq!(days_between(d("2026-11-30"), d("2026-11-29")), -1);
    }

    #[test]
    fn price_age_is_relative_to_the_given_day() {
        let c = Catalog::shipped();
        let line = c.price_age_line(parse_date("2026-11-30").unwrap());
        // The oldest are Tencent's ≈2019 list prices (issue 18), the newest the brief's quotes.
        assert!(
            line.starts_with("prices as of 2019-01-01 … 2026-11-01 (29–2890 days old on 2026-11-30)"),
            "{line}"
        );
    }
}
