//! Ranks the whole shipped catalog for one question (issue 2 target: median under 1 ms natively).
//! Run: `cargo bench -p gpuctl-core --bench rank`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use gpuctl_core::{parse_date, preset, rank, Catalog, Job, Method, Question};

fn bench(c: &mut Criterion) {
    let catalog = Catalog::shipped();
    let mut job = Job::new(preset("qwen2.5-7b").unwrap(), Method::Qlora4);
    job.tokens = 50e6;
    job.epochs = 3.0;
    let q = Question::new(job, parse_date("2026-11-30").unwrap());
    let n = rank(catalog, &q).offers.len();
    c.bench_function(&format!("rank whole catalog, qwen2.5-7b qlora4 ({n} offers)"), |b| {
        b.iter(|| rank(black_box(catalog), black_box(&q)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
