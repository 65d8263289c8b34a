//! Qwen3-Next (`Qwen3NextForCausalLM`) and Qwen3.5 (`Qwen3_5ForConditionalGeneration`,
//! `Qwen3_5MoeForConditionalGeneration`, priced from their `text_config`): hybrid stacks of
//! gated delta-net linear attention and gated softmax attention ([`LinearAttention`]).
//!
//! SGLang 0.5.9 (`configs/qwen3_next.py` `layers_block_type`) decides the layer kinds from
//! `full_attention_interval` alone (`layer_types`, where present, is not read): layer `l` is
//! full attention when `(l + 1) % interval == 0`. The MLP follows Qwen3-MoE's rules
//! (`num_experts`, `decoder_sparse_step`, `mlp_only_layers`, one shared expert of
//! `shared_expert_intermediate_size`); the dense Qwen3.5-27B has no `num_experts`. The state
//! dtype is `mamba_ssm_dtype` (`configs/mamba_utils.py` `mamba2_state_dtype`: config, else
//! float32).
use super::hf_fields::Config;
use super::model::{LinearAttention, ModelSpec};
use crate::error::Result;
use serde_json::Value;

/// The text architecture the Qwen3.5 wrappers and Qwen3-Next share in the reader.
pub(super) const QWEN3_NEXT: &str = "Qwen3NextForCausalLM";

/// Fills `spec`'s MLP and linear-attention layers from a Qwen3-Next / Qwen3.5 text config.
pub(super) fn qwen3_next(cfg: &Config, spec: &mut ModelSpec) -> Result<()> {
    if cfg.get("num_experts").is_some() {
        super::hf_arch::qwen3_moe(cfg, spec)?;
    } else {
        spec.qkv_bias = cfg.bool_or("attention_bias", false)?;
        spec.intermediate_size = cfg.u64("intermediate_size")?;
    }
    let interval = cfg.u64_or("full_attention_interval", 4)?;
    if interval == 0 {
        return Err(cfg.bad("full_attention_interval", "≥ 1", &Value::from(0)));
    }
    let layers = spec.num_layers - spec.num_layers / interval;
    let ssm_state_bytes = match cfg.get("mamba_ssm_dtype").and_then(Value::as_str) {
        Some("bfloat16") | Some("float16") => 2.0,
        _ => 4.0,
    };
    spec.linear_attention = Some(LinearAttention {
        layers,
        num_k_heads: cfg.u64_or("linear_num_key_heads", 16)?,
        num_v_heads: cfg.u64_or("linear_num_value_heads", 32)?,
        head_k_dim: cfg.u64_or("linear_key_head_dim", 128)?,
        head_v_dim: cfg.u64_or("linear_value_head_dim", 128)?,
        conv_kernel: cfg.u64_or("linear_conv_kernel_dim", 4)?,
        ssm_state_bytes,
        full_attention_output_gate: cfg.bool_or("attn_output_gate", true)?,
    });
    Ok(())
}
