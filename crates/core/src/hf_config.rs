//! Any model, offline: a Hugging Face `config.json` read into a [`ModelShape`]. The fields are the
//! ones `transformers` defines for decoder-only models (`LlamaConfig`, `Qwen2Config`,
//! `Qwen3Config`, `Qwen3MoeConfig`, `MixtralConfig`, `DeepseekV3Config`), with the older spellings
//! some families still ship (ChatGLM/GLM-4's `num_layers`, `ffn_hidden_size`, `padded_vocab_size`,
//! `multi_query_group_num`, `kv_channels`; GPT-2's `n_layer`, `n_embd`, `n_head`, `n_inner`). A
//! multimodal config's language model is read from its `text_config`.
//!
//! The parameter count is computed from the shape ([`ModelShape::params_from_shape`]: biases and
//! vision towers left out), since a config does not state it.

use serde_json::{Map, Value};

use crate::model::{ModelShape, Moe};

/// Why a config was refused: where (for JSON syntax errors), and what is wrong or missing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}", at.map(|(l, c)| format!("{l}:{c}: ")).unwrap_or_default())]
pub struct ConfigError {
    /// Line and column of a JSON syntax error.
    pub at: Option<(usize, usize)>,
    pub message: String,
}

impl ConfigError {
    fn new(message: impl Into<String>) -> ConfigError {
        ConfigError { at: None, message: message.into() }
    }
}

/// Largest values accepted: far above any published model, low enough that the arithmetic stays
/// exact and a corrupted file is refused rather than priced.
const MAX_LAYERS: u32 = 1_000;
const MAX_WIDTH: u32 = 1 << 20;
const MAX_VOCAB: u32 = 1 << 24;
const MAX_EXPERTS: u32 = 4_096;

/// Reads a `config.json`'s text; `name` is what the estimate calls the model (the file's name).
pub fn from_hf_config(name: &str, text: &str) -> Result<ModelShape, ConfigError> {
    let root: Value = serde_json::from_str(text).map_err(|e| {
        // serde_json ends its message with the place, which `at` already carries.
        let full = e.to_string();
        let why = full.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())).unwrap_or(&full);
        ConfigError { at: Some((e.line(), e.column())), message: format!("not a JSON config: {why}") }
    })?;
    let Some(top) = root.as_object() else {
        return Err(ConfigError::new("a config.json is a JSON object of model settings"));
    };
    // Multimodal models (Llama 4, Gemma 3, Qwen2.5-Omni) keep the language model's shape apart.
    let cfg = match top.get("text_config").and_then(Value::as_object) {
        Some(t) if !has_any(top, LAYERS) => t,
        _ => top,
    };
    if cfg.contains_key("kv_lora_rank") || cfg.contains_key("q_lora_rank") {
        return Err(ConfigError::new(
            "multi-head latent attention (DeepSeek-V2/V3's `kv_lora_rank`) is not modelled: its memory and \
             compute would be guessed, so this config is refused rather than estimated wrongly",
        ));
    }
    let r = Reader { cfg };
    let layers = r.count(LAYERS, "the number of transformer layers", MAX_LAYERS)?;
    let hidden = r.count(HIDDEN, "the model width", MAX_WIDTH)?;
    let heads = r.count(HEADS, "the number of attention heads", MAX_WIDTH)?;
    let kv_heads = r.opt_count(KV_HEADS, "the number of key/value heads", MAX_WIDTH)?.unwrap_or(heads);
    if heads % kv_heads != 0 {
        return Err(ConfigError::new(format!(
            "`num_attention_heads` ({heads}) is not a multiple of `num_key_value_heads` ({kv_heads})"
        )));
    }
    let vocab = r.count(VOCAB, "the vocabulary size", MAX_VOCAB)?;
    let head_dim = r.opt_count(HEAD_DIM, "the width of one attention head", MAX_WIDTH)?;
    let experts = r.opt_count(EXPERTS, "the number of routed experts", MAX_EXPERTS)?.filter(|&e| e > 0);
    let moe = match experts {
        None => None,
        Some(experts) => {
            let per_token = r.count(PER_TOKEN, "how many experts each token is routed to", MAX_EXPERTS)?;
            if per_token > experts {
                return Err(ConfigError::new(format!(
                    "`num_experts_per_tok` ({per_token}) is more than the {experts} experts"
                )));
            }
            let expert_ffn =
                match r.opt_count(&["moe_intermediate_size"], "one expert's MLP width", MAX_WIDTH)? {
                    Some(w) => w,
                    // Mixtral's experts are `intermediate_size` wide.
                    None => r.count(FFN, "one expert's MLP width (`moe_intermediate_size`)", MAX_WIDTH)?,
                };
            let shared = r.opt_count(&["n_shared_experts"], "the number of shared experts", MAX_EXPERTS)?;
            let dense_layers =
                r.opt_count(&["first_k_dense_replace"], "the leading dense layers", MAX_LAYERS)?;
            Some(Moe {
                experts,
                experts_per_token: per_token,
                expert_ffn,
                shared_experts: shared.unwrap_or(0),
                dense_layers: dense_layers.unwrap_or(0).min(layers),
                active_params: None,
            })
        }
    };
    // A dense model needs its MLP width; an MoE model only for its leading dense layers.
    let needs_ffn = moe.is_none_or(|m| m.dense_layers > 0);
    let ffn = match r.opt_count(FFN, "the MLP width", MAX_WIDTH)? {
        Some(f) => f,
        None if cfg.contains_key("n_embd") => 4 * hidden, // GPT-2: `n_inner` null means 4 × n_embd
        None if needs_ffn => return Err(r.missing(FFN, "the MLP width")),
        None => moe.map_or(0, |m| m.expert_ffn),
    };
    let tied = match cfg.get("tie_word_embeddings") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(ConfigError::new(format!("`tie_word_embeddings` is {other}; true or false")))
        }
    };
    let model_type = cfg.get("model_type").and_then(Value::as_str).unwrap_or_default();
    // Two-matrix MLPs (BERT, GPT-2); every current decoder family uses a gated one (SwiGLU, GeGLU).
    let gated = !matches!(model_type, "bert" | "roberta" | "gpt2" | "gpt_neox" | "opt");
    let mut shape = ModelShape {
        name: name.to_string(),
        params: 0.0,
        layers,
        hidden,
        heads,
        kv_heads,
        ffn,
        vocab,
        tied_embeddings: tied,
        explicit_head_dim: head_dim.filter(|&d| u64::from(d) * u64::from(heads) != u64::from(hidden)),
        moe,
        shape_estimated: false,
    };
    shape.params = shape.params_from_shape(gated);
    Ok(shape)
}

