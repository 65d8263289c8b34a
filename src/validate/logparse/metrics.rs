//! [`Metrics`]: the numbers of one `Serving Benchmark Result` block, read line by line.
//!
//! A block line is `Label:<spaces>value`. Labels are matched case-insensitively (the older
//! client prints "Inter-token", newer ones "Inter-Token"; vLLM-derived forks print "Total
//! Token throughput" or "Maximum request concurrency"). Every numeric value lands in
//! [`Metrics::all`] under its printed label; every non-numeric one in [`Metrics::text`].
//! A known metric with a non-numeric value is an error; `not set`, `N/A` and `None` mean
//! "absent".
use std::collections::BTreeMap;

/// Every number printed in a result block. Typed fields for the ones the simulator compares;
/// all of them also in `all`, keyed by the printed label without the trailing colon.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Metrics {
    pub backend: Option<String>,
    /// "Traffic request rate"; `f64::INFINITY` for `inf`.
    pub traffic_request_rate: Option<f64>,
    /// "Max request concurrency"; `None` when `not set` or not printed (older clients).
    pub max_concurrency: Option<u64>,
    pub successful_requests: u64,
    pub duration_s: f64,
    pub total_input_tokens: u64,
    pub total_generated_tokens: u64,
    pub total_generated_tokens_retokenized: Option<u64>,
    pub request_throughput: f64,
    pub input_throughput: f64,
    pub output_throughput: f64,
    pub total_throughput: Option<f64>,
    pub concurrency: Option<f64>,
    pub peak_output_throughput: Option<f64>,
    pub peak_concurrent_requests: Option<f64>,
    pub mean_e2e_ms: f64,
    pub median_e2e_ms: f64,
    pub mean_ttft_ms: f64,
    pub median_ttft_ms: f64,
    pub p99_ttft_ms: f64,
    pub mean_tpot_ms: Option<f64>,
    pub median_tpot_ms: Option<f64>,
    pub p99_tpot_ms: Option<f64>,
    pub mean_itl_ms: f64,
    pub median_itl_ms: f64,
    pub p95_itl_ms: Option<f64>,
    pub p99_itl_ms: f64,
    pub max_itl_ms: Option<f64>,
    /// Every numeric value, keyed by printed label (e.g. "Mean TTFT (ms)").
    pub all: BTreeMap<String, f64>,
    /// Every non-numeric value as printed (e.g. "Backend" → "sglang",
    /// "Max request concurrency" → "not set").
    pub text: BTreeMap<String, String>,
}

/// Metrics a block must print to be usable, by printed label (lower-cased for matching).
pub const REQUIRED: &[&str] = &[
    "Successful requests",
    "Benchmark duration (s)",
    "Total input tokens",
    "Total generated tokens",
    "Request throughput (req/s)",
    "Input token throughput (tok/s)",
    "Output token throughput (tok/s)",
    "Mean E2E Latency (ms)",
    "Median E2E Latency (ms)",
    "Mean TTFT (ms)",
    "Median TTFT (ms)",
    "P99 TTFT (ms)",
    "Mean ITL (ms)",
    "Median ITL (ms)",
    "P99 ITL (ms)",
];

/// Labels whose value is expected to be text.
const TEXT_LABELS: &[&str] = &["backend"];

/// Labels with typed fields that accept a "not set"-style value.
const SENTINELS: &[&str] = &["not set", "n/a", "none", "-"];

/// One `Label: value` line of a block.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Num(f64),
    Text(String),
}

/// Collects the entries of one result block as its lines arrive.
#[derive(Debug, Default)]
pub struct BlockReader {
    /// Lower-cased, whitespace-collapsed label → (line, printed label, value).
    entries: BTreeMap<String, (usize, String, Value)>,
}

