//! Architectures the Hugging Face config reader refuses, each with the mechanism servesim does
//! not price, so that a refusal says why in one line. Every entry is an architecture whose
//! attention or layer stack departs from the softmax-attention decoders servesim models; the
//! mechanism is named from the model's own `config.json` fields (quoted in brackets).
const REFUSED: &[(&str, &str)] = &[
    (
        "NemotronHForCausalLM",
        "hybrid Mamba-2 state-space layers (`hybrid_override_pattern` M layers, \
         `ssm_state_size`)",
    ),
    (
        "DeepseekV32ForCausalLM",
        "DeepSeek sparse attention (DSA): a lightning indexer picks `index_topk` keys per \
         query",
    ),
    (
        "GlmMoeDsaForCausalLM",
        "DeepSeek sparse attention (DSA): a lightning indexer picks `index_topk` keys per \
         query",
    ),
    (
        "DeepseekV4ForCausalLM",
        "compressed sparse attention (`compress_ratios` per layer, indexer `index_topk`, \
         `sliding_window`)",
    ),
    (
        "Gemma4ForConditionalGeneration",
        "per-layer sliding/full attention mix (`layer_types`) with shared K=V \
         (`attention_k_eq_v`), held in SGLang's hybrid SWA pool (configs/model_config.py \
         is_hybrid_swa_model, 0.5.23)",
    ),
    (
        // sglang 0.5.23 models/gemma2.py: `use_sliding_window = layer_id % 2 == 0`, window
        // `sliding_window - 1`, `logit_cap = attn_logit_softcapping`.
        "Gemma2ForCausalLM",
        "sliding-window attention on every other layer (`sliding_window`) with attention logit \
         soft-capping (`attn_logit_softcapping`), not read for this architecture yet",
    ),
    (
        "MiMoV2FlashForCausalLM",
        "hybrid sliding-window attention with its own head shapes (`hybrid_layer_pattern`, \
         `swa_head_dim`) and attention sinks",
    ),
    (
        "Step3p7FlashForCausalLM",
        "per-layer sliding/full attention mix (`layer_types`, `sliding_window`)",
    ),
    (
        "MiniMaxM3ForCausalLM",
        "block-sparse attention on most layers (`sparse_attention_config`)",
    ),
    (
        "MiniMaxM3SparseForConditionalGeneration",
        "block-sparse attention on most layers (`sparse_attention_config`)",
    ),
    (
        "MiniMaxText01ForCausalLM",
        "lightning (linear) attention on most layers (`attn_type_list`)",
    ),
    (
        "MiniMaxM1ForCausalLM",
        "lightning (linear) attention on most layers (`attn_type_list`)",
    ),
    (
        "KimiK3ForConditionalGeneration",
        "hybrid Kimi delta attention (KDA, linear) layers (`linear_attn_config.kda_layers`)",
    ),
    (
        "KimiLinearForCausalLM",
        "hybrid Kimi delta attention (KDA, linear) layers (`linear_attn_config.kda_layers`)",
    ),
    (
        "DeciLMForCausalLM",
        "heterogeneous layers from architecture search (per-layer FFN widths, attention-free \
         layers in `block_configs`)",
    ),
];

/// Why `architecture` is refused, when it is a known architecture servesim does not price.
pub fn refusal(architecture: &str) -> Option<&'static str> {
    REFUSED
        .iter()
        .find(|(a, _)| *a == architecture)
        .map(|(_, why)| *why)
}

/// The architectures refused with a reason.
pub fn refused_architectures() -> impl Iterator<Item = &'static str> {
    REFUSED.iter().map(|(a, _)| *a)
}
