//! `network = "auto"` (issue 13) with the `gpuctl` binary against `gpuctl sim --empty-account` (no
//! default network anywhere): provision makes the zone's VPC, subnet and security group, tagged, and
//! puts the instance in them; a second deployment in the zone reuses them; destroying the first keeps
//! them, destroying the second deletes them (`/_sim/state` shows none left); a create whose answer is
//! lost is adopted by tag, never made twice. Tencent only so far: the spec refuses `auto` elsewhere.

use std::path::Path;

use gpuctl_e2e::e2e::{self, SimProcess};
use serde_json::{json, Value};

const ZONE: &str = "ap-guangzhou-3";

fn spec(dep: &str, ssh_from: &str) -> String {
    format!(
        "deployment = \"{dep}\"\nhours = 2\n[[pool]]\nname = \"work\"\ncount = 1\nbilling = \"hourly\"\n\
         provider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"{ZONE}\"\ninstance_type = \"GN7.2XLARGE32\"\n\
         image = \"img-pi0ii46r\"\nnetwork = \"auto\"\nssh_from = [{ssh_from}]\n"
    )
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn list(st: &Value, what: &str) -> Vec<Value> {
    st["providers"]["tencent"][what].as_array().cloned().unwrap_or_default()
}

fn sim(dir: &Path) -> SimProcess {
    SimProcess::start(dir, "seed = 5\n[knobs]\nboot_seconds = 1\n", &["--empty-account"])
}

#[test]
fn tencent_auto_network_is_made_tagged_shared_and_deleted_with_its_last_user() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim(dir.path());
    let a = write(dir.path(), "a.toml", &spec("net-a", "\"203.0.113.0/24\""));
    let b = write(dir.path(), "b.toml", &spec("net-b", "\"198.51.100.7/32\""));

    // The empty account has nothing to launch into: the default network is refused by the cloud.
    let bare = write(
        dir.path(),
        "bare.toml",
        &spec("net-bare", "\"203.0.113.0/24\"")
            .replace("network = \"auto\"\nssh_from = [\"203.0.113.0/24\"]\n", ""),
    );
    let o = e2e::gpuctl(&sim.url, dir.path(), &["provision", &bare, "--yes"]);
    assert!(!o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let plan = e2e::ok_json(&sim.url, dir.path(), &["plan", &a, "--json"]);
    assert_eq!(
        plan["networks"],
        json!([{ "provider": "tencent", "region": "ap-guangzhou", "zone": ZONE, "ssh_from": ["203.0.113.0/24"] }]),
        "{plan}"
    );

    let report = e2e::ok_json(&sim.url, dir.path(), &["provision", &a, "--yes", "--json"]);
    assert_eq!(report["units"][0]["state"], "running", "{report}");
    let st = sim.state();
    let (vpcs, subnets, groups) = (list(&st, "vpcs"), list(&st, "subnets"), list(&st, "security_groups"));
    assert_eq!((vpcs.len(), subnets.len(), groups.len()), (1, 1, 1), "{st}");
    for piece in [&vpcs[0], &subnets[0], &groups[0]] {
        assert_eq!(piece["tags"]["gpuctl-network"], ZONE, "tagged: {piece}");
    }
    assert_eq!(subnets[0]["zone"], ZONE);
    assert_eq!(subnets[0]["vpc_id"], vpcs[0]["id"]);
    let inst = sim.live("tencent", Some("net-a"));
    assert_eq!(inst.len(), 1);
    assert_eq!(inst[0]["VirtualPrivateCloud"]["VpcId"], vpcs[0]["id"], "{}", inst[0]);
    assert_eq!(inst[0]["VirtualPrivateCloud"]["SubnetId"], subnets[0]["id"]);
    assert_eq!(inst[0]["SecurityGroupIds"], json!([groups[0]["id"]]));
    let ingress = groups[0]["ingress"].as_array().unwrap();
    assert!(
        ingress
            .iter()
            .any(|p| p["Protocol"] == "TCP" && p["Port"] == "22" && p["CidrBlock"] == "203.0.113.0/24"),
        "{ingress:?}"
    );
    assert!(
        ingress.iter().any(|p| p["Protocol"] == "ALL" && p["SecurityGroupId"] == groups[0]["id"]),
        "{ingress:?}"
    );

    // A second deployment in the zone reuses every piece, and adds its own ssh_from.
    let report = e2e::ok_json(&sim.url, dir.path(), &["provision", &b, "--yes", "--json"]);
    assert_eq!(report["units"][0]["state"], "running", "{report}");
    let st = sim.state();
    assert_eq!(
        (list(&st, "vpcs").len(), list(&st, "subnets").len(), list(&st, "security_groups").len()),
        (1, 1, 1)
    );
    let inst_b = sim.live("tencent", Some("net-b"));
    assert_eq!(inst_b[0]["VirtualPrivateCloud"]["SubnetId"], subnets[0]["id"]);
    let ingress = list(&st, "security_groups")[0]["ingress"].as_array().cloned().unwrap();
    assert!(ingress.iter().any(|p| p["CidrBlock"] == "198.51.100.7/32"), "{ingress:?}");

    // Destroying the first keeps the network (the second still uses it).
    let out = e2e::ok_json(&sim.url, dir.path(), &["destroy", &a, "--yes", "--json"]);
    assert_eq!(out["networks"][0]["deleted"], json!([]), "{out}");
    assert!(out["networks"][0]["kept"].as_str().unwrap_or("").contains("net-b"), "{out}");
    assert_eq!(list(&sim.state(), "vpcs").len(), 1);

    // Destroying the second deletes it all: security group, subnet, VPC.
    let out = e2e::ok_json(&sim.url, dir.path(), &["destroy", &b, "--yes", "--json"]);
    assert_eq!(out["networks"][0]["deleted"].as_array().map(Vec::len), Some(3), "{out}");
    let st = sim.state();
    assert!(
        list(&st, "vpcs").is_empty()
            && list(&st, "subnets").is_empty()
            && list(&st, "security_groups").is_empty(),
        "no gpuctl network left: {st}"
    );
}

#[test]
fn a_lost_create_answer_is_adopted_by_tag_not_made_twice() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim(dir.path());
    let a = write(dir.path(), "a.toml", &spec("net-lost", "\"203.0.113.0/24\""));
    // Each create is carried out and its answer lost on the way back.
    for action in ["CreateVpc", "CreateSubnet", "CreateSecurityGroup"] {
        let rule =
            json!({ "provider": "tencent", "action": action, "kind": "success_then_drop", "count": 1 });
        let (status, body) = sim.admin("POST", "/_sim/faults", &rule.to_string());
        assert_eq!(status, 200, "{body}");
    }
    let report = e2e::ok_json(&sim.url, dir.path(), &["provision", &a, "--yes", "--json"]);
    assert_eq!(report["units"][0]["state"], "running", "{report}");
    let st = sim.state();
    assert_eq!(
        (list(&st, "vpcs").len(), list(&st, "subnets").len(), list(&st, "security_groups").len()),
        (1, 1, 1),
        "adopted, not duplicated: {st}"
    );
    // A re-run changes nothing.
    e2e::ok_json(&sim.url, dir.path(), &["provision", &a, "--yes", "--json"]);
    let st = sim.state();
    assert_eq!((list(&st, "vpcs").len(), list(&st, "subnets").len()), (1, 1));
    e2e::ok_json(&sim.url, dir.path(), &["destroy", &a, "--yes", "--json"]);
    assert!(list(&sim.state(), "vpcs").is_empty());
}

