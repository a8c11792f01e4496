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
/// most of the step.
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

    /// Fixed time per layer per decode step, fastest–slowest, in microseconds. Calibrated on the
    /// Qwen3 speed benchmark (QwenLM/Qwen2.5 docs/source/getting_started/speed_benchmark.md, H20,
    /// batch 1, input 1: transformers 4.51.3 and SGLang 0.4.6.post1 — rows 48–62 of
    /// data/validation.toml): transformers decodes Qwen3 0.6B–8B at a near-constant 17–22 ms per
    /// token over 28–36 layers (≈ 0.6 ms per layer, whatever the weights' size), SGLang's steps fit
    /// weights ÷ (30–40 % of 4 TB/s) + ≈ 1.7 ms over 28–36 layers (≈ 50 µs per layer). The same
    /// rows check the engine, so they are not an independent test of these figures.
    pub fn layer_overhead_us(self) -> (f64, f64) {
        match self {
            Runtime::Serving => (30.0, 60.0),
            Runtime::Transformers => (400.0, 800.0),
        }
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
    pub fn weight_bytes(self) -> f64 {
        match self {
            Precision::Fp32 => 4.0,
            Precision::Fp16 | Precision::Bf16 => 2.0,
            Precision::Int8 => 1.0 + 4.0 / 64.0 / 4.0,
            Precision::Int4 => 4.127 / 8.0,
        }
    }
}
