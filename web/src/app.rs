//! The page: Leptos components that render what `calc` computes and write what the user types back
//! into [`Inputs`]. No domain logic lives here (todomvc style): the state is one `RwSignal<Inputs>`,
//! answers are memos over it, and the only side effects are the URL, `<html lang>`, the download of
//! an exported spec and the timing figure the budget bench reads.

use gpuctl_core::{BillingMode, Catalog, Date, Method, Offer, Precision, Provider};
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::calc::{self, Evaluation, FieldError};
use crate::chart::{self, Scale, H, MB, ML, MR, MT, W};
use crate::format;
use crate::hf;
use crate::html::{self, provider_class};
use crate::i18n::{self, Lang, Text};
use crate::query::{Inputs, Tab, TEXT_FIELDS};
use crate::spec;

/// How long typing must pause before the URL is updated.
const URL_DELAY_MS: u64 = 250;

/// Rows rendered in the offers table until "show all": every row costs DOM work on each re-rank,
/// and all of them are in the chart anyway.
const SHOWN_ROWS: usize = 10;

/// Re-ranks run once after load to warm the engine's code paths (see [`warm_up`]).
const WARM_UP_RERANKS: u32 = 4;

/// Everything the components share. All fields are `Copy` handles.
#[derive(Clone, Copy)]
struct Ctx {
    inputs: RwSignal<Inputs>,
    lang: Memo<Lang>,
    eval: Memo<Evaluation>,
    tco: Memo<Result<gpuctl_core::TcoReport, Vec<FieldError>>>,
    errors: Memo<Vec<FieldError>>,
    today: Date,
}

impl Ctx {
    fn t(&self, text: Text) -> &'static str {
        text.get(self.lang.get())
    }
}

#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// Called by index.html with the bytes of `catalog.bin`, fetched beside this module (issue 18: the
/// catalog is its own static file, so the code bundle keeps its budget and a catalog refresh leaves
/// the cached code alone). Renders the calculator, or the error page if the bytes are not a catalog.
#[wasm_bindgen]
pub fn mount(catalog: &[u8]) {
    match Catalog::install_shipped(catalog) {
        Ok(_) => leptos::mount::mount_to_body(App),
        Err(e) => catalog_unavailable(&format!("catalog.bin: {e}")),
    }
}

/// The page when there is no catalog (index.html calls it when the fetch fails, offline with no
/// cached copy or a server error): a clear message instead of an empty page, with the reason.
#[wasm_bindgen]
pub fn catalog_unavailable(reason: &str) {
    let search = window().location().search().unwrap_or_default();
    let lang = Inputs::from_query(&search).lang.unwrap_or_else(browser_lang);
    let reason = reason.to_string();
    leptos::mount::mount_to_body(move || {
        view! {
            <main role="alert" data-testid="catalog-error">
                <h1>{i18n::TITLE.get(lang)}</h1>
                <p>{i18n::CATALOG_UNAVAILABLE.get(lang)}</p>
                <p><code>{reason}</code></p>
                <p>{i18n::CATALOG_RETRY.get(lang)}</p>
            </main>
        }
    });
}

fn window() -> web_sys::Window {
    web_sys::window().expect("the page runs in a browser window")
}

fn now_ms() -> f64 {
    window().performance().map(|p| p.now()).unwrap_or(0.0)
}

/// Today in the browser's time zone: the engine reads no clock, the page passes the date in.
fn today() -> Date {
    let d = js_sys::Date::new_0();
    Date::new(d.get_full_year() as i16, (d.get_month() + 1) as i8, d.get_date() as i8)
        .unwrap_or_else(|_| Date::constant(2026, 1, 1))
}

fn browser_lang() -> Lang {
    let langs: Vec<String> = window().navigator().languages().iter().filter_map(|v| v.as_string()).collect();
    Lang::from_browser(langs.iter().map(String::as_str))
}

/// Runs the whole re-rank path (engine, memos, table and chart HTML, the DOM writes) on a few nearby
/// token counts, then puts the inputs back. The first edits after load were 3–5× slower than the rest:
/// V8 first runs WebAssembly and JS glue unoptimized and optimizes what gets hot, and the allocator
/// grows its heap on first use; without this the user's first keystrokes paid for it. It all runs in
/// one task (each step waits only for the effects' microtasks), so nothing in between is painted.
async fn warm_up(inputs: RwSignal<Inputs>) {
    let shown = inputs.get_untracked();
    for k in 1..=WARM_UP_RERANKS {
        // Any valid token count other than the one shown: the same code paths, a different answer.
        inputs.update(|i| i.tokens = format!("{}M", 37 * k));
        leptos::task::tick().await;
        leptos::task::tick().await;
    }
    inputs.set(shown);
}

/// The inputs with the fields that do not change the ranking reset, so switching tab, language,
/// the chosen offer or a TCO field does not re-rank.
fn ranking_inputs(i: &Inputs) -> Inputs {
    let d = Inputs::default();
    Inputs {
        lang: None,
        tab: d.tab,
        pick: String::new(),
        tco_gpu: d.tco_gpu,
        tco_gpus: d.tco_gpus,
        tco_card: d.tco_card,
        tco_server: d.tco_server,
        tco_network: d.tco_network,
        tco_years: d.tco_years,
        tco_kw: d.tco_kw,
        tco_pue: d.tco_pue,
        tco_kwh: d.tco_kwh,
        tco_ops: d.tco_ops,
        tco_util: d.tco_util,
        ..i.clone()
    }
}

