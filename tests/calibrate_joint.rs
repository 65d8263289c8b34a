//! Joint calibration: several profiles fitted together, shared constants one value for all,
//! per-hardware constants one per profile. A joint fit recovers known constants from runs
//! simulated with them where a per-hardware fit (or a wrong sharing) cannot; a
//! leave-one-hardware-out fold trains on exactly the other hardware's runs and predicts the
//! held-out hardware at its priors; the CLI writes every profile and the LOHO errors.
mod common;
use common::synthetic::runs_on;
use servesim::calibrate::crossval::{groups, train_runs, CrossvalFile, FoldKind};
use servesim::calibrate::fit::{fit, fit_joint, FitResult, FitSpec};
use servesim::calibrate::loss::LossSpec;
use servesim::calibrate::optimize::Options;
use servesim::calibrate::param_list::parse_list_of;
use servesim::calibrate::params::{Param, Sharing};
use servesim::calibrate::runs::{FitRun, RunSet};
use servesim::spec::bundled::load_hardware;
use servesim::spec::hardware::HardwareProfile;
use std::path::PathBuf;

/// Qwen3-8B workloads: prefill-heavy, decode-heavy and mixed (A100), and one decode-heavy
/// workload (H100), on which a fixed per-step cost and HBM efficiency are hard to tell apart.
const A100_WORKLOADS: &[&str] = &[
    "{dataset-name: random, random-input-len: 2048, random-output-len: 32, random-range-ratio: 1, num-prompts: 48, max-concurrency: 8}",
    "{dataset-name: random, random-input-len: 128, random-output-len: 384, random-range-ratio: 1, num-prompts: 48, max-concurrency: 24}",
    "{dataset-name: random, random-input-len: 1024, random-output-len: 192, random-range-ratio: 0.5, num-prompts: 48, max-concurrency: 12}",
];
const H100_WORKLOADS: &[&str] = &[
    "{dataset-name: random, random-input-len: 128, random-output-len: 256, random-range-ratio: 1, num-prompts: 32, max-concurrency: 16}",
];

/// The truth: HBM efficiency 0.70 on A100 and 0.90 on H100 (per hardware), and one fixed
/// decode-step cost of 1.5 ms on both (shared), far from every starting value.
const TRUTH_MEMORY: [f64; 2] = [0.70, 0.90];
const TRUTH_GRAPH_STEP_NS: f64 = 1.5e6;

/// The two profiles, priced by the roofline: HBM efficiency is a roofline constant (the
/// measured-kernel backend, their default, reads kernel times instead).
fn bases() -> Vec<HardwareProfile> {
    ["a100-sxm4-80gb", "h100-sxm5-80gb"]
        .map(|n| {
            let mut h = load_hardware(n).unwrap();
            h.kernel_tables = None;
            // Every start at the constants' priors, so the test does not depend on the
            // bundled profiles' latest fit.
            h.efficiency.gemm = 0.8;
            h.efficiency.gemm_half_tokens = 64.0;
            h.efficiency.memory = 0.85;
            h.overheads.graph_step_ns = 0.3e6;
            h
        })
        .to_vec()
}

fn truth_runs() -> (RunSet, Vec<FitRun>, Vec<FitRun>) {
    let mut truth = bases();
    for (h, t) in truth.iter_mut().enumerate() {
        t.efficiency.memory = TRUTH_MEMORY[h];
        t.overheads.graph_step_ns = TRUTH_GRAPH_STEP_NS;
    }
    let a = runs_on("a100-sxm4-80gb", 0, &truth[0], A100_WORKLOADS);
    let b = runs_on("h100-sxm5-80gb", 1, &truth[1], H100_WORKLOADS);
    let all = a.iter().chain(&b).cloned().collect();
    (RunSet::new(all), a, b)
}

fn spec(params: &str, profiles: &[HardwareProfile]) -> FitSpec {
    FitSpec {
        params: parse_list_of(params, profiles).unwrap(),
        loss: LossSpec {
            prior: 0.0,
            ..LossSpec::default()
        },
        options: Options::default(),
    }
}

fn all(set: &RunSet) -> Vec<usize> {
    (0..set.runs.len()).collect()
}

fn value(f: &FitResult, name: &str) -> f64 {
    let i = f
        .names
        .iter()
        .position(|n| n == name)
        .unwrap_or_else(|| panic!("{name} not in {:?}", f.names));
    f.fitted[i]
}

fn close(got: f64, want: f64, tol: f64) -> bool {
    (got / want - 1.0).abs() < tol
}

