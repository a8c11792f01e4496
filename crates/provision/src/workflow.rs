//! The workflows a person runs — provision, destroy, release, clone — as engine operations. Each one
//! takes the deployment's lock itself, plans once, and holds the lock until it is done; the CLI only
//! turns flags into a call, asks for confirmation between the two steps, and prints the outcome.
//!
//! A workflow that needs a person's "yes" comes in two steps: `Engine::begin_*` takes the lock and
//! works out what would happen (the plan, the instances to release), the caller shows it and asks,
//! and the step's `run`/`apply` does it, under the same lock and from the same plan.

use gpuctl_core::{Catalog, Date};

use crate::apply::{ApplyError, BilledTerm, Engine, Event, Report};
use crate::cloud::{DiskInfo, DiskKind, Instance};
use crate::name;
use crate::plan::{self, Choice, Plan};
use crate::provider::{BillingMode, Provider};
use crate::spec::{self, DiskCategory, Limits, Spec};
use crate::state::{ApplyLock, ImageRecord, Resource, SnapshotRecord, StateError};

#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Apply(#[from] ApplyError),
    /// The plan is over the spec's budget: nothing is created (the reasons are in `Plan::over_budget`).
    #[error("the plan is over the spec's budget; nothing was created")]
    OverBudget,
    /// A recorded instance sits where the spec no longer places it (`Plan::moved`): nothing is created.
    #[error("{}; nothing was created", .0.join("; "))]
    Moved(Vec<String>),
    /// A clone's normalized spec did not parse: a bug in the normalization, not in the user's input.
    #[error("the normalized spec does not parse (please report):\n{0}")]
    CloneSpec(spec::SpecErrors),
}

impl From<crate::cloud::CloudError> for WorkflowError {
    fn from(e: crate::cloud::CloudError) -> Self {
        WorkflowError::Apply(ApplyError::Cloud(e))
    }
}

/// Released ids, instances still billed until their term ends, and errors, as `release --json` and
/// `destroy --json` print them. An instance in `billed_until` is never in `released`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Released {
    pub released: Vec<String>,
    pub billed_until: Vec<BilledTerm>,
    pub errors: Vec<String>,
    /// `destroy` only: what became of each zone network (`network = "auto"`) the deployment used.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<crate::network::NetworkOutcome>,
    /// `destroy` only: the placement groups deleted, the file systems deleted or kept.
    #[serde(skip_serializing_if = "crate::cluster::ClusterOutcome::is_empty")]
    pub storage: crate::cluster::ClusterOutcome,
}

/// One pool's `--dry-run` verdict: the cloud's check of its first-choice create.
#[derive(Debug, Clone, PartialEq)]
pub struct DryRun {
    pub pool: String,
    pub choice: Choice,
    pub verdict: Result<(), String>,
}

impl Engine {
    /// The plan for `spec` against what the state records for its deployment. Takes no lock: `gpuctl
    /// plan` only shows it; the workflows that act on it plan under their lock.
    pub fn plan(&self, spec: &Spec, catalog: &Catalog, today: Date) -> Result<Plan, StateError> {
        let recorded = self.store(|s| s.resources(Some(&spec.deployment.value)))?;
        Ok(plan::plan(spec, catalog, &recorded, today))
    }

    /// Snapshots one instance's disks as its next round (each round gets its own client tokens, so a
    /// second snapshot of the same instance is a new one, and a retried round is the same one).
    pub async fn snapshot_next(
        &self,
        provider: Provider,
        region: &str,
        instance_id: &str,
        owner: Option<&Resource>,
    ) -> Result<Vec<SnapshotRecord>, ApplyError> {
        let round = self
            .store(|s| s.snapshots(Some(instance_id)))?
            .iter()
            .filter(|s| s.disk_kind == "system")
            .count() as u32;
        self.snapshot(provider, region, instance_id, owner, round).await
    }

    /// A new custom image of the instance, the next generation after those recorded (`snapshot
    /// --image`, `clone --from-snapshot`). A generation left `creating` by a killed run is finished,
    /// not made again: its name is found on the cloud.
    pub async fn image_next(
        &self,
        provider: Provider,
        region: &str,
        instance_id: &str,
        owner: Option<&Resource>,
    ) -> Result<ImageRecord, ApplyError> {
        let made = self.store(|s| s.images(Some(instance_id)))?;
        let round = made.iter().filter(|i| i.state != "creating").count() as u32;
        self.image(provider, region, instance_id, owner, round).await
    }

