//! Crash consistency: `gpuctl provision`, `clone --count 2` and `destroy` are SIGKILLed at seeded
//! random times against a real `gpuctl sim` process, then re-run. The sim answers each call only after
//! it has acted on it (latency is added after the create happens), so kills land before the intent
//! write, mid-request, after the cloud accepted a create but before the answer arrived, and while
//! waiting for boot. After every re-run: the cloud holds exactly what was asked for, none twice, none
//! untracked, and the state store opens and agrees with the cloud.
//!
//! Each trial logs in with a public key of its own (`login_key = { public_key = … }`), so kills land in
//! its import too: after every re-run the cloud holds that key pair once, and `destroy` keeps it.
//! Each instance asks for a public IP (the spec's default): after every re-run each live instance
//! holds exactly one, and no JD elastic IP (its own resource) is left billing without an instance.
//!
//! `GPUCTL_CRASH_TRIALS` (default 17 per provider, 51 in all) and `GPUCTL_CRASH_SEED` scale and vary it.
//!
//! The same trials run with the state in PostgreSQL (issue 17; `GPUCTL_TEST_POSTGRES`, a fresh
//! database per trial): a SIGKILLed run's advisory lock ends with its connection, and its intents
//! are on the server. `GPUCTL_CRASH_TRIALS_PG` (default 4 per provider) sizes that run.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use gpuctl_e2e::e2e::{
    gpuctl_cmd, instance_id, ok_json, open_store, placement, spec_text, use_postgres, Rng, SimProcess,
    PROVIDERS,
};

/// Sim-clock boot time 1 s, 25 ms on every cloud call: a provision takes ~1.5 s, so kills spread over it.
const SIM: &str = "seed = 11\n[knobs]\nboot_seconds = 1\nlatency_ms = 25\n";
const COUNT: u32 = 2;

#[derive(Default, Debug)]
struct Tally {
    trials: u32,
    /// Runs that were still going when the kill came (the rest had already finished).
    killed: u32,
}

