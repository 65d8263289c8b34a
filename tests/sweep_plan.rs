//! `sweep`, `plan`, `merge`: determinism across thread counts, the plan's knee against a
//! brute-force grid, clear errors for invalid grids, and sharded sweeps merging back into the
//! unsharded result (library and command line).
use servesim::plan::{plan, Goal, PlanSpec, Prices, Slo};
use servesim::spec::workload::ScenarioFile;
use servesim::sweep::grid::Grid;
use servesim::sweep::merge::merge;
use servesim::sweep::output::SweepFile;
use servesim::sweep::shard::Shard;
use servesim::sweep::Sweep;
use std::path::{Path, PathBuf};
mod common;
use common::servesim;

fn grid(flags: &[(&str, &str)]) -> Grid {
    Grid::of(flags).expect("valid grid")
}

fn sweep(flags: &[(&str, &str)]) -> Sweep {
    Sweep {
        file: ScenarioFile::default(),
        scenario: None,
        grid: grid(flags),
    }
}

/// A small model whose TPOT grows with the batch: 0.5B on an H100, short requests.
const SMALL: [(&str, &str); 6] = [
    ("hardware", "h100-sxm5-80gb"),
    ("model", "qwen2.5-0.5b"),
    ("num-prompts", "200"),
    ("random-input-len", "512"),
    ("random-output-len", "256"),
    ("max-total-tokens", "50000"),
];

fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    SMALL.iter().chain(extra).copied().collect()
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
        .install(f)
}

#[test]
fn sweep_output_is_identical_with_one_thread_and_many() {
    let s = sweep(&with(&[
        ("max-concurrency", "1..64"),
        ("random-range-ratio", "0.5,1"),
    ]));
    assert_eq!(s.grid.len(), 14);
    let one = in_pool(1, || s.run(None, &|| {}));
    let many = in_pool(8, || s.run(None, &|| {}));
    let default = s.run(None, &|| {});
    for other in [&many, &default] {
        assert_eq!(one.to_json(), other.to_json());
        assert_eq!(one.to_csv(), other.to_csv());
    }
    assert!(one.rows.iter().all(|r| r.error.is_none()), "{:?}", one.rows);
    assert_eq!(
        one.rows.iter().map(|r| r.index).collect::<Vec<_>>(),
        (0..14).collect::<Vec<_>>()
    );
    // Charts are deterministic too.
    let svg = |f: &SweepFile| {
        servesim::sweep::charts::charts(f)
            .into_iter()
            .map(|(_, c)| c.svg())
            .collect::<Vec<_>>()
    };
    assert_eq!(svg(&one), svg(&many));
    // The grid order: the last flag varies fastest.
    assert_eq!(one.rows[1].params["random-range-ratio"], "1");
    assert_eq!(one.rows[2].params["max-concurrency"], "2");
}

#[test]
fn plan_finds_the_tpot_knee_within_one_grid_step() {
    const SLO_TPOT_MS: f64 = 3.3;
    let caps = "1..128";
    // Brute force: the largest cap whose closed-loop p99 TPOT meets the SLO.
    let brute = sweep(&with(&[("max-concurrency", caps)])).run(None, &|| {});
    let tpot: Vec<(u64, f64)> = brute
        .rows
        .iter()
        .map(|r| {
            (
                r.params["max-concurrency"].parse().unwrap(),
                r.metric("p99_tpot_ms").unwrap(),
            )
        })
        .collect();
    let knee = tpot
        .iter()
        .rposition(|&(_, t)| t <= SLO_TPOT_MS)
        .expect("some cap meets the SLO");
    assert!(
        knee > 0 && knee + 1 < tpot.len(),
        "the SLO should put the knee inside the grid: {tpot:?}"
    );
    let spec = PlanSpec {
        file: ScenarioFile::default(),
        grid: grid(&with(&[("max-concurrency", caps)])),
        slo: Slo {
            tpot_p99_ms: Some(SLO_TPOT_MS),
            ..Default::default()
        },
        goal: Goal::TargetRate(2.0),
        prices: "1.0".parse::<Prices>().unwrap(),
        tolerance: 0.02,
        gpu_budget: None,
    };
    let p = plan(&spec, &|| {}).unwrap();
    let best = p.best().expect("a deployment meets the SLO");
    let chosen: u64 = best.params["max-concurrency"].parse().unwrap();
    let pos = tpot.iter().position(|&(c, _)| c == chosen).unwrap();
    assert!(
        pos.abs_diff(knee) <= 1,
        "plan chose max-concurrency {chosen}, brute-force knee {} ({tpot:?})",
        tpot[knee].0
    );
    // Caps above the knee lose because the SLO fails with the cap full.
    let text = servesim::plan::render::text(&p);
    assert!(text.contains("with the cap full"), "{text}");
    assert!(text.contains("best"), "{text}");
    // Budget mode ranks by sustainable rate: same answer here (one price for all).
    let budget = PlanSpec {
        goal: Goal::BudgetPerHour(5.0),
        ..spec
    };
    let pb = plan(&budget, &|| {}).unwrap();
    assert_eq!(pb.best().unwrap().index, best.index);
}

