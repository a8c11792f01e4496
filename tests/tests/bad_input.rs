//! Bad input through the real binary: every spec in `tests/corpus/specs/` (malformed and hostile, one
//! mistake each) and generated hostile ones (10,000 pools, huge strings, TOML bombs, non-UTF-8, NUL
//! bytes) is given to `gpuctl plan`, `provision --yes` and `destroy --yes`. Each must exit 2 with exactly
//! the message in its `.expected` file — `file:line:column: …` — never panic, and never reach a cloud
//! (no endpoint is reachable: the endpoints point at a closed port).
//!
//! `GPUCTL_BLESS=1 cargo test -p gpuctl-e2e --test bad_input` rewrites the `.expected` files; review the diff.

use std::path::{Path, PathBuf};
use std::process::Command;

use gpuctl_e2e::e2e::gpuctl_bin;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// Hostile specs too big or too binary to commit, made here; name → bytes.
fn generated() -> Vec<(&'static str, Vec<u8>)> {
    let pool = |i: usize| {
        format!("[[pool]]\nname = \"p{i}\"\nprovider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-3\"\ninstance_type = \"GN7.2XLARGE32\"\nbilling = \"hourly\"\nimage = \"img-1\"\n")
    };
    let one = pool(0);
    let mut v: Vec<(&'static str, Vec<u8>)> = vec![
        // 10,000 tiny pools fit under the 1 MiB file limit, so the pool limit must catch them.
        (
            "ten-thousand-pools",
            format!(
                "deployment = \"d\"\n{}",
                (0..10_000).map(|i| format!("[[pool]]\nname = \"p{i}\"\n")).collect::<String>()
            )
            .into_bytes(),
        ),
        ("over-one-mib", format!("deployment = \"d\"\n# {}\n{one}", "x".repeat(1 << 20)).into_bytes()),
        ("huge-deployment-name", format!("deployment = \"{}\"\n{one}", "a".repeat(200_000)).into_bytes()),
        ("huge-key", format!("deployment = \"d\"\n{one}{} = 1\n", "k".repeat(100_000)).into_bytes()),
        (
            "huge-tag-value",
            format!("deployment = \"d\"\n{one}tags = {{ team = \"{}\" }}\n", "v".repeat(100_000))
                .into_bytes(),
        ),
        (
            "many-tags",
            format!(
                "deployment = \"d\"\n{one}tags = {{ {} }}\n",
                (0..5000).map(|i| format!("t{i} = \"x\"")).collect::<Vec<_>>().join(", ")
            )
            .into_bytes(),
        ),
        (
            "many-data-disks",
            format!(
                "deployment = \"d\"\n{one}data_disks = [{}]\n",
                vec!["{ size_gb = 50 }"; 5000].join(", ")
            )
            .into_bytes(),
        ),
        (
            "many-errors",
            format!(
                "deployment = \"d\"\n{one}{}",
                (0..3000).map(|i| format!("bad{i} = 1\n")).collect::<String>()
            )
            .into_bytes(),
        ),
        // TOML bombs: nesting the parser must refuse before it recurses itself off the stack.
        (
            "bomb-nested-arrays",
            format!("deployment = \"d\"\nx = {}1{}\n", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
        ),
        (
            "bomb-nested-inline-tables",
            format!("deployment = \"d\"\nx = {}1{}\n", "{ a = ".repeat(50_000), " }".repeat(50_000))
                .into_bytes(),
        ),
        (
            "bomb-dotted-key",
            format!("deployment = \"d\"\n{} = 1\n{one}", vec!["a"; 100_000].join(".")).into_bytes(),
        ),
        (
            "bomb-table-header",
            format!("deployment = \"d\"\n[{}]\n", vec!["t"; 100_000].join(".")).into_bytes(),
        ),
        ("non-utf8", b"deployment = \"d\"\n# caf\xe9\n".to_vec()),
        ("non-utf8-in-string", b"deployment = \"d\xff\xfe\"\n".to_vec()),
        ("nul-byte", b"deployment = \"d\"\x00\n".to_vec()),
        ("utf16-bom", b"\xff\xfed\x00e\x00p\x00".to_vec()),
    ];
    v.sort_by_key(|(n, _)| *n);
    v
}

/// Runs `args` on `file` in `dir`; returns (exit code, stderr).
fn run(dir: &Path, home: &Path, args: &[&str], file: &str) -> (Option<i32>, String) {
    let o = Command::new(gpuctl_bin())
        .args(args)
        .arg(file)
        .args(["--state", home.join("state.db").to_str().unwrap()])
        .current_dir(dir)
        .env("HOME", home)
        .env("GPUCTL_TODAY", "2026-11-30")
        .env("GPUCTL_TENCENT_ENDPOINT", "http://127.0.0.1:9")
        .env("GPUCTL_ALIBABA_ENDPOINT", "http://127.0.0.1:9")
        .env("GPUCTL_JDCLOUD_ENDPOINT", "http://127.0.0.1:9")
        .env("TENCENTCLOUD_SECRET_ID", "AKIDbadinput")
        .env("TENCENTCLOUD_SECRET_KEY", "badinput")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("gpuctl runs");
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn every_bad_spec_gets_its_positioned_message_and_no_panic() {
    let bless = std::env::var_os("GPUCTL_BLESS").is_some();
    let home = tempfile::tempdir().unwrap();
    let gen_dir = tempfile::tempdir().unwrap();
    let mut cases: Vec<(PathBuf, String, PathBuf)> = Vec::new(); // (dir to run in, file name, expected file)
    let specs = corpus().join("specs");
    let mut names: Vec<_> = std::fs::read_dir(&specs)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    for n in names {
        let expected = specs.join(n.replace(".toml", ".expected"));
        cases.push((specs.clone(), n, expected));
    }
    for (name, bytes) in generated() {
        let file = format!("{name}.toml");
        std::fs::write(gen_dir.path().join(&file), bytes).unwrap();
        cases.push((
            gen_dir.path().to_path_buf(),
            file,
            corpus().join("generated").join(format!("{name}.expected")),
        ));
    }
    // Pinned to what exists (40 spec files + 16 generated): a case lost or added without its .expected fails.
    assert_eq!(cases.len(), 56, "the bad-input corpus should hold 56 cases");
    let mut failures = Vec::new();
    for (dir, file, expected_path) in &cases {
        let (code, stderr) = run(dir, home.path(), &["plan"], file);
        assert!(!stderr.contains("panicked"), "{file}: gpuctl panicked:\n{stderr}");
        // A hostile value must not reach the terminal raw (escape sequences, BEL, CR, NUL, bidi overrides).
        assert!(
            !stderr.chars().any(|c| c.is_control() && c != '\n'),
            "{file}: raw control characters in the message: {stderr:?}"
        );
        assert_eq!(code, Some(2), "{file}: plan should exit 2 (bad input); stderr:\n{stderr}");
        let first_line = stderr.lines().next().unwrap_or_default();
        assert!(
            first_line.starts_with(&format!("error: {file}:")),
            "{file}: the message must start with file:line:column: {first_line}"
        );
        let pos: Vec<&str> = first_line.trim_start_matches("error: ").splitn(4, ':').collect();
        assert!(
            pos.len() == 4
                && pos[1].parse::<u32>().is_ok_and(|l| l >= 1)
                && pos[2].parse::<u32>().is_ok_and(|c| c >= 1),
            "{file}: no line:column in {first_line}"
        );
        // The same spec through the commands that would spend money: the same refusal, nothing sent.
        for args in [&["provision", "--yes"][..], &["destroy", "--yes"][..]] {
            let (c, e) = run(dir, home.path(), args, file);
            assert_eq!((c, &e), (Some(2), &stderr), "{file}: {args:?} differs from plan");
        }
        if bless {
            std::fs::create_dir_all(expected_path.parent().unwrap()).unwrap();
            std::fs::write(expected_path, &stderr).unwrap();
            continue;
        }
        match std::fs::read_to_string(expected_path) {
            Ok(want) if want == stderr => {}
            Ok(want) => failures.push(format!(
                "{file}:\n--- expected ({})\n{want}--- got\n{stderr}",
                expected_path.display()
            )),
            Err(_) => failures.push(format!(
                "{file}: no {} (run with GPUCTL_BLESS=1 and review)\n{stderr}",
                expected_path.display()
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!("bad input: {} specs × 3 commands, all exit 2 with file:line:column, 0 panics", cases.len());
}
