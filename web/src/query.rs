//! The calculator's whole state as typed by the user, and its URL form. The state is the only thing
//! the page persists: a shared link carries it in the query string and reproduces the view.
//!
//! Fields keep the text as typed (`"50M"`, `"7b"`), not parsed numbers: the URL then reproduces
//! exactly what the sender saw, including a half-typed value and the error it shows. Parsing into
//! an engine question happens in `calc`. Only fields that differ from the defaults go into the URL,
//! so links stay short and a default that changes later changes old links with it.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use crate::i18n::Lang;

/// Which view of the page is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Offers,
    Plan,
    Tco,
}

impl Tab {
    pub const ALL: [Tab; 3] = [Tab::Offers, Tab::Plan, Tab::Tco];
    pub fn code(self) -> &'static str {
        match self {
            Tab::Offers => "offers",
            Tab::Plan => "plan",
            Tab::Tco => "tco",
        }
    }
    pub fn from_code(s: &str) -> Option<Tab> {
        Tab::ALL.into_iter().find(|t| t.code() == s)
    }
}

/// Everything the user can set. Text fields hold what was typed.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// `None` until chosen: the page then follows the browser's language.
    pub lang: Option<Lang>,
    pub tab: Tab,
    /// A model preset name (`qwen2.5-7b`), or empty for a custom parameter count.
    pub model: String,
    /// Parameter count as typed (`7b`, `13e9`); used when `model` is empty.
    pub params: String,
    /// A Hugging Face config.json as pasted, dropped or picked; the model when `model` and `params`
    /// are empty (see `hf`).
    pub config: String,
    /// Method code (`lora`, `qlora4`, …, see gpuctl-core's `Method`).
    pub method: String,
    /// Precision code, or empty for automatic.
    pub precision: String,
    pub seq_len: String,
    /// Inference: what runs the decode loop (`serving`, `transformers`: gpuctl-core's `Runtime`).
    pub runtime: String,
    /// Inference: tokens generated per sequence, the last part of `seq_len`; empty = not given.
    pub output_tokens: String,
    pub tokens: String,
    pub epochs: String,
    /// GPUs per instance wanted, or empty for any.
    pub gpus: String,
    /// Only instances with this GPU (a catalog GPU id such as `t4`), or empty for any.
    pub gpu: String,
    pub hours_per_day: String,
    pub days: String,
    /// Finish within this many days of starting, or empty.
    pub deadline_days: String,
    /// Total ¥ the job may cost, or empty.
    pub budget: String,
    /// Providers to consider (codes); empty = all.
    pub providers: Vec<String>,
    /// The offer picked for the plan view and export, as `provider/instance/region`.
    pub pick: String,
    // TCO tab: a self-built cluster (gpuctl-core's `TcoInput`; defaults are the engine's).
    pub tco_gpu: String,
    pub tco_gpus: String,
    pub tco_card: String,
    pub tco_server: String,
    pub tco_network: String,
    pub tco_years: String,
    pub tco_kw: String,
    pub tco_pue: String,
    pub tco_kwh: String,
    pub tco_ops: String,
    /// Percent of the year the GPUs do useful work.
    pub tco_util: String,
}

impl Default for Inputs {
    fn default() -> Self {
        let tco = gpuctl_core::TcoInput::default();
        Inputs {
            lang: None,
            tab: Tab::Offers,
            model: "qwen2.5-7b".into(),
            params: String::new(),
            config: String::new(),
            method: "lora".into(),
            precision: String::new(),
            seq_len: "2048".into(),
            runtime: "serving".into(),
            output_tokens: String::new(),
            tokens: "50M".into(),
            epochs: "3".into(),
            gpus: String::new(),
            gpu: String::new(),
            hours_per_day: "24".into(),
            days: String::new(),
            deadline_days: String::new(),
            budget: String::new(),
            providers: Vec::new(),
            pick: String::new(),
            tco_gpu: tco.gpu,
            tco_gpus: tco.gpus.to_string(),
            tco_card: tco.card_cny.to_string(),
            tco_server: tco.server_cny.to_string(),
            tco_network: tco.network_storage_cny.to_string(),
            tco_years: tco.depreciation_years.to_string(),
            tco_kw: tco.server_kw.to_string(),
            tco_pue: tco.pue.to_string(),
            tco_kwh: tco.cny_per_kwh.to_string(),
            tco_ops: tco.ops_cny_per_year.to_string(),
            tco_util: (tco.utilization * 100.0).round().to_string(),
        }
    }
}

/// Characters left as they are in a query value: RFC 3986 unreserved plus `,` (the list separator,
/// kept readable) and `.`. Everything else, including `&`, `=`, `+` and non-ASCII, is escaped.
const VALUE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~').remove(b',');

