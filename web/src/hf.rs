//! Any model's Hugging Face `config.json`, pasted, dropped or picked in the page, as the model of the
//! estimate: read by gpuctl-core's `hf_config` rules, the very ones of the CLI's
//! `gpuctl estimate --model ./config.json` (same fields, same refusals, same English messages).
//!
//! In the page the text is parsed by the browser's own `JSON.parse` and core reads the result
//! through its `ConfigObject` trait ([`js`]): the bundle carries no JSON deserializer (serde_json's
//! cost ≈ 50 KB of its 300 KB budget), and a syntax error is the browser's message, with its line
//! and column. Natively (the tests) the same rules read serde_json's parse.
//!
//! A shared link carries the config's text as given, like every other field (`query`): the link
//! reproduces what the sender saw, a refused config and its message included. Not the shape's
//! numbers: writing a shape back as a config and reading it again took ≈ 1 KB of the bundle's budget,
//! which the page did not have; a link is then as long as the config (a published one is 1–5 KB).

use gpuctl_core::hf_config::ConfigError;
use gpuctl_core::ModelShape;

/// What the estimate calls a config-made model (the CLI names it after the file).
pub const NAME: &str = "config.json";

/// Reads a config's text into the model it describes.
pub fn read(text: &str) -> Result<ModelShape, ConfigError> {
    #[cfg(all(target_arch = "wasm32", feature = "ui"))]
    return js::read(text);
    #[cfg(not(all(target_arch = "wasm32", feature = "ui")))]
    gpuctl_core::from_hf_config(NAME, text)
}

/// The browser's side: core's [`ConfigObject`](gpuctl_core::hf_config::ConfigObject) over what
/// `JSON.parse` returned.
#[cfg(all(target_arch = "wasm32", feature = "ui"))]
mod js {
    use gpuctl_core::hf_config::{from_config, ConfigError, ConfigObject, ConfigProblem, Entry};
    use gpuctl_core::ModelShape;
    use js_sys::{Array, Reflect, JSON};
    use wasm_bindgen::{JsCast, JsValue};

    /// A JSON object as the browser parsed it.
    pub struct Obj(JsValue);

    impl Obj {
        fn value(&self, key: &str) -> JsValue {
            Reflect::get(&self.0, &key.into()).unwrap_or(JsValue::UNDEFINED)
        }
    }

    fn entry(v: JsValue) -> Option<Entry<Obj>> {
        Some(if let Some(b) = v.as_bool() {
            Entry::Bool(b)
        } else if let Some(n) = v.as_f64() {
            Entry::Number(n)
        } else if let Some(s) = v.as_string() {
            Entry::String(s)
        } else if v.is_undefined() {
            // `JSON.parse` never makes `undefined`: it is a key the object does not have.
            return None;
        } else if v.is_null() {
            Entry::Null
        } else if Array::is_array(&v) {
            Entry::List
        } else {
            Entry::Object(Obj(v))
        })
    }

    impl ConfigObject for Obj {
        fn get(&self, key: &str) -> Option<Entry<Obj>> {
            entry(self.value(key))
        }
        fn json(&self, key: &str) -> String {
            JSON::stringify(&self.value(key)).map(String::from).unwrap_or_default()
        }
    }

    pub fn read(text: &str) -> Result<ModelShape, ConfigError> {
        let root = JSON::parse(text).map_err(|e| {
            // A SyntaxError; Chromium's message says where ("… (line 2 column 21)").
            ConfigError::from(ConfigProblem::NotJson(e.unchecked_into::<js_sys::Error>().message().into()))
        })?;
        from_config(super::NAME, entry(root).unwrap_or(Entry::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Qwen2.5-7B-Instruct's published config.json (whole).
    const QWEN25_7B: &str = r#"{
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151645,
  "hidden_act": "silu",
  "hidden_size": 3584,
  "initializer_range": 0.02,
  "intermediate_size": 18944,
  "max_position_embeddings": 32768,
  "max_window_layers": 28,
  "model_type": "qwen2",
  "num_attention_heads": 28,
  "num_hidden_layers": 28,
  "num_key_value_heads": 4,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 131072,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.43.1",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 152064
}"#;

    #[test]
    fn a_config_reads_like_its_preset() {
        let m = read(QWEN25_7B).unwrap();
        let p = gpuctl_core::preset("qwen2.5-7b").unwrap();
        assert_eq!(
            (m.name.as_str(), m.layers, m.hidden, m.kv_heads, m.ffn),
            (NAME, p.layers, p.hidden, 4, p.ffn)
        );
        assert!((m.params / p.params - 1.0).abs() < 0.01, "{} vs {}", m.params, p.params);
    }
}
