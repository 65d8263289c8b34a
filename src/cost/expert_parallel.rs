//! The MoE layer under expert parallelism (EP; layout and flags in `spec::expert_parallel`):
//! how many routed tokens the busiest rank's grouped GEMM runs, and the DeepEP all-to-all that
//! replaces the MoE layer's all-reduce. Both backends call it (`cost::roofline`,
//! `cost::kernels`); `--explain` shows the all-to-all as its own line.
//!
//! **Experts.** With `ep` ranks each holding `E / ep` experts (sharded over `moe_tp = tp / ep`),
//! a balanced rank runs `T · k / ep` token-expert pairs at full expert width: the same FLOPs
//! and expert bytes as the TP-sharded layer over `T` tokens (`2·T·k·3·h·I / tp`). What EP
//! changes is the busiest rank: routing is uneven and the layer waits for the hottest rank, so
//! the rank's tokens are `T × imbalance`:
//! - without EPLB [`IMBALANCE_WITHOUT_EPLB`] = 1.9, the ratio of AIConfigurator's measured
//!   SGLang 0.5.14 H100 fused-MoE times with experts spread over 8 ranks vs sharded over 8
//!   (DeepSeek-V3 shape, FP8 blocks, power-law α 1.2 routing, 16384 tokens: 8183 / 4273 µs =
//!   1.92, `hardware-profiles/kernels/h100_sxm/0.5.14/moe.txt`); the kernels backend uses those
//!   measured EP rows directly where they exist;
//! - with EPLB [`IMBALANCE_WITH_EPLB`] = 1.1: servesim's assumption, not measured. EPLB places
//!   (and with `--ep-num-redundant-experts` replicates) hot experts from recorded statistics;
//!   the LMSYS post on Waterfill / LPLB (2026) reports that what EPLB leaves per batch is worth
//!   up to 7% of end-to-end throughput when removed, i.e. a residual of this order on the MoE.
//!   EPLB's rebalancing itself (its pauses every `eplb_rebalance_num_iterations`) is not priced.
//!
//! **All-to-all (DeepEP).** Per MoE layer a dispatch and a combine. Each rank holds `T / ep` of
//! the group's tokens (DP attention: its own; plain TP: DeepEP splits the batch) and sends each
//! token to its `k` experts' ranks, routed uniformly: a copy stays on the rank with
//! probability `1 / ep`, goes over NVLink to another rank of the node with `(g − 1) / ep`, over
//! RDMA to another node with `(ep − g) / ep` (`g` ranks per node). Bytes per copy: dispatch
//! `hidden × (1 + 4/128)` (DeepEP's FP8 dispatch: e4m3 values and one f32 scale per 128),
//! combine `hidden × 2` (bf16). The normal kernels (prefill) send a token once per remote
//! node and forward it inside the node (`m` nodes: `(m − 1)(1 − (1 − 1/m)^k)` node copies
//! per token instead of `k (ep − g) / ep`) and run a layout / notify round first (2 × the link
//! latency); the low-latency kernels (decode) send every copy directly (one latency). A phase
//! takes its latency + the slower of its NVLink and RDMA volumes at
//! `efficiency.collective` of the profile's `link` figures, × the imbalance (the hottest rank
//! receives, then sends back, that much more). With DeepEP the MoE layers run no all-reduce
//! (with DP attention) or keep only attention's (plain TP).
//!
//! Not modelled: two-batch overlap (TBO, which hides the all-to-all under the other
//! micro-batch's compute), the shared experts' unsharded compute under DeepEP (their memory
//! is counted), vLLM's all-gather / reduce-scatter across DP replicas (each replica is priced
//! on its own), DeepEP's SM budget taken from the GEMMs.
use super::collective::Placement;
use crate::error::Result;
use crate::spec::expert_parallel::{A2aBackend, DeepEpKernel, ExpertParallel};
use crate::spec::hardware::HardwareProfile;
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;

/// Busiest EP rank's routed tokens over the mean without EPLB (module doc: measured ratio).
pub const IMBALANCE_WITHOUT_EPLB: f64 = 1.9;
/// The same with EPLB (module doc: servesim's assumption).
pub const IMBALANCE_WITH_EPLB: f64 = 1.1;
/// Dispatch bytes per hidden element: FP8 e4m3 + an f32 scale per 128 elements.
pub const DISPATCH_BYTES_PER_ELEMENT: f64 = 1.0 + 4.0 / 128.0;
/// Combine bytes per hidden element (bf16).
pub const COMBINE_BYTES_PER_ELEMENT: f64 = 2.0;

/// The EP price constants of one deployment.
#[derive(Debug, Clone)]
pub struct EpCost {
    pub layout: ExpertParallel,
    /// The EP group on nodes.
    pub placement: Placement,
    /// Busiest rank's routed tokens over the mean.
    pub imbalance: f64,
    hidden: f64,
    top_k: f64,
    moe_layers: f64,
    dp_attention: bool,
    nvlink_bytes_per_s: f64,
    nvlink_latency_ns: f64,
    /// Inter-node (RDMA) bandwidth and latency; `None` on one node.
    rdma: Option<(f64, f64)>,
    efficiency: f64,
}

