//! Llama 4 (`Llama4ForConditionalGeneration`, Scout 17B-16E and Maverick 17B-128E) as SGLang
//! builds its text decoder (`python/sglang/srt/models/llama4.py`, read in the 0.5.5 and 0.5.14
//! wheels; the same layer stack in both):
//!
//! - **Attention.** Grouped-query attention on every layer. Layer `i` uses RoPE and chunked
//!   local attention when `(i + 1) % 4 != 0` (`Llama4Attention.use_rope`, passed to
//!   `RadixAttention(use_irope=...)`); every 4th layer is a NoPE global layer with full
//!   causal attention. The chunk is `attention_chunk_size` (8192 in both released configs).
//!   SGLang hard-codes the every-4th rule; the config's `no_rope_layers` list is not read.
//! - **Feed-forward.** Layer `i` is MoE when `(i + 1) % interleave_moe_layer_step == 0`
//!   (`Llama4DecoderLayer._is_moe_layer`; step 0 means every layer when there are experts):
//!   Scout (step 1) every layer, Maverick (step 2) the odd-numbered ones. An MoE layer
//!   (`Llama4MoE`) has `num_local_experts` routed experts of `intermediate_size`, top-
//!   `num_experts_per_tok` sigmoid routing (`custom_routing_function`, top-1 in both
//!   configs), a replicated router (`hidden × experts`) and one shared expert, a `LlamaMLP`
//!   of the same `intermediate_size`. A dense layer is a `LlamaMLP` of `intermediate_size_mlp`.
//!   Only the dense-layer count is priced, so Maverick's alternation is "24 dense + 24 MoE".
//! - Not counted: the qk-norm (a `head_dim`-wide RMSNorm, only on RoPE layers when
//!   `use_qk_norm`) and the NoPE layers' attention-temperature scaling (elementwise).
//!
//! The vision tower is not loaded: SGLang's `ModelConfig` turns multimodal off for
//! `Llama4ForConditionalGeneration` unless `--enable-multimodal` is given (`mm_disabled_models`
//! in `configs/model_config.py`), and `mllama4.py` then builds no `vision_model` or
//! `multi_modal_projector` (`has_vision = has_vision_weights and enable_multimodal`).
use super::hf_fields::Config;
use super::model::{ModelSpec, Moe, SlidingWindow, WindowKind};
use crate::error::{Error, Result};

/// Every `NOPE_EVERY`-th layer (1-based) is a NoPE global-attention layer (`llama4.py`:
/// `self.use_rope = (layer_id + 1) % 4 != 0`).
pub const NOPE_EVERY: u64 = 4;

/// Fills `spec`'s feed-forward and chunked-attention fields from a Llama 4 `text_config`.
pub(super) fn llama4(cfg: &Config, spec: &mut ModelSpec) -> Result<()> {
    spec.qkv_bias = cfg.bool_or("attention_bias", false)?;
    let layers = spec.num_layers;
    let num_experts = cfg.u64("num_local_experts")?;
    let step = cfg.u64_or("interleave_moe_layer_step", 1)?;
    let is_moe = |i: u64| match step {
        0 => num_experts > 0,
        s => (i + 1) % s == 0,
    };
    let moe_layers = (0..layers).filter(|&i| is_moe(i)).count() as u64;
    let dense_layers = layers - moe_layers;
    spec.intermediate_size = if dense_layers > 0 {
        cfg.u64("intermediate_size_mlp")?
    } else {
        cfg.u64_or("intermediate_size_mlp", 0)?
    };
    if moe_layers > 0 {
        if num_experts == 0 {
            return Err(Error::invalid(
                &cfg.source,
                "num_local_experts",
                "must be > 0 when interleave_moe_layer_step makes some layers MoE",
            ));
        }
        let width = cfg.u64("intermediate_size")?;
        spec.moe = Some(Moe {
            num_experts,
            experts_per_token: cfg.u64("num_experts_per_tok")?,
            expert_intermediate_size: width,
            shared_expert_intermediate_size: width,
            dense_layers,
            expert_bias: false,
        });
    }
    let chunk_tokens = cfg.u64("attention_chunk_size")?;
    let chunked_layers = layers - layers / NOPE_EVERY;
    if chunk_tokens > 0 && chunked_layers > 0 {
        spec.sliding_window = Some(SlidingWindow {
            window_tokens: chunk_tokens,
            layers: chunked_layers,
            kind: WindowKind::Chunked,
        });
    }
    spec.notes.push(format!(
        "Llama 4: {chunked_layers} of {layers} layers use chunked local attention over \
         {chunk_tokens}-token chunks, every {NOPE_EVERY}th is a NoPE global layer; {moe_layers} \
         MoE layers (top-{} of {num_experts} experts + 1 shared), {dense_layers} dense; the \
         vision tower is not loaded (SGLang disables multimodal for Llama 4 unless \
         --enable-multimodal)",
        spec.moe.as_ref().map_or(0, |m| m.experts_per_token)
    ));
    Ok(())
}
