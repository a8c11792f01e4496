//! From what the user typed to what the page shows: parse [`Inputs`] into a gpuctl-core
//! [`Question`], rank the catalog, and group the engine's per-(instance, billing mode) offers into one
//! row per instance type with every mode's cost. Pure; the page calls [`evaluate`] on every change.
//!
//! Every number here comes from gpuctl-core; this module only parses, groups and filters.

use gpuctl_core::{
    cost_of, input, parse_count, preset, rank, stages, tco, Assumption, BillingMode, Catalog, Date,
    FitReport, Infeasible, InputError, Job, Method, ModelShape, Offer, Precision, PriceAge, Question,
    StagePlan, TcoInput, TcoReport, UnknownName, Usage, Warning,
};

use crate::i18n::{self, Lang};
use crate::query::Inputs;

/// A problem with one input, shown next to it. `field` is the input's `data-testid`.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub field: &'static str,
    /// In English, and in Chinese (`zh`).
    pub message: String,
    pub zh: String,
}

impl FieldError {
    fn new(field: &'static str, en: impl Into<String>, zh: impl Into<String>) -> FieldError {
        FieldError { field, message: en.into(), zh: zh.into() }
    }

    /// A number core's bounds refuse (`gpuctl_core::input`), worded in both languages.
    fn input(field: &'static str, e: &InputError) -> FieldError {
        FieldError::new(field, e.to_string(), i18n::input_error(e, Lang::Zh))
    }

    /// A name that matched nothing, with the closest valid names.
    fn unknown(field: &'static str, e: &UnknownName) -> FieldError {
        FieldError::new(field, e.to_string(), i18n::unknown_name(e, Lang::Zh))
    }

    /// The message in the page's language.
    pub fn text(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.message,
            Lang::Zh => &self.zh,
        }
    }
}

/// What a field holds, for its error messages: (English with an article, Chinese).
type What = (&'static str, &'static str);

/// One billing mode's cost for a row.
#[derive(Clone, Debug, PartialEq)]
pub struct ModeCell {
    pub mode: BillingMode,
    pub cost_low: f64,
    pub cost_high: f64,
    pub cny_per_1m_low: Option<f64>,
    pub cny_per_1m_high: Option<f64>,
}

/// One instance type: where it is cheapest, every mode's cost, the cheapest mode marked.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `provider/instance/region` of the cheapest mode: the key `pick` refers to.
    pub key: String,
    /// The engine's offer for the cheapest mode (fit, time, price with source and date).
    pub best: Offer,
    /// Every mode offered, in the engine's order (hourly … year3).
    pub modes: Vec<ModeCell>,
    /// Warnings of every mode, deduplicated (codes: the page words them in its language).
    pub warnings: Vec<Warning>,
}

impl Row {
    pub fn cheapest(&self) -> BillingMode {
        self.best.mode
    }
}

/// What the page renders.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Evaluation {
    pub errors: Vec<FieldError>,
    pub rows: Vec<Row>,
    pub infeasible: Vec<Infeasible>,
    pub warnings: Vec<Warning>,
    /// Assumptions and price age as codes: the page words them in its language.
    pub assumptions: Vec<Assumption>,
    pub price_age: Option<PriceAge>,
    /// How the ranked offers' prices split between observed and derived, and the observed ones'
    /// dates (issue 18: what the user bets on).
    pub evidence: Option<gpuctl_core::EvidenceMix>,
    /// The parsed question (absent when an input is wrong).
    pub question: Option<Question>,
}

impl Evaluation {
    /// The row `pick` names, else the top-ranked one.
    pub fn picked(&self, pick: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.key == pick).or(self.rows.first())
    }
}