#[component]
fn App() -> impl IntoView {
    let search = window().location().search().unwrap_or_default();
    let inputs = RwSignal::new(Inputs::from_query(&search));
    let browser = browser_lang();
    let lang = Memo::new(move |_| inputs.with(|i| i.lang).unwrap_or(browser));
    let today = today();
    let rank_key = Memo::new(move |_| inputs.with(ranking_inputs));
    let eval = Memo::new(move |_| {
        let t0 = now_ms();
        let ev = rank_key.with(|i| calc::evaluate(Catalog::shipped(), i, today));
        // The budget bench (web/e2e/bench.mjs) reads how long the engine and grouping took.
        let _ = js_sys::Reflect::set(&window(), &"__gpuctlRankMs".into(), &(now_ms() - t0).into());
        ev
    });
    let tco = Memo::new(move |_| inputs.with(|i| calc::evaluate_tco(Catalog::shipped(), i)));
    let errors = Memo::new(move |_| {
        let mut all = eval.with(|e| e.errors.clone());
        tco.with(|t| {
            if let Err(e) = t {
                all.extend(e.iter().cloned())
            }
        });
        all
    });
    let ctx = Ctx { inputs, lang, eval, tco, errors, today };
    // In the task after the first render (before anyone can type).
    set_timeout(move || leptos::task::spawn_local(warm_up(inputs)), std::time::Duration::ZERO);
    // Memos over parts of the state, so an edit rebuilds only what shows that part.
    let tab = Memo::new(move |_| inputs.with(|i| i.tab));
    let price_age = Memo::new(move |_| eval.with(|e| e.price_age.clone()));
    let evidence = Memo::new(move |_| eval.with(|e| e.evidence));
    let assumptions = Memo::new(move |_| eval.with(|e| e.assumptions.clone()));

    // The URL is the state: replace (not push) so typing does not flood the history, and only once
    // typing pauses: Chromium's replaceState costs ~20 ms a call, more than the re-rank budget.
    let url_timer: StoredValue<Option<TimeoutHandle>> = StoredValue::new(None);
    Effect::new(move |_| {
        let q = inputs.with(Inputs::to_query);
        if let Some(h) = url_timer.get_value() {
            h.clear();
        }
        let h = set_timeout_with_handle(
            move || {
                let path = window().location().pathname().unwrap_or_else(|_| "/".into());
                let url = if q.is_empty() { path } else { format!("{path}?{q}") };
                if let Ok(h) = window().history() {
                    let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&url));
                }
            },
            std::time::Duration::from_millis(URL_DELAY_MS),
        )
        .ok();
        url_timer.set_value(h);
    });
    Effect::new(move |_| {
        let l = lang.get();
        if let Some(doc) = window().document() {
            if let Some(root) = doc.document_element() {
                let _ = root.set_attribute("lang", if l == Lang::Zh { "zh-CN" } else { "en" });
            }
            doc.set_title(&format!("gpuctl — {}", i18n::TITLE.get(l)));
        }
    });

    view! {
        <header class="top">
            <div>
                <h1>"gpuctl · " {move || ctx.t(i18n::TITLE)}</h1>
                <p class="sub">{move || ctx.t(i18n::SUBTITLE)}</p>
            </div>
            <label class="lang">
                <span>{move || ctx.t(i18n::LANGUAGE)}</span>
                <select
                    data-testid="lang"
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        inputs.update(|i| i.lang = Lang::from_code(&v));
                    }
                >
                    <option value="en" selected=move || lang.get() == Lang::En>"English"</option>
                    <option value="zh" selected=move || lang.get() == Lang::Zh>"中文"</option>
                </select>
            </label>
        </header>
        <main class="layout">
            <JobInputs ctx />
            <section class="results">
                <nav class="tabs">
                    {Tab::ALL
                        .into_iter()
                        .map(|this| {
                            let label = match this {
                                Tab::Offers => i18n::TAB_OFFERS,
                                Tab::Plan => i18n::TAB_PLAN,
                                Tab::Tco => i18n::TAB_TCO,
                            };
                            view! {
                                <button
                                    data-testid=format!("tab-{}", this.code())
                                    class:active=move || tab.get() == this
                                    on:click=move |_| inputs.update(|i| i.tab = this)
                                >
                                    {move || ctx.t(label)}
                                </button>
                            }
                        })
                        .collect_view()}
                </nav>
                {move || match tab.get() {
                    Tab::Offers => view! { <OffersView ctx /> }.into_any(),
                    Tab::Plan => view! { <PlanView ctx /> }.into_any(),
                    Tab::Tco => view! { <TcoView ctx /> }.into_any(),
                }}
            </section>
        </main>
        <footer class="foot">
            <p data-testid="price-age">{move || price_age.with(|p| p.as_ref().map(|p| i18n::price_age(p, lang.get())))}</p>
            <p data-testid="evidence-mix">{move || evidence.with(|m| m.as_ref().map(|m| i18n::evidence_mix(m, today, lang.get())))}</p>
            <details>
                <summary>{move || ctx.t(i18n::ASSUMPTIONS)}</summary>
                <ul data-testid="assumptions">
                    {move || {
                        let l = lang.get();
                        assumptions.with(|a| a.iter().map(|a| view! { <li>{i18n::assumption(a, l)}</li> }).collect_view())
                    }}
                </ul>
            </details>
        </footer>
    }
}

/// A text input bound to one field of [`Inputs`] (by its URL key), with its error underneath.
#[component]
fn Field(
    ctx: Ctx,
    /// URL key in `query::TEXT_FIELDS`.
    key: &'static str,
    testid: &'static str,
    label: Text,
    #[prop(optional)] hint: Option<Text>,
    /// Extra change applied on every edit (typing a parameter count leaves the preset).
    #[prop(optional)]
    also: Option<fn(&mut Inputs)>,
) -> impl IntoView {
    let &(_, get, set) = TEXT_FIELDS.iter().find(|f| f.0 == key).expect("a field of Inputs");
    let error = move || {
        let l = ctx.lang.get();
        ctx.errors.with(|es| es.iter().find(|e| e.field == testid).map(|e| e.text(l).to_string()))
    };
    // This field's text alone: typing elsewhere must not touch this input.
    let value = Memo::new(move |_| ctx.inputs.with(|i| get(i).clone()));
    view! {
        <label class="field" class:invalid=move || error().is_some()>
            <span>{move || ctx.t(label)}</span>
            <input
                type="text"
                autocomplete="off"
                spellcheck="false"
                data-testid=testid
                prop:value=move || value.get()
                placeholder=move || hint.map(|h| ctx.t(h)).unwrap_or("")
                on:input=move |ev| {
                    let v = event_target_value(&ev);
                    ctx.inputs.update(|i| {
                        *set(i) = v;
                        if let Some(f) = also {
                            f(i);
                        }
                    });
                }
            />
            {move || error().map(|m| view! { <small class="error" data-testid=format!("error-{testid}")>{m}</small> })}
        </label>
    }
}

