//! One point of a sweep or plan: its flags resolved against the base scenario, simulated, and
//! summarised as a [`Row`] (the point's parameters, the deployment it resolved to, and every
//! bench_serving metric, or the reason it could not run).
use super::grid::PointArgs;
use crate::error::Result;
use crate::metrics::{BenchMetrics, Stats};
use crate::report::text::py_float_repr;
use crate::simulation::{run, Scenario};
use crate::spec::workload::ScenarioFile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a point resolved to: the facts a planner or a chart needs besides the metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deployment {
    /// Server engine (`sglang` or `vllm`; `--engine sglang,vllm` compares them).
    #[serde(default = "default_engine")]
    pub engine: String,
    pub hardware: String,
    pub model: String,
    pub tp: u64,
    /// Data-parallel replicas (`--dp`; 1 when not set).
    pub dp: u64,
    pub dp_attention: bool,
    /// Devices the deployment occupies: tp × dp, or tp with DP attention (DP inside TP).
    pub devices: u64,
    /// Client concurrency cap; `None` when not set.
    pub max_concurrency: Option<u64>,
    /// Request rate as bench_serving prints it (`inf`, `4.0`).
    pub request_rate: String,
    pub num_prompts: u64,
    /// KV pool size in tokens (`max_total_num_tokens`) of one replica.
    pub kv_pool_tokens: u64,
    pub max_running_requests: u64,
    /// The profile's price of one device-hour, if it has one.
    pub cost_per_device_hour_usd: Option<f64>,
    /// Prefill/decode disaggregation: `xPyD` with each side's TP (`2P1D tp8/tp8`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pd: Option<String>,
}

fn default_engine() -> String {
    "sglang".into()
}

impl Deployment {
    /// The deployment a point's resolved scenario describes.
    pub fn of(sc: &Scenario) -> Deployment {
        Deployment {
            engine: crate::spec::engine::Engine::of(&sc.server).name().into(),
            hardware: sc.hardware.name.clone(),
            model: sc.model.name.clone(),
            tp: sc.server.tp,
            dp: sc.server.dp,
            dp_attention: sc.server.dp_attention,
            devices: sc
                .pd
                .as_ref()
                .map_or(sc.server.devices(), |pd| pd.devices()),
            max_concurrency: sc.client.max_concurrency,
            request_rate: py_float_repr(sc.client.request_rate),
            num_prompts: sc.client.num_prompts,
            kv_pool_tokens: sc.server.kv_pool_tokens,
            max_running_requests: sc.server.max_running_requests,
            cost_per_device_hour_usd: sc.hardware.cost_per_device_hour_usd,
            pd: sc.pd.as_ref().map(|pd| pd.name()),
        }
    }
}

/// One simulated point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Position in the grid.
    pub index: usize,
    /// The grid's flags at this point (flag → value as written).
    pub params: BTreeMap<String, String>,
    /// `None` when the scenario could not be resolved.
    pub deployment: Option<Deployment>,
    /// Why the point has no metrics.
    pub error: Option<String>,
    /// Every bench_serving metric ([`metric_values`]' keys); `None` on error.
    pub metrics: Option<BTreeMap<String, f64>>,
    /// The run's client-bound warning (`client::send`), when the benchmark client, not the
    /// server, set its pace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_bound: Option<String>,
}

impl Row {
    /// The metric `key`, when the point ran.
    pub fn metric(&self, key: &str) -> Option<f64> {
        self.metrics.as_ref()?.get(key).copied()
    }
}

/// Resolves a point's flags against the base scenario file.
pub fn resolve(file: &ScenarioFile, args: &PointArgs) -> Result<Scenario> {
    Scenario::from_flags(file, &args.flags)
}

/// Resolves and simulates point `index` with flags `params`/`args`; errors become the row's
/// `error`.
pub fn evaluate(
    file: &ScenarioFile,
    index: usize,
    params: BTreeMap<String, String>,
    args: Result<PointArgs>,
) -> Row {
    let mut row = Row {
        index,
        params,
        deployment: None,
        error: None,
        metrics: None,
        client_bound: None,
    };
    let outcome = args.and_then(|a| {
        let sc = resolve(file, &a)?;
        row.deployment = Some(Deployment::of(&sc));
        run(&sc)
    });
    match outcome {
        Ok(out) => {
            row.metrics = Some(metric_map(&out.metrics));
            row.client_bound = client_bound(&out.notes);
        }
        Err(e) => row.error = Some(e.to_string()),
    }
    row
}

/// The client-bound warning among a run's notes.
pub fn client_bound(notes: &[String]) -> Option<String> {
    notes
        .iter()
        .find(|n| n.starts_with("client-bound"))
        .cloned()
}

/// The four latency lists: (name in keys, key suffix).
const LISTS: [(&str, &str); 4] = [
    ("ttft", "ttft_ms"),
    ("tpot", "tpot_ms"),
    ("itl", "itl_ms"),
    ("e2e", "e2e_latency_ms"),
];

fn stats_of<'a>(m: &'a BenchMetrics, list: &str) -> &'a Stats {
    match list {
        "ttft" => &m.ttft_ms,
        "tpot" => &m.tpot_ms,
        "itl" => &m.itl_ms,
        _ => &m.e2e_ms,
    }
}

/// Every bench_serving aggregate, keyed like bench_serving's output file (`p99_tpot_ms`,
/// `p99_e2e_latency_ms`, `output_throughput`, …), every statistic of every latency list
/// included, in a fixed order (the CSV's column order).
pub fn metric_values(m: &BenchMetrics) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = [
        ("completed", m.completed as f64),
        ("failed", m.failed as f64),
        ("total_input_tokens", m.total_input_tokens as f64),
        ("total_output_tokens", m.total_output_tokens as f64),
        ("duration", m.duration_s),
        ("request_throughput", m.request_throughput),
        ("input_throughput", m.input_throughput),
        ("output_throughput", m.output_throughput),
        ("total_throughput", m.total_throughput),
        ("concurrency", m.concurrency),
        ("max_output_tokens_per_s", m.peak_output_throughput),
        ("max_concurrent_requests", m.peak_concurrent_requests as f64),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for (list, suffix) in LISTS {
        let s = stats_of(m, list);
        for (stat, v) in [
            ("mean", s.mean),
            ("median", s.median),
            ("std", s.std),
            ("p90", s.p90),
            ("p95", s.p95),
            ("p99", s.p99),
            ("max", s.max),
        ] {
            out.push((format!("{stat}_{suffix}"), v));
        }
    }
    out
}

/// The metric keys in column order.
pub fn metric_keys() -> Vec<String> {
    metric_values(&BenchMetrics::default())
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}

/// [`metric_values`] as a map; non-finite values (never produced today) are left out so the
/// JSON stays valid.
pub fn metric_map(m: &BenchMetrics) -> BTreeMap<String, f64> {
    metric_values(m)
        .into_iter()
        .filter(|(_, v)| v.is_finite())
        .collect()
}
