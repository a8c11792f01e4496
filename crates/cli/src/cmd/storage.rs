//! `gpuctl storage`: what storage costs on each cloud (`prices`: disks, snapshots, held IPs, file
//! systems, object storage, each row cited) and what moving old checkpoints to infrequent-access or
//! archive object storage would save a month (`archive`). Thin printers over `gpuctl_core::storage`.

use std::process::ExitCode;

use gpuctl_core::storage::{self, ArchiveQuestion, ArchiveSavings, Billing, StorageKind, StoragePrice};
use gpuctl_core::Provider;
use serde::Serialize;

use super::CliError;
use crate::output::{self, cny, table};

#[derive(clap::Args)]
pub struct StorageArgs {
    #[command(subcommand)]
    pub action: StorageAction,
}

#[derive(clap::Subcommand)]
pub enum StorageAction {
    /// Storage prices per cloud and class, with source, date and confidence ("price unknown" where none)
    Prices(PricesArgs),
    /// What moving checkpoints older than N days off the disk or file system into infrequent-access or archive object storage saves a month, per cloud
    Archive(ArchiveArgs),
}

#[derive(clap::Args)]
pub struct PricesArgs {
    /// Only this provider (tencent, alibaba, jdcloud); repeatable.
    #[arg(long = "provider")]
    pub providers: Vec<String>,
    /// Only this kind: disk, snapshot, ip, fs (file system), object.
    #[arg(long)]
    pub kind: Option<String>,
    /// Machine-readable output (shapes in docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct ArchiveArgs {
    /// Size of the checkpoints older than `--older-than`: `2TB`, `500GB`, `800` (GB; 1 TB = 1024 GB, as the clouds bill).
    #[arg(long)]
    pub checkpoints: String,
    /// Age at which a checkpoint moves: `14d`, `2w`, or days.
    #[arg(long, default_value = "14d")]
    pub older_than: String,
    /// Where they are now: `disk` (a cloud disk) or `fs` (the shared file system).
    #[arg(long, default_value = "disk")]
    pub on: String,
    /// Its class: gpuctl's word (disk `ssd`/`premium`, file system `capacity`/`performance`) or the cloud's own (`CLOUD_PREMIUM`, `cloud_essd`, `ssd.gp1`, …; give one --provider with it). Default: `ssd` for a disk, `capacity` for a file system.
    #[arg(long)]
    pub class: Option<String>,
    /// The disk is prepaid (包年包月): price it at the monthly prepaid rate, not pay-as-you-go.
    #[arg(long)]
    pub prepaid: bool,
    /// Checkpoints restored a month (each pays the class's retrieval fee).
    #[arg(long, default_value_t = 0.0)]
    pub restores: f64,
    /// Size of one restore, `100GB` or `1TB`; needed with --restores.
    #[arg(long)]
    pub restore_size: Option<String>,
    /// How long an archived checkpoint is kept before it is deleted (`90d`); default: kept. Shorter than a class's minimum storage duration, the rest is billed.
    #[arg(long)]
    pub keep: Option<String>,
    /// Only this provider; repeatable (default: all three).
    #[arg(long = "provider")]
    pub providers: Vec<String>,
    /// Region to price in (with one --provider); default: each cloud's first catalog region.
    #[arg(long)]
    pub region: Option<String>,
    /// Machine-readable output (shapes in docs/json.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: StorageArgs) -> Result<ExitCode, CliError> {
    match args.action {
        StorageAction::Prices(a) => prices(a),
        StorageAction::Archive(a) => archive(a),
    }
}

fn providers(names: &[String]) -> Result<Vec<Provider>, CliError> {
    if names.is_empty() {
        return Ok(Provider::ALL.to_vec());
    }
    names.iter().map(|p| gpuctl_core::parse_provider(p).map_err(output::unknown)).collect()
}

