//! The host time an SGLang NPU graph replay waits for: the per-layer update of the captured
//! fused-attention tasks (`arch: ascend`, profile field `overheads.graph_task_update_ns`).
//!
//! Mechanism (read at Ascend/sglang@98a107d, the commit of the runs in
//! validation/public/p017-ascend-notes.md, and in torch_npu 2.8.0):
//!
//! * `npu_fused_infer_attention_score` (FIA) takes its sequence lengths as a host list, so a
//!   captured FIA cannot read new lengths from device memory. Graphs are captured with
//!   `torch.npu.graph(..., auto_dispatch_capture=True)`; torch_npu's `_GraphDispatchMode`
//!   (`torch_npu/npu/graphs.py`) puts an `ExternalEvent.wait` before every captured FIA and
//!   keeps a record of it. `NPUGraph.update(cpu_update_input=…)` then walks the records on the
//!   host, each `graph_task_update_begin` → the FIA re-dispatched eagerly with the new lengths
//!   → `graph_task_update_end` → `event.record`.
//! * SGLang's NPU graph runners (`hardware_backend/npu/graph_runner/npu_graph_runner.py`,
//!   `eagle_draft_npu_graph_runner.py`, `eagle_draft_extend_npu_graph_runner.py`) start that
//!   update on a Python thread, call `replay()`, and join the thread. The device runs up to
//!   layer i's attention and waits there until the host has updated task i, so a replay takes
//!   about max(device time, tasks × update time): the per-layer host chain is a floor that
//!   does not shrink with the device's work per layer (wider TP, smaller batch).
//! * Which replays carry FIA tasks (`hardware_backend/npu/attention/ascend_backend.py`): the
//!   target verify and the draft extend (`forward_mtp`: FIA in TND layout, every layer) and an
//!   MLA model's decode. An MHA decode runs `_npu_paged_attention`, which the dispatch mode
//!   does not record, so its update is empty; except below the attention-TP batch
//!   (`forward_decode_graph`: "PA will support bs<tp in the later version of CANN"), where it
//!   takes FIA. That case is left unpriced: it would make a batch-1 decode dearer than a
//!   batch-TP one, which servesim's physics (tests/physics.rs) forbids, and it only concerns
//!   batches below the TP size.
//!
//! The time per task is measured, not fitted: vllm-ascend issue #13058
//! (https://github.com/vllm-project/vllm-ascend/issues/13058, comment of 2026-09-01) measured the
//! same four calls per layer in place, FULL_DECODE_ONLY graphs, batch 1, on 910B3: "3.68 ms of
//! rebind against 1.21 ms of replay", twenty layers, so 184 µs per task. That host loop
//! (vllm-ascend's `update_full_graph_params`) runs the same calls per task as torch_npu's
//! `update_capture_record`. Bounds: at most 184 µs (the figure also holds the pre-replay stream
//! synchronise that vllm-ascend adds and SGLang does not); no lower measurement was found.
//! Nothing says how it grows with the batch (the re-dispatched FIA tiles over each request's
//! length), so one figure serves every batch. Never applied to vLLM (refused on Ascend).
use super::breakdown::{Component, CostItem, StepBreakdown};
use super::{BatchShape, Launch, StepCost, StepTime};
use crate::spec::hardware::{Arch, HardwareProfile};
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;

/// Time of one graph replay whose `tasks` captured attention tasks the host updates at
/// `update_ns` each while the device runs `device_ns` of work, ns.
pub fn replay_ns(device_ns: f64, tasks: f64, update_ns: f64) -> f64 {
    device_ns.max(tasks * update_ns)
}

/// Whether servesim prices the update for a graph replay: a verify or draft extend (`width`
/// query tokens per request > 1) or any MLA decode (module doc; an MHA decode below the
/// attention-TP batch also updates FIA tasks but is left unpriced).
pub fn replay_updates_attention(width: u64, mla: bool) -> bool {
    width > 1 || mla
}

/// A backend whose graph replays on an NPU wait for the host's attention-task updates.
pub struct NpuGraphUpdate {
    inner: Box<dyn StepCost>,
    /// Captured attention tasks per replay: one per layer of the model.
    tasks: f64,
    update_ns: f64,
    mla: bool,
    overlap: bool,
}

impl NpuGraphUpdate {
    /// `inner`, with the update floor when the profile is an NPU that prices it and the server
    /// is SGLang; else `inner` unchanged.
    pub fn wrap(
        inner: Box<dyn StepCost>,
        hw: &HardwareProfile,
        model: &ModelSpec,
        server: &ServerConfig,
    ) -> Box<dyn StepCost> {
        let update_ns = hw.overheads.graph_task_update_ns;
        if hw.arch != Arch::Ascend || server.vllm.is_some() || update_ns <= 0.0 {
            return inner;
        }
        Box::new(NpuGraphUpdate {
            inner,
            tasks: model.num_layers as f64,
            update_ns,
            mla: model.mla.is_some(),
            overlap: server.overlap_schedule,
        })
    }

    /// The host chain a replay of `s` waits for, ns (0 when `s` replays no FIA task).
    fn host_chain_ns(&self, s: &BatchShape) -> f64 {
        let graphed = s.launch() == Launch::Graph && !s.is_empty();
        if graphed && replay_updates_attention(s.decode_width, self.mla) {
            self.tasks * self.update_ns
        } else {
            0.0
        }
    }

