//! The words a job is described in: its method (full fine-tune, LoRA, QLoRA, inference, …) and its
//! numeric precision, with their names in flags and files.
//!
//! Its own module, below both `fit` (which computes with them) and `explain` (whose assumption codes
//! name them), so neither of those depends on the other through these words.

use serde::{Deserialize, Serialize};

use crate::suggest::UnknownName;

/// What the job does to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Full fine-tune, mixed precision (16-bit weights and grads, FP32 master weights + Adam states).
    Full,
    /// Full fine-tune entirely in 16-bit (weights, grads and Adam states in BF16).
    #[serde(rename = "full16")]
    FullPure16,
    /// Freeze all but the last few layers; train those in mixed precision.
    Freeze,
    /// LoRA adapters on a frozen 16-bit model.
    Lora,
    /// QLoRA on an 8-bit quantized model.
    Qlora8,
    /// QLoRA on a 4-bit (NF4) quantized model.
    Qlora4,
    /// Serving / batch inference (weights + KV cache).
    Inference,
}

impl Method {
    pub const ALL: [Method; 7] = [
        Method::Full,
        Method::FullPure16,
        Method::Freeze,
        Method::Lora,
        Method::Qlora8,
        Method::Qlora4,
        Method::Inference,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Full => "full",
            Method::FullPure16 => "full16",
            Method::Freeze => "freeze",
            Method::Lora => "lora",
            Method::Qlora8 => "qlora8",
            Method::Qlora4 => "qlora4",
            Method::Inference => "inference",
        }
    }

    pub fn parse(s: &str) -> Result<Method, UnknownName> {
        match s.to_ascii_lowercase().replace(['_', ' '], "-").as_str() {
            "full" | "full-amp" | "amp" => Ok(Method::Full),
            "full16" | "full-16" | "full-pure16" | "pure16" | "full-bf16" => Ok(Method::FullPure16),
            "freeze" => Ok(Method::Freeze),
            "lora" => Ok(Method::Lora),
            "qlora8" | "qlora-8" | "qlora-8bit" => Ok(Method::Qlora8),
            "qlora4" | "qlora-4" | "qlora" | "qlora-4bit" => Ok(Method::Qlora4),
            "inference" | "infer" | "serve" => Ok(Method::Inference),
            _ => Err(UnknownName::new("method", s, Method::ALL.iter().map(|m| m.as_str()))),
        }
    }

    pub fn is_training(self) -> bool {
        self != Method::Inference
    }

    /// Trains adapters (or a few layers) rather than every weight.
    pub fn is_lora_style(self) -> bool {
        matches!(self, Method::Freeze | Method::Lora | Method::Qlora8 | Method::Qlora4)
    }
}

/// What runs an inference job's decode loop. Each decode step pays, besides reading the weights, a
/// fixed time per layer to launch and schedule its kernels — ten times more from eager Python than
/// from a serving engine's captured CUDA graphs, and at batch 1 on a small model that fixed time is
/// most of the step. How the two add up differs too ([`Runtime::launches_overlap_reads`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    /// A serving engine (vLLM, SGLang, LMDeploy, TensorRT-LLM): CUDA graphs, fused kernels.
    #[default]
    Serving,
    /// Hugging Face transformers' `generate()` in eager PyTorch.
    Transformers,
}

impl Runtime {
    pub const ALL: [Runtime; 2] = [Runtime::Serving, Runtime::Transformers];

