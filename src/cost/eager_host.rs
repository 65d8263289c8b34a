//! Host time of SGLang's eager extend (prefill) forward, per layer kind: MLA, MoE, dense.
//!
//! SGLang runs every extend step eagerly before 0.5.10, and from 0.5.10 whenever its piecewise
//! prefill CUDA graphs are off or the step exceeds their largest captured token count: each
//! kernel is launched from Python, layer by layer, and the extend path's metadata set-up
//! synchronises with the GPU, so the host time adds to the GPU time instead of hiding under it
//! (validation/public/ttft-notes.md, section 2: the gap stays at 56–65 ms for 4200-token
//! prompts, and PR #11845 below still saves 21 ms on a 7k-token prefill). A pure decode step
//! that runs eagerly (above the largest decode graph) pays the profile's `eager_layer_ns`
//! (tens of µs, SGLang PR #1401: Llama-3-8B eager decode), except on MLA layers, whose eager
//! decode PR #1401 measured at ≈ 4× the graphed step.
//!
//! Measured, not fitted (one table, [`EAGER_EXTEND_LAYER_NS`]):
//! - MLA: SGLang PR #12160 (https://github.com/sgl-project/sglang/pull/12160) logs DeepSeek-V3
//!   (TP8) extending one token in 82.6 ms eagerly, 23.1 ms with the whole forward in a CUDA
//!   graph: 59.5 ms over 61 layers ≈ 975 µs. Bounds 0.7 ms (PR #1401: eager
//!   DeepSeek-Coder-V2-Lite decode ≈ 4× its graph time on H100) to 1.35 ms (all of the graphed
//!   23.1 ms host).
//! - MoE: SGLang PR #11845 (https://github.com/sgl-project/sglang/pull/11845, piecewise CUDA
//!   graphs for Qwen3-MoE) measures Qwen3-30B-A3B (48 MoE layers) on H20, 7k-token prompts:
//!   mean TTFT 310 ms eager, 289 ms under piecewise graphs: 21 ms / 48 ≈ 438 µs. Bounds
//!   438 µs (a lower bound: piecewise graphs keep the attention ops eager) to 1.63 ms (SGLang
//!   PR #13622: Grok-2, 64 MoE layers, TP8, one 1024-token request's whole eager TTFT
//!   104.6 ms, GPU time included).
//! - Dense: sfllm PR #46 (https://github.com/wejoncy/sfllm/pull/46, a Python engine built like
//!   SGLang; no SGLang measurement of a dense model was found) measures Qwen3-4B (36 dense
//!   layers, TP1) extending 129 tokens in 16.613 ms eagerly, 5.685 ms under a full prefill
//!   graph: 10.9 ms / 36 ≈ 304 µs. Bounds 304 µs (what the graph saved; part of the eager
//!   host time may still overlap the 5.7 ms of GPU) to 461 µs (all of the eager 16.6 ms host).
//!
//! One figure for every tensor-parallel size: PR #12160 is TP8, PR #11845 does not state its
//! TP (the model fits one H20), sfllm is TP1; none of them compares TP sizes.
//!
//! Not applied to vLLM servers: V1 prefills launch asynchronously and hide the host time
//! under the GPU (vLLM issue #45709: Qwen3-30B-A3B TP4, one 3500-token request prefills in
//! 20.88 ms both eagerly and under piecewise graphs; vLLM PR #44275: Llama-3-8B c16
//! 1024-token mean TTFT 661.0 ms eager vs 660.4 ms graphed). Their launch model is
//! `spec::vllm` with [`super::overheads::PIECEWISE_LAUNCH_SHARE`].

/// Layer kind of a model, as the eager extend's host time depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// Multi-head latent attention (DeepSeek-V2/V3/R1, Kimi-K2); any MLP.
    Mla,
    /// Grouped/multi-head attention + routed experts.
    Moe,
    /// Grouped/multi-head attention + dense MLP.
    Dense,
}

