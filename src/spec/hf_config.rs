//! Reads a Hugging Face `config.json` straight into a [`ModelSpec`], for the architectures
//! servesim can price: Llama, Mistral, Qwen2, Qwen3 (dense), Qwen3-MoE, Mixtral, MiniMax-M2,
//! GLM-4.5/4.6/4.7 (`Glm4MoeForCausalLM`),
//! DeepSeek-V2/V3 (MLA + MoE, also Kimi-K2), gpt-oss, Gemma-3 and Qwen3-Next (hybrid gated
//! delta-net, [`super::hf_qwen3_next`]), and the text decoder of the
//! multimodal wrappers Qwen3-VL, Qwen3-VL-MoE, Qwen3.5, Qwen3.5-MoE, Kimi-K2.5, Gemma-3 and
//! Llama 4 (their
//! `text_config`; Gemma-3's omitted keys take `Gemma3TextConfig`'s defaults,
//! [`super::hf_gemma3`]; Llama 4's chunked attention and interleaved MoE in
//! [`super::hf_llama4`]). Defaults
//! follow the `transformers` config classes of those architectures: `head_dim` = hidden /
//! heads, `num_key_value_heads` = `num_attention_heads`, `tie_word_embeddings` = false.
//! Things the reader deliberately ignores: RoPE scaling and partial rotary dims, norms
//! (also qk-norm), Qwen2's `use_sliding_window` (false in the released Qwen2.5 configs),
//! DeepSeek's and MiniMax's MTP layers, and any KV-cache quantisation (the KV cache is taken as
//! bf16, `--kv-cache-dtype auto`). Per-architecture rules are in [`super::hf_arch`], weight
//! formats in [`super::hf_quant`], architectures refused with their reason in
//! [`super::hf_refuse`], vision towers in [`super::hf_vision`].
use super::hf_arch;
use super::hf_fields::Config;
use super::hf_quant::weight_format;
use super::hf_refuse::refusal;
use super::load::from_json_str;
use super::model::{ModelSpec, MAX_LAYERS};
use crate::error::{Error, Result};
use serde_json::Value;
use std::path::Path;

/// The `architectures[0]` values the reader understands.
pub const SUPPORTED_ARCHITECTURES: &[&str] = &[
    "LlamaForCausalLM",
    "MistralForCausalLM",
    "Phi3ForCausalLM",
    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM",
    "MixtralForCausalLM",
    "MiniMaxM2ForCausalLM",
    "Glm4MoeForCausalLM",
    "DeepseekV2ForCausalLM",
    "DeepseekV3ForCausalLM",
    "GptOssForCausalLM",
    "Gemma3ForCausalLM",
    "Gemma3ForConditionalGeneration",
    "Qwen3VLForConditionalGeneration",
    "Qwen3VLMoeForConditionalGeneration",
    "KimiK25ForConditionalGeneration",
    "Llama4ForConditionalGeneration",
    "Qwen3NextForCausalLM",
    "Qwen3_5ForConditionalGeneration",
    "Qwen3_5MoeForConditionalGeneration",
    "LlamaForCausalLMEagle",
    "LlamaForCausalLMEagle3",
];

/// Multimodal wrappers whose `text_config` is priced as the text architecture named here
/// (SGLang's `qwen3_vl.py` builds a `Qwen3LLMModel`, `qwen3_vl_moe.py` a Qwen3-MoE model,
/// `kimi_k25.py` a `DeepseekV3ForCausalLM`, `gemma3_mm.py` a `Gemma3ForCausalLM`,
/// `mllama4.py` a `Llama4ForCausalLM`).
const WRAPPERS: &[(&str, &str)] = &[
    ("Gemma3ForConditionalGeneration", "Gemma3ForCausalLM"),
    ("Qwen3VLForConditionalGeneration", "Qwen3ForCausalLM"),
    ("Qwen3VLMoeForConditionalGeneration", "Qwen3MoeForCausalLM"),
    ("KimiK25ForConditionalGeneration", "DeepseekV3ForCausalLM"),
    ("Llama4ForConditionalGeneration", "Llama4ForCausalLM"),
    // `qwen3_5.py`: both wrappers subclass `Qwen3VLForConditionalGeneration` around a
    // `Qwen3_5ForCausalLM` / `Qwen3_5MoeForCausalLM` whose layers are Qwen3-Next's.
    (
        "Qwen3_5ForConditionalGeneration",
        super::hf_qwen3_next::QWEN3_NEXT,
    ),
    (
        "Qwen3_5MoeForConditionalGeneration",
        super::hf_qwen3_next::QWEN3_NEXT,
    ),
];

