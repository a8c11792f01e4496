//! The engine's explanations as stable codes with their parameters: the assumptions behind the
//! numbers, why an offer cannot run the job, the fit verdict and how old the prices are.
//!
//! Owns these codes and their English text, as [`crate::warning`] does for warnings. The CLI prints the
//! text (`Ranking::assumptions`, `Infeasible::reasons`, `FitReport::verdict`, `Ranking::price_age`,
//! unchanged); the browser calculator renders the codes in its own language; `--json` carries both
//! (`assumption_codes`, `reason_codes`, `verdict_code`, `price_age_code`, see docs/json.md). A code,
//! once published, keeps its name and parameters: scripts match on it.

use std::fmt;

use jiff::civil::Date;
use serde::{Deserialize, Serialize};

use crate::method::{Method, Precision, Runtime};

/// One assumption behind the fit, time, price or plan numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum Assumption {
    /// Full fine-tune, mixed-precision Adam: 16 bytes per parameter.
    FullMixedPrecision,
    /// Full fine-tune entirely in 16-bit: 8 bytes per parameter.
    FullPure16,
    /// `freeze`: the last `trainable_layers` of `layers` are trained (`trainable_params`).
    Freeze { trainable_layers: u32, layers: u32, trainable_params: f64 },
    /// LoRA / QLoRA: the base's storage (by `method`) and the adapters' size.
    Adapters { method: Method, lora_rank: u32, adapter_params: f64 },
    /// Inference memory: weights at `precision` and a 16-bit KV cache (`devices` > 1: tensor parallel).
    InferenceMemory {
        precision: Precision,
        bytes_per_param: f64,
        seq_len: u32,
        batch: u32,
        devices: u32,
        /// Tokens generated per sequence, the last part of `seq_len` (0: not given).
        #[serde(default)]
        output_tokens: u32,
    },
    /// Training activations per layer (Korthikanti et al. 2022).
    Activations { seq_len: u32, micro_batch: u32, checkpointing: bool },
    /// FlashAttention-2 keeps no s² attention scores.
    FlashAttention,
    /// Pre-Ampere GPUs keep the s² attention scores.
    NoFlashAttention,
    /// Data parallel training over `devices` GPUs with ZeRO `zero_stage`.
    DataParallel { devices: u32, zero_stage: u8 },
    /// CUDA context and allocator fragmentation.
    Overhead { context_gb: f64, fragmentation_pct: f64 },
    /// Inference time: decode reads the weights once per step at a share of peak memory bandwidth.
    InferenceDecode {
        precision: Precision,
        low_pct: f64,
        high_pct: f64,
        mem_bw_gbps: f64,
        batch: u32,
        runtime: Runtime,
        layers: u32,
        layer_us_low: f64,
        layer_us_high: f64,
        /// Experts an eager MoE block visits per layer (0: none, or a serving engine's fused kernel).
        #[serde(default)]
        experts: u32,
        #[serde(default)]
        expert_us_low: f64,
        #[serde(default)]
        expert_us_high: f64,
    },
    /// Training FLOPs ≈ 6·N·D.
    Flops6,
    /// LoRA-style training FLOPs ≈ 4·N·D.
    Flops4,
    /// This GPU's MFU band (`basis` is the band's English reason, [`crate::MfuBand::basis`]).
    Mfu { low_pct: f64, high_pct: f64, tflops: f64, gpus: f64, basis: String },
    /// Ascend MFU taken equal to CUDA GPUs'.
    AscendMfu,
    /// The model's shape was inferred from its parameter count.
    ShapeInferred { params: f64, layers: u32, hidden: u32 },
    /// A mixture-of-experts model: memory for every parameter, compute for the active ones.
    Moe { experts: u32, experts_per_token: u32, params: f64, active_params: f64 },
    /// The MFU bands of every method (training rankings).
    MfuBands,
    /// Inference time is decode-bound (inference rankings).
    InferenceTime,
    /// Term modes bill whole terms for the calendar time; hourly and spot the hours worked.
    TermBilling,
    /// One instance per offer; the cheapest region per instance type and mode.
    OneInstancePerOffer,
    /// Multi-node offers (issue 14): how the nodes share the work and what their network is taken to
    /// do — NCCL at `link_low_pct`–`link_high_pct` % of the published private bandwidth, gradients
    /// once per optimizer step of at least `sequences_per_step` sequences, overlap from full to none,
    /// and a warning under `slow_link_gbps`.
    Clusters {
        link_low_pct: f64,
        link_high_pct: f64,
        rdma_low_pct: f64,
        rdma_high_pct: f64,
        sequences_per_step: f64,
        slow_link_gbps: f64,
    },
    /// Spot offers (issue 15): the time to finish counts the expected reclaims — hours × the rate
    /// (× the nodes), each losing half a checkpoint interval plus a restart. No cloud publishes the
    /// rate: it is an input with a default ([`crate::SpotRisk`]).
    SpotRestarts { reclaims_per_day: f64, checkpoint_every_hours: f64, restart_hours: f64 },
    /// Staged plan: validate runs `pct` % of the tokens with QLoRA-4 on pay-as-you-go.
    ValidateShare { pct: f64 },
    /// Staged plan: produce serves for `days` days.
    ProduceDays { days: f64 },
    /// Staged plan: copy a validated environment with `gpuctl clone`.
    BuySameConfig,
    /// TCO: per-hour cloud modes pay for used hours; term modes hold the GPUs all year.
    CloudPaysUsedHours,
    /// TCO: spot is left out of the comparison.
    SpotExcludedFromTco,
    /// TCO: how self-built power is computed.
    SelfBuiltPower,
    /// TCO default: the card price and where it comes from.
    DefaultCardPrice,
    /// TCO default: the server chassis price.
    DefaultServerPrice,
    /// TCO default: network and storage.
    DefaultNetworkStorage,
    /// TCO default: depreciation years.
    DefaultDepreciation,
    /// TCO default: power per server.
    DefaultServerPower,
    /// TCO default: PUE.
    DefaultPue,
    /// TCO default: electricity tariff.
    DefaultTariff,
    /// TCO default: ops staff.
    DefaultOps,
}