/// `2TB`, `500GB`, `500G`, `0.5T`, `800` → GB (1 TB = 1024 GB: the clouds bill storage in GB of 1024).
fn parse_gb(flag: &str, s: &str) -> Result<f64, CliError> {
    let t = s.trim().to_ascii_uppercase().replace(['_', ','], "");
    let (num, factor) = if let Some(n) = t.strip_suffix("TB").or_else(|| t.strip_suffix('T')) {
        (n, 1024.0)
    } else if let Some(n) = t.strip_suffix("GB").or_else(|| t.strip_suffix('G')) {
        (n, 1.0)
    } else {
        (t.as_str(), 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * factor <= 1e9 => Ok(v * factor),
        _ => Err(CliError::usage(format!("--{flag} {s}: write a size such as 2TB, 500GB or 800 (GB)"))),
    }
}

/// `14d`, `2w`, `14` (days) → whole days.
fn parse_days(flag: &str, s: &str) -> Result<u32, CliError> {
    let t = s.trim();
    let days = match t.parse::<f64>() {
        Ok(d) => Ok(d),
        Err(_) => gpuctl_core::parse_hours(t).map(|h| h / 24.0),
    };
    match days {
        Ok(d) if (1.0..=36_500.0).contains(&d) => Ok(d.round() as u32),
        _ => Err(CliError::usage(format!(
            "--{flag} {s}: write days such as 14d, 2w or 30 (1 day to 100 years)"
        ))),
    }
}

fn kind_of(s: &str) -> Result<StorageKind, CliError> {
    match s {
        "disk" => Ok(StorageKind::Disk),
        "snapshot" => Ok(StorageKind::Snapshot),
        "ip" => Ok(StorageKind::IdleIp),
        "fs" | "file-system" => Ok(StorageKind::FileSystem),
        "object" => Ok(StorageKind::Object),
        _ => Err(CliError::usage(format!("--kind {s}: one of disk, snapshot, ip, fs, object"))),
    }
}

fn rate_text(r: &StoragePrice) -> String {
    let unit = r.kind.unit();
    let mut parts = Vec::new();
    if let Some(m) = r.monthly {
        let what = if r.kind == StorageKind::Disk { " prepaid" } else { "" };
        parts.push(format!("¥{m}/{unit}·month{what}"));
    }
    if let Some(h) = r.hourly {
        parts.push(format!("¥{h}/{unit}·hour"));
    }
    if let Some(d) = r.daily {
        parts.push(format!("¥{d}/{unit}·day"));
    }
    if parts.is_empty() {
        return "price unknown".into();
    }
    if let Some(f) = r.retrieval_per_gb {
        parts.push(format!("retrieval ¥{f}/GB"));
    }
    if let Some(d) = r.min_days {
        parts.push(format!("minimum {d} days"));
    }
    parts.join(", ")
}

fn prices(a: PricesArgs) -> Result<ExitCode, CliError> {
    let providers = providers(&a.providers)?;
    let kind = a.kind.as_deref().map(kind_of).transpose()?;
    let rows: Vec<&StoragePrice> = storage::table()
        .iter()
        .filter(|r| providers.contains(&r.provider) && kind.is_none_or(|k| r.kind == k))
        .collect();
    if a.json {
        #[derive(Serialize)]
        struct Out<'a> {
            schema_version: u32,
            prices: Vec<&'a StoragePrice>,
        }
        output::print_json(&Out { schema_version: gpuctl_core::SCHEMA_VERSION, prices: rows })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = table([
        "cloud",
        "kind",
        "class (gpuctl)",
        "product",
        "regions",
        "price",
        "source (date, confidence)",
    ]);
    for r in rows {
        t.add_row(vec![
            r.provider.to_string(),
            r.kind.as_str().to_string(),
            match r.gpuctl {
                Some(g) => format!("{} ({g})", r.class),
                None => r.class.to_string(),
            },
            r.product.to_string(),
            if r.regions.is_empty() { "all (see source)".to_string() } else { r.regions.join(" ") },
            if r.kind == StorageKind::SystemDisk { r.notes.to_string() } else { rate_text(r) },
            format!("{} ({}, {})", r.source, r.as_of, r.confidence.as_str()),
        ]);
    }
    crate::outln!("{t}");
    crate::outln!(
        "A month is 730 hours. Disks: the monthly figure is the prepaid price, the hourly one pay-as-you-go; list prices, without discounts."
    );
    Ok(ExitCode::SUCCESS)
}

fn archive(a: ArchiveArgs) -> Result<ExitCode, CliError> {
    let gb = parse_gb("checkpoints", &a.checkpoints)?;
    let older_than_days = parse_days("older-than", &a.older_than)?;
    let keep_days = a.keep.as_deref().map(|k| parse_days("keep", k)).transpose()?;
    if !(a.restores.is_finite() && (0.0..=10_000.0).contains(&a.restores)) {
        return Err(CliError::usage(format!(
            "--restores {}: a number of restores a month, 0 to 10000",
            a.restores
        )));
    }
    let restore_gb = match &a.restore_size {
        Some(s) => parse_gb("restore-size", s)?,
        None if a.restores > 0.0 => {
            return Err(CliError::usage("--restores needs --restore-size (the GB one restore reads back)"))
        }
        None => 0.0,
    };
    let from = match a.on.as_str() {
        "disk" => StorageKind::Disk,
        "fs" | "file-system" => StorageKind::FileSystem,
        other => return Err(CliError::usage(format!("--on {other}: `disk` or `fs`"))),
    };
    let class =
        a.class.clone().unwrap_or_else(|| if from == StorageKind::Disk { "ssd" } else { "capacity" }.into());
    let providers = providers(&a.providers)?;
    if a.region.is_some() && providers.len() != 1 {
        return Err(CliError::usage("--region needs exactly one --provider"));
    }
    let cat = output::load_catalog(None)?;
    let mut answers: Vec<ArchiveSavings> = Vec::new();
    for p in providers {
        let region = match &a.region {
            Some(r) => r.clone(),
            None => cat
                .provider(p)
                .and_then(|i| i.regions.first())
                .map(|r| r.id.clone())
                .ok_or_else(|| CliError::failed(format!("the catalog lists no region for {p}")))?,
        };
        answers.push(storage::archive_savings(&ArchiveQuestion {
            provider: p,
            region,
            from,
            from_class: class.clone(),
            billing: if a.prepaid { Billing::Prepaid } else { Billing::Usage },
            gb,
            older_than_days,
            restores_per_month: a.restores,
            restore_gb,
            keep_days,
        }));
    }
    if a.json {
        #[derive(Serialize)]
        struct Out<'a> {
            schema_version: u32,
            clouds: &'a [ArchiveSavings],
        }
        output::print_json(&Out { schema_version: gpuctl_core::SCHEMA_VERSION, clouds: &answers })?;
        return Ok(ExitCode::SUCCESS);
    }
    let opt = |x: Option<f64>| x.map(cny).unwrap_or_else(|| "unknown".into());
    let mut t = table([
        "cloud",
        "region",
        "now /month",
        "to",
        "class",
        "storage",
        "retrieval",
        "minimum days",
        "saves /month",
    ]);
    for s in &answers {
        for o in &s.options {
            t.add_row(vec![
                s.question.provider.to_string(),
                s.question.region.clone(),
                opt(s.current.cny_per_month),
                o.tier.to_string(),
                o.price.map_or("none recorded".into(), |r| r.class.to_string()),
                opt(o.storage_cny),
                opt(o.retrieval_cny),
                opt(o.minimum_duration_cny),
                opt(o.saving_cny),
            ]);
        }
    }
    crate::outln!("{t}");
    for s in &answers {
        crate::outln!(
            "{} now, {} {}: {}",
            s.question.provider,
            s.question.from.as_str(),
            s.current.price.map_or(s.question.from_class.as_str(), |r| r.class),
            s.current.basis
        );
        if let Some(r) = s.current.price {
            crate::outln!("  source: {}", r.citation());
        }
        for o in &s.options {
            for l in &o.lines {
                crate::outln!("  {}: {l}", o.tier);
            }
        }
    }
    crate::outln!();
    crate::outln!("Assumptions:");
    if let Some(s) = answers.first() {
        for x in &s.assumptions {
            crate::outln!("  - {x}");
        }
    }
    crate::outln!(
        "  - \"unknown\": gpuctl has no published figure for it; no saving is claimed where one is missing"
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_days_in_the_users_words() {
        assert_eq!(parse_gb("x", "2TB").unwrap(), 2048.0);
        assert_eq!(parse_gb("x", "500gb").unwrap(), 500.0);
        assert_eq!(parse_gb("x", "0.5T").unwrap(), 512.0);
        assert_eq!(parse_gb("x", "800").unwrap(), 800.0);
        for bad in ["", "-1GB", "lots", "1PB", "NaN"] {
            assert!(parse_gb("x", bad).is_err(), "{bad}");
        }
        assert_eq!(parse_days("x", "14d").unwrap(), 14);
        assert_eq!(parse_days("x", "2w").unwrap(), 14);
        assert_eq!(parse_days("x", "30").unwrap(), 30);
        for bad in ["0", "-3d", "soon", "1h"] {
            assert!(parse_days("x", bad).is_err(), "{bad}");
        }
    }
}
