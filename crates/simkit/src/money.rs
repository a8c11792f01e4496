//! Money as the clouds' price answers show it.

/// Round an amount to cents (two decimals), as Tencent's, ECS's and JD's price fields are given.
/// Half-way cases round away from zero (`f64::round`).
pub fn round_cents(amount: f64) -> f64 {
    (amount * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cents() {
        assert_eq!(round_cents(1.234), 1.23);
        assert_eq!(round_cents(1.235_000_1), 1.24);
        assert_eq!(round_cents(10.0 * 3.0), 30.0);
        assert_eq!(round_cents(-0.004), -0.0);
    }
}
