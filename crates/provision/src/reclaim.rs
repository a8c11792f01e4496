//! Spot reclaims (issue 15): a spot instance a live record owns that the cloud took back without
//! gpuctl asking is recorded `reclaimed`, with the hours it cost, and its slot is made anew — by
//! `provision` re-run or `gpuctl recover` — under the next token generation (`token::slot_token`),
//! resuming from the shared storage's newest checkpoint or the instance's latest snapshot.
//!
//! **How gpuctl tells a reclaim.** A describe of the deployment's running spot records, by id: one
//! the cloud no longer lists, or lists terminated or terminating, when gpuctl never asked for its
//! release (no terminate intent, the record not `releasing`) and no release time gpuctl set has
//! passed, was reclaimed; so was one the cloud describes as being reclaimed (Alibaba's `Recycling`
//! operation lock, `Instance::reclaim_notice`): then the notice is the time gpuctl saw it, the end
//! the notice lead after, and the replacement starts while the old instance runs out its notice. That is what a reclaim leaves on every cloud: Tencent terminates a
//! reclaimed spot instance (`SpotInstanceType` is only `one-time`, TC-CLI `SpotMarketOptions`),
//! Alibaba releases it (`SpotInterruptionBehavior` `Terminate`, the default, AL-ECS
//! `_run_instances_request.py`; gpuctl never asks for `Stop`), and JD's `Instance.spotStatus` has no
//! documented values (JD `vm/models/Instance.py`), so JD's sign is the same absence. The metadata
//! termination time comes before the reclaim, inside the instance: the node agent acts on it (the
//! hook); the engine on what the API describes.
//!
//! **The hours lost (the rule).** Work ends at the reclaim: when a notice was seen, the notice time
//! plus [`NOTICE_LEAD`]; else the moment gpuctl saw the instance gone (the latest it can have been:
//! no cloud's describe says when a reclaimed instance went). The last checkpoint gpuctl knows of
//! is the latest of: the instance's newest snapshot gpuctl took; the pool's on-notice checkpoint
//! hook, which the node agent runs at the notice — the notice time if seen, else [`NOTICE_LEAD`]
//! before the end; none (then all work since the instance ran is lost). Lost hours = end −
//! checkpoint, plus the replacement's boot (create to running) once it runs, since work resumes only
//! then. Billed hours = end − running (the clouds bill spot by the second or hour of running; an
//! upper bound, as the end is).

use jiff::{SignedDuration, Timestamp};

use crate::apply::{ApplyError, Engine};
use crate::cloud::{CreateRequest, Filter, InstanceState};
use crate::plan::Choice;
use crate::provider::{BillingMode, Provider};
use crate::state::{ReclaimRecord, Resource, ResourceState, StateError, Store};

/// How long before the reclaim the notice comes. Alibaba documents 5 minutes ("sends you a
/// notification through an ECS system event 5 minutes before the instance is released", AL-ECS best
/// practices for preemptible instances, docs/research/cost-control.md §3). **Assumption:** Tencent
/// and JD publish no lead time (same file: not found), so the same 5 minutes is taken for them.
pub const NOTICE_LEAD: SignedDuration = SignedDuration::from_mins(5);

/// What gpuctl knows of a reclaimed instance when it sees it gone.
#[derive(Debug, Clone, PartialEq)]
pub struct Known {
    pub created_at: Timestamp,
    pub running_since: Option<Timestamp>,
    pub seen_gone_at: Timestamp,
    pub notice_at: Option<Timestamp>,
    /// The instance's newest snapshot gpuctl took: when, and its id.
    pub snapshot: Option<(Timestamp, String)>,
    /// The pool runs a checkpoint hook on the reclaim notice.
    pub hook: bool,
}

/// The rule's answer (see the module's header).
#[derive(Debug, Clone, PartialEq)]
pub struct Lost {
    pub checkpoint_at: Option<Timestamp>,
    pub checkpoint_from: String,
    pub lost_work_hours: f64,
    pub billed_hours: f64,
}

fn hours(from: Timestamp, to: Timestamp) -> f64 {
    (to.duration_since(from).as_secs_f64() / 3600.0).max(0.0)
}

