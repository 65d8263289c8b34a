//! What a checkpoint's name says beyond the bundled model it resolves to. A log's
//! `--model-path` names a checkpoint (`Qwen/Qwen3-32B-FP8`,
//! `meta-llama/Llama-3.3-70B-Instruct`), not a bundled model. [`super::bundled::load_model`]
//! maps it to the bundled model or config whose name it starts with, or to one of the
//! same-architecture builds listed here. This module then reads what the rest of the name
//! states:
//!
//! - **Weight format.** A `-FP8` checkpoint is priced as FP8, and a `-w8a8` / `-INT8` one as
//!   W8A8 INT8 (SGLang reads the format from the checkpoint's `quantization_config`, so the
//!   name stands in for the config). Before this, the name was dropped silently and the bf16
//!   base priced every such run at twice its weight bytes.
//! - **NVFP4.** `-NVFP4` (any publisher) and `-FP4` on NVIDIA's own ids are ModelOpt NVFP4
//!   builds, priced as NVFP4 with their FP8 KV cache ([`super::nvfp4`]); another publisher's
//!   bare `-FP4` is refused.
//! - **Refusals.** Formats servesim does not price (AWQ, GPTQ, bitsandbytes, GGUF, …) are
//!   refused in one line. They are not priced as bf16.
//! - **Notes.** Each choice becomes a model note, printed with every run.
//!
//! A real `config.json` (a path) always wins: this is only for names with no file.
use super::model::{ModelSpec, WeightFormat};
use crate::error::{Error, Result};

