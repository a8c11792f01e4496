# Native build and every Rust test in the default workspace members (one target dir).
cargo build --workspace --all-targets --locked 2>&1 | tail -n 20
# Every sim the tests start records what it receives (crates/sim/src/record.rs); step 45 checks that
# traffic against the clouds' definitions. Cleared first so a stale run never passes for this one.
rm -rf target/contract-traffic
mkdir -p target/contract-traffic
GPUCTL_SIM_RECORD=$PWD/target/contract-traffic cargo test --workspace --locked