/// A `<select>` bound to one field of [`Inputs`]; options are (value, label in the page's language).
#[component]
fn Choice(
    ctx: Ctx,
    key: &'static str,
    testid: &'static str,
    label: Text,
    options: Signal<Vec<(String, String)>>,
    #[prop(optional)] also: Option<fn(&mut Inputs)>,
) -> impl IntoView {
    let &(_, get, set) = TEXT_FIELDS.iter().find(|f| f.0 == key).expect("a field of Inputs");
    let error = move || {
        let l = ctx.lang.get();
        ctx.errors.with(|es| es.iter().find(|e| e.field == testid).map(|e| e.text(l).to_string()))
    };
    let current = Memo::new(move |_| ctx.inputs.with(|i| get(i).clone()));
    view! {
        <label class="field" class:invalid=move || error().is_some()>
            <span>{move || ctx.t(label)}</span>
            <select
                data-testid=testid
                on:change=move |ev| {
                    let v = event_target_value(&ev);
                    ctx.inputs.update(|i| {
                        *set(i) = v;
                        if let Some(f) = also {
                            f(i);
                        }
                    });
                }
            >
                {move || {
                    let current = current.get();
                    options
                        .get()
                        .into_iter()
                        .map(|(value, text)| {
                            let selected = value == current;
                            view! { <option value=value selected=selected>{text}</option> }
                        })
                        .collect_view()
                }}
            </select>
            {move || error().map(|m| view! { <small class="error">{m}</small> })}
        </label>
    }
}

/// The config.json box: paste, drop a file on it, or pick one. Giving a config makes it the model
/// (the preset and parameter count are cleared); the text stays as given, so a refused config can be
/// fixed in place, and its error names the field.
#[component]
fn ConfigInput(ctx: Ctx) -> impl IntoView {
    let error = move || {
        let l = ctx.lang.get();
        ctx.errors.with(|es| es.iter().find(|e| e.field == "config").map(|e| e.text(l).to_string()))
    };
    let value = Memo::new(move |_| ctx.inputs.with(|i| i.config.clone()));
    let set = move |text: String| {
        ctx.inputs.update(|i| {
            if !text.trim().is_empty() {
                i.model.clear();
                i.params.clear();
            }
            i.config = text;
        })
    };
    // A file's text, read by the browser; the first MiB only (as the CLI bounds its read): anything
    // longer is no config, and the cut shows as a JSON error.
    let load = move |files: Option<web_sys::FileList>| {
        if let Some(file) = files.and_then(|f| f.get(0)) {
            let text = Closure::once(move |v: JsValue| set(v.as_string().unwrap_or_default()));
            if let Ok(head) = file.slice_with_f64_and_f64(0.0, 1_048_576.0) {
                let _ = head.text().then(&text);
            }
            text.forget();
        }
    };
    view! {
        <div class="field config" class:invalid=move || error().is_some()>
            <span>{move || ctx.t(i18n::CONFIG)}</span>
            <textarea
                data-testid="config"
                rows="3"
                spellcheck="false"
                placeholder=move || ctx.t(i18n::CONFIG_HINT)
                prop:value=move || value.get()
                on:input=move |ev| set(event_target_value(&ev))
                on:dragover=|ev| ev.prevent_default()
                on:drop=move |ev| {
                    ev.prevent_default();
                    load(ev.data_transfer().and_then(|d| d.files()));
                }
            ></textarea>
            <input
                type="file"
                accept=".json,application/json"
                data-testid="config-file"
                on:change=move |ev| load(event_target::<web_sys::HtmlInputElement>(&ev).files())
            />
            {move || error().map(|m| view! { <small class="error" data-testid="error-config">{m}</small> })}
        </div>
    }
}

