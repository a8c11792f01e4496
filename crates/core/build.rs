//! Reads the shipped catalog (`data/*.toml`) at build time into the schema types (`src/schema.rs`,
//! compiled here as it is) and writes them, each with its file name, in borsh's binary form as one
//! file, `$OUT_DIR/catalog.borsh`. Every build decodes its
//! shipped catalog from that form: the browser calculator then carries no TOML or JSON parser, and
//! the CLI does not parse 57 KB of TOML at every start (issue 11); the TOML reader (`toml-files`)
//! is left for users' overlays. A native test checks that both routes give the same catalog, bit
//! for bit. A data file that does not parse fails the build here, with the file named.
//!
//! The CLI embeds that file (feature `embedded-catalog`); the browser calculator does not: it fetches
//! the same bytes as its own static file (`scripts/build-web` copies this file to web/dist/catalog.bin),
//! so a catalog refresh leaves the cached code alone and the code bundle keeps its budget (issue 18).
//!
//! Built without `toml-files` (the browser calculator), the free-text `notes` of every row and the
//! instance types' `source` are left out of the binary form: the page shows neither (it shows each
//! price's source, date, confidence and derivation, which stay), and with the evidence-sized catalog of
//! issue 18 they would cost ~5 KB of the bundle's 300 KB budget. The CLI keeps every text.

use std::path::Path;

#[allow(dead_code)]
#[path = "src/schema.rs"]
mod schema;

fn main() {
    println!("cargo:rerun-if-changed=src/schema.rs");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let mut files = Vec::new();
    for name in ["gpus.toml", "instances.toml", "prices.toml"] {
        let src = format!("data/{name}");
        println!("cargo:rerun-if-changed={src}");
        let text = std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let mut file: schema::DataFile = toml::from_str(&text).unwrap_or_else(|e| panic!("{src}: {e}"));
        if std::env::var_os("CARGO_FEATURE_TOML_FILES").is_none() {
            lean(&mut file);
        }
        // The name travels with its file, so a decoding error names the file it came from.
        files.push((name.to_string(), file));
    }
    let bytes = borsh::to_vec(&files).unwrap_or_else(|e| panic!("catalog.borsh: {e}"));
    std::fs::write(Path::new(&out).join("catalog.borsh"), bytes)
        .unwrap_or_else(|e| panic!("{out}/catalog.borsh: {e}"));
}

/// The browser's form: the texts the page never shows dropped (see the header).
fn lean(file: &mut schema::DataFile) {
    for g in &mut file.gpu {
        g.notes.clear();
    }
    for i in &mut file.instance {
        i.notes.clear();
        i.source.clear();
    }
    for r in &mut file.price {
        r.notes.clear();
    }
}