/// Checkpoints with a bundled model's architecture under another name: (name lower-cased,
/// without its organisation; the bundled model or config short name; why it is the same
/// architecture). A name matches itself or itself followed by `-` (so `-FP8` and similar
/// suffixes still read).
const SAME_ARCHITECTURE: &[(&str, &str, &str)] = &[
    (
        "llama-3.3-70b-instruct",
        "llama-3.1-70b",
        "Llama 3.3 70B keeps Llama 3.1 70B's architecture: vocab 128,256, hidden 8192, \
         MLP 28,672, 80 layers, 64 heads / 8 KV heads, untied, 131,072 context (the two \
         models' tables in oumi-ai/oumi configs/recipes/llama3_1 and llama3_3 READMEs)",
    ),
    (
        "deepseek-r1-distill-llama-70b",
        "llama-3.1-70b",
        "DeepSeek-R1's model card: distilled from Llama-3.3-70B-Instruct (a fine-tune keeps \
         its base's architecture)",
    ),
    (
        "deepseek-r1-distill-llama-8b",
        "llama-3.1-8b",
        "DeepSeek-R1's model card: distilled from Llama-3.1-8B",
    ),
    (
        "deepseek-r1-distill-qwen-32b",
        "qwen2.5-32b",
        "DeepSeek-R1's model card: distilled from Qwen2.5-32B",
    ),
    (
        "deepseek-r1-distill-qwen-7b",
        "qwen2.5-7b",
        "DeepSeek-R1's model card: distilled from Qwen2.5-Math-7B, which has Qwen2.5-7B's \
         layer shapes",
    ),
    (
        "deepseek-r1-distill-qwen-1.5b",
        "qwen2.5-1.5b",
        "DeepSeek-R1's model card: distilled from Qwen2.5-Math-1.5B, which has \
         Qwen2.5-1.5B's layer shapes",
    ),
    (
        "deepseek-v3.1",
        "deepseek-v3",
        "DeepSeek-V3.1's model card: post-trained on the DeepSeek-V3 base checkpoint \
         (DeepseekV3ForCausalLM, same shapes)",
    ),
    (
        "mixtral-8x7b-instruct-v0.1",
        "mixtral-8x7b-v0.1",
        "Mistral's instruction fine-tune of Mixtral-8x7B-v0.1",
    ),
    (
        "mixtral-8x22b-instruct-v0.1",
        "mixtral-8x22b-v0.1",
        "Mistral's instruction fine-tune of Mixtral-8x22B-v0.1",
    ),
    (
        "qwen3-coder-30b-a3b-instruct",
        "qwen3-30b-a3b",
        "Qwen3-Coder-30B-A3B's model card: 30.5B total / 3.3B active, 48 layers, 32 / 4 \
         heads, 128 experts with 8 active, as Qwen3-30B-A3B (its context is longer)",
    ),
    (
        "minimax-m2",
        "minimax-m2.5",
        "MiniMax-M2's model card: 230B total / 10B active parameters, MiniMaxM2ForCausalLM, the \
         architecture and sizes of the bundled M2.5 / M2.7 configs",
    ),
    (
        "minimax-m2.1",
        "minimax-m2.5",
        "MiniMax-M2.1 keeps MiniMax-M2's architecture (230B total / 10B active, \
         MiniMaxM2ForCausalLM), as the bundled M2.5 does",
    ),
    (
        "llama-2-7b-chat-hf",
        "llama-2-7b-hf",
        "Meta's chat fine-tune of Llama-2-7b",
    ),
    (
        "llama-2-13b-chat-hf",
        "llama-2-13b-hf",
        "Meta's chat fine-tune of Llama-2-13b",
    ),
    (
        "llama-2-70b-chat-hf",
        "llama-2-70b-hf",
        "Meta's chat fine-tune of Llama-2-70b",
    ),
    (
        "glm-4.7",
        "glm-4.6",
        "GLM-4.7 keeps GLM-4.5/4.6's layer stack and GLM-4.6's 202,752-token context \
         (THUDM/slime converts GLM-4.7 with its glm4.5-355B-A32B.sh Megatron args, \
         docs/en/examples/glm4.7-355B-A32B.md; GLM-4.7's config as quoted in alibaba/rtp-llm's \
         glm4_moe tests: 92 layers, hidden 5120, 96 / 8 heads of 128, 160 experts of 1536 top 8, \
         1 shared, 3 dense, max_position_embeddings 202752; xorbitsai/inference glm-4.7.rst: \
         context 202752)",
    ),
    (
        "llama-3-8b",
        "llama-3.1-8b",
        "Meta-Llama-3-8B-Instruct's config (dumped in Retruth/deontic \
         nlp_models/llama3/README.md @a77cf87) has Llama 3.1 8B's shapes: hidden 4096, MLP \
         14,336, 32 layers, 32 / 8 heads of 128, vocab 128,256, untied; its 8192-token context \
         is its own (spec::checkpoint_context)",
    ),
    (
        "llama-3-70b",
        "llama-3.1-70b",
        "Meta-Llama-3-70B's params.json (meta-llama/llama3 @66cd498: dim 8192, 80 layers, 64 / \
         8 heads, vocab 128,256, ffn_dim_multiplier 1.3 and multiple_of 4096, i.e. an MLP of \
         28,672) is Llama 3.1 70B's stack; its 8192-token context is its own \
         (spec::checkpoint_context)",
    ),
    (
        "qwq-32b",
        "qwen2.5-32b",
        "Qwen/QwQ-32B's config (copied at huggingface.co/unsloth/QwQ-32B config.json @403266f, \
         _name_or_path Qwen/QwQ-32B) has Qwen2.5-32B's sizes: Qwen2ForCausalLM, hidden 5120, \
         MLP 27,648, 64 layers, 40 / 8 heads, vocab 152,064, untied, 131,072 positions, \
         use_sliding_window false (QwQ-32B-Preview the same, with its own 32,768 context)",
    ),
    (
        "qwen2.5-coder-32b",
        "qwen2.5-32b",
        "Qwen/Qwen2.5-Coder-32B-Instruct's config (copied in huggingface.co/ai-team-20/\
         qwen3-coder-480b-3 commit 6e6b0cb) has Qwen2.5-32B's sizes: hidden 5120, MLP 27,648, 64 \
         layers, 40 / 8 heads, vocab 152,064, untied; its 32,768-token context is its own \
         (spec::checkpoint_context)",
    ),
    (
        "qwen3.6-27b",
        "qwen3.5-27b",
        "nvidia/Qwen3.6-27B-NVFP4's config.json (aiconfigurator-core 0.12.0 model_configs): \
         every text_config and vision_config size equals Qwen3.5-27B's (64 layers, \
         full_attention_interval 4, hidden 5120, 24 / 4 heads of 256, MLP 17,408, GDN 16 / 48 \
         heads of 128, vocab 248,320); it adds output_gate_type swish, the activation of the \
         GDN output's gated RMSNorm (sglang qwen3_5.py; silu is swish), and its quantization",
    ),
    (
        "qwen3.6-35b-a3b",
        "qwen3.5-35b-a3b",
        "nvidia/Qwen3.6-35B-A3B-NVFP4's config.json (aiconfigurator-core 0.12.0 \
         model_configs): every text_config and vision_config size equals Qwen3.5-35B-A3B's (40 \
         layers, hidden 2048, 256 experts of 512 top 8, one shared expert of 512, vocab \
         248,320); only its quantization differs",
    ),
    (
        "mistral-7b-instruct-v0.1",
        "mistral-7b-v0.1",
        "Mistral's instruction fine-tune of Mistral-7B-v0.1 (its model card)",
    ),
    (
        "mistral-7b-instruct-v0.2",
        "mistral-7b-v0.1",
        "Mistral-7B-v0.2 has v0.1's shapes (dim 4096, 32 layers, 32 / 8 heads of 128, MLP \
         14,336, vocab 32,000: edadaltocg/mistral-src-finetune and riccardomusmeci/mlx-llm \
         configs); its rope_theta and sliding_window null differ, and SGLang applies no \
         sliding window to MistralForCausalLM either way (models/mistral.py)",
    ),
    (
        "mistral-7b-instruct-v0.3",
        "mistral-7b-v0.3",
        "Mistral's model card: an instruct fine-tune of Mistral-7B-v0.3",
    ),
    (
        "kimi-k2.6-nvfp4",
        "kimi-k2.5-nvfp4",
        "nvidia/Kimi-K2.6-NVFP4's config.json (aiconfigurator-core 0.12.0 model_configs): every \
         text_config and vision_config size equals Kimi-K2.5's (61 layers, MLA, 384 experts of \
         2048 top 8, vocab 163,840); only its eos token and quantization differ",
    ),
    (
        "mistral-small-24b-base-2501",
        "mistral-small-24b-instruct-2501",
        "Mistral-Small-24B-Instruct-2501 is the instruction fine-tune of \
         Mistral-Small-24B-Base-2501; the base's config (copied in huggingface.co/estrogen/\
         Mistral-Small-24b-Sertraline-0304-eval-template) has the same sizes",
    ),
    (
        "mistral-nemo-instruct-2407",
        "mistral-nemo-base-2407",
        "Mistral's instruction fine-tune of Mistral-Nemo-Base-2407 (same layer shapes; the \
         base's 128,000-token context is used)",
    ),
];