/// Starts `args`, SIGKILLs it after `after`, and says whether it was still running then.
fn kill_after(sim: &SimProcess, dir: &Path, args: &[&str], after: Duration) -> bool {
    let mut child = gpuctl_cmd(&sim.url, dir, args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("gpuctl starts");
    let deadline = Instant::now() + after;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let running = child.try_wait().unwrap().is_none();
    child.kill().unwrap(); // SIGKILL on Unix: no destructor, no flush, no unlock but the kernel's.
    child.wait().unwrap();
    running
}

/// The cloud and the state store agree on `dep`: exactly `want` live instances, none twice, every one
/// recorded as running, and nothing recorded live that the cloud does not have.
fn check_consistent(sim: &SimProcess, dir: &Path, provider: &str, dep: &str, want: usize, what: &str) {
    let cloud: Vec<String> = sim.live(provider, Some(dep)).iter().map(instance_id).collect();
    let distinct: BTreeSet<String> = cloud.iter().cloned().collect();
    assert_eq!(distinct.len(), cloud.len(), "{what}: an instance is listed twice: {cloud:?}");
    assert_eq!(cloud.len(), want, "{what}: the cloud holds {cloud:?} for {dep}, want {want}");
    let store = open_store(dir).unwrap_or_else(|e| panic!("{what}: the state store does not open: {e}"));
    let recorded: Vec<_> =
        store.resources(Some(dep)).unwrap().into_iter().filter(|r| r.state.is_live()).collect();
    let rec_ids: BTreeSet<String> = recorded.iter().filter_map(|r| r.instance_id.clone()).collect();
    assert_eq!(rec_ids.len(), recorded.len(), "{what}: a live record without an instance id: {recorded:?}");
    assert_eq!(rec_ids, distinct, "{what}: state store and cloud disagree for {dep}");
    if want > 0 {
        assert!(recorded.iter().all(|r| r.state.name() == "running"), "{what}: {recorded:?}");
    }
}

/// A public key line unique to `seed`, of a type `provider` imports (Tencent and Alibaba RSA, JD
/// Ed25519). gpuctl's parser and the emulators check the blob's own type string, not the key material,
/// so a seeded body stands in for ssh-keygen's and each trial imports a key of its own (issue 13).
fn public_key(provider: &str, seed: u64) -> String {
    use base64::Engine as _;
    let key_type = if provider == "jdcloud" { "ssh-ed25519" } else { "ssh-rsa" };
    let mut rng = Rng(seed);
    let body: Vec<u8> = (0..32).map(|_| rng.next_u64() as u8).collect();
    let mut blob = Vec::new();
    for part in [key_type.as_bytes(), &body] {
        blob.extend_from_slice(&(part.len() as u32).to_be_bytes());
        blob.extend_from_slice(part);
    }
    format!("{key_type} {} crash@test\n", base64::engine::general_purpose::STANDARD.encode(blob))
}

/// The key pairs named `name` on `provider` (`/_sim/state`): a killed import re-run must leave one.
fn key_pairs_named(sim: &SimProcess, provider: &str, name: &str) -> usize {
    let state = sim.state();
    let keys = state["providers"][provider]["key_pairs"].as_array().cloned().unwrap_or_default();
    keys.iter().filter(|k| k["name"] == name).count()
}

/// The public IPs `provider` holds, with the instance each is bound to (`/_sim/state` `public_ips`:
/// Tencent `InstanceId`, Alibaba `InstanceId`, JD's elastic IPs `instanceId`, null once unbound).
fn public_ips(sim: &SimProcess, provider: &str) -> Vec<(String, Option<String>)> {
    let st = sim.state();
    let (addr, inst) = match provider {
        "tencent" => ("PublicIpAddress", "InstanceId"),
        "alibaba" => ("IpAddress", "InstanceId"),
        _ => ("elasticIpAddress", "instanceId"),
    };
    let ips = st["providers"][provider]["public_ips"].as_array().cloned().unwrap_or_default();
    ips.iter()
        .map(|p| (p[addr].as_str().unwrap_or_default().to_string(), p[inst].as_str().map(str::to_string)))
        .collect()
}

/// Every live instance of `dep` has exactly one public IP (the spec's default `public_ip`), and none
/// is held for an instance that is gone: a JD elastic IP is its own resource and bills unbound.
fn check_public_ips(sim: &SimProcess, provider: &str, dep: &str, what: &str) {
    let ips = public_ips(sim, provider);
    let live: BTreeSet<String> = sim.live(provider, None).iter().map(instance_id).collect();
    for id in sim.live(provider, Some(dep)).iter().map(instance_id) {
        let n = ips.iter().filter(|(_, i)| i.as_deref() == Some(id.as_str())).count();
        assert_eq!(n, 1, "{what}: {id} holds {n} public IPs: {ips:?}");
    }
    if provider == "jdcloud" {
        let stray: Vec<_> =
            ips.iter().filter(|(_, i)| i.as_ref().is_none_or(|i| !live.contains(i))).collect();
        assert!(stray.is_empty(), "{what}: elastic IPs left billing without an instance: {stray:?}");
    }
}

fn trials(provider: &str, n: u32, seed: u64, postgres: bool) -> Tally {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), SIM, &[]);
    let mut rng = Rng(seed ^ (provider.len() as u64 * 0x1000_0000_01b3) ^ provider.as_bytes()[0] as u64);
    let mut tally = Tally::default();
    for t in 0..n {
        let trial = tempfile::tempdir().unwrap();
        let d = trial.path();
        if postgres {
            assert!(use_postgres(d), "a PostgreSQL server for the tests");
        }
        let dep = format!("crash-{provider}-{t}");
        let spec = d.join("spec.toml");
        // Each trial logs in with a key of its own, imported by its provision (issue 13).
        let key_file = d.join("id.pub");
        let key = public_key(provider, seed ^ u64::from(t).wrapping_mul(0x9E37_79B9));
        std::fs::write(&key_file, &key).unwrap();
        let key_name = gpuctl_provision::pubkey::PublicKey::parse(&key, "id.pub").unwrap().import_name();
        let disks = "data_disks = [{ size_gb = 50 }]\n";
        let text = spec_text(provider, &dep, COUNT).replacen(
            disks,
            &format!("{disks}login_key = {{ public_key = \"{}\" }}\n", key_file.display()),
            1,
        );
        std::fs::write(&spec, text).unwrap();
        let spec_s = spec.to_str().unwrap();

        // provision: kill somewhere in its ~1.5 s, re-run to completion.
        let at = rng.range(0, 1600);
        tally.killed +=
            kill_after(&sim, d, &["provision", spec_s, "--yes", "--json"], Duration::from_millis(at)) as u32;
        ok_json(&sim.url, d, &["provision", spec_s, "--yes", "--json"]);
        check_consistent(
            &sim,
            d,
            provider,
            &dep,
            COUNT as usize,
            &format!("{provider} trial {t} provision killed at {at} ms"),
        );
        assert_eq!(
            key_pairs_named(&sim, provider, &key_name),
            1,
            "{provider} trial {t} provision killed at {at} ms: key pair {key_name} imported once"
        );
        check_public_ips(&sim, provider, &dep, &format!("{provider} trial {t} provision killed at {at} ms"));
        tally.trials += 1;

        // clone --count 2 (every third trial; it costs a second deployment).
        if t % 3 == 0 {
            let clone_spec = d.join("clone.toml");
            let args = [
                "clone",
                &format!("{dep}/work"),
                "--count",
                "2",
                "--yes",
                "--json",
                "--spec-out",
                clone_spec.to_str().unwrap(),
            ];
            let at = rng.range(0, 1600);
            tally.killed += kill_after(&sim, d, &args, Duration::from_millis(at)) as u32;
            ok_json(&sim.url, d, &args);
            let clone_dep = format!("{dep}-clone");
            check_consistent(
                &sim,
                d,
                provider,
                &clone_dep,
                2,
                &format!("{provider} trial {t} clone killed at {at} ms"),
            );
            tally.trials += 1;
            ok_json(&sim.url, d, &["destroy", clone_spec.to_str().unwrap(), "--yes", "--json"]);
            check_consistent(
                &sim,
                d,
                provider,
                &clone_dep,
                0,
                &format!("{provider} trial {t} clone destroyed"),
            );
        }

        // destroy: kill, re-run finishes the job.
        let at = rng.range(0, 900);
        tally.killed +=
            kill_after(&sim, d, &["destroy", spec_s, "--yes", "--json"], Duration::from_millis(at)) as u32;
        ok_json(&sim.url, d, &["destroy", spec_s, "--yes", "--json"]);
        check_consistent(
            &sim,
            d,
            provider,
            &dep,
            0,
            &format!("{provider} trial {t} destroy killed at {at} ms"),
        );
        assert_eq!(
            key_pairs_named(&sim, provider, &key_name),
            1,
            "{provider} trial {t}: destroy keeps the key pair"
        );
        check_public_ips(&sim, provider, &dep, &format!("{provider} trial {t} destroy killed at {at} ms"));
        tally.trials += 1;
    }
    tally
}

