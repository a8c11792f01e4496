//! Converts the shipped catalog (`data/*.toml`) to JSON at build time, so a build without the
//! `toml-files` feature (the browser calculator) reads its catalog with no TOML parser in it.
//!
//! Generic TOML → JSON (no catalog types here): the same serde types read the result at run time,
//! and a native test checks that both routes give the same catalog.

use std::path::Path;

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    for name in ["gpus", "instances", "prices"] {
        let src = format!("data/{name}.toml");
        println!("cargo:rerun-if-changed={src}");
        let text = std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let table: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{src}: {e}"));
        let json = serde_json::to_string(&table).unwrap_or_else(|e| panic!("{src}: {e}"));
        std::fs::write(Path::new(&out).join(format!("{name}.json")), json)
            .unwrap_or_else(|e| panic!("{out}/{name}.json: {e}"));
    }
}
