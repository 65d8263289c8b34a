//! Which kernel runs MXFP4 (gpt-oss) routed experts, per engine × GPU, and the efficiencies
//! the roofline prices it with where no measured MoE table row exists (A100: AIConfigurator
//! measured no MXFP4 MoE there; the H100/H200/B200 tables hold `mxfp4` rows and price it).
//!
//! - **vLLM below sm90 (A100): Marlin W4A16.** vLLM's `get_mxfp4_backend` (0.10.1–0.11.x,
//!   `quantization/mxfp4.py`) picks `Mxfp4Backend.MARLIN` when the device capability is below
//!   9 (`fused_marlin_moe`): weights stay packed (4.25 bits), each tile is dequantised in
//!   registers and multiplied on the FP16/BF16 tensor cores. Its price is therefore a bf16
//!   GEMM of the same shape at the GPU's dense GEMM efficiency (`efficiency.gemm`, with the
//!   usual small-M roll-off per expert's rows), times [`MARLIN_LARGE_BATCH_RATIO`], floored
//!   by streaming the packed weights. Source of the ratio: Frantar et al., "MARLIN: Mixed-
//!   Precision Auto-Regressive Parallel Inference on Large Language Models" (PPoPP 2025,
//!   arXiv 2408.11743): Marlin's FLOP/s reach the compute roof above batch ~64 and at batch
//!   ≥ 1024 stay ~10% below the FP16 GEMM. Assumed: the MoE variant (same Marlin GEMM
//!   template, per-expert tiles) keeps that ratio; bounded to [0.8, 1.0] of the dense rate.
//!   Cross-check against the MoE kernel itself: vLLM's `fused_marlin_moe` (W4A16) timed on
//!   an H20 (148 TFLOP/s bf16) by flagos-ai/FlagGems PRs #3375 and #3609, shape E=512,
//!   hidden 4096, expert width 1024, top-10: 5.65 / 8.67 / 21.5 / 31.8 ms at 1024 / 2048 /
//!   4096 / 8192 tokens = 31 / 40 / 32 / 44% of peak at 20–160 rows per expert; this
//!   roofline gives 18 / 28 / 39 / 50% there with A100's constants (0.665 × rows / (rows +
//!   54.7)): within the measured spread, cheaper only at ≥ 80 rows.
//!   The profile's `moe_gemm` (SGLang's triton fused MoE, ~21% of peak on A100) does not
//!   describe this kernel: it priced a 2048-token gpt-oss-20b prefill's experts at 152 ms
//!   where the whole real step takes under 87 ms (GPUStack rand 128/4: 1000 × 128 tokens
//!   in 5.44 s at 2048 tokens a step).
//! - **SGLang: the profile's `mxfp4_*` constants** (fitted on seed 003's SGLang 0.5.1 A100
//!   runs, its dequantising path on sm80), unchanged here.
//! - **vLLM on sm90/sm100 without table rows:** the grouped-GEMM efficiency (`moe_gemm`), as
//!   before (triton_kernels `matmul_ogs` / FlashInfer; the bundled tables normally price it).
use crate::spec::hardware::{Arch, HardwareProfile};
use crate::spec::model::WeightFormat;
use crate::spec::server::ServerConfig;

/// Marlin's throughput at large batch over the FP16 GEMM's (Marlin paper: ~10% slower at
/// batch ≥ 1024; bounds 0.8–1.0).
pub const MARLIN_LARGE_BATCH_RATIO: f64 = 0.9;

/// The MXFP4 expert kernel of a deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mxfp4Kernel {
    /// SGLang's MXFP4 MoE path: the profile's `efficiency.mxfp4_*` constants.
    SglangProfile,
    /// vLLM's Marlin W4A16 fused MoE (below sm90).
    VllmMarlin,
    /// vLLM's native MXFP4 kernels (sm90+): the grouped-GEMM efficiency.
    VllmNative,
}

/// The kernel running this server's routed experts, `None` unless they are MXFP4.
pub fn kernel(hw: &HardwareProfile, server: &ServerConfig) -> Option<Mxfp4Kernel> {
    if server.weight_format != WeightFormat::Mxfp4 {
        return None;
    }
    Some(match (&server.vllm, hw.arch) {
        (None, _) => Mxfp4Kernel::SglangProfile,
        (Some(_), Arch::Ampere) => Mxfp4Kernel::VllmMarlin,
        (Some(_), _) => Mxfp4Kernel::VllmNative,
    })
}

/// How the roofline prices one expert kernel: large-shape efficiency over the bf16 peak,
/// multiplier on achieved bandwidth, and rows per expert at half efficiency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExpertRates {
    pub peak_eff: f64,
    pub memory_mult: f64,
    pub half_tokens: f64,
}

impl Mxfp4Kernel {
    /// The efficiencies of this kernel on `hw`.
    pub fn rates(self, hw: &HardwareProfile) -> ExpertRates {
        let e = &hw.efficiency;
        let moe_gemm = e.moe_gemm.unwrap_or(e.gemm);
        match self {
            Mxfp4Kernel::SglangProfile => ExpertRates {
                peak_eff: moe_gemm * e.mxfp4_compute,
                memory_mult: e.mxfp4_memory,
                half_tokens: e.mxfp4_half_tokens.unwrap_or(e.gemm_half_tokens),
            },
            Mxfp4Kernel::VllmMarlin => ExpertRates {
                peak_eff: e.gemm * MARLIN_LARGE_BATCH_RATIO,
                memory_mult: 1.0,
                half_tokens: e.gemm_half_tokens,
            },
            Mxfp4Kernel::VllmNative => ExpertRates {
                peak_eff: moe_gemm,
                memory_mult: 1.0,
                half_tokens: e.gemm_half_tokens,
            },
        }
    }

    /// One line for `--explain`.
    pub fn describe(self, hw: &HardwareProfile) -> String {
        let r = self.rates(hw);
        match self {
            Mxfp4Kernel::SglangProfile => format!(
                "MXFP4 experts: SGLang's path, profile mxfp4_compute {:.4} × moe_gemm, mxfp4_memory {:.3}, half at {:.1} rows (fitted on seed 003)",
                hw.efficiency.mxfp4_compute, r.memory_mult, r.half_tokens
            ),
            Mxfp4Kernel::VllmMarlin => format!(
                "MXFP4 experts: vLLM's Marlin W4A16 fused MoE (sm80; vLLM mxfp4.py), bounded roofline: bf16 GEMM at gemm {:.3} × {MARLIN_LARGE_BATCH_RATIO} (Marlin paper: ~10% below FP16 at large batch) = {:.3} of peak, half at {:.1} rows per expert, floored by the packed 4.25-bit weights",
                hw.efficiency.gemm, r.peak_eff, r.half_tokens
            ),
            Mxfp4Kernel::VllmNative => format!(
                "MXFP4 experts: vLLM's native MXFP4 MoE, no table row: moe_gemm {:.3}",
                r.peak_eff
            ),
        }
    }
}
