//! The state store, one suite against both backends (issue 17): a real SQLite file in a temporary
//! folder, and a fresh database on the PostgreSQL that `GPUCTL_TEST_POSTGRES` names (scripts/pg-tools
//! starts one; `GPUCTL_TEST_POSTGRES_REQUIRED=1` makes its absence a failure, not a skip). Tests
//! that look at SQLite's own file stay SQLite-only.

use gpuctl_provision::state::{self, Intent, Resource, ResourceState, SnapshotRecord, StateError, Store};
use gpuctl_provision::{BillingMode, Provider};

mod backends;
use backends::Backend;

/// One test body, run on each backend (`name::sqlite`, `name::postgres`).
macro_rules! on_both {
    ($(#[$doc:meta])* fn $name:ident($b:ident) $body:block) => {
        $(#[$doc])*
        mod $name {
            use super::*;
            fn body($b: &Backend) $body
            #[test]
            fn sqlite() {
                body(&Backend::sqlite())
            }
            #[test]
            fn postgres() {
                if let Some(b) = Backend::postgres() {
                    body(&b)
                }
            }
        }
    };
}

fn resource(token: &str, pool: &str, index: u32) -> Resource {
    Resource {
        client_token: token.into(),
        deployment: "d".into(),
        pool: pool.into(),
        index,
        provider: Provider::Tencent,
        region: "ap-guangzhou".into(),
        zone: "ap-guangzhou-3".into(),
        instance_type: "GN7.2XLARGE32".into(),
        billing: BillingMode::Hourly,
        instance_id: None,
        state: ResourceState::Creating,
        public_ip: None,
        private_ip: None,
        price_cny_per_hour: Some(8.68),
        price_source: Some("catalog: tencent price page".into()),
        price_as_of: Some("2026-06-15".into()),
        auto_release_at: None,
        created_at: "2026-11-30T06:00:00Z".parse().unwrap(),
        running_at: None,
        released_at: None,
        last_error: None,
        billed_until: None,
    }
}

fn intent(token: &str) -> Intent {
    Intent {
        deployment: Some("d".into()),
        kind: "create",
        provider: Provider::Tencent,
        region: "ap-guangzhou".into(),
        client_token: token.into(),
        target: None,
        params: r#"{"InstanceType":"GN7.2XLARGE32"}"#.into(),
    }
}

on_both! {
fn intent_survives_a_reopen_and_is_closed_after_the_answer(b) {
    {
        let s = b.open();
        s.upsert_deployment("d", "stage1.toml", "abc").unwrap();
        s.record_create_intent(&intent("tok-1"), &resource("tok-1", "a", 0)).unwrap();
        // The process "dies" here: the intent is on disk, the answer is not.
    }
    let s = b.open();
    let open = s.open_operations(Some("d")).unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].intent, intent("tok-1"));
    let r = s.resource("tok-1").unwrap().unwrap();
    assert_eq!((r.state, r.instance_id.as_deref()), (ResourceState::Creating, None));

    // A retry with the same token writes a second operation but keeps one resource.
    let op = s.record_create_intent(&intent("tok-1"), &resource("tok-1", "a", 0)).unwrap();
    assert_eq!(s.resources(Some("d")).unwrap().len(), 1);
    s.set_instance_id("tok-1", "ins-1").unwrap();
    s.set_running("tok-1", Some("1.2.3.4"), Some("10.0.0.4")).unwrap();
    s.finish_operation(open[0].id, "done", Some("req-1"), None).unwrap();
    s.finish_operation(op, "done", Some("req-2"), None).unwrap();
    assert!(s.open_operations(None).unwrap().is_empty());
    let r = s.resource_by_instance("ins-1").unwrap().unwrap();
    assert_eq!(
        (r.state, r.public_ip.as_deref(), r.price_cny_per_hour),
        (ResourceState::Running, Some("1.2.3.4"), Some(8.68))
    );
    assert!(r.running_at.is_some());

    // Released resources keep their record.
    s.set_state("tok-1", ResourceState::Released, None).unwrap();
    let r = s.resource("tok-1").unwrap().unwrap();
    assert_eq!(r.state, ResourceState::Released);
    assert!(r.released_at.is_some() && !r.state.is_live());
    assert_eq!(s.deployments().unwrap(), vec!["d".to_string()]);
    assert!(s.token_known("tok-1").unwrap() && !s.token_known("tok-2").unwrap());
}
}

