//! `--explain` for the roofline: one step split into GEMM, attention, MoE, all-reduce,
//! all-to-all, LM head, fixed GPU overheads and CPU, each with the constants that priced it.
use super::{collective, BatchShape, Roofline, StepCost};

impl Roofline {
    /// `--explain`: the step of `s` split as `gpu_ns` prices it. The fixed GPU overheads are
    /// what `gpu_ns` adds beyond the operators, so the items always sum to the GPU time.
    pub(crate) fn breakdown(&self, s: &BatchShape) -> crate::cost::breakdown::StepBreakdown {
        use crate::cost::breakdown::{Component, CostItem, StepBreakdown};
        let time = self.step_time(s);
        let rows = Self::rows(s);
        let busy = s.prefill_tokens + s.decode_reqs > 0;
        let on = |v: f64| if busy { v } else { 0.0 };
        let gemm = on(self.dense_layers * self.lin(self.dense_linear_params, rows)
            + self.moe_layers * (self.lin(self.moe_linear_params, rows) + self.router_ns(rows)));
        let moe = on(self.moe_layers * self.experts_ns(self.ep_rows(rows)));
        let attention = on(self.add_attention_layers(0.0, s));
        let comm = self.collectives(rows, s.prefill_reqs > 0);
        let (all_reduce, all_to_all) = (on(comm.all_reduce_ns), on(comm.all_to_all_ns));
        let logits = s.logit_rows();
        let lm_head = on(self.gemm_op_ns(self.lm_head_params, logits, true));
        let fixed = time.gpu_ns - (gemm + moe + attention + all_reduce + all_to_all + lm_head);
        let e = &self.hw.efficiency;
        let eff = |m: f64| e.gemm * m / (m + e.gemm_half_tokens);
        let prof = &self.hw.name;
        let item = |component, time_ns, detail: String| CostItem {
            component,
            time_ns,
            detail,
        };
        let (prefill_floors, decode_floors) = self.floor_descriptions();
        let floors: String = prefill_floors
            .iter()
            .filter(|_| s.prefill_reqs > 0)
            .map(|d| format!("; prefill floored by {d}"))
            .chain(
                decode_floors
                    .iter()
                    .filter(|_| s.decode_reqs > 0)
                    .map(|d| format!("; decode floored by {d}")),
            )
            .collect();
        let mut b = StepBreakdown {
            backend: "roofline".into(),
            items: vec![
                item(Component::Gemm, gemm, format!(
                    "roofline {prof}: max(2·m·params / (peak × gemm {:.3}·m/(m+{:.0}) = {:.3}), weight bytes / (HBM × memory {:.3})) at m={rows:.0}",
                    e.gemm, e.gemm_half_tokens, eff(rows), e.memory)),
                item(Component::Attention, attention, format!(
                    "roofline: max(FLOPs / (bf16 peak × {:.3}), KV bytes / (HBM × decode {:.3})); prefill work {:.3e} token pairs, decode Σ context {}",
                    self.attn.prefill, self.attn.decode, s.prefill_attn_work, s.decode_ctx_sum)
                    + &floors),
                item(Component::Moe, moe, if self.moe_layers > 0.0 {
                    format!("roofline: expected distinct experts of {} top-{} at m={rows:.0}; moe_gemm {:?}{}{}", self.num_experts, self.experts_per_token, e.moe_gemm, if self.untuned_moe_floor_ns.is_some() { "; default (untuned) fused-MoE config of this SGLang version on this GPU (cost/moe_config.rs)" } else { "" }, self.mxfp4.map_or(String::new(), |k| format!("; {}", k.describe(&self.hw))))
                } else {
                    "dense model".into()
                }),
                item(Component::AllReduce, all_reduce, format!(
                    "roofline: all-reduce over tp {} {}: {} (link latency {:.0} ns + 2(tp−1)/tp·bytes / (link × collective {:.3})), ×2 per layer{}",
                    self.tp, collective::describe(self.placement, &self.hw.link), if self.custom_all_reduce { "custom kernel below 8 MiB (latency + bytes / (link × custom_all_reduce)), NCCL ring above" } else { "collective library's ring" }, collective::intra_latency_ns(self.placement.ranks_per_node as f64, &self.hw.link), e.collective, super::super::qk_norm_tp::QkNormAllReduce::describe(self.qk_norm.as_ref()))),
                item(Component::AllToAll, all_to_all, self.ep.as_ref().map_or("no expert parallelism".into(), |e| e.describe(s.prefill_reqs > 0))),
                item(Component::LmHead, lm_head, format!("roofline: bf16 GEMM of {:.3e} params over {logits:.0} logit rows", self.lm_head_params)),
                item(Component::GpuOverhead, fixed, "profile overheads (`overheads:`): graph launch / sampling, per-layer floors, eager launches (the rest of the GPU time)".into()),
                item(Component::Cpu, time.cpu_ns, "profile overheads (`overheads:`): scheduler CPU per step + per request (hidden under the GPU by the overlap scheduler, else serial)".into()),
            ],
            time,
        };
        b.items
            .retain(|i| i.component != Component::AllToAll || self.ep.is_some());
        b
    }
}
