//! Criterion bench of a whole sweep: 64 concurrency points (8, 16, …, 512) of qwen3-8b on one
//! A100, 1000 random 1024/1024 prompts each, on all cores (rayon's default pool).
//! Run: `cargo bench --bench sweep`.
use criterion::{criterion_group, criterion_main, Criterion};
use servesim::spec::workload::ScenarioFile;
use servesim::sweep::grid::Grid;
use servesim::sweep::Sweep;

fn benches(c: &mut Criterion) {
    let grid = Grid::of(&[
        ("hardware", "a100-sxm4-80gb"),
        ("model", "qwen3-8b"),
        ("num-prompts", "1000"),
        ("max-concurrency", "8:512:8"),
    ]);
    let sweep = Sweep {
        file: ScenarioFile::default(),
        scenario: None,
        grid: grid.expect("grid"),
    };
    assert_eq!(sweep.grid.len(), 64);
    let mut g = c.benchmark_group("sweep");
    g.sample_size(10);
    g.bench_function("qwen3-8b_a100_64x_max-concurrency_1000_prompts", |b| {
        b.iter(|| sweep.run(None, &|| {}))
    });
    g.finish();
}

criterion_group!(sweep, benches);
criterion_main!(sweep);
