//! `gpuctl estimate`: does the job fit, how long, what does it cost under each billing mode —
//! every offer across providers ranked, with the memory breakdown, warnings and assumptions.

use std::path::PathBuf;
use std::process::ExitCode;

use gpuctl_core::{
    input, parse_count, parse_hours, preset, price_job, rank, stages, BillingMode, Catalog, Date, InputError,
    Job, JobPrice, Method, ModelShape, Precision, Question, Ranking, StagePlan, Usage,
};
use serde::Serialize;

use super::CliError;
use crate::output::{self, cny, hours, range, table};

#[derive(clap::Args)]
pub struct EstimateArgs {
    /// Model preset, e.g. qwen2.5-7b, qwen3-30b-a3b (see `gpuctl catalog models`), or a Hugging Face
    /// config.json (a path: ./config.json), dense or mixture of experts.
    #[arg(long)]
    pub model: Option<String>,
    /// Parameter count instead of a preset, e.g. 7b, 1.5B, 350M.
    #[arg(long)]
    pub params: Option<String>,
    /// full, full16, freeze, lora, qlora8, qlora4, inference.
    #[arg(long, default_value = "lora")]
    pub method: String,
    /// fp16, bf16, fp32, int8, int4 (default: BF16 where the GPU has it, else FP16).
    #[arg(long)]
    pub precision: Option<String>,
    /// What runs inference's decode loop: serving (vLLM, SGLang, LMDeploy: CUDA graphs) or
    /// transformers (Hugging Face generate(), eager: ~10× the per-layer overhead).
    #[arg(long, default_value = "serving")]
    pub runtime: String,
    /// Training tokens per epoch (or tokens to generate for inference), e.g. 50M.
    #[arg(long)]
    pub tokens: Option<String>,
    #[arg(long, default_value_t = 1.0)]
    pub epochs: f64,
    /// Tokens per sequence; for inference the whole context, prompt + output.
    #[arg(long, default_value_t = 2048)]
    pub seq_len: u32,
    /// Inference: tokens generated per sequence, the last part of --seq-len. Sets the prompt the
    /// prefill runs over (without it the whole sequence counts as prompt: the larger memory figure).
    #[arg(long)]
    pub output_tokens: Option<u32>,
    #[arg(long, default_value_t = 1)]
    pub micro_batch: u32,
    /// Turn gradient checkpointing off (more activation memory, a little faster).
    #[arg(long)]
    pub no_grad_checkpointing: bool,
    /// ZeRO/FSDP stage 0–3 (default: the lowest that fits).
    #[arg(long)]
    pub zero_stage: Option<u8>,
    #[arg(long, default_value_t = 8)]
    pub lora_rank: u32,
    /// Only instance types with exactly this many GPUs.
    #[arg(long)]
    pub gpus: Option<u32>,
    /// Train on exactly N instances of each type: a cluster in one zone (ZeRO/FSDP inside each node
    /// and across them when one node cannot hold the job). Without it, one instance — or, where one
    /// cannot hold the job or meet --deadline, the fewest (up to 16) that can.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub nodes: Option<u32>,
    /// Only this GPU (id or name); repeatable.
    #[arg(long = "gpu")]
    pub gpu_filter: Vec<String>,
    /// Hours of work per day (2 = bursty use with release in between).
    #[arg(long, default_value_t = 24.0)]
    pub hours_per_day: f64,
    /// Days of use (with --hours-per-day) when no --tokens are given.
    #[arg(long)]
    pub days: Option<f64>,
    /// Finish within this wall-clock time: 48h, 3d, 2w.
    #[arg(long)]
    pub deadline: Option<String>,
    /// Total budget in ¥.
    #[arg(long)]
    pub budget: Option<f64>,
    /// Only this provider; repeatable.
    #[arg(long = "provider")]
    pub providers: Vec<String>,
    /// Only this region; repeatable.
    #[arg(long = "region")]
    pub regions: Vec<String>,
    /// Only this billing mode (hourly, spot, weekly, monthly, year1, year3); repeatable.
    #[arg(long = "mode")]
    pub modes: Vec<String>,
    /// Leave out spot offers.
    #[arg(long)]
    pub no_spot: bool,
    /// Spot offers: expected reclaims per instance per day of running, counted into their time and
    /// cost (no cloud publishes a rate; default 0.25)
    #[arg(long, value_name = "RATE")]
    pub spot_reclaims_per_day: Option<f64>,
    /// Spot offers: how often the job checkpoints, e.g. 1h or 30min (default 1h); a reclaim loses half of it
    #[arg(long, value_name = "DURATION")]
    pub checkpoint_every: Option<String>,
    /// Spot offers: from a reclaim to work resuming (new instance, environment, reload), e.g. 15min (default 0.25h)
    #[arg(long, value_name = "DURATION")]
    pub restart_time: Option<String>,
    /// Also rank instance types the clouds sell only by invitation or through sales (marked † in
    /// `gpuctl catalog`); left out by default.
    #[arg(long)]
    pub include_restricted: bool,
    /// Software the job needs, e.g. "pytorch 2.1", vllm, flash-attn, mindspore; repeatable.
    /// GPUs that cannot run it are listed as infeasible.
    #[arg(long = "framework")]
    pub frameworks: Vec<String>,
    /// CUDA version of your image, e.g. 12.1 (checked against the framework and driver).
    #[arg(long)]
    pub cuda: Option<String>,
    /// NVIDIA driver version of the host image, e.g. 535.104.05.
    #[arg(long)]
    pub driver: Option<String>,
    /// Rows to show (table) or return (`--json`; 0 = all).
    #[arg(long, default_value_t = 15)]
    pub top: usize,
    /// List every instance type that cannot run the job, with why.
    #[arg(long)]
    pub infeasible: bool,
    /// Also plan the stages: validate → tune → produce.
    #[arg(long)]
    pub stages: bool,
    /// Price overlay file (TOML or JSON); also GPUCTL_PRICE_OVERLAY.
    #[arg(long)]
    pub overlay: Option<PathBuf>,
    /// Machine-readable output (shapes in docs/json.md).
    #[arg(long)]
    pub json: bool,
    /// Write a provisioning spec for the chosen offer (row 1, or `--pick N`) to this file: the same
    /// file the browser calculator's "Export spec" writes, ready for `gpuctl plan` / `provision`.
    #[arg(long, value_name = "FILE")]
    pub spec_out: Option<PathBuf>,
    /// Which row of the table `--spec-out` writes (1 = the cheapest).
    #[arg(long, value_name = "N", requires = "spec_out")]
    pub pick: Option<usize>,
    /// Let `--spec-out` replace a file that exists (by default it refuses, so no spec is lost).
    #[arg(long, requires = "spec_out")]
    pub overwrite: bool,
    /// The public key `--spec-out`'s spec logs in with (default: ~/.ssh/id_ed25519.pub, id_ecdsa.pub
    /// or id_rsa.pub, the first that exists and the offer's cloud imports).
    #[arg(long, value_name = "FILE", requires = "spec_out")]
    pub public_key: Option<PathBuf>,
    /// Where SSH may come from when gpuctl makes the network, a CIDR such as 203.0.113.7/32
    /// (repeatable; default: anywhere, and the spec says so).
    #[arg(long = "ssh-from", value_name = "CIDR", requires = "spec_out")]
    pub ssh_from: Vec<String>,
}

