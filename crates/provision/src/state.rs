//! The state store: what gpuctl has asked the clouds for and what it holds — in one SQLite file (the
//! embedded default) or in a team's PostgreSQL database (issue 17, `state/pg.rs`).
//!
//! Owns the schema (versioned: `PRAGMA user_version` in SQLite, the `schema_migrations` table in
//! PostgreSQL; migrated forward on open), the operations intent log (written *before* each billable
//! call, with the call's client token), the resource and snapshot records (kept after release, marked
//! released), and the per-deployment apply lock (an OS file lock beside a SQLite file, a session
//! advisory lock in PostgreSQL: both end with their holder), with who holds it. Every statement is
//! written once, in the SQL both dialects share (`?N` parameters, rewritten to `$N` for PostgreSQL);
//! [`Db`] is the only place that knows which backend it talks to. Nothing secret is stored: parameters
//! are the create request without credentials, and a PostgreSQL URL is only ever shown redacted.

use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use jiff::Timestamp;

use crate::provider::{BillingMode, Provider};

pub mod pg;

pub use reclaim::ReclaimRecord;

pub use pg::Value;

/// One schema migration, in both dialects. Most are the same text in both (`Migration::shared`);
/// where the dialects differ (auto-increment keys, float types), `Migration::sqlite_types` derives PostgreSQL's text
/// from SQLite's type names, or `Migration::dialects` gives each.
/// To add one: append it here — both backends run it on open, and record it (`user_version` /
/// `schema_migrations`). Use `BIGINT` for integers and `DOUBLE PRECISION` for floats when writing
/// shared SQL (SQLite reads both by affinity; PostgreSQL needs the widths the store binds).
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub sqlite: &'static str,
    postgres: PgText,
}

#[derive(Debug, Clone, Copy)]
enum PgText {
    Same,
    Own(&'static str),
    /// SQLite's text with its type spellings translated (`Migration::sqlite_types`).
    FromSqlite,
}

impl Migration {
    pub const fn shared(sql: &'static str) -> Migration {
        Migration { sqlite: sql, postgres: PgText::Same }
    }
    pub const fn dialects(sqlite: &'static str, postgres: &'static str) -> Migration {
        Migration { sqlite, postgres: PgText::Own(postgres) }
    }
    /// SQLite text using its own type names: PostgreSQL gets `BIGSERIAL PRIMARY KEY` for
    /// `INTEGER PRIMARY KEY AUTOINCREMENT`, `BIGINT` for `INTEGER` (the store binds i64) and
    /// `DOUBLE PRECISION` for `REAL`.
    pub const fn sqlite_types(sql: &'static str) -> Migration {
        Migration { sqlite: sql, postgres: PgText::FromSqlite }
    }

    /// The migration's PostgreSQL text.
    pub fn postgres(&self) -> Cow<'static, str> {
        match self.postgres {
            PgText::Same => Cow::Borrowed(self.sqlite),
            PgText::Own(t) => Cow::Borrowed(t),
            PgText::FromSqlite => Cow::Owned(
                self.sqlite
                    .replace("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY")
                    .replace(" INTEGER ", " BIGINT ")
                    .replace(" REAL,", " DOUBLE PRECISION,"),
            ),
        }
    }
}

/// Schema migrations, in order; the schema version counts how many have run. Append only: never edit
/// one that has shipped.
pub const MIGRATIONS: &[Migration] = &[
    // 1: the first schema, written for SQLite before there was a second backend; PostgreSQL's text is
    // derived (`Migration::sqlite_types`).
    Migration::sqlite_types(
        r#"
    CREATE TABLE deployments (
        name        TEXT PRIMARY KEY,
        spec_file   TEXT NOT NULL,
        spec_sha256 TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
    );
    CREATE TABLE resources (
        client_token   TEXT PRIMARY KEY,
        deployment     TEXT NOT NULL,
        pool           TEXT NOT NULL,
        idx            INTEGER NOT NULL,
        provider       TEXT NOT NULL,
        region         TEXT NOT NULL,
        zone           TEXT NOT NULL,
        instance_type  TEXT NOT NULL,
        billing        TEXT NOT NULL,
        instance_id    TEXT,
        state          TEXT NOT NULL,
        public_ip      TEXT,
        private_ip     TEXT,
        price_cny_per_hour REAL,
        price_source   TEXT,
        price_as_of    TEXT,
        auto_release_at TEXT,
        created_at     TEXT NOT NULL,
        running_at     TEXT,
        released_at    TEXT,
        last_error     TEXT
    );
    CREATE INDEX resources_by_deployment ON resources (deployment, pool, idx);
    CREATE INDEX resources_by_instance ON resources (provider, instance_id);
    CREATE TABLE snapshots (
        snapshot_id  TEXT NOT NULL,
        provider     TEXT NOT NULL,
        region       TEXT NOT NULL,
        instance_id  TEXT NOT NULL,
        disk_id      TEXT NOT NULL,
        disk_kind    TEXT NOT NULL,
        deployment   TEXT,
        pool         TEXT,
        client_token TEXT NOT NULL,
        state        TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        PRIMARY KEY (provider, snapshot_id)
    );
    CREATE TABLE operations (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        deployment   TEXT,
        kind         TEXT NOT NULL,
        provider     TEXT NOT NULL,
        region       TEXT NOT NULL,
        client_token TEXT NOT NULL,
        target       TEXT,
        params       TEXT NOT NULL,
        status       TEXT NOT NULL,
        request_id   TEXT,
        error        TEXT,
        started_at   TEXT NOT NULL,
        finished_at  TEXT
    );
    CREATE INDEX operations_open ON operations (status, deployment);
    "#,
    ),
    // 2: a prepaid instance whose release the cloud refuses until its term ends (JD) is kept as
    // `billed_until`, with the term's end; NULL for every row written before.
    Migration::shared(
        r#"
    ALTER TABLE resources ADD COLUMN billed_until TEXT;
    "#,
    ),
    // 3: the networks of `network = "auto"` (issue 13): each VPC, subnet and security group gpuctl
    // made or adopted, and which deployments use a zone's network, so `destroy` deletes one only when
    // gpuctl made it and no other deployment still uses it. Rows are never deleted: a deleted piece
    // keeps its row with state 'deleted', an ended use its `ended_at`.
    Migration::sqlite_types(
        r#"
    CREATE TABLE IF NOT EXISTS networks (
        provider     TEXT NOT NULL,
        region       TEXT NOT NULL,
        zone         TEXT NOT NULL,
        kind         TEXT NOT NULL,
        cloud_id     TEXT NOT NULL,
        client_token TEXT NOT NULL,
        made_by_gpuctl INTEGER NOT NULL,
        state        TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        deleted_at   TEXT,
        PRIMARY KEY (provider, cloud_id)
    );
    CREATE TABLE IF NOT EXISTS network_uses (
        provider   TEXT NOT NULL,
        region     TEXT NOT NULL,
        zone       TEXT NOT NULL,
        deployment TEXT NOT NULL,
        since      TEXT NOT NULL,
        ended_at   TEXT,
        PRIMARY KEY (provider, region, zone, deployment)
    );
    "#,
    ),
    // 4 (issue 17): who and where. Every operation and every
    // deployment update records the OS user and host that made it; `lock_holders` records who took
    // each deployment's lock last — written under the lock, so while it is held the row names the
    // holder. NULL for rows written before.
    Migration::shared(
        r#"
    ALTER TABLE operations ADD COLUMN by_user TEXT;
    ALTER TABLE operations ADD COLUMN by_host TEXT;
    ALTER TABLE deployments ADD COLUMN updated_by TEXT;
    CREATE TABLE lock_holders (
        deployment  TEXT PRIMARY KEY,
        holder_user TEXT NOT NULL,
        holder_host TEXT NOT NULL,
        pid         BIGINT NOT NULL,
        since       TEXT NOT NULL
    );
    "#,
    ),
    // 5 (issue 13): custom images of instances (`snapshot --image`, `clone --from-snapshot`), so a
    // clone boots the environment that was validated, and `sweep` can find what gpuctl made.
    Migration::shared(
        r#"
    CREATE TABLE images (
        image_id     TEXT NOT NULL,
        provider     TEXT NOT NULL,
        region       TEXT NOT NULL,
        instance_id  TEXT NOT NULL,
        name         TEXT NOT NULL,
        deployment   TEXT,
        pool         TEXT,
        client_token TEXT NOT NULL,
        state        TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        PRIMARY KEY (provider, image_id)
    );
    "#,
    ),
    // 6 (issue 14): a cluster pool's placement group and shared file system, one row each, made or
    // found by gpuctl. `state`: `live`, `kept` (destroy left the file system and its data, as asked)
    // or `deleted`. Rows are never deleted, like the networks'.
    Migration::shared(
        r#"
    CREATE TABLE cluster_resources (
        provider      TEXT NOT NULL,
        cloud_id      TEXT NOT NULL,
        region        TEXT NOT NULL,
        zone          TEXT NOT NULL,
        deployment    TEXT NOT NULL,
        pool          TEXT NOT NULL,
        kind          TEXT NOT NULL,
        name          TEXT NOT NULL,
        client_token  TEXT NOT NULL,
        tier          TEXT,
        mount_address TEXT,
        state         TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        ended_at      TEXT,
        PRIMARY KEY (provider, cloud_id)
    );
    "#,
    ),
    // 7 (issue 15): spot instances the cloud reclaimed without gpuctl asking, one row per reclaimed
    // record (its client token): when gpuctl saw it gone, the notice when one was seen, the last
    // checkpoint gpuctl knows of, the hours lost and billed (`state/reclaim.rs` holds the rule), and
    // the replacement once made. The resource row itself goes to state `reclaimed`.
    Migration::shared(
        r#"
    CREATE TABLE reclaims (
        client_token     TEXT PRIMARY KEY,
        deployment       TEXT NOT NULL,
        pool             TEXT NOT NULL,
        idx              BIGINT NOT NULL,
        provider         TEXT NOT NULL,
        region           TEXT NOT NULL,
        instance_id      TEXT NOT NULL,
        instance_type    TEXT NOT NULL,
        seen_gone_at     TEXT NOT NULL,
        notice_at        TEXT,
        running_since    TEXT,
        checkpoint_at    TEXT,
        checkpoint_from  TEXT NOT NULL,
        lost_work_hours  DOUBLE PRECISION NOT NULL,
        billed_hours     DOUBLE PRECISION NOT NULL,
        price_cny_per_hour DOUBLE PRECISION,
        replaced_by      TEXT,
        replacement_boot_hours DOUBLE PRECISION,
        replaced_at      TEXT
    );
    "#,
    ),
    // 8 (issue 15): the spec's `budget.monthly_cny`, kept with the deployment so `gpuctl cost` and
    // `gpuctl status` hold a month's bill to it without the spec file. NULL: no monthly budget.
    Migration::shared(
        r#"
    ALTER TABLE deployments ADD COLUMN monthly_budget_cny DOUBLE PRECISION;
    "#,
    ),
];

