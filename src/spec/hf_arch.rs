//! The per-architecture rules of the Hugging Face config reader ([`super::hf_config`]): which
//! layers are MoE, expert and shared-expert widths, biases and sliding windows, each as the
//! SGLang model file of that architecture builds it (`python/sglang/srt/models/*.py`).
use super::hf_fields::{as_u64, Config};
use super::model::{Mla, ModelSpec, Moe, SlidingWindow, WindowKind};
use crate::error::{Error, Result};
use serde_json::Value;

/// Qwen3-MoE: layer `i` is MoE unless it is in `mlp_only_layers` or `(i + 1)` is not a multiple
/// of `decoder_sparse_step`. Only "the first k layers dense, the rest MoE" is representable.
pub(super) fn qwen3_moe(cfg: &Config, spec: &mut ModelSpec) -> Result<()> {
    spec.qkv_bias = cfg.bool_or("attention_bias", false)?;
    let num_experts = cfg.u64("num_experts")?;
    if num_experts == 0 {
        spec.intermediate_size = cfg.u64("intermediate_size")?;
        return Ok(()); // no experts: a dense model
    }
    let step = cfg.u64_or("decoder_sparse_step", 1)?.max(1);
    let mlp_only = match cfg.get("mlp_only_layers") {
        None => std::collections::BTreeSet::new(),
        Some(v) => v
            .as_array()
            .and_then(|a| a.iter().map(as_u64).collect::<Option<_>>())
            .ok_or_else(|| cfg.bad("mlp_only_layers", "a list of layer indices", v))?,
    };
    let is_dense = |i: u64| mlp_only.contains(&i) || (i + 1) % step != 0;
    let dense_layers = (0..spec.num_layers).take_while(|&i| is_dense(i)).count() as u64;
    if let Some(i) = (dense_layers..spec.num_layers).find(|&i| is_dense(i)) {
        return Err(Error::invalid(
            &cfg.source,
            "mlp_only_layers",
            format!(
                "layer {i} is dense after MoE layers (decoder_sparse_step {step}); only the first \
                 layers may be dense (\"first k dense, rest MoE\"), other patterns are unsupported"
            ),
        ));
    }
    spec.intermediate_size = dense_width(cfg, dense_layers)?;
    spec.moe = Some(Moe {
        num_experts,
        experts_per_token: cfg.u64("num_experts_per_tok")?,
        expert_intermediate_size: cfg.u64("moe_intermediate_size")?,
        shared_expert_intermediate_size: cfg.u64_or("shared_expert_intermediate_size", 0)?,
        dense_layers,
        expert_bias: false,
    });
    Ok(())
}

/// DeepSeek-V2/V3: MLA attention; the first `first_k_dense_replace` layers dense, the rest MoE
/// with `n_shared_experts` shared experts of `moe_intermediate_size` each. `head_dim` is the
/// query/key head dim, `qk_nope_head_dim + qk_rope_head_dim`.
pub(super) fn deepseek(cfg: &Config, spec: &mut ModelSpec) -> Result<()> {
    spec.qkv_bias = cfg.bool_or("attention_bias", false)?;
    let freq = cfg.u64_or("moe_layer_freq", 1)?;
    if freq != 1 {
        return Err(Error::invalid(
            &cfg.source,
            "moe_layer_freq",
            format!("{freq} is unsupported (only 1)"),
        ));
    }
    let mla = Mla {
        q_lora_rank: cfg.u64_or("q_lora_rank", 0)?,
        kv_lora_rank: cfg.u64("kv_lora_rank")?,
        qk_nope_head_dim: cfg.u64("qk_nope_head_dim")?,
        qk_rope_head_dim: cfg.u64("qk_rope_head_dim")?,
        v_head_dim: cfg.u64("v_head_dim")?,
    };
    spec.head_dim = mla
        .qk_nope_head_dim
        .checked_add(mla.qk_rope_head_dim)
        .ok_or_else(|| {
            implausible(
                cfg,
                "qk_nope_head_dim",
                "qk_nope_head_dim + qk_rope_head_dim",
            )
        })?;
    spec.mla = Some(mla);
    dense_prefix_moe(cfg, spec, cfg.u64("n_routed_experts")?)
}

/// The MoE layout DeepSeek-V2/V3 and GLM-4.5 share: the first `first_k_dense_replace` layers
/// dense of `intermediate_size`, the rest `num_experts` routed experts of
/// `moe_intermediate_size` (`num_experts_per_tok` per token) and `n_shared_experts` shared
/// experts of the same width.
fn dense_prefix_moe(cfg: &Config, spec: &mut ModelSpec, num_experts: u64) -> Result<()> {
    let expert_width = cfg.u64("moe_intermediate_size")?;
    let dense_layers = cfg.u64_or("first_k_dense_replace", 0)?;
    spec.intermediate_size = dense_width(cfg, dense_layers)?;
    spec.moe = Some(Moe {
        num_experts,
        experts_per_token: cfg.u64("num_experts_per_tok")?,
        expert_intermediate_size: expert_width,
        shared_expert_intermediate_size: cfg
            .u64_or("n_shared_experts", 0)?
            .checked_mul(expert_width)
            .ok_or_else(|| {
                implausible(
                    cfg,
                    "n_shared_experts",
                    "n_shared_experts × moe_intermediate_size",
                )
            })?,
        dense_layers,
        expert_bias: false,
    });
    Ok(())
}