/// Checkpoints whose names start with a bundled model's (or a same-architecture build's) name
/// but that are other models, with what they are: refused by name rather than priced as the
/// model their name starts with.
const OTHER_MODELS: &[(&str, &str)] = &[
    (
        "phi-4-mini",
        "Phi-4-mini is another, smaller model than phi-4 (14B), not its layer stack",
    ),
    (
        "phi-4-multimodal",
        "Phi-4-multimodal is another model (a smaller decoder with vision and audio encoders), \
         not phi-4's layer stack",
    ),
    (
        "phi-4-reasoning",
        "Phi-4-reasoning is phi-4 fine-tuned with its own context length, which servesim has \
         no source for",
    ),
    (
        "glm-4.7-flash",
        "GLM-4.7-Flash is another model (Glm4MoeLiteForCausalLM: 30B-A3B with MLA attention, 47 \
     layers, 64 experts), not GLM-4.7's layer stack",
    ),
];

/// Checkpoint names (lower-cased, no organisation; builds such as `-exp`, `-fp8` included) of
/// architectures servesim refuses, with that architecture: refused by name with the mechanism
/// ([`super::hf_refuse`]) instead of "not bundled", since a config.json would be refused too.
/// DeepSeek-V3.2 and GLM-5 from aiconfigurator 0.10.0's `model_configs` (`architectures`).
const REFUSED_BY_NAME: &[(&str, &str)] = &[
    ("deepseek-v3.2", "DeepseekV32ForCausalLM"),
    // google--gemma-4-26B-A4B and nvidia--Gemma-4-31B-IT-NVFP4 in aiconfigurator-core 0.12.0.
    ("gemma-4", "Gemma4ForConditionalGeneration"),
    ("gemma-2", "Gemma2ForCausalLM"),
    ("glm-5", "GlmMoeDsaForCausalLM"),
    ("minimax-m3", "MiniMaxM3ForCausalLM"),
];