#[component]
fn JobInputs(ctx: Ctx) -> impl IntoView {
    let lang = ctx.lang;
    let models = Signal::derive(move || {
        let mut v = vec![(String::new(), i18n::CUSTOM_MODEL.get(lang.get()).to_string())];
        v.extend(gpuctl_core::preset_names().map(|n| (n.to_string(), n.to_string())));
        v
    });
    let methods = Signal::derive(move || {
        Method::ALL
            .iter()
            .map(|m| (m.as_str().to_string(), i18n::method_name(*m, lang.get()).to_string()))
            .collect()
    });
    let precisions = Signal::derive(move || {
        let mut v = vec![(String::new(), i18n::AUTO.get(lang.get()).to_string())];
        v.extend(Precision::ALL.iter().map(|p| (p.as_str().to_string(), p.as_str().to_ascii_uppercase())));
        v
    });
    let runtimes = Signal::derive(move || {
        let l = lang.get();
        gpuctl_core::Runtime::ALL
            .iter()
            .map(|r| {
                let name = match r {
                    gpuctl_core::Runtime::Serving => i18n::RUNTIME_SERVING,
                    gpuctl_core::Runtime::Transformers => i18n::RUNTIME_TRANSFORMERS,
                };
                (r.as_str().to_string(), name.get(l).to_string())
            })
            .collect()
    });
    // Inference's own settings appear only when the method is inference.
    let inference = Memo::new(move |_| ctx.inputs.with(|i| i.method == Method::Inference.as_str()));
    let gpu_counts = Signal::derive(move || {
        let mut v = vec![(String::new(), i18n::ANY.get(lang.get()).to_string())];
        v.extend([1, 2, 4, 8].map(|n| (n.to_string(), n.to_string())));
        v
    });
    // The GPUs some instance type carries, by name ("can a 16 GB T4 run 7B?").
    let gpu_kinds = Signal::derive(move || {
        let c = Catalog::shipped();
        let mut v = vec![(String::new(), i18n::ANY.get(lang.get()).to_string())];
        v.extend(
            c.gpus()
                .iter()
                .filter(|g| c.instance_types().iter().any(|i| i.gpu == g.id))
                .map(|g| (g.id.clone(), format!("{} {:.0} GB", g.name, g.vram_gb))),
        );
        v
    });
    // The parameter count of a preset or a config-made model (a config does not state it: core
    // computes it from the shape), so a pasted config shows what it was read as.
    let params_hint = Memo::new(move |_| {
        ctx.inputs
            .with(|i| match gpuctl_core::preset(&i.model) {
                Ok(m) => Some(m.params),
                Err(_) if i.model.is_empty() && i.params.trim().is_empty() => {
                    hf::read(&i.config).ok().map(|m| m.params)
                }
                Err(_) => None,
            })
            .map(format::count)
    });
    view! {
        <aside class="inputs">
            <h2>{move || ctx.t(i18n::JOB)}</h2>
            <Choice ctx key="model" testid="model" label=i18n::MODEL options=models also=|i| i.params.clear() />
            <Field ctx key="params" testid="params" label=i18n::PARAMS hint=i18n::PARAMS_HINT also=|i| i.model.clear() />
            {move || params_hint.get().map(|p| view! { <p class="muted small" data-testid="params-hint">{p} " " {ctx.t(i18n::PARAMS_UNIT)}</p> })}
            <ConfigInput ctx />
            <Choice ctx key="method" testid="method" label=i18n::METHOD options=methods />
            <Choice ctx key="precision" testid="precision" label=i18n::PRECISION options=precisions />
            <Field ctx key="seq" testid="seq" label=i18n::SEQ />
            <div class:hidden=move || !inference.get()>
                <Choice ctx key="runtime" testid="runtime" label=i18n::RUNTIME options=runtimes />
                <Field ctx key="out" testid="output-tokens" label=i18n::OUTPUT_TOKENS hint=i18n::OUTPUT_TOKENS_HINT />
            </div>
            <Field ctx key="tokens" testid="tokens" label=i18n::TOKENS hint=i18n::TOKENS_HINT />
            <Field ctx key="epochs" testid="epochs" label=i18n::EPOCHS />
            <h2>{move || ctx.t(i18n::USAGE)}</h2>
            <Choice ctx key="gpu" testid="gpu" label=i18n::GPU_FILTER options=gpu_kinds />
            <Choice ctx key="gpus" testid="gpus" label=i18n::GPUS options=gpu_counts />
            <Field ctx key="hpd" testid="hours-per-day" label=i18n::HOURS_PER_DAY />
            <Field ctx key="days" testid="days" label=i18n::DAYS hint=i18n::DAYS_HINT />
            <Field ctx key="deadline" testid="deadline" label=i18n::DEADLINE hint=i18n::OPTIONAL />
            <Field ctx key="budget" testid="budget" label=i18n::BUDGET hint=i18n::OPTIONAL />
            <fieldset class="providers" data-testid="providers">
                <legend>{move || ctx.t(i18n::PROVIDERS)}</legend>
                {Provider::ALL
                    .into_iter()
                    .map(|p| {
                        let code = p.as_str();
                        let checked = Memo::new(move |_| ctx.inputs.with(|i| i.providers.is_empty() || i.providers.iter().any(|x| x == code)));
                        view! {
                            <label class="check">
                                <input
                                    type="checkbox"
                                    data-testid=format!("provider-{code}")
                                    prop:checked=move || checked.get()
                                    on:change=move |ev| {
                                        let on = event_target_checked(&ev);
                                        ctx.inputs.update(|i| {
                                            // Empty means all: make the set explicit before changing it.
                                            let mut set: Vec<String> = if i.providers.is_empty() {
                                                Provider::ALL.iter().map(|p| p.as_str().to_string()).collect()
                                            } else {
                                                i.providers.clone()
                                            };
                                            set.retain(|x| x != code);
                                            if on {
                                                set.push(code.to_string());
                                            }
                                            set.sort_by_key(|x| Provider::ALL.iter().position(|p| p.as_str() == x));
                                            i.providers = if set.len() == Provider::ALL.len() { vec![] } else { set };
                                        });
                                    }
                                />
                                {move || i18n::provider_name(p, lang.get())}
                            </label>
                        }
                    })
                    .collect_view()}
                {move || {
                    ctx.errors
                        .with(|es| es.iter().find(|e| e.field == "providers").map(|e| e.text(ctx.lang.get()).to_string()))
                        .map(|m| view! { <small class="error">{m}</small> })
                }}
            </fieldset>
        </aside>
    }
}

fn export_context<'a>(
    ctx: &Ctx,
    provider: gpuctl_core::Provider,
    inputs: &'a Inputs,
    today: &'a str,
    pool: &'a str,
) -> spec::ExportContext<'a> {
    let q = ctx.eval.with_untracked(|e| e.question.as_ref().map(|q| (q.job.tokens, q.job.epochs)));
    let (tokens, epochs) = q.unwrap_or((0.0, 1.0));
    let model = if inputs.model.is_empty() { inputs.params.as_str() } else { inputs.model.as_str() };
    spec::ExportContext {
        model,
        method: &inputs.method,
        tokens,
        epochs,
        today,
        pool,
        by: "the gpuctl browser calculator",
        // A static page cannot see the user's files: the usual key, which `plan` checks exists.
        public_key: Some(gpuctl_core::export::usual_public_key(provider)),
        ssh_from: &[],
        file: None,
        source: "gpuctl-web",
    }
}

/// The exported spec text for an offer.
fn spec_text(ctx: &Ctx, offer: &Offer, pool: &str) -> String {
    let today = ctx.today.to_string();
    ctx.inputs.with_untracked(|i| {
        spec::export(Catalog::shipped(), offer, &export_context(ctx, offer.provider, i, &today, pool))
    })
}

