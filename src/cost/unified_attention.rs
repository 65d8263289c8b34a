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
//! from L2: prefill is bound by how fast the programs stream those tiles, at ~16 FLOP/B far
//! below the tensor cores (A100: 312 TFLOP/s would need ~126 FLOP/B at the tile rate below).
//! Price: per layer, max(the FlashAttention price, work / `BLOCK_Q` × KV bytes per token per
//! layer / tile rate), work = Σ query × attended-key pairs ([`super::BatchShape`]).
//! Corroboration (another GPU, same kernel): intel/intel-xpu-backend-for-triton#7309 finds
//! vLLM's unified attention prefill flat in sequence length because "the kernel's default
//! BLOCK_M=16 makes the Q@K/P@V dots too small", and ~2× faster with BLOCK_M 32: the price
//! scales with K/V loads per query token, as here.
//!
//! **K/V tile rate (A100).** The ceiling is L2: the A100 whitepaper gives 5120 bytes/clk of L2
//! read bandwidth × 1.41 GHz boost = 7.22 TB/s (Jia et al. 2018 measured 69% of V100's L2 peak;
//! that fraction would give 4.97 TB/s). The one A100 measurement of this kernel sits well below
//! it: vllm-project/vllm#18152 (A100 40 GB, May 2025, the #16828 kernel) reports an 8K-token
//! prompt at ~1500 ms against ~600 ms with the previous kernel. With a 7–8B dense model
//! (the bytes streamed depend only on query heads × head size, 4096 for Llama/Mistral 7–8B),
//! no causal tile skip before #20308 and either one 8192-token step or 2048-token chunks, the
//! kernel streamed its K/V tiles at 1.25–2.44 TB/s: issue-bound per tile (6–13% of the bf16
//! peak), not L2-bound. vLLM 0.10.2 / 0.11.0 load 32-key prefill tiles where #16828 looped over
//! 16-key blocks: at most ~2× faster per key, so their rate is bracketed by 1.25–4.9 TB/s.
//! [`A100_TILE_BYTES_PER_S`] is that bracket's geometric centre, 2.47 TB/s (derivation:
//! validation/gpustack/gpt-oss-notes.md, "Triton attention at 32K"). Only sm80 runs this
//! kernel among the bundled profiles; other arches get no floor.
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

/// Rate at which the kernel streams K/V tiles on A100 (bytes/s): the geometric centre of the
/// 1.25–4.9 TB/s bracket vllm#18152's A100 timing gives for vLLM 0.10.2 / 0.11.0 (module doc).
pub const A100_TILE_BYTES_PER_S: f64 = 2.47e12;

/// Rows per program when the query heads per KV head are at most this (`BLOCK_M`).
const BLOCK_M_MIN: u64 = 16;

/// The first vLLM release whose 2D kernel skips key tiles outside the window (#24390).
const WINDOW_PRUNING_SINCE: Version = Version::new(0, 11, 0);

/// The Triton unified attention kernel of one deployment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnifiedAttention {
    /// Query tokens per program (`BLOCK_Q`).
    pub block_q: f64,
    /// Rate the K/V tiles stream at (bytes/s).
    pub tile_bytes_per_s: f64,
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

/// K/V tile rate of `hw` for this kernel, `None` where it is not known (no floor).
fn tile_bytes_per_s(hw: &HardwareProfile) -> Option<f64> {
    (hw.arch == Arch::Ampere).then_some(A100_TILE_BYTES_PER_S)
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
            tile_bytes_per_s: tile_bytes_per_s(hw)?,
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

    /// The tile-rate floor of one layer's prefill attention (ns): every program streams its keys'
    /// K/V for `block_q` query tokens.
    pub fn prefill_floor_ns(
        &self,
        s: &BatchShape,
        windowed: bool,
        kv_bytes_per_token_layer: f64,
    ) -> f64 {
        self.work(s, windowed) / self.block_q * kv_bytes_per_token_layer / self.tile_bytes_per_s
            * 1e9
    }

    /// One line for `--explain`.
    pub fn describe(&self) -> String {
        format!(
            "vLLM Triton unified attention (sinks on sm80; cuda.py): prefill floored by K/V tile loads, {} query tokens per load at {:.2} TB/s (vllm#18152's A100 timing; bracket 1.25–4.9); windowed layers {}",
            self.block_q,
            self.tile_bytes_per_s / 1e12,
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
    /// 2048 · 1024 / 2 · 2048 B = 2.147 GB at 2.47 TB/s = 869 µs. The window layer (128,
    /// pruned) 2048 · 128 / 2 · 2048 B = 268 MB = 109 µs; unpruned as the full layer.
    #[test]
    fn prefill_floor_by_hand() {
        let mut s = BatchShape::default();
        s.add_prefill(2048, 0, Some(128));
        let k = UnifiedAttention {
            block_q: 2.0,
            tile_bytes_per_s: A100_TILE_BYTES_PER_S,
            prunes_window: true,
        };
        let full = 2048.0 * 1024.0 / 2.0 * 2048.0 / 2.47e12 * 1e9;
        assert!((k.prefill_floor_ns(&s, false, 2048.0) - full).abs() < 1e-6 * full);
        assert!((full - 869_426.6).abs() < 0.5, "{full}");
        let win = 2048.0 * 128.0 / 2.0 * 2048.0 / 2.47e12 * 1e9;
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
