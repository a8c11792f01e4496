//! A team's shared state in PostgreSQL (issue 17), through the real binary, a real `gpuctl sim` and
//! the server `GPUCTL_TEST_POSTGRES` names (skipped without one unless `GPUCTL_TEST_POSTGRES_REQUIRED=1`).
//!
//! - Two machines: two `gpuctl` processes with different homes, one deployment, one database. While
//!   one provisions, the other is refused naming the holder (user@host, pid, since); with
//!   `--wait-lock` it waits and then proceeds. The cloud ends with no instance twice and none untracked.
//! - A dropped connection: the server terminates the run's backend mid-run. The run stops with a clear
//!   error before its next billable call (every instance the cloud holds has its intent recorded), and
//!   a re-run adopts what was made.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use gpuctl_e2e::e2e::{
    gpuctl, gpuctl_cmd, instance_id, ok_json, open_store, share_store, spec_text, use_postgres, SimProcess,
};
use gpuctl_provision::state::pg;

/// 1 s of sim-clock boot and 150 ms on every cloud call: a 3-instance provision takes a few seconds.
const SIM: &str = "seed = 7\n[knobs]\nboot_seconds = 1\nlatency_ms = 150\n";
const PROVIDER: &str = "alibaba";

/// Every instance the cloud holds for `dep` is recorded, by id or by the client token it carries;
/// none twice; and (when `exact`) the store's live records are exactly the cloud's.
fn check(sim: &SimProcess, dir: &Path, dep: &str, want: usize, what: &str) {
    let live = sim.live(PROVIDER, Some(dep));
    let ids: Vec<String> = live.iter().map(instance_id).collect();
    let set: BTreeSet<String> = ids.iter().cloned().collect();
    assert_eq!(set.len(), ids.len(), "{what}: an instance twice: {ids:?}");
    assert_eq!(ids.len(), want, "{what}: the cloud holds {ids:?}, want {want}");
    let store = open_store(dir).unwrap();
    let rows = store.resources(Some(dep)).unwrap();
    let recorded: BTreeSet<String> =
        rows.iter().filter(|r| r.state.is_live()).filter_map(|r| r.instance_id.clone()).collect();
    assert_eq!(recorded, set, "{what}: state and cloud disagree: {rows:#?}");
}

