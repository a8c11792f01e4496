//! The sim clock: real time plus an offset that tests move forward, so boot times, auto-release and
//! snapshot policies can be exercised in milliseconds. Signature timestamps are judged against it too.

use std::sync::atomic::{AtomicI64, Ordering};

use jiff::{SignedDuration, Timestamp};

#[derive(Debug, Default)]
pub struct SimClock {
    /// Nanoseconds added to the wall clock (i64 covers ±292 years).
    offset_ns: AtomicI64,
}

impl SimClock {
    pub fn now(&self) -> Timestamp {
        let offset = SignedDuration::from_nanos(self.offset_ns.load(Ordering::SeqCst));
        Timestamp::now().checked_add(offset).unwrap_or(Timestamp::MAX)
    }

    /// Move the clock forward (never backward: emulators assume time only grows).
    pub fn advance(&self, by: SignedDuration) {
        let ns = by.as_nanos().clamp(0, i64::MAX as i128) as i64;
        self.offset_ns.fetch_add(ns, Ordering::SeqCst);
    }

    /// Jump to `to` if it is later than now; returns the new now.
    pub fn set_at_least(&self, to: Timestamp) -> Timestamp {
        let now = self.now();
        if to > now {
            self.advance(to.duration_since(now));
        }
        self.now()
    }

    pub fn offset(&self) -> SignedDuration {
        SignedDuration::from_nanos(self.offset_ns.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_moves_now_forward_only() {
        let clock = SimClock::default();
        let before = clock.now();
        clock.advance(SignedDuration::from_hours(2));
        assert!(clock.now().duration_since(before) >= SignedDuration::from_hours(2));
        clock.advance(SignedDuration::from_hours(-5));
        assert!(clock.now().duration_since(before) >= SignedDuration::from_hours(2));
        let target = before.checked_add(SignedDuration::from_hours(10)).unwrap();
        assert!(clock.set_at_least(target) >= target);
    }
}