/// The hours a reclaim cost, by the rule in the module's header.
pub fn lost(k: &Known) -> Lost {
    let started = k.running_since.unwrap_or(k.created_at);
    let end = match k.notice_at {
        Some(n) => k.seen_gone_at.min(n + NOTICE_LEAD),
        None => k.seen_gone_at,
    };
    let mut candidates: Vec<(Timestamp, String)> = Vec::new();
    if let Some((at, id)) = &k.snapshot {
        if *at >= started && *at <= end {
            candidates.push((*at, format!("snapshot {id}")));
        }
    }
    if k.hook {
        match k.notice_at {
            Some(n) => candidates.push((n.max(started), "the pool's on-notice hook, at the notice".into())),
            None => candidates.push((
                (end - NOTICE_LEAD).max(started),
                "the pool's on-notice hook (assumed at the notice, 5 min before the end)".into(),
            )),
        }
    }
    let best = candidates.into_iter().max_by_key(|(at, _)| *at);
    let (checkpoint_at, checkpoint_from) = match best {
        Some((at, from)) => (Some(at), from),
        None => (None, "none known: all work since it started".to_string()),
    };
    Lost {
        checkpoint_at,
        checkpoint_from,
        lost_work_hours: hours(checkpoint_at.unwrap_or(started), end),
        billed_hours: hours(started, end),
    }
}

/// The reclaims that happened in a calendar month (`YYYY-MM`, UTC+8 as the three clouds bill), by
/// the time gpuctl saw each gone, for one deployment or all: what `gpuctl cost` counts beside the
/// bill (each one's `billed_hours`, `billed_cny()`, `lost_hours()`, `lost_cny()`).
pub fn reclaims_in_month(
    store: &Store,
    deployment: Option<&str>,
    month: &str,
) -> Result<Vec<ReclaimRecord>, StateError> {
    let tz = jiff::tz::TimeZone::fixed(jiff::tz::offset(8));
    Ok(store
        .reclaims(deployment)?
        .into_iter()
        .filter(|r| {
            let d = r.seen_gone_at.to_zoned(tz.clone()).date();
            format!("{:04}-{:02}", d.year(), d.month()) == month
        })
        .collect())
}

/// Whether the spec's pool `pool` runs a checkpoint hook when its cloud gives the reclaim notice.
pub fn pool_has_hook(spec: &crate::spec::Spec, pool: &str) -> bool {
    // `spot = { on_notice = "…" }`: the node agent runs it when the cloud's notice comes.
    spec.pools.iter().any(|p| p.name.value == pool && p.spot_notice.is_some())
}

/// Whether `r` is a record a reclaim can take: a running spot instance with an id.
fn watched(r: &Resource) -> bool {
    r.billing == BillingMode::Spot && r.state == ResourceState::Running && r.instance_id.is_some()
}

