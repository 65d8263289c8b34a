//! The validation manifest (`validation/manifest.yaml`): one entry per recorded benchmark
//! result, saying which log and run it is, what the log states, and which profile, model,
//! server flags and client version servesim uses for it. Every setting is a [`Fact`]: a value
//! plus either `stated:` (where the log says so) or `assumed:` (a one-line reason, because the
//! log does not). An entry selects settings only; there is no field for a correction factor.
//!
//! Parsing is strict (`deny_unknown_fields`); schema errors carry serde's line and field path,
//! semantic errors (a fact with no or two reasons, a duplicate run, an unknown server flag)
//! name the entry's line.
use crate::error::{Error, Result};
use crate::spec::load::{from_yaml_str, read_text};
use crate::spec::server::ServerFlags;
use crate::spec::version::Version;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Server flags every entry must give explicitly (stated or assumed).
pub const REQUIRED_SERVER_FLAGS: &[&str] = &["tp", "sglang-version"];

/// What a vLLM-engine entry (`server.engine: vllm`) gives instead of [`REQUIRED_SERVER_FLAGS`].
pub const REQUIRED_VLLM_SERVER_FLAGS: &[&str] = &["tp", "vllm-version"];

/// Why a setting has its value: the log says so, or servesim assumes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reason {
    /// Where the log states it (e.g. "--tp 2 in the launch_server line").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated: Option<String>,
    /// Why it is assumed, one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumed: Option<String>,
}

impl Reason {
    /// True when the value is an assumption.
    pub fn is_assumed(&self) -> bool {
        self.assumed.is_some()
    }

    /// The reason text, whichever kind it is.
    pub fn text(&self) -> &str {
        self.stated
            .as_deref()
            .or(self.assumed.as_deref())
            .unwrap_or("")
    }

    fn check(&self) -> std::result::Result<(), String> {
        let one_line = |s: &str| !s.trim().is_empty() && !s.contains('\n');
        match (&self.stated, &self.assumed) {
            (Some(s), None) | (None, Some(s)) if one_line(s) => Ok(()),
            (Some(_), None) | (None, Some(_)) => {
                Err("the reason must be one non-empty line".into())
            }
            (None, None) => Err("needs `stated:` or `assumed:` with a one-line reason".into()),
            (Some(_), Some(_)) => Err("has both `stated:` and `assumed:`; pick one".into()),
        }
    }
}

/// A value with its reason: `{value: ..., stated: "..."}` or `{value: ..., assumed: "..."}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fact<T> {
    pub value: T,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumed: Option<String>,
}

impl<T> Fact<T> {
    /// The fact's [`Reason`].
    pub fn reason(&self) -> Reason {
        Reason {
            stated: self.stated.clone(),
            assumed: self.assumed.clone(),
        }
    }
}

/// What the log itself says about the run (checked against the parsed log by the tests).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stated {
    /// The Namespace's `model=` exactly as printed.
    pub model: String,
    /// The client's arguments, as [`super::replay::workload_summary`] writes them.
    pub client: String,
}

/// One benchmark result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Entry {
    /// Short unique id shown in tables (e.g. `003-05`).
    pub id: String,
    /// Log file name, relative to the manifest's directory.
    pub file: String,
    /// 0-based index of the result block in the file.
    pub run: usize,
    pub log: Stated,
    /// Bundled hardware profile name (or a profile YAML path, relative to the manifest).
    pub hardware: Fact<String>,
    /// Bundled model name (or a model YAML / config.json path, relative to the manifest).
    pub model: Fact<String>,
    /// SGLang `launch_server` flags by servesim's names (`tp`, `sglang-version`,
    /// `attention-backend`, ...); `tp` and `sglang-version` are required.
    pub server: BTreeMap<String, Fact<serde_norway::Value>>,
    /// Why every flag not listed in `server` is SGLang's default.
    pub other_server_flags: Reason,
    /// bench_serving version whose behaviour and layout apply (for a log of `vllm bench
    /// serve` blocks: the vLLM version of that client).
    pub bench_version: Fact<Version>,
    /// Why the run is replayed but kept out of the error medians (one line: a setting of the
    /// run servesim does not model faithfully). Absent: the run counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_of_medians: Option<String>,
    /// Earlier entries run on the same server before this one (same seed, no cache flush, no
    /// restart), by id, oldest first: their prompts are radix-cache hits (`--prior-runs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior_runs: Option<Fact<Vec<String>>>,
    /// 1-based line of the entry in the manifest (filled in by [`Manifest::parse`]).
    #[serde(skip)]
    pub line: usize,
}

impl Entry {
    /// The server flags of this entry as `servesim run` would take them.
    pub fn server_flags(&self) -> Result<ServerFlags> {
        let map: serde_norway::Mapping = self
            .server
            .iter()
            .map(|(k, f)| (serde_norway::Value::String(k.clone()), f.value.clone()))
            .collect();
        serde_norway::from_value(serde_norway::Value::Mapping(map)).map_err(|e| {
            Error::invalid(
                format!("manifest entry {}", self.id),
                "server",
                e.to_string(),
            )
        })
    }

    /// Every reason of the entry, by setting name (`hardware`, `server.tp`, ...).
    pub fn reasons(&self) -> BTreeMap<String, Reason> {
        let mut out = BTreeMap::new();
        out.insert("hardware".to_string(), self.hardware.reason());
        out.insert("model".to_string(), self.model.reason());
        out.insert("bench-version".to_string(), self.bench_version.reason());
        out.insert(
            "other-server-flags".to_string(),
            self.other_server_flags.clone(),
        );
        for (k, f) in &self.server {
            out.insert(format!("server.{k}"), f.reason());
        }
        if let Some(p) = &self.prior_runs {
            out.insert("prior-runs".to_string(), p.reason());
        }
        out
    }