/// Gemma-3's text architecture, whose omitted config keys take `Gemma3TextConfig`'s defaults.
const GEMMA3: &str = "Gemma3ForCausalLM";

/// Parses `text` (the contents of a `config.json`; `origin` names it in errors and supplies the
/// model name when `_name_or_path` is absent) into a validated [`ModelSpec`].
pub fn model_from_hf_config(text: &str, origin: &Path) -> Result<ModelSpec> {
    let value: Value = from_json_str(text, origin)?;
    let source = origin.display().to_string();
    let Some(obj) = value.as_object() else {
        return Err(Error::invalid(
            source,
            "config.json",
            "must be a JSON object",
        ));
    };
    let top = Config {
        obj,
        outer: None,
        source,
    };
    let architecture = architecture(&top)?;
    let text_arch = WRAPPERS
        .iter()
        .find(|(w, _)| *w == architecture)
        .map(|(_, t)| *t);
    let spec = match text_arch {
        None if architecture == GEMMA3 => {
            let filled = super::hf_gemma3::with_text_defaults(obj);
            let cfg = Config {
                obj: &filled,
                outer: None,
                source: top.source.clone(),
            };
            build(&cfg, &architecture, &architecture, origin)?
        }
        None => build(&top, &architecture, &architecture, origin)?,
        Some(text_arch) => {
            let inner = top
                .get("text_config")
                .and_then(Value::as_object)
                .ok_or_else(|| top.missing("text_config"))?;
            let filled = (text_arch == GEMMA3).then(|| super::hf_gemma3::with_text_defaults(inner));
            let cfg = Config {
                obj: filled.as_ref().unwrap_or(inner),
                outer: Some(obj),
                source: format!("{} (text_config)", top.source),
            };
            let mut spec = build(&cfg, &architecture, text_arch, origin)?;
            // `_name_or_path` of the outer config names the checkpoint, not the inner one.
            let name = top.get("_name_or_path").and_then(Value::as_str);
            spec.name = model_name(name, origin);
            spec.hf_id = name.filter(|s| looks_like_hub_id(s)).map(str::to_string);
            let (vision, note) =
                super::hf_vision::vision_params(&top, &architecture, spec.hidden_size)?;
            spec.vision_params = vision;
            spec.notes.extend(note);
            spec
        }
    };
    spec.validate(&top.source)?;
    Ok(spec)
}

