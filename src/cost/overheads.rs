//! Costs on top of the kernels, shared by every [`StepCost`](super::StepCost) backend: the
//! scheduler's CPU time per iteration (hidden under the GPU step by the overlap scheduler, else
//! serial; scaled by `worker_thread_cpu_scale` in the SGLang versions whose overlap scheduler
//! runs the forward pass on a second Python thread, `spec::scheduler_cpu`) and the fixed
//! GPU-side time per step (CUDA-graph launch and sampling, per-layer launch
//! costs when eager (an SGLang eager extend's host time per layer kind from
//! [`super::eager_host`]; none when SGLang 0.5.10+ replays the prefill under its piecewise
//! graphs), per-layer and per-MoE-layer floors).
use super::{BatchShape, Launch, StepTime};
use crate::spec::defaults::piecewise_cuda_graph_tokens;
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
/// (`vllm/compilation/`: the graph is split at the attention op, which runs eagerly), and
/// under SGLang 0.5.10+'s piecewise prefill graphs (adapted from vLLM's, SGLang PR #10062:
/// the same split at the attention op). A
/// Llama-style layer launches about ten kernels eagerly (input norm, QKV GEMM, rotary, KV
/// cache store, attention, O GEMM, residual norm, gate/up GEMM, activation, down GEMM);
/// piecewise, it launches three: one replay of the graph piece before the next attention,
/// and the attention op's two kernels (`reshape_and_cache_flash`, the attention kernel).
/// 3/10, by that count (bounds: 0.2 with fused cache store to 0.4 with TP's all-reduce
/// kernels eager); not fitted.
pub const PIECEWISE_LAUNCH_SHARE: f64 = 0.3;

/// SGLang's default piecewise-graph token limit for an MLA attention backend (server_args.py,
/// SGLang PR #15927: "to avoid the performance regression, we set the max tokens to 2048").
const PIECEWISE_MLA_MAX_TOKENS: u64 = 2048;

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
    /// The profile's per-layer launch cost of an eager step, ns (`eager_layer_ns`).
    base_layer_ns: f64,
    /// Per-layer launch cost of an eager pure-decode step, ns: `base_layer_ns`, or an MLA
    /// layer's measured host time on an SGLang server ([`super::eager_host`]).
    decode_layer_ns: f64,
    /// Per-layer launch cost of an eager step with a prefill (extend), ns: on an SGLang server
    /// the measured host time of the model's layer kinds ([`super::eager_host`]), else
    /// `base_layer_ns`.
    extend_layer_ns: f64,
    /// Largest step, in tokens, that SGLang 0.5.10+ replays under its piecewise prefill
    /// graphs (the largest captured token count up to `chunked_prefill_size`, 2048 for MLA);
    /// 0 when they are off (before 0.5.10, `--disable-piecewise-cuda-graph`, vLLM).
    piecewise_max_tokens: u64,
}

/// What a step extends, as its launch cost depends on it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Extend {
    /// A pure decode (or verify) step.
    #[default]
    None,
    /// A pure prefill (extend) step of this many tokens: what SGLang 0.5.10+'s piecewise
    /// prefill graphs replay when it fits their largest captured token count.
    Prefill(u64),
    /// Prefill and decode in one step (`--enable-mixed-chunk`): priced eager, as before
    /// piecewise graphs, so adding requests to a step never makes it cheaper.
    Mixed,
}

impl Extend {
    /// What `s` extends.
    pub fn of(s: &BatchShape) -> Extend {
        match (s.prefill_reqs > 0, s.decode_reqs > 0) {
            (false, _) => Extend::None,
            (true, false) => Extend::Prefill(s.prefill_tokens),
            (true, true) => Extend::Mixed,
        }
    }

    /// What a lockstep group of steps extends: the sum of its prefills, mixed if any is.
    pub fn join(self, other: Extend) -> Extend {
        match (self, other) {
            (Extend::None, e) | (e, Extend::None) => e,
            (Extend::Prefill(a), Extend::Prefill(b)) => Extend::Prefill(a + b),
            _ => Extend::Mixed,
        }
    }
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
        let base = own.eager_layer_ns;
        let sglang = server.vllm.is_none();
        let mla = model.mla.is_some();
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
            base_layer_ns: base,
            decode_layer_ns: if sglang {
                super::eager_host::decode_layer_ns(base, mla)
            } else {
                base
            },
            extend_layer_ns: if sglang {
                super::eager_host::extend_layer_ns(base, mla, model.num_layers, model.moe_layers())
            } else {
                base
            },
            piecewise_max_tokens: if sglang && server.piecewise_prefill {
                // `piecewise_cuda_graph_max_tokens`' default (server_args.py, SGLang PR
                // #15927): the chunked prefill size, 2048 for an MLA backend.
                let max_tokens = if mla {
                    PIECEWISE_MLA_MAX_TOKENS
                } else {
                    server.chunked_prefill_size.unwrap_or(0)
                };
                piecewise_cuda_graph_tokens(max_tokens)
                    .last()
                    .copied()
                    .unwrap_or(0)
            } else {
                0
            },
        }
    }

    /// Whether an SGLang step that extends `extend` replays its piecewise prefill graphs
    /// instead of running eagerly (a pure prefill within the largest captured token count).
    pub fn prefill_graphed(&self, extend: Extend) -> bool {
        matches!(extend, Extend::Prefill(t) if t > 0 && t <= self.piecewise_max_tokens)
    }

    /// Per-layer launch cost of a step, ns, by its launch and what it extends.
    fn per_layer_ns(&self, launch: Launch, extend: Extend) -> f64 {
        match launch {
            Launch::Graph => 0.0,
            Launch::Piecewise => PIECEWISE_LAUNCH_SHARE * self.base_layer_ns,
            Launch::Eager if self.prefill_graphed(extend) => {
                PIECEWISE_LAUNCH_SHARE * self.base_layer_ns
            }
            Launch::Eager if extend != Extend::None => self.extend_layer_ns,
            Launch::Eager => self.decode_layer_ns,
        }
    }

    /// What the per-layer launch term of a step is, for `--explain`.
    pub fn launch_note(&self, launch: Launch, extend: Extend) -> &'static str {
        match launch {
            Launch::Graph => "",
            Launch::Piecewise => ", the attention ops' launches",
            Launch::Eager if self.prefill_graphed(extend) => {
                ", SGLang piecewise prefill graphs: the attention ops' launches"
            }
            Launch::Eager
                if extend != Extend::None && self.extend_layer_ns > self.base_layer_ns =>
            {
                ", per-layer launches: the eager extend's host time (cost::eager_host)"
            }
            Launch::Eager => ", per-layer launches",
        }
    }

    /// Scheduler CPU time of one iteration over `requests` requests (decode + prefill), ns.
    pub fn cpu_ns(&self, requests: u64) -> f64 {
        let o = &self.constants;
        (o.step_cpu_ns + o.per_request_cpu_ns * requests as f64) * self.cpu_scale
    }

    /// Fixed GPU-side time of one step, ns: graph launch and sampling, per-layer launches when
    /// the step runs eagerly (an SGLang eager extend's measured host time when it extends;
    /// their [`PIECEWISE_LAUNCH_SHARE`] under piecewise graphs, vLLM's or SGLang 0.5.10+'s
    /// prefill graphs up to their largest captured token count), and the per-layer /
    /// per-MoE-layer floors.
    pub fn fixed_gpu_ns(&self, launch: Launch, extend: Extend) -> f64 {
        let o = &self.constants;
        let per_layer = self.per_layer_ns(launch, extend);
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
