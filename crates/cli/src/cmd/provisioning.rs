//! What the provisioning commands (plan, provision, status, snapshot, clone, release, destroy) share:
//! their common flags, the state store's location, credentials and endpoints per cloud, the engine
//! with progress bars, `--sim` (an in-process local cloud with its documented test keys), and exit codes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use gpuctl_cloud::cloud::Cloud;
use gpuctl_cloud::http::{endpoint_override, Endpoint, Http};
use gpuctl_cloud::Provider;
use gpuctl_provision::apply::{ApplyError, Engine, Event, Options};
use gpuctl_provision::spec::{self, Limits, Spec};
use gpuctl_provision::state::{Location, StateError, Store};
use gpuctl_provision::workflow::WorkflowError;
use gpuctl_sign::credentials::{self, Env};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use super::CliError;

/// Exit code when a plan is over the spec's budget (documented in README "Provisioning").
pub const EXIT_OVER_BUDGET: u8 = 3;
/// Exit code when some instances failed and others succeeded.
pub const EXIT_PARTIAL: u8 = 4;

/// Flags every provisioning command takes.
#[derive(Args, Debug, Clone)]
pub struct CloudArgs {
    /// The state store: a SQLite file, or a team's PostgreSQL as `postgres://user@host/db` (password from
    /// the URL, PGPASSWORD or ~/.pgpass; never printed). Default: $GPUCTL_STATE, else
    /// $XDG_DATA_HOME/gpuctl/state.db (~/.local/share/gpuctl/state.db)
    #[arg(long, global = true, value_name = "FILE|URL")]
    pub state: Option<String>,
    /// When another run holds the deployment's lock, wait for it up to DURATION (e.g. 90s, 10m, 1h;
    /// default 10m when given without a value) instead of stopping at once
    #[arg(long, global = true, value_name = "DURATION", num_args = 0..=1, default_missing_value = "10m")]
    pub wait_lock: Option<String>,
    /// Send one cloud's calls to URL, e.g. `--endpoint tencent=http://127.0.0.1:8080` (repeatable; also
    /// GPUCTL_TENCENT_ENDPOINT / GPUCTL_ALIBABA_ENDPOINT / GPUCTL_JDCLOUD_ENDPOINT). Plain http only to loopback.
    #[arg(long = "endpoint", global = true, value_name = "PROVIDER=URL")]
    pub endpoints: Vec<String>,
    /// Run against an in-process local cloud with its test keys and a throw-away state store: no account needed
    #[arg(long, global = true)]
    pub sim: bool,
    /// Credentials profile in the cloud CLI files or gpuctl's credentials.toml
    #[arg(long, global = true)]
    pub profile: Option<String>,
    /// Print machine-readable JSON on stdout (fields documented in docs/json.md)
    #[arg(long, global = true)]
    pub json: bool,
    /// How often to ask the clouds whether instances are running, in milliseconds
    #[arg(long, global = true, default_value_t = 2000)]
    pub poll_ms: u64,
    /// Most calls per second gpuctl makes to each API of each cloud (raise it if your account's limits allow)
    #[arg(long, global = true, default_value_t = 10.0)]
    pub calls_per_second: f64,
    /// Retry budget of one instance, in seconds: its failing cloud calls are retried only until then
    /// (default 240; README "Reliability")
    #[arg(long, global = true, value_name = "SECS")]
    pub unit_retry_secs: Option<u64>,
    /// Retry budget of the whole run, in seconds: no call is retried after it (default 600)
    #[arg(long, global = true, value_name = "SECS")]
    pub run_retry_secs: Option<u64>,
}

/// Where the state store is: `flag` (`--state`), else $GPUCTL_STATE, else the SQLite file under
/// $XDG_DATA_HOME (or ~/.local/share). A `postgres://` URL is completed from libpq's places in `env`.
pub fn state_location(flag: Option<&str>, env: &Env) -> Result<Location, CliError> {
    let given = flag.map(str::to_string).or_else(|| var(env, "GPUCTL_STATE"));
    let text = match given {
        Some(t) => t,
        None => {
            let base = var(env, "XDG_DATA_HOME")
                .map(PathBuf::from)
                .or_else(|| env.home.as_ref().map(|h| h.join(".local/share")))
                .ok_or_else(|| {
                    CliError::usage("no state location: pass --state FILE|URL or set GPUCTL_STATE")
                })?;
            return Ok(Location::Sqlite(base.join("gpuctl/state.db")));
        }
    };
    Location::parse(&text, &|k| var(env, k), env.home.as_deref()).map_err(|e| CliError::usage(e.to_string()))
}

