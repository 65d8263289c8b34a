//! Real vs simulated: per-metric rows for one run ([`compare_run`], every metric the log
//! prints), and the whole manifest ([`validate`]: one [`RunRow`] per entry with the six
//! headline metrics, and a [`Summary`] of median and max |error| per metric, overall and per
//! hardware family). Errors are `(simulated − real) / real × 100`. A run that cannot be
//! replayed or simulated keeps its row, with the error text, instead of aborting the table.
use super::logparse::{norm_label as norm, parse_log_file, BenchArgs, Metrics, ParsedLog};
use super::manifest::{Entry, Manifest};
use super::replay::{
    scenario_for, totals_match, with_prior_runs, workload_short, LengthSource, Overrides, Replay,
};
use super::vllm::entry::{
    parse_vllm_log, scenario_for_entry, simulated_values, workload_short as vllm_short, VllmLog,
};
use crate::metrics::BenchMetrics;
use crate::report::ReportHeader;
use crate::simulation::vllm::run_vllm;
use crate::simulation::{run as simulate, RunOutput};
use crate::spec::bundled::load_hardware;
use serde::Serialize;
use std::collections::BTreeMap;

/// A printed metric and how servesim computes it.
struct Known {
    /// Accepted labels, lower-case, whitespace-collapsed (first = canonical).
    labels: &'static [&'static str],
    get: fn(&BenchMetrics, &ReportHeader) -> Option<f64>,
}

macro_rules! known {
    ($($l:expr => |$m:ident, $h:ident| $e:expr),* $(,)?) => {
        &[$(Known { labels: &$l, get: |$m: &BenchMetrics, $h: &ReportHeader| { let _ = (&$m, &$h); $e } }),*]
    };
}

/// Every metric any bench_serving version prints, in printed order.
const KNOWN: &[Known] = known![
    ["traffic request rate", "request rate configured (rps)"] => |m, h| Some(h.request_rate),
    ["max request concurrency", "max reqeuest concurrency", "maximum request concurrency"] => |m, h| h.max_concurrency.map(|c| c as f64),
    ["successful requests"] => |m, h| Some(m.completed as f64),
    ["benchmark duration (s)"] => |m, h| Some(m.duration_s),
    ["total input tokens"] => |m, h| Some(m.total_input_tokens as f64),
    ["total input text tokens"] => |m, h| Some(m.total_input_tokens as f64),
    ["total input vision tokens"] => |m, h| Some(0.0),
    ["total generated tokens"] => |m, h| Some(m.total_output_tokens as f64),
    ["total generated tokens (retokenized)"] => |m, h| Some(m.total_output_tokens_retokenized as f64),
    ["request throughput (req/s)"] => |m, h| Some(m.request_throughput),
    ["input token throughput (tok/s)"] => |m, h| Some(m.input_throughput),
    ["output token throughput (tok/s)"] => |m, h| Some(m.output_throughput),
    ["peak output token throughput (tok/s)"] => |m, h| Some(m.peak_output_throughput),
    ["peak concurrent requests"] => |m, h| Some(m.peak_concurrent_requests as f64),
    ["total token throughput (tok/s)", "total throughput (tok/s)"] => |m, h| Some(m.total_throughput),
    ["concurrency"] => |m, h| Some(m.concurrency),
    ["mean e2e latency (ms)"] => |m, h| Some(m.e2e_ms.mean),
    ["median e2e latency (ms)"] => |m, h| Some(m.e2e_ms.median),
    ["p90 e2e latency (ms)"] => |m, h| Some(m.e2e_ms.p90),
    ["p99 e2e latency (ms)"] => |m, h| Some(m.e2e_ms.p99),
    ["mean ttft (ms)"] => |m, h| Some(m.ttft_ms.mean),
    ["median ttft (ms)"] => |m, h| Some(m.ttft_ms.median),
    ["p99 ttft (ms)"] => |m, h| Some(m.ttft_ms.p99),
    ["mean tpot (ms)"] => |m, h| Some(m.tpot_ms.mean),
    ["median tpot (ms)"] => |m, h| Some(m.tpot_ms.median),
    ["p99 tpot (ms)"] => |m, h| Some(m.tpot_ms.p99),
    ["mean itl (ms)"] => |m, h| Some(m.itl_ms.mean),
    ["median itl (ms)"] => |m, h| Some(m.itl_ms.median),
    ["p95 itl (ms)"] => |m, h| Some(m.itl_ms.p95),
    ["p99 itl (ms)"] => |m, h| Some(m.itl_ms.p99),
    ["max itl (ms)"] => |m, h| Some(m.itl_ms.max),
];