#[test]
fn killed_runs_leave_nothing_twice_and_nothing_untracked() {
    let n: u32 = std::env::var("GPUCTL_CRASH_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(17);
    all_providers(n, false);
}

#[test]
fn killed_runs_leave_nothing_twice_and_nothing_untracked_on_postgres() {
    if gpuctl_provision::state::pg::test_server().is_none() {
        return;
    }
    let n: u32 = std::env::var("GPUCTL_CRASH_TRIALS_PG").ok().and_then(|v| v.parse().ok()).unwrap_or(4);
    all_providers(n, true);
}

/// `n` trials per provider, the providers in parallel, each with its own sim.
fn all_providers(n: u32, postgres: bool) {
    let seed: u64 = std::env::var("GPUCTL_CRASH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(20261130);
    gpuctl_e2e::e2e::gpuctl_bin(); // build once, before the threads race for it
    let started = Instant::now();
    let handles: Vec<_> =
        PROVIDERS.iter().map(|p| std::thread::spawn(move || (p, trials(p, n, seed, postgres)))).collect();
    let mut total = Tally::default();
    for h in handles {
        let (p, t) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        eprintln!("{p}: {} killed-and-re-run trials, {} kills landed mid-run", t.trials, t.killed);
        total.trials += t.trials;
        total.killed += t.killed;
    }
    let backend = if postgres { "PostgreSQL" } else { "SQLite" };
    eprintln!(
        "crash consistency ({backend}): {} trials ({} provision) over 3 providers, {} kills landed mid-run, 0 duplicates, 0 untracked, {:.0} s",
        total.trials,
        3 * n,
        total.killed,
        started.elapsed().as_secs_f64()
    );
    assert!(
        3 * n < 50 || total.killed >= total.trials / 2,
        "most kills should land while gpuctl runs: {total:?}"
    );
}

/// The zone network's pieces gpuctl made on `provider` (`/_sim/state`, the account's default pieces
/// left out): (vpcs, subnets, security groups).
fn made_networks(sim: &SimProcess, provider: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let st = sim.state();
    let ids = |what: &str| -> Vec<String> {
        let all = st["providers"][provider][what].as_array().cloned().unwrap_or_default();
        all.iter()
            .filter(|x| x["default"] != true)
            .map(|x| x["id"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    (ids("vpcs"), ids("subnets"), ids("security_groups"))
}

/// `network = "auto"` (issue 13) under SIGKILL: against an empty account (no default network), a
/// provision killed anywhere in making the zone's VPC, subnet and security group, then re-run, leaves
/// exactly one of each, every one recorded live in the state store (found again by its tag, never
/// made twice); a destroy killed anywhere, then re-run, leaves none on the cloud and every record
/// deleted. On Tencent (no ClientToken on the VPC creates), Alibaba (a ClientToken on each, and a
/// VPC that is `Pending` for a second) and JD Cloud (no ClientToken, and a security group without
/// tags, found by name in the tagged VPC). `GPUCTL_CRASH_TRIALS` scales it (default 17 on Tencent,
/// 9 on Alibaba and on JD).
#[test]
fn killed_auto_network_runs_leave_one_network_and_then_none() {
    let n: Option<u32> = std::env::var("GPUCTL_CRASH_TRIALS").ok().and_then(|v| v.parse().ok());
    let seed: u64 = std::env::var("GPUCTL_CRASH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(20261130);
    for (provider, p, region, zone, default_n, window) in [
        ("tencent", gpuctl_provision::Provider::Tencent, "ap-guangzhou", "ap-guangzhou-3", 17, 1200),
        ("alibaba", gpuctl_provision::Provider::Alibaba, "cn-hangzhou", "cn-hangzhou-i", 9, 2400),
        ("jdcloud", gpuctl_provision::Provider::JdCloud, "cn-north-1", "cn-north-1a", 9, 1200),
    ] {
        killed_auto_network_trials(provider, p, region, zone, n.unwrap_or(default_n), seed, window);
    }
}

fn killed_auto_network_trials(
    provider: &str,
    p: gpuctl_provision::Provider,
    region: &str,
    zone: &str,
    n: u32,
    seed: u64,
    window_ms: u64,
) {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), SIM, &["--empty-account"]);
    let mut rng = Rng(seed ^ 0x006e_6574_776f_726b);
    let mut killed = 0;
    for t in 0..n {
        let trial = tempfile::tempdir().unwrap();
        let d = trial.path();
        let dep = format!("crash-net-{t}");
        let spec = d.join("spec.toml");
        // The test pool's own network ids (JD's) give way to `auto`.
        let pool: String = spec_text(provider, &dep, COUNT)
            .lines()
            .filter(|l| !l.starts_with("network = "))
            .map(|l| format!("{l}\n"))
            .collect();
        let text = format!("{pool}network = \"auto\"\nssh_from = [\"203.0.113.0/24\"]\n");
        std::fs::write(&spec, text).unwrap();
        let spec_s = spec.to_str().unwrap();

        // The network is made first (six calls of 25 ms and more; Alibaba's VPC is Pending for a
        // second too), then the instances.
        let at = rng.range(0, window_ms);
        killed +=
            kill_after(&sim, d, &["provision", spec_s, "--yes", "--json"], Duration::from_millis(at)) as u32;
        ok_json(&sim.url, d, &["provision", spec_s, "--yes", "--json"]);
        let what = format!("{provider} auto-network trial {t} provision killed at {at} ms");
        check_consistent(&sim, d, provider, &dep, COUNT as usize, &what);
        let (vpcs, subnets, groups) = made_networks(&sim, provider);
        assert_eq!((vpcs.len(), subnets.len(), groups.len()), (1, 1, 1), "{what}: one of each");
        let store = open_store(d).unwrap();
        let live: BTreeSet<String> = store
            .networks(p, region, zone)
            .unwrap()
            .into_iter()
            .filter(|n| n.state == "live")
            .map(|n| n.cloud_id)
            .collect();
        let cloud: BTreeSet<String> = [&vpcs[0], &subnets[0], &groups[0]].into_iter().cloned().collect();
        assert_eq!(live, cloud, "{what}: nothing untracked");
        drop(store);

        let at = rng.range(0, 900);
        killed +=
            kill_after(&sim, d, &["destroy", spec_s, "--yes", "--json"], Duration::from_millis(at)) as u32;
        ok_json(&sim.url, d, &["destroy", spec_s, "--yes", "--json"]);
        let what = format!("{provider} auto-network trial {t} destroy killed at {at} ms");
        check_consistent(&sim, d, provider, &dep, 0, &what);
        let (vpcs, subnets, groups) = made_networks(&sim, provider);
        assert!(vpcs.is_empty() && subnets.is_empty() && groups.is_empty(), "{what}: none left");
        let store = open_store(d).unwrap();
        let recs = store.networks(p, region, zone).unwrap();
        assert!(recs.iter().all(|n| n.state == "deleted"), "{what}: {recs:?}");
    }
    eprintln!(
        "auto network on {provider}: {n} trials, {killed} kills landed mid-run, 0 duplicates, 0 untracked"
    );
}

/// The file systems `provider` lists and is not deleting.
fn live_file_systems(sim: &SimProcess, provider: &str) -> Vec<serde_json::Value> {
    let st = sim.state();
    let all = st["providers"][provider]["file_systems"].as_array().cloned();
    all.unwrap_or_else(|| panic!("no file_systems in the state: {st}"))
        .into_iter()
        // Tencent shows a file system it is deleting for a while; the others list it until it is gone.
        .filter(|f| f["Deleting"] != true)
        .collect()
}

/// The placement groups `provider` lists (Tencent HPC clusters, Alibaba deployment sets).
fn placement_groups(sim: &SimProcess, provider: &str) -> usize {
    let st = sim.state();
    let key = if provider == "tencent" { "hpc_clusters" } else { "deployment_sets" };
    st["providers"][provider][key].as_array().map(Vec::len).unwrap_or_else(|| panic!("no {key}: {st}"))
}

/// Issue 14: a cluster (`cluster = true`, two nodes) whose first zone has stock for one node, killed
/// at seeded random points of provision — while its first node is made, while it is released because
/// the zone is short, while the cluster is made again in the next zone — and of destroy. After every
/// re-run: none twice, nothing untracked, and never a cluster split across zones. A run killed after
/// the short zone's node was made and before it was released leaves that node running and recorded;
/// the re-run keeps it (running nodes are never released to move a cluster) and reports the zone as
/// sold out, naming it — so the assertion there is consistency, not completion. The cluster has a
/// shared file system (made before its nodes, in each zone it tries) and, on Alibaba, a low-latency
/// deployment set: at most one file system per zone however the runs were killed, and
/// `destroy --delete-storage` leaves no file system and no placement group, so none was made
/// untracked. `GPUCTL_CRASH_TRIALS` scales it (default 8 on Tencent, 4 on Alibaba).
fn killed_cluster_runs(provider: &str, zones: [&str; 2], n_default: u32) {
    let n: u32 = std::env::var("GPUCTL_CRASH_TRIALS").ok().and_then(|v| v.parse().ok()).unwrap_or(n_default);
    let seed: u64 = std::env::var("GPUCTL_CRASH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(20261204);
    let mut rng = Rng(seed ^ 0x0063_6c75_7374_6572);
    let (mut killed, mut completed) = (0, 0);
    let zone_key = if provider == "tencent" { "Zone" } else { "ZoneId" };
    // The test placement's first lines: provider, region, zone, instance type.
    let lines: Vec<&str> = placement(provider).lines().take(4).collect();
    let (region_line, type_line) = (lines[1], lines[3]);
    for t in 0..n {
        let trial = tempfile::tempdir().unwrap();
        let d = trial.path();
        // A fresh cloud per trial: its first zone has stock for exactly one node.
        let sim = SimProcess::start(
            d,
            &format!(
                "{SIM}[[knobs.stock_outs]]\nprovider = \"{provider}\"\nzone = \"{}\"\navailable = 1\n",
                zones[0]
            ),
            &[],
        );
        let dep = format!("crash-cluster-{provider}-{t}");
        let one_place = spec_text(provider, &dep, COUNT).replace(&format!("{}\n", lines.join("\n")), "");
        let cands: String = zones
            .iter()
            .map(|z| format!("[[pool.candidates]]\nprovider = \"{provider}\"\n{region_line}\nzone = \"{z}\"\n{type_line}\n"))
            .collect();
        let text = format!(
            "{one_place}cluster = true\nnetwork = \"auto\"\nssh_from = [\"203.0.113.7/32\"]\nshared_storage = true\n{cands}"
        );
        let spec = d.join("spec.toml");
        std::fs::write(&spec, text).unwrap();
        let spec_s = spec.to_str().unwrap();

        let at = rng.range(0, 1500);
        killed +=
            kill_after(&sim, d, &["provision", spec_s, "--yes", "--json"], Duration::from_millis(at)) as u32;
        let again = gpuctl_cmd(&sim.url, d, &["provision", spec_s, "--yes", "--json"]).output().unwrap();
        let what = format!("{provider} cluster trial {t} provision killed at {at} ms");
        let live = sim.live(provider, Some(&dep));
        let in_zones: BTreeSet<String> =
            live.iter().map(|i| i[zone_key].as_str().unwrap_or_default().to_string()).collect();
        assert!(in_zones.len() <= 1, "{what}: a cluster split across zones: {in_zones:?}");
        if again.status.success() {
            completed += 1;
            check_consistent(&sim, d, provider, &dep, COUNT as usize, &what);
        } else {
            let err =
                String::from_utf8_lossy(&again.stderr).to_string() + &String::from_utf8_lossy(&again.stdout);
            assert!(err.contains("sold out") || err.contains("stock"), "{what}: {err}");
            assert_eq!(in_zones.iter().next().map(String::as_str), Some(zones[0]), "{what}: {err}");
            check_consistent(&sim, d, provider, &dep, live.len(), &what);
        }

        let at = rng.range(0, 900);
        killed +=
            kill_after(&sim, d, &["destroy", spec_s, "--yes", "--json"], Duration::from_millis(at)) as u32;
        ok_json(&sim.url, d, &["destroy", spec_s, "--yes", "--json"]);
        let what = format!("{provider} cluster trial {t} destroy killed at {at} ms");
        check_consistent(&sim, d, provider, &dep, 0, &what);
        let fs_zones: Vec<String> =
            live_file_systems(&sim, provider).iter().map(|f| f[zone_key].to_string()).collect();
        let distinct: BTreeSet<&String> = fs_zones.iter().collect();
        assert!(fs_zones.len() <= 2 && distinct.len() == fs_zones.len(), "{what}: {fs_zones:?}");
        ok_json(&sim.url, d, &["destroy", spec_s, "--yes", "--json", "--delete-storage"]);
        assert!(live_file_systems(&sim, provider).is_empty(), "{what}: a file system gpuctl did not record");
        assert_eq!(placement_groups(&sim, provider), 0, "{what}: a placement group gpuctl did not record");
    }
    eprintln!("{provider} clusters: {n} trials, {killed} kills landed mid-run, {completed} completed in one zone on the re-run, 0 split, 0 duplicates, 0 untracked (nodes, file systems, placement groups)");
}

#[test]
fn killed_cluster_runs_never_split_and_leave_nothing_untracked() {
    killed_cluster_runs("tencent", ["ap-guangzhou-3", "ap-guangzhou-4"], 8);
}

#[test]
fn killed_alibaba_cluster_runs_leave_no_deployment_set_or_file_system_untracked() {
    killed_cluster_runs("alibaba", ["cn-hangzhou-i", "cn-hangzhou-j"], 4);
}
