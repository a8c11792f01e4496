//! The engine: carries a plan out against the clouds — create (intent → call → wait → record), adopt
//! what a crashed run left, fall back on stock-outs, release, snapshot — concurrently across pools and
//! providers, every call paced and retried by `retry`.
//!
//! The one rule it never breaks: no billable call without its intent written first, with the client
//! token the call carries. A re-run finds the token in state (or on the cloud, by tag) and adopts.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

use crate::cloud::{
    Cloud, CloudError, CreateRequest, ErrorKind, Filter, Instance, InstanceState, SnapshotState,
    TAG_DEPLOYMENT, TAG_POOL, TAG_TOKEN,
};
use crate::plan::{Choice, Plan};
use crate::provider::Provider;
use crate::pubkey::PublicKey;
use crate::retry::{with_retry, Calls, Deadline, Pacer, RetryPolicy, RetryStats};
use crate::spec::{AutoRelease, LoginKey, Network, Pool};
use crate::state::{ImageRecord, Intent, Resource, ResourceState, SnapshotRecord, StateError, Store};

/// Whether `r` buys a term its cloud cannot end early, so a release may have to wait for its end.
fn keeps_its_term(r: &Resource) -> bool {
    crate::provider::is_prepaid(r.billing)
        && crate::provider::early_end(r.provider) == crate::provider::EarlyEnd::None
}
use crate::token::{client_token, slot_token};

/// How the engine paces, retries and waits.
#[derive(Debug, Clone)]
pub struct Options {
    pub retry: RetryPolicy,
    /// Calls per second per provider API (creates, describes, terminates … each have their own).
    pub calls_per_second: f64,
    pub poll_interval: Duration,
    /// How long one instance may take to reach RUNNING (or to be gone) before the run stops waiting.
    pub wait_timeout: Duration,
    /// The retry budget of one unit (instance): from the unit's start, no retry of its calls (creates,
    /// look-ups, across every fallback candidate) starts that would end later, and an attempt still
    /// unanswered then is given up. Waiting for boot is not retrying; `wait_timeout` bounds that.
    pub unit_retry_deadline: Duration,
    /// The same for the whole run, from the engine's start: bounds every call's retries (releases and
    /// polls too), however many units there are.
    pub run_retry_deadline: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            retry: RetryPolicy::default(),
            calls_per_second: 10.0,
            poll_interval: Duration::from_secs(2),
            wait_timeout: Duration::from_secs(900),
            unit_retry_deadline: Duration::from_secs(240),
            run_retry_deadline: Duration::from_secs(600),
        }
    }
}

/// What the engine tells whoever shows progress (the CLI draws bars from these).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A workflow starts `total` units of work in `group` (a pool's creates, or "release").
    Begin {
        group: String,
        total: u64,
        verb: &'static str,
    },
    Creating {
        pool: String,
        index: u32,
        provider: Provider,
        zone: String,
        instance_type: String,
    },
    Adopted {
        pool: String,
        index: u32,
        instance_id: String,
    },
    FellBack {
        pool: String,
        index: u32,
        from: String,
        reason: String,
    },
    Running {
        pool: String,
        index: u32,
        instance_id: String,
    },
    Releasing {
        instance_id: String,
    },
    Released {
        instance_id: String,
    },
    /// The cloud refused the release while the prepaid term runs: renewal is off and the instance
    /// bills until `until`.
    BilledUntil {
        instance_id: String,
        until: jiff::Timestamp,
    },
    Snapshotting {
        instance_id: String,
        disk_id: String,
    },
    /// The pool's public key is on `provider`/`region` as key pair `name`: imported now, or found
    /// there from an earlier run (`imported: false`).
    KeyReady {
        pool: String,
        provider: Provider,
        region: String,
        name: String,
        fingerprint: String,
        imported: bool,
    },
    /// A piece of the zone's `network = "auto"` network: made now, or found by its tag.
    NetworkReady {
        pool: String,
        provider: Provider,
        zone: String,
        kind: gpuctl_cloud::cloud::NetKind,
        id: String,
        created: bool,
    },
    /// A cluster's shared file system is ready to mount from `source` (issue 14).
    SharedStorageReady {
        pool: String,
        provider: Provider,
        zone: String,
        id: String,
        source: String,
    },
}

pub type Progress = Arc<dyn Fn(&Event) + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Cloud(#[from] CloudError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error("no {0} client configured (credentials or endpoint missing)")]
    NoCloud(Provider),
    #[error("pool `{pool}` #{index}: every candidate is sold out ({tried})")]
    SoldOut { pool: String, index: u32, tried: String },
    #[error("{what} did not happen within {secs} s; it is recorded, and a re-run picks it up")]
    Timeout { what: String, secs: u64 },
    #[error("instance {instance_id} {what}")]
    Launch { instance_id: String, what: String },
    #[error("{0}")]
    Other(String),
}

impl ApplyError {
    /// A place that cannot take the unit (sold out, or launched and failed — JD: `error`, then
    /// deleted by the cloud): the unit, or the whole cluster, moves on to the next candidate.
    fn moves_on(&self) -> bool {
        matches!(
            self,
            ApplyError::Cloud(CloudError { kind: ErrorKind::StockOut, .. }) | ApplyError::Launch { .. }
        )
    }
}

/// One instance's outcome in a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Unit {
    pub pool: String,
    pub index: u32,
    pub client_token: String,
    pub provider: Provider,
    pub region: String,
    pub zone: String,
    pub instance_type: String,
    pub instance_id: Option<String>,
    pub state: ResourceState,
    pub public_ip: Option<String>,
    pub private_ip: Option<String>,
    pub cny_per_hour: Option<f64>,
    pub auto_release_at: Option<jiff::Timestamp>,
    /// Candidates passed over because they were sold out.
    pub fell_back_from: Vec<String>,
    pub adopted: bool,
    /// Why this unit stopped, when it did.
    pub error: Option<String>,
}

/// A release the cloud could carry out only in part: the prepaid term has no early end on this
/// cloud ([`crate::provider::EarlyEnd::None`]), so renewal is off and the instance runs and bills
/// until `until`, then can be released.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BilledTerm {
    pub instance_id: String,
    pub provider: Provider,
    pub until: jiff::Timestamp,
}

/// What a release did: gone for good, still billed until a term's end, or not done (with why).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Releases {
    pub released: Vec<String>,
    pub billed_until: Vec<BilledTerm>,
    pub errors: Vec<String>,
}

/// One instance's release outcome.
enum Outcome {
    Released(String),
    BilledUntil(BilledTerm),
    /// Never created: nothing to release.
    Nothing,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    pub units: Vec<Unit>,
    pub released: Vec<String>,
    /// Scaled-down instances the cloud keeps billing until their prepaid term ends (never in `released`).
    pub billed_until: Vec<BilledTerm>,
    pub retries: u64,
    pub retry_wait_ms: u64,
    pub errors: Vec<String>,
}

/// Finds instances' states in batches: one describe per (provider, region) per poll for everything
/// waiting there, so waiting for 64 instances costs one call per interval, not 64.
struct Poller {
    waiting: Mutex<HashMap<(Provider, String), Waiters>>,
}

/// One wait on one instance: what it waits for, and where the instance (or its absence) is sent.
type Waiter = (Want, oneshot::Sender<Option<Instance>>);
/// The waits in one (provider, region), by instance id.
type Waiters = BTreeMap<String, Vec<Waiter>>;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Want {
    /// Running (or a launch failure, which ends the wait too).
    Running,
    Gone,
}

struct Inner {
    clouds: BTreeMap<Provider, Arc<dyn Cloud>>,
    store: Mutex<Store>,
    opts: Options,
    calls: Calls,
    poller: Poller,
    progress: Progress,
    /// When retrying stops for the whole run (`Options::run_retry_deadline` after the engine started).
    run_deadline: Deadline,
    /// Imported key pairs' ids by (provider, region, name), for this run. An async lock held across
    /// the lookup and the import, so the units of a pool, which start together, import a key once.
    keys: tokio::sync::Mutex<BTreeMap<(Provider, String, String), String>>,
    /// `network = "auto"`'s networks by (provider, region, zone), for this run (`crate::network`).
    nets: NetCache,
}

