//! Model presets: parameter counts and the transformer shape (layers, hidden size, heads, KV heads,
//! vocabulary) that activation and KV-cache memory depend on. Figures are from each model's published
//! `config.json`; parameter counts are the models' own totals.

use serde::{Deserialize, Serialize};

use crate::suggest::UnknownName;

/// The shape of a decoder-only transformer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelShape {
    /// Preset name (`qwen2.5-7b`), the config's file name, or `custom`.
    pub name: String,
    /// Total parameters (every expert of an MoE model): what memory is sized by.
    pub params: f64,
    pub layers: u32,
    pub hidden: u32,
    pub heads: u32,
    /// Key/value heads (grouped-query attention); equals `heads` for plain multi-head attention.
    pub kv_heads: u32,
    /// MLP inner size (of the dense layers; an MoE model's experts have their own, [`Moe::expert_ffn`]).
    pub ffn: u32,
    pub vocab: u32,
    /// Input embedding and output head share one matrix (small Qwen2.5 models, BERT).
    #[serde(default)]
    pub tied_embeddings: bool,
    /// Width of one attention head where the config sets it apart from hidden ÷ heads (`head_dim`:
    /// Qwen3 uses 128 at every size, so Qwen3-0.6B has 16 × 128 query dimensions on a 1024 hidden).
    #[serde(default)]
    pub explicit_head_dim: Option<u32>,
    /// Mixture of experts: `None` for a dense model.
    #[serde(default)]
    pub moe: Option<Moe>,
    /// True when the shape was inferred from the parameter count rather than a published config.
    pub shape_estimated: bool,
}

/// The experts of a mixture-of-experts model (Hugging Face `num_experts`/`num_local_experts`/
/// `n_routed_experts`, `num_experts_per_tok`, `moe_intermediate_size`, `n_shared_experts`,
/// `first_k_dense_replace`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Moe {
    /// Routed experts per MoE layer.
    pub experts: u32,
    /// Routed experts each token goes through.
    pub experts_per_token: u32,
    /// MLP inner size of one expert.
    pub expert_ffn: u32,
    /// Experts every token goes through (DeepSeek-style shared experts), each `expert_ffn` wide.
    #[serde(default)]
    pub shared_experts: u32,
    /// Leading layers with a dense MLP (`ffn` wide) instead of experts.
    #[serde(default)]
    pub dense_layers: u32,
    /// Parameters used per token as the model's card states them; `None` = computed from the shape.
    #[serde(default)]
    pub active_params: Option<f64>,
}

impl ModelShape {
    /// Parameters in the embedding and output layers (kept in 16-bit by QLoRA).
    pub fn embedding_params(&self) -> f64 {
        let copies = if self.tied_embeddings { 1.0 } else { 2.0 };
        copies * self.head_params()
    }

    /// Parameters of the output head (vocabulary × hidden): what decode reads of the embeddings each
    /// step, tied or not.
    pub fn head_params(&self) -> f64 {
        self.vocab as f64 * self.hidden as f64
    }

    pub fn head_dim(&self) -> f64 {
        match self.explicit_head_dim {
            Some(d) => d as f64,
            None => self.hidden as f64 / self.heads.max(1) as f64,
        }
    }

    /// Layers whose MLP is a set of experts (0 for a dense model).
    pub fn moe_layers(&self) -> u32 {
        self.moe.map_or(0, |m| self.layers.saturating_sub(m.dense_layers))
    }

    /// Parameters each token is computed with: all of them for a dense model; for an MoE model the
    /// card's figure, else the total less the routed experts a token skips.
    pub fn active_params(&self) -> f64 {
        let Some(m) = self.moe else { return self.params };
        m.active_params.unwrap_or_else(|| {
            let skipped = m.experts.saturating_sub(m.experts_per_token) as f64;
            (self.params - skipped * self.expert_mlp_params() * self.moe_layers() as f64).max(0.0)
        })
    }

    /// The widest MLP one layer runs over every token of a prompt at once: a dense model's `ffn`;
    /// in an MoE layer the shared experts (every token goes through them) or, where there are none,
    /// one expert — transformers and the serving engines run the routed experts one after another,
    /// each over its share of the tokens, and one expert taking them all is the worst case. Leading
    /// dense layers count too.
    pub fn prefill_mlp_width(&self) -> f64 {
        let Some(m) = self.moe else { return self.ffn as f64 };
        let experts = m.expert_ffn as f64 * m.shared_experts.max(1) as f64;
        if m.dense_layers > 0 {
            experts.max(self.ffn as f64)
        } else {
            experts
        }
    }

    /// One expert's MLP (gate, up and down projections).
    fn expert_mlp_params(&self) -> f64 {
        self.moe.map_or(0.0, |m| 3.0 * self.hidden as f64 * m.expert_ffn as f64)
    }