/// `(sim − real) / real × 100`; 0 when equal (also `inf` = `inf`), `None` when undefined.
pub fn err_pct(real: f64, sim: f64) -> Option<f64> {
    if real == sim {
        Some(0.0)
    } else if real == 0.0 || !real.is_finite() || !sim.is_finite() {
        None
    } else {
        Some((sim - real) / real * 100.0)
    }
}

/// One line of a replay table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricRow {
    /// The label as the log prints it.
    pub label: String,
    pub real: f64,
    /// `None` for a metric servesim does not compute.
    pub sim: Option<f64>,
    pub err_pct: Option<f64>,
}

/// Every numeric metric the log prints, in bench_serving's order, next to servesim's value.
pub fn compare_run(real: &Metrics, sim: &BenchMetrics, header: &ReportHeader) -> Vec<MetricRow> {
    let printed: BTreeMap<String, (&String, f64)> =
        real.all.iter().map(|(l, v)| (norm(l), (l, *v))).collect();
    let mut rows = Vec::new();
    let mut used = Vec::new();
    for k in KNOWN {
        let Some((key, (label, value))) = k.labels.iter().find_map(|l| printed.get_key_value(*l))
        else {
            continue;
        };
        used.push(key.clone());
        let s = (k.get)(sim, header);
        rows.push(MetricRow {
            label: (*label).clone(),
            real: *value,
            sim: s,
            err_pct: s.and_then(|s| err_pct(*value, s)),
        });
    }
    for (key, (label, value)) in &printed {
        if !used.contains(key) {
            rows.push(MetricRow {
                label: (*label).clone(),
                real: *value,
                sim: None,
                err_pct: None,
            });
        }
    }
    rows
}

/// The headline metrics of the validation table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Headline {
    OutputThroughput,
    MeanTtft,
    MedianTtft,
    /// Median TPOT, or median ITL when the log does not print TPOT.
    MedianTpot,
    MeanE2e,
    Duration,
}

impl Headline {
    pub const ALL: [Headline; 6] = [
        Headline::OutputThroughput,
        Headline::MeanTtft,
        Headline::MedianTtft,
        Headline::MedianTpot,
        Headline::MeanE2e,
        Headline::Duration,
    ];

    /// Column title.
    pub fn title(self) -> &'static str {
        match self {
            Headline::OutputThroughput => "out tok/s",
            Headline::MeanTtft => "mean TTFT ms",
            Headline::MedianTtft => "med TTFT ms",
            Headline::MedianTpot => "med TPOT/ITL ms",
            Headline::MeanE2e => "mean E2E ms",
            Headline::Duration => "duration s",
        }
    }

    /// (real, simulated); `itl` when the log prints no TPOT.
    fn values(self, r: &Metrics, s: &BenchMetrics) -> (f64, f64) {
        match self {
            Headline::OutputThroughput => (r.output_throughput, s.output_throughput),
            Headline::MeanTtft => (r.mean_ttft_ms, s.ttft_ms.mean),
            Headline::MedianTtft => (r.median_ttft_ms, s.ttft_ms.median),
            Headline::MedianTpot => match r.median_tpot_ms {
                Some(t) => (t, s.tpot_ms.median),
                None => (r.median_itl_ms, s.itl_ms.median),
            },
            Headline::MeanE2e => (r.mean_e2e_ms, s.e2e_ms.mean),
            Headline::Duration => (r.duration_s, s.duration_s),
        }
    }
}

