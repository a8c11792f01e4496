//! A cluster pool's Kubernetes engine (issue 14, `engine = "k3s"`): what gpuctl renders for it. The
//! CLI (`gpuctl k3s up`, `gpuctl kubeconfig`, `gpuctl run --trainjob`) sends these over SSH; nothing
//! here does I/O, so every piece is tested as text (unit tests below) and every manifest is checked
//! by the real validators — `kubernetes-validate` for the Kubernetes objects and Kubeflow Trainer's
//! published API models (`kubeflow-trainer-api`) for the TrainJob (`tests/k3s.rs`, step 15).
//!
//! gpuctl schedules nothing itself. The field's engines do: k3s (Kubernetes) across the nodes, the
//! NVIDIA device plugin offering `nvidia.com/gpu`, and Kubeflow Trainer's `torch-distributed` runtime
//! starting torchrun in a pod per node.
//!
//! **Installing from inside China.** k3s comes from the mirror its own documentation gives for
//! China: `curl -sfL https://rancher-mirror.rancher.cn/k3s/k3s-install.sh | INSTALL_K3S_MIRROR=cn sh -`
//! (K3s docs, 快速入门指南 / Quick-Start Guide, docs.k3s.io/zh/quick-start: "国内用户，可以使用以下方法加速安装";
//! `INSTALL_K3S_MIRROR=cn` makes the script take the binary and the system images from the same
//! mirror). The NVIDIA device plugin's image has no documented China mirror: it is NVIDIA's own
//! `nvcr.io` image, as in NVIDIA's static manifest (`deployments/static/nvidia-device-plugin.yml` of
//! NVIDIA/k8s-device-plugin). Kubeflow Trainer is installed as its installation guide says
//! (kubeflow.org/docs/components/trainer/operator-guides/installation: `kubectl apply --server-side
//! -k "https://github.com/kubeflow/trainer.git/manifests/overlays/manager?ref=${VERSION}"`, then the
//! `runtimes` overlay for the ClusterTrainingRuntimes); it has no China mirror either, so that step
//! needs GitHub and ghcr.io to answer from the nodes (`--trainer-manifests` points it elsewhere).
//!
//! **The join token is a secret.** gpuctl makes it (from the OS's random source, via uuid v4) and
//! holds it as a `gpuctl_sign::Secret` (`******` in any Debug). It reaches a node only on the SSH
//! session's standard input: the scripts below read it with `read` and write it to a root-only file
//! that k3s reads (`K3S_TOKEN_FILE`, so not even the install script's service environment file holds
//! it), never as a word of a command line that `ps` or a log would show. The state store never sees it.

use std::net::IpAddr;

use gpuctl_sign::Secret;
use serde_json::{json, Map, Value};

/// k3s's install script on the China mirror its docs give (see the module's header).
pub const INSTALL_SCRIPT_URL: &str = "https://rancher-mirror.rancher.cn/k3s/k3s-install.sh";
/// Where k3s writes the admin kubeconfig on the server (k3s docs, "Cluster Access").
pub const KUBECONFIG_PATH: &str = "/etc/rancher/k3s/k3s.yaml";
/// The root-only file holding the join token on every node (k3s's `--token-file`).
pub const TOKEN_FILE: &str = "/etc/rancher/k3s/gpuctl-token";
/// The Kubernetes API's port on the server.
pub const API_PORT: u16 = 6443;
/// Kubeflow Trainer's release, the same as the pinned `kubeflow-trainer-api` whose models the
/// rendered TrainJob is validated against (scripts/test.d/15-boot-config.sh).
pub const TRAINER_VERSION: &str = "v2.3.0";
/// NVIDIA's device plugin image, as its static manifest names it (no documented China mirror).
pub const DEVICE_PLUGIN_IMAGE: &str = "nvcr.io/nvidia/k8s-device-plugin:v0.17.1";
/// The Trainer runtime a rendered TrainJob runs on.
pub const TORCH_RUNTIME: &str = "torch-distributed";
/// The names of the shared file system's PersistentVolume and PersistentVolumeClaim.
pub const SHARED_VOLUME: &str = "gpuctl-shared";
/// The namespace the claim and rendered TrainJobs live in.
pub const NAMESPACE: &str = "default";
/// The `app.kubernetes.io/managed-by` label on what gpuctl applies.
const MANAGED_BY: &str = "gpuctl";
/// The NFS options the boot script mounts the shared file system with (boot.rs `mount_shared`).
const NFS_OPTIONS: [&str; 5] = ["vers=4.0", "hard", "timeo=600", "retrans=2", "noresvport"];
/// Where the scripts keep the downloaded install script.
const INSTALL_SCRIPT_COPY: &str = "/var/lib/gpuctl/k3s-install.sh";

