//! The engine held against published measurements (issue 16): every row of
//! `data/validation.toml` — peak memory per GPU and tokens/s of real fine-tuning and inference runs,
//! each with its source — next to the engine's figure for the same settings.
//!
//! `cargo test -p gpuctl-core --test validation -- --nocapture` prints the whole table; the test
//! fails when the share of rows within bounds drops below the figures README.md's estimate section
//! states ([`MEMORY_SHARE_FLOOR`], [`THROUGHPUT_SHARE_FLOOR`]), so accuracy can only get better.

use gpuctl_core::catalog::Catalog;
use gpuctl_core::fit::{fit, Hardware, Job, Method, Precision, CONTEXT_GB};
use gpuctl_core::model::{preset, ModelShape};
use gpuctl_core::time::estimate_time;
use serde::Deserialize;

/// Memory rows whose engine figure is within ±20 % of the measurement: at least this share.
/// README.md's "Measured accuracy" paragraph states the same figure. 230 of 286 since prefill counts
/// one layer's MLP over the whole prompt and the prompt/output split (`Job::output_tokens`), 213
/// before.
const MEMORY_SHARE_FLOOR: f64 = 0.80;
/// The same share over the training rows alone (full, LoRA, QLoRA): the inference rows are many and
/// easy (weights + KV cache), so the overall share alone would flatter the fine-tuning figures users
/// choose a card by. README.md states this figure too.
const TRAINING_MEMORY_SHARE_FLOOR: f64 = 0.59;
/// Throughput rows whose measurement lies inside the engine's tokens/s band: at least this share.
/// 76 of 83: 16-bit inference rows 24 of 25, quantized-weight inference rows 49 of 51 since decode
/// reads the 16-bit output head and quantized kernels pay their own time per layer (20 of 51
/// before), training rows 3 of 7 (torchtune's compiled runs beat the MFU bands); README.md states
/// the same figure.
const THROUGHPUT_SHARE_FLOOR: f64 = 0.91;
/// The distance is held too: the mean of |ln(measured ÷ the band's middle)| over the throughput rows
/// is 0.27 today (0.42 before the quantized-kernel and expert-loop terms, 1.40 before the per-layer
/// decode time); an engine change that moves the estimates further from the measurements fails here.
const THROUGHPUT_LOG_DISTANCE_CEILING: f64 = 0.28;
/// "Within bounds" for memory: the engine's need / measured peak within 1 ± this.
const MEMORY_TOLERANCE: f64 = 0.20;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    row: Vec<Row>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    source: String,
    #[serde(rename = "where")]
    location: String,
    read: String,
    model: Option<String>,
    shape: Option<ModelShape>,
    method: String,
    precision: String,
    quant: String,
    seq_len: u32,
    micro_batch: u32,
    grad_checkpointing: String,
    attention: String,
    lora_rank: Option<u32>,
    /// DeepSpeed ZeRO stage where the source's run states it (else the engine picks the lowest that fits).
    zero_stage: Option<u8>,
    gpu: Option<String>,
    gpu_name: Option<String>,
    vram_gb: Option<f64>,
    gpus: u32,
    memory: Option<f64>,
    memory_unit: Option<String>,
    memory_basis: Option<String>,
    tokens_per_s: Option<f64>,
    /// What ran an inference row's decode loop ("transformers", "sglang", …: `Runtime::parse`).
    runtime: Option<String>,
    /// Inference rows: tokens generated after the prompt, where the source states it (the last
    /// part of `seq_len`).
    generated: Option<u32>,
    note: Option<String>,
}

/// Bytes in one unit as the sources print them. "GB"/"G"/"MB" are read as powers of ten (the
/// sources do not say which base they use; the difference is 5–7 %, noted in the table's header).
fn unit_bytes(unit: &str) -> Result<f64, String> {
    Ok(match unit {
        "GiB" => 1024f64.powi(3),
        "GB" => 1e9,
        "MiB" => 1024f64.powi(2),
        "MB" => 1e6,
        other => return Err(format!("unknown memory unit {other:?}")),
    })
}

fn method(name: &str) -> Result<Method, String> {
    Method::ALL.into_iter().find(|m| m.as_str() == name).ok_or_else(|| format!("unknown method {name:?}"))
}

