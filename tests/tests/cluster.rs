//! Issue 14's cluster pool through the CLI, as a user runs `infra/cluster.toml` against `gpuctl sim
//! --empty-account`: both Tencent zones are short (each has stock for one of the two nodes), so the
//! cluster moves as a whole to Alibaba's zone — never one node here and one there — and `destroy`
//! leaves no instance, public IP or network behind.

use std::path::Path;

use gpuctl_e2e::e2e::{self, SimProcess};

fn zone(provider: &str, i: &serde_json::Value) -> String {
    let z = match provider {
        "tencent" => &i["Zone"],
        "alibaba" => &i["ZoneId"],
        _ => &i["az"],
    };
    z.as_str().unwrap_or_default().to_string()
}

#[test]
fn cluster_toml_moves_as_a_whole_and_destroys_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = "seed = 14\n[knobs]\nboot_seconds = 1\n\
        [[knobs.stock_outs]]\nprovider = \"tencent\"\nzone = \"ap-guangzhou-3\"\navailable = 1\n\
        [[knobs.stock_outs]]\nprovider = \"tencent\"\nzone = \"ap-guangzhou-4\"\navailable = 1\n";
    let sim = SimProcess::start(d, config, &["--empty-account"]);
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra/cluster.toml");
    let spec = spec.to_str().unwrap();

    let plan = e2e::ok_json(&sim.url, d, &["plan", spec, "--json"]);
    let pool = &plan["pools"][0];
    assert_eq!((pool["cluster"].as_bool(), pool["count"].as_u64()), (Some(true), Some(2)), "{pool}");
    assert_eq!(pool["choices"].as_array().unwrap().len(), 3, "{pool}");

    let o = e2e::gpuctl(&sim.url, d, &["provision", spec, "--yes"]);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    assert!(sim.live("tencent", Some("cluster")).is_empty(), "what the short zones made was released: {out}");
    let nodes = sim.live("alibaba", Some("cluster"));
    assert_eq!(nodes.len(), 2, "{out}");
    assert!(nodes.iter().all(|i| zone("alibaba", i) == "cn-hangzhou-i"), "{nodes:?}");

    // A re-run buys nothing.
    let o = e2e::gpuctl(&sim.url, d, &["provision", spec, "--yes"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(sim.live("alibaba", Some("cluster")).len(), 2);

    let o = e2e::gpuctl(&sim.url, d, &["destroy", spec, "--yes"]);
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let st = sim.state();
    for p in ["tencent", "alibaba"] {
        assert!(sim.live(p, None).is_empty(), "{p}: {st}");
        let ips = st["providers"][p]["public_ips"].as_array().map(Vec::len).unwrap_or(0);
        assert_eq!(ips, 0, "{p}: no public IP left billing");
        for what in ["vpcs", "subnets", "security_groups"] {
            let made = st["providers"][p][what]
                .as_array()
                .map(|a| a.iter().filter(|x| x["default"] != true).count());
            assert_eq!(made.unwrap_or(0), 0, "{p} {what}: {st}");
        }
    }
}
