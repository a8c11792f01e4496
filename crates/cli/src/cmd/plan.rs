//! `gpuctl plan SPEC`: what `provision` would create, keep and release, with ¥/hour, the total under
//! the chosen billing mode and every other mode, and the budget check (exit 3 when over budget).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use gpuctl_provision::plan::Plan;

use super::provisioning::{apply_error, load_spec, state_error, CloudArgs, EXIT_OVER_BUDGET};
use super::CliError;
use crate::output::{cny, load_catalog, print_json, table, today};

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The deployment spec (TOML; see infra/stage1.toml)
    pub spec: PathBuf,
    /// A price overlay file (your negotiated prices); also GPUCTL_PRICE_OVERLAY
    #[arg(long)]
    pub overlay: Option<PathBuf>,
    /// Print each pool's rendered boot config (its `env` table as each cloud receives it) in full
    #[arg(long)]
    pub show_boot: bool,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

pub fn print_plan(p: &Plan) {
    crate::outln!(
        "deployment {}{}",
        p.deployment,
        p.hours.map(|h| format!(", {h} hours")).unwrap_or_default()
    );
    let mut t = table([
        "pool",
        "create",
        "keep",
        "billing",
        "where (in fallback order)",
        "¥/hour",
        "total",
        "price source",
    ]);
    for pool in &p.pools {
        let wheres: Vec<String> =
            pool.choices.iter().map(|c| format!("{} {} {}", c.provider, c.zone, c.instance_type)).collect();
        let source = pool
            .choices
            .first()
            .and_then(|c| c.price.as_ref())
            .map(|f| format!("{} ({}, {:?})", f.source, f.as_of, f.confidence))
            .unwrap_or_else(|| "no catalog price".into());
        t.add_row([
            // A cluster's nodes go to one of these places together (issue 14).
            if pool.cluster {
                format!("{}\n(cluster of {})", pool.name, pool.count)
            } else {
                pool.name.clone()
            },
            pool.create.len().to_string(),
            pool.keep.len().to_string(),
            format!(
                "{}{}",
                pool.billing,
                if pool.billing.is_per_hour() { String::new() } else { format!(" ×{}", pool.term) }
            ),
            wheres.join("\n"),
            pool.cny_per_hour.map(cny).unwrap_or_else(|| "unknown".into()),
            pool.total_cny.map(cny).unwrap_or_else(|| "unknown".into()),
            source,
        ]);
    }
    crate::outln!("{t}");
    for pool in &p.pools {
        let modes: Vec<String> = pool
            .by_mode
            .iter()
            .map(|m| format!("{} {}{}", m.mode, cny(m.total_cny), if m.offered { "" } else { " (not sold)" }))
            .collect();
        if !modes.is_empty() {
            crate::outln!("{} under each billing mode: {}", pool.name, modes.join(", "));
        }
    }
    for pool in &p.pools {
        if let Some(st) = &pool.shared_storage {
            crate::outln!("{} shared storage: {}", pool.name, shared_storage_line(st));
        }
        for d in &pool.disks {
            crate::outln!("{} {} disk: {}", pool.name, d.role, disk_line(d, pool.count, pool.billing));
        }
        if let Some(rule) = &pool.system_disk_rule {
            crate::outln!("{} system disk when prepaid: {rule}", pool.name);
        }
        if let Some(sn) = &pool.snapshots {
            crate::outln!("{} snapshots before release: {}", pool.name, snapshot_line(sn));
        }
        if let Some(ip) = &pool.public_ip {
            crate::outln!("{} public IP: {}", pool.name, public_ip_line(ip));
        }
        for line in image_lines(pool) {
            crate::outln!("{line}");
        }
        for b in &pool.boot {
            crate::outln!("{} boots on {}: {}", pool.name, b.provider, b.summary);
        }
        if let Some(a) = &pool.agent {
            crate::outln!("{} {a}", pool.name);
        }
    }
    for k in &p.key_imports {
        crate::outln!(
            "imports key {} ({} {}) into {} {}, unless it is there already (free; destroy leaves it: other deployments may log in with it)",
            k.name,
            k.key_type.strip_prefix("ssh-").unwrap_or(&k.key_type),
            k.fingerprint,
            k.provider,
            k.region
        );
    }
    for n in &p.networks {
        crate::outln!(
            "network (auto) in {} {}: finds gpuctl's VPC, subnet and security group there by their gpuctl-network tag, or creates them (VPC {}, subnet {}; free); SSH (tcp/22) from {}, all traffic inside the group; destroy deletes them once no deployment of gpuctl's uses them",
            n.provider,
            n.zone,
            gpuctl_provision::network::VPC_CIDR,
            gpuctl_provision::network::SUBNET_CIDR,
            n.ssh_from.join(", ")
        );
    }
    for r in &p.release {
        crate::outln!(
            "release: {}/{} #{} {} ({})",
            r.deployment,
            r.pool,
            r.index,
            r.instance_id.as_deref().unwrap_or("no id yet"),
            r.provider
        );
    }
    crate::outln!(
        "in all: {} to create, {} to release; {}/hour, {} in total",
        p.creates(),
        p.release.len(),
        p.cny_per_hour.map(cny).unwrap_or_else(|| "unknown".into()),
        p.total_cny.map(cny).unwrap_or_else(|| "unknown".into())
    );
    for w in &p.warnings {
        crate::outln!("warning: {w}");
    }
    for o in &p.over_budget {
        crate::outln!("over budget: {o}");
    }
    for m in &p.moved {
        crate::outln!("refused: {m}");
    }
}

