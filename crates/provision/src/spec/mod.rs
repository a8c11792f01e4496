//! The deployment spec: what a user asks gpuctl to rent, as read from a TOML file.
//!
//! `parse` turns text into a [`Spec`] or a list of [`SpecError`]s, each with `file:line:column`, and never
//! panics. It checks everything that needs no catalog: shapes, unknown keys (with the closest allowed
//! name), ranges, and what each cloud's API can buy. [`check_catalog`] then checks instance types against
//! the catalog (closest names for typos). The file format is documented in `infra/stage1.toml`.

mod parse;
mod read;

use std::collections::BTreeMap;
use std::fmt;

pub use parse::{parse, parse_file, Limits};
pub use read::Spanned;

pub use gpuctl_cloud::cloud::FsTier;
pub use gpuctl_cloud::resource::{Disk, DiskCategory, NetworkIds, PublicIp, PublicIpBilling};

use crate::provider::{BillingMode, Provider};
use gpuctl_core::Catalog;

/// A position in the spec file, 1-based; columns count characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Loc {
    pub line: usize,
    pub column: usize,
}

/// One problem in a spec, printed as `file:line:column: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for SpecError {
    /// Escaped here, where every message is shown, so no quoted spec value (or file name) reaches a
    /// terminal raw, whichever check quoted it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            escape_for_terminal(&self.file),
            self.line,
            self.column,
            escape_for_terminal(&self.message)
        )
    }
}

/// Text as it may safely reach a terminal: control characters (C0, DEL, C1) and the invisible format
/// characters that reorder or hide text (bidi overrides and isolates, zero-width ones, BOM) are written
/// as escapes — `\n`, `\r`, `\t`, else `\u{1b}` — so a hostile spec value cannot move the cursor,
/// recolor, retitle or hide parts of a message. Anything else, including non-ASCII letters, stays.
pub fn escape_for_terminal(s: &str) -> std::borrow::Cow<'_, str> {
    fn hidden(c: char) -> bool {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
    }
    if !s.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Every problem found in one spec, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecErrors(pub Vec<SpecError>);

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecErrors {}

#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The file the spec was read from, as given (for messages).
    pub file: String,
    /// SHA-256 (hex) of the exact text parsed: the state records which spec a deployment was applied
    /// from without reading the file a second time (it may have changed in between).
    pub sha256: String,
    /// Names the deployment in state, tags and client tokens: `[a-z][a-z0-9-]*`, at most 40 characters.
    pub deployment: Spanned<String>,
    /// How long the deployment is expected to run, for totals, budget and the default auto-release.
    pub hours: Option<Spanned<f64>>,
    pub budget: Budget,
    pub pools: Vec<Pool>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Budget {
    /// Cap on the whole deployment's cost over `hours` (or over the prepaid terms bought), in CNY.
    pub total_cny: Option<Spanned<f64>>,
    /// Cap on what all pools cost together per hour while running, in CNY.
    pub per_hour_cny: Option<Spanned<f64>>,
    /// Cap on what the cloud bills the deployment in one calendar month, in CNY (issue 15): held
    /// against the bill lines by `gpuctl cost` and `gpuctl status`, not by the plan.
    pub monthly_cny: Option<Spanned<f64>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    pub name: Spanned<String>,
    pub loc: Loc,
    pub count: Spanned<u32>,
    pub placement: Placement,
    pub billing: Spanned<BillingMode>,
    /// Number of prepaid units (weeks, months, years) for prepaid modes; 1 otherwise.
    pub term: u32,
    /// Highest ¥/hour a spot instance may cost; `None` = follow the market price (Alibaba SpotAsPriceGo).
    pub spot_max_price: Option<f64>,
    /// An image id, or a name resolved per cloud and region at plan time (`crate::image`).
    pub image: PerProvider<String>,
    /// `image = { os = …, gpu_driver = true }`: resolve the name to an image with an NVIDIA driver.
    pub image_gpu_driver: bool,
    pub system_disk: Disk,
    pub data_disks: Vec<Disk>,
    pub network: Network,
    /// The key pair to log in with (per provider when the pool spans clouds): an existing key pair's
    /// id, or the user's public key to import. No passwords and no private keys: a spec is not a
    /// secret store.
    pub login_key: Option<PerProvider<LoginKey>>,
    /// A public IP per instance (`public_ip = false`: none). On by default, [`PublicIp::DEFAULT`], so
    /// what gpuctl rents can be reached.
    pub public_ip: Option<PublicIp>,
    pub auto_release: AutoRelease,
    pub snapshot: SnapshotPolicy,
    /// `cluster = true`: the `count` instances are the nodes of one training job, so all of them go
    /// to one candidate (one zone, one type) and a candidate that cannot take them all moves the whole
    /// cluster to the next; never a cluster split across zones (issue 14).
    pub cluster: bool,
    /// How a cluster's jobs are run (`engine = "torchrun" | "k3s"`, issue 14); `Torchrun` for every
    /// pool that does not say, clusters or not.
    pub engine: ClusterEngine,
    /// A shared NFS file system for a cluster's nodes, mounted at the same folder on every node.
    pub shared_storage: Option<SharedStorage>,
    /// User tags; gpuctl adds its own `gpuctl-*` tags (reserved) to find its resources without state.
    pub tags: BTreeMap<String, String>,
    /// cloud-init user data (inline, or the contents of `user_data_file`).
    pub user_data: Option<String>,
    /// The boot environment gpuctl renders into the user data (`crate::boot`); never with `user_data`.
    pub env: Option<Env>,
    /// `idle = { … }` (issue 15): the node agent stops or releases an instance whose GPUs stay idle,
    /// with the instance role's credentials, while gpuctl itself is not running (`crate::agent`).
    pub idle: Option<IdlePolicy>,
    /// `spot = { on_notice = "…" }` (issue 15): the node agent runs this once when the cloud marks
    /// the spot instance for reclaim.
    pub spot_notice: Option<SpotNotice>,
}