/// An error for a derived size that overflows 64 bits.
fn implausible(cfg: &Config, key: &str, what: &str) -> Error {
    Error::invalid(
        &cfg.source,
        key,
        format!("{what} overflows 64 bits: not a plausible model"),
    )
}

/// Width of the dense MLP of an MoE model: required only when some layers are dense.
fn dense_width(cfg: &Config, dense_layers: u64) -> Result<u64> {
    if dense_layers > 0 {
        cfg.u64("intermediate_size")
    } else {
        cfg.u64_or("intermediate_size", 0)
    }
}

/// gpt-oss: every layer MoE with biased experts of width `intermediate_size`; the layers marked
/// `sliding_attention` in `layer_types` (default: the even-numbered ones, as in `transformers`)
/// use a `sliding_window`-token window.
pub(super) fn gpt_oss(cfg: &Config, spec: &mut ModelSpec) -> Result<()> {
    spec.qkv_bias = cfg.bool_or("attention_bias", true)?;
    spec.intermediate_size = cfg.u64("intermediate_size")?;
    let sliding_layers = match cfg.get("layer_types") {
        None => spec.num_layers.div_ceil(2),
        Some(v) => v
            .as_array()
            .and_then(|a| a.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
            .ok_or_else(|| cfg.bad("layer_types", "a list of strings", v))?
            .iter()
            .filter(|t| **t == "sliding_attention")
            .count() as u64,
    };
    let window_tokens = cfg.u64_or("sliding_window", 0)?;
    if sliding_layers > 0 {
        if window_tokens == 0 {
            return Err(cfg.missing("sliding_window"));
        }
        spec.sliding_window = Some(SlidingWindow {
            window_tokens,
            layers: sliding_layers,
            kind: WindowKind::Sliding,
        });
    }
    spec.moe = Some(every_layer_routed(cfg, spec.intermediate_size, true)?);
    Ok(())
}

/// Mixtral (`mixtral.py`) and MiniMax-M2 (`minimax_m2.py`): every layer MoE with
/// `num_local_experts` experts of width `intermediate_size`, `num_experts_per_tok` routed per
/// token, no shared expert (MiniMax-M2's `shared_intermediate_size` is 0 in the released
/// configs and `minimax_m2.py` builds none) and no attention biases. MiniMax-M2's per-layer
/// qk-norm weights and routing-score bias (a few thousand parameters a layer) and its MTP
/// modules (not loaded without speculative decoding) are not counted. Mixtral's
/// `sliding_window` is ignored as `mixtral.py` ignores it. A MiniMax config whose
/// `attn_type_list` marks some layer 0 (lightning/linear attention, MiniMax-Text-01 style) is
/// refused: servesim prices softmax attention only.
pub(super) fn mixtral(cfg: &Config, spec: &mut ModelSpec) -> Result<()> {
    if let Some(v) = cfg.get("attn_type_list") {
        let kinds = v
            .as_array()
            .and_then(|a| a.iter().map(as_u64).collect::<Option<Vec<_>>>())
            .ok_or_else(|| cfg.bad("attn_type_list", "a list of 0/1 layer kinds", v))?;
        if kinds.iter().any(|k| *k != 1) {
            return Err(Error::invalid(
                &cfg.source,
                "attn_type_list",
                "some layers use lightning (linear) attention, which servesim does not price \
                 (only softmax attention, kind 1, on every layer)",
            ));
        }
    }
    spec.intermediate_size = cfg.u64("intermediate_size")?;
    spec.moe = Some(every_layer_routed(cfg, spec.intermediate_size, false)?);
    Ok(())
}

/// GLM-4.5/4.6/4.7 (`glm4_moe.py`): grouped-query attention with q/k/v biases when
/// `attention_bias` says so (true in the released configs; its qk-norm weights and partial
/// rotary are not counted), the first `first_k_dense_replace` layers dense of
/// `intermediate_size`, the rest MoE with `n_routed_experts` experts of
/// `moe_intermediate_size` and `n_shared_experts` shared experts of the same width (SGLang's
/// `_is_layer_sparse`; `n_routed_experts` null = a dense model). The MTP layer
/// (`num_nextn_predict_layers`) is not loaded without speculative decoding.
pub(super) fn glm4_moe(cfg: &Config, spec: &mut ModelSpec) -> Result<()> {
    spec.qkv_bias = cfg.bool_or("attention_bias", false)?;
    let Some(num_experts) = cfg.opt_u64("n_routed_experts")? else {
        spec.intermediate_size = cfg.u64("intermediate_size")?;
        return Ok(());
    };
    dense_prefix_moe(cfg, spec, num_experts)
}

/// Every layer MoE: `num_local_experts` routed experts of `width`, `num_experts_per_tok` per
/// token, no shared expert (gpt-oss, Mixtral, MiniMax-M2); `expert_bias`: biased expert GEMMs.
fn every_layer_routed(cfg: &Config, width: u64, expert_bias: bool) -> Result<Moe> {
    Ok(Moe {
        num_experts: cfg.u64("num_local_experts")?,
        experts_per_token: cfg.u64("num_experts_per_tok")?,
        expert_intermediate_size: width,
        shared_expert_intermediate_size: 0,
        dense_layers: 0,
        expert_bias,
    })
}