/// A bench_serving label as the tables key it: whitespace collapsed, lower case.
pub(crate) fn norm(label: &str) -> String {
    label
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// True if `norm(label)` is one of the labels bound to a typed numeric field.
fn is_typed_numeric(key: &str) -> bool {
    REQUIRED.iter().any(|r| norm(r) == key) || ALIASES.iter().any(|(_, names)| names.contains(&key))
}

/// Optional typed fields: field name → accepted (normalised) labels.
const ALIASES: &[(&str, &[&str])] = &[
    (
        "traffic_request_rate",
        &["traffic request rate", "request rate configured (rps)"],
    ),
    (
        "max_concurrency",
        &["max request concurrency", "maximum request concurrency"],
    ),
    ("retokenized", &["total generated tokens (retokenized)"]),
    (
        "total_throughput",
        &["total token throughput (tok/s)", "total throughput (tok/s)"],
    ),
    ("concurrency", &["concurrency"]),
    ("peak_output", &["peak output token throughput (tok/s)"]),
    ("peak_concurrent", &["peak concurrent requests"]),
    ("mean_tpot", &["mean tpot (ms)"]),
    ("median_tpot", &["median tpot (ms)"]),
    ("p99_tpot", &["p99 tpot (ms)"]),
    ("p95_itl", &["p95 itl (ms)"]),
    ("max_itl", &["max itl (ms)"]),
];

impl BlockReader {
    /// Reads one line of the block body. Section rules (`----Time to First Token----`),
    /// blank lines and lines that do not look like `Label: value` are skipped.
    pub fn push(&mut self, line_no: usize, line: &str) -> Result<(), String> {
        let t = line.trim();
        if !t.chars().next().is_some_and(char::is_alphabetic) {
            return Ok(());
        }
        let Some((label, value)) = t.split_once(':') else {
            return Ok(());
        };
        let (label, value) = (label.trim(), value.trim());
        if label.is_empty() || value.is_empty() {
            return Ok(());
        }
        let key = norm(label);
        let parsed = match value.parse::<f64>() {
            Ok(f) => Value::Num(f),
            Err(_) => {
                let lower = value.to_lowercase();
                let ok = TEXT_LABELS.contains(&key.as_str())
                    || SENTINELS.contains(&lower.as_str())
                    || !is_typed_numeric(&key);
                if !ok {
                    return Err(format!("`{label}` has a non-numeric value `{value}`"));
                }
                Value::Text(value.to_string())
            }
        };
        if let Some((first, _, _)) = self.entries.get(&key) {
            return Err(format!("`{label}` printed twice (first at line {first})"));
        }
        self.entries
            .insert(key, (line_no, label.to_string(), parsed));
        Ok(())
    }

    /// Required metrics not (numerically) present so far, by printed label.
    pub fn missing(&self) -> Vec<&'static str> {
        REQUIRED
            .iter()
            .copied()
            .filter(|r| self.num(&norm(r)).is_none())
            .collect()
    }

    fn num(&self, key: &str) -> Option<f64> {
        match self.entries.get(key) {
            Some((_, _, Value::Num(f))) => Some(*f),
            _ => None,
        }
    }

    fn alias(&self, field: &str) -> Option<f64> {
        let (_, names) = ALIASES.iter().find(|(f, _)| *f == field)?;
        names.iter().find_map(|n| self.num(n))
    }

    fn count(&self, label: &str, v: Option<f64>) -> Result<Option<u64>, String> {
        match v {
            None => Ok(None),
            Some(f) if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 9.0e15 => {
                Ok(Some(f as u64))
            }
            Some(f) => Err(format!("`{label}` should be a whole number, found {f}")),
        }
    }

    /// Finishes the block: every required metric must be present.
    pub fn finish(self) -> Result<Metrics, String> {
        let missing = self.missing();
        if !missing.is_empty() {
            return Err(format!("missing metric(s): {}", missing.join(", ")));
        }
        let req = |label: &str| self.num(&norm(label)).unwrap_or(f64::NAN);
        let req_count = |label: &str| -> Result<u64, String> {
            Ok(self.count(label, Some(req(label)))?.unwrap_or(0))
        };
        let mut all = BTreeMap::new();
        let mut text = BTreeMap::new();
        for (_, label, value) in self.entries.values() {
            match value {
                Value::Num(f) => {
                    all.insert(label.clone(), *f);
                }
                Value::Text(s) => {
                    text.insert(label.clone(), s.clone());
                }
            }
        }
        let backend = match self.entries.get("backend") {
            Some((_, _, Value::Text(s))) => Some(s.clone()),
            Some((_, _, Value::Num(f))) => Some(f.to_string()),
            None => None,
        };
        Ok(Metrics {
            backend,
            traffic_request_rate: self.alias("traffic_request_rate"),
            max_concurrency: self
                .count("Max request concurrency", self.alias("max_concurrency"))?,
            successful_requests: req_count("Successful requests")?,
            duration_s: req("Benchmark duration (s)"),
            total_input_tokens: req_count("Total input tokens")?,
            total_generated_tokens: req_count("Total generated tokens")?,
            total_generated_tokens_retokenized: self.count(
                "Total generated tokens (retokenized)",
                self.alias("retokenized"),
            )?,
            request_throughput: req("Request throughput (req/s)"),
            input_throughput: req("Input token throughput (tok/s)"),
            output_throughput: req("Output token throughput (tok/s)"),
            total_throughput: self.alias("total_throughput"),
            concurrency: self.alias("concurrency"),
            peak_output_throughput: self.alias("peak_output"),
            peak_concurrent_requests: self.alias("peak_concurrent"),
            mean_e2e_ms: req("Mean E2E Latency (ms)"),
            median_e2e_ms: req("Median E2E Latency (ms)"),
            mean_ttft_ms: req("Mean TTFT (ms)"),
            median_ttft_ms: req("Median TTFT (ms)"),
            p99_ttft_ms: req("P99 TTFT (ms)"),
            mean_tpot_ms: self.alias("mean_tpot"),
            median_tpot_ms: self.alias("median_tpot"),
            p99_tpot_ms: self.alias("p99_tpot"),
            mean_itl_ms: req("Mean ITL (ms)"),
            median_itl_ms: req("Median ITL (ms)"),
            p95_itl_ms: self.alias("p95_itl"),
            p99_itl_ms: req("P99 ITL (ms)"),
            max_itl_ms: self.alias("max_itl"),
            all,
            text,
        })
    }
}
