# Native build and every Rust test in the default workspace members (one target dir).
# Habits the code enforces (issue 11): formatting (rustfmt.toml) and clippy with warnings denied, over
# every crate (the browser calculator's native build included); tests/tests/tidy.rs checks the crate graph.
cargo fmt --all --check
# The local cloud compiles no SQLite, no toml_edit and no provisioning engine (issue 11): its normal and
# build dependencies, as `cargo tree -p` resolves them for the sim alone (features unified across the
# workspace would show the CLI's toml_edit). `cargo tree` runs on its own first, so its own failure fails
# the step (inside `if … | grep` it would read as "no forbidden crate found").
sim_tree=$(cargo tree -p gpuctl-sim -e normal,build --locked --prefix none)
[ -n "$sim_tree" ] || { echo "cargo tree printed nothing for gpuctl-sim" >&2; exit 1; }
if grep -E '^(rusqlite|libsqlite3-sys|toml_edit|gpuctl-provision) ' <<<"$sim_tree"; then
    echo "gpuctl-sim must not compile the crates above (issue 11; see ARCHITECTURE.md)" >&2
    exit 1
fi
cargo clippy --workspace --all-targets --locked -- -D warnings 2>&1 | tail -n 20
cargo build --workspace --all-targets --locked 2>&1 | tail -n 20
# The benches compile and run once, briefly (criterion's test mode: every bench function once, no timing).
cargo test --workspace --benches --locked 2>&1 | grep -E '^(Testing|Success|test result|error)' | sort | uniq -c
# Every sim the tests start records what it receives (crates/sim/src/record.rs); step 45 checks that
# traffic against the clouds' definitions. Cleared first so a stale run never passes for this one.
# tests/tests/idle_agent.rs runs the node agent gpuctl renders with the clouds' official SDKs of
# .venv-contract (issue 15): made here, before the tests, by scripts/pyenv (idempotent; steps 30-45
# call it again).
scripts/pyenv
rm -rf target/contract-traffic
mkdir -p target/contract-traffic
GPUCTL_SIM_RECORD=$PWD/target/contract-traffic cargo test --workspace --locked
