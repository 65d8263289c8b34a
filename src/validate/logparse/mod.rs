//! Parser for real `python -m sglang.bench_serving` console logs as found in the wild.
//!
//! Owns: finding every `Serving Benchmark Result` block in a log, reading its numbers
//! ([`Metrics`]), attaching the client arguments from the nearest `Namespace(...)` line before
//! it ([`BenchArgs`]), the nearest preceding `launch_server` command, and telling the modern
//! client from the older fork ([`ClientStyle`]). It handles the layouts of the logs in
//! `validation/`: one run per file, several runs with server restarts and noise in between
//! (tqdm bars, `[STDERR]`, non-English text), and the older fork's markdown with 24 runs.
//!
//! Submodules: [`pyrepr`] (Python `repr` / Namespace parser), `args` ([`BenchArgs`]),
//! `metrics` ([`Metrics`]). Nothing here panics on any input; malformed logs give
//! [`Error::Parse`] naming the file, line and what is wrong.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

mod args;
mod cmdline;
mod metrics;
pub mod pyrepr;

pub use args::BenchArgs;
pub(crate) use metrics::norm as norm_label;
pub use metrics::{Metrics, REQUIRED};
pub use pyrepr::{parse_namespace, parse_namespace_fields, NamespaceField, PyValue};

/// All runs of one log file, in file order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ParsedLog {
    pub runs: Vec<ParsedRun>,
}

/// One benchmark run: a result block plus what the log says about how it was produced.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ParsedRun {
    /// 0-based position in the file.
    pub index: usize,
    /// 1-based line of the `==== Serving Benchmark Result ====` header.
    pub line: usize,
    /// 1-based line of the `Namespace(...)` the arguments come from.
    pub namespace_line: usize,
    pub args: BenchArgs,
    /// Nearest preceding line containing `launch_server`, from `python` onward, with
    /// backslash-continued lines joined.
    pub server_command: Option<String>,
    /// `NAME=value` environment assignments written before `python` on that line.
    pub server_env: BTreeMap<String, String>,
    /// 1-based line of the server command.
    pub server_line: Option<usize>,
    pub client_style: ClientStyle,
    pub metrics: Metrics,
}

/// Which generation of the client printed the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ClientStyle {
    /// `bench_serving` with `Starting warmup with N sequences...` and a
    /// `Max request concurrency` line.
    Modern,
    /// The older fork: `Starting initial single prompt test run...`, `warmup time: ..s`,
    /// no `Max request concurrency` line.
    Legacy,
}

/// Reads a log file. Bytes that are not UTF-8 are decoded lossily; a file containing NUL
/// bytes is rejected as binary.
pub fn parse_log_file(path: &Path) -> Result<ParsedLog> {
    let bytes = crate::spec::load::read_bytes(path)?;
    if bytes.contains(&0) {
        return Err(binary_error(path.to_path_buf()));
    }
    parse_log(
        &String::from_utf8_lossy(&bytes),
        &path.display().to_string(),
    )
}