/// `--json` output.
#[derive(Serialize)]
struct Out<'a> {
    schema_version: u32,
    today: Date,
    question: &'a Question,
    ranking: &'a Ranking,
    /// Every billing mode for the top offer's instance type and region, with break-even points.
    best_instance_modes: Option<JobPrice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stages: Option<&'a StagePlan>,
    /// Where Ascend is and is not sold, when a framework needs it (`--framework mindspore`).
    #[serde(skip_serializing_if = "Option::is_none")]
    ascend: Option<String>,
}

/// A flag's value that core's bounds refuse (`gpuctl_core::input`, the page's too): `--FLAG VALUE:
/// why`, a usage error.
fn bound<T>(
    flag: &str,
    given: impl std::fmt::Display,
    checked: Result<T, InputError>,
) -> Result<T, CliError> {
    checked.map_err(|e| CliError::usage(format!("--{flag} {given}: {e}")))
}

/// Largest config.json read: published ones are a few KB; a multimodal one with its processor
/// settings stays far below this.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// `--model`: a preset by name, or a path to a Hugging Face config.json (anything that ends in
/// `.json`, names a folder, or is a file that exists: a preset name never does).
fn model_arg(m: &str) -> Result<ModelShape, CliError> {
    let path = std::path::Path::new(m);
    let looks_like_path = m.ends_with(".json") || m.contains(std::path::MAIN_SEPARATOR) || m.contains('/');
    if !looks_like_path && !path.is_file() {
        return preset(m).map_err(|e| {
            CliError::usage(format!("{e} (or give a Hugging Face config.json: --model ./config.json)"))
        });
    }
    // A folder such as a downloaded model's: its config.json.
    let file = if path.is_dir() { path.join("config.json") } else { path.to_path_buf() };
    let text = gpuctl_sign::file::read_string_bounded(&file, MAX_CONFIG_BYTES)
        .map_err(|e| CliError::usage(format!("--model {}: {}", file.display(), e.reason())))?;
    let name = match file.parent().and_then(|d| d.file_name()) {
        // `…/Qwen3-8B/config.json` is better called Qwen3-8B than config.json.
        Some(dir) if file.file_name().is_some_and(|f| f == "config.json") => {
            dir.to_string_lossy().into_owned()
        }
        _ => file.file_name().map_or_else(|| m.to_string(), |f| f.to_string_lossy().into_owned()),
    };
    gpuctl_core::from_hf_config(&name, &text).map_err(|e| match e.at {
        Some(_) => CliError::usage(format!("{}:{e}", file.display())),
        None => CliError::usage(format!("{}: {e}", file.display())),
    })
}

