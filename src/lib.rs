//! servesim: a deterministic discrete-event simulator of LLM serving.
//!
//! Layers, bottom first; each module imports only the ones before it (checked in CI by
//! `scripts/rust_imports.py --cycles --upward`): `error`, `spec` (pure data: hardware, model,
//! server, workload), `cost` (batch shape → ns), `metrics` (bench_serving's aggregates),
//! `client` (datasets, arrivals, RNGs), `engine` (event loop, SGLang scheduler, router),
//! `report` (text, JSON, tables, SVG, HTML pieces), `simulation` (scenario → run → metrics),
//! then the studies `validate`, `sweep`, `calibrate`, `plan`, and `cli` on top.
//!
//! Reading guide: where is ...
//! - a scenario resolved from flags and files: `spec::server::ServerConfig::resolve`,
//!   `spec::workload`, `simulation::Scenario::resolve`;
//! - the KV pool sized: `spec::server` (`ServerConfig::resolve`, SGLang's
//!   `profile_max_num_token`), with the version defaults in `spec::defaults`;
//! - admission decided (refused, clipped, or never admitted): `engine::admission`, called by
//!   the event loop (`engine::sim`) and the up-front check (`simulation::sanity`); the
//!   per-iteration budgets (PrefillAdder) in `engine::scheduler::adder`;
//! - the next batch formed (prefill first, chunking, mixed): `engine::scheduler` (`mod.rs`),
//!   decode memory and retraction in `engine/scheduler/decode.rs`;
//! - the decode (or any) step priced: `cost::roofline` (`Roofline::gpu_ns`, `step_time`), or
//!   `cost::kernels` with `--cost-model kernels` (`cost::select` says which and why); known
//!   SGLang software gaps by version and GPU (untuned fused MoE): `cost::moe_config`;
//! - the radix cache: `engine::radix`; the running batch as O(1) aggregates:
//!   `engine::running`;
//! - the client's semaphore, sends and token streams: `engine::sim`, `engine::stream`;
//! - bench_serving's numbers computed: `metrics::aggregate`; printed: `report::text`;
//! - comparison with real logs: `validate::compare`; fitting profiles: `calibrate`
//!   (`calibrate --cost-model` prices the runs with either backend).
pub mod calibrate;
pub mod cli;
pub mod client;
pub mod cost;
pub mod engine;
pub mod error;
pub mod metrics;
pub mod plan;
pub mod report;
pub mod simulation;
pub mod spec;
pub mod sweep;
pub mod validate;
