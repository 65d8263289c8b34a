//! `servesim._native`: the Rust half of the Python package. One function, [`execute`], runs a
//! `servesim` command through `servesim::cli::execute` (the CLI's own parser and commands) with
//! the interpreter released, so the Python API is the CLI's, flag for flag and message for
//! message; `servesim/__init__.py` turns keyword arguments into flags and JSON into dicts.
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `servesim ARGS…` and returns `(exit_code, text, stdout)`: `text` is the command's stdout
/// when the code is 0, else the one line the CLI prints on stderr (`error: …`); `stdout` is what
/// the command printed either way (for code 3, `plan`'s answer that no candidate qualifies). A
/// panic (a servesim bug) comes back as code 101 with its message instead of unwinding into the
/// interpreter.
#[pyfunction]
fn execute(py: Python<'_>, args: Vec<String>) -> (i32, String, String) {
    py.detach(
        || match catch_unwind(AssertUnwindSafe(|| servesim::cli::execute(&args))) {
            Ok(Ok(stdout)) => (0, stdout.clone(), stdout),
            Ok(Err(e)) => (e.code, e.message, e.stdout),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                (
                    101,
                    format!("error: internal error (a servesim bug, please report it): {what}"),
                    String::new(),
                )
            }
        },
    )
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(execute, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
