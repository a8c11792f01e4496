//! Time: how long a job takes on some GPUs, as a low–high range.
//!
//! Training FLOPs ≈ 6·N·D (full) or 4·N·D (LoRA-style: no weight-gradient GEMMs for frozen weights),
//! divided by GPUs × dense 16-bit peak × an MFU band that depends on the method, the GPU generation
//! and the interconnect (catalog-facts.md §5). Inference is bandwidth-bound: each decode step reads
//! the weights once.

use serde::{Deserialize, Serialize};

use crate::catalog::{Gpu, Stack};
use crate::explain::{self, Assumption};
use crate::fit::{Job, Method, Precision};

/// A model-FLOPs-utilization band (fractions of dense peak).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MfuBand {
    pub low: f64,
    pub high: f64,
    /// Why this band (shown in assumptions).
    pub basis: String,
}

/// How long the job takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeEstimate {
    /// Tokens processed (tokens × epochs).
    pub tokens: f64,
    /// FLOPs per token per parameter: 6 (full), 4 (LoRA-style), 2 (inference).
    pub flops_factor: f64,
    pub total_flops: f64,
    /// GPUs (fractional for vGPU slices).
    pub gpus: f64,
    pub peak_tflops_per_gpu: f64,
    pub mfu: MfuBand,
    /// Fastest and slowest plausible wall-clock hours.
    pub hours_low: f64,
    pub hours_high: f64,
    pub tokens_per_second_low: f64,
    pub tokens_per_second_high: f64,
    /// Set when this GPU should not run this job (e.g. training on a P4), with the reason.
    pub unsuitable: Option<String>,
    pub assumptions: Vec<String>,
}

/// The MFU band for a method on a GPU spread over `gpus` devices.
pub fn mfu_band(method: Method, gpu: &Gpu, gpus: f64) -> MfuBand {
    let multi = gpus > 1.0;
    let mut band = match method {
        Method::Full | Method::FullPure16 if multi && !gpu.fast_link => MfuBand {
            low: 0.20,
            high: 0.35,
            basis: "full fine-tune across PCIe-only GPUs: communication-bound".into(),
        },
        Method::Full | Method::FullPure16 => MfuBand {
            low: 0.35,
            high: 0.50,
            basis: "full fine-tune with FSDP/ZeRO on one GPU or over NVLink".into(),
        },
        Method::Freeze | Method::Lora => {
            MfuBand { low: 0.25, high: 0.35, basis: "LoRA-style with HF PEFT + FlashAttention-2".into() }
        }
        Method::Qlora8 | Method::Qlora4 => {
            MfuBand { low: 0.15, high: 0.25, basis: "QLoRA: dequantization overhead".into() }
        }
        // 30 %, not the 40 % once used: SGLang on an H20 reads Qwen3's weights at 30–40 % of its
        // 4 TB/s once the fixed per-layer time is taken out (see `Runtime::layer_overhead_us`).
        Method::Inference => MfuBand {
            low: 0.30,
            high: 0.70,
            basis: "decode reads all weights per step; share of peak memory bandwidth achieved".into(),
        },
    };
    if method.is_training() && !gpu.flash_attention2 && gpu.stack == Stack::Cuda {
        let high = if matches!(method, Method::Qlora8 | Method::Qlora4) { 0.20 } else { 0.25 };
        band = MfuBand {
            low: 0.10,
            high: band.high.min(high),
            basis: "FP16 without FlashAttention-2 (T4/V100 class)".into(),
        };
    }
    band
}

/// Hours for `job` on `gpus` × `gpu` (fractions for vGPU slices).
pub fn estimate_time(job: &Job, gpu: &Gpu, gpus: f64) -> TimeEstimate {
    let (mut t, a) = estimate_time_explained(job, gpu, gpus, true);
    t.assumptions = explain::texts(&a);
    t
}

