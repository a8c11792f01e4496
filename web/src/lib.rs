//! gpuctl-web: the browser calculator — gpuctl-core compiled to WebAssembly behind a Leptos CSR page.
//!
//! Split so that everything but the page itself is plain Rust, built and tested natively by
//! `cargo test -p gpuctl-web` (and so by the workspace test run) without compiling Leptos:
//! - `query`: the whole state as typed, and its URL form (a shared link reproduces the view);
//! - `calc`: inputs → gpuctl-core question → ranked rows, staged plan, TCO (numbers all from core);
//! - `hf`: a pasted or dropped Hugging Face config.json as the model (core's rules, the browser's
//!   JSON parser), and its shape in the URL;
//! - `spec`: "Export spec", a stage TOML for `gpuctl plan`;
//! - `i18n`, `format`: the two languages and their number conventions;
//! - `chart`: SVG geometry for the three charts;
//! - `app` (wasm32 with the default `ui` feature): the Leptos components, which render and wire and
//!   hold no domain logic.

pub mod calc;
pub mod chart;
pub mod format;
pub mod hf;
pub mod html;
pub mod i18n;
pub mod query;
pub mod spec;

#[cfg(all(target_arch = "wasm32", feature = "ui"))]
mod app;
