//! The boot environment (issue 13): a pool's `env` table rendered into the cloud's own boot format —
//! a `#cloud-config` for Tencent and Alibaba, a bash launch script for JD Cloud (which has no
//! cloud-init) — and sent as the instance's user data.
//!
//! Both formats carry the same bash script, built here from steps: the cloud's apt mirror, Docker + the
//! NVIDIA container toolkit, the first data disk formatted once and mounted, the driver check, the
//! image pull, the user's `setup`. Each runs under `step NAME …`: a failure writes
//! `/var/lib/gpuctl/failed` naming the step and stops; the end writes `/var/lib/gpuctl/ready` with a
//! UTC timestamp, so a later `--wait-ready` can tell the two apart. The script never installs or
//! changes CUDA or the driver (the brief: do not upgrade CUDA on a shared host; containers carry their
//! own CUDA). Nothing rendered holds a credential: its inputs are the spec's `env` table and the
//! per-cloud facts (`gpuctl_cloud::provider::boot_facts`), none of which is a secret.
//!
//! Why `env` and `user_data` are refused together rather than merged as a MIME multipart: JD runs one
//! launch script and nothing else, so a merge could not work on every cloud, and two cloud-configs
//! merged by cloud-init's default rules replace each other's lists (`runcmd`, `write_files`) silently.
//! The user's own commands go in `env.setup`.

use crate::provider::Provider;
use crate::spec::{Env, Pool};

// The per-cloud facts (format, mirrors) live with the clouds' other facts in gpuctl-cloud, so the
// engine spells no cloud's hostnames (tests/tests/tidy.rs).
pub use crate::provider::{boot_facts, BootFacts, BootFormat as Format};

/// Where the script keeps its markers.
pub const STATE_DIR: &str = "/var/lib/gpuctl";
/// Written, with a UTC timestamp, when every step succeeded.
pub const READY_MARKER: &str = "/var/lib/gpuctl/ready";
/// Written, with a UTC timestamp and `step=NAME`, by the first step that fails.
pub const FAILED_MARKER: &str = "/var/lib/gpuctl/failed";
/// Where a `#cloud-config` writes the script it runs.
const SCRIPT_PATH: &str = "/var/lib/gpuctl/boot.sh";

/// The pool's boot config rendered for `p`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rendered {
    pub provider: Provider,
    pub format: Format,
    /// One line for `plan`: what the config does, and its size.
    pub summary: String,
    /// The user data as sent (before the client's base64).
    pub text: String,
}

/// What one node of a cluster learns at boot (issue 14), written to [`CLUSTER_ENV`] for the user's
/// jobs (torchrun's and `torch.distributed`'s own variable names where they have one): its rank, the
/// node count, the GPUs per node, node 0's private address and the rendezvous port, and where the
/// shared file system is mounted. No NCCL variable is set: none of the three clouds documents one
/// for these instance types (docs/research/clusters.md), so NCCL's own defaults stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFacts {
    pub rank: u32,
    pub nodes: u32,
    /// `None` when the catalog does not say.
    pub gpus_per_node: Option<u32>,
    /// Node 0's private IP: `None` on node 0 itself, whose script reads its own address at boot (and
    /// when node 0 is gone: then no `MASTER_ADDR` is written).
    pub master_addr: Option<String>,
    pub shared: Option<SharedMount>,
    /// Set on a node made to replace one the cloud reclaimed (issue 15): it resumes the job.
    pub resume: Option<Resume>,
}

/// What a replacement node is told (issue 15): which instance it replaces, and — with shared
/// storage — the newest checkpoint in [`CHECKPOINT_DIR`] under the shared folder, found at boot
/// (gpuctl cannot read the file system from where it runs), as `GPUCTL_RESUME_FROM`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    /// The reclaimed instance's id.
    pub replaces: String,
}