/// [`estimate_time`] with its assumptions as codes (only when `explain`: ranking collects them once)
/// and the estimate's `assumptions` left empty.
pub(crate) fn estimate_time_explained(
    job: &Job,
    gpu: &Gpu,
    gpus: f64,
    explain: bool,
) -> (TimeEstimate, Vec<Assumption>) {
    let tokens = job.total_tokens();
    // Compute follows the parameters each token goes through: all of a dense model's, an MoE
    // model's active ones (decode too reads only the experts a token is routed to, at batch 1).
    let n = job.model.active_params();
    let mut assumptions = Vec::new();
    if let (true, Some(m)) = (explain, job.model.moe) {
        assumptions.push(Assumption::Moe {
            experts: m.experts,
            experts_per_token: m.experts_per_token,
            params: job.model.params,
            active_params: n,
        });
    }
    let band = mfu_band(job.method, gpu, gpus);
    let unsuitable = if job.method.is_training() && !gpu.fp16_training {
        Some(
            crate::explain::Reason::UnsuitableForTraining {
                gpu: gpu.name.clone(),
                note: gpu.training_note.clone(),
            }
            .to_string(),
        )
    } else {
        None
    };

    let (factor, rate_low, rate_high) = if job.method == Method::Inference {
        // Tokens/s per replica group = batch / (bytes of weights per device / achieved bandwidth).
        let p = job.precision.unwrap_or(if gpu.bf16 { Precision::Bf16 } else { Precision::Fp16 });
        // A step reads the decoder layers in the weights' precision and the output head in 16 bits
        // (GPTQ and AWQ leave it unquantized), but only one row of the input embedding per sequence:
        // an untied model's input table is not read, and a quantized small model's 16-bit head is
        // most of its reads (Qwen2.5-0.5B: 272 MB of head against 190 MB of 4-bit layers).
        let m = &job.model;
        let body = (n - m.embedding_params()).max(0.0);
        let bytes_per_device = (p.weight_bytes() * body + 2.0 * m.head_params()) / gpus.max(1.0);
        let bw = gpu.mem_bw_gbps * 1e9 * gpus.min(1.0);
        // Each step also pays a fixed time per layer (kernel launches, scheduling), which at batch 1
        // on a small model is most of the step: after the reads in a serving engine, alongside them
        // in eager PyTorch (`Runtime::launches_overlap_reads`). Eager MoE blocks add a cost per
        // expert (`Runtime::expert_overhead_us`).
        let (us_fast, us_slow) = job.runtime.layer_overhead_us(p.is_quantized());
        let (expert_fast, expert_slow) = job.runtime.expert_overhead_us();
        let experts_visited = m.moe.map_or(0.0, |e| f64::from(e.experts) * f64::from(m.moe_layers()));
        let layers = f64::from(m.layers);
        let overlap = job.runtime.launches_overlap_reads();
        let step = |eff: f64, us: f64, expert_us: f64| {
            let reads = bytes_per_device / (bw * eff);
            let fixed = (layers * us + experts_visited * expert_us) * 1e-6;
            if overlap {
                reads.max(fixed)
            } else {
                reads + fixed
            }
        };
        let batch = job.micro_batch as f64;
        if explain {
            assumptions.push(Assumption::InferenceDecode {
                precision: p,
                low_pct: band.low * 100.0,
                high_pct: band.high * 100.0,
                mem_bw_gbps: gpu.mem_bw_gbps,
                batch: job.micro_batch,
                runtime: job.runtime,
                layers: job.model.layers,
                layer_us_low: us_fast,
                layer_us_high: us_slow,
                experts: if experts_visited > 0.0 && expert_slow > 0.0 {
                    m.moe.map_or(0, |e| e.experts)
                } else {
                    0
                },
                expert_us_low: expert_fast,
                expert_us_high: expert_slow,
            });
        }
        (2.0, batch / step(band.low, us_slow, expert_slow), batch / step(band.high, us_fast, expert_fast))
    } else {
        let factor = if job.method.is_lora_style() { 4.0 } else { 6.0 };
        let peak = gpu.fp16_tflops * 1e12 * gpus;
        if explain {
            assumptions.push(if factor == 6.0 { Assumption::Flops6 } else { Assumption::Flops4 });
            assumptions.push(Assumption::Mfu {
                low_pct: band.low * 100.0,
                high_pct: band.high * 100.0,
                tflops: gpu.fp16_tflops,
                gpus,
                basis: band.basis.clone(),
            });
        }
        if explain && gpu.stack == Stack::Ascend {
            assumptions.push(Assumption::AscendMfu);
        }
        let per_token = factor * n;
        (factor, peak * band.low / per_token, peak * band.high / per_token)
    };
    let hours = |rate: f64| {
        if tokens > 0.0 && rate > 0.0 {
            tokens / rate / 3600.0
        } else {
            0.0
        }
    };
    let estimate = TimeEstimate {
        tokens,
        flops_factor: factor,
        total_flops: factor * n * tokens,
        gpus,
        peak_tflops_per_gpu: gpu.fp16_tflops,
        mfu: band,
        hours_low: hours(rate_high),
        hours_high: hours(rate_low),
        tokens_per_second_low: rate_low,
        tokens_per_second_high: rate_high,
        unsuitable,
        assumptions: Vec::new(),
    };
    (estimate, assumptions)
}

