//! Leftovers (issue 15): what bills after the instances are gone — disks attached to nothing, public
//! IPs bound to nothing, snapshots older than a retention age, file systems no recorded deployment
//! uses — found in every cloud and region searched, priced per month from gpuctl-core's cited storage
//! table, and released only where they are gpuctl's.
//!
//! **Which are leftovers.** The clouds' listings already select unattached disks and unbound IPs
//! (each client's `leftovers`); a snapshot is one when the cloud says it was made at least
//! `snapshot_age` ago (one whose age the cloud does not say is counted, not listed: its age is unknown);
//! a file system is one unless the state store's `cluster_resources` records it `live` for a deployment.
//!
//! **Which are gpuctl's.** One carrying the `gpuctl-deployment` tag, or one the state store records as
//! gpuctl's own: a snapshot in `snapshots` (gpuctl's snapshot-before-release; JD's Snapshot model has no
//! tags, so on JD this is the only way to know one), a file system in `cluster_resources` (JD's
//! createFileSystem takes no tags). Any other is listed as "not gpuctl's" and never released.
//!
//! **Release.** Under each deployment's lock, after reading the store again (a file system a run made
//! live meanwhile is left alone): intent → delete → wait until the cloud no longer lists it → done. Only
//! then is it "released"; a cloud's refusal (an attached disk, a snapshot an image uses) is reported
//! with the cloud's code and request id, and the resource stays listed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use gpuctl_cloud::cost::{Leftover, LeftoverKind};
use gpuctl_core::storage::{self, Billing, StorageKind};
use jiff::{SignedDuration, Timestamp};

use super::{join_releases, lock_name, Place, PlaceError};
use crate::apply::{ApplyError, Engine};
use crate::cloud::{ErrorKind, SnapshotState, TAG_DEPLOYMENT};
use crate::provider::Provider;
use crate::state::{ClusterResource, Intent, SnapshotRecord, StateError};

/// How a leftover was known to be gpuctl's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    /// It carries the `gpuctl-deployment` tag.
    Tag,
    /// The state store records it (a snapshot gpuctl made, a file system of a cluster pool).
    State,
    /// Neither: not gpuctl's, left alone.
    NotGpuctl,
}

/// What one leftover costs a month, and from which cited price.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LeftoverCost {
    /// `None`: price unknown (no recorded figure for this cloud, class and region, or no size).
    pub cny_per_month: Option<f64>,
    /// "50 GB × 0.0025 CNY/GB-hour × 730 h", or why the price is unknown.
    pub basis: String,
    /// The price row's source, date and confidence.
    pub source: Option<String>,
    pub as_of: Option<String>,
}

/// A leftover a search found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Found {
    pub provider: Provider,
    #[serde(flatten)]
    pub leftover: Leftover,
    pub owner: Owner,
    /// The deployment it belongs to (its tag, or the state's record), when known.
    pub deployment: Option<String>,
    /// Days since the cloud says it was made; `None` when the cloud does not say.
    pub age_days: Option<f64>,
    pub cost: LeftoverCost,
}

impl Found {
    pub fn is_gpuctls(&self) -> bool {
        self.owner != Owner::NotGpuctl
    }
}

/// What a leftover search found, and what it passed over.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Default)]
pub struct Search {
    pub leftovers: Vec<Found>,
    /// Snapshots younger than the retention age (not leftovers yet).
    pub young_snapshots: usize,
    /// Snapshots whose age the cloud did not say (not listed: never guessed old).
    pub snapshots_of_unknown_age: usize,
    /// File systems a recorded deployment uses (`cluster_resources` state `live`).
    pub file_systems_in_use: usize,
    /// (place, kind) listings that failed after retries: the search is incomplete there.
    pub errors: Vec<PlaceError>,
}

/// The storage kind and class word a leftover is priced by.
fn price_key(l: &Leftover) -> (StorageKind, String, f64) {
    match l.kind {
        LeftoverKind::Disk => {
            (StorageKind::Disk, l.class.clone().unwrap_or_default(), l.size_gb.unwrap_or(-1.0))
        }
        // One address held: the clouds' holding fee is per IP.
        LeftoverKind::PublicIp => (StorageKind::IdleIp, "EIP".into(), 1.0),
        LeftoverKind::Snapshot => (StorageKind::Snapshot, "snapshot".into(), l.size_gb.unwrap_or(-1.0)),
        LeftoverKind::FileSystem => {
            (StorageKind::FileSystem, l.class.clone().unwrap_or_default(), l.size_gb.unwrap_or(-1.0))
        }
    }
}