impl Headline {
    /// The metric's key in vLLM's result (`median_tpot_ms`; `itl` when the run prints no TPOT).
    fn vllm_key(self, itl: bool) -> &'static str {
        match self {
            Headline::OutputThroughput => "output_throughput",
            Headline::MeanTtft => "mean_ttft_ms",
            Headline::MedianTtft => "median_ttft_ms",
            Headline::MedianTpot if itl => "median_itl_ms",
            Headline::MedianTpot => "median_tpot_ms",
            Headline::MeanE2e => "mean_e2el_ms",
            Headline::Duration => "duration",
        }
    }
}

/// Real, simulated and error of one headline metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cell {
    pub metric: Headline,
    pub real: Option<f64>,
    pub sim: Option<f64>,
    pub err_pct: Option<f64>,
}

/// One manifest entry, replayed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    pub id: String,
    pub file: String,
    pub run: usize,
    pub model: String,
    pub hardware: String,
    /// Accelerator family of the profile (`ampere`, `hopper`, `ascend`, ...).
    pub family: String,
    /// The simulated engine: `sglang` or `vllm`.
    pub engine: String,
    /// Why the run is kept out of the medians (the manifest's `out-of-medians`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_of_medians: Option<String>,
    pub workload: String,
    pub lengths: Option<LengthSource>,
    /// The simulated workload has exactly the log's total input and output tokens.
    pub totals_exact: Option<bool>,
    /// `TPOT`, or `ITL` when the log prints no TPOT.
    pub tpot_metric: &'static str,
    pub cells: Vec<Cell>,
    /// Settings the manifest assumes for this run.
    pub assumed: Vec<String>,
    /// Why the run could not be replayed or simulated.
    pub error: Option<String>,
}

/// Median and max |error| of one metric over a group of runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub metric: Headline,
    /// Runs with an error value.
    pub n: usize,
    pub median_abs_err_pct: Option<f64>,
    pub max_abs_err_pct: Option<f64>,
}

/// The summary of one group: `all` or a hardware family.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupSummary {
    pub group: String,
    pub runs: usize,
    pub metrics: Vec<Spread>,
}

/// Everything `servesim validate` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validation {
    pub manifest: String,
    pub runs: Vec<RunRow>,
    pub summary: Vec<GroupSummary>,
}

/// numpy's median of the values (mean of the two middle ones for an even count).
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => v.get(n / 2).copied(),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

fn spread(rows: &[&RunRow], metric: Headline) -> Spread {
    let errs: Vec<f64> = rows
        .iter()
        .filter(|r| r.out_of_medians.is_none())
        .filter_map(|r| {
            r.cells
                .iter()
                .find(|c| c.metric == metric)
                .and_then(|c| c.err_pct)
        })
        .map(f64::abs)
        .collect();
    Spread {
        metric,
        n: errs.len(),
        max_abs_err_pct: errs.iter().copied().reduce(f64::max),
        median_abs_err_pct: median(errs),
    }
}

