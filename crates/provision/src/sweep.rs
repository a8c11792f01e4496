//! Finding leaks without state (`gpuctl sweep`): the instances that carry gpuctl's deployment tag but
//! that no live record in the state store owns — the state was lost, or another machine's run made them —
//! and releasing them.
//!
//! Owns the ownership rule ([`orphans`]) and the two engine steps (describe by tag key in many regions;
//! release under each deployment's lock). Prompting and printing are the CLI's.
//!
//! Two orders matter. The clouds are described *before* the store is read: `provision` records its
//! intent (with the client token that becomes the `gpuctl-token` tag) before it calls create, so any
//! instance a concurrent run makes is already recorded when the store is read afterwards. And a release
//! takes the deployment's lock and reads the store again before each terminate, so an instance a run
//! adopted meanwhile is left alone.

pub mod leftovers;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::apply::{ApplyError, Engine};
use crate::cloud::{Filter, Instance, InstanceState, TAG_DEPLOYMENT, TAG_POOL, TAG_TOKEN};
use crate::provider::Provider;
use crate::state::{Intent, Resource, ResourceState, StateError};

/// One region of one cloud to search.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Place {
    pub provider: Provider,
    pub region: String,
}

/// An instance tagged by gpuctl that no live record owns.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Orphan {
    pub provider: Provider,
    pub instance: Instance,
    /// The `gpuctl-deployment` tag's value.
    pub deployment: String,
    /// The `gpuctl-pool` tag's value, when it has one.
    pub pool: Option<String>,
    /// The state of this store's record of the instance when it has one that is no longer live
    /// (released, failed): the record says it is gone, the cloud still has it.
    pub recorded_as: Option<ResourceState>,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Found {
    pub orphans: Vec<Orphan>,
    /// Tagged instances a live record owns (left alone).
    pub owned: usize,
    /// Tagged instances already terminating or gone (left alone: they are on their way out).
    pub leaving: usize,
    /// Places searched without error.
    pub searched: Vec<Place>,
    /// Places whose describe failed (after retries): the search is incomplete there.
    pub errors: Vec<PlaceError>,
    /// Instances released as far as their cloud allows, still billed until their prepaid term ends
    /// (their records are `billed_until`; counted in `owned` too when listed).
    pub billing_until: Vec<StillBilled>,
}

/// A recorded instance still billed until its prepaid term ends, with what is left of the term.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StillBilled {
    pub provider: Provider,
    pub region: String,
    pub instance_id: Option<String>,
    pub deployment: String,
    pub pool: String,
    pub until: Option<jiff::Timestamp>,
    /// Hours from now to `until` (0 once it has passed).
    pub hours_left: Option<f64>,
    /// The recorded ¥/hour × `hours_left`: the part of the term paid for and not yet used — an
    /// estimate, and already charged (a prepaid term is paid up front).
    pub cost_to_expiry_cny: Option<f64>,
}

/// The `billed_until` records among `recorded`, priced to their term's end from `now`.
pub fn still_billed(recorded: &[Resource], now: jiff::Timestamp) -> Vec<StillBilled> {
    recorded
        .iter()
        .filter(|r| r.state == ResourceState::BilledUntil)
        .map(|r| {
            let hours_left = r.billed_until.map(|t| (t.duration_since(now).as_secs_f64() / 3600.0).max(0.0));
            StillBilled {
                provider: r.provider,
                region: r.region.clone(),
                instance_id: r.instance_id.clone(),
                deployment: r.deployment.clone(),
                pool: r.pool.clone(),
                until: r.billed_until,
                hours_left,
                cost_to_expiry_cny: r.price_cny_per_hour.zip(hours_left).map(|(p, h)| p * h),
            }
        })
        .collect()
}

/// A place the search could not finish, with the cloud's code and request id when it answered.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlaceError {
    #[serde(flatten)]
    pub place: Place,
    pub error: String,
    pub code: Option<String>,
    pub request_id: Option<String>,
}

