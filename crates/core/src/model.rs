//! Model presets: parameter counts and the transformer shape (layers, hidden size, heads, KV heads,
//! vocabulary) that activation and KV-cache memory depend on. Figures are from each model's published
//! `config.json`; parameter counts are the models' own totals.

use serde::{Deserialize, Serialize};

use crate::suggest::UnknownName;

/// The shape of a decoder-only transformer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelShape {
    /// Preset name (`qwen2.5-7b`) or `custom`.
    pub name: String,
    /// Total parameters.
    pub params: f64,
    pub layers: u32,
    pub hidden: u32,
    pub heads: u32,
    /// Key/value heads (grouped-query attention); equals `heads` for plain multi-head attention.
    pub kv_heads: u32,
    /// MLP inner size.
    pub ffn: u32,
    pub vocab: u32,
    /// Input embedding and output head share one matrix (small Qwen2.5 models, BERT).
    #[serde(default)]
    pub tied_embeddings: bool,
    /// True when the shape was inferred from the parameter count rather than a published config.
    pub shape_estimated: bool,
}

impl ModelShape {
    /// Parameters in the embedding and output layers (kept in 16-bit by QLoRA).
    pub fn embedding_params(&self) -> f64 {
        let copies = if self.tied_embeddings { 1.0 } else { 2.0 };
        copies * self.vocab as f64 * self.hidden as f64
    }
    pub fn head_dim(&self) -> f64 {
        self.hidden as f64 / self.heads as f64
    }

    /// A shape for a bare parameter count, scaled like Llama (hidden ≈ 128 × layers, N ≈ 12·L·h²,
    /// 32k vocabulary, MHA). Marked `shape_estimated`.
    pub fn from_params(params: f64) -> ModelShape {
        let hidden = ((params * 128.0 / 12.0).cbrt() / 128.0).round().max(1.0) * 128.0;
        let layers = (hidden / 128.0).round().max(1.0);
        let heads = (hidden / 128.0).max(1.0);
        ModelShape {
            name: "custom".into(),
            params,
            layers: layers as u32,
            hidden: hidden as u32,
            heads: heads as u32,
            kv_heads: heads as u32,
            ffn: (hidden * 2.6875) as u32,
            vocab: 32000,
            tied_embeddings: false,
            shape_estimated: true,
        }
    }
}

/// (name, params, layers, hidden, heads, kv_heads, ffn, vocab)
type Preset = (&'static str, f64, u32, u32, u32, u32, u32, u32);

const PRESETS: &[Preset] = &[
    ("qwen2.5-0.5b", 0.494e9, 24, 896, 14, 2, 4864, 151936),
    ("qwen2.5-1.5b", 1.54e9, 28, 1536, 12, 2, 8960, 151936),
    ("qwen2.5-3b", 3.09e9, 36, 2048, 16, 2, 11008, 151936),
    ("qwen2.5-7b", 7.61e9, 28, 3584, 28, 4, 18944, 152064),
    ("qwen2.5-14b", 14.7e9, 48, 5120, 40, 8, 13824, 152064),
    ("qwen2.5-32b", 32.5e9, 64, 5120, 40, 8, 27648, 152064),
    ("qwen2.5-72b", 72.7e9, 80, 8192, 64, 8, 29568, 152064),
    ("llama-2-7b", 6.74e9, 32, 4096, 32, 32, 11008, 32000),
    ("llama-2-13b", 13.0e9, 40, 5120, 40, 40, 13824, 32000),
    ("llama-2-70b", 69.0e9, 80, 8192, 64, 8, 28672, 32000),
    ("llama-3.1-8b", 8.03e9, 32, 4096, 32, 8, 14336, 128256),
    ("llama-3.1-70b", 70.6e9, 80, 8192, 64, 8, 28672, 128256),
    ("mistral-7b", 7.24e9, 32, 4096, 32, 8, 14336, 32000),
    ("chatglm3-6b", 6.24e9, 28, 4096, 32, 2, 13696, 65024),
    ("baichuan2-7b", 7.51e9, 32, 4096, 32, 32, 11008, 125696),
    ("baichuan2-13b", 13.9e9, 40, 5120, 40, 40, 13696, 125696),
    ("yi-34b", 34.4e9, 60, 7168, 56, 8, 20480, 64000),
    ("deepseek-llm-7b", 6.91e9, 30, 4096, 32, 32, 11008, 102400),
    ("bert-base", 0.110e9, 12, 768, 12, 12, 3072, 30522),
    ("bert-large", 0.340e9, 24, 1024, 16, 16, 4096, 30522),
];

/// Presets whose config.json has `tie_word_embeddings: true` (BERT ties by design).
const TIED: &[&str] = &["qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "bert-base", "bert-large"];

/// Names of every preset.
pub fn preset_names() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|p| p.0)
}

/// Every preset.
pub fn presets() -> Vec<ModelShape> {
    preset_names().filter_map(|n| preset(n).ok()).collect()
}

/// A preset by name (case-insensitive), or the closest names.
pub fn preset(name: &str) -> Result<ModelShape, UnknownName> {
    let n = name.trim().to_ascii_lowercase();
    PRESETS
        .iter()
        .find(|p| p.0 == n)
        .map(|&(name, params, layers, hidden, heads, kv_heads, ffn, vocab)| ModelShape {
            name: name.to_string(),
            params,
            layers,
            hidden,
            heads,
            kv_heads,
            ffn,
            vocab,
            tied_embeddings: TIED.contains(&name),
            shape_estimated: false,
        })
        .ok_or_else(|| UnknownName::new("model", name, preset_names()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_self_consistent() {
        // 12·L·h² (attention + MLP) + embeddings should land near the published total.
        for m in presets() {
            let attn = 2.0 * (m.hidden as f64).powi(2) * (1.0 + m.kv_heads as f64 / m.heads as f64);
            let mlp = if m.name.starts_with("bert") { 2.0 } else { 3.0 } * m.hidden as f64 * m.ffn as f64;
            let est = m.layers as f64 * (attn + mlp) + m.embedding_params();
            let ratio = est / m.params;
            assert!(
                (0.85..1.15).contains(&ratio),
                "{}: shape gives {:.2}B vs {:.2}B",
                m.name,
                est / 1e9,
                m.params / 1e9
            );
        }
    }

    #[test]
    fn inferred_shape_is_llama_like() {
        let m = ModelShape::from_params(7e9);
        assert_eq!((m.layers, m.hidden), (33, 4224));
        assert!(m.shape_estimated);
    }

    #[test]
    fn unknown_preset_suggests() {
        let e = preset("qwen2-7b").unwrap_err();
        assert_eq!(e.suggestions[0], "qwen2.5-7b");
    }
}
