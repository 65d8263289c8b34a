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
        &["run", "--hardware", "mi300x"],
        &["unknown hardware", "h100-sxm5-80gb", "ascend-a3"],
    );
    fails_with(
        &["run", "--model", "qwen9"],
        &["unknown model", "qwen3-8b", "deepseek-v3"],
    );
}

/// A Hugging Face id servesim does not bundle says how to give the model (its config.json),
/// not "cannot read"; a name that is a unique part of one bundled name suggests it.
#[test]
fn an_unbundled_hf_id_and_a_near_name_say_what_to_pass() {
    fails_with(
        &["run", "--model", "ibm-granite/granite-3.3-8b-instruct"],
        &[
            "neither bundled nor a file",
            "huggingface.co/ibm-granite/granite-3.3-8b-instruct/blob/main/config.json",
            "llama-3.1-70b",
        ],
    );
    fails_with(
        &["run", "--hardware", "910b"],
        &["unknown hardware profile `910b`: did you mean `ascend-910b2`?"],
    );
    // `ascend` starts two names (ascend-910b2, ascend-a3): no guess, the list.
    let err = fails_with(&["run", "--hardware", "ascend"], &["available:"]);
    assert!(!err.contains("did you mean"), "{err}");
    // Another GPU than any bundled one is not taken for its namesake.
    for other in ["H100-PCIe", "A100-40GB"] {
        fails_with(&["run", "--hardware", other], &["unknown hardware profile"]);
    }
}

#[test]
fn a_gpu_short_name_runs_its_one_bundled_profile_and_says_so() {
    // `b200` is also inside `gb200-186gb`; `h20` inside `h200-sxm-141gb`: the first token decides.
    for (short, profile) in [
        ("H100", "h100-sxm5-80gb"),
        ("NVIDIA H100 SXM", "h100-sxm5-80gb"),
        ("B200", "b200-sxm-180gb"),
        ("h20", "h20-96gb"),
        ("L40S", "l40s-48gb"),
    ] {
        let (code, out, err) = servesim(&[
            "run",
            "--hardware",
            short,
            "--model",
            "qwen3-8b",
            "--num-prompts",
            "4",
        ]);
        assert_eq!(code, 0, "{short}: {err}");
        let note = format!("hardware `{short}` is the bundled profile {profile}");
        assert!(err.contains(&note) || out.contains(&note), "{short}: {err}");
    }
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

/// `plan` prints its table either way, but a script must tell "no deployment qualifies" (3)
/// from a recommendation (0) and from bad input (1). A 0.5 ms P99 TTFT is below one prefill
/// of a 256-token prompt on any GPU, so nothing can meet it; 60 s is met by the same deployment.
#[test]
fn plan_exits_3_when_no_candidate_meets_the_goal() {
    let plan = |slo_ms: &str| {
        servesim(&[
            "plan",
            "--model",
            "qwen3-8b",
            "--hardware",
            "h100-sxm5-80gb",
            "--num-prompts",
            "50",
            "--random-input-len",
            "256",
            "--random-output-len",
            "32",
            "--target-rate",
            "2",
            "--quiet",
            "--slo-ttft-p99",
            slo_ms,
        ])
    };
    let (code, out, err) = plan("0.5");
    assert_eq!(code, 3, "{err}");
    assert!(out.contains("no candidate meets the goal"), "{out}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let (code, out, err) = plan("60000");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("best: h100-sxm5-80gb"), "{out}");
    let (code, _, err) = plan("-5");
    assert_eq!(code, 1);
    assert!(
        err.contains("--slo-ttft-p99") && err.contains("got -5"),
        "{err}"
    );
}

/// Review round s27, B7/B8: each message names its real source (the profile's field, the JSON
/// file, the flag with its lower bound) and a replay's bad flag fails once, not once per run.
#[test]
fn messages_name_the_profile_field_the_file_and_the_flag() {
    fails_with(
        &[
            "run",
            "--hardware",
            "tests/fixtures/sanity/hw-unknown-kernel-tables.yaml",
        ],
        &[
            "hardware profile h100-sxm5-80gb: field `kernel_tables`",
            "`nosuch`",
            "h100_sxm",
        ],
    );
    fails_with(
        &[
            "report",
            "--validate",
            "tests/fixtures/sanity/validation-without-runs.json",
            "-o",
            "/tmp/servesim-never-written.html",
        ],
        &["validation-without-runs.json: validation JSON: missing `runs`"],
    );
    fails_with(
        &["run", "--disaggregation", "--transfer-bandwidth", "1e-300"],
        &["--transfer-bandwidth", "[0.001, 1e6]", "got 1.000e-300"],
    );
    let log = "validation/003_6333425655433de6.txt";
    fails_with(
        &["replay", log, "--run", "99"],
        &["has 24 runs: --run 0 to 23"],
    );
    fails_with(
        &["replay", log, "--hardware", "nosuch"],
        &["unknown hardware profile `nosuch`"],
    );
}
