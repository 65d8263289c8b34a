//! bench_serving's `--output-file`: one JSON line appended per run, with the keys (in order)
//! its `benchmark()` writes for the run's `--bench-version`, and with `--output-details` its
//! per-request arrays. Written as Python's `json.dumps` writes it: `", "` and `": "`
//! separators and a bare `Infinity` for `--request-rate inf` (Python's `json.loads` reads
//! it back; strict JSON parsers do not).
//!
//! What servesim cannot give exactly: `server_info` (SGLang's `/get_server_info`) holds the
//! resolved server configuration instead; the details have no `itls` (the simulator keeps
//! inter-token latencies pooled, not per request) and `generated_texts` are empty strings (no
//! text is generated).
use super::ReportHeader;
use crate::metrics::BenchMetrics;
use crate::spec::version::Version;
use crate::spec::workload::ClientConfig;
use serde_json::Value;

/// Every key bench_serving's `benchmark()` has written to its output file (`result = {...}`),
/// in its order, each with the first release that writes it: the 0.4.x line's keys, then
/// 0.5.6's tag, server info and peak metrics, then 0.5.14's extra percentiles, each after the
/// key it follows (bench_serving.py at v0.5.14, sglang/benchmark/serving.py at v0.5.15).
const KEYS: &[(&str, Version)] = &[
    ("tag", V0_5_6),
    ("backend", ALWAYS),
    ("dataset_name", ALWAYS),
    ("request_rate", ALWAYS),
    ("max_concurrency", ALWAYS),
    ("sharegpt_output_len", ALWAYS),
    ("random_input_len", ALWAYS),
    ("random_output_len", ALWAYS),
    ("random_range_ratio", ALWAYS),
    ("server_info", V0_5_6),
    ("duration", ALWAYS),
    ("completed", ALWAYS),
    ("total_input_tokens", ALWAYS),
    ("total_input_text_tokens", V0_5_6),
    ("total_input_vision_tokens", V0_5_6),
    ("total_output_tokens", ALWAYS),
    ("total_output_tokens_retokenized", ALWAYS),
    ("request_throughput", ALWAYS),
    ("input_throughput", ALWAYS),
    ("output_throughput", ALWAYS),
    ("total_throughput", V0_5_6),
    ("mean_e2e_latency_ms", ALWAYS),
    ("median_e2e_latency_ms", ALWAYS),
    ("std_e2e_latency_ms", ALWAYS),
    ("p90_e2e_latency_ms", V0_5_6),
    ("p95_e2e_latency_ms", V0_5_14),
    ("p99_e2e_latency_ms", ALWAYS),
    ("mean_ttft_ms", ALWAYS),
    ("median_ttft_ms", ALWAYS),
    ("std_ttft_ms", ALWAYS),
    ("p90_ttft_ms", V0_5_14),
    ("p95_ttft_ms", V0_5_14),
    ("p99_ttft_ms", ALWAYS),
    ("mean_tpot_ms", ALWAYS),
    ("median_tpot_ms", ALWAYS),
    ("std_tpot_ms", ALWAYS),
    ("p90_tpot_ms", V0_5_14),
    ("p95_tpot_ms", V0_5_14),
    ("p99_tpot_ms", ALWAYS),
    ("mean_itl_ms", ALWAYS),
    ("median_itl_ms", ALWAYS),
    ("std_itl_ms", ALWAYS),
    ("p90_itl_ms", V0_5_14),
    ("p95_itl_ms", ALWAYS),
    ("p99_itl_ms", ALWAYS),
    ("concurrency", ALWAYS),
    ("accept_length", ALWAYS),
    ("max_output_tokens_per_s", V0_5_6),
    ("max_concurrent_requests", V0_5_6),
];

/// In every release this emulates (the 0.4.x line onwards).
const ALWAYS: Version = Version::new(0, 0, 0);
/// Tag, server info, text/vision input counts, total throughput, P90 E2E and the peaks.
const V0_5_6: Version = Version::new(0, 5, 6);
/// P95 E2E, P90/P95 TTFT and TPOT, P90 ITL.
const V0_5_14: Version = Version::new(0, 5, 14);

/// The keys bench_serving `version` writes, in its order.
pub fn keys(version: Version) -> Vec<&'static str> {
    KEYS.iter()
        .filter(|(_, since)| version >= *since)
        .map(|(k, _)| *k)
        .collect()
}

/// `--output-details`: bench_serving's per-request arrays, in dataset order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestDetails {
    pub input_lens: Vec<u64>,
    pub output_lens: Vec<u64>,
    /// Seconds; 0 for failed requests.
    pub ttfts_s: Vec<f64>,
    /// Empty for a success.
    pub errors: Vec<String>,
}

/// What the line records besides the metrics.
pub struct LineFacts<'a> {
    pub header: &'a ReportHeader,
    pub client: &'a ClientConfig,
    /// `--tag`.
    pub tag: Option<&'a str>,
    /// Stands in for SGLang's `/get_server_info`.
    pub server_info: Value,
}

/// One line (with its `\n`) of the output file.
pub fn line(m: &BenchMetrics, f: &LineFacts, details: Option<&RequestDetails>) -> String {
    let mut parts: Vec<String> = keys(f.header.bench_version)
        .iter()
        .map(|k| format!("{}: {}", py_json(&Value::from(*k)), value(k, m, f)))
        .collect();
    if let Some(d) = details {
        let texts: Vec<Value> = d.input_lens.iter().map(|_| Value::from("")).collect();
        for (k, v) in [
            ("input_lens", Value::from(d.input_lens.clone())),
            ("output_lens", Value::from(d.output_lens.clone())),
            ("ttfts", Value::from(d.ttfts_s.clone())),
            ("generated_texts", Value::from(texts)),
            ("errors", Value::from(d.errors.clone())),
        ] {
            parts.push(format!("{}: {}", py_json(&Value::from(k)), py_json(&v)));
        }
    }
    format!("{{{}}}\n", parts.join(", "))
}

