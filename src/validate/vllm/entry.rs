//! A manifest entry whose log holds result blocks of vLLM's client (`vllm bench serve`), for
//! either engine: logs where one client measured several servers (validation/gpustack/). The
//! client command above the block becomes `--client vllm` flags; the server command nearest
//! above it (`vllm serve ...` or `python -m sglang.launch_server ...`) the engine's flags; the
//! entry adds hardware, model, engine and client versions (and overrides the commands), the
//! caller's overrides win. The simulated run is read under vLLM's JSON keys, like the block.
use super::block::{joined_command, parse_vllm_blocks};
use super::command::{bench_client_flags, parse_serve_command, vllm_server_flags};
use super::VllmResult;
use crate::error::{Error, Result};
use crate::report::vllm::json_entries;
use crate::simulation::vllm::VllmRun;
use crate::simulation::Scenario;
use crate::spec::server::ServerFlags;
use crate::spec::vllm_client::ClientKind;
use crate::spec::workload::{ClientConfig, ScenarioFile};
use crate::validate::manifest::Entry;
use crate::validate::replay::{is_set, server_flags_from_command, Overrides};
use std::collections::BTreeMap;

/// The engine a server command starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    Vllm,
    Sglang,
}

/// A log of vLLM result blocks, each with the server command printed nearest above it.
#[derive(Debug, Clone)]
pub struct VllmLog {
    pub runs: Vec<VllmResult>,
    /// Per run: the last `vllm serve` or `sglang.launch_server` command above its block.
    pub servers: Vec<Option<(ServerKind, String)>>,
}

fn server_kind(line: &str) -> Option<ServerKind> {
    let l = line.trim_start();
    if l.starts_with('#') {
        return None;
    }
    if l.contains("sglang.launch_server") {
        Some(ServerKind::Sglang)
    } else if l.contains("vllm serve") && !l.contains("bench") {
        Some(ServerKind::Vllm)
    } else {
        None
    }
}

/// The vLLM blocks of `text`, or `None` when it has none (then it is a bench_serving log).
pub fn parse_vllm_log(text: &str, source: &str) -> Result<Option<VllmLog>> {
    let runs = parse_vllm_blocks(text, source)?;
    if runs.is_empty() {
        return Ok(None);
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut launches = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(kind) = server_kind(l) {
            launches.push((i + 1, kind, joined_command(&lines, i)));
        }
    }
    let servers = runs
        .iter()
        .map(|r| {
            launches
                .iter()
                .rev()
                .find(|(line, _, _)| *line < r.line)
                .map(|(_, k, c)| (*k, c.clone()))
        })
        .collect();
    Ok(Some(VllmLog { runs, servers }))
}

/// The scenario of run `run` of `log`, as `entry` selects it.
pub fn scenario_for_entry(
    log: &VllmLog,
    run: usize,
    entry: &Entry,
    ov: &Overrides,
    source: &str,
) -> Result<Scenario> {
    let file = entry_scenario_file(log, run, entry, ov, source)?;
    Scenario::resolve(&file, None, None, &ov.server, &ov.client)
}