fn number(field: &'static str, text: &str, errors: &mut Vec<FieldError>, what: What) -> Option<f64> {
    let t = text.trim().trim_start_matches(['¥', '￥']).trim();
    if t.is_empty() {
        return None;
    }
    match parse_count(t) {
        Ok(v) => Some(v),
        Err(_) => {
            errors.push(FieldError::new(
                field,
                format!("'{text}' is not {}", what.0),
                format!("“{text}”不是有效的{}", what.1),
            ));
            None
        }
    }
}

/// The model the inputs describe: a preset, a shape inferred from a parameter count, or a pasted
/// config.json (the last one the user gave: a preset clears the count, a config clears both).
pub fn model(inputs: &Inputs, errors: &mut Vec<FieldError>) -> Option<ModelShape> {
    if !inputs.model.is_empty() {
        return match preset(&inputs.model) {
            Ok(m) => Some(m),
            Err(e) => {
                errors.push(FieldError::unknown("model", &e));
                None
            }
        };
    }
    if inputs.params.trim().is_empty() && !inputs.config.trim().is_empty() {
        return match crate::hf::read(&inputs.config) {
            Ok(m) => Some(m),
            Err(e) => {
                errors.push(FieldError::new("config", e.to_string(), i18n::config_error(&e, Lang::Zh)));
                None
            }
        };
    }
    match number(
        "params",
        &inputs.params,
        errors,
        ("a parameter count (e.g. 7b, 13B, 350M)", "参数量（如 7b、13B、350M）"),
    ) {
        Some(p) => match input::params(p) {
            Ok(p) => Some(ModelShape::from_params(p)),
            Err(e) => {
                errors.push(FieldError::input("params", &e));
                None
            }
        },
        None => {
            if !errors.iter().any(|e| e.field == "params") {
                errors.push(FieldError::new(
                    "params",
                    "give a parameter count (e.g. 7b) or choose a model",
                    "请填写参数量（如 7b）或选择模型",
                ));
            }
            None
        }
    }
}