/// Every table holding records, in the order `state migrate` copies them. A table added by a
/// migration goes here too (a test compares this list with the schema).
pub const RECORD_TABLES: &[&str] = &[
    "deployments",
    "resources",
    "snapshots",
    "operations",
    "lock_holders",
    "networks",
    "network_uses",
    "images",
    "cluster_resources",
    "reclaims",
];

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("state store {path}: {source}")]
    Sqlite { path: PathBuf, source: rusqlite::Error },
    /// `path` is the redacted URL; `message` never holds the password (`pg::describe`).
    #[error("state store {path}: {message}")]
    Postgres { path: PathBuf, message: String },
    #[error("state store {path} was written by a newer gpuctl (schema {found}, this build knows {known}); upgrade gpuctl")]
    TooNew { path: PathBuf, found: i64, known: i64 },
    #[error("another `gpuctl` run holds deployment `{deployment}` ({}lock {path}); wait for it to finish, or pass --wait-lock", holder.as_ref().map(|h| format!("{h}; ")).unwrap_or_default())]
    Locked { deployment: String, path: PathBuf, holder: Option<Box<Holder>> },
    #[error("state store {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0:?} is not a deployment name (1–40 characters of a-z, 0-9 and '-', starting with a letter)")]
    BadName(String),
    #[error("state store {path}: bad value `{value}` in column {column}")]
    Corrupt { path: PathBuf, column: &'static str, value: String },
    #[error("state store {0}")]
    Location(String),
    #[error("state migrate: {0}")]
    Migrate(String),
}

/// Who holds (or last took) a deployment's lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub user: String,
    pub host: String,
    pub pid: i64,
    pub since: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "held by {}@{} pid {} since {}", self.user, self.host, self.pid, self.since)
    }
}

/// Who and where this process runs: the OS user (`USER`, else `LOGNAME`) and the host name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub user: String,
    pub host: String,
}

impl Actor {
    pub fn current() -> Actor {
        let user = ["USER", "LOGNAME"]
            .iter()
            .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
            .unwrap_or_else(|| "unknown".into());
        // The kernel's name for this host (Linux); HOSTNAME elsewhere.
        let host = gpuctl_sign::file::read_string_bounded(Path::new("/proc/sys/kernel/hostname"), 256)
            .ok()
            .map(|h| h.trim().to_string())
            .or_else(|| std::env::var("HOSTNAME").ok())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unknown".into());
        Actor { user, host }
    }
}

/// Where a store lives: a SQLite file or a PostgreSQL URL (`--state` / `GPUCTL_STATE`).
#[derive(Debug, Clone)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(pg::Target),
}

impl Location {
    /// `postgres://…` or `postgresql://…` is a PostgreSQL store (completed from libpq's places, see
    /// [`pg::Target::parse`]); anything else is a SQLite file path.
    pub fn parse(
        s: &str,
        env: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Result<Location, StateError> {
        if pg::is_url(s) {
            pg::Target::parse(s, env, home).map(Location::Postgres).map_err(StateError::Location)
        } else {
            Ok(Location::Sqlite(PathBuf::from(s)))
        }
    }

    /// How the location may be printed (a URL's password redacted).
    pub fn shown(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(t) => t.shown(),
        }
    }
}

/// Where a resource is in its life. Records are never deleted: `Released` keeps the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceState {
    /// The intent is written; the cloud may or may not have created it (a crash here is adopted on re-run).
    Creating,
    Running,
    /// The create failed for good (stock-out moved on, invalid request); nothing billable exists.
    Failed,
    Releasing,
    Released,
    /// Released as far as the cloud allows: a prepaid term that no API ends early, renewal turned
    /// off, still running and billed until `Resource::billed_until`. Never shown as released; a
    /// `release` or `sweep` after that time deletes it for good.
    BilledUntil,
    /// A spot instance the cloud took back without gpuctl asking (issue 15): gone, billed no more,
    /// its slot free for a replacement under the next token generation. The `reclaims` table
    /// (migration 7) says when and what it cost.
    Reclaimed,
}

impl ResourceState {
    pub fn name(self) -> &'static str {
        match self {
            ResourceState::Creating => "creating",
            ResourceState::Running => "running",
            ResourceState::Failed => "failed",
            ResourceState::Releasing => "releasing",
            ResourceState::Released => "released",
            ResourceState::BilledUntil => "billed_until",
            ResourceState::Reclaimed => "reclaimed",
        }
    }
    fn from_name(s: &str) -> Option<Self> {
        [
            Self::Creating,
            Self::Running,
            Self::Failed,
            Self::Releasing,
            Self::Released,
            Self::BilledUntil,
            Self::Reclaimed,
        ]
        .into_iter()
        .find(|v| v.name() == s)
    }
    /// Whether the cloud may be billing for it.
    pub fn is_live(self) -> bool {
        matches!(
            self,
            ResourceState::Creating
                | ResourceState::Running
                | ResourceState::Releasing
                | ResourceState::BilledUntil
        )
    }

    /// Whether it still fills its pool's slot. An instance the user released that bills until its
    /// term ends does not: the pool gets a new one if the spec still asks for it.
    pub fn holds_slot(self) -> bool {
        self.is_live() && self != ResourceState::BilledUntil
    }
}

/// One instance gpuctl asked for, keyed by its client token.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Resource {
    pub client_token: String,
    pub deployment: String,
    pub pool: String,
    pub index: u32,
    pub provider: Provider,
    pub region: String,
    pub zone: String,
    pub instance_type: String,
    pub billing: BillingMode,
    pub instance_id: Option<String>,
    pub state: ResourceState,
    pub public_ip: Option<String>,
    pub private_ip: Option<String>,
    /// What the instance cost per hour when it was created, where that figure came from, and its date.
    pub price_cny_per_hour: Option<f64>,
    pub price_source: Option<String>,
    pub price_as_of: Option<String>,
    pub auto_release_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub running_at: Option<Timestamp>,
    pub released_at: Option<Timestamp>,
    pub last_error: Option<String>,
    /// The end of the prepaid term it bills until (state `billed_until`).
    pub billed_until: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SnapshotRecord {
    pub snapshot_id: String,
    pub provider: Provider,
    pub region: String,
    pub instance_id: String,
    pub disk_id: String,
    /// "system" or "data".
    pub disk_kind: String,
    pub deployment: Option<String>,
    pub pool: Option<String>,
    pub client_token: String,
    pub state: String,
    pub created_at: Timestamp,
}

