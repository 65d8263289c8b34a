//! Gated delta-net (GDN) linear-attention layers (Qwen3-Next, Qwen3.5) priced on the roofline:
//! the kernel between the projections (causal conv1d, then the gated delta rule), per layer.
//!
//! - **Decode** (`fused_recurrent_gated_delta_rule` / `causal_conv1d_update` in SGLang's
//!   `layers/attention/fla`): each request reads and writes its whole recurrent state
//!   ([`LinearAttention::state_bytes_per_layer`]) once per step, whatever its context; the
//!   work per value head per query token is about 7 · head_k · head_v FLOPs, by hand from the
//!   recurrence S ← α·S + β·(v − S·k)·kᵀ, o = S·q (decay 1, S·k 2, rank-1 update 2, S·q 2).
//!   Memory-bound: priced at the decode-attention bandwidth efficiency.
//! - **Prefill** (`chunk_gated_delta_rule`, chunks of C = 64 tokens: `fla/chunk.py` 0.5.9
//!   `chunk_local_cumsum(g, chunk_size=64)`): per token and value head, the intra-chunk
//!   attention-like products 2 · C · (head_k + head_v) and the three state GEMMs of the
//!   inter-chunk pass 6 · head_k · head_v; each request's state is read and written once, and
//!   the q, k, v inputs read once (bf16). Priced at the prefill-attention compute efficiency.
//!
//! Both grow with the batch (requests, tokens) and never with context: a GDN layer's decode is
//! flat in context, which is the mechanism that makes these models cheap at long context.
//!
//! The roofline backend always prices GDN layers here; the kernels backend does where its
//! tables lack them (no `context_gdn` / `generation_gdn` rows: vLLM, a100_sxm's prefill, a
//! speculative verify), else from AIConfigurator's measured kernels
//! ([`crate::cost::kernels::gdn_tables`]: the chunked prefill runs ~14× slower than this FLOP
//! bound on H100, and small decode batches sit on a ~7 µs latency floor this price lacks).
use super::BatchShape;
use crate::spec::hardware::{AttentionEfficiency, HardwareProfile};
use crate::spec::model::LinearAttention;

/// Tokens per chunk of SGLang's chunked gated-delta-rule prefill.
pub const CHUNK_TOKENS: f64 = 64.0;

/// FLOPs per query token, value head and state element at decode (by hand, see above).
pub const DECODE_FLOPS_PER_STATE_ELEMENT: f64 = 7.0;

/// One deployment's GDN layers on one rank.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GdnCost {
    /// How many layers are GDN.
    pub layers: f64,
    state_bytes: f64,
    /// Value heads on this rank.
    v_heads: f64,
    head_k: f64,
    head_v: f64,
    /// q, k, v bytes per token into the prefill kernel on this rank (bf16).
    input_bytes_per_token: f64,
}

impl GdnCost {
    pub fn of(l: &LinearAttention, tp: u64) -> Self {
        GdnCost {
            layers: l.layers as f64,
            state_bytes: l.state_bytes_per_layer(tp),
            v_heads: l.v_heads_per_rank(tp),
            head_k: l.head_k_dim as f64,
            head_v: l.head_v_dim as f64,
            input_bytes_per_token: (2 * l.key_dim() + l.value_dim()) as f64 / tp.max(1) as f64
                * 2.0,
        }
    }

    /// Time (ns) of one GDN layer for the batch `s` on `hw`.
    pub fn layer_ns(
        &self,
        hw: &HardwareProfile,
        attn: &AttentionEfficiency,
        s: &BatchShape,
    ) -> f64 {
        let peak = hw.peaks.bf16_flops_per_s;
        let bw = hw.memory.bandwidth_bytes_per_s;
        let state_elems = self.v_heads * self.head_k * self.head_v;
        let mut t = 0.0;
        if s.prefill_reqs > 0 {
            let tokens = s.prefill_tokens as f64;
            let per_token = self.v_heads
                * (2.0 * CHUNK_TOKENS * (self.head_k + self.head_v)
                    + 6.0 * self.head_k * self.head_v);
            let compute_s = tokens * per_token / (peak * attn.prefill);
            let bytes = 2.0 * self.state_bytes * s.prefill_reqs as f64
                + tokens * self.input_bytes_per_token;
            let memory_s = bytes / (bw * hw.efficiency.memory);
            t += compute_s.max(memory_s);
        }
        if s.decode_reqs > 0 {
            let tokens = s.decode_tokens() as f64;
            let compute_s =
                tokens * DECODE_FLOPS_PER_STATE_ELEMENT * state_elems / (peak * attn.prefill);
            let memory_s = 2.0 * self.state_bytes * s.decode_reqs as f64 / (bw * attn.decode);
            t += compute_s.max(memory_s);
        }
        t * 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::bundled::load_hardware;
    use crate::spec::linear_attention::qwen35_27b;

    fn decode(bs: u64, ctx: u64) -> BatchShape {
        BatchShape {
            decode_reqs: bs,
            decode_ctx_sum: bs * ctx,
            ..Default::default()
        }
    }

    /// By hand on H100 SXM (3.35 TB/s HBM3, datasheet): one request's Qwen3.5-27B GDN layer at
    /// TP 1 moves its 3 207 168-byte state in and out, 6.41 MB: at least 1.915 µs at the full
    /// datasheet bandwidth, at most twice that (an efficiency ≥ 0.5). The same at any context.
    #[test]
    fn a_decode_is_its_state_traffic_and_flat_in_context() {
        let hw = load_hardware("h100-sxm5-80gb").unwrap();
        let attn = hw.attention("fa3").unwrap();
        let g = GdnCost::of(&qwen35_27b(), 1);
        let floor_ns = 2.0 * 3_207_168.0 / 3.35e12 * 1e9;
        let t = g.layer_ns(&hw, &attn, &decode(1, 128));
        assert!(t >= floor_ns && t <= 2.0 * floor_ns, "{t} vs {floor_ns}");
        assert_eq!(t, g.layer_ns(&hw, &attn, &decode(1, 100_000)));
        // 64 requests: 64 states.
        let t64 = g.layer_ns(&hw, &attn, &decode(64, 128));
        assert!((t64 / t - 64.0).abs() < 1e-9);
    }

    /// By hand: an 8192-token prefill of one GDN layer (48 value heads of 128 × 128) is at
    /// least 8192 · 48 · (2·64·256 + 6·128·128) = 51.5 GFLOP, ≥ 52 µs at H100's 989 dense
    /// BF16 TFLOP/s; TP 2 halves the heads and never costs more.
    #[test]
    fn a_prefill_is_the_chunked_delta_rule_flops() {
        let hw = load_hardware("h100-sxm5-80gb").unwrap();
        let attn = hw.attention("fa3").unwrap();
        let mut s = BatchShape::default();
        s.add_prefill(8192, 0, None);
        let flops = 8192.0 * 48.0 * (2.0 * 64.0 * 256.0 + 6.0 * 128.0 * 128.0);
        let t1 = GdnCost::of(&qwen35_27b(), 1).layer_ns(&hw, &attn, &s);
        assert!(t1 >= flops / 989.4e12 * 1e9, "{t1}");
        let t2 = GdnCost::of(&qwen35_27b(), 2).layer_ns(&hw, &attn, &s);
        assert!(t2 <= t1 && t2 >= 0.45 * t1, "{t2} vs {t1}");
    }
}
