//! A provisioning spec for a chosen offer: the stage TOML that the browser calculator's "Export spec"
//! and `gpuctl estimate --spec-out` write, in the deployment-spec format gpuctl-provision reads
//! (`gpuctl plan` / `gpuctl provision`; see infra/stage*.toml for every key explained). Pure: here in
//! core so the page and the CLI write the same file.
//!
//! The file is complete and valid as exported — a native test parses it with gpuctl-provision's own
//! spec parser. The image is a name the provisioner resolves; the network is `auto` (gpuctl finds or
//! makes the zone's VPC, subnet and security group) on every cloud.

use crate::catalog::{BillingMode, Catalog, Provider};
use crate::rank::Offer;
use crate::storage::{self, StorageKind};
use crate::units::{count, grouped};

/// What the exported file is for (names the deployment and pool, and is echoed in its header).
#[derive(Clone, Debug, PartialEq)]
pub struct ExportContext<'a> {
    /// e.g. "qwen2.5-7b"
    pub model: &'a str,
    /// e.g. "lora"
    pub method: &'a str,
    pub tokens: f64,
    pub epochs: f64,
    /// `YYYY-MM-DD`, passed in (the page reads the clock, this module does not).
    pub today: &'a str,
    /// The pool's name: the stage ("validate", "tune", "produce") or "train".
    pub pool: &'a str,
    /// Who wrote the file, for its first line: "the gpuctl browser calculator", "gpuctl estimate".
    pub by: &'a str,
    /// The user's public key as the spec names it (`~/.ssh/id_ed25519.pub`), imported once per cloud
    /// and region by `provision`; `None`: the file says to add one.
    pub public_key: Option<&'a str>,
    /// Where SSH may come from (CIDR blocks) when gpuctl makes the network; empty: anywhere, said so.
    pub ssh_from: &'a [String],
    /// The file's name as the user will type it in the header's next steps (`estimate --spec-out`'s
    /// path); `None`: `<deployment>.toml`, the name the browser calculator's download suggests.
    pub file: Option<&'a str>,
    /// The `source` tag every resource of the deployment carries: which face wrote the spec
    /// ("gpuctl-web", "gpuctl-estimate"), so the console shows where a bill line came from.
    pub source: &'a str,
}

/// A TOML basic string. JSON string escapes (`\"`, `\\`, `\n`, `\u00XX`) are all valid TOML
/// basic-string escapes, so serde_json does the quoting.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// `qwen2.5-7b` + `lora` → `qwen2-5-7b-lora`: a-z, 0-9, '-', starting with a letter, ≤ 40 chars.
pub fn deployment_name(model: &str, method: &str) -> String {
    let mut out = String::new();
    for ch in format!("{model}-{method}").chars() {
        let c = ch.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let mut name = out.trim_matches('-').to_string();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name.insert_str(0, "job-");
    }
    name.truncate(40);
    name.trim_end_matches('-').to_string()
}

/// The public key a spec names when the user's own files cannot be seen (the page): the usual RSA
/// key where the cloud's key-pair import takes no Ed25519 (Tencent: RSA only; Alibaba: RSA, DSA,
/// ECDSA — gpuctl-cloud's `provider::imports_key_type` cites both), else the usual ed25519 one.
pub fn usual_public_key(provider: Provider) -> &'static str {
    match provider {
        Provider::Tencent | Provider::Alibaba => "~/.ssh/id_rsa.pub",
        Provider::JdCloud => "~/.ssh/id_ed25519.pub",
    }
}

/// The image, by name: `gpuctl plan` resolves it to the region's newest public Ubuntu 22.04 image
/// through the cloud's image API and shows the id and name it chose.
const IMAGE: &str = "ubuntu-22.04";

/// Prepaid terms to buy for the job, within what the spec accepts per mode.
/// The exported pool's system disk and one data disk: (gpuctl's disk category, GB).
const DISKS: [(&str, u32); 2] = [("ssd", 100), ("ssd", 200)];

