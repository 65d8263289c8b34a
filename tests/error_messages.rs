//! Impossible or absurd inputs get a clear, one-line error BEFORE simulating, naming the file
//! (or flag), the field and the reason; requests that only SGLang itself would reject are
//! reported failed as bench_serving reports them, with a note on stderr naming the request.
//! Each class of issue #8 has a test here; every failing run must exit non-zero with exactly
//! one line on stderr and no panic. (`tests/cli_errors.rs` has the older CLI error tests.)
mod common;

const SANITY: &str = "tests/fixtures/sanity";

use common::servesim;

/// Asserts a one-line `error: ` message containing every needle; returns it.
fn fails_with(args: &[&str], needles: &[&str]) -> String {
    let err = common::fails_with(args, needles);
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    err
}

/// Asserts success with stderr notes containing every needle; returns (stdout, stderr).
fn succeeds_noting(args: &[&str], needles: &[&str]) -> (String, String) {
    let (code, out, err) = servesim(args);
    assert_eq!(code, 0, "{args:?} should succeed: {err}");
    for n in needles {
        assert!(
            err.contains(n),
            "{args:?}: stderr `{}` lacks `{n}`",
            err.trim()
        );
    }
    (out, err)
}

fn fixture(name: &str) -> String {
    format!("{SANITY}/{name}")
}

#[test]
fn weights_larger_than_memory() {
    fails_with(
        &[
            "run",
            "--hardware",
            "a100-sxm4-80gb",
            "--model",
            "llama-3.1-70b",
        ],
        &[
            "impossible deployment",
            "llama-3.1-70b weights need 131.4 GiB per rank at tp 1",
            "a100-sxm4-80gb has 78.9 GiB free per device",
        ],
    );
}

#[test]
fn kv_pool_smaller_than_every_prompt_is_an_error() {
    fails_with(
        &[
            "run",
            "--model",
            "qwen2.5-0.5b",
            "--max-total-tokens",
            "1000",
            "--random-input-len",
            "2000",
            "--random-range-ratio",
            "1",
            "--num-prompts",
            "5",
        ],
        &[
            "impossible deployment: no request can ever run",
            "KV pool holds 1000 tokens",
            "request 0 needs 2001 (its 2000-token prompt + 1)",
            "--max-total-tokens",
        ],
    );
}