/// Build the engine question from the flags (errors name the flag and suggest).
pub fn question(args: &EstimateArgs, cat: &Catalog, today: Date) -> Result<Question, CliError> {
    let model: ModelShape = match (&args.model, &args.params) {
        (Some(_), Some(_)) => return Err(CliError::usage("give --model or --params, not both")),
        (Some(m), None) => model_arg(m)?,
        (None, Some(p)) => {
            let n = parse_count(p).map_err(|e| CliError::usage(format!("--params: {e}")))?;
            ModelShape::from_params(bound("params", p, input::params(n))?)
        }
        (None, None) => {
            return Err(CliError::usage(
                "say which model: --model qwen2.5-7b (see `gpuctl catalog models`) or --params 7b",
            ))
        }
    };
    let method = Method::parse(&args.method).map_err(output::unknown)?;
    let mut job = Job::new(model, method);
    job.precision = args.precision.as_deref().map(Precision::parse).transpose().map_err(output::unknown)?;
    job.runtime = gpuctl_core::Runtime::parse(&args.runtime).map_err(output::unknown)?;
    job.seq_len = bound("seq-len", args.seq_len, input::seq_len(f64::from(args.seq_len)))?;
    if let Some(o) = args.output_tokens {
        if method != Method::Inference {
            return Err(CliError::usage(format!(
                "--output-tokens {o}: output tokens are for --method inference (training has no generation)"
            )));
        }
        job.output_tokens = bound("output-tokens", o, input::output_tokens(f64::from(o), job.seq_len))?;
    }
    job.micro_batch = args.micro_batch.max(1);
    job.grad_checkpointing = !args.no_grad_checkpointing;
    job.zero_stage = match args.zero_stage {
        Some(s) if s > 3 => {
            return Err(CliError::usage(format!("--zero-stage {s}: ZeRO stages are 0, 1, 2 and 3")))
        }
        s => s,
    };
    job.lora_rank = args.lora_rank.max(1);
    job.epochs = bound("epochs", args.epochs, input::epochs(args.epochs))?;
    if let Some(t) = &args.tokens {
        let n = parse_count(t).map_err(|e| CliError::usage(format!("--tokens: {e}")))?;
        job.tokens = bound("tokens", t, input::tokens(n))?;
    }
    let mut q = Question::new(job, today);
    let hours_per_day = bound("hours-per-day", args.hours_per_day, input::hours_per_day(args.hours_per_day))?;
    q.usage = Usage { hours_per_day, total_hours: None };
    if let Some(d) = args.days {
        let d = bound("days", d, input::days(d))?;
        if args.tokens.is_some() {
            return Err(CliError::usage("--days sets the hours of use when there are no --tokens; with --tokens the job's time estimate decides (use --deadline for a limit)"));
        }
        q.usage = Usage::daily(args.hours_per_day, d);
    }
    q.providers = args
        .providers
        .iter()
        .map(|p| gpuctl_core::parse_provider(p).map_err(output::unknown))
        .collect::<Result<_, _>>()?;
    q.gpus = args
        .gpu_filter
        .iter()
        .map(|g| cat.find_gpu(g).map(|g| g.id.clone()).map_err(output::unknown))
        .collect::<Result<_, _>>()?;
    let all_regions: Vec<&str> =
        cat.providers().iter().flat_map(|p| p.regions.iter().map(|r| r.id.as_str())).collect();
    for r in &args.regions {
        if !all_regions.contains(&r.as_str()) {
            return Err(output::unknown(gpuctl_core::UnknownName::new(
                "region",
                r,
                all_regions.iter().copied(),
            )));
        }
    }
    q.regions = args.regions.clone();
    q.modes = args
        .modes
        .iter()
        .map(|m| BillingMode::parse(m).map_err(output::unknown))
        .collect::<Result<_, _>>()?;
    q.gpu_count = args.gpus.map(|g| bound("gpus", g, input::gpus(f64::from(g)))).transpose()?;
    q.deadline_hours = match args.deadline.as_deref() {
        Some(d) => {
            let h = parse_hours(d).map_err(|e| CliError::usage(format!("--deadline: {e}")))?;
            Some(bound("deadline", d, input::deadline(h))?)
        }
        None => None,
    };
    q.budget_cny = args.budget.map(|b| bound("budget", b, input::budget_cny(b))).transpose()?;
    q.no_spot = args.no_spot;
    q.spot = spot_risk(args)?;
    if args.nodes.is_some_and(|n| n > 1) && q.job.method == Method::Inference {
        return Err(CliError::usage(
            "--nodes is for training: an inference estimate serves from one instance (tensor parallel over its GPUs)",
        ));
    }
    q.nodes = args.nodes;
    q.include_restricted = args.include_restricted;
    q.compat = gpuctl_core::CompatQuery {
        frameworks: args.frameworks.clone(),
        cuda: args.cuda.clone(),
        driver: args.driver.clone(),
    };
    Ok(q)
}

