//! Overhead constants per cost backend. A profile's `overheads:` are what the roofline reads
//! (and were fitted with it); `kernels_overheads:` optionally overrides any of them when the
//! measured-kernel backend prices the step (`cost::select`), because the two backends leave
//! different work to the overheads: the kernel tables already price the LM head, every GEMM,
//! attention (with its KV-cache store), the fused MoE and the all-reduces, each measured in
//! isolation without launch gaps, so a per-layer floor fitted under the roofline (which also
//! absorbs the roofline's kernel-efficiency misses) is not the kernel backend's floor.
//! `servesim calibrate` writes a kernel-priced fit into this block; `run`/`validate` read the
//! block of the backend in use and `--explain` names it. Checks of every overhead value
//! (non-negative, plausible, the multipliers' ranges) live here, for both blocks, with the
//! `overheads:` schema itself ([`Overheads`], re-exported by `spec::hardware`).
use super::load::non_negative;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Fixed costs the roofline misses: CPU scheduling, kernel launches, HTTP and tokenizer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overheads {
    /// Scheduler CPU time per iteration (batch formation, result processing), ns.
    pub step_cpu_ns: f64,
    /// Scheduler CPU time per request in the batch per iteration, ns.
    pub per_request_cpu_ns: f64,
    /// GPU-side fixed time per step under a CUDA graph (graph launch, sampling), ns.
    pub graph_step_ns: f64,
    /// Launch overhead per layer when running eagerly (prefill, or decode without a graph), ns.
    pub eager_layer_ns: f64,
    /// GPU floor per layer per step, graph or eager, ns: the kernels the roofline does not
    /// price (two RMSNorms, rotary embedding, activation, residual adds, KV-cache store,
    /// activation quantisation) and every kernel's launch gap and tail. They run serially with
    /// the GEMMs on one stream, so the floor adds to the layer's roofline time rather than
    /// overlapping it. About ten such kernels at ≈ 1–3 µs each: physical range 0–100 µs per
    /// layer ("tens of µs per layer" above the roofline at low batch, per the issue).
    #[serde(default)]
    pub layer_ns: f64,
    /// Extra fixed time per MoE layer per step (routing, permute/unpermute, expert dispatch), ns.
    #[serde(default)]
    pub moe_layer_ns: f64,
    /// NPU graphs (`arch: ascend`): host time to update one captured fused-attention task of a
    /// graph before its replay can pass that task, ns (`cost::npu_graph_update`). Default 0:
    /// not priced (every NVIDIA profile).
    #[serde(default)]
    pub graph_task_update_ns: f64,
    /// Multiplier on the scheduler CPU time per iteration (`step_cpu_ns`, `per_request_cpu_ns`,
    /// which are stated for the one-thread loop of SGLang 0.5.4+) when the overlap scheduler
    /// runs the forward pass on a second Python thread (SGLang 0.3.6–0.5.3,
    /// [`super::scheduler_cpu`]): the two threads take turns on the GIL, so the scheduler's
    /// Python work per iteration is at least what it is alone (1) and at most doubled by the
    /// forward thread's own Python work (2). Default 1.
    #[serde(default = "one")]
    pub worker_thread_cpu_scale: f64,
    /// Multiplier on a vLLM server's own scheduler CPU time per step (the fixed part of
    /// `spec::vllm::overheads`, stated per engine V0 / V1 and sourced there); it never acts on
    /// an SGLang server. Lets `servesim calibrate` fit vLLM's host cost per engine without
    /// moving SGLang's `step_cpu_ns`. Default 1 (the sourced values).
    #[serde(default = "one")]
    pub vllm_step_cpu_scale: f64,
    /// The same for vLLM's CPU time per scheduled request per step. Default 1.
    #[serde(default = "one")]
    pub vllm_per_request_cpu_scale: f64,
    /// One-way client → scheduler latency of a request (HTTP, new aiohttp session, queues), ns.
    pub request_latency_ns: f64,
    /// Server tokenization per prompt token (TokenizerManager is serial), ns: a property of
    /// the host CPU and the tokenizer library, not the accelerator; default (when a profile
    /// omits it) the sourced HF fast-tokenizer rate, [`super::tokenize_cost`].
    #[serde(default = "super::tokenize_cost::default_tokenize_per_token_ns")]
    pub tokenize_per_token_ns: f64,
    /// Scheduler → client latency of a streamed token (detokenizer, SSE), ns.
    pub stream_latency_ns: f64,
    /// Formerly the client's send cost; it belongs to the client, not the GPU (`--client-send-us`,
    /// src/client/send.rs). Accepted only to reject it with a clear message.
    #[serde(default, skip_serializing)]
    pub client_send_ns: Option<f64>,
}

/// Bounds of `overheads.worker_thread_cpu_scale`: the scheduler's own Python work at least
/// (1), and at most that plus an equal share of the forward thread's (2).
pub const WORKER_THREAD_CPU_SCALE_MIN: f64 = 1.0;
pub const WORKER_THREAD_CPU_SCALE_MAX: f64 = 2.0;

/// Bounds of `overheads.vllm_step_cpu_scale` and `vllm_per_request_cpu_scale`: the ranges
/// `spec::vllm::overheads` gives for each engine's sourced values (V1 fixed 0.5–3 ms around
/// 1 ms, per request 2–25 µs around 8 µs; V0 1–5 ms around 2 ms, 5–40 µs around 12 µs),
/// widened to one interval of multipliers.
pub const VLLM_CPU_SCALE_MIN: f64 = 0.25;
pub const VLLM_CPU_SCALE_MAX: f64 = 3.5;