/// A fresh join token: 64 hex digits (two v4 UUIDs, 244 random bits from the OS's source).
pub fn new_token() -> Secret {
    Secret::new(format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple()))
}

/// Whether `text` is a token gpuctl could have made or k3s written (the stdin line a node reads): one
/// line of printable ASCII without spaces. Checked before a token read back from the server is sent on.
pub fn token_looks_right(text: &str) -> bool {
    (16..=512).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_graphic())
}

/// A k3s release (`v1.33.5+k3s1`) for `INSTALL_K3S_VERSION`: letters, digits, `.`, `+`, `-` only.
pub fn check_version(v: &str) -> Result<(), String> {
    let ok = v.starts_with('v')
        && v.len() <= 40
        && v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!("{v:?} is not a k3s release (like v1.33.5+k3s1)"))
    }
}

/// The lines every node script starts with: strict, root-only files, the token from stdin into
/// [`TOKEN_FILE`] (`keep`: a server keeps the token it has, so a second `k3s up` cannot change it
/// under running agents), and the install script downloaded once.
fn prelude(keep: bool) -> String {
    let write = format!("printf '%s\\n' \"$gpuctl_token\" > {TOKEN_FILE}");
    let store = if keep { format!("[ -s {TOKEN_FILE} ] || {write}") } else { write };
    format!(
        "set -eu\n\
         umask 077\n\
         mkdir -p /etc/rancher/k3s /var/lib/gpuctl\n\
         gpuctl_token=\n\
         IFS= read -r gpuctl_token || true\n\
         if [ -z \"$gpuctl_token\" ] && [ ! -s {TOKEN_FILE} ]; then echo 'gpuctl: no join token on stdin' >&2; exit 1; fi\n\
         if [ -n \"$gpuctl_token\" ]; then {store}; fi\n\
         unset gpuctl_token\n\
         fetch_k3s() {{ curl -sfL --retry 5 --retry-delay 3 -o {INSTALL_SCRIPT_COPY} {INSTALL_SCRIPT_URL}; }}\n"
    )
}

fn version_env(version: Option<&str>) -> String {
    version.map(|v| format!("INSTALL_K3S_VERSION={v} ")).unwrap_or_default()
}

fn host(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(a) => format!("[{a}]"),
        IpAddr::V4(a) => a.to_string(),
    }
}

/// The script (run as root by `sh -c`, the token on stdin) that makes node 0 the k3s server:
/// k3s from the China mirror, the node's private address for the cluster's traffic, its public
/// address in the API certificate (for `gpuctl kubeconfig`), the kubeconfig root-only, and the NVIDIA
/// container runtime as containerd's default so every pod (the device plugin, Trainer's) can see the
/// GPUs (k3s docs, "Advanced Options", NVIDIA Container Runtime Support: `--default-runtime`).
/// Does nothing when k3s already runs there.
pub fn server_script(node_ip: IpAddr, public_ip: IpAddr, version: Option<&str>) -> String {
    format!(
        "{}if systemctl is-active --quiet k3s; then echo 'gpuctl: k3s server already running'; exit 0; fi\n\
         fetch_k3s\n\
         INSTALL_K3S_MIRROR=cn {}K3S_TOKEN_FILE={TOKEN_FILE} sh {INSTALL_SCRIPT_COPY} server \
         --node-ip={node_ip} --tls-san={public_ip} --write-kubeconfig-mode=0600 --default-runtime=nvidia\n",
        prelude(true),
        version_env(version),
    )
}

