//! Calibration: a fit is deterministic (bit for bit, whatever the thread count), keeps every
//! constant inside its bounds, recovers known constants from runs simulated with them, and
//! writes a profile whose fitted fields carry their provenance while every other line stays as
//! it was; the CLI writes the fitted profile and the cross-validation file.
mod common;
use common::synthetic::runs_on;
use servesim::calibrate::fit::{fit, FitResult, FitSpec};
use servesim::calibrate::loss::LossSpec;
use servesim::calibrate::optimize::Options;
use servesim::calibrate::param_list::parse_list;
use servesim::calibrate::params::all_params;
use servesim::calibrate::runs::RunSet;
use servesim::calibrate::{Calibration, Request};
use servesim::spec::bundled::load_hardware;
use servesim::spec::hardware::HardwareProfile;
use servesim::validate::manifest::Manifest;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Small Qwen3-8B workloads on one A100: prefill-heavy, decode-heavy and mixed.
const WORKLOADS: &[&str] = &[
    "{dataset-name: random, random-input-len: 2048, random-output-len: 32, random-range-ratio: 1, num-prompts: 48, max-concurrency: 8}",
    "{dataset-name: random, random-input-len: 128, random-output-len: 384, random-range-ratio: 1, num-prompts: 48, max-concurrency: 24}",
    "{dataset-name: random, random-input-len: 1024, random-output-len: 192, random-range-ratio: 0.5, num-prompts: 48, max-concurrency: 12}",
];

/// Runs whose "real" values are simulated with `truth`.
fn synthetic_runs(truth: &HardwareProfile) -> RunSet {
    RunSet::new(runs_on("a100-sxm4-80gb", 0, truth, WORKLOADS))
}

fn a100() -> HardwareProfile {
    let mut h = load_hardware("a100-sxm4-80gb").unwrap();
    // Calibration fits the roofline's constants: the synthetic "real" runs use it too.
    h.kernel_tables = None;
    // The start pinned at the constants' priors, so the recovery does not depend on the
    // bundled profile's latest fit.
    h.efficiency.gemm = 0.85;
    h.efficiency.memory = 0.85;
    h.efficiency.gemm_half_tokens = 64.0;
    h.overheads.graph_step_ns = 0.3e6;
    h
}

fn spec(base: &HardwareProfile, params: &str, prior: f64) -> FitSpec {
    FitSpec {
        params: parse_list(params, base).unwrap(),
        loss: LossSpec {
            prior,
            ..LossSpec::default()
        },
        options: Options::default(),
    }
}

fn fit_all(set: &RunSet, base: &HardwareProfile, spec: &FitSpec) -> FitResult {
    let runs: Vec<usize> = (0..set.runs.len()).collect();
    fit(set, base, spec, &runs, &|_, _, _| {})
}

#[test]
fn recovers_known_constants_from_synthetic_runs() {
    let mut truth = a100();
    truth.efficiency.gemm = 0.6;
    truth.efficiency.memory = 0.7;
    truth.overheads.graph_step_ns = 0.8e6;
    let set = synthetic_runs(&truth);
    let start = a100(); // gemm 0.85, memory 0.85, graph_step_ns 0.3e6
    let f = fit_all(
        &set,
        &start,
        &spec(&start, "gemm,memory,graph_step_ns", 0.0),
    );
    for (name, (got, want)) in f.names.iter().zip(f.fitted.iter().zip([0.6, 0.7, 0.8e6])) {
        assert!(
            (got / want - 1.0).abs() < 0.03,
            "{name}: fitted {got}, truth {want} ({f:?})"
        );
    }
    assert!(f.loss < f.loss_start / 100.0, "{f:?}");
    for e in f.errors.iter().flatten() {
        assert!(e.unwrap().abs() < 1.0, "in-sample error {e:?}");
    }
}

#[test]
fn fits_are_deterministic_across_thread_counts() {
    let mut truth = a100();
    truth.efficiency.memory = 0.75;
    truth.overheads.step_cpu_ns = 3.0e6;
    let set = synthetic_runs(&truth);
    let start = a100();
    let s = spec(
        &start,
        "memory,step_cpu_ns,attention.flashinfer.decode",
        1e-3,
    );
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let one = pool(1).install(|| fit_all(&set, &start, &s));
    let two = pool(2).install(|| fit_all(&set, &start, &s));
    let again = fit_all(&synthetic_runs(&truth), &start, &s);
    assert_eq!(one, two);
    assert_eq!(one, again);
    let bits = |f: &FitResult| f.fitted.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&one), bits(&again));
}

