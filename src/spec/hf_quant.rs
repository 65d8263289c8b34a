//! The weight format of a Hugging Face checkpoint, from its `quantization_config`.
use super::hf_fields::Config;
use super::model::WeightFormat;
use crate::error::{Error, Result};
use serde_json::Value;

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
            format!("{what} is unsupported; supported: mxfp4, fp8, w8a8_int8, compressed-tensors with 8-bit int or float weights"),
        )
    };
    if method == "compressed-tensors" {
        return compressed_tensors(q).ok_or_else(|| unsupported(scheme_name(q)));
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