/// The month's cost of `l` from core's storage table. A disk is priced pay-as-you-go (a leftover disk's
/// charge type is not in the listings gpuctl reads; a prepaid one was paid for already). A snapshot is
/// priced at its source disk's size where that is all the cloud says (Tencent, Alibaba): an upper
/// bound, said in the basis. Without a size the price is unknown.
pub fn cost_of(provider: Provider, l: &Leftover) -> LeftoverCost {
    let (kind, word, qty) = price_key(l);
    if qty < 0.0 {
        return LeftoverCost {
            cny_per_month: None,
            basis: format!("price unknown: the cloud did not say the {}'s size", l.kind.as_str()),
            source: None,
            as_of: None,
        };
    }
    let c = storage::monthly_cost(provider, kind, &word, &l.region, qty, Billing::Usage);
    let mut basis = c.basis;
    if l.kind == LeftoverKind::Snapshot && provider != Provider::JdCloud && c.cny_per_month.is_some() {
        basis.push_str(" (the source disk's size: the cloud bills what the snapshot stores, at most this)");
    }
    LeftoverCost {
        cny_per_month: c.cny_per_month,
        basis,
        source: c.price.map(|p| p.citation()),
        as_of: c.price.map(|p| p.as_of.to_string()),
    }
}

/// Who owns `l`: its tag, else the state's snapshots / file systems records.
fn owner_of(
    provider: Provider,
    l: &Leftover,
    snapshots: &[SnapshotRecord],
    file_systems: &[ClusterResource],
) -> (Owner, Option<String>) {
    if let Some(d) = l.tags.get(TAG_DEPLOYMENT) {
        return (Owner::Tag, Some(d.clone()));
    }
    match l.kind {
        LeftoverKind::Snapshot => {
            match snapshots.iter().find(|s| s.provider == provider && s.snapshot_id == l.id) {
                Some(s) => (Owner::State, s.deployment.clone()),
                None => (Owner::NotGpuctl, None),
            }
        }
        LeftoverKind::FileSystem => match recorded_fs(provider, &l.id, file_systems) {
            Some(r) => (Owner::State, Some(r.deployment.clone())),
            None => (Owner::NotGpuctl, None),
        },
        _ => (Owner::NotGpuctl, None),
    }
}

fn recorded_fs<'a>(provider: Provider, id: &str, rows: &'a [ClusterResource]) -> Option<&'a ClusterResource> {
    rows.iter().find(|r| r.provider == provider && r.cloud_id == id && r.kind == ClusterResource::FILE_SYSTEM)
}

/// Whether a recorded deployment uses file system `id` now.
fn in_use(provider: Provider, id: &str, rows: &[ClusterResource]) -> bool {
    recorded_fs(provider, id, rows).is_some_and(|r| r.state == "live")
}

/// Judges what the listings answered: which are leftovers (see the module's rules), whose, at what cost.
pub fn judge(
    listed: Vec<(Provider, Leftover)>,
    snapshots: &[SnapshotRecord],
    file_systems: &[ClusterResource],
    snapshot_age: SignedDuration,
    now: Timestamp,
) -> Search {
    let mut out = Search::default();
    for (provider, l) in listed {
        let age = l.created.map(|t| now.duration_since(t));
        if l.kind == LeftoverKind::Snapshot {
            match age {
                None => {
                    out.snapshots_of_unknown_age += 1;
                    continue;
                }
                Some(a) if a < snapshot_age => {
                    out.young_snapshots += 1;
                    continue;
                }
                Some(_) => {}
            }
        }
        if l.kind == LeftoverKind::FileSystem && in_use(provider, &l.id, file_systems) {
            out.file_systems_in_use += 1;
            continue;
        }
        let (owner, deployment) = owner_of(provider, &l, snapshots, file_systems);
        let cost = cost_of(provider, &l);
        let age_days = age.map(|a| (a.as_secs_f64() / 86_400.0).max(0.0));
        out.leftovers.push(Found { provider, leftover: l, owner, deployment, age_days, cost });
    }
    out.leftovers.sort_by(|a, b| {
        (a.leftover.kind, a.provider, &a.leftover.region, &a.leftover.id).cmp(&(
            b.leftover.kind,
            b.provider,
            &b.leftover.region,
            &b.leftover.id,
        ))
    });
    out
}

