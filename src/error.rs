//! The one error type of servesim. Every variant renders as a single line that names the
//! file (or flag), the field and, where known, the line, so a user can fix the input.
use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read, written or created (`op` says which).
    #[error("{path}: cannot {op}: {reason}")]
    Io {
        path: PathBuf,
        op: &'static str,
        reason: String,
    },
    /// A file was read but does not parse (YAML/JSON syntax or schema).
    #[error("{path}{}: {reason}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Parse {
        path: PathBuf,
        line: Option<usize>,
        reason: String,
    },
    /// A value parses but is not acceptable (NaN, negative, zero, out of range).
    #[error("{source_name}: field `{field}`: {reason}")]
    Invalid {
        source_name: String,
        field: String,
        reason: String,
    },
    /// A name that is not one of the bundled ones.
    #[error("unknown {kind} `{name}`; available: {available}")]
    Unknown {
        kind: &'static str,
        name: String,
        available: String,
    },
    /// The deployment cannot run (weights do not fit, pool too small, ...).
    #[error("impossible deployment: {0}")]
    Impossible(String),
    /// A simulation stopped because it exceeded its budget.
    #[error("simulation stopped: {0}")]
    Budget(String),
    /// Anything else, already phrased for the user.
    #[error("{0}")]
    Msg(String),
    /// The command ran and printed its answer, and the answer is "none" (`plan`: no candidate
    /// meets the goal). Exits with [`Error::NO_ANSWER_EXIT`] so scripts tell it from bad input.
    #[error("{0}")]
    NoAnswer(String),
}

impl Error {
    /// Exit code of [`Error::NoAnswer`]; every other error exits 1, clap's usage errors 2.
    pub const NO_ANSWER_EXIT: i32 = 3;

    /// The process exit code this error ends the command with.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::NoAnswer(_) => Error::NO_ANSWER_EXIT,
            _ => 1,
        }
    }
}

impl Error {
    pub fn invalid(
        source: impl Into<String>,
        field: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Error::Invalid {
            source_name: source.into(),
            field: field.into(),
            reason: reason.into(),
        }
    }
    /// A file that could not be written (or a directory that could not be created).
    pub fn io_write(path: impl Into<PathBuf>, e: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            op: "write",
            reason: e.to_string(),
        }
    }
    pub fn io(path: impl Into<PathBuf>, e: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            op: "read",
            reason: e.to_string(),
        }
    }
}
