//! Costs on top of the kernels, shared by every [`StepCost`](super::StepCost) backend: the
//! scheduler's CPU time per iteration (hidden under the GPU step by the overlap scheduler, else
//! serial) and the fixed GPU-side time per step (CUDA-graph launch and sampling, per-layer launch
//! costs when eager, per-layer and per-MoE-layer floors).
use super::StepTime;
use crate::spec::hardware::{HardwareProfile, Overheads as OverheadConstants};
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;

/// The overhead terms of one deployment, resolved once per scenario.
#[derive(Debug, Clone)]
pub struct Overheads {
    constants: OverheadConstants,
    overlap: bool,
    num_layers: f64,
    moe_layers: f64,
}

impl Overheads {
    pub fn new(hw: &HardwareProfile, model: &ModelSpec, server: &ServerConfig) -> Self {
        Overheads {
            constants: hw.overheads.clone(),
            overlap: server.overlap_schedule,
            num_layers: model.num_layers as f64,
            moe_layers: model.moe_layers() as f64,
        }
    }

    /// Scheduler CPU time of one iteration over `requests` requests (decode + prefill), ns.
    pub fn cpu_ns(&self, requests: u64) -> f64 {
        let o = &self.constants;
        o.step_cpu_ns + o.per_request_cpu_ns * requests as f64
    }

    /// Fixed GPU-side time of one step, ns: graph launch and sampling, per-layer launches when
    /// the step runs eagerly, and the per-layer / per-MoE-layer floors.
    pub fn fixed_gpu_ns(&self, eager: bool) -> f64 {
        let o = &self.constants;
        let launch = if eager {
            o.graph_step_ns + self.num_layers * o.eager_layer_ns
        } else {
            o.graph_step_ns
        };
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
