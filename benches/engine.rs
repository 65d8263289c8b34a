//! Criterion benches of whole simulations (wall time per simulated benchmark run): issue 7's
//! (a) seed 003's Qwen3-8B ShareGPT run and (b) 2000 × 1024/1024, plus the default scenario.
//! The 1M-request scale bench (c) is in `benches/scale.rs`. Also seed 001's kernel-backend
//! resolve, built and from the memo, and (group `cpu`, issue 12's speed target) seed 001 as
//! `servesim replay` builds it, timed in CPU time of the benchmarking thread: the simulation of
//! the resolved scenario, and resolve + simulation from the parsed log.
//! Run: `cargo bench --bench engine` (`-- cpu/` for the CPU-time group only).
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, Criterion};
use servesim::cost::kernels::db::KernelDb;
use servesim::cost::kernels::KernelCost;
use servesim::cost::select::build;
use servesim::cost::{BatchShape, StepCost};
use servesim::simulation::{run, Scenario};
use servesim::spec::server::ServerFlags;
use servesim::spec::workload::{ClientFlags, ScenarioFile};
use servesim::validate::logparse::{parse_log_file, ParsedRun};
use servesim::validate::manifest::Manifest;
use servesim::validate::replay::{scenario_for, Overrides};
use std::path::Path;

/// CPU time of the calling thread, ns (Linux's `/proc/thread-self/schedstat`, first field):
/// what the simulation itself costs, without the time the thread waits for a core on a
/// shared machine (wall time on the 2-core development machine under ~7 parallel builds runs
/// 3–4× the CPU time). Falls back to wall time where the file does not exist.
struct ThreadCpu(WallTime);

fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

impl Measurement for ThreadCpu {
    type Intermediate = (Option<u64>, std::time::Instant);
    type Value = f64;
    fn start(&self) -> Self::Intermediate {
        (thread_cpu_ns(), std::time::Instant::now())
    }
    fn end(&self, (cpu, wall): Self::Intermediate) -> f64 {
        match (cpu, thread_cpu_ns()) {
            (Some(a), Some(b)) => b.saturating_sub(a) as f64,
            _ => wall.elapsed().as_nanos() as f64,
        }
    }
    fn add(&self, a: &f64, b: &f64) -> f64 {
        a + b
    }
    fn zero(&self) -> f64 {
        0.0
    }
    fn to_f64(&self, v: &f64) -> f64 {
        *v
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        self.0.formatter()
    }
}

/// Run `run` of `validation/<log>` as `servesim replay` builds it (its manifest entry, no
/// command-line overrides), with the parsed run.
fn replayed(log: &str, run: usize) -> (ParsedRun, Option<servesim::validate::manifest::Entry>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("validation");
    let parsed = parse_log_file(&dir.join(log)).expect("log");
    let manifest = Manifest::load(&dir.join("manifest.yaml")).expect("manifest");
    let entry = manifest.find(log, run).cloned();
    (parsed.runs[run].clone(), entry)
}

const SEED001: &str = "001_60470e8ed6145649.txt";

/// Seed 001 (the shortest recorded run: 0.59 s of benchmark, so 10,000× real time is 59 µs):
/// the simulation of the resolved scenario (the deployment from the process's memo, as every
/// run of a deployment after the first), and resolve + simulation from the parsed log (the
/// hardware and model YAML parsed again each time; what `validate` pays per run).
fn cpu_benches(c: &mut Criterion<ThreadCpu>) {
    let mut g = c.benchmark_group("cpu");
    g.sample_size(50);
    let (parsed, entry) = replayed(SEED001, 0);
    let resolve = || {
        scenario_for(&parsed, entry.as_ref(), &Overrides::default(), SEED001)
            .expect("replay")
            .scenario
    };
    let sc = resolve();
    g.bench_function("seed001_simulate", |b| b.iter(|| run(&sc).unwrap()));
    g.bench_function("seed001_resolve_simulate", |b| {
        b.iter(|| run(&resolve()).unwrap())
    });
    g.finish();
}

fn scenario(hw: &str, model: &str, server: ServerFlags, client: ClientFlags) -> Scenario {
    Scenario::resolve(
        &ScenarioFile::default(),
        Some(hw),
        Some(model),
        &server,
        &client,
    )
    .expect("scenario")
}

