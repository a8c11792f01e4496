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

/// How a prepaid (subscription) instance can stop billing before its term ends, per cloud.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EarlyEnd {
    /// Converted to pay-as-you-go (the unused term refunded), then released like any pay-as-you-go
    /// instance. Alibaba: ModifyInstanceChargeType PrePaid → PostPaid, then DeleteInstances
    /// (alibabacloud_ecs20140526 7.11.8, models/_modify_instance_charge_type_request.py,
    /// models/_delete_instances_request.py `terminate_subscription`: expired subscriptions only).
    ConvertToPayAsYouGo,
    /// Terminated into the recycle bin, refunded under the cloud's return rules. Tencent: "包年包月实例如符合
    /// 退还规则，也可通过本接口主动退还 … 首次调用本接口，实例将被移至回收站" (tccli 3.1.189.1,
    /// tccli/services/cvm/v20170312/api.json, TerminateInstances).
    RecycleBin,
    /// No API ends the term: the instance bills until it expires. JD Cloud: "不可以删除包年包月未到期的云主机"
    /// (jdcloud_sdk 1.6.354, jdcloud_sdk/services/vm/apis/DeleteInstanceRequest.py).
    None,
}

/// How `provider` lets a prepaid instance end early (see [`EarlyEnd`]).
pub fn early_end(provider: Provider) -> EarlyEnd {
    match provider {
        Provider::Alibaba => EarlyEnd::ConvertToPayAsYouGo,
        Provider::Tencent => EarlyEnd::RecycleBin,
        Provider::JdCloud => EarlyEnd::None,
    }
}

/// Whether `mode` buys a term paid up front (every mode but pay-as-you-go and spot).
pub fn is_prepaid(mode: BillingMode) -> bool {
    !matches!(mode, BillingMode::Hourly | BillingMode::Spot)
}
