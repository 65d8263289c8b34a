//! The result as JSON, keyed like the record bench_serving appends to its `--output-file`
//! (0.5.8's key set, the newest; older clients write a subset under the same names).
//!
//! Differences from bench_serving's record, all deliberate:
//! * `request_rate` `inf` is written as the string `"inf"`: Python's `json.dumps` writes the
//!   bare token `Infinity`, which is not valid JSON. Finite rates are numbers.
//! * Keys whose values servesim does not have are left out (`tag`, `dataset_name`,
//!   `sharegpt_output_len`, `random_*`, `server_info`); callers may put such facts in `extra`.
//!   `accept_length` is `null` (no speculative decoding is modelled); bench_serving writes
//!   `null` too when the server reports none.
//! * `max_itl_ms` is added (a `BenchmarkMetrics` field that bench_serving prints but does not
//!   write), and everything servesim-specific goes under the key `"servesim"`.
//! * Key order: insertion order (bench_serving's) if serde_json's `preserve_order` feature is
//!   enabled anywhere in the build, sorted otherwise; deterministic either way.
use super::ReportHeader;
use crate::metrics::BenchMetrics;
use serde_json::{Map, Value};

/// Pretty-printed JSON object with bench_serving's output-file keys plus `"servesim": extra`.
pub fn render(m: &BenchMetrics, h: &ReportHeader, extra: &Value) -> String {
    let request_rate = if h.request_rate.is_finite() {
        Value::from(h.request_rate)
    } else {
        Value::from(super::text::py_float_repr(h.request_rate))
    };
    let int = Value::from;
    let float = |x: f64| Value::from(x);
    let entries: Vec<(&str, Value)> = vec![
        ("backend", Value::from(h.backend.as_str())),
        ("request_rate", request_rate),
        (
            "max_concurrency",
            h.max_concurrency.map_or(Value::Null, int),
        ),
        ("duration", float(m.duration_s)),
        ("completed", int(m.completed)),
        ("total_input_tokens", int(m.total_input_tokens)),
        ("total_input_text_tokens", int(m.total_input_tokens)),
        ("total_input_vision_tokens", int(0)),
        ("total_output_tokens", int(m.total_output_tokens)),
        (
            "total_output_tokens_retokenized",
            int(m.total_output_tokens_retokenized),
        ),
        ("request_throughput", float(m.request_throughput)),
        ("input_throughput", float(m.input_throughput)),
        ("output_throughput", float(m.output_throughput)),
        ("total_throughput", float(m.total_throughput)),
        ("mean_e2e_latency_ms", float(m.e2e_ms.mean)),
        ("median_e2e_latency_ms", float(m.e2e_ms.median)),
        ("std_e2e_latency_ms", float(m.e2e_ms.std)),
        ("p90_e2e_latency_ms", float(m.e2e_ms.p90)),
        ("p99_e2e_latency_ms", float(m.e2e_ms.p99)),
        ("mean_ttft_ms", float(m.ttft_ms.mean)),
        ("median_ttft_ms", float(m.ttft_ms.median)),
        ("std_ttft_ms", float(m.ttft_ms.std)),
        ("p99_ttft_ms", float(m.ttft_ms.p99)),
        ("mean_tpot_ms", float(m.tpot_ms.mean)),
        ("median_tpot_ms", float(m.tpot_ms.median)),
        ("std_tpot_ms", float(m.tpot_ms.std)),
        ("p99_tpot_ms", float(m.tpot_ms.p99)),
        ("mean_itl_ms", float(m.itl_ms.mean)),
        ("median_itl_ms", float(m.itl_ms.median)),
        ("std_itl_ms", float(m.itl_ms.std)),
        ("p95_itl_ms", float(m.itl_ms.p95)),
        ("p99_itl_ms", float(m.itl_ms.p99)),
        ("max_itl_ms", float(m.itl_ms.max)),
        ("concurrency", float(m.concurrency)),
        ("accept_length", m.accept_length.map_or(Value::Null, float)),
        ("max_output_tokens_per_s", float(m.peak_output_throughput)),
        ("max_concurrent_requests", int(m.peak_concurrent_requests)),
        ("servesim", extra.clone()),
    ];
    let map: Map<String, Value> = entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    // `{:#}` is serde_json's infallible pretty printer.
    format!("{:#}", Value::Object(map))
}