/// The JSON text of key `k`.
fn value(k: &str, m: &BenchMetrics, f: &LineFacts) -> String {
    let c = f.client;
    let v: Value = match k {
        "tag" => f.tag.map_or(Value::Null, Value::from),
        "dataset_name" => Value::from(c.dataset_name.as_str()),
        "request_rate" if !f.header.request_rate.is_finite() => return "Infinity".into(),
        "sharegpt_output_len" => c.sharegpt_output_len.map_or(Value::Null, Value::from),
        "random_input_len" => Value::from(c.random_input_len),
        "random_output_len" => Value::from(c.random_output_len),
        "random_range_ratio" => Value::from(c.random_range_ratio),
        "server_info" => f.server_info.clone(),
        _ => metric_value(k, m, f.header),
    };
    py_json(&v)
}

/// The value of an output-file key that the metrics and the header decide (`Null` for a key
/// they do not: the client's and server's facts); `request_rate` must be
/// finite (each format writes `inf` its own way). Shared with `report::json`.
pub(super) fn metric_value(k: &str, m: &BenchMetrics, h: &ReportHeader) -> Value {
    match k {
        "backend" => Value::from(h.backend.as_str()),
        "request_rate" => Value::from(h.request_rate),
        "max_concurrency" => h.max_concurrency.map_or(Value::Null, Value::from),
        "duration" => Value::from(m.duration_s),
        "completed" => Value::from(m.completed),
        "total_input_tokens" | "total_input_text_tokens" => Value::from(m.total_input_tokens),
        "total_input_vision_tokens" => Value::from(0),
        "total_output_tokens" => Value::from(m.total_output_tokens),
        "total_output_tokens_retokenized" => Value::from(m.total_output_tokens_retokenized),
        "request_throughput" => Value::from(m.request_throughput),
        "input_throughput" => Value::from(m.input_throughput),
        "output_throughput" => Value::from(m.output_throughput),
        "total_throughput" => Value::from(m.total_throughput),
        "concurrency" => Value::from(m.concurrency),
        "max_output_tokens_per_s" => Value::from(m.peak_output_throughput),
        "max_concurrent_requests" => Value::from(m.peak_concurrent_requests),
        // `avg_spec_accept_length` from `/get_server_info`; None without speculative decoding.
        "accept_length" => m.accept_length.map_or(Value::Null, Value::from),
        _ => stat(k, m).map_or(Value::Null, Value::from),
    }
}

/// `{mean,median,std,p90,p95,p99}_{e2e_latency,ttft,tpot,itl}_ms`.
fn stat(k: &str, m: &BenchMetrics) -> Option<f64> {
    let (which, rest) = k.split_once('_')?;
    let s = match rest {
        "e2e_latency_ms" => &m.e2e_ms,
        "ttft_ms" => &m.ttft_ms,
        "tpot_ms" => &m.tpot_ms,
        "itl_ms" => &m.itl_ms,
        _ => return None,
    };
    Some(match which {
        "mean" => s.mean,
        "median" => s.median,
        "std" => s.std,
        "p90" => s.p90,
        "p95" => s.p95,
        "p99" => s.p99,
        _ => return None,
    })
}

/// JSON as Python's `json.dumps` writes it (`", "` and `": "` separators).
fn py_json(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("[{}]", a.iter().map(py_json).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", py_json(&Value::from(k.as_str())), py_json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bench_serving.py at v0.5.14 (`result = {...}` in `benchmark()`) writes 0.5.6's keys with
    /// P95 E2E after P90 E2E, P90/P95 TTFT and TPOT after their std, P90 ITL after its std.
    #[test]
    fn keys_of_0_5_14_add_the_new_percentiles_in_place() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        // 0.4.x: 35 keys, from backend to accept_length; 0.5.6: 43, tag first.
        let old = keys(v("0.5.5"));
        assert_eq!(
            (old.len(), old[0], old[34]),
            (35, "backend", "accept_length")
        );
        let k56 = keys(v("0.5.13.post1"));
        assert_eq!((k56.len(), k56[0]), (43, "tag"));
        assert!(k56.iter().filter(|k| !old.contains(k)).eq([
            "tag",
            "server_info",
            "total_input_text_tokens",
            "total_input_vision_tokens",
            "total_throughput",
            "p90_e2e_latency_ms",
            "max_output_tokens_per_s",
            "max_concurrent_requests"
        ]
        .iter()));
        let k = keys(v("0.5.14"));
        assert_eq!(k.len(), 43 + 6);
        let at = |key: &str| k.iter().position(|x| *x == key).unwrap();
        let after = |key: &str, n: usize| k[at(key)..at(key) + n].join(",");
        assert_eq!(
            after("p90_e2e_latency_ms", 3),
            "p90_e2e_latency_ms,p95_e2e_latency_ms,p99_e2e_latency_ms"
        );
        assert_eq!(
            after("std_ttft_ms", 4),
            "std_ttft_ms,p90_ttft_ms,p95_ttft_ms,p99_ttft_ms"
        );
        assert_eq!(
            after("std_tpot_ms", 4),
            "std_tpot_ms,p90_tpot_ms,p95_tpot_ms,p99_tpot_ms"
        );
        assert_eq!(after("std_itl_ms", 3), "std_itl_ms,p90_itl_ms,p95_itl_ms");
        assert_eq!(k.last(), Some(&"max_concurrent_requests"));
    }
}
