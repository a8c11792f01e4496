//! The fuzz target's word list: every plain string literal in the emulators' sources (action names,
//! parameter paths such as `Placement.Zone`, filter names, enum values, JD path segments), so fuzzed
//! requests name what the emulators read instead of hoping random bytes spell `RunInstances`. Read
//! from the sources at build time, it follows the emulators as they change; no list to keep by hand.
use std::path::{Path, PathBuf};

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A literal worth offering: short, one token, no escapes or spaces (messages are not parameters).
fn word(s: &str) -> bool {
    (2..=64).contains(&s.len())
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "_.:-/".contains(c))
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut files = Vec::new();
    for dir in
        ["providers/tencent/src", "providers/alibaba/src", "providers/jdcloud/src", "crates/simkit/src"]
    {
        rs_files(&root.join(dir), &mut files);
    }
    files.sort();
    let mut words = std::collections::BTreeSet::new();
    // Match-arm literals of the emulators' routers (`"RunInstances" => …`): the actions they serve.
    let mut actions = std::collections::BTreeSet::new();
    // JD's route table: the path segments after `/v1/regions/{r}/`.
    let mut segments = std::collections::BTreeSet::new();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let text = std::fs::read_to_string(f).unwrap_or_default();
        // Literals are the odd-numbered pieces between quotes; an escaped quote only shifts a message.
        for (i, piece) in text.split('"').enumerate() {
            if i % 2 == 1 && word(piece) {
                words.insert(piece.to_string());
                let next = text.split('"').nth(i + 1).unwrap_or_default();
                if f.ends_with("emulator/mod.rs") && next.trim_start().starts_with("=>") {
                    actions.insert(piece.to_string());
                }
                if f.ends_with("emulator/route.rs")
                    && piece.chars().all(|c| c.is_ascii_alphanumeric() || c == ':')
                {
                    segments.insert(piece.to_string());
                }
            }
        }
    }
    assert!(words.len() > 100, "found only {} words under {}: wrong root?", words.len(), root.display());
    assert!(actions.len() > 20 && segments.len() > 5, "router literals not found: {actions:?} {segments:?}");
    let list = |name: &str, set: &std::collections::BTreeSet<String>| {
        let body: String = set.iter().map(|w| format!("{w:?},\n")).collect();
        format!("pub const {name}: &[&str] = &[\n{body}];\n")
    };
    let text = list("WORDS", &words) + &list("ACTIONS", &actions) + &list("SEGMENTS", &segments);
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("words.rs");
    std::fs::write(out, text).expect("OUT_DIR is writable");
}