/// A custom image gpuctl made of an instance (migration 5): the system disk as it was, so clones boot
/// what was installed and validated.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ImageRecord {
    pub image_id: String,
    pub provider: Provider,
    pub region: String,
    pub instance_id: String,
    pub name: String,
    pub deployment: Option<String>,
    pub pool: Option<String>,
    pub client_token: String,
    /// "creating", "available" or "failed".
    pub state: String,
    pub created_at: Timestamp,
}

/// Every kind of call the engine writes an [`Intent`] for. Reading the open operations back
/// (`Store::open_operations`) refuses any other word as a corrupt store, so a writer that adds a kind
/// adds it here: when the list lagged behind (networks, clusters, leftovers), the first open
/// operation of such a kind — a run killed mid-call — made every later run of that deployment fail.
pub const INTENT_KINDS: &[&str] = &[
    "create",
    "terminate",
    "snapshot",
    "import-key",
    "create-image",
    "create-network",
    "delete-network",
    "create-placement",
    "delete-placement",
    "create-file-system",
    "delete-file-system",
    "delete-leftover",
];

/// A billable call about to be made: written before the call, closed after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    pub deployment: Option<String>,
    /// One of [`INTENT_KINDS`].
    pub kind: &'static str,
    pub provider: Provider,
    pub region: String,
    pub client_token: String,
    /// Instance or disk the call acts on, when it acts on one.
    pub target: Option<String>,
    /// The request's parameters as JSON (no credentials).
    pub params: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    pub id: i64,
    pub intent: Intent,
    pub status: String,
    pub request_id: Option<String>,
    pub error: Option<String>,
    pub started_at: Timestamp,
}

/// Held while an apply/destroy runs on a deployment; released when dropped or when the process dies:
/// an OS file lock beside a SQLite store, a session advisory lock on the run's PostgreSQL connection
/// (the server ends it with the connection, so a SIGKILLed run never leaves a stale lock behind).
pub struct ApplyLock {
    held: Held,
    /// The lock file, or the store's redacted URL.
    pub path: PathBuf,
}

enum Held {
    File(#[allow(dead_code)] File),
    Advisory { conn: pg::Conn, key: i64 },
}

impl std::fmt::Debug for ApplyLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApplyLock").field("path", &self.path).finish()
    }
}

impl Drop for ApplyLock {
    fn drop(&mut self) {
        if let Held::Advisory { conn, key } = &self.held {
            let key = *key;
            conn.post(move |c| {
                let _ = c.execute("SELECT pg_advisory_unlock($1)", &[&key]);
            });
        }
    }
}

/// The backend a store talks to; every statement goes through [`Db::run`].
enum Db {
    Sqlite(Connection),
    Postgres(pg::Conn),
}

/// One statement and its arguments, in the shared dialect (`?N` parameters).
type Stmt = (Cow<'static, str>, Vec<Value>);
type Rows = Vec<Vec<Value>>;

pub struct Store {
    db: Db,
    /// The file, or the redacted URL: what every message names.
    path: PathBuf,
    actor: Actor,
    lock_wait: std::time::Duration,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// Times are typed (`Timestamp`) in the Rust API and stored as RFC 3339 text in UTC (`Timestamp`'s
/// `Display`, e.g. `2026-11-30T06:00:00.123Z`), the column format since schema 1, so stores written by
/// earlier builds read back unchanged; a value that does not parse is reported as corrupt.
fn now() -> String {
    crate::clock::now().to_string()
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.to_string())
    }
}
impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::Text(s.clone())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}
impl From<u32> for Value {
    fn from(i: u32) -> Value {
        Value::Int(i.into())
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Real(f)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Value {
        o.map_or(Value::Null, Into::into)
    }
}

macro_rules! args {
    ($($v:expr),* $(,)?) => { vec![$(Value::from($v)),*] };
}

/// `?N` → `$N`: the one difference of the shared SQL between the dialects. (PostgreSQL types a
/// parameter where it first appears, so an optional filter is written `col = ?1 OR ?1 IS NULL`.)
fn to_postgres(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

fn sqlite_value(v: &Value) -> rusqlite::types::Value {
    match v {
        Value::Null => rusqlite::types::Value::Null,
        Value::Int(i) => rusqlite::types::Value::Integer(*i),
        Value::Real(f) => rusqlite::types::Value::Real(*f),
        Value::Text(s) => rusqlite::types::Value::Text(s.clone()),
    }
}

fn sqlite_rows(conn: &Connection, sql: &str, args: &[Value]) -> rusqlite::Result<Rows> {
    let mut st = conn.prepare_cached(sql)?;
    let n = st.column_count();
    let vals: Vec<_> = args.iter().map(sqlite_value).collect();
    let mut rows = st.query(rusqlite::params_from_iter(vals))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut row = Vec::with_capacity(n);
        for i in 0..n {
            row.push(match r.get_ref(i)? {
                rusqlite::types::ValueRef::Null => Value::Null,
                rusqlite::types::ValueRef::Integer(i) => Value::Int(i),
                rusqlite::types::ValueRef::Real(f) => Value::Real(f),
                rusqlite::types::ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                rusqlite::types::ValueRef::Blob(b) => Value::Text(hex::encode(b)),
            });
        }
        out.push(row);
    }
    Ok(out)
}

fn postgres_rows(
    c: &mut impl postgres::GenericClient,
    sql: &str,
    args: &[Value],
) -> Result<Rows, postgres::Error> {
    let params: Vec<&(dyn postgres::types::ToSql + Sync)> = args.iter().map(|v| v as _).collect();
    let rows = c.query(&to_postgres(sql), &params)?;
    rows.iter()
        .map(|r| (0..r.len()).map(|i| r.try_get::<_, Value>(i)).collect::<Result<Vec<_>, _>>())
        .collect()
}

/// The stable 64-bit advisory-lock key of a deployment: the first 8 bytes of SHA-256 over a
/// gpuctl-specific prefix and the name (the prefix keeps other applications' keys apart).
pub fn lock_key(deployment: &str) -> i64 {
    use sha2::Digest;
    let d = sha2::Sha256::digest(format!("gpuctl deployment lock\0{deployment}"));
    i64::from_be_bytes(d[..8].try_into().unwrap_or_default())
}

/// The key held (per transaction) while PostgreSQL migrates, so two first runs migrate once.
const MIGRATE_KEY: i64 = 0x6770_7563_746c_6d67; // "gpuctlmg"

impl Store {
    /// Opens (creating if needed) the SQLite store at `path` and migrates it to the current schema.
    pub fn open(path: &Path) -> Result<Store, StateError> {
        Store::open_at(&Location::Sqlite(path.to_path_buf()))
    }

    /// Opens the store at `location` (SQLite file or PostgreSQL URL) and migrates it.
    pub fn open_at(location: &Location) -> Result<Store, StateError> {
        let actor = Actor::current();
        match location {
            Location::Sqlite(path) => Store::open_sqlite(path, actor),
            Location::Postgres(t) => {
                let path = PathBuf::from(t.shown());
                let conn = pg::Conn::connect(t)
                    .map_err(|message| StateError::Postgres { path: path.clone(), message })?;
                let store = Store { db: Db::Postgres(conn), path, actor, lock_wait: Default::default() };
                store.migrate_postgres()?;
                Ok(store)
            }
        }
    }

