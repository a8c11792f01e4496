//! Instance-type names: the catalog's ids against the clouds' API spellings (Alibaba's API prefixes
//! `ecs.`, the catalog does not). The rule itself belongs to gpuctl-alibaba (`api::catalog_type`,
//! `api::api_type`); this engine cannot depend on a provider crate, so until the CLI hands the rule in,
//! this module is the engine's only copy of it: no other file of gpuctl-provision spells a type prefix.

use crate::provider::Provider;

const ALIBABA_PREFIX: &str = "ecs.";

/// The catalog's id for an instance type as the cloud's API names it.
pub fn catalog_instance_id(provider: Provider, api_type: &str) -> &str {
    match provider {
        Provider::Alibaba => api_type.strip_prefix(ALIBABA_PREFIX).unwrap_or(api_type),
        _ => api_type,
    }
}

/// The API's name for a catalog id.
pub fn api_instance_type(provider: Provider, catalog_id: &str) -> String {
    match provider {
        Provider::Alibaba => format!("{ALIBABA_PREFIX}{}", catalog_instance_id(provider, catalog_id)),
        _ => catalog_id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alibaba_types_map_both_ways_and_the_others_are_kept() {
        assert_eq!(catalog_instance_id(Provider::Alibaba, "ecs.gn7i-c8g1.2xlarge"), "gn7i-c8g1.2xlarge");
        assert_eq!(catalog_instance_id(Provider::Alibaba, "gn7i-c8g1.2xlarge"), "gn7i-c8g1.2xlarge");
        assert_eq!(api_instance_type(Provider::Alibaba, "gn7i-c8g1.2xlarge"), "ecs.gn7i-c8g1.2xlarge");
        assert_eq!(catalog_instance_id(Provider::Tencent, "GN7.2XLARGE32"), "GN7.2XLARGE32");
        assert_eq!(api_instance_type(Provider::JdCloud, "g.n2.xlarge"), "g.n2.xlarge");
    }
}