pub fn run(args: EstimateArgs) -> Result<ExitCode, CliError> {
    let cat = output::load_catalog(args.overlay.as_deref())?;
    let today = output::today()?;
    let q = question(&args, &cat, today)?;
    let mut ranking = rank(&cat, &q);
    let best_modes = ranking.offers.first().map(|o| {
        let prices: Vec<_> = cat
            .prices_for(o.provider, &o.instance, &o.region)
            .into_iter()
            .filter(|p| !(q.no_spot && p.mode == BillingMode::Spot))
            .collect();
        let mut jp = price_job(&prices, (o.hours_low, o.hours_high), &q.usage, q.job.total_tokens());
        // The modes compare whole clusters.
        jp.modes.iter_mut().for_each(|m| m.for_nodes(o.nodes));
        jp
    });
    let plan = args.stages.then(|| stages(&cat, &q));
    let ascend = gpuctl_core::ascend_availability(&cat, &q.compat);
    let exit = if ranking.offers.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS };
    // Written before anything is printed: a refused file (it exists, a bad --pick) is an error with
    // nothing half-done, and the message can name the row the table below shows.
    let wrote = match &args.spec_out {
        Some(path) => Some(write_spec(&args, &cat, &q, &ranking, today, path)?),
        None => None,
    };

    if args.json {
        if args.top > 0 {
            ranking.offers.truncate(args.top);
        }
        output::print_json(&Out {
            schema_version: gpuctl_core::SCHEMA_VERSION,
            today,
            question: &q,
            ranking: &ranking,
            best_instance_modes: best_modes,
            stages: plan.as_ref(),
            ascend,
        })?;
        if let Some(w) = &wrote {
            // stdout holds the JSON document; the note goes to stderr.
            eprintln!("{w}");
        }
        return Ok(exit);
    }
    if let Some(a) = &ascend {
        crate::outln!("{a}");
        crate::outln!();
    }
    print_human(&args, &q, &ranking, best_modes.as_ref(), plan.as_ref());
    if let Some(w) = &wrote {
        crate::outln!();
        crate::outln!("{w}");
    }
    Ok(exit)
}