/// The architecture and the reason servesim refuses the checkpoint `name` (lower-cased, no
/// organisation), when its name says it is one of [`REFUSED_BY_NAME`].
pub fn refused_by_name(name: &str) -> Option<(&'static str, &'static str)> {
    let (_, arch) = REFUSED_BY_NAME
        .iter()
        .find(|(base, _)| names_build_of(name, base))?;
    Some((arch, super::hf_refuse::refusal(arch)?))
}

/// Why `name` (lower-cased, no organisation) is not the model its name starts with, when it is
/// one of [`OTHER_MODELS`].
pub fn other_model(name: &str) -> Option<&'static str> {
    OTHER_MODELS
        .iter()
        .find(|(other, _)| names_build_of(name, other))
        .map(|(_, why)| *why)
}

/// True when `name` is `base` itself or `base` followed by `-` and more.
pub fn names_build_of(name: &str, base: &str) -> bool {
    name == base || name.strip_prefix(base).is_some_and(|r| r.starts_with('-'))
}

/// A same-architecture build `name` (lower-cased, no organisation) is: the name to resolve in
/// its place (the bundled name followed by the rest of `name`) and a note naming the source.
pub fn same_architecture(name: &str) -> Option<(String, String)> {
    let (alias, target, why) = SAME_ARCHITECTURE
        .iter()
        .filter(|(alias, _, _)| names_build_of(name, alias))
        .max_by_key(|(alias, _, _)| alias.len())?;
    let rest = &name[alias.len()..];
    let note = format!("`{name}` is priced with `{target}`'s architecture: {why}");
    Some((format!("{target}{rest}"), note))
}

/// Name tokens of weight formats servesim does not price.
const UNPRICED: &[(&str, &str)] = &[
    ("awq", "AWQ (4-bit weights)"),
    ("gptq", "GPTQ (4/8-bit weights)"),
    ("int4", "INT4 weights"),
    ("w4a16", "W4A16 (4-bit weights)"),
    ("w4a8", "W4A8 (4-bit weights)"),
    ("w8a16", "W8A16 (8-bit weights, 16-bit activations)"),
    ("bnb", "bitsandbytes"),
    ("4bit", "4-bit weights"),
    ("8bit", "8-bit bitsandbytes weights"),
    ("gguf", "GGUF"),
    ("exl2", "EXL2"),
    ("hqq", "HQQ"),
    ("aqlm", "AQLM"),
];

/// The weight format the tokens of `suffix` (the part of a checkpoint name after its base
/// model's) state: `None` when they state none.
pub fn format_in_suffix(
    suffix: &str,
    is_moe: bool,
) -> std::result::Result<Option<WeightFormat>, String> {
    let lower = suffix.to_ascii_lowercase();
    let tokens: Vec<&str> = lower
        .split(['-', '.', '_'])
        .filter(|t| !t.is_empty())
        .collect();
    if let Some((_, what)) = UNPRICED.iter().find(|(t, _)| tokens.contains(t)) {
        return Err(format!(
            "the name states {what}, a weight format servesim does not price (it prices {})",
            WeightFormat::NAMES
        ));
    }
    let has = |t: &str| tokens.contains(&t);
    Ok(if has("mxfp4") {
        if !is_moe {
            return Err(
                "the name states MXFP4, which servesim prices on MoE experts only".to_string(),
            );
        }
        Some(WeightFormat::Mxfp4)
    } else if has("fp8") {
        Some(WeightFormat::Fp8)
    } else if has("w8a8") || has("int8") {
        Some(WeightFormat::W8a8Int8)
    } else if has("bf16") {
        Some(WeightFormat::Bf16)
    } else {
        None
    })
}

