# PyTorch for tests/tests/torchrun.rs (issue 14: `gpuctl run CLUSTER --torchrun` over real SSH into two
# network namespaces): PyPI's torch 2.5.1 and its dependencies (the nvidia-* wheels too: `import torch`
# needs them even on a CPU-only machine) in the ignored virtualenv .venv-torch, and Debian's iproute2
# (`ip netns`) when `ip` is missing. OpenSSH's server comes from step 05.
#
# Why a step BEFORE step 10 rather than one that runs the test on its own afterwards: step 10's
# `cargo test --workspace` runs every test binary, torchrun.rs included, so installing first means the
# test runs exactly once, inside the normal run. GPUCTL_REQUIRE_TOOLS is exported here for the steps
# that follow: scripts/test installs every tool a test needs (steps 05 and 07), so from here on a missing
# tool is a failure, never a skip (tests/tests/torchrun.rs, crates/provision/tests/boot.rs).
# Skipped when .venv-torch/.stamp names the same packages (the first time: 124 s and 5.1 GB measured here).
# Sourced by scripts/test (set -euo pipefail).
torch_want="torch==2.5.1"
if [ ! -f .venv-torch/.stamp ] || [ "$(cat .venv-torch/.stamp)" != "$torch_want" ]; then
    torch_t0=$(date +%s)
    rm -rf .venv-torch
    python3 -m venv .venv-torch
    .venv-torch/bin/pip install --quiet --disable-pip-version-check "$torch_want"
    echo "$torch_want" > .venv-torch/.stamp
    echo "07-torch: installed $torch_want into .venv-torch in $(( $(date +%s) - torch_t0 ))s"
fi
.venv-torch/bin/python -c 'import torch, torch.distributed as d; assert d.is_gloo_available(); print("torch", torch.__version__, "gloo ok")'
if ! command -v ip >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iproute2 >/dev/null
fi
export GPUCTL_REQUIRE_TOOLS=1
