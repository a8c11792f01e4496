//! Public IPs end to end (issue 13), per cloud, against `gpuctl sim` as a separate process: a pool
//! gets one by default, `plan` prices it with its source, `status` shows the address the cloud
//! reports, and after `destroy` the local cloud holds no public IP at all (JD's elastic IP is
//! deleted with its instance, not left billing). `public_ip = false` asks for none.

use gpuctl_e2e::e2e::{self, SimProcess};
use serde_json::Value;

const QUICK: &str = "seed = 5\n[knobs]\nboot_seconds = 1\n";

fn spec_for(provider: &str, public_ip: &str) -> String {
    let place = match provider {
        "tencent" => "provider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-3\"\ninstance_type = \"GN7.2XLARGE32\"\nimage = \"img-pi0ii46r\"\n",
        "alibaba" => "provider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\ninstance_type = \"ecs.gn7i-c8g1.2xlarge\"\nimage = \"ubuntu_22_04_x64_20G_alibase_20240926.vhd\"\n",
        _ => "provider = \"jdcloud\"\nregion = \"cn-north-1\"\nzone = \"cn-north-1a\"\ninstance_type = \"p.n1v100.2xlarge\"\nimage = \"7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204\"\nnetwork = { vpc = \"vpc-1\", subnet = \"subnet-1\", security_groups = [\"sg-1\"] }\n",
    };
    format!("deployment = \"ip-{provider}\"\nhours = 2\n[[pool]]\nname = \"work\"\ncount = 2\nbilling = \"hourly\"\n{public_ip}\n{place}")
}

/// The public IPs the local cloud holds (and bills) for `provider`, as `/_sim/state` lists them.
fn held(sim: &SimProcess, provider: &str) -> Vec<String> {
    let st = sim.state();
    let key = match provider {
        "tencent" => "PublicIpAddress",
        "alibaba" => "IpAddress",
        _ => "elasticIpAddress",
    };
    let mut v: Vec<String> = st["providers"][provider]["public_ips"]
        .as_array()
        .unwrap_or_else(|| panic!("{provider} state lists no public_ips: {st}"))
        .iter()
        .map(|p| p[key].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn public_ip_round_trip(provider: &str) {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, spec_for(provider, "")).unwrap();
    let spec_s = spec.to_str().unwrap();

    let plan = e2e::ok_json(&sim.url, dir.path(), &["plan", spec_s, "--json"]);
    let ip = &plan["pools"][0]["public_ip"];
    assert_eq!(
        (ip["bandwidth_mbps"].as_u64(), ip["billing"].as_str()),
        (Some(10), Some("traffic")),
        "{plan}"
    );
    assert_eq!(ip["cny_per_gb"].as_f64(), Some(0.80), "every cloud's recorded traffic rate: {ip}");
    assert!(ip["source"].as_str().is_some_and(|s| !s.is_empty()), "{ip}");

    e2e::ok_json(&sim.url, dir.path(), &["provision", spec_s, "--yes", "--json"]);
    let addresses = held(&sim, provider);
    assert_eq!(addresses.len(), 2, "one per instance: {addresses:?}");
    let status = e2e::ok_json(&sim.url, dir.path(), &["status", &format!("ip-{provider}"), "--json"]);
    let mut shown: Vec<String> = status
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["public_ip"].as_str().unwrap_or_else(|| panic!("no public_ip in {r}")).to_string())
        .collect();
    shown.sort();
    assert_eq!(shown, addresses, "status shows what the cloud assigned");
    assert!(shown.iter().all(|a| a.starts_with("203.0.113.")), "{shown:?}");
    let text = e2e::gpuctl(&sim.url, dir.path(), &["status", &format!("ip-{provider}")]);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(text.status.success() && out.contains("public ip") && out.contains(&shown[0]), "{out}");

    e2e::ok_json(&sim.url, dir.path(), &["destroy", spec_s, "--yes", "--json"]);
    assert_eq!(held(&sim, provider), Vec::<String>::new(), "no public IP left billing after destroy");
}

#[test]
fn tencent_public_ip_is_shown_and_released() {
    public_ip_round_trip("tencent");
}

#[test]
fn alibaba_public_ip_is_shown_and_released() {
    public_ip_round_trip("alibaba");
}

#[test]
fn jdcloud_elastic_ip_is_shown_and_deleted_with_the_instance() {
    public_ip_round_trip("jdcloud");
}

#[test]
fn public_ip_false_asks_for_none() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    for provider in ["tencent", "alibaba", "jdcloud"] {
        let spec = dir.path().join(format!("{provider}.toml"));
        std::fs::write(&spec, spec_for(provider, "public_ip = false")).unwrap();
        let spec_s = spec.to_str().unwrap();
        let plan = e2e::ok_json(&sim.url, dir.path(), &["plan", spec_s, "--json"]);
        assert_eq!(plan["pools"][0]["public_ip"], Value::Null, "{plan}");
        e2e::ok_json(&sim.url, dir.path(), &["provision", spec_s, "--yes", "--json"]);
        assert_eq!(held(&sim, provider), Vec::<String>::new(), "{provider}");
        let status = e2e::ok_json(&sim.url, dir.path(), &["status", &format!("ip-{provider}"), "--json"]);
        assert!(status.as_array().unwrap().iter().all(|r| r["public_ip"].is_null()), "{status}");
        e2e::ok_json(&sim.url, dir.path(), &["destroy", spec_s, "--yes", "--json"]);
    }
}