/// The script that joins one more node as a k3s agent of the server at `server_ip` (its private
/// address), the token on stdin. Does nothing when the agent already runs there.
pub fn agent_script(server_ip: IpAddr, node_ip: IpAddr, version: Option<&str>) -> String {
    format!(
        "{}if systemctl is-active --quiet k3s-agent; then echo 'gpuctl: k3s agent already running'; exit 0; fi\n\
         fetch_k3s\n\
         INSTALL_K3S_MIRROR=cn {}K3S_URL=https://{}:{API_PORT} K3S_TOKEN_FILE={TOKEN_FILE} sh {INSTALL_SCRIPT_COPY} agent \
         --node-ip={node_ip} --default-runtime=nvidia\n",
        prelude(false),
        version_env(version),
        host(server_ip),
    )
}

/// Prints the server's join token (to the SSH session's stdout, which gpuctl keeps in memory only).
pub fn read_token_command() -> String {
    format!("cat {TOKEN_FILE}")
}

/// Prints the admin kubeconfig (its stdout likewise kept in memory, then written 0600).
pub fn read_kubeconfig_command() -> String {
    format!("cat {KUBECONFIG_PATH}")
}

/// Applies the manifests on the command's stdin with the server's own kubectl.
pub fn apply_stdin_command() -> String {
    "k3s kubectl apply -f -".to_string()
}

/// The Kubeflow Trainer overlay `overlay` (`manager`, `runtimes`) at `source`: the `?ref=` URL of
/// the install guide when `source` is `None`.
pub fn trainer_kustomization(overlay: &str, source: Option<&str>) -> String {
    match source {
        Some(s) => format!("{}/{overlay}", s.trim_end_matches('/')),
        None => format!(
            "https://github.com/kubeflow/trainer.git/manifests/overlays/{overlay}?ref={TRAINER_VERSION}"
        ),
    }
}

/// Installs Kubeflow Trainer as its installation guide does (server-side apply of the `manager`
/// overlay), waits for its controller (bounded), then applies the `runtimes` overlay, whose
/// ClusterTrainingRuntimes (`torch-distributed` among them) the controller's webhook admits.
pub fn trainer_install_script(source: Option<&str>, timeout_s: u64) -> String {
    let q = |s: String| sh_word(&s);
    format!(
        "set -eu\n\
         k3s kubectl apply --server-side -k {}\n\
         k3s kubectl -n kubeflow-system wait --for=condition=Available deployment --all --timeout={timeout_s}s\n\
         k3s kubectl apply --server-side -k {}\n\
         k3s kubectl get clustertrainingruntime {TORCH_RUNTIME} -o name\n",
        q(trainer_kustomization("manager", source)),
        q(trainer_kustomization("runtimes", source)),
    )
}

/// Waits (bounded) until `nodes` nodes are Ready, printing the node list either way.
pub fn nodes_ready_script(nodes: u32, timeout_s: u64) -> String {
    let tries = timeout_s.div_ceil(5).max(1);
    format!(
        "set -u\n\
         i=0\n\
         while :; do\n\
         \x20 ready=$(k3s kubectl get nodes --no-headers 2>/dev/null | awk '$2 == \"Ready\"' | wc -l)\n\
         \x20 if [ \"$ready\" -ge {nodes} ]; then k3s kubectl get nodes -o wide; exit 0; fi\n\
         \x20 i=$((i + 1))\n\
         \x20 if [ \"$i\" -ge {tries} ]; then echo \"gpuctl: $ready of {nodes} node(s) Ready after {timeout_s} s\" >&2; k3s kubectl get nodes -o wide >&2 || true; exit 1; fi\n\
         \x20 sleep 5\n\
         done\n"
    )
}

