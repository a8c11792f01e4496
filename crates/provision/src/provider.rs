//! The three clouds gpuctl rents from, and the facts about their APIs that the spec checks against
//! (which billing modes each API can buy, whether it has a default network). Facts cite
//! `shared/reference/cloud-apis.md`; prices live in gpuctl-core's catalog, not here.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Tencent,
    Alibaba,
    Jdcloud,
}

impl Provider {
    pub const ALL: [Provider; 3] = [Provider::Tencent, Provider::Alibaba, Provider::Jdcloud];

    /// The name users write in specs and flags (`--endpoint tencent=…`).
    pub fn name(self) -> &'static str {
        match self {
            Provider::Tencent => "tencent",
            Provider::Alibaba => "alibaba",
            Provider::Jdcloud => "jdcloud",
        }
    }

    pub fn from_name(s: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.name() == s)
    }

    /// Whether the create API can buy this billing mode, and if not, why (shown to the user verbatim).
    pub fn offers(self, mode: BillingMode) -> Result<(), &'static str> {
        use BillingMode::*;
        match (self, mode) {
            (_, Hourly | Monthly | Yearly1 | Yearly3) => Ok(()),
            // Tencent: InstanceChargeType SPOTPAID. Alibaba: PostPaid + SpotStrategy.
            (Provider::Tencent | Provider::Alibaba, Spot) => Ok(()),
            (Provider::Jdcloud, Spot) => Err("JD Cloud's createInstances has no spot/preemptible parameter"),
            // Alibaba: PrePaid with PeriodUnit=Week.
            (Provider::Alibaba, Weekly) => Ok(()),
            (Provider::Tencent, Weekly) => Err("Tencent's PREPAID period is counted in months"),
            (Provider::Jdcloud, Weekly) => Err("JD Cloud's prepaid_by_duration is counted in months or years"),
        }
    }

    /// Whether an instance can be created without naming a VPC/subnet (the account's default network).
    pub fn has_default_network(self) -> bool {
        // JD's createInstances requires primaryNetworkInterface.subnetId.
        !matches!(self, Provider::Jdcloud)
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How an instance is paid for. Names follow the users' words; each client maps them to its cloud's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BillingMode {
    /// Pay-as-you-go by the hour (Tencent POSTPAID_BY_HOUR, Alibaba PostPaid, JD postpaid_by_duration).
    #[serde(rename = "hourly")]
    Hourly,
    /// Pay-as-you-go spot/preemptible: cheaper, can be reclaimed.
    #[serde(rename = "spot")]
    Spot,
    #[serde(rename = "weekly")]
    Weekly,
    #[serde(rename = "monthly")]
    Monthly,
    #[serde(rename = "1y")]
    Yearly1,
    #[serde(rename = "3y")]
    Yearly3,
}

impl BillingMode {
    pub const ALL: [BillingMode; 6] =
        [BillingMode::Hourly, BillingMode::Spot, BillingMode::Weekly, BillingMode::Monthly, BillingMode::Yearly1, BillingMode::Yearly3];

    pub fn name(self) -> &'static str {
        match self {
            BillingMode::Hourly => "hourly",
            BillingMode::Spot => "spot",
            BillingMode::Weekly => "weekly",
            BillingMode::Monthly => "monthly",
            BillingMode::Yearly1 => "1y",
            BillingMode::Yearly3 => "3y",
        }
    }

    pub fn from_name(s: &str) -> Option<BillingMode> {
        BillingMode::ALL.into_iter().find(|m| m.name() == s)
    }

    /// Pay-as-you-go modes stop billing when the instance is released; the others are paid up front.
    pub fn is_pay_as_you_go(self) -> bool {
        matches!(self, BillingMode::Hourly | BillingMode::Spot)
    }

    /// Hours one billing unit covers (a prepaid term is bought in whole units).
    pub fn unit_hours(self) -> f64 {
        match self {
            BillingMode::Hourly | BillingMode::Spot => 1.0,
            BillingMode::Weekly => 7.0 * 24.0,
            BillingMode::Monthly => 30.0 * 24.0,
            BillingMode::Yearly1 => 365.0 * 24.0,
            BillingMode::Yearly3 => 3.0 * 365.0 * 24.0,
        }
    }
}

impl fmt::Display for BillingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
