//! Any model, offline: a Hugging Face `config.json` read into a [`ModelShape`]. The fields are the
//! ones `transformers` defines for decoder-only models (`LlamaConfig`, `Qwen2Config`,
//! `Qwen3Config`, `Qwen3MoeConfig`, `MixtralConfig`, `DeepseekV3Config`), with the older spellings
//! some families still ship (ChatGLM/GLM-4's `num_layers`, `ffn_hidden_size`, `padded_vocab_size`,
//! `multi_query_group_num`, `kv_channels`; GPT-2's `n_layer`, `n_embd`, `n_head`, `n_inner`). A
//! multimodal config's language model is read from its `text_config`.
//!
//! The parameter count is computed from the shape ([`ModelShape::params_from_shape`]: biases and
//! vision towers left out), since a config does not state it.
//!
//! The rules are written once, over [`ConfigObject`]: whatever JSON parser read the text. The CLI's
//! [`from_hf_config`] reads with serde_json; the browser calculator reads with the browser's own
//! `JSON.parse` (web/src/hf.rs), so its bundle carries no JSON deserializer, and gives the parsed
//! object to [`from_config`]. Refusals are codes ([`ConfigProblem`], [`Setting`]) whose `Display` is
//! the English text, so the page can word them in Chinese too.

use std::fmt;

use serde_json::{Map, Value};

use crate::model::{ModelShape, Moe};

/// Why a config was refused: where (for JSON syntax errors the parser placed), and what is wrong or
/// missing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{problem}", at.map(|(l, c)| format!("{l}:{c}: ")).unwrap_or_default())]
pub struct ConfigError {
    /// Line and column of a JSON syntax error.
    pub at: Option<(usize, usize)>,
    pub problem: ConfigProblem,
}

impl From<ConfigProblem> for ConfigError {
    fn from(problem: ConfigProblem) -> ConfigError {
        ConfigError { at: None, problem }
    }
}

/// What is wrong with a config, as a code with its parameters; `Display` is the English text.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigProblem {
    /// Not JSON at all: the parser's own words (serde_json's, or the browser's `SyntaxError`).
    NotJson(String),
    /// JSON, but not an object (`[1, 2]`).
    NotAnObject,
    /// DeepSeek-V2/V3's multi-head latent attention (`kv_lora_rank`, `q_lora_rank`).
    LatentAttention,
    /// None of `keys` is there (null counts as absent); `keys[0]` is the usual spelling.
    Missing { keys: &'static [&'static str], setting: Setting },
    /// `key` holds `value` (as JSON writes it), which is not a whole number from 1 to `max`.
    NotACount { key: &'static str, value: String, setting: Setting, max: u32 },
    /// Query heads that do not split into the key/value head groups.
    HeadsNotGrouped { heads: u32, kv_heads: u32 },
    /// More experts per token than there are experts.
    TooManyPerToken { per_token: u32, experts: u32 },
    /// `tie_word_embeddings` holds `value`, not true or false.
    TiedNotBool { value: String },
}

/// The setting a field gives, for the messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    Layers,
    Width,
    Heads,
    KvHeads,
    Vocab,
    HeadDim,
    Experts,
    PerToken,
    ExpertFfn,
    /// An MoE config without `moe_intermediate_size`, whose experts are `intermediate_size` wide
    /// (Mixtral).
    ExpertFfnAsFfn,
    SharedExperts,
    DenseLayers,
    Ffn,
}

