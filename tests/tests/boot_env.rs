//! The boot environment end to end (issue 13): a pool with an `[env]` table provisioned by the `gpuctl`
//! binary against `gpuctl sim`, and the user data read back from `/_sim/state` as each cloud received
//! it — base64 in Tencent's and Alibaba's `UserData` (a `#cloud-config`), base64 in JD's
//! `userdata` `launch-script` (a `#!/bin/bash` script) — equal to what `plan --show-boot` shows and
//! the renderer makes.

use base64::Engine as _;
use gpuctl_e2e::e2e::{self, SimProcess};
use gpuctl_provision::boot;
use gpuctl_provision::spec::{self, Limits};
use gpuctl_provision::Provider;
use serde_json::Value;

const QUICK: &str = "seed = 7\n[knobs]\nboot_seconds = 1\n";

const ENV: &str = "\n[pool.env]\ncontainer = true\ncontainer_image = \"pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime\"\nmount = \"/data\"\nsetup = \"echo 'ready to train' > /data/hello\"\ncuda = \"12.1\"\n";

fn received(sim: &SimProcess, provider: &str, dep: &str) -> Vec<String> {
    let field = match provider {
        "jdcloud" => "launchScript",
        _ => "UserData",
    };
    sim.live(provider, Some(dep))
        .iter()
        .map(|i: &Value| {
            let b64 = i[field].as_str().unwrap_or_else(|| panic!("{provider}: no {field} in {i}"));
            let raw =
                base64::engine::general_purpose::STANDARD.decode(b64).expect("base64 as the cloud takes it");
            String::from_utf8(raw).expect("UTF-8 text")
        })
        .collect()
}

fn boots_with_env(provider: &str, p: Provider) {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    let dep = format!("env-{provider}");
    let text = e2e::spec_text(provider, &dep, 2) + ENV;
    let spec_path = dir.path().join("spec.toml");
    std::fs::write(&spec_path, &text).unwrap();
    let spec_s = spec_path.to_str().unwrap();

    // The plan shows one line per cloud, and the whole config with --show-boot.
    let plan = e2e::gpuctl(&sim.url, dir.path(), &["plan", spec_s, "--show-boot"]);
    let shown = String::from_utf8_lossy(&plan.stdout).to_string();
    assert!(plan.status.success(), "{shown}\n{}", String::from_utf8_lossy(&plan.stderr));
    assert!(shown.contains(&format!("work boots on {provider}: ")), "{shown}");
    assert!(shown.contains("not checked against the image: image unknown"), "{shown}");

    let report = e2e::ok_json(&sim.url, dir.path(), &["provision", spec_s, "--yes", "--json"]);
    assert!(report["units"].as_array().unwrap().iter().all(|u| u["state"] == "running"), "{report}");

    let parsed = spec::parse("spec.toml", &text, None, &Limits::default()).unwrap();
    let expected = boot::render("work", parsed.pools[0].env.as_ref().unwrap(), p).text;
    let got = received(&sim, provider, &dep);
    assert_eq!(got.len(), 2);
    for g in &got {
        assert_eq!(g, &expected, "{provider}: the instance received what gpuctl rendered");
        assert!(shown.contains(g.as_str()), "plan --show-boot shows the same text");
    }
    match p {
        Provider::JdCloud => assert!(expected.starts_with("#!/bin/bash\n"), "JD gets a launch script"),
        _ => assert!(expected.starts_with("#cloud-config\n"), "{provider} gets a cloud-config"),
    }
    assert!(expected.contains("echo '\\''ready to train'\\'' > /data/hello"), "{expected}");
    // Nothing of the credentials gpuctl signs with is in what the instance boots with.
    for (name, value) in e2e::SIM_KEYS {
        assert!(!expected.contains(value), "{provider}: the boot config holds {name}");
    }
    e2e::ok_json(&sim.url, dir.path(), &["destroy", spec_s, "--yes", "--json"]);
}

#[test]
fn tencent_boots_with_its_cloud_config() {
    boots_with_env("tencent", Provider::Tencent);
}

#[test]
fn alibaba_boots_with_its_cloud_config() {
    boots_with_env("alibaba", Provider::Alibaba);
}

#[test]
fn jdcloud_boots_with_a_launch_script() {
    boots_with_env("jdcloud", Provider::JdCloud);
}