#[test]
fn fitted_constants_stay_in_bounds() {
    // The truth is unreachable: a memory efficiency of 1.4 (faster HBM than the datasheet)
    // and no fixed step cost at all; the fit must stop at the bounds.
    let mut truth = a100();
    truth.memory.bandwidth_bytes_per_s *= 1.4;
    truth.efficiency.memory = 1.0;
    truth.overheads.graph_step_ns = 0.0;
    truth.overheads.step_cpu_ns = 0.0;
    let set = synthetic_runs(&truth);
    let start = a100();
    let f = fit_all(
        &set,
        &start,
        &spec(&start, "memory,graph_step_ns,step_cpu_ns", 0.0),
    );
    let params = parse_list("memory,graph_step_ns,step_cpu_ns", &start).unwrap();
    for (p, v) in params.iter().zip(&f.fitted) {
        assert!(
            *v >= p.lo && *v <= p.hi,
            "{} = {v} outside [{}, {}]",
            p.name,
            p.lo,
            p.hi
        );
    }
    assert_eq!(
        f.fitted[0], 0.95,
        "memory efficiency capped at its physical bound"
    );
    let notes = f.at_bounds(&params);
    assert!(
        notes.iter().any(|(n, w)| n == "memory"
            && w.contains("at upper bound 0.95")
            && w.contains("a mechanism is missing")),
        "{notes:?}"
    );
    f.profile().validate("fitted").unwrap();
    // Every coordinate, however extreme, maps into the bounds.
    for p in all_params(&start) {
        for x in [-1e6, -50.0, 0.0, 50.0, 1e6] {
            let v = p.from_x(x);
            assert!(
                v >= p.lo && v <= p.hi && v.is_finite(),
                "{}({x}) = {v}",
                p.name
            );
        }
    }
}

fn b200_request(params: &str) -> Request {
    Request {
        profile: "b200-sxm-180gb".into(),
        runs: Some("004-01,004-03".into()),
        params: Some(params.into()),
        loss: LossSpec::default(),
        options: Options {
            max_iterations: 2,
            polish_steps: Vec::new(),
            ..Options::default()
        },
        // The roofline's constants (`overheads:`); a kernel-priced fit writes
        // `kernels_overheads:` (a_kernel_priced_fit_writes_the_kernels_overheads_block).
        cost_model: Some(servesim::cost::CostModel::Roofline),
    }
}

#[test]
fn written_profile_carries_provenance_and_keeps_everything_else() {
    let manifest = Manifest::load(&root().join("validation/manifest.yaml")).unwrap();
    let cal = Calibration::prepare(
        &manifest,
        &b200_request("memory,moe_layer_ns,attention.triton.decode"),
    )
    .unwrap();
    let full = cal.fit(&|_, _, _| {});
    let text = cal.fitted_yaml(&full, 0, "2025-01-02").unwrap();
    let fitted_keys = [
        "  memory:",
        "  moe_layer_ns:",
        "    triton:",
        "calibration:",
    ];
    let is_fitted = |l: &str| fitted_keys.iter().any(|k| l.starts_with(k));
    for line in text.lines().filter(|l| is_fitted(l)) {
        for want in [
            "fitted 2025-01-02",
            "004-01, 004-03",
            "soft-L1",
            "in-sample median |err|",
        ] {
            assert!(line.contains(want), "`{want}` missing from: {line}");
        }
    }
    // Every other line is the original, in order.
    let kept: Vec<&str> = text.lines().filter(|l| !is_fitted(l)).collect();
    let original: Vec<&str> = cal.texts[0].lines().filter(|l| !is_fitted(l)).collect();
    assert_eq!(kept, original);
    let back: HardwareProfile = serde_norway::from_str(&text).unwrap();
    assert_eq!(back.efficiency.memory, full.fitted[0]);
    assert_eq!(back.overheads.moe_layer_ns, full.fitted[1]);
    assert_eq!(back.efficiency.attention["triton"].decode, full.fitted[2]);
    // The bundled profile holds datasheet defaults: the summary is this fit's alone.
    let c = back.calibration.unwrap();
    let earlier = cal.bases[0].calibration.clone().unwrap();
    assert_eq!(earlier, "datasheet defaults; not fitted");
    assert!(
        c.starts_with("fitted 2025-01-02") && c.ends_with("keeps its datasheet default"),
        "{c}"
    );
}

