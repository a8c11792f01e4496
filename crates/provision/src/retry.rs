//! Calling a cloud politely: a pace per (provider, API) so concurrent work stays under the cloud's rate
//! limits, and retries for throttled and transient failures only — exponential backoff with full
//! jitter, bounded in attempts — that reuse the same request (and so the same client token).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::cloud::CloudError;
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
#[derive(Debug)]
pub struct Pacer {
    per_second: f64,
    /// The theoretical arrival time of the next call, per API.
    next: Mutex<HashMap<(Provider, &'static str), Instant>>,
}

impl Pacer {
    pub fn new(per_second: f64) -> Self {
        Pacer { per_second: per_second.max(0.001), next: Mutex::new(HashMap::new()) }
    }

    /// Waits for this API's next free slot.
    pub async fn slot(&self, provider: Provider, api: &'static str) {
        let period = Duration::from_secs_f64(1.0 / self.per_second);
        // A burst of half a second's calls (at least one).
        let tolerance = period.mul_f64((self.per_second / 2.0 - 1.0).max(0.0));
        let at = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let tat = next.get(&(provider, api)).copied().unwrap_or(now).max(now);
            next.insert((provider, api), tat + period);
            tat.checked_sub(tolerance).unwrap_or(now).max(now)
        };
        tokio::time::sleep_until(at).await;
    }
}

/// Counts what retrying cost, for the run's report.
#[derive(Debug, Default)]
pub struct RetryStats {
    pub retries: AtomicU64,
    pub waited_ms: AtomicU64,
}

/// Paces, calls, and retries `call` while it fails throttled or transient, up to the policy's bound.
/// `seed` makes the jitter reproducible per logical call.
pub async fn with_retry<T, F, Fut>(
    policy: &RetryPolicy,
    pacer: &Pacer,
    stats: &RetryStats,
    provider: Provider,
    api: &'static str,
    seed: u64,
    mut call: F,
) -> Result<T, CloudError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, CloudError>>,
{
    let mut rng = seed | 1;
    let mut attempt = 0;
    loop {
        pacer.slot(provider, api).await;
        match call().await {
            Ok(v) => return Ok(v),
            Err(e) if e.kind.retryable() && attempt + 1 < policy.max_attempts => {
                // xorshift64: jitter needs spread, not secrecy.
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let unit = (rng >> 11) as f64 / (1u64 << 53) as f64;
                let wait = policy.backoff(attempt, unit).max(e.retry_after.unwrap_or_default());
                tracing::debug!(provider = %provider, api, attempt, code = %e.code, wait_ms = wait.as_millis() as u64, "retrying");
                stats.retries.fetch_add(1, Ordering::Relaxed);
                stats.waited_ms.fetch_add(wait.as_millis() as u64, Ordering::Relaxed);
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
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

    #[test]
    fn backoff_is_bounded_and_jittered() {
        let p = RetryPolicy { max_attempts: 5, base: Duration::from_millis(100), cap: Duration::from_secs(1) };
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
