//! The result as JSON, keyed like the record bench_serving appends to its `--output-file`
//! (0.5.8's key set from `report::jsonl::keys`; older clients write a subset under the same
//! names).
//!
//! Differences from bench_serving's record, all deliberate:
//! * `request_rate` `inf` is written as the string `"inf"`: Python's `json.dumps` writes the
//!   bare token `Infinity`, which is not valid JSON. Finite rates are numbers.
//! * Keys whose values servesim does not have are left out (`tag`, `dataset_name`,
//!   `sharegpt_output_len`, `random_*`, `server_info`); callers may put such facts in `extra`.
//!   `accept_length` is the server's mean accepted draft length under speculative decoding,
//!   `null` without it (bench_serving writes `null` too when the server reports none).
//! * `max_itl_ms` is added (a `BenchmarkMetrics` field that bench_serving prints but does not
//!   write), and everything servesim-specific goes under the key `"servesim"`.
//! * Key order: insertion order (bench_serving's) if serde_json's `preserve_order` feature is
//!   enabled anywhere in the build, sorted otherwise; deterministic either way.
use super::jsonl::{keys, metric_value};
use super::ReportHeader;
use crate::metrics::BenchMetrics;
use crate::spec::version::Version;
use serde_json::{Map, Value};

/// The bench_serving release whose output-file keys the JSON has (`report::jsonl::keys`).
const KEYS_OF: Version = Version::new(0, 5, 8);

/// Output-file keys left out: facts of the client and server the result does not hold.
const LEFT_OUT: &[&str] = &[
    "tag",
    "dataset_name",
    "sharegpt_output_len",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "server_info",
];

/// Pretty-printed JSON object with bench_serving's output-file keys plus `"servesim": extra`.
pub fn render(m: &BenchMetrics, h: &ReportHeader, extra: &Value) -> String {
    let mut map = Map::new();
    for k in keys(KEYS_OF).into_iter().filter(|k| !LEFT_OUT.contains(k)) {
        let v = match k {
            "request_rate" if !h.request_rate.is_finite() => {
                Value::from(super::text::py_float_repr(h.request_rate))
            }
            _ => metric_value(k, m, h),
        };
        map.insert(k.to_string(), v);
        if k == "p99_itl_ms" {
            map.insert("max_itl_ms".into(), Value::from(m.itl_ms.max));
        }
    }
    map.insert("servesim".into(), extra.clone());
    // `{:#}` is serde_json's infallible pretty printer.
    format!("{:#}", Value::Object(map))
}
