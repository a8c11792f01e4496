//! The offers table body and the charts as HTML/SVG text, each set with one `innerHTML` per update.
//! Typing re-ranks up to 40 rows of ~40 elements each; building them node by node through the JS
//! boundary took ~35 ms, over the 16 ms budget, while the browser's own parser takes ~2 ms. Charts
//! likewise: axes, lines and dots are one string, not dozens of nodes each through the boundary.
//! Every piece of text goes through [`esc`]: catalog strings (an overlay is user-written) must not
//! become markup. Pure (tested natively).

use std::fmt::Write;

use gpuctl_core::{BillingMode, Provider};

use crate::calc::{self, Row};
use crate::chart::{self, Scale, H, MB, ML, MR, MT, W};
use crate::format;
use crate::i18n::{self, Lang};

/// Text made safe for element content and double-quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Colour class per provider (the CSS keeps them stable across table, charts and legend).
pub fn provider_class(p: Provider) -> &'static str {
    match p {
        Provider::Tencent => "p-tencent",
        Provider::Alibaba => "p-alibaba",
        Provider::JdCloud => "p-jdcloud",
    }
}

/// The distinct warnings of `rows`, in first-seen order. A row shows each of its warnings as a
/// numbered mark (the text on hover), and the texts are listed once under the table: written out on
/// every row, a warning such as the spot-reclaim one wrapped rows to ~200 px, three to a screen.
pub fn row_notes(rows: &[Row]) -> Vec<&gpuctl_core::Warning> {
    let mut notes: Vec<&gpuctl_core::Warning> = Vec::new();
    for w in rows.iter().flat_map(|r| &r.warnings) {
        if !notes.contains(&w) {
            notes.push(w);
        }
    }
    notes
}

