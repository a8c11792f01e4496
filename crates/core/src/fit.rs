//! Fit: does a job fit in a GPU's memory, and what takes the memory.
//!
//! Per-GPU memory = weights + gradients + optimizer states + trainable adapters + activations
//! (+ KV cache for inference) + runtime overhead, by method and ZeRO/FSDP stage. The breakdown is
//! the answer; the total is just its sum.

use serde::{Deserialize, Serialize};

use crate::explain::{self, Assumption, Verdict};
// The job's words live in `method` (explain names them too); re-exported so `fit::Method` stays.
pub use crate::method::{Method, Precision, Runtime};
use crate::model::ModelShape;

/// A training or inference job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub model: ModelShape,
    pub method: Method,
    /// `None` = automatic (BF16 where the GPU has it, else FP16; 16-bit weights for inference).
    #[serde(default)]
    pub precision: Option<Precision>,
    pub seq_len: u32,
    pub micro_batch: u32,
    pub grad_checkpointing: bool,
    /// Training tokens per epoch, or tokens to process for inference. 0 = not given (price by usage hours).
    pub tokens: f64,
    pub epochs: f64,
    /// ZeRO / FSDP stage 0–3; `None` = the lowest stage that fits.
    #[serde(default)]
    pub zero_stage: Option<u8>,
    /// LoRA rank (adapters on every linear layer).
    pub lora_rank: u32,
    /// Layers left trainable by the `freeze` method.
    pub freeze_trainable_layers: u32,
    /// What runs an inference job's decode loop (its per-step overhead); training ignores it.
    #[serde(default)]
    pub runtime: Runtime,
    /// Inference: tokens each sequence generates, the last part of `seq_len` (the rest is the
    /// prompt). 0 = not given: the whole context is counted as prompt, the larger memory figure.
    #[serde(default)]
    pub output_tokens: u32,
}

impl Job {
    /// A job with everyday defaults: seq 2,048, micro-batch 1, checkpointing on, LoRA rank 8,
    /// 2 trainable layers for `freeze`, 1 epoch, no tokens.
    pub fn new(model: ModelShape, method: Method) -> Job {
        Job {
            model,
            method,
            precision: None,
            seq_len: 2048,
            micro_batch: 1,
            grad_checkpointing: true,
            tokens: 0.0,
            epochs: 1.0,
            zero_stage: None,
            lora_rank: 8,
            freeze_trainable_layers: 2,
            runtime: Runtime::Serving,
            output_tokens: 0,
        }
    }

    /// Inference: the prompt's tokens, `seq_len` less the output tokens (all of it when none are given).
    pub fn prompt_tokens(&self) -> u32 {
        self.seq_len - self.output_tokens.min(self.seq_len)
    }

    /// Tokens to process in total (tokens × epochs).
    pub fn total_tokens(&self) -> f64 {
        self.tokens * self.epochs
    }

    /// Parameters of the LoRA adapters: rank × (in + out) on q, k, v, o and the three MLP projections
    /// — of every expert, in an MoE model's expert layers (PEFT's `all-linear`, LlamaFactory's
    /// `lora_target = all`, wrap each expert's projections; the router is left alone).
    pub fn adapter_params(&self) -> f64 {
        let m = &self.model;
        let h = m.hidden as f64;
        let (q, kv) = (m.heads as f64 * m.head_dim(), m.kv_heads as f64 * m.head_dim());
        let r = self.lora_rank as f64;
        let attn = r * ((h + q) + (h + kv) * 2.0 + (q + h));
        let mlp = |ffn: u32| r * 3.0 * (h + ffn as f64);
        let moe_layers = m.moe_layers() as f64;
        let experts = m.moe.map_or(0.0, |e| (e.experts + e.shared_experts) as f64 * mlp(e.expert_ffn));
        m.layers as f64 * attn + (m.layers as f64 - moe_layers) * mlp(m.ffn) + moe_layers * experts
    }
}