/// Where a pool's image was given by name: the id and name it resolved to, once per cloud and region.
fn image_lines(pool: &gpuctl_provision::plan::PoolPlan) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &pool.choices {
        if let Some(img) = &c.image {
            let line = format!(
                "{} image `{}` on {} {}: {} ({}){}",
                pool.name,
                img.given,
                c.provider,
                c.region,
                img.id,
                img.name,
                match (&img.driver, &img.cuda) {
                    (Some(d), Some(cu)) => format!(", NVIDIA driver {d}, CUDA {cu}"),
                    (Some(d), None) => format!(", NVIDIA driver {d}"),
                    _ => String::new(),
                }
            );
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

/// One pool's public IP as the plan shows it: the rate per instance, never a guessed GB count.
fn shared_storage_line(st: &gpuctl_provision::plan::SharedStoragePlan) -> String {
    let p = &st.price;
    let rate = match p.cny_per_gb_month {
        Some(c) => format!("¥{c:.2}/GB·month"),
        None => "price unknown".into(),
    };
    let cost = match (st.cny_per_month, st.total_cny) {
        (Some(m), Some(t)) => format!(
            ", ¥{m:.2}/month at {} GB (¥{t:.2} over the plan's hours, in the totals)",
            st.size_gb.unwrap_or(0)
        ),
        _ if st.size_gb.is_none() => ", billed on what is stored (set size_gb to price it)".into(),
        _ => String::new(),
    };
    let on_destroy = if st.keep_on_destroy {
        "kept by destroy (--delete-storage deletes it)"
    } else {
        "deleted by destroy"
    };
    format!("{} on every node's {}, {rate}{cost}; {on_destroy}; source: {}", p.product, st.mount, p.source)
}

/// One disk of every node: its class in the cloud's words, the rate and how it was reached, what it
/// adds to the totals, and the price's source; or why it is not in them.
fn disk_line(d: &gpuctl_provision::plan::DiskPlan, count: u32, mode: gpuctl_core::BillingMode) -> String {
    let class = d.class.map(|c| format!(" ({c})")).unwrap_or_default();
    let head = format!("{} {} GB{class}", d.category.as_str(), d.size_gb);
    match (d.cny_per_hour, d.total_cny) {
        (Some(h), Some(t)) => format!(
            "{head}, {}/hour per node ({}{}); {} for {count} node{} over the plan, in the totals; source: {}",
            cny(h),
            d.basis,
            if mode.is_per_hour() { ", billed by the hour" } else { ", billed with the instance's term" },
            cny(t),
            if count == 1 { "" } else { "s" },
            d.source.as_deref().unwrap_or("none")
        ),
        _ => format!("{head}: not in the totals, {}", d.basis),
    }
}

fn snapshot_line(sn: &gpuctl_provision::plan::SnapshotPlan) -> String {
    match sn.cny_per_month {
        Some(m) => format!(
            "up to {} GB (every node's cloud disks; billed on what they hold), up to {}/month from the release until deleted ({}); not in the totals; source: {}",
            sn.gb,
            cny(m),
            sn.basis,
            sn.source.as_deref().unwrap_or("none")
        ),
        None => format!("up to {} GB from the release until deleted; {}", sn.gb, sn.basis),
    }
}

fn public_ip_line(ip: &gpuctl_provision::public_ip::PublicIpPrice) -> String {
    let rate = match (ip.cny_per_hour, ip.cny_per_gb) {
        (Some(h), Some(gb)) if h > 0.0 => format!("¥{gb:.2}/GB sent + {}/hour", cny(h)),
        (_, Some(gb)) => format!("¥{gb:.2}/GB sent"),
        (Some(h), None) => format!("{}/hour", cny(h)),
        (None, None) => "price unknown".into(),
    };
    let billed = match (ip.billing, ip.cny_per_hour) {
        (_, None) => "not in the totals: its price is unknown",
        (gpuctl_provision::spec::PublicIpBilling::Traffic, Some(h)) if h > 0.0 => {
            "billed by traffic; the hourly fee is in the totals, the GB sent are not"
        }
        (gpuctl_provision::spec::PublicIpBilling::Traffic, _) => {
            "billed by traffic; not in the totals: the cost depends on the GB sent"
        }
        (gpuctl_provision::spec::PublicIpBilling::Bandwidth, Some(_)) => {
            "billed by bandwidth; in the totals above"
        }
    };
    format!(
        "{} Mbps per instance on {} {}, {rate} ({}; {billed}; source: {})",
        ip.bandwidth_mbps, ip.provider, ip.region, ip.note, ip.source
    )
}

/// Every pool's rendered boot config in full, as the cloud receives it (before the client's base64).
/// Nothing in it is a secret: it is rendered from the spec's `env` table alone.
fn print_boot(p: &Plan) {
    for pool in &p.pools {
        for b in &pool.boot {
            println!("\n--- {} on {} ({}) ---", pool.name, b.provider, b.format.as_str());
            print!("{}", b.text);
        }
    }
}

pub fn run(args: PlanArgs) -> Result<ExitCode, CliError> {
    let catalog = load_catalog(args.overlay.as_deref())?;
    let spec = load_spec(&args.spec, &catalog)?;
    // Planning reads the state and calls no cloud (no credentials needed), except to resolve image
    // names (`image = "ubuntu-22.04"`): those clouds' image listings say which id each name boots.
    let by_name = gpuctl_provision::image::providers_by_name(&spec, &catalog);
    let session = super::provisioning::Session::open(&args.cloud, &by_name)?;
    let mut p = session.engine.plan(&spec, &catalog, today()?).map_err(state_error)?;
    if !by_name.is_empty() {
        session.runtime.block_on(session.engine.resolve_images(&mut p)).map_err(apply_error)?;
    }
    if args.cloud.json {
        print_json(&p)?;
    } else {
        print_plan(&p);
        if args.show_boot {
            print_boot(&p);
        }
    }
    Ok(if !p.over_budget.is_empty() {
        ExitCode::from(EXIT_OVER_BUDGET)
    } else if !p.moved.is_empty() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
