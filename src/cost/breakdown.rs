//! What one step's time is made of, for `servesim run --explain`: one line per component
//! (GEMMs, attention, MoE experts, all-reduce, LM head, fixed GPU overheads, scheduler CPU) with
//! its time and how it was priced (which backend, table or constants), so a user can see why a
//! step costs what it costs.
use super::StepTime;

/// The parts a step is split into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Component {
    /// Dense linear layers (attention projections, dense MLP, shared experts, router): weight
    /// reads or GEMM compute, whichever bounds.
    Gemm,
    /// Attention kernels: KV reads or attention FLOPs, whichever bounds.
    Attention,
    /// Routed experts of the MoE layers.
    Moe,
    /// Tensor-parallel collectives.
    AllReduce,
    /// Expert parallelism's DeepEP dispatch + combine (`cost::expert_parallel`).
    AllToAll,
    /// The LM head over the logit rows.
    LmHead,
    /// Fixed GPU-side time: graph launch, sampling, per-layer floors and launches.
    GpuOverhead,
    /// Scheduler CPU time (hidden under the GPU step when the overlap scheduler runs).
    Cpu,
    /// Speculative decoding's draft model: draft passes, draft extend / prefill.
    Draft,
}

impl Component {
    pub fn name(self) -> &'static str {
        match self {
            Component::Gemm => "gemm",
            Component::Attention => "attention",
            Component::Moe => "moe",
            Component::AllReduce => "all-reduce",
            Component::AllToAll => "all-to-all",
            Component::LmHead => "lm-head",
            Component::GpuOverhead => "gpu-overhead",
            Component::Cpu => "cpu",
            Component::Draft => "draft",
        }
    }
}

/// One line of a breakdown.
#[derive(Debug, Clone, PartialEq)]
pub struct CostItem {
    pub component: Component,
    /// Time summed over every layer of the step, ns.
    pub time_ns: f64,
    /// How it was priced: backend, table or constants, the bounding resource, bytes or FLOPs.
    pub detail: String,
}

/// A step's time split by component.
#[derive(Debug, Clone, PartialEq)]
pub struct StepBreakdown {
    /// The backend that priced the step (`roofline`, `kernels`).
    pub backend: String,
    pub items: Vec<CostItem>,
    /// The step's time as the engine sees it (the same numbers `step_time` returns).
    pub time: StepTime,
}

impl StepBreakdown {
    /// Σ of the GPU-side items, ns (equals `time.gpu_ns` for a consistent breakdown).
    pub fn gpu_items_ns(&self) -> f64 {
        self.items
            .iter()
            .filter(|i| i.component != Component::Cpu)
            .map(|i| i.time_ns)
            .sum()
    }
}