impl PlaceError {
    fn new(place: Place, e: ApplyError) -> PlaceError {
        let (code, request_id) = match &e {
            ApplyError::Cloud(c) => (Some(c.code.clone()), c.request_id.clone()),
            _ => (None, None),
        };
        PlaceError { place, error: e.to_string(), code, request_id }
    }
}

/// The lock name for a deployment tag's value. The value comes from the cloud, and the lock is a file
/// named after it: a name gpuctl's spec allows (`name::is_valid`) is used as it is, so a `provision` of
/// that deployment contends for the same lock; any other value (which no gpuctl run can hold) gets a
/// hashed name, so it never becomes a path.
fn lock_name(deployment: &str) -> String {
    if crate::name::is_valid(deployment, crate::name::DEPLOYMENT_MAX) {
        deployment.to_string()
    } else {
        use sha2::Digest;
        format!("foreign-{}", &hex::encode(sha2::Sha256::digest(deployment.as_bytes()))[..16])
    }
}

/// Instances whose state says they are on their way out; a sweep neither lists nor releases them.
fn leaving(i: &Instance) -> bool {
    matches!(i.state, InstanceState::Terminating | InstanceState::Terminated)
}

/// The live record that owns `i` (same cloud, and the same instance id or the client token its
/// `gpuctl-token` tag carries: a record whose create answer was lost has the token but no id yet), or
/// else the state of a record that is no longer live.
fn owner(provider: Provider, i: &Instance, recorded: &[Resource]) -> Result<(), Option<ResourceState>> {
    let token = i.tags.get(TAG_TOKEN);
    let mut stale = None;
    for r in recorded.iter().filter(|r| r.provider == provider) {
        let same = r.instance_id.as_deref() == Some(i.instance_id.as_str()) || token == Some(&r.client_token);
        if !same {
            continue;
        }
        if r.state.is_live() {
            return Ok(());
        }
        stale = Some(r.state);
    }
    Err(stale)
}

/// Splits what the clouds listed into orphans, owned and leaving. An instance without gpuctl's
/// deployment tag is never an orphan, whatever the cloud's filter let through.
pub fn orphans(listed: Vec<(Provider, Instance)>, recorded: &[Resource]) -> (Vec<Orphan>, usize, usize) {
    let (mut out, mut owned, mut gone) = (Vec::new(), 0, 0);
    for (provider, i) in listed {
        let Some(deployment) = i.tags.get(TAG_DEPLOYMENT).cloned() else { continue };
        if leaving(&i) {
            gone += 1;
            continue;
        }
        match owner(provider, &i, recorded) {
            Ok(()) => owned += 1,
            Err(recorded_as) => {
                let pool = i.tags.get(TAG_POOL).cloned();
                out.push(Orphan { provider, instance: i, deployment, pool, recorded_as });
            }
        }
    }
    out.sort_by(|a, b| {
        (a.provider, &a.instance.region, &a.instance.instance_id).cmp(&(
            b.provider,
            &b.instance.region,
            &b.instance.instance_id,
        ))
    });
    (out, owned, gone)
}

impl Engine {
    /// Whether this engine has a client (credentials) for `p`.
    pub fn has_cloud(&self, p: Provider) -> bool {
        self.cloud(p).is_ok()
    }