type NetCache = tokio::sync::Mutex<BTreeMap<(Provider, String, String), crate::NetworkIds>>;

/// One cluster node's part of its cluster (issue 14): the placement group and file system made for
/// the cluster at this choice, its rank and the node count.
#[derive(Clone, Copy)]
struct NodeSetup<'a> {
    setup: &'a crate::cluster::ClusterSetup,
    rank: u32,
    nodes: u32,
    /// Node 0's private IP, once known.
    master: Option<&'a str>,
}

/// Cheap to clone; clones share the store, the pacing and the poller.
#[derive(Clone)]
pub struct Engine(Arc<Inner>);

fn seed(s: &str) -> u64 {
    let d = Sha256::digest(s.as_bytes());
    u64::from_le_bytes(d[..8].try_into().unwrap_or([1; 8]))
}

impl Engine {
    pub fn new(clouds: Vec<Arc<dyn Cloud>>, store: Store, opts: Options, progress: Progress) -> Engine {
        let opts_deadline = opts.run_retry_deadline;
        let calls = Calls {
            policy: opts.retry,
            pacer: Arc::new(Pacer::new(opts.calls_per_second)),
            stats: Arc::new(RetryStats::default()),
        };
        Engine(Arc::new(Inner {
            clouds: clouds.into_iter().map(|c| (c.provider(), c)).collect(),
            store: Mutex::new(store),
            opts,
            calls,
            poller: Poller { waiting: Mutex::new(HashMap::new()) },
            progress,
            run_deadline: Deadline {
                at: tokio::time::Instant::now() + opts_deadline,
                what: format!("the run's retry deadline of {} s", opts_deadline.as_secs()),
            },
            keys: tokio::sync::Mutex::new(BTreeMap::new()),
            nets: tokio::sync::Mutex::new(BTreeMap::new()),
        }))
    }

    /// Runs `f` on the store. The lock is held only for the statement, never across an await.
    pub fn store<T>(&self, f: impl FnOnce(&Store) -> T) -> T {
        let guard = self.0.store.lock().unwrap_or_else(|e| e.into_inner());
        f(&guard)
    }

    pub(crate) fn cloud(&self, p: Provider) -> Result<Arc<dyn Cloud>, ApplyError> {
        self.0.clouds.get(&p).cloned().ok_or(ApplyError::NoCloud(p))
    }

    pub(crate) fn nets(&self) -> &NetCache {
        &self.0.nets
    }

    pub(crate) fn emit(&self, e: Event) {
        (self.0.progress)(&e);
    }

    pub(crate) async fn call<T, F, Fut>(
        &self,
        provider: Provider,
        api: &'static str,
        key: &str,
        f: F,
    ) -> Result<T, CloudError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, CloudError>>,
    {
        self.call_until(None, provider, api, key, f).await
    }

    /// `call` under a tighter deadline than the run's (a unit's), when given.
    async fn call_until<T, F, Fut>(
        &self,
        deadline: Option<&Deadline>,
        provider: Provider,
        api: &'static str,
        key: &str,
        f: F,
    ) -> Result<T, CloudError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, CloudError>>,
    {
        let c = &self.0.calls;
        let d = self.0.run_deadline.clone();
        let d = match deadline {
            Some(u) => d.earlier(Some(u.clone())),
            None => d,
        };
        with_retry(&c.policy, &c.pacer, &c.stats, provider, api, seed(key), Some(d), f).await
    }

