# Reliability beyond `cargo test` (where the crash, fault, bad-input and secret tests already run):
# cargo-fuzz runs, bounded by GPUCTL_FUZZ_SECS (default 60 s each), of
#   - the spec parser (crates/provision/fuzz, target `spec`), seeded with the bad-input corpus and infra/ specs;
#   - the local cloud's request handling (crates/sim/fuzz, target `request`).
# A crash leaves its input in crates/*/fuzz/artifacts/; add it to tests/corpus as a regression case.
(
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --version 0.13.2 --locked
    # One sanitizer target dir for every fuzz crate (shared with step 30): dependencies build once.
    fuzz_target_dir=$PWD/target/fuzz
    fuzz() { # crate target
        (
            cd "crates/$1"
            if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then tc=(+nightly); else tc=(); export RUSTC_BOOTSTRAP=1; fi
            mkdir -p "$fuzz_target_dir"
            log=$fuzz_target_dir/$1-$2.log
            if ! cargo "${tc[@]}" fuzz run --target-dir "$fuzz_target_dir" "$2" -- -max_total_time="${GPUCTL_FUZZ_SECS:-60}" -rss_limit_mb=2048 -max_len=65536 >"$log" 2>&1; then
                # The cause (a compiler's message, a crash's stack) comes before cargo's last lines.
                grep -n -E '^error|panicked|SUMMARY|No space|Killed|memory' "$log" | head -n 40 || true
                tail -n 60 "$log"
                echo "fuzzing $1/$2 failed; the whole log: $log"
                exit 1
            fi
            tail -n 20 "$log"
        )
    }
    mkdir -p crates/provision/fuzz/corpus/spec
    cp tests/corpus/specs/*.toml infra/*.toml crates/provision/fuzz/corpus/spec/
    fuzz provision spec
    fuzz sim request
)
