//! The PostgreSQL side of the state store (issue 17): where to connect (a `postgres://` URL completed
//! from libpq's usual places), the URL as it may be shown (password redacted, always), TLS through
//! rustls, and the one connection a store holds, owned by a dedicated thread.
//!
//! Why a thread: the engine is async (tokio) and calls the store synchronously from async code, as it
//! does SQLite. The sync `postgres` client drives its own runtime and panics when it is blocked on
//! from inside a tokio runtime; on a plain thread of its own (no runtime context) it is safe. Each
//! store call is one closure sent to that thread and one answer back, so callers keep the same sync
//! API on both backends. The thread lives as long as the store or any lock taken on it: a session
//! advisory lock belongs to that connection, and it must not close while a run still holds it.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;

use bytes::BytesMut;
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use postgres::Client;

/// A column value, the same on both backends: what the store writes and reads, and what `state
/// migrate` copies and checksums.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            // The schema's integers are BIGINT; a server-inferred INT4/INT2 parameter still gets the
            // width it asks for (a value out of range is an error, never truncated).
            Value::Int(i) if *ty == Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
            Value::Int(i) if *ty == Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
            Value::Int(i) => i.to_sql(ty, out),
            Value::Real(f) => f.to_sql(ty, out),
            Value::Text(s) => s.to_sql(ty, out),
        }
    }
    // Any column type: the value's own variant picks the encoding, and the server rejects a mismatch.
    fn accepts(_: &Type) -> bool {
        true
    }
    to_sql_checked!();
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(match *ty {
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            _ => Value::Text(String::from_sql(ty, raw)?),
        })
    }
    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Value::Null)
    }
    fn accepts(ty: &Type) -> bool {
        [Type::INT2, Type::INT4, Type::INT8, Type::FLOAT4, Type::FLOAT8, Type::BOOL].contains(ty)
            || <String as FromSql>::accepts(ty)
    }
}

/// How the connection is encrypted, from `sslmode` (libpq's names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tls {
    /// `disable`, `allow`, `prefer` and no `sslmode`: plain TCP. No opportunistic TLS: a session that
    /// may or may not be encrypted protects nothing; ask for `require` or `verify-full`.
    Plain,
    /// `require`, `verify-ca`, `verify-full`: TLS, and the server's certificate verified against the
    /// Web PKI roots or `sslrootcert`. Stricter than libpq's `require` (which does not verify): an
    /// unverified TLS session gives a false sense of safety for the team's credentials.
    Verified { root_cert: Option<PathBuf> },
}

/// A PostgreSQL store's address, completed from libpq's usual places; its `Debug` and [`Target::shown`]
/// never contain the password.
#[derive(Clone)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub dbname: String,
    password: Option<String>,
    pub tls: Tls,
    pub connect_timeout_s: u64,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

/// Whether `s` names a PostgreSQL store rather than a SQLite file.
pub fn is_url(s: &str) -> bool {
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

/// The largest `~/.pgpass` read (a few lines in practice).
const PGPASS_LIMIT: u64 = 64 * 1024;

fn decode(s: &str) -> Result<String, String> {
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| "a part of the URL is not UTF-8 after percent-decoding".to_string())
}

