# gpuctl-sign beyond `cargo test`:
# 1. the committed signing vectors are exactly what the official SDKs produce today (regenerated
#    with crates/sign/vectors/gen/generate.py into a scratch folder and compared);
# 2. `verify` is fuzzed with cargo-fuzz (libFuzzer) for a bounded time (GPUCTL_FUZZ_SECS, default 60).
(
    scripts/pyenv
    scratch=$(mktemp -d)
    GPUCTL_VECTORS_OUT=$scratch .venv/bin/python crates/sign/vectors/gen/generate.py >/dev/null
    GPUCTL_VECTORS_OUT=$scratch .venv-jd2/bin/python crates/sign/vectors/gen/generate.py >/dev/null
    diff -r --exclude=gen "$scratch" crates/sign/vectors
    echo "signing vectors: $(ls "$scratch" | wc -l) cases regenerated from the SDKs, identical to the committed set"
    rm -rf "$scratch"

    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --version 0.13.2 --locked
    # All fuzz crates share one sanitizer target dir (target/fuzz), so the workspace crates and their
    # dependencies are compiled with ASan once for steps 30 and 70, not once per fuzz crate.
    fuzz_target_dir=$PWD/target/fuzz
    cd crates/sign
    # cargo-fuzz needs nightly flags: use a nightly toolchain when installed, else let stable accept them.
    if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
        cargo +nightly fuzz run --target-dir "$fuzz_target_dir" verify -- -max_total_time="${GPUCTL_FUZZ_SECS:-60}" -rss_limit_mb=2048
    else
        RUSTC_BOOTSTRAP=1 cargo fuzz run --target-dir "$fuzz_target_dir" verify -- -max_total_time="${GPUCTL_FUZZ_SECS:-60}" -rss_limit_mb=2048
    fi 2>&1 | tail -n 40
)