    /// Lists every instance carrying gpuctl's deployment tag in `places` (describe by tag key, paged by
    /// the client), `concurrency` places at a time, each call paced and retried; then reads the store
    /// and keeps those no live record owns.
    pub async fn find_orphans(&self, places: &[Place], concurrency: usize) -> Result<Found, StateError> {
        let permits = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        let mut by_task = std::collections::HashMap::new();
        for place in places.iter().cloned() {
            let (engine, permits, p) = (self.clone(), permits.clone(), place.clone());
            let task = tasks.spawn(async move {
                let _permit = permits.acquire_owned().await;
                engine.tagged(&p).await
            });
            by_task.insert(task.id(), place);
        }
        let (mut listed, mut searched, mut errors) = (Vec::new(), Vec::new(), Vec::new());
        while let Some(res) = tasks.join_next_with_id().await {
            let (place, res) = match res {
                Ok((id, r)) => (by_task.remove(&id), r),
                // A panicked task is a bug; it must not pass for an empty region.
                Err(e) => {
                    (by_task.remove(&e.id()), Err(ApplyError::Other(format!("the search stopped: {e}"))))
                }
            };
            let Some(place) = place else { continue };
            match res {
                Ok(found) => {
                    listed.extend(found.into_iter().map(|i| (place.provider, i)));
                    searched.push(place);
                }
                Err(e) => errors.push(PlaceError::new(place, e)),
            }
        }
        searched.sort();
        errors.sort_by(|a, b| a.place.cmp(&b.place));
        // After the describes, never before: see the module comment.
        let recorded = self.store(|s| s.resources(None))?;
        let (orphans, owned, leaving) = orphans(listed, &recorded);
        let billing_until = still_billed(&recorded, jiff::Timestamp::now());
        Ok(Found { orphans, owned, leaving, searched, errors, billing_until })
    }

    /// One place's tagged instances.
    async fn tagged(&self, place: &Place) -> Result<Vec<Instance>, ApplyError> {
        let cloud = self.cloud(place.provider)?;
        let filter = Filter::TagKey(TAG_DEPLOYMENT.into());
        let key = format!("sweep/{}/{}", place.provider, place.region);
        Ok(self.call(place.provider, "describe", &key, || cloud.describe(&place.region, &filter)).await?)
    }

    /// Finishes the releases that waited for a prepaid term's end: every `billed_until` record, under
    /// its deployment's lock (one another run holds is skipped), released the way `release` does — the
    /// cloud deletes it once the term is over, and refuses again (it stays billed until) before.
    pub async fn finish_terms(&self) -> crate::apply::Releases {
        let mut out = crate::apply::Releases::default();
        let recorded = match self.store(|s| s.resources(None)) {
            Ok(r) => r,
            Err(e) => {
                out.errors.push(format!("cannot read the state store: {e}"));
                return out;
            }
        };
        let waiting: Vec<Resource> =
            recorded.into_iter().filter(|r| r.state == ResourceState::BilledUntil).collect();
        for dep in waiting.iter().map(|r| r.deployment.as_str()).collect::<BTreeSet<_>>() {
            let _lock = match self.store(|s| s.lock(dep)) {
                Ok(l) => l,
                Err(e) => {
                    out.errors.push(format!("deployment `{dep}`: {e}; its instances were left alone"));
                    continue;
                }
            };
            let mine: Vec<Resource> = waiting.iter().filter(|r| r.deployment == dep).cloned().collect();
            let done = self.release(&mine).await;
            out.released.extend(done.released);
            out.billed_until.extend(done.billed_until);
            out.errors.extend(done.errors);
        }
        out
    }

