//! bench_serving emulation: datasets (request lengths), arrivals, the max-concurrency
//! semaphore, warm-up, and client flavours by `--bench-version`.
pub mod arrivals;
pub mod dataset;
pub mod flavour;
pub mod rng;
pub mod send;
