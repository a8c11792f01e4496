//! gpuctl-core: the GPU catalog and the cost engine.
//!
//! Pure: no I/O, no clock, no tokio, no HTTP. It takes a [`Catalog`] and a question and returns an
//! answer with its warnings and assumptions. The same code runs in the CLI, the provisioner and, as
//! WebAssembly, the browser calculator.
//!
//! - [`catalog`]: GPUs, instance types, prices per billing mode (shipped data + user overlay).
//! - [`model`]: model presets (parameter counts and transformer shapes).
//! - [`fit`]: memory per GPU with a breakdown.
//! - [`suggest`], [`units`]: closest names for typos; `50M` / `7b` / `3d` style numbers.

pub mod catalog;
pub mod fit;
pub mod model;
pub mod suggest;
pub mod units;

pub use catalog::{
    parse_date, Anchor, BillingMode, Catalog, CatalogError, Confidence, Gpu, InstanceType, ModeRatio, Price,
    PriceOrigin, PriceRow, Provider, ProviderInfo, Region, Stack, UnknownName, SCHEMA_VERSION,
};
pub use fit::{fit, FitReport, Hardware, Job, MemoryBreakdown, Method, Precision};
pub use jiff::civil::Date;
pub use model::{preset, preset_names, presets, ModelShape};
pub use suggest::suggest;
pub use units::{parse_count, parse_hours};