/// Saves `text` as a file through a temporary object URL.
fn download(name: &str, text: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type("application/toml");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let doc = window().document().ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc.create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    // Revoke later: revoking right after click can cancel the download in some browsers.
    set_timeout(move || drop(web_sys::Url::revoke_object_url(&url)), std::time::Duration::from_secs(5));
    Ok(())
}

fn export_offer(ctx: &Ctx, offer: &Offer, pool: &str) {
    let text = spec_text(ctx, offer, pool);
    let name = format!(
        "{}.toml",
        ctx.inputs.with_untracked(|i| {
            let model = if i.model.is_empty() { i.params.clone() } else { i.model.clone() };
            spec::deployment_name(&model, &i.method)
        })
    );
    if let Err(e) = download(&name, &text) {
        web_sys::console::error_2(&"gpuctl: the spec could not be downloaded".into(), &e);
    }
}

#[component]
fn OffersView(ctx: Ctx) -> impl IntoView {
    let lang = ctx.lang;
    let picked = Memo::new(move |_| {
        let pick = ctx.inputs.with(|i| i.pick.clone());
        ctx.eval.with(|e| e.picked(&pick).cloned())
    });
    // Most of what follows depends on which row is chosen, not on its numbers: a memo of the key
    // alone stops every edit from rebuilding it.
    let picked_key = Memo::new(move |_| picked.with(|p| p.as_ref().map(|r| r.key.clone())));
    let show_all = RwSignal::new(false);
    // Rows in the table: the first SHOWN_ROWS (and down to the chosen one), or all of them.
    let shown = Memo::new(move |_| {
        let all = show_all.get();
        ctx.eval.with(|e| {
            let at = picked_key.with(|k| k.as_ref().and_then(|k| e.rows.iter().position(|r| &r.key == k)));
            if all {
                e.rows.len()
            } else {
                e.rows.len().min(SHOWN_ROWS.max(at.map_or(0, |i| i + 1)))
            }
        })
    });
    let summary = Memo::new(move |_| ctx.eval.with(|e| (e.errors.is_empty(), e.rows.len())));
    let warnings = Memo::new(move |_| ctx.eval.with(|e| e.warnings.clone()));
    let infeasible_count = Memo::new(move |_| ctx.eval.with(|e| e.infeasible.len()));
    let infeasible_open = RwSignal::new(false);
    let preview_open = RwSignal::new(false);
    view! {
        <div class="summary">
            {move || {
                let (valid, n) = summary.get();
                if !valid {
                    view! { <p class="error">{ctx.t(i18n::FIX_INPUTS)}</p> }.into_any()
                } else if n == 0 {
                    view! { <p class="warn">{ctx.t(i18n::NO_OFFERS)}</p> }.into_any()
                } else {
                    view! {
                        <p>
                            <strong data-testid="offer-count">{n}</strong>
                            " "
                            {ctx.t(i18n::OFFERS_FOUND)}
                            " · "
                            <span class="muted">{ctx.t(i18n::CHOOSE_HINT)}</span>
                        </p>
                    }
                        .into_any()
                }
            }}
            <ul class="warnings">
                {move || {
                    let l = lang.get();
                    warnings.with(|ws| ws.iter().map(|w| view! { <li>{i18n::warning(w, l)}</li> }).collect_view())
                }}
            </ul>
        </div>
        <div class="charts">
            <CostTimeChart ctx picked_key />
            <ModesChart ctx picked />
        </div>
        {move || {
            picked_key
                .get()
                .map(|key| {
                    // The line's numbers follow every edit; the box around it only a new choice.
                    let line = move || {
                        let l = lang.get();
                        picked.with(|r| {
                            r.as_ref().map(|r| {
                                let o = &r.best;
                                // A cluster's nodes are named, since its cost is the whole cluster's.
                                format!(
                                    "{} {} · {} · {} · {} · {}",
                                    i18n::provider_name(o.provider, l),
                                    o.instance,
                                    format::gpus(l, o),
                                    o.region,
                                    i18n::mode_name(o.mode, l),
                                    format::cny(l, o.cost_high),
                                )
                            })
                        })
                    };
                    let export = move |_| {
                        if let Some(r) = picked.get_untracked() {
                            export_offer(&ctx, &r.best, "train");
                        }
                    };
                    view! {
                        <div class="chosen" data-testid="chosen" data-key=key>
                            <span>
                                <strong>{move || ctx.t(i18n::CHOSEN)} ": "</strong>
                                {line}
                            </span>
                            <button data-testid="export-spec" on:click=export>
                                {move || ctx.t(i18n::EXPORT)}
                            </button>
                            <span class="muted small">{move || ctx.t(i18n::EXPORT_HINT)}</span>
                            <details on:toggle=move |ev| preview_open.set(details_open(&ev))>
                                <summary>{move || ctx.t(i18n::PREVIEW)}</summary>
                                // Written only while open: the export is not free, and typing
                                // would redo it on every key.
                                <pre data-testid="spec-preview">
                                    {move || {
                                        preview_open
                                            .get()
                                            .then(|| picked.with(|r| r.as_ref().map(|r| spec_text(&ctx, &r.best, "train"))))
                                            .flatten()
                                    }}
                                </pre>
                            </details>
                        </div>
                    }
                })
        }}
        <div class="table-wrap">
            <table data-testid="offers" class="offers">
                <thead>
                    <tr>
                        <th>{move || ctx.t(i18n::RANK)}</th>
                        <th>{move || ctx.t(i18n::OFFER)}</th>
                        <th>{move || ctx.t(i18n::GPU_COL)}</th>
                        <th>{move || ctx.t(i18n::FIT)}</th>
                        <th>{move || ctx.t(i18n::TIME)}</th>
                        {BillingMode::ALL
                            .into_iter()
                            .map(|m| view! { <th class="num">{move || i18n::mode_name(m, lang.get())}</th> })
                            .collect_view()}
                        <th class="num">{move || ctx.t(i18n::PER_1M)}</th>
                        <th>{move || ctx.t(i18n::PRICE)}</th>
                        <th>{move || ctx.t(i18n::WARNINGS)}</th>
                    </tr>
                </thead>
                <tbody
                    inner_html=move || {
                        let n = shown.get();
                        let l = lang.get();
                        picked_key.with(|k| ctx.eval.with(|e| html::offer_rows(&e.rows[..n], l, k.as_deref())))
                    }
                    on:click=move |ev| pick_from_event(ctx, &ev)
                ></tbody>
            </table>
            <ol
                class="row-notes warn small"
                data-testid="row-notes"
                inner_html=move || {
                    let n = shown.get();
                    let l = lang.get();
                    ctx.eval.with(|e| html::row_notes_list(&e.rows[..n], l))
                }
            ></ol>
            {move || {
                let (n, total) = (shown.get(), summary.get().1);
                (total > SHOWN_ROWS)
                    .then(|| {
                        let label = if show_all.get() {
                            ctx.t(i18n::SHOW_FEWER).to_string()
                        } else {
                            format!("{} {n} / {total} · {}", ctx.t(i18n::SHOWING), ctx.t(i18n::SHOW_ALL))
                        };
                        view! {
                            <button class="show-all" data-testid="show-all" on:click=move |_| show_all.update(|a| *a = !*a)>
                                {label}
                            </button>
                        }
                    })
            }}
        </div>
        <details class="infeasible" data-testid="infeasible" on:toggle=move |ev| infeasible_open.set(details_open(&ev))>
            <summary>
                {move || ctx.t(i18n::DOES_NOT_FIT)} " (" {move || infeasible_count.get()} ")"
            </summary>
            <ul>
                // Listed only while open: closed, typing need not rebuild a long list nobody sees.
                {move || {
                    if !infeasible_open.get() {
                        return None;
                    }
                    let l = lang.get();
                    Some(ctx.eval.with(|e| {
                        e.infeasible
                            .iter()
                            .map(|x| {
                                let mode = x.mode.map(|m| format!(" ({})", i18n::mode_name(m, l))).unwrap_or_default();
                                view! {
                                    <li>
                                        <strong>{format!("{} {}{mode}", i18n::provider_name(x.provider, l), x.instance)}</strong>
                                        ": "
                                        {x.reason_codes.iter().map(|r| i18n::reason(r, l)).collect::<Vec<_>>().join(if l == Lang::Zh { "；" } else { "; " })}
                                    </li>
                                }
                            })
                            .collect_view()
                    }))
                }}
            </ul>
        </details>
    }
}

