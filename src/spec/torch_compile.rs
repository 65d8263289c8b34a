//! SGLang's `--enable-torch-compile` / `--torch-compile-max-bs`: accepted, resolved per
//! version, and reported as NOT modelled (one note per run).
//!
//! What the real server does (`cuda_graph_runner.py`, `get_batch_sizes_to_capture` and
//! `patch_model`, read at 0.4.x and 0.5.x): the captured decode batch sizes at or below
//! `torch_compile_max_bs` are captured from a `torch.compile`d forward (inductor,
//! `max-autotune-no-cudagraphs`), with every `CustomOp` (RMSNorm, SiluAndMul, rotary) switched
//! to its native torch form so inductor fuses the elementwise/norm chains; fused MoE stays
//! custom except at batch 1. Larger batches, prefills and runs without CUDA graphs are not
//! compiled. `torch_compile_max_bs` defaults to 32 in every server_args.py servesim covers.
//!
//! Measured effects found (none of them at this project's shapes, so no term is fitted):
//! * SGLang issue #1008 (2024-08-09, `bench_latency`, Llama-3-8B, GPU not stated): TP1 batch 1
//!   decode 7.37 ms with CUDA graphs vs 6.42 ms compiled (−13%); batch 128 11.84 vs 12.31 ms
//!   (+4%, slower, beyond the default max_bs); "sometimes slower ... with tensor parallelism".
//! * SGLang PR #2185 (2024-11-25, in 0.4.0): compiled graphs keep the custom all-reduce; Llama-3.1-8B
//!   TP8 batch 1, compiled before/after the fix 315 → 457 tok/s (compile vs compile, no baseline).
//! * LMSYS blog "SGLang v0.3" (2024-09-04): "up to 1.5x lower latency with torch.compile on
//!   small batch sizes" (figure only).
//! * SGLang issue #6798 (2025-06-01, Qwen3-32B-FP8, H200 per its text): no gain under a
//!   serving load, some metrics slightly worse.
//!
//! The range runs from −13% (8B, TP1, batch 1) to about zero (32B FP8 served): it does not bound
//! a per-layer term for a 70B at TP4 or an MoE, so servesim prices compiled steps as plain
//! CUDA-graph steps and says so in one note.
use super::version::Version;

/// `torch_compile_max_bs`'s default (server_args.py, every version from 0.3 on).
pub const DEFAULT_MAX_BS: u64 = 32;

/// The captured decode sizes the real server compiles (`capture_bs` ≤ max_bs), empty when
/// compile is off or CUDA graphs are disabled.
pub fn compiled_batch_sizes(enabled: bool, max_bs: Option<u64>, captured: &[u64]) -> Vec<u64> {
    if !enabled {
        return Vec::new();
    }
    let max_bs = max_bs.unwrap_or(DEFAULT_MAX_BS);
    captured.iter().copied().filter(|&b| b <= max_bs).collect()
}

/// The "not modelled" note for a run with `--enable-torch-compile` (`None` without it).
pub fn note(
    enabled: bool,
    max_bs: Option<u64>,
    captured: &[u64],
    version: Version,
) -> Option<String> {
    if !enabled {
        return None;
    }
    let compiled = compiled_batch_sizes(enabled, max_bs, captured);
    let max_bs = max_bs.unwrap_or(DEFAULT_MAX_BS);
    Some(match (compiled.first(), compiled.last()) {
        (Some(lo), Some(hi)) => format!(
            "not modelled: --enable-torch-compile (SGLang {version} compiles the decode CUDA \
             graphs of batch {lo}..={hi}, {} sizes, torch_compile_max_bs {max_bs}); servesim \
             prices those steps as plain CUDA-graph steps (measured: −13% at batch 1 for \
             Llama-3-8B TP1, SGLang #1008, to no gain for Qwen3-32B-FP8 served, #6798), so decode \
             at batch <= {hi} may read slower than the real server",
            compiled.len()
        ),
        _ => format!(
            "--enable-torch-compile has no effect here: no captured decode CUDA graph of batch \
             <= {max_bs} (SGLang compiles only inside CUDA-graph capture)"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_sizes_are_the_captured_ones_up_to_max_bs() {
        // 0.4.x default capture list head: 1, 2, 4, 8, 16, 24, 32, 40, ...
        let captured = [1, 2, 4, 8, 16, 24, 32, 40, 48, 160];
        assert_eq!(
            compiled_batch_sizes(true, None, &captured),
            [1, 2, 4, 8, 16, 24, 32]
        );
        assert_eq!(compiled_batch_sizes(true, Some(8), &captured), [1, 2, 4, 8]);
        assert!(compiled_batch_sizes(false, Some(8), &captured).is_empty());
        // --disable-cuda-graph: nothing captured, nothing compiled.
        assert!(compiled_batch_sizes(true, None, &[]).is_empty());
    }

    #[test]
    fn the_note_names_the_compiled_range_or_says_it_does_nothing() {
        let v: Version = "0.4.0".parse().unwrap();
        assert_eq!(note(false, None, &[1, 2], v), None);
        let n = note(true, Some(16), &[1, 2, 4, 8, 16, 24], v).unwrap();
        assert!(n.starts_with("not modelled: --enable-torch-compile"), "{n}");
        assert!(n.contains("batch 1..=16, 5 sizes"), "{n}");
        let off = note(true, None, &[], v).unwrap();
        assert!(off.contains("no effect"), "{off}");
    }
}