/// Parse the inputs into the engine's question; every problem is reported, not only the first.
pub fn question(inputs: &Inputs, today: Date) -> Result<Question, Vec<FieldError>> {
    let mut errors = Vec::new();
    let model = model(inputs, &mut errors);
    let method =
        Method::parse(&inputs.method).map_err(|e| errors.push(FieldError::unknown("method", &e))).ok();
    let precision = if inputs.precision.is_empty() {
        None
    } else {
        Precision::parse(&inputs.precision)
            .map_err(|e| errors.push(FieldError::unknown("precision", &e)))
            .ok()
    };
    let seq =
        number("seq", &inputs.seq_len, &mut errors, ("a sequence length (e.g. 2048)", "序列长度（如 2048）"));
    // Inference's own settings (the page shows them only for inference; a training method ignores
    // them, as the CLI's --runtime does).
    let inference = method == Some(Method::Inference);
    let runtime = if inference {
        gpuctl_core::Runtime::parse(&inputs.runtime)
            .map_err(|e| errors.push(FieldError::unknown("runtime", &e)))
            .ok()
    } else {
        None
    };
    let output = if inference {
        number(
            "output-tokens",
            &inputs.output_tokens,
            &mut errors,
            ("a token count (e.g. 512)", "token 数（如 512）"),
        )
    } else {
        None
    };
    let tokens = number(
        "tokens",
        &inputs.tokens,
        &mut errors,
        ("a token count (e.g. 50M, 1.5B)", "token 数（如 50M、1.5B）"),
    );
    let epochs =
        number("epochs", &inputs.epochs, &mut errors, ("a number of epochs (e.g. 3)", "训练轮数（如 3）"));
    let gpus = number("gpus", &inputs.gpus, &mut errors, ("a GPU count (e.g. 1, 8)", "GPU 数量（如 1、8）"));
    let hpd = number(
        "hours-per-day",
        &inputs.hours_per_day,
        &mut errors,
        ("hours per day (1–24)", "每天使用小时数（1–24）"),
    );
    let days = number("days", &inputs.days, &mut errors, ("a number of days", "天数"));
    let deadline = number("deadline", &inputs.deadline_days, &mut errors, ("a number of days", "天数"));
    let budget = number(
        "budget",
        &inputs.budget,
        &mut errors,
        ("an amount in ¥ (e.g. 5000, 20k)", "金额（¥，如 5000、20k）"),
    );

    // Core's bounds, the same the CLI's flags are held to; every failing field is reported.
    let mut check = |field: &'static str, r: Result<f64, InputError>| match r {
        Ok(v) => Some(v),
        Err(e) => {
            errors.push(FieldError::input(field, &e));
            None
        }
    };
    let seq = seq.and_then(|s| check("seq", input::seq_len(s).map(f64::from)));
    // Output tokens are the last part of the sequence: checked against the sequence as given.
    let output = match (output, seq) {
        (Some(o), Some(s)) => check("output-tokens", input::output_tokens(o, s as u32).map(f64::from)),
        _ => None,
    };
    let tokens = tokens.and_then(|t| check("tokens", input::tokens(t)));
    let epochs = epochs.and_then(|e| check("epochs", input::epochs(e)));
    let gpus = gpus.and_then(|g| check("gpus", input::gpus(g).map(f64::from)));
    let hpd = hpd.and_then(|h| check("hours-per-day", input::hours_per_day(h)));
    let days = days.and_then(|d| check("days", input::days(d)));
    let deadline = deadline.and_then(|d| check("deadline", input::deadline(d)));
    let budget = budget.and_then(|b| check("budget", input::budget_cny(b)));
    let mut providers = Vec::new();
    for p in &inputs.providers {
        match gpuctl_core::parse_provider(p) {
            Ok(p) => providers.push(p),
            Err(e) => errors.push(FieldError::unknown("providers", &e)),
        }
    }
    let (Some(model), Some(method), true) = (model, method, errors.is_empty()) else {
        return Err(errors);
    };
    let mut job = Job::new(model, method);
    job.precision = precision;
    if let Some(s) = seq {
        job.seq_len = s as u32;
    }
    if let Some(r) = runtime {
        job.runtime = r;
    }
    if let Some(o) = output {
        job.output_tokens = o as u32;
    }
    job.tokens = tokens.unwrap_or(0.0);
    if let Some(e) = epochs {
        job.epochs = e;
    }
    let mut q = Question::new(job, today);
    let hours_per_day = hpd.unwrap_or(24.0);
    q.usage = match days {
        Some(d) => Usage::daily(hours_per_day, d),
        None => Usage { hours_per_day, total_hours: None },
    };
    q.providers = providers;
    q.gpu_count = gpus.map(|g| g as u32);
    q.deadline_hours = deadline.map(|d| d * 24.0);
    q.budget_cny = budget;
    Ok(q)
}

/// Rank the catalog for the inputs and group the offers into rows (cheapest row first).
pub fn evaluate(catalog: &Catalog, inputs: &Inputs, today: Date) -> Evaluation {
    let q = match question(inputs, today) {
        Ok(q) => q,
        Err(errors) => return Evaluation { errors, ..Evaluation::default() },
    };
    let mut q = q;
    if !inputs.gpu.is_empty() {
        // "Can a 16 GB T4 run 7B?": only that GPU's instance types (the CLI's `--gpu`).
        match catalog.find_gpu(&inputs.gpu) {
            Ok(g) => q.gpus = vec![g.id.clone()],
            Err(e) => {
                return Evaluation { errors: vec![FieldError::unknown("gpu", &e)], ..Evaluation::default() }
            }
        }
    }
    let ranking = rank(catalog, &q);
    let evidence = Catalog::evidence_mix(ranking.offers.iter().map(|o| &o.price));
    let mut rows: Vec<Row> = Vec::new();
    // Offers arrive cheapest first, so the first offer of an instance type is its cheapest mode; it is
    // moved into its row, not cloned (offers are large, and this runs on every keystroke).
    for offer in ranking.offers {
        let cell = ModeCell {
            mode: offer.mode,
            cost_low: offer.cost_low,
            cost_high: offer.cost_high,
            cny_per_1m_low: offer.cny_per_1m_tokens_low,
            cny_per_1m_high: offer.cny_per_1m_tokens_high,
        };
        match rows.iter_mut().find(|r| r.best.provider == offer.provider && r.best.instance == offer.instance)
        {
            Some(row) => {
                row.modes.push(cell);
                for w in &offer.warning_codes {
                    if !row.warnings.contains(w) {
                        row.warnings.push(w.clone());
                    }
                }
            }
            None => rows.push(Row {
                key: format!("{}/{}/{}", offer.provider, offer.instance, offer.region),
                modes: vec![cell],
                warnings: offer.warning_codes.clone(),
                best: offer,
            }),
        }
    }
    for row in &mut rows {
        row.modes.sort_by_key(|c| c.mode);
    }
    Evaluation {
        errors: vec![],
        rows,
        infeasible: ranking.infeasible,
        warnings: ranking.warning_codes,
        assumptions: ranking.assumption_codes,
        price_age: Some(ranking.price_age_code),
        evidence: Some(evidence),
        question: Some(q),
    }
}

