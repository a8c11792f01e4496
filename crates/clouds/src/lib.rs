//! The clouds gpuctl knows, named once.
//!
//! Before this crate each layer spelled the three clouds its own way — the cost engine's `Provider`,
//! the signer's `credentials::Cloud`, the emulators' `"tencent"` strings, the spec parser's name list
//! and the sim's own mapping — so a fourth cloud meant five edits and a knob naming `"tencnet"`
//! silently matched nothing. Every crate now takes this enum; the names users type (files, flags,
//! `--json`, knob files, credentials tables) are [`Provider::as_str`], and [`Provider::from_name`]
//! also accepts the common aliases (`aliyun`, `qcloud`, `jd`…).
//!
//! It depends on serde and borsh only, so the signer and the browser build stay small: borsh is how
//! the engine's build-time catalog stores a provider (one byte, the variant's index in [`Provider::ALL`]).

use std::fmt;
use std::io;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A cloud gpuctl prices, signs for, provisions on and emulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Tencent,
    Alibaba,
    #[serde(rename = "jdcloud")]
    JdCloud,
}

impl Provider {
    /// Every cloud, in the order gpuctl lists them.
    pub const ALL: [Provider; 3] = [Provider::Tencent, Provider::Alibaba, Provider::JdCloud];

    /// The names of [`Provider::ALL`], in its order, for error messages that list the allowed values.
    pub const NAMES: [&'static str; 3] =
        [Provider::Tencent.as_str(), Provider::Alibaba.as_str(), Provider::JdCloud.as_str()];

    /// The name used in files, flags, knob files, credentials tables and `--json`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Provider::Tencent => "tencent",
            Provider::Alibaba => "alibaba",
            Provider::JdCloud => "jdcloud",
        }
    }

    /// A cloud by its name or a common alias, any case (`aliyun`, `qcloud`, `jd`…).
    pub fn from_name(s: &str) -> Option<Provider> {
        match s.to_ascii_lowercase().as_str() {
            "tencent" | "tencentcloud" | "qcloud" | "tc" => Some(Provider::Tencent),
            "alibaba" | "aliyun" | "alibabacloud" | "ali" => Some(Provider::Alibaba),
            "jdcloud" | "jd" | "jdcloudcom" => Some(Provider::JdCloud),
            _ => None,
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is none of the clouds; its message lists the ones there are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProvider(pub String);

impl fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown provider `{}`; one of: {}", self.0, Provider::NAMES.join(", "))
    }
}

impl std::error::Error for UnknownProvider {}

impl FromStr for Provider {
    type Err = UnknownProvider;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Provider::from_name(s).ok_or_else(|| UnknownProvider(s.to_string()))
    }
}

impl borsh::BorshSerialize for Provider {
    fn serialize<W: io::Write>(&self, w: &mut W) -> io::Result<()> {
        let i = Provider::ALL.iter().position(|p| p == self).expect("ALL lists every variant") as u8;
        borsh::BorshSerialize::serialize(&i, w)
    }
}

impl borsh::BorshDeserialize for Provider {
    fn deserialize_reader<R: io::Read>(r: &mut R) -> io::Result<Self> {
        let i = u8::deserialize_reader(r)?;
        Provider::ALL.get(usize::from(i)).copied().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("provider index {i} is none of the clouds"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips_through_text_serde_and_borsh() {
        for p in Provider::ALL {
            assert_eq!(p.as_str().parse::<Provider>(), Ok(p));
            assert_eq!(p.to_string(), p.as_str());
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.as_str()), "serde writes the same name users type");
            assert_eq!(serde_json::from_str::<Provider>(&json).unwrap(), p);
            let bin = borsh::to_vec(&p).unwrap();
            assert_eq!(borsh::from_slice::<Provider>(&bin).unwrap(), p);
        }
    }

    #[test]
    fn aliases_and_case_are_accepted_and_strangers_named_with_the_allowed_values() {
        assert_eq!(Provider::from_name("Aliyun"), Some(Provider::Alibaba));
        assert_eq!(Provider::from_name("QCLOUD"), Some(Provider::Tencent));
        assert_eq!(Provider::from_name("jd"), Some(Provider::JdCloud));
        let e = "tencnet".parse::<Provider>().unwrap_err();
        assert_eq!(e.to_string(), "unknown provider `tencnet`; one of: tencent, alibaba, jdcloud");
        assert!(
            serde_json::from_str::<Provider>("\"aws\"").is_err(),
            "serde takes only the names, not aliases"
        );
        assert!(borsh::from_slice::<Provider>(&[3]).is_err(), "an index past ALL is refused, not wrapped");
    }
}