    /// Parameters the shape implies: embeddings, attention (q, k, v, o), gated MLPs or experts with
    /// their router, and the norms; biases left out. `gated = false` for two-matrix MLPs (BERT, GPT-2).
    pub fn params_from_shape(&self, gated: bool) -> f64 {
        let (h, hd) = (self.hidden as f64, self.head_dim());
        let q = self.heads as f64 * hd;
        let attn = h * q * 2.0 + 2.0 * h * self.kv_heads as f64 * hd;
        let dense_mlp = if gated { 3.0 } else { 2.0 } * h * self.ffn as f64;
        let moe_mlp = self.moe.map_or(0.0, |m| {
            (m.experts + m.shared_experts) as f64 * self.expert_mlp_params() + h * m.experts as f64
        });
        let moe_layers = self.moe_layers() as f64;
        let dense_layers = self.layers as f64 - moe_layers;
        self.embedding_params()
            + self.layers as f64 * (attn + 2.0 * h)
            + dense_layers * dense_mlp
            + moe_layers * moe_mlp
            + h
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
            explicit_head_dim: None,
            moe: None,
            shape_estimated: true,
        }
    }
}

/// One preset row: the published config's shape and the model card's parameter count.
struct Preset {
    name: &'static str,
    params: f64,
    layers: u32,
    hidden: u32,
    heads: u32,
    kv_heads: u32,
    ffn: u32,
    vocab: u32,
    tied: bool,
    head_dim: Option<u32>,
    moe: Option<Moe>,
}

/// (name, params, layers, hidden, heads, kv_heads, ffn, vocab): a dense model, untied, head width
/// hidden ÷ heads.
const fn dense(name: &'static str, params: f64, shape: (u32, u32, u32, u32, u32, u32)) -> Preset {
    let (layers, hidden, heads, kv_heads, ffn, vocab) = shape;
    Preset {
        name,
        params,
        layers,
        hidden,
        heads,
        kv_heads,
        ffn,
        vocab,
        tied: false,
        head_dim: None,
        moe: None,
    }
}

impl Preset {
    const fn tied(self) -> Preset {
        Preset { tied: true, ..self }
    }
    const fn head_dim(self, d: u32) -> Preset {
        Preset { head_dim: Some(d), ..self }
    }
    /// Routed experts × experts per token × expert width, and the card's active parameter count.
    const fn moe(self, experts: u32, per_token: u32, expert_ffn: u32, active: f64) -> Preset {
        let moe = Moe {
            experts,
            experts_per_token: per_token,
            expert_ffn,
            shared_experts: 0,
            dense_layers: 0,
            active_params: Some(active),
        };
        Preset { moe: Some(moe), ..self }
    }
}