    /// `t` with the host chain: the device waits for it (GPU time raised to the chain), and
    /// under the overlap scheduler the scheduler thread's own CPU work comes after it. SGLang
    /// 0.5.x's overlap loop runs the forward on the scheduler thread (`event_loop_overlap`
    /// with a forward stream, no worker thread; read in the 0.5.6.post2 wheel), and the NPU
    /// graph runner joins its update thread inside that forward (`npu_graph_runner.py`
    /// @98a107d l. 193–202), so the thread is busy for chain + CPU per step and the step takes
    /// max(device, chain + CPU). Without the overlap the CPU work already follows the forward:
    /// max(device, chain) + CPU.
    fn lift(&self, t: StepTime, chain_ns: f64) -> StepTime {
        if chain_ns <= 0.0 {
            return t;
        }
        let gpu_ns = replay_ns(t.gpu_ns, 1.0, chain_ns);
        let (cpu_ns, total_ns) = if self.overlap {
            let host_ns = chain_ns + t.cpu_ns;
            (host_ns, gpu_ns.max(host_ns))
        } else {
            (t.cpu_ns, gpu_ns + t.cpu_ns)
        };
        if total_ns <= t.total_ns && gpu_ns <= t.gpu_ns {
            return t;
        }
        StepTime {
            total_ns,
            gpu_ns,
            cpu_ns,
        }
    }
}

impl StepCost for NpuGraphUpdate {
    fn step_time(&self, s: &BatchShape) -> StepTime {
        self.lift(self.inner.step_time(s), self.host_chain_ns(s))
    }

    fn explain(&self, s: &BatchShape) -> StepBreakdown {
        let mut b = self.inner.explain(s);
        let chain_ns = self.host_chain_ns(s);
        let time = self.lift(b.time, chain_ns);
        if time.cpu_ns > b.time.cpu_ns {
            b.items.push(CostItem {
                component: Component::Cpu,
                time_ns: time.cpu_ns - b.time.cpu_ns,
                detail: format!(
                    "the scheduler thread joins the {:.2} ms attention-task update inside the \
                     forward, so the overlap scheduler's CPU work runs after it, not under the \
                     device (npu_graph_runner.py)",
                    chain_ns / 1e6
                ),
            });
        }
        if time.gpu_ns > b.time.gpu_ns || time.total_ns > b.time.total_ns {
            b.items.push(CostItem {
                component: Component::GpuOverhead,
                time_ns: time.gpu_ns - b.time.gpu_ns,
                detail: format!(
                    "NPU graph replay waits for the host to update {} attention tasks × {:.0} µs \
                     (overheads.graph_task_update_ns; torch_npu NPUGraph.update, vllm-ascend \
                     #13058): {:.2} ms host chain above {:.2} ms of device work",
                    self.tasks,
                    self.update_ns / 1e3,
                    chain_ns / 1e6,
                    b.time.gpu_ns / 1e6
                ),
            });
            b.time = time;
        }
        b
    }

    /// Each DP-attention rank replays its own graph and updates its own tasks in parallel.
    fn group_step_time(&self, shapes: &[BatchShape]) -> StepTime {
        let chain_ns = shapes
            .iter()
            .map(|s| self.host_chain_ns(s))
            .fold(0.0, f64::max);
        self.lift(self.inner.group_step_time(shapes), chain_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_takes_the_longer_of_device_and_host_chain() {
        // Hand calculation: 64 Qwen3-32B layers × 184 µs = 11.776 ms of host chain.
        assert!((replay_ns(7.0e6, 64.0, 184e3) - 11.776e6).abs() < 1.0);
        // A long device step hides the chain entirely.
        assert_eq!(replay_ns(40e6, 64.0, 184e3), 40e6);
        assert_eq!(replay_ns(5e6, 0.0, 184e3), 5e6);
    }

    #[test]
    fn under_the_overlap_the_scheduler_cpu_follows_the_host_chain() {
        let cost = |overlap: bool| NpuGraphUpdate {
            inner: Box::new(Fixed),
            tasks: 64.0,
            update_ns: 184e3,
            mla: false,
            overlap,
        };
        // Hand calculation: device 7 ms, CPU 2.3 ms, chain 64 × 184 µs = 11.776 ms.
        let chain = 11.776e6;
        let with = cost(true).lift(Fixed::time(true), chain);
        assert!((with.total_ns - (chain + 2.3e6)).abs() < 1.0, "{with:?}");
        assert!((with.gpu_ns - chain).abs() < 1.0);
        let without = cost(false).lift(Fixed::time(false), chain);
        assert!(
            (without.total_ns - (chain + 2.3e6)).abs() < 1.0,
            "{without:?}"
        );
        // A device step longer than chain + CPU hides both under the overlap.
        let long = StepTime {
            total_ns: 20e6,
            gpu_ns: 20e6,
            cpu_ns: 2.3e6,
        };
        assert_eq!(cost(true).lift(long, chain).total_ns, 20e6);
        // No chain: the step is the backend's.
        assert_eq!(cost(true).lift(Fixed::time(true), 0.0), Fixed::time(true));
    }

    /// A backend with a 7 ms device step and 2.3 ms of scheduler CPU.
    struct Fixed;

    impl Fixed {
        fn time(overlap: bool) -> StepTime {
            StepTime {
                total_ns: if overlap { 7e6 } else { 9.3e6 },
                gpu_ns: 7e6,
                cpu_ns: 2.3e6,
            }
        }
    }

    impl StepCost for Fixed {
        fn step_time(&self, _: &BatchShape) -> StepTime {
            Fixed::time(true)
        }
    }

    #[test]
    fn which_replays_update_attention_tasks() {
        // Verify (N = 4) and draft extend (K + 1 = 4): FIA in forward_mtp.
        assert!(replay_updates_attention(4, false));
        // MHA decode: paged attention, nothing recorded (below the TP batch: unpriced).
        assert!(!replay_updates_attention(1, false));
        // MLA decode: FIA at any batch.
        assert!(replay_updates_attention(1, true));
    }
}
