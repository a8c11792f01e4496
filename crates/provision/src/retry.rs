//! Calling a cloud politely: a pace per (provider, API) so concurrent work stays under the cloud's rate
//! limits, and retries for throttled and transient failures only — exponential backoff with full
//! jitter, bounded in attempts per call and by a wall-clock deadline (the unit's or the run's retry
//! budget, see `apply::Options`) — that reuse the same request (and so the same client token).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::cloud::{CloudError, ErrorKind};
use crate::provider::Provider;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    pub base: Duration,
    pub cap: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_attempts: 8, base: Duration::from_millis(200), cap: Duration::from_secs(10) }
    }
}

impl RetryPolicy {
    /// Full jitter: a uniform wait in [0, min(cap, base·2^attempt)], from `unit` in [0, 1).
    pub fn backoff(&self, attempt: u32, unit: f64) -> Duration {
        let ceiling = self.base.saturating_mul(1u32 << attempt.min(20)).min(self.cap);
        ceiling.mul_f64(unit.clamp(0.0, 1.0))
    }
}

/// Paces calls per (provider, API): a token bucket (GCRA) holding half a second's worth of calls, so a
/// quiet API takes a short burst at once and a busy one gets `per_second` calls/s. Half, not a whole
/// second: the cloud's own bucket is measured on its clock, and a full-size burst lands on its edge.
///
/// The pace adapts to the cloud (additive increase, multiplicative decrease): a throttled answer halves
/// that API's rate (down to [`Pacer::FLOOR`]) and each answered call wins back an eighth of the
/// configured rate. Without it, units sharing an API whose real limit is below `per_second` keep
/// hitting the limit together and spend their attempts on throttling (seen in the faults test: JD
/// createInstances at 1 call/s with three units gave up after 8 throttled/503 attempts in 8.6 s).
#[derive(Debug)]
pub struct Pacer {
    per_second: f64,
    lanes: Mutex<HashMap<(Provider, &'static str), Lane>>,
}

#[derive(Debug, Clone, Copy)]
struct Lane {
    /// The theoretical arrival time of the next call.
    tat: Instant,
    /// Calls per second this API is paced at now (≤ the configured rate).
    rate: f64,
}

impl Lane {
    /// The gap between calls at this pace, and the burst allowance: half a second's calls (at least one).
    fn period_and_burst(&self) -> (Duration, Duration) {
        let period = Duration::from_secs_f64(1.0 / self.rate);
        (period, period.mul_f64((self.rate / 2.0 - 1.0).max(0.0)))
    }
}

impl Pacer {
    /// The slowest an API is paced after repeated throttling: one call every 5 s.
    pub const FLOOR: f64 = 0.2;

    pub fn new(per_second: f64) -> Self {
        Pacer { per_second: per_second.max(0.001), lanes: Mutex::new(HashMap::new()) }
    }