/// Whether the `<details>` a toggle event came from is now open.
fn details_open(ev: &web_sys::Event) -> bool {
    ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()).is_some_and(|el| el.has_attribute("open"))
}

/// Rows and dots are set as HTML (see `html`), so one listener on their container picks the offer
/// whose element carries the clicked `data-key`.
fn pick_from_event(ctx: Ctx, ev: &web_sys::MouseEvent) {
    let key = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|el| el.closest("[data-key]").ok().flatten())
        .and_then(|el| el.get_attribute("data-key"));
    if let Some(key) = key {
        ctx.inputs.update(|i| i.pick = key);
    }
}

// ---- charts -------------------------------------------------------------------------------------

#[component]
fn CostTimeChart(ctx: Ctx, picked_key: Memo<Option<String>>) -> impl IntoView {
    let svg = move || {
        let l = ctx.lang.get();
        picked_key.with(|k| ctx.eval.with(|e| html::cost_time_svg(&e.rows, l, k.as_deref())))
    };
    view! {
        <figure class="chart" data-testid="chart-cost-time">
            <figcaption>{move || ctx.t(i18n::CHART_COST_TIME)}</figcaption>
            <svg viewBox=format!("0 0 {W} {H}") role="img" inner_html=svg on:click=move |ev| pick_from_event(ctx, &ev)></svg>
            <div class="legend">
                {Provider::ALL
                    .into_iter()
                    .map(|p| view! { <span class=format!("key {}", provider_class(p))>{move || i18n::provider_name(p, ctx.lang.get())}</span> })
                    .collect_view()}
            </div>
        </figure>
    }
}

fn mode_class(m: BillingMode) -> String {
    format!("m-{}", m.as_str())
}

/// What the billing-modes chart's lines depend on: the chosen instance and region, hours per day and
/// the days shown (which follow the job's length in steps). Typing tokens mostly moves the marker only.
#[derive(Clone, PartialEq)]
struct ModesFrame {
    key: String,
    hpd: f64,
    max_days: u32,
    lang: Lang,
}