/// Yes/no/unknown settings: `None` when the source does not state it (the engine default is used).
/// Attention: "flash-attn-2", and the fused kernels a model's own code calls instead ("sdpa":
/// torch's scaled_dot_product_attention, "xformers": memory_efficient_attention), keep no s×s score
/// tensor — what the engine's `flash_attention` means; "eager" materialises it.
fn tri(v: &str, field: &str) -> Result<Option<bool>, String> {
    match v {
        "on" | "flash-attn-2" | "sdpa" | "xformers" => Ok(Some(true)),
        "off" | "eager" => Ok(Some(false)),
        "unknown" => Ok(None),
        other => Err(format!("{field}: {other:?} is not on/off/unknown")),
    }
}

fn load() -> Vec<Row> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/validation.toml");
    let text = std::fs::read_to_string(path).expect("data/validation.toml is readable");
    let table: Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    table.row
}

struct Outcome {
    line: String,
    /// A fine-tuning row (not inference).
    training: bool,
    /// An inference row of a quantized (GPTQ/AWQ) checkpoint.
    quantized: bool,
    memory_ok: Option<bool>,
    memory_ratio: Option<f64>,
    throughput_ok: Option<bool>,
    /// Measured tokens/s ÷ the middle of the engine's band.
    throughput_ratio: Option<f64>,
}

fn evaluate(r: &Row, catalog: &Catalog) -> Result<Outcome, String> {
    let shape = match (&r.model, &r.shape) {
        (Some(name), None) => preset(name).map_err(|e| e.to_string())?,
        (None, Some(shape)) => shape.clone(),
        _ => return Err("give exactly one of `model` or `shape`".into()),
    };
    let method = method(&r.method)?;
    let gpu = match &r.gpu {
        Some(id) => Some(catalog.gpu(id).ok_or_else(|| format!("gpu {id:?} is not in the catalog"))?),
        None => None,
    };
    let vram_gb = match (gpu, r.vram_gb) {
        (Some(g), None) => g.vram_gb,
        (None, Some(v)) => v,
        _ => return Err("give exactly one of `gpu` or `gpu_name` + `vram_gb`".into()),
    };
    if gpu.is_none() && r.gpu_name.is_none() {
        return Err("a card outside the catalog needs `gpu_name`".into());
    }
    let mut job = Job::new(shape, method);
    if let Some(rt) = &r.runtime {
        job.runtime = gpuctl_core::Runtime::parse(rt).map_err(|e| e.to_string())?;
    }
    if method == Method::Inference {
        // A quantized checkpoint's weight precision (training rows carry theirs in the method).
        job.precision = match r.quant.as_str() {
            "none" => None,
            "gptq-int8" => Some(Precision::Int8),
            "gptq-int4" | "awq-int4" => Some(Precision::Int4),
            other => {
                return Err(format!("inference quant {other:?} is not none/gptq-int8/gptq-int4/awq-int4"))
            }
        };
    }
    job.seq_len = r.seq_len;
    if let Some(g) = r.generated {
        if method != Method::Inference || g > r.seq_len {
            return Err(format!("generated = {g} needs an inference row with seq_len ≥ it"));
        }
        job.output_tokens = g;
    }
    job.micro_batch = r.micro_batch;
    let mut defaults = Vec::new();
    match tri(&r.grad_checkpointing, "grad_checkpointing")? {
        Some(on) => job.grad_checkpointing = on,
        None => defaults.push("ckpt"),
    }
    if let Some(rank) = r.lora_rank {
        job.lora_rank = rank;
    }
    job.zero_stage = r.zero_stage;
    let flash = match tri(&r.attention, "attention")? {
        Some(fa) => fa,
        None => {
            defaults.push("attn");
            gpu.is_none_or(|g| g.flash_attention2)
        }
    };
    let hw = Hardware { vram_gb, devices: r.gpus, flash_attention: flash, bf16: true };

    let (mut memory_ok, mut memory_ratio, mut mem_text) = (None, None, String::from("—"));
    if let Some(measured) = r.memory {
        let unit = r.memory_unit.as_deref().ok_or("`memory` needs `memory_unit`")?;
        let measured_gb = measured * unit_bytes(unit)? / 1e9;
        let report = fit(&job, &hw);
        // torch.cuda.max_memory_allocated counts live tensors only: the engine's overhead term
        // (CUDA context + allocator fragmentation) is real memory on the card but invisible to it.
        // torch.cuda.max_memory_reserved counts what the caching allocator holds — fragmentation
        // included — but not the CUDA context, which the driver holds outside the allocator.
        let need = match r.memory_basis.as_deref() {
            Some("allocated") => report.need_gb - report.breakdown.overhead_gb,
            Some("reserved") => report.need_gb - CONTEXT_GB,
            Some("unknown") => report.need_gb,
            other => return Err(format!("memory_basis {other:?} is not allocated/reserved/unknown")),
        };
        let ratio = need / measured_gb;
        memory_ok = Some((ratio - 1.0).abs() <= MEMORY_TOLERANCE);
        memory_ratio = Some(ratio);
        mem_text = format!(
            "{need:>6.1} vs {measured_gb:>6.1} GB ×{ratio:.2} {}",
            if memory_ok == Some(true) { "ok " } else { "OFF" }
        );
    }
    let (mut throughput_ok, mut throughput_ratio, mut tps_text) = (None, None, String::from("—"));
    if let Some(measured) = r.tokens_per_s {
        match gpu {
            Some(g) if r.gpus == 1 => {
                job.tokens = 1e9;
                let t = estimate_time(&job, g, 1.0);
                let (lo, hi) = (t.tokens_per_second_low, t.tokens_per_second_high);
                let ok = (lo..=hi).contains(&measured);
                throughput_ok = Some(ok);
                throughput_ratio = Some(measured / ((lo + hi) / 2.0));
                tps_text = format!(
                    "{measured:>7.0} in [{lo:>6.0}, {hi:>6.0}] ×{:.2} {}",
                    measured / ((lo + hi) / 2.0),
                    if ok { "ok " } else { "OFF" }
                );
            }
            _ => tps_text = "(card not in catalog or multi-GPU: not compared)".into(),
        }
    }
    let model = r.model.clone().unwrap_or_else(|| job.model.name.clone());
    let card = r.gpu.clone().or_else(|| r.gpu_name.clone()).unwrap_or_default();
    let line = format!(
        "{model:<16} {:<9} {:>6} b{:<2} {}×{card:<14} {:<9} | mem {mem_text:<34} | tok/s {tps_text:<36} | {}{}",
        r.method,
        r.seq_len,
        r.micro_batch,
        r.gpus,
        r.quant,
        r.source,
        if defaults.is_empty() { String::new() } else { format!(" [engine default: {}]", defaults.join(",")) },
    );
    let line = match &r.note {
        Some(note) => format!("{line} ({note})"),
        None => line,
    };
    let quantized = job.precision.is_some_and(|p| p.is_quantized());
    Ok(Outcome {
        line,
        training: method.is_training(),
        quantized,
        memory_ok,
        memory_ratio,
        throughput_ok,
        throughput_ratio,
    })
}

