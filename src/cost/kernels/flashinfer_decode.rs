//! Decode attention of SGLang's flashinfer backend where the GPU's kernel tables hold no
//! flashinfer rows (A100 today): a bounded roofline at FlashInfer's published decode bandwidth,
//! instead of another engine's kernel rows.
//!
//! Which kernel runs: SGLang's `flashinfer_backend.py` (`should_use_tensor_core`) decodes with
//! FlashInfer's tensor-core (prefill-kernel) path when the KV cache is FP8, or when the rank's
//! GQA group (query heads // KV heads) is at least 4 from 0.5.1 (wheel: `gqa_group_size >= 4`),
//! above 4 before (0.4.6.post2, 0.4.9, 0.4.10, 0.5.0rc2: `gqa_group_size > 4`; sglang#1403);
//! otherwise with the CUDA-core decode kernel. Only the tensor-core path is priced here; the
//! CUDA-core one keeps the caller's price.
//!
//! The source: FlashInfer's blog, "Accelerating Self-Attentions for LLM Serving with
//! FlashInfer" (flashinfer.ai, 2024-02-02), Figure 9, "Batch GQA decode performance": batch 64,
//! 32 query / 4 KV heads, head_dim 128, fp16, bandwidth utilisation (bytes read / latency /
//! datasheet bandwidth) of "FlashInfer Tensor Cores" against the sequence length per request.
//! Read off the figure (pixel centres, ±1 point):
//!
//! | GPU (datasheet GB/s) | 256 | 512 | 1k | 2k | 4k | 8k |
//! |---|---|---|---|---|---|---|
//! | A100 PCIe 80GB (1,935) | 40.6 | 50.5 | 62.8 | 71.2 | 76.6 | 79.1 % |
//! | H100 SXM 80GB (3,352) | 36.1 | 46.9 | 60.4 | 73.3 | 82.4 | 88.4 % |
//!
//! The latency t = bytes / (utilisation × bandwidth) is linear in the bytes from 512 tokens
//! up: t = floor + bytes / (efficiency × bandwidth). A least-squares line through 512..8k gives
//! A100 efficiency 0.822, floor 26.0 µs (each pair of neighbouring points: 0.818–0.830,
//! 22.9–27.5 µs; residuals ≤ 1.2%), H100 0.943, 23.3 µs (pairs 0.85–0.95, 19–26 µs;
//! residuals ≤ 4.4%). Below ~512 tokens × 64 requests the line is above the measurement (A100
//! +10% at 256). The kernel is FlashInfer 0.0.1's; SGLang 0.5.x ships FlashInfer 0.2–0.5.
use crate::spec::hardware::{Arch, HardwareProfile};
use crate::spec::model::{KvDtype, ModelSpec};
use crate::spec::server::ServerConfig;
use crate::spec::version::Version;

/// The sourced line of one GPU family: fraction of datasheet HBM bandwidth the kernel streams
/// the KV cache at, and its fixed time per call.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sourced {
    pub efficiency: f64,
    pub floor_ns: f64,
}

/// Figure 9's line for `arch` (module doc), or `None` for a family the figure did not measure.
pub fn sourced(arch: Arch) -> Option<Sourced> {
    match arch {
        Arch::Ampere => Some(Sourced {
            efficiency: 0.82,
            floor_ns: 26_000.0,
        }),
        Arch::Hopper => Some(Sourced {
            efficiency: 0.94,
            floor_ns: 23_000.0,
        }),
        Arch::Blackwell | Arch::Ascend | Arch::Ada | Arch::Sm120 => None,
    }
}

/// SGLang `version`'s `should_use_tensor_core`: FP8 KV always; bf16/fp16 KV when the rank's
/// GQA group (integer division, as SGLang's) is at least 4 (0.5.1 on), above 4 before.
pub fn uses_tensor_cores(
    version: Version,
    q_heads_per_rank: u64,
    kv_heads_per_rank: u64,
    kv: KvDtype,
) -> bool {
    let min_group = if version >= Version::new(0, 5, 1) {
        4
    } else {
        5
    };
    match kv {
        KvDtype::Fp8 => true,
        KvDtype::Bf16 => q_heads_per_rank / kv_heads_per_rank.max(1) >= min_group,
    }
}

/// Decode attention of one layer on one rank: `floor_ns` per call plus the KV cache streamed
/// at `bandwidth_bytes_per_s` (the sourced efficiency × datasheet bandwidth).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundedDecode {
    pub floor_ns: f64,
    /// K and V bytes of one token of one layer on one rank.
    pub kv_bytes_per_token: f64,
    pub bandwidth_bytes_per_s: f64,
}

