//! The node agent (issue 15): a small Python program gpuctl renders into a pool's boot config when
//! the pool has `idle = { … }` or `spot = { on_notice = … }`, so that an idle GPU is stopped or
//! released — and a spot reclaim notice acted on — while the user's own gpuctl is not running.
//!
//! Why Python and the clouds' SDKs: the agent signs its calls with the clouds' own official SDKs
//! (pinned, installed from the cloud's PyPI mirror at boot), not with gpuctl's signer, so the node runs
//! no gpuctl binary and what it sends is what the clouds' own code sends. Why no key: it reads the
//! instance role's temporary credentials from the metadata service and refreshes them before they
//! expire (docs/idle-agent.md); nothing rendered here is a secret (the user data is kept and shown by
//! the cloud). Why a config file: the metadata base, the API hosts and the poll periods are data, so
//! a test points them at the local cloud (`gpuctl sim`) and runs the very program that was rendered.
//!
//! What is rendered, as `write_files` entries of the `#cloud-config` (`crate::boot`): the program
//! ([`PROGRAM_PATH`], root-only), its config ([`CONFIG_PATH`], JSON) and a systemd unit; `runcmd`
//! makes a virtualenv, pip-installs the pinned SDKs and starts the unit.

use crate::provider::{agent_facts, AgentFacts, Provider};
use crate::spec::Pool;

/// The agent program, as shipped (checked by `python3 -m py_compile` in step 15).
pub const PROGRAM: &str = include_str!("agent.py");
pub const PROGRAM_PATH: &str = "/var/lib/gpuctl/agent/agent.py";
pub const CONFIG_PATH: &str = "/etc/gpuctl/agent.json";
pub const UNIT_PATH: &str = "/etc/systemd/system/gpuctl-agent.service";
/// The virtualenv the SDKs are installed into.
pub const VENV: &str = "/var/lib/gpuctl/agent/venv";
/// Where the agent keeps its markers (the notice hook's "done").
pub const STATE_DIR: &str = "/var/lib/gpuctl/agent/state";

/// How often the agent reads the spot notice path (seconds): Alibaba's notice comes 5 minutes ahead,
/// Tencent's lead time is not documented, so a few seconds.
pub const NOTICE_POLL_S: u64 = 5;
/// How often it asks the monitoring API (seconds): once a period of the series is enough.
pub const IDLE_POLL_S: u64 = 60;

/// Whether the agent can run on `p` (JD: no instance-role credentials and no notice path found).
pub fn supported(p: Provider) -> bool {
    agent_facts(p).is_some()
}

/// Whether `pool` needs the agent at all.
pub fn wanted(pool: &Pool) -> bool {
    pool.idle.is_some() || pool.spot_notice.is_some()
}

/// The instance role a pool's instances are created with (`CamRoleName` / `RamRoleName`): only an
/// idle policy needs credentials; the notice hook reads the metadata service alone.
pub fn role(pool: &Pool) -> Option<String> {
    pool.idle.as_ref().map(|i| i.role.clone())
}

/// The agent's config for `pool` on `p` (the real clouds' endpoints); `None` when the pool needs no
/// agent or `p` cannot run one.
pub fn config(pool: &Pool, p: Provider) -> Option<serde_json::Value> {
    if !wanted(pool) {
        return None;
    }
    let f: &AgentFacts = agent_facts(p)?;
    let (ns, metric, dim, period) = f.metric;
    Some(serde_json::json!({
        "provider": p.as_str(),
        "metadata_base": f.metadata_base,
        "notice_path": f.notice_path,
        "credentials_path": f.credentials_path,
        "region_path": f.region_path,
        "compute_endpoint": f.compute_endpoint,
        "monitor_endpoint": f.monitor_endpoint,
        "scheme": "https",
        "metric": [ns, metric, dim, period],
        "role": role(pool),
        "idle": pool.idle.as_ref().map(|i| serde_json::json!({
            "below_percent": i.below_percent,
            "for_s": i.for_s,
            // Ask for twice the window: the verdict is judged on the cloud's clock (its answer's end).
            "lookback_s": i.for_s,
            "then": i.then.as_str(),
        })),
        "notice": pool.spot_notice.as_ref().map(|n| serde_json::json!({
            "command": n.command,
            "timeout_s": n.timeout_s,
        })),
        "poll": { "notice_s": NOTICE_POLL_S, "idle_s": IDLE_POLL_S },
        "state_dir": STATE_DIR,
    }))
}

/// The systemd unit: restarted when it fails (metadata service not up yet), not after it acted.
const UNIT: &str = "[Unit]
Description=gpuctl node agent
After=network-online.target
Wants=network-online.target

[Service]
ExecStart=/var/lib/gpuctl/agent/venv/bin/python /var/lib/gpuctl/agent/agent.py /etc/gpuctl/agent.json
Restart=on-failure
RestartSec=30

[Install]
WantedBy=multi-user.target
";

/// The files to write: (path, permissions, content).
pub fn files(pool: &Pool, p: Provider) -> Vec<(&'static str, &'static str, String)> {
    let Some(cfg) = config(pool, p) else { return Vec::new() };
    // One line: every byte counts against Tencent's 16 KiB of base64 user data.
    let cfg = serde_json::to_string(&cfg).unwrap_or_default();
    vec![
        (PROGRAM_PATH, "0700", PROGRAM.to_string()),
        (CONFIG_PATH, "0600", cfg + "\n"),
        (UNIT_PATH, "0644", UNIT.to_string()),
    ]
}