/// Host time of one layer's eager extend forward on an SGLang server, ns, by [`LayerKind`]
/// (sources and bounds: the module doc).
pub const EAGER_EXTEND_LAYER_NS: [(LayerKind, f64); 3] = [
    // SGLang PR #12160: (82.6 − 23.1) ms / 61 DeepSeek-V3 layers.
    (LayerKind::Mla, 975e3),
    // SGLang PR #11845: (310 − 289) ms / 48 Qwen3-30B-A3B layers.
    (LayerKind::Moe, 437.5e3),
    // sfllm PR #46: (16.613 − 5.685) ms / 36 Qwen3-4B layers.
    (LayerKind::Dense, 303.6e3),
];

/// The measured host time of one eager extend layer of `kind`, ns.
pub fn extend_host_layer_ns(kind: LayerKind) -> f64 {
    EAGER_EXTEND_LAYER_NS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(0.0, |&(_, ns)| ns)
}

/// Per-layer launch cost of an SGLang eager extend step, ns, averaged over the model's layers:
/// every layer MLA when `mla`, else `moe_layers` MoE and the rest dense; never below the
/// profile's `base_ns`.
pub fn extend_layer_ns(base_ns: f64, mla: bool, num_layers: u64, moe_layers: u64) -> f64 {
    let host_ns = if mla {
        extend_host_layer_ns(LayerKind::Mla)
    } else if num_layers == 0 {
        0.0
    } else {
        let moe = moe_layers.min(num_layers) as f64;
        let dense = num_layers as f64 - moe;
        (moe * extend_host_layer_ns(LayerKind::Moe)
            + dense * extend_host_layer_ns(LayerKind::Dense))
            / num_layers as f64
    };
    base_ns.max(host_ns)
}

/// Per-layer launch cost of an SGLang eager pure-decode step, ns: the profile's `base_ns`,
/// or the MLA figure (never less than `base_ns`) for an MLA model (PR #1401).
pub fn decode_layer_ns(base_ns: f64, mla: bool) -> f64 {
    if mla {
        base_ns.max(extend_host_layer_ns(LayerKind::Mla))
    } else {
        base_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_the_sources_arithmetic() {
        // By hand from each source's two timings and layer count.
        let by_hand = [
            (LayerKind::Mla, (82.6e6 - 23.1e6) / 61.0),
            (LayerKind::Moe, (310e6 - 289e6) / 48.0),
            (LayerKind::Dense, (16.613e6 - 5.685e6) / 36.0),
        ];
        for (kind, ns) in by_hand {
            let got = extend_host_layer_ns(kind);
            assert!((got - ns).abs() < 1e3, "{kind:?}: {got} vs {ns}");
        }
        // More Python-launched ops per layer, more host time.
        assert!(extend_host_layer_ns(LayerKind::Dense) < extend_host_layer_ns(LayerKind::Moe));
        assert!(extend_host_layer_ns(LayerKind::Moe) < extend_host_layer_ns(LayerKind::Mla));
    }

    #[test]
    fn a_model_averages_its_layer_kinds_and_keeps_a_larger_profile_cost() {
        assert_eq!(extend_layer_ns(43_300.0, true, 61, 58), 975e3);
        assert_eq!(extend_layer_ns(43_300.0, false, 48, 48), 437.5e3);
        assert_eq!(extend_layer_ns(43_300.0, false, 80, 0), 303.6e3);
        // Half MoE, half dense: the mean of the two.
        let mixed = extend_layer_ns(0.0, false, 4, 2);
        assert!((mixed - (437.5e3 + 303.6e3) / 2.0).abs() < 1e-6);
        assert_eq!(extend_layer_ns(2e6, false, 80, 0), 2e6);
        assert_eq!(extend_layer_ns(43_300.0, false, 0, 0), 43_300.0);
        // Eager decode: only MLA layers pay more than the profile.
        assert_eq!(decode_layer_ns(43_300.0, true), 975e3);
        assert_eq!(decode_layer_ns(43_300.0, false), 43_300.0);
    }
}
