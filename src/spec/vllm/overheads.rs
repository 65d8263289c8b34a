//! vLLM's own CPU time per engine step, by engine (V0 / V1), in place of the profile's
//! SGLang-fitted `step_cpu_ns` / `per_request_cpu_ns` for a vLLM server. Named, sourced and
//! bounded values, not fitted on any run servesim scores. Each is a judgement anchored on
//! published measurements (reference A.8):
//! - vLLM blog "vLLM v0.6.0: 2.7x Throughput Improvement and 5x Latency Reduction"
//!   (2024-09-05): Llama-3-8B on one H100 under 0.5.3 spent 29% of its time scheduling
//!   (gathering the last step's results, scheduling, preparing inputs) against 38% on the
//!   GPU; 0.6.0's async output processor (PR #7049, +12% throughput) moved output
//!   processing off the critical path.
//! - vLLM issue #6854 (multi-step RFC, 2024-07): "5-13ms of GPU bubble" per decode step in
//!   V0, about 4 ms on its traces (token copy, pythonization, input preparation, scheduler).
//! - vLLM issue #10634 (2024-11, early V1 `AsyncLLM`): 5–6 ms between decodes at batch 256
//!   (Llama-2-7B, ShareGPT), attributed to GIL contention that V1's busy-loop engine core
//!   process then removed (blog "vLLM V1", 2025-01-27: scheduler and executor in their own
//!   process, API server and detokenization overlapped with it).
//! - vLLM PR #24174 (2025-09): 4.6 ms between `execute_model` calls with 10 long
//!   generations, dominated by incremental detokenization: the upper bound for V1 at a
//!   small batch.
use super::defaults;
use crate::spec::version::Version;

/// One engine's CPU time per step: fixed plus per scheduled request, ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuCosts {
    pub step_cpu_ns: f64,
    pub per_request_cpu_ns: f64,
}

/// V0 (0.6–0.7): 2.0 ms + 12 µs per request: 5.1 ms at batch 256 (the low end of #6854's
/// 5–13 ms bubble, less the output processing 0.6.0 overlaps), 2.4 ms at batch 32 (under
/// the ≈4 ms traces). Bounds: 1–5 ms fixed, 5–40 µs per request.
pub const V0_CPU: CpuCosts = CpuCosts {
    step_cpu_ns: 2.0e6,
    per_request_cpu_ns: 12e3,
};

/// V1 (0.8+): 1.0 ms + 8 µs per request: 3.0 ms at batch 256 (below #10634's 5–6 ms
/// measured before the GIL fix), 1.1 ms at batch 10 (below #24174's detokenizer-bound
/// 4.6 ms). Bounds: 0.5–3 ms fixed, 2–25 µs per request.
///
/// What it covers, read in 0.10.2 / 0.11.0: `EngineCore.step` runs `schedule()`, the model
/// runner's `_update_states` / `_prepare_inputs`, the forward pass, the sampled ids'
/// `.tolist()` sync with its bookkeeping, and `update_from_output()` in series, so the cost
/// adds to the GPU time; `--async-scheduling` (`step_with_batch_queue` and PR #23569's
/// `AsyncGPUModelRunnerOutput`) runs all of it under the previous step's GPU time
/// (`cost::overheads::Overheads::with_cpu`). Later measurements agree with these values:
/// tenstorrent/vllm PR #305 (vLLM overhead alone, no-op model) 1.15 ms at batch 32;
/// vllm-ascend PR #2783 2.5 ms hidden at batch 48 (eager, NPU host). None measures the whole
/// serial host time at batch ≥ 128 on a GPU (validation/vllm/host-time-notes.md).
pub const V1_CPU: CpuCosts = CpuCosts {
    step_cpu_ns: 1.0e6,
    per_request_cpu_ns: 8e3,
};

/// The CPU costs of vLLM `version`'s default engine.
pub fn cpu_costs(version: Version) -> CpuCosts {
    if defaults::is_v0(version) {
        V0_CPU
    } else {
        V1_CPU
    }
}