/// A word as POSIX `sh` reads it back unchanged (the same rule as the CLI's `remote::sh_quote`).
pub fn sh_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '.' | '/' | '=' | ':' | ',' | '@' | '+' | '%')
        });
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The kubeconfig k3s wrote, pointed at the server's public address instead of `127.0.0.1` (the
/// public address is in the API certificate: [`server_script`]'s `--tls-san`).
pub fn kubeconfig_for(text: &str, public_ip: IpAddr) -> Result<String, String> {
    let mut changed = 0;
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.lines() {
        let t = line.trim_start();
        let indent = &line[..line.len() - t.len()];
        match t.strip_prefix("server: ") {
            Some(url) if url.starts_with("https://127.0.0.1:") || url.starts_with("https://localhost:") => {
                let port = url.rsplit(':').next().unwrap_or("6443");
                out.push_str(&format!("{indent}server: https://{}:{port}", host(public_ip)));
                changed += 1;
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    if changed == 0 {
        return Err(format!(
            "{KUBECONFIG_PATH} names no `server: https://127.0.0.1:…` to point at the node's public address"
        ));
    }
    Ok(out)
}

/// The shared file system as a Kubernetes volume: the NFS export every node mounts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedVolume {
    /// `address:/path`, as the state records the mount target.
    pub source: String,
    /// The folder the boot script mounts it on; a rendered TrainJob mounts it at the same folder.
    pub mount: String,
    /// The capacity a PersistentVolume must state (NFS does not enforce it): the spec's `size_gb`.
    pub size_gb: Option<u32>,
}

impl SharedVolume {
    fn server_path(&self) -> Result<(&str, &str), String> {
        let (server, path) =
            self.source.split_once(':').filter(|(s, p)| !s.is_empty() && p.starts_with('/')).ok_or_else(
                || format!("the shared file system's source {:?} is not address:/path", self.source),
            )?;
        Ok((server, path))
    }

    fn capacity(&self) -> String {
        match self.size_gb {
            Some(g) => format!("{g}Gi"),
            None => "1Ti".to_string(),
        }
    }
}

fn labels() -> Value {
    json!({ "app.kubernetes.io/managed-by": MANAGED_BY })
}

/// NVIDIA's device plugin DaemonSet, as its static manifest has it: it offers each node's GPUs as
/// `nvidia.com/gpu` to the scheduler.
pub fn device_plugin() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": { "name": "nvidia-device-plugin-daemonset", "namespace": "kube-system", "labels": labels() },
        "spec": {
            "selector": { "matchLabels": { "name": "nvidia-device-plugin-ds" } },
            "updateStrategy": { "type": "RollingUpdate" },
            "template": {
                "metadata": { "labels": { "name": "nvidia-device-plugin-ds" } },
                "spec": {
                    "tolerations": [{ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" }],
                    "priorityClassName": "system-node-critical",
                    "containers": [{
                        "name": "nvidia-device-plugin-ctr",
                        "image": DEVICE_PLUGIN_IMAGE,
                        "env": [{ "name": "FAIL_ON_INIT_ERROR", "value": "false" }],
                        "securityContext": { "allowPrivilegeEscalation": false, "capabilities": { "drop": ["ALL"] } },
                        "volumeMounts": [{ "name": "kubelet-device-plugins-dir", "mountPath": "/var/lib/kubelet/device-plugins" }]
                    }],
                    "volumes": [{
                        "name": "kubelet-device-plugins-dir",
                        "hostPath": { "path": "/var/lib/kubelet/device-plugins", "type": "Directory" }
                    }]
                }
            }
        }
    })
}

/// The shared file system as a ReadWriteMany PersistentVolume (NFS, the same export and options
/// the boot script mounts) and its claim, bound to each other by name.
///
/// Why NFS rather than a hostPath of the folder the boot script mounted: the kubelet mounts the
/// export itself for each pod, so a pod on a node whose boot-time mount failed gets a mount error
/// instead of writing silently to that node's local disk under the same folder. `storageClassName:
/// ""` keeps k3s's default `local-path` class from provisioning a node-local volume for the claim.
pub fn shared_volume(v: &SharedVolume) -> Result<[Value; 2], String> {
    let (server, path) = v.server_path()?;
    let size = v.capacity();
    let pv = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": { "name": SHARED_VOLUME, "labels": labels() },
        "spec": {
            "capacity": { "storage": size },
            "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "mountOptions": NFS_OPTIONS,
            "nfs": { "server": server, "path": path }
        }
    });
    let pvc = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": { "name": SHARED_VOLUME, "namespace": NAMESPACE, "labels": labels() },
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": "",
            "volumeName": SHARED_VOLUME,
            "resources": { "requests": { "storage": size } }
        }
    });
    Ok([pv, pvc])
}

