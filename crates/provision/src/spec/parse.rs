//! Text → [`Spec`]. Reads every key through `read::Table`, so unknown keys, wrong types and bad values all
//! come back as positioned errors, all at once, and nothing here can panic on hostile input.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gpuctl_sign::file::{read_bounded, read_string_bounded, size_words, ReadError};
use toml_edit::{ImDocument, Item, Value};

use super::read::{type_name, Reader, Spanned, Table};
use super::*;
use crate::name;
use crate::provider::{
    allowed_terms, api_offers, boot_script_runs, has_default_network, imports_key_type,
    public_bandwidth_range, terms_list,
};

/// Bounds that keep a hostile or mistaken spec from costing memory, time or money.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_file_bytes: usize,
    pub max_pools: usize,
    pub max_count_per_pool: u32,
    pub max_instances: u32,
    pub max_string: usize,
    /// cloud-init text before base64; 12 KiB becomes 16 KiB encoded, Tencent's UserData limit.
    pub max_user_data: usize,
    pub max_tags: usize,
    pub max_data_disks: usize,
    /// Errors reported before the rest are summarised as "and N more".
    pub max_errors: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 1 << 20,
            max_pools: 50,
            max_count_per_pool: 500,
            max_instances: 1000,
            max_string: 256,
            max_user_data: 12 * 1024,
            max_tags: 20,
            max_data_disks: 16,
            max_errors: 50,
        }
    }
}

const TOP_KEYS: &[&str] = &["deployment", "hours", "budget", "pool"];
const BUDGET_KEYS: &[&str] = &["total_cny", "per_hour_cny", "monthly_cny"];
const POOL_KEYS: &[&str] = &[
    "name",
    "count",
    "provider",
    "region",
    "zone",
    "instance_type",
    "candidates",
    "require",
    "billing",
    "term",
    "spot_max_price",
    "image",
    "system_disk",
    "data_disks",
    "network",
    "ssh_from",
    "login_key",
    "public_ip",
    "auto_release",
    "snapshot",
    "cluster",
    "engine",
    "shared_storage",
    "tags",
    "user_data",
    "user_data_file",
    "env",
    "idle",
    "spot",
];
const IDLE_KEYS: &[&str] = &["below", "for", "then", "role"];
const SPOT_KEYS: &[&str] = &["on_notice", "timeout"];
/// `idle.for` bounds: 10 minutes (two of the monitoring's 5-minute periods) to a day.
const IDLE_MIN_S: f64 = 600.0;
const IDLE_MAX_S: f64 = 86_400.0;
/// `spot.timeout` when not given.
const DEFAULT_NOTICE_TIMEOUT_S: u64 = 60;
const CANDIDATE_KEYS: &[&str] = &["provider", "region", "zone", "instance_type"];
const REQUIRE_KEYS: &[&str] = &["gpu", "gpus", "min_vram_gb", "providers", "regions"];
const DISK_KEYS: &[&str] = &["category", "size_gb", "snapshot_id"];
const NETWORK_KEYS: &[&str] = &["vpc", "subnet", "security_groups"];
const SNAPSHOT_KEYS: &[&str] = &["before_release"];
const PUBLIC_IP_KEYS: &[&str] = &["bandwidth_mbps", "billing"];
const SHARED_STORAGE_KEYS: &[&str] = &["mount", "tier", "size_gb", "on_destroy"];
/// The largest `shared_storage.size_gb` (1 PiB): beyond every cloud's standard tier.
const MAX_SHARED_GB: i64 = 1 << 20;
/// The widest public bandwidth any cloud sells at create time (JD's 1000 Mbps); each cloud's own range is
/// checked per provider ([`public_bandwidth_range`]).
const MAX_PUBLIC_MBPS: i64 = 1000;
const ENV_KEYS: &[&str] = &["container", "container_image", "mount", "setup", "cuda", "driver"];
/// Folders the system owns: a data disk mounted over one would hide (or replace) the OS.
const SYSTEM_DIRS: &[&str] = &[
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root", "/run",
    "/sbin", "/srv", "/sys", "/tmp", "/usr", "/var",
];
const PROVIDER_NAMES: &[&str] = &Provider::NAMES;

/// Reads a spec file. `user_data_file` paths are relative to the spec's folder.
pub fn parse_file(path: &Path, limits: &Limits) -> Result<Spec, SpecErrors> {
    let file = path.display().to_string();
    let one = |line, column, message: String| {
        SpecErrors(vec![SpecError { file: file.clone(), line, column, message }])
    };
    // Bounded by the read itself, not by metadata: `/dev/zero` or a FIFO must not hang `plan`.
    let bytes = match read_bounded(path, limits.max_file_bytes as u64) {
        Ok(b) => b,
        Err(ReadError::TooLarge { len, limit, .. }) => {
            let size = size_words(len, limit);
            return Err(one(1, 1, format!("the spec is {size} bytes; at most {limit} are accepted")));
        }
        Err(e) => return Err(one(0, 0, format!("cannot read the spec: {}", e.reason()))),
    };
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) => t,
        Err(e) => {
            // Position the bad byte in the valid prefix, which is UTF-8 by definition.
            let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default();
            let loc = Reader::new(&file, valid).loc(Some(valid.len()..valid.len()));
            return Err(one(
                loc.line,
                loc.column,
                "the spec is not valid UTF-8 (TOML files must be UTF-8)".to_string(),
            ));
        }
    };
    parse(&file, text, path.parent(), limits)
}

/// Parses spec text. `base_dir` resolves `user_data_file`; without it such a key is an error.
pub fn parse(file: &str, text: &str, base_dir: Option<&Path>, limits: &Limits) -> Result<Spec, SpecErrors> {
    let mut r = Reader::new(file, text);
    if text.len() > limits.max_file_bytes {
        r.error(
            None,
            format!("the spec is {} bytes; at most {} are accepted", text.len(), limits.max_file_bytes),
        );
        return Err(SpecErrors(r.errors));
    }
    let doc = match ImDocument::parse(text) {
        Ok(d) => d,
        Err(e) => {
            // toml_edit puts its detail on a second line; one line keeps `file:line:column: …` greppable.
            let msg =
                e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
            r.error(e.span(), format!("invalid TOML: {msg}"));
            return Err(SpecErrors(r.errors));
        }
    };
    let p = Parser { limits, base_dir };
    let spec = p.spec(&mut r, doc.as_item());
    let mut errors = r.errors;
    if errors.is_empty() {
        if let Some(mut spec) = spec {
            spec.sha256 = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(text.as_bytes()));
            return Ok(spec);
        }
    }
    errors.sort_by_key(|e| (e.line, e.column));
    if errors.len() > limits.max_errors {
        let more = errors.len() - limits.max_errors;
        errors.truncate(limits.max_errors);
        let last = errors.last().cloned().unwrap_or(SpecError {
            file: file.to_string(),
            line: 1,
            column: 1,
            message: String::new(),
        });
        errors.push(SpecError { message: format!("… and {more} more errors",), ..last });
    }
    Err(SpecErrors(errors))
}

struct Parser<'a> {
    limits: &'a Limits,
    base_dir: Option<&'a Path>,
}