    fn open_sqlite(path: &Path, actor: Actor) -> Result<Store, StateError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|source| StateError::Io { path: dir.to_path_buf(), source })?;
        }
        let sql = |source| StateError::Sqlite { path: path.to_path_buf(), source };
        let mut conn = Connection::open(path).map_err(sql)?;
        // WAL: readers (`status`) never block an apply. synchronous=NORMAL survives a killed process
        // (what crash tests do); intents are written with FULL (see `durably`), which also makes every
        // earlier commit durable against power loss.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(sql)?;
        let found: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(sql)?;
        let known = MIGRATIONS.len() as i64;
        if found > known {
            return Err(StateError::TooNew { path: path.to_path_buf(), found, known });
        }
        // Migrate only when behind: a current store is opened read-only, so a command that only reads
        // (`status`, `sweep`) commits nothing and waits for no fsync (4 of them per open before, measured
        // by the start-up bench). The version is read again inside an IMMEDIATE transaction, so two
        // processes opening an old store at once migrate it once.
        if found < known {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(sql)?;
            let found: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(sql)?;
            for m in MIGRATIONS.get(found as usize..).unwrap_or_default() {
                tx.execute_batch(m.sqlite).map_err(sql)?;
            }
            tx.pragma_update(None, "user_version", known.max(found)).map_err(sql)?;
            tx.commit().map_err(sql)?;
        }
        Ok(Store { db: Db::Sqlite(conn), path: path.to_path_buf(), actor, lock_wait: Default::default() })
    }

    /// PostgreSQL's migrations: one transaction under an advisory transaction lock (concurrent first
    /// runs migrate once), each applied migration a row of `schema_migrations`.
    fn migrate_postgres(&self) -> Result<(), StateError> {
        let Db::Postgres(conn) = &self.db else { return Ok(()) };
        let known = MIGRATIONS.len() as i64;
        let path = self.path.clone();
        let out = conn
            .call(move |c| -> Result<Result<(), (i64, i64)>, postgres::Error> {
                let mut tx = c.transaction()?;
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_KEY])?;
                tx.batch_execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at TEXT NOT NULL)",
                )?;
                let found: i64 =
                    tx.query_one("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", &[])?.get(0);
                if found > known {
                    return Ok(Err((found, known)));
                }
                for (i, m) in MIGRATIONS.iter().enumerate().skip(found as usize) {
                    tx.batch_execute(&m.postgres())?;
                    tx.execute(
                        "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)",
                        &[&(i as i64 + 1), &now()],
                    )?;
                }
                tx.commit()?;
                Ok(Ok(()))
            })
            .map_err(|message| StateError::Postgres { path: path.clone(), message })?
            .map_err(|e| StateError::Postgres { path: path.clone(), message: pg::describe(&e) })?;
        out.map_err(|(found, known)| StateError::TooNew { path, found, known })
    }

    /// The file, or the redacted URL.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self.db, Db::Postgres(_))
    }

    /// Who this store records as the actor of its writes.
    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    pub fn schema_version(&self) -> Result<i64, StateError> {
        match &self.db {
            Db::Sqlite(c) => {
                c.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| self.err(e))
            }
            Db::Postgres(_) => {
                let rows = self.query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", vec![])?;
                self.int(&rows[0], 0, "schema_migrations.version")
            }
        }
    }

    fn err(&self, source: rusqlite::Error) -> StateError {
        StateError::Sqlite { path: self.path.clone(), source }
    }

    fn pg_err(&self, message: String) -> StateError {
        StateError::Postgres { path: self.path.clone(), message }
    }

    /// Runs statements in one transaction (one statement: on its own), committed before this
    /// returns; `durable` makes the SQLite commit fsynced (PostgreSQL commits are, with the server's
    /// default `synchronous_commit = on`). The rows of each statement, in order.
    fn run(&self, stmts: Vec<Stmt>, durable: bool) -> Result<Vec<Rows>, StateError> {
        match &self.db {
            Db::Sqlite(c) => {
                let go = || -> rusqlite::Result<Vec<Rows>> {
                    if stmts.len() == 1 {
                        return Ok(vec![sqlite_rows(c, &stmts[0].0, &stmts[0].1)?]);
                    }
                    let tx = c.unchecked_transaction()?;
                    let out =
                        stmts.iter().map(|(sql, a)| sqlite_rows(&tx, sql, a)).collect::<Result<_, _>>()?;
                    tx.commit()?;
                    Ok(out)
                };
                if durable {
                    c.pragma_update(None, "synchronous", "FULL").map_err(|e| self.err(e))?;
                }
                let out = go().map_err(|e| self.err(e));
                if durable {
                    c.pragma_update(None, "synchronous", "NORMAL").map_err(|e| self.err(e))?;
                }
                out
            }
            Db::Postgres(conn) => conn
                .call(move |c| -> Result<Vec<Rows>, postgres::Error> {
                    if stmts.len() == 1 {
                        return Ok(vec![postgres_rows(c, &stmts[0].0, &stmts[0].1)?]);
                    }
                    let mut tx = c.transaction()?;
                    let out = stmts
                        .iter()
                        .map(|(sql, a)| postgres_rows(&mut tx, sql, a))
                        .collect::<Result<_, _>>()?;
                    tx.commit()?;
                    Ok(out)
                })
                .map_err(|m| self.pg_err(m))?
                .map_err(|e| self.pg_err(pg::describe(&e))),
        }
    }

    fn exec(&self, sql: impl Into<Cow<'static, str>>, args: Vec<Value>) -> Result<(), StateError> {
        self.run(vec![(sql.into(), args)], false).map(drop)
    }

    fn query(&self, sql: impl Into<Cow<'static, str>>, args: Vec<Value>) -> Result<Rows, StateError> {
        Ok(self.run(vec![(sql.into(), args)], false)?.pop().unwrap_or_default())
    }

    fn text(&self, row: &[Value], i: usize, column: &'static str) -> Result<String, StateError> {
        match row.get(i) {
            Some(Value::Text(s)) => Ok(s.clone()),
            v => Err(self.corrupt(column, format!("{v:?}"))),
        }
    }

    fn text_opt(&self, row: &[Value], i: usize, column: &'static str) -> Result<Option<String>, StateError> {
        match row.get(i) {
            Some(Value::Null) => Ok(None),
            _ => self.text(row, i, column).map(Some),
        }
    }

    /// A provider column, as `Provider::as_str` wrote it.
    fn provider(&self, row: &[Value], i: usize, column: &'static str) -> Result<Provider, StateError> {
        let text = self.text(row, i, column)?;
        gpuctl_core::parse_provider(&text).ok().ok_or_else(|| self.corrupt(column, text.clone()))
    }

    fn int(&self, row: &[Value], i: usize, column: &'static str) -> Result<i64, StateError> {
        match row.get(i) {
            Some(Value::Int(n)) => Ok(*n),
            v => Err(self.corrupt(column, format!("{v:?}"))),
        }
    }

    fn real_opt(&self, row: &[Value], i: usize, column: &'static str) -> Result<Option<f64>, StateError> {
        match row.get(i) {
            Some(Value::Null) => Ok(None),
            Some(Value::Real(f)) => Ok(Some(*f)),
            // SQLite keeps a whole REAL as written; an integer there is still the same number.
            Some(Value::Int(n)) => Ok(Some(*n as f64)),
            v => Err(self.corrupt(column, format!("{v:?}"))),
        }
    }

    /// Takes the deployment's apply lock, or says who holds it. The lock file sits next to the database
    /// and is named after the deployment, so only a valid deployment name (`name::is_valid`) is taken.
    /// Waits up to the store's lock wait ([`Store::set_lock_wait`], none by default) first.
    pub fn lock(&self, deployment: &str) -> Result<ApplyLock, StateError> {
        self.lock_waiting(deployment, self.lock_wait)
    }

    /// How long [`Store::lock`] waits for another run to let go (`--wait-lock`): bounded, retried
    /// every 200 ms, then the same refusal naming the holder.
    pub fn set_lock_wait(&mut self, wait: std::time::Duration) {
        self.lock_wait = wait;
    }

    fn try_lock(&self, deployment: &str) -> Result<ApplyLock, StateError> {
        if !crate::name::is_valid(deployment, crate::name::DEPLOYMENT_MAX) {
            return Err(StateError::BadName(deployment.to_string()));
        }
        let lock = match &self.db {
            Db::Sqlite(_) => {
                let path = self.path.with_extension(format!("{deployment}.lock"));
                let file = File::options()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(&path)
                    .map_err(|source| StateError::Io { path: path.clone(), source })?;
                match file.try_lock() {
                    Ok(()) => ApplyLock { held: Held::File(file), path },
                    Err(std::fs::TryLockError::WouldBlock) => return Err(self.locked(deployment, path)),
                    Err(std::fs::TryLockError::Error(source)) => return Err(StateError::Io { path, source }),
                }
            }
            Db::Postgres(conn) => {
                let key = lock_key(deployment);
                let rows = self.query("SELECT pg_try_advisory_lock(?1)", args![key])?;
                if rows.first().and_then(|r| r.first()) != Some(&Value::Int(1)) {
                    return Err(self.locked(deployment, self.path.clone()));
                }
                ApplyLock { held: Held::Advisory { conn: conn.clone(), key }, path: self.path.clone() }
            }
        };
        // Written under the lock: while it is held, this row names the holder.
        self.exec(
            "INSERT INTO lock_holders (deployment, holder_user, holder_host, pid, since) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (deployment) DO UPDATE SET holder_user = ?2, holder_host = ?3, pid = ?4, since = ?5",
            args![deployment, &self.actor.user, &self.actor.host, i64::from(std::process::id()), now()],
        )?;
        Ok(lock)
    }

    /// [`Store::lock`], retried for up to `wait` while another run holds it (`--wait-lock`).
    pub fn lock_waiting(&self, deployment: &str, wait: std::time::Duration) -> Result<ApplyLock, StateError> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            match self.try_lock(deployment) {
                Err(StateError::Locked { .. }) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(200))
                }
                other => return other,
            }
        }
    }

    fn locked(&self, deployment: &str, path: PathBuf) -> StateError {
        StateError::Locked {
            deployment: deployment.to_string(),
            path,
            holder: self.holder(deployment).ok().flatten().map(Box::new),
        }
    }

    /// Who took the deployment's lock last (the holder, while it is held).
    pub fn holder(&self, deployment: &str) -> Result<Option<Holder>, StateError> {
        let rows = self.query(
            "SELECT holder_user, holder_host, pid, since FROM lock_holders WHERE deployment = ?1",
            args![deployment],
        )?;
        rows.first()
            .map(|r| {
                Ok(Holder {
                    user: self.text(r, 0, "lock_holders.holder_user")?,
                    host: self.text(r, 1, "lock_holders.holder_host")?,
                    pid: self.int(r, 2, "lock_holders.pid")?,
                    since: self.text(r, 3, "lock_holders.since")?,
                })
            })
            .transpose()
    }

    pub fn upsert_deployment(
        &self,
        name: &str,
        spec_file: &str,
        spec_sha256: &str,
    ) -> Result<(), StateError> {
        self.exec(
            "INSERT INTO deployments (name, spec_file, spec_sha256, created_at, updated_at, updated_by) VALUES (?1, ?2, ?3, ?4, ?4, ?5)
             ON CONFLICT (name) DO UPDATE SET spec_file = ?2, spec_sha256 = ?3, updated_at = ?4, updated_by = ?5",
            args![name, spec_file, spec_sha256, now(), self.actor.to_string()],
        )
    }

    /// Records the deployment's monthly budget (`budget.monthly_cny`), or clears it (`None`).
    pub fn set_monthly_budget(&self, name: &str, cny: Option<f64>) -> Result<(), StateError> {
        self.exec("UPDATE deployments SET monthly_budget_cny = ?2 WHERE name = ?1", args![name, cny])
    }

    /// The deployment's monthly budget in CNY; `None` when it has none or the store does not know it.
    pub fn monthly_budget(&self, name: &str) -> Result<Option<f64>, StateError> {
        match self.query("SELECT monthly_budget_cny FROM deployments WHERE name = ?1", args![name])?.first() {
            Some(r) => self.real_opt(r, 0, "deployments.monthly_budget_cny"),
            None => Ok(None),
        }
    }

    /// The spec file a deployment was last applied from, as it was named then (`ssh`/`run`/`cp` read
    /// its pools' login keys); `None` for a deployment the store does not know.
    pub fn spec_file(&self, deployment: &str) -> Result<Option<String>, StateError> {
        match self.query("SELECT spec_file FROM deployments WHERE name = ?1", args![deployment])?.first() {
            Some(r) => self.text(r, 0, "deployments.spec_file").map(Some),
            None => Ok(None),
        }
    }

    pub fn deployments(&self) -> Result<Vec<String>, StateError> {
        self.query("SELECT name FROM deployments ORDER BY name", vec![])?
            .iter()
            .map(|r| self.text(r, 0, "deployments.name"))
            .collect()
    }

    fn insert_operation(&self, intent: &Intent) -> Stmt {
        (
            Cow::Borrowed("INSERT INTO operations (deployment, kind, provider, region, client_token, target, params, status, started_at, by_user, by_host)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'intent', ?8, ?9, ?10) RETURNING id"),
            args![
                intent.deployment.as_deref(),
                intent.kind,
                intent.provider.as_str(),
                &intent.region,
                &intent.client_token,
                intent.target.as_deref(),
                &intent.params,
                now(),
                &self.actor.user,
                &self.actor.host,
            ],
        )
    }

    fn op_id(&self, rows: &[Rows]) -> Result<i64, StateError> {
        let row = rows
            .first()
            .and_then(|r| r.first())
            .ok_or_else(|| self.corrupt("operations.id", "none".into()))?;
        self.int(row, 0, "operations.id")
    }

    /// Writes the intent of a create — the operation and the resource row in `creating` — in one
    /// transaction, durably, before the cloud is called. Re-writing the same token (a retry, a re-run)
    /// keeps the existing resource row.
    pub fn record_create_intent(&self, intent: &Intent, resource: &Resource) -> Result<i64, StateError> {
        let insert = (
            Cow::Borrowed("INSERT INTO resources (client_token, deployment, pool, idx, provider, region, zone, instance_type, billing,
                 state, price_cny_per_hour, price_source, price_as_of, auto_release_at, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'creating', ?10, ?11, ?12, ?13, ?14)
             ON CONFLICT (client_token) DO NOTHING"),
            args![
                &resource.client_token,
                &resource.deployment,
                &resource.pool,
                resource.index,
                resource.provider.as_str(),
                &resource.region,
                &resource.zone,
                &resource.instance_type,
                resource.billing.as_str(),
                resource.price_cny_per_hour,
                resource.price_source.as_deref(),
                resource.price_as_of.as_deref(),
                resource.auto_release_at.map(|t| t.to_string()),
                resource.created_at.to_string(),
            ],
        );
        let rows = self.run(vec![self.insert_operation(intent), insert], true)?;
        self.op_id(&rows)
    }

    /// Writes the intent of a non-create billable call (terminate, snapshot), durably.
    pub fn record_intent(&self, intent: &Intent) -> Result<i64, StateError> {
        let rows = self.run(vec![self.insert_operation(intent)], true)?;
        self.op_id(&rows)
    }

    /// The create answered: its instance id and the operation's outcome, in one commit.
    pub fn record_created(
        &self,
        op: i64,
        client_token: &str,
        instance_id: &str,
        request_id: Option<&str>,
    ) -> Result<(), StateError> {
        self.run(
            vec![
                (
                    "UPDATE resources SET instance_id = ?2 WHERE client_token = ?1".into(),
                    args![client_token, instance_id],
                ),
                (
                    "UPDATE operations SET status = 'done', request_id = ?2, finished_at = ?3 WHERE id = ?1"
                        .into(),
                    args![op, request_id, now()],
                ),
            ],
            false,
        )
        .map(drop)
    }

    /// Closes an operation: "done" or "failed", with the cloud's request id and error text.
    pub fn finish_operation(
        &self,
        id: i64,
        status: &str,
        request_id: Option<&str>,
        error: Option<&str>,
    ) -> Result<(), StateError> {
        self.exec(
            "UPDATE operations SET status = ?2, request_id = ?3, error = ?4, finished_at = ?5 WHERE id = ?1",
            args![id, status, request_id, error, now()],
        )
    }

    /// Operations whose outcome was never written: a run stopped between the call and its answer.
    pub fn open_operations(&self, deployment: Option<&str>) -> Result<Vec<Operation>, StateError> {
        let rows = self.query(
            "SELECT id, deployment, kind, provider, region, client_token, target, params, status, request_id, error, started_at
             FROM operations WHERE status = 'intent' AND (deployment = ?1 OR ?1 IS NULL) ORDER BY id",
            args![deployment],
        )?;
        let mut out = Vec::new();
        for r in &rows {
            let kind = self.text(r, 2, "operations.kind")?;
            let Some(kind) = INTENT_KINDS.iter().copied().find(|k| *k == kind) else {
                return Err(self.corrupt("operations.kind", kind));
            };
            let provider = self.provider(r, 3, "operations.provider")?;
            out.push(Operation {
                id: self.int(r, 0, "operations.id")?,
                intent: Intent {
                    deployment: self.text_opt(r, 1, "operations.deployment")?,
                    kind,
                    provider,
                    region: self.text(r, 4, "operations.region")?,
                    client_token: self.text(r, 5, "operations.client_token")?,
                    target: self.text_opt(r, 6, "operations.target")?,
                    params: self.text(r, 7, "operations.params")?,
                },
                status: self.text(r, 8, "operations.status")?,
                request_id: self.text_opt(r, 9, "operations.request_id")?,
                error: self.text_opt(r, 10, "operations.error")?,
                started_at: self.time("operations.started_at", self.text(r, 11, "operations.started_at")?)?,
            });
        }
        Ok(out)
    }

    fn corrupt(&self, column: &'static str, value: String) -> StateError {
        StateError::Corrupt { path: self.path.clone(), column, value }
    }

    /// A time column read back (see `now` for the format); anything else is a corrupt store.
    fn time(&self, column: &'static str, text: String) -> Result<Timestamp, StateError> {
        text.parse().map_err(|_| self.corrupt(column, text))
    }

    fn time_opt(&self, column: &'static str, text: Option<String>) -> Result<Option<Timestamp>, StateError> {
        text.map(|t| self.time(column, t)).transpose()
    }

    /// The cloud answered a create (or a re-run found the instance by its token): record its id.
    pub fn set_instance_id(&self, client_token: &str, instance_id: &str) -> Result<(), StateError> {
        self.exec(
            "UPDATE resources SET instance_id = ?2 WHERE client_token = ?1",
            args![client_token, instance_id],
        )
    }

    pub fn set_running(
        &self,
        client_token: &str,
        public_ip: Option<&str>,
        private_ip: Option<&str>,
    ) -> Result<(), StateError> {
        self.exec(
            "UPDATE resources SET state = 'running', public_ip = ?2, private_ip = ?3, running_at = COALESCE(running_at, ?4), last_error = NULL
             WHERE client_token = ?1",
            args![client_token, public_ip, private_ip, now()],
        )
    }

    pub fn set_state(
        &self,
        client_token: &str,
        state: ResourceState,
        error: Option<&str>,
    ) -> Result<(), StateError> {
        let released_at = (state == ResourceState::Released).then(now);
        self.exec(
            "UPDATE resources SET state = ?2, last_error = COALESCE(?3, last_error), released_at = COALESCE(?4, released_at)
             WHERE client_token = ?1",
            args![client_token, state.name(), error, released_at],
        )
    }

    /// The release went as far as the cloud allows: renewal off, billed until `until`.
    pub fn set_billed_until(&self, client_token: &str, until: Timestamp) -> Result<(), StateError> {
        self.exec(
            "UPDATE resources SET state = 'billed_until', billed_until = ?2 WHERE client_token = ?1",
            args![client_token, until.to_string()],
        )
    }

    pub fn set_auto_release(&self, client_token: &str, at: Option<Timestamp>) -> Result<(), StateError> {
        self.exec(
            "UPDATE resources SET auto_release_at = ?2 WHERE client_token = ?1",
            args![client_token, at.map(|t| t.to_string())],
        )
    }

    /// Resources of one deployment (all when `None`), live and released, in pool/index order.
    pub fn resources(&self, deployment: Option<&str>) -> Result<Vec<Resource>, StateError> {
        self.query_resources(
            "SELECT client_token, deployment, pool, idx, provider, region, zone, instance_type, billing, instance_id, state,
                    public_ip, private_ip, price_cny_per_hour, price_source, price_as_of, auto_release_at, created_at,
                    running_at, released_at, last_error, billed_until FROM resources
             WHERE (deployment = ?1 OR ?1 IS NULL) ORDER BY deployment, pool, idx, created_at",
            args![deployment],
        )
    }

    pub fn resource(&self, client_token: &str) -> Result<Option<Resource>, StateError> {
        Ok(self
            .query_resources(
                "SELECT client_token, deployment, pool, idx, provider, region, zone, instance_type, billing, instance_id, state,
                        public_ip, private_ip, price_cny_per_hour, price_source, price_as_of, auto_release_at, created_at,
                        running_at, released_at, last_error, billed_until FROM resources WHERE client_token = ?1",
                args![client_token],
            )?
            .pop())
    }

    pub fn resource_by_instance(&self, instance_id: &str) -> Result<Option<Resource>, StateError> {
        Ok(self
            .query_resources(
                "SELECT client_token, deployment, pool, idx, provider, region, zone, instance_type, billing, instance_id, state,
                        public_ip, private_ip, price_cny_per_hour, price_source, price_as_of, auto_release_at, created_at,
                        running_at, released_at, last_error, billed_until FROM resources
                 WHERE instance_id = ?1 ORDER BY created_at DESC LIMIT 1",
                args![instance_id],
            )?
            .pop())
    }

    fn query_resources(&self, sql: &'static str, args: Vec<Value>) -> Result<Vec<Resource>, StateError> {
        let rows = self.query(sql, args)?;
        let mut out = Vec::new();
        for r in &rows {
            let billing = self.text(r, 8, "resources.billing")?;
            let state = self.text(r, 10, "resources.state")?;
            let index = self.int(r, 3, "resources.idx")?;
            out.push(Resource {
                client_token: self.text(r, 0, "resources.client_token")?,
                deployment: self.text(r, 1, "resources.deployment")?,
                pool: self.text(r, 2, "resources.pool")?,
                index: u32::try_from(index).map_err(|_| self.corrupt("resources.idx", index.to_string()))?,
                provider: self.provider(r, 4, "resources.provider")?,
                region: self.text(r, 5, "resources.region")?,
                zone: self.text(r, 6, "resources.zone")?,
                instance_type: self.text(r, 7, "resources.instance_type")?,
                billing: BillingMode::parse(&billing)
                    .ok()
                    .ok_or_else(|| self.corrupt("resources.billing", billing.clone()))?,
                instance_id: self.text_opt(r, 9, "resources.instance_id")?,
                state: ResourceState::from_name(&state)
                    .ok_or_else(|| self.corrupt("resources.state", state.clone()))?,
                public_ip: self.text_opt(r, 11, "resources.public_ip")?,
                private_ip: self.text_opt(r, 12, "resources.private_ip")?,
                price_cny_per_hour: self.real_opt(r, 13, "resources.price_cny_per_hour")?,
                price_source: self.text_opt(r, 14, "resources.price_source")?,
                price_as_of: self.text_opt(r, 15, "resources.price_as_of")?,
                auto_release_at: self.time_opt(
                    "resources.auto_release_at",
                    self.text_opt(r, 16, "resources.auto_release_at")?,
                )?,
                created_at: self.time("resources.created_at", self.text(r, 17, "resources.created_at")?)?,
                running_at: self
                    .time_opt("resources.running_at", self.text_opt(r, 18, "resources.running_at")?)?,
                released_at: self
                    .time_opt("resources.released_at", self.text_opt(r, 19, "resources.released_at")?)?,
                last_error: self.text_opt(r, 20, "resources.last_error")?,
                billed_until: self
                    .time_opt("resources.billed_until", self.text_opt(r, 21, "resources.billed_until")?)?,
            });
        }
        // The order SQLite gives (its BINARY collation), on PostgreSQL too, whatever the database's
        // collation: byte order of the names, then index and creation time.
        out.sort_by(|a, b| {
            (&a.deployment, &a.pool, a.index, a.created_at).cmp(&(
                &b.deployment,
                &b.pool,
                b.index,
                b.created_at,
            ))
        });
        Ok(out)
    }

    pub fn record_snapshot(&self, s: &SnapshotRecord) -> Result<(), StateError> {
        self.exec(
            "INSERT INTO snapshots (snapshot_id, provider, region, instance_id, disk_id, disk_kind, deployment, pool, client_token, state, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
             ON CONFLICT (provider, snapshot_id) DO UPDATE SET state = ?10",
            args![
                &s.snapshot_id,
                s.provider.as_str(),
                &s.region,
                &s.instance_id,
                &s.disk_id,
                &s.disk_kind,
                s.deployment.as_deref(),
                s.pool.as_deref(),
                &s.client_token,
                &s.state,
                s.created_at.to_string()
            ],
        )
    }

    /// Snapshots taken of one instance (all when `None`), newest first.
    pub fn snapshots(&self, instance_id: Option<&str>) -> Result<Vec<SnapshotRecord>, StateError> {
        let rows = self.query(
            "SELECT snapshot_id, provider, region, instance_id, disk_id, disk_kind, deployment, pool, client_token, state, created_at
             FROM snapshots WHERE (instance_id = ?1 OR ?1 IS NULL) ORDER BY created_at DESC, disk_kind DESC",
            args![instance_id],
        )?;
        let mut out = Vec::new();
        for r in &rows {
            out.push(SnapshotRecord {
                snapshot_id: self.text(r, 0, "snapshots.snapshot_id")?,
                provider: self.provider(r, 1, "snapshots.provider")?,
                region: self.text(r, 2, "snapshots.region")?,
                instance_id: self.text(r, 3, "snapshots.instance_id")?,
                disk_id: self.text(r, 4, "snapshots.disk_id")?,
                disk_kind: self.text(r, 5, "snapshots.disk_kind")?,
                deployment: self.text_opt(r, 6, "snapshots.deployment")?,
                pool: self.text_opt(r, 7, "snapshots.pool")?,
                client_token: self.text(r, 8, "snapshots.client_token")?,
                state: self.text(r, 9, "snapshots.state")?,
                created_at: self.time("snapshots.created_at", self.text(r, 10, "snapshots.created_at")?)?,
            });
        }
        // Newest first, the system disk before data disks, in byte order on both backends.
        out.sort_by(|a, b| (b.created_at, &b.disk_kind).cmp(&(a.created_at, &a.disk_kind)));
        Ok(out)
    }

    /// Records a custom image made or adopted, or its new state.
    pub fn record_image(&self, i: &ImageRecord) -> Result<(), StateError> {
        self.exec(
            "INSERT INTO images (image_id, provider, region, instance_id, name, deployment, pool, client_token, state, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (provider, image_id) DO UPDATE SET state = ?9",
            args![
                &i.image_id,
                i.provider.as_str(),
                &i.region,
                &i.instance_id,
                &i.name,
                i.deployment.as_deref(),
                i.pool.as_deref(),
                &i.client_token,
                &i.state,
                i.created_at.to_string()
            ],
        )
    }

    /// Custom images made of one instance (all when `None`), newest first.
    pub fn images(&self, instance_id: Option<&str>) -> Result<Vec<ImageRecord>, StateError> {
        let rows = self.query(
            "SELECT image_id, provider, region, instance_id, name, deployment, pool, client_token, state, created_at
             FROM images WHERE (instance_id = ?1 OR ?1 IS NULL) ORDER BY created_at DESC",
            args![instance_id],
        )?;
        let mut out = Vec::new();
        for r in &rows {
            out.push(ImageRecord {
                image_id: self.text(r, 0, "images.image_id")?,
                provider: self.provider(r, 1, "images.provider")?,
                region: self.text(r, 2, "images.region")?,
                instance_id: self.text(r, 3, "images.instance_id")?,
                name: self.text(r, 4, "images.name")?,
                deployment: self.text_opt(r, 5, "images.deployment")?,
                pool: self.text_opt(r, 6, "images.pool")?,
                client_token: self.text(r, 7, "images.client_token")?,
                state: self.text(r, 8, "images.state")?,
                created_at: self.time("images.created_at", self.text(r, 9, "images.created_at")?)?,
            });
        }
        out.sort_by_key(|i| std::cmp::Reverse(i.created_at));
        Ok(out)
    }

    /// Whether a token was already used for a create (fallbacks and clones must not reuse one).
    pub fn token_known(&self, client_token: &str) -> Result<bool, StateError> {
        Ok(!self.query("SELECT 1 FROM resources WHERE client_token = ?1", args![client_token])?.is_empty())
    }
}

