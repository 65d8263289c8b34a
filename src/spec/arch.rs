//! The accelerator family of a hardware profile (`arch:` in its YAML): decides SGLang's and
//! vLLM's defaults (attention backend, page size, memory tiers) and whether GPUs meet over
//! NVLink or PCIe.
use serde::{Deserialize, Serialize};

/// Accelerator family; decides SGLang's defaults (attention backend, page size, memory tiers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// sm80 (A100): no FP8 tensor cores.
    Ampere,
    /// sm90 (H100/H200/H20): FA3 is SGLang's default attention backend.
    Hopper,
    /// sm100 (B200).
    Blackwell,
    /// Huawei Ascend NPU: `ascend` backend, page size 128.
    Ascend,
    /// sm89 (L40S): FP8 tensor cores, no NVLink; SGLang's non-Hopper, non-sm100 branches
    /// (`_get_default_attn_backend`, 0.5.14: flashinfer, triton for MLA and gpt-oss).
    Ada,
    /// sm120 (RTX PRO 6000 Blackwell Server Edition): FP4 tensor cores, no NVLink. Not sm100 to
    /// SGLang: `is_sm100_supported()` tests compute-capability major 10 only, so every sm100
    /// branch (trtllm_mha, trtllm_mla, flashinfer MLA, flashinfer_mxfp4) is skipped and the
    /// defaults are the Ada / Ampere ones (python/sglang/srt/utils/common.py, server_args.py,
    /// 0.5.14 wheel; "trtllm_mha does not support SM120, which will fall back to flashinfer").
    Sm120,
}

impl Arch {
    /// Whether the family's GPUs talk over NVLink. Ada (AD102) and sm120 (GB202) boards have
    /// none: their GPUs meet over PCIe, where SGLang's custom all-reduce serves two GPUs only
    /// (`can_use_custom_all_reduce_with_nvlink`: "disabled because it's not supported on more
    /// than two PCIe-only GPUs"; custom_all_reduce_utils.py, 0.5.14) and NCCL the rest.
    pub fn has_nvlink(self) -> bool {
        !matches!(self, Arch::Ada | Arch::Sm120 | Arch::Ascend)
    }
}
