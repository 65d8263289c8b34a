//! The vLLM-only settings of a resolved server (`ServerConfig::vllm`), and what `run` prints
//! of them. Pure data: resolved in [`super::resolve`].
use crate::spec::hybrid_kv::VllmHybridKv;
use crate::spec::version::Version;
use serde::Serialize;

/// The vLLM-only settings of a resolved server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VllmConfig {
    pub version: Version,
    pub max_num_seqs: u64,
    pub max_num_batched_tokens: u64,
    pub gpu_memory_utilization: f64,
    pub block_size: u64,
    /// `num_gpu_blocks` as vLLM logs it (one more than the usable blocks: the null block).
    pub num_gpu_blocks: u64,
    pub max_model_len: u64,
    /// 0 = off.
    pub long_prefill_token_threshold: u64,
    pub prefix_caching: bool,
    pub enforce_eager: bool,
    pub async_scheduling: bool,
    /// CUDA-graph capture sizes in tokens, ascending (empty when eager).
    pub capture_sizes: Vec<u64>,
    /// Admission needs blocks for the whole prompt (0.19+), not only the first chunk.
    pub full_sequence_must_fit: bool,
    /// Chunked prefill (always in V1; V0's default or flag). Off = V0's prefill-first steps.
    pub chunked_prefill: bool,
    /// V0's admission watermark: blocks kept free when a prompt is admitted (0 in V1).
    pub watermark_blocks: u64,
    /// The API server clips `max_tokens` to fit `max_model_len` (0.32+) instead of HTTP 400.
    pub clips_max_tokens: bool,
    /// The KV budget's terms, bytes per GPU: `total × utilization`, weights, the profile
    /// run's activation peak, non-torch memory and the CUDA-graph estimate (0 before 0.20).
    pub requested_bytes: f64,
    pub activation_peak_bytes: f64,
    pub non_torch_bytes: f64,
    pub cudagraph_bytes: f64,
    pub kv_cache_bytes: f64,
    /// The hybrid KV cache manager's groups (window models on V1, `spec::hybrid_kv`):
    /// `num_gpu_blocks` is then a pool of one group's blocks that every group draws from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<VllmHybridKv>,
}

impl VllmConfig {
    /// Whether this server runs vLLM's V0 engine (before 0.8.0).
    pub fn is_v0(&self) -> bool {
        super::defaults::is_v0(self.version)
    }

    /// Blocks the scheduler can hand out: V1 keeps one as the null block
    /// (`num_gpu_blocks − 1`), V0's block manager hands out all of them.
    pub fn usable_blocks(&self) -> u64 {
        if self.is_v0() {
            self.num_gpu_blocks
        } else {
            self.num_gpu_blocks.saturating_sub(1)
        }
    }

    /// The start-up facts vLLM logs, one line (`run`'s preamble).
    pub fn server_line(&self) -> String {
        let on = |b: bool| if b { "on" } else { "off" };
        let v0 = if self.is_v0() {
            format!(
                "V0 engine, chunked prefill {}, watermark {} blocks, ",
                on(self.chunked_prefill),
                self.watermark_blocks
            )
        } else {
            String::new()
        };
        let hybrid = match &self.hybrid {
            Some(h) => format!(
                " ({} full + {} sliding-window groups of {} layers sharing the blocks; a \
                 window group holds ≤ {} tokens of a request)",
                h.full_groups,
                h.window_groups,
                h.layers_per_group,
                (h.window_tokens + self.block_size - 1).div_ceil(self.block_size) * self.block_size
            ),
            None => String::new(),
        };
        let kv_tokens = self
            .hybrid
            .as_ref()
            .map_or(self.num_gpu_blocks * self.block_size, |h| {
                h.logged_tokens(self.num_gpu_blocks, self.block_size)
            });
        format!(
            "{v0}num_gpu_blocks={}, block_size={}, GPU KV cache size: {} tokens{hybrid}, max_num_seqs={}, \
             max_num_batched_tokens={}, gpu_memory_utilization={}, max_model_len={}, \
             prefix caching {}, async scheduling {}, cudagraph max capture size {}",
            self.num_gpu_blocks,
            self.block_size,
            kv_tokens,
            self.max_num_seqs,
            self.max_num_batched_tokens,
            self.gpu_memory_utilization,
            self.max_model_len,
            on(self.prefix_caching),
            on(self.async_scheduling),
            self.capture_sizes.last().copied().unwrap_or(0),
        )
    }
}
