//! The boot environment (issue 13): the spec's `env` table, its rendering per cloud, and the real
//! validators over every rendered variant — `cloud-init schema --config-file` for each `#cloud-config`,
//! `bash -n` and `shellcheck` for each script (JD's launch script, and the script inside each
//! cloud-config). A validator that is missing fails the test when `CI` or `GPUCTL_REQUIRE_TOOLS` is set
//! (scripts/test.d/05-tools.sh installs them); elsewhere the test says loudly what it skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use expect_test::{expect, expect_file};
use gpuctl_provision::boot::{self, Format};
use gpuctl_provision::spec::{Env, Spanned};
use gpuctl_provision::Provider;

/// Every variant the renderer makes: each cloud × container on/off × mount on/off × setup on/off.
fn variants() -> Vec<(String, Provider, Env, Option<boot::NodeFacts>)> {
    let mut out = Vec::new();
    for p in Provider::ALL {
        for container in [false, true] {
            for mount in [false, true] {
                for setup in [false, true] {
                    let env = Env {
                        container,
                        container_image: container
                            .then(|| "pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime".into()),
                        mount: mount.then(|| "/data".into()),
                        setup: setup.then(|| {
                            "cd /data 2>/dev/null || true\necho \"it's $(hostname)\" > /tmp/who\n".into()
                        }),
                        driver: container
                            .then(|| Spanned { value: "535.104.05".into(), loc: Default::default() }),
                        ..Env::default()
                    };
                    let name = format!(
                        "{p}-{}-{}-{}",
                        if container { "container" } else { "bare" },
                        if mount { "mount" } else { "nomount" },
                        if setup { "setup" } else { "nosetup" }
                    );
                    out.push((name, p, env, None));
                }
            }
        }
    }
    // A cluster's node (issue 14): its facts file, with and without a shared NFS mount.
    for p in Provider::ALL {
        for shared in [false, true] {
            let node = boot::NodeFacts {
                rank: u32::from(shared),
                nodes: 2,
                gpus_per_node: Some(8),
                // Node 0 reads its own address at boot; node 1 is told node 0's.
                master_addr: shared.then(|| "10.0.0.7".into()),
                shared: shared.then(|| boot::SharedMount {
                    source: "10.0.0.9:/cfs".into(),
                    mount: "/mnt/shared".into(),
                }),
                resume: None,
            };
            let env = Env { container: true, mount: Some("/data".into()), ..Env::default() };
            // A node replacing a reclaimed one (issue 15): it finds the newest checkpoint at boot.
            let replacement = boot::NodeFacts {
                resume: Some(boot::Resume { replaces: "ins-reclaimed".into() }),
                ..node.clone()
            };
            out.push((
                format!("{p}-replacement-{}", if shared { "shared" } else { "noshared" }),
                p,
                env.clone(),
                Some(replacement),
            ));
            out.push((
                format!("{p}-node-{}", if shared { "shared" } else { "noshared" }),
                p,
                env,
                Some(node),
            ));
        }
    }
    out
}

/// The bash script inside a rendered `#cloud-config`: the `content: |` block, de-indented.
fn embedded_script(cloud_config: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in cloud_config.lines() {
        if line == "    content: |" {
            inside = true;
        } else if inside && !line.is_empty() && !line.starts_with("      ") {
            break;
        } else if inside {
            out.push_str(line.strip_prefix("      ").unwrap_or(line));
            out.push('\n');
        }
    }
    out
}