const LAYERS: &[&str] = &["num_hidden_layers", "num_layers", "n_layer"];
const HIDDEN: &[&str] = &["hidden_size", "n_embd", "d_model"];
const HEADS: &[&str] = &["num_attention_heads", "n_head"];
const KV_HEADS: &[&str] = &["num_key_value_heads", "multi_query_group_num"];
const FFN: &[&str] = &["intermediate_size", "ffn_hidden_size", "n_inner"];
const VOCAB: &[&str] = &["vocab_size", "padded_vocab_size"];
const HEAD_DIM: &[&str] = &["head_dim", "kv_channels"];
const EXPERTS: &[&str] = &["num_experts", "num_local_experts", "n_routed_experts"];
const PER_TOKEN: &[&str] = &["num_experts_per_tok", "moe_topk"];

fn has_any(cfg: &Map<String, Value>, keys: &[&str]) -> bool {
    keys.iter().any(|k| cfg.get(*k).is_some_and(|v| !v.is_null()))
}

struct Reader<'a> {
    cfg: &'a Map<String, Value>,
}

impl Reader<'_> {
    fn missing(&self, keys: &[&str], what: &str) -> ConfigError {
        let others = keys[1..].iter().map(|k| format!("`{k}`")).collect::<Vec<_>>();
        let or = if others.is_empty() { String::new() } else { format!(" (or {})", others.join(", ")) };
        ConfigError::new(format!("missing `{}`{or}: {what}", keys[0]))
    }

    /// The first of `keys` present (null counts as absent), as a whole number in 1..=max.
    fn opt_count(&self, keys: &[&str], what: &str, max: u32) -> Result<Option<u32>, ConfigError> {
        for k in keys {
            match self.cfg.get(*k) {
                None | Some(Value::Null) => continue,
                Some(v) => {
                    let n = v.as_u64().filter(|n| (1..=u64::from(max)).contains(n)).map(|n| n as u32);
                    return n.map(Some).ok_or_else(|| {
                        ConfigError::new(format!(
                            "`{k}` is {v}: {what} must be a whole number from 1 to {max}"
                        ))
                    });
                }
            }
        }
        Ok(None)
    }

    fn count(&self, keys: &[&str], what: &str, max: u32) -> Result<u32, ConfigError> {
        self.opt_count(keys, what, max)?.ok_or_else(|| self.missing(keys, what))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::preset;

    /// Qwen3-8B's published config (the fields that matter, as the file writes them).
    const QWEN3_8B: &str = r#"{
      "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "head_dim": 128,
      "hidden_size": 4096, "intermediate_size": 12288, "num_attention_heads": 32,
      "num_hidden_layers": 36, "num_key_value_heads": 8, "tie_word_embeddings": false,
      "vocab_size": 151936, "torch_dtype": "bfloat16"
    }"#;

    /// Qwen3-30B-A3B's published config.
    const QWEN3_30B_A3B: &str = r#"{
      "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "head_dim": 128,
      "hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 768,
      "num_attention_heads": 32, "num_hidden_layers": 48, "num_key_value_heads": 4,
      "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1, "mlp_only_layers": [],
      "tie_word_embeddings": false, "vocab_size": 151936
    }"#;

    /// A config gives the same shape as the preset written from it, and a parameter count within
    /// 1 % of the model card's.
    #[test]
    fn dense_and_moe_configs_read_like_their_presets() {
        for (text, name) in [(QWEN3_8B, "qwen3-8b"), (QWEN3_30B_A3B, "qwen3-30b-a3b")] {
            let got = from_hf_config("config.json", text).unwrap();
            let want = preset(name).unwrap();
            assert_eq!(
                (
                    got.layers,
                    got.hidden,
                    got.heads,
                    got.kv_heads,
                    got.vocab,
                    got.head_dim(),
                    got.tied_embeddings
                ),
                (
                    want.layers,
                    want.hidden,
                    want.heads,
                    want.kv_heads,
                    want.vocab,
                    want.head_dim(),
                    want.tied_embeddings
                ),
                "{name}"
            );
            assert!(
                (got.params / want.params - 1.0).abs() < 0.01,
                "{name}: {} vs {}",
                got.params,
                want.params
            );
            assert!((got.active_params() / want.active_params() - 1.0).abs() < 0.02, "{name}: active");
        }
        let moe = from_hf_config("c", QWEN3_30B_A3B).unwrap().moe.unwrap();
        assert_eq!((moe.experts, moe.experts_per_token, moe.expert_ffn), (128, 8, 768));
    }

    #[test]
    fn older_spellings_and_nested_text_configs() {
        // GLM-4-9B (ChatGLM-style names): 9.4B on its card.
        let glm = r#"{"model_type": "chatglm", "num_layers": 40, "hidden_size": 4096, "ffn_hidden_size": 13696,
            "num_attention_heads": 32, "multi_query_attention": true, "multi_query_group_num": 2,
            "kv_channels": 128, "padded_vocab_size": 151552}"#;
        let m = from_hf_config("glm", glm).unwrap();
        assert!((m.params / 9.4e9 - 1.0).abs() < 0.02, "{}", m.params);
        assert_eq!((m.kv_heads, m.explicit_head_dim), (2, None));
        let nested = format!(r#"{{"model_type": "llava", "text_config": {QWEN3_8B}}}"#);
        assert_eq!(from_hf_config("x", &nested).unwrap().layers, 36);
        // Mixtral: experts as wide as `intermediate_size`; 46.7B with 12.9B active on its card.
        let mixtral = r#"{"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
            "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
            "num_experts_per_tok": 2, "vocab_size": 32000}"#;
        let m = from_hf_config("mixtral", mixtral).unwrap();
        assert!((m.params / 46.7e9 - 1.0).abs() < 0.01 && (m.active_params() / 12.9e9 - 1.0).abs() < 0.01);
    }

    #[test]
    fn bad_configs_say_what_is_wrong() {
        let e = |t: &str| from_hf_config("c", t).unwrap_err().to_string();
        assert_eq!(
            e(r#"{"hidden_size": 4096}"#),
            "missing `num_hidden_layers` (or `num_layers`, `n_layer`): the number of transformer layers"
        );
        assert_eq!(e("{\n  \"hidden_size\": 40,,\n}"), "2:21: not a JSON config: key must be a string");
        assert_eq!(e("[1, 2]"), "a config.json is a JSON object of model settings");
        let no_ffn =
            r#"{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100}"#;
        assert_eq!(e(no_ffn), "missing `intermediate_size` (or `ffn_hidden_size`, `n_inner`): the MLP width");
        let bad = r#"{"num_hidden_layers": -3}"#;
        assert_eq!(e(bad), "`num_hidden_layers` is -3: the number of transformer layers must be a whole number from 1 to 1000");
        let gqa = r#"{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 6, "num_key_value_heads": 4}"#;
        assert!(e(gqa).contains("not a multiple"), "{}", e(gqa));
        let moe = r#"{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100,
            "num_experts": 4, "num_experts_per_tok": 8, "moe_intermediate_size": 32}"#;
        assert!(e(moe).contains("more than the 4 experts"), "{}", e(moe));
        let mla = r#"{"num_hidden_layers": 61, "kv_lora_rank": 512}"#;
        assert!(e(mla).contains("multi-head latent attention"), "{}", e(mla));
        let tied = r#"{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100,
            "intermediate_size": 128, "tie_word_embeddings": "yes"}"#;
        assert!(e(tied).contains("true or false"), "{}", e(tied));
    }
}
