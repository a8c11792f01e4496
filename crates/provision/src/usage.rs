//! How busy the GPUs gpuctl holds are (issue 15), for `gpuctl status`: each live instance's GPU
//! utilization from its cloud's monitoring API (`Cloud::gpu_usage`, paced and retried like every call),
//! judged over the last window. An instance is **idle** when its cloud reported at least one point in
//! the window and every one was below the threshold; what it cost while idle is the recorded ¥/hour
//! (the figure `sweep::still_billed` uses) × the hours since the idle stretch began. No point in the
//! window is "no data" — the monitoring agent is usually missing — and never idle: gpuctl does not call
//! a GPU idle on the absence of evidence.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use crate::apply::Engine;
use gpuctl_cloud::cost::{GpuUsage, UsagePoint, UsageQuery};

use crate::cloud::{CloudError, ErrorKind};
use crate::state::{Resource, ResourceState};

/// What `status` asks about GPU utilization.
#[derive(Debug, Clone, Copy)]
pub struct UsageAsk {
    /// The window judged (default 30 minutes).
    pub window: SignedDuration,
    /// Idle below this utilization, percent (default 5).
    pub idle_below: f64,
    /// Now on the engine's clock (`crate::clock::now`).
    pub now: Timestamp,
}

/// How far back the series is read: the window, and at least this much before it, so an idle stretch
/// that began before the window is counted from its start (bounded: one request's worth of points).
pub const LOOKBACK: SignedDuration = SignedDuration::from_hours(6);
/// The spacing asked for; each client rounds it to a period its cloud allows (JD picks its own).
pub const PERIOD_S: u32 = 60;

/// One instance's GPU utilization as `status` shows it (the `gpu` object of `status --json`, docs/json.md).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GpuUtilization {
    /// The cloud's metric (`QCE/CVM GpuUtil`, …), so it can be found in the console.
    pub metric: Option<String>,
    pub window_minutes: f64,
    /// Points the cloud reported inside the window, and their spacing.
    pub points: usize,
    pub period_s: Option<u32>,
    /// Mean of the window's points, percent.
    pub average_percent: Option<f64>,
    /// The last point and when its period began.
    pub latest_percent: Option<f64>,
    pub latest_at: Option<Timestamp>,
    pub idle_below_percent: f64,
    /// Every point in the window below `idle_below_percent` (false without data).
    pub idle: bool,
    /// Where the idle stretch began: the first of the trailing run of points below the threshold
    /// (read back as far as [`LOOKBACK`] before the window).
    pub idle_since: Option<Timestamp>,
    pub idle_hours: Option<f64>,
    /// Recorded ¥/hour × `idle_hours`: an estimate from the catalog price, not the bill.
    pub idle_cost_cny: Option<f64>,
    /// Why there is no judgement: "no data (monitoring agent?)", or the cloud's refusal.
    pub note: Option<String>,
    /// The refusal's code and request id, when the cloud refused.
    pub error_code: Option<String>,
    pub request_id: Option<String>,
}

impl GpuUtilization {
    fn failed(ask: &UsageAsk, e: &CloudError) -> GpuUtilization {
        GpuUtilization {
            note: Some(format!("not read: {} ({})", e.message, e.code)),
            error_code: Some(e.code.clone()),
            request_id: e.request_id.clone(),
            ..GpuUtilization::empty(ask)
        }
    }

    fn empty(ask: &UsageAsk) -> GpuUtilization {
        GpuUtilization {
            metric: None,
            window_minutes: ask.window.as_secs_f64() / 60.0,
            points: 0,
            period_s: None,
            average_percent: None,
            latest_percent: None,
            latest_at: None,
            idle_below_percent: ask.idle_below,
            idle: false,
            idle_since: None,
            idle_hours: None,
            idle_cost_cny: None,
            note: None,
            error_code: None,
            request_id: None,
        }
    }
}

/// Judges one instance's series over the window: the rule of this module's header, written once.
/// `running_since` bounds the idle stretch (an instance is not idle before it ran); `price` is the
/// recorded ¥/hour.
pub fn judge(
    usage: &GpuUsage,
    ask: &UsageAsk,
    running_since: Option<Timestamp>,
    price: Option<f64>,
) -> GpuUtilization {
    let window_start = ask.now - ask.window;
    let period = SignedDuration::from_secs(i64::from(usage.period_s.max(1)));
    let mut points: Vec<&UsagePoint> = usage.points.iter().filter(|p| p.at <= ask.now).collect();
    points.sort_by_key(|p| p.at);
    // A point speaks for its period: it is in the window when its period reaches into it.
    let in_window: Vec<&UsagePoint> =
        points.iter().copied().filter(|p| p.at + period > window_start).collect();
    let mut out = GpuUtilization { metric: Some(usage.metric.clone()), ..GpuUtilization::empty(ask) };
    out.period_s = Some(usage.period_s);
    out.points = in_window.len();
    let Some(last) = in_window.last() else {
        out.note = Some(if points.is_empty() {
            "no data (monitoring agent?)".to_string()
        } else {
            format!("no data in the last {} min (monitoring agent?)", out.window_minutes)
        });
        return out;
    };
    out.average_percent = Some(in_window.iter().map(|p| p.percent).sum::<f64>() / in_window.len() as f64);
    out.latest_percent = Some(last.percent);
    out.latest_at = Some(last.at);
    out.idle = in_window.iter().all(|p| p.percent < ask.idle_below);
    if out.idle {
        // The trailing run of points below the threshold, back through the lookback.
        let busy_before = points.iter().rposition(|p| p.percent >= ask.idle_below);
        let first_idle = points[busy_before.map_or(0, |i| i + 1)];
        let since = running_since.map_or(first_idle.at, |r| first_idle.at.max(r));
        let hours = (ask.now.duration_since(since).as_secs_f64() / 3600.0).max(0.0);
        out.idle_since = Some(since);
        out.idle_hours = Some(hours);
        out.idle_cost_cny = price.map(|p| p * hours);
    }
    out
}

