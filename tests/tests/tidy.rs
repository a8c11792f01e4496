//! Habits the code enforces (issue 11): the crate graph is the one ARCHITECTURE.md draws, and the
//! provisioning engine spells no cloud's wire format.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The ```crate-graph block of ARCHITECTURE.md: `crate -> dep dep …` per line.
fn documented() -> Graph {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text.find("```crate-graph\n").expect("ARCHITECTURE.md has a ```crate-graph block");
    let body = &text[start + "```crate-graph\n".len()..];
    let body = &body[..body.find("```").expect("the crate-graph block is closed")];
    body.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (name, deps) = l.split_once("->").unwrap_or_else(|| panic!("not `crate -> deps`: {l:?}"));
            (name.trim().to_string(), deps.split_whitespace().map(String::from).collect())
        })
        .collect()
}

/// Normal (not dev, not build) dependencies between the workspace's own packages, from `cargo metadata`.
fn actual() -> Graph {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked", "--offline"])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr));
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = m["packages"].as_array().unwrap();
    let ours: BTreeSet<&str> = packages.iter().map(|p| p["name"].as_str().unwrap()).collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null() && ours.contains(d["name"].as_str().unwrap()))
                .map(|d| d["name"].as_str().unwrap().to_string())
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

#[test]
fn the_crate_graph_is_the_one_architecture_md_draws() {
    let (doc, real) = (documented(), actual());
    let mut wrong = Vec::new();
    for name in doc.keys().chain(real.keys()).collect::<BTreeSet<_>>() {
        let (d, r) = (doc.get(name), real.get(name));
        match (d, r) {
            (None, _) => wrong.push(format!("{name}: a workspace crate ARCHITECTURE.md does not list")),
            (_, None) => wrong.push(format!("{name}: listed in ARCHITECTURE.md but not in the workspace")),
            (Some(d), Some(r)) if d != r => {
                wrong.push(format!("{name}: ARCHITECTURE.md says -> {d:?}, cargo metadata says -> {r:?}"))
            }
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "update the crate-graph block or the Cargo.toml:\n{}", wrong.join("\n"));
    // Dependencies point one way: nothing depends on the CLI; core on nothing of ours but the leaf
    // that names the clouds, which itself depends on nothing of ours.
    assert!(real.values().all(|deps| !deps.contains("gpuctl")), "a crate depends on the CLI");
    assert!(real["gpuctl-clouds"].is_empty(), "gpuctl-clouds depends on {:?}", real["gpuctl-clouds"]);
    let core_deps: Vec<_> = real["gpuctl-core"].iter().filter(|d| *d != "gpuctl-clouds").collect();
    assert!(core_deps.is_empty(), "gpuctl-core depends on {core_deps:?}");
    assert!(!real["gpuctl-sim"].contains("gpuctl-provision"), "the sim compiles the engine");
}

/// Rust source without `//` comments (comments may name an API to say why; code may not).
fn code_of(path: &Path) -> Vec<(usize, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split_once("//").map_or(l, |(code, _)| code).to_string()))
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// gpuctl-provision knows no cloud's wire format: none of the clouds' action names (every action of
/// the wire contract's schema, contract/schema/*.json), API hosts or Alibaba's `ecs.` type prefix in
/// its code: the engine names types in the catalog's words and asks the catalog for the API's spelling
/// (`Catalog::api_type`, from the `api_type_prefix` data of `crates/core/data/instances.toml`).
#[test]
fn the_engine_spells_no_wire_format() {
    let mut actions = BTreeSet::new();
    for cloud in ["tencent", "alibaba", "jdcloud"] {
        let path = root().join(format!("contract/schema/{cloud}.json"));
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        actions.extend(schema["actions"].as_object().unwrap().keys().cloned());
    }
    assert!(actions.len() > 30, "the contract schema lists {} actions", actions.len());
    let words = ["tencentcloudapi.com", "aliyuncs.com", "jdcloud-api.com", "\"ecs."];
    let mut files = Vec::new();
    rust_files(&root().join("crates/provision/src"), &mut files);
    assert!(files.len() > 10, "found {} source files", files.len());
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        for (n, line) in code_of(f) {
            let is_word = |w: &str| {
                line.match_indices(w).any(|(i, _)| {
                    let before = line[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
                    let after = line[i + w.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
                    before && after
                })
            };
            for a in actions.iter().filter(|a| is_word(a)) {
                found.push(format!("{rel}:{n}: action {a}: {}", line.trim()));
            }
            for w in words.iter().filter(|w| line.contains(*w)) {
                found.push(format!("{rel}:{n}: {w}: {}", line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "wire format in gpuctl-provision (it belongs in a provider crate):\n{}",
        found.join("\n")
    );
}
