//! `gpuctl destroy SPEC`: release every instance gpuctl recorded for the spec's deployment —
//! snapshotting first where the pool's policy says so — and verify each is gone. Re-running finishes
//! what an interrupted run left.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use gpuctl_provision::workflow::Released;

use super::provisioning::{
    apply_error, confirm, load_spec, print_billed_until, state_error, CloudArgs, Session,
};
use super::CliError;
use crate::output::{load_catalog, print_json};

#[derive(Args, Debug)]
pub struct DestroyArgs {
    /// The deployment spec that created the instances
    pub spec: PathBuf,
    /// Do not ask before releasing
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Delete the deployment's shared file systems and their data too (by default `destroy` keeps
    /// them, unless the pool says shared_storage.on_destroy = "delete")
    #[arg(long)]
    pub delete_storage: bool,
    #[command(flatten)]
    pub cloud: CloudArgs,
}

/// Key pairs gpuctl imported for the spec stay: they cost nothing, and other deployments may log in
/// with the same key (the name is the key's, not the deployment's).
fn print_kept_keys(spec: &gpuctl_provision::spec::Spec) {
    use gpuctl_provision::spec::{LoginKey, PerProvider};
    let mut names = std::collections::BTreeSet::new();
    for pool in &spec.pools {
        let keys: Vec<&LoginKey> = match &pool.login_key {
            Some(PerProvider::All(k)) => vec![k],
            Some(PerProvider::Each(m)) => m.values().collect(),
            None => vec![],
        };
        for k in keys {
            if let LoginKey::Import { key, .. } = k {
                names.insert(key.import_name());
            }
        }
    }
    for n in names {
        crate::outln!("kept: key pair {n} (imported key pairs are free and may serve other deployments; delete it in the console if you no longer want it)");
    }
}

pub fn run(args: DestroyArgs) -> Result<ExitCode, CliError> {
    let spec = load_spec(&args.spec, &*load_catalog(None)?)?;
    let session = Session::open(&args.cloud, &[])?;
    let deployment = &spec.deployment.value;
    let job = session.engine.begin_destroy(&spec, args.delete_storage).map_err(state_error)?;
    if job.targets().is_empty() && job.networks() == 0 && job.cluster_resources() == 0 {
        if args.cloud.json {
            print_json(&Released {
                released: vec![],
                billed_until: vec![],
                errors: vec![],
                networks: vec![],
                storage: Default::default(),
            })?;
        } else {
            crate::outln!("gpuctl holds no live instance of {deployment}; nothing to do");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let storage_note =
        if args.delete_storage { " and delete its shared file systems with their data" } else { "" };
    confirm(
        &format!("release all {} instance(s) of {deployment}{storage_note}?", job.targets().len()),
        args.yes,
    )?;
    let out = session.runtime.block_on(job.run()).map_err(apply_error);
    session.bars.finish();
    let out = out?;
    if args.cloud.json {
        print_json(&out)?;
    } else {
        crate::outln!("released {} instance(s) of {deployment}", out.released.len());
        print_billed_until(&out.billed_until);
        print_kept_keys(&spec);
        for n in &out.networks {
            let at = format!("{} {}", n.provider, n.zone);
            if !n.deleted.is_empty() {
                crate::outln!("deleted gpuctl's network in {at}: {}", n.deleted.join(", "));
            }
            if let Some(why) = &n.kept {
                crate::outln!("kept gpuctl's network in {at}: {why}");
            }
        }
        for id in &out.storage.deleted {
            crate::outln!("deleted {id} (placement group or shared file system)");
        }
        for k in &out.storage.kept {
            let price = match (&k.price, k.cny_per_month) {
                (Some(p), Some(m)) => format!(
                    "about ¥{m:.2}/month at the spec's size_gb ({}, ¥{:.2}/GB·month; {})",
                    p.product,
                    p.cny_per_gb_month.unwrap_or(0.0),
                    p.source
                ),
                (Some(p), None) => match p.cny_per_gb_month {
                    Some(c) => format!("¥{c:.2}/GB·month stored ({}; {})", p.product, p.source),
                    None => format!("{}: price unknown ({})", p.product, p.source),
                },
                (None, _) => "price unknown".to_string(),
            };
            crate::outln!(
                "kept: shared file system {} in {} {} with its data, billed while it exists: {price}; `gpuctl destroy {} --delete-storage` deletes it",
                k.id,
                k.provider,
                k.zone,
                args.spec.display()
            );
        }
        for e in &out.errors {
            crate::outln!("error: {e}");
        }
    }
    Ok(if out.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
