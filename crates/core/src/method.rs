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
