//! GPU utilization as the local cloud's monitoring services report it (issue 15), shared by the three
//! emulators' monitoring actions (Tencent `GetMonitorData`, Alibaba `DescribeMetricList`, JD
//! `describeMetricData`).
//!
//! What a test sets (the admin endpoint `POST /_sim/gpu_usage`) is a step function per instance: a
//! setting makes the utilization `percent` from its `from` onward and replaces whatever was set at or
//! after that time. Before the first setting there is no data — as on a real instance without the
//! monitoring agent. Data exists only while the instance runs: each emulator records the instance's
//! power transitions here ([`GpuBook::power`]: running from its boot, off at a stop or when termination
//! starts), so a stopped or terminated stretch has no points. An answer is the per-period average of
//! the step function over the running, set part of each period; a period with none of it has no point
//! (the clouds' "掉点").
//!
//! Any emulator operation that starts, stops or ends an instance must record it with `power`: the
//! monitoring answer is built from these records only.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

/// Utilization settings and power transitions of every instance an emulator holds.
#[derive(Debug, Default, Clone)]
pub struct GpuBook {
    /// Instance id → (from, percent), sorted by `from`.
    settings: BTreeMap<String, Vec<(Timestamp, f64)>>,
    /// Instance id → (at, running), sorted by `at`.
    power: BTreeMap<String, Vec<(Timestamp, bool)>>,
}

/// One period's average: the period starts at `at` (aligned to a multiple of the period since the epoch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub at: Timestamp,
    pub percent: f64,
}

impl GpuBook {
    /// Utilization `percent` from `from` onward: settings at or after `from` are replaced.
    pub fn set(&mut self, instance_id: &str, from: Timestamp, percent: f64) {
        let s = self.settings.entry(instance_id.to_string()).or_default();
        s.retain(|(t, _)| *t < from);
        s.push((from, percent));
    }

    /// The instance starts (`running`) or stops running at `at`. Transitions are kept in time order;
    /// one at the same time as an earlier record replaces it.
    pub fn power(&mut self, instance_id: &str, at: Timestamp, running: bool) {
        let p = self.power.entry(instance_id.to_string()).or_default();
        p.retain(|(t, _)| *t != at);
        let i = p.partition_point(|(t, _)| *t < at);
        p.insert(i, (at, running));
    }

    /// Forget an instance that left the cloud (its data goes with it).
    pub fn forget(&mut self, instance_id: &str) {
        self.settings.remove(instance_id);
        self.power.remove(instance_id);
    }

    /// Per-period averages for the periods that overlap `[start, end)`, up to `now` (no data is in the
    /// future). `period` must be positive.
    pub fn samples(
        &self,
        instance_id: &str,
        start: Timestamp,
        end: Timestamp,
        now: Timestamp,
        period: SignedDuration,
    ) -> Vec<Sample> {
        let (Some(settings), Some(power)) = (self.settings.get(instance_id), self.power.get(instance_id))
        else {
            return Vec::new();
        };
        let p = period.as_secs().max(1);
        let end = end.min(now);
        if end <= start {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut b = start.as_second().div_euclid(p) * p;
        while b < end.as_second() {
            let (Ok(lo), Ok(hi)) = (Timestamp::from_second(b), Timestamp::from_second(b + p)) else { break };
            let hi = hi.min(now);
            let (mut weight, mut sum) = (0.0, 0.0);
            for (a, z) in running_spans(power, lo, hi) {
                for (sa, sz, v) in setting_spans(settings, a, z) {
                    let d = sz.duration_since(sa).as_secs_f64();
                    weight += d;
                    sum += d * v;
                }
            }
            if weight > 0.0 {
                out.push(Sample { at: lo, percent: sum / weight });
            }
            b += p;
        }
        out
    }
}

/// The parts of `[lo, hi)` during which the power record says running.
fn running_spans(power: &[(Timestamp, bool)], lo: Timestamp, hi: Timestamp) -> Vec<(Timestamp, Timestamp)> {
    let mut out = Vec::new();
    for (i, &(at, on)) in power.iter().enumerate() {
        if !on {
            continue;
        }
        let until = power.get(i + 1).map(|(t, _)| *t).unwrap_or(Timestamp::MAX);
        let (a, z) = (at.max(lo), until.min(hi));
        if a < z {
            out.push((a, z));
        }
    }
    out
}

/// The parts of `[lo, hi)` covered by a setting, each with its value.
fn setting_spans(s: &[(Timestamp, f64)], lo: Timestamp, hi: Timestamp) -> Vec<(Timestamp, Timestamp, f64)> {
    let mut out = Vec::new();
    for (i, &(from, v)) in s.iter().enumerate() {
        let until = s.get(i + 1).map(|(t, _)| *t).unwrap_or(Timestamp::MAX);
        let (a, z) = (from.max(lo), until.min(hi));
        if a < z {
            out.push((a, z, v));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    const FIVE_MIN: SignedDuration = SignedDuration::from_secs(300);

    #[test]
    fn no_setting_or_never_running_is_no_data() {
        let mut b = GpuBook::default();
        b.power("i", t(0), true);
        assert!(b.samples("i", t(0), t(3000), t(3000), FIVE_MIN).is_empty());
        let mut b = GpuBook::default();
        b.set("i", t(0), 50.0);
        assert!(b.samples("i", t(0), t(3000), t(3000), FIVE_MIN).is_empty());
    }

    #[test]
    fn averages_the_step_function_over_running_set_time() {
        let mut b = GpuBook::default();
        // t(0) = 1_800_000_000 is a multiple of 300: periods start at t(0), t(300), …
        b.power("i", t(0), true);
        b.set("i", t(150), 80.0); // no data in [0, 150)
        b.set("i", t(600), 2.0);
        b.set("i", t(750), 4.0);
        let s = b.samples("i", t(0), t(1200), t(1200), FIVE_MIN);
        let got: Vec<(i64, f64)> = s.iter().map(|x| (x.at.as_second() - 1_800_000_000, x.percent)).collect();
        assert_eq!(got, vec![(0, 80.0), (300, 80.0), (600, 3.0), (900, 4.0)]);
        // A later setting replaces what was set after its `from`.
        b.set("i", t(300), 1.0);
        let s = b.samples("i", t(0), t(1200), t(1200), FIVE_MIN);
        let got: Vec<f64> = s.iter().map(|x| x.percent).collect();
        assert_eq!(got, vec![80.0, 1.0, 1.0, 1.0]);
    }

    #[test]
    fn stopped_time_and_the_future_have_no_points() {
        let mut b = GpuBook::default();
        b.power("i", t(0), true);
        b.set("i", t(0), 10.0);
        b.power("i", t(300), false);
        b.power("i", t(900), true);
        b.set("i", t(900), 30.0);
        let s = b.samples("i", t(0), t(3000), t(1050), FIVE_MIN);
        let got: Vec<(i64, f64)> = s.iter().map(|x| (x.at.as_second() - 1_800_000_000, x.percent)).collect();
        assert_eq!(got, vec![(0, 10.0), (900, 30.0)]);
        b.forget("i");
        assert!(b.samples("i", t(0), t(3000), t(3000), FIVE_MIN).is_empty());
    }
}