fn term(mode: BillingMode, terms_high: f64) -> Option<u32> {
    let max = match mode {
        BillingMode::Hourly | BillingMode::Spot => return None,
        BillingMode::Weekly => 4,
        BillingMode::Monthly => 36,
        BillingMode::Year1 | BillingMode::Year3 => 1,
    };
    Some((terms_high.ceil() as u32).clamp(1, max))
}

/// The stage TOML for one engine offer (an instance type in a region under one billing mode).
pub fn export(catalog: &Catalog, o: &Offer, ctx: &ExportContext<'_>) -> String {
    let deployment = deployment_name(ctx.model, ctx.method);
    let zone = catalog
        .provider(o.provider)
        .and_then(|p| p.regions.iter().find(|r| r.id == o.region))
        .and_then(|r| r.zones.first().cloned())
        .unwrap_or_else(|| format!("{}-a", o.region));
    // The spec names the type as the cloud's API does (the catalog's `api_type_prefix`).
    let instance_type = catalog.api_type(o.provider, &o.instance);
    let hours = o.hours_high.ceil().clamp(1.0, 26_280.0);
    // The budget must hold what `gpuctl plan` will total: whole hours for per-hour modes (`hours` is
    // rounded up), whole terms otherwise; 10 % above the larger of that and the engine's estimate.
    let billed = if o.mode.is_per_hour() {
        hours * o.price.cny
    } else {
        term(o.mode, o.terms_high).unwrap_or(1) as f64 * o.price.cny
    };
    // The disks written below bill beside the instance, and plan totals them at core's storage prices
    // (pay-as-you-go per GB-hour over the hours, prepaid per GB-month over the terms bought): the budget
    // holds them too, or the exported spec is refused by its own budget. A class with no published
    // price counts nothing here, as in plan.
    let disks: f64 = DISKS
        .iter()
        .filter_map(|(word, gb)| {
            let row = storage::lookup(o.provider, StorageKind::Disk, word, &o.region).ok()?;
            let per_gb = if o.mode.is_per_hour() {
                row.usage_per_hour()?.cny * hours
            } else {
                let terms = f64::from(term(o.mode, o.terms_high).unwrap_or(1));
                row.prepaid_per_month()?.cny * terms * o.mode.term_hours() / storage::HOURS_PER_MONTH
            };
            Some(per_gb * f64::from(*gb))
        })
        .sum();
    // A cluster bills every node (`cost_high` is already the whole cluster's).
    let nodes = o.nodes.max(1);
    let budget = ((o.cost_high.max(billed * f64::from(nodes)) + disks * f64::from(nodes)) * 1.1).ceil();
    let p = &o.price;

    let mut s = String::new();
    let mut line = |l: &str| {
        s.push_str(l);
        s.push('\n');
    };
    line(&format!(
        "# Exported by {} on {}: {} {}, {} tokens × {} epoch(s).",
        ctx.by,
        ctx.today,
        ctx.model,
        ctx.method,
        count(ctx.tokens),
        ctx.epochs
    ));
    line(&format!(
        "# Offer: {} {} ({}{} × {}) in {}, billed {}; estimated {:.1}–{:.1} h of work, ¥{}–¥{}.",
        o.provider,
        o.instance,
        if nodes > 1 { format!("{nodes} nodes × ") } else { String::new() },
        o.gpu_count,
        o.gpu_name,
        o.region,
        o.mode,
        o.hours_low,
        o.hours_high,
        grouped(o.cost_low, 2),
        grouped(o.cost_high, 2)
    ));
    line(&format!(
        "# Price: ¥{} per {} as of {} ({}; confidence {}{}).",
        grouped(p.cny, 2),
        o.mode.unit(),
        p.as_of,
        p.source,
        p.confidence.as_str(),
        if p.derivation.is_empty() { String::new() } else { format!("; {}", p.derivation) }
    ));
    line("#");
    let file = ctx.file.map_or_else(|| format!("{deployment}.toml"), str::to_owned);
    line(&format!("#   gpuctl plan {file}        # what would be created and what it costs"));
    line(&format!("#   gpuctl provision {file}   # create it"));
    line("#");
    line("# The image is a name (plan shows the id it resolves to); read ssh_from and login_key below.");
    line("# Every key is explained in infra/stage1.toml.");
    line("");
    line(&format!("deployment = {}", quoted(&deployment)));
    line(&format!("hours = {hours}  # high estimate of the work, rounded up"));
    line("");
    line("[budget]");
    line(&format!(
        "total_cny = {budget}  # what plan will total (whole hours or terms, disks included), + 10 %"
    ));
    line("");
    line("[[pool]]");
    line(&format!("name = {}", quoted(&deployment_name(ctx.pool, ""))));
    if nodes > 1 {
        // The engine's multi-node offer (issue 14): the nodes of one job, placed and moved together.
        line(&format!("count = {nodes}  # the cluster's nodes"));
        line("cluster = true  # all nodes in one zone and subnet, moved together on a stock-out (no placement group or shared storage yet)");
    } else {
        line("count = 1");
    }
    line(&format!("billing = {}", quoted(o.mode.as_str())));
    if let Some(t) = term(o.mode, o.terms_high) {
        line(&format!("term = {t}  # {t} × {}", o.mode.unit()));
    }
    line(&format!(
        "image = {}  # the region's newest public image of it; plan shows id and name",
        quoted(IMAGE)
    ));
    match ctx.public_key {
        Some(k) => line(&format!(
            "login_key = {{ public_key = {} }}  # imported once per cloud and region; no passwords",
            quoted(k)
        )),
        None => {
            line("# login_key = { public_key = \"~/.ssh/id_ed25519.pub\" }  # add your public key to log in")
        }
    }
    let [(sys_class, sys_gb), (data_class, data_gb)] = DISKS;
    line(&format!("system_disk = {{ category = {}, size_gb = {sys_gb} }}", quoted(sys_class)));
    line(&format!(
        "data_disks = [{{ category = {}, size_gb = {data_gb} }}]  # datasets and checkpoints",
        quoted(data_class)
    ));
    // gpuctl finds or makes the zone's VPC, subnet and security group on every cloud (issue 13): a
    // new account has no default network on JD Cloud at all, and may have none in a zone elsewhere.
    line("network = \"auto\"  # a VPC, subnet and security group gpuctl finds or makes in the zone");
    if ctx.ssh_from.is_empty() {
        line("ssh_from = [\"0.0.0.0/0\"]  # SSH (key only) from anywhere: narrow it to your address");
    } else {
        let cidrs: Vec<String> = ctx.ssh_from.iter().map(|c| quoted(c)).collect();
        line(&format!("ssh_from = [{}]  # where SSH may come from", cidrs.join(", ")));
    }
    line("snapshot = { before_release = true }");
    line(&format!("tags = {{ source = {}, model = {} }}", quoted(ctx.source), quoted(ctx.model)));
    line(&format!("provider = {}", quoted(o.provider.as_str())));
    line(&format!("region = {}", quoted(&o.region)));
    line(&format!("zone = {}  # first listed zone; stock varies by zone", quoted(&zone)));
    line(&format!("instance_type = {}", quoted(&instance_type)));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_names_follow_the_spec_rule() {
        let check = |m, meth, expected: &str| assert_eq!(deployment_name(m, meth), expected);
        check("qwen2.5-7b", "lora", "qwen2-5-7b-lora");
        check("", "qlora4", "qlora4");
        check("7b", "full", "job-7b-full");
        check("Llama 3.1 / 8B!!", "lora", "llama-3-1-8b-lora");
        assert!(deployment_name(&"x".repeat(80), "lora").len() <= 40);
    }

    #[test]
    fn quoting_is_toml() {
        assert_eq!(quoted("a\"b\\c\nd"), r#""a\"b\\c\nd""#);
    }
}
