//! `gpuctl clone <instance|deployment/pool>` — "购买相同配置": describe the source instance, normalize
//! it into a spec (same zone, type, image, disks, network, security groups, billing, tags), then the
//! normal plan → provision path. Works for instances gpuctl did not create (give --provider and
//! --region). `--from-snapshot` snapshots the source first and creates the data disks from those
//! snapshots; the system disk comes from the source's image. `--spec-out` keeps the spec for reuse.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use gpuctl_cloud::cloud::{DiskKind, Instance};
use gpuctl_provision::spec::{self, DiskCategory, Limits};
use gpuctl_provision::{BillingMode, Provider};
use toml_edit::{value, Array, DocumentMut, InlineTable, Item, Table};

use super::plan::{make_plan, print_plan};
use super::provision::{exit_for, print_report};
use super::provisioning::{
    apply_error, confirm, resolve, snapshot_instance, state_error, CloudArgs, Session, Target,
    EXIT_OVER_BUDGET,
};
use super::CliError;
use crate::output::{load_catalog, print_json};

#[derive(Args, Debug)]
pub struct CloneArgs {
    /// The source: an instance id, or deployment/pool (its first live instance)
    pub source: String,
    /// How many copies
    #[arg(long, default_value_t = 1)]
    pub count: u32,
    /// Snapshot the source's disks and create the copies' data disks from them
    #[arg(long)]
    pub from_snapshot: bool,
    /// Also write the normalized spec to this file
    #[arg(long, value_name = "FILE")]
    pub spec_out: Option<PathBuf>,
    /// Deployment name for the copies (default: <source deployment>-clone, or clone-<instance id>)
    #[arg(long)]
    pub deployment: Option<String>,
    /// The source's cloud, for an instance gpuctl has no record of
    #[arg(long)]
    pub provider: Option<String>,
    /// The source's region, for an instance gpuctl has no record of
    #[arg(long)]
    pub region: Option<String>,
    /// Write/print the spec and the plan; create nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask before creating
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

fn category(c: DiskCategory) -> &'static str {
    match c {
        DiskCategory::Ssd => "ssd",
        DiskCategory::Premium => "premium",
    }
}

/// Lower-cased a-z0-9- with a letter first: a name the spec accepts.
fn name_from(s: &str, max: usize) -> String {
    let mut out: String =
        s.to_ascii_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    if !out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out.insert_str(0, "c-");
    }
    out.truncate(max);
    out.trim_end_matches('-').to_string()
}

/// The spec a copy of `src` is made from, as TOML a person can read, edit and reuse.
fn spec_text(
    deployment: &str,
    pool: &str,
    count: u32,
    provider: Provider,
    src: &Instance,
    disks: &[(DiskKind, gpuctl_cloud::cloud::DiskInfo)],
    snapshots: &[(String, String)],
) -> String {
    let mut doc = DocumentMut::new();
    doc["deployment"] = value(deployment);
    let mut p = Table::new();
    p["name"] = value(pool);
    p["count"] = value(i64::from(count));
    p["provider"] = value(provider.as_str());
    p["region"] = value(src.region.as_str());
    p["zone"] = value(src.zone.as_str());
    p["instance_type"] = value(src.instance_type.as_str());
    let billing = src.billing.unwrap_or(BillingMode::Hourly);
    p["billing"] = value(billing.as_str());
    if let Some(img) = &src.image_id {
        p["image"] = value(img.as_str());
    }
    let disk_table = |d: &gpuctl_cloud::cloud::DiskInfo, snap: Option<&String>| {
        let mut t = InlineTable::new();
        t.insert("category", category(d.disk.category).into());
        t.insert("size_gb", i64::from(d.disk.size_gb).into());
        if let Some(s) = snap {
            t.insert("snapshot_id", s.as_str().into());
        }
        t
    };
    if let Some((_, sys)) = disks.iter().find(|(k, _)| *k == DiskKind::System) {
        p["system_disk"] = value(disk_table(sys, None));
    }
    let mut data = Array::new();
    for (_, d) in disks.iter().filter(|(k, _)| *k == DiskKind::Data) {
        let snap = snapshots.iter().find(|(disk, _)| disk == &d.disk_id).map(|(_, s)| s);
        data.push(disk_table(d, snap));
    }
    if !data.is_empty() {
        p["data_disks"] = value(data);
    }
    match &src.network {
        Some(n) => {
            let mut t = InlineTable::new();
            t.insert("vpc", n.vpc.as_str().into());
            t.insert("subnet", n.subnet.as_str().into());
            if !n.security_groups.is_empty() {
                t.insert(
                    "security_groups",
                    n.security_groups.iter().map(String::as_str).collect::<Array>().into(),
                );
            }
            p["network"] = value(t);
        }
        None => p["network"] = value("default"),
    }
    if let Some(k) = &src.login_key {
        p["login_key"] = value(k.as_str());
    }
    let user_tags: Vec<(&String, &String)> =
        src.tags.iter().filter(|(k, _)| !k.starts_with("gpuctl")).collect();
    if !user_tags.is_empty() {
        let mut t = InlineTable::new();
        for (k, v) in user_tags {
            t.insert(k.as_str(), v.as_str().into());
        }
        p["tags"] = value(t);
    }
    let mut pools = toml_edit::ArrayOfTables::new();
    pools.push(p);
    doc["pool"] = Item::ArrayOfTables(pools);
    let mut header =
        format!("# Made by `gpuctl clone` from {provider} instance {} (购买相同配置).\n", src.instance_id);
    if !billing.is_per_hour() {
        header +=
            "# The source is prepaid; its term is not visible through the API: check `billing` and `term`.\n";
    } else {
        header += "# Pay-as-you-go copies get an auto-release time (24 h by default): set auto_release to change it.\n";
    }
    if !snapshots.is_empty() {
        header +=
            "# Data disks start from snapshots of the source; the system disk from the source's image.\n";
    }
    format!("{header}{doc}")
}