/// The public key the written spec names: `--public-key` (made absolute, since the spec resolves a
/// relative path against its own folder), checked to be one the cloud's key-pair import takes; else
/// the first of the usual files in `~/.ssh` that exists and the cloud takes, written `~/.ssh/…` so
/// the spec stays the user's own. `None`: there is none.
fn public_key_for_spec(
    given: Option<&std::path::Path>,
    provider: gpuctl_core::Provider,
) -> Result<Option<String>, CliError> {
    const MAX_KEY_BYTES: u64 = 16 << 10;
    let check = |p: &std::path::Path| -> Result<(), String> {
        let text = gpuctl_sign::file::read_string_bounded(p, MAX_KEY_BYTES).map_err(|e| e.reason())?;
        let key = gpuctl_provision::pubkey::PublicKey::parse(&text, &p.display().to_string())?;
        gpuctl_cloud::provider::imports_key_type(provider, &key.key_type)
    };
    if let Some(p) = given {
        check(p).map_err(|e| CliError::usage(format!("--public-key {}: {e}", p.display())))?;
        let abs = std::path::absolute(p)
            .map_err(|e| CliError::usage(format!("--public-key {}: {e}", p.display())))?;
        return Ok(Some(abs.display().to_string()));
    }
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else { return Ok(None) };
    for name in ["id_ed25519.pub", "id_ecdsa.pub", "id_rsa.pub"] {
        let p = home.join(".ssh").join(name);
        if p.is_file() && check(&p).is_ok() {
            return Ok(Some(format!("~/.ssh/{name}")));
        }
    }
    Ok(None)
}

/// The table's rows: one per provider, family, GPU count and mode (the cheapest, smallest machine),
/// each with how many sibling types have the same estimate. `--pick N` counts these rows.
fn table_rows(r: &Ranking) -> Vec<(&gpuctl_core::Offer, usize)> {
    let mut rows: Vec<(&gpuctl_core::Offer, usize)> = Vec::new();
    for o in &r.offers {
        match rows.iter_mut().find(|(x, _)| {
            x.provider == o.provider
                && x.family == o.family
                && x.gpu_count == o.gpu_count
                && x.nodes == o.nodes
                && x.mode == o.mode
        }) {
            Some((_, similar)) => *similar += 1,
            None => rows.push((o, 0)),
        }
    }
    rows
}