fn random(n: u64, input: u64, output: u64, ratio: f64) -> ClientFlags {
    ClientFlags {
        num_prompts: Some(n),
        random_input_len: Some(input),
        random_output_len: Some(output),
        random_range_ratio: Some(ratio),
        ..Default::default()
    }
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("simulate");
    g.sample_size(20);
    // Issue 2 / 7(b): 2000 × 1024/1024 on qwen3-8b / a100, no concurrency cap, SGLang 0.5.1.
    let sc = scenario(
        "a100-sxm4-80gb",
        "qwen3-8b",
        ServerFlags {
            sglang_version: Some("0.5.1".parse().unwrap()),
            ..Default::default()
        },
        random(2000, 1024, 1024, 1.0),
    );
    g.bench_function("qwen3-8b_a100_2000x1024x1024", |b| {
        b.iter(|| run(&sc).unwrap())
    });
    // The bundled default scenario.
    let default = scenario(
        "h100-sxm5-80gb",
        "qwen3-8b",
        ServerFlags::default(),
        ClientFlags {
            max_concurrency: Some(64),
            ..random(1000, 1024, 1024, 0.0)
        },
    );
    g.bench_function("default_qwen3-8b_h100_1000_cap64", |b| {
        b.iter(|| run(&default).unwrap())
    });
    // Seed 001 as `servesim replay` builds it (0.59 s of benchmark), in wall time.
    let (parsed, entry) = replayed(SEED001, 0);
    let seed001 = scenario_for(&parsed, entry.as_ref(), &Overrides::default(), SEED001)
        .expect("replay")
        .scenario;
    g.bench_function("seed001_qwen2.5-0.5b_h100_200x64x16", |b| {
        b.iter(|| run(&seed001).unwrap())
    });
    resolve_benches(&mut g, &seed001);
    // Issue 7(a): seed 003's Qwen3-8B ShareGPT run (validation/003_*.txt run 0, as
    // `servesim replay` builds it): 10000 prompts from the bundled ShareGPT table, rate inf,
    // seed 1, bench_serving 0.3.0 against SGLang 0.5.1 on one A100.
    let sharegpt = scenario(
        "a100-sxm4-80gb",
        "qwen3-8b",
        ServerFlags {
            sglang_version: Some("0.5.1".parse().unwrap()),
            ..Default::default()
        },
        ClientFlags {
            backend: Some("sglang".into()),
            dataset_name: Some("sharegpt".into()),
            num_prompts: Some(10_000),
            request_rate: Some(f64::INFINITY),
            seed: Some(1),
            bench_version: Some("0.3.0".parse().unwrap()),
            ..Default::default()
        },
    );
    g.bench_function("seed003_qwen3-8b_a100_sharegpt_10000", |b| {
        b.iter(|| run(&sharegpt).unwrap())
    });
    g.finish();
}

/// Resolving seed 001's kernel-backend deployment (issue 12's speed target; its run is
/// dominated by resolve): building it (the own tables, the envelope's ladder instances, forced
/// by pricing one eager and one graph step; the tables are indexed and the ladder profiles
/// parsed by the first iteration), and fetching it again from the process-wide memo, as every
/// replay after the first does.
fn resolve_benches(
    g: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
    sc: &Scenario,
) {
    let (hw, model, server) = (&sc.hardware, &sc.model, &sc.server);
    let prefill = BatchShape {
        prefill_reqs: 4,
        prefill_tokens: 256,
        prefill_attn_work: 4.0 * 64.0 * 32.0,
        prefill_attn_work_windowed: 4.0 * 64.0 * 32.0,
        prefill_kv_tokens: 256,
        ..Default::default()
    };
    let decode = BatchShape {
        decode_reqs: 8,
        decode_ctx_sum: 8 * 70,
        graph_bs: Some(8),
        decode_width: 1,
        ..Default::default()
    };
    g.bench_function("resolve_build_seed001_kernels_h100", |b| {
        b.iter(|| {
            let db = KernelDb::bundled("h100_sxm", server.version).unwrap();
            let cost = KernelCost::new(hw, model, server, &db)
                .unwrap()
                .with_envelope(hw, model, server, |w, s| {
                    KernelDb::bundled(w.kernel_tables.as_deref().unwrap_or_default(), s.version)
                });
            (cost.step_time(&prefill), cost.step_time(&decode))
        })
    });
    g.bench_function("resolve_memo_seed001_kernels_h100", |b| {
        b.iter(|| {
            build(hw, model, server, &sc.cost)
                .unwrap()
                .step_time(&decode)
        })
    });
}

criterion_group!(engine, benches);
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ThreadCpu(WallTime));
    targets = cpu_benches
}
criterion_main!(engine, cpu);
