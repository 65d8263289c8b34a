//! The command line as a library call: [`execute`] runs one `servesim` command from its
//! arguments and returns what the binary would print on stdout, or the one line it would print
//! on stderr with its exit code, without touching the process's stdout or exit status. The
//! Python package calls it, so its API is the CLI's, flag for flag and message for message.
//! (Notes, `--stats` and progress bars still go to stderr; files a command writes are written.)
use super::{clap_error_line, dispatch, Cli};
use clap::Parser;

/// A command that failed: the line the CLI prints on stderr and the exit code it returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// `error: …`, exactly as the CLI prints it (one line).
    pub message: String,
    /// 2 for a command-line (flag) error, 1 for any other failure.
    pub code: i32,
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// Runs `servesim ARGS…` (`args` without the program name, e.g. `["run", "--tp", "2"]`) and
/// returns its stdout; `--help` and `--version` return their text.
pub fn execute(args: &[String]) -> Result<String, CliError> {
    let argv = std::iter::once("servesim".to_string()).chain(
        crate::spec::engine::normalize_vllm_short_flags(args.to_vec()),
    );
    let cli = match Cli::try_parse_from(argv) {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            return Err(CliError {
                message: clap_error_line(&e),
                code: 2,
            })
        }
        Err(e) => return Ok(e.to_string()),
    };
    let mut out = Vec::new();
    match dispatch(cli.command, &mut out) {
        Ok(()) => Ok(String::from_utf8_lossy(&out).into_owned()),
        Err(e) => Err(CliError {
            message: format!("error: {e}"),
            code: 1,
        }),
    }
}