    fn lanes(&self) -> std::sync::MutexGuard<'_, HashMap<(Provider, &'static str), Lane>> {
        self.lanes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for this API's next free slot.
    pub async fn slot(&self, provider: Provider, api: &'static str) {
        let at = {
            let mut lanes = self.lanes();
            let now = Instant::now();
            let lane = lanes.entry((provider, api)).or_insert(Lane { tat: now, rate: self.per_second });
            let (period, tolerance) = lane.period_and_burst();
            let tat = lane.tat.max(now);
            lane.tat = tat + period;
            tat.checked_sub(tolerance).unwrap_or(now).max(now)
        };
        tokio::time::sleep_until(at).await;
    }

    /// The cloud throttled a call of this API: halve its pace.
    pub fn throttled(&self, provider: Provider, api: &'static str) {
        let mut lanes = self.lanes();
        let now = Instant::now();
        let lane = lanes.entry((provider, api)).or_insert(Lane { tat: now, rate: self.per_second });
        lane.rate = (lane.rate / 2.0).max(Self::FLOOR.min(self.per_second));
        // No burst right after a throttle: the next slot is a whole period of the new pace away, after
        // those already handed out.
        let (period, tolerance) = lane.period_and_burst();
        lane.tat = lane.tat.max(now) + period + tolerance;
    }

    /// The cloud answered a call of this API (success or a non-throttling error): speed back up.
    pub fn answered(&self, provider: Provider, api: &'static str) {
        if let Some(lane) = self.lanes().get_mut(&(provider, api)) {
            lane.rate = (lane.rate + self.per_second / 8.0).min(self.per_second);
        }
    }

    /// The pace of this API now, in calls per second.
    pub fn rate(&self, provider: Provider, api: &'static str) -> f64 {
        self.lanes().get(&(provider, api)).map_or(self.per_second, |l| l.rate)
    }
}

/// Counts what retrying cost, for the run's report.
#[derive(Debug, Default)]
pub struct RetryStats {
    pub retries: AtomicU64,
    pub waited_ms: AtomicU64,
}

/// Paces, calls, and retries `call` while it fails throttled or transient, up to the policy's attempts
/// and, when given, until `deadline`: no retry starts that would end after it, and an attempt still
/// unanswered at the deadline is given up (a create cut off that way may have landed; its intent is
/// recorded and a re-run finds it by its token tag). A call given up after retrying says so in its
/// message: attempts made, seconds spent, and which bound stopped it. `seed` makes the jitter reproducible.
#[allow(clippy::too_many_arguments)]
pub async fn with_retry<T, F, Fut>(
    policy: &RetryPolicy,
    pacer: &Pacer,
    stats: &RetryStats,
    provider: Provider,
    api: &'static str,
    seed: u64,
    deadline: Option<Deadline>,
    mut call: F,
) -> Result<T, CloudError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, CloudError>>,
{
    let mut rng = seed | 1;
    let mut attempt = 0;
    let start = Instant::now();
    let mut last: Option<CloudError> = None;
    loop {
        pacer.slot(provider, api).await;
        let answer = match &deadline {
            Some(d) => match tokio::time::timeout_at(d.at, call()).await {
                Ok(r) => r,
                Err(_) => {
                    let e = last.take().unwrap_or_else(|| CloudError {
                        provider,
                        action: api.into(),
                        kind: ErrorKind::Transient,
                        code: "no-answer".into(),
                        message: "the cloud did not answer".into(),
                        request_id: None,
                        retry_after: None,
                    });
                    return Err(gave_up(e, attempt + 1, start, d.what.clone()));
                }
            },
            None => call().await,
        };
        match &answer {
            Err(e) if e.kind == ErrorKind::Throttled => pacer.throttled(provider, api),
            Err(e) if e.kind == ErrorKind::Transient => {}
            _ => pacer.answered(provider, api),
        }
        match answer {
            Ok(v) => return Ok(v),
            Err(e) if e.kind.retryable() && attempt + 1 < policy.max_attempts => {
                // xorshift64: jitter needs spread, not secrecy.
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let unit = (rng >> 11) as f64 / (1u64 << 53) as f64;
                let wait = policy.backoff(attempt, unit).max(e.retry_after.unwrap_or_default());
                if let Some(d) = &deadline {
                    if Instant::now() + wait >= d.at {
                        return Err(gave_up(e, attempt + 1, start, d.what.clone()));
                    }
                }
                tracing::debug!(provider = %provider, api, attempt, code = %e.code, wait_ms = wait.as_millis() as u64, "retrying");
                stats.retries.fetch_add(1, Ordering::Relaxed);
                stats.waited_ms.fetch_add(wait.as_millis() as u64, Ordering::Relaxed);
                tokio::time::sleep(wait).await;
                attempt += 1;
                last = Some(e);
            }
            Err(e) if e.kind.retryable() && attempt > 0 => {
                return Err(gave_up(
                    e,
                    attempt + 1,
                    start,
                    format!("{} attempts, the most for one call", policy.max_attempts),
                ));
            }
            Err(e) => return Err(e),
        }
    }
}

/// A wall-clock bound on retrying, with the words that name it in an error.
#[derive(Debug, Clone)]
pub struct Deadline {
    pub at: Instant,
    pub what: String,
}

impl Deadline {
    pub fn earlier(self, other: Option<Deadline>) -> Deadline {
        match other {
            Some(o) if o.at < self.at => o,
            _ => self,
        }
    }
}

/// The last error of a call given up, with what retrying it cost (the cloud's code and request id stay).
fn gave_up(mut e: CloudError, attempts: u32, start: Instant, why: String) -> CloudError {
    let secs = (Instant::now() - start).as_secs_f64();
    e.message = format!(
        "{}; gave up after {attempts} attempt{} in {secs:.1} s ({why})",
        e.message,
        if attempts == 1 { "" } else { "s" }
    );
    e
}

/// Shared by everything one run does.
#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn pacer_allows_a_half_second_burst_then_the_rate() {
        let pacer = Pacer::new(10.0);
        let start = Instant::now();
        for _ in 0..5 {
            pacer.slot(Provider::Tencent, "create").await;
        }
        assert_eq!(Instant::now() - start, Duration::ZERO, "the first 5 go at once");
        for _ in 0..10 {
            pacer.slot(Provider::Tencent, "create").await;
        }
        let spent = Instant::now() - start;
        assert!(spent >= Duration::from_millis(990) && spent <= Duration::from_millis(1010), "{spent:?}");
        // Another API (or provider) has its own bucket.
        let before = Instant::now();
        pacer.slot(Provider::Alibaba, "create").await;
        assert_eq!(Instant::now() - before, Duration::ZERO);
    }

    /// A throttled answer halves the API's pace (not below the floor) and delays its next slot; answers
    /// win the pace back an eighth at a time; other APIs keep theirs.
    #[tokio::test(start_paused = true)]
    async fn the_pace_halves_when_throttled_and_recovers_as_calls_are_answered() {
        let pacer = Pacer::new(8.0);
        pacer.slot(Provider::Alibaba, "create").await;
        pacer.throttled(Provider::Alibaba, "create");
        assert_eq!(pacer.rate(Provider::Alibaba, "create"), 4.0);
        let before = Instant::now();
        pacer.slot(Provider::Alibaba, "create").await;
        assert!(Instant::now() - before >= Duration::from_millis(250), "{:?}", Instant::now() - before);
        for _ in 0..10 {
            pacer.throttled(Provider::Alibaba, "create");
        }
        assert_eq!(pacer.rate(Provider::Alibaba, "create"), Pacer::FLOOR);
        assert_eq!(pacer.rate(Provider::Alibaba, "describe"), 8.0);
        pacer.answered(Provider::Alibaba, "create");
        assert_eq!(pacer.rate(Provider::Alibaba, "create"), Pacer::FLOOR + 1.0);
        for _ in 0..20 {
            pacer.answered(Provider::Alibaba, "create");
        }
        assert_eq!(pacer.rate(Provider::Alibaba, "create"), 8.0);
    }

    fn failing(kind: ErrorKind) -> CloudError {
        CloudError {
            provider: Provider::Alibaba,
            action: "create".into(),
            kind,
            code: "InternalError".into(),
            message: "boom".into(),
            request_id: Some("RID-1".into()),
            retry_after: None,
        }
    }

    /// Every attempt fails: the deadline, not the attempt count, ends the call, and the error keeps the
    /// cloud's code and request id and says what retrying cost.
    #[tokio::test(start_paused = true)]
    async fn a_deadline_stops_retrying_before_the_attempts_run_out() {
        let policy =
            RetryPolicy { max_attempts: 100, base: Duration::from_secs(1), cap: Duration::from_secs(4) };
        let (pacer, stats) = (Pacer::new(1000.0), RetryStats::default());
        let start = Instant::now();
        let d = Deadline {
            at: start + Duration::from_secs(30),
            what: "the unit's retry deadline of 30 s".into(),
        };
        let calls = std::sync::atomic::AtomicU32::new(0);
        let r: Result<(), _> =
            with_retry(&policy, &pacer, &stats, Provider::Alibaba, "create", 7, Some(d), || {
                calls.fetch_add(1, Ordering::Relaxed);
                async { Err(failing(ErrorKind::Transient)) }
            })
            .await;
        let e = r.unwrap_err();
        assert!(Instant::now() - start <= Duration::from_secs(30), "{:?}", Instant::now() - start);
        let n = calls.load(Ordering::Relaxed);
        assert!(n > 3 && n < 100, "{n} attempts");
        assert_eq!((e.code.as_str(), e.request_id.as_deref()), ("InternalError", Some("RID-1")));
        assert!(
            e.message.starts_with("boom; gave up after ")
                && e.message.contains(&format!("{n} attempts in "))
                && e.message.ends_with("(the unit's retry deadline of 30 s)"),
            "{}",
            e.message
        );
    }

    /// An attempt that never answers is cut off at the deadline, reporting the last real error.
    #[tokio::test(start_paused = true)]
    async fn a_hanging_attempt_ends_at_the_deadline() {
        let policy = RetryPolicy::default();
        let (pacer, stats) = (Pacer::new(1000.0), RetryStats::default());
        let start = Instant::now();
        let d =
            Deadline { at: start + Duration::from_secs(5), what: "the run's retry deadline of 5 s".into() };
        let calls = std::sync::atomic::AtomicU32::new(0);
        let r: Result<(), _> =
            with_retry(&policy, &pacer, &stats, Provider::Alibaba, "create", 7, Some(d), || {
                let n = calls.fetch_add(1, Ordering::Relaxed);
                async move {
                    if n == 0 {
                        Err(failing(ErrorKind::Throttled))
                    } else {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        Ok(())
                    }
                }
            })
            .await;
        assert_eq!(Instant::now() - start, Duration::from_secs(5));
        let e = r.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Throttled);
        assert!(
            e.message.contains("gave up after 2 attempts in 5.0 s (the run's retry deadline of 5 s)"),
            "{}",
            e.message
        );
    }

    /// Without a deadline the attempt count bounds the call, and says so; errors that are not worth
    /// retrying come back untouched.
    #[tokio::test(start_paused = true)]
    async fn attempts_bound_a_call_and_final_errors_pass_through() {
        let policy =
            RetryPolicy { max_attempts: 3, base: Duration::from_millis(10), cap: Duration::from_millis(10) };
        let (pacer, stats) = (Pacer::new(1000.0), RetryStats::default());
        let r: Result<(), _> =
            with_retry(&policy, &pacer, &stats, Provider::Alibaba, "create", 7, None, || async {
                Err(failing(ErrorKind::Transient))
            })
            .await;
        assert!(r
            .unwrap_err()
            .message
            .ends_with("gave up after 3 attempts in 0.0 s (3 attempts, the most for one call)"));
        assert_eq!(stats.retries.load(Ordering::Relaxed), 2);
        let r: Result<(), _> =
            with_retry(&policy, &pacer, &stats, Provider::Alibaba, "create", 7, None, || async {
                Err(failing(ErrorKind::StockOut))
            })
            .await;
        assert_eq!(r.unwrap_err().message, "boom");
    }

    #[test]
    fn backoff_is_bounded_and_jittered() {
        let p =
            RetryPolicy { max_attempts: 5, base: Duration::from_millis(100), cap: Duration::from_secs(1) };
        assert_eq!(p.backoff(0, 1.0), Duration::from_millis(100));
        assert_eq!(p.backoff(3, 1.0), Duration::from_millis(800));
        assert_eq!(p.backoff(10, 1.0), Duration::from_secs(1));
        assert_eq!(p.backoff(10, 0.5), Duration::from_millis(500));
        assert_eq!(p.backoff(2, 0.0), Duration::ZERO);
    }
}

#[derive(Debug, Clone)]
pub struct Calls {
    pub policy: RetryPolicy,
    pub pacer: Arc<Pacer>,
    pub stats: Arc<RetryStats>,
}
