//! Speculative decoding with a target's own multi-token-prediction (MTP) layer as the draft
//! (DeepSeek-V3/R1, GLM-4.5/4.6/4.7, Qwen3.5): which architectures SGLang drafts that way, from
//! which release, and the one-layer draft model it loads.
use super::model::ModelSpec;
use super::version::Version;
use crate::error::Result;

/// Targets whose own MTP layer SGLang loads as the draft when no draft path is given (the
/// `server_args.py` list that sets `speculative_draft_model_path = model_path`), the
/// architecture `ModelConfig._config_draft_model` rewrites the draft to, and the first release
/// that does: DeepSeek-V3 from 0.4.6.post3; GLM-4.5/4.6/4.7 from 0.4.10, the release that
/// adds `glm4_moe.py` (0.4.10's `server_args.py`: `if model_arch in ["DeepseekV3ForCausalLM",
/// "Glm4MoeForCausalLM"]`). Qwen3.5 (both wrappers) from 0.5.9, the first release that serves
/// it: it is not on that `server_args.py` list, but a draft worker whose path is unset loads
/// the target's (`configs/model_config.py` 0.5.9 line 251, `model_path=model_path or
/// server_args.model_path`) and `_config_draft_model` rewrites a Qwen3.5 draft to
/// `Qwen3_5ForCausalLMMTP` with one predict layer (lines 324-329).
pub(super) fn mtp_draft(architecture: &str) -> Option<(&'static str, Version)> {
    match architecture {
        "DeepseekV3ForCausalLM" => Some(("DeepseekV3ForCausalLMNextN", Version::post(0, 4, 6, 3))),
        "Glm4MoeForCausalLM" => Some(("Glm4MoeForCausalLMNextN", Version::new(0, 4, 10))),
        "Qwen3_5ForConditionalGeneration" | "Qwen3_5MoeForConditionalGeneration" => {
            Some(("Qwen3_5ForCausalLMMTP", Version::new(0, 5, 9)))
        }
        _ => None,
    }
}

/// The target's MTP module as SGLang loads it (`deepseek_nextn.py` /
/// `glm4_moe_nextn.py` / `qwen3_5_mtp.py`): one decoder layer, MoE whatever
/// `first_k_dense_replace` says (`_is_layer_sparse(is_nextn=True)`), over
/// `eh_proj(concat(embed, hidden))` (Qwen3.5's `fc`), sharing the target's embedding and LM
/// head. A hybrid GDN target's MTP layer is full attention (`qwen3_5_mtp.py` 0.5.9 lines 66-67:
/// `num_hidden_layers = 1`, `full_attention_interval = 1`), with its output gate; the draft
/// builds the text model only (`Qwen3_5ForCausalLM`), so a wrapper's vision tower is not in it.
pub(super) fn nextn_layer(target: &ModelSpec) -> Result<ModelSpec> {
    let mut d = target.clone();
    d.name = format!("{}-nextn", target.name);
    d.architecture = mtp_draft(&target.architecture)
        .map_or("DeepseekV3ForCausalLMNextN", |(arch, _)| arch)
        .into();
    d.num_layers = 1;
    if let Some(m) = d.moe.as_mut() {
        m.dense_layers = 0;
    }
    if let Some(l) = d.linear_attention.as_mut() {
        l.layers = 0;
    }
    d.vision_params = 0;
    Ok(d)
}
