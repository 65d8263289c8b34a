//! Reads a Hugging Face `config.json` straight into a [`ModelSpec`], for the architectures
//! servesim can price: Llama, Qwen2, Qwen3 (dense), Qwen3-MoE, DeepSeek-V2/V3 (MLA + MoE) and
//! gpt-oss. Defaults follow the `transformers` config classes of those architectures:
//! `head_dim` = hidden / heads, `num_key_value_heads` = `num_attention_heads`,
//! `tie_word_embeddings` = false. Things the reader deliberately ignores: RoPE scaling, norms,
//! Qwen2's `use_sliding_window` (false in the released Qwen2.5 configs), DeepSeek's MTP layer,
//! and any KV-cache quantisation (the KV cache is taken as bf16, `--kv-cache-dtype auto`).
use super::load::from_json_str;
use super::model::{KvDtype, Mla, ModelSpec, Moe, SlidingWindow, WeightFormat, MAX_LAYERS};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::path::Path;

/// The `architectures[0]` values the reader understands.
pub const SUPPORTED_ARCHITECTURES: &[&str] = &[
    "LlamaForCausalLM",
    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM",
    "DeepseekV2ForCausalLM",
    "DeepseekV3ForCausalLM",
    "GptOssForCausalLM",
    "LlamaForCausalLMEagle",
    "LlamaForCausalLMEagle3",
];

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
    let cfg = Config { obj, source };
    let architecture = cfg.architecture()?;
    let spec = build(&cfg, &architecture, origin)?;
    spec.validate(&cfg.source)?;
    Ok(spec)
}

/// A parsed config.json with typed, error-reporting accessors. JSON `null` counts as absent.
struct Config<'a> {
    obj: &'a Map<String, Value>,
    source: String,
}

impl Config<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    fn missing(&self, key: &str) -> Error {
        Error::invalid(&self.source, key, "missing from config.json")
    }

    /// A required non-negative integer.
    fn u64(&self, key: &str) -> Result<u64> {
        self.opt_u64(key)?.ok_or_else(|| self.missing(key))
    }

    fn u64_or(&self, key: &str, default: u64) -> Result<u64> {
        Ok(self.opt_u64(key)?.unwrap_or(default))
    }

    fn opt_u64(&self, key: &str) -> Result<Option<u64>> {
        self.get(key)
            .map(|v| as_u64(v).ok_or_else(|| self.bad(key, "a non-negative integer", v)))
            .transpose()
    }

    fn bool_or(&self, key: &str, default: bool) -> Result<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| self.bad(key, "true or false", v)),
        }
    }

    fn bad(&self, key: &str, expected: &str, got: &Value) -> Error {
        Error::invalid(&self.source, key, format!("must be {expected}, got {got}"))
    }

    fn architecture(&self) -> Result<String> {
        let arch = match self.get("architectures") {
            None => return Err(self.missing("architectures")),
            Some(v) => v.as_array().and_then(|a| a.first()).and_then(Value::as_str),
        };
        match arch {
            Some(a) if SUPPORTED_ARCHITECTURES.contains(&a) => Ok(a.to_string()),
            other => Err(Error::invalid(
                &self.source,
                "architectures",
                format!(
                    "unsupported architecture {}; supported: {}",
                    other.map_or("(none)".to_string(), |a| format!("`{a}`")),
                    SUPPORTED_ARCHITECTURES.join(", ")
                ),
            )),
        }
    }
}

/// A JSON number that is a non-negative integer (also `4096.0`).
fn as_u64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1e18)
            .map(|f| f as u64)
    })
}

