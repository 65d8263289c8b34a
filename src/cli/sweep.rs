//! `servesim sweep`: every `run` flag may be a list or a range; the grid's points run in
//! parallel and land in OUT/sweep.json, OUT/sweep.csv and OUT/*.svg; the Pareto frontier is
//! printed. `--shard I/N` runs one slice (merge the slices with `servesim merge`).
use super::print::progress_bar;
use crate::error::{Error, Result};
use crate::report::table::{fmt_compact, Style, Table};
use crate::spec::workload::ScenarioFile;
use crate::sweep::analysis::{pareto, FRONTIER_X, FRONTIER_Y};
use crate::sweep::frontier;
use crate::sweep::grid::{Grid, GridArgs};
use crate::sweep::output::SweepFile;
use crate::sweep::shard::{indices, Shard};
use crate::sweep::{write_outputs, Sweep};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// Base scenario file (default: the bundled default, whose client section applies only
    /// when no client flag is given).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Output directory: sweep.json, sweep.csv and the charts (*.svg).
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: PathBuf,
    /// Run only slice I of N (0 ≤ I < N: the points whose index is I modulo N); join the
    /// slices' sweep.json files with `servesim merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// No progress bar (it is also hidden when stderr is not a terminal).
    #[arg(long)]
    pub quiet: bool,
    /// Do not draw the SVG charts.
    #[arg(long)]
    pub no_charts: bool,
    #[command(flatten)]
    pub grid: GridArgs,
}

pub fn sweep(a: &SweepArgs, out: &mut dyn Write) -> Result<()> {
    if a.out.exists() && !a.out.is_dir() {
        return Err(Error::invalid(
            "sweep -o",
            "out",
            format!(
                "`{}` is a file; -o names a directory to write sweep.json, sweep.csv and the \
                 charts into",
                a.out.display()
            ),
        ));
    }
    let grid = Grid::parse(&a.grid.flags)?;
    let mut file = ScenarioFile::base(a.scenario.as_deref(), grid.sets_flag("request-rate"))?;
    let client_line = crate::sweep::ideal_client_unless_set(&mut file, &grid);
    let s = Sweep {
        file,
        scenario: a.scenario.as_ref().map(|p| p.display().to_string()),
        grid,
    };
    let n = indices(s.grid.len(), a.shard).len();
    if n >= BIG_SWEEP_POINTS {
        eprintln!(
            "servesim sweep: {n} points to simulate on {} threads (--shard I/N splits them over machines)",
            rayon::current_num_threads()
        );
    }
    let pb = progress_bar(n, a.quiet, "points");
    let result = s.run(a.shard, &|| pb.inc(1));
    pb.finish_and_clear();
    let charts = !a.no_charts && a.shard.is_none();
    write_outputs(&result, &a.out, charts)?;
    super::print::emit(
        out,
        &format!("{client_line}\n{}", summary(&result, &a.out, charts)),
    )?;
    // A sweep none of whose points ran is a failure for a script too (non-zero exit).
    match result
        .rows
        .iter()
        .map(|r| r.error.as_deref())
        .collect::<Option<Vec<_>>>()
    {
        Some(errors) if !errors.is_empty() => Err(crate::error::Error::Msg(format!(
            "no point of the sweep could run (first: {})",
            errors[0]
        ))),
        _ => Ok(()),
    }
}

/// The per-GPU / per-user frontier as a table (cost from the profiles' prices).
fn per_gpu_frontier(f: &SweepFile, varying: &[&str]) -> String {
    let points = frontier::of_rows(&f.rows);
    let front = frontier::frontier(&points);
    let mut header: Vec<String> = vec!["#".into()];
    header.extend(varying.iter().map(|v| v.to_string()));
    let label = |i: usize| {
        let mut row = vec![i.to_string()];
        if let Some(r) = f.rows.iter().find(|r| r.index == i) {
            row.extend(
                varying
                    .iter()
                    .map(|v| r.params.get(*v).cloned().unwrap_or_default()),
            );
        }
        row
    };
    format!(
        "\nPer-GPU frontier (output tok/s per GPU vs tok/s per user = 1000 / mean TPOT; $ from the profiles' prices; frontier.json, per_gpu.svg):\n{}",
        frontier::table(&front, &header, label).render(Style::Text)
    )
}

/// Sweeps of at least this many points announce themselves on stderr before starting.
const BIG_SWEEP_POINTS: usize = 10_000;

/// What was written, errors, the per-GPU frontier and the Pareto frontier as tables.
pub fn summary(f: &SweepFile, dir: &Path, charts: bool) -> String {
    let errors: Vec<_> = f.rows.iter().filter(|r| r.error.is_some()).collect();
    let mut out = format!(
        "servesim sweep: {} of {} points{} → {}/sweep.json, sweep.csv, frontier.json{}\n",
        f.rows.len(),
        f.points,
        f.shard.map_or(String::new(), |s| format!(" (shard {s})")),
        dir.display(),
        if charts { ", *.svg" } else { "" }
    );
    if !errors.is_empty() {
        out.push_str(&format!("{} points could not run", errors.len()));
        if let Some(e) = errors.first() {
            out.push_str(&format!(
                " (first: point {}: {})",
                e.index,
                e.error.as_deref().unwrap_or("")
            ));
        }
        out.push('\n');
    }
    let bound: Vec<_> = f.rows.iter().filter(|r| r.client_bound.is_some()).collect();
    if let Some(first) = bound.first() {
        out.push_str(&format!(
            "warning: {} points are client-bound (first: point {}: {})\n",
            bound.len(),
            first.index,
            first.client_bound.as_deref().unwrap_or("")
        ));
    }
    let varying: Vec<&str> = f.grid.varying().map(|a| a.flag.as_str()).collect();
    let front = pareto(&f.rows);
    if front.is_empty() {
        return out;
    }
    out.push_str(&per_gpu_frontier(f, &varying));
    let mut header: Vec<String> = vec!["#".into()];
    header.extend(varying.iter().map(|v| v.to_string()));
    header.extend(["p99 TPOT ms", "output tok/s", "p99 TTFT ms"].map(String::from));
    let rows = front
        .iter()
        .map(|r| {
            let mut row = vec![r.index.to_string()];
            row.extend(
                varying
                    .iter()
                    .map(|v| r.params.get(*v).cloned().unwrap_or_default()),
            );
            row.extend([FRONTIER_X, FRONTIER_Y, "p99_ttft_ms"].map(|k| fmt_compact(r.metric(k))));
            row
        })
        .collect();
    let right = vec![true; header.len()];
    out.push_str("\nPareto frontier (output throughput vs p99 TPOT):\n");
    out.push_str(
        &Table {
            header,
            rows,
            right,
        }
        .render(Style::Text),
    );
    out
}