/// Everything `k3s up` applies after the nodes joined: the device plugin, and the shared volume
/// when the pool has shared storage.
pub fn cluster_manifests(shared: Option<&SharedVolume>) -> Result<Vec<Value>, String> {
    let mut out = vec![device_plugin()];
    if let Some(v) = shared {
        out.extend(shared_volume(v)?);
    }
    Ok(out)
}

/// What `gpuctl run --trainjob-image` renders a TrainJob from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainJobArgs {
    pub name: String,
    pub image: String,
    /// The command of the training container (`torchrun` is the runtime's: give the script's).
    pub command: Vec<String>,
    pub num_nodes: u32,
    /// `nvidia.com/gpu` per node; `None`: the runtime's default (no GPU request).
    pub gpus_per_node: Option<u32>,
    /// The shared file system's folder: the claim [`SHARED_VOLUME`] mounted there in every node's pod.
    pub shared_mount: Option<String>,
}

/// A Kubernetes object name as a TrainJob's must be (RFC 1035 label; Trainer derives JobSet, Job and
/// Pod names from it, so it is kept to 40 characters).
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = (1..=40).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a TrainJob name (lower-case letters, digits and `-`, a letter first, at most 40)"
        ))
    }
}

/// A Kubeflow Trainer TrainJob (`trainer.kubeflow.org/v1alpha1`, field names from the published API
/// models, `kubeflow-trainer-api` 2.3.0) on the `torch-distributed` runtime: the runtime's `node`
/// job runs `command` in `image` on `num_nodes` pods, each asking for `gpus_per_node` GPUs, with the
/// shared volume mounted through a runtime patch of that job's pod template.
pub fn train_job(a: &TrainJobArgs) -> Result<Value, String> {
    check_name(&a.name)?;
    if a.image.is_empty()
        || a.image.len() > 512
        || a.image.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(format!("{:?} is not a container image reference", a.image));
    }
    if a.num_nodes == 0 {
        return Err("a TrainJob needs one node or more".into());
    }
    let mut trainer = Map::new();
    trainer.insert("image".into(), json!(a.image));
    if !a.command.is_empty() {
        trainer.insert("command".into(), json!(a.command));
    }
    trainer.insert("numNodes".into(), json!(a.num_nodes));
    if let Some(g) = a.gpus_per_node {
        // Quantities as strings: what the API's `resource.Quantity` (and the models' StrictStr) take.
        let gpus = json!({ "nvidia.com/gpu": g.to_string() });
        trainer.insert("resourcesPerNode".into(), json!({ "limits": gpus, "requests": gpus }));
    }
    let mut spec = Map::new();
    spec.insert("runtimeRef".into(), json!({ "name": TORCH_RUNTIME }));
    spec.insert("trainer".into(), Value::Object(trainer));
    if let Some(mount) = &a.shared_mount {
        if !mount.starts_with('/') {
            return Err(format!("the shared folder {mount:?} is not an absolute path"));
        }
        spec.insert(
            "runtimePatches".into(),
            json!([{
                "manager": MANAGED_BY,
                "trainingRuntimeSpec": { "template": { "spec": { "replicatedJobs": [{
                    "name": "node",
                    "template": { "spec": { "template": { "spec": {
                        "volumes": [{ "name": "shared", "persistentVolumeClaim": { "claimName": SHARED_VOLUME } }],
                        "containers": [{ "name": "node", "volumeMounts": [{ "name": "shared", "mountPath": mount }] }]
                    } } } }
                }] } } }
            }]),
        );
    }
    Ok(json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": { "name": a.name, "namespace": NAMESPACE, "labels": labels() },
        "spec": Value::Object(spec),
    }))
}