/// The instances whose GPUs are worth asking about: those the cloud runs (running, or billed until a
/// prepaid term ends) with an id.
fn asked(r: &Resource) -> bool {
    r.instance_id.is_some() && matches!(r.state, ResourceState::Running | ResourceState::BilledUntil)
}

impl Engine {
    /// GPU utilization of each live instance among `resources`, by client token: one monitoring query
    /// per cloud and region (the clients split it by their clouds' limits). A cloud that refuses, or for
    /// which gpuctl has no credentials, gives each of its instances a note instead of a judgement.
    pub async fn gpu_utilization(
        &self,
        resources: &[Resource],
        ask: &UsageAsk,
    ) -> BTreeMap<String, GpuUtilization> {
        let mut groups: BTreeMap<(crate::Provider, String), Vec<&Resource>> = BTreeMap::new();
        for r in resources.iter().filter(|r| asked(r)) {
            groups.entry((r.provider, r.region.clone())).or_default().push(r);
        }
        let mut out = BTreeMap::new();
        for ((provider, region), rs) in groups {
            let ids: Vec<String> = rs.iter().filter_map(|r| r.instance_id.clone()).collect();
            let lookback = if ask.window > LOOKBACK { ask.window } else { LOOKBACK };
            let q = UsageQuery {
                region: region.clone(),
                instance_ids: ids,
                start: ask.now - lookback,
                end: ask.now,
                period_s: PERIOD_S,
            };
            let answered = match self.cloud(provider) {
                Err(e) => Err(CloudError::new(
                    provider,
                    "gpu-usage",
                    ErrorKind::Auth,
                    "no-credentials",
                    e.to_string(),
                )),
                Ok(cloud) => {
                    let key = format!("{provider}/{region}/gpu-usage");
                    self.call(provider, "gpu-usage", &key, || cloud.gpu_usage(&q)).await
                }
            };
            for r in rs {
                let id = r.instance_id.as_deref().unwrap_or_default();
                let view = match &answered {
                    Err(e) => GpuUtilization::failed(ask, e),
                    Ok(all) => match all.iter().find(|u| u.instance_id == id) {
                        Some(u) => judge(u, ask, r.running_at, r.price_cny_per_hour),
                        None => GpuUtilization {
                            note: Some("no data (monitoring agent?)".into()),
                            ..GpuUtilization::empty(ask)
                        },
                    },
                };
                out.insert(r.client_token.clone(), view);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(min: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + min * 60).unwrap()
    }

    fn series(values: &[(i64, f64)]) -> GpuUsage {
        GpuUsage {
            instance_id: "ins-1".into(),
            metric: "QCE/CVM GpuUtil".into(),
            period_s: 60,
            points: values.iter().map(|&(m, v)| UsagePoint { at: t(m), percent: v }).collect(),
        }
    }

    fn ask() -> UsageAsk {
        UsageAsk { window: SignedDuration::from_mins(30), idle_below: 5.0, now: t(120) }
    }

    #[test]
    fn idle_when_every_point_of_the_window_is_below_and_costed_from_the_stretch_start() {
        // Busy until minute 59, then 2 % from minute 60: idle for the last hour.
        let mut pts: Vec<(i64, f64)> = (0..60).map(|m| (m, 80.0)).collect();
        pts.extend((60..120).map(|m| (m, 2.0)));
        let g = judge(&series(&pts), &ask(), Some(t(0)), Some(10.0));
        assert!(g.idle);
        assert_eq!((g.points, g.latest_percent, g.average_percent), (30, Some(2.0), Some(2.0)));
        assert_eq!((g.idle_since, g.idle_hours), (Some(t(60)), Some(1.0)));
        assert_eq!(g.idle_cost_cny, Some(10.0));
        // Never before the instance ran.
        let g = judge(&series(&[(100, 1.0), (119, 1.0)]), &ask(), Some(t(110)), None);
        assert_eq!((g.idle_since, g.idle_cost_cny), (Some(t(110)), None));
    }

    #[test]
    fn one_point_at_or_above_the_threshold_is_not_idle() {
        let mut pts: Vec<(i64, f64)> = (90..120).map(|m| (m, 1.0)).collect();
        pts[10].1 = 5.0;
        let g = judge(&series(&pts), &ask(), None, Some(10.0));
        assert!(!g.idle && g.idle_cost_cny.is_none() && g.idle_since.is_none());
    }

    #[test]
    fn no_data_is_never_idle() {
        let g = judge(&series(&[]), &ask(), None, Some(10.0));
        assert!(!g.idle);
        assert_eq!(g.note.as_deref(), Some("no data (monitoring agent?)"));
        // Data only before the window: still no judgement.
        let g = judge(&series(&[(10, 0.0), (20, 0.0)]), &ask(), None, Some(10.0));
        assert!(!g.idle && g.note.as_deref().unwrap().starts_with("no data in the last 30 min"));
    }
}
