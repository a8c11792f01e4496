//! `plan`: spec + catalog + recorded state → what will be created, kept and released, what it costs per
//! hour and in total under each billing mode, and whether it fits the budget. Pure: no cloud calls (a
//! live describe is the caller's to add), so the same plan can be shown, checked, and then applied.

use std::collections::BTreeMap;

use gpuctl_core::price::{terms_bought, Usage};
use gpuctl_core::storage::{self, Billing, StorageKind, StoragePrice};
use gpuctl_core::{check_compat, Catalog, CompatQuery, Confidence, Price, PriceOrigin, Severity};

use crate::provider::{BillingMode, Provider};
use crate::spec::{Env, Placement, Pool, Spec};
use crate::state::Resource;

/// A place an instance of a pool may be created, in the order they are tried.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Choice {
    pub provider: Provider,
    pub region: String,
    pub zone: String,
    /// As the cloud's API names it (Alibaba with `ecs.`).
    pub instance_type: String,
    /// The catalog price in the pool's billing mode, with its source and date; `None` when the catalog has none.
    pub price: Option<PriceFact>,
    /// ¥/hour the engine bids for a spot instance here when the spec sets no `spot_max_price` and the
    /// cloud requires a bid (Tencent): the pay-as-you-go price, as the console does. `None` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot_bid: Option<f64>,
    /// The public image an image *name* resolved to in this region (`Engine::resolve_images`);
    /// `None` while unresolved, and for an image given by id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<crate::image::ResolvedImage>,
    /// Whole GPUs per instance, from the catalog (a cluster node's `GPUCTL_GPUS_PER_NODE`); `None`
    /// for a type the catalog does not list, or a vGPU slice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
}

/// A catalog price as the plan shows it: never a bare number.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PriceFact {
    /// ¥ per term of the mode (hour, week, month, year, 3 years).
    pub cny: f64,
    pub cny_per_hour: f64,
    pub as_of: String,
    pub source: String,
    pub confidence: Confidence,
    pub origin: PriceOrigin,
    /// How an estimated price was derived; empty for observed prices.
    pub derivation: String,
}

impl From<&Price> for PriceFact {
    fn from(p: &Price) -> Self {
        PriceFact {
            cny: p.cny,
            cny_per_hour: p.cny_per_hour,
            as_of: p.as_of.to_string(),
            source: p.source.clone(),
            confidence: p.confidence,
            origin: p.origin,
            derivation: p.derivation.clone(),
        }
    }
}

/// The pool's cost under one billing mode for the deployment's hours (for comparing modes).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModeTotal {
    pub mode: BillingMode,
    /// For all `count` instances.
    pub total_cny: f64,
    pub offered: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PoolPlan {
    /// The spec's pool this plan is for: apply builds every create from it, so a plan never has to be
    /// matched up with its spec by position. Not part of `plan --json` (the spec is the user's file).
    #[serde(skip)]
    pub pool: Pool,
    pub name: String,
    pub count: u32,
    /// `cluster = true`: the `count` instances go to one choice together, and move together.
    pub cluster: bool,
    pub billing: BillingMode,
    pub term: u32,
    pub choices: Vec<Choice>,
    /// Indexes to create (not recorded live in state).
    pub create: Vec<u32>,
    /// Recorded live instances the spec still wants.
    pub keep: Vec<Resource>,
    /// Recorded live instances of this pool that sit where the spec no longer places them (another
    /// cloud, region, instance type or billing mode): neither kept nor replaced — gpuctl does not
    /// move a running instance, so `provision` refuses until they are released (`Plan::moved`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<Resource>,
    /// ¥/hour for the whole pool at the first choice's price (prepaid: the term price spread over its hours).
    pub cny_per_hour: Option<f64>,
    /// ¥ for the whole pool over the deployment's hours (or one term when prepaid and no hours).
    pub total_cny: Option<f64>,
    /// The same pool under every billing mode, first choice, over the deployment's hours.
    pub by_mode: Vec<ModeTotal>,
    /// Each instance's public IP priced at the first choice; `None` with `public_ip = false` (or no
    /// choice). Its fixed hourly fee (bandwidth billing, JD's fee to hold the address) is in
    /// `cny_per_hour`/`total_cny`/`by_mode`; traffic is not: it costs what is sent, which no plan knows.
    pub public_ip: Option<crate::public_ip::PublicIpPrice>,
    /// A cluster's shared file system (issue 14); its cost over the hours is in `cny_per_hour`,
    /// `total_cny` and `by_mode` when `size_gb` is given and a price is recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_storage: Option<SharedStoragePlan>,
    /// Each node's system and data disks priced at the first choice (issue 15), per GB in the pool's
    /// billing mode: in `cny_per_hour`, `total_cny` and `by_mode` where a price is recorded (a disk
    /// whose price is unknown is left out, and a warning says so). Empty without a choice.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<DiskPlan>,
    /// Prepaid modes: whether the cloud bundles the system disk with the instance (its rule and
    /// source); `None` for pay-as-you-go pools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_disk_rule: Option<String>,
    /// `snapshot.before_release`: the snapshots `release`/`destroy` leave behind, per month; not in
    /// the totals (they bill from the release until deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<SnapshotPlan>,
    /// The pool's `env` rendered for each cloud it may land on (empty without `env`): what each
    /// instance boots with, shown in one line each, in full by `plan --show-boot`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub boot: Vec<crate::boot::Rendered>,
    /// With `idle` or `spot.on_notice` (issue 15): what the node agent does on the instances and what
    /// still bills while one is stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Plan {
    pub deployment: String,
    pub hours: Option<f64>,
    pub pools: Vec<PoolPlan>,
    /// Recorded live instances the spec no longer wants (pool removed or count lowered).
    pub release: Vec<Resource>,
    pub cny_per_hour: Option<f64>,
    pub total_cny: Option<f64>,
    /// Why the plan exceeds the spec's budget (empty = within budget, or no budget).
    pub over_budget: Vec<String>,
    /// One line per recorded instance the spec no longer places where it is (see `PoolPlan::moved`):
    /// `provision` creates nothing while any is left.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<String>,
    pub warnings: Vec<String>,
    /// The public keys `login_key = { public_key = … }` imports before creating, one per key, cloud
    /// and region a create may land on (fallbacks included): imported only where the cloud has no key
    /// pair of that name yet. Free, and never deleted by `destroy`.
    pub key_imports: Vec<KeyImport>,
    /// The zone networks `network = "auto"` finds by gpuctl's tag or makes before creating, one per
    /// cloud, region and zone a create may land on (fallbacks included).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<NetworkPlan>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct NetworkPlan {
    pub provider: Provider,
    pub region: String,
    pub zone: String,
    /// The CIDR blocks SSH (tcp/22) is let in from, over every pool using the zone.
    pub ssh_from: Vec<String>,
}