/// The English text the CLI prints.
impl fmt::Display for Assumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Assumption::*;
        match self {
            FullMixedPrecision => f.write_str("full fine-tune, mixed-precision Adam: 16-bit weights (2 B) + 16-bit grads (2 B) + FP32 master weights and Adam m, v (12 B) = 16 bytes/param"),
            FullPure16 => f.write_str("full fine-tune in pure 16-bit: weights 2 B + grads 2 B + Adam m, v in 16-bit 4 B = 8 bytes/param"),
            Freeze { trainable_layers, layers, trainable_params } => write!(
                f,
                "freeze: last {trainable_layers} of {layers} layers trainable ({:.2}B params) in mixed-precision Adam, the rest frozen in 16-bit",
                trainable_params / 1e9
            ),
            Adapters { method, lora_rank, adapter_params } => {
                let label = match method {
                    Method::Lora => "frozen base in 16-bit (2 B/param)",
                    Method::Qlora8 => "base in 8-bit (LLM.int8), embeddings and LM head in 16-bit, one layer dequantized to 16-bit at a time",
                    _ => "base in 4-bit NF4 with double quantization (4.127 bits/param), embeddings and LM head in 16-bit, one layer dequantized to 16-bit at a time",
                };
                write!(
                    f,
                    "{}: {label}; LoRA rank {lora_rank} on all linear layers = {:.1}M params, FP32 weights + grads + Adam (16 B each)",
                    method.as_str(),
                    adapter_params / 1e6
                )
            }
            InferenceMemory { precision, bytes_per_param, seq_len, batch, devices, output_tokens } => {
                write!(
                    f,
                    "inference: {} weights ({bytes_per_param} B/param{}), 16-bit KV cache for {seq_len} tokens × batch {batch}",
                    precision.as_str(),
                    if precision.is_quantized() { "; the embeddings and output head stay 16-bit" } else { "" }
                )?;
                if *devices > 1 {
                    write!(f, ", tensor parallel over {devices} GPUs")?;
                }
                let prompt = seq_len.saturating_sub(*output_tokens);
                if *output_tokens > 0 {
                    write!(f, "; prefill of the {prompt}-token prompt runs one layer's MLP over all of it (the cache then holds the prompt only; --output-tokens {output_tokens})")
                } else {
                    write!(f, "; prefill runs one layer's MLP over all {seq_len} tokens, counted as prompt (--output-tokens says how many are generated)")
                }
            }
            Activations { seq_len, micro_batch, checkpointing } => write!(
                f,
                "activations: seq {seq_len} × micro-batch {micro_batch}, gradient checkpointing {}, s·b·h·(34 + 5·a·s/h) bytes per layer (Korthikanti et al. 2022), FP32 logits + grads",
                if *checkpointing { "on (layer inputs kept, one layer recomputed)" } else { "off" },
            ),
            FlashAttention => f.write_str("attention: FlashAttention-2 where the GPU has it (Ampere and newer), so no s² attention-score memory"),
            NoFlashAttention => f.write_str("attention: no FlashAttention-2 on pre-Ampere GPUs (T4, V100, P4/P40), so s² attention scores are kept"),
            DataParallel { devices, zero_stage } => {
                write!(f, "data parallel over {devices} GPUs with ZeRO stage {zero_stage}")
            }
            Overhead { context_gb, fragmentation_pct } => write!(
                f,
                "overhead: {context_gb} GB CUDA context/workspaces + {fragmentation_pct:.0} % allocator fragmentation"
            ),
            InferenceDecode {
                precision,
                low_pct,
                high_pct,
                mem_bw_gbps,
                batch,
                runtime,
                layers,
                layer_us_low,
                layer_us_high,
                experts,
                expert_us_low,
                expert_us_high,
            } => {
                write!(
                    f,
                    "inference: decode is memory-bound, each step reads the {} decoder weights and the 16-bit output head once at {low_pct:.0}–{high_pct:.0} % of {mem_bw_gbps} GB/s, {} {layer_us_low:.0}–{layer_us_high:.0} µs per layer × {layers} layers of kernel launches and scheduling ({}{})",
                    precision.as_str(),
                    if runtime.launches_overlap_reads() { "or, when longer," } else { "plus" },
                    match runtime {
                        Runtime::Serving => "a serving engine such as vLLM or SGLang; Hugging Face transformers' generate() takes about ten times that: --runtime transformers",
                        Runtime::Transformers => "Hugging Face transformers' generate(), eager PyTorch: Python launches the kernels while the GPU reads, so the slower of the two sets the step",
                    },
                    if precision.is_quantized() { "; quantized kernels unpack the weights and reduce in a second pass, so more per layer than 16-bit" } else { "" }
                )?;
                if *experts > 0 {
                    write!(
                        f,
                        ", and {expert_us_low:.0}–{expert_us_high:.0} µs for each of the {experts} experts of every MoE layer (transformers' MoE block loops over them in Python)"
                    )?;
                }
                write!(f, "; batch {batch} sequences per step; prompt processing not counted")
            }
            Flops6 => f.write_str("FLOPs ≈ 6·N·D (forward 2·N·D + backward 4·N·D per token)"),
            Flops4 => f.write_str("FLOPs ≈ 4·N·D for LoRA-style training (forward 2·N·D + activation gradients 2·N·D; frozen weights need no weight-gradient GEMMs)"),
            Mfu { low_pct, high_pct, tflops, gpus, basis } => write!(
                f,
                "MFU {low_pct:.0}–{high_pct:.0} % of dense {tflops} TFLOPS per GPU (16-bit tensor, FP32 accumulate as mixed precision runs) × {gpus} GPU: {basis}"
            ),
            AscendMfu => f.write_str("Ascend MFU assumed to match CUDA GPUs (no published fine-tuning throughput found)"),
            ShapeInferred { params, layers, hidden } => write!(
                f,
                "model shape inferred from {:.2}B parameters (Llama-like: {layers} layers, hidden {hidden}); use a preset for exact activation/KV memory",
                params / 1e9
            ),
            Moe { experts, experts_per_token, params, active_params } => write!(
                f,
                "mixture of experts ({experts} experts, {experts_per_token} per token): memory holds all {:.1}B parameters, time counts the {:.1}B each token is computed with; expert parallelism is not modelled, and Hugging Face transformers runs the experts one after another, so MoE training often runs below the dense MFU band",
                params / 1e9,
                active_params / 1e9
            ),
            MfuBands => f.write_str("MFU bands (share of dense 16-bit peak; catalog-facts §5): full fine-tune 35–50 % on one GPU or over NVLink, 20–35 % across PCIe-only GPUs; LoRA 25–35 %; QLoRA 15–25 %; pre-Ampere GPUs without FlashAttention-2 10–25 % (QLoRA 10–20 %); each offer's band is in time.mfu"),
            InferenceTime => f.write_str("inference time: decode is memory-bound, each step reads the weights (the output head in 16 bits) once at 30–70 % of peak memory bandwidth, plus a fixed time per layer (30–60 µs in a serving engine such as vLLM or SGLang, 60–180 µs with GPTQ/AWQ weights; in Hugging Face transformers 500–1000 µs, 500–1400 µs with GPTQ/AWQ, plus 60–100 µs per expert of an MoE layer, which runs alongside the reads, so the longer of the two counts); prompt processing not counted"),
            TermBilling => f.write_str("term modes bill whole terms for the calendar time the work spans (hours ÷ hours per day); hourly and spot bill the hours worked"),
            OneInstancePerOffer => f.write_str("one instance per offer unless its row says N nodes; for each instance type and billing mode the cheapest region with an observed price is shown, else the cheapest estimate"),
            Clusters { link_low_pct, link_high_pct, rdma_low_pct, rdma_high_pct, sequences_per_step, slow_link_gbps } => write!(
                f,
                "N nodes: N instances of one type in one zone and subnet, billed alike. When one node holds the job, ZeRO/FSDP shards inside each node and each node keeps a replica (hybrid sharding): only the trainable gradients cross the network, one all-reduce per optimizer step of at least {sequences_per_step:.0} sequences (gradient accumulation). When it does not, ZeRO/FSDP shards over every GPU of every node, and at stage 3 the weights are all-gathered over the network at every forward and backward. The nodes talk over the type's RDMA fabric where the catalog gives its ports' speed, at {rdma_low_pct:.0}–{rdma_high_pct:.0} % of it, else over its published private-network bandwidth at {link_low_pct:.0}–{link_high_pct:.0} % (NCCL over TCP); fastest time: the network hidden behind compute, slowest: not hidden at all. Below {slow_link_gbps:.0} Gbit/s an offer is marked"
            ),
            SpotRestarts { reclaims_per_day, checkpoint_every_hours, restart_hours } => write!(
                f,
                "spot: {reclaims_per_day} reclaims per instance per day of running (an input: none of the clouds publishes a reclaim rate), each losing half the checkpoint interval ({checkpoint_every_hours} h ÷ 2) plus {restart_hours} h to restart; expected restarts = hours × rate × nodes, added to a spot offer's hours and cost"
            ),
            ValidateShare { pct } => write!(f, "validate runs {pct:.0} % of the tokens with QLoRA-4 on pay-as-you-go"),
            ProduceDays { days } => write!(f, "produce serves for {days} days, 24 h/day, 16-bit weights; spot excluded"),
            BuySameConfig => f.write_str("use 'buy same config' (gpuctl clone) to copy a validated environment to the next stage"),
            CloudPaysUsedHours => f.write_str("cloud per-hour modes pay only for used hours; term modes (monthly, 1-, 3-year) hold the GPUs all year"),
            SpotExcludedFromTco => f.write_str("spot excluded from the comparison: it can be reclaimed"),
            SelfBuiltPower => f.write_str("self-built power = servers × kW × (idle share + (1 − idle share) × utilization) × PUE × tariff × 8,760 h"),
            DefaultCardPrice => f.write_str("card ¥110,000: middle of the 90k–130k A100 80 GB PCIe street-price band 2023–24 (catalog-facts §4, estimate)"),
            DefaultServerPrice => f.write_str("server ¥150,000 per 8-GPU chassis without GPUs: estimate, no public source"),
            DefaultNetworkStorage => f.write_str("network + storage ¥200,000 per cluster: estimate, no public source"),
            DefaultDepreciation => f.write_str("depreciation 4 years: between 3 (GPU cadence) and 5 (hyperscaler server life)"),
            DefaultServerPower => f.write_str("3.4 kW per 8 × A100 server at load (8 × 300 W + host), 30 % of it when idle: NVIDIA datasheets + estimate"),
            DefaultPue => f.write_str("PUE 1.4: between new hub DCs (1.3) and typical colo (1.5) (catalog-facts §4)"),
            DefaultTariff => f.write_str("¥0.8/kWh: east-coast commercial tariff 0.6–1.0 (estimate; western hubs 0.35–0.5)"),
            DefaultOps => f.write_str("ops ¥175,000/yr: 0.5 FTE of a ¥350k fully loaded SRE (estimate)"),
        }
    }
}

