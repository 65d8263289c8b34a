//! Command-line interface: `servesim run | replay | validate | profiles`. Flag names follow
//! SGLang's `launch_server` and `bench_serving`. Errors print one line and exit non-zero.
mod calibrate;
mod exec;
mod explain;
mod merge;
mod plan;
mod print;
mod replay;
mod report;
mod run;
mod sweep;
mod validate;

pub use exec::{execute, CliError};

use crate::error::Result;
use clap::{Parser, Subcommand};
use std::io::Write;

#[derive(Parser, Debug)]
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
    Plan(Box<plan::PlanArgs>),
    /// Write a self-contained HTML report of a run, a sweep or a validation.
    Report(Box<report::ReportArgs>),
    /// Join the JSON files of a sharded sweep.
    Merge(merge::MergeArgs),
    /// List the bundled hardware profiles and models.
    Profiles,
}

/// Entry point; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
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
            1
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
        Command::Profiles => print::emit(
            out,
            &format!(
                "hardware: {}\nmodels:   {}\n",
                crate::spec::bundled::hardware_names().join(", "),
                crate::spec::bundled::model_names().join(", ")
            ),
        ),
    }
}
