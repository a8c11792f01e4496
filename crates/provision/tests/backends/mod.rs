//! The two backends a store test runs on: a SQLite file in a temporary folder, and a fresh database
//! on the PostgreSQL that `GPUCTL_TEST_POSTGRES` names (`pg::test_server` says when it is skipped).

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

    /// A fresh database, or `None` (a skip) when no server is given and none is required.
    pub fn postgres() -> Option<Backend> {
        pg::test_database().map(Backend::Postgres)
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

pub use pg::test_admin_sql as admin_sql;
