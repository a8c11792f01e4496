//! Spot reclaims as the store keeps them (migration 7, issue 15): one row per reclaimed record, keyed
//! by the reclaimed instance's client token. How the hours are worked out is the engine's
//! (`crate::reclaim`); the store only keeps them and marks the resource `reclaimed` in the same commit.

use std::borrow::Cow;

use jiff::Timestamp;

use super::{StateError, Store, Value};
use crate::provider::Provider;

/// A spot instance the cloud took back without gpuctl asking, and what it cost.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReclaimRecord {
    /// The reclaimed instance's record.
    pub client_token: String,
    pub deployment: String,
    pub pool: String,
    pub index: u32,
    pub provider: Provider,
    pub region: String,
    pub instance_id: String,
    pub instance_type: String,
    /// When gpuctl saw it gone (the cloud no longer listed it, or listed it terminated): the latest
    /// the reclaim can have happened. No cloud's describe says when a reclaimed instance went. Seen
    /// under a reclaim notice instead: the latest it goes, the notice lead after `notice_at`.
    pub seen_gone_at: Timestamp,
    /// When gpuctl saw the cloud's reclaim notice (Alibaba's `Recycling` lock), when it did.
    pub notice_at: Option<Timestamp>,
    /// When it was recorded running (its billed hours count from there).
    pub running_since: Option<Timestamp>,
    /// The last checkpoint gpuctl knows of (see `checkpoint_from`); `None`: none, the work since
    /// `running_since` is lost.
    pub checkpoint_at: Option<Timestamp>,
    /// Where `checkpoint_at` comes from, in words (`snapshot s-…`, `the pool's on-notice hook`,
    /// `none known`).
    pub checkpoint_from: String,
    /// Work done after the last known checkpoint, in hours: done again by the replacement.
    pub lost_work_hours: f64,
    /// The hours the cloud billed the reclaimed instance for: from running to gone (an upper bound,
    /// as `seen_gone_at` is).
    pub billed_hours: f64,
    /// Its recorded price, when it had one.
    pub price_cny_per_hour: Option<f64>,
    /// The replacement's client token, once one is made.
    pub replaced_by: Option<String>,
    /// How long the replacement took from its create to running: lost too, before work resumes.
    pub replacement_boot_hours: Option<f64>,
    pub replaced_at: Option<Timestamp>,
}

impl ReclaimRecord {
    /// Every hour the reclaim cost the job: the work done again plus the replacement's boot (once known).
    pub fn lost_hours(&self) -> f64 {
        self.lost_work_hours + self.replacement_boot_hours.unwrap_or(0.0)
    }

    /// What the cloud billed for the reclaimed instance at its recorded price (`None`: no price).
    pub fn billed_cny(&self) -> Option<f64> {
        self.price_cny_per_hour.map(|p| p * self.billed_hours)
    }

    /// What the lost hours cost at the pool's price, for the whole instance (`None`: no price).
    pub fn lost_cny(&self) -> Option<f64> {
        self.price_cny_per_hour.map(|p| p * self.lost_hours())
    }
}

const COLUMNS: &str = "client_token, deployment, pool, idx, provider, region, instance_id, instance_type, seen_gone_at,
     notice_at, running_since, checkpoint_at, checkpoint_from, lost_work_hours, billed_hours, price_cny_per_hour,
     replaced_by, replacement_boot_hours, replaced_at";

impl Store {
    /// Records a reclaim and marks its resource `reclaimed`, in one durable commit. A reclaim already
    /// recorded for the token is kept as it was (a second look finds the same instance gone).
    pub fn record_reclaim(&self, r: &ReclaimRecord) -> Result<(), StateError> {
        let ts = |t: Option<Timestamp>| t.map(|t| t.to_string());
        let insert = (
            Cow::Owned(format!(
                "INSERT INTO reclaims ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, NULL, NULL, NULL)
                 ON CONFLICT (client_token) DO NOTHING"
            )),
            args![
                &r.client_token,
                &r.deployment,
                &r.pool,
                r.index,
                r.provider.as_str(),
                &r.region,
                &r.instance_id,
                &r.instance_type,
                r.seen_gone_at.to_string(),
                ts(r.notice_at),
                ts(r.running_since),
                ts(r.checkpoint_at),
                &r.checkpoint_from,
                r.lost_work_hours,
                r.billed_hours,
                r.price_cny_per_hour,
            ],
        );
        // Only a record that still held its slot: a release gpuctl began is not a reclaim.
        let mark = (
            Cow::Borrowed(
                "UPDATE resources SET state = 'reclaimed', released_at = COALESCE(released_at, ?2),
                     last_error = 'reclaimed by the cloud (spot)'
                 WHERE client_token = ?1 AND state IN ('creating', 'running')",
            ),
            args![&r.client_token, r.seen_gone_at.to_string()],
        );
        self.run(vec![insert, mark], true).map(drop)
    }