    pub fn retry_totals(&self) -> (u64, u64) {
        let s = &self.0.calls.stats;
        (
            s.retries.load(std::sync::atomic::Ordering::Relaxed),
            s.waited_ms.load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// Carries out `plan`: creates what is missing (all units concurrently), releases what the spec no
    /// longer wants. Each pool's plan carries its spec pool, so nothing is matched up by position.
    /// Returns every unit's outcome; errors of single units are in the report. The caller holds the
    /// deployment's lock (`Engine::begin_provision` and `Engine::clone_instance` take it).
    pub async fn apply(&self, plan: &Plan, now: jiff::Timestamp) -> Report {
        let mut tasks = tokio::task::JoinSet::new();
        for pool_plan in &plan.pools {
            let (pool, choices, dep) =
                (pool_plan.pool.clone(), pool_plan.choices.clone(), plan.deployment.clone());
            if pool_plan.cluster && !pool_plan.create.is_empty() {
                let (engine, indexes) = (self.clone(), pool_plan.create.clone());
                tasks.spawn(async move { engine.create_cluster(&dep, &pool, &indexes, &choices, now).await });
                continue;
            }
            for &index in &pool_plan.create {
                let (engine, pool, choices, dep) = (self.clone(), pool.clone(), choices.clone(), dep.clone());
                tasks.spawn(async move { vec![engine.create_unit(&dep, &pool, index, &choices, now).await] });
            }
        }
        let mut units = Vec::new();
        for pool_plan in &plan.pools {
            for r in &pool_plan.keep {
                units.push(self.keep_unit(r).await);
            }
        }
        while let Some(res) = tasks.join_next().await {
            match res {
                Ok(u) => units.extend(u),
                Err(e) => units.push(Unit::failed_task(e.to_string())),
            }
        }
        units.sort_by(|a, b| (&a.pool, a.index).cmp(&(&b.pool, b.index)));
        let Releases { released, billed_until, mut errors } = self.release(&plan.release).await;
        errors.splice(0..0, units.iter().filter_map(|u| u.error.clone()));
        let (retries, retry_wait_ms) = self.retry_totals();
        Report { units, released, billed_until, retries, retry_wait_ms, errors }
    }

    /// A recorded instance the spec still wants: confirm it is still there and running.
    async fn keep_unit(&self, r: &Resource) -> Unit {
        let mut u = Unit::from_resource(r);
        u.adopted = true;
        if let (Some(id), Ok(cloud)) = (&r.instance_id, self.cloud(r.provider)) {
            let filter = Filter::Ids(vec![id.clone()]);
            match self.call(r.provider, "describe", id, || cloud.describe(&r.region, &filter)).await {
                Ok(found)
                    if found
                        .iter()
                        .any(|i| &i.instance_id == id && !matches!(i.state, InstanceState::Terminated)) =>
                {
                    // A release time an earlier run could not set is set now.
                    let want = r.auto_release_at;
                    let inst = found.iter().find(|i| &i.instance_id == id).expect("matched any");
                    if let Err(e) = self
                        .ensure_release_time(r.provider, &r.region, inst, &r.client_token, want, None)
                        .await
                    {
                        u.error = Some(format!("pool `{}` #{}: {e}", r.pool, r.index));
                    }
                }
                Ok(_) => {
                    u.error = Some(format!("instance {id} (pool `{}` #{}) is recorded but the cloud no longer has it; `gpuctl release` it and re-run", r.pool, r.index));
                }
                Err(e) => u.error = Some(e.to_string()),
            }
        }
        u
    }

    /// Builds the create request for one unit at one choice (token not yet set).
    fn request(
        deployment: &str,
        pool: &Pool,
        index: u32,
        c: &Choice,
        now: jiff::Timestamp,
    ) -> Result<CreateRequest, ApplyError> {
        let missing = |what: &str| {
            ApplyError::Other(format!("pool `{}` has no {what} for {}", pool.name.value, c.provider))
        };
        let given = pool.image.for_provider(c.provider).ok_or_else(|| missing("image"))?;
        // A name is booted as the image the plan resolved it to here; an id as it is.
        let image_id = match &c.image {
            Some(resolved) => resolved.id.clone(),
            None if crate::image::is_name(given) => {
                return Err(ApplyError::Other(format!(
                    "pool `{}`: image `{given}` is a name, not yet resolved on {} {}",
                    pool.name.value, c.provider, c.region
                )))
            }
            None => given.clone(),
        };
        let network = match &pool.network {
            // Filled in by `create_at` once the zone's network is found or made.
            Network::Default | Network::Auto { .. } => None,
            Network::Ids(ids) => {
                Some(ids.for_provider(c.provider).ok_or_else(|| missing("network"))?.clone())
            }
        };
        let auto_release_at = match pool.auto_release {
            // Whole seconds: the clouds take second precision, and people read it in `status`.
            AutoRelease::After { hours, .. } => {
                let at = now + jiff::SignedDuration::from_secs_f64(hours * 3600.0);
                Some(jiff::Timestamp::from_second(at.as_second()).unwrap_or(at))
            }
            AutoRelease::At(t) => Some(t),
            AutoRelease::Off | AutoRelease::NotApplicable => None,
        };
        let mut tags = pool.tags.clone();
        tags.insert(TAG_DEPLOYMENT.into(), deployment.into());
        tags.insert(TAG_POOL.into(), pool.name.value.clone());
        Ok(CreateRequest {
            client_token: String::new(),
            name: format!("{deployment}-{}-{index}", pool.name.value),
            region: c.region.clone(),
            zone: c.zone.clone(),
            instance_type: c.instance_type.clone(),
            billing: pool.billing.value,
            term: pool.term,
            // The spec's bid, else the plan's (Tencent requires one: the pay-as-you-go price).
            spot_max_price: pool.spot_max_price.or(c.spot_bid),
            image_id,
            system_disk: pool.system_disk.clone(),
            data_disks: pool.data_disks.clone(),
            network,
            // A cluster's placement group, once made: filled in by `create_at`.
            placement: None,
            // An imported key's id is filled in by `create_at` once the key is on the cloud.
            login_key: match pool.login_key.as_ref().and_then(|k| k.for_provider(c.provider)) {
                Some(LoginKey::Id(id)) => Some(id.clone()),
                Some(LoginKey::Import { .. }) | None => None,
            },
            public_ip: pool.public_ip,
            auto_release_at,
            tags,
            // The pool's `env` rendered in this cloud's boot format, else its raw user data.
            user_data: crate::boot::user_data(pool, c.provider, None),
            instance_role: crate::agent::role(pool),
            dry_run: false,
        })
    }

    async fn create_unit(
        &self,
        deployment: &str,
        pool: &Pool,
        index: u32,
        choices: &[Choice],
        now: jiff::Timestamp,
    ) -> Unit {
        let mut fell_back = Vec::new();
        let mut last = None;
        let secs = self.0.opts.unit_retry_deadline.as_secs();
        let deadline = Deadline {
            at: tokio::time::Instant::now() + self.0.opts.unit_retry_deadline,
            what: format!("the unit's retry deadline of {secs} s"),
        };
        for c in choices {
            let mut u = Unit::new(&pool.name.value, index, c);
            u.fell_back_from = fell_back.clone();
            match self.create_at(deployment, pool, index, c, now, &mut u, &deadline, None).await {
                Ok(()) => return u,
                // Sold out, or launched and failed (JD: `error`, then deleted by the cloud): try the next
                // candidate, with its own token. The failed attempt stays recorded as failed.
                Err(e) if e.moves_on() => {
                    let from = format!("{} {} {}", c.provider, c.zone, c.instance_type);
                    self.emit(Event::FellBack {
                        pool: pool.name.value.clone(),
                        index,
                        from: from.clone(),
                        reason: e.to_string(),
                    });
                    fell_back.push(from);
                    last = Some(u);
                }
                Err(e) => {
                    u.error = Some(format!("pool `{}` #{index}: {e}", pool.name.value));
                    return u;
                }
            }
        }
        let mut u = last
            .unwrap_or_else(|| Unit::failed_task(format!("pool `{}` has no candidates", pool.name.value)));
        u.error = Some(
            ApplyError::SoldOut { pool: pool.name.value.clone(), index, tried: fell_back.join("; ") }
                .to_string(),
        );
        u.fell_back_from = fell_back;
        u
    }

    /// A cluster's missing nodes (issue 14): all of them at one choice, together. When a choice cannot
    /// take them all (sold out, or a node failed to launch), the nodes this run made there are released
    /// and the whole cluster tries the next choice, so it never ends split across zones or types. Any
    /// other error stops the cluster where it is, every node made so far recorded and reported.
    async fn create_cluster(
        &self,
        deployment: &str,
        pool: &Pool,
        indexes: &[u32],
        choices: &[Choice],
        now: jiff::Timestamp,
    ) -> Vec<Unit> {
        let name = pool.name.value.clone();
        let mut fell_back: Vec<String> = Vec::new();
        let deadline = Deadline {
            at: tokio::time::Instant::now() + self.0.opts.unit_retry_deadline,
            what: format!("the unit's retry deadline of {} s", self.0.opts.unit_retry_deadline.as_secs()),
        };
        for c in choices {
            let from = format!("{} {} {}", c.provider, c.zone, c.instance_type);
            // The placement group and shared file system first: the nodes' creates name them.
            let mut made = Vec::new();
            let setup = match self.ensure_cluster_setup(deployment, pool, c, &mut made).await {
                Ok(s) => s,
                Err(e) => {
                    let left = self.drop_cluster_setup(deployment, &made).await;
                    if e.moves_on() && left.is_empty() {
                        for &index in indexes {
                            self.emit(Event::FellBack {
                                pool: name.clone(),
                                index,
                                from: from.clone(),
                                reason: e.to_string(),
                            });
                        }
                        fell_back.push(from);
                        continue;
                    }
                    let left = if left.is_empty() {
                        String::new()
                    } else {
                        format!("; not deleted: {}", left.join("; "))
                    };
                    return indexes
                        .iter()
                        .map(|&index| {
                            let mut u = Unit::new(&name, index, c);
                            u.state = ResourceState::Failed;
                            u.error = Some(format!("pool `{name}` at {from}: {e}{left}"));
                            u.fell_back_from = fell_back.clone();
                            u
                        })
                        .collect();
                }
            };
            let nodes = pool.count.value;
            let mut done: Vec<(Unit, Result<(), ApplyError>)> = Vec::new();
            // Node 0 first when this run makes it among others: their boot config names its private
            // address. Otherwise node 0 runs already and its recorded address is used.
            let mut master = match self.store(|s| s.resources(Some(deployment))) {
                Ok(rs) => rs
                    .into_iter()
                    .find(|r| r.pool == name && r.index == 0 && r.state.is_live())
                    .and_then(|r| r.private_ip),
                Err(_) => None,
            };
            let mut rest: Vec<u32> = indexes.to_vec();
            if indexes.contains(&0) && indexes.len() > 1 {
                rest.retain(|&i| i != 0);
                let mut u = Unit::new(&name, 0, c);
                let node = NodeSetup { setup: &setup, rank: 0, nodes, master: None };
                let r = self.create_at(deployment, pool, 0, c, now, &mut u, &deadline, Some(node)).await;
                master = u.private_ip.clone().filter(|_| r.is_ok());
                let failed = r.is_err();
                done.push((u, r));
                if failed {
                    // The rest are not made at a place that failed node 0.
                    for &index in &rest {
                        let mut u = Unit::new(&name, index, c);
                        u.state = ResourceState::Failed;
                        done.push((u, Err(ApplyError::Other("not created: node 0 failed first".into()))));
                    }
                    rest.clear();
                }
            }
            let mut tasks = tokio::task::JoinSet::new();
            for index in rest {
                let (engine, dep, pool, c, deadline, setup, master) = (
                    self.clone(),
                    deployment.to_string(),
                    pool.clone(),
                    c.clone(),
                    deadline.clone(),
                    setup.clone(),
                    master.clone(),
                );
                tasks.spawn(async move {
                    let mut u = Unit::new(&pool.name.value, index, &c);
                    let node = NodeSetup { setup: &setup, rank: index, nodes, master: master.as_deref() };
                    let r =
                        engine.create_at(&dep, &pool, index, &c, now, &mut u, &deadline, Some(node)).await;
                    (u, r)
                });
            }
            while let Some(res) = tasks.join_next().await {
                match res {
                    Ok(x) => done.push(x),
                    Err(e) => {
                        done.push((Unit::failed_task(e.to_string()), Err(ApplyError::Other(e.to_string()))))
                    }
                }
            }
            done.sort_by_key(|(u, _)| u.index);
            let short = |r: &Result<(), ApplyError>| r.as_ref().is_err_and(ApplyError::moves_on);
            if done.iter().all(|(_, r)| r.is_ok()) {
                return done
                    .into_iter()
                    .map(|(mut u, _)| {
                        u.fell_back_from = fell_back.clone();
                        u
                    })
                    .collect();
            }
            let why =
                done.iter().find_map(|(_, r)| r.as_ref().err().map(|e| e.to_string())).unwrap_or_default();
            if !done.iter().any(|(_, r)| short(r)) {
                // Not a question of place: keep what was made (recorded), say what stopped the rest.
                return done
                    .into_iter()
                    .map(|(mut u, r)| {
                        if let Err(e) = r {
                            u.error = Some(format!("pool `{name}` #{}: {e}", u.index));
                        }
                        u.fell_back_from = fell_back.clone();
                        u
                    })
                    .collect();
            }
            // This place cannot hold the whole cluster: what it made here goes before the next is tried.
            let made_nodes: Vec<Resource> = match self.store(|s| {
                done.iter()
                    .filter(|(_, r)| r.is_ok())
                    .filter_map(|(u, _)| s.resource(&u.client_token).transpose())
                    .collect::<Result<Vec<_>, _>>()
            }) {
                Ok(m) => m,
                Err(e) => {
                    return done
                        .into_iter()
                        .map(|(mut u, _)| {
                            u.error = Some(e.to_string());
                            u
                        })
                        .collect()
                }
            };
            let released = self.release(&made_nodes).await;
            let mut errors = released.errors.clone();
            if errors.is_empty() && released.billed_until.is_empty() {
                // The nodes are gone: the placement group and file system made here for them go too.
                errors.extend(self.drop_cluster_setup(deployment, &made).await);
            }
            if !errors.is_empty() || !released.billed_until.is_empty() {
                // Something made here still bills: moving on would leave a node behind, so stop.
                errors.extend(released.billed_until.iter().map(|b| {
                    format!(
                        "{} is billed until {} (its prepaid term cannot end early)",
                        b.instance_id, b.until
                    )
                }));
                return done
                    .into_iter()
                    .map(|(mut u, _)| {
                        u.error = Some(format!(
                            "pool `{name}`: {from} cannot take the whole cluster ({why}), and the nodes made there could not all be released: {}",
                            errors.join("; ")
                        ));
                        u
                    })
                    .collect();
            }
            for &index in indexes {
                self.emit(Event::FellBack {
                    pool: name.clone(),
                    index,
                    from: from.clone(),
                    reason: why.clone(),
                });
            }
            fell_back.push(from);
        }
        indexes
            .iter()
            .map(|&index| {
                let mut u = match choices.last() {
                    Some(c) => Unit::new(&name, index, c),
                    None => Unit::failed_task(format!("pool `{name}` has no candidates")),
                };
                u.state = ResourceState::Failed;
                u.error = Some(
                    ApplyError::SoldOut { pool: name.clone(), index, tried: fell_back.join("; ") }
                        .to_string(),
                );
                u.fell_back_from = fell_back.clone();
                u
            })
            .collect()
    }

    /// One choice for one unit: adopt if a previous run got this far, else intent → create → wait.
    #[allow(clippy::too_many_arguments)]
    async fn create_at(
        &self,
        deployment: &str,
        pool: &Pool,
        index: u32,
        c: &Choice,
        now: jiff::Timestamp,
        u: &mut Unit,
        deadline: &Deadline,
        node: Option<NodeSetup<'_>>,
    ) -> Result<(), ApplyError> {
        let cloud = self.cloud(c.provider)?;
        let mut req = Self::request(deployment, pool, index, c, now)?;
        let node_facts = node.map(|n| crate::boot::NodeFacts {
            rank: n.rank,
            nodes: n.nodes,
            gpus_per_node: c.gpus,
            master_addr: None,
            shared: n.setup.shared.clone(),
            resume: None,
        });
        if let (Some(n), Some(facts)) = (node, &node_facts) {
            req.placement = n.setup.placement.clone();
            req.user_data = crate::boot::user_data(pool, c.provider, Some(facts));
        }
        if let Some(LoginKey::Import { key, .. }) =
            pool.login_key.as_ref().and_then(|k| k.for_provider(c.provider))
        {
            req.login_key =
                Some(self.ensure_key(deployment, &pool.name.value, c.provider, &c.region, key).await?);
        }
        if let Network::Auto { ssh_from } = &pool.network {
            req.network = Some(
                self.ensure_network(deployment, &pool.name.value, c.provider, &c.region, &c.zone, ssh_from)
                    .await?,
            );
        }
        // A token whose record has ended (released, or failed for good) belongs to an instance that no
        // longer exists: re-using it would make the cloud answer with that old instance (or adopt it from
        // the record and wait forever for it to run). Such a unit is created anew, under the next
        // generation's token; live records (creating/running) keep their token, so retries and re-runs
        // after a crash still meet the instance they made. A released instance still billed
        // until its term ends is the user's no longer: its unit is made anew too.
        // A reclaimed spot instance's record (issue 15) has ended too: its replacement takes the next
        // generation (`slot_token`).
        let (token, _generation, recorded) = slot_token(
            deployment,
            &pool.name.value,
            index,
            &req,
            |t| self.store(|s| s.resource(t)),
            // Being released (a killed run's release, which this run's plan finishes): that
            // instance is going, so the slot is made anew too.
            |r| !r.state.holds_slot() || r.state == ResourceState::Releasing,
        )?;
        // The slot's instance was reclaimed by the cloud and this create replaces it (issue 15).
        let replacing = self.store(|s| s.open_reclaim(deployment, &pool.name.value, index))?;
        // Node 0's address and what a replacement resumes from go in after the token: they say where
        // the cluster is and where its work left off, not what is bought, so a node made again after
        // node 0 was replaced keeps its token and its record, and a retried replacement its own.
        if let (Some(n), Some(mut facts)) =
            (node.filter(|n| n.master.is_some() || replacing.is_some()), node_facts)
        {
            facts.master_addr = n.master.map(str::to_owned);
            facts.resume =
                replacing.as_ref().map(|r| crate::boot::Resume { replaces: r.instance_id.clone() });
            req.user_data = crate::boot::user_data(pool, c.provider, Some(&facts));
        }
        if let Some(r) = &replacing {
            crate::reclaim::restore_data_disks(self, r, c, &mut req)?;
        }
        req.client_token = token.clone();
        req.tags.insert(TAG_TOKEN.into(), token.clone());
        u.client_token = token.clone();
        u.auto_release_at = req.auto_release_at;

        let mut instance_id = recorded.as_ref().and_then(|r| r.instance_id.clone());
        match recorded.as_ref().map(|r| r.state) {
            Some(ResourceState::Creating) if instance_id.is_none() => {
                // A run stopped between intent and answer: the cloud may have made it. Look by tag.
                let filter = Filter::Tag { key: TAG_TOKEN.into(), value: token.clone() };
                let found = self
                    .call_until(Some(deadline), c.provider, "describe", &token, || {
                        cloud.describe(&c.region, &filter)
                    })
                    .await?;
                if let Some(i) = found.into_iter().find(|i| !matches!(i.state, InstanceState::Terminated)) {
                    self.store(|s| s.set_instance_id(&token, &i.instance_id))?;
                    self.emit(Event::Adopted {
                        pool: pool.name.value.clone(),
                        index,
                        instance_id: i.instance_id.clone(),
                    });
                    u.adopted = true;
                    instance_id = Some(i.instance_id);
                }
            }
            Some(_) => {
                u.adopted = true;
                if let Some(id) = &instance_id {
                    self.emit(Event::Adopted {
                        pool: pool.name.value.clone(),
                        index,
                        instance_id: id.clone(),
                    });
                }
            }
            None => {}
        }

        if instance_id.is_none() {
            self.emit(Event::Creating {
                pool: pool.name.value.clone(),
                index,
                provider: c.provider,
                zone: c.zone.clone(),
                instance_type: c.instance_type.clone(),
            });
            let price = c.price.as_ref();
            let resource = Resource {
                client_token: token.clone(),
                deployment: deployment.into(),
                pool: pool.name.value.clone(),
                index,
                provider: c.provider,
                region: c.region.clone(),
                zone: c.zone.clone(),
                instance_type: c.instance_type.clone(),
                billing: pool.billing.value,
                instance_id: None,
                state: ResourceState::Creating,
                public_ip: None,
                private_ip: None,
                price_cny_per_hour: price.map(|p| p.cny_per_hour),
                price_source: price.map(|p| p.source.clone()),
                price_as_of: price.map(|p| p.as_of.clone()),
                auto_release_at: u.auto_release_at,
                created_at: now,
                running_at: None,
                released_at: None,
                last_error: None,
                billed_until: None,
            };
            let params = serde_json::to_string(&req).unwrap_or_default();
            let intent = Intent {
                deployment: Some(deployment.into()),
                kind: "create",
                provider: c.provider,
                region: c.region.clone(),
                client_token: token.clone(),
                target: None,
                params,
            };
            let op = self.store(|s| s.record_create_intent(&intent, &resource))?;
            match self.call_until(Some(deadline), c.provider, "create", &token, || cloud.create(&req)).await {
                Ok(created) => {
                    self.store(|s| {
                        s.record_created(op, &token, &created.instance_id, created.request_id.as_deref())
                    })?;
                    instance_id = Some(created.instance_id);
                }
                Err(e) => {
                    let msg = e.to_string();
                    self.store(|s| s.finish_operation(op, "failed", e.request_id.as_deref(), Some(&msg)))?;
                    // Before calling it failed, look by token tag: an answer lost on the last attempt, (JD) a
                    // create whose release time could not be set, or a token the cloud says it already used
                    // with other parameters (a re-run after the state was lost, with a later release time)
                    // each mean a billed instance the record must name. Found: carry on with it (wait, then
                    // set its release time). A stock-out made nothing, so it is not looked up.
                    let found = if e.kind != ErrorKind::StockOut {
                        self.find_by_token(c.provider, &c.region, &token).await
                    } else {
                        None
                    };
                    let Some(id) = found else {
                        // Retries ran out on a throttled/transient error: the cloud may still make it, so the
                        // resource stays `creating`. Anything else: nothing exists.
                        if !e.kind.retryable() {
                            self.store(|s| s.set_state(&token, ResourceState::Failed, Some(&msg)))?;
                        }
                        return Err(e.into());
                    };
                    tracing::warn!(provider = %c.provider, instance_id = %id, error = %msg, "the create's retries ran out, but the cloud has the instance: recorded");
                    self.store(|s| s.set_instance_id(&token, &id))?;
                    self.emit(Event::Adopted {
                        pool: pool.name.value.clone(),
                        index,
                        instance_id: id.clone(),
                    });
                    instance_id = Some(id);
                }
            }
        }
        let id = instance_id.unwrap_or_default();
        u.instance_id = Some(id.clone());
        let inst = self.wait(c.provider, &c.region, &id, Want::Running).await?;
        match inst.as_ref().map(|i| &i.state) {
            Some(InstanceState::Running) => {
                let i = inst.as_ref().expect("matched Some");
                self.store(|s| s.set_running(&token, i.public_ip.as_deref(), i.private_ip.as_deref()))?;
                if let Some(r) = &replacing {
                    crate::reclaim::replaced(self, r, &token)?;
                }
                u.state = ResourceState::Running;
                u.public_ip = i.public_ip.clone();
                u.private_ip = i.private_ip.clone();
                self.emit(Event::Running { pool: pool.name.value.clone(), index, instance_id: id.clone() });
                self.ensure_release_time(
                    c.provider,
                    &c.region,
                    i,
                    &token,
                    req.auto_release_at,
                    Some(deadline),
                )
                .await
            }
            other => {
                let what = match other {
                    Some(s) => format!("ended in state {s:?} instead of running"),
                    None => "disappeared while starting".into(),
                };
                self.store(|s| s.set_state(&token, ResourceState::Failed, Some(&what)))?;
                u.state = ResourceState::Failed;
                Err(ApplyError::Launch { instance_id: id, what })
            }
        }
    }

    /// The live instance carrying `token` in its `gpuctl-token` tag, if the cloud answers (within a
    /// short deadline of its own: this runs when the unit's retry deadline may already have passed).
    /// The id of `key` as a key pair on `provider`/`region`, importing it if the cloud has none of
    /// its name. The name is derived from the key ([`PublicKey::import_name`]), so it is looked up
    /// first: a re-run, or a run after one was killed between the import and its record, adopts the
    /// key pair already there instead of importing a second. The import itself is an operation in
    /// the intent log (written before the call, closed with its outcome). Free on every cloud, so
    /// nothing bills while it waits; `destroy` leaves it (other deployments may log in with it).
    async fn ensure_key(
        &self,
        deployment: &str,
        pool: &str,
        provider: Provider,
        region: &str,
        key: &PublicKey,
    ) -> Result<String, ApplyError> {
        let name = key.import_name();
        let slot = (provider, region.to_owned(), name.clone());
        let mut known = self.0.keys.lock().await;
        if let Some(id) = known.get(&slot) {
            return Ok(id.clone());
        }
        let cloud = self.cloud(provider)?;
        let find =
            || async { self.call(provider, "find-key", &name, || cloud.find_key_pair(region, &name)).await };
        let ready = |imported| Event::KeyReady {
            pool: pool.to_owned(),
            provider,
            region: region.to_owned(),
            name: name.clone(),
            fingerprint: key.fingerprint.clone(),
            imported,
        };
        let id = match find().await? {
            Some(found) => {
                self.emit(ready(false));
                found.id
            }
            None => {
                let intent = Intent {
                    deployment: Some(deployment.into()),
                    kind: "import-key",
                    provider,
                    region: region.to_owned(),
                    client_token: name.clone(),
                    target: None,
                    // The public half's type and fingerprint only: the key itself is on the user's disk.
                    params: serde_json::json!({ "name": name, "key_type": key.key_type, "fingerprint": key.fingerprint })
                        .to_string(),
                };
                let op = self.store(|s| s.record_intent(&intent))?;
                let line = key.openssh_line();
                match self
                    .call(provider, "import-key", &name, || cloud.import_key_pair(region, &name, &line))
                    .await
                {
                    Ok(k) => {
                        self.store(|s| s.finish_operation(op, "done", None, None))?;
                        self.emit(ready(true));
                        k.id
                    }
                    // A retried import the cloud had carried out is refused as a duplicate name:
                    // the key is there, and is adopted.
                    Err(e) => match find().await? {
                        Some(found) => {
                            self.store(|s| s.finish_operation(op, "done", e.request_id.as_deref(), None))?;
                            self.emit(ready(true));
                            found.id
                        }
                        None => {
                            let msg = e.to_string();
                            self.store(|s| {
                                s.finish_operation(op, "failed", e.request_id.as_deref(), Some(&msg))
                            })?;
                            return Err(e.into());
                        }
                    },
                }
            }
        };
        known.insert(slot, id.clone());
        Ok(id)
    }

    async fn find_by_token(&self, provider: Provider, region: &str, token: &str) -> Option<String> {
        let cloud = self.cloud(provider).ok()?;
        let filter = Filter::Tag { key: TAG_TOKEN.into(), value: token.to_string() };
        let d = Deadline {
            at: tokio::time::Instant::now() + Duration::from_secs(20),
            what: "20 s for the look-up after a failed create".into(),
        };
        let c = &self.0.calls;
        match with_retry(&c.policy, &c.pacer, &c.stats, provider, "describe", seed(token), Some(d), || {
            cloud.describe(region, &filter)
        })
        .await
        {
            Ok(found) => found
                .into_iter()
                .find(|i| !matches!(i.state, InstanceState::Terminated))
                .map(|i| i.instance_id),
            Err(e) => {
                tracing::warn!(%provider, error = %e, "could not look the instance up by its token; a re-run will");
                None
            }
        }
    }

    /// Sets `want` as the release time of `inst` when the cloud describes it without one (JD sets it
    /// apart from the create, and that call can fail after the instance exists). A failure leaves the
    /// instance recorded and running and says so; every later run that keeps it tries again.
    async fn ensure_release_time(
        &self,
        provider: Provider,
        region: &str,
        inst: &Instance,
        token: &str,
        want: Option<jiff::Timestamp>,
        deadline: Option<&Deadline>,
    ) -> Result<(), ApplyError> {
        let Some(at) = want else { return Ok(()) };
        if inst.auto_release_at.is_some() {
            return Ok(());
        }
        let cloud = self.cloud(provider)?;
        let id = &inst.instance_id;
        match self
            .call_until(deadline, provider, "set-release-time", id, || cloud.set_auto_release(region, id, at))
            .await
        {
            Ok(()) => Ok(()),
            Err(e) => {
                let what = format!("is running without its release time ({at}): {e}. It is recorded: re-run `gpuctl provision` to set it, or `gpuctl release {id}`");
                self.store(|s| s.set_state(token, ResourceState::Running, Some(&what)))?;
                // Not `Launch`: that would fall back to another candidate and buy a second instance.
                Err(ApplyError::Other(format!("instance {id} {what}")))
            }
        }
    }

    /// Waits until `id` is running (or failed) / gone, through the batching poller.
    pub(crate) async fn wait(
        &self,
        provider: Provider,
        region: &str,
        id: &str,
        want: Want,
    ) -> Result<Option<Instance>, ApplyError> {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut w = self.0.poller.waiting.lock().unwrap_or_else(|e| e.into_inner());
            let group = w.entry((provider, region.to_string())).or_default();
            let start = group.is_empty();
            group.entry(id.to_string()).or_default().push((want, tx));
            start
        };
        if start {
            let engine = self.clone();
            let region = region.to_string();
            tokio::spawn(async move { engine.poll_group(provider, region).await });
        }
        let secs = self.0.opts.wait_timeout.as_secs();
        match tokio::time::timeout(self.0.opts.wait_timeout, rx).await {
            Ok(Ok(found)) => Ok(found),
            Ok(Err(_)) => {
                Err(ApplyError::Other(format!("stopped waiting for {id}: the describe loop failed")))
            }
            Err(_) => {
                let what = match want {
                    Want::Running => format!("{provider} instance {id} reaching RUNNING"),
                    Want::Gone => format!("{provider} instance {id} being released"),
                };
                Err(ApplyError::Timeout { what, secs })
            }
        }
    }

    /// One loop per (provider, region) while anything waits there.
    async fn poll_group(&self, provider: Provider, region: String) {
        let key = (provider, region.clone());
        loop {
            tokio::time::sleep(self.0.opts.poll_interval).await;
            let ids: Vec<String> = {
                let mut w = self.0.poller.waiting.lock().unwrap_or_else(|e| e.into_inner());
                let Some(group) = w.get_mut(&key) else { return };
                // Waiters that timed out have dropped their receivers.
                group.retain(|_, v| {
                    v.retain(|(_, tx)| !tx.is_closed());
                    !v.is_empty()
                });
                if group.is_empty() {
                    w.remove(&key);
                    return;
                }
                group.keys().cloned().collect()
            };
            let Ok(cloud) = self.cloud(provider) else { return };
            for chunk in ids.chunks(100) {
                let filter = Filter::Ids(chunk.to_vec());
                let found = match self
                    .call(provider, "describe", &chunk[0], || cloud.describe(&region, &filter))
                    .await
                {
                    Ok(f) => f,
                    Err(e) => {
                        tracing::warn!(%provider, region = %region, error = %e, "describe failed while waiting; will poll again");
                        continue;
                    }
                };
                let by_id: HashMap<&str, &Instance> =
                    found.iter().map(|i| (i.instance_id.as_str(), i)).collect();
                let mut w = self.0.poller.waiting.lock().unwrap_or_else(|e| e.into_inner());
                let Some(group) = w.get_mut(&key) else { return };
                for id in chunk {
                    let inst = by_id.get(id.as_str()).copied();
                    let Some(waiters) = group.get_mut(id) else { continue };
                    let mut keep = Vec::new();
                    for (want, tx) in waiters.drain(..) {
                        let done = matches!(
                            (want, inst.map(|i| &i.state)),
                            (
                                Want::Running,
                                Some(
                                    InstanceState::Running
                                        | InstanceState::Failed
                                        | InstanceState::Terminated,
                                ),
                            ) | (Want::Gone, None | Some(InstanceState::Terminated))
                        );
                        if done {
                            let _ = tx.send(inst.cloned());
                        } else {
                            keep.push((want, tx));
                        }
                    }
                    if keep.is_empty() {
                        group.remove(id);
                    } else {
                        *waiters = keep;
                    }
                }
            }
        }
    }

    /// Terminates recorded resources, waits until the cloud no longer has them, marks them released.
    /// A prepaid instance the cloud will not release before its term ends is recorded billed until
    /// then instead (see `release_one`), never released.
    pub async fn release(&self, resources: &[Resource]) -> Releases {
        let mut tasks = tokio::task::JoinSet::new();
        for r in resources.iter().filter(|r| r.state.is_live()).cloned() {
            let engine = self.clone();
            tasks.spawn(async move {
                engine.release_one(&r).await.map_err(|e| {
                    format!(
                        "{} #{} ({}): {e}",
                        r.pool,
                        r.index,
                        r.instance_id.as_deref().unwrap_or("no instance id")
                    )
                })
            });
        }
        let mut out = Releases::default();
        while let Some(res) = tasks.join_next().await {
            match res {
                Ok(Ok(Outcome::Released(id))) => out.released.push(id),
                Ok(Ok(Outcome::BilledUntil(t))) => out.billed_until.push(t),
                Ok(Ok(Outcome::Nothing)) => {}
                Ok(Err(e)) => out.errors.push(e),
                Err(e) => out.errors.push(e.to_string()),
            }
        }
        out.released.sort();
        out.billed_until.sort_by(|a, b| a.instance_id.cmp(&b.instance_id));
        out.errors.sort();
        out
    }

    async fn release_one(&self, r: &Resource) -> Result<Outcome, ApplyError> {
        let cloud = self.cloud(r.provider)?;
        let mut id = r.instance_id.clone();
        if id.is_none() {
            // Intent written, answer lost: find it by its token tag before calling it gone.
            let filter = Filter::Tag { key: TAG_TOKEN.into(), value: r.client_token.clone() };
            let found = self
                .call(r.provider, "describe", &r.client_token, || cloud.describe(&r.region, &filter))
                .await?;
            id = found
                .into_iter()
                .find(|i| !matches!(i.state, InstanceState::Terminated))
                .map(|i| i.instance_id);
            match &id {
                Some(found) => self.store(|s| s.set_instance_id(&r.client_token, found))?,
                None => {
                    self.store(|s| {
                        s.set_state(&r.client_token, ResourceState::Failed, Some("never created"))
                    })?;
                    return Ok(Outcome::Nothing);
                }
            }
        }
        let id = id.unwrap_or_default();
        self.emit(Event::Releasing { instance_id: id.clone() });
        let ids = vec![id.clone()];
        let intent = Intent {
            deployment: Some(r.deployment.clone()),
            kind: "terminate",
            provider: r.provider,
            region: r.region.clone(),
            client_token: r.client_token.clone(),
            target: Some(id.clone()),
            params: serde_json::json!({ "instance_ids": ids }).to_string(),
        };
        let op = self.store(|s| {
            let op = s.record_intent(&intent)?;
            s.set_state(&r.client_token, ResourceState::Releasing, None)?;
            Ok::<_, StateError>(op)
        })?;
        match self.terminate_and_wait(cloud.as_ref(), r.provider, &r.region, &id, op).await {
            Ok(()) => {}
            Err(ApplyError::Cloud(refused)) if keeps_its_term(r) => {
                return self.bill_out_term(cloud.as_ref(), r, &id, refused).await;
            }
            Err(e) => return Err(e),
        }
        self.store(|s| {
            s.finish_operation(op, "done", None, None)?;
            s.set_state(&r.client_token, ResourceState::Released, None)
        })?;
        self.emit(Event::Released { instance_id: id.clone() });
        Ok(Outcome::Released(id))
    }

    /// The cloud refused to release a prepaid instance on a cloud where no API ends a term early
    /// (JD: "删除按配置计费、或包年包月已到期的单个云主机", jdcloud_sdk 1.6.354
    /// services/vm/apis/DeleteInstanceRequest.py). If the cloud still describes it with a term that
    /// has an end, that is the refusal: renewal goes off (so the term is not bought again) and the
    /// record says billed until that end. No clock is compared here: the cloud's refusal is what says
    /// the term still runs, and a release after the end is simply accepted. Anything else is the
    /// refusal as it came.
    async fn bill_out_term(
        &self,
        cloud: &dyn Cloud,
        r: &Resource,
        id: &str,
        refused: CloudError,
    ) -> Result<Outcome, ApplyError> {
        let filter = Filter::Ids(vec![id.to_string()]);
        let found = self.call(r.provider, "describe", id, || cloud.describe(&r.region, &filter)).await?;
        let until = found
            .iter()
            .find(|i| i.instance_id == id && !matches!(i.state, InstanceState::Terminated))
            .and_then(|i| i.expires_at.as_deref())
            .and_then(|t| t.parse::<jiff::Timestamp>().ok());
        let Some(until) = until else { return Err(ApplyError::Cloud(refused)) };
        self.call(r.provider, "renewal-off", id, || cloud.renewal_off(&r.region, id)).await?;
        self.store(|s| s.set_billed_until(&r.client_token, until))?;
        self.emit(Event::BilledUntil { instance_id: id.to_string(), until });
        Ok(Outcome::BilledUntil(BilledTerm { instance_id: id.to_string(), provider: r.provider, until }))
    }

    /// Terminates one instance whose intent is operation `op`, then waits until the cloud no longer
    /// lists it (or lists it terminated). A refused terminate closes `op` as failed; the caller closes
    /// it as done. Shared by `release` and `gpuctl sweep --release`.
    pub(crate) async fn terminate_and_wait(
        &self,
        cloud: &dyn Cloud,
        provider: Provider,
        region: &str,
        id: &str,
        op: i64,
    ) -> Result<(), ApplyError> {
        let ids = [id.to_string()];
        self.gone_or_failed(
            op,
            self.call(provider, "terminate", id, || cloud.terminate(region, &ids)).await,
        )?;
        self.wait(provider, region, id, Want::Gone).await?;
        Ok(())
    }

    /// Snapshots every cloud disk (system and data) of a recorded or described instance, waits until
    /// each snapshot is available, and records them. `generation` distinguishes repeated snapshots.
    pub async fn snapshot(
        &self,
        provider: Provider,
        region: &str,
        instance_id: &str,
        owner: Option<&Resource>,
        generation: u32,
    ) -> Result<Vec<SnapshotRecord>, ApplyError> {
        let cloud = self.cloud(provider)?;
        let disks =
            self.call(provider, "describe-disks", instance_id, || cloud.disks(region, instance_id)).await?;
        let mut tasks = tokio::task::JoinSet::new();
        for (kind, disk) in disks {
            let kind = kind.as_str();
            let (engine, region, instance_id, disk_id, owner) =
                (self.clone(), region.to_string(), instance_id.to_string(), disk.disk_id, owner.cloned());
            let cloud = cloud.clone();
            tasks.spawn(async move {
                let token = crate::token::derived(&format!("snapshot/{instance_id}/{disk_id}/{generation}"));
                let name = format!("gpuctl-{instance_id}-{kind}-{generation}");
                let intent = Intent {
                    deployment: owner.as_ref().map(|o| o.deployment.clone()),
                    kind: "snapshot",
                    provider,
                    region: region.clone(),
                    client_token: token.clone(),
                    target: Some(disk_id.clone()),
                    params: serde_json::json!({ "disk_id": disk_id, "name": name }).to_string(),
                };
                engine
                    .emit(Event::Snapshotting { instance_id: instance_id.clone(), disk_id: disk_id.clone() });
                let op = engine.store(|s| s.record_intent(&intent))?;
                let snap = engine
                    .call(provider, "snapshot", &token, || cloud.snapshot(&region, &disk_id, &name, &token))
                    .await;
                let snapshot_id = match snap {
                    Ok(id) => id,
                    Err(e) => {
                        let msg = e.to_string();
                        engine.store(|s| {
                            s.finish_operation(op, "failed", e.request_id.as_deref(), Some(&msg))
                        })?;
                        return Err(ApplyError::Cloud(e));
                    }
                };
                let mut rec = SnapshotRecord {
                    snapshot_id: snapshot_id.clone(),
                    provider,
                    region: region.clone(),
                    instance_id: instance_id.clone(),
                    disk_id: disk_id.clone(),
                    disk_kind: kind.to_string(),
                    deployment: owner.as_ref().map(|o| o.deployment.clone()),
                    pool: owner.as_ref().map(|o| o.pool.clone()),
                    client_token: token.clone(),
                    state: "creating".into(),
                    created_at: crate::clock::now(),
                };
                engine.store(|s| {
                    s.record_snapshot(&rec)?;
                    s.finish_operation(op, "done", None, None)
                })?;
                let available = engine
                    .wait_available(&format!("snapshot {snapshot_id}"), || {
                        engine.call(provider, "describe-snapshot", &snapshot_id, || {
                            cloud.snapshot_state(&region, &snapshot_id)
                        })
                    })
                    .await?;
                if !available {
                    rec.state = "failed".into();
                    engine.store(|s| s.record_snapshot(&rec))?;
                    return Err(ApplyError::Other(format!(
                        "snapshot {snapshot_id} of disk {disk_id} failed"
                    )));
                }
                rec.state = "available".into();
                engine.store(|s| s.record_snapshot(&rec))?;
                Ok::<_, ApplyError>(rec)
            });
        }
        let mut out = Vec::new();
        while let Some(res) = tasks.join_next().await {
            out.push(res.map_err(|e| ApplyError::Other(e.to_string()))??);
        }
        out.sort_by(|a, b| b.disk_kind.cmp(&a.disk_kind).then(a.disk_id.cmp(&b.disk_id)));
        Ok(out)
    }

    /// A delete's answer: done, or already gone (what was wanted: an earlier run deleted it and was
    /// stopped before recording that); any other error fails the operation `op` and is returned.
    pub(crate) fn gone_or_failed(&self, op: i64, answer: Result<(), CloudError>) -> Result<(), ApplyError> {
        match answer {
            Ok(()) => Ok(()),
            Err(e) if e.kind == ErrorKind::NotFound => Ok(()),
            Err(e) => {
                let msg = e.to_string();
                self.store(|s| s.finish_operation(op, "failed", e.request_id.as_deref(), Some(&msg)))?;
                Err(e.into())
            }
        }
    }

    /// Polls `state` until it says `Available` (true) or `Failed` (false), within the wait timeout:
    /// snapshots and custom images alike.
    pub(crate) async fn wait_available<F, Fut>(&self, what: &str, mut state: F) -> Result<bool, ApplyError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<SnapshotState, CloudError>>,
    {
        let deadline = tokio::time::Instant::now() + self.0.opts.wait_timeout;
        loop {
            match state().await? {
                SnapshotState::Available => return Ok(true),
                SnapshotState::Failed => return Ok(false),
                SnapshotState::Creating if tokio::time::Instant::now() > deadline => {
                    return Err(ApplyError::Timeout {
                        what: what.to_string(),
                        secs: self.0.opts.wait_timeout.as_secs(),
                    })
                }
                SnapshotState::Creating => tokio::time::sleep(self.0.opts.poll_interval).await,
            }
        }
    }

    /// A custom image of the instance's system disk (issue 13, "clone the environment, not just the
    /// shape"): Tencent/Alibaba CreateImage, JD createImage, under a `create-image` intent, waited for
    /// until the cloud says it is available, and recorded (`images`). The image is named from a token
    /// derived from the instance and `generation` (the how-many-th image of it), and looked up by that
    /// name before the create: Tencent's and JD's creates take no client token, so a run killed after
    /// the create adopts the image on the re-run instead of making a second one.
    pub async fn image(
        &self,
        provider: Provider,
        region: &str,
        instance_id: &str,
        owner: Option<&Resource>,
        generation: u32,
    ) -> Result<ImageRecord, ApplyError> {
        let cloud = self.cloud(provider)?;
        let token = crate::token::derived(&format!("image/{provider}/{instance_id}/{generation}"));
        // 22 characters of letters, digits and `-`: inside every cloud's image-name rule (JD 2-32).
        let name = format!("gpuctl-img-{}", &token[7..19]);
        let mut rec = ImageRecord {
            image_id: String::new(),
            provider,
            region: region.to_string(),
            instance_id: instance_id.to_string(),
            name: name.clone(),
            deployment: owner.map(|o| o.deployment.clone()),
            pool: owner.map(|o| o.pool.clone()),
            client_token: token.clone(),
            state: "creating".into(),
            created_at: crate::clock::now(),
        };
        let found = self.call(provider, "find-image", &token, || cloud.find_image(region, &name)).await?;
        rec.image_id = match found {
            Some(id) => {
                rec.image_id = id.clone();
                self.store(|s| s.record_image(&rec))?;
                id
            }
            None => {
                let intent = Intent {
                    deployment: rec.deployment.clone(),
                    kind: "create-image",
                    provider,
                    region: region.to_string(),
                    client_token: token.clone(),
                    target: Some(instance_id.to_string()),
                    params: serde_json::json!({ "instance_id": instance_id, "name": name }).to_string(),
                };
                let op = self.store(|s| s.record_intent(&intent))?;
                // Not retried blindly: a create whose answer was lost is found by name first.
                match cloud.create_image(region, instance_id, &name, &token).await {
                    Ok(id) => {
                        rec.image_id = id.clone();
                        self.store(|s| {
                            s.record_image(&rec)?;
                            s.finish_operation(op, "done", None, None)
                        })?;
                        id
                    }
                    Err(e) => {
                        let msg = e.to_string();
                        self.store(|s| {
                            s.finish_operation(op, "failed", e.request_id.as_deref(), Some(&msg))
                        })?;
                        return Err(ApplyError::Cloud(e));
                    }
                }
            }
        };
        let image_id = rec.image_id.clone();
        let available = self
            .wait_available(&format!("image {image_id}"), || {
                self.call(provider, "describe-image", &image_id, || cloud.image_state(region, &image_id))
            })
            .await?;
        if !available {
            rec.state = "failed".into();
            self.store(|s| s.record_image(&rec))?;
            return Err(ApplyError::Other(format!("image {image_id} of {instance_id} failed")));
        }
        rec.state = "available".into();
        self.store(|s| s.record_image(&rec))?;
        Ok(rec)
    }

    /// Asks the cloud to check one create without making it (not billable, so no intent is written).
    pub async fn dry_run(&self, deployment: &str, pool: &Pool, c: &Choice) -> Result<(), ApplyError> {
        let cloud = self.cloud(c.provider)?;
        let mut req = Self::request(deployment, pool, 0, c, jiff::Timestamp::now())?;
        req.client_token = client_token(deployment, &pool.name.value, 0, &req, u32::MAX);
        req.dry_run = true;
        self.call(c.provider, "create", &req.client_token, || cloud.create(&req)).await?;
        Ok(())
    }

    /// The cloud's own price for one instance of `req` (`gpuctl catalog refresh`), paced and retried like
    /// every other call. Not billable, so no intent is written.
    pub async fn quote(
        &self,
        provider: Provider,
        req: &CreateRequest,
    ) -> Result<crate::cloud::Quote, CloudError> {
        let cloud = self.cloud(provider).map_err(|e| CloudError {
            provider,
            action: "quote".into(),
            kind: ErrorKind::Auth,
            code: "no-credentials".into(),
            message: e.to_string(),
            request_id: None,
            retry_after: None,
        })?;
        let key = format!("{provider}/{}/{}/{}/{:?}", req.region, req.zone, req.instance_type, req.billing);
        self.call(provider, "quote", &key, || cloud.quote(req)).await
    }

    /// Whether the type is on sale in the zone (`None`: the client does not ask), paced and retried.
    pub async fn in_stock(
        &self,
        provider: Provider,
        region: &str,
        zone: &str,
        instance_type: &str,
    ) -> Result<Option<(bool, Option<String>)>, ApplyError> {
        let cloud = self.cloud(provider)?;
        let key = format!("{provider}/{region}/{zone}/{instance_type}");
        Ok(self.call(provider, "stock", &key, || cloud.in_stock(region, zone, instance_type)).await?)
    }

    /// The instance's cloud disks, system disk first (for clone).
    pub async fn disks(
        &self,
        provider: Provider,
        region: &str,
        instance_id: &str,
    ) -> Result<Vec<(crate::cloud::DiskKind, crate::cloud::DiskInfo)>, ApplyError> {
        let cloud = self.cloud(provider)?;
        Ok(self.call(provider, "describe-disks", instance_id, || cloud.disks(region, instance_id)).await?)
    }

    /// Describes one instance (for clone and status).
    pub async fn describe_one(
        &self,
        provider: Provider,
        region: &str,
        instance_id: &str,
    ) -> Result<Instance, ApplyError> {
        let cloud = self.cloud(provider)?;
        let filter = Filter::Ids(vec![instance_id.to_string()]);
        let found = self.call(provider, "describe", instance_id, || cloud.describe(region, &filter)).await?;
        found
            .into_iter()
            .find(|i| i.instance_id == instance_id)
            .ok_or_else(|| ApplyError::Other(format!("{provider} has no instance {instance_id} in {region}")))
    }
}

impl Unit {
    fn new(pool: &str, index: u32, c: &Choice) -> Unit {
        Unit {
            pool: pool.into(),
            index,
            client_token: String::new(),
            provider: c.provider,
            region: c.region.clone(),
            zone: c.zone.clone(),
            instance_type: c.instance_type.clone(),
            instance_id: None,
            state: ResourceState::Creating,
            public_ip: None,
            private_ip: None,
            cny_per_hour: c.price.as_ref().map(|p| p.cny_per_hour),
            auto_release_at: None,
            fell_back_from: Vec::new(),
            adopted: false,
            error: None,
        }
    }

    fn from_resource(r: &Resource) -> Unit {
        Unit {
            pool: r.pool.clone(),
            index: r.index,
            client_token: r.client_token.clone(),
            provider: r.provider,
            region: r.region.clone(),
            zone: r.zone.clone(),
            instance_type: r.instance_type.clone(),
            instance_id: r.instance_id.clone(),
            state: r.state,
            public_ip: r.public_ip.clone(),
            private_ip: r.private_ip.clone(),
            cny_per_hour: r.price_cny_per_hour,
            auto_release_at: r.auto_release_at,
            fell_back_from: Vec::new(),
            adopted: true,
            error: None,
        }
    }

    fn failed_task(error: String) -> Unit {
        Unit {
            pool: String::new(),
            index: 0,
            client_token: String::new(),
            provider: Provider::Tencent,
            region: String::new(),
            zone: String::new(),
            instance_type: String::new(),
            instance_id: None,
            state: ResourceState::Failed,
            public_ip: None,
            private_ip: None,
            cny_per_hour: None,
            auto_release_at: None,
            fell_back_from: Vec::new(),
            adopted: false,
            error: Some(error),
        }
    }
}
