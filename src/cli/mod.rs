//! Command-line interface: `servesim run | replay | validate | calibrate | sweep | plan |
//! report | merge | profiles`. Flag names follow SGLang's `launch_server` and `bench_serving`.
//! Errors print one line and exit non-zero. One file per command (parsing and printing only;
//! none imports another); what several share is here and in `print`.
mod bench_compat;
mod calibrate;
mod exec;
mod merge;
mod paste;
mod paste_vllm;
mod plan;
mod print;
mod profiles;
mod replay;
mod report;
mod run;
mod sweep;
mod validate;
mod vllm_bench_compat;

pub use exec::{execute, CliError};

use crate::error::{Error, Result};
use crate::simulation::Scenario;
use crate::spec::workload::{ScenarioFile, ScenarioFlags};
use clap::{CommandFactory, FromArgMatches, Subcommand};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Parser, Debug)]
#[command(
    name = "servesim",
    version,
    about = "Deterministic discrete-event simulator of LLM serving (SGLang + bench_serving)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate one bench_serving run and print its report.
    Run(Box<run::RunArgs>),
    /// Replay the runs of a real bench_serving log and compare real and simulated metrics.
    Replay(Box<replay::ReplayArgs>),
    /// Replay every run of the validation manifest and print the error table.
    Validate(validate::ValidateArgs),
    /// Fit a hardware profile's efficiency and overhead constants to the recorded runs.
    Calibrate(Box<calibrate::CalibrateArgs>),
    /// Simulate every point of a grid of run flags (lists and ranges) in parallel.
    Sweep(Box<sweep::SweepArgs>),
    /// Find the cheapest deployment meeting latency SLOs at a target rate, or the best within a budget.
    ///
    /// Exits 0 with a recommendation, 3 when no candidate meets the goal (the table is still
    /// printed and says why each fails), 1 on bad input.
    Plan(Box<plan::PlanArgs>),
    /// Write a self-contained HTML report of a run, a sweep or a validation.
    Report(Box<report::ReportArgs>),
    /// Join the JSON files of a sharded sweep.
    Merge(merge::MergeArgs),
    /// The bundled hardware profiles (memory, bandwidth, peak FLOP/s, price) and models
    /// (layers, parameters, weights, KV bytes per token).
    Profiles(profiles::ProfilesArgs),
}

/// The flags of one simulated run that are not scenario facts, shared by `run` and
/// `report --run`: safety limits and the time-series outputs.
#[derive(clap::Args, Debug, Default, PartialEq)]
pub struct SimArgs {
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
    /// Run even when the up-front estimate says the run would hold more than the memory
    /// limit (4 GiB; see `servesim::simulation::estimate`).
    #[arg(long)]
    pub force: bool,
}

/// The scenario a run command simulates: the scenario file (default: the bundled one) overlaid
/// field by field with the flag group (rule: [`ScenarioFile::base`]),
/// with the limits of `sim` and a timeline when one is written.
fn scenario(
    file: Option<&std::path::Path>,
    flags: &ScenarioFlags,
    sim: &SimArgs,
) -> Result<Scenario> {
    let file = ScenarioFile::base(file, flags.client.sets_finite_rate())?;
    let mut sc = Scenario::from_flags(&file, flags)?;
    if let Some(m) = sim.max_events {
        sc.max_events = m;
    }
    if let Some(w) = sim.max_wall_seconds {
        if !(w.is_finite() && w > 0.0) {
            return Err(Error::invalid(
                "--max-wall-seconds",
                "max_wall_seconds",
                format!("must be a finite number > 0, got {w}"),
            ));
        }
        sc.max_wall_seconds = Some(w);
    }
    sc.record_timeline = sim.timeline.is_some() || sim.plot.is_some();
    check_size(&sc, sim.force)?;
    Ok(sc)
}

/// Parses `argv` (program name first). Every value-taking flag accepts a negative number as
/// its value, so `--num-prompts -1` reaches the flag's own parser and its error states the
/// real limit (clap alone would say "unexpected argument '-1'"). A pasted command after
/// `run --` is expanded first ([`paste::expand`]); its flags may then be abbreviated as
/// argparse allows, and a flag given twice takes its last value (the user's own flags come
/// after the pasted ones).
fn parse_cli<I, T>(argv: I) -> std::result::Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let argv: Vec<std::ffi::OsString> = argv.into_iter().map(Into::into).collect();
    let (argv, pasted) = paste::expand(argv)
        .map_err(|m| clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{m}\n")))?;
    // vLLM's `-tp`/`-dp` short flags become their long names (`spec::engine`).
    let argv: Vec<std::ffi::OsString> = argv
        .into_iter()
        .map(|a| {
            match a
                .to_str()
                .and_then(crate::spec::engine::long_form_of_vllm_short_flag)
            {
                Some(long) => long.into(),
                None => a,
            }
        })
        .collect();
    let command = Cli::command().mut_subcommands(|c| {
        c.allow_negative_numbers(true)
            .infer_long_args(pasted)
            .args_override_self(pasted)
    });
    Cli::from_arg_matches(&command.try_get_matches_from(argv)?)
}

/// The one-line estimate of a big run on stderr, and the refusal of one over the memory
/// limit unless `force`.
pub fn check_size(sc: &Scenario, force: bool) -> Result<()> {
    let e = crate::simulation::estimate::estimate(sc);
    if e.requests > crate::simulation::sanity::MAX_PROMPTS {
        // The up-front check refuses these with its own, more specific, limit.
        return Ok(());
    }
    if e.over_memory_limit() && !force {
        return Err(Error::Msg(format!("refusing to run: {}", e.refusal())));
    }
    if e.is_big() {
        eprintln!("servesim: {}", e.line());
    }
    Ok(())
}

/// Entry point; returns the process exit code.
pub fn main() -> i32 {
    let cli = match parse_cli(std::env::args_os()) {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            eprintln!("{}", clap_error_line(&e));
            return 2;
        }
        Err(e) => {
            let _ = e.print();
            return 0;
        }
    };
    match dispatch(cli.command, &mut std::io::stdout()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// One line for a command-line error: clap's first line names the flag and the problem.
fn clap_error_line(e: &clap::Error) -> String {
    let text = e.to_string();
    text.lines()
        .next()
        .unwrap_or("error: invalid arguments")
        .to_string()
}

/// Runs one parsed command, writing what it prints on stdout to `out`.
fn dispatch(command: Command, out: &mut dyn Write) -> Result<()> {
    match command {
        Command::Run(a) => run::run(&a, out),
        Command::Replay(a) => replay::replay(&a, out),
        Command::Validate(a) => validate::validate(&a, out),
        Command::Calibrate(a) => calibrate::calibrate(&a, out),
        Command::Sweep(a) => sweep::sweep(&a, out),
        Command::Plan(a) => plan::plan(&a, out),
        Command::Report(a) => report::report(&a, out),
        Command::Merge(a) => merge::merge(&a, out),
        Command::Profiles(a) => profiles::profiles(&a, out),
    }
}
