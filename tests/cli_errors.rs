//! Bad input never panics: every class of mistake gives a one-line error naming what is wrong
//! and a non-zero exit.
mod common;

use common::{fails_with, servesim};

#[test]
fn default_run_succeeds_and_prints_the_report() {
    let (code, out, _) = servesim(&["run"]);
    assert_eq!(code, 0);
    assert!(out.contains("============ Serving Benchmark Result ============"));
    assert!(out.contains("Successful requests:                     1000"));
}

#[test]
fn unknown_profile_and_model_list_the_available_names() {
    fails_with(
        &["run", "--hardware", "h800"],
        &["unknown hardware", "h100-sxm5-80gb", "ascend-a3"],
    );
    fails_with(
        &["run", "--model", "qwen9"],
        &["unknown model", "qwen3-8b", "deepseek-v3"],
    );
}

#[test]
fn malformed_yaml_names_file_and_line() {
    fails_with(
        &[
            "run",
            "--scenario",
            "tests/fixtures/bad/malformed-scenario.yaml",
        ],
        &["malformed-scenario.yaml:"],
    );
    fails_with(
        &["run", "--scenario", "tests/fixtures/bad/unknown-field.yaml"],
        &["unknown-field.yaml", "mem-fraction"],
    );
    fails_with(
        &[
            "run",
            "--scenario",
            "tests/fixtures/bad/does-not-exist.yaml",
        ],
        &["does-not-exist.yaml", "cannot read"],
    );
}

#[test]
fn zero_negative_and_nan_counts_are_rejected() {
    fails_with(
        &["run", "--num-prompts", "0"],
        &["--num-prompts", "between 1 and"],
    );
    fails_with(&["run", "--request-rate=-3"], &["request"]);
    fails_with(&["run", "--request-rate", "nan"], &["request"]);
    fails_with(
        &["run", "--mem-fraction-static", "1.5"],
        &["mem_fraction_static"],
    );
    fails_with(
        &["run", "--random-range-ratio", "2"],
        &["random_range_ratio"],
    );
    fails_with(&["run", "--tp", "0"], &["tp"]);
    fails_with(&["run", "--tp", "3"], &["not divisible by tp 3"]);
    fails_with(&["run", "--num-prompts", "2000000000000"], &["2^24"]);
}

#[test]
fn event_budget_stops_a_run_instead_of_hanging() {
    fails_with(&["run", "--max-events", "100"], &["more than 100 events"]);
}

#[test]
fn request_longer_than_context_is_reported_failed_like_bench_serving() {
    // Qwen2.5-0.5B has a 32768-token context: 40000-token prompts are rejected by the server.
    let (code, out, err) = servesim(&[
        "run",
        "--model",
        "qwen2.5-0.5b",
        "--random-input-len",
        "40000",
        "--random-range-ratio",
        "1",
        "--num-prompts",
        "3",
        "--random-output-len",
        "10",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Successful requests:                     0"),
        "{out}"
    );
}

#[test]
fn a_sweep_whose_every_point_fails_exits_non_zero() {
    let dir = std::env::temp_dir().join(format!("servesim-sweep-fail-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let (code, out, err) =
        common::servesim(&["sweep", "-o", &d, "--tp", "0", "--num-prompts", "4"]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("no point of the sweep could run"), "{err}");
    // One failing point among good ones is reported, not fatal.
    let (code, _, err) =
        common::servesim(&["sweep", "-o", &d, "--tp", "0,1", "--num-prompts", "4"]);
    assert_eq!(code, 0, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
