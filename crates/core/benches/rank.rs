//! Ranks the whole shipped catalog for one question (issue 2 target: median under 1 ms natively).
//! Run: `cargo bench -p gpuctl-core --bench rank`.
//!
//! Two figures: wall-clock (criterion's default) and, on Unix, the thread's CPU time
//! (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`) — the shared 2-core CI machine is often busy with other
//! builds, and CPU time leaves out the time spent waiting for a core.

use std::time::{Duration, Instant};

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use gpuctl_core::{parse_date, preset, rank, Catalog, Job, Method, Question};

/// Nanoseconds of CPU time this thread has used.
#[cfg(unix)]
fn on_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(not(unix))]
fn on_cpu_ns() -> Option<u64> {
    None
}

fn bench(c: &mut Criterion) {
    let catalog = Catalog::shipped();
    let mut job = Job::new(preset("qwen2.5-7b").unwrap(), Method::Qlora4);
    job.tokens = 50e6;
    job.epochs = 3.0;
    let q = Question::new(job, parse_date("2026-11-30").unwrap());
    let n = rank(catalog, &q).offers.len();
    c.bench_function(&format!("rank whole catalog, qwen2.5-7b qlora4 ({n} offers), wall clock"), |b| {
        b.iter(|| rank(black_box(catalog), black_box(&q)))
    });
    if on_cpu_ns().is_some() {
        c.bench_function(&format!("rank whole catalog, qwen2.5-7b qlora4 ({n} offers), on-CPU time"), |b| {
            b.iter_custom(|iters| {
                let (start, wall) = (on_cpu_ns().unwrap_or(0), Instant::now());
                for _ in 0..iters {
                    black_box(rank(black_box(catalog), black_box(&q)));
                }
                match on_cpu_ns() {
                    Some(end) => Duration::from_nanos(end.saturating_sub(start)),
                    None => wall.elapsed(),
                }
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
