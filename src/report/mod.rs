//! Output: bench_serving-format text, JSON with bench_serving's keys.
//!
//! Both renderers take the aggregates ([`crate::metrics::BenchMetrics`]) plus the few run
//! parameters bench_serving echoes in its report ([`ReportHeader`]).
pub mod charts;
pub mod html;
pub mod json;
pub mod jsonl;
pub mod markup;
pub mod table;
pub mod text;
pub mod timeline;
pub mod vllm;

use crate::spec::version::Version;

/// The run parameters bench_serving prints above its metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportHeader {
    /// `--backend` (`sglang`, `sglang-oai`, ...).
    pub backend: String,
    /// `--request-rate` in requests per second; `f64::INFINITY` for `inf` (the default).
    pub request_rate: f64,
    /// `--max-concurrency`; `None` (or 0, which bench_serving treats the same) is "not set".
    pub max_concurrency: Option<u64>,
    /// The bench_serving (SGLang) version whose layout to reproduce.
    pub bench_version: Version,
}
