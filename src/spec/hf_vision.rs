//! Parameters of a multimodal wrapper's vision tower, counted in weight memory only: servesim
//! prices text-only benchmarks, so the tower never runs, but SGLang loads it. Counted exactly
//! where the config gives every size (Qwen3-VL, from SGLang's `models/qwen3_vl.py`; Gemma-3's
//! SigLIP tower, from `models/siglip.py` and `gemma3_mm.py`); otherwise left out with a note
//! that says so.
use super::hf_fields::{as_u64, Config};
use super::model::MAX_DIM;
use crate::error::{Error, Result};
use serde_json::Value;

/// (vision-tower parameters, a note when they are not counted) of `architecture`'s config;
/// `text_hidden` is the text decoder's width (a projector's output).
pub(super) fn vision_params(
    top: &Config,
    architecture: &str,
    text_hidden: u64,
) -> Result<(u64, Option<String>)> {
    // Qwen3.5's wrappers are Qwen3-VL's (`qwen3_5.py` 0.5.9: `Qwen3_5ForConditionalGeneration(
    // Qwen3VLForConditionalGeneration)`, vision config `Qwen3_5VisionConfig(Qwen3VLVisionConfig)`).
    if architecture.starts_with("Qwen3VL") || architecture.starts_with("Qwen3_5") {
        return Ok((qwen3_vl(top)?, None));
    }
    if architecture == "Gemma3ForConditionalGeneration" {
        return Ok((gemma3_siglip(top, text_hidden)?, None));
    }
    if architecture == "Llama4ForConditionalGeneration" {
        // Not loaded at all without --enable-multimodal (`super::hf_llama4`).
        return Ok((0, None));
    }
    let note = format!(
        "{architecture}: the vision tower's weights are not counted in weight memory (its \
         config does not give every size); the text decoder is priced for text-only requests"
    );
    Ok((0, Some(note)))
}

/// The `vision_config` of `top`, as its own [`Config`].
fn vision_config<'a>(top: &'a Config) -> Result<Config<'a>> {
    let v = top
        .get("vision_config")
        .and_then(Value::as_object)
        .ok_or_else(|| top.missing("vision_config"))?;
    Ok(Config {
        obj: v,
        outer: None,
        source: format!("{} (vision_config)", top.source),
    })
}

/// Checks that each size is at most [`MAX_DIM`] (so products below stay exact in u128).
fn bounded(vc: &Config, sizes: &[(&str, u64)]) -> Result<()> {
    match sizes.iter().find(|(_, size)| *size > MAX_DIM) {
        Some((key, _)) => Err(Error::invalid(
            &vc.source,
            *key,
            "is implausibly large (sizes ≤ 2^24, spatial_merge_size ≤ 64)",
        )),
        None => Ok(()),
    }
}

/// Gemma-3's vision side as SGLang builds it, loaded even for text-only serving
/// (`gemma3_mm.py` `Gemma3ForConditionalGeneration.__init__`, 0.4.6–0.5.23): a SigLIP tower
/// (`siglip.py` `SiglipVisionModel`: a biased `patch_size`² Conv2d over `num_channels`, a
/// position table of (`image_size` / `patch_size`)² rows, `num_hidden_layers` blocks of two
/// LayerNorms, biased qkv and output projections and a biased two-layer MLP of
/// `intermediate_size`, then a post LayerNorm; no pooling head) and the
/// `Gemma3MultiModalProjector` (`mm_input_projection_weight`, hidden × `text_hidden`, and an
/// RMSNorm of hidden). Missing keys take `SiglipVisionConfig`'s defaults (transformers 4.51.0).
fn gemma3_siglip(top: &Config, text_hidden: u64) -> Result<u64> {
    let vc = vision_config(top)?;
    let h = vc.u64_or("hidden_size", 768)?;
    let inter = vc.u64_or("intermediate_size", 3072)?;
    let depth = vc.u64_or("num_hidden_layers", 12)?;
    let channels = vc.u64_or("num_channels", 3)?;
    let image = vc.u64_or("image_size", 224)?;
    let patch = vc.u64_or("patch_size", 16)?.max(1);
    bounded(
        &vc,
        &[
            ("hidden_size", h),
            ("intermediate_size", inter),
            ("num_hidden_layers", depth),
            ("num_channels", channels),
            ("image_size", image),
            ("patch_size", patch),
        ],
    )?;
    // Every size ≤ 2^24: no product below exceeds 2^96, exact in u128.
    let (h, inter, t) = (h as u128, inter as u128, text_hidden.min(MAX_DIM) as u128);
    let positions = (image as u128 / patch as u128).pow(2);
    let patch_embed = channels as u128 * (patch as u128).pow(2) * h + h;
    let block = (3 * h * h + 3 * h) + (h * h + h) + (2 * h * inter + inter + h) + 4 * h;
    let total = patch_embed + positions * h + depth as u128 * block + 2 * h + (h * t + h);
    Ok(u64::try_from(total).unwrap_or(u64::MAX))
}

