//! vLLM's MXFP4 (gpt-oss) routed experts as loaded: which `Mxfp4MoEMethod` backend a GPU gets
//! per version, and the bytes its `create_weights` + `process_weights_after_loading` leave on
//! the GPU, which is what "Model loading took X GiB" logs and what the KV budget subtracts.
//! Read in the 0.10.1.1, 0.10.2 and 0.11.0 sdists (`quantization/mxfp4.py`,
//! `utils/marlin_utils_fp4.py`, `utils/mxfp4_utils.py`):
//!
//! - **Backend.** Below sm90 always Marlin. On sm90 0.10.1.x picks Marlin because its pinned
//!   torch 2.7.1 is older than 2.8.0 (`_should_use_marlin`); 0.10.2 / 0.11.0
//!   (`get_mxfp4_backend`) pick Marlin because no CUDA requirement or image installs
//!   `triton_kernels`; later releases log "Using Triton backend" on an H100 (vllm#33155,
//!   0.14.1). sm100 (FlashInfer) is not modelled here: the checkpoint's bytes stand.
//! - **Marlin.** `create_weights` pads the per-rank expert width to a multiple of 128 and the
//!   hidden size to a multiple of 256 (the Marlin MoE kernel's `n % 256`, `k % 128`): gpt-oss's
//!   2880 × 2880 experts are held as 2944 × 3072. The repack keeps 4-bit weights, one e8m0
//!   scale byte per 32 and bf16 biases (`prepare_moe_fp4_layer_for_marlin`).
//! - **Triton** (`triton_kernels.matmul_ogs`): width padded to 64, no hidden padding; the
//!   weights are swizzled and the originals deleted, but the original scales stay registered
//!   next to their swizzled copy (two scale bytes per 32 weights), and the biases become fp32.
//!
//! Checked against the logs: gpt-oss-120b on one H100, 0.10.1 Marlin: 65.90 GiB here,
//! "Model loading took 65.9651 GiB" (vllm#23278); 0.14.1 Triton: 64.19 GiB here, "64.38 GiB"
//! (vllm#33155; the rest is the swizzled layouts' padding, not modelled).
use crate::spec::hardware::Arch;
use crate::spec::model::ModelSpec;
use crate::spec::version::Version;

/// The first vLLM release whose sm90 MXFP4 MoE backend was not read (0.10.1.1, 0.10.2, 0.11.0
/// were: Marlin without `triton_kernels`); from it on, `triton_kernels`' `matmul_ogs`.
pub const SM90_MARLIN_UNTIL: Version = Version::new(0, 11, 1);

/// The `Mxfp4MoEMethod` backend of a vLLM deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VllmMxfp4Backend {
    /// Marlin W4A16 fused MoE (sm80; sm90 up to 0.11.0).
    Marlin,
    /// `triton_kernels`' `matmul_ogs` (sm90 from 0.11.1).
    Triton,
    /// FlashInfer (sm100) or a platform not read: loaded bytes taken as the checkpoint's.
    Other,
}

/// The backend vLLM `version` picks for MXFP4 experts on `arch`.
pub fn backend(arch: Arch, version: Version) -> VllmMxfp4Backend {
    match arch {
        Arch::Ampere => VllmMxfp4Backend::Marlin,
        Arch::Hopper if version < SM90_MARLIN_UNTIL => VllmMxfp4Backend::Marlin,
        Arch::Hopper => VllmMxfp4Backend::Triton,
        _ => VllmMxfp4Backend::Other,
    }
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

/// Bytes of one expert (gate_up + down, weights, scales, biases) on one rank as `backend`
/// leaves it after loading, for a per-rank expert width `width` and hidden size `hidden`.
pub fn expert_bytes(backend: VllmMxfp4Backend, hidden: u64, width: u64) -> f64 {
    // (padded width, padded hidden, scale copies, bias bytes)
    let (w, h, scale_copies, bias_b) = match backend {
        VllmMxfp4Backend::Marlin => (round_up(width, 128), round_up(hidden, 256), 1.0, 2.0),
        VllmMxfp4Backend::Triton => (round_up(width, 64), hidden, 2.0, 4.0),
        VllmMxfp4Backend::Other => (width, hidden, 1.0, 2.0),
    };
    let (w, h) = (w as f64, h as f64);
    let params = 3.0 * w * h; // gate_up (2w × h) + down (h × w)
    params / 2.0 + scale_copies * params / 32.0 + bias_b * (2.0 * w + h)
}

/// What vLLM's loaded routed experts weigh on one rank beyond `model.weight_bytes_per_rank`'s
/// 4.25-bit checkpoint estimate (positive: padding, kept scales, wider biases); 0 for models
/// without MoE.
pub fn loaded_extra_bytes_per_rank(model: &ModelSpec, tp: u64, backend: VllmMxfp4Backend) -> f64 {
    let Some(m) = &model.moe else {
        return 0.0;
    };
    let tp = tp.max(1);
    let width = m.expert_intermediate_size / tp;
    let checkpoint = 3.0 * model.hidden_size as f64 * width as f64 * 4.25 / 8.0;
    let loaded = expert_bytes(backend, model.hidden_size, width);
    model.moe_layers() as f64 * m.num_experts as f64 * (loaded - checkpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marlin_pads_gpt_oss_experts_to_2944_by_3072() {
        // Hand: 3 × 2944 × 3072 = 27 131 904 params; /2 + /32 bytes, + bf16 biases
        // (2 × 2944 + 3072) × 2.
        let p = 3.0 * 2944.0 * 3072.0;
        let want = p / 2.0 + p / 32.0 + (2.0 * 2944.0 + 3072.0) * 2.0;
        assert_eq!(expert_bytes(VllmMxfp4Backend::Marlin, 2880, 2880), want);
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert_eq!(backend(Arch::Hopper, v("0.11.0")), VllmMxfp4Backend::Marlin);
        assert_eq!(backend(Arch::Hopper, v("0.14.1")), VllmMxfp4Backend::Triton);
        assert_eq!(backend(Arch::Ampere, v("0.14.1")), VllmMxfp4Backend::Marlin);
    }
}