/// Bytes of the model's weights as training stores them: 16-bit, or QLoRA's quantized body with its
/// 16-bit embeddings and LM head. What ZeRO-3 shards, and gathers over a cluster's network.
pub(crate) fn weight_bytes(job: &Job) -> f64 {
    let m = &job.model;
    let body = (m.params - m.embedding_params()).max(0.0);
    match job.method {
        Method::Qlora8 => Precision::Int8.weight_bytes() * body + 2.0 * m.embedding_params(),
        Method::Qlora4 => Precision::Int4.weight_bytes() * body + 2.0 * m.embedding_params(),
        _ => 2.0 * m.params,
    }
}

/// The GPU side of a fit question.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Hardware {
    /// Usable VRAM per device, GB (10⁹ bytes, as vendors count).
    pub vram_gb: f64,
    /// Devices the job is spread over (data parallel with ZeRO for training, tensor parallel for inference).
    pub devices: u32,
    /// FlashAttention-2 available (no s² attention-score memory).
    pub flash_attention: bool,
    /// BF16 available (else training runs FP16 with loss scaling).
    pub bf16: bool,
}

/// Memory per device, GB, by what uses it.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MemoryBreakdown {
    pub weights_gb: f64,
    pub gradients_gb: f64,
    pub optimizer_gb: f64,
    /// Trainable adapter weights, gradients and Adam states (LoRA/QLoRA).
    pub adapters_gb: f64,
    pub activations_gb: f64,
    pub kv_cache_gb: f64,
    /// CUDA context, workspaces and allocator fragmentation.
    pub overhead_gb: f64,
}

impl MemoryBreakdown {
    pub fn total_gb(&self) -> f64 {
        self.weights_gb
            + self.gradients_gb
            + self.optimizer_gb
            + self.adapters_gb
            + self.activations_gb
            + self.kv_cache_gb
            + self.overhead_gb
    }
}

/// The answer to "does it fit": per-device breakdown, verdict, and the assumptions behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    pub fits: bool,
    /// Memory needed per device, GB.
    pub need_gb: f64,
    /// Usable VRAM per device, GB.
    pub vram_gb: f64,
    pub devices: u32,
    /// The ZeRO/FSDP stage used (0 = plain data parallel or single GPU).
    pub zero_stage: u8,
    pub breakdown: MemoryBreakdown,
    /// One line for people ("needs 128.3 GB per GPU, has 24 GB: does not fit"): `verdict_code`'s text.
    pub verdict: String,
    /// The verdict as a stable code with its numbers (the browser words it in its language).
    pub verdict_code: Verdict,
    pub assumptions: Vec<String>,
}

/// CUDA context + cuBLAS/NCCL workspaces, GB per device.
pub const CONTEXT_GB: f64 = 1.0;
/// Allocator fragmentation and temporary buffers, as a share of everything else.
pub const FRAGMENTATION: f64 = 0.10;

const GB: f64 = 1e9;

/// Memory for `job` on `hw`. With `job.zero_stage = None` and several devices, the lowest ZeRO stage
/// that fits is chosen (stage 3 if none does).
pub fn fit(job: &Job, hw: &Hardware) -> FitReport {
    let (mut r, a) = fit_explained(job, hw, true);
    r.assumptions = explain::texts(&a);
    r
}

/// [`fit`] with its assumptions as codes (only when `explain`: ranking collects them once, not per
/// offer) and the report's `assumptions` left empty.
pub(crate) fn fit_explained(job: &Job, hw: &Hardware, explain: bool) -> (FitReport, Vec<Assumption>) {
    let devices = hw.devices.max(1);
    let stages: Vec<u8> = match job.zero_stage {
        Some(s) => vec![s.min(3)],
        None if devices > 1 && job.method.is_training() => vec![0, 1, 2, 3],
        None => vec![0],
    };
    // Search without building text (rank calls this for every instance type), then explain the pick.
    let last = *stages.last().expect("at least one stage");
    let stage = stages.into_iter().find(|&s| fit_at(job, hw, devices, s, false).0.fits).unwrap_or(last);
    let (mut report, a) = fit_at(job, hw, devices, stage, explain);
    // The verdict's text is written once, for the pick: float formatting was a tenth of a ranking's
    // time when every stage tried wrote its own.
    report.verdict = report.verdict_code.to_string();
    (report, a)
}