/// Parses log text; `source` names the file in errors.
pub fn parse_log(text: &str, source: &str) -> Result<ParsedLog> {
    if text.contains('\0') {
        return Err(binary_error(PathBuf::from(source)));
    }
    let lines: Vec<&str> = text.split('\n').map(clean_line).collect();
    let err = |line: Option<usize>, reason: String| Error::Parse {
        path: PathBuf::from(source),
        line,
        reason,
    };

    let mut runs = Vec::new();
    // First line (0-based) after the previous result block: where this run's preamble starts.
    let mut window_start = 0;
    let mut i = 0;
    while let Some(&line) = lines.get(i) {
        if !is_header(line) {
            i += 1;
            continue;
        }
        let header = i;
        let mut reader = metrics::BlockReader::default();
        let mut closed = None;
        let mut j = header + 1;
        while let Some(&body) = lines.get(j) {
            if is_closing(body) {
                closed = Some(j);
                break;
            }
            if is_header(body) {
                break;
            }
            reader
                .push(j + 1, body)
                .map_err(|r| err(Some(j + 1), format!("in result block: {r}")))?;
            j += 1;
        }
        let Some(end) = closed else {
            let place = if j < lines.len() {
                format!("at line {} (another result block starts)", j + 1)
            } else {
                "at end of file".to_string()
            };
            let mut reason = format!(
                "result block starting at line {} ends {place} without its closing `=====` line",
                header + 1
            );
            let missing = reader.missing();
            if !missing.is_empty() {
                reason.push_str(&format!("; missing metric(s): {}", missing.join(", ")));
            }
            return Err(err(Some(header + 1), reason));
        };
        let metrics = reader
            .finish()
            .map_err(|r| err(Some(header + 1), format!("result block: {r}")))?;

        let preamble = lines.get(window_start..header).unwrap_or(&[]);
        let before = lines.get(..header).unwrap_or(&[]);
        let (namespace_line, fields, what) =
            match find_namespace(preamble, lines.get(window_start..).unwrap_or(&[])) {
                Ok((off, fields)) => (window_start + off + 1, fields, "Namespace"),
                Err((None, reason)) => {
                    // No Namespace: a quoted result with the client's command line above it.
                    let (at, fields) = find_client_command(preamble, window_start, before)
                        .map_err(|(at, r)| err(at.map(|a| a + 1), r))?
                        .ok_or_else(|| {
                            err(
                                None,
                                format!(
                                    "{reason}, nor a `sglang.bench_serving` command line before it"
                                ),
                            )
                        })?;
                    (at + 1, fields, "client command")
                }
                Err((Some(off), reason)) => return Err(err(Some(window_start + off + 1), reason)),
            };
        let args = BenchArgs::from_fields(&fields)
            .map_err(|r| err(Some(namespace_line), format!("{what}: {r}")))?;

        let server = find_server(lines.get(..header).unwrap_or(&[]));
        let client_style = style(preamble, &metrics);
        runs.push(ParsedRun {
            index: runs.len(),
            line: header + 1,
            namespace_line,
            args,
            server_command: server.as_ref().map(|s| s.command.clone()),
            server_env: server.as_ref().map(|s| s.env.clone()).unwrap_or_default(),
            server_line: server.map(|s| s.line + 1),
            client_style,
            metrics,
        });
        window_start = end + 1;
        i = end + 1;
    }
    if runs.is_empty() {
        return Err(err(None, "no bench_serving result block found".into()));
    }
    Ok(ParsedLog { runs })
}

fn binary_error(path: PathBuf) -> Error {
    Error::Parse {
        path,
        line: None,
        reason: "binary file (contains NUL bytes), not a bench_serving log".into(),
    }
}

/// Drops a trailing `\r` (CRLF files) and keeps only what follows a carriage return inside
/// the line (what a terminal shows after tqdm redraws).
fn clean_line(line: &str) -> &str {
    let line = line.trim_end_matches('\r');
    match line.rfind('\r') {
        Some(k) => line.get(k + 1..).unwrap_or(line),
        None => line,
    }
}

fn is_header(line: &str) -> bool {
    line.contains("Serving Benchmark Result") && line.contains("===")
}

fn is_closing(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 10 && t.chars().all(|c| c == '=')
}

/// Byte offset of `Namespace(` in `line` when it starts a word.
fn namespace_at(line: &str) -> Option<usize> {
    let k = line.find("Namespace(")?;
    let before = line.get(..k)?.chars().next_back();
    match before {
        Some(c) if c.is_alphanumeric() || c == '_' || c == '.' => None,
        _ => Some(k),
    }
}

/// Offset of the chosen line in the preamble and its fields, or (offset, reason).
type NsResult = std::result::Result<(usize, Vec<NamespaceField>), (Option<usize>, String)>;

