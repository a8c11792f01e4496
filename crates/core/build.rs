//! Reads the shipped catalog (`data/*.toml`) at build time into the schema types (`src/schema.rs`,
//! compiled here as it is) and writes each file in borsh's binary form. Every build decodes its
//! shipped catalog from that form: the browser calculator then carries no TOML or JSON parser, and
//! the CLI does not parse 57 KB of TOML at every start (issue 11); the TOML reader (`toml-files`)
//! is left for users' overlays. A native test checks that both routes give the same catalog, bit
//! for bit. A data file that does not parse fails the build here, with the file named.

use std::path::Path;

#[allow(dead_code)]
#[path = "src/schema.rs"]
mod schema;

fn main() {
    println!("cargo:rerun-if-changed=src/schema.rs");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    for name in ["gpus", "instances", "prices"] {
        let src = format!("data/{name}.toml");
        println!("cargo:rerun-if-changed={src}");
        let text = std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let file: schema::DataFile = toml::from_str(&text).unwrap_or_else(|e| panic!("{src}: {e}"));
        let bytes = borsh::to_vec(&file).unwrap_or_else(|e| panic!("{src}: {e}"));
        std::fs::write(Path::new(&out).join(format!("{name}.borsh")), bytes)
            .unwrap_or_else(|e| panic!("{out}/{name}.borsh: {e}"));
    }
}