impl Engine {
    /// Lists every kind of leftover in `places`, `concurrency` listings at a time (each call paced
    /// and retried), then reads the state store and judges them (see the module's rules).
    pub async fn find_leftovers(
        &self,
        places: &[Place],
        concurrency: usize,
        snapshot_age: SignedDuration,
    ) -> Result<Search, StateError> {
        let permits = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        let mut by_task = std::collections::HashMap::new();
        for place in places {
            for kind in LeftoverKind::ALL {
                let (engine, permits, p) = (self.clone(), permits.clone(), place.clone());
                let task = tasks.spawn(async move {
                    let _permit = permits.acquire_owned().await;
                    engine.list_leftovers(&p, kind).await
                });
                by_task.insert(task.id(), place.clone());
            }
        }
        let (mut listed, mut errors) = (Vec::new(), Vec::new());
        while let Some(res) = tasks.join_next_with_id().await {
            let (place, res) = match res {
                Ok((id, r)) => (by_task.remove(&id), r),
                // A panicked task is a bug; it must not pass for an empty listing.
                Err(e) => {
                    (by_task.remove(&e.id()), Err(ApplyError::Other(format!("the search stopped: {e}"))))
                }
            };
            let Some(place) = place else { continue };
            match res {
                Ok(found) => listed.extend(found.into_iter().map(|l| (place.provider, l))),
                Err(e) => errors.push(PlaceError::new(place, e)),
            }
        }
        let snapshots = self.store(|s| s.snapshots(None))?;
        let file_systems = self.store(|s| s.cluster_resources_of(None))?;
        let mut out = judge(listed, &snapshots, &file_systems, snapshot_age, Timestamp::now());
        errors.sort_by(|a, b| (&a.place, &a.error).cmp(&(&b.place, &b.error)));
        out.errors = errors;
        Ok(out)
    }

    async fn list_leftovers(&self, place: &Place, kind: LeftoverKind) -> Result<Vec<Leftover>, ApplyError> {
        let cloud = self.cloud(place.provider)?;
        let key = format!("sweep/{}/{}/{}", place.provider, place.region, kind.as_str());
        let got = self
            .call(place.provider, "leftovers", &key, || cloud.leftovers(&place.region, kind))
            .await
            .map_err(|e| ApplyError::Other(format!("listing {}s: {e}", kind.as_str())))?;
        Ok(got)
    }