#[test]
fn joint_fit_recovers_shared_and_per_hardware_constants() {
    let (set, _, h100_runs) = truth_runs();
    let b = bases();
    let s = spec("memory,graph_step_ns@shared", &b);
    assert_eq!(s.params[0].sharing, Sharing::PerHardware);
    assert_eq!(s.params[1].sharing, Sharing::Shared);
    let f = fit_joint(&set, &b, &s, &all(&set), &|_, _, _| {});
    assert_eq!(
        f.names,
        [
            "memory@a100-sxm4-80gb",
            "memory@h100-sxm5-80gb",
            "graph_step_ns@shared"
        ]
    );
    assert!(
        close(value(&f, "memory@a100-sxm4-80gb"), 0.70, 0.03),
        "{f:?}"
    );
    assert!(
        close(value(&f, "memory@h100-sxm5-80gb"), 0.90, 0.03),
        "{f:?}"
    );
    assert!(
        close(value(&f, "graph_step_ns@shared"), TRUTH_GRAPH_STEP_NS, 0.05),
        "{f:?}"
    );
    // The shared value is the same in both fitted profiles.
    assert_eq!(
        f.profiles[0].overheads.graph_step_ns,
        f.profiles[1].overheads.graph_step_ns
    );
    for e in f.errors.iter().flatten() {
        assert!(e.unwrap().abs() < 1.5, "in-sample error {e:?}");
    }

    // A per-hardware fit on the H100 run alone, with the per-step cost left at its profile
    // value, pushes the missing 1.2 ms into HBM efficiency (≈ 0.74 instead of 0.90).
    let h100 = RunSet::new(
        h100_runs
            .into_iter()
            .map(|mut r| {
                r.hw = 0;
                r
            })
            .collect(),
    );
    let alone = fit(
        &h100,
        &b[1],
        &spec("memory", &b[1..]),
        &all(&h100),
        &|_, _, _| {},
    );
    assert!(!close(alone.fitted[0], 0.90, 0.08), "{alone:?}");

    // A wrong sharing (one HBM efficiency for both GPUs) cannot reproduce both.
    let wrong = fit_joint(
        &set,
        &b,
        &spec("memory@shared,graph_step_ns@shared", &b),
        &all(&set),
        &|_, _, _| {},
    );
    let worst = wrong
        .errors
        .iter()
        .filter_map(|e| e[1])
        .map(f64::abs)
        .fold(0.0, f64::max);
    assert!(
        worst > 4.0,
        "one shared memory efficiency fits both: {wrong:?}"
    );
    // It pushes the per-step cost to its physical floor, stops there and says so.
    let wrong_spec = spec("memory@shared,graph_step_ns@shared", &b);
    for (s, v) in wrong.slots.iter().zip(&wrong.fitted) {
        let p = &wrong_spec.params[s.param];
        assert!(p.lo <= *v && *v <= p.hi, "{} = {v}", p.name);
    }
    let notes = wrong.at_bounds(&wrong_spec.params);
    assert!(
        notes
            .iter()
            .any(|(n, w)| n == "graph_step_ns@shared" && w.contains("a mechanism is missing")),
        "{notes:?}"
    );
}

#[test]
fn leave_one_hardware_out_trains_on_exactly_the_other_hardware() {
    let (set, a100_runs, h100_runs) = truth_runs();
    let b = bases();
    let s = FitSpec {
        options: Options {
            max_iterations: 4,
            polish_steps: Vec::new(),
            ..Options::default()
        },
        ..spec("memory,graph_step_ns@shared", &b)
    };
    let runs = all(&set);
    let folds = groups(&set, &runs, FoldKind::Hardware);
    assert_eq!(folds, vec![vec![0, 1, 2], vec![3]]);
    for held in &folds {
        let train = train_runs(&runs, held);
        let mut both: Vec<usize> = train.iter().chain(held).copied().collect();
        both.sort_unstable();
        assert_eq!(both, runs);
        let h = set.runs[held[0]].hw;
        assert!(held.iter().all(|&r| set.runs[r].hw == h));
        assert!(train.iter().all(|&r| set.runs[r].hw != h));
    }
    // Hold out the H100: its runs' recorded values must not matter to the fold's fit.
    let train = train_runs(&runs, &folds[1]);
    let f = fit_joint(&set, &b, &s, &train, &|_, _, _| {});
    let garbled = RunSet::new(
        a100_runs
            .iter()
            .cloned()
            .chain(h100_runs.iter().cloned().map(|mut r| {
                r.real = r.real.map(|v| v * 7.0);
                r
            }))
            .collect(),
    );
    let g = fit_joint(&garbled, &b, &s, &train, &|_, _, _| {});
    assert_eq!(f, g);
    // Nothing is fitted on the H100; its HBM efficiency sits at the prior (the datasheet
    // judgement 0.85, not the profile's value nor the truth) and it gets the shared value.
    assert_eq!(f.names, ["memory@a100-sxm4-80gb", "graph_step_ns@shared"]);
    let memory: &Param = &s.params[0];
    assert_eq!(f.profiles[1].efficiency.memory, memory.prior);
    assert_eq!(memory.prior, 0.85);
    assert_eq!(
        f.profiles[1].overheads.graph_step_ns,
        value(&f, "graph_step_ns@shared")
    );
}