/// The auto networks of pools that create something (see [`Plan::networks`]).
fn networks(pools: &[PoolPlan]) -> Vec<NetworkPlan> {
    let mut out: BTreeMap<(Provider, String, String), std::collections::BTreeSet<String>> = BTreeMap::new();
    for p in pools.iter().filter(|p| !p.create.is_empty()) {
        if let crate::spec::Network::Auto { ssh_from } = &p.pool.network {
            for c in &p.choices {
                out.entry((c.provider, c.region.clone(), c.zone.clone()))
                    .or_default()
                    .extend(ssh_from.iter().cloned());
            }
        }
    }
    out.into_iter()
        .map(|((provider, region, zone), s)| NetworkPlan {
            provider,
            region,
            zone,
            ssh_from: s.into_iter().collect(),
        })
        .collect()
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct KeyImport {
    pub provider: Provider,
    pub region: String,
    /// `gpuctl_<16 hex>`, from the key's fingerprint.
    pub name: String,
    pub key_type: String,
    /// SHA-256, as `ssh-keygen -lf` prints it.
    pub fingerprint: String,
}

/// The key imports of pools that create something (see [`Plan::key_imports`]).
fn key_imports(pools: &[PoolPlan]) -> Vec<KeyImport> {
    let mut out = std::collections::BTreeSet::new();
    for p in pools.iter().filter(|p| !p.create.is_empty()) {
        for c in &p.choices {
            if let Some(crate::spec::LoginKey::Import { key, .. }) =
                p.pool.login_key.as_ref().and_then(|k| k.for_provider(c.provider))
            {
                out.insert(KeyImport {
                    provider: c.provider,
                    region: c.region.clone(),
                    name: key.import_name(),
                    key_type: key.key_type.clone(),
                    fingerprint: key.fingerprint.clone(),
                });
            }
        }
    }
    out.into_iter().collect()
}

impl Plan {
    pub fn creates(&self) -> usize {
        self.pools.iter().map(|p| p.create.len()).sum()
    }
}

/// Builds the plan. `recorded` is the deployment's resources from the state store; `today` dates price warnings.
pub fn plan(spec: &Spec, catalog: &Catalog, recorded: &[Resource], today: gpuctl_core::Date) -> Plan {
    let mut warnings = Vec::new();
    let hours = spec.hours.as_ref().map(|h| h.value);
    let live: Vec<&Resource> =
        recorded.iter().filter(|r| r.deployment == spec.deployment.value && r.state.holds_slot()).collect();
    let mut pools = Vec::new();
    for pool in &spec.pools {
        pools.push(pool_plan(pool, catalog, &live, hours, today, &mut warnings));
    }
    // A release an earlier run began and did not finish (killed mid-way) is finished, whatever the
    // spec wants: the slot is filled anew. A cluster moving off a short zone releases what it made
    // there this way, and a node half-released must not pin the cluster to that zone.
    let release: Vec<Resource> = live
        .iter()
        .filter(|r| {
            r.state == crate::state::ResourceState::Releasing
                || !spec.pools.iter().any(|p| p.name.value == r.pool && r.index < p.count.value)
        })
        .map(|r| (*r).clone())
        .collect();
    let cny_per_hour = pools.iter().map(|p| p.cny_per_hour).sum::<Option<f64>>();
    let total_cny = pools.iter().map(|p| p.total_cny).sum::<Option<f64>>();
    let mut over_budget = Vec::new();
    let worst = |p: &PoolPlan| {
        p.choices
            .iter()
            .map(|c| c.price.as_ref().map(|f| f.cny_per_hour + disks_at(&p.pool, c, hours).0))
            .max_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal))
    };
    if let Some(cap) = &spec.budget.per_hour_cny {
        // Against the dearest fallback: a stock-out may land any pool there.
        let dearest: Option<f64> =
            pools.iter().map(|p| worst(p).flatten().map(|h| h * f64::from(p.count))).sum();
        match dearest {
            Some(h) if h > cap.value + 1e-9 => over_budget.push(format!(
                "¥{h:.2}/hour (at the dearest fallback candidate of each pool) is above the budget of ¥{:.2}/hour",
                cap.value
            )),
            Some(_) => {}
            None => over_budget.push("a candidate has no catalog price, so the ¥/hour budget cannot be checked; add its price to a catalog overlay".into()),
        }
    }
    if let Some(cap) = &spec.budget.total_cny {
        let dearest: Option<f64> = pools
            .iter()
            .map(|p| {
                let per_instance = p
                    .choices
                    .iter()
                    .map(|c| {
                        c.price.as_ref().map(|f| {
                            instance_cost(p.billing, p.term, f.cny, hours) + disks_at(&p.pool, c, hours).1
                        })
                    })
                    .max_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal))
                    .flatten();
                per_instance.map(|c| c * f64::from(p.count))
            })
            .sum();
        match dearest {
            Some(t) if t > cap.value + 1e-9 => over_budget.push(format!(
                "¥{t:.2} in total{} is above the budget of ¥{:.2}",
                match hours {
                    Some(h) => format!(" over {h} hours (at the dearest fallback candidate of each pool)"),
                    None => " for one term (at the dearest fallback candidate of each pool)".to_string(),
                },
                cap.value
            )),
            Some(_) => {}
            None => over_budget.push("a candidate has no catalog price, so the total budget cannot be checked; add its price to a catalog overlay".into()),
        }
        if hours.is_none() && pools.iter().any(|p| p.billing.is_per_hour()) {
            warnings.push("a total budget with pay-as-you-go pools needs `hours` to be checked; without it one hour is counted".into());
        }
    }
    let moved: Vec<String> = pools
        .iter()
        .flat_map(|p| &p.moved)
        .map(|r| {
            format!(
                "pool `{}` #{} is {} on {} {} {} ({}), where this spec no longer places it; gpuctl does not move a running instance: `gpuctl destroy` this spec (or `gpuctl release {}`) first, or give this spec another deployment name",
                r.pool,
                r.index,
                r.instance_id.as_deref().unwrap_or("an instance being created"),
                r.provider,
                r.zone,
                r.instance_type,
                r.billing,
                r.instance_id.as_deref().unwrap_or(&r.client_token),
            )
        })
        .collect();
    let key_imports = key_imports(&pools);
    let networks = networks(&pools);
    for n in networks.iter().filter(|n| crate::network::open_to_all(&n.ssh_from)) {
        warnings.push(format!(
            "network = \"auto\" in {} {}: ssh_from includes 0.0.0.0/0, so SSH (tcp/22) is open to the whole internet",
            n.provider, n.zone
        ));
    }
    Plan {
        deployment: spec.deployment.value.clone(),
        hours,
        pools,
        release,
        cny_per_hour,
        total_cny,
        over_budget,
        moved,
        warnings,
        key_imports,
        networks,
    }
}

