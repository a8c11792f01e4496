//! The Kubernetes engine's renderings (issue 14, `engine = "k3s"`) through the real validators: every
//! manifest variant through `kubernetes-validate` (strict) and every TrainJob through Kubeflow
//! Trainer's published API models (`kubeflow-trainer-api`), both by scripts/validate-k8s.py in the
//! ignored virtualenv .venv-k8s (scripts/k8s-validators); every node script through `sh -n` and
//! `shellcheck -s sh`. A negative control shows the validator refuses a TrainJob field the models do
//! not know. Missing validators fail the test when `CI` or `GPUCTL_REQUIRE_TOOLS` is set (scripts/test
//! installs them in step 05); elsewhere the test says loudly what it skipped.
//!
//! No k3s cluster runs here: what a live cluster does with these is not tested.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpuctl_provision::k3s::{self, SharedVolume, TrainJobArgs};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn required() -> bool {
    std::env::var_os("CI").is_some() || std::env::var_os("GPUCTL_REQUIRE_TOOLS").is_some()
}

fn skip_or_fail(what: &str) {
    assert!(!required(), "{what} is missing (scripts/k8s-validators and scripts/boot-tools install it)");
    eprintln!("SKIPPED: {what} is missing (set CI or GPUCTL_REQUIRE_TOOLS to fail instead; scripts/test installs it)");
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// Every manifest variant: the cluster's (with and without shared storage, sized or not) and
/// TrainJobs (GPUs or not, shared volume or not, a command or the runtime's).
fn variants() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let shared =
        |size_gb| SharedVolume { source: "10.0.0.20:/gpuctl".into(), mount: "/mnt/shared".into(), size_gb };
    out.push(("cluster-bare".into(), k3s::to_yaml(&k3s::cluster_manifests(None).unwrap())));
    for (name, size) in [("cluster-shared-sized", Some(500)), ("cluster-shared", None)] {
        out.push((name.into(), k3s::to_yaml(&k3s::cluster_manifests(Some(&shared(size))).unwrap())));
    }
    for gpus in [None, Some(8)] {
        for mount in [None, Some("/mnt/shared".to_string())] {
            for command in
                [vec![], vec!["python".to_string(), "/mnt/shared/train.py".into(), "--lr=1e-4".into()]]
            {
                let name = format!(
                    "trainjob-{}-{}-{}",
                    gpus.map_or("nogpu".into(), |g| format!("{g}gpu")),
                    if mount.is_some() { "shared" } else { "noshared" },
                    if command.is_empty() { "runtimecmd" } else { "cmd" }
                );
                let job = k3s::train_job(&TrainJobArgs {
                    name: "train-1".into(),
                    image: "pytorch/pytorch:2.7.1-cuda12.6-cudnn9-runtime".into(),
                    command,
                    num_nodes: 2,
                    gpus_per_node: gpus,
                    shared_mount: mount.clone(),
                })
                .unwrap();
                out.push((name, k3s::to_yaml(&[job])));
            }
        }
    }
    out
}

fn validate(dir: &Path) -> Option<(bool, String)> {
    let python = root().join(".venv-k8s/bin/python");
    if !python.exists() {
        skip_or_fail(".venv-k8s (kubernetes-validate, kubeflow-trainer-api)");
        return None;
    }
    let o = Command::new(python).arg(root().join("scripts/validate-k8s.py")).arg(dir).output().unwrap();
    Some((
        o.status.success(),
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
    ))
}

