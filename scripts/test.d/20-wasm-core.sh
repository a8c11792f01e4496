# gpuctl-core must build for the browser: no I/O, no clock, no tokio.
rustup target list --installed | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
cargo build -p gpuctl-core --target wasm32-unknown-unknown --locked
# …and stays pure: no async runtime, HTTP or filesystem crates in its normal dependency tree.
# `cargo tree` runs on its own first, so a failure of cargo tree itself fails the step (inside `if … | grep`
# it would read as "no forbidden crate found").
core_tree=$(cargo tree -p gpuctl-core -e normal --locked --prefix none)
[ -n "$core_tree" ] || { echo "cargo tree printed nothing for gpuctl-core" >&2; exit 1; }
if grep -E '^(tokio|reqwest|hyper|axum|rusqlite|mio) ' <<<"$core_tree"; then
    echo "gpuctl-core must not depend on the crates above (see ARCHITECTURE.md)" >&2
    exit 1
fi
# The engine's own tests in the browser's configuration (no `toml-files`, no `iso-dates`: the shipped
# catalog decoded from build.rs's binary form, the plain date reader), natively.
cargo test -p gpuctl-core --no-default-features --lib --locked