/// What a spot offer's time to finish assumes about reclaims (issue 15). None of the three clouds
/// publishes how often it reclaims spot instances (Tencent, Alibaba and JD document the notice, not a
/// rate: docs/research/cost-control.md §3), so the rate is an input, with a stated default; so are
/// the checkpoint interval and the time a restart takes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SpotRisk {
    /// Expected reclaims per instance per day of running. **Assumption**, default
    /// [`SpotRisk::DEFAULT_RECLAIMS_PER_DAY`]: no cloud publishes one.
    pub reclaims_per_day: f64,
    /// Hours between checkpoints: a reclaim loses half of it on average.
    pub checkpoint_every_hours: f64,
    /// Hours from a reclaim to work resuming: a replacement's boot and the checkpoint's reload.
    pub restart_hours: f64,
}

impl SpotRisk {
    /// One reclaim per instance every four days of running: an assumption (no cloud publishes a rate).
    pub const DEFAULT_RECLAIMS_PER_DAY: f64 = 0.25;
    /// A checkpoint every hour.
    pub const DEFAULT_CHECKPOINT_EVERY_HOURS: f64 = 1.0;
    /// A quarter of an hour to restart (boot, environment, reload).
    pub const DEFAULT_RESTART_HOURS: f64 = 0.25;

    /// Work lost to one reclaim: half a checkpoint interval plus the restart.
    pub fn lost_per_restart(&self) -> f64 {
        self.checkpoint_every_hours / 2.0 + self.restart_hours
    }

    /// Expected reclaims over `hours` of work on `nodes` instances: hours × the rate per hour × the
    /// nodes (a reclaim of any node stops a job that runs on all of them).
    pub fn restarts(&self, hours: f64, nodes: u32) -> f64 {
        hours * self.reclaims_per_day / 24.0 * f64::from(nodes.max(1))
    }

    /// `hours` of work on spot: the work plus the expected restarts × the work each loses (a
    /// first-order estimate: restarts are counted over the work's own hours).
    pub fn hours(&self, hours: f64, nodes: u32) -> f64 {
        hours + self.restarts(hours, nodes) * self.lost_per_restart()
    }

    /// The assumption this risk states.
    pub fn assumption(&self) -> Assumption {
        Assumption::SpotRestarts {
            reclaims_per_day: self.reclaims_per_day,
            checkpoint_every_hours: self.checkpoint_every_hours,
            restart_hours: self.restart_hours,
        }
    }
}