/// Cost of each billing mode of `row`'s instance and region against days of use at the question's
/// hours per day: the data of the "billing modes over days" chart. Per mode: (mode, [(days, ¥)]).
pub fn modes_over_days(
    catalog: &Catalog,
    row: &Row,
    hours_per_day: f64,
    max_days: u32,
) -> Vec<(BillingMode, Vec<(f64, f64)>)> {
    let prices = catalog.prices_for(row.best.provider, &row.best.instance, &row.best.region);
    prices
        .iter()
        .map(|p| {
            let points = (1..=max_days)
                .map(|d| {
                    let usage = Usage::daily(hours_per_day, d as f64);
                    let h = hours_per_day * d as f64;
                    (d as f64, cost_of(p, (h, h), &usage, 0.0).cost_high)
                })
                .collect();
            (p.mode, points)
        })
        .collect()
}

/// The TCO tab's inputs as the engine's [`TcoInput`] (utilization typed in percent).
pub fn tco_input(inputs: &Inputs) -> Result<TcoInput, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut t = TcoInput { gpu: inputs.tco_gpu.trim().to_string(), ..TcoInput::default() };
    let mut num = |field: &'static str, text: &str, what: What, min: f64, max: f64| -> f64 {
        match number(field, text, &mut errors, what) {
            Some(v) if v >= min && v <= max => v,
            Some(_) => {
                errors.push(FieldError::new(
                    field,
                    format!("{}: from {min} to {max}", what.0),
                    format!("{}须在 {min} 到 {max} 之间", what.1),
                ));
                f64::NAN
            }
            None => {
                if !errors.iter().any(|e| e.field == field) {
                    errors.push(FieldError::new(
                        field,
                        format!("give {}", what.0),
                        format!("请填写{}", what.1),
                    ));
                }
                f64::NAN
            }
        }
    };
    t.gpus = num("tco-gpus", &inputs.tco_gpus, ("a GPU count", "GPU 数量"), 1.0, 100_000.0) as u32;
    t.card_cny = num("tco-card", &inputs.tco_card, ("a price per card in ¥", "单卡价格（¥）"), 0.0, 1e8);
    t.server_cny =
        num("tco-server", &inputs.tco_server, ("a price per server in ¥", "每台服务器价格（¥）"), 0.0, 1e8);
    t.network_storage_cny = num("tco-network", &inputs.tco_network, ("a price in ¥", "价格（¥）"), 0.0, 1e10);
    t.depreciation_years =
        num("tco-years", &inputs.tco_years, ("years of depreciation", "折旧年限"), 0.5, 15.0);
    t.server_kw = num("tco-kw", &inputs.tco_kw, ("kW per server", "每台服务器功率（kW）"), 0.0, 100.0);
    t.pue = num("tco-pue", &inputs.tco_pue, ("a PUE", "PUE"), 1.0, 3.0);
    t.cny_per_kwh = num("tco-kwh", &inputs.tco_kwh, ("a tariff in ¥/kWh", "电价（¥/kWh）"), 0.0, 10.0);
    t.ops_cny_per_year =
        num("tco-ops", &inputs.tco_ops, ("ops cost in ¥ per year", "每年运维成本（¥）"), 0.0, 1e9);
    t.utilization =
        num("tco-util", &inputs.tco_util, ("a utilization in %", "利用率（%）"), 0.0, 100.0) / 100.0;
    if errors.is_empty() {
        Ok(t)
    } else {
        Err(errors)
    }
}