/// Groups: all runs, each hardware family; where the manifest holds both engines, also each
/// engine and each engine on each profile; where a family holds several profiles, each profile.
/// `runs` counts the runs that enter the medians.
fn summarize(rows: &[RunRow]) -> Vec<GroupSummary> {
    let mut families: BTreeMap<String, Vec<&RunRow>> = BTreeMap::new();
    let mut profiles: BTreeMap<String, Vec<&RunRow>> = BTreeMap::new();
    let mut engines: BTreeMap<String, Vec<&RunRow>> = BTreeMap::new();
    let mut engine_profiles: BTreeMap<String, Vec<&RunRow>> = BTreeMap::new();
    for r in rows {
        families.entry(r.family.clone()).or_default().push(r);
        profiles.entry(r.hardware.clone()).or_default().push(r);
        engines.entry(r.engine.clone()).or_default().push(r);
        engine_profiles
            .entry(format!("{} on {}", r.engine, r.hardware))
            .or_default()
            .push(r);
    }
    let all: Vec<&RunRow> = rows.iter().collect();
    let group = |name: &str, rs: &[&RunRow]| GroupSummary {
        group: name.to_string(),
        runs: rs.iter().filter(|r| r.out_of_medians.is_none()).count(),
        metrics: Headline::ALL.iter().map(|&m| spread(rs, m)).collect(),
    };
    let mut out = vec![group("all", &all)];
    out.extend(families.iter().map(|(name, rs)| group(name, rs)));
    if profiles.len() > families.len() {
        out.extend(profiles.iter().map(|(name, rs)| group(name, rs)));
    }
    if engines.len() > 1 {
        out.extend(engines.iter().map(|(name, rs)| group(name, rs)));
        out.extend(engine_profiles.iter().map(|(name, rs)| group(name, rs)));
    }
    out
}

/// Replays and simulates every entry of `manifest`, in manifest order.
pub fn validate(manifest: &Manifest) -> Validation {
    validate_with(manifest, &Overrides::default())
}

/// [`validate`] with settings that override every entry (e.g. the cost backend).
pub fn validate_with(manifest: &Manifest, ov: &Overrides) -> Validation {
    let mut logs: BTreeMap<String, std::result::Result<Log, String>> = BTreeMap::new();
    for e in &manifest.entries {
        logs.entry(e.file.clone())
            .or_insert_with(|| read_log(&manifest.log_path(e)).map_err(|x| x.to_string()));
    }
    let args_of = |id: &str| {
        let e = manifest.entry(id)?;
        match logs.get(&e.file)?.as_ref().ok()? {
            Log::Sglang(log) => log.runs.get(e.run).map(|r| r.args.clone()),
            Log::Vllm(_) => None,
        }
    };
    let runs = manifest
        .entries
        .iter()
        .map(|e| {
            let source = manifest.log_path(e).display().to_string();
            match logs[&e.file].as_ref().map_err(Clone::clone) {
                Ok(Log::Vllm(v)) => validate_vllm_entry(e, ov, v, &source),
                Ok(Log::Sglang(l)) => validate_entry(e, ov, Ok(l), &source, &args_of),
                Err(x) => validate_entry(e, ov, Err(x), &source, &args_of),
            }
        })
        .collect::<Vec<_>>();
    let summary = summarize(&runs);
    Validation {
        manifest: manifest.path.display().to_string(),
        runs,
        summary,
    }
}

/// A log of the manifest: `sglang.bench_serving` output, or vLLM client blocks.
pub enum Log {
    Sglang(ParsedLog),
    Vllm(VllmLog),
}

/// Reads a manifest's log, whichever client printed it.
pub fn read_log(path: &std::path::Path) -> crate::error::Result<Log> {
    let text = crate::spec::load::read_text(path)?;
    match parse_vllm_log(&text, &path.display().to_string())? {
        Some(v) => Ok(Log::Vllm(v)),
        None => parse_log_file(path).map(Log::Sglang),
    }
}

/// A replayed and simulated run: the scenario and its output.
pub type Simulated = (Replay, RunOutput);

/// Replays and simulates one run.
pub fn simulate_run(
    run: &super::logparse::ParsedRun,
    entry: Option<&Entry>,
    ov: &Overrides,
    source: &str,
) -> crate::error::Result<Simulated> {
    let replay = scenario_for(run, entry, ov, source)?;
    let out = simulate(&replay.scenario)?;
    Ok((replay, out))
}