/// A zone's network piece as `networks` records it (migration 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkRecord {
    pub provider: Provider,
    pub region: String,
    pub zone: String,
    /// `vpc`, `subnet` or `security_group` (gpuctl_cloud's `NetKind::as_str`).
    pub kind: String,
    pub cloud_id: String,
    pub client_token: String,
    /// Carries gpuctl's `gpuctl-network` tag: gpuctl made it (in this run or another, from this
    /// store or another), so gpuctl may delete it once nothing uses it.
    pub made_by_gpuctl: bool,
    /// `live` or `deleted`.
    pub state: String,
}

/// The networks of `network = "auto"`: kept apart from the instance rows above so the merge of
/// other schema changes stays easy.
impl Store {
    /// One statement, committed durably (the intent log's own durability).
    fn write_durably(&self, sql: &'static str, args: Vec<Value>) -> Result<(), StateError> {
        self.run(vec![(Cow::Borrowed(sql), args)], true).map(drop)
    }

    /// Records a piece found or made (a piece already recorded keeps its row; a deleted one made
    /// again under the same id, which no cloud does, is live again).
    pub fn record_network(&self, n: &NetworkRecord) -> Result<(), StateError> {
        self.write_durably(
            "INSERT INTO networks (provider, region, zone, kind, cloud_id, client_token, made_by_gpuctl, state, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'live', ?8)
                     ON CONFLICT (provider, cloud_id) DO UPDATE SET state = 'live', deleted_at = NULL",
            args![
                n.provider.as_str(),
                &n.region,
                &n.zone,
                &n.kind,
                &n.cloud_id,
                &n.client_token,
                i64::from(n.made_by_gpuctl),
                now()
            ],
        )
    }