    /// Step one of `provision`: takes the deployment's lock and plans once from the spec (parsed and
    /// hashed from one read of its file) and the recorded state.
    pub fn begin_provision(
        &self,
        spec: Spec,
        catalog: &Catalog,
        today: Date,
    ) -> Result<Provisioning<'_>, StateError> {
        let lock = self.store(|s| s.lock(&spec.deployment.value))?;
        let plan = self.plan(&spec, catalog, today)?;
        Ok(Provisioning { engine: self, spec, plan, _lock: lock })
    }

    /// Step one of `destroy`: takes the deployment's lock and lists every live instance gpuctl
    /// recorded for it; each is snapshotted first where its pool's policy says so.
    /// `delete_storage` deletes the deployment's shared file systems too (`destroy --delete-storage`);
    /// else each is kept unless its pool says `on_destroy = "delete"`.
    pub fn begin_destroy(&self, spec: &Spec, delete_storage: bool) -> Result<Releasing<'_>, StateError> {
        let deployment = &spec.deployment.value;
        let lock = self.store(|s| s.lock(deployment))?;
        let targets: Vec<Resource> = self
            .store(|s| s.resources(Some(deployment)))?
            .into_iter()
            .filter(|r| r.state.is_live())
            .collect();
        let snapshot_first = targets
            .iter()
            .map(|r| {
                spec.pools.iter().find(|p| p.name.value == r.pool).is_some_and(|p| p.snapshot.before_release)
            })
            .collect();
        let networks = self.store(|s| s.network_uses(deployment))?.len();
        let cluster_resources = self
            .store(|s| s.cluster_resources(deployment))?
            .iter()
            .filter(|r| r.state == "live" || (r.state == "kept" && delete_storage))
            .count();
        Ok(Releasing {
            engine: self,
            targets,
            snapshot_first,
            networks_of: Some(deployment.clone()),
            networks,
            cluster: Some((spec.pools.clone(), delete_storage)),
            cluster_resources,
            _lock: Some(lock),
        })
    }

    /// Step one of `release`: takes the lock of the deployment that owns `targets` (recorded live
    /// instances of one deployment); `snapshot` snapshots each first.
    pub fn begin_release(&self, targets: Vec<Resource>, snapshot: bool) -> Result<Releasing<'_>, StateError> {
        let lock = match targets.first() {
            Some(r) => Some(self.store(|s| s.lock(&r.deployment))?),
            None => None,
        };
        let snapshot_first = vec![snapshot; targets.len()];
        Ok(Releasing {
            engine: self,
            targets,
            snapshot_first,
            networks_of: None,
            networks: 0,
            cluster: None,
            cluster_resources: 0,
            _lock: lock,
        })
    }

    /// Step one of `clone` ("购买相同配置"): describes the source, snapshots its disks first when asked
    /// (not in a dry run), normalizes it into a spec that goes through the same parser as a
    /// hand-written one, takes the copies' deployment lock (not in a dry run) and plans once.
    pub async fn begin_clone(
        &self,
        source: &CloneSource,
        opts: &CloneOptions,
        catalog: &Catalog,
        today: Date,
    ) -> Result<Cloning<'_>, WorkflowError> {
        let (provider, region, instance_id, owner) = match source {
            CloneSource::Recorded(r) => {
                let id = r.instance_id.clone().ok_or_else(|| {
                    ApplyError::Other(format!(
                        "{}/{} #{} has no instance id yet",
                        r.deployment, r.pool, r.index
                    ))
                })?;
                (r.provider, r.region.as_str(), id, Some(&**r))
            }
            CloneSource::Foreign { provider, region, instance_id } => {
                (*provider, region.as_str(), instance_id.clone(), None)
            }
        };
        let src = self.describe_one(provider, region, &instance_id).await?;
        let disks = self.disks(provider, region, &instance_id).await?;
        let mut snapshots = Vec::new();
        let mut image = None;
        if opts.from_snapshot && !opts.dry_run {
            for s in self.snapshot_next(provider, region, &instance_id, owner).await? {
                snapshots.push((s.disk_id, s.snapshot_id));
            }
            // The system disk as it is now — with everything installed and validated on it — as a
            // custom image the clones boot, instead of the source's original image.
            image = Some(self.image_next(provider, region, &instance_id, owner).await?.image_id);
        }
        let deployment = opts
            .deployment
            .clone()
            .unwrap_or_else(|| name::clone_deployment(owner.map(|o| o.deployment.as_str()), &instance_id));
        let pool = owner.map(|o| o.pool.clone()).unwrap_or_else(|| "clone".into());
        let from = Restored { snapshots: &snapshots, image: image.as_deref() };
        let text = clone_spec_text(&deployment, &pool, opts.count, provider, &src, &disks, from);
        let file = opts.spec_file.clone().unwrap_or_else(|| format!("<clone of {instance_id}>"));
        let spec = spec::parse(&file, &text, None, &Limits::default()).map_err(WorkflowError::CloneSpec)?;
        let lock = if opts.dry_run { None } else { Some(self.store(|s| s.lock(&spec.deployment.value))?) };
        let plan = self.plan(&spec, catalog, today)?;
        Ok(Cloning {
            instance_id,
            text,
            provisioning: Provisioning { engine: self, spec, plan, _lock: lock },
        })
    }
}

