//! Gemma-3 (`Gemma3ForCausalLM`, and the text decoder of `Gemma3ForConditionalGeneration`) in
//! the Hugging Face config reader ([`super::hf_config`]), as SGLang's `models/gemma3_causal.py`
//! builds it.
//!
//! - **Defaults.** The published multimodal configs give only the `text_config` keys that differ
//!   from `transformers`' `Gemma3TextConfig` defaults (gemma-3-4b-it's names no heads, head_dim,
//!   vocabulary or context), so the reader fills the missing ones from that class first
//!   ([`TEXT_DEFAULTS`], read in transformers 4.51.0 `models/gemma3/configuration_gemma3.py`).
//! - **Sliding window.** Layer `i` attends to a `sliding_window`-token window unless
//!   `(i + 1) % sliding_window_pattern == 0` (SGLang 0.4.6 `Gemma3Attention`:
//!   `bool((layer_id + 1) % config.sliding_window_pattern)`; 0.5.1+ reads the same rule from
//!   `config.layer_types`, which the reader honours when the config lists it).
//! - **MLP.** GELU-tanh gated (`Gemma3MLP`: `gate_up_proj` + `down_proj`, three matrices), no
//!   biases (`attention_bias` false): the dense shape servesim prices for Llama.
//! - **Embedding.** Tied to the LM head by default (`tie_word_embeddings` true), and a plain
//!   `nn.Embedding` (`Gemma3TextScaledWordEmbedding`), not vocab-parallel: replicated on
//!   every TP rank ([`ModelSpec::replicated_embedding`]).
//!
//! The vision tower of the multimodal build is counted in [`super::hf_vision`].
use super::hf_fields::Config;
use super::model::{ModelSpec, SlidingWindow, WindowKind};
use crate::error::Result;
use serde_json::{Map, Value};

/// `Gemma3TextConfig.__init__` defaults (transformers 4.51.0) of the keys servesim reads.
const TEXT_DEFAULTS: &[(&str, u64)] = &[
    ("vocab_size", 262_208),
    ("hidden_size", 2304),
    ("intermediate_size", 9216),
    ("num_hidden_layers", 26),
    ("num_attention_heads", 8),
    ("num_key_value_heads", 4),
    ("head_dim", 256),
    ("max_position_embeddings", 131_072),
    ("sliding_window", 4096),
    ("sliding_window_pattern", 6),
];

/// `obj` with every key of [`TEXT_DEFAULTS`] it lacks (or sets to null) filled in, and
/// `tie_word_embeddings` true unless it says otherwise.
pub(super) fn with_text_defaults(obj: &Map<String, Value>) -> Map<String, Value> {
    let mut out = obj.clone();
    for (key, v) in TEXT_DEFAULTS {
        if out.get(*key).map_or(true, Value::is_null) {
            out.insert((*key).to_string(), Value::from(*v));
        }
    }
    if out.get("tie_word_embeddings").map_or(true, Value::is_null) {
        out.insert("tie_word_embeddings".into(), Value::Bool(true));
    }
    out
}

/// Gemma-3's layer rules on a spec the generic reader has filled (`cfg` already carries the
/// defaults of [`with_text_defaults`]).
pub(super) fn gemma3(cfg: &Config, spec: &mut ModelSpec) -> Result<()> {
    spec.qkv_bias = cfg.bool_or("attention_bias", false)?;
    spec.replicated_embedding = true;
    spec.intermediate_size = cfg.u64("intermediate_size")?;
    let sliding_layers = match cfg.get("layer_types") {
        Some(v) => v
            .as_array()
            .and_then(|a| a.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
            .ok_or_else(|| cfg.bad("layer_types", "a list of strings", v))?
            .iter()
            .take(spec.num_layers as usize)
            .filter(|t| **t == "sliding_attention")
            .count() as u64,
        None => {
            let pattern = cfg.u64("sliding_window_pattern")?;
            if pattern == 0 {
                return Err(cfg.bad("sliding_window_pattern", "≥ 1", &Value::from(0)));
            }
            spec.num_layers - spec.num_layers / pattern
        }
    };
    if sliding_layers > 0 {
        spec.sliding_window = Some(SlidingWindow {
            window_tokens: cfg.u64("sliding_window")?,
            layers: sliding_layers,
            kind: WindowKind::Sliding,
        });
    }
    Ok(())
}
