//! Geometry for the page's inline SVG charts: scales, "nice" ticks, polylines and the cheap-and-fast
//! frontier. Pure (tested natively); the components in `view` only place what this computes.

/// The charts' frame in viewBox units: width, height and the margins the axes sit in.
pub const W: f64 = 520.0;
pub const H: f64 = 280.0;
pub const ML: f64 = 56.0;
pub const MR: f64 = 12.0;
pub const MT: f64 = 12.0;
pub const MB: f64 = 40.0;

/// A linear or logarithmic map from a data interval onto a pixel interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub domain: (f64, f64),
    pub range: (f64, f64),
    pub log: bool,
}

impl Scale {
    pub fn linear(domain: (f64, f64), range: (f64, f64)) -> Self {
        Scale { domain: widen(domain), range, log: false }
    }

    /// Log scale; the domain must be positive (costs and hours are).
    pub fn log(domain: (f64, f64), range: (f64, f64)) -> Self {
        let lo = domain.0.max(f64::MIN_POSITIVE);
        let hi = domain.1.max(lo);
        let (lo, hi) = if hi / lo < 1.0001 { (lo / 2.0, hi * 2.0) } else { (lo, hi) };
        Scale { domain: (lo, hi), range, log: true }
    }

    pub fn map(&self, v: f64) -> f64 {
        let (d0, d1) = self.domain;
        let t = if self.log {
            (v.max(f64::MIN_POSITIVE).ln() - d0.ln()) / (d1.ln() - d0.ln())
        } else {
            (v - d0) / (d1 - d0)
        };
        self.range.0 + t * (self.range.1 - self.range.0)
    }