/// Qwen3-VL's vision tower (`Qwen3VLMoeVisionModel` in `qwen3_vl.py`): a Conv3d patch embed
/// (`in_channels` × `temporal_patch_size` × `patch_size`² → `hidden_size`, with bias), a
/// learned position table (`num_position_embeddings` × hidden), `depth` blocks of LayerNorm,
/// biased qkv and output projections and a biased two-layer MLP of `intermediate_size`, then
/// one patch merger plus one per `deepstack_visual_indexes` entry, each LayerNorm → Linear
/// (hidden·merge² → hidden·merge²) → Linear (→ `out_hidden_size`), both biased.
fn qwen3_vl(top: &Config) -> Result<u64> {
    let vc = vision_config(top)?;
    let h = vc.u64("hidden_size")?;
    let inter = vc.u64("intermediate_size")?;
    let depth = vc.u64("depth")?;
    let patch = vc.u64("patch_size")?;
    let temporal = vc.u64_or("temporal_patch_size", 2)?;
    let channels = vc.u64_or("in_channels", 3)?;
    let positions = vc.u64_or("num_position_embeddings", 0)?;
    let merge = vc.u64_or("spatial_merge_size", 2)?;
    let out = vc.u64("out_hidden_size")?;
    let deepstack = match vc.get("deepstack_visual_indexes") {
        None => 0,
        Some(v) => v
            .as_array()
            .filter(|a| a.iter().all(|x| as_u64(x).is_some()))
            .ok_or_else(|| vc.bad("deepstack_visual_indexes", "a list of layer indices", v))?
            .len() as u64,
    };
    bounded(
        &vc,
        &[
            ("hidden_size", h),
            ("intermediate_size", inter),
            ("depth", depth),
            ("patch_size", patch),
            ("temporal_patch_size", temporal),
            ("in_channels", channels),
            ("num_position_embeddings", positions),
            ("spatial_merge_size", merge.min(MAX_DIM) << 18),
            ("out_hidden_size", out),
        ],
    )?;
    // Every size ≤ 2^24 and merge ≤ 2^6, so no product below exceeds 2^120: exact in u128.
    let (h, inter) = (h as u128, inter as u128);
    let merged = h * (merge as u128).pow(2);
    let patch_embed = channels as u128 * temporal as u128 * (patch as u128).pow(2) * h + h;
    let block = (3 * h * h + 3 * h) + (h * h + h) + (2 * h * inter + inter + h) + 4 * h;
    let merger =
        |norm: u128| norm + (merged * merged + merged) + (merged * out as u128 + out as u128);
    let total = patch_embed
        + positions as u128 * h
        + depth as u128 * block
        + merger(2 * h)
        + deepstack as u128 * merger(2 * merged);
    Ok(u64::try_from(total).unwrap_or(u64::MAX))
}