/// `--spec-out`: the chosen row's provisioning spec, written whole or not at all; returns the line
/// that says what was written and what to run next.
fn write_spec(
    args: &EstimateArgs,
    cat: &Catalog,
    q: &Question,
    r: &Ranking,
    today: Date,
    path: &std::path::Path,
) -> Result<String, CliError> {
    let rows = table_rows(r);
    if rows.is_empty() {
        return Err(CliError::failed(format!(
            "--spec-out {}: no offer can run this job, so there is no spec to write (--infeasible says why)",
            path.display()
        )));
    }
    let pick = args.pick.unwrap_or(1);
    if pick == 0 || pick > rows.len() {
        return Err(CliError::usage(format!("--pick {pick}: the table has rows 1 to {}", rows.len())));
    }
    let (offer, _) = rows[pick - 1];
    let model = q.job.model.name.clone();
    let today = today.to_string();
    let ctx = gpuctl_core::export::ExportContext {
        model: &model,
        method: q.job.method.as_str(),
        tokens: q.job.tokens,
        epochs: q.job.epochs,
        today: &today,
        pool: "train",
        by: "gpuctl estimate",
        public_key: None,
        ssh_from: &[],
        file: None,
        source: "gpuctl-estimate",
    };
    let file = path.display().to_string();
    let key = public_key_for_spec(args.public_key.as_deref(), offer.provider)?;
    let ctx = gpuctl_core::export::ExportContext {
        public_key: key.as_deref(),
        ssh_from: &args.ssh_from,
        file: Some(&file),
        ..ctx
    };
    let text = gpuctl_core::export::export(cat, offer, &ctx);
    output::write_new_file(path, &text, args.overwrite)?;
    Ok(format!(
        "Wrote {} for row {pick} ({} {} in {}, {}). Next: gpuctl plan {0}, then gpuctl provision {0}.",
        path.display(),
        offer.provider,
        offer.instance,
        offer.region,
        offer.mode
    ))
}