    pub fn as_str(self) -> &'static str {
        match self {
            Runtime::Serving => "serving",
            Runtime::Transformers => "transformers",
        }
    }

    pub fn parse(s: &str) -> Result<Runtime, UnknownName> {
        match s.to_ascii_lowercase().as_str() {
            "serving" | "vllm" | "sglang" | "lmdeploy" | "tensorrt-llm" | "trt-llm" => Ok(Runtime::Serving),
            "transformers" | "hf" | "eager" => Ok(Runtime::Transformers),
            _ => Err(UnknownName::new("runtime", s, Runtime::ALL.iter().map(|r| r.as_str()))),
        }
    }

    /// Fixed time per layer per decode step, fastest–slowest, in microseconds. Calibrated on two
    /// published batch-1 decode benchmarks, both in data/validation.toml, which therefore check the
    /// figures only together with [`Runtime::launches_overlap_reads`]: Qwen3's speed benchmark
    /// (QwenLM/Qwen2.5 docs/source/getting_started/speed_benchmark.md, H20, input 1: transformers
    /// 4.51.3 and SGLang 0.4.6.post1) and Qwen2.5's (docs/source/benchmark/speed_benchmark.rst @
    /// a912d23, A100 80 GB, input 1: transformers 4.46.0 and vLLM 0.6.3). Eager transformers decodes
    /// the small models — where launching, not reading, sets the step — at 0.60 ms per layer in the
    /// first (Qwen3 0.6B–8B: 17–22 ms per token over 28–36 layers) and 0.88–0.90 ms in the second
    /// (Qwen2.5 0.5B–3B: 21–33 ms over 24–36 layers), whatever the weights' size; the band holds both
    /// (it was 400–800 µs from the first alone, which the second's 0.9 ms fell outside). SGLang's steps
    /// fit weights ÷ (30–40 % of 4 TB/s) + ≈ 1.7 ms over 28–36 layers (≈ 50 µs per layer).
    ///
    /// Quantized checkpoints (`quantized`: GPTQ, AWQ) pay more per layer: their matmuls unpack and
    /// scale the weights inside the kernel and, at batch 1, reduce split-K partial sums in a second
    /// pass, so each of a layer's four GEMMs has a floor well above a 16-bit GEMV's. The same two
    /// benchmarks' quantized rows (data/validation.toml, Sources 4 and 5) put it at 90–140 µs per
    /// layer beyond the reads for vLLM/SGLang on the small models (Qwen2.5-0.5B: 3.8 ms a step against
    /// 3.2 in 16-bit) — a 60–180 µs band — and at 0.8–1.35 ms per layer for eager transformers
    /// (AutoGPTQ's 4-bit kernels as fast as 16-bit, auto_gptq/GPTQModel 8-bit and AutoAWQ slower):
    /// 500–1400 µs. Fitted on those rows, not derived: a new kernel library moves it.
    pub fn layer_overhead_us(self, quantized: bool) -> (f64, f64) {
        match (self, quantized) {
            (Runtime::Serving, false) => (30.0, 60.0),
            (Runtime::Serving, true) => (60.0, 180.0),
            (Runtime::Transformers, false) => (500.0, 1000.0),
            (Runtime::Transformers, true) => (500.0, 1400.0),
        }
    }

    /// Fixed time per routed expert per MoE layer per decode step, fastest–slowest, in microseconds:
    /// eager transformers' MoE blocks loop over the experts in Python, one `torch.where` (a host
    /// synchronisation) and a handful of launches each — in the releases that visit every expert, not
    /// only those a token was routed to. Qwen3's speed benchmark shows it (data/validation.toml,
    /// Source 4): Qwen3-30B-A3B under transformers 4.51.3 decodes at 1.89 tokens/s on an H20, 0.53 s
    /// a step over 48 layers × 128 experts — ≈ 86 µs per expert, while SGLang runs the same model
    /// at 137 tokens/s. One measurement: a 60–100 µs band around it. Serving engines run the experts
    /// as one fused kernel (0 here).
    pub fn expert_overhead_us(self) -> (f64, f64) {
        match self {
            Runtime::Serving => (0.0, 0.0),
            Runtime::Transformers => (60.0, 100.0),
        }
    }

    /// Whether the per-layer time runs alongside the weight reads rather than after them. Eager
    /// PyTorch (transformers) launches each kernel from Python and returns before the GPU has run
    /// it, so the host works ahead while the GPU reads weights: a step takes the longer of the two
    /// (host-bound on small models, bandwidth-bound on large ones). The large models of both
    /// benchmarks above show it: Qwen2.5-32B decodes at 17.5 tokens/s on an A100 (57 ms per step),
    /// while reading its 65 GB even at the full 2,039 GB/s (32 ms) plus 64 layers × 0.4 ms of
    /// launches in series would take 57.5 ms — faster than the sum allows at any bandwidth. A serving
    /// engine replays captured CUDA graphs: what is left per layer is the GPU's own gaps between
    /// kernels, in series with the reads, so the two add.
    pub fn launches_overlap_reads(self) -> bool {
        self == Runtime::Transformers
    }
}

/// Numeric precision. For training it picks the 16-bit type (BF16 where the GPU has it, else FP16);
/// for inference it is the weight precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    Fp32,
    Fp16,
    Bf16,
    Int8,
    Int4,
}

impl Precision {
    pub const ALL: [Precision; 5] =
        [Precision::Fp32, Precision::Fp16, Precision::Bf16, Precision::Int8, Precision::Int4];

    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Fp16 => "fp16",
            Precision::Bf16 => "bf16",
            Precision::Int8 => "int8",
            Precision::Int4 => "int4",
        }
    }

    pub fn parse(s: &str) -> Result<Precision, UnknownName> {
        match s.to_ascii_lowercase().as_str() {
            "fp32" | "float32" => Ok(Precision::Fp32),
            "fp16" | "float16" | "half" => Ok(Precision::Fp16),
            "bf16" | "bfloat16" => Ok(Precision::Bf16),
            "int8" | "8bit" => Ok(Precision::Int8),
            "int4" | "4bit" | "nf4" => Ok(Precision::Int4),
            _ => Err(UnknownName::new("precision", s, Precision::ALL.iter().map(|m| m.as_str()))),
        }
    }

    /// Bytes per weight (int4 includes blockwise scale constants: 4.127 bits/param as in NF4 + double quant).
    /// 8- or 4-bit weights: the decoder layers' linear weights only (GPTQ, AWQ, bitsandbytes leave
    /// the embeddings and the output head in 16 bits).
    pub fn is_quantized(self) -> bool {
        matches!(self, Precision::Int8 | Precision::Int4)
    }

    pub fn weight_bytes(self) -> f64 {
        match self {
            Precision::Fp32 => 4.0,
            Precision::Fp16 | Precision::Bf16 => 2.0,
            Precision::Int8 => 1.0 + 4.0 / 64.0 / 4.0,
            Precision::Int4 => 4.127 / 8.0,
        }
    }
}
