//! Hybrid sliding-window KV pools: how SGLang and vLLM size the KV cache of a model whose
//! layers alternate full attention and a sliding window (gpt-oss: 128-token windows on half
//! the layers), instead of giving every layer a slot for every token.
//!
//! - vLLM V1's hybrid KV cache manager (read in the 0.10.2 and 0.11.0 wheels,
//!   `v1/core/kv_cache_utils.py` `_get_kv_cache_groups_uniform_page_size`,
//!   `get_kv_cache_config_from_groups`): layers of one kind are split into groups of
//!   `min(#full, #window)` layers; the groups share one pool of `num_blocks = available //
//!   page_size // layers_per_group` blocks, and each group takes its own blocks per request
//!   from it (a full group one per `block_size` tokens of context, a window group only the
//!   blocks its window still reads: `SlidingWindowManager.remove_skipped_blocks`). vLLM logs
//!   `GPU KV cache size: num_blocks // groups × block_size` tokens.
//! - SGLang's `SWAKVPool` (`model_runner_kv_cache_mixin.set_num_tokens_hybrid_swa`, 0.5.8+):
//!   the all-layer token count `M` is re-split into a full pool and a sliding-window pool with
//!   `swa = full × --swa-full-tokens-ratio` (0.8) and `full × F + swa × S = M × L`; which
//!   releases turn it on for gpt-oss is [`sglang_hybrid_swa`].
use super::model::ModelSpec;
use super::server_flags::ServerFlags;
use super::version::Version;
use crate::error::{Error, Result};
use serde::Serialize;

/// The full / sliding-window split of a model's layers (`None` without window layers, or
/// when every layer has the window: one uniform group then).
fn layer_split(model: &ModelSpec) -> Option<(u64, u64, u64)> {
    let w = model.sliding_window.as_ref()?;
    let window_layers = w.layers;
    let full_layers = model.num_layers.saturating_sub(window_layers);
    if window_layers == 0 || full_layers == 0 {
        return None;
    }
    Some((full_layers, window_layers, w.window_tokens))
}

/// vLLM's hybrid KV cache groups of one model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VllmHybridKv {
    pub window_tokens: u64,
    /// Groups of full-attention layers and of sliding-window layers.
    pub full_groups: u64,
    pub window_groups: u64,
    /// Layers per group (the smaller kind's layer count; the other kind is padded to whole
    /// groups).
    pub layers_per_group: u64,
}

/// vLLM releases with the V1 hybrid KV cache manager (`kv_cache_coordinator.py`); gpt-oss
/// itself needs 0.10.1+.
pub const VLLM_HYBRID_SINCE: Version = Version::new(0, 10, 0);

impl VllmHybridKv {
    /// The groups of `model` under vLLM `version` (`None`: one uniform group, as before the
    /// hybrid manager, on V0, or with `--disable-hybrid-kv-cache-manager`).
    pub fn of(model: &ModelSpec, version: Version, disabled: bool) -> Option<Self> {
        if disabled || version < VLLM_HYBRID_SINCE || model.mla.is_some() {
            return None;
        }
        let (full, window, window_tokens) = layer_split(model)?;
        let g = full.min(window);
        Some(VllmHybridKv {
            window_tokens,
            full_groups: full.div_ceil(g),
            window_groups: window.div_ceil(g),
            layers_per_group: g,
        })
    }

    pub fn groups(&self) -> u64 {
        self.full_groups + self.window_groups
    }

    /// Blocks of the shared pool (`get_num_blocks`): KV bytes over one block of one group.
    pub fn num_blocks(&self, kv_cache_bytes: f64, block_bytes_per_layer: f64) -> u64 {
        if kv_cache_bytes <= 0.0 {
            return 0;
        }
        (kv_cache_bytes / block_bytes_per_layer / self.layers_per_group as f64).floor() as u64
    }

    /// Tokens vLLM logs as the GPU KV cache size (`num_blocks // groups × block_size`).
    pub fn logged_tokens(&self, num_blocks: u64, block_size: u64) -> u64 {
        num_blocks / self.groups() * block_size
    }

    /// Blocks one request of `max_model_len` tokens can need
    /// (`check_enough_kv_cache_memory`: a full group holds the whole context, a window group
    /// at most `window − 1 + max_num_batched_tokens` tokens plus one block).
    pub fn max_request_blocks(&self, max_model_len: u64, mnbt: u64, block_size: u64) -> u64 {
        let window = (self.window_tokens - 1 + mnbt).min(max_model_len);
        self.full_groups * max_model_len.div_ceil(block_size)
            + self.window_groups * (window.div_ceil(block_size) + 1)
    }
}

/// `--swa-full-tokens-ratio`'s default (server_args.py, 0.5.1–0.5.23).
pub const SWA_FULL_TOKENS_RATIO: f64 = 0.8;

