# Native build and every Rust test in the default workspace members (one target dir).
cargo build --workspace --all-targets --locked 2>&1 | tail -n 20
cargo test --workspace --locked