/// A provision under way: the deployment's lock held and the plan made.
pub struct Provisioning<'e, L = ApplyLock> {
    engine: &'e Engine,
    spec: Spec,
    plan: Plan,
    _lock: L,
}

impl<L> Provisioning<'_, L> {
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Resolves the plan's image names on their clouds (`Engine::resolve_images`), before it is shown
    /// and applied: the plan then names the image each instance boots.
    pub async fn resolve_images(&mut self) -> Result<(), ApplyError> {
        self.engine.resolve_images(&mut self.plan).await
    }

    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// Records the spot instances the cloud reclaimed since the last look (issue 15,
    /// `Engine::find_reclaims`) and, when it found any, plans again: their slots are free, so the same
    /// run replaces them under the next token generation. Runs under this provision's lock.
    pub async fn find_reclaims(
        &mut self,
        catalog: &Catalog,
        today: Date,
        now: jiff::Timestamp,
    ) -> Result<Vec<crate::state::ReclaimRecord>, WorkflowError> {
        let spec = &self.spec;
        let hook = |pool: &str| crate::reclaim::pool_has_hook(spec, pool);
        let found = self.engine.find_reclaims(&spec.deployment.value, &hook, now).await?;
        self.engine.settle_replacements(&spec.deployment.value)?;
        if !found.is_empty() {
            self.plan = self.engine.plan(&self.spec, catalog, today)?;
        }
        Ok(found)
    }

    /// `gpuctl recover`: the plan narrowed to the slots reclaims freed (recorded, not yet replaced):
    /// nothing else is created and nothing released — that stays `provision`'s.
    pub fn only_replacements(&mut self) -> Result<(), StateError> {
        let open: Vec<(String, u32)> = self
            .engine
            .store(|s| s.reclaims(Some(&self.spec.deployment.value)))?
            .into_iter()
            .filter(|r| r.replaced_by.is_none())
            .map(|r| (r.pool, r.index))
            .collect();
        for pool in &mut self.plan.pools {
            pool.create.retain(|i| open.contains(&(pool.name.clone(), *i)));
        }
        self.plan.release.clear();
        Ok(())
    }

    /// `--dry-run`: the cloud checks each pool's first-choice create (Tencent/Alibaba DryRun, JD stock
    /// query). Not billable, so nothing is recorded.
    pub async fn dry_run(&self) -> Vec<DryRun> {
        let mut out = Vec::new();
        for pool in &self.plan.pools {
            let Some(c) = pool.choices.first() else { continue };
            let verdict =
                self.engine.dry_run(&self.plan.deployment, &pool.pool, c).await.map_err(|e| e.to_string());
            out.push(DryRun { pool: pool.name.clone(), choice: c.clone(), verdict });
        }
        out
    }

    /// Step two: refuses a plan over the spec's budget; otherwise records the deployment (its spec
    /// file and the hash of the text parsed) and carries the plan out. The lock is released when this
    /// returns.
    pub async fn apply(self, now: jiff::Timestamp) -> Result<Report, WorkflowError> {
        if !self.plan.over_budget.is_empty() {
            return Err(WorkflowError::OverBudget);
        }
        if !self.plan.moved.is_empty() {
            return Err(WorkflowError::Moved(self.plan.moved.clone()));
        }
        let spec = &self.spec;
        self.engine.store(|s| s.upsert_deployment(&spec.deployment.value, &spec.file, &spec.sha256))?;
        let monthly = spec.budget.monthly_cny.as_ref().map(|b| b.value);
        self.engine.store(|s| s.set_monthly_budget(&spec.deployment.value, monthly))?;
        for pool in &self.plan.pools {
            if !pool.create.is_empty() {
                self.engine.emit(Event::Begin {
                    group: pool.name.clone(),
                    total: pool.create.len() as u64,
                    verb: "starting",
                });
            }
        }
        Ok(self.engine.apply(&self.plan, now).await)
    }
}