/// Plan over the grid `flags` for 1.15× `one` (one replica's capacity) under a 2 s p99 TTFT,
/// at `prices` per GPU-hour, with at most `gpu_budget` GPUs.
fn scale_out_plan(
    flags: &[(&str, &str)],
    one: f64,
    prices: &str,
    gpu_budget: Option<u64>,
) -> PlanSpec {
    PlanSpec {
        file: ScenarioFile::default(),
        grid: grid(flags),
        slo: Slo {
            ttft_p99_ms: Some(2000.0),
            ..Default::default()
        },
        goal: Goal::TargetRate(1.15 * one),
        prices: prices.parse::<Prices>().unwrap(),
        tolerance: 0.02,
        gpu_budget,
    }
}

#[test]
fn plan_scales_out_with_replicas_when_one_cannot_keep_up() {
    // A server-side running cap makes one replica saturate early; --dp adds replicas.
    let flags = with(&[("max-running-requests", "16")]);
    let capacity = |dp: &'static str| {
        let mut f = flags.clone();
        f.push(("dp", dp));
        sweep(&f).point(0).metric("request_throughput").unwrap()
    };
    let (one, two) = (capacity("1"), capacity("2"));
    assert!(two > 1.3 * one, "dp 2 should add capacity: {one} vs {two}");
    let mut f = flags.clone();
    f.push(("dp", "1,2,4"));
    let spec = scale_out_plan(&f, one, "1.0", None);
    let p = plan(&spec, &|| {}).unwrap();
    let best = p.best().expect("some dp meets the target");
    assert_eq!(
        best.params["dp"],
        "2",
        "{}",
        servesim::plan::render::text(&p)
    );
    assert_eq!(best.cost_per_hour, Some(2.0));
    let text = servesim::plan::render::text(&p);
    assert!(text.contains("below the"), "dp 1 saturates: {text}");
}