    /// Reclaims of one deployment (all when `None`), oldest first.
    pub fn reclaims(&self, deployment: Option<&str>) -> Result<Vec<ReclaimRecord>, StateError> {
        let rows = self.query(
            format!(
                "SELECT {COLUMNS} FROM reclaims WHERE (deployment = ?1 OR ?1 IS NULL)
                 ORDER BY seen_gone_at, deployment, pool, idx"
            ),
            args![deployment],
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let idx = self.int(r, 3, "reclaims.idx")?;
            let real = |i, c| -> Result<f64, StateError> {
                self.real_opt(r, i, c)?.ok_or_else(|| self.corrupt(c, "NULL".into()))
            };
            out.push(ReclaimRecord {
                client_token: self.text(r, 0, "reclaims.client_token")?,
                deployment: self.text(r, 1, "reclaims.deployment")?,
                pool: self.text(r, 2, "reclaims.pool")?,
                index: u32::try_from(idx).map_err(|_| self.corrupt("reclaims.idx", idx.to_string()))?,
                provider: self.provider(r, 4, "reclaims.provider")?,
                region: self.text(r, 5, "reclaims.region")?,
                instance_id: self.text(r, 6, "reclaims.instance_id")?,
                instance_type: self.text(r, 7, "reclaims.instance_type")?,
                seen_gone_at: self
                    .time("reclaims.seen_gone_at", self.text(r, 8, "reclaims.seen_gone_at")?)?,
                notice_at: self.time_opt("reclaims.notice_at", self.text_opt(r, 9, "reclaims.notice_at")?)?,
                running_since: self
                    .time_opt("reclaims.running_since", self.text_opt(r, 10, "reclaims.running_since")?)?,
                checkpoint_at: self
                    .time_opt("reclaims.checkpoint_at", self.text_opt(r, 11, "reclaims.checkpoint_at")?)?,
                checkpoint_from: self.text(r, 12, "reclaims.checkpoint_from")?,
                lost_work_hours: real(13, "reclaims.lost_work_hours")?,
                billed_hours: real(14, "reclaims.billed_hours")?,
                price_cny_per_hour: self.real_opt(r, 15, "reclaims.price_cny_per_hour")?,
                replaced_by: self.text_opt(r, 16, "reclaims.replaced_by")?,
                replacement_boot_hours: self.real_opt(r, 17, "reclaims.replacement_boot_hours")?,
                replaced_at: self
                    .time_opt("reclaims.replaced_at", self.text_opt(r, 18, "reclaims.replaced_at")?)?,
            });
        }
        Ok(out)
    }

    /// The reclaim of a pool's slot that no replacement has taken yet (the newest, if several).
    pub fn open_reclaim(
        &self,
        deployment: &str,
        pool: &str,
        index: u32,
    ) -> Result<Option<ReclaimRecord>, StateError> {
        Ok(self
            .reclaims(Some(deployment))?
            .into_iter()
            .rfind(|r| r.pool == pool && r.index == index && r.replaced_by.is_none()))
    }

    /// The replacement of the reclaim recorded under `reclaimed` runs: its token and its boot time.
    pub fn set_reclaim_replaced(
        &self,
        reclaimed: &str,
        replaced_by: &str,
        boot_hours: Option<f64>,
        at: Timestamp,
    ) -> Result<(), StateError> {
        self.write_durably(
            "UPDATE reclaims SET replaced_by = ?2, replacement_boot_hours = ?3, replaced_at = ?4
             WHERE client_token = ?1 AND replaced_by IS NULL",
            args![reclaimed, replaced_by, boot_hours, at.to_string()],
        )
    }
}
