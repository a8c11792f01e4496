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