    /// The engine the entry selects: `vllm` when `server.engine` says so, else `sglang`.
    pub fn engine(&self) -> &str {
        match self.server.get("engine").map(|f| &f.value) {
            Some(serde_norway::Value::String(e)) if e == "vllm" => "vllm",
            _ => "sglang",
        }
    }

    /// The settings whose value is assumed, by name.
    pub fn assumed(&self) -> Vec<String> {
        self.reasons()
            .into_iter()
            .filter(|(_, r)| r.is_assumed())
            .map(|(k, _)| k)
            .collect()
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    entries: Vec<Entry>,
}

/// A parsed, checked manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The manifest file (for error messages).
    pub path: PathBuf,
    /// Directory the entries' `file` names are relative to.
    pub dir: PathBuf,
    pub entries: Vec<Entry>,
}

impl Manifest {
    /// Reads and checks a manifest file.
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = read_text(path)?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Manifest::parse(&text, path, &dir)
    }

    /// Parses manifest text; `path` names it in errors, `dir` resolves the log files.
    pub fn parse(text: &str, path: &Path, dir: &Path) -> Result<Manifest> {
        let file: ManifestFile = from_yaml_str(text, path)?;
        let mut entries = file.entries;
        let lines = entry_lines(text);
        let mut ids = BTreeSet::new();
        let mut runs = BTreeSet::new();
        for (i, e) in entries.iter_mut().enumerate() {
            e.line = lines.get(i).copied().unwrap_or(0);
            let err = |field: &str, reason: String| Error::Parse {
                path: path.to_path_buf(),
                line: Some(e.line).filter(|&l| l > 0),
                reason: format!("entry {} (`{}`): field `{field}`: {reason}", i + 1, e.id),
            };
            if e.id.trim().is_empty() {
                return Err(err("id", "must not be empty".into()));
            }
            if !ids.insert(e.id.clone()) {
                return Err(err("id", "duplicate id".into()));
            }
            if e.file.is_empty() || e.file.contains(['/', '\\']) {
                return Err(err(
                    "file",
                    "must be a file name in the manifest's directory".into(),
                ));
            }
            if !runs.insert((e.file.clone(), e.run)) {
                return Err(err(
                    "run",
                    format!("{} run {} is listed twice", e.file, e.run),
                ));
            }
            for (name, reason) in e.reasons() {
                reason.check().map_err(|r| err(&name, r))?;
            }
            if let Some(why) = &e.out_of_medians {
                if why.trim().is_empty() || why.contains('\n') {
                    return Err(err("out-of-medians", "must be one non-empty line".into()));
                }
            }
            let required = match e.engine() {
                "vllm" => REQUIRED_VLLM_SERVER_FLAGS,
                _ => REQUIRED_SERVER_FLAGS,
            };
            for req in required {
                if !e.server.contains_key(*req) {
                    return Err(err(
                        "server",
                        format!("`{req}` must be given (stated or assumed)"),
                    ));
                }
            }
            e.server_flags().map_err(|x| err("server", x.to_string()))?;
            for id in e.prior_runs.iter().flat_map(|p| &p.value) {
                if id == &e.id || !ids.contains(id) {
                    return Err(err(
                        "prior-runs",
                        format!("`{id}` is not an entry listed before this one"),
                    ));
                }
            }
            for value in [&mut e.hardware.value, &mut e.model.value] {
                *value = beside_manifest(value, dir);
            }
        }
        Ok(Manifest {
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
            entries,
        })
    }

    /// The log file of an entry.
    pub fn log_path(&self, e: &Entry) -> PathBuf {
        self.dir.join(&e.file)
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// The entry for run `run` of the log named `file_name` (compared by file name only).
    pub fn find(&self, file_name: &str, run: usize) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.file == file_name && e.run == run)
    }
}

/// A profile or model given as a relative file path (`../../models/x.yaml`, `config.json`)
/// is relative to the manifest's directory; bundled names are kept.
fn beside_manifest(value: &str, dir: &Path) -> String {
    let is_file = [".yaml", ".yml", ".json"]
        .iter()
        .any(|ext| value.to_ascii_lowercase().ends_with(ext));
    if is_file && Path::new(value).is_relative() {
        dir.join(value).display().to_string()
    } else {
        value.to_string()
    }
}

/// 1-based lines of the list items under `entries:` (the lines starting with `- ` at the
/// indentation of the first item), in order.
fn entry_lines(text: &str) -> Vec<usize> {
    let mut indent = None;
    let mut out = Vec::new();
    let mut inside = false;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("entries:") {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        let trimmed = line.trim_start();
        if !trimmed.starts_with("- ") && trimmed != "-" {
            continue;
        }
        let at = line.len() - trimmed.len();
        match indent {
            None => {
                indent = Some(at);
                out.push(i + 1);
            }
            Some(k) if k == at => out.push(i + 1),
            _ => {}
        }
    }
    out
}

/// The manifest next to a log (`manifest.yaml` in the log's directory), if there is one.
pub fn beside(log: &Path) -> Option<PathBuf> {
    let p = log.parent().unwrap_or(Path::new("")).join("manifest.yaml");
    p.is_file().then_some(p)
}