/// Applies what `suffix` states to `model`, resolved from the checkpoint `id`: the weight format
/// (with a note when it differs from the bundled model's), or a one-line refusal.
pub fn apply_suffix(model: &mut ModelSpec, id: &str, suffix: &str) -> Result<()> {
    let lower = suffix.to_ascii_lowercase();
    let tokens: Vec<&str> = lower.split(['-', '.', '_']).collect();
    match super::nvfp4::named(id, &tokens) {
        Some(true) => {
            super::nvfp4::apply_name(model, id);
            return Ok(());
        }
        Some(false) => {
            return Err(Error::Msg(format!(
                "model `{id}`: the name states FP4 outside NVIDIA's own NVFP4 builds, a format \
                 servesim cannot tell from the name (it prices {}); pass its config.json",
                WeightFormat::NAMES
            )))
        }
        None => {}
    }
    let format = format_in_suffix(suffix, model.moe.is_some())
        .map_err(|why| Error::Msg(format!("model `{id}`: {why}; pass its config.json to be told exactly, or --quantization to price it as one of those")))?;
    if let Some(format) = format.filter(|f| *f != model.weights) {
        model.notes.push(format!(
            "`{id}`: weights priced as {} from the checkpoint's name (`{}`'s own format is {}); \
             its config.json's quantization_config decides the exact scheme",
            format.name(),
            model.name,
            model.weights.name(),
        ));
        model.weights = format;
        if format == WeightFormat::Fp8 && model.architecture == "Glm4MoeForCausalLM" {
            model.notes.push(
                "GLM-4.5/4.6/4.7 FP8 checkpoints are per-channel FP8, not 128×128 blocks (the \
                 fused-MoE files SGLang tunes for them carry no block_shape): the experts are \
                 priced as tuned per-channel kernels; measured fp8_block GEMM rows, where a \
                 table has them, stand in for the linear layers"
                    .to_string(),
            );
        }
    }
    Ok(())
}

/// NVIDIA ModelOpt builds whose `hf_quant_config.json` states `quant_algo: MIXED_PRECISION`
/// (aiconfigurator-core 0.12.0 model_configs, `nvidia--Qwen3.6-27B-NVFP4` and
/// `nvidia--Qwen3.6-35B-A3B-NVFP4`): FP8 attention and gated delta-net projections, NVFP4
/// MLP / experts and LM head. Names lower-cased, without the organisation.
const MIXED_PRECISION_BUILDS: &[&str] = &["qwen3.6-27b-nvfp4", "qwen3.6-35b-a3b-nvfp4"];

/// Why the checkpoint `last` (lower-cased, no organisation) is refused, when it is one of
/// [`MIXED_PRECISION_BUILDS`]: its linear layers mix FP8 and NVFP4, and [`crate::spec::model::WeightFormat::Nvfp4`]
/// prices every linear layer as NVFP4 (the config.json route refuses `MIXED_PRECISION` too).
pub fn mixed_precision(last: &str) -> Option<&'static str> {
    MIXED_PRECISION_BUILDS
        .iter()
        .any(|b| names_build_of(last, b))
        .then_some(
            "an NVIDIA ModelOpt MIXED_PRECISION build (its hf_quant_config.json: attention and \
             gated delta-net projections FP8, MLP / experts and LM head W4A16_NVFP4); servesim \
             prices NVFP4 on every linear layer only (4.5 bits a weight, not FP8's 8 on its \
             attention)",
        )
}
