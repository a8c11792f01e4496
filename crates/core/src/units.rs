//! Numbers the way people type them: `50M` tokens, `1.5B` / `7b` parameters, `48h` / `3d` / `2w` durations.

/// Parse a count with an optional K/M/B/T suffix (case-insensitive; `7b` = 7e9). Commas and `_` are ignored.
pub fn parse_count(s: &str) -> Result<f64, String> {
    let t = s.trim().replace([',', '_'], "");
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_lowercase()) {
        Some('k') => (&t[..t.len() - 1], 1e3),
        Some('m') => (&t[..t.len() - 1], 1e6),
        Some('b') | Some('g') => (&t[..t.len() - 1], 1e9),
        Some('t') => (&t[..t.len() - 1], 1e12),
        _ => (t.as_str(), 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v * mult),
        _ => Err(format!("'{s}' is not a count; write e.g. 50M, 1.5B, 7b or 20000")),
    }
}

/// Parse a duration into hours: `30min`, `48h`, `3d`, `2w`, `1mo` (730 h), or a bare number of hours.
pub fn parse_hours(s: &str) -> Result<f64, String> {
    let t = s.trim().to_ascii_lowercase();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult = match unit {
        "min" | "mins" | "minute" | "minutes" => 1.0 / 60.0,
        "" | "h" | "hr" | "hour" | "hours" => 1.0,
        "d" | "day" | "days" => 24.0,
        "w" | "week" | "weeks" => 168.0,
        "mo" | "month" | "months" => 730.0,
        _ => return Err(format!("'{s}' is not a duration; write e.g. 48h, 3d, 2w or 1mo")),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v * mult),
        _ => Err(format!("'{s}' is not a duration; write e.g. 48h, 3d, 2w or 1mo")),
    }
}

/// `1234567.891` → `"1,234,568"`; `decimals` digits after the point, thousands separated by commas.
pub fn grouped(value: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, value.abs());
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (text.as_str(), None),
    };
    let mut out = String::with_capacity(text.len() + int.len() / 3 + 1);
    if value < 0.0 && text.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        out.push('-');
    }
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// A token or parameter count with an SI-style suffix: `50000000` → `50M`, `7.6e9` → `7.6B`.
pub fn count(n: f64) -> String {
    let (v, suffix) = if n >= 1e12 {
        (n / 1e12, "T")
    } else if n >= 1e9 {
        (n / 1e9, "B")
    } else if n >= 1e6 {
        (n / 1e6, "M")
    } else if n >= 1e3 {
        (n / 1e3, "K")
    } else {
        (n, "")
    };
    format!("{}{suffix}", trim_zeros(&format!("{v:.2}")))
}

/// `12.50` → `12.5`, `3.00` → `3`.
pub fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        for (input, expected) in [
            ("50M", 50e6),
            ("1.5B", 1.5e9),
            ("7b", 7e9),
            ("20000", 2e4),
            ("2k", 2e3),
            ("1T", 1e12),
            ("1,000,000", 1e6),
        ] {
            assert_eq!(parse_count(input), Ok(expected), "{input}");
        }
        for bad in ["", "abc", "-5M", "5X"] {
            assert!(parse_count(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations() {
        for (input, expected) in [("48h", 48.0), ("3d", 72.0), ("2w", 336.0), ("1mo", 730.0), ("10", 10.0)] {
            assert_eq!(parse_hours(input), Ok(expected), "{input}");
        }
        for bad in ["", "3y", "0h", "d"] {
            assert!(parse_hours(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn grouping() {
        let check = |v, d, expected: &str| assert_eq!(grouped(v, d), expected);
        check(0.0, 0, "0");
        check(999.0, 0, "999");
        check(1000.0, 0, "1,000");
        check(123456.789, 2, "123,456.79");
        check(-0.001, 2, "0.00");
        check(-12345.0, 0, "-12,345");
    }

    #[test]
    fn counts_read_naturally() {
        let check = |n, expected: &str| assert_eq!(count(n), expected);
        check(50e6, "50M");
        check(7.6e9, "7.6B");
        check(1.5e12, "1.5T");
        check(512.0, "512");
        check(2048.0, "2.05K");
    }
}
