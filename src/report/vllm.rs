//! vLLM's benchmark client output: its printed result block line for line, and the object its
//! `--save-result` writes, per client version ([`VllmFlavour`]).
//!
//! Lines are Python's `"{:<40} {:<10}"` (ints) / `"{:<40} {:<10.2f}"` (floats) with trailing
//! spaces, rules `"{s:{c}^{n}}".format(n=50)`. Which lines appear (vllm-behaviour B.5):
//! "Failed requests" CLI 0.11.2+; "Maximum request concurrency" (with `--max-concurrency`) and
//! "Request rate configured (RPS)" (finite rate) CLI 0.10.1+ and legacy 0.10.1.1; "Request
//! goodput" with `--goodput` (0.6.4+); the two "Peak" lines CLI 0.11.0+; "Total Token throughput"
//! spelled with a capital T until CLI 0.12.x; then one section per selected metric in the
//! fixed order TTFT, TPOT, ITL, E2EL with Mean, Median and `P{p}` lines.
//!
//! The JSON is the non-detailed key set (no `--save-detailed`), in vLLM's insertion order.
//! Left out, because a simulation has no such values: `date` (wall clock), `label`,
//! `tokenizer_id`, `--metadata`, the per-request lists a version always saves (`input_lens`,
//! `output_lens`, `ttfts`, `itls`, `generated_texts`, `errors` in legacy ≤0.7.x and CLI
//! 0.8.0–0.9.0; `latencies` and `queue_times` in 0.30+), `rtfx` (0.17+, audio only) and
//! `rps_change_events`. `request_rate` `inf` is the string `"inf"`, as vLLM writes it.
use super::text::{centered, field, fixed2, py_float_repr};
use crate::client::vllm::flavour::{Script, VllmFlavour};
use crate::metrics::vllm::VllmMetrics;
use crate::spec::version::Version;
use serde_json::Value;

/// The run parameters vLLM echoes.
#[derive(Debug, Clone, PartialEq)]
pub struct VllmHeader {
    /// `--backend` (`vllm`, `openai`) as passed.
    pub backend: String,
    pub model_id: String,
    pub num_prompts: u64,
    pub request_rate: f64,
    pub burstiness: f64,
    pub max_concurrency: Option<u64>,
    /// `(strategy, start rps, end rps)`.
    pub ramp_up: Option<(String, f64, f64)>,
}

fn metric_names(key: &str) -> (&'static str, &'static str) {
    match key {
        "ttft" => ("TTFT", "Time to First Token"),
        "tpot" => ("TPOT", "Time per Output Token (excl. 1st token)"),
        "itl" => ("ITL", "Inter-token Latency"),
        _ => ("E2EL", "End-to-end Latency"),
    }
}

/// `str(int(p)) if int(p) == p else str(p)`.
fn p_word(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}", p as i64)
    } else {
        py_float_repr(p)
    }
}

/// What the client prints just before the block: `Traffic request rate: {rate}` (with " RPS."
/// in legacy 0.9.2–0.10.1), then from 0.6.4 `Burstiness factor: {b} (Poisson process|Gamma
/// distribution)` and `Maximum request concurrency: {c|None}`. (Ramp-up runs print their own
/// lines instead of the rate; not reproduced.)
pub fn render_pre_block(h: &VllmHeader, f: &VllmFlavour) -> String {
    let v = |a, b, c| Version::new(a, b, c);
    let rate = py_float_repr(h.request_rate);
    let legacy_rps = f.script == Script::Legacy && f.version >= v(0, 9, 2);
    let mut out = if legacy_rps {
        format!("Traffic request rate: {rate} RPS.\n")
    } else {
        format!("Traffic request rate: {rate}\n")
    };
    if f.version >= v(0, 6, 4) {
        let shape = if h.burstiness == 1.0 {
            "Poisson process"
        } else {
            "Gamma distribution"
        };
        out.push_str(&format!(
            "Burstiness factor: {} ({shape})\n",
            py_float_repr(h.burstiness)
        ));
        let cap = h
            .max_concurrency
            .map_or("None".to_string(), |c| c.to_string());
        out.push_str(&format!("Maximum request concurrency: {cap}\n"));
    }
    out
}