on_both! {
fn an_open_operation_of_every_kind_reads_back(b) {
    // A run killed mid-call leaves its intent open; the next run reads it back (reclaim checks,
    // adoption). Every kind the engine writes must read back, or that deployment cannot be run again.
    let s = b.open();
    s.upsert_deployment("d", "stage1.toml", "abc").unwrap();
    for kind in state::INTENT_KINDS {
        s.record_intent(&Intent { kind, client_token: format!("tok-{kind}"), ..intent("x") }).unwrap();
    }
    let open = s.open_operations(Some("d")).unwrap();
    let kinds: Vec<&str> = open.iter().map(|o| o.intent.kind).collect();
    assert_eq!(kinds, state::INTENT_KINDS);
}
}

on_both! {
fn resources_come_back_in_pool_order(b) {
    let s = b.open();
    // "B" sorts after "a" in most natural-language collations, before it in byte order: the store
    // gives byte order on both backends.
    for (t, p, i) in [("t3", "b", 0), ("t2", "a", 1), ("t1", "a", 0), ("t0", "B", 0)] {
        s.record_create_intent(&intent(t), &resource(t, p, i)).unwrap();
    }
    let order: Vec<String> = s.resources(None).unwrap().into_iter().map(|r| r.client_token).collect();
    assert_eq!(order, ["t0", "t1", "t2", "t3"]);
}
}

on_both! {
fn one_apply_per_deployment(b) {
    let s = b.open();
    let held = s.lock("d").unwrap();
    // Another handle (as another process would open it) is refused while the first holds the lock,
    // naming the holder.
    let other = b.open();
    match other.lock("d") {
        Err(e @ StateError::Locked { .. }) => {
            let StateError::Locked { deployment, holder, .. } = &e else { unreachable!() };
            assert_eq!(deployment, "d");
            let h = *holder.clone().expect("the holder is recorded");
            assert_eq!((h.pid, &h.user, &h.host), (i64::from(std::process::id()), &s.actor().user, &s.actor().host));
            let msg = e.to_string();
            assert!(msg.contains(&format!("held by {}@{} pid {}", h.user, h.host, h.pid)), "{msg}");
            assert!(msg.contains("--wait-lock"), "{msg}");
        }
        e => panic!("expected Locked, got {e:?}"),
    }
    // Other deployments are independent.
    let _e = other.lock("e").unwrap();
    // A bounded wait gives up with the same refusal; after the holder lets go, it gets the lock.
    let t0 = std::time::Instant::now();
    assert!(matches!(other.lock_waiting("d", std::time::Duration::from_millis(500)), Err(StateError::Locked { .. })));
    assert!(t0.elapsed() >= std::time::Duration::from_millis(500));
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(held);
        s
    });
    other.lock_waiting("d", std::time::Duration::from_secs(20)).unwrap();
    drop(release.join().unwrap());
}
}

#[test]
fn schema_is_versioned_and_newer_stores_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let s = Store::open(&path).unwrap();
    let v = s.schema_version().unwrap();
    assert!(v >= 1);
    drop(s);
    // Opening again runs no migration twice.
    assert_eq!(Store::open(&path).unwrap().schema_version().unwrap(), v);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", v + 1).unwrap();
    drop(conn);
    let e = Store::open(&path).unwrap_err().to_string();
    assert!(e.contains("written by a newer gpuctl"), "{e}");
}

on_both! {
fn snapshots_are_recorded_once(b) {
    let s = b.open();
    let mut snap = SnapshotRecord {
        snapshot_id: "snap-1".into(),
        provider: Provider::Alibaba,
        region: "cn-hangzhou".into(),
        instance_id: "i-1".into(),
        disk_id: "d-1".into(),
        disk_kind: "system".into(),
        deployment: Some("d".into()),
        pool: Some("a".into()),
        client_token: "tok".into(),
        state: "creating".into(),
        created_at: "2026-11-30T06:00:00Z".parse().unwrap(),
    };
    s.record_snapshot(&snap).unwrap();
    snap.state = "available".into();
    s.record_snapshot(&snap).unwrap();
    assert_eq!(s.snapshots(Some("i-1")).unwrap(), vec![snap]);
    assert!(s.snapshots(Some("i-2")).unwrap().is_empty());
}
}