impl Default for SpotRisk {
    fn default() -> Self {
        SpotRisk {
            reclaims_per_day: Self::DEFAULT_RECLAIMS_PER_DAY,
            checkpoint_every_hours: Self::DEFAULT_CHECKPOINT_EVERY_HOURS,
            restart_hours: Self::DEFAULT_RESTART_HOURS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::method::Runtime;
    use crate::model::preset;

    fn job(model: &str, method: Method, tokens: f64) -> Job {
        let mut j = Job::new(preset(model).unwrap(), method);
        j.tokens = tokens;
        j
    }

    #[test]
    fn six_n_d_for_full_and_four_n_d_for_lora() {
        let c = Catalog::shipped();
        let a100 = c.gpu("a100-sxm4-80g").unwrap();
        // 7B × 1B tokens × 6 = 4.044e19 FLOPs; on 8 × 312 TF at 35–50 % MFU.
        let t = estimate_time(&job("llama-2-7b", Method::Full, 1e9), a100, 8.0);
        assert_eq!(t.total_flops, 6.0 * 6.74e9 * 1e9);
        let expect_high = 6.0 * 6.74e9 * 1e9 / (8.0 * 312e12 * 0.35) / 3600.0;
        let expect_low = 6.0 * 6.74e9 * 1e9 / (8.0 * 312e12 * 0.50) / 3600.0;
        assert!((t.hours_high - expect_high).abs() < 1e-9 && (t.hours_low - expect_low).abs() < 1e-9);
        let l = estimate_time(&job("llama-2-7b", Method::Lora, 1e9), a100, 1.0);
        assert_eq!(l.total_flops, 4.0 * 6.74e9 * 1e9);
        assert!(l.assumptions.iter().any(|a| a.contains("4·N·D")));
    }

    #[test]
    fn p4_and_p40_are_unsuitable_for_training() {
        let c = Catalog::shipped();
        for id in ["p4", "p40"] {
            let t = estimate_time(&job("bert-base", Method::Full, 1e8), c.gpu(id).unwrap(), 1.0);
            let why = t.unsuitable.expect(id);
            assert!(why.contains("FP16"), "{why}");
            let inf = estimate_time(&job("bert-base", Method::Inference, 1e8), c.gpu(id).unwrap(), 1.0);
            assert!(inf.unsuitable.is_none());
        }
    }

    #[test]
    fn mfu_bands_follow_method_gpu_and_link() {
        let c = Catalog::shipped();
        let check = |m: Method, gpu: &str, n: f64, want: (f64, f64)| {
            let b = mfu_band(m, c.gpu(gpu).unwrap(), n);
            let b = (b.low, b.high);
            assert_eq!(b, want, "{m:?} {gpu} ×{n}");
        };
        check(Method::Full, "a100-sxm4-80g", 8.0, (0.35, 0.50));
        check(Method::Full, "a10", 4.0, (0.20, 0.35));
        check(Method::Lora, "a10", 1.0, (0.25, 0.35));
        check(Method::Qlora4, "t4", 1.0, (0.10, 0.20));
        check(Method::Full, "v100-sxm2-32g", 8.0, (0.10, 0.25));
    }

    #[test]
    fn t4_qlora_7b_speed_lands_in_the_fact_sheet_range() {
        // catalog-facts §5: T4 QLoRA-7B ≈ 300–600 tok/s (an estimate there too).
        let c = Catalog::shipped();
        let t = estimate_time(&job("llama-2-7b", Method::Qlora4, 1e6), c.gpu("t4").unwrap(), 1.0);
        assert!(t.tokens_per_second_low > 200.0 && t.tokens_per_second_high < 700.0, "{t:?}");
    }

    /// Eager transformers launches kernels while the GPU reads the weights, so a large model's step
    /// is its reads alone (Qwen2.5-32B on an A100 80 GB: 17.5 tokens/s measured, more than reads +
    /// launches in series allow at any bandwidth); a serving engine's per-layer gaps add to the reads.
    #[test]
    fn eager_launches_overlap_the_weight_reads() {
        let c = Catalog::shipped();
        let a100 = c.gpu("a100-sxm4-80g").unwrap();
        let mut j = job("qwen2.5-32b", Method::Inference, 1e6);
        j.runtime = Runtime::Transformers;
        let t = estimate_time(&j, a100, 1.0);
        // Qwen2.5-32B keeps separate input and output tables: a step reads the output head only.
        let read_bytes = 2.0 * (j.model.params - j.model.vocab as f64 * j.model.hidden as f64);
        let reads_fast = read_bytes / (a100.mem_bw_gbps * 1e9 * 0.70);
        let launches_fast = 64.0 * 500e-6;
        assert!(reads_fast > launches_fast);
        assert!((t.tokens_per_second_high - 1.0 / reads_fast).abs() < 1e-9, "{t:?}");
        assert!((t.tokens_per_second_low..=t.tokens_per_second_high).contains(&17.54), "{t:?}");
        j.runtime = Runtime::Serving;
        let s = estimate_time(&j, a100, 1.0);
        assert!((s.tokens_per_second_high - 1.0 / (reads_fast + 64.0 * 30e-6)).abs() < 1e-9, "{s:?}");
        assert!(t.assumptions.iter().any(|a| a.contains("or, when longer, 500–1000 µs per layer")), "{t:?}");
    }

    /// A quantized checkpoint's step reads its layers at 4 bits but its output head at 16, and pays
    /// the quantized kernels' higher floor per layer: vLLM decodes Qwen2.5-0.5B GPTQ-Int4 at 261
    /// tokens/s on an A100, slower than the 16-bit model's 312 (data/validation.toml, Source 5), which
    /// 4-bit reads of every parameter would put at well over 1,000.
    #[test]
    fn quantized_decode_reads_a_16_bit_head_and_pays_more_per_layer() {
        let c = Catalog::shipped();
        let a100 = c.gpu("a100-sxm4-80g").unwrap();
        let mut j = job("qwen2.5-0.5b", Method::Inference, 1e6);
        j.precision = Some(Precision::Int4);
        let t = estimate_time(&j, a100, 1.0);
        let m = &j.model;
        let head = m.head_params();
        assert!(m.tied_embeddings);
        let bytes = Precision::Int4.weight_bytes() * (m.params - head) + 2.0 * head;
        let slow = bytes / (a100.mem_bw_gbps * 1e9 * 0.30) + f64::from(m.layers) * 180e-6;
        let fast = bytes / (a100.mem_bw_gbps * 1e9 * 0.70) + f64::from(m.layers) * 60e-6;
        assert!((t.tokens_per_second_low - 1.0 / slow).abs() < 1e-9, "{t:?}");
        assert!((t.tokens_per_second_high - 1.0 / fast).abs() < 1e-9, "{t:?}");
        assert!((t.tokens_per_second_low..=t.tokens_per_second_high).contains(&260.9), "{t:?}");
        assert!(t.assumptions.iter().any(|a| a.contains("quantized kernels")), "{t:?}");
    }

    /// Eager transformers visits every expert of an MoE layer each step: Qwen3-30B-A3B decodes at
    /// 1.89 tokens/s on an H20 under transformers (data/validation.toml, Source 4) though it reads
    /// only 3.3B parameters; a serving engine's fused MoE kernel does not pay it.
    #[test]
    fn eager_moe_pays_a_time_per_expert() {
        let c = Catalog::shipped();
        let h20 = c.gpu("h20").unwrap();
        let mut j = job("qwen3-30b-a3b", Method::Inference, 1e6);
        j.runtime = Runtime::Transformers;
        let t = estimate_time(&j, h20, 1.0);
        assert!((t.tokens_per_second_low..=t.tokens_per_second_high).contains(&1.89), "{t:?}");
        assert!(t.assumptions.iter().any(|a| a.contains("each of the 128 experts")), "{t:?}");
        j.runtime = Runtime::Serving;
        let s = estimate_time(&j, h20, 1.0);
        assert!(s.tokens_per_second_low > 40.0 * t.tokens_per_second_high, "{s:?}");
        assert!(!s.assumptions.iter().any(|a| a.contains("experts of every MoE layer")), "{s:?}");
    }

    /// Decode pays a fixed time per layer per step besides reading the weights: a small model at
    /// batch 1 is bound by it (Qwen3-0.6B on an H20 would read its 1.2 GB in 0.4–1 ms, yet each step
    /// takes 28 × 30–60 µs more), eager transformers ten times worse, and a batch shares the step.
    #[test]
    fn decode_pays_a_fixed_time_per_layer() {
        let c = Catalog::shipped();
        let h20 = c.gpu("h20").unwrap();
        let mut j = job("qwen3-0.6b", Method::Inference, 1e6);
        let serving = estimate_time(&j, h20, 1.0);
        let bytes = 2.0 * j.model.active_params();
        let bandwidth_only = h20.mem_bw_gbps * 1e9 * 0.70 / bytes;
        assert!(serving.tokens_per_second_high < bandwidth_only / 2.0, "{serving:?} vs {bandwidth_only}");
        j.runtime = Runtime::Transformers;
        let eager = estimate_time(&j, h20, 1.0);
        let ratio = serving.tokens_per_second_high / eager.tokens_per_second_high;
        assert!((6.0..12.0).contains(&ratio), "serving ÷ transformers = {ratio}");
        j.micro_batch = 8;
        let batched = estimate_time(&j, h20, 1.0);
        assert!((batched.tokens_per_second_low / eager.tokens_per_second_low - 8.0).abs() < 1e-9);
        // The assumption says which runtime and what it costs per layer.
        assert!(
            eager.assumptions.iter().any(|a| a.contains("500–1000 µs per layer × 28 layers")),
            "{eager:?}"
        );
        assert!(matches!(Runtime::parse("vLLM"), Ok(Runtime::Serving)));
        assert_eq!(Runtime::parse("onnx").unwrap_err().kind, "runtime");
    }

    #[test]
    fn spot_time_adds_the_expected_restarts() {
        let r = SpotRisk::default();
        // 96 hours on one node at 0.25 reclaims a day: 1 restart, losing 0.5 + 0.25 h.
        assert!((r.restarts(96.0, 1) - 1.0).abs() < 1e-12);
        assert!((r.hours(96.0, 1) - 96.75).abs() < 1e-12);
        // Four nodes: four times the restarts.
        assert!((r.hours(96.0, 4) - 99.0).abs() < 1e-12);
        // No reclaims: the work's own hours.
        let none = SpotRisk { reclaims_per_day: 0.0, ..r };
        assert_eq!(none.hours(96.0, 8), 96.0);
        // Checkpointing every 4 h loses 2 h + the restart per reclaim.
        let rare = SpotRisk { checkpoint_every_hours: 4.0, ..r };
        assert!((rare.hours(96.0, 1) - 98.25).abs() < 1e-12);
    }
}