#[test]
fn each_cloud_gets_its_own_format_and_mirrors() {
    let env = Env {
        container: true,
        container_image: Some("nvcr.io/nvidia/pytorch:24.05-py3".into()),
        mount: Some("/data".into()),
        ..Env::default()
    };
    let tc = boot::render("train", &env, Provider::Tencent);
    let ali = boot::render("train", &env, Provider::Alibaba);
    let jd = boot::render("train", &env, Provider::JdCloud);
    assert_eq!(
        (tc.format, ali.format, jd.format),
        (Format::CloudConfig, Format::CloudConfig, Format::LaunchScript)
    );
    assert!(tc.text.starts_with("#cloud-config\n") && ali.text.starts_with("#cloud-config\n"));
    assert!(jd.text.starts_with("#!/bin/bash\n"));
    // JD runs it (the same check the spec parser applies to raw user data).
    gpuctl_cloud::provider::boot_script_runs(Provider::JdCloud, &jd.text).unwrap();
    assert!(
        tc.text.contains("http://mirrors.tencentyun.com/ubuntu")
            && tc.text.contains("https://mirror.ccs.tencentyun.com")
    );
    assert!(
        ali.text.contains("http://mirrors.cloud.aliyuncs.com/ubuntu")
            && !ali.text.contains("registry-mirrors")
    );
    assert!(!jd.text.contains("use_cloud_mirror"), "JD documents no mirror: its image's sources are kept");
    for r in [&tc, &ali, &jd] {
        assert!(r.text.contains("UUID=$uuid $mnt auto defaults,nofail 0 2"), "{:?}", r.provider);
        assert!(r.text.contains("\"data-root\":\"/data/docker\""), "{:?}", r.provider);
        assert!(r.text.contains("> \"$gpuctl_state/ready\""), "{:?}", r.provider);
        // Never installs or changes CUDA or the driver.
        assert!(!r.text.contains("cuda-toolkit") && !r.text.contains("nvidia-driver"), "{:?}", r.provider);
        assert!(r.summary.contains(&format!("{} bytes", r.text.len())), "{}", r.summary);
    }
    // The cloud-config carries a whole script: from its shebang to the ready marker.
    let inner = embedded_script(&tc.text);
    assert!(inner.starts_with("#!/bin/bash\n") && inner.ends_with("echo \"gpuctl: ready\"\n"), "{inner}");
}

#[test]
fn rendered_snapshots() {
    let all = Env {
        container: true,
        container_image: Some("pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime".into()),
        mount: Some("/data".into()),
        setup: Some("pip install -r /data/requirements.txt".into()),
        cuda: Some(Spanned { value: "12.1".into(), loc: Default::default() }),
        driver: Some(Spanned { value: "535.104.05".into(), loc: Default::default() }),
        ..Env::default()
    };
    expect_file!["snapshots/boot-tencent.yaml"]
        .assert_eq(&boot::render("train", &all, Provider::Tencent).text);
    expect_file!["snapshots/boot-jdcloud.sh"].assert_eq(&boot::render("train", &all, Provider::JdCloud).text);
    let bare = Env { mount: Some("/data".into()), ..Env::default() };
    expect!["cloud-config, 3076 bytes: first data disk on /data (formatted only if empty), ready marker /var/lib/gpuctl/ready"]
        .assert_eq(&boot::render("train", &bare, Provider::Alibaba).summary);
}

#[test]
fn setup_reaches_bash_byte_for_byte() {
    // Quotes, `$`, backslashes and a line that looks like YAML: bash must see exactly the user's text.
    let setup = "echo 'one' \"two\" $HOME \\n `id`\n- not: yaml\n\ttabbed\n";
    let env = Env { setup: Some(setup.into()), ..Env::default() };
    for p in Provider::ALL {
        let r = boot::render("train", &env, p);
        let script = if r.format == Format::CloudConfig { embedded_script(&r.text) } else { r.text.clone() };
        // The assignment as rendered, up to the step that uses it, evaluated by bash itself.
        let start = script.find("gpuctl_setup=").expect("setup assignment");
        let end = script.find("\nstep setup").expect("setup step");
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!("{}\nprintf %s \"$gpuctl_setup\"", &script[start..end]))
            .output()
            .expect("bash runs");
        assert_eq!(String::from_utf8_lossy(&out.stdout), setup, "{p}");
    }
}

