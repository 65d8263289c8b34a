//! bench_serving emulation as data: datasets (request lengths), arrival times, numpy/CPython
//! RNGs, and client flavours by `--bench-version` (which warm-up, which closing round trip).
//! The client's behaviour in time (the max-concurrency semaphore, the single-threaded send
//! loop, the warm-up's effect on the cache, streamed tokens) runs inside the event loop:
//! `engine::sim` and `engine::stream`.
pub mod arrivals;
pub mod dataset;
pub mod flavour;
pub mod prior;
pub mod rng;
pub mod send;
pub mod vllm;
