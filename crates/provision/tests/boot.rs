//! The boot environment (issue 13): the spec's `env` table, its rendering per cloud, and the real
//! validators over every rendered variant — `cloud-init schema --config-file` for each `#cloud-config`,
//! `bash -n` and `shellcheck` for each script (JD's launch script, and the script inside each
//! cloud-config). A validator that is missing fails the test when `CI` or `GPUCTL_REQUIRE_TOOLS` is set
//! (scripts/test.d/05-tools.sh installs them); elsewhere the test says loudly what it skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use expect_test::{expect, expect_file, Expect};
use gpuctl_provision::boot::{self, Format};
use gpuctl_provision::spec::{self, Env, Limits, Spanned};
use gpuctl_provision::Provider;

const POOL: &str = r#"
[[pool]]
name = "train"
provider = "tencent"
region = "ap-guangzhou"
zone = "ap-guangzhou-3"
instance_type = "GN7.2XLARGE32"
billing = "hourly"
image = "img-1"
data_disks = [{ size_gb = 500 }]
"#;

fn errors(src: &str) -> String {
    match spec::parse("s.toml", src, None, &Limits::default()) {
        Ok(_) => "ok".to_string(),
        Err(e) => e.to_string(),
    }
}

fn check(src: &str, expected: Expect) {
    expected.assert_eq(&errors(src));
}