/// The clouds `spec`'s pools may be created on (every candidate, fallbacks included), sorted: what
/// credentials a run needs before it plans. From the spec and catalog alone, no state.
pub fn providers(spec: &Spec, catalog: &Catalog) -> Vec<Provider> {
    let mut v: Vec<Provider> =
        spec.pools.iter().flat_map(|pool| choices(pool, catalog)).map(|c| c.provider).collect();
    v.sort();
    v.dedup();
    v
}

/// What one instance costs at `cny` per term of `mode`: per-hour modes over `hours` (1 h if unknown),
/// prepaid modes for the whole terms bought (at least `min_terms`, more if `hours` spans more). The
/// terms are gpuctl-core's (`price::terms_bought`, the instances run straight through); the pool's
/// total, the budget check and the per-mode lines all come from here.
fn instance_cost(mode: BillingMode, min_terms: u32, cny: f64, hours: Option<f64>) -> f64 {
    let h = hours.unwrap_or(1.0);
    cny * terms_bought(mode, h, &Usage::hours(h), min_terms)
}

/// The term count a pool buys in `mode`: its own `term` in its own mode, one term in any other (the
/// spec's `term` is a count of the pool's billing unit, so it says nothing about other modes).
fn min_terms(pool_mode: BillingMode, pool_term: u32, mode: BillingMode) -> u32 {
    if mode == pool_mode {
        pool_term
    } else {
        1
    }
}