impl Engine {
    /// Looks at the deployment's running spot instances and records each the cloud reclaimed (see
    /// the module's header), returning what it recorded. `hook(pool)` says whether a pool runs a
    /// checkpoint hook on the notice. The caller holds the deployment's lock: a reclaim frees a slot
    /// that the same run's plan then fills.
    pub async fn find_reclaims(
        &self,
        deployment: &str,
        hook: &dyn Fn(&str) -> bool,
        now: Timestamp,
    ) -> Result<Vec<ReclaimRecord>, ApplyError> {
        let records: Vec<Resource> =
            self.store(|s| s.resources(Some(deployment)))?.into_iter().filter(watched).collect();
        // An instance gpuctl was asked to release is not reclaimed, whatever its record says.
        let asked: Vec<String> = self
            .store(|s| s.open_operations(Some(deployment)))?
            .into_iter()
            .filter(|o| o.intent.kind == "terminate")
            .filter_map(|o| o.intent.target)
            .collect();
        let mut groups: std::collections::BTreeMap<(Provider, String), Vec<Resource>> = Default::default();
        for r in records {
            groups.entry((r.provider, r.region.clone())).or_default().push(r);
        }
        let mut out = Vec::new();
        for ((provider, region), rs) in groups {
            let cloud = self.cloud(provider)?;
            let ids: Vec<String> = rs.iter().filter_map(|r| r.instance_id.clone()).collect();
            let filter = Filter::Ids(ids);
            let found =
                self.call(provider, "describe", deployment, || cloud.describe(&region, &filter)).await?;
            for r in rs {
                let id = r.instance_id.clone().unwrap_or_default();
                let inst = found.iter().find(|i| i.instance_id == id);
                let gone = match inst.map(|i| &i.state) {
                    None | Some(InstanceState::Terminated | InstanceState::Terminating) => true,
                    Some(_) => false,
                };
                // The cloud's own sign that it is taking the instance back (Alibaba's `Recycling`):
                // as good as gone, and the replacement starts now instead of after the reclaim.
                let notice = !gone && inst.is_some_and(|i| i.reclaim_notice);
                // Released at the time gpuctl set: the cloud did what gpuctl asked, not a reclaim.
                let timed_out = r.auto_release_at.is_some_and(|t| t <= now);
                if !(gone || notice) || timed_out || asked.contains(&id) {
                    continue;
                }
                // Under a notice the instance still runs, and bills, until the reclaim: at the latest
                // the notice lead from now.
                let (seen_gone_at, notice_at) =
                    if notice { (now + NOTICE_LEAD, Some(now)) } else { (now, None) };
                let snapshot = self
                    .store(|s| s.snapshots(Some(&id)))?
                    .into_iter()
                    .find(|s| s.state == "available")
                    .map(|s| (s.created_at, s.snapshot_id));
                let known = Known {
                    created_at: r.created_at,
                    running_since: r.running_at,
                    seen_gone_at,
                    notice_at,
                    snapshot,
                    hook: hook(&r.pool),
                };
                let l = lost(&known);
                let rec = ReclaimRecord {
                    client_token: r.client_token.clone(),
                    deployment: r.deployment.clone(),
                    pool: r.pool.clone(),
                    index: r.index,
                    provider: r.provider,
                    region: r.region.clone(),
                    instance_id: id.clone(),
                    instance_type: r.instance_type.clone(),
                    seen_gone_at,
                    notice_at,
                    running_since: r.running_at,
                    checkpoint_at: l.checkpoint_at,
                    checkpoint_from: l.checkpoint_from,
                    lost_work_hours: l.lost_work_hours,
                    billed_hours: l.billed_hours,
                    price_cny_per_hour: r.price_cny_per_hour,
                    replaced_by: None,
                    replacement_boot_hours: None,
                    replaced_at: None,
                };
                self.store(|s| s.record_reclaim(&rec))?;
                tracing::warn!(%provider, instance_id = %id, pool = %r.pool, index = r.index, "spot instance reclaimed by the cloud: recorded");
                out.push(rec);
            }
        }
        Ok(out)
    }
}

impl Engine {
    /// Reclaims whose replacement runs but was never recorded as theirs — a run killed between the
    /// replacement running and that record — get it now: the slot's running record made after the
    /// reclaim was seen. Without this the plan keeps the replacement and the reclaim would show
    /// "not replaced" for good.
    pub fn settle_replacements(&self, deployment: &str) -> Result<Vec<ReclaimRecord>, StateError> {
        let resources = self.store(|s| s.resources(Some(deployment)))?;
        let mut settled = Vec::new();
        for r in self.store(|s| s.reclaims(Some(deployment)))?.into_iter().filter(|r| r.replaced_by.is_none())
        {
            let by = resources.iter().find(|x| {
                x.pool == r.pool
                    && x.index == r.index
                    && x.state == ResourceState::Running
                    && x.client_token != r.client_token
                    // Made after the reclaim was recorded: when it was seen gone, or under its notice.
                    && x.created_at >= r.notice_at.unwrap_or(r.seen_gone_at).min(r.seen_gone_at)
            });
            if let Some(x) = by {
                let boot = x.running_at.map(|at| hours(x.created_at, at));
                let at = x.running_at.unwrap_or(x.created_at);
                self.store(|s| s.set_reclaim_replaced(&r.client_token, &x.client_token, boot, at))?;
                settled.push(r);
            }
        }
        Ok(settled)
    }
}