#[test]
fn plan_keeps_to_the_gpu_budget_and_reports_the_per_gpu_frontier_and_the_launch_command() {
    // dp 1 cannot keep up with 1.15× its capacity; dp 2 and dp 4 can (see above).
    let mut f = with(&[("max-running-requests", "16")]);
    let one = sweep(&f).point(0).metric("request_throughput").unwrap();
    f.push(("dp", "1,2,4"));
    let spec = scale_out_plan(&f, one, "3.0", Some(2));
    let p = plan(&spec, &|| {}).unwrap();
    let dp4 = p.candidates.iter().find(|c| c.params["dp"] == "4").unwrap();
    assert_eq!(
        dp4.error.as_deref(),
        Some("uses 4 devices, over --gpu-budget 2")
    );
    assert!(
        dp4.search.is_none(),
        "over-budget candidates are not searched"
    );
    let best = p.best().expect("dp 2 fits the budget");
    assert_eq!(best.params["dp"], "2");
    // Its frontier point: 2 devices at $3/h each.
    let e = best.efficiency.as_ref().expect("met the SLOs at some rate");
    let probe = best.search.as_ref().unwrap().best.as_ref().unwrap();
    assert_eq!(e.devices, 2);
    assert!((e.tok_s_per_gpu * 2.0 - probe.output_throughput).abs() < 1e-9);
    assert!((e.tok_s_per_user * probe.mean_tpot_ms - 1000.0).abs() < 1e-9);
    let per_m = e.cost_per_1m_output_tokens_usd.unwrap();
    assert!((per_m * probe.output_throughput * 3600.0 / 1e6 - 6.0).abs() < 1e-9);
    // The frontier: no candidate beats a frontier point on both axes, and every other
    // candidate is beaten by one on the frontier.
    let pts: Vec<_> = p
        .candidates
        .iter()
        .filter_map(|c| c.efficiency.clone())
        .collect();
    let beats = |a: &servesim::sweep::frontier::EfficiencyPoint,
                 b: &servesim::sweep::frontier::EfficiencyPoint| {
        a.tok_s_per_gpu >= b.tok_s_per_gpu
            && a.tok_s_per_user >= b.tok_s_per_user
            && (a.tok_s_per_gpu > b.tok_s_per_gpu || a.tok_s_per_user > b.tok_s_per_user)
    };
    assert!(!p.per_gpu_frontier.is_empty());
    for q in &pts {
        let on = p.per_gpu_frontier.contains(&q.index);
        assert_eq!(on, !pts.iter().any(|o| beats(o, q)), "point {}", q.index);
    }
    // The launch commands of the recommendation, pinned to what was simulated.
    let l = p.launch.as_ref().expect("a recommendation has commands");
    assert!(
        l.server.starts_with(
            "python -m sglang.launch_server --model-path Qwen/Qwen2.5-0.5B-Instruct --tp 1 --dp 2 "
        ) && l.server.contains(" --max-running-requests 16")
            && l.server.contains(" --max-total-tokens 50000"),
        "{}",
        l.server
    );
    assert!(
        l.client.starts_with("python -m sglang.bench_serving --backend sglang --model Qwen/Qwen2.5-0.5B-Instruct --dataset-name random --num-prompts 200 --random-input-len 512 --random-output-len 256")
            && l.client.contains(&format!("--request-rate {}", 1.15 * one)),
        "{}",
        l.client
    );
    let text = servesim::plan::render::text(&p);
    assert!(
        text.contains("Per-GPU frontier") && text.contains(&l.server),
        "{text}"
    );
    // A budget of one GPU leaves only dp 1, which cannot keep up: no recommendation.
    let tight = plan(
        &PlanSpec {
            gpu_budget: Some(1),
            ..spec
        },
        &|| {},
    )
    .unwrap();
    assert!(tight.best().is_none() && tight.launch.is_none());
}