/// A cluster's nodes share one place (issue 14). Once some run there, the rest can only join them:
/// the choices shrink to that place, and a recorded node elsewhere (a pool made a cluster after the
/// fact) is `moved`, so `provision` refuses until it is released. Running nodes are never released to
/// move the cluster: a short zone then stops the run and says so.
fn cluster_place(
    pool: &Pool,
    keep: Vec<Resource>,
    mut moved: Vec<Resource>,
    choices: &mut Vec<Choice>,
    warnings: &mut Vec<String>,
) -> (Vec<Resource>, Vec<Resource>) {
    let Some(anchor) = keep.iter().min_by_key(|r| r.index).cloned() else {
        return (keep, moved);
    };
    let here = |r: &Resource| {
        r.provider == anchor.provider
            && r.region == anchor.region
            && r.zone == anchor.zone
            && r.instance_type == anchor.instance_type
    };
    let (keep, elsewhere): (Vec<Resource>, Vec<Resource>) = keep.into_iter().partition(|r| here(r));
    moved.extend(elsewhere);
    choices.retain(|c| {
        c.provider == anchor.provider
            && c.region == anchor.region
            && c.zone == anchor.zone
            && c.instance_type == anchor.instance_type
    });
    if choices.is_empty() {
        warnings.push(format!(
            "pool `{}`: the cluster's nodes run in {} {} as {}, which no candidate names any more; new nodes cannot join them",
            pool.name.value, anchor.provider, anchor.zone, anchor.instance_type
        ));
    }
    (keep, moved)
}

/// What a cluster's nodes talk over, from the catalog: under 10 Gbit/s (the brief's floor for
/// training across nodes) or unpublished, the plan says so; and what is not placed for them yet.
fn cluster_warnings(pool: &Pool, catalog: &Catalog, choices: &[Choice], warnings: &mut Vec<String>) {
    let mut seen: Vec<(Provider, &str)> = Vec::new();
    for c in choices {
        if seen.contains(&(c.provider, c.instance_type.as_str())) {
            continue;
        }
        seen.push((c.provider, c.instance_type.as_str()));
        let id = catalog.catalog_type(c.provider, &c.instance_type);
        match catalog.instance_type(c.provider, id).and_then(|i| i.net_gbps) {
            Some(g) if g < gpuctl_core::cluster::SLOW_LINK_GBPS => warnings.push(format!(
                "pool `{}`: {} {}'s nodes talk over {g} Gbit/s, under 10 Gbit/s: the network, not the GPUs, will set a distributed job's pace",
                pool.name.value, c.provider, c.instance_type
            )),
            Some(_) => {}
            None => warnings.push(format!(
                "pool `{}`: no source gives {} {}'s network bandwidth, so the cluster's speed between nodes is unknown",
                pool.name.value, c.provider, c.instance_type
            )),
        }
    }
    // What each cloud adds to "one zone, one subnet" (docs/research/clusters.md §1): asked of the
    // cloud at provision time, since Alibaba's list of families is an API answer.
    let mut providers: Vec<Provider> = choices.iter().map(|c| c.provider).collect();
    providers.dedup();
    for p in providers {
        let placement = match p {
            Provider::Tencent => "an HPC cluster for HPC (HCC) types, which require one; other types are placed by zone and subnet only",
            Provider::Alibaba if pool.billing.value == BillingMode::Spot => "no deployment set: Alibaba's deployment sets refuse spot instances",
            Provider::Alibaba => "a low-latency deployment set where Alibaba lists the type's family for it",
            Provider::JdCloud => "no low-latency placement: JD's vm API has none, so the nodes share a zone and subnet only",
        };
        warnings.push(format!(
            "pool `{}`: a cluster of {} nodes on {p}: {placement}",
            pool.name.value, pool.count.value
        ));
    }
    if pool.shared_storage.is_none() {
        warnings.push(format!(
            "pool `{}`: no shared storage: each node keeps its own data and checkpoints (shared_storage = true gives the nodes one NFS file system)",
            pool.name.value
        ));
    }
}

/// A cluster's shared file system in the plan: its price at the first choice and, with `size_gb`,
/// what it costs per month and over the deployment's hours (one month without hours).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SharedStoragePlan {
    pub mount: String,
    pub tier: crate::spec::FsTier,
    pub size_gb: Option<u32>,
    pub keep_on_destroy: bool,
    pub price: crate::shared_price::FsPrice,
    pub cny_per_month: Option<f64>,
    /// Over the deployment's hours, or one month (730 h) without them; in the pool's totals.
    pub total_cny: Option<f64>,
}

/// One disk of every node, priced at the first choice in the pool's billing mode (issue 15).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DiskPlan {
    /// `system` or `data`.
    pub role: &'static str,
    /// The spec's word (`ssd`, `premium`).
    pub category: gpuctl_cloud::DiskCategory,
    /// The cloud's word for the class the client creates (`CLOUD_SSD`, `cloud_essd`, `ssd.gp1`);
    /// `None` when gpuctl's storage prices do not name it.
    pub class: Option<&'static str>,
    pub size_gb: u32,
    /// One node's disk per hour in the pool's mode (prepaid: the month's price over 730 h).
    pub cny_per_hour: Option<f64>,
    /// All nodes' disks over the plan's hours, or the terms bought; in the pool's totals when known.
    pub total_cny: Option<f64>,
    /// How the rate was reached ("0.0025 CNY/GB-hour as printed"), or "price unknown: …".
    pub basis: String,
    /// The price row's source, date and confidence; `None` without a row.
    pub source: Option<String>,
}

/// The snapshots a pool's `snapshot.before_release` leaves after `release`/`destroy` (issue 15).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SnapshotPlan {
    /// Every node's cloud disks: the most the snapshots can hold (the clouds bill what is stored).
    pub gb: u32,
    pub cny_per_month: Option<f64>,
    pub basis: String,
    pub source: Option<String>,
}