    /// Every piece recorded in a zone (live and deleted), oldest first.
    pub fn networks(
        &self,
        provider: Provider,
        region: &str,
        zone: &str,
    ) -> Result<Vec<NetworkRecord>, StateError> {
        self.query(
            "SELECT kind, cloud_id, client_token, made_by_gpuctl, state FROM networks
             WHERE provider = ?1 AND region = ?2 AND zone = ?3 ORDER BY created_at, cloud_id",
            args![provider.as_str(), region, zone],
        )?
        .iter()
        .map(|r| {
            Ok(NetworkRecord {
                provider,
                region: region.to_owned(),
                zone: zone.to_owned(),
                kind: self.text(r, 0, "networks.kind")?,
                cloud_id: self.text(r, 1, "networks.cloud_id")?,
                client_token: self.text(r, 2, "networks.client_token")?,
                made_by_gpuctl: self.int(r, 3, "networks.made_by_gpuctl")? != 0,
                state: self.text(r, 4, "networks.state")?,
            })
        })
        .collect()
    }

    pub fn set_network_deleted(&self, provider: Provider, cloud_id: &str) -> Result<(), StateError> {
        self.write_durably(
            "UPDATE networks SET state = 'deleted', deleted_at = ?3 WHERE provider = ?1 AND cloud_id = ?2",
            args![provider.as_str(), cloud_id, now()],
        )
    }