#[test]
fn kv_pool_smaller_than_some_prompts_fails_those_like_sglang() {
    let (out, err) = succeeds_noting(
        &[
            "run",
            "--model",
            "qwen2.5-0.5b",
            "--max-total-tokens",
            "2000",
            "--random-input-len",
            "2500",
            "--num-prompts",
            "50",
            "--random-output-len",
            "5",
        ],
        &[
            "note: 5 of 50 requests can never fit the KV pool of 2000 tokens",
            "reported failed, as SGLang aborts them",
            "the first is request 13: its 2447-token prompt needs 2448 tokens",
        ],
    );
    assert!(
        out.contains("Successful requests:                     45"),
        "{out}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn prompt_plus_output_beyond_context_fails_like_bench_serving() {
    let (out, _) = succeeds_noting(
        &[
            "run",
            "--model",
            "qwen2.5-0.5b",
            "--random-input-len",
            "32000",
            "--random-range-ratio",
            "1",
            "--random-output-len",
            "1000",
            "--num-prompts",
            "4",
        ],
        &[
            "note: 4 of 4 requests exceed the context length of qwen2.5-0.5b (32768 tokens)",
            "the first is request 0: prompt 32000 + output 1000 tokens",
        ],
    );
    assert!(
        out.contains("Successful requests:                     0"),
        "{out}"
    );
}

#[test]
fn tp_that_does_not_divide_the_heads() {
    fails_with(
        &["run", "--model", "qwen3-32b", "--tp", "3"],
        &[
            "--tp: field `tp`",
            "64 attention heads of qwen3-32b are not divisible by tp 3",
        ],
    );
}

#[test]
fn zero_devices() {
    fails_with(&["run", "--tp", "0"], &["--tp: field `tp`", "must be ≥ 1"]);
    fails_with(&["run", "--dp", "0"], &["--dp: field `dp`", "got 0"]);
    fails_with(
        &["run", "--hardware", &fixture("hw-zero-devices.yaml")],
        &[
            "hw-zero-devices.yaml: field `link.devices_per_node`",
            "must be ≥ 1",
        ],
    );
}

#[test]
fn nan_negative_and_infinite_numbers_in_hardware_profiles() {
    for (file, field, reason) in [
        ("hw-nan-flops.yaml", "peaks.bf16_flops_per_s", "got NaN"),
        (
            "hw-negative-latency.yaml",
            "link.latency_ns",
            "must be a finite number ≥ 0, got -5",
        ),
        ("hw-inf-overhead.yaml", "overheads.step_cpu_ns", "got inf"),
        (
            "hw-absurd-latency.yaml",
            "overheads.request_latency_ns",
            "more than 1000 s",
        ),
        (
            "hw-absurdly-slow.yaml",
            "peaks.bf16_flops_per_s",
            "implausibly small",
        ),
        (
            "hw-sm-clock-ghz.yaml",
            "peaks.sm_boost_clock_hz",
            "outside 0.1–5 GHz (the unit is Hz",
        ),
        (
            "hw-client-send.yaml",
            "overheads.client_send_ns",
            "--client-send-us",
        ),
        (
            "hw-worker-thread-scale.yaml",
            "overheads.worker_thread_cpu_scale",
            "0.5 is outside [1, 2]",
        ),
    ] {
        fails_with(
            &["run", "--hardware", &fixture(file)],
            &[&format!("{file}: field `{field}`"), reason],
        );
    }
}

#[test]
fn negative_and_huge_numbers_in_models() {
    fails_with(
        &["run", "--model", &fixture("model-negative-hidden.yaml")],
        &[
            "model-negative-hidden.yaml:7",
            "hidden_size",
            "invalid type: integer `-4096`",
        ],
    );
    fails_with(
        &["run", "--model", &fixture("model-huge-context.yaml")],
        &[
            "model-huge-context.yaml: field `context_length`",
            "between 1 and 2^40",
        ],
    );
    // A config.json whose layer count would make the reader loop for hours (found by fuzzing).
    fails_with(
        &[
            "run",
            "--model",
            "tests/fixtures/fuzz-regressions/hf_config/timeout-qwen3moe-25e12-layers.json",
        ],
        &["field `num_hidden_layers`", "must be at most 65536"],
    );
}

#[test]
fn nan_negative_infinite_and_huge_numbers_in_scenario_files() {
    for (file, field, reason) in [
        (
            "scenario-nan-mem-fraction.yaml",
            "server.mem-fraction-static",
            "got NaN",
        ),
        (
            "scenario-negative-rate.yaml",
            "client.request-rate",
            "must not be negative, got -2",
        ),
        (
            "scenario-inf-ratio.yaml",
            "client.random-range-ratio",
            "must be finite, got inf",
        ),
        (
            "scenario-negative-prompts.yaml",
            "client.num-prompts",
            "must not be negative",
        ),
        (
            "scenario-huge-input.yaml",
            "client.random-input-len",
            "beyond 2^40",
        ),
    ] {
        fails_with(
            &["run", "--scenario", &fixture(file)],
            &[&format!("{file}: field `{field}`"), reason],
        );
    }
}

/// Values that parse but fall outside their range once resolved name the scenario file's
/// field, not a flag the user never typed; the same value as a flag names the flag, and a
/// flag that overrides a file's bad value leaves nothing to report.
#[test]
fn out_of_range_scenario_values_name_the_file_not_a_flag() {
    for (file, field, reason) in [
        (
            "scenario-zero-input-len.yaml",
            "client.random-input-len",
            "got 0",
        ),
        ("scenario-big-seed.yaml", "client.seed", "got 5000000000"),
        ("scenario-zero-tp.yaml", "server.tp", "must be ≥ 1"),
        (
            "scenario-ratio-3.yaml",
            "client.random-range-ratio",
            "got 3",
        ),
        (
            "scenario-mem-fraction-1.5.yaml",
            "server.mem-fraction-static",
            "got 1.5",
        ),
    ] {
        let err = fails_with(
            &["run", "--scenario", &fixture(file)],
            &[&format!("{file}: field `{field}`"), reason],
        );
        assert!(!err.contains("error: --"), "{file}: blames a flag: {err}");
    }
    fails_with(
        &[
            "run",
            "--scenario",
            &fixture("scenario-zero-tp.yaml"),
            "--tp",
            "0",
        ],
        &["error: --tp: field `tp`"],
    );
    succeeds_noting(
        &[
            "run",
            "--scenario",
            &fixture("scenario-zero-tp.yaml"),
            "--tp",
            "1",
            "--num-prompts",
            "4",
        ],
        &[],
    );
}

#[test]
fn nan_negative_and_infinite_flags() {
    for (args, needles) in [
        (
            &["--mem-fraction-static", "nan"][..],
            &[
                "--mem-fraction-static: field `mem_fraction_static`",
                "got NaN",
            ][..],
        ),
        (
            &["--schedule-conservativeness", "inf"],
            &["--schedule-conservativeness", "finite number > 0"],
        ),
        (
            &["--random-range-ratio", "nan"],
            &[
                "--random-range-ratio: field `random_range_ratio`",
                "got NaN",
            ],
        ),
        (
            &["--request-rate=-3"],
            &["--request-rate", "not a request rate"],
        ),
        (
            &["--max-wall-seconds", "nan"],
            &["--max-wall-seconds: field `max_wall_seconds`", "got NaN"],
        ),
    ] {
        let mut a = vec!["run"];
        a.extend_from_slice(args);
        fails_with(&a, needles);
    }
}

#[test]
fn lengths_and_counts_beyond_two_to_the_forty() {
    let huge = (1u64 << 41).to_string();
    for flag in ["--max-total-tokens", "--chunked-prefill-size"] {
        fails_with(&["run", flag, &huge], &[&format!("{flag}: field"), "2^40"]);
    }
    // Client counts are refused by the flag's parser, with the flag's own upper limit.
    fails_with(
        &["run", "--random-input-len", &huge],
        &["'--random-input-len <RANDOM_INPUT_LEN>': must be between 1 and 2^40"],
    );
    // Below 2^40 but beyond what one run can hold in memory.
    for n in [huge.as_str(), "20000000"] {
        fails_with(
            &["run", "--num-prompts", n],
            &["'--num-prompts <NUM_PROMPTS>': must be between 1 and 16777216 (2^24, the simulator's memory bound)"],
        );
    }
}

#[test]
fn trace_times_beyond_the_clock_limit() {
    fails_with(
        &[
            "run",
            "--dataset-name",
            "trace",
            "--dataset-path",
            &fixture("trace-20-days.jsonl"),
            "--num-prompts",
            "2",
        ],
        &[
            "--dataset-name trace: field `timestamp`",
            "request 1 is dispatched at 1800000 s",
        ],
    );
}

#[test]
fn budgets_stop_a_run_with_a_message() {
    fails_with(
        &["run", "--max-events", "1000"],
        &["simulation stopped: more than 1000 events", "--max-events"],
    );
    fails_with(
        &[
            "run",
            "--max-wall-seconds",
            "0.000001",
            "--num-prompts",
            "20000",
        ],
        &[
            "simulation stopped: more than 0.000001 s of wall-clock time",
            "--max-wall-seconds",
        ],
    );
}

#[test]
fn endless_or_unreadable_files() {
    // /dev/zero reports size 0 and never ends: the read must stop at the input limit.
    fails_with(
        &["run", "--model", "/dev/zero"],
        &["/dev/zero", "larger than 268435456 bytes (256 MiB)"],
    );
    fails_with(
        &[
            "run",
            "--dataset-name",
            "trace",
            "--dataset-path",
            "/dev/zero",
        ],
        &["/dev/zero", "larger than 268435456 bytes (256 MiB)"],
    );
    fails_with(
        &["run", "--hardware", "tests/fixtures"],
        &["tests/fixtures: cannot read"],
    );
}

/// Runs `args`, expecting failure with exactly the one stderr line `line` and exit `code`.
fn fails_exactly(args: &[&str], code: i32, line: &str) {
    let (got_code, _out, err) = servesim(args);
    assert_eq!(
        (got_code, err.trim_end()),
        (code, line),
        "{args:?}: wrong code or error line"
    );
}

/// Issue 14, item 7: each error names the flag the user got wrong and the real limit.
#[test]
fn misleading_errors_of_issue_14_name_the_flag_and_the_real_limit() {
    // Was: "simulated time would pass 146 years ...: the hardware profile or model numbers
    // are implausible". 1000 arrivals at 1e-9 req/s span ~1e12 s; the dispatch limit is 2^50 ns.
    fails_exactly(
        &["run", "--request-rate", "1e-9"],
        1,
        "error: --request-rate: field `request_rate`: 1.000e-9 req/s spreads 1000 requests \
         over about 1.000e12 s, beyond the simulator's limit of 1125900 s (2^50 ns, 13 days) of \
         arrivals; use a rate of at least 1.78e-3 req/s or fewer --num-prompts",
    );
    // Was: "--num-prompts: no requests to simulate". bench_serving 0.5.6.post2 … 0.5.9 draws
    // outputs from randint(max(int(L*ratio), 1), L + 1), which raises for L = 0 (0.5.10 returns
    // zeros for L = 0 again).
    fails_exactly(
        &[
            "run",
            "--random-output-len",
            "0",
            "--bench-version",
            "0.5.9",
        ],
        1,
        "error: --random-output-len: field `random_output_len`: must be at least 1 with \
         bench_serving 0.5.9 (output lengths are drawn from [max(int(len * ratio), 1), \
         len]); 0 works up to --bench-version 0.5.6 and from 0.5.10",
    );
    // Was: "between 1 and 2^40"; the simulator's real bound is 2^24 requests a run.
    let num_prompts = |v: &str| {
        format!(
            "error: invalid value '{v}' for '--num-prompts <NUM_PROMPTS>': must be between 1 \
             and 16777216 (2^24, the simulator's memory bound), got {v}"
        )
    };
    fails_exactly(&["run", "--num-prompts", "0"], 2, &num_prompts("0"));
    // Was: clap's "unexpected argument '-1' found".
    fails_exactly(&["run", "--num-prompts", "-1"], 2, &num_prompts("-1"));
    fails_exactly(
        &["run", "--request-rate", "-1"],
        2,
        "error: invalid value '-1' for '--request-rate <REQUEST_RATE>': `-1` is not a request \
         rate (a number > 0 or `inf`)",
    );
    fails_exactly(
        &["run", "--seed", "-3"],
        2,
        "error: invalid value '-3' for '--seed <SEED>': must be between 0 and 4294967295 \
         (numpy seeds are 32-bit), got -3",
    );
    // Were accepted silently.
    let known = "known: 0.3.0, 0.4.0, 0.4.1, 0.4.3, 0.4.5, 0.4.6, 0.4.7, 0.4.8, 0.4.9, 0.4.10, \
                 0.5.0, 0.5.1, 0.5.2, 0.5.3, 0.5.4, 0.5.5, 0.5.6, 0.5.6.post2, 0.5.7, 0.5.8, 0.5.9, \
                 0.5.10, 0.5.11, 0.5.12, 0.5.13, 0.5.13.post1, 0.5.14, 0.5.15, 0.5.15.post1, \
                 0.5.16, 0.5.17, 0.5.18, 0.5.19, 0.5.20, 0.5.21, 0.5.22, 0.5.23";
    fails_exactly(
        &["run", "--sglang-version", "9.9.9"],
        1,
        &format!(
            "error: --sglang-version 9.9.9: field `sglang_version`: servesim models versions \
             0.3.0 to 0.5.23 (the newest modelled release is 0.5.23; later releases' server \
             defaults, scheduler and bench_serving are not checked yet); {known}"
        ),
    );
    fails_exactly(
        &["run", "--bench-version", "0.0.1"],
        1,
        &format!(
            "error: --bench-version 0.0.1: field `bench_version`: servesim models versions \
             0.3.0 to 0.5.23; {known}"
        ),
    );
    fails_with(
        &[
            "plan",
            "--target-rate",
            "1",
            "--cost-per-device-hour",
            "h900=3",
        ],
        &[
            "invalid value 'h900=3' for '--cost-per-device-hour <[HW=]USD,...>': unknown \
             hardware `h900` in `h900=3`; bundled: a100-sxm4-80gb, h100-sxm5-80gb",
        ],
    );
    // Was: "cannot read: File exists (os error 17)".
    fails_exactly(
        &["sweep", "-o", "Cargo.toml", "--tp", "1"],
        1,
        "error: sweep -o: field `out`: `Cargo.toml` is a file; -o names a directory to write \
         sweep.json, sweep.csv and the charts into",
    );
}
