//! Issue 14's cluster pool through the CLI, as a user runs `infra/cluster.toml` against `gpuctl sim
//! --empty-account`: both Tencent zones are short (each has stock for one of the two nodes), so the
//! cluster moves as a whole to Alibaba's zone — never one node here and one there — with its shared
//! file system (the ones made in the short zones deleted), every node's boot config mounting it;
//! `destroy` keeps the file system (and the network it is reached through) and leaves no instance or
//! public IP behind; `destroy --delete-storage` then deletes the rest.

use std::path::Path;

use base64::Engine as _;

use gpuctl_e2e::e2e::{self, SimProcess};

fn zone(provider: &str, i: &serde_json::Value) -> String {
    let z = match provider {
        "tencent" => &i["Zone"],
        "alibaba" => &i["ZoneId"],
        _ => &i["az"],
    };
    z.as_str().unwrap_or_default().to_string()
}

/// The file systems the cloud still lists (not deleted or deleting). Fails when the emulator's state
/// has no file-system list at all, so a count of 0 is never an absent field.
fn file_systems(st: &serde_json::Value, provider: &str) -> Vec<serde_json::Value> {
    let all = &st["providers"][provider]["file_systems"];
    let list: Vec<serde_json::Value> = match all {
        serde_json::Value::Array(a) => a.clone(),
        serde_json::Value::Object(m) => m.values().cloned().collect(),
        _ => panic!("{provider}'s state lists no file_systems: {}", st["providers"][provider]),
    };
    list.into_iter()
        .filter(|f| {
            let state = ["LifeCycleState", "Status", "status", "state"]
                .iter()
                .find_map(|k| f[*k].as_str())
                .unwrap_or_default()
                .to_ascii_lowercase();
            f["deleted"].is_null() && f["Deleting"] != true && !state.contains("delet")
        })
        .collect()
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
    // 500 GB at 0.35 ¥/GB·month over the plan's 48 hours, in the pool's total.
    let st = &pool["shared_storage"];
    assert_eq!(st["price"]["cny_per_gb_month"].as_f64(), Some(0.35), "{pool}");
    assert_eq!(st["cny_per_month"].as_f64(), Some(175.0), "{pool}");
    let storage = st["total_cny"].as_f64().unwrap();
    assert!((storage - 175.0 * 48.0 / 730.0).abs() < 1e-9, "{st}");
    let hourly = pool["by_mode"].as_array().unwrap().iter().find(|m| m["mode"] == "hourly").unwrap();
    assert!((pool["total_cny"].as_f64().unwrap() - hourly["total_cny"].as_f64().unwrap()).abs() < 1e-6);

    let o = e2e::gpuctl(&sim.url, d, &["provision", spec, "--yes"]);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    assert!(sim.live("tencent", Some("cluster")).is_empty(), "what the short zones made was released: {out}");
    let nodes = sim.live("alibaba", Some("cluster"));
    assert_eq!(nodes.len(), 2, "{out}");
    assert!(nodes.iter().all(|i| zone("alibaba", i) == "cn-hangzhou-i"), "{nodes:?}");
    let st = sim.state();
    assert!(file_systems(&st, "tencent").is_empty(), "the short zones' new file systems were deleted: {out}");
    let fs = file_systems(&st, "alibaba");
    assert_eq!(fs.len(), 1, "one file system for the cluster: {fs:?}");
    // gn7e's family takes a low-latency deployment set: one, holding both nodes.
    let sets = st["providers"]["alibaba"]["deployment_sets"].as_array().unwrap_or_else(|| panic!("{st}"));
    assert_eq!(sets.len(), 1, "{sets:?}");
    assert!(nodes.iter().all(|i| i["DeploymentSetId"] == sets[0]["id"]), "{sets:?} {nodes:?}");
    // Every node boots with the mount and its own rank (the user data as the cloud received it).
    let mut ranks = Vec::new();
    for i in &nodes {
        let b64 = i["UserData"].as_str().unwrap_or_else(|| panic!("no UserData in {i}"));
        let raw =
            base64::engine::general_purpose::STANDARD.decode(b64).expect("base64 as the cloud takes it");
        let text = String::from_utf8(raw).unwrap();
        let source = fs[0]["MountTargets"].to_string();
        assert!(text.contains("step shared-storage mount_shared '"), "{text}");
        assert!(text.contains(":/' '/mnt/shared'") && text.contains("GPUCTL_NODES=2"), "{text} {source}");
        ranks.extend(["GPUCTL_NODE_RANK=0", "GPUCTL_NODE_RANK=1"].into_iter().filter(|r| text.contains(r)));
        // Node 0 names itself at boot; node 1 was made after it and is told its private address.
        if text.contains("GPUCTL_NODE_RANK=0") {
            assert!(text.contains("\"MASTER_ADDR=$(hostname -I"), "{text}");
        } else {
            let addr =
                text.split("'MASTER_ADDR=").nth(1).and_then(|t| t.split('\'').next()).unwrap_or_default();
            assert!(addr.parse::<std::net::Ipv4Addr>().is_ok_and(|a| a.is_private()), "{text}");
            let node0 = nodes
                .iter()
                .find(|i| i.to_string().contains(addr) && !i.to_string().contains(&format!("\"{b64}\"")));
            assert!(node0.is_some(), "MASTER_ADDR {addr} is another node's private address: {nodes:?}");
        }
        assert!(text.contains("'GPUCTL_GPUS_PER_NODE=8'"), "{text}");
    }
    ranks.sort();
    assert_eq!(ranks, ["GPUCTL_NODE_RANK=0", "GPUCTL_NODE_RANK=1"], "one rank each");

    // A re-run buys nothing.
    let o = e2e::gpuctl(&sim.url, d, &["provision", spec, "--yes"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(sim.live("alibaba", Some("cluster")).len(), 2);
    assert_eq!(file_systems(&sim.state(), "alibaba").len(), 1, "a re-run makes no second file system");

    // destroy keeps the file system with its data, and says what it costs.
    let o = e2e::gpuctl(&sim.url, d, &["destroy", spec, "--yes"]);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    assert!(out.contains("kept: shared file system") && out.contains("¥175.00/month"), "{out}");
    assert!(sim.live("alibaba", None).is_empty(), "{out}");
    assert_eq!(file_systems(&sim.state(), "alibaba").len(), 1, "{out}");
    // With no instance left, status still shows what bills.
    let o = e2e::gpuctl(&sim.url, d, &["status"]);
    let shown = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success() && shown.contains("shared file system") && shown.contains("kept by destroy"),
        "{shown}"
    );
    assert!(shown.contains("¥0.35/GB·month"), "{shown}");

    let o = e2e::gpuctl(&sim.url, d, &["destroy", spec, "--yes", "--delete-storage"]);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    let st = sim.state();
    assert!(file_systems(&st, "alibaba").is_empty(), "{out}");
    assert_eq!(st["providers"]["alibaba"]["deployment_sets"].as_array().map(Vec::len), Some(0), "{st}");
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

/// The placement groups and the third cloud's file systems: a Tencent HPC type (HCC, monthly only)
/// needs an HPC cluster, which gpuctl makes and joins both nodes to; JD's cluster gets a 云文件服务 file
/// system its nodes mount from `/cfs`. `on_destroy = "delete"` and `--delete-storage` delete both.
#[test]
fn hpc_cluster_and_jd_file_system_are_made_joined_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sim = SimProcess::start(d, "seed = 15\n[knobs]\nboot_seconds = 1\n", &["--empty-account"]);
    let auto = "network = \"auto\"\nssh_from = [\"203.0.113.7/32\"]\n";
    let spec = format!(
        "deployment = \"hpc\"\n[budget]\ntotal_cny = 10000000\n\
         [[pool]]\nname = \"tc\"\ncount = 2\ncluster = true\nbilling = \"monthly\"\nterm = 1\n\
         provider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-3\"\ninstance_type = \"HCCG5v.24XLARGE384\"\nimage = \"img-pi0ii46r\"\n\
         {auto}shared_storage = {{ size_gb = 100, on_destroy = \"delete\" }}\n\
         [[pool]]\nname = \"jd\"\ncount = 2\ncluster = true\nbilling = \"hourly\"\n\
         provider = \"jdcloud\"\nregion = \"cn-north-1\"\nzone = \"cn-north-1a\"\ninstance_type = \"p.n1v100.2xlarge\"\nimage = \"7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204\"\n\
         {auto}shared_storage = true\n"
    );
    let path = d.join("hpc.toml");
    std::fs::write(&path, spec).unwrap();
    let spec = path.to_str().unwrap();

    let o = e2e::gpuctl(&sim.url, d, &["provision", spec, "--yes"]);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    let st = sim.state();
    let hpc = st["providers"]["tencent"]["hpc_clusters"].as_array().unwrap_or_else(|| panic!("{st}"));
    assert_eq!(hpc.len(), 1, "one HPC cluster for the pool: {hpc:?}");
    assert_eq!(sim.live("tencent", Some("hpc")).len(), 2, "{out}");
    assert_eq!(hpc[0].to_string().matches("ins-").count(), 2, "both nodes joined it: {hpc:?}");
    assert_eq!(file_systems(&st, "tencent").len(), 1, "{out}");
    assert_eq!(file_systems(&st, "jdcloud").len(), 1, "{out}");
    for i in sim.live("jdcloud", Some("hpc")) {
        let b64 = i["launchScript"].as_str().unwrap_or_else(|| panic!("no launchScript in {i}"));
        let raw = base64::engine::general_purpose::STANDARD.decode(b64).expect("base64");
        let text = String::from_utf8(raw).unwrap();
        assert!(text.contains(":/cfs' '/mnt/shared'"), "JD's export is /cfs: {text}");
    }

    // The Tencent pool deletes its file system itself; the JD one only with --delete-storage.
    let o = e2e::gpuctl(&sim.url, d, &["destroy", spec, "--yes"]);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    let st = sim.state();
    assert!(st["providers"]["tencent"]["hpc_clusters"].as_array().unwrap().is_empty(), "{st}");
    assert!(file_systems(&st, "tencent").is_empty(), "on_destroy = \"delete\": {out}");
    assert_eq!(file_systems(&st, "jdcloud").len(), 1, "kept: {out}");
    let o = e2e::gpuctl(&sim.url, d, &["destroy", spec, "--yes", "--delete-storage"]);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    assert!(file_systems(&sim.state(), "jdcloud").is_empty(), "{out}");
}

/// With stock in its first zone, `infra/cluster.toml` lands on Tencent: both nodes and the CFS file
/// system in ap-guangzhou-3 (GT4 takes no HPC cluster: none is made), and `destroy --delete-storage`
/// leaves nothing.
#[test]
fn cluster_toml_lands_in_one_tencent_zone_with_its_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sim = SimProcess::start(d, "seed = 16\n[knobs]\nboot_seconds = 1\n", &["--empty-account"]);
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra/cluster.toml");
    let spec = spec.to_str().unwrap();
    let o = e2e::gpuctl(&sim.url, d, &["provision", spec, "--yes"]);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    let nodes = sim.live("tencent", Some("cluster"));
    assert_eq!(nodes.len(), 2, "{out}");
    assert!(nodes.iter().all(|i| zone("tencent", i) == "ap-guangzhou-3"), "{nodes:?}");
    let st = sim.state();
    let fs = file_systems(&st, "tencent");
    assert_eq!(fs.len(), 1, "{fs:?}");
    assert_eq!(fs[0]["Zone"], "ap-guangzhou-3", "{fs:?}");
    assert_eq!(st["providers"]["tencent"]["hpc_clusters"].as_array().map(Vec::len), Some(0), "{st}");
    let o = e2e::gpuctl(&sim.url, d, &["destroy", spec, "--yes", "--delete-storage"]);
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{out}");
    let st = sim.state();
    assert!(sim.live("tencent", None).is_empty() && file_systems(&st, "tencent").is_empty(), "{out}");
}