/// A pool's idle policy: below `below_percent` GPU utilization for `for_s` seconds, then `then`.
#[derive(Debug, Clone, PartialEq)]
pub struct IdlePolicy {
    pub loc: Loc,
    pub below_percent: f64,
    pub for_s: u64,
    pub then: IdleAction,
    /// The instance role (Tencent CAM role, Alibaba RAM role) the agent's credentials come from; the
    /// user attaches the policy docs/idle-agent.md gives.
    pub role: String,
}

/// What the node agent does with an idle instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleAction {
    /// Stop in the no-charge mode (Tencent `STOP_CHARGING`, Alibaba `StopCharging`): disks still bill.
    Stop,
    /// Release (terminate) the instance.
    Release,
}

impl IdleAction {
    pub fn as_str(self) -> &'static str {
        match self {
            IdleAction::Stop => "stop",
            IdleAction::Release => "release",
        }
    }
}

/// The role name a pool's `idle.role` defaults to.
pub const DEFAULT_AGENT_ROLE: &str = "gpuctl-node-agent";

/// A spot pool's reclaim-notice hook.
#[derive(Debug, Clone, PartialEq)]
pub struct SpotNotice {
    pub loc: Loc,
    /// Run once, as root, by `bash -c`.
    pub command: String,
    /// How long the hook may run (also cut to the time left before the reclaim).
    pub timeout_s: u64,
}

/// A pool's `env` table: what gpuctl's rendered boot script sets up on each instance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Env {
    pub loc: Loc,
    /// Docker + the NVIDIA container toolkit, from the distribution's archive (through the cloud's mirror).
    pub container: bool,
    /// Pulled once Docker runs (through the cloud's registry mirror where one is documented).
    pub container_image: Option<String>,
    /// Where the first data disk is mounted (formatted only when it holds nothing).
    pub mount: Option<String>,
    /// A command run last, as root, by `bash -c`.
    pub setup: Option<String>,
    /// CUDA version the workload needs (e.g. "12.1"), checked at plan time.
    pub cuda: Option<Spanned<String>>,
    /// Lowest NVIDIA driver the workload needs (e.g. "535.104.05"), checked at plan time and at boot.
    pub driver: Option<Spanned<String>>,
}