/// The printed block, from the `=== Serving Benchmark Result ===` rule to the closing rule.
pub fn render_text(m: &VllmMetrics, h: &VllmHeader, f: &VllmFlavour) -> String {
    let mut lines = vec![centered(" Serving Benchmark Result ", '=')];
    let int = |label: &str, v: u64| field(label, &v.to_string());
    let flt = |label: &str, v: f64| field(label, &fixed2(v));
    lines.push(int("Successful requests:", m.completed));
    if f.prints_failed {
        lines.push(int("Failed requests:", m.failed));
    }
    if f.prints_config_lines {
        if let Some(c) = h.max_concurrency {
            lines.push(int("Maximum request concurrency:", c));
        }
        if h.request_rate.is_finite() {
            lines.push(flt("Request rate configured (RPS):", h.request_rate));
        }
    }
    lines.push(flt("Benchmark duration (s):", m.duration_s));
    lines.push(int("Total input tokens:", m.total_input));
    lines.push(int("Total generated tokens:", m.total_output));
    lines.push(flt("Request throughput (req/s):", m.request_throughput));
    if let Some(g) = m.request_goodput {
        lines.push(flt("Request goodput (req/s):", g));
    }
    lines.push(flt("Output token throughput (tok/s):", m.output_throughput));
    if f.prints_peaks {
        lines.push(flt(
            "Peak output token throughput (tok/s):",
            m.max_output_tokens_per_s,
        ));
        lines.push(flt("Peak concurrent requests:", m.max_concurrent_requests));
    }
    let total_label = if f.total_lowercase {
        "Total token throughput (tok/s):"
    } else {
        "Total Token throughput (tok/s):"
    };
    lines.push(flt(total_label, m.total_token_throughput));
    for s in &m.summaries {
        let (name, header) = metric_names(s.key);
        lines.push(centered(header, '-'));
        lines.push(flt(&format!("Mean {name} (ms):"), s.mean_ms));
        lines.push(flt(&format!("Median {name} (ms):"), s.median_ms));
        for &(p, v) in &s.percentiles_ms {
            lines.push(flt(&format!("P{} {name} (ms):", p_word(p)), v));
        }
    }
    lines.push("=".repeat(50));
    lines.join("\n") + "\n"
}

/// The `--save-result` object as ordered `(key, value)` pairs.
pub fn json_entries(m: &VllmMetrics, h: &VllmHeader, f: &VllmFlavour) -> Vec<(String, Value)> {
    let v = |a, b, c| Version::new(a, b, c);
    let cli = f.script == Script::Cli;
    let mut e: Vec<(String, Value)> = Vec::new();
    let mut put = |k: &str, val: Value| e.push((k.to_string(), val));
    if cli {
        put("endpoint_type", Value::from(h.backend.as_str()));
        if f.version >= v(0, 11, 0) {
            put("backend", Value::from(h.backend.as_str()));
        }
    } else {
        put("backend", Value::from(h.backend.as_str()));
    }
    put("model_id", Value::from(h.model_id.as_str()));
    if f.version < v(0, 8, 0) {
        put("best_of", Value::from(1));
    }
    put("num_prompts", Value::from(h.num_prompts));
    put(
        "request_rate",
        if h.request_rate.is_finite() {
            Value::from(h.request_rate)
        } else {
            Value::from("inf")
        },
    );
    if f.version >= v(0, 6, 4) {
        put("burstiness", Value::from(h.burstiness));
        put(
            "max_concurrency",
            h.max_concurrency.map_or(Value::Null, Value::from),
        );
    }
    if let Some((s, a, b)) = &h.ramp_up {
        put("ramp_up_strategy", Value::from(s.as_str()));
        put("ramp_up_start_rps", Value::from(*a));
        put("ramp_up_end_rps", Value::from(*b));
    }
    put("duration", Value::from(m.duration_s));
    put("completed", Value::from(m.completed));
    if f.prints_failed {
        put("failed", Value::from(m.failed));
    }
    put("total_input_tokens", Value::from(m.total_input));
    put("total_output_tokens", Value::from(m.total_output));
    put("request_throughput", Value::from(m.request_throughput));
    // The key had a stray colon in legacy 0.6.4–0.9.1 and CLI 0.8.0–0.9.0.
    let goodput_key = if f.version < v(0, 9, 2) {
        "request_goodput:"
    } else {
        "request_goodput"
    };
    if f.version >= v(0, 6, 4) {
        put(
            goodput_key,
            m.request_goodput.map_or(Value::Null, Value::from),
        );
    }
    put("output_throughput", Value::from(m.output_throughput));
    put(
        "total_token_throughput",
        Value::from(m.total_token_throughput),
    );
    if f.prints_peaks {
        put(
            "max_output_tokens_per_s",
            Value::from(m.max_output_tokens_per_s),
        );
        put(
            "max_concurrent_requests",
            Value::from(m.max_concurrent_requests),
        );
    }
    for s in &m.summaries {
        put(&format!("mean_{}_ms", s.key), Value::from(s.mean_ms));
        put(&format!("median_{}_ms", s.key), Value::from(s.median_ms));
        put(&format!("std_{}_ms", s.key), Value::from(s.std_ms));
        for &(p, val) in &s.percentiles_ms {
            put(&format!("p{}_{}_ms", p_word(p), s.key), Value::from(val));
        }
    }
    e
}

/// [`json_entries`] as a pretty-printed object in that key order, plus `"servesim": extra`.
pub fn render_json(m: &VllmMetrics, h: &VllmHeader, f: &VllmFlavour, extra: &Value) -> String {
    let mut entries = json_entries(m, h, f);
    entries.push(("servesim".to_string(), extra.clone()));
    let body: Vec<String> = entries
        .iter()
        .map(|(k, v)| {
            let key = Value::from(k.as_str()).to_string();
            let val = format!("{v:#}").replace('\n', "\n  ");
            format!("  {key}: {val}")
        })
        .collect();
    format!("{{\n{}\n}}", body.join(",\n"))
}
