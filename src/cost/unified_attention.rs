//! vLLM's Triton unified attention: the kernel vLLM runs for attention-sink models (gpt-oss)
//! on sm80, and what its prefill costs.
//!
//! **Which kernel.** vLLM 0.10.1–0.11.x (`platforms/cuda.py::get_attn_backend_cls`, V1) sends
//! a model with sinks to `TRITON_ATTN` when the GPU is sm80+ but not sm90 (`if (has_sink or
//! use_fp8_kv_cache) and not cls.is_device_capability(90)`): FlashAttention 2 has no sinks.
//! sm90 keeps FlashAttention (FA3 with sinks, the tables' `fa3` lane); sm100 FlashInfer.
//! servesim names it `triton` ([`crate::spec::vllm::defaults::attention_keys`]).
//!
//! **Why its prefill is slower than FlashAttention's.** `kernel_unified_attention_2d`
//! (`attention/ops/triton_unified_attention.py`) runs one program per (query block, KV head).
//! A program holds `BLOCK_M` = 16 rows (`16 if num_queries_per_kv <= 16`), i.e.
//! `BLOCK_Q = BLOCK_M / num_queries_per_kv` query tokens × that KV head's query heads, and
//! loops over the key tiles up to its causal limit, loading each K/V tile for those rows
//! only. gpt-oss has 64 query / 8 KV heads: `BLOCK_Q` = 2 tokens. FlashAttention 2 holds
//! 64–128 query tokens per tile. Each byte of K/V a program loads therefore feeds
//! `BLOCK_Q × num_queries_per_kv` = 16 rows: 16 FLOP per byte (4·d FLOP per key per row over
//! 4·d bytes of bf16 K+V per key per KV head). The programs that run together share a KV
//! head and scan the same keys (the grid's fast axis is the query block), so the tiles come
//! from L2: prefill is bound by L2 bandwidth at ~16 FLOP/B, far below the tensor cores (A100:
//! 312 TFLOP/s needs ~63 FLOP/B at the L2 rate below).
//! Price: per layer, max(the FlashAttention price, work / `BLOCK_Q` × KV bytes per token per
//! layer / L2 bandwidth), work = Σ query × attended-key pairs ([`super::BatchShape`]).
//! Corroboration (another GPU, same kernel): intel/intel-xpu-backend-for-triton#7309 finds
//! vLLM's unified attention prefill flat in sequence length because "the kernel's default
//! BLOCK_M=16 makes the Q@K/P@V dots too small", and ~2× faster with BLOCK_M 32: the price
//! scales with K/V loads per query token, as here.
//!
//! **L2 bandwidth (A100).** The A100 whitepaper gives 5120 bytes/clk of L2 read bandwidth
//! (V100: 2048), × 1.41 GHz boost = 7.22 TB/s peak. Achieved: Jia et al., "Dissecting the
//! NVIDIA Volta GPU Architecture via Microbenchmarking" (2018), measured 2155.9 GB/s on
//! V100's L2, 69% of its 2048 B/clk × 1.53 GHz peak; the same fraction on A100 is
//! [`A100_L2_BYTES_PER_S`] = 4.97 TB/s. Bounds: at most the 7.22 TB/s peak; at least HBM
//! (2.04 TB/s: every tile missing L2). Only sm80 runs this kernel among the bundled
//! profiles; other arches get no floor.
//!
//! **Sliding-window layers.** From vLLM 0.11.0 the 2D kernel skips the key tiles outside the
//! window (vllm-project/vllm#24390, "before this change, GPT-OSS + triton attention backend
//! was spending equal amount of time between global and local attention"): windowed work
//! there is Σ extend · min(prefix + extend / 2, window). Before 0.11.0 the window was a mask
//! only: windowed layers cost the full causal work. Read in the vLLM 0.10.2 and 0.11.0
//! wheels: 0.10.2's 2D kernel loops over every tile, 0.11.0's from `tile_start`; both launch
//! `BLOCK_M = 16 if num_queries_per_kv <= 16`, `BLOCK_Q = BLOCK_M // num_queries_per_kv`,
//! prefill tiles of 32 keys, and pick TRITON_ATTN for sinks off sm90 (0.10.2: `if has_sink
//! and not cls.is_device_capability(90)`; 0.11.0 also for an fp8 KV cache, not modelled).
//!
//! Not priced here: the split-KV ("3D") decode kernel used at small decode batches scanned
//! every tile of windowed layers until vllm-project/vllm#31984 (2026); decode keeps the
//! FlashAttention price (one KV read per request, as the 2D kernel also does).
use super::BatchShape;
use crate::spec::hardware::{Arch, HardwareProfile};
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;
use crate::spec::version::Version;

/// A100's achieved L2 read bandwidth (bytes/s): whitepaper peak 7.22 TB/s × V100's measured
/// 69% (bounds 2.04–7.22 TB/s, module doc).
pub const A100_L2_BYTES_PER_S: f64 = 4.97e12;

/// Rows per program when the query heads per KV head are at most this (`BLOCK_M`).
const BLOCK_M_MIN: u64 = 16;

/// The first vLLM release whose 2D kernel skips key tiles outside the window (#24390).
const WINDOW_PRUNING_SINCE: Version = Version::new(0, 11, 0);

/// The Triton unified attention kernel of one deployment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnifiedAttention {
    /// Query tokens per program (`BLOCK_Q`).
    pub block_q: f64,
    /// L2 read bandwidth the K/V tiles stream at (bytes/s).
    pub l2_bytes_per_s: f64,
    /// Sliding-window layers skip the tiles outside the window.
    pub prunes_window: bool,
}

