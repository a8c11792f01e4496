//! The catalog's data-file schema: the plain types `data/*.toml` and user overlays are read into.
//!
//! Types only (their methods live in `catalog`), so that build.rs can include this file as it is:
//! it reads the shipped TOML into these very types at build time and writes them out in borsh's
//! compact binary form, which builds without `toml-files` (the browser) decode with no text parser.
//! Field order therefore matters to that binary form; build.rs and the crate always agree because
//! both compile this one file.

use borsh::{BorshDeserialize, BorshSerialize};
use serde::{Deserialize, Serialize};

/// The schema version the data files and overlays must declare.
pub const SCHEMA_VERSION: u32 = 1;

/// A cloud gpuctl knows.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    BorshSerialize,
    BorshDeserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Tencent,
    Alibaba,
    #[serde(rename = "jdcloud")]
    JdCloud,
}

/// How an instance is billed. Prices for each mode are per that mode's term (see [`BillingMode::term_hours`]).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    BorshSerialize,
    BorshDeserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum BillingMode {
    /// Pay-as-you-go, ¥ per hour (按量计费 / 按量付费).
    Hourly,
    /// Spot / preemptible, ¥ per hour; can be reclaimed at any time (竞价实例 / 抢占式实例).
    Spot,
    /// Weekly rent, ¥ per 7 days (Alibaba only).
    Weekly,
    /// Monthly subscription, ¥ per month (包年包月).
    Monthly,
    /// One-year subscription, ¥ per year.
    Year1,
    /// Three-year subscription, ¥ for the whole 3 years.
    Year3,
}

/// How much to trust a number (catalog-facts.md tags).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    BorshSerialize,
    BorshDeserialize,
)]
pub enum Confidence {
    /// Vendor datasheet or official cloud doc.
    A,
    /// Reputable third party or consistent multi-source.
    B,
    /// Single third-party source, hand-entered, or derived.
    C,
    /// Quoted in the user's brief; no public source found.
    #[serde(rename = "brief")]
    Brief,
    /// No source: an estimate, with its derivation alongside.
    #[serde(rename = "estimate")]
    Estimate,
    /// The user's own number from an overlay file.
    #[serde(rename = "user")]
    User,
}

/// The software stack a GPU needs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, BorshSerialize, BorshDeserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    /// NVIDIA CUDA (PyTorch, vLLM, …).
    Cuda,
    /// Huawei Ascend: CANN with MindSpore or torch_npu, not CUDA.
    Ascend,
}

/// One GPU model (catalog-facts.md §1). TFLOPS are dense (no 2:4 sparsity).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    /// Short id used in files and flags, e.g. `a10`, `a100-sxm4-40g`.
    pub id: String,
    /// Display name, e.g. "NVIDIA A10".
    pub name: String,
    pub vram_gb: f64,
    pub mem_bw_gbps: f64,
    /// Dense FP16/BF16 tensor TFLOPS; for GPUs without tensor cores, the usable FP32 rate.
    pub fp16_tflops: f64,
    pub fp32_tflops: f64,
    pub bf16: bool,
    /// Whether FP16 / mixed-precision training is practical at all.
    pub fp16_training: bool,
    /// Why not, or what limits it (shown to users).
    #[serde(default)]
    pub training_note: String,
    /// GPU↔GPU link, e.g. "NVLink3 600 GB/s" or "PCIe4 only".
    pub interconnect: String,
    /// Whether GPUs in one instance talk over NVLink/HCCS (affects multi-GPU MFU).
    pub fast_link: bool,
    pub stack: Stack,
    /// CUDA compute capability ("7.5"), empty for Ascend.
    #[serde(default)]
    pub compute_capability: String,
    /// FlashAttention-2 support (Ampere and newer).
    #[serde(default)]
    pub flash_attention2: bool,
    pub tdp_w: f64,
    pub confidence: Confidence,
    #[serde(default)]
    pub notes: String,
}

/// A region a provider sells in, with its zones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(deny_unknown_fields)]
pub struct Region {
    pub id: String,
    pub name: String,
    pub zones: Vec<String>,
}

/// What a provider offers overall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderInfo {
    pub id: Provider,
    pub name: String,
    /// Billing modes this provider sells GPU instances under (an instance may narrow them).
    pub billing_modes: Vec<BillingMode>,
    pub regions: Vec<Region>,
    #[serde(default)]
    pub source: String,
    /// What the cloud's API puts in front of the catalog's instance-type and family ids (Alibaba's
    /// `ecs.`); empty where the API spells them as the catalog does. Data, so the rule has one home:
    /// `Catalog::api_type` / `Catalog::catalog_type` read it for the engine, the CLI, the browser and
    /// the local cloud's offers alike.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_type_prefix: String,
}

/// One instance type (catalog-facts.md §2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceType {
    pub provider: Provider,
    /// The cloud's own type id, e.g. `GN7.2XLARGE32`, `gn7i-c8g1.2xlarge`, `p.n1v100.2xlarge`.
    pub id: String,
    pub family: String,
    /// GPU id (see [`Gpu::id`]).
    pub gpu: String,
    /// GPUs per instance; fractions are vGPU slices (0.25 = a quarter card, VRAM and compute scale).
    pub gpu_count: f64,
    pub vcpu: u32,
    pub ram_gb: f64,
    pub regions: Vec<String>,
    /// Narrower than the provider's billing modes, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_modes: Option<Vec<BillingMode>>,
    pub confidence: Confidence,
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub notes: String,
}

/// A price row as written in a data file or overlay. `cny` is per the mode's term
/// (hour, week, month, year, or the whole 3 years).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceRow {
    pub provider: Provider,
    pub instance: String,
    /// A region id, or `*` for every region the instance is sold in.
    pub region: String,
    pub mode: BillingMode,
    pub cny: f64,
    /// `YYYY-MM-DD`.
    pub as_of: String,
    pub source: String,
    pub confidence: Confidence,
    #[serde(default)]
    pub derivation: String,
    #[serde(default)]
    pub notes: String,
}

/// A monthly price per GPU used to estimate instances that have no price of their own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    pub gpu: String,
    /// ¥ per GPU per month.
    pub monthly_cny_per_gpu: f64,
    pub as_of: String,
    pub source: String,
    pub confidence: Confidence,
    #[serde(default)]
    pub derivation: String,
}

/// How a mode's price is estimated from a monthly price, when no observed row exists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeRatio {
    pub mode: BillingMode,
    /// Price of one term of `mode` = monthly × `of_monthly`.
    pub of_monthly: f64,
    pub derivation: String,
}

/// One data file (shipped or overlay): any of its tables may be absent.
#[derive(Debug, Default, Deserialize, BorshSerialize, BorshDeserialize)]
#[serde(deny_unknown_fields)]
pub struct DataFile {
    pub schema_version: u32,
    #[serde(default)]
    pub gpu: Vec<Gpu>,
    #[serde(default)]
    pub provider: Vec<ProviderInfo>,
    #[serde(default)]
    pub instance: Vec<InstanceType>,
    #[serde(default)]
    pub price: Vec<PriceRow>,
    #[serde(default)]
    pub anchor: Vec<Anchor>,
    #[serde(default)]
    pub mode_ratio: Vec<ModeRatio>,
}