/// What `gb` of one disk costs for `min_terms` terms of `mode` over `hours` (as `instance_cost`):
/// per-hour modes at the pay-as-you-go GB-hour rate, prepaid modes at the prepaid GB-month rate for
/// the months the terms cover (a week pro rata of the month: no weekly disk price is recorded).
fn disk_cost(
    row: &StoragePrice,
    gb: u32,
    mode: BillingMode,
    min_terms: u32,
    hours: Option<f64>,
) -> Option<f64> {
    let h = hours.unwrap_or(1.0);
    let terms = terms_bought(mode, h, &Usage::hours(h), min_terms);
    let gb = f64::from(gb);
    if mode.is_per_hour() {
        row.usage_per_hour().map(|r| r.cny * gb * terms)
    } else {
        row.prepaid_per_month().map(|r| r.cny * gb * terms * mode.term_hours() / storage::HOURS_PER_MONTH)
    }
}

/// One node's disks at choice `c` in the pool's mode: (¥/hour, ¥ over the hours or terms bought), the
/// budget checks' share for the disks at each fallback candidate. A disk whose price is unknown counts
/// nothing here; the plan's disk lines and warnings say so.
fn disks_at(pool: &Pool, c: &Choice, hours: Option<f64>) -> (f64, f64) {
    let mode = pool.billing.value;
    let mut out = (0.0, 0.0);
    for d in std::iter::once(&pool.system_disk).chain(&pool.data_disks) {
        let Ok(row) = storage::lookup(c.provider, StorageKind::Disk, d.category.as_str(), &c.region) else {
            continue;
        };
        let per_gb_hour = if mode.is_per_hour() {
            row.usage_per_hour().map(|r| r.cny)
        } else {
            row.prepaid_per_month().map(|r| r.cny / storage::HOURS_PER_MONTH)
        };
        out.0 += per_gb_hour.unwrap_or(0.0) * f64::from(d.size_gb);
        out.1 += disk_cost(row, d.size_gb, mode, pool.term, hours).unwrap_or(0.0);
    }
    out
}