/// A step's collectives split for `--explain`: the all-reduces left, the all-to-all.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Comm {
    pub all_reduce_ns: f64,
    pub all_to_all_ns: f64,
}

impl EpCost {
    /// `None` when the server runs no EP (or the model has no experts).
    pub fn new(
        hw: &HardwareProfile,
        model: &ModelSpec,
        server: &ServerConfig,
    ) -> Result<Option<EpCost>> {
        let (Some(layout), Some(moe)) = (&server.expert_parallel, &model.moe) else {
            return Ok(None);
        };
        let link = &hw.link;
        let placement = Placement::checked(
            layout.ep_size,
            server.group_ranks_per_node(link.devices_per_node),
            hw,
            [
                &format!("expert parallelism over {} ranks", layout.ep_size),
                "all-to-all",
                "--ep-size",
            ],
        )?;
        let rdma = link
            .inter_node()
            .map(|i| (i.bandwidth_bytes_per_s, i.latency_ns));
        Ok(Some(EpCost {
            layout: layout.clone(),
            placement,
            imbalance: if layout.eplb {
                IMBALANCE_WITH_EPLB
            } else {
                IMBALANCE_WITHOUT_EPLB
            },
            hidden: model.hidden_size as f64,
            top_k: moe.experts_per_token as f64,
            moe_layers: model.moe_layers() as f64,
            dp_attention: server.dp_attention,
            nvlink_bytes_per_s: link.bandwidth_bytes_per_s,
            nvlink_latency_ns: link.latency_ns,
            rdma: rdma.filter(|_| placement.spans_nodes()),
            efficiency: hw.efficiency.collective,
        }))
    }

    /// Tokens the busiest rank's routed experts run, for `rows` tokens through the layer.
    pub fn expert_rows(&self, rows: f64) -> f64 {
        rows * self.imbalance
    }

    /// One DeepEP dispatch + combine of one MoE layer for `group_tokens` tokens, ns.
    pub fn all_to_all_ns(&self, group_tokens: f64, kernel: DeepEpKernel) -> f64 {
        if group_tokens <= 0.0 {
            return 0.0;
        }
        let ep = self.layout.ep_size as f64;
        let g = self.placement.ranks_per_node as f64;
        let m = self.placement.nodes as f64;
        let per_rank = group_tokens / ep * self.imbalance;
        let nvlink_copies = self.top_k * (g - 1.0) / ep;
        let rdma_copies = match kernel {
            DeepEpKernel::LowLatency => self.top_k * (ep - g) / ep,
            DeepEpKernel::Normal => (m - 1.0) * (1.0 - (1.0 - 1.0 / m).powf(self.top_k)),
        };
        let (rdma_bw, rdma_lat) = self.rdma.unwrap_or((f64::INFINITY, 0.0));
        let latency = match kernel {
            DeepEpKernel::LowLatency => self.nvlink_latency_ns.max(rdma_lat),
            DeepEpKernel::Normal => 2.0 * self.nvlink_latency_ns.max(rdma_lat),
        };
        let phase = |bytes_per_element: f64| {
            let copy = self.hidden * bytes_per_element * per_rank;
            let nvlink = nvlink_copies * copy / (self.nvlink_bytes_per_s * self.efficiency);
            let rdma = rdma_copies * copy / (rdma_bw * self.efficiency);
            latency + nvlink.max(rdma) * 1e9
        };
        phase(DISPATCH_BYTES_PER_ELEMENT) + phase(COMBINE_BYTES_PER_ELEMENT)
    }

    /// The step's collectives over `num_layers` layers given one TP all-reduce of the step's
    /// tokens (`all_reduce_ns`): unchanged without DeepEP; with it each MoE layer runs the
    /// all-to-all instead of its all-reduces (keeping attention's one under plain TP).
    pub fn collectives(
        &self,
        num_layers: f64,
        all_reduce_ns: f64,
        group_tokens: f64,
        extend: bool,
    ) -> Comm {
        let Some(kernel) = self.layout.deepep_kernel(extend) else {
            return Comm {
                all_reduce_ns: num_layers * 2.0 * all_reduce_ns,
                all_to_all_ns: 0.0,
            };
        };
        let dense = num_layers - self.moe_layers;
        let moe_ar = if self.dp_attention { 0.0 } else { 1.0 };
        Comm {
            all_reduce_ns: (dense * 2.0 + self.moe_layers * moe_ar) * all_reduce_ns,
            all_to_all_ns: self.moe_layers * self.all_to_all_ns(group_tokens, kernel),
        }
    }