impl Setting {
    /// In English, as the messages say it.
    pub fn what(self) -> &'static str {
        match self {
            Setting::Layers => "the number of transformer layers",
            Setting::Width => "the model width",
            Setting::Heads => "the number of attention heads",
            Setting::KvHeads => "the number of key/value heads",
            Setting::Vocab => "the vocabulary size",
            Setting::HeadDim => "the width of one attention head",
            Setting::Experts => "the number of routed experts",
            Setting::PerToken => "how many experts each token is routed to",
            Setting::ExpertFfn => "one expert's MLP width",
            Setting::ExpertFfnAsFfn => "one expert's MLP width (`moe_intermediate_size`)",
            Setting::SharedExperts => "the number of shared experts",
            Setting::DenseLayers => "the leading dense layers",
            Setting::Ffn => "the MLP width",
        }
    }
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigProblem::NotJson(why) => write!(f, "not a JSON config: {why}"),
            ConfigProblem::NotAnObject => f.write_str("a config.json is a JSON object of model settings"),
            ConfigProblem::LatentAttention => f.write_str(
                "multi-head latent attention (DeepSeek-V2/V3's `kv_lora_rank`) is not modelled: its memory and \
                 compute would be guessed, so this config is refused rather than estimated wrongly",
            ),
            ConfigProblem::Missing { keys, setting } => {
                write!(f, "missing `{}`", keys[0])?;
                if keys.len() > 1 {
                    let others = keys[1..].iter().map(|k| format!("`{k}`")).collect::<Vec<_>>();
                    write!(f, " (or {})", others.join(", "))?;
                }
                write!(f, ": {}", setting.what())
            }
            ConfigProblem::NotACount { key, value, setting, max } => {
                write!(f, "`{key}` is {value}: {} must be a whole number from 1 to {max}", setting.what())
            }
            ConfigProblem::HeadsNotGrouped { heads, kv_heads } => write!(
                f,
                "`num_attention_heads` ({heads}) is not a multiple of `num_key_value_heads` ({kv_heads})"
            ),
            ConfigProblem::TooManyPerToken { per_token, experts } => {
                write!(f, "`num_experts_per_tok` ({per_token}) is more than the {experts} experts")
            }
            ConfigProblem::TiedNotBool { value } => write!(f, "`tie_word_embeddings` is {value}; true or false"),
        }
    }
}

/// One value of a parsed config, as the reader needs to tell it apart.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry<O> {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Object(O),
    /// An array.
    List,
}

/// A parsed JSON object of model settings, from whichever parser read the text: serde_json's
/// `Map` natively, the browser's `JSON.parse` result in the page.
pub trait ConfigObject: Sized {
    /// The value at `key`; `None` when the key is absent (a `null` value is `Some(Entry::Null)`).
    fn get(&self, key: &str) -> Option<Entry<Self>>;
    /// The value at `key` as JSON text, for a message saying it is wrong.
    fn json(&self, key: &str) -> String;
}

/// Largest values accepted: far above any published model, low enough that the arithmetic stays
/// exact and a corrupted file is refused rather than priced.
const MAX_LAYERS: u32 = 1_000;
const MAX_WIDTH: u32 = 1 << 20;
const MAX_VOCAB: u32 = 1 << 24;
const MAX_EXPERTS: u32 = 4_096;

/// Reads a `config.json`'s text with serde_json; `name` is what the estimate calls the model (the
/// file's name).
pub fn from_hf_config(name: &str, text: &str) -> Result<ModelShape, ConfigError> {
    let root: Value = serde_json::from_str(text).map_err(|e| {
        // serde_json ends its message with the place, which `at` already carries.
        let full = e.to_string();
        let why = full.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())).unwrap_or(&full);
        ConfigError { at: Some((e.line(), e.column())), problem: ConfigProblem::NotJson(why.to_string()) }
    })?;
    from_config(name, entry(&root))
}