/// The scenario file of run `run` of `log` before the caller's overrides: the log's commands
/// and the entry's settings (hardware: `ov.hardware` when given, e.g. the profile a
/// calibration fits, else the entry's).
pub fn entry_scenario_file(
    log: &VllmLog,
    run: usize,
    entry: &Entry,
    ov: &Overrides,
    source: &str,
) -> Result<ScenarioFile> {
    let at = |field: &str, reason: String| {
        Error::invalid(
            format!("{source} block {run} ({})", entry.id),
            field,
            reason,
        )
    };
    let r = log
        .runs
        .get(run)
        .ok_or_else(|| at("run", format!("the log has {} block(s)", log.runs.len())))?;
    let manifest = entry.server_flags()?;
    let engine = entry.engine();
    let log_flags = match log.servers.get(run).cloned().flatten() {
        Some((ServerKind::Vllm, cmd)) => {
            if engine != "vllm" {
                return Err(at(
                    "server",
                    format!("`{cmd}` starts vLLM but the entry selects {engine}"),
                ));
            }
            let s = parse_serve_command(&cmd);
            if let Some((flag, v)) = s.bad.iter().next() {
                return Err(at("server command", format!("--{flag} {v} does not parse")));
            }
            if s.pipeline_parallel_size.is_some_and(|p| p > 1) {
                return Err(at(
                    "server command",
                    "pipeline parallelism (-pp) is not modelled".into(),
                ));
            }
            vllm_server_flags(&s)
        }
        Some((ServerKind::Sglang, cmd)) => {
            if engine != "sglang" {
                return Err(at(
                    "server",
                    format!("`{cmd}` starts SGLang but the entry selects {engine}"),
                ));
            }
            let parsed = server_flags_from_command(&cmd);
            let given = manifest.merged(&ov.server);
            if let Some((flag, why)) = parsed.bad.iter().find(|(f, _)| !is_set(&given, f)) {
                return Err(at("server command", format!("--{flag}: {why}")));
            }
            parsed.flags
        }
        None => ServerFlags::default(),
    };
    let server = log_flags.merged(&manifest);

    let bench = r
        .bench_command
        .as_deref()
        .map(bench_client_flags)
        .ok_or_else(|| {
            at(
                "client",
                "no `vllm bench serve` command above the block".into(),
            )
        })?;
    if let Some((flag, v)) = bench.bad.iter().next() {
        return Err(at("client command", format!("--{flag} {v} does not parse")));
    }
    let mut client = bench.flags;
    if client.vllm.client.is_none() {
        client.vllm.client = Some(ClientKind::Vllm);
    }
    client.max_concurrency = client.max_concurrency.or(r.max_concurrency);
    client.request_rate = client.request_rate.or(r.request_rate);
    client.bench_version = Some(entry.bench_version.value);
    Ok(ScenarioFile {
        hardware: Some(ov.hardware.clone().unwrap_or(entry.hardware.value.clone())),
        model: Some(entry.model.value.clone()),
        server,
        client,
        ..Default::default()
    })
}

/// The manifest's `log.client` line for a vLLM-client run.
pub fn workload_summary(c: &ClientConfig) -> String {
    let data = match c.dataset_name.as_str() {
        "random" => format!(
            "random {}/{} ratio {}",
            c.random_input_len, c.random_output_len, c.random_range_ratio
        ),
        d => d.to_string(),
    };
    let rate = if c.request_rate.is_finite() {
        c.request_rate.to_string()
    } else {
        "inf".into()
    };
    let cap = c
        .max_concurrency
        .map_or("no cap".to_string(), |m| format!("max-concurrency {m}"));
    format!(
        "{data}, {} prompts, rate {rate}, {cap}, seed {}, vllm bench serve {}",
        c.num_prompts, c.seed, c.bench_version
    )
}

/// A short label for tables (`vllm rand 4000/200 ×500`).
pub fn workload_short(c: &ClientConfig) -> String {
    let mut s = match c.dataset_name.as_str() {
        "random" => format!("vllm rand {}/{}", c.random_input_len, c.random_output_len),
        d => format!("vllm {d}"),
    };
    s.push_str(&format!(" ×{}", c.num_prompts));
    if let Some(m) = c.max_concurrency {
        s.push_str(&format!(" c{m}"));
    }
    if c.request_rate.is_finite() {
        s.push_str(&format!(" @{}rps", c.request_rate));
    }
    s
}

/// Every number the simulated run's JSON has, by vLLM key.
pub fn simulated_values(sim: &VllmRun) -> BTreeMap<String, f64> {
    json_entries(&sim.metrics, &sim.header, &sim.flavour)
        .into_iter()
        .filter_map(|(k, v)| Some((k.trim_end_matches(':').to_string(), v.as_f64()?)))
        .collect()
}
