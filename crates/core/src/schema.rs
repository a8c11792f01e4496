//! The catalog's data-file schema: the plain types `data/*.toml` and user overlays are read into.
//!
//! Types only (their methods live in `catalog`), so that build.rs can include this file as it is:
//! it reads the shipped TOML into these very types at build time and writes them out in borsh's
//! compact binary form, which builds without `toml-files` (the browser) decode with no text parser;
//! the impls are written by the macros below, not derived (no toml_edit in the sim's build, issue 11).
//! Field order therefore matters to that binary form; build.rs and the crate always agree because
//! both compile this one file.

use serde::{Deserialize, Serialize};

// borsh's binary form, written out rather than derived: borsh-derive needs proc-macro-crate, which
// parses Cargo.toml with toml_edit, and nothing the sim compiles may pull toml_edit (issue 11). The
// bytes are what the derive wrote (borsh 1.x spec, borsh.io): a struct is its fields in order, a
// unit enum one u8, its variant's index. Each list is checked whole by the compiler — the
// destructuring pattern and the struct literal name every field, the match every variant — so a
// field added to a type and not here fails to build; the order written here is the binary order.
macro_rules! borsh_struct {
    ($name:ident { $($field:ident),* $(,)? }) => {
        impl borsh::BorshSerialize for $name {
            fn serialize<W: borsh::io::Write>(&self, writer: &mut W) -> borsh::io::Result<()> {
                let $name { $($field),* } = self;
                $(borsh::BorshSerialize::serialize($field, writer)?;)*
                Ok(())
            }
        }
        impl borsh::BorshDeserialize for $name {
            fn deserialize_reader<R: borsh::io::Read>(reader: &mut R) -> borsh::io::Result<Self> {
                // A struct literal evaluates its fields in the order written: the binary order.
                Ok($name { $($field: borsh::BorshDeserialize::deserialize_reader(reader)?),* })
            }
        }
    };
}

macro_rules! borsh_unit_enum {
    ($name:ident { $($variant:ident),* $(,)? }) => {
        impl borsh::BorshSerialize for $name {
            fn serialize<W: borsh::io::Write>(&self, writer: &mut W) -> borsh::io::Result<()> {
                const ALL: &[$name] = &[$($name::$variant),*];
                // Exhaustive: a variant missing from the list fails to build.
                match self { $($name::$variant)|* => {} }
                let mut index = 0u8;
                for variant in ALL {
                    if variant == self {
                        break;
                    }
                    index += 1;
                }
                borsh::BorshSerialize::serialize(&index, writer)
            }
        }
        impl borsh::BorshDeserialize for $name {
            fn deserialize_reader<R: borsh::io::Read>(reader: &mut R) -> borsh::io::Result<Self> {
                const ALL: &[$name] = &[$($name::$variant),*];
                let index: u8 = borsh::BorshDeserialize::deserialize_reader(reader)?;
                ALL.get(usize::from(index)).copied().ok_or_else(|| {
                    borsh::io::Error::new(borsh::io::ErrorKind::InvalidData, "unknown variant")
                })
            }
        }
    };
}

/// The schema version the data files and overlays must declare.
pub const SCHEMA_VERSION: u32 = 1;

/// A cloud gpuctl knows: named once, in gpuctl-clouds, for every crate (its borsh form is written there).
pub use gpuctl_clouds::Provider;

/// How an instance is billed. Prices for each mode are per that mode's term (see [`BillingMode::term_hours`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    /// NVIDIA CUDA (PyTorch, vLLM, …).
    Cuda,
    /// Huawei Ascend: CANN with MindSpore or torch_npu, not CUDA.
    Ascend,
}

