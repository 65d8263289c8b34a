//! bench_serving's aggregates, computed exactly as `calculate_metrics` does.
pub mod aggregate;
pub mod percentile;
pub mod record;
pub mod sort;
pub mod vllm;

pub use aggregate::{compute, BenchMetrics, Stats};
