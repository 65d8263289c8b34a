//! `servesim::cli::execute` (the library entry point the Python package calls) returns exactly
//! what the binary prints on stdout, and on failure the binary's one stderr line and exit code.
mod common;

use common::servesim;
use servesim::cli::{execute, CliError};

fn exec(args: &[&str]) -> Result<String, CliError> {
    execute(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

#[test]
fn output_equals_the_binary_stdout() {
    for args in [
        &["run", "--num-prompts", "200", "--output-format", "json"][..],
        &[
            "run",
            "--tp",
            "2",
            "--max-concurrency",
            "8",
            "--num-prompts",
            "100",
        ],
        &["profiles"],
        &[
            "replay",
            "validation/001_60470e8ed6145649.txt",
            "--format",
            "json",
        ],
    ] {
        let (code, out, _) = servesim(args);
        assert_eq!(code, 0, "{args:?}");
        assert_eq!(exec(args).expect("succeeds"), out, "{args:?}");
    }
    let help = exec(&["run", "--help"]).expect("help is not an error");
    assert!(help.contains("--max-concurrency"));
}

#[test]
fn errors_equal_the_binary_stderr_line_and_code() {
    for args in [
        &["run", "--hardware", "h800"][..],
        &["run", "--tp", "0"],
        &["run", "--no-such-flag"],
        &["run", "--num-prompts", "many"],
        &["sweep", "-o", "target/never", "--tp", "4:1"],
        &["frobnicate"],
    ] {
        let (code, _, err) = servesim(args);
        let e = exec(args).expect_err("fails");
        assert_eq!(
            (e.message.as_str(), e.code),
            (err.trim_end(), code),
            "{args:?}"
        );
        assert!(e.message.starts_with("error: ") && !e.message.contains('\n'));
    }
}

/// The line bench_serving prints for the concurrency cap (`{:<40} {:<10}`).
fn cap_line(out: &str) -> &str {
    out.lines()
        .find(|l| l.starts_with("Max request concurrency:"))
        .map_or("", str::trim_end)
}

#[test]
fn a_client_flag_overrides_one_field_of_the_bundled_default() {
    // Issue 14: `run --seed 1` used to drop the whole client section, and with it the bundled
    // `--max-concurrency 64` (mean TTFT 57 ms → 16 s). One flag now changes one field.
    let out = exec(&["run", "--seed", "1", "--num-prompts", "80"]).expect("runs");
    assert_eq!(
        cap_line(&out),
        "Max request concurrency:                 64"
    );
    // A finite rate is an open-loop benchmark: bench_serving has no cap unless one is given.
    let out = exec(&["run", "--request-rate", "8", "--num-prompts", "80"]).expect("runs");
    assert_eq!(
        cap_line(&out),
        "Max request concurrency:                 not set"
    );
    let out = exec(&[
        "run",
        "--request-rate",
        "8",
        "--max-concurrency",
        "4",
        "--num-prompts",
        "80",
    ])
    .expect("runs");
    assert_eq!(cap_line(&out), "Max request concurrency:                 4");
    // bench_serving: `Semaphore(max_concurrency) if max_concurrency else None`: 0 is no cap.
    let out = exec(&["run", "--max-concurrency", "0", "--num-prompts", "80"]).expect("runs");
    assert_eq!(
        cap_line(&out),
        "Max request concurrency:                 not set"
    );
}