fn build(cfg: &Config, architecture: &str, origin: &Path) -> Result<ModelSpec> {
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
        weights: weight_format(cfg)?,
        kv_cache_dtype: KvDtype::Bf16,
        // EAGLE3 heads carry their own reduced-vocabulary LM head.
        draft_vocab_size: cfg.opt_u64("draft_vocab_size")?,
    };
    match architecture {
        "Qwen3MoeForCausalLM" => qwen3_moe(cfg, &mut spec)?,
        "DeepseekV2ForCausalLM" | "DeepseekV3ForCausalLM" => deepseek(cfg, &mut spec)?,
        "GptOssForCausalLM" => gpt_oss(cfg, &mut spec)?,
        _ => {
            // Qwen2 always has q/k/v biases; Llama and Qwen3 only if `attention_bias` says so.
            spec.qkv_bias =
                architecture == "Qwen2ForCausalLM" || cfg.bool_or("attention_bias", false)?;
            spec.intermediate_size = cfg.u64("intermediate_size")?;
        }
    }
    Ok(spec)
}

/// Qwen3-MoE: layer `i` is MoE unless it is in `mlp_only_layers` or `(i + 1)` is not a multiple
/// of `decoder_sparse_step`. Only "the first k layers dense, the rest MoE" is representable.
fn qwen3_moe(cfg: &Config, spec: &mut ModelSpec) -> Result<()> {
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
fn deepseek(cfg: &Config, spec: &mut ModelSpec) -> Result<()> {
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
    let expert_width = cfg.u64("moe_intermediate_size")?;
    let dense_layers = cfg.u64_or("first_k_dense_replace", 0)?;
    spec.intermediate_size = dense_width(cfg, dense_layers)?;
    spec.moe = Some(Moe {
        num_experts: cfg.u64("n_routed_experts")?,
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
fn gpt_oss(cfg: &Config, spec: &mut ModelSpec) -> Result<()> {
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
        });
    }
    spec.moe = Some(Moe {
        num_experts: cfg.u64("num_local_experts")?,
        experts_per_token: cfg.u64("num_experts_per_tok")?,
        expert_intermediate_size: spec.intermediate_size,
        shared_expert_intermediate_size: 0,
        dense_layers: 0,
        expert_bias: true,
    });
    Ok(())
}

/// The checkpoint's weight format from `quantization_config` (bf16 when absent).
fn weight_format(cfg: &Config) -> Result<WeightFormat> {
    const FIELD: &str = "quantization_config.quant_method";
    let Some(q) = cfg.get("quantization_config") else {
        return Ok(WeightFormat::Bf16);
    };
    let method = q
        .get("quant_method")
        .and_then(Value::as_str)
        .ok_or_else(|| cfg.missing(FIELD))?;
    let unsupported = |what: String| {
        Error::invalid(
            &cfg.source,
            FIELD,
            format!("{what} is unsupported; supported: mxfp4, fp8, w8a8_int8, compressed-tensors with 8-bit int or float weights"),
        )
    };
    if method == "compressed-tensors" {
        return compressed_tensors(q)
            .ok_or_else(|| unsupported("this compressed-tensors scheme".into()));
    }
    WeightFormat::parse(method)
        .filter(|f| *f != WeightFormat::Bf16)
        .ok_or_else(|| unsupported(format!("`{method}`")))
}

/// compressed-tensors: 8-bit int weights with 8-bit int activations → W8A8 INT8; 8-bit float
/// weights → FP8. Every config group must agree.
fn compressed_tensors(q: &Value) -> Option<WeightFormat> {
    let groups = q.get("config_groups")?.as_object()?;
    let mut format = None;
    for group in groups.values() {
        let bits_type = |key: &str| {
            let t = group.get(key)?;
            Some((
                t.get("num_bits")?.as_u64()?,
                t.get("type")?.as_str()?.to_string(),
            ))
        };
        let this = match (bits_type("weights")?, bits_type("input_activations")) {
            ((8, w), Some((8, a))) if w == "int" && a == "int" => WeightFormat::W8a8Int8,
            ((8, w), _) if w == "float" => WeightFormat::Fp8,
            _ => return None,
        };
        if format.replace(this).is_some_and(|f| f != this) {
            return None;
        }
    }
    format
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
fn looks_like_hub_id(s: &str) -> bool {
    let mut parts = s.split('/');
    matches!((parts.next(), parts.next(), parts.next()), (Some(org), Some(name), None)
        if !org.is_empty() && !name.is_empty() && !org.starts_with('.') && !s.contains('\\'))
}