    /// Releases `orphans`: takes each of their deployments' locks (a deployment another run holds is
    /// skipped), reads the store again and skips any instance a live record now owns, then for each:
    /// intent → terminate → wait until the cloud no longer lists it → intent done. Returns the released
    /// ids and one message per instance not released.
    pub async fn release_orphans(&self, orphans: &[Orphan]) -> (Vec<String>, Vec<String>) {
        let mut errors = Vec::new();
        let mut locks = BTreeMap::new();
        for dep in orphans.iter().map(|o| o.deployment.as_str()).collect::<BTreeSet<_>>() {
            match self.store(|s| s.lock(&lock_name(dep))) {
                Ok(lock) => {
                    locks.insert(dep.to_string(), lock);
                }
                Err(e) => errors.push(format!("deployment `{dep}`: {e}; its instances were left alone")),
            }
        }
        let recorded = match self.store(|s| s.resources(None)) {
            Ok(r) => r,
            Err(e) => {
                return (
                    vec![],
                    vec![format!(
                        "cannot read the state store again before releasing: {e}; nothing was released"
                    )],
                )
            }
        };
        let mut tasks = tokio::task::JoinSet::new();
        for o in orphans.iter().filter(|o| locks.contains_key(&o.deployment)) {
            if owner(o.provider, &o.instance, &recorded).is_ok() {
                errors.push(format!(
                    "{} {}: a recorded deployment took it over meanwhile; left alone",
                    o.provider, o.instance.instance_id
                ));
                continue;
            }
            let (engine, o) = (self.clone(), o.clone());
            tasks.spawn(async move {
                engine.release_orphan(&o).await.map_err(|e| {
                    format!("{} {} ({}): {e}", o.provider, o.instance.instance_id, o.instance.region)
                })
            });
        }
        let done = join_releases(tasks, &mut errors).await;
        drop(locks);
        errors.sort();
        (done, errors)
    }

    async fn release_orphan(&self, o: &Orphan) -> Result<String, ApplyError> {
        let cloud = self.cloud(o.provider)?;
        let (region, id) = (&o.instance.region, &o.instance.instance_id);
        let ids = vec![id.clone()];
        let intent = Intent {
            deployment: Some(o.deployment.clone()),
            kind: "terminate",
            provider: o.provider,
            region: region.clone(),
            client_token: format!("sweep/{}/{id}", o.provider),
            target: Some(id.clone()),
            params: serde_json::json!({ "instance_ids": ids, "sweep": true, "tags": o.instance.tags })
                .to_string(),
        };
        let op = self.store(|s| s.record_intent(&intent))?;
        self.terminate_and_wait(cloud.as_ref(), o.provider, region, id, op).await?;
        self.store(|s| s.finish_operation(op, "done", None, None))?;
        Ok(id.clone())
    }
}