pub fn run(args: CloneArgs) -> Result<ExitCode, CliError> {
    if args.count == 0 {
        return Err(CliError::usage("--count must be at least 1"));
    }
    let session = Session::open(&args.cloud, &[])?;
    let target = Target::parse(&args.source);
    // Where the source is: from the state, or from --provider/--region for instances gpuctl did not create.
    let (provider, region, instance_id, owner) = match (&target, &args.provider, &args.region) {
        (Target::Instance(id), Some(p), Some(r)) => {
            (Provider::parse(p).map_err(|e| CliError::usage(e.to_string()))?, r.clone(), id.clone(), None)
        }
        _ => {
            let r = resolve(&session.engine, &target)?.remove(0);
            let id = r.instance_id.clone().ok_or_else(|| {
                CliError::failed(format!("{}/{} #{} has no instance id yet", r.deployment, r.pool, r.index))
            })?;
            (r.provider, r.region.clone(), id, Some(r))
        }
    };
    let engine = &session.engine;
    let src = session
        .runtime
        .block_on(engine.describe_one(provider, &region, &instance_id))
        .map_err(apply_error)?;
    let disks =
        session.runtime.block_on(engine.disks(provider, &region, &instance_id)).map_err(apply_error)?;
    let mut snapshots = Vec::new();
    if args.from_snapshot && !args.dry_run {
        for s in snapshot_instance(&session, provider, &region, &instance_id, owner.as_ref())? {
            snapshots.push((s.disk_id, s.snapshot_id));
        }
    }
    let deployment = args.deployment.clone().unwrap_or_else(|| match &owner {
        Some(o) => name_from(&format!("{}-clone", o.deployment), 40),
        None => name_from(&format!("clone-{instance_id}"), 40),
    });
    let pool = owner.as_ref().map(|o| o.pool.clone()).unwrap_or_else(|| "clone".into());
    let text = spec_text(&deployment, &pool, args.count, provider, &src, &disks, &snapshots);
    let file = args
        .spec_out
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| format!("<clone of {instance_id}>"));
    if let Some(out) = &args.spec_out {
        std::fs::write(out, &text)
            .map_err(|e| CliError::failed(format!("cannot write {}: {e}", out.display())))?;
    }
    // The normalized spec goes through the same parser as a hand-written one.
    let spec = spec::parse(&file, &text, None, &Limits::default())
        .map_err(|e| CliError::failed(format!("the normalized spec does not parse (please report):\n{e}")))?;
    let catalog = load_catalog(None)?;
    let plan = engine.store(|s| make_plan(&spec, &catalog, s))?;
    if args.dry_run {
        if args.cloud.json {
            print_json(&serde_json::json!({ "spec": text, "plan": plan }))?;
        } else {
            print!("{text}");
            print_plan(&plan);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !plan.over_budget.is_empty() {
        return Ok(ExitCode::from(EXIT_OVER_BUDGET));
    }
    if !args.cloud.json {
        print_plan(&plan);
    }
    confirm(
        &format!("create {} copy(ies) of {instance_id} as {deployment}/{pool}?", plan.creates()),
        args.yes,
    )?;
    let _lock = engine.store(|s| s.lock(&deployment)).map_err(state_error)?;
    engine.store(|s| s.upsert_deployment(&deployment, &file, "")).map_err(state_error)?;
    session.bars.pool(&pool, plan.creates() as u64, "starting");
    let report = session.runtime.block_on(engine.apply(&spec, &plan, jiff::Timestamp::now()));
    session.bars.finish();
    if args.cloud.json {
        print_json(&report)?;
    } else {
        print_report(&report);
    }
    Ok(exit_for(&report))
}

#[cfg(test)]
mod tests {
    use super::name_from;

    #[test]
    fn names_become_spec_names() {
        assert_eq!(name_from("clone-i-ABC_123", 40), "clone-i-abc-123");
        assert_eq!(name_from("9lives", 40), "c-9lives");
        assert_eq!(name_from("stage1-clone", 8), "stage1-c");
    }
}