    /// One line for `--explain`.
    pub fn describe(&self, extend: bool) -> String {
        let l = &self.layout;
        let a2a = match l.deepep_kernel(extend) {
            None => "no all-to-all (no DeepEP: tokens reach the experts through the TP all-reduce / DP-attention gather)".to_string(),
            Some(k) => format!(
                "DeepEP {} dispatch (FP8, {:.4} B/element) + combine (bf16) of top-{} copies, {} node(s) × {} ranks: NVLink {:.0} GB/s{}, × collective {:.3}",
                match k { DeepEpKernel::Normal => "normal", DeepEpKernel::LowLatency => "low-latency" },
                DISPATCH_BYTES_PER_ELEMENT, self.top_k, self.placement.nodes, self.placement.ranks_per_node,
                self.nvlink_bytes_per_s / 1e9,
                self.rdma.map_or(String::new(), |(bw, _)| format!(", RDMA {:.0} GB/s per rank", bw / 1e9)),
                self.efficiency
            ),
        };
        format!(
            "EP {} (moe_tp {}, {} redundant experts, EPLB {}): busiest rank × {:.2} routed tokens (where a kernel table's EP rows price the experts, their routing stands instead); {a2a}",
            l.ep_size,
            l.moe_tp,
            l.redundant_experts,
            if l.eplb { "on" } else { "off" },
            self.imbalance
        )
    }

    /// Whether the server runs DeepEP (the all-to-all line of `--explain`).
    pub fn has_all_to_all(&self) -> bool {
        self.layout.a2a_backend == A2aBackend::Deepep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::expert_parallel::DeepEpMode;

    fn cost(ep: u64, per_node: u64, eplb: bool) -> EpCost {
        let layout = ExpertParallel {
            ep_size: ep,
            moe_tp: 1,
            a2a_backend: A2aBackend::Deepep,
            deepep_mode: DeepEpMode::Auto,
            eplb,
            redundant_experts: 0,
            shared_experts_unsharded: true,
        };
        let placement = Placement::packed(ep, per_node);
        EpCost {
            layout,
            placement,
            imbalance: if eplb { 1.1 } else { 1.9 },
            hidden: 7168.0,
            top_k: 8.0,
            moe_layers: 58.0,
            dp_attention: true,
            nvlink_bytes_per_s: 450e9,
            nvlink_latency_ns: 8000.0,
            rdma: placement.spans_nodes().then_some((50e9, 15000.0)),
            efficiency: 1.0,
        }
    }

    #[test]
    fn low_latency_all_to_all_by_hand() {
        // EP16 over 2 nodes × 8, EPLB on (1.1), 2048 group tokens → 128 per rank × 1.1 = 140.8.
        // Copies per token: NVLink 8·7/16 = 3.5, RDMA 8·8/16 = 4. Dispatch copy bytes
        // 7168 × 1.03125 × 140.8; RDMA bound: 4 × that / 50e9 s; latency 15 µs (the larger).
        let c = cost(16, 8, true);
        let tok = 140.8;
        let dispatch = 15000.0 + 4.0 * 7168.0 * 1.03125 * tok / 50e9 * 1e9;
        let combine = 15000.0 + 4.0 * 7168.0 * 2.0 * tok / 50e9 * 1e9;
        let got = c.all_to_all_ns(2048.0, DeepEpKernel::LowLatency);
        assert!((got - (dispatch + combine)).abs() < 1e-6, "{got}");
        // ≈ 15 + 83.3 + 15 + 161.5 µs.
        assert!((got / 1e3 - 274.8).abs() < 0.2, "{got}");
    }

    #[test]
    fn normal_kernels_send_once_per_remote_node() {
        // 2 nodes: 1 − (1/2)^8 = 0.99609 node copies instead of 4 rank copies over RDMA.
        let c = cost(16, 8, true);
        let tok = 2048.0 / 16.0 * 1.1;
        let rdma_copies = 1.0 - 0.5f64.powi(8);
        let nvlink_copies = 3.5;
        let phase = |b: f64| {
            let copy = 7168.0 * b * tok;
            30000.0 + (nvlink_copies * copy / 450e9).max(rdma_copies * copy / 50e9) * 1e9
        };
        let want = phase(1.03125) + phase(2.0);
        let got = c.all_to_all_ns(2048.0, DeepEpKernel::Normal);
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }

    #[test]
    fn across_nodes_is_slower_than_inside_one_and_eplb_helps() {
        let inside = cost(8, 8, false).all_to_all_ns(4096.0, DeepEpKernel::LowLatency);
        let across = cost(8, 4, false).all_to_all_ns(4096.0, DeepEpKernel::LowLatency);
        assert!(across > 2.0 * inside, "{across} vs {inside}");
        let eplb = cost(8, 8, true).all_to_all_ns(4096.0, DeepEpKernel::LowLatency);
        assert!(eplb < inside);
    }

    #[test]
    fn without_deepep_the_collectives_are_tp_all_reduces() {
        let mut c = cost(8, 8, false);
        c.layout.a2a_backend = A2aBackend::None;
        let comm = c.collectives(61.0, 10.0, 512.0, false);
        assert_eq!(comm.all_reduce_ns, 61.0 * 2.0 * 10.0);
        assert_eq!(comm.all_to_all_ns, 0.0);
        let deepep = cost(8, 8, false).collectives(61.0, 10.0, 512.0, false);
        // DP attention: only the 3 dense layers keep their 2 all-reduces.
        assert_eq!(deepep.all_reduce_ns, 3.0 * 2.0 * 10.0);
        assert!(deepep.all_to_all_ns > 0.0);
    }
}
