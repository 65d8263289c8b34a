//! `servesim run`: one scenario (the bundled default, a scenario file, flags) → the report
//! bench_serving would print, as text or JSON; `--stats` adds the simulation's own cost.
use super::print::{preamble, stats_text};
use crate::error::Result;
use crate::report::{json, text};
use crate::simulation::{run as simulate, RunOutput, Scenario};
use crate::spec::load::from_yaml_str;
use crate::spec::server::ServerFlags;
use crate::spec::workload::{ClientFlags, ScenarioFile};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The bundled default scenario, embedded so the binary runs from anywhere.
pub const DEFAULT_SCENARIO: &str = include_str!("../../workloads/default.yaml");

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Scenario file (default: the bundled workloads/default.yaml; its client section applies
    /// only when no client flag is given, otherwise bench_serving's defaults do).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Hardware profile: a bundled name or a YAML path.
    #[arg(long)]
    pub hardware: Option<String>,
    /// Model: a bundled name, a model YAML, or a Hugging Face config.json.
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub server: ServerFlags,
    #[command(flatten)]
    pub client: ClientFlags,
    /// text (bench_serving's layout) or json (bench_serving's output-file keys).
    #[arg(long, default_value = "text")]
    pub output_format: String,
    /// Print the simulation's own cost (wall time, events, steps) to stderr.
    #[arg(long)]
    pub stats: bool,
    /// Stop with an error after this many events.
    #[arg(long)]
    pub max_events: Option<u64>,
    /// Stop with an error after this many seconds of wall-clock time (never changes results).
    #[arg(long)]
    pub max_wall_seconds: Option<f64>,
    /// Write the per-iteration time series (running, queued, batch tokens, KV) as CSV.
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// Draw the time series as SVG charts into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

/// Loads the scenario named by `--scenario`, or the bundled default.
pub fn load_scenario_file(path: Option<&Path>) -> Result<ScenarioFile> {
    match path {
        Some(p) => ScenarioFile::load(p),
        None => from_yaml_str(DEFAULT_SCENARIO, Path::new("workloads/default.yaml")),
    }
}

/// The base scenario file: `path`, or the bundled default, whose client section applies
/// only when no client flag is given (`client_given`); bench_serving's defaults apply then.
pub fn base_scenario(path: Option<&Path>, client_given: bool) -> Result<ScenarioFile> {
    let mut file = load_scenario_file(path)?;
    if path.is_none() && client_given {
        file.client = ClientFlags::default();
    }
    Ok(file)
}

/// The scenario `run` simulates for these arguments.
pub fn scenario(a: &RunArgs) -> Result<Scenario> {
    let file = base_scenario(a.scenario.as_deref(), a.client != ClientFlags::default())?;
    let mut sc = Scenario::resolve(
        &file,
        a.hardware.as_deref(),
        a.model.as_deref(),
        &a.server,
        &a.client,
    )?;
    if let Some(m) = a.max_events {
        sc.max_events = m;
    }
    if let Some(w) = a.max_wall_seconds {
        if !(w.is_finite() && w > 0.0) {
            return Err(crate::error::Error::invalid(
                "--max-wall-seconds",
                "max_wall_seconds",
                format!("must be a finite number > 0, got {w}"),
            ));
        }
        sc.max_wall_seconds = Some(w);
    }
    sc.record_timeline = a.timeline.is_some() || a.plot.is_some();
    Ok(sc)
}

pub fn run(a: &RunArgs) -> Result<()> {
    let sc = scenario(a)?;
    if !["text", "json"].contains(&a.output_format.as_str()) {
        return Err(crate::error::Error::Unknown {
            kind: "output format",
            name: a.output_format.clone(),
            available: "text, json".into(),
        });
    }
    let wall = Instant::now();
    let out = simulate(&sc)?;
    for note in &out.notes {
        eprintln!("note: {note}");
    }
    let wall_s = wall.elapsed().as_secs_f64();
    crate::report::timeline::write(&out.timeline, a.timeline.as_deref(), a.plot.as_deref())?;
    if a.output_format == "json" {
        println!(
            "{}",
            json::render(&out.metrics, &sc.header(), &extra(&sc, &out))
        );
    } else {
        print!("{}", preamble(&sc, &out));
        println!("{}", text::render(&out.metrics, &sc.header()).trim_end());
    }
    if a.stats {
        eprint!("{}", stats_text(&out, wall_s));
    }
    Ok(())
}

/// servesim's own derived facts, for the JSON report.
pub fn extra(sc: &Scenario, out: &RunOutput) -> serde_json::Value {
    serde_json::json!({
        "hardware": sc.hardware.name,
        "model": sc.model.name,
        "server": sc.server,
        "stats": out.stats,
    })
}