/// The engine a cluster pool's jobs run on (issue 14). gpuctl schedules nothing itself: it renders,
/// launches and checks the field's own engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClusterEngine {
    /// PyTorch's `torchrun` started on every node over SSH (`gpuctl run --torchrun`), the default.
    #[default]
    Torchrun,
    /// A k3s Kubernetes cluster across the nodes with the NVIDIA device plugin and Kubeflow Trainer
    /// (`gpuctl k3s up`, `gpuctl run --trainjob`; `crate::k3s`).
    K3s,
}

impl ClusterEngine {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterEngine::Torchrun => "torchrun",
            ClusterEngine::K3s => "k3s",
        }
    }
}

/// `shared_storage = { … }` of a cluster pool (issue 14): one file system per pool, in the cluster's
/// zone and subnet (Tencent CFS, Alibaba NAS, JD 云文件服务), NFS-mounted on every node by the boot
/// environment. Its data outlives the nodes: `destroy` keeps it unless `on_destroy = "delete"` or
/// `destroy --delete-storage`.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedStorage {
    pub loc: Loc,
    /// Where every node mounts it.
    pub mount: String,
    pub tier: FsTier,
    /// What the plan prices per month; `None`: shown per GB only (the clouds bill what is stored).
    pub size_gb: Option<u32>,
    pub keep_on_destroy: bool,
}

impl SharedStorage {
    pub const DEFAULT_MOUNT: &'static str = "/mnt/shared";

    pub fn defaults(loc: Loc) -> SharedStorage {
        SharedStorage {
            loc,
            mount: Self::DEFAULT_MOUNT.into(),
            tier: FsTier::Capacity,
            size_gb: None,
            keep_on_destroy: true,
        }
    }
}

/// `login_key = "<id>"` or `login_key = { public_key = "~/.ssh/id_ed25519.pub" }` (issue 13).
#[derive(Debug, Clone, PartialEq)]
pub enum LoginKey {
    /// A key pair the account already has: Tencent's `skey-…` id, Alibaba's or JD's key name.
    Id(String),
    /// The user's public key, imported once per cloud and region under [`PublicKey::import_name`]
    /// (looked up by that name first, so a re-run imports nothing). `loc` is the `public_key`
    /// value's place in the spec, for errors about it.
    Import { key: crate::pubkey::PublicKey, path: std::path::PathBuf, loc: Loc },
}

/// Where a pool's instances come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Placement {
    /// Tried in order; a stock-out moves to the next.
    Candidates(Vec<Candidate>),
    /// The engine picks the cheapest fitting offers (in cost order, as fallback candidates).
    Requirement(Requirement),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub loc: Loc,
    pub provider: Provider,
    pub region: Spanned<String>,
    pub zone: Spanned<String>,
    pub instance_type: Spanned<String>,
}

/// "Any instance with this GPU", resolved against the catalog by gpuctl-core.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    pub loc: Loc,
    /// GPU model as the catalog names it (e.g. "A10", "T4"); `None` = any GPU with enough memory.
    pub gpu: Option<Spanned<String>>,
    pub gpus: u32,
    pub min_vram_gb: Option<f64>,
    /// Only these providers (all when empty).
    pub providers: Vec<Provider>,
    /// Only these regions (all when empty).
    pub regions: Vec<String>,
}

/// A value that may differ per cloud (image ids, key ids, network ids are per-cloud names).
#[derive(Debug, Clone, PartialEq)]
pub enum PerProvider<T> {
    All(T),
    Each(BTreeMap<Provider, T>),
}