/// Manifests as one YAML stream (`---` between documents), in block style. Strings are always
/// double-quoted (JSON's escapes are YAML's), so no value is ever read back as a number, a boolean
/// or a null, and no character in one can break the structure.
pub fn to_yaml(docs: &[Value]) -> String {
    let mut out = String::new();
    for (i, d) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        yaml_value(&mut out, d, 0);
    }
    out
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Object(m) if m.is_empty() => Some("{}".into()),
        Value::Array(a) if a.is_empty() => Some("[]".into()),
        Value::Object(_) | Value::Array(_) => None,
        other => Some(other.to_string()),
    }
}

fn key(k: &str) -> String {
    let plain = k.starts_with(|c: char| c.is_ascii_alphabetic())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_'));
    if plain {
        k.to_string()
    } else {
        Value::String(k.to_string()).to_string()
    }
}

/// `v` at `indent` spaces: a mapping's entries or a sequence's items, one per line.
fn yaml_value(out: &mut String, v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                match scalar(v) {
                    Some(s) => out.push_str(&format!("{pad}{}: {s}\n", key(k))),
                    None => {
                        out.push_str(&format!("{pad}{}:\n", key(k)));
                        yaml_value(out, v, indent + 2);
                    }
                }
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for item in a {
                match scalar(item) {
                    Some(s) => out.push_str(&format!("{pad}- {s}\n")),
                    None => {
                        // The item's first line follows `- `; the rest line up under it.
                        let mut inner = String::new();
                        yaml_value(&mut inner, item, indent + 2);
                        let rest = inner.get(indent + 2..).unwrap_or_default();
                        out.push_str(&format!("{pad}- {rest}"));
                    }
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other).unwrap_or_default())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn shared() -> SharedVolume {
        SharedVolume { source: "10.0.0.20:/".into(), mount: "/mnt/shared".into(), size_gb: Some(500) }
    }

    #[test]
    fn the_server_and_agent_scripts_take_the_token_on_stdin_only() {
        let s = server_script(ip("10.0.0.7"), ip("203.0.113.5"), Some("v1.33.5+k3s1"));
        expect![[r#"
            set -eu
            umask 077
            mkdir -p /etc/rancher/k3s /var/lib/gpuctl
            gpuctl_token=
            IFS= read -r gpuctl_token || true
            if [ -z "$gpuctl_token" ] && [ ! -s /etc/rancher/k3s/gpuctl-token ]; then echo 'gpuctl: no join token on stdin' >&2; exit 1; fi
            if [ -n "$gpuctl_token" ]; then [ -s /etc/rancher/k3s/gpuctl-token ] || printf '%s\n' "$gpuctl_token" > /etc/rancher/k3s/gpuctl-token; fi
            unset gpuctl_token
            fetch_k3s() { curl -sfL --retry 5 --retry-delay 3 -o /var/lib/gpuctl/k3s-install.sh https://rancher-mirror.rancher.cn/k3s/k3s-install.sh; }
            if systemctl is-active --quiet k3s; then echo 'gpuctl: k3s server already running'; exit 0; fi
            fetch_k3s
            INSTALL_K3S_MIRROR=cn INSTALL_K3S_VERSION=v1.33.5+k3s1 K3S_TOKEN_FILE=/etc/rancher/k3s/gpuctl-token sh /var/lib/gpuctl/k3s-install.sh server --node-ip=10.0.0.7 --tls-san=203.0.113.5 --write-kubeconfig-mode=0600 --default-runtime=nvidia
        "#]]
        .assert_eq(&s);
        let a = agent_script(ip("10.0.0.7"), ip("10.0.0.9"), None);
        assert!(a.contains(
            "INSTALL_K3S_MIRROR=cn K3S_URL=https://10.0.0.7:6443 K3S_TOKEN_FILE=/etc/rancher/k3s/gpuctl-token sh /var/lib/gpuctl/k3s-install.sh agent --node-ip=10.0.0.9 --default-runtime=nvidia"
        ), "{a}");
        // An agent takes the server's token as given (no `[ -s … ] ||`).
        assert!(
            a.contains("then printf '%s\\n' \"$gpuctl_token\" > /etc/rancher/k3s/gpuctl-token; fi"),
            "{a}"
        );
        assert!(!a.contains("K3S_TOKEN="), "the token is never an environment word: {a}");
        let v6 = agent_script(ip("fd00::7"), ip("fd00::9"), None);
        assert!(v6.contains("K3S_URL=https://[fd00::7]:6443"), "{v6}");
        // The token itself never appears: it is not an input of any script.
        let t = new_token();
        assert_eq!(t.expose().len(), 64);
        assert!(token_looks_right(t.expose()));
        assert_eq!(format!("{t:?}"), "******");
        assert_ne!(new_token(), t);
        assert!(
            !token_looks_right("a b")
                && !token_looks_right("")
                && !token_looks_right("x\ny-0123456789abcdef")
        );
    }

    #[test]
    fn versions_and_names_are_checked() {
        assert!(check_version("v1.33.5+k3s1").is_ok());
        for bad in ["1.33", "v1.33; rm -rf /", "v1 33", "v$(id)"] {
            assert!(check_version(bad).is_err(), "{bad}");
        }
        assert!(check_name("train-7").is_ok());
        for bad in ["", "Train", "7a", "a_b", "a-", &"a".repeat(41)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn trainer_installs_from_its_documented_overlays() {
        expect![[r#"
            set -eu
            k3s kubectl apply --server-side -k 'https://github.com/kubeflow/trainer.git/manifests/overlays/manager?ref=v2.3.0'
            k3s kubectl -n kubeflow-system wait --for=condition=Available deployment --all --timeout=300s
            k3s kubectl apply --server-side -k 'https://github.com/kubeflow/trainer.git/manifests/overlays/runtimes?ref=v2.3.0'
            k3s kubectl get clustertrainingruntime torch-distributed -o name
        "#]]
        .assert_eq(&trainer_install_script(None, 300));
        assert_eq!(
            trainer_kustomization("runtimes", Some("/srv/trainer/overlays/")),
            "/srv/trainer/overlays/runtimes"
        );
        assert!(
            nodes_ready_script(3, 600).contains("-ge 3 ]")
                && nodes_ready_script(3, 600).contains("-ge 120 ]")
        );
    }

    #[test]
    fn the_kubeconfig_points_at_the_public_address() {
        let k = "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: AAA\n    server: https://127.0.0.1:6443\n  name: default\n";
        let got = kubeconfig_for(k, ip("203.0.113.5")).unwrap();
        assert!(got.contains("    server: https://203.0.113.5:6443\n"), "{got}");
        assert!(got.contains("certificate-authority-data: AAA"));
        assert!(kubeconfig_for("apiVersion: v1\n", ip("203.0.113.5")).is_err());
    }

    #[test]
    fn manifests_render_as_yaml() {
        let docs = cluster_manifests(Some(&shared())).unwrap();
        assert_eq!(docs.len(), 3);
        let y = to_yaml(&docs[1..]);
        expect![[r#"
            apiVersion: "v1"
            kind: "PersistentVolume"
            metadata:
              labels:
                app.kubernetes.io/managed-by: "gpuctl"
              name: "gpuctl-shared"
            spec:
              accessModes:
                - "ReadWriteMany"
              capacity:
                storage: "500Gi"
              mountOptions:
                - "vers=4.0"
                - "hard"
                - "timeo=600"
                - "retrans=2"
                - "noresvport"
              nfs:
                path: "/"
                server: "10.0.0.20"
              persistentVolumeReclaimPolicy: "Retain"
              storageClassName: ""
            ---
            apiVersion: "v1"
            kind: "PersistentVolumeClaim"
            metadata:
              labels:
                app.kubernetes.io/managed-by: "gpuctl"
              name: "gpuctl-shared"
              namespace: "default"
            spec:
              accessModes:
                - "ReadWriteMany"
              resources:
                requests:
                  storage: "500Gi"
              storageClassName: ""
              volumeName: "gpuctl-shared"
        "#]]
        .assert_eq(&y);
        let bad = SharedVolume { source: "nas.example".into(), ..shared() };
        assert!(cluster_manifests(Some(&bad)).is_err());
        assert_eq!(cluster_manifests(None).unwrap().len(), 1);
    }

    #[test]
    fn a_train_job_from_a_few_flags() {
        let a = TrainJobArgs {
            name: "train-1".into(),
            image: "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime".into(),
            command: vec!["python".into(), "/mnt/shared/train.py".into(), "--note=it's \"x\"".into()],
            num_nodes: 2,
            gpus_per_node: Some(8),
            shared_mount: Some("/mnt/shared".into()),
        };
        let y = to_yaml(&[train_job(&a).unwrap()]);
        expect![[r#"
            apiVersion: "trainer.kubeflow.org/v1alpha1"
            kind: "TrainJob"
            metadata:
              labels:
                app.kubernetes.io/managed-by: "gpuctl"
              name: "train-1"
              namespace: "default"
            spec:
              runtimePatches:
                - manager: "gpuctl"
                  trainingRuntimeSpec:
                    template:
                      spec:
                        replicatedJobs:
                          - name: "node"
                            template:
                              spec:
                                template:
                                  spec:
                                    containers:
                                      - name: "node"
                                        volumeMounts:
                                          - mountPath: "/mnt/shared"
                                            name: "shared"
                                    volumes:
                                      - name: "shared"
                                        persistentVolumeClaim:
                                          claimName: "gpuctl-shared"
              runtimeRef:
                name: "torch-distributed"
              trainer:
                command:
                  - "python"
                  - "/mnt/shared/train.py"
                  - "--note=it's \"x\""
                image: "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime"
                numNodes: 2
                resourcesPerNode:
                  limits:
                    nvidia.com/gpu: "8"
                  requests:
                    nvidia.com/gpu: "8"
        "#]]
        .assert_eq(&y);
        assert!(train_job(&TrainJobArgs { image: "a b".into(), ..a.clone() }).is_err());
        assert!(train_job(&TrainJobArgs { num_nodes: 0, ..a.clone() }).is_err());
        assert!(train_job(&TrainJobArgs { shared_mount: Some("rel".into()), ..a.clone() }).is_err());
        let bare = train_job(&TrainJobArgs { gpus_per_node: None, shared_mount: None, command: vec![], ..a })
            .unwrap();
        assert!(
            bare["spec"].get("runtimePatches").is_none() && bare["spec"]["trainer"].get("command").is_none()
        );
    }
}