fn disk_plans(pool: &Pool, c: &Choice, hours: Option<f64>, warnings: &mut Vec<String>) -> Vec<DiskPlan> {
    let mode = pool.billing.value;
    let count = f64::from(pool.count.value);
    let disks =
        std::iter::once(("system", &pool.system_disk)).chain(pool.data_disks.iter().map(|d| ("data", d)));
    disks
        .map(|(role, d)| {
            let found = storage::lookup(c.provider, StorageKind::Disk, d.category.as_str(), &c.region);
            let row = found.as_ref().ok().copied();
            let rate =
                row.and_then(|r| if mode.is_per_hour() { r.usage_per_hour() } else { r.prepaid_per_month() });
            let basis = match (&found, &rate) {
                (Err(e), _) => e.to_string(),
                (Ok(r), None) => format!(
                    "price unknown: no {} figure for {} {} ({})",
                    if mode.is_per_hour() { "pay-as-you-go" } else { "prepaid" },
                    c.provider,
                    r.class,
                    r.source
                ),
                (Ok(_), Some(rate)) if mode.is_per_hour() => rate.how.clone(),
                (Ok(_), Some(rate)) => format!("{}, term discounts not applied", rate.how),
            };
            let cny_per_hour = rate.as_ref().map(|r| {
                let per_gb_hour = if mode.is_per_hour() { r.cny } else { r.cny / storage::HOURS_PER_MONTH };
                per_gb_hour * f64::from(d.size_gb)
            });
            let total_cny =
                row.and_then(|r| disk_cost(r, d.size_gb, mode, pool.term, hours)).map(|x| x * count);
            if total_cny.is_none() {
                let w = format!(
                    "pool `{}`: the {role} disk ({} {} GB on {}) is not in the totals: {basis}",
                    pool.name.value,
                    d.category.as_str(),
                    d.size_gb,
                    c.provider
                );
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
            DiskPlan {
                role,
                category: d.category,
                class: row.map(|r| r.class),
                size_gb: d.size_gb,
                cny_per_hour,
                total_cny,
                basis,
                source: row.map(StoragePrice::citation),
            }
        })
        .collect()
}

fn snapshot_plan(pool: &Pool, c: &Choice) -> Option<SnapshotPlan> {
    if !pool.snapshot.before_release {
        return None;
    }
    let per_node: u32 = pool.system_disk.size_gb + pool.data_disks.iter().map(|d| d.size_gb).sum::<u32>();
    let gb = per_node * pool.count.value;
    let m = storage::monthly_cost(
        c.provider,
        StorageKind::Snapshot,
        "snapshot",
        &c.region,
        f64::from(gb),
        Billing::Usage,
    );
    Some(SnapshotPlan {
        gb,
        cny_per_month: m.cny_per_month,
        basis: m.basis,
        source: m.price.map(StoragePrice::citation),
    })
}

fn pool_plan(
    pool: &Pool,
    catalog: &Catalog,
    live: &[&Resource],
    hours: Option<f64>,
    today: gpuctl_core::Date,
    warnings: &mut Vec<String>,
) -> PoolPlan {
    let mode = pool.billing.value;
    let mut choices = choices(pool, catalog);
    if mode == BillingMode::Spot && pool.spot_max_price.is_none() {
        // One line per (type, region): a requirement lists every zone of a region as its own choice.
        let mut warn = |w: String| {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        };
        choices.retain_mut(|c| {
            if !crate::provider::spot_bid_required(c.provider) {
                return true;
            }
            let id = catalog.catalog_type(c.provider, &c.instance_type);
            match catalog.price(c.provider, id, &c.region, BillingMode::Hourly) {
                Some(h) => {
                    c.spot_bid = Some(h.cny_per_hour);
                    warn(format!(
                        "pool `{}`: spot bid on {} {} in {}: ¥{:.2}/h, the pay-as-you-go price — set spot_max_price to bid less",
                        pool.name.value, c.provider, c.instance_type, c.region, h.cny_per_hour
                    ));
                    true
                }
                None => {
                    // Without a bid the create is refused by the cloud: leave this place out here.
                    warn(format!(
                        "pool `{}`: {} {} in {} needs a spot bid and the catalog has no pay-as-you-go price to bid; set spot_max_price",
                        pool.name.value, c.provider, c.instance_type, c.region
                    ));
                    false
                }
            }
        });
    }
    if choices.is_empty() {
        warnings.push(format!(
            "pool `{}`: no instance type in the catalog meets its requirement",
            pool.name.value
        ));
    }
    // A term that no API can end early bills to its end whatever `release` does: say so before buying.
    let mut stuck: Vec<Provider> = Vec::new();
    for c in &choices {
        if crate::provider::is_prepaid(mode)
            && crate::provider::early_end(c.provider) == crate::provider::EarlyEnd::None
            && !stuck.contains(&c.provider)
        {
            stuck.push(c.provider);
            warnings.push(format!(
                "pool `{}`: a {mode} {} term cannot be ended early; `release` and `destroy` cannot stop it billing before it expires",
                pool.name.value, c.provider
            ));
        }
        match &c.price {
            None => warnings.push(format!(
                "pool `{}`: the catalog has no {mode} price for {} {} in {}",
                pool.name.value, c.provider, c.instance_type, c.region
            )),
            Some(p) => {
                let age =
                    jiff::civil::Date::strptime("%Y-%m-%d", &p.as_of).ok().map(|d| (today - d).get_days());
                if age.is_some_and(|d| i64::from(d) > gpuctl_core::rank::STALE_PRICE_DAYS) {
                    warnings.push(format!(
                        "pool `{}`: the {mode} price of {} {} is from {} ({} days old); `gpuctl catalog refresh` asks the cloud",
                        pool.name.value, c.provider, c.instance_type, p.as_of, age.unwrap_or_default()
                    ));
                }
            }
        }
    }
    // A unit still `creating` (an earlier run was killed between intent and running) is not kept but
    // created again: the same client token makes the cloud answer with the instance it already made,
    // and the engine adopts it and waits for it to run.
    let (keep, moved): (Vec<Resource>, Vec<Resource>) = live
        .iter()
        .filter(|r| {
            r.pool == pool.name.value
                && r.index < pool.count.value
                && r.state != crate::state::ResourceState::Creating
                && r.state != crate::state::ResourceState::Releasing
        })
        .map(|r| (*r).clone())
        .partition(|r| {
            // Kept only where the spec would still create it: one of its candidates, in its mode. A
            // spec exported for another cloud under the same deployment name must not count (and
            // price) the instance on the first cloud as its own.
            r.billing == mode
                && choices.iter().any(|c| {
                    c.provider == r.provider && c.region == r.region && c.instance_type == r.instance_type
                })
        });
    let (keep, moved) =
        if pool.cluster { cluster_place(pool, keep, moved, &mut choices, warnings) } else { (keep, moved) };
    if pool.cluster {
        cluster_warnings(pool, catalog, &choices, warnings);
    }
    let create: Vec<u32> =
        (0..pool.count.value).filter(|i| !keep.iter().chain(&moved).any(|r| r.index == *i)).collect();
    let count = f64::from(pool.count.value);
    let first = choices.first();
    let cny_per_hour = first.and_then(|c| c.price.as_ref()).map(|p| p.cny_per_hour * count);
    let total_cny =
        first.and_then(|c| c.price.as_ref()).map(|p| instance_cost(mode, pool.term, p.cny, hours) * count);
    let by_mode = match first {
        Some(c) => {
            let id = catalog.catalog_type(c.provider, &c.instance_type);
            let offered =
                catalog.instance_type(c.provider, id).map(|i| catalog.billing_modes(i)).unwrap_or_default();
            // One instance's cost per mode, cheapest first (ties by mode), as core's `price_job` orders.
            let mut per_instance: Vec<(BillingMode, f64)> = catalog
                .prices_for(c.provider, id, &c.region)
                .into_iter()
                .map(|p| (p.mode, instance_cost(p.mode, min_terms(mode, pool.term, p.mode), p.cny, hours)))
                .collect();
            per_instance.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            per_instance
                .into_iter()
                .map(|(m, cost)| ModeTotal {
                    mode: m,
                    total_cny: cost * count,
                    offered: offered.contains(&m),
                })
                .collect()
        }
        None => Vec::new(),
    };
    let public_ip =
        first.zip(pool.public_ip.as_ref()).map(|(c, ip)| crate::public_ip::price(c.provider, &c.region, ip));
    let shared_storage = first.zip(pool.shared_storage.as_ref()).map(|(c, st)| {
        let price = crate::shared_price::price(c.provider, &c.region, st.tier);
        let per_gb = price.cny_per_gb_month.zip(st.size_gb);
        SharedStoragePlan {
            mount: st.mount.clone(),
            tier: st.tier,
            size_gb: st.size_gb,
            keep_on_destroy: st.keep_on_destroy,
            cny_per_month: per_gb.map(|(cny, gb)| cny * f64::from(gb)),
            total_cny: per_gb
                .map(|(cny, gb)| crate::shared_price::per_hour(cny, gb) * hours.unwrap_or(730.0)),
            price,
        }
    });
    // Nodes + shared storage + the public IPs' fixed hourly fees (a bandwidth, or JD's fee to hold the
    // address): these bill the same whatever the nodes' mode. Traffic per GB stays out (no plan knows
    // the GB sent), as does a fee whose price is unknown; the plan's lines say so.
    let storage = shared_storage.as_ref().and_then(|s| s.total_cny).unwrap_or(0.0);
    let ip_hourly = public_ip.as_ref().and_then(|ip| ip.cny_per_hour).unwrap_or(0.0) * count;
    let storage_hourly = shared_storage
        .as_ref()
        .and_then(|s| s.price.cny_per_gb_month.zip(s.size_gb))
        .map_or(0.0, |(cny, gb)| crate::shared_price::per_hour(cny, gb))
        + ip_hourly;
    let storage = storage + ip_hourly * hours.unwrap_or(730.0);
    // The nodes' disks bill in the nodes' mode (Alibaba: "随ECS实例创建的云盘，计费方式和ECS实例相同",
    // storage.toml's system_disk rows), so each mode's line prices them in that mode.
    let disks = match first {
        Some(c) => disk_plans(pool, c, hours, warnings),
        None => Vec::new(),
    };
    let disk_rows: Vec<(&StoragePrice, u32)> = match first {
        Some(c) => std::iter::once(&pool.system_disk)
            .chain(&pool.data_disks)
            .filter_map(|d| {
                storage::lookup(c.provider, StorageKind::Disk, d.category.as_str(), &c.region)
                    .ok()
                    .map(|r| (r, d.size_gb))
            })
            .collect(),
        None => Vec::new(),
    };
    let disks_in = |m: BillingMode| -> f64 {
        disk_rows
            .iter()
            .filter_map(|(r, gb)| disk_cost(r, *gb, m, min_terms(mode, pool.term, m), hours))
            .sum::<f64>()
            * count
    };
    let disks_hourly = disks.iter().filter_map(|d| d.cny_per_hour).sum::<f64>() * count;
    let disks_total = disks.iter().filter_map(|d| d.total_cny).sum::<f64>();
    let system_disk_rule = first
        .filter(|_| !mode.is_per_hour())
        .and_then(|c| storage::system_disk_rule(c.provider))
        .map(|r| format!("{}: {} (source: {})", r.provider, r.notes, r.citation()));
    let snapshots = first.and_then(|c| snapshot_plan(pool, c));
    let cny_per_hour = cny_per_hour.map(|x| x + storage_hourly + disks_hourly);
    let total_cny = total_cny.map(|x| x + storage + disks_total);
    let mut by_mode: Vec<ModeTotal> = by_mode
        .into_iter()
        .map(|m| ModeTotal { total_cny: m.total_cny + storage + disks_in(m.mode), ..m })
        .collect();
    // Still cheapest first once the disks are in (they weigh differently per mode).
    by_mode.sort_by(|a, b| a.total_cny.total_cmp(&b.total_cny).then(a.mode.cmp(&b.mode)));
    let mut boot = Vec::new();
    for c in &choices {
        if !boot.iter().any(|b: &crate::boot::Rendered| b.provider == c.provider) {
            boot.extend(crate::boot::rendered(pool, c.provider));
        }
    }
    if let Some(env) = &pool.env {
        env_checks(pool, env, &choices, catalog, warnings);
    }
    let mut providers: Vec<Provider> = choices.iter().map(|c| c.provider).collect();
    providers.dedup();
    let agent = crate::agent::plan_line(pool, &providers);
    PoolPlan {
        pool: pool.clone(),
        name: pool.name.value.clone(),
        count: pool.count.value,
        cluster: pool.cluster,
        billing: mode,
        term: pool.term,
        choices,
        create,
        keep,
        moved,
        cny_per_hour,
        total_cny,
        by_mode,
        public_ip,
        shared_storage,
        disks,
        system_disk_rule,
        snapshots,
        boot,
        agent,
    }
}

/// `env.cuda` / `env.driver` at plan time, by gpuctl-core's compatibility rules (`compat::check`):
/// against each GPU the pool may land on, and against the image — which, given by id, gpuctl knows
/// nothing of, so the plan says it was not checked rather than passing it.
fn env_checks(pool: &Pool, env: &Env, choices: &[Choice], catalog: &Catalog, warnings: &mut Vec<String>) {
    if env.cuda.is_none() && env.driver.is_none() {
        return;
    }
    // The GPU is checked against the CUDA wanted; the driver is the host's, known only once it boots
    // (the boot script checks it against `boot::driver_floor`).
    let q = CompatQuery {
        frameworks: Vec::new(),
        cuda: env.cuda.as_ref().map(|c| c.value.clone()),
        driver: None,
    };
    if let (Some(c), Some(d)) = (&env.cuda, &env.driver) {
        if let Some(min) = gpuctl_core::compat::min_driver_for(&c.value) {
            if crate::boot::driver_floor(env).as_deref() == Some(min) && d.value != min {
                warnings.push(format!(
                    "pool `{}`: env: CUDA {} needs NVIDIA driver ≥ {min}, above driver = \"{}\"; the boot script requires {min}",
                    pool.name.value, c.value, d.value
                ));
            }
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for c in choices {
        let id = catalog.catalog_type(c.provider, &c.instance_type);
        let Some(gpu) = catalog.instance_type(c.provider, id).and_then(|i| catalog.gpu(&i.gpu)) else {
            continue;
        };
        if seen.contains(&gpu.id.as_str()) {
            continue;
        }
        seen.push(&gpu.id);
        for issue in check_compat(gpu, &q).into_iter().filter(|i| i.severity == Severity::Error) {
            warnings.push(format!(
                "pool `{}`: env on {} ({}): {}",
                pool.name.value, gpu.name, c.instance_type, issue.message
            ));
        }
    }
    let wanted: Vec<String> = [("CUDA", &env.cuda), ("driver", &env.driver)]
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {}", v.value)))
        .collect();
    warnings.push(format!(
        "pool `{}`: env {}: not checked against the image: image unknown (given by id; gpuctl has no record of its CUDA or driver){}",
        pool.name.value,
        wanted.join(", "),
        if env.driver.is_some() { "; the boot script checks the driver and fails its `driver` step if it is older" } else { "" }
    ));
}

/// The pool's candidates with prices; a requirement becomes every fitting (type, region, zone) in
/// price order, so a stock-out falls back to the next cheapest.
fn choices(pool: &Pool, catalog: &Catalog) -> Vec<Choice> {
    let mode = pool.billing.value;
    let price = |p: Provider, ty: &str, region: &str| {
        catalog.price(p, catalog.catalog_type(p, ty), region, mode).map(PriceFact::from)
    };
    let gpus = |p: Provider, ty: &str| {
        catalog
            .instance_type(p, catalog.catalog_type(p, ty))
            .map(|i| i.gpu_count)
            .filter(|&n| n >= 1.0 && n.fract() == 0.0)
            .map(|n| n as u32)
    };
    match &pool.placement {
        Placement::Candidates(cands) => cands
            .iter()
            .map(|c| Choice {
                provider: c.provider,
                region: c.region.value.clone(),
                zone: c.zone.value.clone(),
                // The Cloud trait speaks the API's spelling, whichever one the spec used.
                instance_type: catalog.api_type(c.provider, &c.instance_type),
                price: price(c.provider, &c.instance_type, &c.region),
                spot_bid: None,
                image: None,
                gpus: gpus(c.provider, &c.instance_type),
            })
            .collect(),
        Placement::Requirement(req) => {
            let gpu = req.gpu.as_ref().and_then(|g| catalog.find_gpu(g).ok());
            let mut out = Vec::new();
            for inst in catalog.instance_types() {
                let Some(g) = catalog.gpu(&inst.gpu) else { continue };
                let fits = gpu.is_none_or(|want| want.id == g.id)
                    && inst.gpu_count >= f64::from(req.gpus)
                    && req.min_vram_gb.is_none_or(|v| inst.vram_per_device_gb(g) >= v)
                    && (req.providers.is_empty() || req.providers.contains(&inst.provider))
                    && pool.image.for_provider(inst.provider).is_some()
                    && catalog.billing_modes(inst).contains(&mode);
                if !fits {
                    continue;
                }
                let api_type = catalog.api_type(inst.provider, &inst.id);
                let zones = catalog.provider(inst.provider).map(|p| p.regions.clone()).unwrap_or_default();
                for region in &inst.regions {
                    if !req.regions.is_empty() && !req.regions.contains(region) {
                        continue;
                    }
                    let Some(fact) = price(inst.provider, &api_type, region) else { continue };
                    for zone in zones.iter().filter(|r| &r.id == region).flat_map(|r| r.zones.iter()) {
                        out.push(Choice {
                            provider: inst.provider,
                            region: region.clone(),
                            zone: zone.clone(),
                            instance_type: api_type.clone(),
                            price: Some(fact.clone()),
                            spot_bid: None,
                            image: None,
                            gpus: gpus(inst.provider, &inst.id),
                        });
                    }
                }
            }
            out.sort_by(|a, b| {
                let pa = a.price.as_ref().map_or(f64::MAX, |p| p.cny_per_hour);
                let pb = b.price.as_ref().map_or(f64::MAX, |p| p.cny_per_hour);
                pa.total_cmp(&pb)
                    .then_with(|| (a.provider, &a.region, &a.zone).cmp(&(b.provider, &b.region, &b.zone)))
            });
            // Enough fallbacks to ride out a stock-out, few enough to read in a plan.
            out.truncate(8);
            out
        }
    }
}
