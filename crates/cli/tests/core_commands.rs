//! `gpuctl catalog | estimate | tco` run as a user would: the real binary, table and `--json`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn gpuctl(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpuctl"));
    c.args(args).env("GPUCTL_TODAY", "2026-11-30").env_remove("GPUCTL_PRICE_OVERLAY");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("gpuctl runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = gpuctl(args, &[]);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", stdout(&o)))
}

fn overlay_file(name: &str, text: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn estimate_table_ranks_offers_with_breakdown_and_price_age() {
    let o = gpuctl(
        &["estimate", "--model", "qwen2.5-7b", "--method", "qlora4", "--tokens", "50M", "--epochs", "3"],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "qwen2.5-7b (7.61B params) · qlora4 · 50M tokens × 3 epochs",
        "prices as of 2019-01-01 … 2026-11-01 (29–2890 days old on 2026-11-30)",
        "Memory per GPU on the cheapest offer",
        "│ 1  ┆",
        "Billing modes for",
        "p4: needs",
        "Assumptions:",
        "4·N·D",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
}

#[test]
fn estimate_json_is_sorted_and_complete() {
    let v = json(&[
        "estimate",
        "--model",
        "llama-2-13b",
        "--method",
        "lora",
        "--tokens",
        "20M",
        "--json",
        "--top",
        "0",
    ]);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["today"], "2026-11-30");
    let offers = v["ranking"]["offers"].as_array().unwrap();
    assert!(offers.len() > 20);
    let costs: Vec<f64> = offers.iter().map(|o| o["cost_high"].as_f64().unwrap()).collect();
    assert!(costs.windows(2).all(|w| w[0] <= w[1]));
    let first = &offers[0];
    for key in [
        "provider",
        "instance",
        "region",
        "mode",
        "price",
        "fit",
        "time",
        "cost_low",
        "price_age_days",
        "warnings",
    ] {
        assert!(!first[key].is_null(), "offer lacks {key}: {first}");
    }
    // LoRA keeps the frozen base in 16-bit: llama-2-13b's 13.0e9 parameters × 2 bytes = 26.0 GB (decimal),
    // split over the offer's GPUs under ZeRO-3 (the cheapest offer here is 8 × 24 GB: 3.25 GB each).
    let fit = &first["fit"];
    let shards = if fit["zero_stage"] == 3 { fit["devices"].as_f64().unwrap() } else { 1.0 };
    let weights = fit["breakdown"]["weights_gb"].as_f64().unwrap();
    let expected = 26.0 / shards;
    assert!((weights - expected).abs() < 0.01, "weights_gb {weights}, expected {expected} ± 0.01: {fit}");
    assert!(first["fit"]["need_gb"].as_f64().unwrap() <= first["fit"]["vram_gb"].as_f64().unwrap());
    assert!(first["price"]["source"].as_str().unwrap().len() > 3);
    assert!(!v["ranking"]["infeasible"].as_array().unwrap().is_empty());
    assert!(v["best_instance_modes"]["break_even"].is_array());
}

#[test]
fn full_7b_on_one_24gb_card_does_not_fit() {
    let one =
        ["estimate", "--params", "7b", "--method", "full", "--gpu", "a10", "--gpus", "1", "--tokens", "1M"];
    let o = gpuctl(&[&one[..], &["--nodes", "1"]].concat(), &[]);
    assert_eq!(o.status.code(), Some(1), "no offer → exit 1");
    let out = stdout(&o);
    assert!(out.contains("No offer can run this job."), "{out}");
    assert!(out.contains("has 24 GB: does not fit"), "{out}");
    // Without --nodes the answer is the fewest one-A10 instances that hold it, sharded over all.
    let o = gpuctl(&one, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains(" nodes × 1×a10"), "{out}");
    assert!(out.contains("full sharding"), "{out}");
    assert!(out.contains("N nodes: N instances of one type in one zone"), "{out}");
}

/// `--nodes`: a cluster of exactly N on every type (issue 14), refused for inference; a cluster row's
/// spec is a `cluster = true` pool of N nodes.
#[test]
fn nodes_ask_for_clusters_and_are_checked() {
    let o = gpuctl(&["estimate", "--model", "qwen2.5-7b", "--tokens", "100M", "--nodes", "2", "--json"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let offers = v["ranking"]["offers"].as_array().unwrap();
    assert!(!offers.is_empty());
    for x in offers {
        assert_eq!(x["nodes"], 2, "{x}");
        assert_eq!(x["cluster"]["nodes"], 2, "{x}");
        assert!(x["cluster"]["net_gbps"].as_f64().unwrap() > 0.0, "{x}");
    }
    let o = gpuctl(&["estimate", "--model", "qwen2.5-7b", "--method", "inference", "--nodes", "2"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--nodes is for training"), "{}", stderr(&o));
    let o = gpuctl(&["estimate", "--model", "qwen2.5-7b", "--nodes", "0"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.toml");
    let o = gpuctl(
        &[
            "estimate",
            "--model",
            "qwen2.5-7b",
            "--tokens",
            "1M",
            "--nodes",
            "2",
            "--spec-out",
            spec.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A cluster row is written as a cluster pool, which the provisioner's own parser takes.
    let text = std::fs::read_to_string(&spec).unwrap();
    assert!(text.contains("count = 2  # the cluster's nodes") && text.contains("\ncluster = true"), "{text}");
    let parsed =
        gpuctl_provision::spec::parse("s.toml", &text, Some(dir.path()), &Default::default()).unwrap();
    assert!(parsed.pools[0].cluster && parsed.pools[0].count.value == 2);
}

#[test]
fn typos_get_closest_names_and_exit_2() {
    for (args, want) in [
        (vec!["estimate", "--model", "qwen-7b"], "unknown model 'qwen-7b'; did you mean qwen2.5-7b"),
        (
            vec!["estimate", "--model", "llama-2-7b", "--method", "qlora5"],
            "unknown method 'qlora5'; did you mean",
        ),
        (vec!["estimate", "--params", "7b", "--gpu", "a1O"], "unknown GPU 'a1O'; did you mean a10"),
        (vec!["estimate", "--params", "7b", "--tokens", "lots"], "--tokens: 'lots' is not a count"),
        (vec!["catalog", "--provider", "tencnet"], "did you mean tencent"),
        (vec!["tco", "--gpu", "h8000"], "did you mean h800"),
    ] {
        let o = gpuctl(&args, &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

/// `--output-tokens` splits an inference sequence into prompt and output: the prefill runs over the
/// prompt only, so the need falls; the header and the assumptions say so, and a count beyond the
/// sequence or on a training method is refused with exit 2.
#[test]
fn inference_output_tokens_split_the_sequence() {
    let inference = |extra: &[&'static str]| {
        let mut args =
            vec!["estimate", "--model", "qwen2.5-7b", "--method", "inference", "--seq-len", "32768"];
        args.extend_from_slice(extra);
        args
    };
    let need = |extra: &[&'static str]| {
        let v = json(&inference(&[&["--gpus", "1", "--json"], extra].concat()));
        let fit = &v["ranking"]["offers"][0]["fit"];
        (fit["need_gb"].as_f64().unwrap(), v["ranking"]["assumptions"].to_string())
    };
    let (whole, said_whole) = need(&[]);
    let (split, said_split) = need(&["--output-tokens", "2048"]);
    assert!(split < whole - 0.3, "{split} vs {whole}");
    assert!(said_whole.contains("counted as prompt"), "{said_whole}");
    assert!(said_split.contains("prefill of the 30720-token prompt"), "{said_split}");
    let o = gpuctl(&inference(&["--output-tokens", "2048"]), &[]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("seq 32768 (30720 prompt + 2048 output)"), "{}", stdout(&o));
    for (args, want) in [
        (
            vec!["estimate", "--model", "qwen2.5-7b", "--method", "inference", "--seq-len", "1000", "--output-tokens", "2048"],
            "--output-tokens 2048: output tokens are the last part of the sequence: a whole number from 0 to the sequence length, 1000",
        ),
        (
            vec!["estimate", "--model", "qwen2.5-7b", "--output-tokens", "20"],
            "--output-tokens 20: output tokens are for --method inference",
        ),
    ] {
        let o = gpuctl(&args, &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn catalog_table_and_json() {
    let o = gpuctl(&["catalog", "--provider", "alibaba", "--gpu", "a10"], &[]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("gn7i-c8g1.2xlarge") && out.contains("¥9.74") && out.contains("~¥1,403"), "{out}");
    assert!(!out.contains("tencent"));
    let v = json(&["catalog", "--min-vram", "80", "--json"]);
    let rows = v["instance_types"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["vram_gb_per_gpu"].as_f64().unwrap() >= 80.0));
    assert!(rows.iter().all(|r| !r["prices"].as_array().unwrap().is_empty()));
    let gpus = json(&["catalog", "gpus", "--json"]);
    assert!(gpus.as_array().unwrap().iter().any(|g| g["id"] == "p4" && g["fp16_training"] == false));
}

#[test]
fn overlay_prices_win_from_flag_or_env_and_errors_point_at_the_line() {
    let good = overlay_file(
        "overlay-good.toml",
        "schema_version = 1\n[[price]]\nprovider = \"alibaba\"\ninstance = \"gn7i-c8g1.2xlarge\"\nregion = \"cn-shanghai\"\nmode = \"hourly\"\ncny = 6.5\nas_of = \"2026-11-25\"\nsource = \"our contract\"\nconfidence = \"user\"\n",
    );
    let o = gpuctl(
        &["catalog", "--gpu", "a10", "--provider", "alibaba", "--overlay", good.to_str().unwrap()],
        &[],
    );
    assert!(stdout(&o).contains("!¥6.50"), "{}", stdout(&o));
    assert!(stdout(&o).contains("user overlay applied"));
    let o = gpuctl(
        &["catalog", "--gpu", "a10", "--provider", "alibaba"],
        &[("GPUCTL_PRICE_OVERLAY", good.to_str().unwrap())],
    );
    assert!(stdout(&o).contains("!¥6.50"), "{}", stdout(&o));
    let bad = overlay_file(
        "overlay-bad.toml",
        "schema_version = 1\n[[price]]\nprovider = \"alibaba\"\ncny = \"cheap\"\n",
    );
    let o = gpuctl(&["catalog", "--overlay", bad.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("overlay-bad.toml:4:7"), "{}", stderr(&o));
}

#[test]
fn tco_table_and_json() {
    let o = gpuctl(&["tco", "--utilization", "40%"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Break-even vs pay-as-you-go"));
    let v = json(&["tco", "--gpu", "a10", "--gpus", "4", "--card-price", "25000", "--json"]);
    assert_eq!(v["input"]["gpus"], 4);
    assert!(v["self_built"]["total_per_year"].as_f64().unwrap() > 0.0);
    assert_eq!(v["curve"].as_array().unwrap().len(), 21);
    assert!(v["price_age"].as_str().unwrap().contains("days old"));
}

#[test]
fn bursty_usage_and_stages() {
    let v = json(&[
        "estimate",
        "--model",
        "llama-2-7b",
        "--method",
        "lora",
        "--hours-per-day",
        "2",
        "--days",
        "10",
        "--stages",
        "--json",
    ]);
    assert_eq!(v["question"]["usage"]["total_hours"], 20.0);
    let first = &v["ranking"]["offers"][0];
    assert_eq!(first["hours_high"], 20.0);
    assert_eq!(first["calendar_days"], 10.0);
    let stages = v["stages"]["stages"].as_array().unwrap();
    let names: Vec<&str> = stages.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["validate", "tune", "produce"]);
    assert!(stages.iter().all(|s| s["offer"].is_object()));
    let o = gpuctl(&["estimate", "--model", "llama-2-7b", "--tokens", "1M", "--days", "3"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--days sets the hours of use when there are no --tokens"));
}

/// Every key path in a JSON value ("ranking.offers[].fit.breakdown.weights_gb"), sorted.
fn key_paths(v: &serde_json::Value, prefix: &str, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                out.insert(p.clone());
                key_paths(x, &p, out);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                key_paths(x, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

/// The `--json` shapes are a contract (docs/json.md): this list may only grow.
#[test]
fn estimate_json_keeps_its_documented_fields() {
    let v = json(&[
        "estimate",
        "--model",
        "qwen2.5-7b",
        "--method",
        "qlora4",
        "--tokens",
        "50M",
        "--provider",
        "alibaba",
        "--provider",
        "tencent",
        "--json",
        "--top",
        "1",
    ]);
    let mut paths = std::collections::BTreeSet::new();
    key_paths(&v, "", &mut paths);
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/json.md")).unwrap();
    for p in [
        "schema_version",
        "today",
        "question.job.model.params",
        "question.job.method",
        "question.usage.hours_per_day",
        "question.deadline_hours",
        "question.budget_cny",
        "ranking.price_age",
        "ranking.warnings",
        "ranking.assumptions",
        "ranking.offers[].provider",
        "ranking.offers[].instance",
        "ranking.offers[].region",
        "ranking.offers[].mode",
        "ranking.offers[].price.cny",
        "ranking.offers[].price.cny_per_hour",
        "ranking.offers[].price.as_of",
        "ranking.offers[].price.source",
        "ranking.offers[].price.confidence",
        "ranking.offers[].price.origin",
        "ranking.offers[].price.derivation",
        "ranking.offers[].fit.fits",
        "ranking.offers[].fit.need_gb",
        "ranking.offers[].fit.breakdown.weights_gb",
        "ranking.offers[].fit.breakdown.gradients_gb",
        "ranking.offers[].fit.breakdown.optimizer_gb",
        "ranking.offers[].fit.breakdown.adapters_gb",
        "ranking.offers[].fit.breakdown.activations_gb",
        "ranking.offers[].fit.breakdown.kv_cache_gb",
        "ranking.offers[].fit.breakdown.overhead_gb",
        "ranking.offers[].time.hours_low",
        "ranking.offers[].time.hours_high",
        "ranking.offers[].time.mfu.low",
        "ranking.offers[].time.unsuitable",
        "ranking.offers[].cost_low",
        "ranking.offers[].cost_high",
        "ranking.offers[].cny_per_1m_tokens_high",
        "ranking.offers[].price_age_days",
        "ranking.offers[].warnings",
        "ranking.infeasible[].reasons",
        "ranking.infeasible[].mode",
        "best_instance_modes.modes[].cost_high",
        "best_instance_modes.break_even[].threshold",
        "best_instance_modes.cheapest",
    ] {
        assert!(paths.contains(p), "--json lost {p}");
        let leaf = p.rsplit(['.', ']']).next().unwrap();
        assert!(docs.contains(&format!("`{leaf}`")), "docs/json.md does not document `{leaf}`");
    }
}

#[test]
fn software_needs_rule_out_gpus() {
    let o = gpuctl(
        &[
            "estimate",
            "--model",
            "qwen2.5-7b",
            "--method",
            "inference",
            "--framework",
            "vllm",
            "--infeasible",
            "--hours-per-day",
            "24",
            "--days",
            "30",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("vLLM needs compute capability ≥ 7.0; NVIDIA Tesla P40 is 6.1"), "{out}");
    let o = gpuctl(
        &[
            "estimate",
            "--model",
            "qwen2.5-7b",
            "--method",
            "lora",
            "--gpu",
            "a10",
            "--framework",
            "pytorch 2.1",
            "--cuda",
            "11.7",
            "--tokens",
            "1M",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("PyTorch 2.1 ships wheels for CUDA 11.8 / 12.1, not 11.7"), "{}", stdout(&o));
}

/// A reader that goes away early (`gpuctl catalog models | head -1`) ends the output, not the
/// command: no panic, success; a stdout that cannot be written for another reason (a full disk)
/// is an error the caller sees in the exit code.
#[test]
fn output_to_a_closed_pipe_or_a_full_disk_never_panics() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let o = Command::new(env!("CARGO_BIN_EXE_gpuctl"))
        .args(["estimate", "--model", "qwen2.5-7b", "--method", "qlora4", "--tokens", "50M"])
        .env("GPUCTL_TODAY", "2026-11-30")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("gpuctl runs");
    assert!(o.status.success() && !stderr(&o).contains("panicked"), "{:?}: {}", o.status, stderr(&o));

    if std::path::Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full opens");
        let o = Command::new(env!("CARGO_BIN_EXE_gpuctl"))
            .args(["catalog", "models", "--json"])
            .stdout(full)
            .stderr(std::process::Stdio::piped())
            .output()
            .expect("gpuctl runs");
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("error: writing the output: No space left on device"), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

/// An MoE preset is ranked with memory for every expert and time for the active parameters, and
/// says so; `catalog models` shows both counts.
#[test]
fn moe_presets_are_estimated_on_their_active_parameters() {
    let v =
        json(&["estimate", "--model", "qwen3-30b-a3b", "--method", "qlora4", "--tokens", "10M", "--json"]);
    let said = v["ranking"]["assumptions"].to_string();
    assert!(said.contains("mixture of experts (128 experts, 8 per token)"), "{said}");
    let models = gpuctl(&["catalog", "models"], &[]);
    assert!(stdout(&models).contains("3.3B (8 of 128 experts)"), "{}", stdout(&models));
}

/// `--model` takes a Hugging Face config.json (a file, or the folder holding one), dense or MoE;
/// a broken or partial config is refused at its line:column or with the missing field's names.
#[test]
fn estimate_takes_a_hugging_face_config() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("Qwen3-30B-A3B");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "head_dim": 128,
            "hidden_size": 2048, "intermediate_size": 6144, "moe_intermediate_size": 768,
            "num_attention_heads": 32, "num_hidden_layers": 48, "num_key_value_heads": 4,
            "num_experts": 128, "num_experts_per_tok": 8, "tie_word_embeddings": false, "vocab_size": 151936}"#,
    )
    .unwrap();
    let dense = overlay_file(
        "qwen3-8b-config.json",
        r#"{"model_type": "qwen3", "head_dim": 128, "hidden_size": 4096, "intermediate_size": 12288,
            "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
            "tie_word_embeddings": false, "vocab_size": 151936}"#,
    );
    let v = json(&[
        "estimate",
        "--model",
        dense.to_str().unwrap(),
        "--method",
        "lora",
        "--tokens",
        "10M",
        "--json",
    ]);
    let params = v["question"]["job"]["model"]["params"].as_f64().unwrap();
    assert!((params / 8.2e9 - 1.0).abs() < 0.01, "{params}");
    assert_eq!(v["question"]["job"]["model"]["name"], "qwen3-8b-config.json");
    let v = json(&[
        "estimate",
        "--model",
        dir.to_str().unwrap(),
        "--method",
        "qlora4",
        "--tokens",
        "10M",
        "--json",
    ]);
    assert_eq!(v["question"]["job"]["model"]["name"], "Qwen3-30B-A3B");
    assert_eq!(v["question"]["job"]["model"]["moe"]["experts"], 128);
    assert!(v["ranking"]["assumptions"].to_string().contains("mixture of experts"));

    let broken = overlay_file("broken-config.json", "{\n  \"hidden_size\": 4096,,\n}");
    let o = gpuctl(&["estimate", "--model", broken.to_str().unwrap(), "--tokens", "1M"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("broken-config.json:2:23: not a JSON config"), "{}", stderr(&o));
    let partial = overlay_file("partial-config.json", r#"{"hidden_size": 4096, "num_hidden_layers": 32}"#);
    let o = gpuctl(&["estimate", "--model", partial.to_str().unwrap(), "--tokens", "1M"], &[]);
    assert!(
        stderr(&o).contains("missing `num_attention_heads` (or `n_head`): the number of attention heads"),
        "{}",
        stderr(&o)
    );
    let o = gpuctl(&["estimate", "--model", "/dev/zero", "--tokens", "1M"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
}

/// `--spec-out` writes the chosen row's provisioning spec (row 1, or `--pick N`), which the
/// provisioner's own parser accepts and which names that row's offer; an existing file is never
/// replaced without `--overwrite`, and a row the table does not have is refused.
#[test]
fn estimate_writes_the_chosen_rows_spec() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("spec-out");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.toml");
    let p = path.to_str().unwrap();
    let base = ["estimate", "--model", "qwen2.5-7b", "--method", "qlora4", "--tokens", "50M", "--no-spot"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        gpuctl(&a, &[])
    };
    let v = json(&[&base[..], &["--json", "--top", "0"]].concat());
    let key = dir.join("id_test.pub");
    std::fs::write(
        &key,
        // RSA: every cloud's key-pair import takes it (Tencent and Alibaba take no Ed25519).
        "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDyUSzFRX6BlPCXVwGlPJ2aq4JIrBHpWO6v/+qdK5Mt4W4BqBF/GJjht1oz0d2eLH/oAonZsIA9xLlS8mDO167cWL0xevJP/LlhUlNNvf4SfPOa0Ml8vK3v9LT26xDHlvmbVx3fCuKCyr6dIN5rrK0AEn0sa6GP58rwYHIZV9DDwH2ZOTVBgu2IV8tcHN7MGz7YP8NKJNPYFG4Q07aarKCUU89mo/X5cZv+bwXMXqyZhOVeqloJqLwbKMInrVIqIKYwc5bo4y52RpA89mM1IRC6XyEb79S9wB5ogirgLvT662REkhOVn0dZnTLEJepDAga83XLbjtgYkh+ymt51HKaV me@laptop\n",
    )
    .unwrap();
    let o = with(&["--spec-out", p, "--pick", "2", "--public-key", key.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Wrote ") && stdout(&o).contains("for row 2"), "{}", stdout(&o));
    let text = std::fs::read_to_string(&path).unwrap();
    let spec = gpuctl_provision::spec::parse("s.toml", &text, None, &Default::default())
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(spec.deployment.value, "qwen2-5-7b-qlora4");
    assert!(text.starts_with("# Exported by gpuctl estimate on 2026-11-30"), "{text}");
    // The next steps name the file written, not the deployment, and the tags say who wrote it.
    assert!(text.contains(&format!("#   gpuctl provision {p}   # create it")), "{text}");
    assert!(text.contains("source = \"gpuctl-estimate\""), "{text}");
    assert!(text.contains(&format!("login_key = {{ public_key = \"{}\" }}", key.display())), "{text}");
    assert!(spec.pools[0].login_key.is_some());
    assert!(text.contains("image = \"ubuntu-22.04\""), "{text}");
    // Row 2 of the table is the first offer of the second (provider, family, GPUs, mode) group.
    let offers = v["ranking"]["offers"].as_array().unwrap();
    let key = |o: &serde_json::Value| {
        (o["provider"].clone(), o["family"].clone(), o["gpu_count"].to_string(), o["mode"].clone())
    };
    let first = key(&offers[0]);
    let second = offers.iter().find(|o| key(o) != first).unwrap();
    let placement = format!("{:?}", spec.pools[0].placement);
    assert!(placement.contains(second["region"].as_str().unwrap()), "{placement} vs {second}");
    assert_eq!(spec.pools[0].billing.value.as_str(), second["mode"].as_str().unwrap());

    // The file exists now: refused, and left as it was.
    let o = with(&["--spec-out", p]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("exists; choose another file or pass --overwrite"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    let o = with(&["--spec-out", p, "--overwrite"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(std::fs::read_to_string(&path).unwrap(), text, "row 1 replaced row 2");

    // A file that is not a public key is refused before anything is written.
    let o = with(&["--spec-out", dir.join("none.toml").to_str().unwrap(), "--public-key", p]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--public-key"), "{}", stderr(&o));
    assert!(!dir.join("none.toml").exists());
    let o = with(&["--spec-out", dir.join("none.toml").to_str().unwrap(), "--pick", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--pick 0: the table has rows 1 to"), "{}", stderr(&o));
    assert!(!dir.join("none.toml").exists());
    // With --json the document stays on stdout and the note goes to stderr.
    let o = with(&["--spec-out", dir.join("j.toml").to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("stdout is JSON");
    assert!(stderr(&o).contains("Wrote "), "{}", stderr(&o));
}

#[test]
fn storage_archive_says_what_moving_old_checkpoints_saves_with_its_sources() {
    // JD, 1 TB on 容量型 HDD pay-as-you-go (0.00034 CNY/GB-hour × 730 h × 1024 GB = 254.1568 CNY a
    // month) to archive: 0.001 CNY/GB-day × 730/24 × 1024 = 31.1467; one 100 GB restore × 0.06 = 6;
    // kept past the 60-day minimum → saves 254.1568 − 37.1467 = 217.0101 CNY a month.
    let v = json(&[
        "storage",
        "archive",
        "--checkpoints",
        "1TB",
        "--older-than",
        "14d",
        "--class",
        "premium",
        "--restores",
        "1",
        "--restore-size",
        "100GB",
        "--keep",
        "90d",
        "--provider",
        "jdcloud",
        "--json",
    ]);
    let cloud = &v["clouds"][0];
    assert_eq!(cloud["question"]["region"], "cn-north-1", "{v}");
    assert!((cloud["current"]["cny_per_month"].as_f64().unwrap() - 254.1568).abs() < 1e-6, "{v}");
    let archive = cloud["options"].as_array().unwrap().iter().find(|o| o["tier"] == "archive").unwrap();
    let want = 254.1568 - (0.001 * 730.0 / 24.0 * 1024.0 + 6.0);
    assert!((archive["saving_cny"].as_f64().unwrap() - want).abs() < 1e-6, "{archive}");
    assert_eq!(archive["price"]["class"], "ARCHIVE");
    assert!(archive["price"]["source"].as_str().unwrap().contains("Object-Storage-Service"), "{archive}");

    // The table: every cloud, unknowns said as such, never a saving claimed without a figure.
    let o = gpuctl(
        &["storage", "archive", "--checkpoints", "2TB", "--restores", "2", "--restore-size", "100GB"],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for want in ["tencent", "alibaba", "jdcloud", "unknown", "Assumptions:", "CLOUD_SSD", "source:"] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    // Bad input: a clear message and exit 2.
    for bad in [
        &["storage", "archive", "--checkpoints", "lots"][..],
        &["storage", "archive", "--checkpoints", "1TB", "--restores", "2"][..],
        &["storage", "archive", "--checkpoints", "1TB", "--on", "tape"][..],
        &["storage", "archive", "--checkpoints", "1TB", "--region", "cn-north-1"][..],
    ] {
        let o = gpuctl(bad, &[]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--"), "{bad:?}: {}", stderr(&o));
    }
}

#[test]
fn storage_prices_lists_every_row_with_its_source() {
    let v = json(&["storage", "prices", "--provider", "tencent", "--kind", "disk", "--json"]);
    let rows = v["prices"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["provider"] == "tencent" && r["kind"] == "disk"), "{v}");
    let premium = rows.iter().find(|r| r["class"] == "CLOUD_PREMIUM").unwrap();
    assert_eq!((premium["gpuctl"].as_str(), premium["monthly"].as_f64()), (Some("premium"), Some(0.35)));
    // A class with no figure is listed, unpriced, with where it was looked for.
    let bssd = rows.iter().find(|r| r["class"] == "CLOUD_BSSD").unwrap();
    assert!(bssd["monthly"].is_null() && bssd["hourly"].is_null(), "{bssd}");
    let o = gpuctl(&["storage", "prices"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("price unknown") && stdout(&o).contains("cloud_essd"), "{}", stdout(&o));
}