/// Waits for every release task (instances and leftovers alike): the ids released, sorted; each failure
/// (or a task that panicked) goes to `errors` in its own words.
pub(crate) async fn join_releases(
    mut tasks: tokio::task::JoinSet<Result<String, String>>,
    errors: &mut Vec<String>,
) -> Vec<String> {
    let mut done = Vec::new();
    while let Some(res) = tasks.join_next().await {
        match res {
            Ok(Ok(id)) => done.push(id),
            Ok(Err(e)) => errors.push(e),
            Err(e) => errors.push(e.to_string()),
        }
    }
    done.sort();
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::BillingMode;

    fn instance(id: &str, state: InstanceState, tags: &[(&str, &str)]) -> Instance {
        Instance {
            instance_id: id.into(),
            name: None,
            region: "r".into(),
            zone: "z".into(),
            instance_type: "t".into(),
            state,
            billing: Some(BillingMode::Hourly),
            image_id: None,
            system_disk: None,
            data_disks: vec![],
            network: None,
            login_key: None,
            public_ip: None,
            private_ip: None,
            auto_release_at: None,
            launched_at: None,
            expires_at: None,
            tags: tags.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            reclaim_notice: false,
        }
    }

    fn record(provider: Provider, token: &str, id: Option<&str>, state: ResourceState) -> Resource {
        Resource {
            client_token: token.into(),
            deployment: "d".into(),
            pool: "p".into(),
            index: 0,
            provider,
            region: "r".into(),
            zone: "z".into(),
            instance_type: "t".into(),
            billing: BillingMode::Hourly,
            instance_id: id.map(String::from),
            state,
            public_ip: None,
            private_ip: None,
            price_cny_per_hour: None,
            price_source: None,
            price_as_of: None,
            auto_release_at: None,
            created_at: "2026-11-30T00:00:00Z".parse().unwrap(),
            running_at: None,
            released_at: None,
            last_error: None,
            billed_until: None,
        }
    }

    /// (instance, expected: None = not an orphan, Some(recorded_as) = an orphan).
    fn check(provider: Provider, i: Instance, recorded: &[Resource], want: Option<Option<ResourceState>>) {
        let id = i.instance_id.clone();
        let (found, _, _) = orphans(vec![(provider, i)], recorded);
        assert_eq!(found.first().map(|o| o.recorded_as), want, "{id}");
    }

    #[test]
    fn ownership_rule() {
        use InstanceState::*;
        use Provider::*;
        use ResourceState as R;
        let tags = [(TAG_DEPLOYMENT, "d"), (TAG_POOL, "p"), (TAG_TOKEN, "tok-1")];
        let rec = [
            record(Tencent, "tok-1", Some("ins-1"), R::Running),
            record(Tencent, "tok-2", None, R::Creating),
            record(Tencent, "tok-3", Some("ins-3"), R::Released),
            record(Alibaba, "tok-4", Some("i-4"), R::Running),
        ];
        // Recorded and live, by id: owned.
        check(Tencent, instance("ins-1", Running, &tags), &rec, None);
        // Recorded by token only (the create's answer was lost): owned.
        check(
            Tencent,
            instance("ins-2", Pending, &[(TAG_DEPLOYMENT, "d"), (TAG_TOKEN, "tok-2")]),
            &rec,
            None,
        );
        // Nothing recorded: an orphan.
        check(Tencent, instance("ins-9", Running, &[(TAG_DEPLOYMENT, "other")]), &rec, Some(None));
        // Recorded as released, yet the cloud still runs it: an orphan, saying so.
        check(Tencent, instance("ins-3", Running, &[(TAG_DEPLOYMENT, "d")]), &rec, Some(Some(R::Released)));
        // The same id on another cloud is not the same instance.
        check(Tencent, instance("i-4", Running, &[(TAG_DEPLOYMENT, "d")]), &rec, Some(None));
        check(Alibaba, instance("i-4", Stopped, &[(TAG_DEPLOYMENT, "d")]), &rec, None);
        // Untagged (whatever the filter let through) and leaving instances are never orphans.
        check(Tencent, instance("ins-8", Running, &[(TAG_POOL, "p")]), &rec, None);
        check(Tencent, instance("ins-7", Terminating, &[(TAG_DEPLOYMENT, "x")]), &rec, None);
    }

    #[test]
    fn lock_names_never_become_paths() {
        assert_eq!(lock_name("stage1"), "stage1");
        assert_eq!(lock_name("lost-tencent"), "lost-tencent");
        for odd in ["../../etc/x", "a/b", "", "Stage1", "1st", "x".repeat(41).as_str(), "名字"] {
            let n = lock_name(odd);
            assert!(
                n.starts_with("foreign-")
                    && n.len() == 24
                    && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
                "{odd:?} → {n}"
            );
        }
        assert_ne!(lock_name("a/b"), lock_name("a/c"));
    }

    #[test]
    fn counts_and_order() {
        let d = [(TAG_DEPLOYMENT, "x")];
        let listed = vec![
            (Provider::JdCloud, instance("i-b", InstanceState::Running, &d)),
            (Provider::Tencent, instance("ins-b", InstanceState::Running, &d)),
            (Provider::Tencent, instance("ins-a", InstanceState::Pending, &d)),
            (Provider::Tencent, instance("ins-c", InstanceState::Terminated, &d)),
            (Provider::Tencent, instance("ins-1", InstanceState::Running, &[(TAG_DEPLOYMENT, "d")])),
        ];
        let rec = [record(Provider::Tencent, "t", Some("ins-1"), ResourceState::Running)];
        let (o, owned, leaving) = orphans(listed, &rec);
        let ids: Vec<_> = o.iter().map(|o| o.instance.instance_id.as_str()).collect();
        assert_eq!((ids, owned, leaving), (vec!["ins-a", "ins-b", "i-b"], 1, 1));
    }
}