/// The checkpoint convention on a cluster's shared storage (issue 15): checkpoints go in this folder
/// of the shared mount (`GPUCTL_CHECKPOINT_DIR` in the cluster facts names it); a file [`LATEST`] in
/// it may name the newest (one line, a name in the folder), else the newest entry by time is taken.
pub const CHECKPOINT_DIR: &str = "checkpoints";
/// The file in [`CHECKPOINT_DIR`] naming the newest checkpoint.
pub const LATEST: &str = "latest";

/// The rendezvous port the cluster facts name: torchrun's own default (`--master-port`, 29500), the
/// one `gpuctl run --torchrun` uses unless told otherwise.
pub const MASTER_PORT: u16 = 29500;

/// A shared NFS file system as a node mounts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedMount {
    /// `address:/path`, as `mount -t nfs` takes it.
    pub source: String,
    /// The folder it is mounted on, the same on every node.
    pub mount: String,
}

/// The cluster facts file a node's jobs can `source`.
pub const CLUSTER_ENV: &str = "/etc/gpuctl/cluster.env";

/// What a pool's instances on `p` boot with: its `env` rendered (with a cluster node's facts and
/// shared mount when `node` is given), else its raw `user_data`, else nothing.
pub fn user_data(pool: &Pool, p: Provider, node: Option<&NodeFacts>) -> Option<String> {
    // The node agent (issue 15) rides in gpuctl's own `#cloud-config` (the parser refuses it with raw
    // user data and on JD, whose launch script is not one): with or without `env`.
    if crate::agent::wanted(pool) && boot_facts(p).format == Format::CloudConfig {
        let env = pool.env.clone().unwrap_or_else(|| bare_env(pool));
        let text = render_node(&pool.name.value, &env, p, node).text;
        return Some(crate::agent::add_to_cloud_config(&text, pool, p));
    }
    match (&pool.env, node) {
        (Some(env), node) => Some(render_node(&pool.name.value, env, p, node).text),
        // A cluster node without `env` still mounts its shared storage and learns its facts (the
        // parser refuses `shared_storage` with raw user data).
        (None, Some(node)) if pool.user_data.is_none() => {
            Some(render_node(&pool.name.value, &bare_env(pool), p, Some(node)).text)
        }
        (None, _) => pool.user_data.clone(),
    }
}

/// An `env` that asks for nothing: the boot script of a pool without `env` that still gets one (a
/// cluster node's facts, the node agent).
fn bare_env(pool: &Pool) -> Env {
    Env {
        loc: pool.loc,
        container: false,
        container_image: None,
        mount: None,
        setup: None,
        cuda: None,
        driver: None,
    }
}

/// What a pool's instances on `p` boot with, when gpuctl renders it (`env`, the node agent, or both):
/// `plan` shows it. `None` for raw user data or nothing.
pub fn rendered(pool: &Pool, p: Provider) -> Option<Rendered> {
    if !(crate::agent::wanted(pool) && boot_facts(p).format == Format::CloudConfig) {
        return pool.env.as_ref().map(|env| render(&pool.name.value, env, p));
    }
    let text = user_data(pool, p, None)?;
    let base = match &pool.env {
        Some(env) => render(&pool.name.value, env, p).summary,
        None => "no env".to_string(),
    };
    let summary = format!("{base}; with the node agent, {} bytes in all", text.len());
    Some(Rendered { provider: p, format: boot_facts(p).format, summary, text })
}

/// Renders `env` for pool `pool` on `p`.
pub fn render(pool: &str, env: &Env, p: Provider) -> Rendered {
    render_node(pool, env, p, None)
}

/// Renders `env` for one node of a cluster pool (see [`NodeFacts`]).
pub fn render_node(pool: &str, env: &Env, p: Provider, node: Option<&NodeFacts>) -> Rendered {
    let facts = boot_facts(p);
    let script = script(pool, env, facts, node);
    let text = match facts.format {
        Format::LaunchScript => script,
        Format::CloudConfig => cloud_config(pool, p, &script),
    };
    Rendered { provider: p, format: facts.format, summary: summary(env, facts, text.len()), text }
}

