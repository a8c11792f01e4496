//! Every file gpuctl reads from a user-given path is read with a bound (issue 13): `/dev/zero`, a FIFO
//! nobody writes to and an oversized overlay each end the real binary promptly with a clear error,
//! where a size check on metadata alone would read forever or block in open(2).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Far above what a bounded refusal takes (milliseconds), far below "hangs".
const DEADLINE: Duration = Duration::from_secs(20);

/// Runs gpuctl with `args`, killing it if it outlives [`DEADLINE`] (a hang fails the test, it
/// does not hang the suite).
fn run_bounded(args: &[&str], home: &Path) -> (Output, Duration) {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpuctl"))
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("XDG_DATA_HOME", home.join(".data"))
        .env_remove("GPUCTL_PRICE_OVERLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > DEADLINE {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "gpuctl {args:?} still running after {DEADLINE:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let elapsed = start.elapsed();
    (child.wait_with_output().unwrap(), elapsed)
}

/// Runs gpuctl with `args` and asserts a prompt usage error whose message holds every `wanted`.
fn assert_refused(args: &[&str], home: &Path, wanted: &[&str]) {
    let (out, elapsed) = run_bounded(args, home);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "usage error expected; stderr: {stderr}");
    for w in wanted {
        assert!(stderr.contains(w), "stderr lacks {w:?}: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(elapsed < DEADLINE, "took {elapsed:?}");
}

/// `plan` with an empty spec and `overlay`: the overlay is read first, so it is what gets refused.
fn assert_overlay_refused(overlay: &str, home: &Path, wanted: &[&str]) {
    let spec = home.join("spec.toml");
    std::fs::write(&spec, "").unwrap();
    assert_refused(&["plan", spec.to_str().unwrap(), "--overlay", overlay], home, wanted);
}

#[test]
fn plan_dev_zero_is_refused_not_read_forever() {
    let home = tempfile::tempdir().unwrap();
    assert_refused(
        &["plan", "/dev/zero"],
        home.path(),
        &["/dev/zero", "cannot read the spec", "character device, not a regular file"],
    );
}

#[cfg(unix)]
#[test]
fn plan_a_fifo_nobody_writes_is_refused_not_waited_on() {
    let home = tempfile::tempdir().unwrap();
    let fifo = home.path().join("spec.toml");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo (coreutils) runs");
    assert!(made.success());
    assert_refused(
        &["plan", fifo.to_str().unwrap()],
        home.path(),
        &["spec.toml", "cannot read the spec", "FIFO (named pipe), not a regular file"],
    );
}

#[test]
fn an_oversized_overlay_is_refused_with_its_path_and_the_limit() {
    let home = tempfile::tempdir().unwrap();
    let overlay = home.path().join("prices.toml");
    // Sparse: one byte over the 16 MiB limit costs no disk.
    let f = std::fs::File::create(&overlay).unwrap();
    f.set_len((16 << 20) + 1).unwrap();
    drop(f);
    assert_overlay_refused(
        overlay.to_str().unwrap(),
        home.path(),
        &["cannot read price overlay", "prices.toml", "16777217 bytes; at most 16777216 are accepted"],
    );
}

#[test]
fn an_overlay_that_is_a_device_is_refused_too() {
    let home = tempfile::tempdir().unwrap();
    assert_overlay_refused(
        "/dev/zero",
        home.path(),
        &["cannot read price overlay /dev/zero", "character device"],
    );
}