/// The Namespace nearest before a block, within `preamble` (the lines since the previous
/// block). The plain `Namespace(` line wins over `benchmark_args=Namespace(` (it carries the
/// resolved port and model). Returns (offset in preamble, fields), or (offset, reason).
fn find_namespace(preamble: &[&str], following: &[&str]) -> NsResult {
    let mut plain = None;
    let mut args_line = None;
    for (off, line) in preamble.iter().enumerate().rev() {
        let Some(k) = namespace_at(line) else {
            continue;
        };
        let prefixed = line
            .get(..k)
            .unwrap_or("")
            .trim_end()
            .ends_with("benchmark_args=");
        if prefixed {
            args_line.get_or_insert(off);
        } else {
            plain = Some(off);
            break;
        }
    }
    let Some(off) = plain.or(args_line) else {
        return Err((
            None,
            "result block has no `Namespace(...)` line before it (since the previous block)".into(),
        ));
    };
    let line = preamble.get(off).copied().unwrap_or("");
    match parse_namespace_fields(line) {
        Ok(f) => Ok((off, f)),
        Err(first) => {
            // A Namespace wrapped over several lines: retry with the following lines joined.
            let end = preamble.len().min(off + 64);
            let joined = following.get(off..end).unwrap_or(&[]).join("\n");
            parse_namespace_fields(&joined)
                .map(|f| (off, f))
                .map_err(|_| (Some(off), format!("cannot parse Namespace: {first}")))
        }
    }
}

/// What [`find_client_command`] returns: the 0-based line and fields, or (line, reason).
type CommandResult =
    std::result::Result<Option<(usize, Vec<NamespaceField>)>, (Option<usize>, String)>;

/// The nearest `sglang.bench_serving` command before a block (0-based line in the file and
/// its fields): in the block's preamble (which starts at file line `offset`), else anywhere
/// before it (a command quoted once above several results). Backslash-continued lines are
/// joined.
fn find_client_command(preamble: &[&str], offset: usize, before: &[&str]) -> CommandResult {
    let last = |lines: &[&str]| {
        lines
            .iter()
            .rposition(|l| cmdline::client_command_at(l).is_some())
    };
    let Some(idx) = last(preamble).map(|i| i + offset).or_else(|| last(before)) else {
        return Ok(None);
    };
    let first = before.get(idx).copied().unwrap_or("").trim_end();
    let full = join_continuations(first.to_string(), before, idx);
    let args = cmdline::client_command_at(&full).unwrap_or("");
    cmdline::command_fields(args)
        .map(|f| Some((idx, f)))
        .map_err(|r| (Some(idx), format!("client command: {r}")))
}

/// `full` (line `idx` of `lines`) with the shell continuation lines after it joined on
/// (`... \` newline `--tp 8`).
fn join_continuations(mut full: String, lines: &[&str], idx: usize) -> String {
    let mut next = idx + 1;
    while full.ends_with('\\') {
        let Some(cont) = lines.get(next) else { break };
        full.pop();
        full = format!("{} {}", full.trim_end(), cont.trim());
        next += 1;
    }
    full
}

struct Server {
    line: usize,
    command: String,
    env: BTreeMap<String, String>,
}

/// The nearest line before the block that mentions `launch_server`.
fn find_server(before: &[&str]) -> Option<Server> {
    let (idx, line) = before
        .iter()
        .enumerate()
        .rev()
        .find(|(_, l)| l.contains("launch_server"))?;
    let full = join_continuations(line.trim().to_string(), before, idx);
    let (prefix, command) = match full.find("python") {
        Some(k) => (full.get(..k).unwrap_or(""), full.get(k..).unwrap_or("")),
        None => ("", full.as_str()),
    };
    let env = prefix
        .split_whitespace()
        .filter_map(|tok| tok.split_once('='))
        .filter(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    Some(Server {
        line: idx,
        command: command.trim().to_string(),
        env,
    })
}

fn style(preamble: &[&str], metrics: &Metrics) -> ClientStyle {
    let legacy_marker = preamble.iter().any(|l| {
        l.contains("Starting initial single prompt test run")
            || l.trim().starts_with("warmup time:")
    });
    let modern_marker = preamble.iter().any(|l| l.contains("Starting warmup with"));
    let has_cap_line = metrics
        .all
        .keys()
        .chain(metrics.text.keys())
        .any(|k| k.to_lowercase().contains("request concurrency"));
    if legacy_marker || (!modern_marker && !has_cap_line) {
        ClientStyle::Legacy
    } else {
        ClientStyle::Modern
    }
}
