# Boot-config validators (issue 13), before step 10 runs every Rust test: crates/provision/tests/boot.rs
# fails when CI or GPUCTL_REQUIRE_TOOLS is set and cloud-init or shellcheck is missing; and OpenSSH
# (client and server) for tests/tests/ssh.rs, which fails without them. The Kubernetes manifest
# validators (issue 14: kubernetes-validate and kubeflow-trainer-api in .venv-k8s) for
# crates/provision/tests/k3s.rs, which fails the same way without them.
# Sourced by scripts/test (set -euo pipefail).
scripts/boot-tools
scripts/k8s-validators