fn summary(env: &Env, facts: &BootFacts, bytes: usize) -> String {
    let mut parts = Vec::new();
    if env.container {
        parts.push(match facts.apt_mirror {
            Some(m) => format!("Docker + NVIDIA container toolkit via {m}"),
            None => "Docker + NVIDIA container toolkit via the image's apt sources".to_string(),
        });
    }
    if let Some(img) = &env.container_image {
        parts.push(match facts.registry_mirror {
            Some(m) => format!("pull {img} (registry mirror {m})"),
            None => format!("pull {img}"),
        });
    }
    if let Some(m) = &env.mount {
        parts.push(format!("first data disk on {m} (formatted only if empty)"));
    }
    if let Some(d) = driver_floor(env) {
        parts.push(format!("driver ≥ {d}"));
    }
    if env.setup.is_some() {
        parts.push("setup".into());
    }
    parts.push(format!("ready marker {READY_MARKER}"));
    format!("{}, {bytes} bytes: {}", facts.format.as_str(), parts.join(", "))
}

/// The driver the boot script requires: the higher of `env.driver` and what `env.cuda` needs (gpuctl-core's
/// minor-version-compatibility table), so a CUDA requirement alone is checked on the host too.
pub fn driver_floor(env: &Env) -> Option<String> {
    let num = |s: &str| s.split('.').map(|p| p.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>();
    let given = env.driver.as_ref().map(|d| d.value.clone());
    let needed =
        env.cuda.as_ref().and_then(|c| gpuctl_core::compat::min_driver_for(&c.value)).map(String::from);
    match (given, needed) {
        (Some(g), Some(n)) => Some(if num(&n) > num(&g) { n } else { g }),
        (g, n) => g.or(n),
    }
}

/// `s` as one bash single-quoted word: any text but NUL, taken literally.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r#"'\''"#))
}

const HEADER: &str = r#"set -uo pipefail
export DEBIAN_FRONTEND=noninteractive
gpuctl_state=/var/lib/gpuctl
mkdir -p "$gpuctl_state"
rm -f "$gpuctl_state/ready" "$gpuctl_state/failed"

# Runs one step; the first that fails is named in the failure marker and ends the script.
step() {
    local name=$1
    shift
    echo "gpuctl: step $name"
    if ! "$@"; then
        echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) step=$name" > "$gpuctl_state/failed"
        echo "gpuctl: step $name failed" >&2
        exit 1
    fi
}
"#;

/// Points the Ubuntu/Debian archives at the cloud's mirror (`MIRROR` is replaced): images already using
/// it are unchanged, so nothing is fetched from the public internet where the cloud has a mirror.
const APT_MIRROR: &str = r#"
use_cloud_mirror() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        sed -i -E 's#https?://([a-z0-9.-]+\.)?(archive|security)\.ubuntu\.com/ubuntu#http://MIRROR/ubuntu#g; s#https?://(deb|security)\.debian\.org/#http://MIRROR/#g' "$f" || return 1
    done
}
"#;

/// Docker from the distribution's archive and the toolkit's package; skipped when already there (the
/// clouds' GPU images often ship both). CUDA and the driver are never installed here.
const CONTAINER: &str = r#"
install_container() {
    if ! command -v apt-get >/dev/null; then
        echo "gpuctl: container = true needs an apt-based image (Ubuntu or Debian)" >&2
        return 1
    fi
    if command -v docker >/dev/null && command -v nvidia-ctk >/dev/null; then
        return 0
    fi
    # At first boot the image's own unattended upgrades may hold dpkg's lock: wait for it, bounded.
    apt-get -o DPkg::Lock::Timeout=600 update -q || return 1
    command -v docker >/dev/null || apt-get -o DPkg::Lock::Timeout=600 install -y -q docker.io || return 1
    command -v nvidia-ctk >/dev/null \
        || apt-get -o DPkg::Lock::Timeout=600 install -y -q nvidia-container-toolkit || return 1
}