/// Times are typed in the API and kept in the columns' RFC 3339 text form (so stores written before
/// and after read the same); a time that does not parse is reported as corrupt, never as "no time".
#[test]
fn times_are_typed_and_stored_as_rfc3339_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let s = Store::open(&path).unwrap();
    let mut r = resource("tok-t", "a", 0);
    r.auto_release_at = Some("2026-12-01T06:00:00Z".parse().unwrap());
    s.record_create_intent(&intent("tok-t"), &r).unwrap();
    s.set_running("tok-t", None, None).unwrap();
    let back = s.resource("tok-t").unwrap().unwrap();
    assert_eq!((back.created_at, back.auto_release_at), (r.created_at, r.auto_release_at));
    let running = back.running_at.expect("running_at is set");
    assert!(running >= r.created_at);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (created, release, run): (String, String, String) = conn
        .query_row(
            "SELECT created_at, auto_release_at, running_at FROM resources WHERE client_token = 'tok-t'",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .unwrap();
    assert_eq!((created.as_str(), release.as_str()), ("2026-11-30T06:00:00Z", "2026-12-01T06:00:00Z"));
    assert_eq!(run, running.to_string());
    let op = &s.open_operations(Some("d")).unwrap()[0];
    assert!(
        op.started_at <= jiff::Timestamp::now()
            && op.started_at >= running - jiff::SignedDuration::from_secs(60)
    );
    conn.execute("UPDATE resources SET created_at = 'yesterday' WHERE client_token = 'tok-t'", []).unwrap();
    match s.resource("tok-t") {
        Err(StateError::Corrupt { column, value, .. }) => {
            assert_eq!((column, value.as_str()), ("resources.created_at", "yesterday"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_schema_1_store_migrates_and_keeps_its_rows_then_records_billed_until() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    // A store as schema 1 wrote it: migration 1 alone, one resource row.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(state::MIGRATIONS[0].sqlite).unwrap();
    conn.execute_batch(
        "INSERT INTO resources (client_token, deployment, pool, idx, provider, region, zone, instance_type, billing,
             instance_id, state, created_at)
         VALUES ('tok', 'd', 'p', 0, 'jdcloud', 'cn-north-1', 'cn-north-1a', 'g.n2', 'monthly', 'i-1', 'running',
             '2026-11-30T06:00:00Z');
         PRAGMA user_version = 1;",
    )
    .unwrap();
    let cols: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('resources')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!cols.contains(&"billed_until".to_string()), "a schema-1 table: {cols:?}");
    drop(conn);

    let s = Store::open(&path).unwrap();
    assert_eq!(s.schema_version().unwrap(), state::MIGRATIONS.len() as i64);
    let r = s.resource("tok").unwrap().unwrap();
    assert_eq!(
        (r.state, r.billed_until, r.instance_id.as_deref()),
        (ResourceState::Running, None, Some("i-1"))
    );
    let until: jiff::Timestamp = "2026-12-30T06:00:00Z".parse().unwrap();
    s.set_billed_until("tok", until).unwrap();
    let r = s.resource("tok").unwrap().unwrap();
    assert_eq!((r.state, r.billed_until), (ResourceState::BilledUntil, Some(until)));
    // Still billing, so live, but no longer in its pool's slot; never marked released.
    assert!(r.state.is_live() && !r.state.holds_slot() && r.released_at.is_none());
    drop(s);
    let s = Store::open(&path).unwrap();
    assert_eq!(s.resource("tok").unwrap().unwrap().billed_until, Some(until));
}

/// PostgreSQL keeps its version in `schema_migrations`: a version this build does not know is refused,
/// and a second open runs nothing twice.
#[test]
fn postgres_schema_is_versioned_and_newer_stores_are_refused() {
    let Some(b) = Backend::postgres() else { return };
    let v = b.open().schema_version().unwrap();
    assert_eq!(v, state::MIGRATIONS.len() as i64);
    assert_eq!(b.open().schema_version().unwrap(), v);
    let Backend::Postgres(url) = &b else { unreachable!() };
    let db = url.rsplit('/').next().unwrap().to_string();
    let t = state::pg::Target::parse(url, &|_| None, None).unwrap();
    let conn = state::pg::Conn::connect(&t).unwrap();
    conn.call(move |c| c.execute("INSERT INTO schema_migrations VALUES ($1, 'later')", &[&(v + 1)]).unwrap())
        .unwrap();
    let e = Store::open_at(&b.location()).unwrap_err().to_string();
    assert!(e.contains("written by a newer gpuctl") && e.contains(&db), "{e}");
}

/// The advisory lock belongs to the holder's connection: when the server ends that connection (a
/// killed process, a dropped network), the lock is free for the next run, and the old handle's next
/// write fails with a clear error instead of going through.
#[test]
fn postgres_lock_dies_with_its_connection_and_the_dropped_store_refuses_writes() {
    let Some(b) = Backend::postgres() else { return };
    let s = b.open();
    s.upsert_deployment("d", "spec.toml", "abc").unwrap();
    let _held = s.lock("d").unwrap();
    let other = b.open();
    assert!(matches!(other.lock("d"), Err(StateError::Locked { .. })));
    let Backend::Postgres(url) = &b else { unreachable!() };
    let db = url.rsplit('/').next().unwrap();
    let killed = backends::admin_sql(&format!(
        "SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND a.datname = '{db}'"
    ));
    assert_eq!(killed, ["1"]);
    // The lock ended with the connection: another run takes it (within the server's clean-up time).
    let t0 = std::time::Instant::now();
    let _taken = other.lock_waiting("d", std::time::Duration::from_secs(10)).unwrap();
    assert!(t0.elapsed() < std::time::Duration::from_secs(10));
    let e = s.record_intent(&intent("tok-after-drop")).unwrap_err().to_string();
    assert!(e.starts_with("state store postgres://") && e.contains(db), "{e}");
    assert!(other.open_operations(None).unwrap().is_empty(), "no intent went through the dropped connection");
}

on_both! {
/// `state::RECORD_TABLES` (what `state migrate` copies) is every table of the schema: a table a
/// migration adds and the list forgets fails here.
fn every_table_is_a_record_kind(b) {
    let mut want: Vec<String> = state::RECORD_TABLES.iter().map(|t| t.to_string()).collect();
    want.sort();
    assert_eq!(b.open().schema_tables().unwrap(), want);
}
}

/// A store with every record kind: deployments, resources (every column set), snapshots, open and
/// closed operations, lock holders, a network piece and its use, a custom image.
fn fill(s: &Store) {
    s.upsert_deployment("d", "stage1.toml", "abc").unwrap();
    s.upsert_deployment("e", "other.toml", "def").unwrap();
    let mut r = resource("tok-1", "a", 0);
    r.auto_release_at = Some("2026-12-01T06:00:00Z".parse().unwrap());
    r.price_cny_per_hour = Some(0.1 + 0.2); // a float whose bits must survive
    let op = s.record_create_intent(&intent("tok-1"), &r).unwrap();
    s.record_created(op, "tok-1", "ins-1", Some("req-1")).unwrap();
    s.set_running("tok-1", Some("1.2.3.4"), Some("10.0.0.4")).unwrap();
    s.set_billed_until("tok-1", "2026-12-30T06:00:00Z".parse().unwrap()).unwrap();
    s.record_create_intent(&intent("tok-2"), &resource("tok-2", "a", 1)).unwrap();
    s.set_state("tok-2", ResourceState::Released, Some("stock-out")).unwrap();
    s.record_intent(&Intent { kind: "terminate", target: Some("ins-1".into()), ..intent("tok-1-t") })
        .unwrap();
    s.record_snapshot(&SnapshotRecord {
        snapshot_id: "snap-1".into(),
        provider: Provider::Alibaba,
        region: "cn-hangzhou".into(),
        instance_id: "ins-1".into(),
        disk_id: "d-1".into(),
        disk_kind: "system".into(),
        deployment: None,
        pool: None,
        client_token: "tok-s".into(),
        state: "available".into(),
        created_at: "2026-11-30T07:00:00Z".parse().unwrap(),
    })
    .unwrap();
    s.record_network(&state::NetworkRecord {
        provider: Provider::Tencent,
        region: "ap-guangzhou".into(),
        zone: "ap-guangzhou-3".into(),
        kind: "vpc".into(),
        cloud_id: "vpc-1".into(),
        client_token: "tok-n".into(),
        made_by_gpuctl: true,
        state: "live".into(),
    })
    .unwrap();
    s.use_network(Provider::Tencent, "ap-guangzhou", "ap-guangzhou-3", "d").unwrap();
    s.record_image(&state::ImageRecord {
        image_id: "img-1".into(),
        provider: Provider::JdCloud,
        region: "cn-north-1".into(),
        instance_id: "i-1".into(),
        name: "gpuctl-img-0123456789ab".into(),
        deployment: Some("d".into()),
        pool: Some("a".into()),
        client_token: "tok-i".into(),
        state: "available".into(),
        created_at: "2026-11-30T08:00:00Z".parse().unwrap(),
    })
    .unwrap();
    s.record_cluster_resource(&state::ClusterResource {
        provider: Provider::Alibaba,
        cloud_id: "fs-1".into(),
        region: "cn-hangzhou".into(),
        zone: "cn-hangzhou-i".into(),
        deployment: "d".into(),
        pool: "a".into(),
        kind: state::ClusterResource::FILE_SYSTEM.into(),
        name: "gpuctl-d-a".into(),
        client_token: "tok-fs".into(),
        tier: Some("capacity".into()),
        mount_address: Some("fs-1.cn-hangzhou.nas.aliyuncs.com:/".into()),
        state: "kept".into(),
    })
    .unwrap();
    s.record_create_intent(&intent("tok-3"), &resource("tok-3", "b", 1)).unwrap();
    s.record_reclaim(&reclaim("tok-3")).unwrap();
    s.set_reclaim_replaced("tok-3", "tok-4", Some(0.05), "2026-11-30T12:10:00Z".parse().unwrap()).unwrap();
    drop(s.lock("d").unwrap());
}

fn reclaim(token: &str) -> state::ReclaimRecord {
    state::ReclaimRecord {
        client_token: token.into(),
        deployment: "d".into(),
        pool: "b".into(),
        index: 1,
        provider: Provider::Tencent,
        region: "ap-guangzhou".into(),
        instance_id: "ins-3".into(),
        instance_type: "GN7.2XLARGE32".into(),
        seen_gone_at: "2026-11-30T12:00:00Z".parse().unwrap(),
        notice_at: None,
        running_since: Some("2026-11-30T06:00:00Z".parse().unwrap()),
        checkpoint_at: Some("2026-11-30T11:55:00Z".parse().unwrap()),
        checkpoint_from: "the pool's on-notice hook".into(),
        lost_work_hours: 5.0 / 60.0,
        billed_hours: 6.0,
        price_cny_per_hour: Some(2.6),
        replaced_by: None,
        replacement_boot_hours: None,
        replaced_at: None,
    }
}

on_both! {
/// A reclaim (issue 15) marks its record `reclaimed` in the same commit, frees the slot, is kept once
/// however often it is seen, and takes its replacement once.
fn a_reclaim_is_recorded_once_and_replaced_once(b) {
    let s = b.open();
    s.record_create_intent(&intent("tok-r"), &resource("tok-r", "b", 1)).unwrap();
    s.set_running("tok-r", None, Some("10.0.0.5")).unwrap();
    s.record_reclaim(&reclaim("tok-r")).unwrap();
    let r = s.resource("tok-r").unwrap().unwrap();
    assert_eq!(r.state, ResourceState::Reclaimed);
    assert!(!r.state.is_live() && !r.state.holds_slot());
    assert_eq!(r.released_at, Some("2026-11-30T12:00:00Z".parse().unwrap()));
    // Seen gone again later: the first record stands.
    let later = state::ReclaimRecord { seen_gone_at: "2026-11-30T13:00:00Z".parse().unwrap(), ..reclaim("tok-r") };
    s.record_reclaim(&later).unwrap();
    let all = s.reclaims(Some("d")).unwrap();
    assert_eq!(all, vec![reclaim("tok-r")]);
    assert_eq!(s.open_reclaim("d", "b", 1).unwrap(), Some(reclaim("tok-r")));
    assert_eq!(s.open_reclaim("d", "b", 0).unwrap(), None);
    let at: jiff::Timestamp = "2026-11-30T12:10:00Z".parse().unwrap();
    s.set_reclaim_replaced("tok-r", "tok-r2", Some(0.05), at).unwrap();
    s.set_reclaim_replaced("tok-r", "tok-r3", Some(1.0), at).unwrap();
    let r = &s.reclaims(None).unwrap()[0];
    assert_eq!((r.replaced_by.as_deref(), r.replacement_boot_hours), (Some("tok-r2"), Some(0.05)));
    assert_eq!(s.open_reclaim("d", "b", 1).unwrap(), None);
    // A record gpuctl is releasing is not turned into a reclaim.
    s.record_create_intent(&intent("tok-x"), &resource("tok-x", "b", 2)).unwrap();
    s.set_state("tok-x", ResourceState::Releasing, None).unwrap();
    s.record_reclaim(&reclaim("tok-x")).unwrap();
    assert_eq!(s.resource("tok-x").unwrap().unwrap().state, ResourceState::Releasing);
}
}

/// `state migrate`: SQLite → PostgreSQL with every record kind, counts and checksums equal on both
/// sides, the records read back the same through the API, a second run a no-op, a different
/// non-empty target refused, and the moved store usable (a new intent gets a fresh id).
#[test]
fn migrate_round_trips_every_record_kind() {
    let Some(to) = Backend::postgres() else { return };
    let from = Backend::sqlite();
    let src = from.open();
    fill(&src);
    let dst = to.open();
    let m = state::migrate(&src, &dst).unwrap();
    assert!(m.copied);
    assert_eq!(m.source, m.target);
    let counts: Vec<(&str, usize)> = m.source.counts.clone();
    assert_eq!(
        counts,
        [
            ("deployments", 2),
            ("resources", 3),
            ("snapshots", 1),
            ("operations", 4),
            ("lock_holders", 1),
            ("networks", 1),
            ("network_uses", 1),
            ("images", 1),
            ("cluster_resources", 1),
            ("reclaims", 1)
        ]
    );
    assert_eq!(dst.reclaims(None).unwrap(), src.reclaims(None).unwrap());
    assert_eq!(dst.reclaims(None).unwrap()[0].replaced_by.as_deref(), Some("tok-4"));
    assert_eq!(dst.cluster_resources("d").unwrap(), src.cluster_resources("d").unwrap());
    assert_eq!(dst.cluster_resources("d").unwrap()[0].state, "kept");
    let zone = |st: &Store| st.networks(Provider::Tencent, "ap-guangzhou", "ap-guangzhou-3").unwrap();
    assert_eq!(zone(&dst), zone(&src));
    assert_eq!(dst.network_uses("d").unwrap(), src.network_uses("d").unwrap());
    assert_eq!(dst.resources(None).unwrap(), src.resources(None).unwrap());
    assert_eq!(dst.snapshots(None).unwrap(), src.snapshots(None).unwrap());
    assert_eq!(dst.images(None).unwrap(), src.images(None).unwrap());
    assert_eq!(dst.images(Some("i-1")).unwrap().len(), 1);
    assert_eq!(dst.open_operations(None).unwrap(), src.open_operations(None).unwrap());
    assert_eq!(dst.deployments().unwrap(), src.deployments().unwrap());
    assert_eq!(dst.holder("d").unwrap(), src.holder("d").unwrap());
    assert_eq!(dst.resource("tok-1").unwrap().unwrap().price_cny_per_hour, Some(0.1 + 0.2));
    // Again: the target holds exactly these records, so nothing is written.
    assert!(!state::migrate(&src, &dst).unwrap().copied);
    // A target with other records is refused, and stays as it was.
    let other = Backend::sqlite().open();
    other.upsert_deployment("x", "x.toml", "0").unwrap();
    let e = state::migrate(&other, &dst).unwrap_err().to_string();
    assert!(e.contains("not empty") && e.contains("refusing"), "{e}");
    assert_eq!(dst.dump().unwrap().summary(), m.target);
    // The moved store goes on: the next operation id follows the copied ones.
    let max = dst.open_operations(None).unwrap().iter().map(|o| o.id).max().unwrap();
    let next = dst.record_intent(&intent("tok-3")).unwrap();
    assert!(next > max, "{next} after {max}");
    // And back to SQLite: the same checksum.
    let back = Backend::sqlite().open();
    assert_eq!(state::migrate(&dst, &back).unwrap().target, dst.dump().unwrap().summary());
}