/// The `<li>`s of [`row_notes`], numbered as the rows' marks are.
pub fn row_notes_list(rows: &[Row], lang: Lang) -> String {
    let mut h = String::new();
    for (k, w) in row_notes(rows).into_iter().enumerate() {
        let _ = write!(h, r#"<li value="{}">{}</li>"#, k + 1, esc(&i18n::warning(w, lang)));
    }
    h
}

/// `<tr data-testid="offer-row" data-key=…>` for each row, in order.
pub fn offer_rows(rows: &[Row], lang: Lang, picked: Option<&str>) -> String {
    let notes = row_notes(rows);
    let mut h = String::with_capacity(rows.len() * 2500);
    for (n, row) in rows.iter().enumerate() {
        let o = &row.best;
        let p = &o.price;
        let picked_class = if picked == Some(row.key.as_str()) { " picked" } else { "" };
        let _ = write!(
            h,
            r#"<tr data-testid="offer-row" data-key="{key}" class="{prov}{picked_class}"><td>{rank}</td><td><span class="prov">{pname}</span> <code>{inst}</code><br><small class="muted">{region}</small></td><td>{gpus}</td>"#,
            key = esc(&row.key),
            prov = provider_class(o.provider),
            rank = n + 1,
            pname = esc(i18n::provider_name(o.provider, lang)),
            inst = esc(&o.instance),
            region = esc(&o.region),
            gpus = esc(&format::gpus(lang, o))
                + &format::cluster(lang, o)
                    .map(|c| format!(r#"<br><small class="muted" data-testid="cluster">{}</small>"#, esc(&c)))
                    .unwrap_or_default(),
        );
        let cap = o.fit.vram_gb.max(o.fit.need_gb);
        let _ = write!(
            h,
            r#"<td class="fit" title="{verdict}"><span class="{ok}">{used:.1} / {vram:.0} GB</span><div class="mem">"#,
            verdict = esc(&i18n::verdict(&o.fit.verdict_code, lang)),
            ok = if o.fit.fits { "ok" } else { "" },
            used = o.fit.need_gb,
            vram = o.fit.vram_gb,
        );
        for (name, gb) in calc::memory_parts(&o.fit) {
            let w = (gb / cap * 100.0).clamp(0.0, 100.0);
            let _ =
                write!(h, r#"<i class="mem-{name}" style="width:{w:.1}%" title="{name}: {gb:.1} GB"></i>"#);
        }
        let _ =
            write!(h, "</div></td><td>{}</td>", esc(&format::hours_range(lang, o.hours_low, o.hours_high)));
        for m in BillingMode::ALL {
            match row.modes.iter().find(|c| c.mode == m) {
                Some(c) if m == row.cheapest() => {
                    let _ = write!(
                        h,
                        r#"<td class="num cheapest" data-mode="{mode}" title="{lo} – {hi}">{hi}<span class="star" title="{cheapest}"> ★</span></td>"#,
                        mode = m.as_str(),
                        lo = esc(&format::cny(lang, c.cost_low)),
                        hi = esc(&format::cny(lang, c.cost_high)),
                        cheapest = esc(i18n::CHEAPEST.get(lang)),
                    );
                }
                Some(c) => {
                    let _ = write!(
                        h,
                        r#"<td class="num" data-mode="{mode}" title="{lo} – {hi}">{hi}</td>"#,
                        mode = m.as_str(),
                        lo = esc(&format::cny(lang, c.cost_low)),
                        hi = esc(&format::cny(lang, c.cost_high)),
                    );
                }
                None => h.push_str(r#"<td class="num muted">—</td>"#),
            }
        }
        let per_1m = o.cny_per_1m_tokens_high.map_or_else(|| "—".to_string(), |v| format::cny(lang, v));
        let derivation =
            if p.derivation.is_empty() { String::new() } else { format!(" · {}", p.derivation) };
        let _ = write!(
            h,
            r#"<td class="num">{per_1m}</td><td title="{src}"><span>{per_hour}</span><br><small class="muted">{as_of} · {age} {days_old}</small></td><td class="warn small">"#,
            per_1m = esc(&per_1m),
            src = esc(&format!(
                "{} · {} {} · {} {}{derivation}",
                p.source,
                i18n::AS_OF.get(lang),
                p.as_of,
                i18n::CONFIDENCE.get(lang),
                p.confidence.as_str()
            )),
            per_hour = esc(&match (o.nodes, lang) {
                (0 | 1, _) => format::cny_per_hour(lang, p.cny_per_hour),
                (_, Lang::En) => format!("{} per node", format::cny_per_hour(lang, p.cny_per_hour)),
                (_, Lang::Zh) => format!("每节点 {}", format::cny_per_hour(lang, p.cny_per_hour)),
            }),
            as_of = p.as_of,
            age = o.price_age_days,
            days_old = esc(i18n::DAYS_OLD.get(lang)),
        );
        for w in &row.warnings {
            let k = notes.iter().position(|n| *n == w).map_or(0, |k| k + 1);
            let _ = write!(h, r#"<b class="wmark" title="{}">{k}</b>"#, esc(&i18n::warning(w, lang)));
        }
        h.push_str("</td></tr>");
    }
    h
}

/// The cost-vs-time dots (SVG `<circle>`s with a `<title>` each); frontier and chosen ones marked.
pub fn cost_time_dots(
    rows: &[Row],
    pts: &[(f64, f64)],
    front: &[usize],
    x: Scale,
    y: Scale,
    lang: Lang,
    picked: Option<&str>,
) -> String {
    let mut h = String::with_capacity(rows.len() * 220);
    for (i, r) in rows.iter().enumerate() {
        let on_front = front.contains(&i);
        let is_picked = picked == Some(r.key.as_str());
        let radius = if is_picked {
            7.0
        } else if on_front {
            5.0
        } else {
            3.5
        };
        let title = format!(
            "{} {} · {} · {} · {}",
            i18n::provider_name(r.best.provider, lang),
            r.best.instance,
            i18n::mode_name(r.best.mode, lang),
            format::hours(lang, r.best.hours_high),
            format::cny(lang, r.best.cost_high)
        );
        let _ = write!(
            h,
            r#"<circle data-key="{key}" class="dot {prov}{front}{picked}" cx="{cx:.1}" cy="{cy:.1}" r="{radius}"><title>{title}</title></circle>"#,
            key = esc(&r.key),
            prov = provider_class(r.best.provider),
            front = if on_front { " front" } else { "" },
            picked = if is_picked { " picked" } else { "" },
            cx = x.map(pts[i].0),
            cy = y.map(pts[i].1),
            title = esc(&title),
        );
    }
    h
}

/// Axes with grid lines, tick labels and the two axis titles.
pub fn axes(x: Scale, y: Scale, x_label: &str, y_label: &str, x_fmt: fn(f64) -> String) -> String {
    let mut h = String::with_capacity(2048);
    let _ = write!(
        h,
        r#"<g class="axis"><line x1="{ML}" y1="{b}" x2="{r}" y2="{b}"></line><line x1="{ML}" y1="{MT}" x2="{ML}" y2="{b}"></line>"#,
        b = H - MB,
        r = W - MR,
    );
    for v in x.ticks(6) {
        let px = x.map(v);
        let _ = write!(
            h,
            r#"<line class="grid" x1="{px:.1}" y1="{MT}" x2="{px:.1}" y2="{b}"></line><text x="{px:.1}" y="{ty}" text-anchor="middle">{label}</text>"#,
            b = H - MB,
            ty = H - MB + 14.0,
            label = esc(&x_fmt(v)),
        );
    }
    for v in y.ticks(5) {
        let py = y.map(v);
        let _ = write!(
            h,
            r#"<line class="grid" x1="{ML}" y1="{py:.1}" x2="{r}" y2="{py:.1}"></line><text x="{tx}" y="{ty:.1}" text-anchor="end">{label}</text>"#,
            r = W - MR,
            tx = ML - 4.0,
            ty = py + 4.0,
            label = esc(&chart::tick_label(v)),
        );
    }
    let mid_y = (MT + H - MB) / 2.0;
    let _ = write!(
        h,
        r#"<text class="label" x="{mx}" y="{ly}" text-anchor="middle">{xl}</text><text class="label" x="12" y="{mid_y}" text-anchor="middle" transform="rotate(-90 12 {mid_y})">{yl}</text></g>"#,
        mx = (ML + W - MR) / 2.0,
        ly = H - 6.0,
        xl = esc(x_label),
        yl = esc(y_label),
    );
    h
}

/// The cost-vs-time chart's content: axes, the cheap-and-fast frontier and one dot per row. Empty
/// without rows.
pub fn cost_time_svg(rows: &[Row], lang: Lang, picked: Option<&str>) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let pts: Vec<(f64, f64)> = rows.iter().map(|r| (r.best.hours_high, r.best.cost_high)).collect();
    let (x0, x1) = pts.iter().fold((f64::INFINITY, 0f64), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (y0, y1) = pts.iter().fold((f64::INFINITY, 0f64), |(a, b), p| (a.min(p.1), b.max(p.1)));
    let x = Scale::log((x0 * 0.8, x1 * 1.25), (ML, W - MR));
    let y = Scale::log((y0 * 0.8, y1 * 1.25), (H - MB, MT));
    let front = chart::frontier(&pts);
    let line =
        chart::polyline(&front.iter().map(|&i| (x.map(pts[i].0), y.map(pts[i].1))).collect::<Vec<_>>());
    let mut h = axes(x, y, i18n::AXIS_HOURS.get(lang), i18n::AXIS_COST.get(lang), chart::tick_label);
    let _ = write!(h, r#"<path class="frontier" d="{line}"></path><g>"#);
    h.push_str(&cost_time_dots(rows, &pts, &front, x, y, lang, picked));
    h.push_str("</g>");
    h
}

/// The billing-modes chart's axes and one line per mode (cost against days of use). The job marker
/// is drawn apart: it moves as you type while these lines mostly stay.
pub fn modes_svg(series: &[(BillingMode, Vec<(f64, f64)>)], x: Scale, y: Scale, lang: Lang) -> String {
    let mut h = axes(x, y, i18n::AXIS_DAYS.get(lang), i18n::AXIS_COST.get(lang), |v| format!("{v:.0}"));
    for (m, pts) in series {
        let screen: Vec<(f64, f64)> = pts.iter().map(|p| (x.map(p.0), y.map(p.1))).collect();
        let _ = write!(
            h,
            r#"<path class="series m-{mode}" d="{d}"><title>{name}</title></path>"#,
            mode = m.as_str(),
            d = chart::polyline(&chart::simplify(&screen, 0.25)),
            name = esc(i18n::mode_name(*m, lang)),
        );
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::evaluate;
    use crate::query::Inputs;
    use gpuctl_core::{parse_date, Catalog};

    #[test]
    fn escaping() {
        assert_eq!(
            esc(r#"<script>alert("x&y")</script>'"#),
            "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;&#39;"
        );
        assert_eq!(esc("¥ 腾讯云"), "¥ 腾讯云");
    }

    /// Issue 14: a cluster's row says how many nodes it rents, how they share the work, and that its
    /// hourly price is one node's (its costs are the whole cluster's).
    #[test]
    fn cluster_rows_say_nodes_and_network() {
        let inputs = Inputs {
            model: "qwen2.5-72b".into(),
            tokens: "500M".into(),
            epochs: "1".into(),
            ..Default::default()
        };
        let ev = evaluate(Catalog::shipped(), &inputs, parse_date("2026-11-30").unwrap());
        let clusters: Vec<Row> = ev.rows.iter().filter(|r| r.best.nodes > 1).take(3).cloned().collect();
        assert!(!clusters.is_empty(), "a 72B LoRA lists multi-node offers");
        let en = offer_rows(&clusters, Lang::En, None);
        assert_eq!(en.matches(r#"data-testid="cluster""#).count(), clusters.len(), "{en}");
        assert!(
            en.contains(&format!("{} nodes × ", clusters[0].best.nodes)) && en.contains("per node"),
            "{en}"
        );
        assert!(en.contains("Gbit/s between nodes"), "{en}");
        let zh = offer_rows(&clusters, Lang::Zh, None);
        assert!(zh.contains("个节点 × ") && zh.contains("每节点") && zh.contains("节点间"), "{zh}");
        assert!(ev.assumptions.iter().any(|a| matches!(a, gpuctl_core::Assumption::Clusters { .. })));
        let single: Vec<Row> = ev.rows.iter().filter(|r| r.best.nodes == 1).take(2).cloned().collect();
        assert!(!offer_rows(&single, Lang::En, None).contains("data-testid=\"cluster\""));
    }

    #[test]
    fn rows_carry_keys_marks_and_no_raw_markup() {
        let ev = evaluate(Catalog::shipped(), &Inputs::default(), parse_date("2026-11-30").unwrap());
        let mut rows = ev.rows[..3].to_vec();
        // A hostile string from a user overlay stays text.
        rows[1].warnings.push(gpuctl_core::Warning::NoBf16 { gpu: "<img src=x onerror=alert(1)>".into() });
        let h = offer_rows(&rows, Lang::En, Some(&rows[2].key));
        assert_eq!(h.matches(r#"data-testid="offer-row""#).count(), 3);
        assert_eq!(h.matches(" picked\"").count(), 1);
        assert_eq!(h.matches("class=\"num cheapest\"").count(), 3, "one cheapest mode per row");
        assert!(h.contains("&lt;img src=x onerror=alert(1)&gt;") && !h.contains("<img"));
        for r in &rows {
            assert!(h.contains(&format!("data-key=\"{}\"", esc(&r.key))));
        }
        let zh = offer_rows(&rows, Lang::Zh, None);
        assert!(zh.contains("天前") && !zh.contains("CN¥"));
        // Warnings are worded in the page's language.
        assert!(h.contains("price is an estimate") && !zh.contains("price is an estimate"), "{zh}");
        assert!(zh.contains("价格为估算值"), "{zh}");
    }

    /// A warning shared by rows is written out once (the notes list) and marked on each row with its
    /// number, its text on hover.
    #[test]
    fn repeated_warnings_are_numbered_marks() {
        let ev = evaluate(Catalog::shipped(), &Inputs::default(), parse_date("2026-11-30").unwrap());
        let mut rows = ev.rows[..4].to_vec();
        for r in &mut rows {
            r.warnings = vec![gpuctl_core::Warning::EstimatedPrice];
        }
        rows[2].warnings.push(gpuctl_core::Warning::SpotReclaim);
        let notes = row_notes(&rows);
        assert_eq!(notes, [&gpuctl_core::Warning::EstimatedPrice, &gpuctl_core::Warning::SpotReclaim]);
        let h = offer_rows(&rows, Lang::En, None);
        let estimate = gpuctl_core::Warning::EstimatedPrice.to_string();
        assert_eq!(
            h.matches(&format!(r#"<b class="wmark" title="{}">1</b>"#, esc(&estimate))).count(),
            4,
            "{h}"
        );
        assert_eq!(h.matches(r#"<b class="wmark""#).count(), 5);
        assert!(h.contains(">2</b>"));
        let list = row_notes_list(&rows, Lang::Zh);
        assert_eq!(list.matches("<li").count(), 2);
        assert!(list.starts_with(r#"<li value="1">价格为估算值"#), "{list}");
    }

    #[test]
    fn charts_are_one_string_each() {
        let ev = evaluate(Catalog::shipped(), &Inputs::default(), parse_date("2026-11-30").unwrap());
        let svg = cost_time_svg(&ev.rows, Lang::En, Some(&ev.rows[1].key));
        assert_eq!(svg.matches("<circle").count(), ev.rows.len());
        assert_eq!(svg.matches(" picked\"").count(), 1);
        assert_eq!(svg.matches("<path class=\"frontier\"").count(), 1);
        assert!(svg.contains("hours") && svg.starts_with("<g class=\"axis\">"), "{}", &svg[..200]);
        assert_eq!(cost_time_svg(&[], Lang::En, None), "");
        // The modes chart: one path per mode, each a handful of points rather than one per day.
        let series = calc::modes_over_days(Catalog::shipped(), &ev.rows[0], 8.0, 400);
        let x = Scale::linear((0.0, 400.0), (ML, W - MR));
        let y = Scale::log((1.0, 1e6), (H - MB, MT));
        let zh = modes_svg(&series, x, y, Lang::Zh);
        assert_eq!(zh.matches("<path class=\"series m-").count(), series.len());
        assert!(zh.contains("按量计费") && zh.contains("天"), "{zh}");
        let points = zh.matches(" L").count();
        assert!(points < series.len() * 100, "{points} segments for {} modes", series.len());
    }
}