fn required() -> bool {
    std::env::var_os("CI").is_some() || std::env::var_os("GPUCTL_REQUIRE_TOOLS").is_some()
}

/// Runs `cmd`; `None` when the tool is not installed and not required (said on stderr).
fn run(tool: &str, args: &[&str], file: &Path) -> Option<(bool, String)> {
    match Command::new(tool).args(args).arg(file).output() {
        Ok(o) => Some((
            o.status.success(),
            format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required() => {
            eprintln!("SKIPPED: {tool} is not installed (set CI or GPUCTL_REQUIRE_TOOLS to fail instead; scripts/test installs it)");
            None
        }
        Err(e) => panic!("{tool} cannot run: {e} (Debian: apt-get install cloud-init shellcheck)"),
    }
}

#[test]
fn every_variant_passes_cloud_init_schema_bash_n_and_shellcheck() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("boot-variants");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let mut checked = (0, 0);
    for (name, p, env, node) in variants() {
        let r = boot::render_node("train", &env, p, node.as_ref());
        let script = match r.format {
            Format::CloudConfig => {
                let yaml = dir.join(format!("{name}.yaml"));
                std::fs::write(&yaml, &r.text).unwrap();
                if let Some((ok, out)) = run("cloud-init", &["schema", "--config-file"], &yaml) {
                    checked.0 += 1;
                    if !ok || !out.contains("Valid cloud-config") {
                        failures.push(format!("cloud-init schema {name}: {out}"));
                    }
                }
                embedded_script(&r.text)
            }
            Format::LaunchScript => r.text.clone(),
        };
        let sh = dir.join(format!("{name}.sh"));
        std::fs::write(&sh, &script).unwrap();
        for (tool, args) in [("bash", &["-n"][..]), ("shellcheck", &["--shell=bash", "--severity=style"][..])]
        {
            if let Some((ok, out)) = run(tool, args, &sh) {
                checked.1 += 1;
                if !ok {
                    failures.push(format!("{tool} {name}: {out}"));
                }
            }
        }
    }
    // Negative controls: the same calls refuse a broken config and a script with a real mistake, so a
    // pass above is the validators' verdict, not a call that cannot fail.
    let bad_yaml = dir.join("control-bad.cloud-config");
    std::fs::write(&bad_yaml, "#cloud-config\nruncmd: 5\n").unwrap();
    if let Some((ok, out)) = run("cloud-init", &["schema", "--config-file"], &bad_yaml) {
        assert!(!ok && out.contains("runcmd"), "cloud-init schema passed `runcmd: 5`: {out}");
    }
    let bad_sh = dir.join("control-bad.script");
    std::fs::write(&bad_sh, "#!/bin/bash\nx=$1\nrm -rf $x/tmp\n").unwrap();
    if let Some((ok, out)) = run("shellcheck", &["--shell=bash", "--severity=style"], &bad_sh) {
        assert!(!ok && out.contains("SC2086"), "shellcheck passed an unquoted expansion: {out}");
    }
    std::fs::write(&bad_sh, "#!/bin/bash\nif then\n").unwrap();
    if let Some((ok, _)) = run("bash", &["-n"], &bad_sh) {
        assert!(!ok, "bash -n passed `if then`");
    }
    eprintln!(
        "boot variants in {}: {} cloud-configs through cloud-init schema, {} script checks",
        dir.display(),
        checked.0,
        checked.1
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The node agent (issue 15) inside the cloud-config: with and without `env`, idle and spot hook, on
/// both clouds that run it — `cloud-init schema` on the whole config, `python3 -m py_compile` on the
/// program as it comes back out of the config (gzip + base64), `bash -n`/shellcheck on the boot script.
#[test]
fn the_node_agent_passes_cloud_init_schema_and_py_compile() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("boot-agent");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pool = |provider: &str, billing: &str, extra: &str| {
        let place = match provider {
            "tencent" => "provider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-3\"\ninstance_type = \"GN7.2XLARGE32\"\n",
            _ => "provider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\ninstance_type = \"ecs.gn7i-c8g1.2xlarge\"\n",
        };
        format!("deployment = \"d\"\n[[pool]]\nname = \"train\"\n{place}billing = \"{billing}\"\nimage = \"img-1\"\ndata_disks = [{{ size_gb = 50 }}]\n{extra}")
    };
    let idle = "idle = { below = \"5%\", for = \"30m\", then = \"stop\", role = \"my-agent\" }\n";
    let hook =
        "spot = { on_notice = \"python3 /data/save.py --now 'quoted \\\"x\\\"'\", timeout = \"90s\" }\n";
    let env = "[pool.env]\ncontainer = true\nmount = \"/data\"\nsetup = \"echo ready\"\n";
    let mut failures = Vec::new();
    let mut checked = 0;
    for provider in ["tencent", "alibaba"] {
        for (name, billing, extra) in [
            ("idle", "hourly", idle.to_string()),
            ("idle-env", "hourly", format!("{idle}{env}")),
            ("hook", "spot", hook.to_string()),
            ("both-env", "spot", format!("{idle}{hook}{env}")),
        ] {
            let s = gpuctl_provision::spec::parse(
                "s.toml",
                &pool(provider, billing, &extra),
                None,
                &Default::default(),
            )
            .unwrap_or_else(|e| panic!("{provider} {name}: {e}"));
            let p: Provider = provider.parse().unwrap();
            let text = boot::user_data(&s.pools[0], p, None).unwrap();
            assert!(text.len() <= 12 * 1024, "{provider} {name}: {} bytes", text.len());
            let yaml = dir.join(format!("{provider}-{name}.yaml"));
            std::fs::write(&yaml, &text).unwrap();
            if let Some((ok, out)) = run("cloud-init", &["schema", "--config-file"], &yaml) {
                checked += 1;
                if !ok || !out.contains("Valid cloud-config") {
                    failures.push(format!("cloud-init schema {provider} {name}: {out}"));
                }
            }
            let files = gpuctl_provision::agent::written_files(&text);
            let program = &files.iter().find(|(f, _)| f == gpuctl_provision::agent::PROGRAM_PATH).unwrap().1;
            assert_eq!(program, gpuctl_provision::agent::PROGRAM);
            let config = &files.iter().find(|(f, _)| f == gpuctl_provision::agent::CONFIG_PATH).unwrap().1;
            let cfg: serde_json::Value = serde_json::from_str(config).unwrap();
            assert_eq!(cfg["provider"], provider);
            assert_eq!(cfg["role"].as_str(), extra.contains("idle").then_some("my-agent"));
            if extra.contains("spot") {
                assert_eq!(cfg["notice"]["command"], "python3 /data/save.py --now 'quoted \"x\"'");
            }
            let sh = dir.join(format!("{provider}-{name}.sh"));
            std::fs::write(&sh, embedded_script(&text)).unwrap();
            for (tool, args) in
                [("bash", &["-n"][..]), ("shellcheck", &["--shell=bash", "--severity=style"][..])]
            {
                if let Some((ok, out)) = run(tool, args, &sh) {
                    if !ok {
                        failures.push(format!("{tool} {provider} {name}: {out}"));
                    }
                }
            }
        }
    }
    let py = dir.join("agent.py");
    std::fs::write(&py, gpuctl_provision::agent::PROGRAM).unwrap();
    let (ok, out) = run("python3", &["-m", "py_compile"], &py).expect("python3 is installed");
    assert!(ok, "py_compile: {out}");
    std::fs::write(&py, "def broken(:\n").unwrap();
    assert!(!run("python3", &["-m", "py_compile"], &py).unwrap().0, "py_compile passed a syntax error");
    eprintln!(
        "node agent: {checked} cloud-configs through cloud-init schema, the program through py_compile"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
