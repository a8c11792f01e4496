//! What a cluster's shared file system costs per GB·month (issue 14), from the clouds' published price
//! pages as recorded in `shared/reference/price-evidence.md` and `docs/research/clusters.md` §3. The
//! clouds bill what is stored (hourly, on usage), so a plan prices the spec's `size_gb`; a tier with
//! no recorded figure stays unknown rather than borrowing another's.

use gpuctl_cloud::cloud::FsTier;

use crate::provider::Provider;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FsPrice {
    pub provider: Provider,
    pub tier: FsTier,
    /// What the tier is called on that cloud.
    pub product: &'static str,
    /// ¥ per GB·month; `None`: no figure recorded.
    pub cny_per_gb_month: Option<f64>,
    /// Where the figure comes from, and its date.
    pub source: &'static str,
}

const TENCENT: &str =
    "third-party listing, \"from 0.35 CNY/GB-mo\", undated (price-evidence §1.4); no official figure found";
const ALIBABA: &str = "AlibabaCloudDocs/nas cn.zh-CN/产品定价/计费案例.md@1e2a465, 华东1 (杭州), 2019-09-05 (price-evidence §2)";
const JD: &str = "zhangkai263/cn documentation/Storage-and-CDN/Cloud-File-Service/Pricing/Pricing-Rules.md@e0782a59, undated (price-evidence §3)";
const NOT_FOUND: &str = "no published figure found (docs/research/clusters.md §3)";

/// The tier's price on `provider`. The figures are the clouds' list prices for mainland regions; the
/// sources give one region or none, so `_region` does not change them (said in each source).
pub fn price(provider: Provider, _region: &str, tier: FsTier) -> FsPrice {
    let (product, cny, source) = match (provider, tier) {
        (Provider::Tencent, FsTier::Capacity) => ("CFS 通用标准型 (SD)", Some(0.35), TENCENT),
        (Provider::Tencent, FsTier::Performance) => ("CFS 通用性能型 (HP)", None, NOT_FOUND),
        (Provider::Alibaba, FsTier::Capacity) => ("NAS 通用型 容量型 (Capacity)", Some(0.35), ALIBABA),
        (Provider::Alibaba, FsTier::Performance) => ("NAS 通用型 性能型 (Performance)", None, NOT_FOUND),
        (Provider::JdCloud, FsTier::Capacity) => ("云文件服务 容量型 (std1)", Some(0.35), JD),
        (Provider::JdCloud, FsTier::Performance) => ("云文件服务 通用型 (gp1)", Some(0.45), JD),
    };
    FsPrice { provider, tier, product, cny_per_gb_month: cny, source }
}

/// The price of a recorded file system (its tier as the state store holds it); `None` for a placement
/// group, or a tier this build does not know.
pub fn of(r: &crate::state::ClusterResource) -> Option<FsPrice> {
    r.tier.as_deref().and_then(FsTier::parse).map(|t| price(r.provider, &r.region, t))
}

/// The same figure per hour (the clouds bill storage by the hour: 730 hours a month, the catalog's
/// month).
pub fn per_hour(cny_per_gb_month: f64, gb: u32) -> f64 {
    cny_per_gb_month * f64::from(gb) / 730.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tier_on_every_cloud_has_a_source_and_unknowns_stay_unknown() {
        for p in Provider::ALL {
            for t in FsTier::ALL {
                let x = price(p, "any", t);
                assert!(!x.source.is_empty() && !x.product.is_empty());
                assert!(x.cny_per_gb_month.is_none_or(|c| c > 0.0 && c < 5.0), "{x:?}");
            }
        }
        assert_eq!(price(Provider::Tencent, "ap-guangzhou", FsTier::Performance).cny_per_gb_month, None);
        assert!((per_hour(0.35, 730) - 0.35).abs() < 1e-12);
    }
}
