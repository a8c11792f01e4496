//! The state store: what gpuctl has asked the clouds for and what it holds, in one SQLite file.
//!
//! Owns the schema (versioned by `PRAGMA user_version`, migrated forward on open), the operations
//! intent log (written *before* each billable call, with the call's client token), the resource and
//! snapshot records (kept after release, marked released), and the per-deployment apply lock.
//! Nothing secret is stored: parameters are the create request without credentials.

use std::fs::File;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};

use jiff::Timestamp;

use crate::provider::{BillingMode, Provider};

/// Schema migrations, in order; `user_version` counts how many have run. Append only: never edit one
/// that has shipped.
const MIGRATIONS: &[&str] = &[
    // 1: the first schema.
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
    // 2: a prepaid instance whose release the cloud refuses until its term ends (JD) is kept as
    // `billed_until`, with the term's end; NULL for every row written before.
    r#"
    ALTER TABLE resources ADD COLUMN billed_until TEXT;
    "#,
    // 3: the networks of `network = "auto"` (issue 13): each VPC, subnet and security group gpuctl
    // made or adopted, and which deployments use a zone's network, so `destroy` deletes one only when
    // gpuctl made it and no other deployment still uses it. Rows are never deleted: a deleted piece
    // keeps its row with state 'deleted', an ended use its `ended_at`.
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
];

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("state store {path}: {source}")]
    Sqlite { path: PathBuf, source: rusqlite::Error },
    #[error("state store {path} was written by a newer gpuctl (schema {found}, this build knows {known}); upgrade gpuctl")]
    TooNew { path: PathBuf, found: i64, known: i64 },
    #[error(
        "another `gpuctl` run holds deployment `{deployment}` (lock file {path}); wait for it to finish"
    )]
    Locked { deployment: String, path: PathBuf },
    #[error("state store {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{0:?} is not a deployment name (1–40 characters of a-z, 0-9 and '-', starting with a letter)")]
    BadName(String),
    #[error("state store {path}: bad value `{value}` in column {column}")]
    Corrupt { path: PathBuf, column: &'static str, value: String },
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
        }
    }
    fn from_name(s: &str) -> Option<Self> {
        [Self::Creating, Self::Running, Self::Failed, Self::Releasing, Self::Released, Self::BilledUntil]
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

/// A billable call about to be made: written before the call, closed after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    pub deployment: Option<String>,
    /// "create", "terminate", "snapshot", "import-key".
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

/// Held while an apply/destroy runs on a deployment; released when dropped or when the process dies
/// (an OS file lock, so a SIGKILLed run never leaves a stale lock behind).
#[derive(Debug)]
pub struct ApplyLock {
    _file: File,
    pub path: PathBuf,
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
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
    Timestamp::now().to_string()
}

impl Store {
    /// Opens (creating if needed) the store at `path` and migrates it to the current schema.
    pub fn open(path: &Path) -> Result<Store, StateError> {
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
                tx.execute_batch(m).map_err(sql)?;
            }
            tx.pragma_update(None, "user_version", known.max(found)).map_err(sql)?;
            tx.commit().map_err(sql)?;
        }
        Ok(Store { conn, path: path.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn schema_version(&self) -> Result<i64, StateError> {
        self.conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| self.err(e))
    }

    fn err(&self, source: rusqlite::Error) -> StateError {
        StateError::Sqlite { path: self.path.clone(), source }
    }

    /// Takes the deployment's apply lock, or says who holds it. The lock file sits next to the database
    /// and is named after the deployment, so only a valid deployment name (`name::is_valid`) is taken.
    pub fn lock(&self, deployment: &str) -> Result<ApplyLock, StateError> {
        if !crate::name::is_valid(deployment, crate::name::DEPLOYMENT_MAX) {
            return Err(StateError::BadName(deployment.to_string()));
        }
        let path = self.path.with_extension(format!("{deployment}.lock"));
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| StateError::Io { path: path.clone(), source })?;
        match file.try_lock() {
            Ok(()) => Ok(ApplyLock { _file: file, path }),
            Err(std::fs::TryLockError::WouldBlock) => {
                Err(StateError::Locked { deployment: deployment.to_string(), path })
            }
            Err(std::fs::TryLockError::Error(source)) => Err(StateError::Io { path, source }),
        }
    }

    pub fn upsert_deployment(
        &self,
        name: &str,
        spec_file: &str,
        spec_sha256: &str,
    ) -> Result<(), StateError> {
        let t = now();
        self.conn
            .execute(
                "INSERT INTO deployments (name, spec_file, spec_sha256, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)
                 ON CONFLICT (name) DO UPDATE SET spec_file = ?2, spec_sha256 = ?3, updated_at = ?4",
                params![name, spec_file, spec_sha256, t],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// The spec file a deployment was last applied from, as it was named then (`ssh`/`run`/`cp` read
    /// its pools' login keys); `None` for a deployment the store does not know.
    pub fn spec_file(&self, deployment: &str) -> Result<Option<String>, StateError> {
        self.conn
            .query_row("SELECT spec_file FROM deployments WHERE name = ?1", params![deployment], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }

    pub fn deployments(&self) -> Result<Vec<String>, StateError> {
        let mut st =
            self.conn.prepare("SELECT name FROM deployments ORDER BY name").map_err(|e| self.err(e))?;
        let rows = st.query_map([], |r| r.get(0)).map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Writes the intent of a create — the operation and the resource row in `creating` — in one
    /// transaction, before the cloud is called. Re-writing the same token (a retry, a re-run) keeps the
    /// existing resource row.
    /// Runs `f` with `synchronous=FULL`: its commit is on disk (fsynced) before this returns. Used for
    /// intents, which must outlive even a power cut before the billable call goes out.
    fn durably<T>(&self, f: impl FnOnce() -> Result<T, StateError>) -> Result<T, StateError> {
        self.conn.pragma_update(None, "synchronous", "FULL").map_err(|e| self.err(e))?;
        let out = f();
        self.conn.pragma_update(None, "synchronous", "NORMAL").map_err(|e| self.err(e))?;
        out
    }

    pub fn record_create_intent(&self, intent: &Intent, resource: &Resource) -> Result<i64, StateError> {
        self.durably(|| self.create_intent(intent, resource))
    }

    fn create_intent(&self, intent: &Intent, resource: &Resource) -> Result<i64, StateError> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        let op = insert_operation(&tx, intent).map_err(|e| self.err(e))?;
        tx.execute(
            "INSERT INTO resources (client_token, deployment, pool, idx, provider, region, zone, instance_type, billing,
                 state, price_cny_per_hour, price_source, price_as_of, auto_release_at, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'creating', ?10, ?11, ?12, ?13, ?14)
             ON CONFLICT (client_token) DO NOTHING",
            params![
                resource.client_token,
                resource.deployment,
                resource.pool,
                resource.index,
                resource.provider.as_str(),
                resource.region,
                resource.zone,
                resource.instance_type,
                resource.billing.as_str(),
                resource.price_cny_per_hour,
                resource.price_source,
                resource.price_as_of,
                resource.auto_release_at.map(|t| t.to_string()),
                resource.created_at.to_string(),
            ],
        )
        .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(op)
    }

    /// Writes the intent of a non-create billable call (terminate, snapshot).
    pub fn record_intent(&self, intent: &Intent) -> Result<i64, StateError> {
        self.durably(|| insert_operation(&self.conn, intent).map_err(|e| self.err(e)))
    }

    /// The create answered: its instance id and the operation's outcome, in one commit.
    pub fn record_created(
        &self,
        op: i64,
        client_token: &str,
        instance_id: &str,
        request_id: Option<&str>,
    ) -> Result<(), StateError> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        tx.execute(
            "UPDATE resources SET instance_id = ?2 WHERE client_token = ?1",
            params![client_token, instance_id],
        )
        .map_err(|e| self.err(e))?;
        tx.execute(
            "UPDATE operations SET status = 'done', request_id = ?2, finished_at = ?3 WHERE id = ?1",
            params![op, request_id, now()],
        )
        .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))
    }

    /// Closes an operation: "done" or "failed", with the cloud's request id and error text.
    pub fn finish_operation(
        &self,
        id: i64,
        status: &str,
        request_id: Option<&str>,
        error: Option<&str>,
    ) -> Result<(), StateError> {
        self.conn
            .execute(
                "UPDATE operations SET status = ?2, request_id = ?3, error = ?4, finished_at = ?5 WHERE id = ?1",
                params![id, status, request_id, error, now()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Operations whose outcome was never written: a run stopped between the call and its answer.
    pub fn open_operations(&self, deployment: Option<&str>) -> Result<Vec<Operation>, StateError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT id, deployment, kind, provider, region, client_token, target, params, status, request_id, error, started_at
                 FROM operations WHERE status = 'intent' AND (?1 IS NULL OR deployment = ?1) ORDER BY id",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![deployment], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, Option<String>>(6)?,
                    r.get::<_, String>(7)?,
                    r.get::<_, String>(8)?,
                    r.get::<_, Option<String>>(9)?,
                    r.get::<_, Option<String>>(10)?,
                    r.get::<_, String>(11)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (
                id,
                deployment,
                kind,
                provider,
                region,
                client_token,
                target,
                params,
                status,
                request_id,
                error,
                started_at,
            ) = row.map_err(|e| self.err(e))?;
            let kind = match kind.as_str() {
                "create" => "create",
                "terminate" => "terminate",
                "snapshot" => "snapshot",
                "import-key" => "import-key",
                _ => return Err(self.corrupt("operations.kind", kind)),
            };
            let provider = gpuctl_core::parse_provider(&provider)
                .ok()
                .ok_or_else(|| self.corrupt("operations.provider", provider.clone()))?;
            out.push(Operation {
                id,
                intent: Intent { deployment, kind, provider, region, client_token, target, params },
                status,
                request_id,
                error,
                started_at: self.time("operations.started_at", started_at)?,
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
        self.conn
            .execute(
                "UPDATE resources SET instance_id = ?2 WHERE client_token = ?1",
                params![client_token, instance_id],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn set_running(
        &self,
        client_token: &str,
        public_ip: Option<&str>,
        private_ip: Option<&str>,
    ) -> Result<(), StateError> {
        self.conn
            .execute(
                "UPDATE resources SET state = 'running', public_ip = ?2, private_ip = ?3, running_at = COALESCE(running_at, ?4), last_error = NULL
                 WHERE client_token = ?1",
                params![client_token, public_ip, private_ip, now()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn set_state(
        &self,
        client_token: &str,
        state: ResourceState,
        error: Option<&str>,
    ) -> Result<(), StateError> {
        let released_at = (state == ResourceState::Released).then(now);
        self.conn
            .execute(
                "UPDATE resources SET state = ?2, last_error = COALESCE(?3, last_error), released_at = COALESCE(?4, released_at)
                 WHERE client_token = ?1",
                params![client_token, state.name(), error, released_at],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// The release went as far as the cloud allows: renewal off, billed until `until`.
    pub fn set_billed_until(&self, client_token: &str, until: Timestamp) -> Result<(), StateError> {
        self.conn
            .execute(
                "UPDATE resources SET state = 'billed_until', billed_until = ?2 WHERE client_token = ?1",
                params![client_token, until.to_string()],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    pub fn set_auto_release(&self, client_token: &str, at: Option<Timestamp>) -> Result<(), StateError> {
        self.conn
            .execute(
                "UPDATE resources SET auto_release_at = ?2 WHERE client_token = ?1",
                params![client_token, at.map(|t| t.to_string())],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Resources of one deployment (all when `None`), live and released, in pool/index order.
    pub fn resources(&self, deployment: Option<&str>) -> Result<Vec<Resource>, StateError> {
        self.query_resources(
            "WHERE (?1 IS NULL OR deployment = ?1) ORDER BY deployment, pool, idx, created_at",
            params![deployment],
        )
    }

    pub fn resource(&self, client_token: &str) -> Result<Option<Resource>, StateError> {
        Ok(self.query_resources("WHERE client_token = ?1", params![client_token])?.pop())
    }

    pub fn resource_by_instance(&self, instance_id: &str) -> Result<Option<Resource>, StateError> {
        Ok(self
            .query_resources("WHERE instance_id = ?1 ORDER BY created_at DESC LIMIT 1", params![instance_id])?
            .pop())
    }

    fn query_resources(&self, tail: &str, args: impl rusqlite::Params) -> Result<Vec<Resource>, StateError> {
        let sql = format!(
            "SELECT client_token, deployment, pool, idx, provider, region, zone, instance_type, billing, instance_id, state,
                    public_ip, private_ip, price_cny_per_hour, price_source, price_as_of, auto_release_at, created_at,
                    running_at, released_at, last_error, billed_until FROM resources {tail}"
        );
        let mut st = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let mut rows = st.query(args).map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            let g = |e| self.err(e);
            let provider: String = r.get(4).map_err(g)?;
            let billing: String = r.get(8).map_err(g)?;
            let state: String = r.get(10).map_err(g)?;
            out.push(Resource {
                client_token: r.get(0).map_err(g)?,
                deployment: r.get(1).map_err(g)?,
                pool: r.get(2).map_err(g)?,
                index: r.get(3).map_err(g)?,
                provider: gpuctl_core::parse_provider(&provider)
                    .ok()
                    .ok_or_else(|| self.corrupt("resources.provider", provider.clone()))?,
                region: r.get(5).map_err(g)?,
                zone: r.get(6).map_err(g)?,
                instance_type: r.get(7).map_err(g)?,
                billing: BillingMode::parse(&billing)
                    .ok()
                    .ok_or_else(|| self.corrupt("resources.billing", billing.clone()))?,
                instance_id: r.get(9).map_err(g)?,
                state: ResourceState::from_name(&state)
                    .ok_or_else(|| self.corrupt("resources.state", state.clone()))?,
                public_ip: r.get(11).map_err(g)?,
                private_ip: r.get(12).map_err(g)?,
                price_cny_per_hour: r.get(13).map_err(g)?,
                price_source: r.get(14).map_err(g)?,
                price_as_of: r.get(15).map_err(g)?,
                auto_release_at: self.time_opt("resources.auto_release_at", r.get(16).map_err(g)?)?,
                created_at: self.time("resources.created_at", r.get(17).map_err(g)?)?,
                running_at: self.time_opt("resources.running_at", r.get(18).map_err(g)?)?,
                released_at: self.time_opt("resources.released_at", r.get(19).map_err(g)?)?,
                last_error: r.get(20).map_err(g)?,
                billed_until: self.time_opt("resources.billed_until", r.get(21).map_err(g)?)?,
            });
        }
        Ok(out)
    }

    pub fn record_snapshot(&self, s: &SnapshotRecord) -> Result<(), StateError> {
        self.conn
            .execute(
                "INSERT INTO snapshots (snapshot_id, provider, region, instance_id, disk_id, disk_kind, deployment, pool, client_token, state, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                 ON CONFLICT (provider, snapshot_id) DO UPDATE SET state = ?10",
                params![
                    s.snapshot_id,
                    s.provider.as_str(),
                    s.region,
                    s.instance_id,
                    s.disk_id,
                    s.disk_kind,
                    s.deployment,
                    s.pool,
                    s.client_token,
                    s.state,
                    s.created_at.to_string()
                ],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Snapshots taken of one instance (all when `None`), newest first.
    pub fn snapshots(&self, instance_id: Option<&str>) -> Result<Vec<SnapshotRecord>, StateError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT snapshot_id, provider, region, instance_id, disk_id, disk_kind, deployment, pool, client_token, state, created_at
                 FROM snapshots WHERE (?1 IS NULL OR instance_id = ?1) ORDER BY created_at DESC, disk_kind DESC",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![instance_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                    r.get(9)?,
                    r.get(10)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (
                snapshot_id,
                provider,
                region,
                instance_id,
                disk_id,
                disk_kind,
                deployment,
                pool,
                client_token,
                state,
                created_at,
            ) = row.map_err(|e| self.err(e))?;
            let provider = gpuctl_core::parse_provider(&provider)
                .ok()
                .ok_or_else(|| self.corrupt("snapshots.provider", provider.clone()))?;
            out.push(SnapshotRecord {
                snapshot_id,
                provider,
                region,
                instance_id,
                disk_id,
                disk_kind,
                deployment,
                pool,
                client_token,
                state,
                created_at: self.time("snapshots.created_at", created_at)?,
            });
        }
        Ok(out)
    }

    /// Whether a token was already used for a create (fallbacks and clones must not reuse one).
    pub fn token_known(&self, client_token: &str) -> Result<bool, StateError> {
        self.conn
            .query_row("SELECT 1 FROM resources WHERE client_token = ?1", params![client_token], |_| Ok(()))
            .optional()
            .map(|o| o.is_some())
            .map_err(|e| self.err(e))
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
    /// One statement, committed with a full sync (the intent log's own durability).
    fn write_durably(&self, sql: &str, p: impl rusqlite::Params) -> Result<(), StateError> {
        self.durably(|| self.conn.execute(sql, p).map(|_| ()).map_err(|e| self.err(e)))
    }

    /// Records a piece found or made (a piece already recorded keeps its row; a deleted one made
    /// again under the same id, which no cloud does, is live again).
    pub fn record_network(&self, n: &NetworkRecord) -> Result<(), StateError> {
        self.write_durably(
            "INSERT INTO networks (provider, region, zone, kind, cloud_id, client_token, made_by_gpuctl, state, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'live', ?8)
                     ON CONFLICT (provider, cloud_id) DO UPDATE SET state = 'live', deleted_at = NULL",
            params![n.provider.as_str(), n.region, n.zone, n.kind, n.cloud_id, n.client_token, n.made_by_gpuctl, now()],
        )
    }

    /// Every piece recorded in a zone (live and deleted), oldest first.
    pub fn networks(
        &self,
        provider: Provider,
        region: &str,
        zone: &str,
    ) -> Result<Vec<NetworkRecord>, StateError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT kind, cloud_id, client_token, made_by_gpuctl, state FROM networks
                 WHERE provider = ?1 AND region = ?2 AND zone = ?3 ORDER BY created_at, rowid",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![provider.as_str(), region, zone], |r| {
                Ok(NetworkRecord {
                    provider,
                    region: region.to_owned(),
                    zone: zone.to_owned(),
                    kind: r.get(0)?,
                    cloud_id: r.get(1)?,
                    client_token: r.get(2)?,
                    made_by_gpuctl: r.get(3)?,
                    state: r.get(4)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    pub fn set_network_deleted(&self, provider: Provider, cloud_id: &str) -> Result<(), StateError> {
        self.write_durably(
            "UPDATE networks SET state = 'deleted', deleted_at = ?3 WHERE provider = ?1 AND cloud_id = ?2",
            params![provider.as_str(), cloud_id, now()],
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
            params![provider.as_str(), region, zone, deployment, now()],
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
            params![provider.as_str(), region, zone, deployment, now()],
        )
    }

    /// The slots `deployment` uses now.
    pub fn network_uses(&self, deployment: &str) -> Result<Vec<(Provider, String, String)>, StateError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT provider, region, zone FROM network_uses WHERE deployment = ?1 AND ended_at IS NULL
                 ORDER BY provider, region, zone",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![deployment], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (p, region, zone) = row.map_err(|e| self.err(e))?;
            let provider = p.parse::<Provider>().map_err(|_| StateError::Corrupt {
                path: self.path.clone(),
                column: "network_uses.provider",
                value: p.clone(),
            })?;
            out.push((provider, region, zone));
        }
        Ok(out)
    }

    /// The deployments other than `except` that still use the zone's network.
    pub fn other_network_users(
        &self,
        provider: Provider,
        region: &str,
        zone: &str,
        except: &str,
    ) -> Result<Vec<String>, StateError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT deployment FROM network_uses WHERE provider = ?1 AND region = ?2 AND zone = ?3
                 AND deployment != ?4 AND ended_at IS NULL ORDER BY deployment",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![provider.as_str(), region, zone, except], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }
}

fn insert_operation(conn: &Connection, intent: &Intent) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO operations (deployment, kind, provider, region, client_token, target, params, status, started_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'intent', ?8)",
        params![
            intent.deployment,
            intent.kind,
            intent.provider.as_str(),
            intent.region,
            intent.client_token,
            intent.target,
            intent.params,
            now()
        ],
    )?;
    Ok(conn.last_insert_rowid())
}
