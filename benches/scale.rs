//! Criterion bench of issue 7(c): one million requests, Poisson arrivals at 400 req/s, random
//! lengths (input 512, output 128, `--random-range-ratio` 0: uniform on [1, 512] × [0, 128]),
//! on qwen3-8b behind 8 data-parallel H100 replicas; plus the same load at 10k and 100k
//! requests, to show time growing linearly with the run. Ten samples each, flat sampling.
//! Run: `cargo bench --bench scale` (about a minute).
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use servesim::simulation::{run, Scenario};
use servesim::spec::server::ServerFlags;
use servesim::spec::workload::{ClientFlags, ScenarioFile};
use std::time::Duration;

fn scenario(num_prompts: u64) -> Scenario {
    Scenario::resolve(
        &ScenarioFile::default(),
        Some("h100-sxm5-80gb"),
        Some("qwen3-8b"),
        &ServerFlags {
            dp: Some(8),
            ..Default::default()
        },
        &ClientFlags {
            num_prompts: Some(num_prompts),
            request_rate: Some(400.0),
            random_input_len: Some(512),
            random_output_len: Some(128),
            random_range_ratio: Some(0.0),
            ..Default::default()
        },
    )
    .expect("scenario")
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("scale");
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_secs(1));
    for (name, n, secs) in [
        ("poisson400_dp8_h100_10k", 10_000, 2),
        ("poisson400_dp8_h100_100k", 100_000, 5),
        ("poisson400_dp8_h100_1M", 1_000_000, 25),
    ] {
        let sc = scenario(n);
        g.measurement_time(Duration::from_secs(secs));
        g.bench_function(name, |b| b.iter(|| run(&sc).unwrap()));
    }
    g.finish();
}

criterion_group!(scale, benches);
criterion_main!(scale);