/// Text fields in URL order: (key, getter, setter). One table drives both directions, and the page
/// binds its inputs through it.
pub type Field = (&'static str, fn(&Inputs) -> &String, fn(&mut Inputs) -> &mut String);

pub const TEXT_FIELDS: &[Field] = &[
    ("model", |i| &i.model, |i| &mut i.model),
    ("params", |i| &i.params, |i| &mut i.params),
    ("config", |i| &i.config, |i| &mut i.config),
    ("method", |i| &i.method, |i| &mut i.method),
    ("precision", |i| &i.precision, |i| &mut i.precision),
    ("seq", |i| &i.seq_len, |i| &mut i.seq_len),
    ("runtime", |i| &i.runtime, |i| &mut i.runtime),
    ("out", |i| &i.output_tokens, |i| &mut i.output_tokens),
    ("tokens", |i| &i.tokens, |i| &mut i.tokens),
    ("epochs", |i| &i.epochs, |i| &mut i.epochs),
    ("gpus", |i| &i.gpus, |i| &mut i.gpus),
    ("gpu", |i| &i.gpu, |i| &mut i.gpu),
    ("hpd", |i| &i.hours_per_day, |i| &mut i.hours_per_day),
    ("days", |i| &i.days, |i| &mut i.days),
    ("deadline", |i| &i.deadline_days, |i| &mut i.deadline_days),
    ("budget", |i| &i.budget, |i| &mut i.budget),
    ("pick", |i| &i.pick, |i| &mut i.pick),
    ("tco_gpu", |i| &i.tco_gpu, |i| &mut i.tco_gpu),
    ("tco_gpus", |i| &i.tco_gpus, |i| &mut i.tco_gpus),
    ("tco_card", |i| &i.tco_card, |i| &mut i.tco_card),
    ("tco_server", |i| &i.tco_server, |i| &mut i.tco_server),
    ("tco_network", |i| &i.tco_network, |i| &mut i.tco_network),
    ("tco_years", |i| &i.tco_years, |i| &mut i.tco_years),
    ("tco_kw", |i| &i.tco_kw, |i| &mut i.tco_kw),
    ("tco_pue", |i| &i.tco_pue, |i| &mut i.tco_pue),
    ("tco_kwh", |i| &i.tco_kwh, |i| &mut i.tco_kwh),
    ("tco_ops", |i| &i.tco_ops, |i| &mut i.tco_ops),
    ("tco_util", |i| &i.tco_util, |i| &mut i.tco_util),
];

impl Inputs {
    /// The query string (without `?`) that reproduces this state: only non-default fields.
    pub fn to_query(&self) -> String {
        let default = Inputs::default();
        let mut parts: Vec<String> = Vec::new();
        let mut push = |k: &str, v: &str| parts.push(format!("{k}={}", utf8_percent_encode(v, VALUE)));
        if let Some(lang) = self.lang {
            push("lang", lang.code());
        }
        if self.tab != default.tab {
            push("tab", self.tab.code());
        }
        for (key, get, _) in TEXT_FIELDS {
            if get(self) != get(&default) {
                push(key, get(self));
            }
        }
        if !self.providers.is_empty() {
            push("providers", &self.providers.join(","));
        }
        parts.join("&")
    }

    /// The state a query string describes (with or without `?`). Unknown keys and malformed pairs are
    /// ignored — an old or hand-edited link still opens — and missing keys keep their defaults.
    pub fn from_query(query: &str) -> Inputs {
        let mut inputs = Inputs::default();
        for pair in query.trim_start_matches('?').split('&').filter(|p| !p.is_empty()) {
            let (key, raw) = pair.split_once('=').unwrap_or((pair, ""));
            // `+` for space is the form encoding browsers may produce when a link is retyped.
            let raw = raw.replace('+', " ");
            let Ok(value) = percent_decode_str(&raw).decode_utf8() else { continue };
            let value = value.into_owned();
            match key {
                "lang" => inputs.lang = Lang::from_code(&value),
                "tab" => inputs.tab = Tab::from_code(&value).unwrap_or(Tab::Offers),
                "providers" => {
                    inputs.providers =
                        value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()
                }
                _ => {
                    if let Some((_, _, set)) = TEXT_FIELDS.iter().find(|(k, _, _)| *k == key) {
                        *set(&mut inputs) = value;
                    }
                }
            }
        }
        inputs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_make_an_empty_query() {
        assert_eq!(Inputs::default().to_query(), "");
        assert_eq!(Inputs::from_query(""), Inputs::default());
        assert_eq!(Inputs::from_query("?"), Inputs::default());
    }

    #[test]
    fn round_trips() {
        let i = Inputs {
            lang: Some(Lang::Zh),
            tab: Tab::Tco,
            model: String::new(),
            params: "13b".into(),
            method: "qlora4".into(),
            tokens: "1.5B & more=yes".into(),
            budget: "¥5,000".into(),
            providers: vec!["tencent".into(), "alibaba".into()],
            pick: "alibaba/gn7i-c8g1.2xlarge/cn-hangzhou".into(),
            ..Inputs::default()
        };
        let q = i.to_query();
        assert_eq!(
            q,
            "lang=zh&tab=tco&model=&params=13b&method=qlora4&tokens=1.5B%20%26%20more%3Dyes&budget=%C2%A55,000\
             &pick=alibaba%2Fgn7i-c8g1.2xlarge%2Fcn-hangzhou&providers=tencent,alibaba"
        );
        assert_eq!(Inputs::from_query(&q), i);
        assert_eq!(Inputs::from_query(&format!("?{q}")), i);
    }

    #[test]
    fn bad_links_still_open() {
        let check = |q: &str, f: fn(&Inputs) -> bool| assert!(f(&Inputs::from_query(q)), "{q}");
        check("tab=nope&lang=fr&zzz=1&&=&tokens", |i| {
            i.tab == Tab::Offers && i.lang.is_none() && i.tokens.is_empty()
        });
        check("tokens=%FF%FE", |i| i.tokens == "50M"); // not UTF-8: ignored
        check("tokens=50+M", |i| i.tokens == "50 M");
        check("providers=,tencent,,", |i| i.providers == ["tencent"]);
    }
}