/// Shapes from each model's published `config.json` (`num_hidden_layers`, `hidden_size`,
/// `num_attention_heads`, `num_key_value_heads`, `intermediate_size`, `vocab_size`,
/// `tie_word_embeddings`, `head_dim`, and the MoE fields); parameter counts as the model cards state
/// them (Qwen3's cards give one decimal: 0.6B, 1.7B, 4.0B, 8.2B, 14.8B, 32.8B, 30.5B with 3.3B
/// activated, 235B with 22B activated). The DeepSeek-R1 distills keep their base model's shape
/// (Qwen2.5-Math-7B, Qwen2.5-14B/32B, Llama-3.1-8B, Llama-3.3-70B-Instruct).
const PRESETS: &[Preset] = &[
    dense("qwen2.5-0.5b", 0.494e9, (24, 896, 14, 2, 4864, 151936)).tied(),
    dense("qwen2.5-1.5b", 1.54e9, (28, 1536, 12, 2, 8960, 151936)).tied(),
    dense("qwen2.5-3b", 3.09e9, (36, 2048, 16, 2, 11008, 151936)).tied(),
    dense("qwen2.5-7b", 7.61e9, (28, 3584, 28, 4, 18944, 152064)),
    dense("qwen2.5-14b", 14.7e9, (48, 5120, 40, 8, 13824, 152064)),
    dense("qwen2.5-32b", 32.5e9, (64, 5120, 40, 8, 27648, 152064)),
    dense("qwen2.5-72b", 72.7e9, (80, 8192, 64, 8, 29568, 152064)),
    dense("qwen3-0.6b", 0.6e9, (28, 1024, 16, 8, 3072, 151936)).tied().head_dim(128),
    dense("qwen3-1.7b", 1.7e9, (28, 2048, 16, 8, 6144, 151936)).tied().head_dim(128),
    dense("qwen3-4b", 4.0e9, (36, 2560, 32, 8, 9728, 151936)).tied().head_dim(128),
    dense("qwen3-8b", 8.2e9, (36, 4096, 32, 8, 12288, 151936)).head_dim(128),
    dense("qwen3-14b", 14.8e9, (40, 5120, 40, 8, 17408, 151936)).head_dim(128),
    dense("qwen3-32b", 32.8e9, (64, 5120, 64, 8, 25600, 151936)).head_dim(128),
    dense("qwen3-30b-a3b", 30.5e9, (48, 2048, 32, 4, 6144, 151936)).head_dim(128).moe(128, 8, 768, 3.3e9),
    dense("qwen3-235b-a22b", 235e9, (94, 4096, 64, 4, 12288, 151936)).head_dim(128).moe(128, 8, 1536, 22e9),
    dense("deepseek-r1-distill-qwen-7b", 7.62e9, (28, 3584, 28, 4, 18944, 152064)),
    dense("deepseek-r1-distill-qwen-14b", 14.8e9, (48, 5120, 40, 8, 13824, 152064)),
    dense("deepseek-r1-distill-qwen-32b", 32.8e9, (64, 5120, 40, 8, 27648, 152064)),
    dense("deepseek-r1-distill-llama-8b", 8.03e9, (32, 4096, 32, 8, 14336, 128256)),
    dense("deepseek-r1-distill-llama-70b", 70.6e9, (80, 8192, 64, 8, 28672, 128256)),
    dense("glm-4-9b", 9.4e9, (40, 4096, 32, 2, 13696, 151552)),
    dense("llama-2-7b", 6.74e9, (32, 4096, 32, 32, 11008, 32000)),
    dense("llama-2-13b", 13.0e9, (40, 5120, 40, 40, 13824, 32000)),
    dense("llama-2-70b", 69.0e9, (80, 8192, 64, 8, 28672, 32000)),
    dense("llama-3.1-8b", 8.03e9, (32, 4096, 32, 8, 14336, 128256)),
    dense("llama-3.1-70b", 70.6e9, (80, 8192, 64, 8, 28672, 128256)),
    dense("llama-3.2-1b", 1.24e9, (16, 2048, 32, 8, 8192, 128256)).tied(),
    dense("llama-3.2-3b", 3.21e9, (28, 3072, 24, 8, 8192, 128256)).tied(),
    dense("llama-3.3-70b", 70.6e9, (80, 8192, 64, 8, 28672, 128256)),
    dense("mistral-7b", 7.24e9, (32, 4096, 32, 8, 14336, 32000)),
    dense("mixtral-8x7b", 46.7e9, (32, 4096, 32, 8, 14336, 32000)).moe(8, 2, 14336, 12.9e9),
    dense("chatglm3-6b", 6.24e9, (28, 4096, 32, 2, 13696, 65024)),
    dense("baichuan2-7b", 7.51e9, (32, 4096, 32, 32, 11008, 125696)),
    dense("baichuan2-13b", 13.9e9, (40, 5120, 40, 40, 13696, 125696)),
    dense("yi-34b", 34.4e9, (60, 7168, 56, 8, 20480, 64000)),
    dense("deepseek-llm-7b", 6.91e9, (30, 4096, 32, 32, 11008, 102400)),
    dense("bert-base", 0.110e9, (12, 768, 12, 12, 3072, 30522)).tied(),
    dense("bert-large", 0.340e9, (24, 1024, 16, 16, 4096, 30522)).tied(),
];

/// Names of every preset.
pub fn preset_names() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|p| p.name)
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
        .find(|p| p.name == n)
        .map(|p| ModelShape {
            name: p.name.to_string(),
            params: p.params,
            layers: p.layers,
            hidden: p.hidden,
            heads: p.heads,
            kv_heads: p.kv_heads,
            ffn: p.ffn,
            vocab: p.vocab,
            tied_embeddings: p.tied,
            explicit_head_dim: p.head_dim,
            moe: p.moe,
            shape_estimated: false,
        })
        .ok_or_else(|| UnknownName::new("model", name, preset_names()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape each preset carries implies (within 5 %) the parameter count its model card states:
    /// a typo in a layer count or a width, or a head width left at hidden ÷ heads where the config sets
    /// it apart, shows here. MoE presets also check the card's activated count.
    #[test]
    fn presets_are_self_consistent() {
        for m in presets() {
            let est = m.params_from_shape(!m.name.starts_with("bert"));
            let ratio = est / m.params;
            assert!(
                (0.95..1.05).contains(&ratio),
                "{}: shape gives {:.3}B vs {:.3}B",
                m.name,
                est / 1e9,
                m.params / 1e9
            );
            if let Some(moe) = m.moe {
                let card = moe.active_params.expect("MoE presets carry the card's active count");
                let shape = ModelShape { moe: Some(Moe { active_params: None, ..moe }), ..m.clone() };
                let ratio = shape.active_params() / card;
                assert!(
                    (0.93..1.07).contains(&ratio),
                    "{}: active {:.2}B vs card {:.2}B",
                    m.name,
                    shape.active_params() / 1e9,
                    card / 1e9
                );
            }
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
