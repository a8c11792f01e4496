//! JD Cloud wire facts shared by the client side and the emulator: the error body, the HTTP status
//! words, and the time formats.
//!
//! Sources: jdcloud_sdk 1.6.354 / 1.6.93 (core/jdcloudresponse.py, services/{vm,disk,billing}),
//! JD's published api-2 shapes (jdcloud-sdk-php src/data), shared/reference/cloud-apis.md §3, and
//! https://docs.jdcloud.com/cn/common-declaration/api/error-codes for the status list.

use serde::{Deserialize, Serialize};

pub mod bill;
pub mod monitor;

/// Path prefix of every call.
pub const API_VERSION: &str = "v1";

/// `{"requestId":"…","error":{"code":429,"status":"RATE_LIMIT","message":"…"}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    pub request_id: String,
    pub error: ErrorDetail,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// The HTTP status again, as a number.
    pub code: u16,
    /// The status word: `INVALID_ARGUMENT`, `NOT_FOUND`, `RATE_LIMIT`, ...
    pub status: String,
    pub message: String,
}

/// JD's status words with their HTTP codes (the error-codes page).
pub mod status {
    pub const INVALID_ARGUMENT: (u16, &str) = (400, "INVALID_ARGUMENT");
    pub const FAILED_PRECONDITION: (u16, &str) = (400, "FAILED_PRECONDITION");
    pub const OUT_OF_RANGE: (u16, &str) = (400, "OUT_OF_RANGE");
    pub const UNAUTHENTICATED: (u16, &str) = (401, "UNAUTHENTICATED");
    pub const HTTP_FORBIDDEN: (u16, &str) = (403, "HTTP_FORBIDDEN");
    pub const NOT_FOUND: (u16, &str) = (404, "NOT_FOUND");
    pub const ABORTED: (u16, &str) = (409, "ABORTED");
    pub const ALREADY_EXISTS: (u16, &str) = (409, "ALREADY_EXISTS");
    pub const QUOTA_EXCEEDED: (u16, &str) = (429, "QUOTA_EXCEEDED");
    pub const RATE_LIMIT: (u16, &str) = (429, "RATE_LIMIT");
    pub const INTERNAL: (u16, &str) = (500, "INTERNAL");
    pub const NOT_IMPLEMENTED: (u16, &str) = (501, "NOT_IMPLEMENTED");
    pub const UNAVAILABLE: (u16, &str) = (503, "UNAVAILABLE");
}

/// Beijing time, in which JD shows and takes wall-clock times.
pub fn beijing() -> jiff::tz::TimeZone {
    jiff::tz::TimeZone::fixed(jiff::tz::offset(8))
}

/// Times in answers: `2026-11-30T13:55:40+08:00`.
pub fn format_time(t: jiff::Timestamp) -> String {
    t.to_zoned(beijing()).strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

/// `autoReleaseTime` in requests and answers: `2026-12-01 08:00:00`, Beijing time.
pub fn format_release_time(t: jiff::Timestamp) -> String {
    t.to_zoned(beijing()).strftime("%Y-%m-%d %H:%M:%S").to_string()
}

pub fn parse_release_time(s: &str) -> Option<jiff::Timestamp> {
    let dt = jiff::civil::DateTime::strptime("%Y-%m-%d %H:%M:%S", s.trim()).ok()?;
    dt.to_zoned(beijing()).ok().map(|z| z.timestamp())
}

/// `effectiveTime` of snapshot policies: RFC 3339 with an offset (`2020-02-02T20:02:00+08:00`).
pub fn parse_offset_time(s: &str) -> Option<jiff::Timestamp> {
    s.trim().parse::<jiff::Timestamp>().ok()
}

/// A prepaid term of `months` as JD's `(chargeUnit, chargeDuration)`: `chargeDuration` is 1–9 with
/// `month` or 1–3 with `year` (jdcloud_sdk 1.6.354 services/charge/models/ChargeSpec.py), so 12, 24
/// and 36 months go as 1, 2 and 3 years. The spec parser allows no other term for JD; anything else
/// is passed on as months and the cloud (and the emulator) refuse it.
pub fn charge_term(months: u32) -> (&'static str, u32) {
    match months {
        12 | 24 | 36 => ("year", months / 12),
        n => ("month", n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_beijing_time() {
        let t = parse_release_time("2027-01-01 08:00:00").unwrap();
        assert_eq!(t.to_string(), "2027-01-01T00:00:00Z");
        assert_eq!(format_release_time(t), "2027-01-01 08:00:00");
        assert_eq!(format_time(t), "2027-01-01T08:00:00+08:00");
        assert_eq!(
            parse_offset_time("2020-02-02T20:02:00+08:00").unwrap().to_string(),
            "2020-02-02T12:02:00Z"
        );
        assert_eq!(parse_release_time("2027-01-01T08:00:00Z"), None);
    }
}