    /// `deployment` uses the zone's network (again, if an earlier use had ended).
    pub fn use_network(
        &self,
        provider: Provider,
        region: &str,
        zone: &str,
        deployment: &str,
    ) -> Result<(), StateError> {
        self.write_durably(
            "INSERT INTO network_uses (provider, region, zone, deployment, since) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (provider, region, zone, deployment) DO UPDATE SET ended_at = NULL",
            args![provider.as_str(), region, zone, deployment, now()],
        )
    }

    /// Ends `deployment`'s use of the zone's network.
    pub fn end_network_use(
        &self,
        provider: Provider,
        region: &str,
        zone: &str,
        deployment: &str,
    ) -> Result<(), StateError> {
        self.write_durably(
            "UPDATE network_uses SET ended_at = ?5 WHERE provider = ?1 AND region = ?2 AND zone = ?3
                     AND deployment = ?4 AND ended_at IS NULL",
            args![provider.as_str(), region, zone, deployment, now()],
        )
    }

    /// The slots `deployment` uses now.
    pub fn network_uses(&self, deployment: &str) -> Result<Vec<(Provider, String, String)>, StateError> {
        self.query(
            "SELECT provider, region, zone FROM network_uses WHERE deployment = ?1 AND ended_at IS NULL
             ORDER BY provider, region, zone",
            args![deployment],
        )?
        .iter()
        .map(|r| {
            Ok((
                self.provider(r, 0, "network_uses.provider")?,
                self.text(r, 1, "network_uses.region")?,
                self.text(r, 2, "network_uses.zone")?,
            ))
        })
        .collect()
    }

    /// The deployments other than `except` that still use the zone's network.
    pub fn other_network_users(
        &self,
        provider: Provider,
        region: &str,
        zone: &str,
        except: &str,
    ) -> Result<Vec<String>, StateError> {
        self.query(
            "SELECT deployment FROM network_uses WHERE provider = ?1 AND region = ?2 AND zone = ?3
             AND deployment != ?4 AND ended_at IS NULL ORDER BY deployment",
            args![provider.as_str(), region, zone, except],
        )?
        .iter()
        .map(|r| self.text(r, 0, "network_uses.deployment"))
        .collect()
    }
}

/// Every record of a store, table by table ([`RECORD_TABLES`]), as `state migrate` copies it.
#[derive(Debug, Clone, PartialEq)]
pub struct Dump {
    /// (table, column names in the store's order, rows).
    pub tables: Vec<(&'static str, Vec<String>, Rows)>,
}

/// What `state migrate` prints and compares: records per kind and a checksum over every record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub counts: Vec<(&'static str, usize)>,
    /// SHA-256 (hex) over every table's rows, independent of the backend, row order and column order.
    pub checksum: String,
}

impl Dump {
    pub fn is_empty(&self) -> bool {
        self.tables.iter().all(|(_, _, rows)| rows.is_empty())
    }

    /// Each value is encoded with its type (NULL, integer, float by its bits, text with its length),
    /// columns by name and rows sorted, so the same records give the same checksum on both backends.
    pub fn summary(&self) -> Summary {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        let mut counts = Vec::new();
        for (table, cols, rows) in &self.tables {
            counts.push((*table, rows.len()));
            let mut order: Vec<usize> = (0..cols.len()).collect();
            order.sort_by(|&a, &b| cols[a].cmp(&cols[b]));
            let mut encoded: Vec<String> = rows
                .iter()
                .map(|r| {
                    let mut e = String::new();
                    for &i in &order {
                        let v = match r.get(i) {
                            None | Some(Value::Null) => "N".to_string(),
                            Some(Value::Int(n)) => format!("I{n}"),
                            Some(Value::Real(f)) => format!("R{:016x}", f.to_bits()),
                            Some(Value::Text(t)) => format!("T{}:{t}", t.len()),
                        };
                        e.push_str(&format!("{}={v};", cols[i]));
                    }
                    e
                })
                .collect();
            encoded.sort();
            h.update(format!("table {table} {}\n", rows.len()));
            for e in encoded {
                h.update(e.as_bytes());
                h.update(b"\n");
            }
        }
        Summary { counts, checksum: hex::encode(h.finalize()) }
    }
}

