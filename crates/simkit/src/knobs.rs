//! The knobs that make the local cloud misbehave on purpose: latency, per-API rate limits, stock-outs
//! and injected faults. They come from the config file / flags and can be replaced at runtime through
//! the sim's `/_sim/knobs` and `/_sim/faults` endpoints, so a test can script "the next RunInstances
//! is answered and then the connection drops".
//!
//! A pattern field (`provider`, `action`, `instance_type`, `zone`) that is absent matches anything.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Provider;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Knobs {
    /// Added to every call, in milliseconds (the sim sleeps in real time).
    #[serde(default)]
    pub latency_ms: u64,
    /// Per provider/API latency overrides; the first match wins over `latency_ms`.
    #[serde(default)]
    pub latency: Vec<Latency>,
    /// Sim-clock seconds an instance spends booting (e.g. Tencent PENDING) before it runs.
    #[serde(default = "default_boot_seconds")]
    pub boot_seconds: u64,
    #[serde(default)]
    pub rate_limits: Vec<RateLimit>,
    #[serde(default)]
    pub stock_outs: Vec<StockOut>,
    #[serde(default)]
    pub faults: Vec<FaultRule>,
    /// An account's discount off the catalog price, as a cloud's price query reports it (JD
    /// calculateTotalPrice `discountedTotalPrice` beside `totalPrice`); the first match wins. Without
    /// one, the discounted price is the catalog price: the local cloud never invents a discount.
    #[serde(default)]
    pub discounts: Vec<Discount>,
    /// Zones where the account has no default network (Alibaba: no default vSwitch there, as an
    /// account whose default vSwitch was deleted, or that never used the zone, has none), so a
    /// create that relies on it can be refused at the client. A rule without `zone` matches every zone.
    #[serde(default)]
    pub no_default_network: Vec<ZoneRule>,
    /// Instance families a low-latency placement does not take (Alibaba: left out of
    /// DescribeDeploymentSetSupportedInstanceTypeFamily `Strategy=LowLatency` and refused by a
    /// LowLatency deployment set). The clouds publish no per-family list, so the local cloud takes
    /// every GPU family it sells unless a rule here drops one (`family` as the API spells it,
    /// `ecs.gn7i`; a rule without it drops every family).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_low_latency: Vec<FamilyRule>,
    /// Sim-clock seconds after a billing hour ends before its line appears on the bill (issue 15,
    /// `bill.rs`). *Assumption:* no cloud documents its settlement lag; one day is the default.
    #[serde(default = "default_bill_lag_seconds")]
    pub bill_lag_seconds: u64,
}

/// An instance family of a provider (each field absent matches anything).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FamilyRule {
    pub provider: Option<Provider>,
    pub family: Option<String>,
}

impl FamilyRule {
    pub fn matches(&self, provider: Provider, family: &str) -> bool {
        matches(&self.provider, &provider) && matches(&self.family, family)
    }
}

/// A zone of a provider (each field absent matches anything).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ZoneRule {
    pub provider: Option<Provider>,
    pub zone: Option<String>,
}

impl ZoneRule {
    pub fn matches(&self, provider: Provider, zone: &str) -> bool {
        matches(&self.provider, &provider) && matches(&self.zone, zone)
    }
}

/// `percent` off the list price of what the rule matches (0 < percent < 100).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Discount {
    pub provider: Option<Provider>,
    pub instance_type: Option<String>,
    #[serde(deserialize_with = "percent_off")]
    pub percent: f64,
}

/// A discount is strictly between 0 and 100 percent: a config that says otherwise is refused where it
/// says it (the config's file:line:column), not clamped into a free or a dearer instance.
fn percent_off<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let p = f64::deserialize(d)?;
    if p > 0.0 && p < 100.0 {
        Ok(p)
    } else {
        Err(serde::de::Error::custom(format!(
            "discount percent must be between 0 and 100 (exclusive), got {p}"
        )))
    }
}

impl Knobs {
    /// The fraction of the list price an account pays for `instance_type` (1.0 without a discount).
    pub fn price_factor(&self, provider: Provider, instance_type: &str) -> f64 {
        self.discounts
            .iter()
            .find(|d| matches(&d.provider, &provider) && matches(&d.instance_type, instance_type))
            .map(|d| 1.0 - d.percent / 100.0)
            .unwrap_or(1.0)
    }
}

fn default_boot_seconds() -> u64 {
    3
}

fn default_bill_lag_seconds() -> u64 {
    86_400
}