/// A replacement without shared storage restores the reclaimed instance's data from its newest
/// snapshot, when gpuctl took one in the place the replacement lands (snapshots stay in their
/// region): the spec's data disk is made from it. Only for a pool with exactly one data disk, whose
/// snapshot is unambiguous; the boot disk boots the spec's image as any new node does.
pub(crate) fn restore_data_disks(
    engine: &Engine,
    r: &ReclaimRecord,
    c: &Choice,
    req: &mut CreateRequest,
) -> Result<(), ApplyError> {
    if req.data_disks.len() != 1 || (c.provider, c.region.as_str()) != (r.provider, r.region.as_str()) {
        return Ok(());
    }
    let newest = engine
        .store(|s| s.snapshots(Some(&r.instance_id)))?
        .into_iter()
        .find(|s| s.disk_kind == "data" && s.state == "available");
    if let Some(s) = newest {
        req.data_disks[0].snapshot_id = Some(s.snapshot_id);
    }
    Ok(())
}

/// The replacement of `r` runs under `token`: recorded with its boot time (create to running).
pub(crate) fn replaced(engine: &Engine, r: &ReclaimRecord, token: &str) -> Result<(), ApplyError> {
    let boot =
        engine.store(|s| s.resource(token))?.and_then(|n| n.running_at.map(|at| hours(n.created_at, at)));
    engine.store(|s| s.set_reclaim_replaced(&r.client_token, token, boot, crate::clock::now()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn known() -> Known {
        Known {
            created_at: t("2026-12-01T00:00:00Z"),
            running_since: Some(t("2026-12-01T00:06:00Z")),
            seen_gone_at: t("2026-12-01T10:06:00Z"),
            notice_at: None,
            snapshot: None,
            hook: false,
        }
    }

    #[test]
    fn without_a_checkpoint_all_work_since_running_is_lost_and_billed() {
        let l = lost(&known());
        assert_eq!(l.checkpoint_at, None);
        assert!(l.checkpoint_from.starts_with("none known"), "{}", l.checkpoint_from);
        assert!((l.lost_work_hours - 10.0).abs() < 1e-9, "{l:?}");
        assert!((l.billed_hours - 10.0).abs() < 1e-9, "{l:?}");
    }

    #[test]
    fn a_snapshot_inside_the_run_is_the_checkpoint() {
        let k = Known { snapshot: Some((t("2026-12-01T08:06:00Z"), "snap-1".into())), ..known() };
        let l = lost(&k);
        assert_eq!(l.checkpoint_at, Some(t("2026-12-01T08:06:00Z")));
        assert_eq!(l.checkpoint_from, "snapshot snap-1");
        assert!((l.lost_work_hours - 2.0).abs() < 1e-9, "{l:?}");
        // A snapshot from before the instance ran (another instance's life) is not its checkpoint.
        let k = Known { snapshot: Some((t("2026-11-30T08:00:00Z"), "snap-0".into())), ..known() };
        assert_eq!(lost(&k).checkpoint_at, None);
    }

    #[test]
    fn the_hook_checkpoints_at_the_notice() {
        // No notice seen: the hook ran 5 minutes before the end gpuctl knows.
        let l = lost(&Known { hook: true, ..known() });
        assert_eq!(l.checkpoint_at, Some(t("2026-12-01T10:01:00Z")));
        assert!((l.lost_work_hours - 5.0 / 60.0).abs() < 1e-9, "{l:?}");
        // A notice seen at 09:00 ends the work at 09:05, even if gpuctl looked only at 10:06.
        let k = Known { hook: true, notice_at: Some(t("2026-12-01T09:00:00Z")), ..known() };
        let l = lost(&k);
        assert_eq!(l.checkpoint_at, Some(t("2026-12-01T09:00:00Z")));
        assert!((l.lost_work_hours - 5.0 / 60.0).abs() < 1e-9, "{l:?}");
        assert!((l.billed_hours - (9.0 - 0.1 + 5.0 / 60.0)).abs() < 1e-9, "{l:?}");
        // A later snapshot than the hook's point wins.
        let k = Known {
            hook: true,
            notice_at: Some(t("2026-12-01T09:00:00Z")),
            snapshot: Some((t("2026-12-01T09:03:00Z"), "snap-2".into())),
            ..known()
        };
        assert_eq!(lost(&k).checkpoint_from, "snapshot snap-2");
    }

    /// A run killed after the replacement ran but before it was recorded as the reclaim's: the next
    /// run settles it from the slot's running record made after the reclaim, and nothing else.
    #[test]
    fn a_replacement_whose_record_a_kill_cut_short_is_settled() {
        use crate::state::{Intent, Resource, Store};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        let res = |token: &str, created: &str| Resource {
            client_token: token.into(),
            deployment: "d".into(),
            pool: "p".into(),
            index: 1,
            provider: Provider::Alibaba,
            region: "cn-hangzhou".into(),
            zone: "cn-hangzhou-i".into(),
            instance_type: "gn7i-c8g1.2xlarge".into(),
            billing: BillingMode::Spot,
            instance_id: None,
            state: ResourceState::Creating,
            public_ip: None,
            private_ip: None,
            price_cny_per_hour: Some(2.0),
            price_source: None,
            price_as_of: None,
            auto_release_at: None,
            created_at: t(created),
            running_at: None,
            released_at: None,
            last_error: None,
            billed_until: None,
        };
        let intent = |token: &str| Intent {
            deployment: Some("d".into()),
            kind: "create",
            provider: Provider::Alibaba,
            region: "cn-hangzhou".into(),
            client_token: token.into(),
            target: None,
            params: "{}".into(),
        };
        for (token, created) in [("old", "2026-12-01T00:00:00Z"), ("new", "2026-12-01T10:07:00Z")] {
            store.record_create_intent(&intent(token), &res(token, created)).unwrap();
            store.set_running(token, None, None).unwrap();
        }
        let gone = ReclaimRecord {
            client_token: "old".into(),
            deployment: "d".into(),
            pool: "p".into(),
            index: 1,
            provider: Provider::Alibaba,
            region: "cn-hangzhou".into(),
            instance_id: "i-old".into(),
            instance_type: "gn7i-c8g1.2xlarge".into(),
            seen_gone_at: t("2026-12-01T10:06:00Z"),
            notice_at: None,
            running_since: None,
            checkpoint_at: None,
            checkpoint_from: "none".into(),
            lost_work_hours: 1.0,
            billed_hours: 1.0,
            price_cny_per_hour: None,
            replaced_by: None,
            replacement_boot_hours: None,
            replaced_at: None,
        };
        store.record_reclaim(&gone).unwrap();
        let progress: crate::apply::Progress = std::sync::Arc::new(|_: &crate::apply::Event| {});
        let engine = Engine::new(vec![], store, Default::default(), progress);
        assert_eq!(engine.settle_replacements("d").unwrap().len(), 1);
        let r = engine.store(|s| s.reclaims(None)).unwrap().pop().unwrap();
        assert_eq!(r.replaced_by.as_deref(), Some("new"));
        assert!(r.replacement_boot_hours.is_some());
        // Settled once.
        assert!(engine.settle_replacements("d").unwrap().is_empty());
    }

    #[test]
    fn lost_hours_add_the_replacements_boot() {
        let r = ReclaimRecord {
            client_token: "t".into(),
            deployment: "d".into(),
            pool: "p".into(),
            index: 1,
            provider: Provider::Tencent,
            region: "ap-guangzhou".into(),
            instance_id: "ins-1".into(),
            instance_type: "GN7.2XLARGE32".into(),
            seen_gone_at: t("2026-12-01T10:06:00Z"),
            notice_at: None,
            running_since: None,
            checkpoint_at: None,
            checkpoint_from: String::new(),
            lost_work_hours: 2.0,
            billed_hours: 10.0,
            price_cny_per_hour: Some(3.0),
            replaced_by: None,
            replacement_boot_hours: None,
            replaced_at: None,
        };
        assert_eq!((r.lost_hours(), r.billed_cny(), r.lost_cny()), (2.0, Some(30.0), Some(6.0)));
        let r = ReclaimRecord { replacement_boot_hours: Some(0.25), ..r };
        assert_eq!((r.lost_hours(), r.lost_cny()), (2.25, Some(6.75)));
    }
}
