//! What a cluster's shared file system costs per GB·month (issue 14). The figures are gpuctl-core's
//! storage table (`gpuctl_core::storage`, from `shared/reference/price-evidence.md` and
//! `docs/research/clusters.md` §3). The clouds bill what is stored (hourly, on usage), so a plan prices
//! the spec's `size_gb`; a tier with no recorded figure stays unknown rather than borrowing another's.

use gpuctl_cloud::cloud::FsTier;
use gpuctl_core::storage::{self, StorageKind};

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

/// The tier's price on `provider` in `region`: gpuctl-core's storage table (`data/storage.toml`, the one
/// place storage prices live, each row cited), looked up by gpuctl's tier word. The figures are the
/// clouds' list prices for mainland regions; where a source gives one region or none the figure stands
/// for every region (said in its source). A tier with no figure stays unknown.
pub fn price(provider: Provider, region: &str, tier: FsTier) -> FsPrice {
    let word = match tier {
        FsTier::Capacity => "capacity",
        FsTier::Performance => "performance",
    };
    match storage::lookup(provider, StorageKind::FileSystem, word, region) {
        Ok(row) => FsPrice {
            provider,
            tier,
            product: row.product,
            cny_per_gb_month: row.usage_per_month().map(|r| r.cny),
            source: row.source,
        },
        // Every tier has a row on every cloud (core's tests hold the table to it); should one go
        // missing, the plan says so instead of failing.
        Err(_) => FsPrice {
            provider,
            tier,
            product: word,
            cny_per_gb_month: None,
            source: "no row in gpuctl's storage table",
        },
    }
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