    /// Releases the gpuctl-owned leftovers among `found` (any other is refused here, whatever the
    /// caller passed): under each deployment's lock (one another run holds is skipped), the store read
    /// again, then for each: intent → delete → wait until the cloud no longer lists it → done. Returns
    /// the released ids and one message per leftover not released.
    pub async fn release_leftovers(&self, found: &[Found]) -> (Vec<String>, Vec<String>) {
        let mut errors = Vec::new();
        let mine: Vec<&Found> = found.iter().filter(|f| f.is_gpuctls()).collect();
        for f in found.iter().filter(|f| !f.is_gpuctls()) {
            errors.push(format!(
                "{} {} {}: not gpuctl's (no {TAG_DEPLOYMENT} tag, no state record); left alone",
                f.provider,
                f.leftover.kind.as_str(),
                f.leftover.id
            ));
        }
        let mut locks = BTreeMap::new();
        for dep in mine.iter().filter_map(|f| f.deployment.as_deref()).collect::<BTreeSet<_>>() {
            match self.store(|s| s.lock(&lock_name(dep))) {
                Ok(lock) => {
                    locks.insert(dep.to_string(), lock);
                }
                Err(e) => errors.push(format!("deployment `{dep}`: {e}; its leftovers were left alone")),
            }
        }
        let file_systems = match self.store(|s| s.cluster_resources_of(None)) {
            Ok(r) => r,
            Err(e) => {
                errors.push(format!(
                    "cannot read the state store again before releasing: {e}; nothing was released"
                ));
                return (vec![], errors);
            }
        };
        let mut tasks = tokio::task::JoinSet::new();
        for f in mine {
            if f.deployment.as_ref().is_some_and(|d| !locks.contains_key(d)) {
                continue;
            }
            let l = &f.leftover;
            if l.kind == LeftoverKind::FileSystem && in_use(f.provider, &l.id, &file_systems) {
                errors.push(format!(
                    "{} file system {}: a recorded deployment uses it now; left alone",
                    f.provider, l.id
                ));
                continue;
            }
            let (engine, f) = (self.clone(), f.clone());
            tasks.spawn(async move {
                engine.release_leftover(&f).await.map_err(|e| {
                    format!(
                        "{} {} {} ({}): {e}",
                        f.provider,
                        f.leftover.kind.as_str(),
                        f.leftover.id,
                        f.leftover.region
                    )
                })
            });
        }
        let done = join_releases(tasks, &mut errors).await;
        drop(locks);
        errors.sort();
        (done, errors)
    }

