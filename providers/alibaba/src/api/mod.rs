//! ECS wire facts shared by the client side and the emulator: the API version, the error body, the
//! error codes gpuctl reacts to, and the time format ECS uses.
//!
//! Sources: the official Python SDK (alibabacloud_ecs20140526 7.11.8, alibabacloud_tea_openapi
//! 0.4.6) and shared/reference/cloud-apis.md §2. Codes marked *unverified* are spelled as the
//! public error centre shows them but were not confirmed against a live account.

use serde::{Deserialize, Serialize};

pub mod bss;
pub mod cms;
pub mod deployment_set;
pub mod nas;
pub mod vpc;

/// `x-acs-version` / `Version`.
pub const API_VERSION: &str = "2014-05-26";

/// ECS answers errors with this body and a 4xx/5xx status.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ErrorBody {
    pub request_id: String,
    pub host_id: String,
    pub code: String,
    pub message: String,
    #[serde(default)]
    pub recommend: String,
}

/// Error codes, in ECS's spelling.
pub mod codes {
    pub const INVALID_ACCESS_KEY_ID: &str = "InvalidAccessKeyId.NotFound";
    pub const SIGNATURE_MISMATCH: &str = "SignatureDoesNotMatch";
    pub const TIMESTAMP_EXPIRED: &str = "InvalidTimeStamp.Expired";
    pub const NONCE_USED: &str = "SignatureNonceUsed";
    pub const THROTTLED: &str = "Throttling.User";
    pub const NO_STOCK: &str = "OperationDenied.NoStock";
    pub const IDEMPOTENT_MISMATCH: &str = "IdempotentParameterMismatch";
    pub const DRY_RUN: &str = "DryRunOperation";
    pub const BAD_INSTANCE_TYPE: &str = "InvalidInstanceType.ValueNotSupported";
    pub const INCORRECT_STATUS: &str = "IncorrectInstanceStatus";
    pub const INSTANCE_NOT_FOUND: &str = "InvalidInstanceId.NotFound";
    pub const DISK_NOT_FOUND: &str = "InvalidDiskId.NotFound";
    pub const SNAPSHOT_NOT_FOUND: &str = "InvalidSnapshotId.NotFound";
    /// DeleteDisk of an attached disk (ECS error centre; *unverified*: the models carry no codes).
    pub const INCORRECT_DISK_STATUS: &str = "IncorrectDiskStatus";
    /// ReleaseEipAddress of a bound EIP / of none (VPC error centre; *unverified* as above).
    pub const INCORRECT_EIP_STATUS: &str = "IncorrectEipStatus";
    pub const EIP_NOT_FOUND: &str = "InvalidAllocationId.NotFound";
    pub const MISSING_PARAMETER: &str = "MissingParameter";
    pub const INVALID_PARAMETER: &str = "InvalidParameter";
    pub const ACTION_NOT_FOUND: &str = "InvalidAction.NotFound";
    pub const ZONE_NOT_FOUND: &str = "InvalidZoneId.NotFound";
    pub const REGION_NOT_FOUND: &str = "InvalidRegionId.NotFound";
    /// *unverified*: the format and window errors for AutoReleaseTime.
    pub const AUTO_RELEASE_MALFORMED: &str = "InvalidAutoReleaseTime.Malformed";
    pub const AUTO_RELEASE_OUT_OF_RANGE: &str = "InvalidAutoReleaseTime.ValueNotSupported";
    /// *unverified*: an unsupported Period/PeriodUnit combination.
    pub const INVALID_PERIOD: &str = "InvalidPeriod";
    pub const CHARGE_TYPE_VIOLATION: &str = "ChargeTypeViolation";
    pub const SNAPSHOT_USED_BY_IMAGE: &str = "SnapshotUsedByImage";
    pub const POLICY_NOT_FOUND: &str = "InvalidAutoSnapshotPolicyId.NotFound";
    /// *unverified*: no catalogued price for the asked billing mode.
    pub const PRICE_NOT_FOUND: &str = "PriceNotFound";
    /// Key pairs: a name taken in the region (ImportKeyPair), a name RunInstances does not know.
    pub const KEY_PAIR_EXISTS: &str = "KeyPair.AlreadyExist";
    pub const KEY_PAIR_NOT_FOUND: &str = "InvalidKeyPairName.NotFound";
    /// *unverified*: a PublicKeyBody that is not a public key of a supported type.
    pub const PUBLIC_KEY_MALFORMED: &str = "InvalidPublicKeyBody.Malformed";
    pub const INTERNAL_ERROR: &str = "InternalError";
    pub const SERVICE_UNAVAILABLE: &str = "ServiceUnavailable";
}

/// ECS's timestamps in answers: `2026-11-30T05:55Z` (minutes, UTC).
pub fn format_time(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%MZ").to_string()
}

/// Parse a request time: `yyyy-MM-ddTHH:mm:ssZ` or `yyyy-MM-ddTHH:mmZ` (UTC), as ECS accepts.
pub fn parse_time(s: &str) -> Option<jiff::Timestamp> {
    let s = s.trim();
    for fmt in ["%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%MZ"] {
        if let Ok(t) = jiff::civil::DateTime::strptime(fmt, s) {
            return t.to_zoned(jiff::tz::TimeZone::UTC).ok().map(|z| z.timestamp());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_in_ecs_formats() {
        let t = parse_time("2026-12-01T08:30:59Z").unwrap();
        assert_eq!(format_time(t), "2026-12-01T08:30Z");
        assert_eq!(parse_time("2026-12-01T08:30Z"), parse_time("2026-12-01T08:30:00Z"));
        assert_eq!(parse_time("2026-12-01 08:30:00"), None);
        assert_eq!(parse_time(""), None);
    }
}
