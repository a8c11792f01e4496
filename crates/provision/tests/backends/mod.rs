//! The two backends a store test runs on: a SQLite file in a temporary folder, and a fresh database
//! on the PostgreSQL that `GPUCTL_TEST_POSTGRES` names (an admin URL: scripts/pg-tools prints one).

use std::sync::atomic::{AtomicU32, Ordering};

use gpuctl_provision::state::{pg, Location, Store};

pub enum Backend {
    Sqlite(tempfile::TempDir),
    /// The fresh database's URL (it may hold the admin's password: never printed).
    Postgres(String),
}

impl Backend {
    pub fn sqlite() -> Backend {
        Backend::Sqlite(tempfile::tempdir().unwrap())
    }

    /// A fresh database, or `None` (a skip, said on stderr) when no server is given, unless
    /// `GPUCTL_TEST_POSTGRES_REQUIRED=1`: then its absence fails the test.
    pub fn postgres() -> Option<Backend> {
        admin().map(|admin| {
            static N: AtomicU32 = AtomicU32::new(0);
            let nanos =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
            let name =
                format!("gpuctl_t{}_{}_{nanos}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
            Backend::Postgres(pg::create_database(&admin, &name).unwrap())
        })
    }

    pub fn location(&self) -> Location {
        match self {
            Backend::Sqlite(d) => Location::Sqlite(d.path().join("state.db")),
            Backend::Postgres(url) => Location::parse(url, &|_| None, None).unwrap(),
        }
    }

    /// A new handle on the same store, as another process would open it.
    pub fn open(&self) -> Store {
        Store::open_at(&self.location()).unwrap()
    }
}

/// The admin server, per the rules in [`Backend::postgres`].
pub fn admin() -> Option<pg::Target> {
    match std::env::var("GPUCTL_TEST_POSTGRES").ok().filter(|u| !u.is_empty()) {
        Some(url) => Some(pg::Target::parse(&url, &|_| None, None).unwrap()),
        None if std::env::var("GPUCTL_TEST_POSTGRES_REQUIRED").is_ok_and(|v| v == "1") => {
            panic!("GPUCTL_TEST_POSTGRES_REQUIRED=1 but GPUCTL_TEST_POSTGRES is not set (scripts/pg-tools start DIR prints it)")
        }
        None => {
            eprintln!("skipped: no GPUCTL_TEST_POSTGRES (scripts/pg-tools start DIR prints one)");
            None
        }
    }
}

/// Runs one SQL statement on the admin connection (the server-side view a test needs: terminating a
/// backend, reading `pg_locks`); its rows' first column as text.
pub fn admin_sql(sql: &str) -> Vec<String> {
    let admin = admin().expect("a PostgreSQL server");
    let conn = pg::Conn::connect(&admin).unwrap();
    let sql = sql.to_string();
    conn.call(move |c| {
        c.simple_query(&sql)
            .unwrap()
            .into_iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("").to_string()),
                _ => None,
            })
            .collect()
    })
    .unwrap()
}
