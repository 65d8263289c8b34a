//! The weight format of a Hugging Face checkpoint, from its `quantization_config`.
use super::hf_fields::Config;
use super::model::WeightFormat;
use crate::error::{Error, Result};
use serde_json::Value;

/// The first SGLang release that serves int4 group-32 experts (`WeightFormat::W4a16Int4`) with
/// flashinfer's TRT-LLM mxint4 MoE on sm100 (`cost::mxfp4::Mxfp4Kernel::SglangTrtllmMxint4`;
/// server_args.py `is_kimi_k2_k25_thinking_int4` in the 0.5.10 and 0.5.14 wheels, absent in
/// 0.5.9, which runs Marlin there).
pub const TRTLLM_MXINT4_FROM: super::version::Version = super::version::Version::new(0, 5, 10);

/// The checkpoint's weight format from `quantization_config` (bf16 when absent).
pub(super) fn weight_format(cfg: &Config) -> Result<WeightFormat> {
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
            format!("{what} is unsupported; supported: mxfp4, fp8, w8a8_int8, modelopt NVFP4, compressed-tensors with 8-bit int or float weights, or int4 group-32 weight-only routed experts"),
        )
    };
    if method == "compressed-tensors" {
        return compressed_tensors(q).ok_or_else(|| unsupported(scheme_name(q)));
    }
    // NVIDIA ModelOpt (`quant_method: modelopt`): SGLang reads `quant_algo` (FP8 or NVFP4,
    // ModelOptFp4Config.from_config, sglang 0.5.9 modelopt_quant.py:1053-1058); NVFP4 only here.
    if method == "modelopt" {
        return match q.get("quant_algo").and_then(Value::as_str) {
            Some("NVFP4") => Ok(WeightFormat::Nvfp4),
            other => Err(unsupported(format!(
                "modelopt `{}`",
                other.unwrap_or("(no quant_algo)")
            ))),
        };
    }
    WeightFormat::parse(method)
        .filter(|f| *f != WeightFormat::Bf16)
        .ok_or_else(|| unsupported(format!("`{method}`")))
}

/// compressed-tensors: 8-bit int weights with 8-bit int activations → W8A8 INT8; 8-bit float
/// weights → FP8; symmetric int4 weights in groups of 32 with unquantised activations, on the
/// routed experts only ([`experts_only`]) → W4A16 INT4 (Kimi-K2.5). Every config group must
/// agree.
fn compressed_tensors(q: &Value) -> Option<WeightFormat> {
    if int4_group32_weight_only(q) && experts_only(q) {
        return Some(WeightFormat::W4a16Int4);
    }
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

/// Every config group stores symmetric int4 weights in groups of 32 (`strategy` "group",
/// `group_size` 32) and leaves the activations unquantised: 4 bits + one 16-bit scale per 32.
fn int4_group32_weight_only(q: &Value) -> bool {
    let Some(groups) = q.get("config_groups").and_then(Value::as_object) else {
        return false;
    };
    !groups.is_empty()
        && groups.values().all(|g| {
            let w = &g["weights"];
            w["num_bits"].as_u64() == Some(4)
                && w["type"].as_str() == Some("int")
                && w["strategy"].as_str() == Some("group")
                && w["group_size"].as_u64() == Some(32)
                && w["symmetric"].as_bool() == Some(true)
                && g.get("input_activations").map_or(true, Value::is_null)
        })
}

/// `ignore` keeps attention, shared experts and dense MLPs unquantised (Kimi-K2.5's
/// `re:.*self_attn.*`, `re:.*shared_experts.*`, `re:.*mlp\.(gate|up|gate_up|down)_proj.*`), so
/// only the routed experts are int4, as `WeightFormat::W4a16Int4` prices them.
fn experts_only(q: &Value) -> bool {
    let Some(ignore) = q.get("ignore").and_then(Value::as_array) else {
        return false;
    };
    let names: Vec<&str> = ignore.iter().filter_map(Value::as_str).collect();
    ["self_attn", "shared_experts", "mlp"]
        .iter()
        .all(|part| names.iter().any(|n| n.contains(part)))
}

/// Names a compressed-tensors scheme servesim does not price, by its first group's weight and
/// activation bits (`int4 weights, 16-bit activations` is W4A16, as Kimi-K2.5's experts).
fn scheme_name(q: &Value) -> String {
    let group = q
        .get("config_groups")
        .and_then(Value::as_object)
        .and_then(|g| g.values().next());
    let part = |key: &str| {
        let t = group?.get(key).filter(|t| !t.is_null())?;
        Some(format!(
            "{}{}",
            t.get("type").and_then(Value::as_str).unwrap_or("?"),
            t.get("num_bits").and_then(Value::as_u64).unwrap_or(0)
        ))
    };
    match (part("weights"), part("input_activations")) {
        (Some(w), a) => format!(
            "compressed-tensors {w} weights with {} activations",
            a.unwrap_or_else(|| "unquantised (16-bit)".into())
        ),
        (None, _) => "this compressed-tensors scheme".into(),
    }
}

/// The KV cache dtype a checkpoint's quantization config asks `--kv-cache-dtype auto` for: FP8
/// when ModelOpt states `kv_cache_quant_algo: FP8` or a `kv_cache_scheme` of 8-bit floats (SGLang
/// maps both to FP8, sglang 0.5.9 modelopt_quant.py:1005-1024, model_runner.py:1669-1686), else
/// bf16.
pub(super) fn kv_cache_dtype(cfg: &Config) -> super::model::KvDtype {
    use super::model::KvDtype;
    let Some(q) = cfg.get("quantization_config") else {
        return KvDtype::Bf16;
    };
    let algo_fp8 = q
        .get("kv_cache_quant_algo")
        .and_then(Value::as_str)
        .is_some_and(|a| a.eq_ignore_ascii_case("fp8"));
    let scheme = q.get("kv_cache_scheme");
    let scheme_fp8 = scheme
        .and_then(|s| s.get("num_bits"))
        .and_then(Value::as_u64)
        == Some(8)
        && scheme.and_then(|s| s.get("type")).and_then(Value::as_str) == Some("float");
    if algo_fp8 || scheme_fp8 {
        KvDtype::Fp8
    } else {
        KvDtype::Bf16
    }
}