/// Whether SGLang `version` runs `model` on its hybrid SWA pools. gpt-oss
/// (`GptOssForCausalLM`) sets `disable_hybrid_swa_memory` unconditionally up to 0.5.7
/// (`model_specific_adjustments`, read in the 0.5.1–0.5.7 wheels); 0.5.8 only with the
/// `trtllm_mha` attention backend (the default on Blackwell) or speculative decoding; 0.5.9
/// only with `trtllm_mha`; from 0.5.10 never (read in the 0.5.10–0.5.23 wheels).
/// Llama 4 (`Llama4ForConditionalGeneration`) is in `is_hybrid_swa_model`'s list from 0.5.8
/// on (read in the 0.5.8, 0.5.9, 0.5.10, 0.5.14 and 0.5.23 wheels; no Llama 4 branch sets
/// `disable_hybrid_swa_memory`), its 36 chunked layers on the SWA pool with the chunk as the
/// window (`ModelRunner`: "Setting sliding_window_size to be attention_chunk_size";
/// `ScheduleBatch._evict_swa` frees what lies before `seq_len − sliding_window_size`, the last
/// C tokens kept, not only the current chunk). Before 0.5.8 only `--hybrid-kvcache-ratio`
/// (default off) turned a hybrid pool on for it: one pool.
/// `--disable-hybrid-swa-memory` turns it off everywhere. Other window models are not
/// bundled (MiMo).
pub fn sglang_hybrid_swa(
    model: &ModelSpec,
    version: Version,
    attention_backend: &str,
    speculative: bool,
    disabled: bool,
) -> bool {
    if disabled || layer_split(model).is_none() {
        return false;
    }
    if model.architecture == "Llama4ForConditionalGeneration" {
        return version >= Version::new(0, 5, 8);
    }
    if model.architecture != "GptOssForCausalLM" {
        return false;
    }
    if version < Version::new(0, 5, 8) {
        return false;
    }
    if version < Version::new(0, 5, 10) && attention_backend == "trtllm_mha" {
        return false;
    }
    !(version < Version::new(0, 5, 9) && speculative)
}

/// SGLang's two pools (`full_max_total_num_tokens`, `swa_max_total_num_tokens`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SwaPools {
    pub full_tokens: u64,
    pub swa_tokens: u64,
    pub window_tokens: u64,
}

impl SwaPools {
    /// Splits the all-layer pool of `max_total_tokens` (already page-rounded) as
    /// `set_num_tokens_hybrid_swa` does: `full = int(M·L / (r·S + F))`, `swa = int(full·r)`,
    /// each rounded down to whole pages.
    pub fn split(model: &ModelSpec, max_total_tokens: u64, ratio: f64, page: u64) -> Option<Self> {
        let (full, window, window_tokens) = layer_split(model)?;
        let total = max_total_tokens as f64 * model.num_layers as f64;
        let full_raw = (total / (ratio * window as f64 + full as f64)) as u64;
        let swa_raw = (full_raw as f64 * ratio) as u64;
        let page = page.max(1);
        Some(SwaPools {
            full_tokens: full_raw / page * page,
            swa_tokens: swa_raw / page * page,
            window_tokens,
        })
    }
}

impl SwaPools {
    /// The smaller of the two pools: what the admission limits (the longest prompt SGLang
    /// can ever hold) read. The scheduler keeps both (`engine::scheduler::swa`): admission
    /// counts the smaller pool's free tokens, as SGLang's `rem_total_tokens` does.
    pub fn scheduler_tokens(&self) -> u64 {
        self.full_tokens.min(self.swa_tokens)
    }

    /// The start-up line SGLang logs for them.
    pub fn log_line(&self) -> String {
        format!(
            "full_max_total_num_tokens={}, swa_max_total_num_tokens={} (hybrid SWA pools, {}-token window)",
            self.full_tokens, self.swa_tokens, self.window_tokens
        )
    }
}

/// SGLang's pools for `model` from the all-layer pool of `max_total_tokens` (`None`: one
/// pool). `--swa-full-tokens-ratio` must be in (0, 1] (server_args.py's check).
pub fn sglang_swa_pools(
    flags: &ServerFlags,
    model: &ModelSpec,
    version: Version,
    attention_backend: &str,
    speculative: bool,
    max_total_tokens: u64,
    page: u64,
) -> Result<Option<SwaPools>> {
    let ratio = match flags.swa_full_tokens_ratio {
        Some(r) if !(r > 0.0 && r <= 1.0) => {
            return Err(Error::invalid(
                "--swa-full-tokens-ratio",
                "swa_full_tokens_ratio",
                format!("must be in (0, 1], got {r}"),
            ))
        }
        Some(r) => r,
        None => SWA_FULL_TOKENS_RATIO,
    };
    let on = sglang_hybrid_swa(
        model,
        version,
        attention_backend,
        speculative,
        flags.disable_hybrid_swa_memory,
    );
    let pools = on
        .then(|| SwaPools::split(model, max_total_tokens, ratio, page))
        .flatten();
    match pools {
        Some(p) if p.scheduler_tokens() == 0 => Err(Error::Impossible(format!(
            "no room for a KV cache: the {max_total_tokens}-token pool splits into {} full and {} \
             sliding-window tokens (--swa-full-tokens-ratio {ratio})",
            p.full_tokens, p.swa_tokens
        ))),
        p => Ok(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::bundled;

    #[test]
    fn gpt_oss_20b_groups_and_split() {
        let m = bundled::load_model("gpt-oss-20b").unwrap();
        let h = VllmHybridKv::of(&m, Version::new(0, 11, 0), false).unwrap();
        assert_eq!(
            (h.full_groups, h.window_groups, h.layers_per_group),
            (1, 1, 12)
        );
        assert!(VllmHybridKv::of(&m, Version::new(0, 9, 2), false).is_none());
        // 24 layers, 12 of each: full = int(M·24 / (0.8·12 + 12)) = int(M / 0.9), where
        // Python's 0.8·12 + 12 is 21.600000000000001, so 900000 gives 999999, not 10^6;
        // swa = int(999999 · 0.8) = 799999; page 64 floors both.
        let p = SwaPools::split(&m, 900_000, 0.8, 1).unwrap();
        assert_eq!((p.full_tokens, p.swa_tokens), (999_999, 799_999));
        let p = SwaPools::split(&m, 900_000, 0.8, 64).unwrap();
        assert_eq!((p.full_tokens, p.swa_tokens), (999_936, 799_936));
    }
}