/// One GPU model (catalog-facts.md §1). TFLOPS are dense (no 2:4 sparsity).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    /// Short id used in files and flags, e.g. `a10`, `a100-sxm4-40g`.
    pub id: String,
    /// Display name, e.g. "NVIDIA A10".
    pub name: String,
    pub vram_gb: f64,
    pub mem_bw_gbps: f64,
    /// Dense FP16/BF16 tensor TFLOPS **with FP32 accumulate** — what mixed-precision training runs
    /// (PyTorch autocast's matmuls accumulate in FP32), so every training time uses this figure; for
    /// GPUs without tensor cores, the usable FP32 rate.
    pub fp16_tflops: f64,
    /// Dense FP16 tensor TFLOPS with FP16 accumulate, on cards that run it faster than
    /// [`Gpu::fp16_tflops`]: GeForce cards run FP32 accumulate at half their FP16-accumulate rate
    /// (Turing, Ampere GA102 and Ada whitepapers), data-centre cards at the same rate. `None` = the
    /// same as `fp16_tflops`. Shown beside it, so nobody reads a GeForce box figure as a training rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp16_acc16_tflops: Option<f64>,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Region {
    pub id: String,
    pub name: String,
    pub zones: Vec<String>,
}

/// What a provider offers overall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Private-network (intranet) bandwidth of the whole instance, Gbit/s, as the source prints it
    /// (Tencent 内网带宽, Alibaba 网络基础带宽). `None` where no source publishes one: unknown is
    /// shown as "—", never guessed, since the multi-node planner reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_gbps: Option<f64>,
    /// The RDMA fabric the source states for this type (e.g. "RoCE v2 2×25 Gbit/s", "eRDMA"),
    /// `None` when it states none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdma: Option<String>,
    /// The RDMA fabric's bandwidth per instance, Gbit/s (all its ports), where the source prints the
    /// ports' speed (`2×100GE` = 200); `None` when it does not. A cluster of this type talks over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdma_gbps: Option<f64>,
    /// Zones the source names for this type (empty = not stated; the provider's zones apply).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
    /// Why this type cannot simply be bought (invite-only, "contact sales", by ticket), when the
    /// source says so. Such types are ranked only when asked for (`--include-restricted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restricted: Option<String>,
}

/// A price row as written in a data file or overlay. `cny` is per the mode's term
/// (hour, week, month, year, or the whole 3 years). Two shipped rows may share (provider, instance,
/// region, mode) when their sources differ: conflicting sources are kept apart, never averaged, and
/// the resolver says which one it used and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeRatio {
    pub mode: BillingMode,
    /// The cloud whose documented rule this is; `None` = the fallback for every cloud without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<Provider>,
    /// Price of one term of `mode` = monthly × `of_monthly`.
    pub of_monthly: f64,
    pub derivation: String,
}

/// One data file (shipped or overlay): any of its tables may be absent.
#[derive(Debug, Default, Deserialize)]
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

borsh_unit_enum!(BillingMode { Hourly, Spot, Weekly, Monthly, Year1, Year3 });
borsh_unit_enum!(Confidence { A, B, C, Brief, Estimate, User });
borsh_unit_enum!(Stack { Cuda, Ascend });
borsh_struct!(Gpu {
    id,
    name,
    vram_gb,
    mem_bw_gbps,
    fp16_tflops,
    fp16_acc16_tflops,
    fp32_tflops,
    bf16,
    fp16_training,
    training_note,
    interconnect,
    fast_link,
    stack,
    compute_capability,
    flash_attention2,
    tdp_w,
    confidence,
    notes,
});
borsh_struct!(Region { id, name, zones });
borsh_struct!(ProviderInfo { id, name, billing_modes, regions, source, api_type_prefix });
borsh_struct!(InstanceType {
    provider,
    id,
    family,
    gpu,
    gpu_count,
    vcpu,
    ram_gb,
    regions,
    billing_modes,
    confidence,
    source,
    notes,
    net_gbps,
    rdma,
    rdma_gbps,
    zones,
    restricted,
});
borsh_struct!(PriceRow {
    provider,
    instance,
    region,
    mode,
    cny,
    as_of,
    source,
    confidence,
    derivation,
    notes
});
borsh_struct!(Anchor { gpu, monthly_cny_per_gpu, as_of, source, confidence, derivation });
borsh_struct!(ModeRatio { mode, provider, of_monthly, derivation });
borsh_struct!(DataFile { schema_version, gpu, provider, instance, price, anchor, mode_ratio });
