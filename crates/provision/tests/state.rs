//! The state store against a real SQLite file in a temporary folder.

use gpuctl_provision::state::{Intent, Resource, ResourceState, SnapshotRecord, StateError, Store};
use gpuctl_provision::{BillingMode, Provider};

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

#[test]
fn intent_survives_a_reopen_and_is_closed_after_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let s = Store::open(&path).unwrap();
        s.upsert_deployment("d", "stage1.toml", "abc").unwrap();
        s.record_create_intent(&intent("tok-1"), &resource("tok-1", "a", 0)).unwrap();
        // The process "dies" here: the intent is on disk, the answer is not.
    }
    let s = Store::open(&path).unwrap();
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

#[test]
fn resources_come_back_in_pool_order() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("s.db")).unwrap();
    for (t, p, i) in [("t3", "b", 0), ("t2", "a", 1), ("t1", "a", 0)] {
        s.record_create_intent(&intent(t), &resource(t, p, i)).unwrap();
    }
    let order: Vec<String> = s.resources(None).unwrap().into_iter().map(|r| r.client_token).collect();
    assert_eq!(order, ["t1", "t2", "t3"]);
}

#[test]
fn one_apply_per_deployment() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("s.db")).unwrap();
    let held = s.lock("d").unwrap();
    // Another handle (as another process would open it) is refused while the first holds the lock.
    let other = Store::open(&dir.path().join("s.db")).unwrap();
    match other.lock("d") {
        Err(StateError::Locked { deployment, .. }) => assert_eq!(deployment, "d"),
        e => panic!("expected Locked, got {e:?}"),
    }
    // Other deployments are independent.
    let _e = other.lock("e").unwrap();
    drop(held);
    other.lock("d").unwrap();
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

#[test]
fn snapshots_are_recorded_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("s.db")).unwrap();
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
    // A store as schema 1 wrote it: today's schema less migration 2's column, one resource row.
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("ALTER TABLE resources DROP COLUMN billed_until").unwrap();
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
    // Migrated to the current schema (3 since issue 13's networks tables).
    assert_eq!(s.schema_version().unwrap(), 3);
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
