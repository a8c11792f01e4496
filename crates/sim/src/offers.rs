//! The offers the emulators sell, read from gpuctl-core's shipped catalog: every instance type in
//! every region it is listed in, with that provider's zones and the catalogued price per billing
//! mode (observed or derived — the catalog's own source, date and confidence travel along). Types
//! and families are sold under the API's spelling (`Catalog::api_type`: Alibaba's `ecs.`), as the
//! clouds name them on the wire; the emulators keep no spelling rule of their own.

use gpuctl_core::catalog::{BillingMode, Catalog};
use gpuctl_simkit::{Offer, Prices};

pub fn from_catalog(catalog: &Catalog) -> Vec<Offer> {
    let mut out = Vec::new();
    for it in catalog.instance_types() {
        let Some(info) = catalog.provider(it.provider) else { continue };
        let gpu = catalog.gpu(&it.gpu);
        for region in &it.regions {
            let zones =
                info.regions.iter().find(|r| &r.id == region).map(|r| r.zones.clone()).unwrap_or_default();
            let price = |mode| catalog.price(it.provider, &it.id, region, mode);
            let hourly = price(BillingMode::Hourly);
            let sourced = BillingMode::ALL.iter().filter_map(|m| price(*m)).next();
            out.push(Offer {
                provider: it.provider,
                region: region.clone(),
                zones,
                instance_type: catalog.api_type(it.provider, &it.id),
                family: catalog.api_type(it.provider, &it.family),
                gpu_model: gpu.map_or_else(|| it.gpu.clone(), |g| g.name.clone()),
                gpu_count: it.devices(),
                gpu_memory_gib: gpu.map_or(0.0, |g| g.vram_gb),
                vcpu: it.vcpu,
                memory_gib: it.ram_gb,
                prices: Prices {
                    hourly: hourly.map(|p| p.cny),
                    spot_hourly: price(BillingMode::Spot).map(|p| p.cny),
                    weekly: price(BillingMode::Weekly).map(|p| p.cny),
                    monthly: price(BillingMode::Monthly).map(|p| p.cny),
                    yearly: price(BillingMode::Year1).map(|p| p.cny),
                    three_year: price(BillingMode::Year3).map(|p| p.cny),
                },
                source: sourced.map_or_else(
                    || "no price in the catalog".to_string(),
                    |p| format!("{} ({:?}, confidence {})", p.source, p.origin, p.confidence.as_str()),
                ),
                as_of: sourced.map_or_else(String::new, |p| p.as_of.to_string()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_has_priced_offers_with_zones() {
        let offers = from_catalog(Catalog::shipped());
        for provider in gpuctl_core::Provider::ALL {
            let mine: Vec<_> = offers.iter().filter(|o| o.provider == provider).collect();
            assert!(!mine.is_empty(), "{provider} has no offers");
            assert!(mine.iter().any(|o| o.prices.hourly.is_some()), "{provider} has no hourly price");
            assert!(mine.iter().all(|o| !o.zones.is_empty()), "{provider} offer without zones");
        }
    }
}
