//! Costs on top of the kernels, shared by every [`StepCost`](super::StepCost) backend: the
//! scheduler's CPU time per iteration (hidden under the GPU step by the overlap scheduler, else
//! serial; scaled by `worker_thread_cpu_scale` in the SGLang versions whose overlap scheduler
//! runs the forward pass on a second Python thread, `spec::scheduler_cpu`) and the fixed
//! GPU-side time per step (CUDA-graph launch and sampling, per-layer launch
//! costs when eager (an MLA layer's from [`super::eager_host`]), per-layer and per-MoE-layer
//! floors).
use super::{Launch, StepTime};
use crate::spec::hardware::{HardwareProfile, Overheads as OverheadConstants};
use crate::spec::model::ModelSpec;
use crate::spec::scheduler_cpu;
use crate::spec::server::ServerConfig;
use crate::spec::version::Version;

/// The scheduler-CPU multiplier: `worker_thread_cpu_scale` for an SGLang server (`vllm` false)
/// whose overlap scheduler runs (`overlap`) on a worker thread in its `version`, else 1 (the
/// one-thread loop the CPU constants are stated for; vLLM's costs are its own).
fn cpu_scale(worker_thread_cpu_scale: f64, version: Version, overlap: bool, vllm: bool) -> f64 {
    if !vllm && overlap && scheduler_cpu::group(version).overlap_on_worker_thread {
        worker_thread_cpu_scale
    } else {
        1.0
    }
}

/// Share of a layer's eager launch cost left under vLLM's piecewise CUDA graphs
/// (`vllm/compilation/`: the graph is split at the attention op, which runs eagerly). A
/// Llama-style layer launches about ten kernels eagerly (input norm, QKV GEMM, rotary, KV
/// cache store, attention, O GEMM, residual norm, gate/up GEMM, activation, down GEMM);
/// piecewise, it launches three: one replay of the graph piece before the next attention,
/// and the attention op's two kernels (`reshape_and_cache_flash`, the attention kernel).
/// 3/10, by that count (bounds: 0.2 with fused cache store to 0.4 with TP's all-reduce
/// kernels eager); not fitted.
pub const PIECEWISE_LAUNCH_SHARE: f64 = 0.3;

/// The overhead terms of one deployment, resolved once per scenario.
#[derive(Debug, Clone)]
pub struct Overheads {
    /// The profile block the constants come from, for `--explain`.
    pub block: &'static str,
    constants: OverheadConstants,
    overlap: bool,
    /// Multiplier on the scheduler CPU time: the profile's `worker_thread_cpu_scale` when the
    /// overlap scheduler of this SGLang version runs on a worker thread, else 1.
    cpu_scale: f64,
    num_layers: f64,
    moe_layers: f64,
    /// Per-layer launch cost of an eager step, ns: the profile's `eager_layer_ns`, or the MLA
    /// layer's measured host time on an SGLang server with eager prefills
    /// ([`super::eager_host`]).
    eager_layer_ns: f64,
}

impl Overheads {
    /// The roofline's overheads (`overheads:`).
    pub fn new(hw: &HardwareProfile, model: &ModelSpec, server: &ServerConfig) -> Self {
        Self::for_backend(hw, model, server, false)
    }

    /// The overheads of the backend: with `kernels`, `kernels_overheads:` over `overheads:`
    /// ([`crate::spec::hardware_backend`]).
    pub fn for_backend(
        hw: &HardwareProfile,
        model: &ModelSpec,
        server: &ServerConfig,
        kernels: bool,
    ) -> Self {
        let own = hw.overheads_for(kernels);
        let mut constants = own.clone();
        // A vLLM server's scheduler CPU is vLLM's own (spec::vllm::overheads), not SGLang's.
        if let Some(v) = &server.vllm {
            let c = crate::spec::vllm::overheads::cpu_costs(v.version);
            // Scaled by the profile's vLLM-only multipliers (1 unless a calibration set them).
            constants.step_cpu_ns = c.step_cpu_ns * own.vllm_step_cpu_scale;
            constants.per_request_cpu_ns = c.per_request_cpu_ns * own.vllm_per_request_cpu_scale;
        }
        Overheads {
            block: hw.overheads_block(kernels),
            constants,
            overlap: server.overlap_schedule,
            cpu_scale: cpu_scale(
                own.worker_thread_cpu_scale,
                server.version,
                server.overlap_schedule,
                server.vllm.is_some(),
            ),
            num_layers: model.num_layers as f64,
            moe_layers: model.moe_layers() as f64,
            eager_layer_ns: super::eager_host::eager_layer_ns(
                own.eager_layer_ns,
                model.mla.is_some(),
                server.vllm.is_none() && !server.piecewise_prefill,
            ),
        }
    }

    /// Scheduler CPU time of one iteration over `requests` requests (decode + prefill), ns.
    pub fn cpu_ns(&self, requests: u64) -> f64 {
        let o = &self.constants;
        (o.step_cpu_ns + o.per_request_cpu_ns * requests as f64) * self.cpu_scale
    }

    /// Fixed GPU-side time of one step, ns: graph launch and sampling, per-layer launches when
    /// the step runs eagerly (their [`PIECEWISE_LAUNCH_SHARE`] under piecewise graphs), and
    /// the per-layer / per-MoE-layer floors.
    pub fn fixed_gpu_ns(&self, launch: Launch) -> f64 {
        let o = &self.constants;
        let per_layer = match launch {
            Launch::Graph => 0.0,
            Launch::Piecewise => PIECEWISE_LAUNCH_SHARE * self.eager_layer_ns,
            Launch::Eager => self.eager_layer_ns,
        };
        let launch = o.graph_step_ns + self.num_layers * per_layer;
        launch + self.num_layers * o.layer_ns + self.moe_layers * o.moe_layer_ns
    }

    /// Adds the scheduler CPU time to a GPU time: hidden under the GPU step by the overlap
    /// scheduler, else serial.
    pub fn with_cpu(&self, gpu_ns: f64, cpu_ns: f64) -> StepTime {
        let total_ns = if self.overlap {
            gpu_ns.max(cpu_ns)
        } else {
            gpu_ns + cpu_ns
        };
        StepTime {
            total_ns,
            gpu_ns,
            cpu_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_thread_scale_acts_only_on_threaded_sglang_overlap() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        // SGLang 0.5.1 and 0.4.6 run the overlap on a worker thread (PR #1687 .. PR #11210).
        assert_eq!(cpu_scale(1.5, v("0.5.1"), true, false), 1.5);
        assert_eq!(cpu_scale(1.5, v("0.4.6"), true, false), 1.5);
        // 0.5.4+ overlaps on a CUDA stream of the one scheduler thread.
        assert_eq!(cpu_scale(1.5, v("0.5.4"), true, false), 1.0);
        assert_eq!(cpu_scale(1.5, v("0.5.6"), true, false), 1.0);
        // No overlap (--disable-overlap-schedule, speculative decoding): no second thread.
        assert_eq!(cpu_scale(1.5, v("0.5.1"), false, false), 1.0);
        // vLLM's own costs are not SGLang's threads.
        assert_eq!(cpu_scale(1.5, v("0.5.1"), true, true), 1.0);
    }
}
