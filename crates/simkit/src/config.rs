//! The sim's config file (`gpuctl sim --config sim.toml`): seed, accepted key pairs and knobs.
//!
//! ```toml
//! seed = 7
//! [[credentials]]
//! provider = "tencent"
//! access_key = "AKID..."
//! secret = "..."
//! [knobs]
//! boot_seconds = 10
//! [[knobs.stock_outs]]
//! provider = "tencent"
//! instance_type = "GN7.2XLARGE32"
//! zone = "ap-guangzhou-3"
//! [[knobs.stock_outs]]          # 2 more instances, then sold out (JD: partial success)
//! provider = "jdcloud"
//! zone = "cn-north-1a"
//! available = 2
//! [[knobs.discounts]]           # the account pays 20% under list price (JD discountedTotalPrice)
//! provider = "jdcloud"
//! percent = 20
//! ```

use std::path::Path;

use serde::Deserialize;

use crate::creds::KeyPair;
use crate::knobs::Knobs;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Seeds the RNG behind ids, request ids and probabilistic faults: same seed, same ids.
    #[serde(default)]
    pub seed: u64,
    /// Accepted key pairs. Empty → the documented test pairs.
    #[serde(default)]
    pub credentials: Vec<KeyPair>,
    /// The `[knobs]` table: latency, boot time, rate limits, stock-outs, faults.
    #[serde(default)]
    pub knobs: Knobs,
}

/// A config file that could not be read or parsed; the message carries `file:line:column`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(String);

impl SimConfig {
    pub fn parse(text: &str, origin: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|span| {
                    let before = &text[..span.start.min(text.len())];
                    let line = before.matches('\n').count() + 1;
                    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                    format!(":{line}:{col}")
                })
                .unwrap_or_default();
            ConfigError(format!("{origin}{at}: {}", e.message()))
        })
    }

    /// The most a sim config file may hold: knobs and seeded accounts are a few KiB; the bound keeps
    /// `--config /dev/zero` (or a FIFO) from hanging the sim at start-up.
    pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = gpuctl_sign::file::read_string_bounded(path, Self::MAX_CONFIG_BYTES).map_err(|e| {
            ConfigError(format!("{}: cannot read sim config: {}", path.display(), e.reason()))
        })?;
        Self::parse(&text, &path.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Provider;

    #[test]
    fn a_discount_must_be_a_percentage_off() {
        let c = SimConfig::parse("[[knobs.discounts]]\nprovider = \"jdcloud\"\npercent = 20\n", "s.toml")
            .unwrap();
        assert_eq!(c.knobs.price_factor(Provider::JdCloud, "g.n2.xlarge"), 0.8);
        assert_eq!(c.knobs.price_factor(Provider::Tencent, "GN7.2XLARGE32"), 1.0);
        let e = SimConfig::parse("[[knobs.discounts]]\npercent = 120\n", "s.toml").unwrap_err().to_string();
        assert!(e.starts_with("s.toml:2:") && e.contains("between 0 and 100"), "{e}");
    }

    #[test]
    fn errors_point_at_line_and_column() {
        let err = SimConfig::parse("seed = 1\n[knobs]\nboot_seconds = \"soon\"\n", "sim.toml").unwrap_err();
        assert!(err.to_string().starts_with("sim.toml:3:16: "), "{err}");
        let err = SimConfig::parse("sede = 1\n", "sim.toml").unwrap_err();
        assert!(err.to_string().contains("sede"), "{err}");
    }

    #[test]
    fn a_misspelled_provider_is_refused_with_the_allowed_names_not_left_to_match_nothing() {
        // Before the clouds were one enum, `provider = "tencnet"` parsed and the knob silently never fired.
        let e = SimConfig::parse("[[knobs.stock_outs]]\nprovider = \"tencnet\"\n", "s.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.toml:2:"), "{e}");
        assert!(e.contains("tencnet") && e.contains("tencent") && e.contains("jdcloud"), "{e}");
        let e = SimConfig::parse(
            "[[credentials]]\nprovider = \"aws\"\naccess_key = \"A\"\nsecret = \"S\"\n",
            "s.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("s.toml:2:") && e.contains("alibaba"), "{e}");
    }

    #[test]
    fn credentials_and_knobs() {
        let c = SimConfig::parse(
            "seed = 9\n[[credentials]]\nprovider = \"tencent\"\naccess_key = \"AK\"\nsecret = \"SK\"\n",
            "x",
        )
        .unwrap();
        assert_eq!(c.seed, 9);
        assert_eq!(c.credentials[0].secret.expose(), "SK");
        assert!(!format!("{c:?}").contains("\"SK\""));
    }
}
