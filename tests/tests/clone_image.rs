//! "Buy the same configuration" boots what was validated (issue 13): `gpuctl snapshot --image` makes a
//! custom image of an instance's system disk (Tencent/Alibaba CreateImage, JD createImage), waits for
//! it and records it; `gpuctl clone --from-snapshot` does the same before it creates the copies, and
//! the copies boot from that image (data disks from their snapshots), not from the source's original
//! image. Against `gpuctl sim`, the `gpuctl` binary, on each cloud; a second `snapshot --image` makes
//! a second image, never the first again.

use gpuctl_e2e::e2e::{self, SimProcess};

const QUICK: &str = "seed = 9\n[knobs]\nboot_seconds = 1\n";

/// The image an instance boots from, as the cloud's own record says (`/_sim/state`).
fn boot_image(sim: &SimProcess, provider: &str, id: &str) -> String {
    let st = sim.state();
    let all = st["providers"][provider]["instances"].as_array().cloned().unwrap_or_default();
    let inst = all.iter().find(|i| e2e::instance_id(i) == id).unwrap_or_else(|| panic!("{id} in {st}"));
    inst["ImageId"].as_str().or(inst["imageId"].as_str()).unwrap_or_default().to_string()
}

fn clone_boots_the_custom_image(provider: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sim = SimProcess::start(d, QUICK, &[]);
    let dep = format!("img-{provider}");
    let spec = d.join("spec.toml");
    std::fs::write(&spec, e2e::spec_text(provider, &dep, 1)).unwrap();
    let spec_s = spec.to_str().unwrap();
    let report = e2e::ok_json(&sim.url, d, &["provision", spec_s, "--yes", "--json"]);
    let source = report["units"][0]["instance_id"].as_str().unwrap().to_string();
    let original = boot_image(&sim, provider, &source);

    let made = e2e::ok_json(&sim.url, d, &["snapshot", &source, "--image", "--json"]);
    let images = made["images"].as_array().cloned().unwrap_or_default();
    assert_eq!(images.len(), 1, "{provider}: {made}");
    assert_eq!(images[0]["state"], "available", "{provider}: {made}");
    let first = images[0]["image_id"].as_str().unwrap().to_string();
    assert!(!first.is_empty() && first != original, "{provider}: {made}");
    assert!(made["snapshots"].as_array().is_some_and(|s| s.len() == 2), "system + data disk: {made}");

    // A second image of the same instance is a new one (the next generation), not the first again.
    let again = e2e::ok_json(&sim.url, d, &["snapshot", &source, "--image", "--json"]);
    let second = again["images"][0]["image_id"].as_str().unwrap().to_string();
    assert_ne!(second, first, "{provider}: {again}");

    let out = d.join("clone.toml");
    let clone = e2e::ok_json(
        &sim.url,
        d,
        &[
            "clone",
            &source,
            "--from-snapshot",
            "--count",
            "1",
            "--yes",
            "--json",
            "--spec-out",
            out.to_str().unwrap(),
        ],
    );
    let copy = clone["units"][0]["instance_id"].as_str().unwrap_or_else(|| panic!("{clone}")).to_string();
    let text = std::fs::read_to_string(&out).unwrap();
    let booted = boot_image(&sim, provider, &copy);
    assert!(booted != original && booted != first && booted != second, "{provider}: a fresh image: {booted}");
    assert!(text.contains(&format!("image = \"{booted}\"")), "{provider}: the clone spec names it:\n{text}");
    assert!(text.contains("snapshot_id"), "{provider}: data disks from snapshots:\n{text}");

    e2e::ok_json(&sim.url, d, &["destroy", out.to_str().unwrap(), "--yes", "--json"]);
    e2e::ok_json(&sim.url, d, &["destroy", spec_s, "--yes", "--json"]);
    assert!(sim.live(provider, None).is_empty(), "{provider}");
}

#[test]
fn tencent_clone_boots_the_custom_image() {
    clone_boots_the_custom_image("tencent");
}

#[test]
fn alibaba_clone_boots_the_custom_image() {
    clone_boots_the_custom_image("alibaba");
}

#[test]
fn jdcloud_clone_boots_the_custom_image() {
    clone_boots_the_custom_image("jdcloud");
}
