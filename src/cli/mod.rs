//! Command-line interface: `servesim run | replay | validate | profiles`. Flag names follow
//! SGLang's `launch_server` and `bench_serving`. Errors print one line and exit non-zero.
mod calibrate;
mod explain;
mod merge;
mod plan;
mod replay;
mod report;
mod run;
mod sweep;
mod validate;

use clap::{Parser, Subcommand};

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
            // One line: clap's first line names the flag and the problem.
            let text = e.to_string();
            eprintln!(
                "{}",
                text.lines().next().unwrap_or("error: invalid arguments")
            );
            return 2;
        }
        Err(e) => {
            let _ = e.print();
            return 0;
        }
    };
    let result = match cli.command {
        Command::Run(a) => run::run(&a),
        Command::Replay(a) => replay::replay(&a),
        Command::Validate(a) => validate::validate(&a),
        Command::Calibrate(a) => calibrate::calibrate(&a),
        Command::Sweep(a) => sweep::sweep(&a),
        Command::Plan(a) => plan::plan(&a),
        Command::Report(a) => report::report(&a),
        Command::Merge(a) => merge::merge(&a),
        Command::Profiles => {
            println!(
                "hardware: {}",
                crate::spec::bundled::hardware_names().join(", ")
            );
            println!(
                "models:   {}",
                crate::spec::bundled::model_names().join(", ")
            );
            Ok(())
        }
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
