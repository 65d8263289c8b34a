//! Step cost: how long one forward pass (one scheduler iteration) of a batch takes.
//!
//! The engine describes a batch by aggregates only ([`BatchShape`]), so pricing a decode step is
//! O(1) whatever the batch size. [`StepCost`] is the interface; [`kernels::KernelCost`] prices
//! it from measured SGLang kernel tables where they exist, [`roofline::Roofline`] from the
//! profile's peaks × efficiencies elsewhere ([`select`] picks one; [`collective`] prices
//! all-reduces across nodes), with the [`overheads::Overheads`] every backend adds on top;
//! [`breakdown`] explains a step; [`speculative::SpeculativeCost`] prices a
//! speculative-decoding step with a target and a draft instance of the same backend.
pub mod breakdown;
pub mod collective;
pub mod eager_host;
pub mod expert_parallel;
pub mod gdn;
pub mod kernels;
pub mod moe_config;
pub mod moe_lane;
pub mod mxfp4;
pub mod npu_graph_update;
pub mod overheads;
pub mod qk_norm_tp;
pub mod roofline;
pub mod select;
pub mod speculative;
pub mod triton_mla_decode;
pub mod triton_mla_prefill;
pub mod unified_attention;
pub mod window;

pub use select::{build, CostChoice, CostModel};

use breakdown::{Component, CostItem, StepBreakdown};

/// What a batch looks like to the cost model.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BatchShape {
    /// Requests generating one token each (decode), including overlap ride-alongs.
    pub decode_reqs: u64,
    /// Σ over decode requests of the tokens each attends to (its context length).
    pub decode_ctx_sum: u64,
    /// Requests being prefilled (extend) in this batch.
    pub prefill_reqs: u64,
    /// Σ extend tokens over the prefill requests.
    pub prefill_tokens: u64,
    /// Σ extend · (prefix + extend / 2): causal attention work over prefix + extend.
    pub prefill_attn_work: f64,
    /// Σ extend · min(prefix + extend / 2, window): the same for sliding-window layers.
    pub prefill_attn_work_windowed: f64,
    /// Σ extend · (min(prefix, window) + extend / 2): sliding-window layers under a kernel
    /// whose window clips only the cached prefix and runs the extend triangle in full, masked
    /// (SGLang's triton extend kernel, [`window`]).
    pub prefill_attn_work_window_prefix: f64,
    /// Σ (prefix + extend): KV tokens read by prefill attention.
    pub prefill_kv_tokens: u64,
    /// Decode batch size after CUDA-graph padding (vLLM V1: the step's tokens after padding);
    /// `None` when the step runs eagerly.
    pub graph_bs: Option<u64>,
    /// vLLM V1's piecewise CUDA graphs: everything but attention replays graphs captured at
    /// `graph_bs` tokens (a mixed prefill + decode step too), attention runs eagerly between
    /// the pieces ([`Launch::Piecewise`]).
    pub piecewise: bool,
    /// Query tokens per decode request: 1 for a decode step (0 means 1), N for a speculative
    /// verify (each request extends by N tokens over its context, under one CUDA graph of
    /// `graph_bs × N` rows), k for a draft pass.
    pub decode_width: u64,
}

/// How a step's kernels are launched, which sets its launch overhead; ordered from the
/// cheapest (a group of steps launches as its most expensive member).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Launch {
    /// One full CUDA graph per step (attention included): a pure decode step with a graph.
    Graph,
    /// vLLM's piecewise graphs: one graph replay per piece between the eager attention ops.
    Piecewise,
    /// Every kernel launched from Python.
    #[default]
    Eager,
}

impl BatchShape {
    /// How this step launches: a full graph for a pure decode (or verify) step with a graph
    /// size, piecewise when vLLM pads it to a piecewise capture size, else eager (SGLang's
    /// prefill and mixed steps, any step above the largest capture size).
    pub fn launch(&self) -> Launch {
        match self.graph_bs {
            None => Launch::Eager,
            Some(_) if self.piecewise => Launch::Piecewise,
            Some(_) if self.prefill_reqs > 0 => Launch::Eager,
            Some(_) => Launch::Graph,
        }
    }