/// The shell lines that install the SDKs and start the agent (run by `runcmd`, before the boot
/// script, so a failing boot step does not leave the GPUs unwatched). Ubuntu's cloud images lack
/// `python3-venv`: it is installed when `venv` fails.
pub fn install(p: Provider) -> Option<String> {
    let f = agent_facts(p)?;
    Some(format!(
        "(python3 -m venv {VENV} || (apt-get update -qq && apt-get install -y -qq python3-venv && python3 -m venv {VENV})) && {VENV}/bin/pip install --quiet --index-url {} {} && systemctl daemon-reload && systemctl enable --now gpuctl-agent.service",
        f.pypi_index,
        f.sdk.join(" ")
    ))
}

/// The files of a rendered `#cloud-config`'s `write_files` whose content is a literal block, as
/// `crate::boot` writes them: (path, content). For tests that run what was rendered.
pub fn written_files(cloud_config: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = cloud_config.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(path) = line.strip_prefix("  - path: ") else { continue };
        // Skip to `content: |`, then take the block indented by six spaces (blank lines included);
        // or take a one-line gzipped content.
        let mut gz = false;
        let mut one_line = None;
        for l in lines.by_ref() {
            let l = l.trim_start();
            if l == "encoding: gz+b64" {
                gz = true;
            } else if l == "content: |" {
                break;
            } else if let Some(c) = l.strip_prefix("content: ") {
                one_line = Some(c.to_string());
                break;
            }
        }
        if let Some(c) = one_line {
            let text = if gz { un_gz_b64(&c).unwrap_or_default() } else { c };
            out.push((path.to_string(), text));
            continue;
        }
        let mut content = String::new();
        while let Some(l) = lines.peek() {
            if let Some(rest) = l.strip_prefix("      ") {
                content.push_str(rest);
            } else if !l.is_empty() {
                break;
            }
            content.push('\n');
            lines.next();
        }
        out.push((path.to_string(), content));
    }
    out
}

/// Adds the agent to a `#cloud-config` rendered by `crate::boot` (its `write_files` list is followed
/// by `runcmd:`): the agent's files join `write_files`, and its install line runs first.
pub fn add_to_cloud_config(text: &str, pool: &Pool, p: Provider) -> String {
    let (Some(install), files) = (install(p), files(pool, p)) else { return text.to_string() };
    if files.is_empty() {
        return text.to_string();
    }
    let Some(at) = text.find("\nruncmd:\n") else { return text.to_string() };
    let mut entries = String::new();
    for (path, mode, content) in &files {
        if *path == PROGRAM_PATH {
            // The program gzipped (cloud-init's `encoding: gz+b64`): as plain text it alone would take
            // most of Tencent's 16 KiB of base64 user data.
            entries.push_str(&format!(
                "  - path: {path}\n    owner: root:root\n    permissions: '{mode}'\n    encoding: gz+b64\n    content: {}\n",
                gz_b64(content)
            ));
            continue;
        }
        entries.push_str(&format!(
            "  - path: {path}\n    owner: root:root\n    permissions: '{mode}'\n    content: |\n"
        ));
        for line in content.lines() {
            if line.is_empty() {
                entries.push('\n');
            } else {
                entries.push_str("      ");
                entries.push_str(line);
                entries.push('\n');
            }
        }
    }
    let (head, tail) = text.split_at(at + 1);
    let tail = tail.replacen("runcmd:\n", &format!("runcmd:\n  - [bash, -c, \"{install}\"]\n"), 1);
    format!("{head}{entries}{tail}")
}

fn gz_b64(text: &str) -> String {
    use base64::Engine as _;
    use std::io::Write as _;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing to a Vec cannot fail.
    let _ = gz.write_all(text.as_bytes());
    let bytes = gz.finish().unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn un_gz_b64(b64: &str) -> Option<String> {
    use base64::Engine as _;
    use std::io::Read as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64.trim()).ok()?;
    let mut out = String::new();
    // Bounded: our own program is far below 1 MiB.
    flate2::read::GzDecoder::new(&bytes[..]).take(1 << 20).read_to_string(&mut out).ok()?;
    Some(out)
}

/// One line for `gpuctl plan`: what the agent will do on the clouds the pool may land on, and what
/// still bills while an instance is stopped. `None` without an agent.
pub fn plan_line(pool: &Pool, providers: &[Provider]) -> Option<String> {
    if !wanted(pool) {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(i) = &pool.idle {
        let span =
            if i.for_s % 3600 == 0 { format!("{}h", i.for_s / 3600) } else { format!("{}m", i.for_s / 60) };
        match i.then {
            crate::spec::IdleAction::Stop => {
                let bills: Vec<String> = providers
                    .iter()
                    .filter_map(|p| agent_facts(*p).map(|f| format!("on {p} {}", f.stopped_still_bills)))
                    .collect();
                parts.push(format!(
                    "stops an instance without charge once its GPUs stay below {}% for {span} ({})",
                    i.below_percent,
                    bills.join("; ")
                ));
            }
            crate::spec::IdleAction::Release => parts.push(format!(
                "releases an instance once its GPUs stay below {}% for {span}",
                i.below_percent
            )),
        }
        parts.push(format!(
            "with role `{}`'s credentials (attach the policy in docs/idle-agent.md to that role)",
            i.role
        ));
    }
    if let Some(n) = &pool.spot_notice {
        parts.push(format!(
            "runs the on_notice hook once when the cloud gives spot reclaim notice (at most {} s)",
            n.timeout_s
        ));
    }
    Some(format!("node agent (runs on the instance, while gpuctl is off): {}", parts.join("; ")))
}