fn fit_at(job: &Job, hw: &Hardware, devices: u32, stage: u8, text: bool) -> (FitReport, Vec<Assumption>) {
    let m = &job.model;
    let n = m.params;
    let d = devices as f64;
    let mut a: Vec<Assumption> = Vec::new();
    // Assumptions are only collected when asked for.
    macro_rules! say {
        ($e:expr) => {
            if text {
                a.push($e);
            }
        };
    }
    let mut b = MemoryBreakdown::default();
    let (s, mb) = (job.seq_len as f64, job.micro_batch as f64);
    let (h, l) = (m.hidden as f64, m.layers as f64);

    // Sharding divisors: stage ≥1 optimizer, ≥2 gradients, 3 weights.
    let shard = |min_stage: u8| if stage >= min_stage { d } else { 1.0 };

    match job.method {
        Method::Full | Method::FullPure16 => {
            b.weights_gb = 2.0 * n / shard(3) / GB;
            b.gradients_gb = 2.0 * n / shard(2) / GB;
            if job.method == Method::Full {
                b.optimizer_gb = 12.0 * n / shard(1) / GB;
                say!(Assumption::FullMixedPrecision);
            } else {
                b.optimizer_gb = 4.0 * n / shard(1) / GB;
                say!(Assumption::FullPure16);
            }
        }
        Method::Freeze => {
            let trainable =
                (job.freeze_trainable_layers as f64 / l).min(1.0) * (n - m.embedding_params()).max(0.0);
            b.weights_gb = 2.0 * n / shard(3) / GB;
            b.gradients_gb = 2.0 * trainable / shard(2) / GB;
            b.optimizer_gb = 12.0 * trainable / shard(1) / GB;
            say!(Assumption::Freeze {
                trainable_layers: job.freeze_trainable_layers,
                layers: m.layers,
                trainable_params: trainable,
            });
        }
        Method::Lora | Method::Qlora8 | Method::Qlora4 => {
            let body = (n - m.embedding_params()).max(0.0);
            b.weights_gb = weight_bytes(job) / shard(3) / GB;
            if job.method != Method::Lora {
                // bitsandbytes dequantizes each layer's weights to 16-bit for its matmuls: one layer's
                // worth of 16-bit weights is live at a time.
                b.weights_gb += 2.0 * body / l / GB;
            }
            let ap = job.adapter_params();
            b.adapters_gb = 16.0 * ap / shard(1) / GB;
            say!(Assumption::Adapters { method: job.method, lora_rank: job.lora_rank, adapter_params: ap });
        }
        Method::Inference => {
            let p = job.precision.unwrap_or(if hw.bf16 { Precision::Bf16 } else { Precision::Fp16 });
            // GPTQ, AWQ and bitsandbytes quantize the decoder layers' linear weights only: the
            // embeddings and the output head stay 16-bit. Qwen2.5's speed benchmark shows it
            // (data/validation.toml, Source 5): Qwen2.5-0.5B GPTQ-Int4 holds 0.48 GiB, 0.55× what
            // 4.1 bits for every parameter would give; its 136M-parameter tied embedding in 16 bits
            // is most of the difference.
            let sixteen_bit = if p.is_quantized() { m.embedding_params().min(n) } else { 0.0 };
            b.weights_gb = (p.weight_bytes() * (n - sixteen_bit) + 2.0 * sixteen_bit) / d / GB;
            let kv_per_token = 2.0 * l * m.kv_heads as f64 * m.head_dim() * mb * 2.0;
            b.kv_cache_gb = kv_per_token * s / d / GB;
            // Prefill runs the whole prompt through one layer at a time, so its transient peak is
            // one layer's widest step over every prompt token: the MLP's gate and up projections
            // and their product (3 × ffn per token in 16-bit), or attention's query and output
            // (2 × heads × head_dim), with the residual stream and its norm (2 × h) beside it.
            // Qwen2.5's speed benchmark (data/validation.toml, Source 5) grows by 37, 63, 138 and
            // 190 KB per prompt token beyond the KV cache for 0.5B/1.5B/7B/32B — 6·ffn + 4·h is 33,
            // 60, 128 and 186 KB; the 16·h once used here gave 14–82 KB and read the 32k-token rows
            // 0.67–0.80×. The generated tokens come later, one at a time: at prefill the cache holds
            // the prompt only, so the peak is the larger of prompt cache + prefill transient and
            // the whole cache at the end — counted here as the transient beyond the full cache.
            // Under tensor parallelism each GPU runs its slice of the MLP and of the heads; the
            // residual stream is whole on every one. Then the logits of the last position per
            // sequence in FP32.
            let prompt = f64::from(job.prompt_tokens());
            let step = (6.0 * m.prefill_mlp_width()).max(4.0 * m.heads as f64 * m.head_dim());
            let prefill = prompt * mb * (step / d + 4.0 * h);
            let cache_still_to_come = kv_per_token * (s - prompt) / d;
            b.activations_gb = ((prefill - cache_still_to_come).max(0.0) + mb * m.vocab as f64 * 4.0) / GB;
            say!(Assumption::InferenceMemory {
                precision: p,
                bytes_per_param: p.weight_bytes(),
                seq_len: job.seq_len,
                batch: job.micro_batch,
                devices,
                output_tokens: job.seq_len - job.prompt_tokens(),
            });
        }
    }

    if job.method.is_training() {
        // Activations of a decoder layer in 16-bit: s·b·h·(34 + 5·a·s/h) bytes (Korthikanti et al. 2022);
        // FlashAttention drops the 5·a·s/h attention-score term.
        let score = if hw.flash_attention { 0.0 } else { 5.0 * m.heads as f64 * s / h };
        let per_layer = s * mb * h * (34.0 + score);
        let logits = s * mb * m.vocab as f64 * 4.0 * 2.0;
        let act = if job.grad_checkpointing {
            l * 2.0 * s * mb * h + per_layer + logits
        } else {
            l * per_layer + logits
        };
        b.activations_gb = act / GB;
        say!(Assumption::Activations {
            seq_len: job.seq_len,
            micro_batch: job.micro_batch,
            checkpointing: job.grad_checkpointing,
        });
        say!(if hw.flash_attention { Assumption::FlashAttention } else { Assumption::NoFlashAttention });
        if devices > 1 {
            say!(Assumption::DataParallel { devices, zero_stage: stage });
        }
    }

    let rest = b.total_gb();
    b.overhead_gb = CONTEXT_GB + FRAGMENTATION * rest;
    say!(Assumption::Overhead { context_gb: CONTEXT_GB, fragmentation_pct: FRAGMENTATION * 100.0 });
    let need = b.total_gb();
    let fits = need <= hw.vram_gb;
    let verdict_code = if fits {
        Verdict::Fits { need_gb: need, vram_gb: hw.vram_gb }
    } else {
        Verdict::DoesNotFit { need_gb: need, vram_gb: hw.vram_gb }
    };
    let report = FitReport {
        fits,
        need_gb: need,
        vram_gb: hw.vram_gb,
        devices,
        zero_stage: stage,
        breakdown: b,
        verdict: String::new(),
        verdict_code,
        assumptions: Vec::new(),
    };
    (report, a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::preset;

    fn single(vram: f64) -> Hardware {
        Hardware { vram_gb: vram, devices: 1, flash_attention: true, bf16: true }
    }

    /// LlamaFactory's hardware table at its implied settings: batch 1, seq 512, checkpointing on.
    fn reference_job(model: &str, method: Method) -> Job {
        let mut j = Job::new(preset(model).unwrap(), method);
        j.seq_len = 512;
        j
    }

    #[test]
    fn agrees_with_llamafactory_table_within_15_percent() {
        let table: &[(Method, [f64; 3])] = &[
            (Method::Full, [120.0, 240.0, 1200.0]),
            (Method::FullPure16, [60.0, 120.0, 600.0]),
            (Method::Lora, [16.0, 32.0, 160.0]),
            (Method::Qlora8, [10.0, 20.0, 80.0]),
            (Method::Qlora4, [6.0, 12.0, 48.0]),
        ];
        let mut report = String::new();
        let mut worst: f64 = 0.0;
        for (method, gbs) in table {
            for (model, want) in ["llama-2-7b", "llama-2-13b", "llama-2-70b"].iter().zip(gbs) {
                let r = fit(&reference_job(model, *method), &single(10_000.0));
                let err = r.need_gb / want - 1.0;
                worst = worst.max(err.abs());
                report.push_str(&format!(
                    "{:>7} {:<12} {:>7.1} vs {:>6.0} ({:+.1} %)\n",
                    method.as_str(),
                    model,
                    r.need_gb,
                    want,
                    err * 100.0
                ));
            }
        }
        assert!(worst <= 0.15, "worst deviation {:.1} %\n{report}", worst * 100.0);
    }

    #[test]
    fn full_7b_does_not_fit_24gb() {
        let r = fit(&Job::new(preset("llama-2-7b").unwrap(), Method::Full), &single(24.0));
        assert!(!r.fits);
        assert!(r.need_gb > 100.0, "{}", r.verdict);
        assert!(r.verdict.contains("does not fit"));
    }

    #[test]
    fn qlora_7b_fits_a_16gb_t4() {
        let t4 = Hardware { vram_gb: 16.0, devices: 1, flash_attention: false, bf16: false };
        let r = fit(&Job::new(preset("qwen2.5-7b").unwrap(), Method::Qlora4), &t4);
        assert!(r.fits, "{}", r.verdict);
        let r = fit(&Job::new(preset("llama-2-7b").unwrap(), Method::Qlora4), &t4);
        assert!(r.fits, "{}", r.verdict);
    }

    #[test]
    fn zero_stage_is_chosen_to_fit_across_gpus() {
        let job = Job::new(preset("llama-2-7b").unwrap(), Method::Full);
        let hw = Hardware { vram_gb: 40.0, devices: 8, flash_attention: true, bf16: true };
        let r = fit(&job, &hw);
        assert!(r.fits, "{}", r.verdict);
        assert!(r.zero_stage >= 2, "stage {}", r.zero_stage);
        let r1 = fit(&Job { zero_stage: Some(0), ..job }, &hw);
        assert!(!r1.fits);
    }

    #[test]
    fn inference_counts_kv_cache() {
        let mut j = Job::new(preset("llama-2-7b").unwrap(), Method::Inference);
        j.seq_len = 4096;
        j.micro_batch = 8;
        let r = fit(&j, &single(80.0));
        // 2 (K,V) × 32 layers × 4096 dims × 4096 tokens × 8 seqs × 2 bytes = 17.2 GB.
        assert!((r.breakdown.kv_cache_gb - 17.18).abs() < 0.1, "{:?}", r.breakdown);
        assert!((r.breakdown.weights_gb - 13.48).abs() < 0.01);
    }

    /// A long prompt's prefill runs one layer's MLP over every prompt token (gate, up and their
    /// product: 6 bytes × ffn a token, beside 4 × hidden of residual stream) — Qwen2.5-7B's speed
    /// benchmark holds 21.4 GB at 30720 + 2048 tokens (data/validation.toml, Source 5). Generated
    /// tokens join the cache after the prefill, so saying how many there are lowers the peak;
    /// tensor parallelism splits the MLP's share.
    #[test]
    fn prefill_runs_one_layer_over_the_whole_prompt() {
        let mut j = Job::new(preset("qwen2.5-7b").unwrap(), Method::Inference);
        j.seq_len = 32768;
        let whole = fit(&j, &single(80.0)).breakdown;
        let m = &j.model;
        let per_token = 6.0 * m.ffn as f64 + 4.0 * m.hidden as f64;
        let logits = m.vocab as f64 * 4.0;
        assert!((whole.activations_gb - (32768.0 * per_token + logits) / 1e9).abs() < 1e-9, "{whole:?}");
        j.output_tokens = 2048;
        let split = fit(&j, &single(80.0));
        let kv_per_token = whole.kv_cache_gb * 1e9 / 32768.0;
        let want = (30720.0 * per_token - 2048.0 * kv_per_token + logits) / 1e9;
        assert!((split.breakdown.activations_gb - want).abs() < 1e-9, "{:?}", split.breakdown);
        assert_eq!(split.breakdown.kv_cache_gb, whole.kv_cache_gb);
        assert!(split.assumptions.iter().any(|a| a.contains("prefill of the 30720-token prompt")));
        // A short prompt: the cache at the end is the peak, no prefill term left.
        j.seq_len = 2049;
        assert!((fit(&j, &single(80.0)).breakdown.activations_gb - logits / 1e9).abs() < 1e-9);
        // Two GPUs in tensor parallel: each runs half the MLP, the residual stream whole.
        j.seq_len = 32768;
        j.output_tokens = 0;
        let tp = fit(&j, &Hardware { devices: 2, ..single(80.0) }).breakdown;
        let per_token_tp = 3.0 * m.ffn as f64 + 4.0 * m.hidden as f64;
        assert!((tp.activations_gb - (32768.0 * per_token_tp + logits) / 1e9).abs() < 1e-9, "{tp:?}");
    }

    /// Quantized inference keeps the embeddings and the output head in 16 bits (GPTQ/AWQ quantize the
    /// decoder layers' linear weights): Qwen2.5-7B at 4 bits holds 2 × 152064 × 3584 × 2 bytes of
    /// them besides 6.5B parameters at 4.1 bits.
    #[test]
    fn quantized_inference_keeps_embeddings_in_16_bits() {
        let mut j = Job::new(preset("qwen2.5-7b").unwrap(), Method::Inference);
        j.precision = Some(Precision::Int4);
        let r = fit(&j, &single(80.0));
        let emb = 2.0 * 152064.0 * 3584.0;
        let want = (2.0 * emb + Precision::Int4.weight_bytes() * (7.61e9 - emb)) / 1e9;
        assert!((r.breakdown.weights_gb - want).abs() < 1e-9, "{:?} vs {want}", r.breakdown);
        j.precision = Some(Precision::Bf16);
        assert!((fit(&j, &single(80.0)).breakdown.weights_gb - 2.0 * 7.61).abs() < 1e-9);
    }

    /// An MoE model is sized by all of its parameters and timed by its active ones: Qwen3-30B-A3B
    /// needs more memory than the dense 8B, trains faster than the dense 4B, and its LoRA wraps every
    /// expert (128 per layer), so its adapters outweigh a dense model's many times over.
    #[test]
    fn moe_memory_counts_every_expert_and_time_counts_the_active_ones() {
        let catalog = crate::catalog::Catalog::shipped();
        let a100 = catalog.gpu("a100-sxm4-80g").unwrap();
        let job = |m: &str| {
            let mut j = Job::new(preset(m).unwrap(), Method::Qlora4);
            j.tokens = 10e6;
            j
        };
        let (moe, d8, d4) = (job("qwen3-30b-a3b"), job("qwen3-8b"), job("qwen3-4b"));
        let fit_of = |j: &Job| fit(j, &single(80.0));
        assert!(
            fit_of(&moe).need_gb > fit_of(&d8).need_gb,
            "{:?} vs {:?}",
            fit_of(&moe).breakdown,
            fit_of(&d8).breakdown
        );
        // 4-bit weights of 30.5B parameters (less the 16-bit embeddings) are about 15 GB on their own.
        assert!(fit_of(&moe).breakdown.weights_gb > 15.0, "{:?}", fit_of(&moe).breakdown);
        let t = |j: &Job| crate::time::estimate_time(j, a100, 1.0);
        let ratio = t(&moe).hours_high / t(&d4).hours_high;
        assert!((ratio - 3.3 / 4.0).abs() < 1e-9, "time ratio {ratio}");
        assert!(t(&moe)
            .assumptions
            .iter()
            .any(|a| a.contains("mixture of experts (128 experts, 8 per token)")));
        // 48 layers × (128 experts × 3 × 8 × (2048 + 768) + attention) ≈ 0.42B adapter parameters.
        let (a_moe, a_dense) = (moe.adapter_params(), d8.adapter_params());
        assert!((a_moe / 1e9 - 0.42).abs() < 0.02 && a_moe > 10.0 * a_dense, "{a_moe} vs {a_dense}");
    }
}
