//! Gated delta-net (GDN) linear-attention layers of a hybrid stack (Qwen3-Next, Qwen3.5): their
//! head shapes, their projections' parameters, and the per-request recurrent state SGLang keeps
//! for them instead of a KV cache.
//!
//! As SGLang builds them (read in the 0.5.9 wheel):
//! - **Which layers.** Layer `l` is full attention when `(l + 1) % full_attention_interval == 0`,
//!   linear otherwise (`configs/qwen3_next.py` `layers_block_type`, also the base of
//!   `configs/qwen3_5.py` `Qwen3_5TextConfig`): 3 of 4 layers at interval 4.
//! - **Projections** (`models/qwen3_next.py` `Qwen3GatedDeltaNet`, `models/qwen3_5.py`
//!   `Qwen3_5GatedDeltaNet`, column-parallel in, row-parallel out): q, k (key_dim =
//!   `linear_num_key_heads · linear_key_head_dim` each), v and the gate z (value_dim =
//!   `linear_num_value_heads · linear_value_head_dim` each), b and a (one per value head),
//!   a depthwise `conv1d` of `linear_conv_kernel_dim` taps over conv_dim = 2·key_dim + value_dim
//!   channels, and `out_proj` value_dim → hidden.
//! - **Full-attention layers** carry an output gate (`attn_output_gate`, default true:
//!   `Qwen3NextAttention`'s `qkv_proj` has `total_num_heads * (1 + attn_output_gate)` query
//!   heads), so their q projection is twice as wide.
//! - **State per request** (`configs/mamba_utils.py` `Mamba2StateShape.create`,
//!   `BaseLinearStateParams.mamba_cache_per_req`): per linear layer, a conv state of
//!   (conv_dim / tp) × (conv_kernel − 1) in the conv dtype (bf16 unless
//!   `SGLANG_MAMBA_CONV_DTYPE`) and a temporal state of (num_v_heads / tp) × head_v_dim ×
//!   head_k_dim in `mamba_ssm_dtype` (config, default float32). The key-head groups are
//!   padded up to tp when they do not divide it (`extra_groups_for_head_shards`).
use serde::{Deserialize, Serialize};

/// The GDN layers of a hybrid model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinearAttention {
    /// How many of the layers are linear (the rest are full attention).
    pub layers: u64,
    pub num_k_heads: u64,
    pub num_v_heads: u64,
    pub head_k_dim: u64,
    pub head_v_dim: u64,
    /// Taps of the depthwise causal conv1d.
    pub conv_kernel: u64,
    /// Bytes per element of the recurrent (temporal) state: 4 for float32 (SGLang's default),
    /// 2 for a `mamba_ssm_dtype` of bfloat16.
    pub ssm_state_bytes: f64,
    /// The full-attention layers' output gate doubles their q projection.
    #[serde(default)]
    pub full_attention_output_gate: bool,
}

/// Bytes per element of the conv state: bf16 (`mamba2_state_dtype`: `SGLANG_MAMBA_CONV_DTYPE`
/// unset → torch.bfloat16).
pub const CONV_STATE_BYTES: f64 = 2.0;

impl LinearAttention {
    /// q and k width (each).
    pub fn key_dim(&self) -> u64 {
        self.num_k_heads * self.head_k_dim
    }

    /// v and z width (each).
    pub fn value_dim(&self) -> u64 {
        self.num_v_heads * self.head_v_dim
    }

    /// Key-head groups after SGLang pads them to a multiple of `tp`.
    fn groups(&self, tp: u64) -> u64 {
        let tp = tp.max(1);
        if self.num_k_heads % tp == 0 {
            self.num_k_heads
        } else {
            // `extra_groups_for_head_shards`: tp − n_groups extra groups.
            tp.max(self.num_k_heads)
        }
    }

    /// Conv channels on one rank: (value_dim + 2 · groups · head_k_dim) / tp.
    fn conv_dim_per_rank(&self, tp: u64) -> f64 {
        (self.value_dim() + 2 * self.groups(tp) * self.head_k_dim) as f64 / tp.max(1) as f64
    }

    /// Per-rank parameters of one GDN layer's projections (in: q, k, v, z, b, a; the conv1d;
    /// out).
    pub fn params_per_rank(&self, hidden: u64, tp: u64) -> f64 {
        let h = hidden as f64;
        let (kd, vd) = (self.key_dim() as f64, self.value_dim() as f64);
        let in_proj = h * (2.0 * kd + 2.0 * vd + 2.0 * self.num_v_heads as f64);
        let conv = (2.0 * kd + vd) * self.conv_kernel as f64;
        let out = vd * h;
        (in_proj + conv + out) / tp.max(1) as f64
    }

    /// Bytes of one request's recurrent state in one GDN layer on one rank (conv + temporal).
    pub fn state_bytes_per_layer(&self, tp: u64) -> f64 {
        let conv = self.conv_dim_per_rank(tp)
            * self.conv_kernel.saturating_sub(1) as f64
            * CONV_STATE_BYTES;
        let temporal = self.num_v_heads as f64 / tp.max(1) as f64
            * (self.head_v_dim * self.head_k_dim) as f64
            * self.ssm_state_bytes;
        conv + temporal
    }

    /// SGLang's `mamba_cache_per_req` on one rank: the state over every GDN layer.
    pub fn state_bytes_per_request(&self, tp: u64) -> f64 {
        self.state_bytes_per_layer(tp) * self.layers as f64
    }

    /// Value heads on one rank.
    pub fn v_heads_per_rank(&self, tp: u64) -> f64 {
        self.num_v_heads as f64 / tp.max(1) as f64
    }
}

/// Qwen3.5-27B's GDN layers, by hand from its config (tests here, in `cost::gdn` and
/// tests/gdn_physics.rs).
pub fn qwen35_27b() -> LinearAttention {
    LinearAttention {
        layers: 48,
        num_k_heads: 16,
        num_v_heads: 48,
        head_k_dim: 128,
        head_v_dim: 128,
        conv_kernel: 4,
        ssm_state_bytes: 4.0,
        full_attention_output_gate: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand for Qwen3.5-27B (config.json: hidden 5120, 16 key heads and 48 value heads of
    /// 128, conv 4): in 5120·(2·2048 + 2·6144 + 2·48) = 84 377 600, conv 10 240·4 = 40 960,
    /// out 6144·5120 = 31 457 280.
    #[test]
    fn gdn_projection_params_by_hand() {
        let g = qwen35_27b();
        assert_eq!(g.params_per_rank(5120, 1), 115_875_840.0);
        assert_eq!(g.params_per_rank(5120, 2), 115_875_840.0 / 2.0);
    }

    /// By hand at TP 1: conv 10 240 × 3 × 2 B = 61 440 B; temporal 48 × 128 × 128 × 4 B =
    /// 3 145 728 B; 48 layers: 153 944 064 B ≈ 147 MiB per request.
    #[test]
    fn state_per_request_by_hand() {
        let g = qwen35_27b();
        assert_eq!(g.state_bytes_per_layer(1), 61_440.0 + 3_145_728.0);
        assert_eq!(g.state_bytes_per_request(1), 48.0 * 3_207_168.0);
        // TP 32 > 16 key heads: groups padded to 32, conv (6144 + 2·32·128) / 32 = 448.
        assert_eq!(
            g.state_bytes_per_layer(32),
            448.0 * 3.0 * 2.0 + 1.5 * 16_384.0 * 4.0
        );
    }
}