/// Why an instance type (or one billing mode of it) cannot run the job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum Reason {
    /// The job needs `need_gb` per GPU; the GPU has `vram_gb`.
    DoesNotFit { need_gb: f64, vram_gb: f64 },
    /// The GPU cannot train efficiently (no fast FP16); `note` is the catalog's English note.
    UnsuitableForTraining { gpu: String, note: String },
    /// Software the job needs does not run on this GPU (the compat check's English message).
    Incompatible { message: String },
    /// The work spans `wall_hours` of wall-clock time (high estimate), past the deadline.
    MissesDeadline { wall_hours: f64, deadline_hours: f64 },
    /// No price for the regions and billing modes asked.
    NoPrice,
    /// A cluster was asked for, but the catalog has no published network bandwidth for this type,
    /// so its time would be a guess.
    NoNetworkFigure,
    /// This mode's high estimate `cost_high` ¥ is over the `budget` ¥.
    OverBudget { cost_high: f64, budget: f64 },
}

impl Reason {
    /// The stable code (`over-budget`), as in `--json`'s `reason_codes[].code`.
    pub fn code(&self) -> &'static str {
        match self {
            Reason::DoesNotFit { .. } => "does-not-fit",
            Reason::UnsuitableForTraining { .. } => "unsuitable-for-training",
            Reason::Incompatible { .. } => "incompatible",
            Reason::MissesDeadline { .. } => "misses-deadline",
            Reason::NoPrice => "no-price",
            Reason::NoNetworkFigure => "no-network-figure",
            Reason::OverBudget { .. } => "over-budget",
        }
    }
}

