//! SGLang's memory split for a hybrid linear-attention model (Qwen3-Next, Qwen3.5): the memory
//! left after weights (`rest`) is shared between the per-request recurrent-state slots
//! (`MambaPool`) and the full-attention KV pool, and the state slots cap the running requests.
//!
//! SGLang 0.5.9, `model_executor/model_runner_kv_cache_mixin.py`:
//! - `profile_max_num_token`: the KV cell counts only `full_attention_layer_ids`, and
//!   `handle_max_mamba_cache(rest_memory)` takes the state's share out of `rest` first;
//! - `handle_max_mamba_cache`: with no `--max-mamba-cache-size` (and not "radix cache off with
//!   `--max-running-requests`", where the slots are that cap), the state gets
//!   rest · r / (1 + r) with r = `--mamba-full-memory-ratio` (default 0.9, `server_args.py`
//!   `mamba_full_memory_ratio: float = 0.9`), in whole slots of `mamba_cache_per_req`;
//! - `init_memory_pool`: the request pool is min(its default, slots / ratio) with
//!   `MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO = 3` under the radix cache (the default
//!   `no_buffer` strategy adds nothing), 1 without it.
//!
//! - `server_args.py` `_handle_mamba_radix_cache` (0.5.9): with the radix cache on and the
//!   default `no_buffer` strategy, and no speculative decoding, "Disabling overlap schedule
//!   since mamba no_buffer is not compatible with" it (`spec::server` applies it; benchmaq's
//!   Qwen3.5 servers report `disable_overlap_schedule: True` without passing the flag).
//!
//! Speculative decoding reserves intermediate states per draft token as well
//! (`mamba_state_intermediate_size`); that is not modelled, and such a deployment is refused.
use super::model::ModelSpec;
use crate::error::{Error, Result};

/// `--mamba-full-memory-ratio`'s default: state memory / full-attention KV memory.
pub const MAMBA_FULL_MEMORY_RATIO: f64 = 0.9;

/// State slots per running request under the radix cache.
pub const SLOTS_PER_RUNNING_REQUEST_RADIX: u64 = 3;

const GIB: f64 = (1u64 << 30) as f64;

/// The state pool of one rank.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MambaPool {
    /// State slots (`max_mamba_cache_size`).
    pub slots: u64,
    /// Memory left for the full-attention KV pool (GiB).
    pub rest_gib: f64,
    /// Most requests the request pool admits (slots / 3 under the radix cache).
    pub max_requests: u64,
}

impl MambaPool {
    /// The split of `rest_gib` for `model` at attention-TP `attn_tp`, `None` without linear
    /// layers. `user_running` is `--max-running-requests` per worker.
    pub fn size(
        model: &ModelSpec,
        attn_tp: u64,
        rest_gib: f64,
        user_running: Option<u64>,
        radix_cache: bool,
        speculative: bool,
    ) -> Result<Option<MambaPool>> {
        let per_req = model.linear_state_bytes_per_request(attn_tp);
        if per_req <= 0.0 {
            return Ok(None);
        }
        if speculative {
            return Err(Error::Impossible(format!(
                "{}: speculative decoding with gated delta-net layers is not priced (SGLang \
                 reserves per-draft-token intermediate states, not modelled)",
                model.name
            )));
        }
        let slots = match user_running {
            Some(u) if !radix_cache => u,
            _ => {
                let share =
                    rest_gib.max(0.0) * MAMBA_FULL_MEMORY_RATIO / (1.0 + MAMBA_FULL_MEMORY_RATIO);
                (share * GIB / per_req).floor() as u64
            }
        };
        let ratio = if radix_cache {
            SLOTS_PER_RUNNING_REQUEST_RADIX
        } else {
            1
        };
        Ok(Some(MambaPool {
            slots,
            rest_gib: rest_gib - slots as f64 * per_req / GIB,
            max_requests: (slots / ratio).max(1),
        }))
    }
}
