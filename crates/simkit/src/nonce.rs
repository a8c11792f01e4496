//! Signature nonces: each may be used once while a signature made with it could still be valid.
//! A replayed request (same nonce) is refused with the cloud's own error by the caller.
//!
//! The window is judged on the wall clock, as signature skew is (the SDKs sign with the machine's
//! time, and the sim clock may run fast or jump): this is the one place an emulator's bookkeeping
//! reads the wall clock, and it holds no cloud state.

use std::collections::BTreeMap;
use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};

#[derive(Debug, Default)]
pub struct NonceStore {
    /// nonce → when it was first seen (wall clock).
    seen: Mutex<BTreeMap<String, Timestamp>>,
}

impl NonceStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether this is the nonce's first use within `window` (then it is remembered); `false` means
    /// a replay. `window` is the cloud's signature skew: a nonce older than twice that is forgotten,
    /// since a request carrying it would fail the time check anyway.
    pub fn first_use(&self, nonce: &str, window: SignedDuration) -> bool {
        self.first_use_at(nonce, Timestamp::now(), window)
    }

    /// [`first_use`](Self::first_use) at a given wall time (tests).
    pub fn first_use_at(&self, nonce: &str, now: Timestamp, window: SignedDuration) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.retain(|_, t| now.duration_since(*t) <= window * 2);
        seen.insert(nonce.to_string(), now).is_none()
    }

    pub fn clear(&self) {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nonce_is_used_once_per_window() {
        let store = NonceStore::new();
        let t0 = Timestamp::from_second(1_700_000_000).unwrap();
        let w = SignedDuration::from_mins(5);
        assert!(store.first_use_at("n1", t0, w));
        assert!(!store.first_use_at("n1", t0 + SignedDuration::from_secs(30), w), "replay");
        assert!(store.first_use_at("n2", t0, w), "another nonce");
        assert!(
            store.first_use_at("n1", t0 + SignedDuration::from_mins(11), w),
            "forgotten after 2× the window"
        );
        store.clear();
        assert!(store.first_use_at("n2", t0, w));
    }
}