#[test]
fn every_manifest_passes_kubernetes_validate_and_the_trainer_api_models() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("k8s-manifests");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let vs = variants();
    for (name, yaml) in &vs {
        std::fs::write(dir.join(format!("{name}.yaml")), yaml).unwrap();
    }
    let Some((ok, out)) = validate(&dir) else { return };
    eprintln!("{out}");
    assert!(ok, "a rendered manifest failed its validator:\n{out}");
    // 3 cluster variants: 1 + 3 + 3 documents; 8 TrainJobs.
    assert!(out.contains("k8s manifests: 15 passed, 0 failed"), "{out}");

    // Negative controls: the validators bite on what gpuctl must never render.
    let bad = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("k8s-manifests-bad");
    let _ = std::fs::remove_dir_all(&bad);
    std::fs::create_dir_all(&bad).unwrap();
    let job = vs.iter().find(|(n, _)| n == "trainjob-8gpu-shared-cmd").unwrap().1.clone();
    std::fs::write(
        bad.join("unknown-field.yaml"),
        job.replace("  runtimeRef:\n", "  runtimeRefs:\n    name: \"x\"\n  runtimeRef:\n"),
    )
    .unwrap();
    std::fs::write(bad.join("no-runtime.yaml"), "apiVersion: \"trainer.kubeflow.org/v1alpha1\"\nkind: \"TrainJob\"\nmetadata:\n  name: \"x\"\nspec:\n  trainer:\n    numNodes: 2\n").unwrap();
    let pv = vs.iter().find(|(n, _)| n == "cluster-shared-sized").unwrap().1.clone();
    std::fs::write(bad.join("pv-typo.yaml"), pv.replace("accessModes:", "accesModes:")).unwrap();
    let (ok, out) = validate(&bad).unwrap();
    // pv-typo.yaml's DaemonSet is fine; its PersistentVolume and claim are not.
    assert!(
        !ok && out.contains("k8s manifests: 1 passed, 4 failed"),
        "the validators must refuse these:\n{out}"
    );
    assert!(out.contains("do not know (dropped on load): .spec.runtimeRefs"), "{out}");
    assert!(out.contains("'accesModes' was unexpected"), "{out}");
}

#[test]
fn every_node_script_passes_sh_n_and_shellcheck() {
    let scripts = [
        ("server", k3s::server_script(ip("10.0.0.7"), ip("203.0.113.5"), Some("v1.33.5+k3s1"))),
        ("server-v6", k3s::server_script(ip("fd00::7"), ip("2001:db8::5"), None)),
        ("agent", k3s::agent_script(ip("10.0.0.7"), ip("10.0.0.9"), None)),
        ("trainer", k3s::trainer_install_script(None, 600)),
        ("trainer-local", k3s::trainer_install_script(Some("/srv/trainer it's/overlays"), 600)),
        ("nodes-ready", k3s::nodes_ready_script(4, 600)),
        ("token", k3s::read_token_command()),
        ("kubeconfig", k3s::read_kubeconfig_command()),
        ("apply", k3s::apply_stdin_command()),
    ];
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("k3s-scripts");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, s) in &scripts {
        let f = dir.join(format!("{name}.sh"));
        std::fs::write(&f, s).unwrap();
        let o = Command::new("sh").arg("-n").arg(&f).output().unwrap();
        assert!(o.status.success(), "sh -n {name}: {}", String::from_utf8_lossy(&o.stderr));
        match Command::new("shellcheck").args(["-s", "sh"]).arg(&f).output() {
            Ok(o) => {
                assert!(o.status.success(), "shellcheck {name}:\n{}\n{s}", String::from_utf8_lossy(&o.stdout))
            }
            Err(_) => skip_or_fail("shellcheck"),
        }
    }
}

/// The join token is an input of no rendering: it never appears in what is rendered, whatever the
/// arguments, and prints as `******`.
#[test]
fn no_rendering_holds_the_token() {
    let t = k3s::new_token();
    let mut all = String::new();
    all.push_str(&k3s::server_script(ip("10.0.0.7"), ip("203.0.113.5"), None));
    all.push_str(&k3s::agent_script(ip("10.0.0.7"), ip("10.0.0.9"), None));
    for (_, y) in variants() {
        all.push_str(&y);
    }
    assert!(!all.contains(t.expose()));
    assert_eq!(format!("{t:?}"), "******");
}