# Writes daemon.json only when the image has none (its own settings win), then registers the NVIDIA runtime.
configure_docker() {
    mkdir -p /etc/docker
    if [ ! -s /etc/docker/daemon.json ]; then
        echo DAEMON_JSON > /etc/docker/daemon.json
    fi
    nvidia-ctk runtime configure --runtime=docker || return 1
    systemctl restart docker
}
"#;

/// The first data disk: formatted only when `blkid` finds nothing on it at all (exit 2), so a re-boot or
/// a disk made from a snapshot keeps its data; mounted by UUID with `nofail`, so a missing disk never
/// stops the instance booting.
const MOUNT: &str = r#"
# The first whole disk with nothing mounted from it (the system disk has `/`, swap shows as [SWAP]).
first_data_disk() {
    local d
    for d in $(lsblk -dnpo NAME,TYPE | awk '$2 == "disk" { print $1 }'); do
        if [ -z "$(lsblk -no MOUNTPOINT "$d" | tr -d '[:space:]')" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

mount_data() {
    local mnt=$1 dev="" part uuid probe
    if mountpoint -q "$mnt"; then
        return 0
    fi
    # A data disk may attach shortly after boot: wait for it up to two minutes.
    for _ in $(seq 1 60); do
        dev=$(first_data_disk) && break
        sleep 2
    done
    if [ -z "$dev" ]; then
        echo "gpuctl: no data disk to mount on $mnt" >&2
        return 1
    fi
    udevadm settle || true
    probe=0
    blkid -p "$dev" >/dev/null 2>&1 || probe=$?
    if [ "$probe" -eq 2 ]; then
        mkfs.ext4 -q -L gpuctl-data "$dev" || return 1
    else
        # Something is there (a file system, or a partition table from a snapshot): never format it.
        part=$(lsblk -lnpo NAME,FSTYPE "$dev" | awk 'NF == 2 { print $1; exit }')
        if [ -z "$part" ]; then
            echo "gpuctl: $dev holds data but no file system to mount; not formatting it" >&2
            return 1
        fi
        dev=$part
    fi
    uuid=$(blkid -s UUID -o value "$dev")
    if [ -z "$uuid" ]; then
        echo "gpuctl: $dev has no UUID" >&2
        return 1
    fi
    mkdir -p "$mnt"
    grep -q "^UUID=$uuid " /etc/fstab || echo "UUID=$uuid $mnt auto defaults,nofail 0 2" >> /etc/fstab
    mount "$mnt"
}
"#;

/// The host's driver against the spec's lowest (`sort -V -C`: true when already in order).
const DRIVER: &str = r#"
driver_at_least() {
    local have
    have=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1) || return 1
    echo "gpuctl: NVIDIA driver $have, need $1 or newer"
    printf '%s\n%s\n' "$1" "$have" | sort -V -C
}
"#;

/// The user's command, as root, from the data disk's folder when there is one.
const SETUP: &str = r#"
run_setup() {
    cd "$1" || return 1
    bash -c "$2"
}
"#;

/// A shared file system over NFS: the client installed where missing, an fstab line (`_netdev`,
/// `nofail`: a boot never hangs on it), then mounted with bounded retries while the mount target
/// starts answering. The options are the ones the clouds' NAS/CFS guides give for NFSv4.0
/// (docs/research/clusters.md): hard mounts with long timeouts, `noresvport` so a reconnect gets a
/// new source port.
const SHARED: &str = r#"
mount_shared() {
    local src=$1 mnt=$2
    if mountpoint -q "$mnt"; then
        return 0
    fi
    if ! command -v mount.nfs >/dev/null; then
        if command -v apt-get >/dev/null; then
            apt-get -o DPkg::Lock::Timeout=600 update -q || return 1
            apt-get -o DPkg::Lock::Timeout=600 install -y -q nfs-common || return 1
        elif command -v yum >/dev/null; then
            yum install -y -q nfs-utils || return 1
        else
            echo "gpuctl: no apt-get or yum to install the NFS client with" >&2
            return 1
        fi
    fi
    mkdir -p "$mnt"
    grep -q "^$src $mnt " /etc/fstab \
        || echo "$src $mnt nfs vers=4.0,hard,timeo=600,retrans=2,noresvport,_netdev,nofail 0 0" >> /etc/fstab
    for _ in $(seq 1 30); do
        mount "$mnt" && return 0
        sleep 10
    done
    echo "gpuctl: could not mount $src on $mnt" >&2
    return 1
}
"#;

/// Writes the node's cluster facts (no secret among them) for the user's jobs to source.
const CLUSTER_FACTS: &str = r#"
write_cluster_env() {
    mkdir -p /etc/gpuctl
    printf '%s\n' "$@" > /etc/gpuctl/cluster.env
}
"#;

/// The newest checkpoint in a folder (issue 15): the one its `latest` file names when it names an
/// entry there, else the newest entry by modification time (`latest` itself aside); nothing when
/// the folder is empty or missing.
const LATEST_CHECKPOINT: &str = r#"
latest_checkpoint() {
    local dir=$1 name
    if [ -s "$dir/latest" ]; then
        name=$(head -n 1 "$dir/latest")
        if [ -n "$name" ] && [ "${name#*/}" = "$name" ] && [ -e "$dir/$name" ]; then
            printf '%s\n' "$dir/$name"
            return 0
        fi
    fi
    name=$(find "$dir" -mindepth 1 -maxdepth 1 ! -name latest -printf '%T@ %f\n' 2>/dev/null | sort -n | tail -n 1 | cut -d ' ' -f 2-)
    if [ -n "$name" ]; then
        printf '%s\n' "$dir/$name"
    fi
}
"#;

const FOOTER: &str = r#"
date -u +%Y-%m-%dT%H:%M:%SZ > "$gpuctl_state/ready"
echo "gpuctl: ready"
"#;

/// The bash script both formats run. Values from the spec are validated by the parser (image names,
/// paths and versions have no shell characters) and quoted here all the same; `setup` is any text,
/// passed as one single-quoted word.
fn script(pool: &str, env: &Env, facts: &BootFacts, node: Option<&NodeFacts>) -> String {
    let shared = node.and_then(|n| n.shared.as_ref());
    let mut s = format!(
        "#!/bin/bash\n# gpuctl boot environment for pool `{pool}` on {}: rendered by gpuctl, holds no credentials.\n# {READY_MARKER} (a UTC timestamp) marks success; {FAILED_MARKER} names the step that failed.\n",
        facts.provider
    );
    s.push_str(HEADER);
    // The NFS client may come from apt too.
    let mirror = facts.apt_mirror.filter(|_| env.container || shared.is_some());
    if let Some(m) = mirror {
        s.push_str(&APT_MIRROR.replace("MIRROR", m));
    }
    if env.container {
        let mut daemon = serde_json::Map::new();
        if let Some(m) = facts.registry_mirror {
            daemon.insert("registry-mirrors".into(), serde_json::json!([m]));
        }
        if let Some(m) = &env.mount {
            // Images are large: keep them on the data disk, not the system disk.
            daemon.insert("data-root".into(), serde_json::json!(format!("{m}/docker")));
        }
        let json = serde_json::Value::Object(daemon).to_string();
        s.push_str(&CONTAINER.replace("DAEMON_JSON", &quote(&json)));
    }
    if env.mount.is_some() {
        s.push_str(MOUNT);
    }
    let floor = driver_floor(env);
    if floor.is_some() {
        s.push_str(DRIVER);
    }
    if env.setup.is_some() {
        s.push_str(SETUP);
    }
    if shared.is_some() {
        s.push_str(SHARED);
    }
    if node.is_some() {
        s.push_str(CLUSTER_FACTS);
    }
    if node.is_some_and(|n| n.resume.is_some()) && shared.is_some() {
        s.push_str(LATEST_CHECKPOINT);
    }
    s.push('\n');
    if let Some(d) = &floor {
        s.push_str(&format!("step driver driver_at_least {}\n", quote(d)));
    }
    // The disk first: Docker's data root may live on it.
    if let Some(m) = &env.mount {
        s.push_str(&format!("step mount mount_data {}\n", quote(m)));
    }
    if mirror.is_some() {
        s.push_str("step apt-mirror use_cloud_mirror\n");
    }
    if env.container {
        s.push_str("step container install_container\nstep docker configure_docker\n");
    }
    if let Some(img) = &env.container_image {
        s.push_str(&format!("step pull docker pull {}\n", quote(img)));
    }
    if let Some(n) = node {
        if let Some(m) = shared {
            s.push_str(&format!(
                "step shared-storage mount_shared {} {}\n",
                quote(&m.source),
                quote(&m.mount)
            ));
        }
        let mut lines = vec![
            format!("GPUCTL_NODE_RANK={}", n.rank),
            format!("GPUCTL_NODES={}", n.nodes),
            format!("NODE_RANK={}", n.rank),
            format!("NNODES={}", n.nodes),
            format!("MASTER_PORT={MASTER_PORT}"),
        ];
        if let Some(g) = n.gpus_per_node {
            lines.push(format!("GPUCTL_GPUS_PER_NODE={g}"));
        }
        if let Some(m) = shared {
            lines.push(format!("GPUCTL_SHARED_DIR={}", m.mount));
            lines.push(format!("GPUCTL_CHECKPOINT_DIR={}/{CHECKPOINT_DIR}", m.mount));
        }
        if let Some(r) = &n.resume {
            lines.push(format!("GPUCTL_REPLACES={}", r.replaces));
        }
        let mut words: Vec<String> = lines.iter().map(|l| quote(l)).collect();
        if let (Some(_), Some(m)) = (&n.resume, shared) {
            // Found at boot, once the share is mounted: the checkpoint the reclaimed node's hook wrote.
            words.push(format!(
                "\"GPUCTL_RESUME_FROM=$(latest_checkpoint {})\"",
                quote(&format!("{}/{CHECKPOINT_DIR}", m.mount))
            ));
        }
        match (&n.master_addr, n.rank) {
            (Some(a), _) => words.push(quote(&format!("MASTER_ADDR={a}"))),
            // Node 0 is the master: its own private address, read at boot (the first one the
            // kernel lists: the primary interface's).
            (None, 0) => words.push("\"MASTER_ADDR=$(hostname -I | awk '{print $1}')\"".to_string()),
            // Node 0's address is unknown (it is gone): `gpuctl run --torchrun` passes it.
            (None, _) => {}
        }
        s.push_str(&format!("step cluster-env write_cluster_env {}\n", words.join(" ")));
    }
    if let Some(cmd) = &env.setup {
        let dir = env.mount.as_deref().unwrap_or("/root");
        s.push_str(&format!(
            // The user's `$…` expand when `run_setup` runs the command, not here: SC2016 is what we want.
            "# shellcheck disable=SC2016\ngpuctl_setup={}\nstep setup run_setup {} \"$gpuctl_setup\"\n",
            quote(cmd),
            quote(dir)
        ));
    }
    s.push_str(FOOTER);
    s
}

/// The script inside a `#cloud-config`: `write_files` puts it at [`SCRIPT_PATH`] (root-only), `runcmd`
/// runs it once. The script sits in a YAML literal block, indented, so no line of it is read as YAML;
/// the parser refuses the characters YAML would still treat specially (controls, U+2028/2029).
fn cloud_config(pool: &str, p: Provider, script: &str) -> String {
    let mut s = format!(
        "#cloud-config\n# gpuctl boot environment for pool `{pool}` on {p}; the script runs once, at first boot.\nwrite_files:\n  - path: {SCRIPT_PATH}\n    owner: root:root\n    permissions: '0700'\n    content: |\n"
    );
    for line in script.lines() {
        if line.is_empty() {
            s.push('\n');
        } else {
            s.push_str("      ");
            s.push_str(line);
            s.push('\n');
        }
    }
    s.push_str(&format!("runcmd:\n  - [bash, {SCRIPT_PATH}]\n"));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(quote("a'b"), r#"'a'\''b'"#);
        assert_eq!(quote(""), "''");
    }
}
