# gpuctl-core must build for the browser: no I/O, no clock, no tokio.
rustup target list --installed | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
cargo build -p gpuctl-core --target wasm32-unknown-unknown --locked