/// serde_json's reading of one value.
fn entry(v: &Value) -> Entry<&Map<String, Value>> {
    match v {
        Value::Null => Entry::Null,
        Value::Bool(b) => Entry::Bool(*b),
        // Any JSON number: the bounds below are far inside f64's exact integers.
        Value::Number(n) => Entry::Number(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => Entry::String(s.clone()),
        Value::Array(_) => Entry::List,
        Value::Object(o) => Entry::Object(o),
    }
}

impl ConfigObject for &Map<String, Value> {
    fn get(&self, key: &str) -> Option<Entry<Self>> {
        Map::get(self, key).map(entry)
    }
    fn json(&self, key: &str) -> String {
        Map::get(self, key).map(Value::to_string).unwrap_or_default()
    }
}

/// Reads a parsed config (`root`, the whole JSON document) into a shape; `name` is what the estimate
/// calls the model. The one implementation of the rules, whatever parser made `root`.
pub fn from_config<O: ConfigObject>(name: &str, root: Entry<O>) -> Result<ModelShape, ConfigError> {
    let Entry::Object(top) = root else { return Err(ConfigProblem::NotAnObject.into()) };
    // Multimodal models (Llama 4, Gemma 3, Qwen2.5-Omni) keep the language model's shape apart.
    let cfg = match top.get("text_config") {
        Some(Entry::Object(t)) if !has_any(&top, LAYERS) => t,
        _ => top,
    };
    if cfg.get("kv_lora_rank").is_some() || cfg.get("q_lora_rank").is_some() {
        return Err(ConfigProblem::LatentAttention.into());
    }
    let r = Reader { cfg };
    let layers = r.count(LAYERS, Setting::Layers, MAX_LAYERS)?;
    let hidden = r.count(HIDDEN, Setting::Width, MAX_WIDTH)?;
    let heads = r.count(HEADS, Setting::Heads, MAX_WIDTH)?;
    let kv_heads = r.opt_count(KV_HEADS, Setting::KvHeads, MAX_WIDTH)?.unwrap_or(heads);
    if heads % kv_heads != 0 {
        return Err(ConfigProblem::HeadsNotGrouped { heads, kv_heads }.into());
    }
    let vocab = r.count(VOCAB, Setting::Vocab, MAX_VOCAB)?;
    let head_dim = r.opt_count(HEAD_DIM, Setting::HeadDim, MAX_WIDTH)?;
    let experts = r.opt_count(EXPERTS, Setting::Experts, MAX_EXPERTS)?.filter(|&e| e > 0);
    let moe = match experts {
        None => None,
        Some(experts) => {
            let per_token = r.count(PER_TOKEN, Setting::PerToken, MAX_EXPERTS)?;
            if per_token > experts {
                return Err(ConfigProblem::TooManyPerToken { per_token, experts }.into());
            }
            let expert_ffn = match r.opt_count(&["moe_intermediate_size"], Setting::ExpertFfn, MAX_WIDTH)? {
                Some(w) => w,
                // Mixtral's experts are `intermediate_size` wide.
                None => r.count(FFN, Setting::ExpertFfnAsFfn, MAX_WIDTH)?,
            };
            let shared = r.opt_count(&["n_shared_experts"], Setting::SharedExperts, MAX_EXPERTS)?;
            let dense_layers = r.opt_count(&["first_k_dense_replace"], Setting::DenseLayers, MAX_LAYERS)?;
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
    let ffn = match r.opt_count(FFN, Setting::Ffn, MAX_WIDTH)? {
        Some(f) => f,
        None if r.cfg.get("n_embd").is_some() => 4 * hidden, // GPT-2: `n_inner` null means 4 × n_embd
        None if needs_ffn => return Err(ConfigProblem::Missing { keys: FFN, setting: Setting::Ffn }.into()),
        None => moe.map_or(0, |m| m.expert_ffn),
    };
    let tied = match r.cfg.get("tie_word_embeddings") {
        None | Some(Entry::Null) => false,
        Some(Entry::Bool(b)) => b,
        Some(_) => return Err(ConfigProblem::TiedNotBool { value: r.cfg.json("tie_word_embeddings") }.into()),
    };
    let model_type = match r.cfg.get("model_type") {
        Some(Entry::String(s)) => s,
        _ => String::new(),
    };
    // Two-matrix MLPs (BERT, GPT-2); every current decoder family uses a gated one (SwiGLU, GeGLU).
    let gated = !matches!(model_type.as_str(), "bert" | "roberta" | "gpt2" | "gpt_neox" | "opt");
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

/// The reader's spellings of each setting, the usual one first (error messages name it).
const LAYERS: &[&str] = &["num_hidden_layers", "num_layers", "n_layer"];
const HIDDEN: &[&str] = &["hidden_size", "n_embd", "d_model"];
const HEADS: &[&str] = &["num_attention_heads", "n_head"];
const KV_HEADS: &[&str] = &["num_key_value_heads", "multi_query_group_num"];
const FFN: &[&str] = &["intermediate_size", "ffn_hidden_size", "n_inner"];
const VOCAB: &[&str] = &["vocab_size", "padded_vocab_size"];
const HEAD_DIM: &[&str] = &["head_dim", "kv_channels"];
const EXPERTS: &[&str] = &["num_experts", "num_local_experts", "n_routed_experts"];
const PER_TOKEN: &[&str] = &["num_experts_per_tok", "moe_topk"];

fn has_any<O: ConfigObject>(cfg: &O, keys: &[&str]) -> bool {
    keys.iter().any(|k| cfg.get(k).is_some_and(|v| !matches!(v, Entry::Null)))
}

struct Reader<O> {
    cfg: O,
}

impl<O: ConfigObject> Reader<O> {
    /// The first of `keys` present (null counts as absent), as a whole number in 1..=max.
    fn opt_count(
        &self,
        keys: &'static [&'static str],
        setting: Setting,
        max: u32,
    ) -> Result<Option<u32>, ConfigError> {
        for k in keys {
            match self.cfg.get(k) {
                None | Some(Entry::Null) => continue,
                Some(Entry::Number(n)) if n.fract() == 0.0 && (1.0..=f64::from(max)).contains(&n) => {
                    return Ok(Some(n as u32))
                }
                Some(_) => {
                    let value = self.cfg.json(k);
                    return Err(ConfigProblem::NotACount { key: k, value, setting, max }.into());
                }
            }
        }
        Ok(None)
    }

    fn count(&self, keys: &'static [&'static str], setting: Setting, max: u32) -> Result<u32, ConfigError> {
        self.opt_count(keys, setting, max)?.ok_or_else(|| ConfigProblem::Missing { keys, setting }.into())
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

    /// A second, hand-made reader of the same JSON (as the page's, over the browser's
    /// `JSON.parse`, is): the rules and messages are the trait's, not serde_json's.
    #[derive(Debug, Clone, PartialEq)]
    struct Tree(Vec<(&'static str, Node)>);
    #[derive(Debug, Clone, PartialEq)]
    enum Node {
        Num(f64),
        Text(&'static str),
        Flag(bool),
        Nil,
        Obj(Tree),
    }

    impl ConfigObject for Tree {
        fn get(&self, key: &str) -> Option<Entry<Tree>> {
            self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| match v {
                Node::Num(n) => Entry::Number(*n),
                Node::Text(t) => Entry::String(t.to_string()),
                Node::Flag(b) => Entry::Bool(*b),
                Node::Nil => Entry::Null,
                Node::Obj(t) => Entry::Object(t.clone()),
            })
        }
        fn json(&self, key: &str) -> String {
            match self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v) {
                Some(Node::Num(n)) => n.to_string(),
                Some(Node::Text(t)) => format!("\"{t}\""),
                Some(Node::Flag(b)) => b.to_string(),
                _ => "null".into(),
            }
        }
    }

    #[test]
    fn any_parser_reads_by_the_same_rules() {
        use Node::*;
        let qwen3_moe = Tree(vec![
            ("model_type", Text("qwen3_moe")),
            ("head_dim", Num(128.0)),
            ("hidden_size", Num(2048.0)),
            ("intermediate_size", Num(6144.0)),
            ("moe_intermediate_size", Num(768.0)),
            ("num_attention_heads", Num(32.0)),
            ("num_hidden_layers", Num(48.0)),
            ("num_key_value_heads", Num(4.0)),
            ("num_experts", Num(128.0)),
            ("num_experts_per_tok", Num(8.0)),
            ("tie_word_embeddings", Flag(false)),
            ("vocab_size", Num(151936.0)),
            ("rope_scaling", Nil),
        ]);
        let serde = from_hf_config("c", QWEN3_30B_A3B).unwrap();
        assert_eq!(from_config("c", Entry::Object(qwen3_moe.clone())).unwrap(), serde);
        // Nested in `text_config`, as a multimodal config has it.
        let nested = Tree(vec![("model_type", Text("llava")), ("text_config", Obj(qwen3_moe.clone()))]);
        assert_eq!(from_config("c", Entry::Object(nested)).unwrap(), serde);

        // The same refusals in the same words, whichever parser read the text.
        let e = |t: Tree, json: &str| {
            let got = from_config("c", Entry::Object(t)).unwrap_err();
            assert_eq!(got, from_hf_config("c", json).unwrap_err(), "{json}");
            got.to_string()
        };
        let partial = Tree(vec![("hidden_size", Num(4096.0)), ("num_hidden_layers", Num(32.0))]);
        assert_eq!(
            e(partial, r#"{"hidden_size": 4096, "num_hidden_layers": 32}"#),
            "missing `num_attention_heads` (or `n_head`): the number of attention heads"
        );
        let negative = Tree(vec![("num_hidden_layers", Num(-3.0))]);
        assert!(e(negative, r#"{"num_hidden_layers": -3}"#).starts_with("`num_hidden_layers` is -3: "));
        let text = Tree(vec![("num_layers", Text("40"))]);
        assert!(e(text, r#"{"num_layers": "40"}"#).starts_with(r#"`num_layers` is "40": "#));
        let half = Tree(vec![("n_layer", Num(2.5))]);
        assert!(e(half, r#"{"n_layer": 2.5}"#).starts_with("`n_layer` is 2.5: "));
        let mla = Tree(vec![("q_lora_rank", Nil)]);
        assert_eq!(e(mla, r#"{"q_lora_rank": null}"#), ConfigProblem::LatentAttention.to_string());
        assert_eq!(from_config::<Tree>("c", Entry::List).unwrap_err(), ConfigProblem::NotAnObject.into());
        // A whole number written with a fraction is still that number (JavaScript cannot tell them apart).
        let m = from_hf_config("c", &QWEN3_8B.replace("\"hidden_size\": 4096", "\"hidden_size\": 4096.0"));
        assert_eq!(m.unwrap().hidden, 4096);
    }
}