    /// Tick values across the domain: 1-2-5 steps on a linear scale, powers of ten (with 2 and 5
    /// between when the domain spans little) on a log scale.
    pub fn ticks(&self, target: usize) -> Vec<f64> {
        let (d0, d1) = self.domain;
        if self.log {
            let (e0, e1) = (d0.log10().floor() as i32, d1.log10().ceil() as i32);
            let mults: &[f64] = if e1 - e0 <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
            let mut out = Vec::new();
            for e in e0..=e1 {
                for m in mults {
                    let v = m * 10f64.powi(e);
                    if v >= d0 * 0.999_999 && v <= d1 * 1.000_001 {
                        out.push(v);
                    }
                }
            }
            return out;
        }
        let step = nice_step((d1 - d0) / target.max(1) as f64);
        let first = (d0 / step).ceil() as i64;
        let last = (d1 / step).floor() as i64;
        (first..=last).map(|i| i as f64 * step).collect()
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
pub fn nice_step(raw: f64) -> f64 {
    // NaN is not finite, so this also turns NaN away.
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let nice = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * p
}

/// A degenerate interval (one offer, one price) still needs width to draw.
fn widen((lo, hi): (f64, f64)) -> (f64, f64) {
    if (hi - lo).abs() < 1e-9 {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - pad, hi + pad)
    } else {
        (lo, hi)
    }
}

/// Indices of the points no other point beats on both axes (lower x AND lower y): the offers that
/// are cheapest for their speed. Sorted by x. Ties on x keep the lowest y only.
pub fn frontier(points: &[(f64, f64)]) -> Vec<usize> {
    let mut order: Vec<usize> =
        (0..points.len()).filter(|&i| points[i].0.is_finite() && points[i].1.is_finite()).collect();
    order.sort_by(|&a, &b| points[a].0.total_cmp(&points[b].0).then(points[a].1.total_cmp(&points[b].1)));
    let mut out = Vec::new();
    let mut best_y = f64::INFINITY;
    for i in order {
        if points[i].1 < best_y {
            best_y = points[i].1;
            out.push(i);
        }
    }
    out
}

/// SVG path data through the points, in order: `M x y L x y …`, one decimal (sub-pixel is enough).
pub fn polyline(points: &[(f64, f64)]) -> String {
    let mut d = String::new();
    for (i, (x, y)) in points.iter().enumerate() {
        if i > 0 {
            d.push(' ');
        }
        d.push_str(&format!("{}{:.1} {:.1}", if i == 0 { "M" } else { "L" }, x, y));
    }
    d
}

/// The points a polyline needs to look the same: each point that lies within `tolerance` (px) of the
/// straight line from the last kept point to the next candidate, together with every point skipped
/// since, is dropped. Straight runs and the flat steps of term billing then cost two points each,
/// not one per day (the billing-modes chart draws 400 days per mode on every re-rank).
pub fn simplify(points: &[(f64, f64)], tolerance: f64) -> Vec<(f64, f64)> {
    let Some(&first) = points.first() else { return vec![] };
    let off_line = |a: (f64, f64), b: (f64, f64), p: (f64, f64)| {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let len = (dx * dx + dy * dy).sqrt();
        if len == 0.0 {
            ((p.0 - a.0).powi(2) + (p.1 - a.1).powi(2)).sqrt()
        } else {
            ((p.0 - a.0) * dy - (p.1 - a.1) * dx).abs() / len
        }
    };
    let mut out = vec![first];
    let mut anchor = 0;
    for i in 1..points.len() {
        let end = points[i];
        let straight = points[anchor + 1..i].iter().all(|&p| off_line(points[anchor], end, p) <= tolerance);
        if !straight {
            anchor = i - 1;
            out.push(points[anchor]);
        }
    }
    if points.len() > 1 {
        out.push(points[points.len() - 1]);
    }
    out
}

/// A short axis label: `1200` → `1.2k`, `3000000` → `3M`, `0.5` → `0.5`.
pub fn tick_label(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.1}", v / 1e6)))
    } else if a >= 1e3 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else {
        trim(format!("{v:.2}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontier_keeps_only_unbeaten_points() {
        let check = |pts: &[(f64, f64)], expected: &[usize]| assert_eq!(frontier(pts), expected, "{pts:?}");
        check(&[], &[]);
        check(&[(1.0, 1.0)], &[0]);
        // (hours, cost): 0 is fastest; 2 is slower but cheaper; 1 is slower than 0 and dearer than 2.
        check(&[(1.0, 10.0), (2.0, 12.0), (3.0, 5.0), (4.0, 5.0)], &[0, 2]);
        // equal x: only the cheaper one
        check(&[(2.0, 9.0), (2.0, 3.0)], &[1]);
        check(&[(1.0, f64::NAN), (2.0, 1.0)], &[1]);
    }

    #[test]
    fn scales_map_ends_to_ends() {
        let s = Scale::linear((0.0, 10.0), (0.0, 100.0));
        assert_eq!((s.map(0.0), s.map(5.0), s.map(10.0)), (0.0, 50.0, 100.0));
        let inv = Scale::linear((0.0, 10.0), (100.0, 0.0));
        assert_eq!(inv.map(2.0), 80.0);
        let l = Scale::log((1.0, 100.0), (0.0, 200.0));
        assert!((l.map(10.0) - 100.0).abs() < 1e-9);
        // one point still gets a drawable domain
        let one = Scale::linear((5.0, 5.0), (0.0, 1.0));
        assert!(one.domain.0 < 5.0 && one.domain.1 > 5.0);
    }

    #[test]
    fn ticks_are_nice() {
        assert_eq!(
            Scale::linear((0.0, 100.0), (0.0, 1.0)).ticks(5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(Scale::linear((3.0, 17.0), (0.0, 1.0)).ticks(3), vec![5.0, 10.0, 15.0]);
        assert_eq!(Scale::log((1.0, 1000.0), (0.0, 1.0)).ticks(5), vec![1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(Scale::log((3.0, 40.0), (0.0, 1.0)).ticks(5), vec![5.0, 10.0, 20.0]);
        assert_eq!(nice_step(0.0), 1.0);
        assert_eq!(nice_step(23.0), 50.0);
    }

    #[test]
    fn simplified_lines_keep_their_shape() {
        let check =
            |pts: &[(f64, f64)], expected: &[(f64, f64)]| assert_eq!(simplify(pts, 0.1), expected, "{pts:?}");
        check(&[], &[]);
        check(&[(1.0, 1.0)], &[(1.0, 1.0)]);
        // a straight line of 400 points: its ends
        let line: Vec<(f64, f64)> = (0..400).map(|i| (i as f64, 2.0 * i as f64)).collect();
        check(&line, &[(0.0, 0.0), (399.0, 798.0)]);
        // a step (flat, jump, flat) keeps its corners
        check(
            &[(0.0, 5.0), (1.0, 5.0), (2.0, 5.0), (2.0, 9.0), (3.0, 9.0), (4.0, 9.0)],
            &[(0.0, 5.0), (2.0, 5.0), (2.0, 9.0), (4.0, 9.0)],
        );
        // a slow curve is not flattened: every dropped point stays within the tolerance
        let curve: Vec<(f64, f64)> = (0..100).map(|i| (i as f64, (i as f64 / 10.0).powi(2))).collect();
        let kept = simplify(&curve, 0.1);
        assert!(kept.len() < curve.len() && kept.len() > 5, "{}", kept.len());
        for p in &curve {
            let seg = kept.windows(2).find(|w| w[0].0 <= p.0 && p.0 <= w[1].0).unwrap();
            let t = (p.0 - seg[0].0) / (seg[1].0 - seg[0].0);
            let y = seg[0].1 + t * (seg[1].1 - seg[0].1);
            assert!((y - p.1).abs() < 0.25, "{p:?} drawn at {y}");
        }
    }

    #[test]
    fn paths_and_labels() {
        assert_eq!(polyline(&[(0.0, 1.0), (2.26, 3.0)]), "M0.0 1.0 L2.3 3.0");
        assert_eq!(polyline(&[]), "");
        let check = |v, expected: &str| assert_eq!(tick_label(v), expected);
        check(1200.0, "1.2k");
        check(3_000_000.0, "3M");
        check(0.5, "0.5");
        check(20.0, "20");
    }
}