/// Where a clone's source is.
#[derive(Debug, Clone)]
pub enum CloneSource {
    /// An instance gpuctl recorded (its deployment and pool name the copies). Boxed: a record is
    /// many times the size of the other variant.
    Recorded(Box<Resource>),
    /// An instance gpuctl did not create.
    Foreign { provider: Provider, region: String, instance_id: String },
}

#[derive(Debug, Clone, Default)]
pub struct CloneOptions {
    pub count: u32,
    pub from_snapshot: bool,
    /// The copies' deployment (default: `name::clone_deployment`).
    pub deployment: Option<String>,
    /// The file the normalized spec is written to, named in messages and in the state (default
    /// `<clone of ID>`).
    pub spec_file: Option<String>,
    /// Plan only: no snapshot, no lock, nothing created.
    pub dry_run: bool,
}

/// A clone under way: the normalized spec, and the copies' provision (lock held unless a dry run).
pub struct Cloning<'e> {
    instance_id: String,
    text: String,
    provisioning: Provisioning<'e, Option<ApplyLock>>,
}

impl Cloning<'_> {
    /// The normalized spec as TOML a person can read, edit and reuse.
    pub fn spec_text(&self) -> &str {
        &self.text
    }

    pub fn source_instance(&self) -> &str {
        &self.instance_id
    }

    pub fn spec(&self) -> &Spec {
        self.provisioning.spec()
    }

    pub fn plan(&self) -> &Plan {
        self.provisioning.plan()
    }

    /// Step two: creates the copies (refused over budget, or when this was begun as a dry run).
    pub async fn apply(self, now: jiff::Timestamp) -> Result<Report, WorkflowError> {
        if self.provisioning._lock.is_none() {
            return Err(ApplyError::Other("a dry-run clone creates nothing".into()).into());
        }
        self.provisioning.apply(now).await
    }
}

/// A release under way: the deployment's lock held and the instances chosen.
pub struct Releasing<'e> {
    engine: &'e Engine,
    targets: Vec<Resource>,
    /// Per target: snapshot its disks before releasing it.
    snapshot_first: Vec<bool>,
    /// `destroy`: the deployment whose zone networks are released after its instances.
    networks_of: Option<String>,
    /// How many zone networks it uses now.
    networks: usize,
    /// `destroy`: the spec's pools (their `shared_storage.on_destroy`) and `--delete-storage`.
    cluster: Option<(Vec<crate::spec::Pool>, bool)>,
    /// How many placement groups and file systems the run deletes or keeps.
    cluster_resources: usize,
    _lock: Option<ApplyLock>,
}

impl Releasing<'_> {
    pub fn targets(&self) -> &[Resource] {
        &self.targets
    }

    /// How many zone networks (`network = "auto"`) the run releases or keeps after the instances.
    pub fn networks(&self) -> usize {
        self.networks
    }

    /// How many placement groups and shared file systems the run deletes or keeps.
    pub fn cluster_resources(&self) -> usize {
        self.cluster_resources
    }

    /// Step two. The snapshot-before-release rule, written once: every target marked for it is
    /// snapshotted (and the snapshots wait until available) before any instance is released; a failed
    /// snapshot stops the run with nothing released, so no disk is lost unsnapshotted. Then every
    /// target is terminated and waited for until the cloud no longer lists it.
    pub async fn run(self) -> Result<Released, ApplyError> {
        for (r, first) in self.targets.iter().zip(&self.snapshot_first) {
            if let (true, Some(id)) = (*first, r.instance_id.as_deref()) {
                self.engine.snapshot_next(r.provider, &r.region, id, Some(r)).await?;
            }
        }
        if !self.targets.is_empty() {
            self.engine.emit(Event::Begin {
                group: "release".into(),
                total: self.targets.len() as u64,
                verb: "releasing",
            });
        }
        let crate::apply::Releases { released, billed_until, mut errors } =
            self.engine.release(&self.targets).await;
        // Networks go last, and only once every instance is gone: an instance still in one (a failed
        // release, or a prepaid term billed on) keeps it.
        let mut networks = Vec::new();
        let mut storage = crate::cluster::ClusterOutcome::default();
        if let (Some(d), Some((pools, delete_storage))) = (self.networks_of.as_deref(), &self.cluster) {
            if errors.is_empty() && billed_until.is_empty() {
                // Placement groups and file systems after their nodes, before the networks they sit in.
                storage = self.engine.release_cluster_resources(d, *delete_storage, pools).await;
                errors.extend(storage.errors.iter().cloned());
            }
        }
        if let Some(d) = self.networks_of.as_deref().filter(|_| errors.is_empty() && billed_until.is_empty())
        {
            let (n, e) = self.engine.release_networks(d).await;
            networks = n;
            errors.extend(e);
        }
        Ok(Released { released, billed_until, errors, networks, storage })
    }
}

