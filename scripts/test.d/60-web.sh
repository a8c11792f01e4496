# Browser calculator (issue 6): toolchain, bundle, real-Chromium tests with a screenshot artifact,
# native-vs-WASM parity of the engine, and the budget figures. Sourced by scripts/test (set -euo pipefail).

# Debian's Chromium (the npm playwright-core drives it; no browser download is possible or wanted), and
# a small CJK font so the Chinese screenshots show characters, not boxes (WenQuanYi Micro Hei, ~4 MB).
web_debs=()
command -v chromium >/dev/null 2>&1 || web_debs+=(chromium)
command -v chromedriver >/dev/null 2>&1 || web_debs+=(chromium-driver)
fc-list :lang=zh family 2>/dev/null | grep -q . || web_debs+=(fonts-wqy-microhei)
if [ ${#web_debs[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${web_debs[@]}" >/dev/null
fi

# wasm32 target, wasm-bindgen-cli 0.2.130 and web/e2e's npm packages are installed here when missing.
timeout 1200 scripts/build-web

# `gpuctl web` serves the page to the browser tests; `gpuctl plan` checks the exported spec.
cargo build -p gpuctl --locked 2>&1 | tail -n 3
web_gpuctl=${CARGO_TARGET_DIR:-$PWD/target}/debug/gpuctl
rm -rf web/e2e/artifacts
(cd web/e2e && GPUCTL_BIN=$web_gpuctl timeout 600 node --test calculator.test.mjs)
echo "screenshots: $(ls web/e2e/artifacts/*.png | tr '\n' ' ')"

# Parity: the native run writes its report of the engine's answers; the WebAssembly run (under node)
# compiles that report in and must produce the same bytes.
cargo test -p gpuctl-web --locked --test parity
GPUCTL_PARITY_REFERENCE=${CARGO_TARGET_DIR:-$PWD/target}/tmp/gpuctl-web-parity.json \
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
    timeout 1200 cargo test -p gpuctl-web --locked --no-default-features --target wasm32-unknown-unknown --test parity

# Budgets (figures, not pass/fail timing): bundle size gzipped, first render, re-rank after input.
(cd web/e2e && GPUCTL_BIN=$web_gpuctl timeout 300 node bench.mjs)
