//! `servesim run`: one scenario (the bundled default, a scenario file, flags) → the report
//! bench_serving would print, as text or JSON; `--stats` adds the simulation's own cost.
use super::print::{preamble, stats_text};
use crate::error::Result;
use crate::report::{json, text};
use crate::simulation::explain::explain_text;
use crate::simulation::{run as simulate, RunOutput, Scenario};
use crate::spec::workload::ScenarioFlags;
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
    #[command(flatten)]
    pub sim: super::SimArgs,
    /// After the report, print one representative decode step and one prefill step of the run
    /// (decode at the run's mean batch and mean context, prefill one chunk of mean-length
    /// prompts) broken into GEMM, attention, MoE, all-reduce, LM head, overheads and CPU, with
    /// the cost backend and the tables or constants that priced each.
    #[arg(long)]
    pub explain: bool,
}

pub fn run(a: &RunArgs, out_w: &mut dyn Write) -> Result<()> {
    let sc = super::scenario(a.scenario.as_deref(), &a.flags, &a.sim)?;
    if !["text", "json"].contains(&a.output_format.as_str()) {
        return Err(crate::error::Error::Unknown {
            kind: "output format",
            name: a.output_format.clone(),
            available: "text, json".into(),
        });
    }
    let wall = Instant::now();
    let pb = super::print::spinner(a.output_format == "json", "simulating");
    let out = simulate(&sc);
    pb.finish_and_clear();
    let out = out?;
    for note in &out.notes {
        eprintln!("note: {note}");
    }
    let wall_s = wall.elapsed().as_secs_f64();
    crate::report::timeline::write(
        &out.timeline,
        a.sim.timeline.as_deref(),
        a.sim.plot.as_deref(),
    )?;
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
        super::print::emit(out_w, &explain_text(&sc, &out)?)?;
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
