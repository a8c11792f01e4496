//! Numbers for people, per language: CNY amounts, hours, token counts. Pure (tested natively).
//!
//! Conventions: Chinese readers group large amounts by 万 (10⁴) and 亿 (10⁸) and write `¥`; English
//! readers group by thousands and, since `¥` alone also means yen, see `CN¥` (what `Intl.NumberFormat`
//! prints for CNY in `en`). Costs are estimates, so amounts of ¥1,000 and more drop the fen: printing
//! ¥123,456.78 for a number that is only good to a few percent would be false precision.

use crate::i18n::Lang;
pub use gpuctl_core::units::{count, grouped, trim_zeros};

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

/// What an offer rents, as a person reads it: `8 × NVIDIA A10`, or for a cluster (issue 14)
/// `2 nodes × 8 × NVIDIA A10` — its costs are the whole cluster's, its hourly price one node's.
pub fn gpus(lang: Lang, o: &gpuctl_core::Offer) -> String {
    let one = format!("{} × {}", o.gpu_count, o.gpu_name);
    match (o.nodes, lang) {
        (0 | 1, _) => one,
        (n, Lang::En) => format!("{n} nodes × {one}"),
        (n, Lang::Zh) => format!("{n} 个节点 × {one}"),
    }
}

/// A cluster's sharding and network share in a few words (`None` for one instance): why its time
/// band is wide, without opening the assumptions.
pub fn cluster(lang: Lang, o: &gpuctl_core::Offer) -> Option<String> {
    let c = o.cluster.as_ref()?;
    let share = 100.0 * c.network_s_per_step.1 / (c.compute_s_per_step.1 + c.network_s_per_step.1);
    let hybrid = c.sharding == gpuctl_core::Sharding::Hybrid;
    Some(match lang {
        Lang::En => format!(
            "{} sharding · {} Gbit/s{} between nodes · network up to {share:.0} % of a step",
            if hybrid { "hybrid" } else { "full" },
            c.net_gbps,
            if c.over_rdma { " RDMA" } else { "" }
        ),
        Lang::Zh => format!(
            "{} · 节点间 {} Gbit/s{} · 网络最多占每步 {share:.0} %",
            if hybrid { "混合切分" } else { "全切分" },
            c.net_gbps,
            if c.over_rdma { " RDMA" } else { "" }
        ),
    })
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
}
