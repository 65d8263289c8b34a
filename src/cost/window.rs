//! Sliding-window layers (gpt-oss: 128 tokens on alternate layers) per attention kernel.
//!
//! Decode reads at most the window on every backend (SGLang's triton decode gathers
//! `window_kv_indices`; fa3, flashinfer and trtllm-gen skip tiles outside the window), so
//! the backends price a windowed decode at min(context, window) keys. Prefill differs:
//! - kernels that skip key tiles outside the window (SGLang fa3 on sm90, trtllm_mha on
//!   sm100, flashinfer; vLLM's kernels, assumed) attend each query to at most `window`
//!   keys: work Σ extend · min(prefix + extend / 2, window)
//!   ([`BatchShape::prefill_attn_work_windowed`]);
//! - **SGLang's triton extend kernel** (the gpt-oss default below sm90: `server_args.py`
//!   picks `triton` when neither sm100 nor sm90 is supported) clips only the cached prefix to
//!   the window (stage 1 loops over `window_kv_indices`), then runs stage 2, "the triangle
//!   part", from key 0 of the extend to the query block for every layer, the window being a
//!   mask only (`extend_attention.py` `_fwd_kernel`: `for start_n in range(0,
//!   cur_block_m_end, BLOCK_N)` with `window_mask` applied after the dot product; read in the
//!   0.5.1, 0.5.4.post2 and 0.5.13.post1 wheels): work Σ extend · (min(prefix, window) +
//!   extend / 2) ([`BatchShape::prefill_attn_work_window_prefix`]). A 2000-token prompt's
//!   window layer costs 2000² / 2 = 2.0M pairs there instead of 2000 · 128 = 0.26M.
//!
//! Llama 4's chunked local attention (`WindowKind::Chunked`, chunk C) attends (p mod C) + 1
//! keys at position p, which is not monotone in p. Only SGLang's fa3 backend applies it
//! (`flashattention_backend.py`: `use_local_attn` when the model has `attention_chunk_size`
//! and the layer `use_irope`; it splits each request into C-token virtual batches,
//! `make_local_attention_virtual_batches`). Its work is therefore at most min(p + 1, C) keys
//! per query, exactly that up to p = C, and it is priced as a C-token window: an upper bound
//! past C (by (p mod C) + 1 vs C: on average about half the chunk for a long decode), but
//! monotone in context, as the physics requires. SGLang's triton and trtllm_mha backends
//! (triton off Hopper, trtllm_mha the Llama 4 default on sm100) never read `use_irope`: their
//! layers get no window (`RadixAttention.sliding_window_size` stays −1, llama4.py passes
//! none), so every layer is priced as full causal attention there ([`applied`]).
use super::BatchShape;
use crate::spec::model::{ModelSpec, WindowKind};
use crate::spec::server::ServerConfig;

/// (window tokens, layers) of the local attention `server`'s attention kernel actually
/// applies to `model`: a sliding window always; a chunked window only under SGLang's fa3.
pub fn applied(model: &ModelSpec, server: &ServerConfig) -> Option<(u64, u64)> {
    let w = model.sliding_window.as_ref()?;
    let on = match w.kind {
        WindowKind::Sliding => true,
        WindowKind::Chunked => server.vllm.is_none() && server.attention_backend == "fa3",
    };
    on.then_some((w.window_tokens, w.layers))
}

/// [`applied`] as the cost backends hold it: the window in tokens (`None` without one) and
/// the windowed layers (0 without).
pub fn applied_for_cost(model: &ModelSpec, server: &ServerConfig) -> (Option<f64>, f64) {
    applied(model, server).map_or((None, 0.0), |(w, l)| (Some(w as f64), l as f64))
}

/// The window tokens of [`applied`], for the batch shapes' windowed work.
pub fn applied_tokens(model: &ModelSpec, server: &ServerConfig) -> Option<u64> {
    applied(model, server).map(|(w, _)| w)
}

/// The server's prefill attention kernel computes the extend triangle of sliding-window
/// layers in full (SGLang's triton backend).
pub fn extend_clips_prefix_only(server: &ServerConfig) -> bool {
    server.vllm.is_none() && server.attention_backend == "triton"
}

/// The attention work (token pairs) of one sliding-window layer in the prefill part of `s`.
pub fn prefill_work(s: &BatchShape, prefix_only: bool) -> f64 {
    if prefix_only {
        s.prefill_attn_work_window_prefix
    } else {
        s.prefill_attn_work_windowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: a 2000-token prompt over 300 cached tokens, window 128: a tile-skipping
    /// kernel attends 2000 · 128 pairs, SGLang's triton extend 2000 · (128 + 1000); with no
    /// window both are the causal 2000 · (300 + 1000).
    #[test]
    fn the_triton_extend_runs_the_triangle_in_full() {
        let mut s = BatchShape::default();
        s.add_prefill(2000, 300, Some(128));
        assert_eq!(prefill_work(&s, false), 2000.0 * 128.0);
        assert_eq!(prefill_work(&s, true), 2000.0 * (128.0 + 1000.0));
        let mut full = BatchShape::default();
        full.add_prefill(2000, 300, None);
        assert_eq!(prefill_work(&full, true), 2000.0 * 1300.0);
        assert_eq!(prefill_work(&full, false), 2000.0 * 1300.0);
    }
}
