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
use super::BatchShape;
use crate::spec::server::ServerConfig;

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
