//! What each cloud's create API can buy, as the spec checks it before any catalog is consulted.
//! The clouds and billing modes themselves are gpuctl-core's [`Provider`] and [`BillingMode`];
//! facts here cite `shared/reference/cloud-apis.md`. Prices live in the catalog, not here.

pub use gpuctl_core::{BillingMode, Provider};

/// Whether the create API can buy this billing mode, and if not, why (shown to the user verbatim).
pub fn api_offers(provider: Provider, mode: BillingMode) -> Result<(), &'static str> {
    use BillingMode::*;
    match (provider, mode) {
        (_, Hourly | Monthly | Year1 | Year3) => Ok(()),
        // Tencent: InstanceChargeType SPOTPAID. Alibaba: PostPaid + SpotStrategy.
        (Provider::Tencent | Provider::Alibaba, Spot) => Ok(()),
        (Provider::JdCloud, Spot) => Err("JD Cloud's createInstances has no spot/preemptible parameter"),
        // Alibaba: PrePaid with PeriodUnit=Week.
        (Provider::Alibaba, Weekly) => Ok(()),
        (Provider::Tencent, Weekly) => Err("Tencent's PREPAID period is counted in months"),
        (Provider::JdCloud, Weekly) => Err("JD Cloud's prepaid_by_duration is counted in months or years"),
    }
}

/// Whether an instance can be created without naming a VPC/subnet (the account's default network).
pub fn has_default_network(provider: Provider) -> bool {
    // JD's createInstances requires primaryNetworkInterface.subnetId.
    !matches!(provider, Provider::JdCloud)
}
