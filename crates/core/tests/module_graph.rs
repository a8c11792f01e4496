//! Core's modules depend on each other one way (issue 11): no module reaches, through `crate::…`
//! paths in its code, back to itself. A cycle (as `catalog → explain → fit → catalog` once was, via
//! `UnknownName` and `Method`) means a word sits in the wrong module.
//!
//! Reads `src/*.rs` as text: every `crate::NAME` outside comments and outside the `#[cfg(test)]`
//! module at the end of a file is an edge to module `NAME` (tests may use anything).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module name → the crate modules its non-test code names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<_> = std::fs::read_dir(&src).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let names: BTreeSet<String> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != "lib")
        .collect();
    let mut g = BTreeMap::new();
    for name in &names {
        let text = std::fs::read_to_string(src.join(format!("{name}.rs"))).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let mut deps = BTreeSet::new();
        for line in code.lines() {
            let line = line.split("//").next().unwrap();
            for (at, _) in line.match_indices("crate::") {
                let rest = &line[at + "crate::".len()..];
                // A grouped `crate::{a, b}` would hide its modules from this reader: name them one by one.
                assert!(!rest.starts_with('{'), "{name}.rs: write `use crate::a::…;` per module: {line}");
                let dep: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if names.contains(&dep) && dep != *name {
                    deps.insert(dep);
                }
            }
        }
        g.insert(name.clone(), deps);
    }
    g
}

/// A path from `from` back to `to` through `g`, if one exists.
fn path_back(g: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> Option<Vec<String>> {
    let mut stack = vec![vec![from.to_string()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().unwrap();
        for next in &g[last] {
            if next == to {
                let mut p = path.clone();
                p.push(next.clone());
                return Some(p);
            }
            if seen.insert(next.clone()) {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push(p);
            }
        }
    }
    None
}

#[test]
fn core_modules_have_no_cycle() {
    let g = graph();
    // The reader finds edges at all (a parser that sees none would pass vacuously).
    assert!(g["rank"].contains("catalog") && g["fit"].contains("explain"), "{g:?}");
    let cycles: Vec<String> = g
        .keys()
        .filter_map(|m| path_back(&g, m, m))
        .map(|p| format!("{} → {}", p[0], p[1..].join(" → ")))
        .collect();
    assert!(cycles.is_empty(), "module cycles in gpuctl-core:\n{}", cycles.join("\n"));
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut g = BTreeMap::new();
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    g.insert("catalog".to_string(), set(&["explain"]));
    g.insert("explain".to_string(), set(&["fit"]));
    g.insert("fit".to_string(), set(&["catalog"]));
    g.insert("rank".to_string(), set(&["fit"]));
    assert_eq!(path_back(&g, "catalog", "catalog").unwrap(), ["catalog", "explain", "fit", "catalog"]);
    assert_eq!(path_back(&g, "rank", "rank"), None);
}