fn category(c: DiskCategory) -> &'static str {
    match c {
        DiskCategory::Ssd => "ssd",
        DiskCategory::Premium => "premium",
    }
}

/// The spec a copy of `src` is made from (same zone, type, image, disks, network, security groups,
/// billing, user tags), as TOML a person can read, edit and reuse.
/// What `clone --from-snapshot` made of the source: each data disk's snapshot (disk id, snapshot id)
/// and the custom image of its system disk; empty and `None` for a plain clone.
struct Restored<'a> {
    snapshots: &'a [(String, String)],
    image: Option<&'a str>,
}

fn clone_spec_text(
    deployment: &str,
    pool: &str,
    count: u32,
    provider: Provider,
    src: &Instance,
    disks: &[(DiskKind, DiskInfo)],
    from: Restored<'_>,
) -> String {
    let Restored { snapshots, image } = from;
    use toml_edit::{value, Array, DocumentMut, InlineTable, Item, Table};
    let mut doc = DocumentMut::new();
    doc["deployment"] = value(deployment);
    let mut p = Table::new();
    p["name"] = value(pool);
    p["count"] = value(i64::from(count));
    p["provider"] = value(provider.as_str());
    p["region"] = value(src.region.as_str());
    p["zone"] = value(src.zone.as_str());
    p["instance_type"] = value(src.instance_type.as_str());
    let billing = src.billing.unwrap_or(BillingMode::Hourly);
    p["billing"] = value(billing.as_str());
    if let Some(img) = image.or(src.image_id.as_deref()) {
        p["image"] = value(img);
    }
    let disk_table = |d: &DiskInfo, snap: Option<&String>| {
        let mut t = InlineTable::new();
        t.insert("category", category(d.disk.category).into());
        t.insert("size_gb", i64::from(d.disk.size_gb).into());
        if let Some(s) = snap {
            t.insert("snapshot_id", s.as_str().into());
        }
        t
    };
    if let Some((_, sys)) = disks.iter().find(|(k, _)| *k == DiskKind::System) {
        p["system_disk"] = value(disk_table(sys, None));
    }
    let mut data = Array::new();
    for (_, d) in disks.iter().filter(|(k, _)| *k == DiskKind::Data) {
        let snap = snapshots.iter().find(|(disk, _)| disk == &d.disk_id).map(|(_, s)| s);
        data.push(disk_table(d, snap));
    }
    if !data.is_empty() {
        p["data_disks"] = value(data);
    }
    match &src.network {
        Some(n) => {
            let mut t = InlineTable::new();
            t.insert("vpc", n.vpc.as_str().into());
            t.insert("subnet", n.subnet.as_str().into());
            if !n.security_groups.is_empty() {
                t.insert(
                    "security_groups",
                    n.security_groups.iter().map(String::as_str).collect::<Array>().into(),
                );
            }
            p["network"] = value(t);
        }
        None => p["network"] = value("default"),
    }
    if let Some(k) = &src.login_key {
        p["login_key"] = value(k.as_str());
    }
    // A source with no public address is copied without one; one with an address gets the default
    // public IP (the clouds' describe answers do not all say its bandwidth and billing).
    if src.public_ip.is_none() {
        p["public_ip"] = value(false);
    }
    let user_tags: Vec<(&String, &String)> =
        src.tags.iter().filter(|(k, _)| !k.starts_with("gpuctl")).collect();
    if !user_tags.is_empty() {
        let mut t = InlineTable::new();
        for (k, v) in user_tags {
            t.insert(k.as_str(), v.as_str().into());
        }
        p["tags"] = value(t);
    }
    let mut pools = toml_edit::ArrayOfTables::new();
    pools.push(p);
    doc["pool"] = Item::ArrayOfTables(pools);
    let mut header =
        format!("# Made by `gpuctl clone` from {provider} instance {} (购买相同配置).\n", src.instance_id);
    if !billing.is_per_hour() {
        header +=
            "# The source is prepaid; its term is not visible through the API: check `billing` and `term`.\n";
    } else {
        header += "# Pay-as-you-go copies get an auto-release time (24 h by default): set auto_release to change it.\n";
    }
    if !snapshots.is_empty() {
        header +=
            "# Data disks start from snapshots of the source; the system disk from the source's image.\n";
    }
    format!("{header}{doc}")
}
