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