#[test]
fn cli_writes_profile_and_cross_validation() {
    let dir = std::env::temp_dir().join(format!("servesim-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (yaml, cv) = (dir.join("b200.yaml"), dir.join("crossval.json"));
    let calibrate = |cost_model: &str| {
        common::servesim(&[
            "calibrate",
            "--profile",
            "b200-sxm-180gb",
            "--runs",
            "004-01,004-03",
            "--params",
            "memory,moe_layer_ns",
            "--max-iterations",
            "2",
            "--quiet",
            "--date",
            "2025-01-02",
            "--cost-model",
            cost_model,
            "--cross-validate",
            "--out",
            yaml.to_str().unwrap(),
            "--out-crossval",
            cv.to_str().unwrap(),
        ])
    };
    let (code, report, stderr) = calibrate("roofline");
    assert_eq!(code, 0, "{stderr}");
    assert!(report.contains("med TPOT/ITL LOO"), "{report}");
    let text = std::fs::read_to_string(&yaml).unwrap();
    assert!(text.contains("# fitted 2025-01-02"));
    let file = servesim::calibrate::crossval::CrossvalFile::load(&cv).unwrap();
    assert_eq!(file.fits.len(), 1);
    let fit = &file.fits[0];
    assert_eq!(fit.profile, "b200-sxm-180gb");
    assert_eq!(fit.runs.len(), 2);
    assert!(fit
        .runs
        .iter()
        .all(|r| r.leave_one_out.is_some() && r.leave_one_model_out.is_none()));
    // The backend is recorded, and a fit of the same runs with the other backend is kept
    // beside it rather than replacing it (the README shows both).
    assert_eq!(fit.cost_model.as_deref(), Some("roofline"));
    let (code, _, stderr) = calibrate("kernels");
    assert_eq!(code, 0, "{stderr}");
    let file = servesim::calibrate::crossval::CrossvalFile::load(&cv).unwrap();
    let models: Vec<_> = file.fits.iter().map(|f| f.cost_model.as_deref()).collect();
    assert_eq!(models.len(), 2, "{models:?}");
    assert!(models.contains(&Some("roofline")) && models.contains(&Some("kernels")));
    std::fs::remove_dir_all(&dir).ok();
}

/// One short vLLM-client case per line: (client flags after `vllm bench serve`, manifest id).
const VLLM_CASES: &[(&str, &str)] = &[
    ("--dataset-name random --random-input-len 256 --random-output-len 48 --num-prompts 16 --max-concurrency 4 --seed 1 --ignore-eos", "v-0"),
    ("--dataset-name random --random-input-len 64 --random-output-len 96 --num-prompts 16 --max-concurrency 8 --seed 2", "v-1"),
    ("--dataset-name random --random-input-len 512 --random-output-len 32 --num-prompts 12 --max-concurrency 2 --seed 3 --ignore-eos --percentile-metrics tpot,itl", "v-2"),
];

/// A tiny manifest of `vllm bench serve` blocks against a vLLM 0.11.0 server (Qwen2.5-0.5B on
/// one H100) in `dir`: each block is what servesim prints for the entry's replayed scenario
/// priced with `truth` (placeholder blocks first, so the scenarios are exactly the loader's).
fn vllm_manifest(dir: &std::path::Path, truth: &HardwareProfile) -> Manifest {
    use servesim::report::vllm::render_text;
    use servesim::simulation::vllm::run_vllm;
    let write = |blocks: &[String]| {
        let mut log = String::new();
        let mut entries = String::from("entries:\n");
        for (i, ((flags, id), block)) in VLLM_CASES.iter().zip(blocks).enumerate() {
            log.push_str(&format!(
                "$ vllm serve Qwen/Qwen2.5-0.5B-Instruct\n$ vllm bench serve --model Qwen/Qwen2.5-0.5B-Instruct {flags}\n{block}\n"
            ));
            entries.push_str(&format!(
                "  - id: {id}\n    file: runs.txt\n    run: {i}\n    log: {{model: Qwen/Qwen2.5-0.5B-Instruct, client: synthetic}}\n    \
                 hardware: {{value: h100-sxm5-80gb, assumed: synthetic}}\n    model: {{value: qwen2.5-0.5b, assumed: synthetic}}\n    \
                 server:\n      engine: {{value: vllm, assumed: synthetic}}\n      tp: {{value: 1, assumed: synthetic}}\n      \
                 vllm-version: {{value: \"0.11.0\", assumed: synthetic}}\n    other-server-flags: {{assumed: synthetic}}\n    \
                 bench-version: {{value: \"0.11.0\", assumed: synthetic}}\n"
            ));
        }
        std::fs::write(dir.join("runs.txt"), log).unwrap();
        std::fs::write(dir.join("manifest.yaml"), entries).unwrap();
        Manifest::load(&dir.join("manifest.yaml")).unwrap()
    };
    let placeholder = "============ Serving Benchmark Result ============\nSuccessful requests: 1\nBenchmark duration (s): 1\nTotal input tokens: 1\nTotal generated tokens: 1\nRequest throughput (req/s): 1\nOutput token throughput (tok/s): 1\nTotal Token throughput (tok/s): 2\n==================================================";
    let first = write(&vec![placeholder.to_string(); VLLM_CASES.len()]);
    let set = RunSet::load(&first, "h100-sxm5-80gb", "h100-sxm5-80gb", Some("v-*")).unwrap();
    let blocks: Vec<String> = set
        .runs
        .iter()
        .map(|r| {
            let mut sc = r.replay.scenario.clone();
            sc.hardware = truth.clone();
            let sim = run_vllm(&sc).unwrap();
            render_text(&sim.metrics, &sim.header, &sim.flavour)
        })
        .collect();
    write(&blocks)
}

fn vllm_request(params: &str) -> Request {
    Request {
        profile: "h100-sxm5-80gb".into(),
        runs: Some("v-*".into()),
        params: Some(params.into()),
        loss: LossSpec {
            prior: 0.0,
            ..LossSpec::default()
        },
        options: Options::default(),
        cost_model: None,
    }
}

#[test]
fn vllm_client_runs_fit_back_a_vllm_only_constant_and_score_only_what_blocks_measure() {
    use servesim::spec::engine::Engine;
    let dir = std::env::temp_dir().join(format!("servesim-calibrate-vllm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut truth = load_hardware("h100-sxm5-80gb").unwrap();
    truth.overheads.vllm_step_cpu_scale = 2.0;
    let manifest = vllm_manifest(&dir, &truth);
    // SGLang's host CPU constant is named too: vLLM runs must leave it without a coordinate.
    let cal =
        Calibration::prepare(&manifest, &vllm_request("vllm_step_cpu_scale,step_cpu_ns")).unwrap();
    let runs = &cal.set.runs;
    assert!(runs
        .iter()
        .all(|r| r.vllm_client && r.engine == Engine::Vllm));
    // Throughput is a measure only with --ignore-eos; a block without TTFT lines scores none.
    let scored: Vec<[bool; 3]> = runs.iter().map(|r| r.scored).collect();
    assert_eq!(
        scored,
        [[true, true, true], [false, true, true], [true, true, false]]
    );
    assert!(runs[2].real[2].is_nan() && runs[1].real[0] > 0.0);
    let full = cal.fit(&|_, _, _| {});
    assert_eq!(full.names, ["vllm_step_cpu_scale"], "{full:?}");
    let got = full.fitted[0];
    assert!(
        (got / 2.0 - 1.0).abs() < 0.02,
        "fitted {got}, truth 2.0 ({full:?})"
    );
    assert_eq!(
        full.profile().overheads.step_cpu_ns,
        cal.bases[0].overheads.step_cpu_ns,
        "SGLang's step_cpu_ns moved"
    );
    // In sample, the scored metrics come back; the unscored TTFT of run 2 has no error at all.
    for (k, e) in full.errors.iter().enumerate() {
        for m in 0..3 {
            match e[m] {
                Some(v) if scored[k][m] => assert!(v.abs() < 1.0, "run {k} metric {m}: {v}%"),
                v => assert_eq!(v.is_none(), runs[k].real[m].is_nan(), "run {k} metric {m}"),
            }
        }
    }
    // The loss ignores what a block lacks and what is a flag: a wrong simulated value there
    // changes no residual.
    let refs: Vec<_> = runs.iter().collect();
    let sims = servesim::calibrate::fit::simulate(&cal.set, full.profile(), &[0, 1, 2]);
    let base = cal.spec.loss.residuals(&refs, &sims);
    let mut wrong = sims.clone();
    for s in wrong.iter_mut().flatten() {
        s[0] *= 5.0;
        s[2] *= 5.0;
    }
    let moved = cal.spec.loss.residuals(&refs, &wrong);
    let changed: Vec<usize> = (0..9).filter(|&i| base[i] != moved[i]).collect();
    assert_eq!(
        changed,
        [0, 2, 5, 6],
        "residuals (run × 3 + metric) that moved"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A fit priced by the measured kernels writes the profile's `kernels_overheads:` block (made
/// when missing, right after `overheads:`, which keeps every line), with the kernel backend's
/// bounds, and leaves the roofline's `overheads:` as they were.
#[test]
fn a_kernel_priced_fit_writes_the_kernels_overheads_block() {
    use servesim::cost::CostModel;
    let manifest = Manifest::load(&root().join("validation/manifest.yaml")).unwrap();
    let request = |params: &str| Request {
        runs: Some("004-01".into()),
        options: Options {
            max_iterations: 1,
            polish_steps: Vec::new(),
            ..Options::default()
        },
        cost_model: Some(CostModel::Kernels),
        ..b200_request(params)
    };
    let mut req = request("layer_ns");
    // Start from a profile without the block, so the fit must create it.
    let text = servesim::spec::bundled::hardware_yaml("b200-sxm-180gb").unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    if let Some(i) = lines
        .iter()
        .position(|l| l.starts_with("kernels_overheads:"))
    {
        let end = (i + 1..lines.len())
            .find(|&j| !lines[j].starts_with(' '))
            .unwrap_or(lines.len());
        lines.drain(i..end);
    }
    let dir = std::env::temp_dir().join(format!("servesim-kernels-fit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("b200.yaml");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    req.profile = path.to_str().unwrap().into();
    let cal = Calibration::prepare(&manifest, &req).unwrap();
    assert_eq!(cal.kernels, [true]);
    let p = &cal.spec.params[0];
    assert_eq!(
        (p.lo, p.hi),
        (4e3, 40e3),
        "kernel backend's layer_ns bounds"
    );
    let full = cal.fit(&|_, _, _| {});
    let out = cal.fitted_yaml(&full, 0, "2025-01-02").unwrap();
    let block = out
        .split("\nkernels_overheads:\n")
        .nth(1)
        .expect("a kernels_overheads block");
    let first = block.lines().next().unwrap();
    assert!(
        first.starts_with("  layer_ns: ") && first.contains("for the kernel backend"),
        "{first}"
    );
    let back: HardwareProfile = serde_norway::from_str(&out).unwrap();
    let base: HardwareProfile = serde_norway::from_str(&cal.texts[0]).unwrap();
    assert_eq!(
        back.overheads, base.overheads,
        "the roofline's block is untouched"
    );
    assert_eq!(back.overheads_for(true).layer_ns, full.fitted[0]);
    // Every original line is kept, in order; only the block's lines are new.
    let kept: Vec<&str> = out
        .lines()
        .filter(|l| {
            !l.starts_with("kernels_overheads:")
                && !l.starts_with("  layer_ns:")
                && !l.starts_with("calibration:")
        })
        .collect();
    let original: Vec<&str> = cal.texts[0]
        .lines()
        .filter(|l| !l.starts_with("  layer_ns:") && !l.starts_with("calibration:"))
        .collect();
    assert_eq!(kept, original);
    std::fs::remove_dir_all(&dir).ok();
}

/// The tokenization rate is a cited measurement with bounds (`spec::tokenize_cost`), not a
/// fit: a default fit leaves it out, naming why, however much it moves the runs (at 1 µs per
/// token the 2048-token prompts here move with it), and `--params` can still name it.
#[test]
fn a_default_fit_keeps_the_sourced_tokenization_rate() {
    let base = a100();
    let set = synthetic_runs(&base);
    let runs: Vec<usize> = (0..set.runs.len()).collect();
    let (chosen, dropped) = servesim::calibrate::identify::default_params(
        &set,
        std::slice::from_ref(&base),
        &runs,
        &LossSpec::default(),
        false,
    );
    assert!(chosen.iter().all(|p| p.name != "tokenize_per_token_ns"));
    let why = dropped
        .iter()
        .find(|(name, _)| name == "tokenize_per_token_ns")
        .map(|(_, why)| why.as_str());
    assert!(
        why.is_some_and(|w| w.contains("opt-in") && w.contains("sourced")),
        "{dropped:?}"
    );
    let named = parse_list("tokenize_per_token_ns", &base).unwrap();
    assert_eq!(named.len(), 1);
    assert_eq!(named[0].name, "tokenize_per_token_ns");
}
