//! Numbers for people, per language: CNY amounts, hours, token counts. Pure (tested natively).
//!
//! Conventions: Chinese readers group large amounts by 万 (10⁴) and 亿 (10⁸) and write `¥`; English
//! readers group by thousands and, since `¥` alone also means yen, see `CN¥` (what `Intl.NumberFormat`
//! prints for CNY in `en`). Costs are estimates, so amounts of ¥1,000 and more drop the fen: printing
//! ¥123,456.78 for a number that is only good to a few percent would be false precision.

use crate::i18n::Lang;

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

/// A CNY amount in the reader's conventions (see the module comment).
pub fn cny(lang: Lang, amount: f64) -> String {
    if !amount.is_finite() {
        return "—".to_string();
    }
    let decimals = if amount.abs() < 1000.0 { 2 } else { 0 };
    match lang {
        Lang::En => format!("CN¥{}", grouped(amount, decimals)),
        Lang::Zh => {
            let abs = amount.abs();
            if abs >= 1e8 {
                format!("¥{}亿", trim_zeros(&format!("{:.2}", amount / 1e8)))
            } else if abs >= 1e4 {
                format!("¥{}万", trim_zeros(&format!("{:.2}", amount / 1e4)))
            } else {
                format!("¥{}", grouped(amount, decimals))
            }
        }
    }
}

/// A price per hour, always with fen: hourly prices are small and quoted to the fen by the clouds.
pub fn cny_per_hour(lang: Lang, amount: f64) -> String {
    let per = match lang {
        Lang::En => "/h",
        Lang::Zh => "/小时",
    };
    match lang {
        Lang::En => format!("CN¥{}{per}", grouped(amount, 2)),
        Lang::Zh => format!("¥{}{per}", grouped(amount, 2)),
    }
}

/// Hours as a person reads them: minutes under an hour, days past 72 hours.
pub fn hours(lang: Lang, h: f64) -> String {
    if !h.is_finite() {
        return "—".to_string();
    }
    let (min, hr, day) = match lang {
        Lang::En => (" min", " h", " d"),
        Lang::Zh => (" 分钟", " 小时", " 天"),
    };
    if h < 1.0 {
        format!("{:.0}{min}", (h * 60.0).max(1.0))
    } else if h < 10.0 {
        format!("{}{hr}", trim_zeros(&format!("{h:.1}")))
    } else if h <= 72.0 {
        format!("{h:.0}{hr}")
    } else {
        format!("{}{day}", trim_zeros(&format!("{:.1}", h / 24.0)))
    }
}

/// A range of hours, `low–high`, collapsing to one figure when both print the same.
pub fn hours_range(lang: Lang, low: f64, high: f64) -> String {
    let (a, b) = (hours(lang, low), hours(lang, high));
    if a == b {
        a
    } else {
        format!("{a} – {b}")
    }
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
fn trim_zeros(s: &str) -> String {
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
    fn cny_per_language() {
        let check =
            |lang, amount, expected: &str| assert_eq!(cny(lang, amount), expected, "{lang:?} {amount}");
        check(Lang::En, 0.0, "CN¥0.00");
        check(Lang::En, 9.74, "CN¥9.74");
        check(Lang::En, 999.994, "CN¥999.99");
        check(Lang::En, 4675.66, "CN¥4,676");
        check(Lang::En, 1_234_567.8, "CN¥1,234,568");
        check(Lang::En, -1500.0, "CN¥-1,500");
        check(Lang::Zh, 9.74, "¥9.74");
        check(Lang::Zh, 4675.66, "¥4,676");
        check(Lang::Zh, 12_948.0, "¥1.29万");
        check(Lang::Zh, 80_000.0, "¥8万");
        check(Lang::Zh, 2_300_000.0, "¥230万");
        check(Lang::Zh, 150_000_000.0, "¥1.5亿");
        check(Lang::Zh, f64::NAN, "—");
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
    fn hours_read_naturally() {
        let check = |lang, h, expected: &str| assert_eq!(hours(lang, h), expected);
        check(Lang::En, 0.25, "15 min");
        check(Lang::En, 0.001, "1 min");
        check(Lang::En, 2.0, "2 h");
        check(Lang::En, 2.46, "2.5 h");
        check(Lang::En, 48.0, "48 h");
        check(Lang::En, 100.0, "4.2 d");
        check(Lang::Zh, 100.0, "4.2 天");
        check(Lang::Zh, 5.0, "5 小时");
        assert_eq!(hours_range(Lang::En, 3.01, 3.04), "3 h");
        assert_eq!(hours_range(Lang::En, 3.0, 6.0), "3 h – 6 h");
    }

    #[test]
    fn counts() {
        let check = |n, expected: &str| assert_eq!(count(n), expected);
        check(50e6, "50M");
        check(7.6e9, "7.6B");
        check(1.5e12, "1.5T");
        check(512.0, "512");
        check(2048.0, "2.05K");
    }
}
