# Every boot config gpuctl renders (issue 13) — each cloud × container on/off × mount on/off × setup
# on/off — through the real validators: `cloud-init schema --config-file` for each #cloud-config
# (Tencent, Alibaba), `bash -n` and `shellcheck` for each script (JD's launch script and the script
# inside each cloud-config). The Rust test (crates/provision/tests/boot.rs) writes the variants to
# target/tmp/boot-variants and runs the validators; GPUCTL_REQUIRE_TOOLS makes a missing validator a
# failure, never a skip. The node agent (issue 15) rides in the same cloud-configs: its variants (idle,
# spot hook, with and without env, both clouds) through cloud-init schema, the program through
# `python3 -m py_compile` (target/tmp/boot-agent). Sourced by scripts/test (set -euo pipefail).
scripts/boot-tools
# One validating test: its summary lines on success; on failure its log's tail, and the step fails.
validated() { # TEST SUMMARY-PATTERN WHAT-FAILED
    local log rc=0
    log=$(mktemp)
    GPUCTL_REQUIRE_TOOLS=1 cargo test -p gpuctl-provision --locked --test "$1" -- --nocapture >"$log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        tail -n 80 "$log" >&2
        rm -f "$log"
        echo "15-boot-config: $3 failed its validator (above)" >&2
        exit 1
    fi
    grep -E "$2|test result" "$log"
    rm -f "$log"
}
validated boot '^boot variants|^node agent' "a rendered boot config"
# The Kubernetes engine's renderings (issue 14, engine = "k3s"): every manifest through kubernetes-validate
# and the TrainJob through Kubeflow Trainer's API models (scripts/validate-k8s.py in .venv-k8s, installed
# by step 05), every node script through sh -n and shellcheck (crates/provision/tests/k3s.rs).
validated k3s '^k8s manifests' "a rendered Kubernetes manifest or node script"
