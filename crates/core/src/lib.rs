//! gpuctl-core: the GPU catalog and the cost engine.
//!
//! Pure: no I/O, no clock, no tokio, no HTTP. It takes a [`Catalog`] and a question and returns an
//! answer with its warnings and assumptions. The same code runs in the CLI, the provisioner and, as
//! WebAssembly, the browser calculator.
//!
//! - [`catalog`]: GPUs, instance types, prices per billing mode (shipped data + user overlay).
//! - [`model`]: model presets (parameter counts and transformer shapes).
//! - [`method`]: the job's method and precision (the words fit, time and explain share).
//! - [`fit`]: memory per GPU with a breakdown.
//! - [`time`]: hours as a low–high range from 6·N·D / 4·N·D and an MFU band.
//! - [`price`]: cost per billing mode for a usage pattern, break-even points, ¥ per 1M tokens.
//! - [`rank`]: every feasible offer across providers, cheapest first, and the infeasible ones with why.
//! - [`stages`]: the staged plan (validate → tune → produce), each stage an offer.
//! - [`tco`]: self-built cluster vs cloud, with the break-even utilization.
//! - [`compat`]: framework ↔ CUDA ↔ driver ↔ GPU checks.
//! - [`warning`]: the ranking's warnings as stable codes with parameters, and their English text.
//! - [`explain`]: assumptions, infeasible reasons, fit verdicts and price age as codes, likewise.
//! - [`export`]: the provisioning spec (stage TOML) for a chosen offer, written by the page and the CLI.
//! - [`suggest`], [`units`]: closest names for typos (and [`UnknownName`], the error carrying them);
//!   `50M` / `7b` / `3d` style numbers.
//! - [`storage`]: what disks, snapshots, held IPs, file systems and object storage cost per cloud and
//!   class (cited rows of `data/storage.toml`), and what archiving old checkpoints would save.
//! - [`input`]: the bounds of a job question's numbers, as codes (`InputError`) — the CLI and the page
//!   both check them here.

pub mod catalog;
pub mod cluster;
pub mod compat;
pub mod explain;
pub mod export;
pub mod fit;
pub mod hf_config;
pub mod input;
pub mod method;
pub mod model;
pub mod price;
pub mod rank;
mod schema;
pub mod stages;
pub mod storage;
pub mod suggest;
pub mod tco;
pub mod time;
pub mod units;
pub mod warning;

pub use catalog::{
    parse_date, parse_provider, Anchor, BillingMode, Catalog, CatalogError, Confidence, EvidenceMix, Gpu,
    InstanceType, ModeRatio, Price, PriceOrigin, PriceRow, Provider, ProviderInfo, Region, Stack,
    SCHEMA_VERSION,
};
pub use cluster::{Cluster, Sharding};
pub use compat::{ascend_availability, check as check_compat, CompatIssue, CompatQuery, Severity};
pub use explain::{Assumption, PriceAge, Reason, Verdict};
pub use fit::{fit, FitReport, Hardware, Job, MemoryBreakdown};
pub use hf_config::{from_hf_config, ConfigError};
pub use input::InputError;
pub use jiff::civil::Date;
pub use method::{Method, Precision, Runtime};
pub use model::{preset, preset_names, presets, ModelShape, Moe};
pub use price::{
    break_even, cost_of, money, price_job, terms_bought, terms_for, BreakEven, JobPrice, ModeCost, Usage,
    SPOT_WARNING,
};
pub use rank::{hardware, rank, Infeasible, Offer, Question, Ranking, STALE_PRICE_DAYS};
pub use stages::{stages, Stage, StagePlan};
pub use suggest::{suggest, UnknownName};
pub use tco::{tco, CloudOption, SelfBuilt, TcoInput, TcoPoint, TcoReport};
pub use time::{estimate_time, mfu_band, MfuBand, SpotRisk, TimeEstimate};
pub use units::{parse_count, parse_hours};
pub use warning::Warning;
