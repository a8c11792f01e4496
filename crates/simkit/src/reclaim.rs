//! Spot reclaims (issue 15, `POST /_sim/reclaim`): the termination time every emulator marks the same
//! way; the emulator decides which instances are spot and serves the time in its cloud's format.

use jiff::{SignedDuration, Timestamp};

/// The termination time of a reclaim: the one already marked (a second reclaim changes nothing), else
/// `now` + `notice` (the cloud's documented `default` when the caller gives none), now marked.
pub fn mark(
    marked: &mut Option<Timestamp>,
    now: Timestamp,
    notice: Option<SignedDuration>,
    default: SignedDuration,
) -> Timestamp {
    *marked.get_or_insert_with(|| now.checked_add(notice.unwrap_or(default)).unwrap_or(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_is_kept() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let mut m = None;
        let first = mark(&mut m, now, None, SignedDuration::from_secs(300));
        assert_eq!(first, now + SignedDuration::from_secs(300));
        let again = mark(
            &mut m,
            now + SignedDuration::from_secs(10),
            Some(SignedDuration::from_secs(5)),
            SignedDuration::ZERO,
        );
        assert_eq!(again, first, "a reclaim already marked keeps its time");
    }
}
