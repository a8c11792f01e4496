//! gpuctl-web: the browser calculator — gpuctl-core compiled to WebAssembly behind a Leptos CSR page.
//!
//! Split so that everything but the page itself is plain Rust, built and tested natively by
//! `cargo test -p gpuctl-web` (and so by the workspace test run) without compiling Leptos:
//! - `i18n`, `format`: the two languages and number conventions;
//! - `chart`: SVG geometry for the three charts;
//! - `view` (wasm32 only): the Leptos components, which render and wire, holding no domain logic.

pub mod calc;
pub mod chart;
pub mod format;
pub mod i18n;
pub mod query;
pub mod spec;

#[cfg(all(target_arch = "wasm32", feature = "ui"))]
mod app;