impl BoundedDecode {
    /// One layer's kernel over `ctx_tokens` tokens of context summed over the batch.
    pub fn layer_ns(&self, ctx_tokens: f64) -> f64 {
        if ctx_tokens <= 0.0 {
            return 0.0;
        }
        self.floor_ns + ctx_tokens * self.kv_bytes_per_token / self.bandwidth_bytes_per_s * 1e9
    }
}

/// The bounded price and its `--explain` note, when the deployment decodes on FlashInfer's
/// tensor-core path on a GPU family the source measured; `None` otherwise.
pub fn bounded(
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
) -> Option<(BoundedDecode, String)> {
    let line = sourced(hw.arch)?;
    let q = model.num_attention_heads / server.attn_tp.max(1);
    let kv = model.kv_heads_per_rank(server.attn_tp);
    if model.mla.is_some() || !uses_tensor_cores(server.version, q, kv, server.kv_dtype) {
        return None;
    }
    let b = BoundedDecode {
        floor_ns: line.floor_ns,
        kv_bytes_per_token: (kv * model.head_dim * 2) as f64 * server.kv_dtype.bytes(),
        bandwidth_bytes_per_s: line.efficiency * hw.memory.bandwidth_bytes_per_s,
    };
    let note = format!(
        "bounded roofline for SGLang's flashinfer (tensor-core decode, GQA group {}): KV at {:.0}% of HBM + {:.0} µs a layer (FlashInfer blog 2024-02-02, Fig. 9); {}'s SGLang tables have no flashinfer rows",
        q / kv.max(1),
        line.efficiency * 100.0,
        line.floor_ns / 1e3,
        hw.name
    );
    Some((b, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensor_core_rule_is_sglangs() {
        let (v051, v0410) = (Version::new(0, 5, 1), Version::new(0, 4, 10));
        // Llama-3.2-3B: 24 / 8 heads, group 3 -> CUDA cores; Qwen3-8B 32 / 8 -> tensor cores
        // from 0.5.1 (`>= 4`), CUDA cores in 0.4.10 (`> 4`).
        assert!(!uses_tensor_cores(v051, 24, 8, KvDtype::Bf16));
        assert!(uses_tensor_cores(v051, 32, 8, KvDtype::Bf16));
        assert!(!uses_tensor_cores(v0410, 32, 8, KvDtype::Bf16));
        assert!(uses_tensor_cores(v0410, 24, 8, KvDtype::Fp8));
        // Qwen3-235B at TP8: 8 query heads, its 4 KV heads replicated to 1 a rank -> group 8.
        assert!(uses_tensor_cores(v0410, 8, 1, KvDtype::Bf16));
    }

    #[test]
    fn a100_price_by_hand_from_figure_9() {
        // Figure 9's own shape on A100 PCIe (1,935 GB/s): batch 64 x 2048 tokens x 4 KV heads
        // x 128 x (K, V) x 2 bytes = 268,435,456 B a layer; at 0.82 x 1.935 TB/s that is
        // 169.18 µs, + the 26 µs floor = 195.18 µs.
        let b = BoundedDecode {
            floor_ns: sourced(Arch::Ampere).unwrap().floor_ns,
            kv_bytes_per_token: 4.0 * 128.0 * 2.0 * 2.0,
            bandwidth_bytes_per_s: 0.82 * 1.935e12,
        };
        let t_ns = b.layer_ns(64.0 * 2048.0);
        let bytes = 64.0 * 2048.0 * 2048.0;
        assert!((t_ns - 195_179.0).abs() < 50.0, "{t_ns}");
        // The figure's 71.2% utilisation at 2k, within its ±2 points.
        let utilisation = bytes / (t_ns * 1e-9) / 1.935e12;
        assert!((utilisation - 0.712).abs() < 0.02, "{utilisation}");
    }

    #[test]
    fn physics_monotone_and_h100_faster() {
        let mk = |arch, bw: f64| {
            let s = sourced(arch).unwrap();
            BoundedDecode {
                floor_ns: s.floor_ns,
                kv_bytes_per_token: 512.0,
                bandwidth_bytes_per_s: s.efficiency * bw,
            }
        };
        let a100 = mk(Arch::Ampere, 2.039e12);
        let h100 = mk(Arch::Hopper, 3.35e12);
        let mut last = 0.0;
        for ctx in [0.0, 1.0, 1e3, 1e4, 1e5, 1e6] {
            let t = a100.layer_ns(ctx);
            assert!(t >= last);
            last = t;
            assert!(h100.layer_ns(ctx) <= t);
        }
    }
}