impl Target {
    /// Parses `postgres://[user[:password]@][host][:port][/dbname][?sslmode=…&sslrootcert=…&connect_timeout=…]`
    /// and fills what it leaves out as libpq does: `PGHOST`, `PGPORT`, `PGUSER` (else `USER`),
    /// `PGDATABASE` (else the user), `PGSSLMODE`, and the password from `PGPASSWORD`, else the first
    /// matching line of `PGPASSFILE` (else `~/.pgpass`). Errors never quote the password.
    pub fn parse(
        url: &str,
        env: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Result<Target, String> {
        let rest = url
            .strip_prefix("postgresql://")
            .or_else(|| url.strip_prefix("postgres://"))
            .ok_or("a PostgreSQL store is a postgres:// or postgresql:// URL")?;
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            Some(u) => match u.split_once(':') {
                Some((u, p)) => (Some(decode(u)?), Some(decode(p)?)),
                None => (Some(decode(u)?), None),
            },
            None => (None, None),
        };
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, tail) = v6.split_once(']').ok_or("an IPv6 host is written [addr]")?;
            (Some(h.to_string()), tail.strip_prefix(':').map(str::to_string))
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (Some(h.to_string()), Some(p.to_string())),
                None => (Some(hostport.to_string()), None),
            }
        };
        let nonempty = |o: Option<String>| o.filter(|s| !s.is_empty());
        let mut sslmode = env("PGSSLMODE");
        let mut root_cert = env("PGSSLROOTCERT").map(PathBuf::from);
        let mut connect_timeout_s = 10;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = decode(v)?;
            match k {
                "sslmode" => sslmode = Some(v),
                "sslrootcert" => root_cert = Some(PathBuf::from(v)),
                "connect_timeout" => {
                    connect_timeout_s = v
                        .parse()
                        .ok()
                        .filter(|s| (1..=600).contains(s))
                        .ok_or("connect_timeout is whole seconds, 1 to 600")?
                }
                // Recorded by the server (pg_stat_activity); we always send our own.
                "application_name" => {}
                other => return Err(format!("unknown URL parameter `{other}` (known: sslmode, sslrootcert, connect_timeout, application_name)")),
            }
        }
        let tls = match sslmode.as_deref().unwrap_or("prefer") {
            "disable" | "allow" | "prefer" => Tls::Plain,
            "require" | "verify-ca" | "verify-full" => Tls::Verified { root_cert },
            other => {
                return Err(format!(
                    "sslmode `{other}` is not one of disable, allow, prefer, require, verify-ca, verify-full"
                ))
            }
        };
        let host = nonempty(host.map(|h| decode(&h)).transpose()?)
            .or_else(|| env("PGHOST"))
            .unwrap_or_else(|| "localhost".into());
        let port = match nonempty(port).or_else(|| env("PGPORT")) {
            Some(p) => p.parse().ok().filter(|&p| p > 0).ok_or("the port is a number from 1 to 65535")?,
            None => 5432,
        };
        let user = nonempty(user)
            .or_else(|| env("PGUSER"))
            .or_else(|| env("USER"))
            .ok_or("no PostgreSQL user: put it in the URL or set PGUSER")?;
        let dbname =
            nonempty(Some(decode(path)?)).or_else(|| env("PGDATABASE")).unwrap_or_else(|| user.clone());
        let mut t = Target { host, port, user, dbname, password, tls, connect_timeout_s };
        if t.password.is_none() {
            t.password = env("PGPASSWORD").filter(|p| !p.is_empty());
        }
        if t.password.is_none() {
            let file = env("PGPASSFILE").map(PathBuf::from).or_else(|| home.map(|h| h.join(".pgpass")));
            if let Some(file) = file.filter(|f| f.is_file()) {
                let text = gpuctl_sign::file::read_string_bounded(&file, PGPASS_LIMIT)
                    .map_err(|e| format!("{}: {e}", file.display()))?;
                t.password = pgpass_lookup(&text, &t);
            }
        }
        Ok(t)
    }

    /// The URL as it may be printed: every field but the password, which shows as `***` when set.
    pub fn shown(&self) -> String {
        let pass = if self.password.is_some() { ":***" } else { "" };
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        let ssl = match self.tls {
            Tls::Plain => "",
            Tls::Verified { .. } => "?sslmode=verify-full",
        };
        format!("postgres://{}{pass}@{host}:{}/{}{ssl}", self.user, self.port, self.dbname)
    }

    fn config(&self) -> postgres::Config {
        let mut c = postgres::Config::new();
        c.host(&self.host)
            .port(self.port)
            .user(&self.user)
            .dbname(&self.dbname)
            .application_name("gpuctl")
            .connect_timeout(std::time::Duration::from_secs(self.connect_timeout_s));
        if let Some(p) = &self.password {
            c.password(p);
        }
        if matches!(self.tls, Tls::Verified { .. }) {
            c.ssl_mode(postgres::config::SslMode::Require);
        }
        c
    }
}

/// For test harnesses: the PostgreSQL server `GPUCTL_TEST_POSTGRES` names (an admin URL;
/// `scripts/pg-tools start` prints one), or `None` — a skip, said on stderr — unless
/// `GPUCTL_TEST_POSTGRES_REQUIRED=1`, which turns its absence into a panic (the README's test command
/// sets it, so a missing server fails the run instead of passing it silently).
pub fn test_server() -> Option<Target> {
    match std::env::var("GPUCTL_TEST_POSTGRES").ok().filter(|u| !u.is_empty()) {
        Some(url) => {
            Some(Target::parse(&url, &|_| None, None).unwrap_or_else(|e| panic!("GPUCTL_TEST_POSTGRES: {e}")))
        }
        None if std::env::var("GPUCTL_TEST_POSTGRES_REQUIRED").is_ok_and(|v| v == "1") => {
            panic!("GPUCTL_TEST_POSTGRES_REQUIRED=1 but GPUCTL_TEST_POSTGRES is not set (scripts/pg-tools start DIR prints it)")
        }
        None => {
            eprintln!(
                "skipped on PostgreSQL: no GPUCTL_TEST_POSTGRES (scripts/pg-tools start DIR prints one)"
            );
            None
        }
    }
}

