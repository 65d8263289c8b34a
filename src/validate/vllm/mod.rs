//! Real vLLM benchmark runs read back: the result block `vllm bench serve` and
//! `benchmarks/benchmark_serving.py` print ([`block`]), the object `--save-result` writes
//! ([`result_json`]), and the command lines around them ([`command`]: the client's flags as
//! servesim client flags, and `vllm serve` / `python -m vllm.entrypoints.openai.api_server`
//! flags as a neutral [`command::VllmServeCommand`]). All parsers return [`VllmResult`], keyed
//! like vLLM's JSON, so one comparison serves both formats.
pub mod block;
pub mod command;
pub mod entry;
pub mod replay;
pub mod result_json;

use std::collections::BTreeMap;

/// One run's numbers, as vLLM names them in its JSON (`completed`, `duration`,
/// `mean_ttft_ms`, `p99_itl_ms`, `max_concurrent_requests`, ...). Keys a version does not
/// print are absent.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct VllmResult {
    pub values: BTreeMap<String, f64>,
    /// `max_concurrency` / `request_rate` when the block or JSON states them.
    pub max_concurrency: Option<u64>,
    pub request_rate: Option<f64>,
    /// 1-based line of the block's title (0 for JSON).
    pub line: usize,
    /// The nearest client command before the block (`vllm bench serve ...` or
    /// `python benchmarks/benchmark_serving.py ...`), continuation lines joined.
    pub bench_command: Option<String>,
    /// The nearest server command before the block: `vllm serve` / `api_server`, or
    /// `python -m sglang.launch_server` (then the replay runs an SGLang server).
    pub serve_command: Option<String>,
}

impl VllmResult {
    pub fn get(&self, key: &str) -> Option<f64> {
        self.values.get(key).copied()
    }
}

/// The keys every vLLM block has (legacy 0.6.2 onwards).
pub const REQUIRED: &[&str] = &[
    "completed",
    "duration",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "output_throughput",
];
