//! What the emulators sell: instance types per provider/region with their zones and prices. The sim
//! server fills this from gpuctl-core's catalog, so the local cloud's prices are the catalogued ones
//! (with the catalog's source and as-of date), never numbers made up here.

use serde::Serialize;

use crate::Provider;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Offer {
    pub provider: Provider,
    pub region: String,
    /// Zones where the type is sold; stock-out knobs can still close one.
    pub zones: Vec<String>,
    /// The cloud's own type name: "GN7.2XLARGE32", "ecs.gn7i-c8g1.2xlarge", "g.n2.xlarge".
    pub instance_type: String,
    /// The cloud's family name: "GN7", "ecs.gn7i", ...
    pub family: String,
    pub gpu_model: String,
    pub gpu_count: u32,
    pub gpu_memory_gib: f64,
    pub vcpu: u32,
    pub memory_gib: f64,
    pub prices: Prices,
    /// Where the prices come from and when they were read (carried from the catalog).
    pub source: String,
    pub as_of: String,
}

/// Prices in CNY per billing mode; `None` where the catalog has no price (the mode is then refused
/// or inquired as unknown, never invented).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Prices {
    /// Pay-as-you-go, per hour.
    pub hourly: Option<f64>,
    /// Spot, per hour (current market price in the catalog).
    pub spot_hourly: Option<f64>,
    /// Per 7-day term.
    pub weekly: Option<f64>,
    /// Per month.
    pub monthly: Option<f64>,
    /// Per 1-year term.
    pub yearly: Option<f64>,
    /// Per 3-year term.
    pub three_year: Option<f64>,
}
