//! vLLM's `calculate_metrics` (`vllm/benchmarks/serve.py`, legacy `benchmark_serving.py`) from a
//! simulated [`RunRecord`]. The formulas match bench_serving's ([`super::aggregate`]: TPOT
//! `(latency − ttft)/(out − 1)` when `out > 1`, numpy-linear percentiles, population std,
//! `np.mean(x or 0)`); what differs is which statistics exist and how they are chosen:
//! * `--percentile-metrics` (any of ttft, tpot, itl, e2el) × `--metric-percentiles` (any
//!   numbers), each `np.percentile(x, p) * 1000`;
//! * goodput (`--goodput ttft:MS tpot:MS e2el:MS`): a successful request is good when every
//!   given metric is ≤ its bound (`s >= r` compared in seconds, TPOT 0 for one-token outputs);
//! * "Total input tokens" is the client's count (the prompt without the server's special
//!   tokens) up to CLI 0.19, the server's `usage.prompt_tokens` from 0.20;
//! * peaks (0.11+) are the 1-second buckets of bench_serving 0.5.6, which copied vLLM's; one
//!   SSE chunk per step per request means tokens and chunks coincide here.
use super::aggregate::{compute, per_second};
use super::percentile::Runs;
use super::record::RunRecord;

const MS_PER_S: f64 = 1000.0;

fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// What to compute.
#[derive(Debug, Clone, PartialEq)]
pub struct VllmMetricsConfig {
    /// Selected metrics among ttft, tpot, itl, e2el.
    pub percentile_metrics: Vec<String>,
    pub metric_percentiles: Vec<f64>,
    /// `(metric, bound ms)`.
    pub goodput_ms: Vec<(String, f64)>,
    /// Special tokens the server added to each prompt, taken off the input total when the
    /// client reports its own count (0 when it reports the server's).
    pub client_count_offset: u64,
}

/// One metric's summary (`mean_{m}_ms`, `median_{m}_ms`, `std_{m}_ms`, `p{p}_{m}_ms`).
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSummary {
    /// ttft, tpot, itl or e2el.
    pub key: &'static str,
    pub mean_ms: f64,
    pub median_ms: f64,
    pub std_ms: f64,
    /// `(p, value ms)` in `--metric-percentiles` order.
    pub percentiles_ms: Vec<(f64, f64)>,
}

/// vLLM's `BenchmarkMetrics` plus the duration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VllmMetrics {
    pub completed: u64,
    pub failed: u64,
    pub total_input: u64,
    pub total_output: u64,
    pub duration_s: f64,
    pub request_throughput: f64,
    /// `None` without `--goodput`.
    pub request_goodput: Option<f64>,
    pub output_throughput: f64,
    pub total_token_throughput: f64,
    pub max_output_tokens_per_s: f64,
    pub max_concurrent_requests: f64,
    /// The selected metrics in vLLM's print order (ttft, tpot, itl, e2el).
    pub summaries: Vec<MetricSummary>,
}

/// Computes vLLM's aggregates.
pub fn compute_vllm(rec: &RunRecord, cfg: &VllmMetricsConfig) -> VllmMetrics {
    let base = compute(rec);
    let ok: Vec<_> = rec.requests.iter().filter(|r| r.success).collect();
    let tpot_s = |r: &&crate::metrics::record::RequestOutcome| -> f64 {
        if r.output_len > 1 {
            (seconds(r.latency_ns) - seconds(r.ttft_ns)) / (r.output_len - 1) as f64
        } else {
            0.0
        }
    };
    let lists = |key: &str| -> Runs {
        match key {
            "ttft" => Runs::from_ints(ok.iter().map(|r| r.ttft_ns), seconds),
            "tpot" => Runs::from_values(ok.iter().filter(|r| r.output_len > 1).map(tpot_s)),
            "itl" => Runs::new(rec.itl.iter().map(|run| (seconds(run.gap_ns), run.count))),
            _ => Runs::from_ints(ok.iter().map(|r| r.latency_ns), seconds),
        }
    };
    let summaries = ["ttft", "tpot", "itl", "e2el"]
        .into_iter()
        .filter(|k| cfg.percentile_metrics.iter().any(|m| m == k))
        .map(|key| {
            let x = lists(key);
            MetricSummary {
                key,
                mean_ms: x.mean() * MS_PER_S,
                median_ms: x.median() * MS_PER_S,
                std_ms: x.std() * MS_PER_S,
                percentiles_ms: cfg
                    .metric_percentiles
                    .iter()
                    .map(|&p| (p, x.percentile(p) * MS_PER_S))
                    .collect(),
            }
        })
        .collect();
    let dur_s = base.duration_s;
    let request_goodput = (!cfg.goodput_ms.is_empty()).then(|| {
        let good = ok
            .iter()
            .filter(|r| {
                cfg.goodput_ms.iter().all(|(k, bound_ms)| {
                    let value_s = match k.as_str() {
                        "ttft" => seconds(r.ttft_ns),
                        "tpot" => tpot_s(r),
                        _ => seconds(r.latency_ns),
                    };
                    bound_ms / MS_PER_S >= value_s
                })
            })
            .count();
        per_second(good as f64, dur_s)
    });
    let total_input = base
        .total_input_tokens
        .saturating_sub(cfg.client_count_offset * base.completed);
    let total_output = base.total_output_tokens;
    VllmMetrics {
        completed: base.completed,
        failed: base.failed,
        total_input,
        total_output,
        duration_s: dur_s,
        request_throughput: base.request_throughput,
        request_goodput,
        output_throughput: per_second(total_output as f64, dur_s),
        total_token_throughput: per_second((total_input + total_output) as f64, dur_s),
        max_output_tokens_per_s: base.peak_output_throughput,
        max_concurrent_requests: base.peak_concurrent_requests as f64,
        summaries,
    }
}