#[test]
fn cli_joint_fit_writes_every_profile_and_loho() {
    let dir = std::env::temp_dir().join(format!("servesim-joint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cv = dir.join("crossval.json");
    // 001 is the manifest's H100 run, 003-01 an A100 run: two models on two profiles.
    let (code, report, stderr) = common::servesim(&[
        "calibrate",
        "--profile",
        "a100-sxm4-80gb,h100-sxm5-80gb",
        "--runs",
        "003-01,001",
        "--params",
        "memory,request_latency_ns",
        "--max-iterations",
        "1",
        "--quiet",
        "--date",
        "2025-01-02",
        "--cross-validate",
        "--out-dir",
        dir.to_str().unwrap(),
        "--out-crossval",
        cv.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    for want in [
        "jointly",
        "request_latency_ns@shared",
        "memory@h100-sxm5-80gb",
        "med TPOT/ITL LOHO",
    ] {
        assert!(report.contains(want), "`{want}` missing: {report}");
    }
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let (a, h) = (read("a100-sxm4-80gb.yaml"), read("h100-sxm5-80gb.yaml"));
    let line = |t: &str, key: &str| {
        t.lines()
            .find(|l| l.trim_start().starts_with(key) && l.contains("# fitted 2025-01-02"))
            .unwrap()
            .to_string()
    };
    let value = |l: &str| {
        l.split(':')
            .nth(1)
            .unwrap()
            .split('#')
            .next()
            .unwrap()
            .trim()
            .to_string()
    };
    let (la, lh) = (
        line(&a, "request_latency_ns:"),
        line(&h, "request_latency_ns:"),
    );
    assert_eq!(
        value(&la),
        value(&lh),
        "a shared constant differs:\n{la}\n{lh}"
    );
    assert!(la.contains("one value shared with h100-sxm5-80gb"), "{la}");
    assert!(line(&h, "memory:").contains("per hardware: this profile's runs 001"));
    let file = CrossvalFile::load(&cv).unwrap();
    let fit = &file.fits[0];
    assert_eq!(fit.profiles, ["a100-sxm4-80gb", "h100-sxm5-80gb"]);
    assert!(fit
        .runs
        .iter()
        .all(|r| r.leave_one_hardware_out.is_some() && r.hardware.is_some()));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn crossval_files_without_loho_still_read() {
    // The committed file predates joint fits: it must load, and its entries have no LOHO.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let file = CrossvalFile::load(&root.join("validation/crossval.json")).unwrap();
    assert!(!file.fits.is_empty());
}

#[test]
fn cli_rejects_bad_joint_requests_in_one_line() {
    let run = |args: &[&str]| {
        let (code, _, stderr) = common::servesim(&[&["calibrate"], args].concat());
        assert_ne!(code, 0, "{args:?} succeeded");
        stderr
    };
    let both = [
        "--profile",
        "a100-sxm4-80gb,h100-sxm5-80gb",
        "--runs",
        "003-01,001",
    ];
    let e = run(&[&both[..], &["--params", "memory@everywhere"]].concat());
    assert!(e.contains("@everywhere") && e.contains("@shared"), "{e}");
    let e = run(&[&both[..], &["--params", "memory", "--out", "x.yaml"]].concat());
    assert!(e.contains("--out-dir"), "{e}");
    let e = run(&["--profile", "a100-sxm4-80gb,a100-sxm4-80gb"]);
    assert!(e.contains("listed twice"), "{e}");
    // A profile no selected run uses cannot be fitted jointly.
    let e = run(&["--profile", "a100-sxm4-80gb,h20-96gb", "--params", "memory"]);
    assert!(
        e.contains("h20-96gb") && e.contains("joint fit needs runs"),
        "{e}"
    );
    let e = run(&[
        &both[..],
        &["--params", "memory", "--cross-validate", "--folds", "lopo"],
    ]
    .concat());
    assert!(e.contains("lopo"), "{e}");
}
