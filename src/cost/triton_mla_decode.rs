//! SGLang's static-split triton decode kernel at MLA decode (DeepSeek-V2/V3/R1 on `triton`
//! attention, SGLang 0.4.1 to 0.4.4.post1): what one layer's decode attention costs at least.
//!
//! **Which kernel.** `triton_ops/decode_attention.py::_decode_grouped_att_m_fwd` (read in the
//! 0.4.1, 0.4.3.post4, 0.4.4 and 0.4.4.post1 wheels): `BLOCK_H` 16 heads, `BLOCK_N` 32
//! tokens, `BLOCK_DMODEL` 512 + `BLOCK_DPE` 64, 4 warps, 2 stages, and a fixed
//! `triton_attention_num_kv_splits` (8 on NVIDIA). The grid is (requests, ⌈heads/16⌉,
//! splits): each block of 16 query heads streams the request's whole latent KV again, so the
//! work grows with context × heads on the rank (16 at TP8, 128 under DP attention). 0.4.4.post2
//! replaces the fixed split with per-batch `num_kv_splits` (SGLang PR #4553), so later
//! releases are not priced here; 0.4.1 is the first release read.
//!
//! **How fast, measured.** vLLM PR #13747 (FlashMLA integration, 2025-02-25) ran DeepSeek-R1
//! on 8×H200 at TP8 (16 heads a rank, bf16 KV), `benchmark_throughput` with 100 prompts of
//! 3000 tokens in and 1000 out, once with `TRITON_MLA` and once with `FLASHMLA`: 634.90 and
//! 692.34 output tok/s. vLLM's `TRITON_MLA` decode is the same kernel (its
//! `triton_decode_attention.py` is adapted from SGLang's, with the launch above and 4 splits);
//! prefill runs the same path under both. All 100 requests decode together for 1000 steps at
//! a mean context of 3500, so triton's extra time is (10⁵/634.90 − 10⁵/692.34) s / 1000 steps
//! / 61 layers = 214.2 µs per layer. Triton's own time is that plus FlashMLA's: FlashMLA
//! reads 100 × 3500 × 576 × 2 B = 403 MB a layer, at most at the H200's 4.8 TB/s (84 µs) and
//! at least at the 3000 GB/s its README reports for memory-bound shapes (134 µs). Over
//! 100 × 3500 × 16 token-head pairs that is [`NS_MIN`]–[`NS_MAX`] ns per (context token ×
//! query head) per layer; [`NS_PER_TOKEN_HEAD`] is the middle.
//!
//! **Scope.** The rate is per query head, so a rank with 128 heads (DP attention) pays 8× a
//! TP8 rank: the kernel runs 8 head blocks instead of 1, each doing the measured block's work
//! (the measured grid, 100 × 1 × 4 blocks, already fills the H200's 132 SMs). It is applied
//! as a floor on the table's or the roofline's decode attention, never lowering a price. The
//! measured kernel ran at ~1.3 TB/s, well under the H200's bandwidth, so it is not priced by
//! bytes: fp8 KV (which the kernel upcasts to bf16 in its loop) gets the same rate. A weaker
//! NVIDIA GPU is not faster than this rate; the B200 gets the same price (never slower than
//! the H200). Ascend runs its own kernels and is not priced here.
use super::BatchShape;
use crate::spec::hardware::{Arch, HardwareProfile};
use crate::spec::model::{Mla, ModelSpec};
use crate::spec::server::ServerConfig;
use crate::spec::version::Version;
use std::ops::Range;

/// The MLA dimensions of `model` when an SGLang server in `releases` runs it on the `triton`
/// attention backend (the applicability both triton MLA kernels share); `None` otherwise.
pub(crate) fn sglang_triton_mla<'m>(
    model: &'m ModelSpec,
    server: &ServerConfig,
    releases: Range<Version>,
) -> Option<&'m Mla> {
    let applies = server.vllm.is_none()
        && server.attention_backend == "triton"
        && releases.contains(&server.version);
    model.mla.as_ref().filter(|_| applies)
}

/// Decode steps of the measurement (1000 output tokens each, all requests together).
const STEPS: f64 = 1000.0;
/// Layers of DeepSeek-R1.
const LAYERS: f64 = 61.0;
/// Requests × mean context × query heads a rank, per layer, in the measurement.
const TOKEN_HEADS: f64 = 100.0 * 3500.0 * 16.0;
/// Triton's extra time per layer-step over FlashMLA (s): 10⁵ output tokens at 634.90 vs
/// 692.34 tok/s.
const EXTRA_S: f64 = (1e5 / 634.90 - 1e5 / 692.34) / STEPS / LAYERS;
/// The latent KV FlashMLA reads per layer-step (bytes): 576 bf16 values a token.
const FLASHMLA_BYTES: f64 = 100.0 * 3500.0 * 576.0 * 2.0;

/// Lowest cost the measurement allows (ns per context token × query head × layer): FlashMLA
/// at the H200's 4.8 TB/s datasheet bandwidth.
pub const NS_MIN: f64 = (EXTRA_S + FLASHMLA_BYTES / 4.8e12) / TOKEN_HEADS * 1e9;
/// Highest cost it allows: FlashMLA at its reported 3000 GB/s.
pub const NS_MAX: f64 = (EXTRA_S + FLASHMLA_BYTES / 3.0e12) / TOKEN_HEADS * 1e9;
/// The static-split triton kernel's cost (ns per context token × query head × layer): the
/// middle of [`NS_MIN`]–[`NS_MAX`] (module doc).
pub const NS_PER_TOKEN_HEAD: f64 = (NS_MIN + NS_MAX) / 2.0;

