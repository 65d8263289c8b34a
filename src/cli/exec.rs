//! The command line as a library call: [`execute`] runs one `servesim` command from its
//! arguments and returns what the binary would print on stdout, or the one line it would print
//! on stderr with its exit code, without touching the process's stdout or exit status. The
//! Python package calls it, so its API is the CLI's, flag for flag and message for message.
//! (Notes, `--stats` and progress bars still go to stderr; files a command writes are written.)
use super::{clap_error_line, dispatch, parse_cli};

/// A command that failed: the line the CLI prints on stderr and the exit code it returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// `error: …`, exactly as the CLI prints it (one line).
    pub message: String,
    /// 2 for a command-line (flag) error, 3 for an answer of "none" (`plan` with no qualifying
    /// candidate: `Error::NoAnswer`), 1 for any other failure.
    pub code: i32,
    /// What the command printed on stdout before it failed: the answer itself for code 3 (the
    /// plan's table or JSON), usually empty otherwise.
    pub stdout: String,
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
    let argv = std::iter::once("servesim").chain(args.iter().map(String::as_str));
    let cli = match parse_cli(argv) {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            return Err(CliError {
                message: clap_error_line(&e),
                code: 2,
                stdout: String::new(),
            })
        }
        Err(e) => return Ok(e.to_string()),
    };
    let mut out = Vec::new();
    match dispatch(cli.command, &mut out) {
        Ok(()) => Ok(String::from_utf8_lossy(&out).into_owned()),
        Err(e) => Err(CliError {
            message: format!("error: {e}"),
            code: e.exit_code(),
            stdout: String::from_utf8_lossy(&out).into_owned(),
        }),
    }
}