#[component]
fn ModesChart(ctx: Ctx, picked: Memo<Option<calc::Row>>) -> impl IntoView {
    let frame = Memo::new(move |_| {
        let hpd = ctx.eval.with(|e| e.question.as_ref().map(|q| q.usage.hours_per_day)).unwrap_or(24.0);
        let lang = ctx.lang.get();
        picked.with(|p| {
            p.as_ref().map(|row| ModesFrame {
                key: row.key.clone(),
                hpd,
                max_days: ((row.best.calendar_days * 2.0).ceil() as u32).clamp(30, 400),
                lang,
            })
        })
    });
    let x_of = |f: &ModesFrame| Scale::linear((0.0, f.max_days as f64), (ML, W - MR));
    // (lines as SVG text, modes in the legend), redrawn only when the frame changes.
    let lines = Memo::new(move |_| {
        frame.with(|f| {
            let f = f.as_ref()?;
            let series = picked.with_untracked(|p| {
                p.as_ref().map(|row| calc::modes_over_days(Catalog::shipped(), row, f.hpd, f.max_days))
            })?;
            let ys = series.iter().flat_map(|(_, pts)| pts.iter().map(|p| p.1));
            let (y0, y1) = ys.fold((f64::INFINITY, 0f64), |(a, b), v| (a.min(v), b.max(v)));
            let y = Scale::log((y0.max(0.01) * 0.8, y1 * 1.25), (H - MB, MT));
            let modes: Vec<BillingMode> = series.iter().map(|(m, _)| *m).collect();
            Some((html::modes_svg(&series, x_of(f), y, f.lang), modes))
        })
    });
    let job_x = move || {
        let days = picked.with(|p| p.as_ref().map(|r| r.best.calendar_days))?;
        frame.with(|f| f.as_ref().map(|f| x_of(f).map(days.min(f.max_days as f64))))
    };
    view! {
        <figure class="chart" data-testid="chart-modes">
            <figcaption>{move || ctx.t(i18n::CHART_MODES)}</figcaption>
            {move || {
                frame
                    .with(|f| f.as_ref().map(|f| (f.lang, f.hpd)))
                    .map(|(l, hpd)| {
                        let sub = picked.with_untracked(|p| {
                            p.as_ref()
                                .map(|r| format!("{} {} · {} {hpd} {}", i18n::CHART_MODES_FOR.get(l), r.best.instance, r.best.region, i18n::HOURS_A_DAY.get(l)))
                        });
                        let legend = lines.with(|s| {
                            s.as_ref().map(|(_, modes)| {
                                modes.iter().map(|m| view! { <span class=format!("key {}", mode_class(*m))>{i18n::mode_name(*m, l)}</span> }).collect_view()
                            })
                        });
                        view! {
                            <svg viewBox=format!("0 0 {W} {H}") role="img">
                                <g inner_html=move || lines.with(|s| s.as_ref().map(|(svg, _)| svg.clone()).unwrap_or_default())></g>
                                <line class="marker" x1=job_x y1=MT x2=job_x y2=H - MB />
                                <text class="marker-label" x=move || job_x().map(|x| x + 4.0) y=MT + 12.0>{i18n::THIS_JOB.get(l)}</text>
                            </svg>
                            <div class="legend">{legend}</div>
                            <p class="muted small">{sub}</p>
                        }
                    })
            }}
        </figure>
    }
}

// ---- staged plan ----------------------------------------------------------------------------------

#[component]
fn PlanView(ctx: Ctx) -> impl IntoView {
    let plan = Memo::new(move |_| ctx.eval.with(|e| calc::evaluate_stages(Catalog::shipped(), e)));
    move || {
        let l = ctx.lang.get();
        let Some(plan) = plan.get() else {
            return view! { <p class="error">{ctx.t(i18n::FIX_INPUTS)}</p> }.into_any();
        };
        let cards = plan
            .stages
            .iter()
            .map(|s| {
                let (title, why) = match s.name.as_str() {
                    "validate" => (i18n::STAGE_VALIDATE, i18n::STAGE_VALIDATE_WHY),
                    "tune" => (i18n::STAGE_TUNE, i18n::STAGE_TUNE_WHY),
                    _ => (i18n::STAGE_PRODUCE, i18n::STAGE_PRODUCE_WHY),
                };
                let name = s.name.clone();
                let body = match &s.offer {
                    Some(o) => {
                        let o2 = o.clone();
                        let pool = name.clone();
                        view! {
                            <p class="offer">
                                <strong>{format!("{} {}", i18n::provider_name(o.provider, l), o.instance)}</strong>
                                <br />
                                {format!("{} · {} · {}", format::gpus(l, o), o.region, i18n::mode_name(o.mode, l))}
                            </p>
                            <p class="cost">{format!("{} – {}", format::cny(l, o.cost_low), format::cny(l, o.cost_high))}</p>
                            <p class="muted small">{format::hours_range(l, o.hours_low, o.hours_high)}</p>
                            <button data-testid=format!("export-stage-{name}") on:click=move |_| export_offer(&ctx, &o2, &pool)>
                                {i18n::EXPORT.get(l)}
                            </button>
                            {(!s.alternatives.is_empty())
                                .then(|| {
                                    view! {
                                        <p class="small">{i18n::ALTERNATIVES.get(l)} ":"</p>
                                        <ul class="small">
                                            {s.alternatives
                                                .iter()
                                                .map(|a| {
                                                    view! {
                                                        <li>
                                                            {format!(
                                                                "{} {} · {} · {}",
                                                                i18n::provider_name(a.provider, l),
                                                                a.instance,
                                                                i18n::mode_name(a.mode, l),
                                                                format::cny(l, a.cost_high),
                                                            )}
                                                        </li>
                                                    }
                                                })
                                                .collect_view()}
                                        </ul>
                                    }
                                })}
                        }
                            .into_any()
                    }
                    None => view! { <p class="warn">{i18n::STAGE_NONE.get(l)}</p> }.into_any(),
                };
                view! {
                    <article class="stage" data-testid=format!("stage-{}", s.name)>
                        <h3>{title.get(l)}</h3>
                        <p class="muted small">{why.get(l)}</p>
                        {body}
                    </article>
                }
            })
            .collect_view();
        view! {
            <div class="stages">{cards}</div>
            <p class="total">
                {i18n::PLAN_TOTAL.get(l)} ": " <strong>{format::cny(l, plan.total_cost_high)}</strong>
            </p>
            <ul class="small muted">{plan.assumption_codes.iter().map(|a| view! { <li>{i18n::assumption(a, l)}</li> }).collect_view()}</ul>
        }
            .into_any()
    }
}

// ---- TCO --------------------------------------------------------------------------------------------

