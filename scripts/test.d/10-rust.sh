# Native build and every Rust test in the default workspace members (one target dir).
# Habits the code enforces (issue 11): formatting (rustfmt.toml) and clippy with warnings denied, over
# every crate (the browser calculator's native build included); tests/tests/tidy.rs checks the crate graph.
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings 2>&1 | tail -n 20
cargo build --workspace --all-targets --locked 2>&1 | tail -n 20
# The benches compile and run once, briefly (criterion's test mode: every bench function once, no timing).
cargo test --workspace --benches --locked 2>&1 | grep -E '^(Testing|Success|test result|error)' | sort | uniq -c
# Every sim the tests start records what it receives (crates/sim/src/record.rs); step 45 checks that
# traffic against the clouds' definitions. Cleared first so a stale run never passes for this one.
rm -rf target/contract-traffic
mkdir -p target/contract-traffic
GPUCTL_SIM_RECORD=$PWD/target/contract-traffic cargo test --workspace --locked