#[test]
fn engine_agrees_with_published_measurements() {
    let rows = load();
    let catalog = Catalog::shipped();
    let mut out = String::new();
    let (mut mem, mut mem_ok, mut tps, mut tps_ok) = (0usize, 0usize, 0usize, 0usize);
    let (mut train_mem, mut train_mem_ok, mut train_tps, mut train_tps_ok) = (0usize, 0usize, 0usize, 0usize);
    let (mut quant_tps, mut quant_tps_ok) = (0usize, 0usize);
    let mut worst: Vec<(f64, String)> = Vec::new();
    let mut tps_distance: Vec<f64> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        assert!(
            !r.source.is_empty() && !r.location.is_empty() && r.read.len() == 10,
            "row {}: every row cites its source, where it was read and the date",
            i + 1
        );
        assert!(!r.precision.is_empty());
        let o = evaluate(r, catalog).unwrap_or_else(|e| panic!("row {} ({}): {e}", i + 1, r.location));
        if let Some(ok) = o.memory_ok {
            mem += 1;
            mem_ok += ok as usize;
            if o.training {
                train_mem += 1;
                train_mem_ok += ok as usize;
            }
        }
        if let Some(ratio) = o.memory_ratio {
            worst.push((ratio, o.line.clone()));
        }
        if let Some(ok) = o.throughput_ok {
            tps += 1;
            tps_ok += ok as usize;
            if o.training {
                train_tps += 1;
                train_tps_ok += ok as usize;
            }
            if o.quantized {
                quant_tps += 1;
                quant_tps_ok += ok as usize;
            }
        }
        tps_distance.extend(o.throughput_ratio.map(|x| x.ln().abs()));
        out.push_str(&format!("{:>3} {}\n", i + 1, o.line));
    }
    let share = |ok: usize, n: usize| if n == 0 { 0.0 } else { ok as f64 / n as f64 };
    let (mem_share, tps_share) = (share(mem_ok, mem), share(tps_ok, tps));
    let train_share = share(train_mem_ok, train_mem);
    let mean_distance = tps_distance.iter().sum::<f64>() / tps_distance.len().max(1) as f64;
    worst.sort_by(|a, b| (a.0 - 1.0).abs().total_cmp(&(b.0 - 1.0).abs()).reverse());
    out.push_str(&format!(
        "\nmemory within ±{:.0} %: {mem_ok}/{mem} = {:.0} % (floor {:.0} %); training rows only: {train_mem_ok}/{train_mem} = {:.0} % (floor {:.0} %), inference rows: {}/{}\n\
         throughput inside the band: {tps_ok}/{tps} = {:.0} % (floor {:.0} %); training rows {train_tps_ok}/{train_tps}, 16-bit inference rows {}/{}, quantized-weight inference rows {quant_tps_ok}/{quant_tps}; mean |ln(measured ÷ band middle)| {:.2} (ceiling {:.2})\nworst memory rows:\n",
        MEMORY_TOLERANCE * 100.0,
        mem_share * 100.0,
        MEMORY_SHARE_FLOOR * 100.0,
        train_share * 100.0,
        TRAINING_MEMORY_SHARE_FLOOR * 100.0,
        mem_ok - train_mem_ok,
        mem - train_mem,
        tps_share * 100.0,
        THROUGHPUT_SHARE_FLOOR * 100.0,
        tps_ok - train_tps_ok - quant_tps_ok,
        tps - train_tps - quant_tps,
        mean_distance,
        THROUGHPUT_LOG_DISTANCE_CEILING
    ));
    for (_, line) in worst.iter().take(5) {
        out.push_str(&format!("    {line}\n"));
    }
    println!("{out}");
    assert!(mem_share + 1e-9 >= MEMORY_SHARE_FLOOR, "memory accuracy fell below the README's figure\n{out}");
    assert!(
        train_share + 1e-9 >= TRAINING_MEMORY_SHARE_FLOOR,
        "training-row memory accuracy fell below the README's figure\n{out}"
    );
    assert!(
        tps_share + 1e-9 >= THROUGHPUT_SHARE_FLOOR,
        "throughput accuracy fell below the README's figure\n{out}"
    );
    assert!(
        !tps_distance.is_empty() && mean_distance <= THROUGHPUT_LOG_DISTANCE_CEILING,
        "throughput estimates moved further from the measurements\n{out}"
    );
}

/// The table meets issue 16's coverage: ≥ 25 rows, ≥ 4 sources, ≥ 3 GPU kinds with a consumer card,
/// and every method family.
#[test]
fn table_covers_sources_gpus_and_methods() {
    let rows = load();
    assert!(rows.len() >= 25, "{} rows", rows.len());
    let distinct = |f: &dyn Fn(&Row) -> String| {
        let mut v: Vec<String> = rows.iter().map(f).collect();
        v.sort();
        v.dedup();
        v
    };
    let sources = distinct(&|r| r.source.clone());
    assert!(sources.len() >= 4, "{sources:?}");
    let gpus = distinct(&|r| r.gpu.clone().or_else(|| r.gpu_name.clone()).unwrap_or_default());
    assert!(gpus.len() >= 3, "{gpus:?}");
    assert!(gpus.iter().any(|g| g == "rtx4090"), "a consumer card: {gpus:?}");
    let methods = distinct(&|r| r.method.clone());
    for family in [&["full", "full16"][..], &["lora"], &["qlora4", "qlora8"], &["inference"]] {
        assert!(methods.iter().any(|m| family.contains(&m.as_str())), "no {family:?} row: {methods:?}");
    }
}
