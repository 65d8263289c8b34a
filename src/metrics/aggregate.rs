//! bench_serving's aggregates (`calculate_metrics`, 0.5.6 onwards; the formulas are the same in
//! every version, older ones just compute fewer of them) from a simulated [`RunRecord`].
//!
//! Conventions, all bench_serving's:
//! * only successful requests enter the latency lists, the input/output totals and the peaks;
//! * TPOT of a request is `(latency - ttft) / (output_len - 1)`, only when `output_len > 1`;
//! * statistics are computed in seconds and then multiplied by 1000 (`np.mean(x) * 1000`);
//! * an empty list counts as `[0]` (`np.mean(x or 0)`), so its statistics are 0.
//!
//! Two deliberate departures, both where bench_serving would print `nan` or crash:
//! * with no successful request bench_serving's E2E statistics are `nan` (it has no `or 0`
//!   there); servesim reports 0, like the other lists;
//! * with `duration_ns == 0` every rate (`x / dur_s`) and the concurrency are 0, not a
//!   division by zero.
use super::percentile::Runs;
use super::record::{RequestOutcome, RunRecord};

const NS_PER_S: f64 = 1e9;
const NS_PER_S_INT: u64 = 1_000_000_000;

/// Summary statistics of one latency list, in milliseconds. bench_serving prints a subset that
/// depends on the list and the version (see `report::text`); all are computed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    pub mean: f64,
    pub median: f64,
    /// Population standard deviation (`np.std`, ddof = 0).
    pub std: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Stats {
    /// Statistics of `values_s` (seconds), converted to milliseconds as bench_serving does
    /// (`np.<stat>(x) * 1000`).
    pub fn of_seconds(values_s: &Runs) -> Self {
        const MS_PER_S: f64 = 1000.0;
        Stats {
            mean: values_s.mean() * MS_PER_S,
            median: values_s.median() * MS_PER_S,
            std: values_s.std() * MS_PER_S,
            p90: values_s.percentile(90.0) * MS_PER_S,
            p95: values_s.percentile(95.0) * MS_PER_S,
            p99: values_s.percentile(99.0) * MS_PER_S,
            max: values_s.max() * MS_PER_S,
        }
    }
}

/// bench_serving's `BenchmarkMetrics`, plus the benchmark duration it prints beside them.
/// Fields are public so reports can be built from recorded numbers (golden tests).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BenchMetrics {
    /// Successful requests ("Successful requests").
    pub completed: u64,
    /// Requests that failed (not printed by sglang's bench_serving; kept for diagnostics).
    pub failed: u64,
    /// Σ client-side `prompt_len` over successful requests.
    pub total_input_tokens: u64,
    /// Σ server-reported completion tokens over successful requests.
    pub total_output_tokens: u64,
    /// bench_serving re-tokenizes the generated text; servesim has no text, so `compute`
    /// sets this to `total_output_tokens`. Separate so recorded runs can be rendered.
    pub total_output_tokens_retokenized: u64,
    /// `dur_s`: benchmark start to the end of the run (as printed, "Benchmark duration").
    pub duration_s: f64,
    /// completed / dur_s.
    pub request_throughput: f64,
    /// Σ input tokens / dur_s (tokens per second).
    pub input_throughput: f64,
    /// Σ output tokens / dur_s.
    pub output_throughput: f64,
    /// (Σ input + Σ output) / dur_s.
    pub total_throughput: f64,
    pub ttft_ms: Stats,
    pub tpot_ms: Stats,
    pub itl_ms: Stats,
    pub e2e_ms: Stats,
    /// Σ e2e latency / dur_s: the mean number of requests in flight.
    pub concurrency: f64,
    /// Most output tokens in one 1-second bucket (`max_output_tokens_per_s`).
    pub peak_output_throughput: f64,
    /// Most requests overlapping one 1-second bucket (`max_concurrent_requests`).
    pub peak_concurrent_requests: u64,
    /// The server's `avg_spec_accept_length` read from `/get_server_info` after the run
    /// (speculative decoding; `None` otherwise). Set by the simulation, not by [`compute`].
    pub accept_length: Option<f64>,
}

/// `x / dur_s`, or 0 for a zero-length run (see the module doc; vLLM's aggregates use it too).
pub(super) fn per_second(x: f64, dur_s: f64) -> f64 {
    if dur_s > 0.0 {
        x / dur_s
    } else {
        0.0
    }
}

fn seconds(ns: u64) -> f64 {
    ns as f64 / NS_PER_S
}

