//! `network = "auto"` (issue 13) with the `gpuctl` binary against `gpuctl sim --empty-account` (no
//! default network anywhere), on Tencent, Alibaba and JD Cloud: provision makes the zone's VPC,
//! subnet (vSwitch) and security group, tagged (a JD group, which takes no tags, by its name in the
//! tagged VPC), and puts the instance in them; a second deployment in the zone reuses them;
//! destroying the first keeps them, destroying the second deletes them (`/_sim/state` shows none
//! left); a create whose answer is lost is adopted, never made twice.

use std::path::Path;

use gpuctl_e2e::e2e::{self, SimProcess};
use serde_json::{json, Value};

/// One cloud's side of the test: where it rents, and how its emulator's state shows the network.
struct Cloud {
    provider: &'static str,
    region: &'static str,
    zone: &'static str,
    instance_type: &'static str,
    image: &'static str,
    /// The three create actions, VPC first.
    creates: [&'static str; 3],
}

const TENCENT: Cloud = Cloud {
    provider: "tencent",
    region: "ap-guangzhou",
    zone: "ap-guangzhou-3",
    instance_type: "GN7.2XLARGE32",
    image: "img-pi0ii46r",
    creates: ["CreateVpc", "CreateSubnet", "CreateSecurityGroup"],
};

const ALIBABA: Cloud = Cloud {
    provider: "alibaba",
    region: "cn-hangzhou",
    zone: "cn-hangzhou-i",
    instance_type: "ecs.gn7i-c8g1.2xlarge",
    image: "ubuntu_22_04_x64_20G_alibase_20240926.vhd",
    creates: ["CreateVpc", "CreateVSwitch", "CreateSecurityGroup"],
};

const JDCLOUD: Cloud = Cloud {
    provider: "jdcloud",
    region: "cn-north-1",
    zone: "cn-north-1a",
    instance_type: "p.n1v100.2xlarge",
    image: "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204",
    creates: ["createVpc", "createSubnet", "createNetworkSecurityGroup"],
};

impl Cloud {
    fn spec(&self, dep: &str, ssh_from: &str) -> String {
        format!(
            "deployment = \"{dep}\"\nhours = 2\n[[pool]]\nname = \"work\"\ncount = 1\nbilling = \"hourly\"\n\
             provider = \"{}\"\nregion = \"{}\"\nzone = \"{}\"\ninstance_type = \"{}\"\n\
             image = \"{}\"\nnetwork = \"auto\"\nssh_from = [{ssh_from}]\n",
            self.provider, self.region, self.zone, self.instance_type, self.image
        )
    }

    /// The pieces gpuctl made (`vpcs`, `subnets`, `security_groups`), not the account's defaults.
    fn list(&self, st: &Value, what: &str) -> Vec<Value> {
        let all = st["providers"][self.provider][what].as_array().cloned().unwrap_or_default();
        all.into_iter().filter(|x| x["default"] != true).collect()
    }

    fn counts(&self, st: &Value) -> (usize, usize, usize) {
        (self.list(st, "vpcs").len(), self.list(st, "subnets").len(), self.list(st, "security_groups").len())
    }

    /// An instance's (VPC, subnet, security groups) as DescribeInstances shows them.
    fn placement(&self, inst: &Value) -> (Value, Value, Value) {
        match self.provider {
            "tencent" => (
                inst["VirtualPrivateCloud"]["VpcId"].clone(),
                inst["VirtualPrivateCloud"]["SubnetId"].clone(),
                inst["SecurityGroupIds"].clone(),
            ),
            "alibaba" => (
                inst["VpcAttributes"]["VpcId"].clone(),
                inst["VpcAttributes"]["VSwitchId"].clone(),
                inst["SecurityGroupIds"]["SecurityGroupId"].clone(),
            ),
            _ => {
                let nic = &inst["primaryNetworkInterface"]["networkInterface"];
                let groups = nic["securityGroups"].as_array().cloned().unwrap_or_default();
                (
                    inst["vpcId"].clone(),
                    inst["subnetId"].clone(),
                    Value::Array(groups.iter().map(|g| g["groupId"].clone()).collect()),
                )
            }
        }
    }

    /// Whether the group's ingress lets SSH in from `cidr`.
    fn ssh_from(&self, ingress: &[Value], cidr: &str) -> bool {
        ingress.iter().any(|p| match self.provider {
            "tencent" => p["Protocol"] == "TCP" && p["Port"] == "22" && p["CidrBlock"] == cidr,
            "alibaba" => p["IpProtocol"] == "TCP" && p["PortRange"] == "22/22" && p["SourceCidrIp"] == cidr,
            _ => p["protocol"] == 6 && p["fromPort"] == 22 && p["toPort"] == 22 && p["addressPrefix"] == cidr,
        })
    }

