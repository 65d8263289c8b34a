//! vLLM's client output: the printed result block line for line per version and the
//! `--save-result` JSON keys, checked against the version's source.
use super::*;

use servesim::metrics::vllm::{MetricSummary, VllmMetrics};
use servesim::report::vllm::{json_entries, render_text, VllmHeader};

pub(super) fn sample_metrics(percentiles: &[f64]) -> VllmMetrics {
    let summary = |key: &'static str, base: f64| MetricSummary {
        key,
        mean_ms: base,
        median_ms: base - 1.0,
        std_ms: 0.5,
        percentiles_ms: percentiles.iter().map(|&p| (p, base + p / 10.0)).collect(),
    };
    VllmMetrics {
        completed: 16,
        failed: 0,
        total_input: 16368,
        total_output: 5600,
        duration_s: 20.871,
        request_throughput: 0.7666,
        request_goodput: None,
        output_throughput: 268.314,
        total_token_throughput: 1052.555,
        max_output_tokens_per_s: 352.0,
        max_concurrent_requests: 16.0,
        summaries: vec![
            summary("ttft", 2633.55),
            summary("tpot", 51.78),
            summary("itl", 51.78),
        ],
    }
}

pub(super) fn header(rate: f64, cap: Option<u64>) -> VllmHeader {
    VllmHeader {
        backend: "openai".into(),
        model_id: "gemma-3-27b".into(),
        num_prompts: 16,
        request_rate: rate,
        burstiness: 1.0,
        max_concurrency: cap,
        ramp_up: None,
    }
}

#[test]
fn printed_block_matches_cli_0_33_line_for_line() {
    // vllm/benchmarks/serve.py@0.33.0: "{:<40} {:<10}" / "{:<40} {:<10.2f}", Failed and Peak
    // lines, lower-case "Total token throughput", sections TTFT, TPOT, ITL with Mean, Median, P99.
    let text = render_text(
        &sample_metrics(&[99.0]),
        &header(f64::INFINITY, None),
        &flavour("cli", "0.33.0"),
    );
    let want = "\
============ Serving Benchmark Result ============
Successful requests:                     16        
Failed requests:                         0         
Benchmark duration (s):                  20.87     
Total input tokens:                      16368     
Total generated tokens:                  5600      
Request throughput (req/s):              0.77      
Output token throughput (tok/s):         268.31    
Peak output token throughput (tok/s):    352.00    
Peak concurrent requests:                16.00     
Total token throughput (tok/s):          1052.56   
---------------Time to First Token----------------
Mean TTFT (ms):                          2633.55   
Median TTFT (ms):                        2632.55   
P99 TTFT (ms):                           2643.45   
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          51.78     
Median TPOT (ms):                        50.78     
P99 TPOT (ms):                           61.68     
---------------Inter-token Latency----------------
Mean ITL (ms):                           51.78     
Median ITL (ms):                         50.78     
P99 ITL (ms):                            61.68     
==================================================
";
    assert_eq!(text, want);
}

#[test]
fn printed_block_follows_the_version() {
    let m = sample_metrics(&[50.0, 99.9]);
    // Legacy 0.6.3: no Failed, no concurrency/rate lines, no Peak lines, capital T.
    let old = render_text(&m, &header(4.0, Some(8)), &flavour("legacy", "0.6.3"));
    assert!(!old.contains("Failed requests"));
    assert!(!old.contains("Maximum request concurrency"));
    assert!(!old.contains("Peak"));
    assert!(old.contains("Total Token throughput (tok/s):          1052.56   \n"));
    // P50 printed as an int, P99.9 as Python's str(99.9).
    assert!(old.contains("P50 TTFT (ms):                           2638.55   \n"));
    assert!(old.contains("P99.9 ITL (ms):                          61.77     \n"));
    // CLI 0.10.1: the concurrency and configured-rate lines after Successful requests.
    let mid = render_text(&m, &header(4.0, Some(8)), &flavour("cli", "0.10.1"));
    let lines: Vec<&str> = mid.lines().collect();
    assert_eq!(
        lines[1].trim_end(),
        "Successful requests:                     16"
    );
    assert_eq!(
        lines[2].trim_end(),
        "Maximum request concurrency:             8"
    );
    assert_eq!(
        lines[3].trim_end(),
        "Request rate configured (RPS):           4.00"
    );
    assert!(!mid.contains("Peak") && !mid.contains("Failed"));
}

#[test]
fn saved_json_keys_match_the_source_key_by_key() {
    let keys = |script: &str, version: &str, m: &VllmMetrics| -> Vec<String> {
        json_entries(m, &header(f64::INFINITY, None), &flavour(script, version))
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    };
    let m = sample_metrics(&[99.0]);
    // Then, for TTFT, TPOT and ITL: mean, median, std and p99, in ms.
    let latency_keys: Vec<String> = ["ttft", "tpot", "itl"]
        .iter()
        .flat_map(|m| ["mean", "median", "std", "p99"].map(|s| format!("{s}_{m}_ms")))
        .collect();
    // CLI 0.33.0, no --save-detailed (serve.py main(): result_json header keys, then the
    // benchmark() result; the per-request lists deleted; date/label/tokenizer_id left out).
    let mut want: Vec<String> = [
        "endpoint_type",
        "backend",
        "model_id",
        "num_prompts",
        "request_rate",
        "burstiness",
        "max_concurrency",
        "duration",
        "completed",
        "failed",
        "total_input_tokens",
        "total_output_tokens",
        "request_throughput",
        "request_goodput",
        "output_throughput",
        "total_token_throughput",
        "max_output_tokens_per_s",
        "max_concurrent_requests",
    ]
    .map(String::from)
    .to_vec();
    want.extend_from_slice(&latency_keys);
    assert_eq!(keys("cli", "0.33.0", &m), want);
    // Legacy 0.6.3 (benchmark_serving.py): backend, best_of, no burstiness/concurrency, no
    // goodput key, no failed, no peaks.
    let mut want: Vec<String> = [
        "backend",
        "model_id",
        "best_of",
        "num_prompts",
        "request_rate",
        "duration",
        "completed",
        "total_input_tokens",
        "total_output_tokens",
        "request_throughput",
        "output_throughput",
        "total_token_throughput",
    ]
    .map(String::from)
    .to_vec();
    want.extend_from_slice(&latency_keys);
    assert_eq!(keys("legacy", "0.6.3", &m), want);
    // The goodput key's stray colon (legacy 0.6.4–0.9.1, CLI 0.8.0–0.9.0), gone in 0.9.2.
    assert!(keys("legacy", "0.8.5", &m).contains(&"request_goodput:".to_string()));
    assert!(keys("cli", "0.9.2", &m).contains(&"request_goodput".to_string()));
    // request_rate inf is the string "inf".
    let e = json_entries(&m, &header(f64::INFINITY, None), &flavour("cli", "0.33.0"));
    assert_eq!(e[4].1, Value::from("inf"));
}