impl Store {
    fn columns(&self, table: &'static str) -> Result<Vec<String>, StateError> {
        let rows = match self.db {
            Db::Sqlite(_) => {
                self.query("SELECT name FROM pragma_table_info(?1) ORDER BY cid", args![table])?
            }
            Db::Postgres(_) => self.query(
                "SELECT CAST(column_name AS TEXT) FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = ?1 ORDER BY ordinal_position",
                args![table],
            )?,
        };
        rows.iter().map(|r| self.text(r, 0, "schema column name")).collect()
    }

    /// The tables of the schema that hold records (not SQLite's bookkeeping, not the version table).
    pub fn schema_tables(&self) -> Result<Vec<String>, StateError> {
        let rows = match self.db {
            Db::Sqlite(_) => self.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
                vec![],
            )?,
            Db::Postgres(_) => self.query(
                "SELECT CAST(table_name AS TEXT) FROM information_schema.tables
                 WHERE table_schema = current_schema() AND table_name <> 'schema_migrations' ORDER BY table_name",
                vec![],
            )?,
        };
        rows.iter().map(|r| self.text(r, 0, "schema table name")).collect()
    }

    /// Every record, as stored.
    pub fn dump(&self) -> Result<Dump, StateError> {
        let mut tables = Vec::new();
        for &table in RECORD_TABLES {
            let cols = self.columns(table)?;
            let list = cols.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
            let rows = self.query(format!("SELECT {list} FROM {table}"), vec![])?;
            tables.push((table, cols, rows));
        }
        Ok(Dump { tables })
    }

    /// Writes every record of `dump` in one transaction (ids kept), for `state migrate` into an empty
    /// store of the same schema.
    pub fn import(&self, dump: &Dump) -> Result<(), StateError> {
        let mut stmts: Vec<Stmt> = Vec::new();
        for (table, cols, rows) in &dump.tables {
            if !RECORD_TABLES.contains(table) {
                return Err(StateError::Migrate(format!("unknown table {table}")));
            }
            let list = cols.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
            let marks = (1..=cols.len()).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ");
            let sql = format!("INSERT INTO {table} ({list}) VALUES ({marks})");
            for r in rows {
                stmts.push((sql.clone().into(), r.clone()));
            }
        }
        if self.is_postgres() {
            // Explicit ids leave the sequence behind: the next intent must get a new id.
            stmts.push((
                "SELECT setval(pg_get_serial_sequence('operations', 'id'), (SELECT COALESCE(MAX(id), 0) + 1 FROM operations), false)"
                    .into(),
                vec![],
            ));
        }
        if stmts.is_empty() {
            return Ok(());
        }
        // One statement alone runs without a transaction; a second no-op keeps it atomic anyway.
        stmts.push(("SELECT 1".into(), vec![]));
        self.run(stmts, true).map(drop)
    }
}

/// What `state migrate` did: both sides' summaries (equal when it succeeded) and whether it copied
/// anything (`false`: the target already held exactly these records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    pub source: Summary,
    pub target: Summary,
    pub copied: bool,
}

/// Copies every record of `source` into `target` (`gpuctl state migrate`), verifiably: `target`
/// must be empty, or already hold exactly the same records (then nothing is written); after the copy
/// both sides' counts and checksums are compared again.
pub fn migrate(source: &Store, target: &Store) -> Result<Migrated, StateError> {
    let from = source.dump()?;
    let there = target.dump()?;
    let want = from.summary();
    if !there.is_empty() {
        let have = there.summary();
        if have == want {
            return Ok(Migrated { source: want, target: have, copied: false });
        }
        return Err(StateError::Migrate(format!(
            "{} is not empty and holds other records ({}; checksum {}): refusing to mix stores",
            target.path().display(),
            counts_text(&have),
            have.checksum
        )));
    }
    target.import(&from)?;
    let have = target.dump()?.summary();
    if have != want {
        return Err(StateError::Migrate(format!(
            "the copy in {} does not match: {} (checksum {}) vs {} (checksum {})",
            target.path().display(),
            counts_text(&have),
            have.checksum,
            counts_text(&want),
            want.checksum
        )));
    }
    Ok(Migrated { source: want, target: have, copied: true })
}

/// "deployments 1, resources 3, …".
pub fn counts_text(s: &Summary) -> String {
    s.counts.iter().map(|(t, n)| format!("{t} {n}")).collect::<Vec<_>>().join(", ")
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.user, self.host)
    }
}

/// A cluster pool's placement group or shared file system as `cluster_resources` records it
/// (migration 6).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ClusterResource {
    pub provider: Provider,
    pub cloud_id: String,
    pub region: String,
    pub zone: String,
    pub deployment: String,
    pub pool: String,
    /// `file_system`, or the placement's kind (`hpc_cluster`, `low_latency_set`).
    pub kind: String,
    pub name: String,
    pub client_token: String,
    /// A file system's tier (`capacity`, `performance`).
    pub tier: Option<String>,
    /// Where the nodes mount a file system from (`address:/path`), once its mount target is ready.
    pub mount_address: Option<String>,
    /// `live`, `kept` or `deleted`.
    pub state: String,
}

impl ClusterResource {
    pub const FILE_SYSTEM: &'static str = "file_system";
}

/// Placement groups and shared file systems (issue 14).
impl Store {
    /// Records one made or found, or its new mount address (a row already recorded keeps the rest).
    pub fn record_cluster_resource(&self, c: &ClusterResource) -> Result<(), StateError> {
        self.write_durably(
            "INSERT INTO cluster_resources (provider, cloud_id, region, zone, deployment, pool, kind, name, client_token, tier, mount_address, state, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
             ON CONFLICT (provider, cloud_id) DO UPDATE SET state = ?12, ended_at = NULL,
                 mount_address = COALESCE(?11, cluster_resources.mount_address)",
            args![
                c.provider.as_str(),
                &c.cloud_id,
                &c.region,
                &c.zone,
                &c.deployment,
                &c.pool,
                &c.kind,
                &c.name,
                &c.client_token,
                c.tier.as_deref(),
                c.mount_address.as_deref(),
                &c.state,
                now()
            ],
        )
    }

    /// Marks one `kept` or `deleted`.
    pub fn end_cluster_resource(
        &self,
        provider: Provider,
        cloud_id: &str,
        state: &str,
    ) -> Result<(), StateError> {
        self.write_durably(
            "UPDATE cluster_resources SET state = ?3, ended_at = ?4 WHERE provider = ?1 AND cloud_id = ?2",
            args![provider.as_str(), cloud_id, state, now()],
        )
    }

    /// A deployment's placement groups and file systems (every state), oldest first.
    pub fn cluster_resources(&self, deployment: &str) -> Result<Vec<ClusterResource>, StateError> {
        self.cluster_resources_of(Some(deployment))
    }

    /// Every deployment's (`None`) or one's placement groups and file systems, oldest first.
    pub fn cluster_resources_of(&self, deployment: Option<&str>) -> Result<Vec<ClusterResource>, StateError> {
        self.query(
            "SELECT provider, cloud_id, region, zone, deployment, pool, kind, name, client_token, tier, mount_address, state
             FROM cluster_resources WHERE (deployment = ?1 OR ?1 IS NULL) ORDER BY created_at, cloud_id",
            args![deployment],
        )?
        .iter()
        .map(|r| {
            Ok(ClusterResource {
                provider: self.provider(r, 0, "cluster_resources.provider")?,
                cloud_id: self.text(r, 1, "cluster_resources.cloud_id")?,
                region: self.text(r, 2, "cluster_resources.region")?,
                zone: self.text(r, 3, "cluster_resources.zone")?,
                deployment: self.text(r, 4, "cluster_resources.deployment")?,
                pool: self.text(r, 5, "cluster_resources.pool")?,
                kind: self.text(r, 6, "cluster_resources.kind")?,
                name: self.text(r, 7, "cluster_resources.name")?,
                client_token: self.text(r, 8, "cluster_resources.client_token")?,
                tier: self.text_opt(r, 9, "cluster_resources.tier")?,
                mount_address: self.text_opt(r, 10, "cluster_resources.mount_address")?,
                state: self.text(r, 11, "cluster_resources.state")?,
            })
        })
        .collect()
    }
}

// After `args!`, which it uses.
mod reclaim;