/// The row of `e` before replaying it: no values yet.
fn empty_row(e: &Entry) -> RunRow {
    let family = load_hardware(&e.hardware.value)
        .map(|h| {
            serde_json::to_value(h.arch)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default()
        })
        .unwrap_or_else(|_| e.hardware.value.clone());
    RunRow {
        id: e.id.clone(),
        file: e.file.clone(),
        run: e.run,
        model: e.model.value.clone(),
        hardware: e.hardware.value.clone(),
        family,
        engine: e.engine().to_string(),
        out_of_medians: e.out_of_medians.clone(),
        workload: String::new(),
        lengths: None,
        totals_exact: None,
        tpot_metric: "TPOT",
        cells: Headline::ALL
            .iter()
            .map(|&metric| Cell {
                metric,
                real: None,
                sim: None,
                err_pct: None,
            })
            .collect(),
        assumed: e.assumed(),
        error: None,
    }
}

fn validate_entry(
    e: &Entry,
    ov: &Overrides,
    log: std::result::Result<&ParsedLog, String>,
    source: &str,
    args_of: &dyn Fn(&str) -> Option<BenchArgs>,
) -> RunRow {
    let mut row = empty_row(e);
    let run = match log.and_then(|l| {
        l.runs
            .get(e.run)
            .ok_or_else(|| format!("{source}: has {} run(s), no run {}", l.runs.len(), e.run))
    }) {
        Ok(r) => r,
        Err(x) => {
            row.error = Some(x);
            return row;
        }
    };
    row.workload = workload_short(&run.args);
    if run.metrics.median_tpot_ms.is_none() {
        row.tpot_metric = "ITL";
    }
    for c in &mut row.cells {
        c.real = Some(c.metric.values(&run.metrics, &BenchMetrics::default()).0);
    }
    let ov = match with_prior_runs(ov, e, &run.args, args_of) {
        Ok(o) => o,
        Err(x) => {
            row.error = Some(x.to_string());
            return row;
        }
    };
    match simulate_run(run, Some(e), &ov, source) {
        Ok((replay, out)) => {
            let m = &out.metrics;
            row.lengths = Some(replay.lengths);
            row.totals_exact = Some(totals_match(
                &run.metrics,
                m.total_input_tokens,
                m.total_output_tokens,
            ));
            for c in &mut row.cells {
                let (real, sim) = c.metric.values(&run.metrics, m);
                c.sim = Some(sim);
                c.err_pct = err_pct(real, sim);
            }
        }
        Err(x) => row.error = Some(x.to_string()),
    }
    row
}

/// [`validate_entry`] for a run printed by vLLM's client (either engine).
fn validate_vllm_entry(e: &Entry, ov: &Overrides, log: &VllmLog, source: &str) -> RunRow {
    let mut row = empty_row(e);
    let Some(run) = log.runs.get(e.run) else {
        row.error = Some(format!(
            "{source}: has {} block(s), no block {}",
            log.runs.len(),
            e.run
        ));
        return row;
    };
    let itl = run.get("median_tpot_ms").is_none();
    if itl {
        row.tpot_metric = "ITL";
    }
    for c in &mut row.cells {
        c.real = run.get(c.metric.vllm_key(itl));
    }
    let mut lengths = LengthSource::Random;
    let sim = scenario_for_entry(log, e.run, e, ov, source).and_then(|sc| {
        row.workload = vllm_short(&sc.client);
        if sc.client.dataset_name == "sharegpt" {
            // vLLM's selection over the bundled ShareGPT sample tables.
            lengths = LengthSource::Sampled;
        }
        run_vllm(&sc)
    });
    match sim {
        Ok(sim) => {
            row.lengths = Some(lengths);
            row.totals_exact = Some(
                run.get("total_input_tokens") == Some(sim.metrics.total_input as f64)
                    && run.get("total_output_tokens") == Some(sim.metrics.total_output as f64),
            );
            let values = simulated_values(&sim);
            for c in &mut row.cells {
                c.sim = values.get(c.metric.vllm_key(itl)).copied();
                c.err_pct = c.real.zip(c.sim).and_then(|(r, s)| err_pct(r, s));
            }
        }
        Err(x) => row.error = Some(x.to_string()),
    }
    row
}