impl Default for Knobs {
    fn default() -> Self {
        Self {
            latency_ms: 0,
            latency: Vec::new(),
            boot_seconds: default_boot_seconds(),
            rate_limits: Vec::new(),
            stock_outs: Vec::new(),
            faults: Vec::new(),
            discounts: Vec::new(),
            no_default_network: Vec::new(),
            no_low_latency: Vec::new(),
            bill_lag_seconds: default_bill_lag_seconds(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    pub provider: Option<Provider>,
    pub action: Option<String>,
    pub ms: u64,
}

/// A token bucket per (provider, API) that the rule matches, filled on the sim clock.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    pub provider: Option<Provider>,
    pub action: Option<String>,
    /// Sustained calls per second.
    pub per_second: f64,
    /// Calls allowed at once after a quiet spell; defaults to `per_second` (at least 1).
    pub burst: Option<f64>,
}

impl RateLimit {
    pub fn capacity(&self) -> f64 {
        self.burst.unwrap_or(self.per_second).max(1.0)
    }
}

/// "This instance type is sold out in this zone": create calls answer the cloud's sold-out error and
/// stock queries report it. With `available = N`, N more instances can be made first (the knob counts
/// them down, as `count` does for faults); after that Tencent and Alibaba refuse creates as sold out,
/// and JD accepts them but the instances go `error` and are deleted — JD's documented partial success
/// of createInstances (a maxCount > N call gets N instances that run and the rest that fail).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StockOut {
    pub provider: Option<Provider>,
    pub instance_type: Option<String>,
    pub zone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<u32>,
}

/// One injected fault. With `count`, it fires on the next `count` matching calls and is then spent;
/// with `probability`, each matching call draws from the seeded RNG; with both, at most `count` times;
/// with neither, on every matching call.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultRule {
    pub provider: Option<Provider>,
    pub action: Option<String>,
    pub kind: FaultKind,
    /// HTTP status of a `server_error` (default 503).
    pub status: Option<u16>,
    /// How long a `timeout` holds the connection (default 30 s, real time).
    pub seconds: Option<u64>,
    pub count: Option<u32>,
    pub probability: Option<f64>,
}

impl FaultRule {
    /// A rule that fires on the next `count` calls of `action` at `provider`.
    pub fn next(provider: Option<Provider>, action: Option<&str>, kind: FaultKind, count: u32) -> Self {
        Self {
            provider,
            action: action.map(str::to_string),
            kind,
            status: None,
            seconds: None,
            count: Some(count),
            probability: None,
        }
    }

    pub fn fault(&self) -> Fault {
        match self.kind {
            FaultKind::ServerError => Fault::ServerError { status: self.status.unwrap_or(503) },
            FaultKind::Reset => Fault::Reset,
            FaultKind::Timeout => Fault::Timeout { after: Duration::from_secs(self.seconds.unwrap_or(30)) },
            FaultKind::SuccessThenDrop => Fault::SuccessThenDrop,
        }
    }
}

/// The kinds of injected faults, as named in config and admin requests.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    ServerError,
    Reset,
    Timeout,
    SuccessThenDrop,
}

/// What an injected fault does to one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Answer with this HTTP status in the cloud's own internal-error shape; nothing happens.
    ServerError { status: u16 },
    /// Close the connection with a TCP reset before answering; nothing happens.
    Reset,
    /// Hold the connection open without answering for this long, then close it; nothing happens.
    Timeout { after: Duration },
    /// Perform the operation (it takes effect), then close the connection without the answer.
    SuccessThenDrop,
}

pub(crate) fn matches<T: PartialEq + ?Sized>(
    pattern: &Option<impl std::borrow::Borrow<T>>,
    value: &T,
) -> bool {
    pattern.as_ref().is_none_or(|p| p.borrow() == value)
}

impl StockOut {
    pub fn matches(&self, provider: Provider, instance_type: &str, zone: &str) -> bool {
        matches(&self.provider, &provider)
            && matches(&self.instance_type, instance_type)
            && matches(&self.zone, zone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_parse_from_toml() {
        let k: Knobs = toml::from_str(
            r#"
            latency_ms = 5
            [[faults]]
            action = "RunInstances"
            kind = "success_then_drop"
            count = 1
            [[faults]]
            kind = "server_error"
            probability = 0.1
            [[rate_limits]]
            provider = "tencent"
            per_second = 2
            "#,
        )
        .unwrap();
        assert_eq!(k.faults[0].fault(), Fault::SuccessThenDrop);
        assert_eq!(k.faults[1].fault(), Fault::ServerError { status: 503 });
        assert_eq!(k.rate_limits[0].capacity(), 2.0);
        assert_eq!(k.boot_seconds, 3);
    }

    #[test]
    fn stock_outs_may_leave_some_available() {
        let k: Knobs = toml::from_str("[[stock_outs]]\nprovider = \"jdcloud\"\nzone = \"cn-north-1a\"\navailable = 2\n[[stock_outs]]\nzone = \"z\"\n").unwrap();
        assert_eq!((k.stock_outs[0].available, k.stock_outs[1].available), (Some(2), None));
    }

    #[test]
    fn unknown_fields_are_errors() {
        let err = toml::from_str::<Knobs>("[[faults]]\nkind = \"reset\"\ncuont = 1\n").unwrap_err();
        assert!(err.to_string().contains("cuont"), "{err}");
    }
}