/// The TCO answer for the inputs.
pub fn evaluate_tco(catalog: &Catalog, inputs: &Inputs) -> Result<TcoReport, Vec<FieldError>> {
    let input = tco_input(inputs)?;
    if catalog.gpu(&input.gpu).is_none() {
        let names: Vec<&str> = catalog.gpus().iter().map(|g| g.id.as_str()).collect();
        return Err(vec![FieldError::unknown("tco-gpu", &UnknownName::new("GPU", &input.gpu, names))]);
    }
    Ok(tco(catalog, &input))
}

/// The staged plan (validate → tune → produce) for the inputs' question.
pub fn evaluate_stages(catalog: &Catalog, ev: &Evaluation) -> Option<StagePlan> {
    ev.question.as_ref().map(|q| stages(catalog, q))
}

/// The fit report's parts, for the memory breakdown bar: (label, GB), zero parts left out.
pub fn memory_parts(f: &FitReport) -> Vec<(&'static str, f64)> {
    let b = &f.breakdown;
    [
        ("weights", b.weights_gb),
        ("gradients", b.gradients_gb),
        ("optimizer", b.optimizer_gb),
        ("adapters", b.adapters_gb),
        ("activations", b.activations_gb),
        ("kv-cache", b.kv_cache_gb),
        ("overhead", b.overhead_gb),
    ]
    .into_iter()
    .filter(|(_, gb)| *gb > 0.0)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuctl_core::{parse_date, Provider};

    fn today() -> Date {
        parse_date("2026-11-30").unwrap()
    }

    fn with(f: impl FnOnce(&mut Inputs)) -> Inputs {
        let mut i = Inputs::default();
        f(&mut i);
        i
    }

    #[test]
    fn bad_inputs_name_their_field() {
        let check = |inputs: Inputs, fields: &[&str]| {
            let errs = question(&inputs, today()).expect_err("should fail");
            let got: Vec<&str> = errs.iter().map(|e| e.field).collect();
            assert_eq!(got, fields, "{errs:?}");
        };
        check(with(|i| i.tokens = "lots".into()), &["tokens"]);
        check(with(|i| i.method = "lorra".into()), &["method"]);
        check(
            with(|i| {
                i.model = String::new();
                i.params = String::new()
            }),
            &["params"],
        );
        check(
            with(|i| {
                i.model = String::new();
                i.params = "7".into()
            }),
            &["params"],
        );
        check(
            with(|i| {
                i.hours_per_day = "25".into();
                i.gpus = "1.5".into()
            }),
            &["gpus", "hours-per-day"],
        );
        check(with(|i| i.providers = vec!["aws".into()]), &["providers"]);
        let e = question(&with(|i| i.method = "lorra".into()), today()).unwrap_err();
        assert!(e[0].message.contains("lora"), "suggests the closest name: {}", e[0].message);
    }

    /// A pasted config.json is the model (the last model the user gave wins), and a bad one is named
    /// under its box in both languages while the text stays as typed.
    #[test]
    fn a_config_is_the_model() {
        let config = r#"{"model_type": "qwen2", "num_hidden_layers": 28, "hidden_size": 3584,
            "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944,
            "vocab_size": 152064}"#;
        let given = |text: &str| {
            with(|i| {
                i.model.clear();
                i.config = text.into()
            })
        };
        let q = question(&given(config), today()).unwrap();
        assert_eq!((q.job.model.name.as_str(), q.job.model.layers), ("config.json", 28));
        assert!(!rank(Catalog::shipped(), &q).offers.is_empty());
        // A preset or a parameter count given after the config is the model; the config stays.
        let preset = with(|i| i.config = config.into());
        assert_eq!(question(&preset, today()).unwrap().job.model.name, "qwen2.5-7b");
        let params = Inputs { params: "13b".into(), ..given(config) };
        assert_eq!(question(&params, today()).unwrap().job.model.name, "custom");

        let partial = given(r#"{"hidden_size": 4096}"#);
        let e = question(&partial, today()).unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].field, e[0].message.as_str()),
            (
                "config",
                "missing `num_hidden_layers` (or `num_layers`, `n_layer`): the number of transformer layers"
            )
        );
        assert_eq!(e[0].zh, "缺少 `num_hidden_layers`（或 `num_layers`、`n_layer`）：Transformer 层数");
        let broken = given("{\n  \"hidden_size\": 40,,\n}");
        let e = question(&broken, today()).unwrap_err();
        assert!(e[0].zh.starts_with("2:21: 不是有效的 JSON："), "{}", e[0].zh);
    }

    /// Every field message has its Chinese wording, with the closest names kept.
    #[test]
    fn field_errors_in_chinese() {
        let bad = [
            with(|i| {
                i.tokens = "lots".into();
                i.seq_len = "8".into();
                i.epochs = "0".into();
                i.days = "x".into()
            }),
            with(|i| {
                i.method = "lorra".into();
                i.precision = "fp12".into();
                i.budget = "much".into()
            }),
            with(|i| {
                i.model = String::new();
                i.params = "7".into();
                i.deadline_days = "0".into()
            }),
            with(|i| {
                i.hours_per_day = "25".into();
                i.gpus = "1.5".into();
                i.providers = vec!["aws".into()]
            }),
            with(|i| i.model = "qwen-9000".into()),
        ];
        let mut seen = 0;
        for inputs in &bad {
            for e in question(inputs, today()).unwrap_err() {
                seen += 1;
                let zh = e.text(Lang::Zh);
                assert!(zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "{zh}");
                for english in ["is not", "must", "give", "unknown", "did you mean", "e.g."] {
                    assert!(!zh.contains(english), "{english:?} in {zh}");
                }
                assert_eq!(e.text(Lang::En), e.message);
            }
        }
        assert!(seen >= 12, "{seen} errors");
        let e = question(&with(|i| i.method = "lorra".into()), today()).unwrap_err();
        assert_eq!(e[0].text(Lang::Zh), "未知的方法“lorra”，是否想输入：lora、qlora4、qlora8？");
        let t = tco_input(&Inputs { tco_pue: "9".into(), tco_util: String::new(), ..Inputs::default() })
            .unwrap_err();
        assert_eq!(t[0].text(Lang::Zh), "PUE须在 1 到 3 之间");
        assert_eq!(t[1].text(Lang::Zh), "请填写利用率（%）");
    }

    #[test]
    fn inputs_become_the_engine_question() {
        let q = question(
            &with(|i| {
                i.model = String::new();
                i.params = "13b".into();
                i.tokens = "1.5B".into();
                i.budget = "¥20k".into();
                i.days = "10".into();
                i.hours_per_day = "2".into();
                i.deadline_days = "30".into();
                i.providers = vec!["aliyun".into()];
            }),
            today(),
        )
        .unwrap();
        assert_eq!(q.job.model.params, 13e9);
        assert_eq!(q.job.tokens, 1.5e9);
        assert_eq!(q.budget_cny, Some(20_000.0));
        assert_eq!(q.usage, Usage::daily(2.0, 10.0));
        assert_eq!(q.deadline_hours, Some(720.0));
        assert_eq!(q.providers, vec![Provider::Alibaba]);
    }

    /// Inference's runtime and output tokens reach the engine (the CLI's --runtime, --output-tokens);
    /// output past the sequence is refused with core's code, in both languages; a training method
    /// ignores the two fields, which the page then hides.
    #[test]
    fn inference_takes_a_runtime_and_output_tokens() {
        let q = question(
            &with(|i| {
                i.method = "inference".into();
                i.seq_len = "32768".into();
                i.output_tokens = "2048".into();
                i.runtime = "transformers".into();
            }),
            today(),
        )
        .unwrap();
        assert_eq!((q.job.output_tokens, q.job.runtime), (2048, gpuctl_core::Runtime::Transformers));
        let e = question(
            &with(|i| {
                i.method = "inference".into();
                i.output_tokens = "4096".into();
                i.runtime = "onnx".into();
            }),
            today(),
        )
        .unwrap_err();
        assert_eq!(e.iter().map(|e| e.field).collect::<Vec<_>>(), ["runtime", "output-tokens"]);
        assert!(e[1].text(Lang::En).contains("from 0 to the sequence length, 2048"), "{}", e[1].message);
        assert!(e[1].text(Lang::Zh).contains("序列长度 2048"), "{}", e[1].zh);
        let q = question(
            &with(|i| {
                i.output_tokens = "x".into();
                i.runtime = "onnx".into();
            }),
            today(),
        )
        .unwrap();
        assert_eq!((q.job.output_tokens, q.job.runtime), (0, gpuctl_core::Runtime::Serving));
    }

    #[test]
    fn rows_group_modes_and_keep_engine_order() {
        let ev = evaluate(Catalog::shipped(), &Inputs::default(), today());
        assert!(ev.errors.is_empty());
        assert!(!ev.rows.is_empty(), "the default question has offers");
        for pair in ev.rows.windows(2) {
            assert!(pair[0].best.cost_high <= pair[1].best.cost_high, "rows sorted by their cheapest mode");
        }
        for row in &ev.rows {
            let cheapest = row.modes.iter().map(|m| m.cost_high).fold(f64::INFINITY, f64::min);
            assert_eq!(cheapest, row.best.cost_high, "{}: best is the cheapest mode", row.key);
            assert!(row.modes.windows(2).all(|w| w[0].mode < w[1].mode));
        }
        assert_eq!(ev.picked("nope").map(|r| &r.key), ev.rows.first().map(|r| &r.key));
    }

    #[test]
    fn tco_inputs() {
        let t = tco_input(&Inputs::default()).unwrap();
        assert_eq!(t, TcoInput::default(), "the page's defaults are the engine's");
        let errs = tco_input(&with(|i| {
            i.tco_pue = "0.5".into();
            i.tco_util = "x".into()
        }))
        .unwrap_err();
        assert_eq!(errs.iter().map(|e| e.field).collect::<Vec<_>>(), ["tco-pue", "tco-util"]);
        let e = evaluate_tco(Catalog::shipped(), &with(|i| i.tco_gpu = "a100-sxm4-80".into())).unwrap_err();
        assert!(e[0].message.contains("a100-sxm4-80g"), "{}", e[0].message);
        let r = evaluate_tco(Catalog::shipped(), &Inputs::default()).unwrap();
        assert!(!r.curve.is_empty());
    }

    #[test]
    fn a_tighter_budget_changes_the_ranking() {
        let all = evaluate(Catalog::shipped(), &Inputs::default(), today());
        let top = all.rows[0].best.cost_high;
        let tight = evaluate(Catalog::shipped(), &with(|i| i.budget = format!("{}", top * 0.5)), today());
        assert!(tight.rows.is_empty());
        assert!(tight.infeasible.iter().any(|x| x.reasons.iter().any(|r| r.contains("over budget"))));
    }
}