/// `--wait-lock`'s DURATION: whole seconds with an `s`, `m` or `h` suffix (or none: seconds), at
/// most a day.
pub fn parse_wait(text: &str) -> Result<Duration, CliError> {
    let t = text.trim();
    let (num, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, "s"),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| CliError::usage(format!("--wait-lock {text:?}: expected e.g. 90s, 10m, 1h")))?;
    let secs = match unit {
        "s" => Some(n),
        "m" => n.checked_mul(60),
        "h" => n.checked_mul(3600),
        _ => None,
    }
    .filter(|&s| s <= 86_400)
    .ok_or_else(|| {
        CliError::usage(format!("--wait-lock {text:?}: expected e.g. 90s, 10m, 1h (at most 24h)"))
    })?;
    Ok(Duration::from_secs(secs))
}

/// A non-empty environment variable.
fn var(env: &Env, name: &str) -> Option<String> {
    env.vars.get(name).filter(|v| !v.is_empty()).cloned()
}

pub fn state_error(e: StateError) -> CliError {
    match e {
        StateError::Locked { .. } => CliError::failed(e.to_string()),
        other => CliError::failed(other.to_string()),
    }
}

/// Reads and checks a spec: syntax and shape (file:line:column), then against the catalog.
pub fn load_spec(path: &Path, catalog: &gpuctl_core::Catalog) -> Result<Spec, CliError> {
    let spec = spec::parse_file(path, &Limits::default()).map_err(|e| CliError::usage(e.to_string()))?;
    spec::check_catalog(&spec, catalog).map_err(|e| CliError::usage(e.to_string()))?;
    Ok(spec)
}

/// One command's connection to the clouds and the state.
pub struct Session {
    pub runtime: tokio::runtime::Runtime,
    pub engine: Engine,
    /// Keeps the in-process local cloud (and its throw-away state folder) alive for `--sim`.
    _sim: Option<(gpuctl_sim::BackgroundSim, tempfile::TempDir)>,
    pub bars: Bars,
}

impl Session {
    /// Opens the state and makes a client for every cloud that has credentials (or all, with `--sim`).
    /// `need` lists the clouds the command will call; a missing key for one of them is an error.
    pub fn open(args: &CloudArgs, need: &[Provider]) -> Result<Session, CliError> {
        let env = Env::from_process();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| CliError::failed(format!("cannot start the async runtime: {e}")))?;
        let http = Http::new(Duration::from_secs(30)).map_err(CliError::failed)?;
        let mut sim = None;
        let location;
        let mut clouds: Vec<Arc<dyn Cloud>> = Vec::new();
        if args.sim {
            let bg = gpuctl_sim::BackgroundSim::start(gpuctl_simkit::SimConfig::default())
                .map_err(|e| CliError::failed(format!("cannot start the local cloud: {e}")))?;
            let dir = tempfile::tempdir()
                .map_err(|e| CliError::failed(format!("cannot make a temporary state folder: {e}")))?;
            location = Location::Sqlite(dir.path().join("state.db"));
            let ep = Endpoint::parse(&bg.url()).map_err(CliError::failed)?;
            for p in Provider::ALL {
                let (ak, sk) = gpuctl_simkit::creds::TEST_KEY_PAIRS
                    .iter()
                    .find(|(n, _, _)| *n == p)
                    .map(|&(_, ak, sk)| (ak, sk))
                    .unwrap_or_default();
                clouds.push(client(p, gpuctl_sign::Credentials::new(ak, sk), Some(ep.clone()), http.clone()));
            }
            eprintln!("local cloud (--sim) at {}; state in a temporary folder", bg.url());
            sim = Some((bg, dir));
        } else {
            location = state_location(args.state.as_deref(), &env)?;
            let mut warned: Vec<String> = Vec::new();
            for p in Provider::ALL {
                let ep = endpoint_override(p, &args.endpoints, |k| var(&env, k)).map_err(CliError::usage)?;
                match credentials::load(p, args.profile.as_deref(), &env) {
                    Ok(loaded) => {
                        // The warning text starts with "warning: "; one file serving several clouds
                        // (gpuctl's credentials.toml) is warned about once.
                        for w in loaded.warnings {
                            if !warned.contains(&w) {
                                eprintln!("{w}");
                                warned.push(w);
                            }
                        }
                        clouds.push(client(p, loaded.credentials, ep, http.clone()));
                    }
                    Err(e) if need.contains(&p) => return Err(CliError::usage(format!("{p}: {e}"))),
                    Err(_) => {}
                }
            }
        }
        let mut store = Store::open_at(&location).map_err(state_error)?;
        if let Some(w) = &args.wait_lock {
            store.set_lock_wait(parse_wait(w)?);
        }
        let bars = Bars::new(args.json);
        let progress_bars = bars.clone();
        let defaults = Options::default();
        let opts = Options {
            poll_interval: Duration::from_millis(args.poll_ms.max(50)),
            calls_per_second: args.calls_per_second.clamp(0.1, 1000.0),
            unit_retry_deadline: args
                .unit_retry_secs
                .map_or(defaults.unit_retry_deadline, Duration::from_secs),
            run_retry_deadline: args.run_retry_secs.map_or(defaults.run_retry_deadline, Duration::from_secs),
            ..defaults
        };
        let engine = Engine::new(clouds, store, opts, Arc::new(move |e: &Event| progress_bars.event(e)));
        Ok(Session { runtime, engine, _sim: sim, bars })
    }
}

