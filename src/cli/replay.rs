//! `servesim replay LOG`: rebuild each run of a real bench_serving log from its own arguments
//! (plus the manifest entry beside it, or `--hardware`/`--model`/server flags), simulate it,
//! and print real, simulated and error % for every metric the log prints.
use super::print::{emit, preamble, stats_text};
use crate::error::{Error, Result};
use crate::report::table::Style;
use crate::spec::workload::ScenarioFlags;
use crate::validate::compare::{compare_run, simulate_run, MetricRow};
use crate::validate::logparse::parse_log_file;
use crate::validate::manifest::{self, Manifest};
use crate::validate::render::replay_table;
use crate::validate::replay::{LengthSource, Overrides};
use crate::validate::vllm::block::parse_vllm_blocks;
use crate::validate::vllm::replay::{replay_run as replay_vllm_run, VllmOverrides};
use crate::validate::vllm::result_json::parse_result_json;
use crate::validate::vllm::VllmResult;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(
    after_help = "--hardware is required when no manifest entry covers the log; --model when \
the log's `model=` cannot be mapped to a bundled model."
)]
pub struct ReplayArgs {
    /// A bench_serving console log (one or more `Serving Benchmark Result` blocks).
    pub log: PathBuf,
    /// Replay only this run (0-based, in file order); default: every run in the file.
    #[arg(long)]
    pub run: Option<usize>,
    /// Manifest giving hardware, model and assumptions (default: manifest.yaml beside the log).
    #[arg(long)]
    pub manifest: Option<PathBuf>,
    /// Overrides of what the log and its manifest entry say (see the note after the options).
    #[command(flatten)]
    pub flags: ScenarioFlags,
    /// text, markdown or json.
    #[arg(long, default_value = "text")]
    pub format: String,
    /// Print each run's simulation cost (wall time, simulated time, ratio, events, steps) to
    /// stderr.
    #[arg(long)]
    pub stats: bool,
}

/// `--format json`: the runs in file order, fields in this order.
#[derive(serde::Serialize)]
struct JsonDoc {
    log: String,
    runs: Vec<JsonRun>,
}

#[derive(serde::Serialize)]
struct JsonRun {
    run: usize,
    line: usize,
    manifest_entry: Option<String>,
    hardware: String,
    model: String,
    lengths: LengthSource,
    notes: Vec<String>,
    metrics: Vec<MetricRow>,
}

pub fn replay(a: &ReplayArgs, out_w: &mut dyn Write) -> Result<()> {
    let style = match a.format.as_str() {
        "text" => Some(Style::Text),
        "markdown" => Some(Style::Markdown),
        "json" => None,
        other => {
            return Err(Error::Unknown {
                kind: "format",
                name: other.into(),
                available: "text, markdown, json".into(),
            })
        }
    };
    if let Some(runs) = vllm_runs(&a.log)? {
        return replay_vllm(a, &runs, style, out_w);
    }
    let log = parse_log_file(&a.log)?;
    let manifest = match a.manifest.clone().or_else(|| manifest::beside(&a.log)) {
        Some(p) => Some(Manifest::load(&p)?),
        None => None,
    };
    let file_name = a
        .log
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let runs: Vec<_> = match a.run {
        Some(n) => vec![log.runs.get(n).ok_or_else(|| {
            Error::invalid(
                "--run",
                "run",
                match log.runs.len() {
                    1 => format!("{} has one run: --run 0", a.log.display()),
                    n => format!("{} has {n} runs: --run 0 to {}", a.log.display(), n - 1),
                },
            )
        })?],
        None => log.runs.iter().collect(),
    };
    // A bad --hardware or --model fails once, before the loop, not once per run.
    if let Some(hw) = &a.flags.hardware {
        crate::spec::bundled::load_hardware(hw)?;
    }
    if let Some(model) = &a.flags.model {
        crate::spec::bundled::load_model(model)?;
    }
    let ov = Overrides {
        hardware: a.flags.hardware.clone(),
        model: a.flags.model.clone(),
        server: a.flags.server.clone(),
        client: a.flags.client.clone(),
    };
    let source = a.log.display().to_string();
    let mut failed = Vec::new();
    let mut json = Vec::new();
    let mut text = String::new();
    let pb = super::print::progress_bar(runs.len(), style.is_none(), "runs replayed");
    for run in runs {
        pb.inc(1);
        let entry = manifest
            .as_ref()
            .and_then(|m| m.find(&file_name, run.index));
        // Wall time of building the scenario and simulating it.
        let started = std::time::Instant::now();
        let simulated = entry_overrides(manifest.as_ref(), entry, run, &ov)
            .and_then(|ov| simulate_run(run, entry, &ov, &source))
            .map(|(replay, out)| (replay, out, started.elapsed().as_secs_f64()));
        let (replay, out) = match simulated {
            Ok((replay, out, wall_s)) => {
                if a.stats {
                    eprint!("run {}: {}", run.index, stats_text(&out, wall_s));
                }
                (replay, out)
            }
            Err(e) => {
                let msg = e.to_string();
                match msg.contains(&source) {
                    true => eprintln!("error: {msg}"),
                    false => eprintln!("error: {source} run {}: {msg}", run.index),
                }
                failed.push(run.index);
                continue;
            }
        };
        let sc = &replay.scenario;
        let rows = compare_run(&run.metrics, &out.metrics, &sc.header());
        let entry_id = entry.map(|e| e.id.as_str());
        match style {
            None => json.push(JsonRun {
                run: run.index,
                line: run.line,
                manifest_entry: entry_id.map(String::from),
                hardware: sc.hardware.name.clone(),
                model: sc.model.name.clone(),
                lengths: replay.lengths,
                notes: replay.notes.clone(),
                metrics: rows,
            }),
            Some(style) => {
                let entry_note = entry_id.map_or("not in a manifest".to_string(), |id| {
                    format!("manifest entry {id}")
                });
                let _ = writeln!(
                    text,
                    "== {source} run {} (result block at line {}; {entry_note}{}) ==",
                    run.index,
                    run.line,
                    match replay.lengths {
                        LengthSource::Sampled => "; lengths: bundled ShareGPT sample",
                        LengthSource::Random => "",
                    }
                );
                if let Some(e) = entry.filter(|e| !e.assumed().is_empty()) {
                    let _ = writeln!(text, "assumed: {}", e.assumed().join(", "));
                }
                for n in &replay.notes {
                    let _ = writeln!(text, "{n}");
                }
                let table = replay_table(&rows).render(style);
                let _ = writeln!(text, "{}\n{table}", preamble(sc, &out));
            }
        }
    }
    pb.finish_and_clear();
    if style.is_none() {
        let doc = JsonDoc {
            log: source.clone(),
            runs: json,
        };
        text = format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    }
    emit(out_w, &text)?;
    match failed.as_slice() {
        [] => Ok(()),
        f => Err(Error::Msg(format!(
            "{} of the runs could not be replayed: {:?}",
            f.len(),
            f
        ))),
    }
}

