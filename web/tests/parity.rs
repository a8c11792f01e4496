//! Native-vs-WASM parity: the engine must give the browser exactly the numbers it gives the CLI.
//!
//! The same scenarios run natively (`cargo test -p gpuctl-web --test parity`, which writes its report
//! to target/tmp) and then as WebAssembly under node (`wasm-bindgen-test-runner`, see
//! scripts/test.d/60-web.sh), which compiles the native report in and compares byte for byte. The
//! report holds a SHA-256 of the engine's full answers (every offer's fit, time, price and cost, every
//! infeasible reason) and the top offers' figures; f64s print as their shortest round-trip form, so
//! equal text means bit-identical numbers. Comparing against this tree's native run, rather than a
//! committed snapshot, keeps the test about parity: engine and catalog changes need no re-blessing.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use sha2::{Digest, Sha256};

use gpuctl_core::{parse_date, preset, rank, Catalog, Job, Method, ModelShape, Provider, Question, Usage};

fn scenarios() -> serde_json::Value {
    let today = parse_date("2026-11-30").unwrap();
    let q = |model: ModelShape, method: Method, tokens: f64, epochs: f64, f: &dyn Fn(&mut Question)| {
        let mut job = Job::new(model, method);
        job.tokens = tokens;
        job.epochs = epochs;
        let mut q = Question::new(job, today);
        f(&mut q);
        q
    };
    let cases: Vec<(&str, Question)> = vec![
        ("qwen2.5-7b qlora4 50M x3", q(preset("qwen2.5-7b").unwrap(), Method::Qlora4, 50e6, 3.0, &|_| {})),
        (
            "13B (inferred shape) lora, 2 h/day for 10 days, budget 20k",
            q(ModelShape::from_params(13e9), Method::Lora, 200e6, 1.0, &|q| {
                q.usage = Usage::daily(2.0, 10.0);
                q.budget_cny = Some(20_000.0);
            }),
        ),
        (
            "qwen2.5-7b full 1B tokens, deadline 7 days",
            q(preset("qwen2.5-7b").unwrap(), Method::Full, 1e9, 1.0, &|q| {
                q.deadline_hours = Some(7.0 * 24.0)
            }),
        ),
        (
            "qwen2.5-7b inference 24 h/day for 30 days",
            q(preset("qwen2.5-7b").unwrap(), Method::Inference, 0.0, 1.0, &|q| {
                q.usage = Usage::daily(24.0, 30.0)
            }),
        ),
        (
            "bert-base full 100M x2 on Alibaba only",
            q(preset("bert-base").unwrap(), Method::Full, 100e6, 2.0, &|q| {
                q.providers = vec![Provider::Alibaba]
            }),
        ),
    ];
    let catalog = Catalog::shipped();
    serde_json::Value::Array(
        cases
            .into_iter()
            .map(|(name, q)| {
                let r = rank(catalog, &q);
                // The full answer is long (every offer carries its price row and assumptions): the
                // fixture keeps its digest, plus the top offers' figures, so a diff shows what moved.
                let full = serde_json::to_string(&r).unwrap();
                let offers: Vec<serde_json::Value> = r
                    .offers
                    .iter()
                    .take(25)
                    .map(|o| {
                        serde_json::json!([
                            format!("{}/{}/{}/{}", o.provider, o.instance, o.region, o.mode),
                            o.fit.need_gb,
                            o.time.hours_low,
                            o.time.hours_high,
                            o.cost_low,
                            o.cost_high,
                            o.cny_per_1m_tokens_high
                        ])
                    })
                    .collect();
                serde_json::json!({
                    "scenario": name,
                    "sha256": hex::encode(Sha256::digest(full.as_bytes())),
                    "offers": offers,
                    "offers_total": r.offers.len(),
                    "infeasible": r.infeasible.len(),
                })
            })
            .collect(),
    )
}

/// The engine's answers as text: one offer per line, so a difference points at the offer that moved.
fn report() -> String {
    let mut out = String::from("[\n");
    for (i, sc) in scenarios().as_array().unwrap().iter().enumerate() {
        let head = serde_json::json!({
            "scenario": sc["scenario"], "sha256": sc["sha256"],
            "offers_total": sc["offers_total"], "infeasible": sc["infeasible"],
        });
        out += &format!("{}{{\"head\": {head},\n \"offers\": [\n", if i > 0 { ",\n" } else { "" });
        let offers: Vec<String> = sc["offers"].as_array().unwrap().iter().map(|o| format!("  {o}")).collect();
        out += &offers.join(",\n");
        out += "\n]}";
    }
    out + "\n]\n"
}

/// Native side: writes the reference the WASM side compiles in. Also a sanity check that the
/// scenarios exercise the engine (offers found, some refused), so parity is not over empty lists.
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn native_reference() {
    let text = report();
    let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
    for sc in parsed.as_array().unwrap() {
        assert!(sc["head"]["offers_total"].as_u64().unwrap() > 0, "{}", sc["head"]);
    }
    assert!(parsed.as_array().unwrap().iter().any(|sc| sc["head"]["infeasible"].as_u64().unwrap() > 0));
    assert_eq!(text, report(), "the engine is deterministic");
    std::fs::write(concat!(env!("CARGO_TARGET_TMPDIR"), "/gpuctl-web-parity.json"), &text).unwrap();
}

/// WASM side: the same report, byte for byte. The native report is compiled in from the path in
/// GPUCTL_PARITY_REFERENCE (the native side's target/tmp/gpuctl-web-parity.json; a wasm32 build has
/// its own tmp dir, so the path is passed in); scripts/test.d/60-web.sh runs the two in order.
#[cfg(target_arch = "wasm32")]
#[test]
fn wasm_matches_native() {
    const NATIVE: &str = include_str!(env!(
        "GPUCTL_PARITY_REFERENCE",
        "set GPUCTL_PARITY_REFERENCE to the report `cargo test -p gpuctl-web --test parity` writes natively"
    ));
    let got = report();
    if got != NATIVE {
        let line = got.lines().zip(NATIVE.lines()).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "engine output differs between WASM and native at line {}:\n  wasm:   {}\n  native: {}",
            line + 1,
            got.lines().nth(line).unwrap_or("<end>"),
            NATIVE.lines().nth(line).unwrap_or("<end>")
        );
    }
}