/// For test harnesses: a fresh database on [`test_server`], its URL (`None` as there).
pub fn test_database() -> Option<String> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let admin = test_server()?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let name = format!("gpuctl_t{}_{}_{nanos}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    Some(create_database(&admin, &name).unwrap_or_else(|e| panic!("creating test database {name}: {e}")))
}

/// For test harnesses: one SQL statement on [`test_server`]'s admin connection (the server-side view:
/// terminating a backend, reading `pg_locks`), the first column of each row as text.
pub fn test_admin_sql(sql: &str) -> Vec<String> {
    let admin = test_server().expect("a PostgreSQL server for the tests");
    let conn = Conn::connect(&admin).unwrap_or_else(|e| panic!("admin connection: {e}"));
    let sql = sql.to_string();
    conn.call(move |c| {
        c.simple_query(&sql)
            .unwrap_or_else(|e| panic!("{sql}: {}", describe(&e)))
            .into_iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("").to_string()),
                _ => None,
            })
            .collect()
    })
    .unwrap_or_else(|e| panic!("admin connection: {e}"))
}

/// A fresh, empty database on the server `admin` names, and the URL to reach it (with `admin`'s
/// credentials: this URL is for the test harness to pass on, never to print — show its
/// [`Target::shown`]). `name` is lowercase letters, digits and `_`.
pub fn create_database(admin: &Target, name: &str) -> Result<String, String> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
        return Err(format!("{name:?} is not a database name for the tests"));
    }
    let conn = Conn::connect(admin)?;
    let sql = format!("CREATE DATABASE {name}");
    conn.call(move |c| c.batch_execute(&sql).map_err(|e| describe(&e)))??;
    let enc =
        |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
    let pass = admin.password.as_deref().map(|p| format!(":{}", enc(p))).unwrap_or_default();
    let host = if admin.host.contains(':') { format!("[{}]", admin.host) } else { admin.host.clone() };
    Ok(format!("postgres://{}{pass}@{host}:{}/{name}", enc(&admin.user), admin.port))
}

/// The password of the first `host:port:database:user:password` line matching `t` (`*` matches
/// anything; `\:` and `\\` are literal), as libpq reads `.pgpass`.
fn pgpass_lookup(text: &str, t: &Target) -> Option<String> {
    let port = t.port.to_string();
    let want = [t.host.as_str(), port.as_str(), t.dbname.as_str(), t.user.as_str()];
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => cur.extend(chars.next()),
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        if fields.len() != 4 {
            continue;
        }
        if fields.iter().zip(want).all(|(f, w)| f == "*" || f == w) {
            return Some(cur);
        }
    }
    None
}

/// Describes a client error without the connection's parameters: the server's code and message when
/// it sent one, else the client's own text and its cause (an I/O error, a TLS refusal).
pub fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} {}: {}", db.severity(), db.code().code(), db.message());
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

type Job = Box<dyn FnOnce(&mut Client) + Send>;

/// The store's one connection, owned by its thread (module doc); cheap to clone (a lock keeps one).
#[derive(Clone)]
pub struct Conn {
    jobs: mpsc::Sender<Job>,
    shown: Arc<str>,
}

