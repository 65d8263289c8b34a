//! `servesim sweep`: simulate every point of a grid of `run` flags in parallel and collect one
//! row per point. The rows are collected by grid index, never by completion order, so the
//! output is the same bytes whatever the thread count (a rayon pool decides the threads: all
//! cores by default, `RAYON_NUM_THREADS` or an enclosing `ThreadPool::install` otherwise).
pub mod analysis;
pub mod charts;
pub mod frontier;
pub mod grid;
pub mod html;
pub mod merge;
pub mod output;
pub mod point;
pub mod shard;

use crate::error::{Error, Result};
use crate::spec::workload::ScenarioFile;
use grid::Grid;
use output::SweepFile;
use point::Row;
use rayon::prelude::*;
use shard::Shard;
use std::collections::BTreeMap;
use std::path::Path;

/// A sweep to run: a base scenario and a grid of flags over it.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// The base scenario (flags of each point override it).
    pub file: ScenarioFile,
    /// How the base scenario was named (`None`: the bundled default), recorded in the output.
    pub scenario: Option<String>,
    pub grid: Grid,
}

impl Sweep {
    /// Simulates point `index`.
    pub fn point(&self, index: usize) -> Row {
        let params: BTreeMap<String, String> = self
            .grid
            .point(index)
            .into_iter()
            .map(|(f, v)| (f.to_string(), v.to_string()))
            .collect();
        point::evaluate(&self.file, index, params, self.grid.args(index))
    }

    /// Simulates the points of `shard` (all points when `None`) on the current rayon pool;
    /// `progress` is called once per finished point, from any thread.
    pub fn run(&self, shard: Option<Shard>, progress: &(dyn Fn() + Sync)) -> SweepFile {
        let rows: Vec<Row> = shard::indices(self.grid.len(), shard)
            .into_par_iter()
            .map(|i| {
                let row = self.point(i);
                progress();
                row
            })
            .collect();
        SweepFile::new(self.scenario.clone(), self.grid.clone(), shard, rows)
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::io_write(path, e))
}

/// Writes sweep.json, sweep.csv and (with `charts`) the SVG charts into `dir`.
pub fn write_outputs(f: &SweepFile, dir: &Path, charts: bool) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io_write(dir, e))?;
    write(&dir.join("sweep.json"), &f.to_json())?;
    write(&dir.join("sweep.csv"), &f.to_csv())?;
    write(&dir.join("frontier.json"), &frontier_json(f))?;
    if charts {
        for (stem, c) in charts::charts(f) {
            write(&dir.join(format!("{stem}.svg")), &c.svg())?;
        }
    }
    Ok(())
}

/// The per-GPU / per-user frontier of a sweep's points (`frontier.json`): every point that
/// ran, and the indices on the frontier, as pretty JSON.
pub fn frontier_json(f: &SweepFile) -> String {
    #[derive(serde::Serialize)]
    struct Out<'a> {
        /// What the two axes are.
        axes: &'static str,
        frontier: Vec<&'a frontier::EfficiencyPoint>,
        points: &'a [frontier::EfficiencyPoint],
    }
    let points = frontier::of_rows(&f.rows);
    let out = Out {
        axes: "tok_s_per_gpu = output_throughput / devices; tok_s_per_user = 1000 / mean_tpot_ms; cost from the profiles' cost_per_device_hour_usd",
        frontier: frontier::frontier(&points),
        points: &points,
    };
    let mut s = serde_json::to_string_pretty(&out).expect("frontier serializes");
    s.push('\n');
    s
}

/// `plan` and `sweep` price the server, not the benchmark client: unless the scenario file or
/// a grid flag chooses `client-model`, sends cost nothing. Returns the line saying which client
/// the points use.
pub fn ideal_client_unless_set(file: &mut ScenarioFile, grid: &grid::Grid) -> String {
    if let Some(axis) = grid.axes.iter().find(|a| a.flag == "client-model") {
        return format!("client: --client-model {} (as given)", axis.spec);
    }
    let model = *file
        .client
        .client_model
        .get_or_insert(crate::spec::workload::ClientModel::Ideal);
    match model {
        crate::spec::workload::ClientModel::Ideal => {
            "client: ideal (requests are sent at no cost; --client-model real emulates \
             bench_serving's send loop)"
                .to_string()
        }
        crate::spec::workload::ClientModel::Real => {
            "client: real (bench_serving's send loop, from the scenario file)".to_string()
        }
    }
}
