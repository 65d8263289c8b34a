//! Host time of SGLang's eager extend forward for MLA layers (DeepSeek-V2/V3/R1, Kimi-K2).
//!
//! SGLang runs every extend (prefill) step eagerly before 0.5.10, and from 0.5.10 whenever its
//! piecewise CUDA graphs are off: each kernel is launched from Python, layer by layer. For
//! most layers that costs the profile's `eager_layer_ns` (tens of µs). An MLA layer costs far
//! more: the absorbed-MLA attention, block-FP8 activation quantisation before each GEMM, the
//! routed and shared experts and the MHA-versus-MLA dispatch make it several times as many
//! Python-launched ops, and the GPU does not hide them: a one-token extend (a radix-cache hit)
//! costs about as much as a decode step plus the whole eager host time.
//!
//! Measured, not fitted: SGLang PR #12160 (sgl-project/sglang, Oct 2025) logs DeepSeek-V3
//! extending one new token in 82.6 ms eagerly and in 23.1 ms with the whole forward captured
//! in a CUDA graph, so 59.5 ms of host time over 61 MLA layers ≈ 975 µs per layer. Bounds:
//! 0.7 ms (PR #1401, SGLang 0.3: eager decode of DeepSeek-Coder-V2-Lite on H100 ≈ 4× its
//! CUDA-graph time) to 1.35 ms (PR #12160 if none of the graphed 23.1 ms were GPU time).
//! The cost is additive to the GPU time, as the existing per-layer eager cost is: the real
//! cookbook DeepSeek-R1 runs at concurrency 1 (validation/public, P002-00 cold vs P002-03
//! fully cached) differ by the prefill's GPU time, not by nothing, as a host floor hidden
//! under the GPU would make them (validation/public/ttft-notes.md, section 2).
//!
//! Not applied to vLLM servers (their own launch model, `spec::vllm`) nor to SGLang servers
//! whose piecewise CUDA graphs capture the prefill (0.5.10+ by default; the timing of those
//! graphs is not modelled, so such steps keep the profile's eager cost).

/// Host time of one MLA layer's eager extend forward, ns (SGLang PR #12160: (82.6 − 23.1) ms
/// over DeepSeek-V3's 61 layers). Bounds 0.7–1.35 ms (see the module doc); not fitted.
pub const MLA_EAGER_LAYER_NS: f64 = 975e3;

/// The per-layer eager launch cost of a deployment, ns: the profile's `base_ns`, or
/// [`MLA_EAGER_LAYER_NS`] (never less than `base_ns`) for an MLA model on an SGLang server
/// whose prefill runs eagerly.
pub fn eager_layer_ns(base_ns: f64, mla: bool, sglang_eager_prefill: bool) -> f64 {
    if mla && sglang_eager_prefill {
        base_ns.max(MLA_EAGER_LAYER_NS)
    } else {
        base_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_mla_layers_of_an_eager_sglang_prefill_pay_the_measured_host_time() {
        assert_eq!(eager_layer_ns(43_300.0, true, true), 975e3);
        // PR #12160's figure by hand: (82.6 − 23.1) ms / 61 layers.
        assert!((MLA_EAGER_LAYER_NS - (82.6e6 - 23.1e6) / 61.0).abs() < 1e3);
        assert_eq!(eager_layer_ns(43_300.0, false, true), 43_300.0);
        assert_eq!(eager_layer_ns(43_300.0, true, false), 43_300.0);
        // A profile whose own eager cost is larger keeps it.
        assert_eq!(eager_layer_ns(2e6, true, true), 2e6);
    }
}
