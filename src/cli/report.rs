//! `servesim report`: one self-contained HTML file for a run (`--run` and the run's flags), a
//! sweep (`--sweep sweep.json`) or a validation (`--validate` with the output of
//! `servesim validate --format json`).
use super::print::preamble;
use super::{scenario, SimArgs};
use crate::error::{Error, Result};
use crate::report::{html, text, timeline};
use crate::simulation::run as simulate;
use crate::spec::load::read_text;
use crate::spec::workload::ScenarioFlags;
use crate::sweep::output::SweepFile;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["run", "sweep", "validate"])))]
pub struct ReportArgs {
    /// Simulate the run given by the `run` flags (scenario, hardware, model, server and client
    /// flags) and report it with its time series.
    #[arg(long)]
    pub run: bool,
    /// Report a sweep (its sweep.json, or a merged file).
    #[arg(long, value_name = "FILE")]
    pub sweep: Option<PathBuf>,
    /// Report a validation (`servesim validate --format json > FILE`).
    #[arg(long, value_name = "FILE")]
    pub validate: Option<PathBuf>,
    /// The HTML file to write.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: PathBuf,
    /// With --run: the scenario file (default: the bundled workloads/default.yaml; its client
    /// section applies only when no client flag is given, otherwise bench_serving's defaults
    /// do).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub flags: ScenarioFlags,
    #[command(flatten)]
    pub sim: SimArgs,
}

pub fn report(a: &ReportArgs, out: &mut dyn Write) -> Result<()> {
    let page = if a.run {
        run_page(a)?
    } else {
        let run_flags_given = a.scenario.is_some() || a.flags != Default::default();
        if run_flags_given {
            return Err(Error::Msg(
                "run flags apply only to `report --run`; a sweep or validation report reads its file"
                    .into(),
            ));
        }
        match (&a.sweep, &a.validate) {
            (Some(p), _) => crate::sweep::html::sweep_report(&SweepFile::load(p)?),
            (None, Some(p)) => {
                let v: serde_json::Value = crate::spec::load::from_json_str(&read_text(p)?, p)?;
                html::validation_report(&v)
                    .map_err(|e| Error::Msg(format!("{}: {e}", p.display())))?
            }
            (None, None) => unreachable!("clap requires one source"),
        }
    };
    std::fs::write(&a.out, page).map_err(|e| Error::io_write(&a.out, e))?;
    super::print::emit(out, &format!("servesim report: {}\n", a.out.display()))
}

/// Simulates the run and renders its page (also writing --timeline/--plot when given).
fn run_page(a: &ReportArgs) -> Result<String> {
    let mut sc = scenario(a.scenario.as_deref(), &a.flags, &a.sim)?;
    sc.record_timeline = true;
    let out = simulate(&sc)?;
    timeline::write(
        &out.timeline,
        a.sim.timeline.as_deref(),
        a.sim.plot.as_deref(),
    )?;
    let charts = if out.timeline.is_empty() {
        Vec::new()
    } else {
        timeline::charts(&out.timeline)
    };
    Ok(html::run_report(
        &preamble(&sc, &out),
        &text::render(&out.metrics, &sc.header()),
        &out.metrics,
        &charts,
    ))
}
