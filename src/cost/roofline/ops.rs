//! The roofline's per-operator prices, for other backends' per-op fallbacks (the kernel
//! tables price what they did not measure with these) and for `--explain`.
use super::{collective, BatchShape, ComputeType, Roofline};

/// Per-operator prices, for other backends' per-op fallbacks (the kernel tables) and for
/// `--explain`; each is exactly the term `gpu_ns` adds for that operator.
impl Roofline {
    /// A linear layer of `params` weights over `rows` tokens: the model's weight format, or
    /// bf16 (router, LM head) when `bf16`.
    pub(crate) fn gemm_op_ns(&self, params: f64, rows: f64, bf16: bool) -> f64 {
        if bf16 {
            self.gemm_ns(params, rows, 2.0, ComputeType::Bf16, 1.0, 1.0)
        } else {
            self.lin(params, rows)
        }
    }

    /// The least time a linear layer of `params` weights takes inside a forward pass: its
    /// weights streamed once from DRAM at the datasheet bandwidth (no efficiency). A kernel
    /// table timed by re-running one GEMM keeps weights that fit in L2 resident (L40S 96 MB,
    /// RTX PRO 6000 128 MB, H100 50 MB of L2), which a forward through every layer cannot.
    pub(crate) fn weight_stream_ns(&self, params: f64, bf16: bool) -> f64 {
        let bytes = if bf16 {
            2.0
        } else {
            self.linear_bytes_per_param
        };
        params * bytes / self.bandwidth() * 1e9
    }

    /// Routed experts of one MoE layer over `rows` tokens.
    pub(crate) fn experts_op_ns(&self, rows: f64) -> f64 {
        self.experts_ns(rows)
    }

    /// The busiest EP rank's routed tokens for `rows` (`rows` without EP).
    pub(crate) fn ep_rows(&self, rows: f64) -> f64 {
        self.ep.as_ref().map_or(rows, |e| e.expert_rows(rows))
    }

    /// The step's all-reduces and EP all-to-all for `rows` tokens through the layers.
    pub(crate) fn collectives(
        &self,
        rows: f64,
        extend: bool,
    ) -> crate::cost::expert_parallel::Comm {
        let ar = self.all_reduce_ns(rows);
        let mut comm = match &self.ep {
            Some(e) => e.collectives(self.num_layers, ar, rows, extend),
            None => crate::cost::expert_parallel::Comm {
                all_reduce_ns: self.num_layers * 2.0 * ar,
                all_to_all_ns: 0.0,
            },
        };
        if let Some(q) = &self.qk_norm {
            let ar = self.all_reduce_ns(rows * q.elements_per_token / self.hidden);
            comm.all_reduce_ns += self.num_layers * q.per_layer * ar;
        }
        comm
    }

    /// The EP price constants, when the server runs EP.
    pub(crate) fn expert_parallel(&self) -> Option<&crate::cost::expert_parallel::EpCost> {
        self.ep.as_ref()
    }

    /// Attention kernels of every layer (full and sliding-window) for `s`.
    pub(crate) fn attention_op_ns(&self, s: &BatchShape) -> f64 {
        self.add_attention_layers(0.0, s)
    }

    /// How many layers are gated delta-net linear attention (0 for a plain decoder).
    pub(crate) fn linear_layers(&self) -> f64 {
        self.gdn.map_or(0.0, |g| g.layers)
    }

    /// The GDN kernels of every linear layer for `s` (ns), 0 without any.
    pub(crate) fn linear_layers_ns(&self, s: &BatchShape) -> f64 {
        self.gdn
            .map_or(0.0, |g| g.layers * g.layer_ns(&self.hw, &self.attn, s))
    }

    /// Whether the TP group spans nodes (priced over the inter-node link).
    pub(crate) fn spans_nodes(&self) -> bool {
        self.placement.spans_nodes()
    }

    /// How the TP group sits on nodes, for `--explain`.
    pub(crate) fn placement_note(&self) -> String {
        collective::describe(self.placement, &self.hw.link)
    }

    /// One TP all-reduce of `tokens` hidden states.
    pub(crate) fn all_reduce_op_ns(&self, tokens: f64) -> f64 {
        self.all_reduce_ns(tokens)
    }

    /// The hardware profile this roofline prices.
    pub(crate) fn hw(&self) -> &crate::spec::hardware::HardwareProfile {
        &self.hw
    }
}

#[cfg(test)]
mod tests {
    use crate::cost::roofline::Roofline;
    use crate::spec::bundled::{load_hardware, load_model};
    use crate::spec::server::ServerConfig;
    use crate::spec::server_flags::ServerFlags;

    /// Decode all-reduce time of one token through MiniMax-M2.5 at TP8 on H100 (roofline), and
    /// the roofline's price of one all-reduce of `tokens` hidden states.
    fn decode_all_reduce(ver: &str) -> (f64, Roofline) {
        let hw = load_hardware("h100-sxm5-80gb").unwrap();
        let m = load_model("MiniMaxAI/MiniMax-M2.5").unwrap();
        let flags = ServerFlags {
            tp: Some(8),
            sglang_version: Some(ver.parse().unwrap()),
            ..Default::default()
        };
        let server = ServerConfig::resolve(&flags, &hw, &m).unwrap();
        let r = Roofline::new(&hw, &m, &server).unwrap();
        (r.collectives(1.0, false).all_reduce_ns, r)
    }

    #[test]
    fn minimax_m2_adds_its_qk_norm_all_reduces_per_layer_by_release() {
        // minimax_m2.py: 0.5.7 all-reduces the q and k variances apart ([tokens, 1] fp32
        // each), 0.5.8+ one [tokens, 2] fp32 sum (`forward_qk`); 62 layers, hidden 3072, so
        // one token's message is 4 (2) bf16 elements = 4/3072 (2/3072) of a hidden state.
        let layers = 62.0;
        for (ver, n, elements) in [("0.5.7", 2.0, 2.0), ("0.5.9", 1.0, 4.0)] {
            let (got, r) = decode_all_reduce(ver);
            let want = layers
                * (2.0 * r.all_reduce_op_ns(1.0) + n * r.all_reduce_op_ns(elements / 3072.0));
            assert!((got - want).abs() < 1e-6 * want, "{ver}: {got} vs {want}");
            // Each extra all-reduce costs at least the custom all-reduce's fixed time.
            let hw = load_hardware("h100-sxm5-80gb").unwrap();
            let extra = got - layers * 2.0 * r.all_reduce_op_ns(1.0);
            assert!(
                extra >= layers * n * hw.link.custom_all_reduce_latency_ns,
                "{ver}"
            );
        }
    }
}