/// The spec of the text decoder in `cfg`, built by the rules of `text_arch` (the architecture
/// itself, or the text architecture of a multimodal wrapper); `architecture` is recorded.
fn build(cfg: &Config, architecture: &str, text_arch: &str, origin: &Path) -> Result<ModelSpec> {
    let hidden_size = cfg.u64("hidden_size")?;
    let num_layers = cfg.u64("num_hidden_layers")?;
    if num_layers > MAX_LAYERS {
        // Checked before anything iterates over the layers.
        return Err(Error::invalid(
            &cfg.source,
            "num_hidden_layers",
            format!("must be at most {MAX_LAYERS}, got {num_layers}"),
        ));
    }
    let num_attention_heads = cfg.u64("num_attention_heads")?;
    if num_attention_heads == 0 {
        return Err(Error::invalid(
            &cfg.source,
            "num_attention_heads",
            "must be > 0",
        ));
    }
    let name_or_path = cfg.get("_name_or_path").and_then(Value::as_str);
    let mut spec = ModelSpec {
        name: model_name(name_or_path, origin),
        hf_id: name_or_path
            .filter(|s| looks_like_hub_id(s))
            .map(str::to_string),
        architecture: architecture.to_string(),
        hidden_size,
        num_layers,
        num_attention_heads,
        num_kv_heads: cfg.u64_or("num_key_value_heads", num_attention_heads)?,
        head_dim: cfg.u64_or("head_dim", hidden_size / num_attention_heads)?,
        intermediate_size: 0,
        vocab_size: cfg.u64("vocab_size")?,
        tie_word_embeddings: cfg.bool_or("tie_word_embeddings", false)?,
        context_length: cfg.u64("max_position_embeddings")?,
        qkv_bias: false,
        sliding_window: None,
        moe: None,
        mla: None,
        linear_attention: None,
        weights: weight_format(cfg)?,
        kv_cache_dtype: super::hf_quant::kv_cache_dtype(cfg),
        // EAGLE3 heads carry their own reduced-vocabulary LM head.
        draft_vocab_size: cfg.opt_u64("draft_vocab_size")?,
        vision_params: 0,
        replicated_embedding: false,
        notes: Vec::new(),
    };
    match text_arch {
        "Qwen3MoeForCausalLM" => hf_arch::qwen3_moe(cfg, &mut spec)?,
        "DeepseekV2ForCausalLM" | "DeepseekV3ForCausalLM" => hf_arch::deepseek(cfg, &mut spec)?,
        "GptOssForCausalLM" => hf_arch::gpt_oss(cfg, &mut spec)?,
        "MixtralForCausalLM" | "MiniMaxM2ForCausalLM" => hf_arch::mixtral(cfg, &mut spec)?,
        "Glm4MoeForCausalLM" => hf_arch::glm4_moe(cfg, &mut spec)?,
        GEMMA3 => super::hf_gemma3::gemma3(cfg, &mut spec)?,
        "Llama4ForCausalLM" => super::hf_llama4::llama4(cfg, &mut spec)?,
        super::hf_qwen3_next::QWEN3_NEXT => super::hf_qwen3_next::qwen3_next(cfg, &mut spec)?,
        _ => {
            // Qwen2 always has q/k/v biases; Llama, Mistral and Qwen3 only if
            // `attention_bias` says so.
            spec.qkv_bias =
                text_arch == "Qwen2ForCausalLM" || cfg.bool_or("attention_bias", false)?;
            // Mistral's `sliding_window` is not applied: SGLang serves `MistralForCausalLM`
            // as its `LlamaForCausalLM` (`models/mistral.py`), full attention on every layer;
            // `Phi3ForCausalLM` is that class too (`models/llama.py`), its fused qkv_proj /
            // gate_up_proj tensors the same matrices.
            spec.intermediate_size = cfg.u64("intermediate_size")?;
        }
    }
    Ok(spec)
}

/// The model's name: the last component of `_name_or_path`, else the folder of a `config.json`,
/// else the file's stem.
fn model_name(name_or_path: Option<&str>, origin: &Path) -> String {
    let from_hub = name_or_path
        .and_then(|s| s.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next())
        .filter(|s| !s.is_empty());
    if let Some(name) = from_hub {
        return name.to_string();
    }
    let folder = if origin.file_name().is_some_and(|f| f == "config.json") {
        let abs = origin
            .canonicalize()
            .unwrap_or_else(|_| origin.to_path_buf());
        abs.parent()
            .and_then(Path::file_name)
            .map(|f| f.to_string_lossy().into_owned())
    } else {
        None
    };
    folder
        .or_else(|| origin.file_stem().map(|f| f.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "model".to_string())
}

/// `org/name` on the Hub, as opposed to a local path.
pub(crate) fn looks_like_hub_id(s: &str) -> bool {
    let mut parts = s.split('/');
    matches!((parts.next(), parts.next(), parts.next()), (Some(org), Some(name), None)
        if !org.is_empty() && !name.is_empty() && !org.starts_with('.') && !s.contains('\\'))
}

/// `architectures[0]`, if servesim prices it; else why not (refused with its mechanism, or
/// unsupported).
fn architecture(cfg: &Config) -> Result<String> {
    let arch = match cfg.get("architectures") {
        None => return Err(cfg.missing("architectures")),
        Some(v) => v.as_array().and_then(|a| a.first()).and_then(Value::as_str),
    };
    match arch {
        Some(a) if SUPPORTED_ARCHITECTURES.contains(&a) => Ok(a.to_string()),
        Some(a) if refusal(a).is_some() => Err(Error::invalid(
            &cfg.source,
            "architectures",
            format!("`{a}` is not priced: {}", refusal(a).unwrap_or_default()),
        )),
        other => Err(Error::invalid(
            &cfg.source,
            "architectures",
            format!(
                "unsupported architecture {}; supported: {}",
                other.map_or("(none)".to_string(), |a| format!("`{a}`")),
                SUPPORTED_ARCHITECTURES.join(", ")
            ),
        )),
    }
}