    async fn release_leftover(&self, f: &Found) -> Result<String, ApplyError> {
        let cloud = self.cloud(f.provider)?;
        let l = &f.leftover;
        let (region, kind, id) = (&l.region, l.kind, &l.id);
        let intent = Intent {
            deployment: f.deployment.clone(),
            kind: "delete-leftover",
            provider: f.provider,
            region: region.clone(),
            client_token: format!("sweep/{}/{}/{id}", f.provider, kind.as_str()),
            target: Some(id.clone()),
            params: serde_json::json!({ "kind": kind, "id": id, "tags": l.tags, "sweep": true }).to_string(),
        };
        let op = self.store(|s| s.record_intent(&intent))?;
        let key = format!("sweep/{}/{id}", f.provider);
        match self.call(f.provider, "delete-leftover", &key, || cloud.delete_leftover(region, kind, id)).await
        {
            Ok(()) => {}
            // Gone already: the wait below confirms it from the listing.
            Err(e) if e.kind == ErrorKind::NotFound => {}
            Err(e) => {
                let msg = e.to_string();
                self.store(|s| s.finish_operation(op, "failed", None, Some(&msg)))?;
                return Err(e.into());
            }
        }
        // "Released" only once the cloud no longer lists it: until then it may still bill. The wait is
        // the engine's (wait timeout, poll interval): still listed reads as "not there yet".
        let what = format!("{} {} {id} leaving the listing", f.provider, kind.as_str());
        self.wait_available(&what, || async {
            let listed = self.call(f.provider, "leftovers", &key, || cloud.leftovers(region, kind)).await?;
            Ok(if listed.iter().any(|x| &x.id == id) {
                SnapshotState::Creating
            } else {
                SnapshotState::Available
            })
        })
        .await?;
        self.store(|s| s.finish_operation(op, "done", None, None))?;
        Ok(id.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftover(kind: LeftoverKind, id: &str, class: Option<&str>, gb: Option<f64>, days: i64) -> Leftover {
        let now = Timestamp::now();
        Leftover {
            kind,
            id: id.into(),
            region: "ap-guangzhou".into(),
            zone: None,
            name: None,
            size_gb: gb,
            class: class.map(String::from),
            created: Some(now - SignedDuration::from_hours(24 * days)),
            tags: BTreeMap::new(),
        }
    }

    fn fs_row(id: &str, state: &str) -> ClusterResource {
        ClusterResource {
            provider: Provider::Tencent,
            cloud_id: id.into(),
            region: "ap-guangzhou".into(),
            zone: "ap-guangzhou-3".into(),
            deployment: "dep".into(),
            pool: "p".into(),
            kind: ClusterResource::FILE_SYSTEM.into(),
            name: "n".into(),
            client_token: "t".into(),
            tier: Some("capacity".into()),
            mount_address: None,
            state: state.into(),
        }
    }

    #[test]
    fn only_old_snapshots_and_unused_file_systems_are_leftovers_and_owners_are_tag_or_state() {
        let mut tagged = leftover(LeftoverKind::Disk, "disk-1", Some("CLOUD_PREMIUM"), Some(100.0), 1);
        tagged.tags.insert(TAG_DEPLOYMENT.into(), "dep".into());
        let mut unknown_age = leftover(LeftoverKind::Snapshot, "snap-x", None, Some(10.0), 0);
        unknown_age.created = None;
        let listed = vec![
            (Provider::Tencent, tagged),
            (Provider::Tencent, leftover(LeftoverKind::Snapshot, "snap-old", None, Some(50.0), 40)),
            (Provider::Tencent, leftover(LeftoverKind::Snapshot, "snap-young", None, Some(50.0), 2)),
            (Provider::Tencent, unknown_age),
            (Provider::Tencent, leftover(LeftoverKind::FileSystem, "cfs-live", Some("SD"), Some(1.0), 5)),
            (Provider::Tencent, leftover(LeftoverKind::FileSystem, "cfs-kept", Some("SD"), Some(2.0), 5)),
            (Provider::Tencent, leftover(LeftoverKind::FileSystem, "cfs-other", Some("SD"), Some(2.0), 5)),
            (Provider::Tencent, leftover(LeftoverKind::PublicIp, "eip-1", None, None, 3)),
        ];
        let snaps = vec![SnapshotRecord {
            snapshot_id: "snap-old".into(),
            provider: Provider::Tencent,
            region: "ap-guangzhou".into(),
            instance_id: "ins-1".into(),
            disk_id: "disk-9".into(),
            disk_kind: "data".into(),
            deployment: Some("dep".into()),
            pool: None,
            client_token: "t".into(),
            state: "available".into(),
            created_at: Timestamp::now(),
        }];
        let rows = vec![fs_row("cfs-live", "live"), fs_row("cfs-kept", "kept")];
        let s = judge(listed, &snaps, &rows, SignedDuration::from_hours(24 * 30), Timestamp::now());
        let got: Vec<(&str, Owner)> = s.leftovers.iter().map(|f| (f.leftover.id.as_str(), f.owner)).collect();
        assert_eq!(
            got,
            [
                ("disk-1", Owner::Tag),
                ("eip-1", Owner::NotGpuctl),
                ("snap-old", Owner::State),
                ("cfs-kept", Owner::State),
                ("cfs-other", Owner::NotGpuctl),
            ]
        );
        assert_eq!((s.young_snapshots, s.snapshots_of_unknown_age, s.file_systems_in_use), (1, 1, 1));
        assert_eq!(s.leftovers[2].deployment.as_deref(), Some("dep"));
    }

    #[test]
    fn costs_come_from_cited_rows_and_unknown_stays_unknown() {
        let disk = leftover(LeftoverKind::Disk, "d", Some("CLOUD_PREMIUM"), Some(100.0), 1);
        let c = cost_of(Provider::Tencent, &disk);
        // 高性能云硬盘 in Guangzhou: 0.0009 CNY/GB-hour pay-as-you-go (core's storage table) × 730 h.
        assert!((c.cny_per_month.unwrap() - 100.0 * 0.0009 * 730.0).abs() < 1e-9, "{c:?}");
        assert!(c.source.as_deref().is_some_and(|s| s.contains("qcloud-documents")), "{c:?}");
        let odd = leftover(LeftoverKind::Disk, "d", Some("CLOUD_MYSTERY"), Some(100.0), 1);
        let c = cost_of(Provider::Tencent, &odd);
        assert_eq!(c.cny_per_month, None);
        assert!(c.basis.starts_with("price unknown"), "{c:?}");
        let sizeless = leftover(LeftoverKind::Snapshot, "s", None, None, 40);
        assert_eq!(cost_of(Provider::Alibaba, &sizeless).cny_per_month, None);
        let ip = leftover(LeftoverKind::PublicIp, "eip", None, None, 1);
        let c = cost_of(Provider::JdCloud, &ip);
        assert!(c.cny_per_month.is_some_and(|x| x > 0.0) || c.basis.starts_with("price unknown"), "{c:?}");
    }
}