fn print_human(
    args: &EstimateArgs,
    q: &Question,
    r: &Ranking,
    best: Option<&JobPrice>,
    plan: Option<&StagePlan>,
) {
    let j = &q.job;
    let tokens = if j.tokens > 0.0 {
        format!("{} tokens × {} epochs", count(j.tokens), j.epochs)
    } else {
        match q.usage.total_hours {
            Some(h) => format!("{h:.0} h of use at {} h/day", q.usage.hours_per_day),
            None => "no tokens given".into(),
        }
    };
    crate::outln!(
        "{} ({:.2}B params) · {} · {} · seq {}{} · {} {}{}",
        j.model.name,
        j.model.params / 1e9,
        j.method.as_str(),
        tokens,
        j.seq_len,
        if j.method == Method::Inference && j.output_tokens > 0 {
            format!(" ({} prompt + {} output)", j.prompt_tokens(), j.seq_len - j.prompt_tokens())
        } else {
            String::new()
        },
        if j.method == Method::Inference { "batch" } else { "micro-batch" },
        j.micro_batch,
        match (j.method, j.grad_checkpointing) {
            (Method::Inference, _) => "",
            (_, true) => " · checkpointing on",
            (_, false) => " · checkpointing off",
        }
    );
    crate::outln!("{}", r.price_age);
    crate::outln!();

    if let Some(o) = r.offers.first() {
        let b = &o.fit.breakdown;
        let sharding = match (q.job.method, o.fit.devices) {
            (_, 1) => String::new(),
            (Method::Inference, d) => format!(", tensor parallel over {d}"),
            (_, _) => format!(", ZeRO stage {}", o.fit.zero_stage),
        };
        let sharding = match &o.cluster {
            Some(c) if c.sharding == gpuctl_core::Sharding::Hybrid => {
                format!("{sharding} inside each of {} nodes, a replica per node", o.nodes)
            }
            Some(_) => format!("{sharding} over all {} nodes", o.nodes),
            None => sharding,
        };
        crate::outln!(
            "Memory per GPU on the cheapest offer ({} × {}{sharding}): weights {:.1} + grads {:.1} + optimizer {:.1} + adapters {:.1} + activations {:.1} + KV cache {:.1} + overhead {:.1} = {:.1} GB of {:.0} GB",
            o.gpu_count, o.gpu_name, b.weights_gb, b.gradients_gb, b.optimizer_gb, b.adapters_gb,
            b.activations_gb, b.kv_cache_gb, b.overhead_gb, o.fit.need_gb, o.fit.vram_gb
        );
        crate::outln!();
        let mut t = table([
            "#",
            "provider",
            "instance",
            "GPUs",
            "region",
            "mode",
            "price",
            "time",
            "cost",
            "¥/1M tok",
            "mem/GPU",
            "notes",
        ]);
        // Siblings with the same estimate are counted in the notes. `--json` keeps every offer.
        let rows = table_rows(r);
        let n = if args.top == 0 { rows.len() } else { args.top.min(rows.len()) };
        for (k, (o, similar)) in rows.iter().take(n).enumerate() {
            let similar = *similar;
            let mut notes = Vec::new();
            match o.price.confidence {
                gpuctl_core::Confidence::Estimate => notes.push("est. price"),
                gpuctl_core::Confidence::Brief => notes.push("brief price"),
                gpuctl_core::Confidence::User => notes.push("your price"),
                _ => {}
            }
            if o.mode == BillingMode::Spot {
                notes.push("interruptible");
            }
            if o.gpu_count < 1.0 {
                notes.push("vGPU slice");
            }
            let net = o.cluster.as_ref().map(|c| {
                let (compute, network) = (c.compute_s_per_step.1, c.network_s_per_step.1);
                format!(
                    "{} sharding, {} Gbit/s{}, network {:.0} % of a step",
                    match c.sharding {
                        gpuctl_core::Sharding::Hybrid => "hybrid",
                        gpuctl_core::Sharding::Full => "full",
                    },
                    c.net_gbps,
                    if c.over_rdma { " RDMA" } else { "" },
                    100.0 * network / (compute + network)
                )
            });
            if let Some(n) = &net {
                notes.push(n);
            }
            if o.warning_codes.iter().any(|w| matches!(w, gpuctl_core::Warning::SlowNodeLink { .. })) {
                notes.push("slow link (< 10 Gbit/s)");
            }
            let more = format!("+{similar} similar types");
            if similar > 0 {
                notes.push(&more);
            }
            t.add_row(vec![
                (k + 1).to_string(),
                o.provider.to_string(),
                o.instance.clone(),
                if o.nodes > 1 {
                    format!("{} nodes × {}×{}", o.nodes, o.gpu_count, o.gpu)
                } else {
                    format!("{}×{}", o.gpu_count, o.gpu)
                },
                o.region.clone(),
                o.mode.to_string(),
                format!("{}/{}", cny(o.price.cny), o.mode.unit()),
                range(o.hours_low, o.hours_high, hours),
                range(o.cost_low, o.cost_high, cny),
                match (o.cny_per_1m_tokens_low, o.cny_per_1m_tokens_high) {
                    (Some(a), Some(b)) => range(a, b, cny),
                    _ => "—".into(),
                },
                format!("{:.1}/{:.0} GB", o.fit.need_gb, o.fit.vram_gb),
                notes.join(", "),
            ]);
        }
        crate::outln!("{t}");
        if rows.len() > n {
            crate::outln!("… {} more rows (--top 0 shows all; --json lists every offer)", rows.len() - n);
        }
    } else {
        crate::outln!("No offer can run this job.");
    }

    if let (Some(o), Some(jp)) = (r.offers.first(), best) {
        crate::outln!();
        let of = if o.nodes > 1 { format!(" (the whole {}-node cluster)", o.nodes) } else { String::new() };
        crate::outln!("Billing modes for {} {} in {}{of}:", o.provider, o.instance, o.region);
        for m in &jp.modes {
            crate::outln!(
                "  {:<8} {:>14}/{:<7} → {}{}",
                m.mode.as_str(),
                cny(m.price.cny),
                m.mode.unit(),
                range(m.cost_low, m.cost_high, cny),
                match m.price.confidence {
                    gpuctl_core::Confidence::Estimate => " (estimated price)",
                    gpuctl_core::Confidence::Brief => " (brief-quoted price, unverified)",
                    gpuctl_core::Confidence::User => " (your price)",
                    _ => "",
                }
            );
        }
        for b in &jp.break_even {
            crate::outln!("  break-even: {}", b.text);
        }
    }

    if !r.infeasible.is_empty() {
        crate::outln!();
        if args.infeasible {
            crate::outln!("Cannot run this job:");
            for i in &r.infeasible {
                let mode = i.mode.map_or(String::new(), |m| format!(" ({m})"));
                crate::outln!(
                    "  {} {}{} ({}×{}): {}",
                    i.provider,
                    i.instance,
                    mode,
                    i.gpu_count,
                    i.gpu,
                    i.reasons.join("; ")
                );
            }
        } else {
            // One line per GPU kind, so "7B full fine-tune does not fit 24 GB" is said without a flag.
            let mut seen: Vec<(String, String)> = Vec::new();
            for i in r.infeasible.iter().filter(|i| i.mode.is_none()) {
                let key = format!("{}×{}", i.gpu_count, i.gpu);
                if !seen.iter().any(|(k, _)| *k == key) {
                    seen.push((key, i.reasons.join("; ")));
                }
            }
            crate::outln!(
                "Cannot run it ({} instance types or offers; --infeasible lists each):",
                r.infeasible.len()
            );
            for (k, why) in seen.iter().take(8) {
                crate::outln!("  {k}: {why}");
            }
            if seen.len() > 8 {
                crate::outln!("  … {} more GPU configurations", seen.len() - 8);
            }
        }
    }

    if let Some(plan) = plan {
        crate::outln!();
        crate::outln!("Staged plan:");
        for s in &plan.stages {
            crate::outln!("  {:<9} {}", s.name, s.why);
            crate::outln!("            {}", s.purpose);
        }
        crate::outln!("  total (high estimate): {}", cny(plan.total_cost_high));
    }

    if !r.warnings.is_empty() {
        crate::outln!();
        crate::outln!("Warnings:");
        for w in &r.warnings {
            crate::outln!("  - {w}");
        }
    }
    crate::outln!();
    crate::outln!("Assumptions:");
    for a in &r.assumptions {
        crate::outln!("  - {a}");
    }
}