fn client(p: Provider, creds: gpuctl_sign::Credentials, ep: Option<Endpoint>, http: Http) -> Arc<dyn Cloud> {
    match p {
        Provider::Tencent => Arc::new(gpuctl_tencent::client::Client::new(creds, ep, http)),
        Provider::Alibaba => Arc::new(gpuctl_alibaba::client::Client::new(creds, ep, http)),
        Provider::JdCloud => Arc::new(gpuctl_jdcloud::client::Client::new(creds, ep, http)),
    }
}

/// Progress bars on stderr, one per pool (hidden with `--json` or when stderr is not a terminal).
#[derive(Clone)]
pub struct Bars {
    multi: MultiProgress,
    pools: Arc<Mutex<BTreeMap<String, ProgressBar>>>,
}

impl Bars {
    fn new(hidden: bool) -> Bars {
        let multi = MultiProgress::new();
        if hidden {
            multi.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        Bars { multi, pools: Arc::new(Mutex::new(BTreeMap::new())) }
    }

    /// A bar for `pool` counting `total` instances.
    pub fn pool(&self, pool: &str, total: u64, verb: &str) {
        let bar = self.multi.add(ProgressBar::new(total));
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(pool.to_string());
        bar.set_message(verb.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        self.pools.lock().unwrap_or_else(|e| e.into_inner()).insert(pool.to_string(), bar);
    }

    fn with(&self, pool: &str, f: impl FnOnce(&ProgressBar)) {
        if let Some(b) = self.pools.lock().unwrap_or_else(|e| e.into_inner()).get(pool) {
            f(b);
        }
    }

    fn event(&self, e: &Event) {
        match e {
            Event::Creating { pool, index, provider, zone, instance_type } => self.with(pool, |b| {
                b.set_message(format!("#{index}: creating {provider} {instance_type} in {zone}"))
            }),
            Event::Adopted { pool, index, instance_id } => {
                self.with(pool, |b| b.set_message(format!("#{index}: adopted {instance_id}")))
            }
            Event::FellBack { pool, index, from, .. } => self.with(pool, |b| {
                b.println(format!("{pool} #{index}: {from} is sold out; trying the next candidate"))
            }),
            Event::Running { pool, index, instance_id } => self.with(pool, |b| {
                b.inc(1);
                b.set_message(format!("#{index}: {instance_id} running"));
            }),
            Event::Released { instance_id } => self.with("release", |b| {
                b.inc(1);
                b.set_message(format!("{instance_id} released"));
            }),
            Event::BilledUntil { instance_id, until } => self.with("release", |b| {
                b.inc(1);
                b.set_message(format!("{instance_id} bills until {until}"));
            }),
            Event::Begin { group, total, verb } => self.pool(group, *total, verb),
            Event::KeyReady { pool, provider, region, name, fingerprint, imported } => self.with(pool, |b| {
                let how = if *imported { "imported" } else { "found" };
                b.println(format!("{pool}: key pair {name} ({fingerprint}) {how} on {provider} {region}"))
            }),
            Event::NetworkReady { pool, provider, zone, kind, id, created } => self.with(pool, |b| {
                let how = if *created { "created" } else { "found (gpuctl's tag)" };
                b.println(format!("{pool}: network {} {id} {how} on {provider} {zone}", kind.as_str()))
            }),
            Event::SharedStorageReady { pool, provider, zone, id, source } => self.with(pool, |b| {
                b.println(format!(
                    "{pool}: shared file system {id} on {provider} {zone}, mounted from {source}"
                ))
            }),
            Event::Releasing { .. } | Event::Snapshotting { .. } => {}
        }
    }

    pub fn finish(&self) {
        for b in self.pools.lock().unwrap_or_else(|e| e.into_inner()).values() {
            b.finish_and_clear();
        }
    }
}

/// The lines `release`, `destroy` and `provision` print for instances the cloud keeps billing until
/// their prepaid term ends: never "released".
pub fn print_billed_until(billed: &[gpuctl_provision::apply::BilledTerm]) {
    for b in billed {
        crate::outln!(
            "not released: {} {} bills until {} — {} has no early end to a prepaid term; renewal is off, and \
             `gpuctl release` after that time deletes it",
            b.provider, b.instance_id, b.until, b.provider
        );
    }
}

/// Asks "Proceed? [y/N]" on the terminal; without one, `--yes` is required.
pub fn confirm(question: &str, yes: bool) -> Result<(), CliError> {
    use std::io::{BufRead, IsTerminal, Write};
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(CliError::usage(format!("{question} — no terminal to ask on; pass --yes to go ahead")));
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| CliError::failed(e.to_string()))?;
    if matches!(line.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        Err(CliError::failed("cancelled; nothing was changed"))
    }
}

pub fn apply_error(e: ApplyError) -> CliError {
    CliError::failed(e.to_string())
}

pub fn workflow_error(e: WorkflowError) -> CliError {
    CliError::failed(e.to_string())
}

/// `deployment/pool` or an instance id: what `snapshot`, `clone` and `release` act on.
pub enum Target {
    Pool { deployment: String, pool: String },
    Instance(String),
}

impl Target {
    pub fn parse(s: &str) -> Target {
        match s.split_once('/') {
            Some((d, p)) => Target::Pool { deployment: d.into(), pool: p.into() },
            None => Target::Instance(s.into()),
        }
    }
}

/// The recorded live resources a target names.
pub fn resolve(engine: &Engine, target: &Target) -> Result<Vec<gpuctl_provision::state::Resource>, CliError> {
    match target {
        Target::Pool { deployment, pool } => {
            let all = engine.store(|s| s.resources(Some(deployment))).map_err(state_error)?;
            let live: Vec<_> = all.into_iter().filter(|r| &r.pool == pool && r.state.is_live()).collect();
            if live.is_empty() {
                return Err(CliError::usage(format!("gpuctl holds no live instance in {deployment}/{pool} (see `gpuctl status`)")));
            }
            Ok(live)
        }
        Target::Instance(id) => match engine.store(|s| s.resource_by_instance(id)).map_err(state_error)? {
            Some(r) if r.state.is_live() => Ok(vec![r]),
            Some(r) => Err(CliError::usage(format!("instance {id} is recorded as {}", r.state.name()))),
            None => Err(CliError::usage(format!("gpuctl has no record of instance {id}; give --provider and --region to act on an instance it did not create"))),
        },
    }
}

/// Snapshots one instance's disks as its next round (`Engine::snapshot_next`).
pub fn snapshot_instance(
    session: &Session,
    provider: Provider,
    region: &str,
    instance_id: &str,
    owner: Option<&gpuctl_provision::state::Resource>,
) -> Result<Vec<gpuctl_provision::state::SnapshotRecord>, CliError> {
    session
        .runtime
        .block_on(session.engine.snapshot_next(provider, region, instance_id, owner))
        .map_err(apply_error)
}
