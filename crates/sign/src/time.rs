//! Owns the conversion between unix seconds and the date strings the schemes put on the wire.

use jiff::{civil::DateTime, tz::TimeZone, Timestamp};

/// The date formats on the wire.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Format {
    /// `2023-10-26` (TC3 scope date)
    IsoDate,
    /// `2023-10-26T10:22:32Z` (Alibaba `x-acs-date`, RPC `Timestamp`)
    IsoSeconds,
    /// `20231026T102232Z` (JD `x-jdcloud-date`)
    Compact,
}

impl Format {
    fn pattern(self) -> &'static str {
        match self {
            Format::IsoDate => "%Y-%m-%d",
            Format::IsoSeconds => "%Y-%m-%dT%H:%M:%SZ",
            Format::Compact => "%Y%m%dT%H%M%SZ",
        }
    }
}

/// Unix seconds → the given UTC format. None when the time is outside jiff's range.
pub(crate) fn format(unix: i64, f: Format) -> Option<String> {
    let ts = Timestamp::from_second(unix).ok()?;
    Some(ts.to_zoned(TimeZone::UTC).strftime(f.pattern()).to_string())
}

/// The given UTC format → unix seconds. None when the text does not match exactly.
pub(crate) fn parse(text: &str, f: Format) -> Option<i64> {
    let dt = DateTime::strptime(f.pattern(), text).ok()?;
    // Round-trip check: strptime accepts some variants (e.g. single-digit fields) the clouds do not.
    let ts = dt.to_zoned(TimeZone::UTC).ok()?.timestamp().as_second();
    (format(ts, f).as_deref() == Some(text)).then_some(ts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses() {
        assert_eq!(format(1698315752, Format::IsoSeconds).unwrap(), "2023-10-26T10:22:32Z");
        assert_eq!(format(1698315752, Format::Compact).unwrap(), "20231026T102232Z");
        assert_eq!(format(1698315752, Format::IsoDate).unwrap(), "2023-10-26");
        assert_eq!(parse("2023-10-26T10:22:32Z", Format::IsoSeconds), Some(1698315752));
        assert_eq!(parse("20231026T102232Z", Format::Compact), Some(1698315752));
        assert_eq!(parse("20231026T102232", Format::Compact), None);
        assert_eq!(parse("2023-1-26T10:22:32Z", Format::IsoSeconds), None);
        assert_eq!(parse("garbage", Format::IsoSeconds), None);
    }
}