/// The English text the CLI prints.
impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::DoesNotFit { need_gb, vram_gb } => {
                Verdict::DoesNotFit { need_gb: *need_gb, vram_gb: *vram_gb }.fmt(f)
            }
            Reason::UnsuitableForTraining { gpu, note } => write!(f, "{gpu} is unsuitable for training: {note}"),
            Reason::Incompatible { message } => f.write_str(message),
            Reason::MissesDeadline { wall_hours, deadline_hours } => write!(
                f,
                "misses the deadline: {wall_hours:.0} h of wall-clock time (high estimate) > {deadline_hours:.0} h"
            ),
            Reason::NoPrice => f.write_str("no price known for the regions and billing modes asked"),
            Reason::NoNetworkFigure => f.write_str(
                "no published network bandwidth for this type: a multi-node time would be a guess",
            ),
            Reason::OverBudget { cost_high, budget } => {
                write!(f, "over budget: ¥{cost_high:.0} (high estimate) > ¥{budget:.0}")
            }
        }
    }
}

/// Whether the job fits a GPU's memory, with the two numbers that decide it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum Verdict {
    Fits { need_gb: f64, vram_gb: f64 },
    DoesNotFit { need_gb: f64, vram_gb: f64 },
}

/// The English text the CLI prints (`FitReport::verdict`).
impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Fits { need_gb, vram_gb } => write!(
                f,
                "needs {need_gb:.1} GB per GPU, has {vram_gb:.0} GB: fits ({:.1} GB free)",
                vram_gb - need_gb
            ),
            Verdict::DoesNotFit { need_gb, vram_gb } => {
                write!(f, "needs {need_gb:.1} GB per GPU, has {vram_gb:.0} GB: does not fit")
            }
        }
    }
}