#[test]
fn two_machines_one_deployment_one_proceeds_the_other_is_refused_or_waits() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    if !use_postgres(a.path()) {
        return;
    }
    share_store(b.path(), a.path());
    let sim = SimProcess::start(a.path(), SIM, &[]);
    let dep = "team-shared";
    for d in [a.path(), b.path()] {
        std::fs::write(d.join("spec.toml"), spec_text(PROVIDER, dep, 3)).unwrap();
    }
    let spec_of = |d: &Path| d.join("spec.toml").to_str().unwrap().to_string();
    let (sa, sb) = (spec_of(a.path()), spec_of(b.path()));

    // Machine A provisions; B starts while A holds the lock and is refused, naming A.
    let first = gpuctl_cmd(&sim.url, a.path(), &["provision", &sa, "--yes", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let holder_pid = first.id();
    let t0 = Instant::now();
    // Wait until A holds the lock (its holder row names its pid), then start B.
    let store = open_store(a.path()).unwrap();
    while store.holder(dep).unwrap().is_none_or(|h| h.pid != i64::from(holder_pid)) {
        assert!(t0.elapsed() < Duration::from_secs(30), "machine A never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let refused = gpuctl(&sim.url, b.path(), &["provision", &sb, "--yes", "--json"]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "machine B: {err}");
    assert!(err.contains("another `gpuctl` run holds deployment `team-shared`"), "{err}");
    assert!(err.contains(&format!("pid {holder_pid} since ")), "the holder is named: {err}");
    assert!(err.contains("postgres://") && !err.contains("password"), "{err}");
    let out = first.wait_with_output().unwrap();
    assert!(out.status.success(), "machine A: {}", String::from_utf8_lossy(&out.stderr));
    check(&sim, a.path(), dep, 3, "after A's provision");

    // Both machines see the same deployment.
    let status_b = ok_json(&sim.url, b.path(), &["status", dep, "--json"]);
    assert_eq!(status_b.as_array().map(Vec::len), Some(3), "{status_b}");

    // A destroys; B, with --wait-lock, waits for it and then provisions the deployment again.
    let destroy = gpuctl_cmd(&sim.url, a.path(), &["destroy", &sa, "--yes", "--json"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let destroy_pid = destroy.id();
    let t0 = Instant::now();
    while store.holder(dep).unwrap().is_none_or(|h| h.pid != i64::from(destroy_pid)) {
        assert!(t0.elapsed() < Duration::from_secs(30), "machine A's destroy never took the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let waited = gpuctl(&sim.url, b.path(), &["provision", &sb, "--yes", "--json", "--wait-lock=60s"]);
    assert!(
        waited.status.success(),
        "machine B with --wait-lock: {}",
        String::from_utf8_lossy(&waited.stderr)
    );
    assert!(destroy.wait_with_output().unwrap().status.success());
    check(&sim, b.path(), dep, 3, "after A's destroy and B's waited provision");
    // The operations say who made them.
    let actor = store.actor().clone();
    drop(store);
    let url = std::fs::read_to_string(a.path().join("state.url")).unwrap();
    let conn = pg::Conn::connect(&pg::Target::parse(url.trim(), &|_| None, None).unwrap()).unwrap();
    let users: Vec<String> = conn
        .call(|c| {
            c.query("SELECT DISTINCT by_user || '@' || by_host FROM operations", &[])
                .unwrap()
                .iter()
                .map(|r| r.get::<_, String>(0))
                .collect()
        })
        .unwrap();
    assert!(users.iter().any(|u| *u == actor.to_string()), "{users:?}");
    assert!(ok_json(&sim.url, a.path(), &["destroy", &sa, "--yes", "--json"]).is_object());
    check(&sim, a.path(), dep, 0, "after the last destroy");
}

/// The database part of `dir`'s store URL.
fn db_name(dir: &Path) -> String {
    let url = std::fs::read_to_string(dir.join("state.url")).unwrap();
    url.trim().rsplit('/').next().unwrap().to_string()
}

#[test]
fn a_dropped_connection_stops_the_run_before_its_next_billable_call_and_a_rerun_adopts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    if !use_postgres(d) {
        return;
    }
    let sim = SimProcess::start(d, SIM, &[]);
    let dep = "dropped-conn";
    std::fs::write(d.join("spec.toml"), spec_text(PROVIDER, dep, 3)).unwrap();
    let sp = d.join("spec.toml").to_str().unwrap().to_string();
    let child = gpuctl_cmd(&sim.url, d, &["provision", &sp, "--yes", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Mid-run: once the first intent is committed, the server ends the run's connection.
    let store = open_store(d).unwrap();
    let t0 = Instant::now();
    while store.resources(Some(dep)).unwrap().is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(30), "the run never wrote an intent");
        std::thread::sleep(Duration::from_millis(5));
    }
    let db = db_name(d);
    let killed = pg::test_admin_sql(&format!(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
         WHERE datname = '{db}' AND application_name = 'gpuctl' AND pid <> pg_backend_pid()
           AND pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory')"
    ));
    assert_eq!(killed, ["1"], "the run's connection (the one holding the lock)");
    let out = child.wait_with_output().unwrap();
    // With --json the error is in the report on stdout; without, on stderr.
    let err = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "the run must stop: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("state store postgres://"), "a clear error naming the store: {err}");
    // Never a create without a committed intent: every instance the cloud holds carries a token the
    // store recorded before the call.
    let tokens: BTreeSet<String> =
        store.resources(Some(dep)).unwrap().into_iter().map(|r| r.client_token).collect();
    for i in sim.live(PROVIDER, Some(dep)) {
        let tok = i["ClientToken"].as_str().or(i["clientToken"].as_str()).map(str::to_string);
        if let Some(tok) = tok {
            assert!(
                tokens.contains(&tok),
                "instance {} (token {tok}) has no intent: {tokens:?}",
                instance_id(&i)
            );
        }
    }
    assert!(sim.live(PROVIDER, Some(dep)).len() <= tokens.len(), "more instances than intents");
    drop(store);
    // A re-run adopts what was made: three, none twice, all recorded.
    ok_json(&sim.url, d, &["provision", &sp, "--yes", "--json"]);
    check(&sim, d, dep, 3, "after the re-run");
    ok_json(&sim.url, d, &["destroy", &sp, "--yes", "--json"]);
    check(&sim, d, dep, 0, "after destroy");
}