/// Computes every aggregate exactly as bench_serving's `calculate_metrics` does.
pub fn compute(rec: &RunRecord) -> BenchMetrics {
    let ok: Vec<&RequestOutcome> = rec.requests.iter().filter(|r| r.success).collect();
    let completed = ok.len() as u64;
    let total_input_tokens: u64 = ok.iter().map(|r| r.prompt_len).sum();
    let total_output_tokens: u64 = ok.iter().map(|r| r.output_len).sum();

    // Sorted as integer ns, then converted by `seconds` (order-preserving).
    let ttft_s = Runs::from_ints(ok.iter().map(|r| r.ttft_ns), seconds);
    let e2e_s = Runs::from_ints(ok.iter().map(|r| r.latency_ns), seconds);
    // Python: (latency - ttft) / (output_len - 1), both in float seconds.
    let tpot_s = Runs::from_values(
        ok.iter()
            .filter(|r| r.output_len > 1)
            .map(|r| (seconds(r.latency_ns) - seconds(r.ttft_ns)) / (r.output_len - 1) as f64),
    );
    let itl_s = Runs::new(rec.itl.iter().map(|run| (seconds(run.gap_ns), run.count)));

    let dur_s = seconds(rec.duration_ns);
    let (peak_output_throughput, peak_concurrent_requests) = peaks(&ok, rec);
    BenchMetrics {
        completed,
        failed: rec.requests.len() as u64 - completed,
        total_input_tokens,
        total_output_tokens,
        total_output_tokens_retokenized: total_output_tokens,
        accept_length: None,
        duration_s: dur_s,
        request_throughput: per_second(completed as f64, dur_s),
        input_throughput: per_second(total_input_tokens as f64, dur_s),
        output_throughput: per_second(total_output_tokens as f64, dur_s),
        total_throughput: per_second((total_input_tokens + total_output_tokens) as f64, dur_s),
        ttft_ms: Stats::of_seconds(&ttft_s),
        tpot_ms: Stats::of_seconds(&tpot_s),
        itl_ms: Stats::of_seconds(&itl_s),
        e2e_ms: Stats::of_seconds(&e2e_s),
        concurrency: per_second(e2e_s.sum(), dur_s),
        peak_output_throughput,
        peak_concurrent_requests,
    }
}

/// Python's `int(t - min_start)` for a time in ns: truncation toward zero, so a time less
/// than a second before `min_start` still lands in bucket 0. `None` for negative buckets.
fn bucket(time_ns: u64, min_start_ns: u64) -> Option<usize> {
    if time_ns >= min_start_ns {
        Some(((time_ns - min_start_ns) / NS_PER_S_INT) as usize)
    } else if min_start_ns - time_ns < NS_PER_S_INT {
        Some(0)
    } else {
        None
    }
}

/// bench_serving 0.5.6's peak metrics: 1-second buckets counted from the earliest successful
/// start; `dur_sec = int(ceil(max_end - min_start)) + 1` buckets. Tokens are counted in the
/// bucket of their arrival; a request counts in every bucket from that of its start to that of
/// its end inclusive. Difference array: O(requests + emissions + seconds).
fn peaks(ok: &[&RequestOutcome], rec: &RunRecord) -> (f64, u64) {
    let Some(min_start_ns) = ok.iter().map(|r| r.start_ns).min() else {
        return (0.0, 0);
    };
    let max_end_ns = ok
        .iter()
        .map(|r| r.start_ns + r.latency_ns)
        .max()
        .unwrap_or(min_start_ns);
    let dur_sec = ((max_end_ns - min_start_ns).div_ceil(NS_PER_S_INT) + 1) as usize;

    let mut tokens = vec![0u64; dur_sec];
    for e in &rec.emissions {
        if let Some(b) = bucket(e.time_ns, min_start_ns).filter(|&b| b < dur_sec) {
            tokens[b] += e.count;
        }
    }

    let mut delta = vec![0i64; dur_sec + 1];
    for r in ok {
        // Both buckets exist: start ≥ min_start and end ≤ max_end.
        let first = ((r.start_ns - min_start_ns) / NS_PER_S_INT) as usize;
        let last = ((r.start_ns + r.latency_ns - min_start_ns) / NS_PER_S_INT) as usize;
        delta[first] += 1;
        delta[(last + 1).min(dur_sec)] -= 1;
    }
    let mut in_flight = 0i64;
    let mut peak_requests = 0i64;
    for d in &delta[..dur_sec] {
        in_flight += d;
        peak_requests = peak_requests.max(in_flight);
    }
    let peak_tokens = tokens.iter().copied().max().unwrap_or(0);
    (peak_tokens as f64, peak_requests as u64)
}