impl Parser<'_> {
    fn spec(&self, r: &mut Reader<'_>, root: &Item) -> Option<Spec> {
        let top = Table::open(r, root, "the spec", TOP_KEYS)?;
        let deployment = self.name(
            r,
            &top,
            "deployment",
            name::DEPLOYMENT_MAX,
            "deployment name",
            " (it goes into tags and client tokens)",
        );
        if deployment.is_none() && top.get("deployment").is_none() {
            r.error(Some(0..0), "the spec is missing `deployment = \"name\"`");
        }
        let hours = top.number(r, "hours").and_then(|h| {
            if h.value > 0.0 && h.value <= 3.0 * 365.0 * 24.0 {
                Some(h)
            } else {
                r.error_at(h.loc, "`hours` must be more than 0 and at most 26280 (3 years)");
                None
            }
        });
        let budget = match top.get("budget") {
            Some(item) => self.budget(r, item),
            None => Budget::default(),
        };
        let pools = self.pools(r, &top, hours.as_ref().map(|h| h.value));
        Some(Spec {
            file: r.file().to_string(),
            sha256: String::new(),
            deployment: deployment?,
            hours,
            budget,
            pools: pools?,
        })
    }

    /// Deployment and pool names: checked by `name::is_valid`, explained when they fail.
    fn name(
        &self,
        r: &mut Reader<'_>,
        t: &Table<'_>,
        key: &str,
        max: usize,
        what: &str,
        why: &str,
    ) -> Option<Spanned<String>> {
        let n = t.str(r, key)?;
        if name::is_valid(&n, max) {
            return Some(n);
        }
        r.error_at(
            n.loc,
            format!(
                "{what} `{}` must be 1–{max} characters of a-z, 0-9 and '-', starting with a letter{why}",
                self.clip(&n)
            ),
        );
        None
    }

    fn clip(&self, s: &str) -> String {
        if s.chars().count() > 60 {
            format!("{}…", s.chars().take(60).collect::<String>())
        } else {
            s.to_string()
        }
    }

    fn budget(&self, r: &mut Reader<'_>, item: &Item) -> Budget {
        let Some(t) = Table::open(r, item, "[budget]", BUDGET_KEYS) else { return Budget::default() };
        let mut money = |key: &str| {
            let v = t.number(r, key)?;
            if v.value < 0.0 {
                r.error_at(v.loc, format!("`{key}` must not be negative"));
                return None;
            }
            Some(v)
        };
        let total_cny = money("total_cny");
        let per_hour_cny = money("per_hour_cny");
        let monthly_cny = money("monthly_cny");
        Budget { total_cny, per_hour_cny, monthly_cny }
    }

    fn pools(&self, r: &mut Reader<'_>, top: &Table<'_>, hours: Option<f64>) -> Option<Vec<Pool>> {
        let nodes = top.tables(r, "pool");
        if nodes.is_empty() {
            if top.get("pool").is_none() {
                r.error(Some(0..0), "the spec has no pools; add at least one `[[pool]]`");
            }
            return None;
        }
        if nodes.len() > self.limits.max_pools {
            r.error(
                top.key_span("pool"),
                format!("{} pools; at most {} are accepted", nodes.len(), self.limits.max_pools),
            );
            return None;
        }
        let mut pools = Vec::new();
        let mut seen: BTreeMap<String, Loc> = BTreeMap::new();
        let mut total: u64 = 0;
        let mut ok = true;
        for (i, node) in nodes.into_iter().enumerate() {
            let t = node.open(r, format!("[[pool]] #{}", i + 1), POOL_KEYS);
            match self.pool(r, t, hours) {
                Some(p) => {
                    if let Some(first) = seen.get(&p.name.value) {
                        r.error_at(
                            p.name.loc,
                            format!(
                                "pool name `{}` is used twice (first at line {})",
                                p.name.value, first.line
                            ),
                        );
                        ok = false;
                    }
                    seen.insert(p.name.value.clone(), p.name.loc);
                    total += u64::from(p.count.value);
                    pools.push(p);
                }
                None => ok = false,
            }
        }
        if total > u64::from(self.limits.max_instances) {
            r.error(
                top.key_span("pool"),
                format!(
                    "the pools ask for {total} instances in all; at most {} are accepted",
                    self.limits.max_instances
                ),
            );
            return None;
        }
        ok.then_some(pools)
    }

    fn pool(&self, r: &mut Reader<'_>, mut t: Table<'_>, hours: Option<f64>) -> Option<Pool> {
        let loc = t.loc(r);
        let name = self.name(r, &t, "name", name::POOL_MAX, "pool name", "");
        if name.is_none() && t.get("name").is_none() {
            t.missing(r, "name", " (e.g. name = \"train\")");
        }
        if let Some(n) = &name {
            t.what = format!("pool `{}`", n.value);
        }
        let count = match t.int(r, "count") {
            None if t.get("count").is_none() => Some(Spanned { value: 1, loc }),
            None => None,
            Some(c) if c.value >= 1 && c.value <= i64::from(self.limits.max_count_per_pool) => {
                Some(Spanned { value: c.value as u32, loc: c.loc })
            }
            Some(c) => {
                r.error_at(
                    c.loc,
                    format!(
                        "`count` must be from 1 to {}, found {}",
                        self.limits.max_count_per_pool, c.value
                    ),
                );
                None
            }
        };
        let placement = self.placement(r, &t);
        let (billing, term, term_loc, spot_max_price) = self.billing(r, &t)?;
        let (image, image_gpu_driver) = self.image(r, &t);
        if image.is_none() && t.get("image").is_none() {
            t.missing(
                r,
                "image",
                " (an image id, a name such as \"ubuntu-22.04\", { os = \"ubuntu-22.04\", gpu_driver = true }, or a table of ids per provider: image = { tencent = \"img-…\" })",
            );
        }
        let system_disk = match t.get("system_disk") {
            Some(item) => self.disk(r, item, format!("`system_disk` of {}", t.what), 20, 2048),
            None => Some(Disk { category: DiskCategory::Ssd, size_gb: 100, snapshot_id: None }),
        };
        let data_disks = self.data_disks(r, &t);
        let network = self.network(r, &t).and_then(|n| self.ssh_from(r, &t, n));
        let login_key = self.login_key(r, &t);
        let public_ip = self.public_ip(r, &t);
        let auto_release = self.auto_release(r, &t, billing.value, hours);
        let snapshot = match t.get("snapshot") {
            Some(item) => Table::open(r, item, format!("`snapshot` of {}", t.what), SNAPSHOT_KEYS).map(|s| {
                SnapshotPolicy { before_release: s.bool(r, "before_release").is_some_and(|b| b.value) }
            }),
            None => Some(SnapshotPolicy::default()),
        };
        // A cluster (issue 14): the pool's `count` instances are one training job's nodes, so they
        // are placed together — one zone, one type — and a short zone moves them all.
        let cluster = match t.bool(r, "cluster") {
            Some(c) if c.value && count.as_ref().is_some_and(|n| n.value < 2) => {
                r.error_at(
                    c.loc,
                    format!(
                        "{} is a cluster of 2 or more nodes; set count = 2 or more, or drop `cluster`",
                        t.what
                    ),
                );
                None
            }
            Some(c) => Some(c.value),
            None if t.get("cluster").is_some() => None,
            None => Some(false),
        };
        let engine = self.engine(r, &t, cluster);
        let shared_storage = self.shared_storage(r, &t);
        let tags = self.tags(r, &t);
        let user_data = self.user_data(r, &t);
        let env = match t.get("env") {
            Some(item) => self.env(r, item, &t.what).map(Some),
            None => Some(None),
        };
        let idle = self.idle(r, &t);
        let spot_notice = self.spot_notice(r, &t, billing.value);

        // Cross-field checks need the pieces above.
        let (placement, image, network) = (placement?, image?, network?);
        if let Some(Some(st)) = &shared_storage {
            self.check_shared_storage(r, &t.what, st, cluster == Some(true), &network, &user_data, &env);
        }
        if engine == Some(ClusterEngine::K3s) {
            // k3s's containerd runs pods with the NVIDIA container runtime (`crate::k3s`), which the
            // boot environment's `container = true` installs.
            if env.as_ref().is_some_and(|e| !e.as_ref().is_some_and(|e| e.container)) {
                let at = t.get("engine").map(|_| r.loc(t.value_span("engine"))).unwrap_or(loc);
                r.error_at(at, format!("`engine = \"k3s\"` of {} needs the NVIDIA container toolkit on every node (its pods reach the GPUs through it): add env = {{ container = true }}", t.what));
            }
        }
        let providers = self.placement_providers(&placement, &image);
        self.check_agent(r, &t.what, &idle, &spot_notice, &user_data, &providers);
        if let Some(Some(env)) = &env {
            let pool_name = name.as_ref().map_or("", |n| n.value.as_str());
            self.check_env(r, pool_name, env, data_disks.as_ref(), &user_data, &providers);
        }
        for (p, at) in &providers {
            if let Err(why) = api_offers(*p, billing.value) {
                let sellers: Vec<&str> = Provider::ALL
                    .iter()
                    .filter(|q| api_offers(**q, billing.value).is_ok())
                    .map(|q| q.as_str())
                    .collect();
                r.error_at(
                    billing.loc,
                    format!(
                        "billing `{}` is not offered by {p} ({why}); providers that offer it: {}",
                        billing.value,
                        sellers.join(", ")
                    ),
                );
            }
            // The generic range above holds every cloud's terms; each cloud takes only some of them.
            let terms = allowed_terms(*p, billing.value);
            if let (Some(at_term), false) = (term_loc, terms.is_empty() || terms.contains(&term)) {
                r.error_at(
                    at_term,
                    format!(
                        "`term` {term} for `{}` billing is not offered by {p}; allowed: {}",
                        billing.value,
                        terms_list(terms)
                    ),
                );
            }
            if image.for_provider(*p).is_none() {
                r.error_at(*at, format!("{} has no image for {p}; add image.{p} = \"…\"", t.what));
            }
            if let Some(Some(u)) = &user_data {
                if let Err(why) = boot_script_runs(*p, &u.value) {
                    r.error_at(u.loc, format!("{} user data: {why}", t.what));
                }
            }
            if let Some(LoginKey::Import { key, loc, .. }) =
                login_key.as_ref().and_then(|k| k.for_provider(*p))
            {
                if let Err(why) = imports_key_type(*p, &key.key_type) {
                    r.error_at(*loc, format!("{} login key: {why}; use an RSA key (ssh-keygen -t rsa -b 4096) or an existing key pair's id for {p}", t.what));
                }
            }
            let ip_range = |ip: &Spanned<PublicIp>| public_bandwidth_range(*p, ip.value.billing);
            if let Some((ip, (lo, hi))) =
                public_ip.as_ref().and_then(|i| i.as_ref()).and_then(|i| Some((i, ip_range(i)?)))
            {
                if !(lo..=hi).contains(&ip.value.bandwidth_mbps) {
                    r.error_at(
                        ip.loc,
                        format!(
                            "{p} sells a public IP billed by {} of {lo} to {hi} Mbps, not {}; set public_ip.bandwidth_mbps within that",
                            ip.value.billing.as_str(),
                            ip.value.bandwidth_mbps
                        ),
                    );
                }
            }
            match &network {
                Network::Default if !has_default_network(*p) => {
                    r.error_at(*at, format!("{p} has no default network; set network = \"auto\" with ssh_from (gpuctl makes one) or network = {{ vpc = \"…\", subnet = \"…\", security_groups = [\"…\"] }}"))
                }
                Network::Auto { .. } if !crate::network::makes_networks(*p) => {
                    r.error_at(*at, format!("{} has network = \"auto\", which gpuctl does not make on {p} yet; use network = \"default\" or network.{p} = {{ vpc = \"…\", subnet = \"…\", security_groups = [\"…\"] }}", t.what))
                }
                Network::Ids(ids) if ids.for_provider(*p).is_none() => {
                    r.error_at(*at, format!("{} has no network ids for {p}; add network.{p} = {{ vpc = \"…\", subnet = \"…\", security_groups = [\"…\"] }}", t.what))
                }
                _ => {}
            }
        }
        let pool = Pool {
            name: name?,
            loc,
            count: count?,
            placement,
            billing,
            term,
            spot_max_price,
            image,
            image_gpu_driver,
            system_disk: system_disk?,
            data_disks: data_disks?,
            network,
            login_key,
            public_ip: public_ip?.map(|ip| ip.value),
            auto_release: auto_release?,
            snapshot: snapshot?,
            cluster: cluster?,
            engine: engine?,
            shared_storage: shared_storage?,
            tags: tags?,
            user_data: user_data?.map(|u| u.value),
            env: env?,
            idle: idle?,
            spot_notice: spot_notice?,
        };
        if crate::agent::wanted(&pool) {
            for (p, _) in &providers {
                let len = crate::boot::user_data(&pool, *p, None).map_or(0, |u| u.len());
                if crate::agent::supported(*p) && len > self.limits.max_user_data {
                    r.error_at(loc, format!("{} renders to {len} bytes of user data for {p} with the node agent; at most {} are accepted (16 KiB once base64-encoded, Tencent's limit): shorten env.setup or `on_notice`", t.what, self.limits.max_user_data));
                    return None;
                }
            }
        }
        Some(pool)
    }

    /// `idle = { below = "5%", for = "30m", then = "stop" | "release", role = "…" }` (issue 15).
    fn idle(&self, r: &mut Reader<'_>, t: &Table<'_>) -> Option<Option<IdlePolicy>> {
        let Some(item) = t.get("idle") else { return Some(None) };
        let loc = r.loc(t.value_span("idle"));
        let what = format!("`idle` of {}", t.what);
        let it = Table::open(r, item, what.clone(), IDLE_KEYS)?;
        let mut ok = true;
        let below = match it.str(r, "below") {
            Some(b) => match b.value.trim().strip_suffix('%').and_then(|n| n.trim().parse::<f64>().ok()) {
                Some(n) if n > 0.0 && n < 100.0 => n,
                _ => {
                    r.error_at(b.loc, format!("`below` of {what} is a GPU utilization such as \"5%\" (above 0 %, below 100 %), found \"{}\"", self.clip(&b.value)));
                    ok = false;
                    0.0
                }
            },
            None => {
                if it.get("below").is_none() {
                    r.error_at(loc, format!("{what} needs `below`, the utilization under which the GPUs count as idle (e.g. below = \"5%\")"));
                }
                ok = false;
                0.0
            }
        };
        let for_s = match it.str(r, "for") {
            Some(f) => {
                match f.value.parse::<jiff::Span>().ok().and_then(|s| {
                    s.total((jiff::Unit::Second, jiff::SpanRelativeTo::days_are_24_hours())).ok()
                }) {
                    // At least two of the monitoring's 5-minute periods; at most a day (Tencent's
                    // GetMonitorData answers at most 7200 points a request: a day at 60 s is 1440).
                    Some(secs) if (IDLE_MIN_S..=IDLE_MAX_S).contains(&secs) => secs as u64,
                    _ => {
                        r.error_at(f.loc, format!("`for` of {what} is how long the GPUs must stay idle, from 10m to 24h (e.g. for = \"30m\"), found \"{}\"", self.clip(&f.value)));
                        ok = false;
                        0
                    }
                }
            }
            None => {
                if it.get("for").is_none() {
                    r.error_at(
                        loc,
                        format!("{what} needs `for`, how long the GPUs must stay idle (e.g. for = \"30m\")"),
                    );
                }
                ok = false;
                0
            }
        };
        let then = match it.str(r, "then") {
            Some(a) => match a.value.as_str() {
                "stop" => IdleAction::Stop,
                "release" => IdleAction::Release,
                other => {
                    r.error_at(a.loc, format!("`then` of {what} must be \"stop\" (stopped without charge; its disks still bill) or \"release\", found \"{}\"", self.clip(other)));
                    ok = false;
                    IdleAction::Stop
                }
            },
            None if it.get("then").is_some() => {
                ok = false;
                IdleAction::Stop
            }
            None => {
                r.error_at(loc, format!("{what} needs `then`: \"stop\" (stopped without charge; its disks still bill) or \"release\""));
                ok = false;
                IdleAction::Stop
            }
        };
        let role = match it.str(r, "role") {
            // CAM and RAM role names: letters, digits and `+=,.@-_`, at most 64 characters
            // (assumption: the clouds' consoles state these rules; no API definition does).
            Some(n)
                if !n.value.is_empty()
                    && n.value.len() <= 64
                    && n.value.bytes().all(|b| b.is_ascii_alphanumeric() || b"+=,.@-_".contains(&b)) =>
            {
                n.value
            }
            Some(n) => {
                r.error_at(n.loc, format!("`role` of {what} is an instance role's name: 1 to 64 letters, digits or + = , . @ - _, found \"{}\"", self.clip(&n.value)));
                ok = false;
                String::new()
            }
            None if it.get("role").is_some() => {
                ok = false;
                String::new()
            }
            None => DEFAULT_AGENT_ROLE.to_string(),
        };
        ok.then_some(Some(IdlePolicy { loc, below_percent: below, for_s, then, role }))
    }

    /// `spot = { on_notice = "…command…", timeout = "60s" }` (issue 15): spot pools only.
    fn spot_notice(
        &self,
        r: &mut Reader<'_>,
        t: &Table<'_>,
        billing: BillingMode,
    ) -> Option<Option<SpotNotice>> {
        let Some(item) = t.get("spot") else { return Some(None) };
        let loc = r.loc(t.value_span("spot"));
        let what = format!("`spot` of {}", t.what);
        let st = Table::open(r, item, what.clone(), SPOT_KEYS)?;
        if billing != BillingMode::Spot {
            r.error_at(loc, format!("{what} is for spot billing (the cloud's reclaim notice); this pool is billed `{billing}`"));
            return None;
        }
        let command = match st.str(r, "on_notice") {
            Some(c) if !c.value.trim().is_empty() && c.value.len() <= 4096 && !c.value.contains('\0') => {
                c.value
            }
            Some(c) => {
                r.error_at(
                    c.loc,
                    format!("`on_notice` of {what} is a shell command of 1 to 4096 characters"),
                );
                return None;
            }
            None => {
                if st.get("on_notice").is_none() {
                    r.error_at(loc, format!("{what} needs `on_notice`, the command run when the cloud gives notice (e.g. on_notice = \"python save_checkpoint.py\")"));
                }
                return None;
            }
        };
        let timeout_s = match st.str(r, "timeout") {
            Some(d) => {
                match d.value.parse::<jiff::Span>().ok().and_then(|s| {
                    s.total((jiff::Unit::Second, jiff::SpanRelativeTo::days_are_24_hours())).ok()
                }) {
                    Some(secs) if (5.0..=600.0).contains(&secs) => secs as u64,
                    _ => {
                        r.error_at(d.loc, format!("`timeout` of {what} is from 5s to 10m (the hook is also stopped before the reclaim time), found \"{}\"", self.clip(&d.value)));
                        return None;
                    }
                }
            }
            None if st.get("timeout").is_some() => return None,
            None => DEFAULT_NOTICE_TIMEOUT_S,
        };
        Some(Some(SpotNotice { loc, command, timeout_s }))
    }

    /// The node agent (issue 15) is rendered into gpuctl's own boot config and signs with an instance
    /// role's credentials: neither raw `user_data` nor a cloud without instance roles can carry it.
    fn check_agent(
        &self,
        r: &mut Reader<'_>,
        what: &str,
        idle: &Option<Option<IdlePolicy>>,
        spot: &Option<Option<SpotNotice>>,
        user_data: &Option<Option<Spanned<String>>>,
        providers: &[(Provider, Loc)],
    ) {
        let (idle, spot) = (idle.as_ref().and_then(|i| i.as_ref()), spot.as_ref().and_then(|s| s.as_ref()));
        let Some(at) = idle.map(|i| i.loc).or(spot.map(|s| s.loc)) else { return };
        let key = if idle.is_some() { "idle" } else { "spot" };
        if let Some(Some(u)) = user_data {
            r.error_at(u.loc, format!("{what} sets `{key}` and raw user data: the node agent is part of gpuctl's boot config, which would replace yours; put your commands in env.setup"));
        }
        for (p, _) in providers {
            if !crate::agent::supported(*p) {
                let why = if idle.is_some() {
                    "JD Cloud documents no instance-role credentials, so the agent would need a long-lived access key on the node, and gpuctl never puts one there"
                } else {
                    "JD Cloud documents no spot reclaim notice to watch"
                };
                r.error_at(at, format!("{what} sets `{key}`, which gpuctl cannot run on {p}: {why}; use a tencent or alibaba candidate"));
            }
        }
    }

    /// The providers a pool may land on, each with where it was named (for errors about it).
    fn placement_providers(
        &self,
        placement: &Placement,
        image: &PerProvider<String>,
    ) -> Vec<(Provider, Loc)> {
        match placement {
            Placement::Candidates(c) => {
                let mut seen = BTreeSet::new();
                c.iter().filter(|c| seen.insert(c.provider)).map(|c| (c.provider, c.loc)).collect()
            }
            Placement::Requirement(req) if !req.providers.is_empty() => {
                req.providers.iter().map(|p| (*p, req.loc)).collect()
            }
            // An open requirement may land wherever the spec gave an image.
            Placement::Requirement(req) => Provider::ALL
                .into_iter()
                .filter(|p| image.for_provider(*p).is_some())
                .map(|p| (p, req.loc))
                .collect(),
        }
    }

    fn provider(&self, r: &mut Reader<'_>, s: &Spanned<String>) -> Option<Provider> {
        match gpuctl_core::parse_provider(&s.value) {
            Ok(p) => Some(p),
            Err(_) => {
                let near = gpuctl_core::suggest(&s.value, PROVIDER_NAMES.iter().copied());
                let hint = if near.is_empty() {
                    format!("; one of: {}", PROVIDER_NAMES.join(", "))
                } else {
                    gpuctl_core::suggest::did_you_mean(&near)
                };
                r.error_at(s.loc, format!("unknown provider `{}`{hint}", self.clip(&s.value)));
                None
            }
        }
    }

    fn candidate(&self, r: &mut Reader<'_>, t: &Table<'_>) -> Option<Candidate> {
        let loc = t.loc(r);
        let mut req = |key: &str, hint: &str| {
            let v = t.str(r, key);
            if v.is_none() && t.get(key).is_none() {
                t.missing(r, key, hint);
            }
            v.and_then(|v| self.id(r, key, v))
        };
        let provider = req("provider", " (tencent, alibaba or jdcloud)");
        let region = req("region", "");
        let zone = req("zone", "");
        let instance_type = req("instance_type", "");
        let provider = self.provider(r, &provider?)?;
        let (region, zone) = (region?, zone?);
        // All three clouds name zones after their region (ap-guangzhou-3, cn-hangzhou-h, cn-north-1a).
        if !zone.value.starts_with(&region.value) {
            r.error_at(zone.loc, format!("zone `{}` is not in region `{}`", zone.value, region.value));
            return None;
        }
        Some(Candidate { loc, provider, region, zone, instance_type: instance_type? })
    }

    /// An id-like string (region, image, subnet): non-empty, bounded, printable ASCII.
    fn id(&self, r: &mut Reader<'_>, key: &str, v: Spanned<String>) -> Option<Spanned<String>> {
        let ok = !v.value.is_empty()
            && v.value.len() <= self.limits.max_string
            && v.value.chars().all(|c| c.is_ascii_graphic());
        if !ok {
            r.error_at(
                v.loc,
                format!(
                    "`{key}` must be 1–{} printable ASCII characters without spaces, found `{}`",
                    self.limits.max_string,
                    self.clip(&v.value)
                ),
            );
            return None;
        }
        Some(v)
    }

    fn placement(&self, r: &mut Reader<'_>, t: &Table<'_>) -> Option<Placement> {
        let single = ["provider", "region", "zone", "instance_type"].iter().any(|k| t.get(k).is_some());
        let listed = t.get("candidates").is_some();
        let require = t.get("require");
        let ways = usize::from(single) + usize::from(listed) + usize::from(require.is_some());
        if ways == 0 {
            t.missing(r, "provider", "; give provider/region/zone/instance_type, a [[pool.candidates]] list, or require = { gpu = \"…\" }");
            return None;
        }
        if ways > 1 {
            r.error(t.span.clone(), format!("{} mixes placements; give exactly one of: provider/region/zone/instance_type, [[pool.candidates]], require", t.what));
            return None;
        }
        if single {
            return self.candidate(r, t).map(|c| Placement::Candidates(vec![c]));
        }
        if listed {
            let nodes = t.tables(r, "candidates");
            if nodes.is_empty() {
                r.error(t.value_span("candidates"), format!("`candidates` of {} is empty", t.what));
                return None;
            }
            let mut out = Vec::new();
            let mut ok = true;
            for (i, n) in nodes.into_iter().enumerate() {
                let ct = n.open(r, format!("candidate #{} of {}", i + 1, t.what), CANDIDATE_KEYS);
                match self.candidate(r, &ct) {
                    Some(c) => out.push(c),
                    None => ok = false,
                }
            }
            return ok.then_some(Placement::Candidates(out));
        }
        let rt = Table::open(r, require?, format!("`require` of {}", t.what), REQUIRE_KEYS)?;
        let loc = rt.loc(r);
        let gpu = rt.str(r, "gpu").and_then(|g| self.id(r, "gpu", g));
        let gpus = match rt.int(r, "gpus") {
            None => 1,
            Some(n) if (1..=16).contains(&n.value) => n.value as u32,
            Some(n) => {
                r.error_at(n.loc, format!("`gpus` must be from 1 to 16, found {}", n.value));
                return None;
            }
        };
        let min_vram_gb = rt.number(r, "min_vram_gb").and_then(|v| {
            if v.value > 0.0 && v.value <= 1024.0 {
                Some(v.value)
            } else {
                r.error_at(v.loc, "`min_vram_gb` must be more than 0 and at most 1024");
                None
            }
        });
        if gpu.is_none() && min_vram_gb.is_none() {
            rt.missing(r, "gpu", " (or min_vram_gb)");
            return None;
        }
        let mut providers = Vec::new();
        for s in rt.strings(r, "providers").unwrap_or_default() {
            providers.push(self.provider(r, &s)?);
        }
        let regions = rt.strings(r, "regions").unwrap_or_default().into_iter().map(|s| s.value).collect();
        Some(Placement::Requirement(Requirement { loc, gpu, gpus, min_vram_gb, providers, regions }))
    }

    /// The billing mode, the term (and where it was written, when it was), and the spot bid.
    #[allow(clippy::type_complexity)]
    fn billing(
        &self,
        r: &mut Reader<'_>,
        t: &Table<'_>,
    ) -> Option<(Spanned<BillingMode>, u32, Option<Loc>, Option<f64>)> {
        let names: Vec<&str> = BillingMode::ALL.iter().map(|m| m.as_str()).collect();
        let mode = match t.str(r, "billing") {
            None if t.get("billing").is_none() => {
                t.missing(r, "billing", &format!(" (one of: {})", names.join(", ")));
                return None;
            }
            None => return None,
            // gpuctl-core's names (hourly … year3) and their aliases (1y, 3y, on-demand, …).
            Some(s) => match BillingMode::parse(&s.value) {
                Ok(m) => Spanned { value: m, loc: s.loc },
                Err(_) => {
                    let near = gpuctl_core::suggest(&s.value, names.iter().copied());
                    let hint = if near.is_empty() {
                        format!("; one of: {}", names.join(", "))
                    } else {
                        gpuctl_core::suggest::did_you_mean(&near)
                    };
                    r.error_at(s.loc, format!("unknown billing mode `{}`{hint}", self.clip(&s.value)));
                    return None;
                }
            },
        };
        let max_term = match mode.value {
            BillingMode::Hourly | BillingMode::Spot => 0,
            BillingMode::Weekly => 4, // Alibaba: Period 1–4 with PeriodUnit=Week
            // The most any cloud takes (Tencent, Alibaba: 60 months); each cloud's own list
            // (`allowed_terms`) is checked once the pool's providers are known.
            BillingMode::Monthly => 60,
            BillingMode::Year1 | BillingMode::Year3 => 1,
        };
        let term_in = t.int(r, "term");
        let term_loc = term_in.as_ref().map(|n| n.loc);
        let term = match term_in {
            None => 1,
            Some(n) if max_term == 0 => {
                r.error_at(
                    n.loc,
                    format!(
                        "`term` applies to prepaid billing (weekly, monthly); `{}` is pay-as-you-go",
                        mode.value
                    ),
                );
                return None;
            }
            Some(n) if n.value >= 1 && n.value <= max_term => n.value as u32,
            Some(n) => {
                r.error_at(
                    n.loc,
                    format!(
                        "`term` for `{}` billing must be from 1 to {max_term}, found {}",
                        mode.value, n.value
                    ),
                );
                return None;
            }
        };
        let spot_max_price = match t.number(r, "spot_max_price") {
            None => None,
            Some(p) if mode.value != BillingMode::Spot => {
                r.error_at(
                    p.loc,
                    format!(
                        "`spot_max_price` applies to spot billing only; this pool's billing is `{}`",
                        mode.value
                    ),
                );
                return None;
            }
            Some(p) if p.value > 0.0 => Some(p.value),
            Some(p) => {
                r.error_at(p.loc, "`spot_max_price` (¥/hour) must be more than 0");
                return None;
            }
        };
        Some((mode, term, term_loc, spot_max_price))
    }

    /// `key = "x"` for every provider, or `key = { tencent = "x", alibaba = "y" }`.
    fn per_provider_str(&self, r: &mut Reader<'_>, t: &Table<'_>, key: &str) -> Option<PerProvider<String>> {
        let item = t.get(key)?;
        if item.is_str() {
            let v = t.str(r, key)?;
            return self.id(r, key, v).map(|v| PerProvider::All(v.value));
        }
        let pt = Table::open(r, item, format!("`{key}` of {}", t.what), PROVIDER_NAMES)?;
        let mut map = BTreeMap::new();
        let mut ok = true;
        for p in Provider::ALL {
            if let Some(v) = pt.str(r, p.as_str()) {
                match self.id(r, key, v) {
                    Some(v) => drop(map.insert(p, v.value)),
                    None => ok = false,
                }
            } else if pt.get(p.as_str()).is_some() {
                ok = false;
            }
        }
        ok.then_some(PerProvider::Each(map))
    }

    /// `image`: an id or name (see `crate::image`), a table of them per provider, or `{ os = NAME,
    /// gpu_driver = BOOL }` (the same name on every cloud). The bool is `gpu_driver`, false unless given.
    fn image(&self, r: &mut Reader<'_>, t: &Table<'_>) -> (Option<PerProvider<String>>, bool) {
        let by_os = t.get("image").and_then(|i| i.as_table_like()).is_some_and(|tl| tl.contains_key("os"));
        if !by_os {
            return (self.per_provider_str(r, t, "image"), false);
        }
        let Some(item) = t.get("image") else { return (None, false) };
        let Some(it) = Table::open(r, item, format!("`image` of {}", t.what), &["os", "gpu_driver"]) else {
            return (None, false);
        };
        let gpu_driver = it.bool(r, "gpu_driver").is_some_and(|b| b.value);
        let Some(os) = it.str(r, "os").and_then(|v| self.id(r, "image.os", v)) else {
            return (None, gpu_driver);
        };
        if !crate::image::is_name(&os.value) {
            let near = gpuctl_core::suggest(&os.value, crate::image::FAMILIES.iter().map(|(f, _)| *f));
            r.error_at(
                os.loc,
                format!(
                    "`image.os` `{}` is not an image name (a family and version: {}-<version>, e.g. \"ubuntu-22.04\"){}",
                    self.clip(&os.value),
                    crate::image::FAMILIES.iter().map(|(f, _)| *f).collect::<Vec<_>>().join("|"),
                    gpuctl_core::suggest::did_you_mean(&near)
                ),
            );
            return (None, gpu_driver);
        }
        (Some(PerProvider::All(os.value)), gpu_driver)
    }

    /// `login_key`: an id, `{ public_key = "…" }`, or a table of either per provider.
    fn login_key(&self, r: &mut Reader<'_>, t: &Table<'_>) -> Option<PerProvider<LoginKey>> {
        let item = t.get("login_key")?;
        let what = format!("`login_key` of {}", t.what);
        let per_provider = item
            .as_table_like()
            .is_some_and(|tl| !tl.is_empty() && tl.iter().all(|(k, _)| PROVIDER_NAMES.contains(&k)));
        if !per_provider {
            return self.one_login_key(r, t, "login_key", &what).map(PerProvider::All);
        }
        let pt = Table::open(r, item, what.clone(), PROVIDER_NAMES)?;
        let mut map = BTreeMap::new();
        let mut ok = true;
        for p in Provider::ALL {
            if pt.get(p.as_str()).is_some() {
                match self.one_login_key(r, &pt, p.as_str(), &format!("`login_key.{p}` of {}", t.what)) {
                    Some(k) => drop(map.insert(p, k)),
                    None => ok = false,
                }
            }
        }
        ok.then_some(PerProvider::Each(map))
    }

    fn one_login_key(&self, r: &mut Reader<'_>, t: &Table<'_>, key: &str, what: &str) -> Option<LoginKey> {
        let item = t.get(key)?;
        if item.is_str() {
            let v = t.str(r, key)?;
            return self.id(r, key, v).map(|v| LoginKey::Id(v.value));
        }
        let kt = Table::open(r, item, what, &["public_key"])?;
        let Some(v) = kt.str(r, "public_key") else {
            if kt.get("public_key").is_none() {
                kt.missing(r, "public_key", " (the path of your public key, e.g. \"~/.ssh/id_ed25519.pub\")");
            }
            return None;
        };
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        // A relative path is relative to the spec's folder, like `user_data_file`.
        let dir = match (self.base_dir, v.value.starts_with('/') || v.value.starts_with('~')) {
            (Some(d), _) => d,
            (None, true) => Path::new("/"),
            (None, false) => {
                r.error_at(v.loc, "a relative `public_key` path needs the spec to be read from a file");
                return None;
            }
        };
        let path = match crate::pubkey::resolve_path(&v.value, dir, home.as_deref()) {
            Ok(p) => p,
            Err(why) => {
                r.error_at(v.loc, format!("{what}: {why}"));
                return None;
            }
        };
        match crate::pubkey::PublicKey::read(&path) {
            Ok(k) => Some(LoginKey::Import { key: k, path, loc: v.loc }),
            Err(why) => {
                r.error_at(v.loc, why);
                None
            }
        }
    }

    fn disk(&self, r: &mut Reader<'_>, item: &Item, what: String, min: i64, max: i64) -> Option<Disk> {
        let t = Table::open(r, item, what, DISK_KEYS)?;
        self.disk_fields(r, &t, min, max)
    }

    fn data_disks(&self, r: &mut Reader<'_>, t: &Table<'_>) -> Option<Vec<Disk>> {
        let nodes = t.tables(r, "data_disks");
        if nodes.len() > self.limits.max_data_disks {
            r.error(
                t.value_span("data_disks"),
                format!("{} data disks; at most {} are accepted", nodes.len(), self.limits.max_data_disks),
            );
            return None;
        }
        let mut out = Vec::new();
        let mut ok = true;
        for (i, n) in nodes.into_iter().enumerate() {
            let dt = n.open(r, format!("data disk #{} of {}", i + 1, t.what), DISK_KEYS);
            match self.disk_fields(r, &dt, 10, 32000) {
                Some(d) => out.push(d),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn disk_fields(&self, r: &mut Reader<'_>, t: &Table<'_>, min: i64, max: i64) -> Option<Disk> {
        let category = match t.str(r, "category") {
            None if t.get("category").is_none() => DiskCategory::Ssd,
            None => return None,
            Some(c) => match c.value.as_str() {
                "ssd" => DiskCategory::Ssd,
                "premium" => DiskCategory::Premium,
                other => {
                    r.error_at(
                        c.loc,
                        format!("unknown disk category `{}`; one of: ssd, premium", self.clip(other)),
                    );
                    return None;
                }
            },
        };
        let size_gb = match t.int(r, "size_gb") {
            None if t.get("size_gb").is_none() => {
                t.missing(r, "size_gb", "");
                return None;
            }
            None => return None,
            Some(s) if s.value >= min && s.value <= max => s.value as u32,
            Some(s) => {
                r.error_at(
                    s.loc,
                    format!("`size_gb` of {} must be from {min} to {max}, found {}", t.what, s.value),
                );
                return None;
            }
        };
        let snapshot_id = match t.str(r, "snapshot_id") {
            Some(s) => Some(self.id(r, "snapshot_id", s)?.value),
            None => None,
        };
        Some(Disk { category, size_gb, snapshot_id })
    }

    fn network(&self, r: &mut Reader<'_>, t: &Table<'_>) -> Option<Network> {
        let Some(item) = t.get("network") else { return Some(Network::Default) };
        if let Some(s) = item.as_str() {
            if s == "default" {
                return Some(Network::Default);
            }
            if s == "auto" {
                // `ssh_from` is read next, by `ssh_from`.
                return Some(Network::Auto { ssh_from: Vec::new() });
            }
            r.error(
                t.value_span("network"),
                format!(
                    "`network` must be \"default\", \"auto\" or a table of ids, found \"{}\"",
                    self.clip(s)
                ),
            );
            return None;
        }
        let Some(tl) = item.as_table_like() else {
            r.error(
                t.value_span("network"),
                format!("`network` must be \"default\" or a table, found {}", type_name(item)),
            );
            return None;
        };
        let per_provider = tl.iter().all(|(k, _)| PROVIDER_NAMES.contains(&k)) && !tl.is_empty();
        if !per_provider {
            let nt = Table::open(r, item, format!("`network` of {}", t.what), NETWORK_KEYS)?;
            return self.network_ids(r, &nt).map(|ids| Network::Ids(PerProvider::All(ids)));
        }
        let pt = Table::open(r, item, format!("`network` of {}", t.what), PROVIDER_NAMES)?;
        let mut map = BTreeMap::new();
        for p in Provider::ALL {
            if let Some(sub) = pt.get(p.as_str()) {
                let nt = Table::open(r, sub, format!("`network.{p}` of {}", t.what), NETWORK_KEYS)?;
                map.insert(p, self.network_ids(r, &nt)?);
            }
        }
        Some(Network::Ids(PerProvider::Each(map)))
    }

    /// `ssh_from`: the IPv4 CIDR blocks an auto network's security group lets SSH (tcp/22) in from.
    /// Required with `network = "auto"`: a careful tool does not open SSH to the whole internet
    /// because a key was left out, so `["0.0.0.0/0"]` must be written to get that (and the plan then
    /// says it). Refused with any other network, whose rules gpuctl does not touch.
    fn ssh_from(&self, r: &mut Reader<'_>, t: &Table<'_>, network: Network) -> Option<Network> {
        let list = t.strings(r, "ssh_from");
        match network {
            Network::Auto { .. } => {
                let Some(list) = list else {
                    if t.get("ssh_from").is_none() {
                        r.error(
                            t.value_span("network"),
                            format!("{} has network = \"auto\" but no `ssh_from`: add ssh_from = [\"<your address>/32\"] (the addresses SSH may come from), or ssh_from = [\"0.0.0.0/0\"] to open SSH to the whole internet", t.what),
                        );
                    }
                    return None;
                };
                if list.is_empty() {
                    r.error(
                        t.value_span("ssh_from"),
                        format!("`ssh_from` of {} is empty; name at least one CIDR block", t.what),
                    );
                    return None;
                }
                let mut ssh_from = Vec::new();
                for c in list {
                    match crate::network::parse_cidr(&c.value) {
                        Ok(()) => ssh_from.push(c.value),
                        Err(why) => {
                            r.error_at(c.loc, format!("`ssh_from` entry \"{}\": {why}", self.clip(&c.value)));
                            return None;
                        }
                    }
                }
                Some(Network::Auto { ssh_from })
            }
            other => {
                if t.get("ssh_from").is_some() {
                    r.error(
                        t.value_span("ssh_from"),
                        format!("`ssh_from` of {} is read only with network = \"auto\" (gpuctl leaves the rules of other networks alone)", t.what),
                    );
                    return None;
                }
                Some(other)
            }
        }
    }

    fn network_ids(&self, r: &mut Reader<'_>, t: &Table<'_>) -> Option<NetworkIds> {
        let mut req = |key: &str| {
            let v = t.str(r, key);
            if v.is_none() && t.get(key).is_none() {
                t.missing(r, key, "");
            }
            v.and_then(|v| self.id(r, key, v))
        };
        let vpc = req("vpc");
        let subnet = req("subnet");
        // Omitted: the cloud picks the VPC's default security group (where it has one).
        let groups = match t.strings(r, "security_groups") {
            Some(g) if g.is_empty() => {
                r.error(
                    t.value_span("security_groups"),
                    format!(
                        "`security_groups` of {} is empty; leave it out to use the VPC's default group",
                        t.what
                    ),
                );
                return None;
            }
            Some(g) => g,
            None if t.get("security_groups").is_some() => return None,
            None => Vec::new(),
        };
        let mut security_groups = Vec::new();
        for g in groups {
            security_groups.push(self.id(r, "security_groups", g)?.value);
        }
        Some(NetworkIds { vpc: vpc?.value, subnet: subnet?.value, security_groups })
    }

    /// `public_ip`: absent or `true` for the default, `false` for none, or a table of
    /// `bandwidth_mbps` (1 to 1000; each cloud's own cap is checked per provider) and `billing`
    /// (`traffic` or `bandwidth`). `None`: an error was reported; `Some(None)`: no public IP.
    fn public_ip(&self, r: &mut Reader<'_>, t: &Table<'_>) -> Option<Option<Spanned<PublicIp>>> {
        let Some(item) = t.get("public_ip") else {
            return Some(Some(Spanned { value: PublicIp::DEFAULT, loc: t.loc(r) }));
        };
        let loc = r.loc(t.value_span("public_ip"));
        if let Item::Value(Value::Boolean(b)) = item {
            return Some(b.value().then_some(Spanned { value: PublicIp::DEFAULT, loc }));
        }
        let what = format!("`public_ip` of {}", t.what);
        if item.as_table_like().is_none() {
            r.error_at(
                loc,
                format!("{what} must be true, false or {{ bandwidth_mbps = …, billing = \"traffic\" | \"bandwidth\" }}, found {}", type_name(item)),
            );
            return None;
        }
        let ip = Table::open(r, item, what.clone(), PUBLIC_IP_KEYS)?;
        let bandwidth_mbps = match ip.int(r, "bandwidth_mbps") {
            None if ip.get("bandwidth_mbps").is_none() => Some(PublicIp::DEFAULT.bandwidth_mbps),
            None => None,
            Some(n) if (1..=MAX_PUBLIC_MBPS).contains(&n.value) => Some(n.value as u32),
            Some(n) => {
                r.error_at(
                    n.loc,
                    format!(
                        "`bandwidth_mbps` of {what} must be from 1 to {MAX_PUBLIC_MBPS}, found {}",
                        n.value
                    ),
                );
                None
            }
        };
        let billing = match ip.str(r, "billing") {
            None if ip.get("billing").is_none() => Some(PublicIp::DEFAULT.billing),
            None => None,
            Some(s) => match s.value.as_str() {
                "traffic" => Some(PublicIpBilling::Traffic),
                "bandwidth" => Some(PublicIpBilling::Bandwidth),
                other => {
                    let shown: String = other.chars().take(40).flat_map(char::escape_debug).collect();
                    r.error_at(
                        s.loc,
                        format!("`billing` of {what} must be \"traffic\" (per GB sent) or \"bandwidth\" (per Mbps·hour), found \"{shown}\""),
                    );
                    None
                }
            },
        };
        Some(Some(Spanned { value: PublicIp { bandwidth_mbps: bandwidth_mbps?, billing: billing? }, loc }))
    }

    /// A folder to mount something on: absolute, plain characters, not a system folder. `None`: an
    /// error was reported.
    fn mount_path(
        &self,
        r: &mut Reader<'_>,
        m: &Spanned<String>,
        what: &str,
        example: &str,
    ) -> Option<String> {
        let clean = m.value.trim_end_matches('/');
        if !m.value.starts_with('/')
            || m.value.len() > 128
            || !m.value.chars().all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
            || m.value.contains("//")
            || m.value.split('/').any(|p| p == "." || p == "..")
        {
            r.error_at(m.loc, format!("`mount` `{}` must be an absolute path of letters, digits, `.`, `_`, `-` and `/` (e.g. \"{example}\")", self.clip(&m.value)));
            None
        } else if SYSTEM_DIRS.contains(&clean) || clean.is_empty() {
            r.error_at(m.loc, format!("`mount` `{}` is a system folder; mounting {what} there would hide it (use e.g. \"{example}\")", m.value));
            None
        } else {
            Some(clean.to_string())
        }
    }

    /// `engine` (issue 14): how a cluster pool's jobs run, `"torchrun"` (the default) or `"k3s"`; only
    /// a cluster's (`cluster = true`) key. `cluster`: what that key read (`None`: it was wrong).
    fn engine(&self, r: &mut Reader<'_>, t: &Table<'_>, cluster: Option<bool>) -> Option<ClusterEngine> {
        let Some(e) = t.str(r, "engine") else {
            return if t.get("engine").is_some() { None } else { Some(ClusterEngine::Torchrun) };
        };
        let engine = match e.value.as_str() {
            "torchrun" => ClusterEngine::Torchrun,
            "k3s" => ClusterEngine::K3s,
            other => {
                let shown: String = other.chars().take(40).flat_map(char::escape_debug).collect();
                r.error_at(e.loc, format!("`engine` of {} must be \"torchrun\" (`gpuctl run --torchrun` over SSH) or \"k3s\" (Kubernetes with Kubeflow Trainer), found \"{shown}\"", t.what));
                return None;
            }
        };
        if cluster == Some(false) {
            r.error_at(e.loc, format!("`engine` of {} is how a cluster's jobs run; set cluster = true (and count = 2 or more), or drop `engine`", t.what));
            return None;
        }
        Some(engine)
    }

    /// `shared_storage` (issue 14): absent or `false` for none, `true` for the defaults, or a table of
    /// `mount`, `tier` (`capacity` | `performance`), `size_gb` (what the plan prices per month; the
    /// clouds bill what is stored) and `on_destroy` (`keep`, the default, or `delete`).
    fn shared_storage(&self, r: &mut Reader<'_>, t: &Table<'_>) -> Option<Option<SharedStorage>> {
        let Some(item) = t.get("shared_storage") else { return Some(None) };
        let loc = r.loc(t.value_span("shared_storage"));
        if let Item::Value(Value::Boolean(b)) = item {
            return Some(b.value().then(|| SharedStorage::defaults(loc)));
        }
        let what = format!("`shared_storage` of {}", t.what);
        if item.as_table_like().is_none() {
            r.error_at(
                loc,
                format!("{what} must be true, false or {{ mount = \"/mnt/shared\", tier = \"capacity\" | \"performance\", size_gb = …, on_destroy = \"keep\" | \"delete\" }}, found {}", type_name(item)),
            );
            return None;
        }
        let st = Table::open(r, item, what.clone(), SHARED_STORAGE_KEYS)?;
        let mut out = Some(SharedStorage::defaults(loc));
        if let Some(m) = st.str(r, "mount") {
            match self.mount_path(r, &m, "the shared file system", "/mnt/shared") {
                Some(p) => out.iter_mut().for_each(|o| o.mount = p.clone()),
                None => out = None,
            }
        }
        if let Some(tier) = st.str(r, "tier") {
            match FsTier::parse(&tier.value) {
                Some(x) => out.iter_mut().for_each(|o| o.tier = x),
                None => {
                    let shown: String = tier.value.chars().take(40).flat_map(char::escape_debug).collect();
                    r.error_at(tier.loc, format!("`tier` of {what} must be \"capacity\" (the cheapest per GB) or \"performance\", found \"{shown}\""));
                    out = None;
                }
            }
        } else if st.get("tier").is_some() {
            out = None;
        }
        match st.int(r, "size_gb") {
            Some(n) if (1..=MAX_SHARED_GB).contains(&n.value) => {
                out.iter_mut().for_each(|o| o.size_gb = Some(n.value as u32))
            }
            Some(n) => {
                r.error_at(
                    n.loc,
                    format!("`size_gb` of {what} must be from 1 to {MAX_SHARED_GB}, found {}", n.value),
                );
                out = None;
            }
            None if st.get("size_gb").is_some() => out = None,
            None => {}
        }
        if let Some(d) = st.str(r, "on_destroy") {
            match d.value.as_str() {
                "keep" => out.iter_mut().for_each(|o| o.keep_on_destroy = true),
                "delete" => out.iter_mut().for_each(|o| o.keep_on_destroy = false),
                other => {
                    let shown: String = other.chars().take(40).flat_map(char::escape_debug).collect();
                    r.error_at(d.loc, format!("`on_destroy` of {what} must be \"keep\" (destroy leaves the file system and its data) or \"delete\", found \"{shown}\""));
                    out = None;
                }
            }
        } else if st.get("on_destroy").is_some() {
            out = None;
        }
        out.map(Some)
    }

    fn auto_release(
        &self,
        r: &mut Reader<'_>,
        t: &Table<'_>,
        mode: BillingMode,
        hours: Option<f64>,
    ) -> Option<AutoRelease> {
        let Some(item) = t.get("auto_release") else {
            return Some(if mode.is_per_hour() {
                AutoRelease::After {
                    hours: hours
                        .map(|h| h.ceil().max(MIN_AUTO_RELEASE_HOURS))
                        .unwrap_or(DEFAULT_AUTO_RELEASE_HOURS),
                    defaulted: true,
                }
            } else {
                AutoRelease::NotApplicable
            });
        };
        let span = t.value_span("auto_release");
        if !mode.is_per_hour() {
            r.error(span, format!("`auto_release` applies to pay-as-you-go billing (hourly, spot); a `{mode}` term ends on its own"));
            return None;
        }
        match item {
            Item::Value(Value::Boolean(b)) if !*b.value() => Some(AutoRelease::Off),
            Item::Value(Value::Boolean(_)) => Some(AutoRelease::After {
                hours: hours
                    .map(|h| h.ceil().max(MIN_AUTO_RELEASE_HOURS))
                    .unwrap_or(DEFAULT_AUTO_RELEASE_HOURS),
                defaulted: true,
            }),
            Item::Value(Value::String(s)) => {
                let text = s.value();
                let parsed: Option<f64> = text.parse::<jiff::Span>().ok().and_then(|span| {
                    span.total((jiff::Unit::Hour, jiff::SpanRelativeTo::days_are_24_hours())).ok()
                });
                match parsed {
                    // Tencent's ActionTimer must be > 5 min ahead, Alibaba's AutoReleaseTime ≥ 30 min, JD's ≥ 1 h.
                    Some(h) if (MIN_AUTO_RELEASE_HOURS..=3.0 * 365.0 * 24.0).contains(&h) => {
                        Some(AutoRelease::After { hours: h, defaulted: false })
                    }
                    Some(_) => {
                        r.error(span, "`auto_release` must be from 2h (JD Cloud needs more than 1 h ahead when it is set) to 3 years after creation");
                        None
                    }
                    None => {
                        r.error(span, format!("`auto_release` = \"{}\" is not a duration; write e.g. \"8h\", \"3d\", or a UTC time 2026-01-31T18:00:00Z, or false to keep the instances", self.clip(text)));
                        None
                    }
                }
            }
            Item::Value(Value::Datetime(d)) => {
                match d.value().to_string().parse::<jiff::Timestamp>() {
                    Ok(ts) => Some(AutoRelease::At(ts)),
                    Err(_) => {
                        r.error(span, "`auto_release` time needs a date, a time and an offset, e.g. 2026-01-31T18:00:00Z");
                        None
                    }
                }
            }
            other => {
                r.error(
                    span,
                    format!(
                        "`auto_release` must be a duration like \"8h\", a UTC time, or false; found {}",
                        type_name(other)
                    ),
                );
                None
            }
        }
    }

    fn tags(&self, r: &mut Reader<'_>, t: &Table<'_>) -> Option<BTreeMap<String, String>> {
        let Some(item) = t.get("tags") else { return Some(BTreeMap::new()) };
        // Any key is allowed here; check each one ourselves.
        let keys: Vec<String> = item
            .as_table_like()
            .map(|tl| tl.iter().map(|(k, _)| k.to_string()).collect())
            .unwrap_or_default();
        let allowed: Vec<&str> = keys.iter().map(String::as_str).collect();
        let tt = Table::open(r, item, format!("`tags` of {}", t.what), &allowed)?;
        if keys.len() > self.limits.max_tags {
            r.error(
                tt.span.clone(),
                format!(
                    "{} tags; at most {} are accepted (gpuctl adds its own on top)",
                    keys.len(),
                    self.limits.max_tags
                ),
            );
            return None;
        }
        let mut out = BTreeMap::new();
        let mut ok = true;
        // No cloud takes control characters in tags, and a tag is shown back by status and in cloud errors.
        let control = |s: &str| s.chars().any(char::is_control);
        for k in &keys {
            let span = tt.key_span(k);
            if k.is_empty() || k.chars().count() > 64 {
                r.error(span, "tag keys must be 1–64 characters");
                ok = false;
            } else if control(k) {
                r.error(
                    span,
                    format!(
                        "tag key `{}` holds control characters; tags take printable text only",
                        self.clip(k)
                    ),
                );
                ok = false;
            } else if k.starts_with("gpuctl") {
                r.error(
                    span,
                    format!(
                        "tag key `{}` is reserved: gpuctl tags its resources with gpuctl-* keys itself",
                        self.clip(k)
                    ),
                );
                ok = false;
            } else if let Some(v) = tt.str(r, k) {
                if v.value.chars().count() > 128 {
                    r.error_at(v.loc, "tag values must be at most 128 characters");
                    ok = false;
                } else if control(&v.value) {
                    r.error_at(
                        v.loc,
                        format!(
                            "tag value `{}` holds control characters; tags take printable text only",
                            self.clip(&v.value)
                        ),
                    );
                    ok = false;
                } else {
                    out.insert(k.clone(), v.value);
                }
            } else {
                ok = false;
            }
        }
        ok.then_some(out)
    }

    /// The pool's `env` table (rendered by `crate::boot`). Values that reach the boot script as words
    /// are held to charsets with no shell or YAML meaning; `setup` may be any printable text.
    fn env(&self, r: &mut Reader<'_>, item: &Item, what: &str) -> Option<Env> {
        let t = Table::open(r, item, format!("`env` of {what}"), ENV_KEYS)?;
        let before = r.errors.len();
        let mut env = Env { loc: t.loc(r), ..Env::default() };
        env.container = t.bool(r, "container").is_some_and(|b| b.value);
        let word = |c: char, extra: &str| c.is_ascii_alphanumeric() || extra.contains(c);
        if let Some(img) = t.str(r, "container_image") {
            // A Docker reference: [registry/]name[:tag][@digest], lower-case path components.
            if img.value.is_empty()
                || img.value.len() > self.limits.max_string
                || !img.value.chars().all(|c| word(c, "._-/:@"))
                || img.value.starts_with(['-', '/', ':', '@'])
            {
                r.error_at(img.loc, format!("`container_image` `{}` is not an image reference (e.g. \"pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime\")", self.clip(&img.value)));
            } else if !env.container {
                r.error_at(
                    img.loc,
                    "`container_image` needs `container = true` (Docker must be installed to pull it)",
                );
            } else {
                env.container_image = Some(img.value);
            }
        }
        if let Some(m) = t.str(r, "mount") {
            env.mount = self.mount_path(r, &m, "a data disk", "/data");
        }
        if let Some(cmd) = t.str(r, "setup") {
            let bad = cmd.value.chars().find(|c| {
                // Controls and YAML's extra line breaks would break the cloud-config; the invisible
                // reordering characters would hide what `plan --show-boot` shows.
                (c.is_control() && *c != '\n' && *c != '\t')
                    || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
            });
            if let Some(c) = bad {
                r.error_at(cmd.loc, format!("`setup` holds the character U+{:04X}; only printable text, tabs and newlines go into a boot script", c as u32));
            } else if cmd.value.trim().is_empty() {
                r.error_at(cmd.loc, "`setup` is empty; leave it out, or give the command to run");
            } else {
                env.setup = Some(cmd.value);
            }
        }
        for (key, example) in [("cuda", "12.1"), ("driver", "535.104.05")] {
            if let Some(v) = t.str(r, key) {
                let ok = !v.value.is_empty()
                    && v.value.len() <= 32
                    && v.value.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
                if !ok {
                    r.error_at(
                        v.loc,
                        format!(
                            "`{key}` `{}` is not a version (e.g. {key} = \"{example}\")",
                            self.clip(&v.value)
                        ),
                    );
                } else if key == "cuda" {
                    env.cuda = Some(v);
                } else {
                    env.driver = Some(v);
                }
            }
        }
        (r.errors.len() == before).then_some(env)
    }

    /// `shared_storage` against the rest of the pool: a cluster's, in a network gpuctl knows the ids
    /// of (the file system's mount target goes in the nodes' subnet), mounted by the boot environment
    /// (so not with raw user data), on another folder than the data disk.
    #[allow(clippy::too_many_arguments)]
    fn check_shared_storage(
        &self,
        r: &mut Reader<'_>,
        what: &str,
        st: &SharedStorage,
        cluster: bool,
        network: &Network,
        user_data: &Option<Option<Spanned<String>>>,
        env: &Option<Option<Env>>,
    ) {
        if !cluster {
            r.error_at(st.loc, format!("`shared_storage` of {what} is for a cluster's nodes; set cluster = true (and count = 2 or more)"));
        }
        if matches!(network, Network::Default) {
            r.error_at(st.loc, format!("`shared_storage` of {what} needs the nodes' VPC and subnet: set network = \"auto\" (gpuctl makes one) or network = {{ vpc = \"…\", subnet = \"…\", security_groups = [\"…\"] }}"));
        }
        if let Some(Some(u)) = user_data {
            r.error_at(u.loc, format!("{what} has `shared_storage`, which the boot environment mounts: gpuctl renders it as the instance's whole user data; put your commands in env.setup"));
        }
        if let Some(Some(env)) = env {
            if env.mount.as_deref() == Some(st.mount.as_str()) {
                r.error_at(st.loc, format!("`shared_storage` of {what} mounts on {}, where env.mount puts the data disk; choose another folder", st.mount));
            }
        }
    }

    /// `env` against the rest of the pool: not with `user_data`, `mount` needs a data disk, and the
    /// rendered config must fit each cloud's user data limit.
    fn check_env(
        &self,
        r: &mut Reader<'_>,
        pool: &str,
        env: &Env,
        data_disks: Option<&Vec<Disk>>,
        user_data: &Option<Option<Spanned<String>>>,
        providers: &[(Provider, Loc)],
    ) {
        let what = format!("pool `{pool}`");
        if let Some(Some(u)) = user_data {
            // Why not a multipart merge: see `crate::boot`'s header (JD runs a single launch script).
            r.error_at(u.loc, format!("{} sets both `env` and user data: gpuctl renders `env` as the instance's whole user data; put your commands in env.setup", what));
        }
        if env.mount.is_some() && data_disks.is_some_and(|d| d.is_empty()) {
            r.error_at(
                env.loc,
                format!("`env.mount` of {} needs a data disk; add data_disks = [{{ size_gb = 500 }}]", what),
            );
        }
        for (p, _) in providers {
            let len = crate::boot::render(pool, env, *p).text.len();
            if len > self.limits.max_user_data {
                r.error_at(env.loc, format!("`env` of {} renders to {len} bytes for {p}; at most {} are accepted (16 KiB once base64-encoded, Tencent's limit): shorten `setup`", what, self.limits.max_user_data));
            }
        }
    }

    fn user_data(&self, r: &mut Reader<'_>, t: &Table<'_>) -> Option<Option<Spanned<String>>> {
        let inline = t.str(r, "user_data");
        let file = t.str(r, "user_data_file");
        let (text, loc) = match (inline, file) {
            (Some(_), Some(f)) => {
                r.error_at(f.loc, "give `user_data` or `user_data_file`, not both");
                return None;
            }
            (Some(u), None) => (u.value, u.loc),
            (None, Some(f)) => {
                let Some(dir) = self.base_dir else {
                    r.error_at(f.loc, "`user_data_file` needs the spec to be read from a file");
                    return None;
                };
                let path = dir.join(&f.value);
                match read_string_bounded(&path, self.limits.max_user_data as u64) {
                    Ok(s) => (s, f.loc),
                    Err(ReadError::TooLarge { len, limit, .. }) => {
                        let size = size_words(len, limit);
                        r.error_at(f.loc, format!("user data file {} is {size} bytes; at most {limit} are accepted (16 KiB once base64-encoded, Tencent's limit)", path.display()));
                        return None;
                    }
                    Err(e) => {
                        r.error_at(
                            f.loc,
                            format!("cannot read user data file {}: {}", path.display(), e.reason()),
                        );
                        return None;
                    }
                }
            }
            (None, None) => {
                let set = t.get("user_data").is_some() || t.get("user_data_file").is_some();
                return if set { None } else { Some(None) };
            }
        };
        if text.len() > self.limits.max_user_data {
            r.error_at(loc, format!("user data is {} bytes; at most {} are accepted (16 KiB once base64-encoded, Tencent's limit)", text.len(), self.limits.max_user_data));
            return None;
        }
        Some(Some(Spanned { value: text, loc }))
    }
}
