//! bench_serving's `--output-file`: one JSON line appended per run, with the keys (in order)
//! its `benchmark()` writes for the run's `--bench-version`, and with `--output-details` its
//! per-request arrays. Written as Python's `json.dumps` writes it: `", "` and `": "`
//! separators and a bare `Infinity` for `--request-rate inf` (Python's `json.loads` reads
//! it back; strict JSON parsers do not).
//!
//! What servesim cannot give exactly: `server_info` (SGLang's `/get_server_info`) holds the
//! resolved server configuration instead; `accept_length` is null (no speculative decoding
//! here); the details have no `itls` (the simulator keeps inter-token latencies pooled, not
//! per request) and `generated_texts` are empty strings (no text is generated).
use super::ReportHeader;
use crate::metrics::BenchMetrics;
use crate::spec::version::Version;
use crate::spec::workload::ClientConfig;
use serde_json::Value;

/// Keys of bench_serving 0.5.6 and later (`result = {...}` in `benchmark()`).
pub const KEYS_SINCE_0_5_6: &[&str] = &[
    "tag",
    "backend",
    "dataset_name",
    "request_rate",
    "max_concurrency",
    "sharegpt_output_len",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "server_info",
    "duration",
    "completed",
    "total_input_tokens",
    "total_input_text_tokens",
    "total_input_vision_tokens",
    "total_output_tokens",
    "total_output_tokens_retokenized",
    "request_throughput",
    "input_throughput",
    "output_throughput",
    "total_throughput",
    "mean_e2e_latency_ms",
    "median_e2e_latency_ms",
    "std_e2e_latency_ms",
    "p90_e2e_latency_ms",
    "p99_e2e_latency_ms",
    "mean_ttft_ms",
    "median_ttft_ms",
    "std_ttft_ms",
    "p99_ttft_ms",
    "mean_tpot_ms",
    "median_tpot_ms",
    "std_tpot_ms",
    "p99_tpot_ms",
    "mean_itl_ms",
    "median_itl_ms",
    "std_itl_ms",
    "p95_itl_ms",
    "p99_itl_ms",
    "concurrency",
    "accept_length",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
];

/// Keys bench_serving 0.5.14 adds to 0.5.6's, each after the key it follows
/// (`result = {...}` in bench_serving.py at v0.5.14, sglang/benchmark/serving.py at v0.5.15).
const ADDED_IN_0_5_14: &[(&str, &[&str])] = &[
    ("p90_e2e_latency_ms", &["p95_e2e_latency_ms"]),
    ("std_ttft_ms", &["p90_ttft_ms", "p95_ttft_ms"]),
    ("std_tpot_ms", &["p90_tpot_ms", "p95_tpot_ms"]),
    ("std_itl_ms", &["p90_itl_ms"]),
];

/// Keys of the 0.4.x line before the peak metrics, tag and server info.
pub const KEYS_BEFORE_0_5_6: &[&str] = &[
    "backend",
    "dataset_name",
    "request_rate",
    "max_concurrency",
    "sharegpt_output_len",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "duration",
    "completed",
    "total_input_tokens",
    "total_output_tokens",
    "total_output_tokens_retokenized",
    "request_throughput",
    "input_throughput",
    "output_throughput",
    "mean_e2e_latency_ms",
    "median_e2e_latency_ms",
    "std_e2e_latency_ms",
    "p99_e2e_latency_ms",
    "mean_ttft_ms",
    "median_ttft_ms",
    "std_ttft_ms",
    "p99_ttft_ms",
    "mean_tpot_ms",
    "median_tpot_ms",
    "std_tpot_ms",
    "p99_tpot_ms",
    "mean_itl_ms",
    "median_itl_ms",
    "std_itl_ms",
    "p95_itl_ms",
    "p99_itl_ms",
    "concurrency",
    "accept_length",
];

/// The keys bench_serving `version` writes, in its order.
pub fn keys(version: Version) -> Vec<&'static str> {
    if version < Version::new(0, 5, 6) {
        return KEYS_BEFORE_0_5_6.to_vec();
    }
    let added = |k: &str| -> &'static [&'static str] {
        match ADDED_IN_0_5_14.iter().find(|(after, _)| *after == k) {
            Some((_, extra)) if version >= Version::new(0, 5, 14) => extra,
            _ => &[],
        }
    };
    KEYS_SINCE_0_5_6
        .iter()
        .flat_map(|&k| std::iter::once(k).chain(added(k).iter().copied()))
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
    let h = f.header;
    let v: Value = match k {
        "tag" => f.tag.map_or(Value::Null, Value::from),
        "backend" => Value::from(h.backend.as_str()),
        "dataset_name" => Value::from(c.dataset_name.as_str()),
        "request_rate" if !h.request_rate.is_finite() => return "Infinity".into(),
        "request_rate" => Value::from(h.request_rate),
        "max_concurrency" => h.max_concurrency.map_or(Value::Null, Value::from),
        "sharegpt_output_len" => c.sharegpt_output_len.map_or(Value::Null, Value::from),
        "random_input_len" => Value::from(c.random_input_len),
        "random_output_len" => Value::from(c.random_output_len),
        "random_range_ratio" => Value::from(c.random_range_ratio),
        "server_info" => f.server_info.clone(),
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
        _ => stat(k, m).map_or(Value::Null, Value::from),
    };
    py_json(&v)
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
        assert_eq!(keys(v("0.5.13.post1")), KEYS_SINCE_0_5_6);
        let k = keys(v("0.5.14"));
        assert_eq!(k.len(), KEYS_SINCE_0_5_6.len() + 6);
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