#[test]
fn auto_needs_ssh_from_and_a_cloud_that_makes_networks() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim(dir.path());
    let no_from = write(dir.path(), "n.toml", &spec("net-n", "").replace("ssh_from = []\n", ""));
    let o = e2e::gpuctl(&sim.url, dir.path(), &["plan", &no_from]);
    let text = String::from_utf8_lossy(&o.stderr).to_string() + &String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success() && text.contains("no `ssh_from`") && text.contains("0.0.0.0/0"), "{text}");

    let open = write(dir.path(), "o.toml", &spec("net-o", "\"0.0.0.0/0\""));
    let plan = e2e::ok_json(&sim.url, dir.path(), &["plan", &open, "--json"]);
    assert!(
        plan["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap_or("").contains("open to the whole internet")),
        "{plan}"
    );

    let ali = write(
        dir.path(),
        "ali.toml",
        "deployment = \"net-ali\"\n[[pool]]\nname = \"w\"\ncount = 1\nbilling = \"hourly\"\nprovider = \"alibaba\"\n\
         region = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\ninstance_type = \"ecs.gn7i-c8g1.2xlarge\"\n\
         image = \"ubuntu_22_04_x64_20G_alibase_20240926.vhd\"\nnetwork = \"auto\"\nssh_from = [\"203.0.113.0/24\"]\n",
    );
    let o = e2e::gpuctl(&sim.url, dir.path(), &["plan", &ali]);
    let text = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success() && text.contains("does not make on alibaba yet"), "{text}");
}