/// `BLOCK_Q` of the launcher: `BLOCK_M // num_queries_per_kv`, `BLOCK_M` = 16, or the next
/// power of two of `num_queries_per_kv` above 16.
pub fn block_q(queries_per_kv: u64) -> u64 {
    let q = queries_per_kv.max(1);
    let block_m = if q <= BLOCK_M_MIN {
        BLOCK_M_MIN
    } else {
        q.next_power_of_two()
    };
    (block_m / q).max(1)
}

/// L2 read bandwidth of `hw` for this kernel, `None` where it is not known (no floor).
fn l2_bytes_per_s(hw: &HardwareProfile) -> Option<f64> {
    (hw.arch == Arch::Ampere).then_some(A100_L2_BYTES_PER_S)
}

/// The profile's attention-efficiency key that prices `server`'s attention below the floor:
/// vLLM's Triton unified attention keeps the FlashAttention-2 price vLLM's other sm80 models
/// get (`flashinfer`, the closest measured kernel: decode reads each request's K/V once, as
/// FlashAttention does); the profile's `triton` constants describe SGLang's triton kernels.
pub fn efficiency_key<'a>(hw: &HardwareProfile, server: &'a ServerConfig) -> &'a str {
    let vllm_triton = server.vllm.is_some() && server.attention_backend == "triton";
    if vllm_triton && hw.attention("flashinfer").is_ok() {
        "flashinfer"
    } else {
        &server.attention_backend
    }
}

impl UnifiedAttention {
    /// The kernel of a vLLM server on `triton` attention, `None` for every other server
    /// (SGLang's triton backend is another kernel: [`super::window`]).
    pub fn of(hw: &HardwareProfile, model: &ModelSpec, server: &ServerConfig) -> Option<Self> {
        let vllm = server.vllm.as_ref()?;
        if server.attention_backend != "triton" || model.mla.is_some() {
            return None;
        }
        let kv = model.kv_heads_per_rank(server.attn_tp).max(1);
        let q = (model.q_heads_per_rank(server.attn_tp) as u64).max(1);
        Some(UnifiedAttention {
            block_q: block_q(q / kv) as f64,
            l2_bytes_per_s: l2_bytes_per_s(hw)?,
            prunes_window: vllm.version >= WINDOW_PRUNING_SINCE,
        })
    }

    /// Query × key pairs one layer's prefill runs over in `s` (`windowed`: a sliding-window
    /// layer).
    pub fn work(&self, s: &BatchShape, windowed: bool) -> f64 {
        if windowed && self.prunes_window {
            s.prefill_attn_work_windowed
        } else {
            s.prefill_attn_work
        }
    }

    /// The L2 floor of one layer's prefill attention (ns): every program streams its keys'
    /// K/V for `block_q` query tokens.
    pub fn prefill_floor_ns(
        &self,
        s: &BatchShape,
        windowed: bool,
        kv_bytes_per_token_layer: f64,
    ) -> f64 {
        self.work(s, windowed) / self.block_q * kv_bytes_per_token_layer / self.l2_bytes_per_s * 1e9
    }

    /// One line for `--explain`.
    pub fn describe(&self) -> String {
        format!(
            "vLLM Triton unified attention (sinks on sm80; cuda.py): prefill floored by L2, {} query tokens per K/V tile load at {:.2} TB/s (A100 whitepaper peak × V100's measured L2 fraction; bounds 2.04–7.22); windowed layers {}",
            self.block_q,
            self.l2_bytes_per_s / 1e12,
            if self.prunes_window {
                "skip tiles outside the window (vLLM 0.11.0+, #24390)"
            } else {
                "mask only: full causal work (before vLLM 0.11.0)"
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The launcher's block sizes: gpt-oss (64/8 heads) packs 2 tokens; 32/8 (Llama) 4;
    /// 6 query heads per KV head 2 (16 // 6); 32 per KV head BLOCK_M 32 → 1.
    #[test]
    fn block_q_follows_the_launcher() {
        assert_eq!(block_q(8), 2);
        assert_eq!(block_q(4), 4);
        assert_eq!(block_q(6), 2);
        assert_eq!(block_q(1), 16);
        assert_eq!(block_q(32), 1);
        assert_eq!(block_q(20), 1);
    }

    /// By hand: a 2048-token prompt, no prefix: work 2048 · 1024 pairs; gpt-oss KV per token
    /// per layer 8 heads × 64 × 2 (K, V) × 2 bytes = 2048 B; 2 tokens per load:
    /// 2048 · 1024 / 2 · 2048 B = 2.147 GB at 4.97 TB/s = 432 µs. The window layer (128,
    /// pruned) 2048 · 128 / 2 · 2048 B = 268 MB = 54 µs; unpruned as the full layer.
    #[test]
    fn prefill_floor_by_hand() {
        let mut s = BatchShape::default();
        s.add_prefill(2048, 0, Some(128));
        let k = UnifiedAttention {
            block_q: 2.0,
            l2_bytes_per_s: A100_L2_BYTES_PER_S,
            prunes_window: true,
        };
        let full = 2048.0 * 1024.0 / 2.0 * 2048.0 / 4.97e12 * 1e9;
        assert!((k.prefill_floor_ns(&s, false, 2048.0) - full).abs() < 1e-6 * full);
        assert!((full - 432_089.3).abs() < 0.5, "{full}");
        let win = 2048.0 * 128.0 / 2.0 * 2048.0 / 4.97e12 * 1e9;
        assert!((k.prefill_floor_ns(&s, true, 2048.0) - win).abs() < 1e-6 * win);
        let old = UnifiedAttention {
            prunes_window: false,
            ..k
        };
        assert_eq!(
            old.prefill_floor_ns(&s, true, 2048.0),
            k.prefill_floor_ns(&s, false, 2048.0)
        );
    }
}