/// Largest fixed overhead accepted (1000 s, in ns).
pub const MAX_OVERHEAD_NS: f64 = 1e12;

fn one() -> f64 {
    1.0
}

/// The YAML key of the kernel backend's overrides.
pub const KERNELS_OVERHEADS: &str = "kernels_overheads";

/// `kernels_overheads:`: each field, when given, replaces the `overheads:` field of the same
/// name for the measured-kernel backend.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelsOverheads {
    pub step_cpu_ns: Option<f64>,
    pub per_request_cpu_ns: Option<f64>,
    pub graph_step_ns: Option<f64>,
    pub eager_layer_ns: Option<f64>,
    pub layer_ns: Option<f64>,
    pub moe_layer_ns: Option<f64>,
    pub worker_thread_cpu_scale: Option<f64>,
    pub vllm_step_cpu_scale: Option<f64>,
    pub vllm_per_request_cpu_scale: Option<f64>,
    pub request_latency_ns: Option<f64>,
    pub tokenize_per_token_ns: Option<f64>,
    pub stream_latency_ns: Option<f64>,
}

impl KernelsOverheads {
    /// The (field of `overheads`, override) pairs, in profile order.
    fn pairs<'a>(&self, o: &'a mut Overheads) -> [(&'a mut f64, Option<f64>); 12] {
        [
            (&mut o.step_cpu_ns, self.step_cpu_ns),
            (&mut o.per_request_cpu_ns, self.per_request_cpu_ns),
            (&mut o.graph_step_ns, self.graph_step_ns),
            (&mut o.eager_layer_ns, self.eager_layer_ns),
            (&mut o.layer_ns, self.layer_ns),
            (&mut o.moe_layer_ns, self.moe_layer_ns),
            (&mut o.worker_thread_cpu_scale, self.worker_thread_cpu_scale),
            (&mut o.vllm_step_cpu_scale, self.vllm_step_cpu_scale),
            (
                &mut o.vllm_per_request_cpu_scale,
                self.vllm_per_request_cpu_scale,
            ),
            (&mut o.request_latency_ns, self.request_latency_ns),
            (&mut o.tokenize_per_token_ns, self.tokenize_per_token_ns),
            (&mut o.stream_latency_ns, self.stream_latency_ns),
        ]
    }

    /// `base` with every given field replaced.
    pub fn apply(&self, base: &Overheads) -> Overheads {
        let mut o = base.clone();
        for (field, v) in self.pairs(&mut o) {
            if let Some(v) = v {
                *field = v;
            }
        }
        o
    }

    /// True when no field is given.
    pub fn is_empty(&self) -> bool {
        *self == KernelsOverheads::default()
    }
}

/// Checks one block of overhead values (`section` is `overheads` or `kernels_overheads`).
pub fn check_overheads(origin: &str, section: &str, o: &Overheads) -> Result<()> {
    for (f, v) in [
        ("step_cpu_ns", o.step_cpu_ns),
        ("per_request_cpu_ns", o.per_request_cpu_ns),
        ("graph_step_ns", o.graph_step_ns),
        ("eager_layer_ns", o.eager_layer_ns),
        ("layer_ns", o.layer_ns),
        ("moe_layer_ns", o.moe_layer_ns),
        ("graph_task_update_ns", o.graph_task_update_ns),
        ("request_latency_ns", o.request_latency_ns),
        ("tokenize_per_token_ns", o.tokenize_per_token_ns),
        ("stream_latency_ns", o.stream_latency_ns),
    ] {
        let f = format!("{section}.{f}");
        non_negative(origin, &f, v)?;
        // An overhead of more than 1000 s is a unit mistake, and would overflow the clock.
        if v > MAX_OVERHEAD_NS {
            return Err(Error::invalid(
                origin,
                &f,
                format!("{v} ns is more than 1000 s: not a plausible overhead"),
            ));
        }
    }
    let scale = o.worker_thread_cpu_scale;
    if !(WORKER_THREAD_CPU_SCALE_MIN..=WORKER_THREAD_CPU_SCALE_MAX).contains(&scale) {
        return Err(Error::invalid(
            origin,
            format!("{section}.worker_thread_cpu_scale"),
            format!(
                "{scale} is outside [{WORKER_THREAD_CPU_SCALE_MIN}, {WORKER_THREAD_CPU_SCALE_MAX}]: a second thread on the GIL can neither remove the scheduler's own work nor more than double it"
            ),
        ));
    }
    for (f, scale) in [
        ("vllm_step_cpu_scale", o.vllm_step_cpu_scale),
        ("vllm_per_request_cpu_scale", o.vllm_per_request_cpu_scale),
    ] {
        if !(VLLM_CPU_SCALE_MIN..=VLLM_CPU_SCALE_MAX).contains(&scale) {
            return Err(Error::invalid(
                origin,
                format!("{section}.{f}"),
                format!(
                    "{scale} is outside [{VLLM_CPU_SCALE_MIN}, {VLLM_CPU_SCALE_MAX}]: the published vLLM step CPU times lie within that multiple of the sourced values"
                ),
            ));
        }
    }
    Ok(())
}