fn env_of(src: &str) -> Env {
    let s = spec::parse("s.toml", src, None, &Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    s.pools[0].env.clone().expect("the pool has an env")
}

#[test]
fn env_tables_parse_in_both_shapes() {
    let inline = env_of(&format!(
        "deployment = \"d\"\n{POOL}env = {{ container = true, container_image = \"pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime\", mount = \"/data/\", setup = \"pip install -r /data/req.txt\", cuda = \"12.1\", driver = \"535.104.05\" }}\n"
    ));
    assert!(inline.container);
    assert_eq!(inline.container_image.as_deref(), Some("pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime"));
    assert_eq!(inline.mount.as_deref(), Some("/data"), "a trailing slash is dropped");
    assert_eq!(inline.cuda.as_ref().map(|c| c.value.as_str()), Some("12.1"));
    // `[pool.env]` after `[[pool]]` is the same table, on the last pool.
    let table = env_of(&format!("deployment = \"d\"\n{POOL}\n[pool.env]\nmount = \"/data\"\n"));
    assert_eq!((table.container, table.mount.as_deref()), (false, Some("/data")));
    // No env: nothing rendered, raw user data still goes through untouched.
    let raw = spec::parse(
        "s.toml",
        &format!("deployment = \"d\"\n{POOL}user_data = \"#cloud-config\\n\"\n"),
        None,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(raw.pools[0].env, None);
    assert_eq!(boot::user_data(&raw.pools[0], Provider::Tencent).as_deref(), Some("#cloud-config\n"));
}

#[test]
fn env_errors_are_positioned_with_the_allowed_keys() {
    check(
        &format!("deployment = \"d\"\n{POOL}env = {{ containr = true }}\n"),
        expect!["s.toml:12:9: unknown key `containr` in `env` of pool `train`; did you mean container or container_image?"],
    );
    check(
        &format!("deployment = \"d\"\n{POOL}env = {{ zzz = 1 }}\n"),
        expect![[
            r#"s.toml:12:9: unknown key `zzz` in `env` of pool `train`; allowed keys: container, container_image, mount, setup, cuda, driver"#
        ]],
    );
    check(
        &format!("deployment = \"d\"\n{POOL}env = {{ container = \"yes\" }}\n"),
        expect!["s.toml:12:21: `container` in `env` of pool `train` must be true or false, found a string"],
    );
    check(
        &format!("deployment = \"d\"\n{POOL}env = \"docker\"\n"),
        expect![[r#"s.toml:12:7: `env` of pool `train` must be a table, found a string"#]],
    );
    check(
        &format!("deployment = \"d\"\n{POOL}env = {{ container_image = \"x\" }}\n"),
        expect![[
            r#"s.toml:12:27: `container_image` needs `container = true` (Docker must be installed to pull it)"#
        ]],
    );
    check(
        &format!(
            "deployment = \"d\"\n{POOL}env = {{ container = true, container_image = \"x; rm -rf /\" }}\n"
        ),
        expect![[
            r#"s.toml:12:45: `container_image` `x; rm -rf /` is not an image reference (e.g. "pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime")"#
        ]],
    );
    check(
        &format!("deployment = \"d\"\n{POOL}env = {{ mount = \"/usr\" }}\n"),
        expect![[
            r#"s.toml:12:17: `mount` `/usr` is a system folder; mounting a data disk there would hide it (use e.g. "/data")"#
        ]],
    );
    check(
        &format!("deployment = \"d\"\n{POOL}env = {{ mount = \"data/../x\" }}\n"),
        expect![[
            r#"s.toml:12:17: `mount` `data/../x` must be an absolute path of letters, digits, `.`, `_`, `-` and `/` (e.g. "/data")"#
        ]],
    );
    check(
        &format!("deployment = \"d\"\n{POOL}env = {{ cuda = \"12.x\", driver = \"latest\" }}\n"),
        expect![[r#"
            s.toml:12:16: `cuda` `12.x` is not a version (e.g. cuda = "12.1")
            s.toml:12:33: `driver` `latest` is not a version (e.g. driver = "535.104.05")"#]],
    );
    check(
        &format!("deployment = \"d\"\n{POOL}env = {{ setup = \"echo \\u001b[2J\" }}\n"),
        expect![[
            r#"s.toml:12:17: `setup` holds the character U+001B; only printable text, tabs and newlines go into a boot script"#
        ]],
    );
    check(
        &format!("deployment = \"d\"\n{POOL}env = {{ setup = \"  \" }}\n"),
        expect![[r#"s.toml:12:17: `setup` is empty; leave it out, or give the command to run"#]],
    );
}

#[test]
fn env_against_the_rest_of_the_pool() {
    check(
        &format!(
            "deployment = \"d\"\n{POOL}env = {{ container = true }}\nuser_data = \"#cloud-config\\n\"\n"
        ),
        expect![[
            r#"s.toml:13:13: pool `train` sets both `env` and user data: gpuctl renders `env` as the instance's whole user data; put your commands in env.setup"#
        ]],
    );
    let no_disk = POOL.replace("data_disks = [{ size_gb = 500 }]\n", "");
    check(
        &format!("deployment = \"d\"\n{no_disk}env = {{ mount = \"/data\" }}\n"),
        expect![[
            r#"s.toml:11:7: `env.mount` of pool `train` needs a data disk; add data_disks = [{ size_gb = 500 }]"#
        ]],
    );
    let long = "x".repeat(12 * 1024);
    check(
        &format!("deployment = \"d\"\n{POOL}env = {{ setup = \"{long}\" }}\n"),
        expect!["s.toml:12:7: `env` of pool `train` renders to 13641 bytes for tencent; at most 12288 are accepted (16 KiB once base64-encoded, Tencent's limit): shorten `setup`"],
    );
    // A JD pool's env is a launch script, which JD runs; a raw cloud-config is still refused there.
    let jd = r#"
[[pool]]
name = "train"
provider = "jdcloud"
region = "cn-north-1"
zone = "cn-north-1a"
instance_type = "g.n2.2xlarge"
billing = "hourly"
image = "img-1"
network = { vpc = "vpc-1", subnet = "subnet-1", security_groups = ["sg-1"] }
"#;
    check(&format!("deployment = \"d\"\n{jd}env = {{ container = true }}\n"), expect!["ok"]);
}

/// Every variant the renderer makes: each cloud × container on/off × mount on/off × setup on/off.
fn variants() -> Vec<(String, Provider, Env)> {
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
                    out.push((name, p, env));
                }
            }
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
    for (name, p, env) in variants() {
        let r = boot::render("train", &env, p);
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