/// How old the catalog's prices are on a day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum PriceAge {
    /// Prices dated `oldest` … `newest`: `newest_days`–`oldest_days` days old on `today`.
    Dated {
        oldest: Date,
        newest: Date,
        newest_days: i64,
        oldest_days: i64,
        today: Date,
        overlaid: bool,
    },
    NoPrices,
}

/// The English text the CLI prints (`price_age`).
impl fmt::Display for PriceAge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PriceAge::Dated { oldest, newest, newest_days, oldest_days, today, overlaid } => write!(
                f,
                "prices as of {oldest} … {newest} ({newest_days}–{oldest_days} days old on {today}){}",
                if *overlaid { "; user overlay applied" } else { "" }
            ),
            PriceAge::NoPrices => f.write_str("no prices in the catalog"),
        }
    }
}

/// The English texts of `codes`, in order.
pub fn texts<T: fmt::Display>(codes: &[T]) -> Vec<String> {
    codes.iter().map(ToString::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each code gives the English text the CLI printed before codes existed, and round-trips as JSON.
    fn check<T>(code: T, text: &str, json: &str)
    where
        T: fmt::Display + Serialize + for<'de> Deserialize<'de> + PartialEq + fmt::Debug,
    {
        assert_eq!(code.to_string(), text);
        assert_eq!(serde_json::to_string(&code).unwrap(), json);
        assert_eq!(serde_json::from_str::<T>(json).unwrap(), code);
    }

    #[test]
    fn assumptions_keep_their_text_and_json() {
        use Assumption::*;
        check(
            Adapters { method: Method::Qlora4, lora_rank: 8, adapter_params: 20.19e6 },
            "qlora4: base in 4-bit NF4 with double quantization (4.127 bits/param), embeddings and LM head in 16-bit, one layer dequantized to 16-bit at a time; LoRA rank 8 on all linear layers = 20.2M params, FP32 weights + grads + Adam (16 B each)",
            r#"{"code":"adapters","method":"qlora4","lora_rank":8,"adapter_params":20190000.0}"#,
        );
        check(
            InferenceMemory {
                precision: Precision::Bf16,
                bytes_per_param: 2.0,
                seq_len: 2048,
                batch: 1,
                devices: 2,
                output_tokens: 0,
            },
            "inference: bf16 weights (2 B/param), 16-bit KV cache for 2048 tokens × batch 1, tensor parallel over 2 GPUs; prefill runs one layer's MLP over all 2048 tokens, counted as prompt (--output-tokens says how many are generated)",
            r#"{"code":"inference-memory","precision":"bf16","bytes_per_param":2.0,"seq_len":2048,"batch":1,"devices":2,"output_tokens":0}"#,
        );
        check(
            InferenceMemory {
                precision: Precision::Int4,
                bytes_per_param: 0.515875,
                seq_len: 32768,
                batch: 1,
                devices: 1,
                output_tokens: 2048,
            },
            "inference: int4 weights (0.515875 B/param; the embeddings and output head stay 16-bit), 16-bit KV cache for 32768 tokens × batch 1; prefill of the 30720-token prompt runs one layer's MLP over all of it (the cache then holds the prompt only; --output-tokens 2048)",
            r#"{"code":"inference-memory","precision":"int4","bytes_per_param":0.515875,"seq_len":32768,"batch":1,"devices":1,"output_tokens":2048}"#,
        );
        check(
            Activations { seq_len: 512, micro_batch: 1, checkpointing: false },
            "activations: seq 512 × micro-batch 1, gradient checkpointing off, s·b·h·(34 + 5·a·s/h) bytes per layer (Korthikanti et al. 2022), FP32 logits + grads",
            r#"{"code":"activations","seq_len":512,"micro_batch":1,"checkpointing":false}"#,
        );
        check(
            Overhead { context_gb: 1.0, fragmentation_pct: 10.0 },
            "overhead: 1 GB CUDA context/workspaces + 10 % allocator fragmentation",
            r#"{"code":"overhead","context_gb":1.0,"fragmentation_pct":10.0}"#,
        );
        check(
            ShapeInferred { params: 7e9, layers: 32, hidden: 4096 },
            "model shape inferred from 7.00B parameters (Llama-like: 32 layers, hidden 4096); use a preset for exact activation/KV memory",
            r#"{"code":"shape-inferred","params":7000000000.0,"layers":32,"hidden":4096}"#,
        );
        check(
            Moe { experts: 128, experts_per_token: 8, params: 30.5e9, active_params: 3.3e9 },
            "mixture of experts (128 experts, 8 per token): memory holds all 30.5B parameters, time counts the 3.3B each token is computed with; expert parallelism is not modelled, and Hugging Face transformers runs the experts one after another, so MoE training often runs below the dense MFU band",
            r#"{"code":"moe","experts":128,"experts_per_token":8,"params":30500000000.0,"active_params":3300000000.0}"#,
        );
        check(
            ProduceDays { days: 30.0 },
            "produce serves for 30 days, 24 h/day, 16-bit weights; spot excluded",
            r#"{"code":"produce-days","days":30.0}"#,
        );
        check(
            SpotRestarts { reclaims_per_day: 0.25, checkpoint_every_hours: 1.0, restart_hours: 0.25 },
            "spot: 0.25 reclaims per instance per day of running (an input: none of the clouds publishes a reclaim rate), each losing half the checkpoint interval (1 h ÷ 2) plus 0.25 h to restart; expected restarts = hours × rate × nodes, added to a spot offer's hours and cost",
            r#"{"code":"spot-restarts","reclaims_per_day":0.25,"checkpoint_every_hours":1.0,"restart_hours":0.25}"#,
        );
        check(
            DefaultPue,
            "PUE 1.4: between new hub DCs (1.3) and typical colo (1.5) (catalog-facts §4)",
            r#"{"code":"default-pue"}"#,
        );
    }

    #[test]
    fn reasons_verdicts_and_price_age_keep_their_text_and_json() {
        check(
            Reason::DoesNotFit { need_gb: 128.26, vram_gb: 24.0 },
            "needs 128.3 GB per GPU, has 24 GB: does not fit",
            r#"{"code":"does-not-fit","need_gb":128.26,"vram_gb":24.0}"#,
        );
        check(
            Reason::OverBudget { cost_high: 812.4, budget: 500.0 },
            "over budget: ¥812 (high estimate) > ¥500",
            r#"{"code":"over-budget","cost_high":812.4,"budget":500.0}"#,
        );
        check(
            Reason::MissesDeadline { wall_hours: 61.2, deadline_hours: 48.0 },
            "misses the deadline: 61 h of wall-clock time (high estimate) > 48 h",
            r#"{"code":"misses-deadline","wall_hours":61.2,"deadline_hours":48.0}"#,
        );
        check(
            Reason::NoPrice,
            "no price known for the regions and billing modes asked",
            r#"{"code":"no-price"}"#,
        );
        check(
            Verdict::Fits { need_gb: 10.04, vram_gb: 24.0 },
            "needs 10.0 GB per GPU, has 24 GB: fits (14.0 GB free)",
            r#"{"code":"fits","need_gb":10.04,"vram_gb":24.0}"#,
        );
        check(
            PriceAge::Dated {
                oldest: Date::constant(2026, 6, 15),
                newest: Date::constant(2026, 11, 20),
                newest_days: 10,
                oldest_days: 168,
                today: Date::constant(2026, 11, 30),
                overlaid: true,
            },
            "prices as of 2026-06-15 … 2026-11-20 (10–168 days old on 2026-11-30); user overlay applied",
            r#"{"code":"dated","oldest":"2026-06-15","newest":"2026-11-20","newest_days":10,"oldest_days":168,"today":"2026-11-30","overlaid":true}"#,
        );
        for (r, code) in
            [(Reason::NoPrice, "no-price"), (Reason::Incompatible { message: "x".into() }, "incompatible")]
        {
            assert_eq!(r.code(), code);
            assert!(serde_json::to_string(&r).unwrap().starts_with(&format!("{{\"code\":\"{code}\"")));
        }
    }
}
