//! Native-vs-WASM parity: the engine must give the same numbers in the browser as in the CLI.
//! (skeleton: checks the runner works until the engine API lands)
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

#[test]
fn formats_same() {
    assert_eq!(gpuctl_web::format::cny(gpuctl_web::i18n::Lang::En, 1234.5), "CN¥1,234");
}
