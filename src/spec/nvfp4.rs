//! NVFP4 checkpoints (NVIDIA ModelOpt `quant_algo: NVFP4`, `WeightFormat::Nvfp4`): where SGLang
//! runs them and what their KV cache defaults to.
//!
//! - **GPUs.** SGLang's `ModelOptFp4Config.get_min_capability()` returns 100 and its NVFP4 MoE
//!   method raises "Current platform does not support NVFP4 quantization. Please use Blackwell
//!   and above." unless `is_blackwell_supported()` (compute capability major 10, 11 or 12 with
//!   CUDA ≥ 12.8): sglang 0.5.9 `layers/quantization/modelopt_quant.py:951-954, 1334-1339`,
//!   `utils/common.py:246-252`. So sm100 (B200, B300, GB200) and sm120 (RTX PRO 6000) run it;
//!   Ampere, Ada, Hopper and Ascend are refused here in one line.
//! - **KV cache.** Every NVIDIA NVFP4 `hf_quant_config.json` aiconfigurator 0.10.0 bundles (7 of
//!   7: DeepSeek-V3.1, GLM-5, MiniMax-M2.5/M2.7, Nemotron-3 Super/Ultra, Qwen3-235B-A22B) states
//!   `kv_cache_quant_algo: FP8`, and with `--kv-cache-dtype auto` SGLang 0.5.4+ then stores the
//!   KV cache as FP8 E4M3 (`ModelRunner.configure_kv_cache_dtype`, model_runner.py:1669-1686 in
//!   0.5.9; 0.5.4:1612, 0.5.6:1633); 0.5.2 keeps the model dtype (model_runner.py:1231-1232).
use super::hardware::{Arch, HardwareProfile};
use super::model::{KvDtype, ModelSpec, WeightFormat};
use super::version::Version;
use crate::error::{Error, Result};

/// The first SGLang release whose `--kv-cache-dtype auto` follows the checkpoint's
/// `kv_cache_quant_algo` (0.5.4 wheel; absent in 0.5.2).
pub const KV_FROM_CHECKPOINT: Version = Version::new(0, 5, 4);

/// Refuses NVFP4 weights on `hw` unless SGLang runs them there (Blackwell: sm100 or sm120).
pub fn check_gpu(model: &str, hw: &HardwareProfile) -> Result<()> {
    if matches!(hw.arch, Arch::Blackwell | Arch::Sm120) {
        return Ok(());
    }
    Err(Error::invalid(
        "--hardware",
        "hardware",
        format!(
            "{model}: NVFP4 weights run on Blackwell only (SGLang's ModelOptFp4Config needs \
             compute capability 100 and its FP4 MoE raises \"Please use Blackwell and above\": \
             sglang 0.5.9 layers/quantization/modelopt_quant.py:952-954, 1334-1339), not on {}",
            hw.name
        ),
    ))
}

/// What `--kv-cache-dtype auto` resolves to for `model` served as `weights` by SGLang
/// `version`: the checkpoint's FP8 KV cache from 0.5.4 on, the model dtype before.
pub fn auto_kv(model: &ModelSpec, weights: WeightFormat, version: Version) -> KvDtype {
    if weights == WeightFormat::Nvfp4 && version < KV_FROM_CHECKPOINT {
        return KvDtype::Bf16;
    }
    model.kv_cache_dtype
}

/// Marks `model` as an NVIDIA NVFP4 checkpoint named `id`: NVFP4 weights and the FP8 KV cache
/// its `hf_quant_config.json` states, with a note.
pub fn apply_name(model: &mut ModelSpec, id: &str) {
    model.notes.push(format!(
        "`{id}`: weights priced as NVFP4 from the checkpoint's name (`{}`'s own format is {}): \
         4.5 bits per weight on every linear layer, router / embedding / LM head bf16; the \
         modules a checkpoint's exclude_modules keeps in bf16 (DeepSeek's MLA q/kv projections, \
         MiniMax's attention) are priced as NVFP4 too; KV cache FP8 with --kv-cache-dtype auto \
         from SGLang 0.5.4 (every NVIDIA NVFP4 hf_quant_config.json states kv_cache_quant_algo \
         FP8)",
        model.name,
        model.weights.name(),
    ));
    model.weights = WeightFormat::Nvfp4;
    model.kv_cache_dtype = KvDtype::Fp8;
}

/// Whether a checkpoint `id`'s name tokens state NVFP4: `nvfp4` from any publisher, `fp4` on
/// NVIDIA's own ids (`nvidia/DeepSeek-R1-0528-FP4`, `nvidia/Llama-3.3-70B-Instruct-FP4`: ModelOpt
/// NVFP4 builds). `None` when no FP4 token is present; `Some(false)` for another publisher's
/// bare `fp4` (format unknown).
pub fn named(id: &str, tokens: &[&str]) -> Option<bool> {
    if tokens.contains(&"nvfp4") {
        return Some(true);
    }
    if !tokens.contains(&"fp4") {
        return None;
    }
    let org = id.split_once('/').map_or("", |(org, _)| org);
    Some(org.eq_ignore_ascii_case("nvidia"))
}