    /// Whether the group's ingress lets everything in from the group itself (on JD, whose rules
    /// take only CIDR sources, from the VPC's block `vpc_cidr`).
    fn inside(&self, ingress: &[Value], sg: &Value, vpc_cidr: &Value) -> bool {
        ingress.iter().any(|p| match self.provider {
            "tencent" => p["Protocol"] == "ALL" && p["SecurityGroupId"] == *sg,
            "alibaba" => p["IpProtocol"] == "ALL" && p["SourceGroupId"] == *sg,
            _ => p["protocol"] == 300 && p["addressPrefix"] == *vpc_cidr,
        })
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn sim(dir: &Path) -> SimProcess {
    SimProcess::start(dir, "seed = 5\n[knobs]\nboot_seconds = 1\n", &["--empty-account"])
}

fn made_tagged_shared_and_deleted_with_its_last_user(c: &Cloud) {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim(dir.path());
    let a = write(dir.path(), "a.toml", &c.spec("net-a", "\"203.0.113.0/24\""));
    let b = write(dir.path(), "b.toml", &c.spec("net-b", "\"198.51.100.7/32\""));

    // The empty account has nothing to launch into: the default network is refused by the cloud.
    let bare = write(
        dir.path(),
        "bare.toml",
        &c.spec("net-bare", "\"203.0.113.0/24\"")
            .replace("network = \"auto\"\nssh_from = [\"203.0.113.0/24\"]\n", ""),
    );
    let o = e2e::gpuctl(&sim.url, dir.path(), &["provision", &bare, "--yes"]);
    assert!(!o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(sim.live(c.provider, None).is_empty(), "nothing bought");

    let plan = e2e::ok_json(&sim.url, dir.path(), &["plan", &a, "--json"]);
    assert_eq!(
        plan["networks"],
        json!([{ "provider": c.provider, "region": c.region, "zone": c.zone, "ssh_from": ["203.0.113.0/24"] }]),
        "{plan}"
    );

    let report = e2e::ok_json(&sim.url, dir.path(), &["provision", &a, "--yes", "--json"]);
    assert_eq!(report["units"][0]["state"], "running", "{report}");
    let st = sim.state();
    let (vpcs, subnets, groups) =
        (c.list(&st, "vpcs"), c.list(&st, "subnets"), c.list(&st, "security_groups"));
    assert_eq!(c.counts(&st), (1, 1, 1), "{st}");
    // A JD security group takes no tags: it is found by its name in the tagged VPC.
    let tagged: &[&Value] =
        if c.provider == "jdcloud" { &[&vpcs[0], &subnets[0]] } else { &[&vpcs[0], &subnets[0], &groups[0]] };
    for piece in tagged {
        assert_eq!(piece["tags"]["gpuctl-network"], c.zone, "tagged: {piece}");
    }
    assert_eq!(groups[0]["name"], format!("gpuctl-{}", c.zone));
    if c.provider != "jdcloud" {
        assert_eq!(subnets[0]["zone"], c.zone, "JD subnets are regional");
    }
    assert_eq!(subnets[0]["vpc_id"], vpcs[0]["id"]);
    let inst = sim.live(c.provider, Some("net-a"));
    assert_eq!(inst.len(), 1);
    let (vpc, subnet, sgs) = c.placement(&inst[0]);
    assert_eq!(
        (vpc, subnet, sgs),
        (vpcs[0]["id"].clone(), subnets[0]["id"].clone(), json!([groups[0]["id"]])),
        "{}",
        inst[0]
    );
    let ingress = groups[0]["ingress"].as_array().cloned().unwrap();
    assert!(c.ssh_from(&ingress, "203.0.113.0/24"), "{ingress:?}");
    assert!(c.inside(&ingress, &groups[0]["id"], &vpcs[0]["cidr"]), "{ingress:?}");

    // A second deployment in the zone reuses every piece, and adds its own ssh_from.
    let report = e2e::ok_json(&sim.url, dir.path(), &["provision", &b, "--yes", "--json"]);
    assert_eq!(report["units"][0]["state"], "running", "{report}");
    let st = sim.state();
    assert_eq!(c.counts(&st), (1, 1, 1));
    let inst_b = sim.live(c.provider, Some("net-b"));
    assert_eq!(c.placement(&inst_b[0]).1, subnets[0]["id"]);
    let ingress = c.list(&st, "security_groups")[0]["ingress"].as_array().cloned().unwrap();
    assert!(c.ssh_from(&ingress, "198.51.100.7/32"), "{ingress:?}");

    // Destroying the first keeps the network (the second still uses it).
    let out = e2e::ok_json(&sim.url, dir.path(), &["destroy", &a, "--yes", "--json"]);
    assert_eq!(out["networks"][0]["deleted"], json!([]), "{out}");
    assert!(out["networks"][0]["kept"].as_str().unwrap_or("").contains("net-b"), "{out}");
    assert_eq!(c.list(&sim.state(), "vpcs").len(), 1);

    // Destroying the second deletes it all: security group, subnet, VPC.
    let out = e2e::ok_json(&sim.url, dir.path(), &["destroy", &b, "--yes", "--json"]);
    assert_eq!(out["networks"][0]["deleted"].as_array().map(Vec::len), Some(3), "{out}");
    assert_eq!(c.counts(&sim.state()), (0, 0, 0), "no gpuctl network left: {}", sim.state());
}

#[test]
fn tencent_auto_network_is_made_tagged_shared_and_deleted_with_its_last_user() {
    made_tagged_shared_and_deleted_with_its_last_user(&TENCENT);
}

#[test]
fn alibaba_auto_network_is_made_tagged_shared_and_deleted_with_its_last_user() {
    made_tagged_shared_and_deleted_with_its_last_user(&ALIBABA);
}

#[test]
fn jdcloud_auto_network_is_made_tagged_shared_and_deleted_with_its_last_user() {
    made_tagged_shared_and_deleted_with_its_last_user(&JDCLOUD);
}

fn a_lost_create_answer_is_adopted(c: &Cloud) {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim(dir.path());
    let a = write(dir.path(), "a.toml", &c.spec("net-lost", "\"203.0.113.0/24\""));
    // Each create is carried out and its answer lost on the way back.
    for action in c.creates {
        let rule =
            json!({ "provider": c.provider, "action": action, "kind": "success_then_drop", "count": 1 });
        let (status, body) = sim.admin("POST", "/_sim/faults", &rule.to_string());
        assert_eq!(status, 200, "{body}");
    }
    let report = e2e::ok_json(&sim.url, dir.path(), &["provision", &a, "--yes", "--json"]);
    assert_eq!(report["units"][0]["state"], "running", "{report}");
    assert_eq!(c.counts(&sim.state()), (1, 1, 1), "adopted, not duplicated: {}", sim.state());
    // A re-run changes nothing.
    e2e::ok_json(&sim.url, dir.path(), &["provision", &a, "--yes", "--json"]);
    assert_eq!(c.counts(&sim.state()), (1, 1, 1));
    e2e::ok_json(&sim.url, dir.path(), &["destroy", &a, "--yes", "--json"]);
    assert_eq!(c.counts(&sim.state()), (0, 0, 0));
}

#[test]
fn a_lost_create_answer_is_adopted_by_tag_not_made_twice() {
    a_lost_create_answer_is_adopted(&TENCENT);
    a_lost_create_answer_is_adopted(&ALIBABA);
    a_lost_create_answer_is_adopted(&JDCLOUD);
}

#[test]
fn auto_needs_ssh_from_and_jd_needs_auto_or_ids() {
    let dir = tempfile::tempdir().unwrap();
    let sim = sim(dir.path());
    let no_from = write(dir.path(), "n.toml", &TENCENT.spec("net-n", "").replace("ssh_from = []\n", ""));
    let o = e2e::gpuctl(&sim.url, dir.path(), &["plan", &no_from]);
    let text = String::from_utf8_lossy(&o.stderr).to_string() + &String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success() && text.contains("no `ssh_from`") && text.contains("0.0.0.0/0"), "{text}");

    let open = write(dir.path(), "o.toml", &TENCENT.spec("net-o", "\"0.0.0.0/0\""));
    let plan = e2e::ok_json(&sim.url, dir.path(), &["plan", &open, "--json"]);
    assert!(
        plan["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap_or("").contains("open to the whole internet")),
        "{plan}"
    );

    // JD sells no default network: a pool there names its ids or says `auto`.
    let jd = write(
        dir.path(),
        "jd.toml",
        &JDCLOUD.spec("net-jd", "").replace("network = \"auto\"\nssh_from = []\n", ""),
    );
    let o = e2e::gpuctl(&sim.url, dir.path(), &["plan", &jd]);
    let text = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success() && text.contains("jdcloud has no default network"), "{text}");
}