#[component]
fn TcoView(ctx: Ctx) -> impl IntoView {
    let lang = ctx.lang;
    // GPUs with at least one cloud price: the only ones a comparison makes sense for.
    let gpus = Signal::derive(move || {
        let c = Catalog::shipped();
        c.gpus()
            .iter()
            .filter(|g| {
                c.instance_types().iter().any(|i| i.gpu == g.id && !c.prices_of(i.provider, &i.id).is_empty())
            })
            .map(|g| (g.id.clone(), g.name.clone()))
            .collect()
    });
    view! {
        <div class="tco">
            <div class="tco-inputs">
                <h2>{move || ctx.t(i18n::TCO_CLUSTER)}</h2>
                <Choice ctx key="tco_gpu" testid="tco-gpu" label=i18n::TCO_GPU options=gpus />
                <Field ctx key="tco_gpus" testid="tco-gpus" label=i18n::TCO_GPUS />
                <Field ctx key="tco_card" testid="tco-card" label=i18n::TCO_CARD />
                <Field ctx key="tco_server" testid="tco-server" label=i18n::TCO_SERVER />
                <Field ctx key="tco_network" testid="tco-network" label=i18n::TCO_NETWORK />
                <Field ctx key="tco_years" testid="tco-years" label=i18n::TCO_YEARS />
                <Field ctx key="tco_kw" testid="tco-kw" label=i18n::TCO_KW />
                <Field ctx key="tco_pue" testid="tco-pue" label=i18n::TCO_PUE />
                <Field ctx key="tco_kwh" testid="tco-kwh" label=i18n::TCO_KWH />
                <Field ctx key="tco_ops" testid="tco-ops" label=i18n::TCO_OPS />
                <Field ctx key="tco_util" testid="tco-util" label=i18n::TCO_UTIL />
            </div>
            <div class="tco-result">
                {move || {
                    let l = lang.get();
                    ctx.tco
                        .get()
                        .ok()
                        .map(|r| {
                            let sb = &r.self_built;
                            let verdict = if r.self_built_cheaper { i18n::TCO_VERDICT_SELF } else { i18n::TCO_VERDICT_CLOUD };
                            let be = match r.break_even_utilization_vs_hourly {
                                Some(u) => format!("{} {:.0} %", i18n::TCO_BREAK_EVEN.get(l), u * 100.0),
                                None => i18n::TCO_NEVER.get(l).to_string(),
                            };
                            view! {
                                <p class="verdict" data-testid="tco-verdict">{verdict.get(l)}</p>
                                <p data-testid="tco-break-even"><strong>{be}</strong></p>
                                <p>
                                    {i18n::TCO_SELF_YEAR.get(l)} ": " <strong>{format::cny(l, sb.total_per_year)}</strong>
                                    {format!(
                                        " = {} {} + {} {} + {} {} · {} {}",
                                        i18n::TCO_DEPRECIATION.get(l),
                                        format::cny(l, sb.depreciation_per_year),
                                        i18n::TCO_POWER.get(l),
                                        format::cny(l, sb.power_per_year),
                                        i18n::TCO_OPS_SHORT.get(l),
                                        format::cny(l, sb.ops_per_year),
                                        format::cny_per_hour(l, sb.cny_per_gpu_hour_used),
                                        i18n::TCO_PER_GPU_HOUR.get(l),
                                    )}
                                </p>
                                <h3>{i18n::TCO_CLOUD.get(l)}</h3>
                                <ul>
                                    {r.cloud
                                        .iter()
                                        .map(|c| {
                                            view! {
                                                <li title=format!(
                                                    "{} · {} {} · {} {}",
                                                    c.price.source,
                                                    i18n::AS_OF.get(l),
                                                    c.price.as_of,
                                                    i18n::CONFIDENCE.get(l),
                                                    c.price.confidence.as_str()
                                                )>
                                                    {format!(
                                                        "{}: {}{} · {} {} {} ({})",
                                                        i18n::mode_name(c.mode, l),
                                                        format::cny(l, c.total_per_year),
                                                        i18n::PER_YEAR.get(l),
                                                        format::cny_per_hour(l, c.cny_per_gpu_hour),
                                                        i18n::provider_name(c.price.provider, l),
                                                        c.price.instance,
                                                        c.price.region,
                                                    )}
                                                </li>
                                            }
                                        })
                                        .collect_view()}
                                </ul>
                                <TcoChart ctx report=r.clone() />
                                <details>
                                    <summary>{i18n::ASSUMPTIONS.get(l)}</summary>
                                    <ul class="small">
                                        {r.warning_codes.iter().map(|w| view! { <li class="warn">{i18n::warning(w, l)}</li> }).collect_view()}
                                        {r.assumption_codes.iter().map(|a| view! { <li>{i18n::assumption(a, l)}</li> }).collect_view()}
                                    </ul>
                                </details>
                            }
                        })
                }}
            </div>
        </div>
    }
}

#[component]
fn TcoChart(ctx: Ctx, report: gpuctl_core::TcoReport) -> impl IntoView {
    let l = ctx.lang.get_untracked();
    let c = &report.curve;
    let ymax = c
        .iter()
        .map(|p| {
            p.self_built_per_year.max(if p.cloud_best_per_year.is_finite() {
                p.cloud_best_per_year
            } else {
                0.0
            })
        })
        .fold(0.0, f64::max);
    let x = Scale::linear((0.0, 1.0), (ML, W - MR));
    let y = Scale::linear((0.0, ymax * 1.1), (H - MB, MT));
    let own = chart::polyline(
        &c.iter().map(|p| (x.map(p.utilization), y.map(p.self_built_per_year))).collect::<Vec<_>>(),
    );
    let cloud = chart::polyline(
        &c.iter()
            .filter(|p| p.cloud_best_per_year.is_finite())
            .map(|p| (x.map(p.utilization), y.map(p.cloud_best_per_year)))
            .collect::<Vec<_>>(),
    );
    let ux = x.map(report.input.utilization);
    let be = report.break_even_utilization_vs_hourly.map(|u| {
        let bx = x.map(u);
        view! { <line class="marker be" x1=bx y1=MT x2=bx y2=H - MB /> }
    });
    view! {
        <figure class="chart" data-testid="chart-tco">
            <figcaption>{i18n::TCO_CHART.get(l)}</figcaption>
            <svg viewBox=format!("0 0 {W} {H}") role="img">
                <g inner_html=html::axes(x, y, i18n::AXIS_UTIL.get(l), i18n::AXIS_PER_YEAR.get(l), |v| format!("{:.0}%", v * 100.0))></g>
                <path class="series self" d=own />
                <path class="series cloud" d=cloud />
                {be}
                <line class="marker" x1=ux y1=MT x2=ux y2=H - MB />
            </svg>
            <div class="legend">
                <span class="key self">{i18n::SELF_BUILT.get(l)}</span>
                <span class="key cloud">{i18n::CLOUD_BEST.get(l)}</span>
            </div>
        </figure>
    }
}