/// First release priced (the kernel read from 0.4.1 on).
pub const FIRST: Version = Version::new(0, 4, 1);
/// First release no longer priced: 0.4.4.post2 picks the KV splits per batch (PR #4553).
pub const UNTIL: Version = Version::post(0, 4, 4, 2);

/// The triton MLA decode kernel of one deployment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TritonMlaDecode {
    /// Query heads on one rank (128 under DP attention, 128 / tp otherwise).
    pub heads: f64,
    /// Cost per context token × query head × layer (ns).
    pub ns_per_token_head: f64,
}

impl TritonMlaDecode {
    /// The kernel of an SGLang server running an MLA model on `triton` attention in
    /// [`FIRST`]..[`UNTIL`] on an NVIDIA GPU; `None` for every other deployment.
    pub fn of(hw: &HardwareProfile, model: &ModelSpec, server: &ServerConfig) -> Option<Self> {
        sglang_triton_mla(model, server, FIRST..UNTIL)?;
        (hw.arch != Arch::Ascend).then(|| TritonMlaDecode {
            heads: model.q_heads_per_rank(server.attn_tp),
            ns_per_token_head: NS_PER_TOKEN_HEAD,
        })
    }

    /// One layer's decode attention floor (ns) over the batch's summed context.
    pub fn layer_ns(&self, s: &BatchShape) -> f64 {
        s.decode_ctx_sum as f64 * self.heads * self.ns_per_token_head
    }

    /// What `--explain` prints.
    pub fn describe(&self) -> String {
        format!(
            "SGLang's static-split triton MLA decode kernel: {:.1} ps per context token × head, {:.0} heads (vLLM PR #13747, cost/triton_mla_decode.rs)",
            self.ns_per_token_head * 1e3,
            self.heads
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::bundled::{load_hardware, load_model};
    use crate::spec::server_flags::ServerFlags;

    fn server(hw: &HardwareProfile, m: &ModelSpec, ver: &str, dp: bool) -> ServerConfig {
        let flags = ServerFlags {
            tp: Some(8),
            sglang_version: Some(ver.parse().unwrap()),
            enable_dp_attention: dp,
            ..Default::default()
        };
        ServerConfig::resolve(&flags, hw, m).unwrap()
    }

    #[test]
    fn the_rate_is_the_pr_13747_measurement() {
        // 157.505 s vs 144.437 s for 10⁵ tokens: 13.07 ms a step, 214 µs a layer.
        assert!((EXTRA_S * 1e6 - 214.2).abs() < 0.2, "{}", EXTRA_S * 1e6);
        // 403.2 MB at 4.8 TB/s = 84.0 µs; at 3.0 TB/s = 134.4 µs; over 5.6e6 token-heads.
        assert!(
            (NS_MIN - (214.2 + 84.0) / 5.6e6 * 1e3).abs() < 1e-4,
            "{NS_MIN}"
        );
        assert!(
            (NS_MAX - (214.2 + 134.4) / 5.6e6 * 1e3).abs() < 1e-4,
            "{NS_MAX}"
        );
        assert!((0.053..0.063).contains(&NS_PER_TOKEN_HEAD));
    }

    #[test]
    fn applies_by_release_and_backend() {
        let m = load_model("deepseek-v3").unwrap();
        let h200 = load_hardware("h200-sxm-141gb").unwrap();
        let on = |ver: &str| TritonMlaDecode::of(&h200, &m, &server(&h200, &m, ver, true));
        assert_eq!(on("0.4.1").unwrap().heads, 128.0); // DP attention: every head on a rank
        assert!(on("0.4.1.post4").is_some());
        assert!(on("0.4.4.post1").is_some());
        assert!(on("0.4.4.post2").is_none()); // per-batch splits (PR #4553)
        assert!(on("0.4.0").is_none()); // not read
        assert!(on("0.5.3").is_none());
        let tp8 = TritonMlaDecode::of(&h200, &m, &server(&h200, &m, "0.4.3", false)).unwrap();
        assert_eq!(tp8.heads, 16.0);
        let q = load_model("qwen3-8b").unwrap();
        assert!(TritonMlaDecode::of(&h200, &q, &server(&h200, &q, "0.4.1", false)).is_none());
    }

    #[test]
    fn prices_a_hand_computed_step() {
        // 136 requests at 1536 context, 128 heads: 136 · 1536 · 128 · ~57.7 ps ≈ 1.54 ms a
        // layer, ≈ 11.3 µs per request-layer.
        let m = load_model("deepseek-v3").unwrap();
        let hw = load_hardware("h200-sxm-141gb").unwrap();
        let k = TritonMlaDecode::of(&hw, &m, &server(&hw, &m, "0.4.1", true)).unwrap();
        let s = BatchShape {
            decode_reqs: 136,
            decode_ctx_sum: 136 * 1536,
            ..Default::default()
        };
        let want = 136.0 * 1536.0 * 128.0 * NS_PER_TOKEN_HEAD;
        assert!((k.layer_ns(&s) - want).abs() < 1e-6);
        assert!(
            (1.4e6..1.7e6).contains(&k.layer_ns(&s)),
            "{}",
            k.layer_ns(&s)
        );
    }
}
