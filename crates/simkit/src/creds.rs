//! The access keys the local cloud accepts, per provider. Without a config file it accepts one
//! documented test pair per provider (README "Local cloud"); with one, exactly the configured pairs.

use serde::Deserialize;

use crate::Provider;

/// A secret key: gpuctl-sign's `Secret` (prints as `******`). Deserialised from a plain string.
pub type SecretKey = gpuctl_sign::Secret;

fn secret_from_str<'de, D: serde::Deserializer<'de>>(d: D) -> Result<SecretKey, D::Error> {
    String::deserialize(d).map(SecretKey::new)
}

/// One accepted key pair. A config file names its `provider` as users do (`tencent`, `alibaba`,
/// `jdcloud`); any other name is refused when the file is read, with the allowed ones.
#[derive(Clone, Debug, Deserialize)]
pub struct KeyPair {
    pub provider: Provider,
    pub access_key: String,
    #[serde(deserialize_with = "secret_from_str")]
    pub secret: SecretKey,
}

/// The documented test pairs: (provider, access key, secret). Public on purpose — they only open
/// the local cloud. Real clouds reject them.
pub const TEST_KEY_PAIRS: &[(Provider, &str, &str)] = &[
    (Provider::Tencent, "AKIDgpuctlSimTencentTestKey000000000", "gpuctlSimTencentTestSecret000000"),
    (Provider::Alibaba, "LTAI5gpuctlSimAlibabaTest", "gpuctlSimAlibabaTestSecret0000"),
    (Provider::JdCloud, "JDCgpuctlSimJdcloudTestKey000000", "gpuctlSimJdcloudTestSecret000000"),
];

#[derive(Clone, Debug)]
pub struct Credentials {
    pairs: Vec<KeyPair>,
}

impl Default for Credentials {
    /// The documented test pairs.
    fn default() -> Self {
        Self {
            pairs: TEST_KEY_PAIRS
                .iter()
                .map(|(p, ak, sk)| KeyPair {
                    provider: *p,
                    access_key: (*ak).into(),
                    secret: SecretKey::new(*sk),
                })
                .collect(),
        }
    }
}

impl Credentials {
    pub fn from_pairs(pairs: Vec<KeyPair>) -> Self {
        Self { pairs }
    }

    /// The secret for `access_key` at `provider`, if the sim accepts that key there.
    pub fn secret(&self, provider: Provider, access_key: &str) -> Option<&SecretKey> {
        self.pairs.iter().find(|p| p.provider == provider && p.access_key == access_key).map(|p| &p.secret)
    }

    /// The accepted access keys per provider (for start-up output; secrets are printed only for the
    /// documented test pairs, by the caller).
    pub fn pairs(&self) -> &[KeyPair] {
        &self.pairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let creds = Credentials::default();
        let shown = format!("{creds:?}");
        for (_, _, sk) in TEST_KEY_PAIRS {
            assert!(!shown.contains(sk), "secret leaked in Debug: {shown}");
        }
        assert!(shown.contains("******"));
        assert!(creds.secret(Provider::Tencent, TEST_KEY_PAIRS[0].1).is_some());
        assert!(creds.secret(Provider::Alibaba, TEST_KEY_PAIRS[0].1).is_none());
    }
}