/// The runs of a vLLM log (`vllm bench serve` / `benchmark_serving.py` blocks) or of a
/// `--save-result` JSON file; `None` when the file holds neither (then it is bench_serving's).
fn vllm_runs(path: &std::path::Path) -> Result<Option<Vec<VllmResult>>> {
    let bytes = crate::spec::load::read_bytes(path)?;
    let text = String::from_utf8_lossy(&bytes);
    let source = path.display().to_string();
    if text.trim_start().starts_with('{') {
        return Ok(Some(parse_result_json(&text, &source)?));
    }
    let runs = parse_vllm_blocks(&text, &source)?;
    Ok((!runs.is_empty()).then_some(runs))
}

/// `replay` of a vLLM log: each run rebuilt as `--client vllm` from its own commands.
fn replay_vllm(
    a: &ReplayArgs,
    runs: &[VllmResult],
    style: Option<Style>,
    out_w: &mut dyn Write,
) -> Result<()> {
    let ov = VllmOverrides {
        hardware: a.flags.hardware.clone(),
        model: a.flags.model.clone(),
        server: a.flags.server.clone(),
        client: a.flags.client.clone(),
    };
    let source = a.log.display().to_string();
    let selected: Vec<(usize, &VllmResult)> = match a.run {
        Some(n) => vec![(
            n,
            runs.get(n).ok_or_else(|| {
                Error::invalid(
                    "--run",
                    "run",
                    format!("{source} has {} run(s)", runs.len()),
                )
            })?,
        )],
        None => runs.iter().enumerate().collect(),
    };
    let mut text = String::new();
    let mut json = Vec::new();
    for (i, run) in selected {
        let (sim, rows) =
            replay_vllm_run(run, &ov).map_err(|e| Error::Msg(format!("{source} run {i}: {e}")))?;
        match style {
            None => json.push(serde_json::json!({
                "run": i,
                "line": run.line,
                "client": crate::client::vllm::script_name(&sim.flavour),
                "bench_version": sim.flavour.version,
                "metrics": rows,
            })),
            Some(style) => {
                let _ = writeln!(
                    text,
                    "== {source} run {i} (vLLM result at line {}; {} {}) ==\n{}",
                    run.line,
                    crate::client::vllm::script_name(&sim.flavour),
                    sim.flavour.version,
                    replay_table(&rows).render(style)
                );
            }
        }
    }
    if style.is_none() {
        text = format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({"log": source, "runs": json}))
                .unwrap_or_default()
        );
    }
    emit(out_w, &text)
}

/// The overrides of a run whose manifest entry lists `prior-runs:` (the listed entries' logs,
/// beside the manifest, give their arguments), as `validate` replays it.
fn entry_overrides(
    manifest: Option<&Manifest>,
    entry: Option<&crate::validate::manifest::Entry>,
    run: &crate::validate::logparse::ParsedRun,
    ov: &Overrides,
) -> Result<Overrides> {
    match (manifest, entry) {
        (Some(m), Some(e)) => crate::validate::replay::with_prior_runs(ov, e, &run.args, |id| {
            let p = m.entry(id)?;
            let log = parse_log_file(&m.log_path(p)).ok()?;
            log.runs.get(p.run).map(|r| r.args.clone())
        }),
        _ => Ok(ov.clone()),
    }
}
