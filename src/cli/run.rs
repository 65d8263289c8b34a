//! `servesim run`: one scenario (the bundled default, a scenario file, flags) → the report
//! bench_serving would print, as text or JSON; `--stats` adds the simulation's own cost.
use super::print::{preamble, stats_text};
use crate::error::Result;
use crate::report::{json, text};
use crate::simulation::{run as simulate, RunOutput, Scenario};
use crate::spec::workload::{ClientFlags, ScenarioFile, ScenarioFlags};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Scenario file (default: the bundled workloads/default.yaml; its client section applies
    /// only when no client flag is given, otherwise bench_serving's defaults do).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub flags: ScenarioFlags,
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
    /// After the report, print one representative decode step and one prefill step of the run
    /// (decode at the run's mean batch and mean context, prefill one chunk of mean-length
    /// prompts) broken into GEMM, attention, MoE, all-reduce, LM head, overheads and CPU, with
    /// the cost backend and the tables or constants that priced each.
    #[arg(long)]
    pub explain: bool,
}

/// The scenario `run` simulates for these arguments.
pub fn scenario(a: &RunArgs) -> Result<Scenario> {
    let client_given = a.flags.client != ClientFlags::default();
    let file = ScenarioFile::base(a.scenario.as_deref(), client_given)?;
    let mut sc = Scenario::from_flags(&file, &a.flags)?;
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

pub fn run(a: &RunArgs, out_w: &mut dyn Write) -> Result<()> {
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
    let report = if a.output_format == "json" {
        format!(
            "{}\n",
            json::render(&out.metrics, &sc.header(), &extra(&sc, &out))
        )
    } else {
        format!(
            "{}{}\n",
            preamble(&sc, &out),
            text::render(&out.metrics, &sc.header()).trim_end()
        )
    };
    super::print::emit(out_w, &report)?;
    if a.explain {
        super::print::emit(out_w, &super::explain::explain_text(&sc, &out)?)?;
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