/// 50000000 → "50M".
fn count(v: f64) -> String {
    for (d, s) in [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")] {
        if v >= d {
            let x = v / d;
            return if x.fract() == 0.0 { format!("{x:.0}{s}") } else { format!("{x:.1}{s}") };
        }
    }
    format!("{v:.0}")
}

/// The spot-reclaim inputs (issue 15), each held to a range that still means something.
fn spot_risk(args: &EstimateArgs) -> Result<gpuctl_core::SpotRisk, CliError> {
    let mut r = gpuctl_core::SpotRisk::default();
    if let Some(rate) = args.spot_reclaims_per_day {
        if !(rate.is_finite() && (0.0..=48.0).contains(&rate)) {
            return Err(CliError::usage(format!(
                "--spot-reclaims-per-day: {rate} is not between 0 and 48 reclaims a day"
            )));
        }
        r.reclaims_per_day = rate;
    }
    let duration = |flag: &str, given: &Option<String>, max: f64| -> Result<Option<f64>, CliError> {
        let Some(text) = given else { return Ok(None) };
        let h = parse_hours(text).map_err(|e| CliError::usage(format!("--{flag}: {e}")))?;
        if h > max {
            return Err(CliError::usage(format!("--{flag}: {text} is more than {max} hours")));
        }
        Ok(Some(h))
    };
    if let Some(h) = duration("checkpoint-every", &args.checkpoint_every, 720.0)? {
        r.checkpoint_every_hours = h;
    }
    if let Some(h) = duration("restart-time", &args.restart_time, 48.0)? {
        r.restart_hours = h;
    }
    Ok(r)
}