impl Conn {
    pub fn connect(t: &Target) -> Result<Conn, String> {
        let config = t.config();
        let tls = match &t.tls {
            Tls::Plain => None,
            Tls::Verified { root_cert } => Some(client_config(root_cert.as_deref())?),
        };
        let (jobs, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), String>>(1);
        std::thread::Builder::new()
            .name("gpuctl-postgres".into())
            .spawn(move || {
                let client = match tls {
                    None => config.connect(postgres::NoTls),
                    Some(c) => config.connect(tokio_postgres_rustls::MakeRustlsConnect::new(c)),
                };
                let mut client = match client {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = ready_tx.send(Err(describe(&e)));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                while let Ok(job) = rx.recv() {
                    job(&mut client);
                }
            })
            .map_err(|e| format!("cannot start the database thread: {e}"))?;
        ready_rx.recv().map_err(|_| "the database thread stopped".to_string())??;
        Ok(Conn { jobs, shown: t.shown().into() })
    }

    /// Runs `f` on the connection's thread and waits for its answer.
    pub fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> T + Send + 'static,
    ) -> Result<T, String> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.jobs
            .send(Box::new(move |c| {
                let _ = tx.send(f(c));
            }))
            .map_err(|_| "the database connection is gone".to_string())?;
        rx.recv().map_err(|_| "the database connection is gone".to_string())
    }

    /// Sends `f` without waiting (a lock's release on drop: if the connection is gone, so is the lock).
    pub fn post(&self, f: impl FnOnce(&mut Client) + Send + 'static) {
        let _ = self.jobs.send(Box::new(f));
    }

    pub fn shown(&self) -> &str {
        &self.shown
    }
}

/// rustls with the ring provider, trusting the Web PKI roots or, with `sslrootcert`, that file's
/// certificates only (libpq's meaning: a private CA replaces the defaults).
fn client_config(root_cert: Option<&Path>) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    match root_cert {
        Some(path) => {
            let pem = gpuctl_sign::file::read_string_bounded(path, 1024 * 1024)
                .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            let mut n = 0;
            for der in pem_certificates(&pem) {
                roots
                    .add(rustls::pki_types::CertificateDer::from(der))
                    .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
                n += 1;
            }
            if n == 0 {
                return Err(format!("sslrootcert {}: no PEM certificate in it", path.display()));
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// The DER bodies of a PEM file's `CERTIFICATE` blocks.
fn pem_certificates(pem: &str) -> Vec<Vec<u8>> {
    use base64::Engine as _;
    let mut out = Vec::new();
    let mut body: Option<String> = None;
    for line in pem.lines().map(str::trim) {
        if line == "-----BEGIN CERTIFICATE-----" {
            body = Some(String::new());
        } else if line == "-----END CERTIFICATE-----" {
            if let Some(b) = body.take() {
                if let Ok(der) = base64::engine::general_purpose::STANDARD.decode(b) {
                    out.push(der);
                }
            }
        } else if let Some(b) = body.as_mut() {
            b.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_password_never_shows() {
        let t =
            Target::parse("postgres://ann:s%3Acret@db.example:6543/team?sslmode=require", &env(&[]), None)
                .unwrap();
        assert_eq!(t.password.as_deref(), Some("s:cret"));
        for shown in [t.shown(), format!("{t:?}")] {
            assert!(!shown.contains("s:cret") && !shown.contains("s%3Acret"), "{shown}");
            assert_eq!(shown, "postgres://ann:***@db.example:6543/team?sslmode=verify-full");
        }
    }

    #[test]
    fn libpq_places_fill_what_the_url_leaves_out() {
        let vars = [("PGHOST", "h"), ("PGPORT", "5555"), ("PGUSER", "u"), ("PGPASSWORD", "pw")];
        let t = Target::parse("postgres://", &env(&vars), None).unwrap();
        assert_eq!((t.host.as_str(), t.port, t.user.as_str(), t.dbname.as_str()), ("h", 5555, "u", "u"));
        assert_eq!(t.password.as_deref(), Some("pw"));
        assert_eq!(t.tls, Tls::Plain);
    }

    #[test]
    fn pgpass_is_read_with_wildcards_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".pgpass"), "# team\nother:*:*:*:no\n*:5432:team:ann:p\\:w\\\\x\n")
            .unwrap();
        let t = Target::parse("postgres://ann@db/team", &env(&[]), Some(dir.path())).unwrap();
        assert_eq!(t.password.as_deref(), Some("p:w\\x"));
        assert_eq!(t.shown(), "postgres://ann:***@db:5432/team");
    }

    #[test]
    fn bad_urls_are_refused_clearly() {
        for (url, want) in [
            ("mysql://x", "postgres://"),
            ("postgres://u@h:99999/d", "port"),
            ("postgres://u@h/d?sslmode=maybe", "sslmode `maybe`"),
            ("postgres://u@h/d?colour=red", "unknown URL parameter `colour`"),
            ("postgres://u:secret@[::1/d", "IPv6"),
        ] {
            let e = Target::parse(url, &env(&[]), None).unwrap_err();
            assert!(e.contains(want), "{url}: {e}");
            assert!(!e.contains("secret"), "{e}");
        }
    }
}
