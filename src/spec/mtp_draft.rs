//! Speculative decoding with a target's own multi-token-prediction (MTP) layer as the draft
//! (DeepSeek-V3/R1, GLM-4.5/4.6/4.7): which architectures SGLang drafts that way, from which
//! release, and the one-layer draft model it loads.
use super::model::ModelSpec;
use super::version::Version;
use crate::error::Result;

/// Targets whose own MTP layer SGLang loads as the draft when no draft path is given (the
/// `server_args.py` list that sets `speculative_draft_model_path = model_path`), the
/// architecture `ModelConfig._config_draft_model` rewrites the draft to, and the first release
/// that does: DeepSeek-V3 from 0.4.6.post3; GLM-4.5/4.6/4.7 from 0.4.10, the release that
/// adds `glm4_moe.py` (0.4.10's `server_args.py`: `if model_arch in ["DeepseekV3ForCausalLM",
/// "Glm4MoeForCausalLM"]`).
pub(super) fn mtp_draft(architecture: &str) -> Option<(&'static str, Version)> {
    match architecture {
        "DeepseekV3ForCausalLM" => Some(("DeepseekV3ForCausalLMNextN", Version::post(0, 4, 6, 3))),
        "Glm4MoeForCausalLM" => Some(("Glm4MoeForCausalLMNextN", Version::new(0, 4, 10))),
        _ => None,
    }
}

/// The target's MTP module as SGLang loads it (`deepseek_nextn.py` /
/// `glm4_moe_nextn.py`): one decoder layer, MoE whatever `first_k_dense_replace` says
/// (`_is_layer_sparse(is_nextn=True)`), over `eh_proj(concat(embed, hidden))`, sharing the
/// target's embedding and LM head.
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
    Ok(d)
}