#[test]
fn plan_errors_are_clear() {
    let base = PlanSpec {
        file: ScenarioFile::default(),
        grid: grid(&[("hardware", "ascend-a3"), ("model", "qwen2.5-0.5b")]),
        slo: Slo {
            tpot_p99_ms: Some(50.0),
            ..Default::default()
        },
        goal: Goal::TargetRate(1.0),
        prices: Prices::default(),
        tolerance: 0.02,
        gpu_budget: None,
    };
    let e = plan(&base, &|| {}).unwrap_err().to_string();
    assert!(
        e.contains("no price per device-hour for ascend-a3")
            && e.contains("--cost-per-device-hour"),
        "{e}"
    );
    let no_slo = PlanSpec {
        slo: Slo::default(),
        ..base.clone()
    };
    assert!(plan(&no_slo, &|| {})
        .unwrap_err()
        .to_string()
        .contains("at least one SLO"));
    let with_rate = PlanSpec {
        grid: grid(&[("request-rate", "1,2")]),
        ..base
    };
    assert!(plan(&with_rate, &|| {})
        .unwrap_err()
        .to_string()
        .contains("drop --request-rate"));
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("servesim-sweep-plan-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn invalid_grids_give_clear_one_line_errors() {
    let out = tmp("invalid");
    let o = out.to_str().unwrap();
    for (flag, value, needle) in [
        ("--max-concurrency", "", "empty list"),
        ("--max-concurrency", "1,,4", "empty item"),
        ("--max-concurrency", "64..8", "descending range"),
        ("--request-rate", "8:1:1", "descending range"),
        ("--request-rate", "1:8:0", "step must be > 0"),
        ("--tp", "1,x", "--tp"),
        ("--disable-radix-cache", "maybe", "true or false"),
    ] {
        let (code, _, err) = servesim(&["sweep", "-o", o, flag, value]);
        assert_ne!(code, 0, "{flag} {value:?} should fail");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(
            err.contains(needle),
            "{flag} {value:?}: `{}` lacks `{needle}`",
            err.trim()
        );
    }
    let (code, _, err) = servesim(&["sweep", "-o", o, "--max-concurency", "1,2"]);
    assert_eq!(code, 2);
    assert!(err.contains("--max-concurency"), "{err}");
    let e = Grid::parse(&[("max-concurency".into(), "1".into())]).unwrap_err();
    assert!(
        e.to_string().contains("unknown flag `--max-concurency`"),
        "{e}"
    );
    let (code, _, err) = servesim(&["sweep", "-o", o, "--shard", "4/4"]);
    assert_eq!(code, 2);
    assert!(err.contains("numbered from 0"), "{err}");
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn merged_shards_equal_the_unsharded_sweep() {
    let s = sweep(&with(&[("max-concurrency", "1,4,16"), ("seed", "1:3:1")]));
    let full = s.run(None, &|| {});
    let shards: Vec<(String, SweepFile)> = (0..4)
        .map(|i| {
            let shard = Shard { index: i, count: 4 };
            (format!("shard {i}"), s.run(Some(shard), &|| {}))
        })
        .collect();
    assert_eq!(merge(&shards).unwrap().to_json(), full.to_json());
    // Overlap, missing shards and incompatible grids are rejected.
    let twice = vec![shards[0].clone(), shards[0].clone()];
    assert!(merge(&twice)
        .unwrap_err()
        .to_string()
        .contains("given twice"));
    let missing = &shards[..3];
    assert!(merge(missing).unwrap_err().to_string().contains("missing"));
    let other = sweep(&with(&[("max-concurrency", "1,4,8")]))
        .run(Some(Shard { index: 3, count: 4 }), &|| {});
    let mixed = vec![
        shards[0].clone(),
        shards[1].clone(),
        shards[2].clone(),
        ("other".to_string(), other),
    ];
    assert!(merge(&mixed)
        .unwrap_err()
        .to_string()
        .contains("different sweeps"));
    let with_full = vec![("full".to_string(), full.clone()), shards[0].clone()];
    assert!(merge(&with_full).is_err());

    // The same through the command line, through the JSON files.
    let dir = tmp("merge");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = vec!["sweep".into(), "--quiet".into()];
        for (f, v) in with(&[("max-concurrency", "1,4,16"), ("seed", "1:3:1")]) {
            a.push(format!("--{f}"));
            a.push(v.into());
        }
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, out, err) = servesim(&refs);
        assert_eq!(code, 0, "{err}");
        out
    };
    let d = |n: &str| dir.join(n).to_string_lossy().into_owned();
    let summary = run(&["-o", &d("full")]);
    assert!(summary.contains("Pareto frontier"), "{summary}");
    for i in 0..3 {
        run(&["-o", &d(&format!("s{i}")), "--shard", &format!("{i}/3")]);
    }
    let (code, _, err) = servesim(&[
        "merge",
        &d("s0/sweep.json"),
        &d("s1/sweep.json"),
        &d("s2/sweep.json"),
        "-o",
        &d("all.json"),
        "--dir",
        &d("merged"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        read(&dir.join("all.json")),
        read(&dir.join("full/sweep.json"))
    );
    for f in ["sweep.csv", "tpot.svg", "pareto.svg"] {
        assert_eq!(
            read(&dir.join("merged").join(f)),
            read(&dir.join("full").join(f)),
            "{f}"
        );
    }
    let (code, _, err) = servesim(&[
        "merge",
        &d("s0/sweep.json"),
        &d("s0/sweep.json"),
        "-o",
        &d("x.json"),
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("given twice"), "{err}");
}

#[test]
fn cli_plan_prints_a_ranked_table() {
    let (code, out, err) = servesim(&[
        "plan",
        "--quiet",
        "--hardware",
        "h100-sxm5-80gb,h200-sxm-141gb",
        "--model",
        "qwen2.5-0.5b",
        "--num-prompts",
        "100",
        "--random-input-len",
        "256",
        "--random-output-len",
        "64",
        "--max-concurrency",
        "8,32",
        "--slo-ttft-p99",
        "1000",
        "--slo-tpot-p99",
        "10",
        "--target-rate",
        "5",
        "--cost-per-device-hour",
        "h100-sxm5-80gb=2,h200-sxm-141gb=4",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("best: h100-sxm5-80gb"), "{out}");
    assert!(out.contains("costs $4.00/h vs $2.00/h (+100%)"), "{out}");
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("h200-sxm-141gb") && l.contains("costs $4.00/h"))
            .count(),
        2,
        "{out}"
    );
}

#[test]
fn run_writes_timeline_csv_and_charts() {
    let dir = tmp("timeline");
    let csv = dir.join("t.csv");
    let plot = dir.join("plots");
    let (code, _, err) = servesim(&[
        "run",
        "--model",
        "qwen2.5-0.5b",
        "--num-prompts",
        "40",
        "--timeline",
        csv.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = read(&csv);
    assert!(text.starts_with(servesim::report::timeline::CSV_HEADER));
    assert!(text.lines().count() > 40, "one line per step");
    for f in ["requests", "batch_tokens", "kv_usage", "throughput"] {
        assert!(read(&plot.join(format!("{f}.svg"))).contains("<svg"), "{f}");
    }
}

/// Issue 14, big work: the up-front estimate counts the steps a run takes (checked against a
/// real run at concurrency 1, where every decode step is one token), a run over the memory
/// limit is refused in one line naming `--force` before anything is simulated, and the same
/// prompts batched hold a fraction of it (memory grows with steps, not tokens).
#[test]
fn big_runs_are_estimated_and_refused_over_the_memory_limit() {
    use servesim::simulation::estimate::{estimate, event_cap};
    use servesim::simulation::{run, Scenario, DEFAULT_MAX_EVENTS};
    use servesim::spec::workload::{ClientFlags, ScenarioFlags};
    let flags = |n: u64, cap: u64| ScenarioFlags {
        hardware: Some("h100-sxm5-80gb".into()),
        model: Some("qwen2.5-0.5b".into()),
        client: ClientFlags {
            num_prompts: Some(n),
            max_concurrency: Some(cap),
            random_input_len: Some(128),
            random_output_len: Some(64),
            random_range_ratio: Some(1.0),
            ..Default::default()
        },
        ..Default::default()
    };
    let sc = Scenario::from_flags(&ScenarioFile::default(), &flags(300, 1)).unwrap();
    let e = estimate(&sc);
    let real = run(&sc).unwrap().stats;
    // 300 requests × 64 output tokens, one token per step, plus one prefill step each.
    assert_eq!(e.output_tokens, 300.0 * 64.0);
    let rel = (e.steps - real.steps as f64).abs() / real.steps as f64;
    assert!(
        rel < 0.05,
        "estimated {} steps, ran {}",
        e.steps,
        real.steps
    );
    let big = Scenario::from_flags(&ScenarioFile::default(), &flags(2_000_000, 1)).unwrap();
    let (eb, batched) = (
        estimate(&big),
        estimate(&Scenario::from_flags(&ScenarioFile::default(), &flags(2_000_000, 256)).unwrap()),
    );
    assert!(eb.over_memory_limit() && !batched.over_memory_limit());
    assert!(batched.steps * 100.0 < eb.steps);
    // 128M steps at concurrency 1 fit under the scaled event cap (the fixed 200M would not
    // hold 1M × 515-token outputs); an explicit --max-events is kept.
    assert!(event_cap(&big) as f64 >= 4.0 * 128e6 && event_cap(&big) >= DEFAULT_MAX_EVENTS);
    let mut capped = big.clone();
    capped.max_events = 1000;
    assert_eq!(event_cap(&capped), 1000);
    // The command line refuses before simulating, in one line, and names --force.
    let (code, out, err) = servesim(&["run", "--max-concurrency", "1", "--num-prompts", "1000000"]);
    assert_ne!(code, 0);
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--force") && err.contains("limit 4.3 GB"),
        "{err}"
    );
}

/// The client-bound warning of `client::send` reaches the sweep's summary (it is kept per
/// row in sweep.json too).
#[test]
fn a_client_bound_sweep_says_so() {
    let out_dir = tmp("client-bound");
    let (code, out, err) = servesim(&[
        "sweep",
        "--quiet",
        "--no-charts",
        "-o",
        out_dir.to_str().unwrap(),
        "--hardware",
        "h100-sxm5-80gb",
        "--model",
        "qwen2.5-0.5b",
        "--num-prompts",
        "20",
        "--random-input-len",
        "64",
        "--random-output-len",
        "8",
        "--client-model",
        "real",
        "--client-send-us",
        "50000",
        "--max-concurrency",
        "4,8",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("warning: 2 points are client-bound (first: point 0: client-bound:"),
        "{out}"
    );
    let json = std::fs::read_to_string(out_dir.join("sweep.json")).unwrap();
    assert!(json.contains("\"client_bound\": \"client-bound:"), "{json}");
}