impl<T> PerProvider<T> {
    pub fn for_provider(&self, p: Provider) -> Option<&T> {
        match self {
            PerProvider::All(t) => Some(t),
            PerProvider::Each(m) => m.get(&p),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Network {
    /// The account's default VPC/subnet/security group (Tencent, Alibaba).
    Default,
    Ids(PerProvider<NetworkIds>),
    /// `network = "auto"` (issue 13): gpuctl finds or makes, per cloud, region and zone, a VPC, a
    /// subnet in the zone and a security group allowing tcp/22 from `ssh_from` and all traffic inside
    /// the group (`crate::network`). `ssh_from` is never empty: the parser refuses an auto network
    /// without it rather than open SSH to the internet unasked.
    Auto {
        ssh_from: Vec<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AutoRelease {
    /// Release this many hours after the instance is created.
    After { hours: f64, defaulted: bool },
    /// Release at this time.
    At(jiff::Timestamp),
    /// Explicit `auto_release = false`: keep running until released by hand.
    Off,
    /// Prepaid modes: the term ends on its own.
    NotApplicable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SnapshotPolicy {
    /// Snapshot the cloud disks before `release`/`destroy` terminates an instance.
    pub before_release: bool,
}

/// Default auto-release for pay-as-you-go pools when the spec gives neither `auto_release` nor `hours`:
/// a forgotten instance stops billing within a day.
pub const DEFAULT_AUTO_RELEASE_HOURS: f64 = 24.0;

/// The earliest auto-release gpuctl sets, in hours after the create call: JD Cloud refuses release times
/// less than 1 h ahead *when modifyInstanceReleaseTime is called*, which is after the create; 2 h leaves
/// the margin (Tencent needs > 5 min, Alibaba ≥ 30 min).
pub const MIN_AUTO_RELEASE_HOURS: f64 = 2.0;

/// Checks what needs the catalog: unknown instance types (with the closest catalogued names) and billing
/// modes the catalog says an instance type is not sold under.
pub fn check_catalog(spec: &Spec, catalog: &Catalog) -> Result<(), SpecErrors> {
    let mut errors = Vec::new();
    let mut push = |loc: Loc, message: String| {
        errors.push(SpecError { file: spec.file.clone(), line: loc.line, column: loc.column, message });
    };
    for pool in &spec.pools {
        let Placement::Candidates(cands) = &pool.placement else { continue };
        for c in cands {
            let id = catalog.catalog_type(c.provider, &c.instance_type);
            match catalog.find_instance_type(c.provider, id) {
                Err(unknown) => push(
                    c.instance_type.loc,
                    format!(
                        "unknown {} instance type `{}`{}",
                        c.provider,
                        c.instance_type.value,
                        gpuctl_core::suggest::did_you_mean(&unknown.suggestions)
                    ),
                ),
                Ok(inst) => {
                    let modes = catalog.billing_modes(inst);
                    if !modes.contains(&pool.billing.value) {
                        let sold: Vec<&str> = modes.iter().map(|m| m.as_str()).collect();
                        push(
                            pool.billing.loc,
                            format!(
                                "the catalog lists {} {} under {} only, not `{}`",
                                c.provider,
                                c.instance_type.value,
                                sold.join(", "),
                                pool.billing.value
                            ),
                        );
                    }
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(SpecErrors(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_invisible_characters_are_escaped_for_the_terminal() {
        let check = |input: &str, want: &str| assert_eq!(escape_for_terminal(input), want, "{input:?}");
        check("img-1", "img-1");
        check("训练-节点 é", "训练-节点 é");
        check("a\u{1b}[31mred", "a\\u{1b}[31mred");
        check("bell\u{7}", "bell\\u{7}");
        check("nul\0", "nul\\u{0}");
        check("line\r\nnext\ttab", "line\\r\\nnext\\ttab");
        check("del\u{7f} c1\u{9b}", "del\\u{7f} c1\\u{9b}");
        check("evil\u{202e}txt.exe", "evil\\u{202e}txt.exe");
        check("zero\u{200b}width\u{feff}", "zero\\u{200b}width\\u{feff}");
        let e = SpecError {
            file: "sp\u{1b}]0;pwned\u{7}ec.toml".into(),
            line: 3,
            column: 9,
            message: "pool `a\u{1b}[2J`".into(),
        };
        assert_eq!(e.to_string(), "sp\\u{1b}]0;pwned\\u{7}ec.toml:3:9: pool `a\\u{1b}[2J`");
    }
}
