//! The engine's clock: the time it writes into records (created, running, released) and reads "now"
//! by for cost. The wall clock, moved by `GPUCTL_CLOCK_OFFSET_S` seconds when that is set — the test
//! hook (like the CLI's `GPUCTL_TODAY`) that keeps gpuctl's records on the local cloud's clock after a
//! test moves it forward (`POST /_sim/clock`), so a month of simulated use is a month in the records
//! too. Request signatures never use it: they carry the machine's time, as the clouds judge skew by it.

use jiff::{SignedDuration, Timestamp};

/// The environment variable holding the offset in whole seconds (may be negative).
pub const OFFSET_ENV: &str = "GPUCTL_CLOCK_OFFSET_S";

/// Now, on the engine's clock.
pub fn now() -> Timestamp {
    let offset = std::env::var(OFFSET_ENV).ok().and_then(|s| s.trim().parse::<i64>().ok()).unwrap_or(0);
    Timestamp::now().checked_add(SignedDuration::from_secs(offset)).unwrap_or_else(|_| Timestamp::now())
}