    /// Adds one prefill request of `extend` new tokens over `prefix` cached ones.
    pub fn add_prefill(&mut self, extend: u64, prefix: u64, window: Option<u64>) {
        let e = extend as f64;
        let mid = prefix as f64 + e / 2.0;
        self.prefill_reqs += 1;
        self.prefill_tokens += extend;
        self.prefill_attn_work += e * mid;
        self.prefill_attn_work_windowed += e * window.map_or(mid, |w| mid.min(w as f64));
        self.prefill_attn_work_window_prefix +=
            e * window.map_or(mid, |w| (prefix as f64).min(w as f64) + e / 2.0);
        self.prefill_kv_tokens += prefix + extend;
    }

    pub fn is_empty(&self) -> bool {
        self.decode_reqs == 0 && self.prefill_reqs == 0
    }

    /// Query tokens of the decode requests (`decode_reqs × decode_width`).
    pub fn decode_tokens(&self) -> u64 {
        self.decode_reqs * self.decode_width.max(1)
    }

    /// Rows the GEMMs run over: every token, or the padded graph batch × width when a pure
    /// decode (or verify) step replays a CUDA graph.
    pub fn gemm_rows(&self) -> f64 {
        match (self.graph_bs, self.launch()) {
            (Some(bs), Launch::Graph) => (bs * self.decode_width.max(1)) as f64,
            // Piecewise graphs are captured by tokens: the step pads to `graph_bs` tokens.
            (Some(bs), Launch::Piecewise) => bs as f64,
            _ => (self.prefill_tokens + self.decode_tokens()) as f64,
        }
    }

    /// Rows the LM head computes logits for: every decode query token, one per prefill.
    pub fn logit_rows(&self) -> f64 {
        (self.decode_tokens() + self.prefill_reqs) as f64
    }
}

/// Time of one step, split by where it goes (for `--stats` and calibration).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepTime {
    /// Wall time of the iteration, ns (what the clock advances by).
    pub total_ns: f64,
    /// GPU part: kernels + launch overheads, ns.
    pub gpu_ns: f64,
    /// CPU scheduling part, ns.
    pub cpu_ns: f64,
}

/// Prices a batch. Implementations must be deterministic and O(1) in the batch size.
pub trait StepCost {
    fn step_time(&self, shape: &BatchShape) -> StepTime;

    /// The step's time split by component, for `--explain`. Backends override this; the
    /// default reports the GPU and CPU parts only.
    fn explain(&self, shape: &BatchShape) -> StepBreakdown {
        let time = self.step_time(shape);
        StepBreakdown {
            backend: "unknown".into(),
            items: vec![
                CostItem {
                    component: Component::GpuOverhead,
                    time_ns: time.gpu_ns,
                    detail: "GPU time, not broken down by this backend".into(),
                },
                CostItem {
                    component: Component::Cpu,
                    time_ns: time.cpu_ns,
                    detail: "scheduler CPU".into(),
                },
            ],
            time,
        }
    }

    /// One lockstep step of DP-attention ranks (`shapes[r]` is rank r's batch, empty when the
    /// rank idles). The default prices the ranks as independent GPUs: the slowest one.
    fn group_step_time(&self, shapes: &[BatchShape]) -> StepTime {
        slowest_rank(shapes, |s| self.step_time(s))
    }
}

/// The step of independent ranks: the slowest busy rank's time (`step` prices one rank).
pub fn slowest_rank(shapes: &[BatchShape], step: impl Fn(&BatchShape) -> StepTime) -> StepTime {
    shapes
        .iter()
        .filter(|s| !s.is_empty())
        .map(step)
        .fold(StepTime::default(), |a, b| {
            if b.total_ns > a.total_ns {
                b
            } else {
                a
            }
        })
}
