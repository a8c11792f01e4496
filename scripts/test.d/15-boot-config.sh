# Every boot config gpuctl renders (issue 13) — each cloud × container on/off × mount on/off × setup
# on/off — through the real validators: `cloud-init schema --config-file` for each #cloud-config
# (Tencent, Alibaba), `bash -n` and `shellcheck` for each script (JD's launch script and the script
# inside each cloud-config). The Rust test (crates/provision/tests/boot.rs) writes the variants to
# target/tmp/boot-variants and runs the validators; GPUCTL_REQUIRE_TOOLS makes a missing validator a
# failure, never a skip. Sourced by scripts/test (set -euo pipefail).
scripts/boot-tools
boot_log=$(mktemp)
boot_rc=0
GPUCTL_REQUIRE_TOOLS=1 cargo test -p gpuctl-provision --locked --test boot -- --nocapture >"$boot_log" 2>&1 \
    || boot_rc=$?
if [ "$boot_rc" -ne 0 ]; then
    tail -n 80 "$boot_log" >&2
    rm -f "$boot_log"
    echo "15-boot-config: a rendered boot config failed its validator (above)" >&2
    exit 1
fi
grep -E '^boot variants|test result' "$boot_log"
rm -f "$boot_log"
# The Kubernetes engine's renderings (issue 14, engine = "k3s"): every manifest through kubernetes-validate
# and the TrainJob through Kubeflow Trainer's API models (scripts/validate-k8s.py in .venv-k8s, installed
# by step 05), every node script through sh -n and shellcheck (crates/provision/tests/k3s.rs).
k8s_log=$(mktemp)
k8s_rc=0
GPUCTL_REQUIRE_TOOLS=1 cargo test -p gpuctl-provision --locked --test k3s -- --nocapture >"$k8s_log" 2>&1 || k8s_rc=$?
if [ "$k8s_rc" -ne 0 ]; then
    tail -n 80 "$k8s_log" >&2
    rm -f "$k8s_log"
    echo "15-boot-config: a rendered Kubernetes manifest or node script failed its validator (above)" >&2
    exit 1
fi
grep -E '^k8s manifests|test result' "$k8s_log"
rm -f "$k8s_log"
