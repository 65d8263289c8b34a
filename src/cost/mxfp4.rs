//! Which kernel runs 4-bit routed experts (MXFP4 gpt-oss; int4 W4A16 Kimi-K2.5 under SGLang's
//! Marlin fused MoE, [`Mxfp4Kernel::SglangMarlinInt4`]), per engine × GPU, and the efficiencies
//! the roofline prices it with where no measured MoE table row exists (A100: AIConfigurator
//! measured no MXFP4 MoE there; the H100/H200/B200 tables hold `mxfp4` rows and price it).
//!
//! - **vLLM below sm90 (A100): Marlin W4A16.** vLLM's `quantization/mxfp4.py` (0.10.1.1
//!   `_should_use_marlin`, 0.11.0 `get_mxfp4_backend`; read in the sdists) picks Marlin when
//!   the device capability is below 9 (`fused_marlin_moe`): weights stay packed (4.25 bits),
//!   each tile is dequantised in registers and multiplied on the FP16/BF16 tensor cores. Its
//!   price is a bounded roofline of that kernel, from timings of the kernel itself (vLLM's
//!   `fused_marlin_moe` on MXFP4 weights, the baseline column of flagos-ai/FlagGems PRs #4483
//!   and #4943, H20, Mixtral shape E=8, hidden 4096, expert width 14336, top-2; see
//!   validation/gpustack/gpt-oss-notes.md):
//!   - **small M: a packed-weight stream rate, not HBM.** 1 / 4 / 8 / 16 tokens take
//!     0.144 / 0.384 / 0.509 / 0.512 ms for 2 / 5.5 / 7.2 / 7.9 experts' packed weights
//!     (93.6 MB each): 1.30 / 1.33 / 1.32 / 1.45 TB/s, a third of the H20's 4.0 TB/s and
//!     flat in the byte count, so the kernel's own per-SM work (FP4 → BF16 dequant, scale
//!     multiply, address arithmetic on the same `mma.sync` / `cp.async` code as on sm80)
//!     binds, not the HBM. Carried to the A100 per SM-clock (H20 78 SMs × 1.98 GHz, A100
//!     108 × 1.41 GHz: 154.4 vs 152.3 G SM-cycles/s) it is
//!     [`MARLIN_STREAM_BYTES_PER_S_SM80`] ≈ 1.30 TB/s (bounds 1.28–1.61: the 1-token rate;
//!     the 16-token rate at an H20 clock as low as 1.755 GHz), under the 1.84 TB/s A100
//!     streams plain weights at: the experts' bytes are priced at the smaller of the two. The
//!     measured kernel is vLLM ~0.20's; 0.10.2 / 0.11.0's is assumed no faster (so the bound is
//!     optimistic), and gpt-oss's smaller experts (2880 × 5760) do not tile better than
//!     Mixtral's.
//!   - **large M: [`MARLIN_MOE_PEAK_FRACTION`] of the bf16 peak.** 4096 / 16384 / 32768
//!     tokens (1024–8192 rows per expert) run at 52 / 54 / 54% of the H20's 148 TFLOP/s
//!     (bounds 0.48, the 1024-token value, to 0.69, the Marlin paper's dense INT4 kernel at
//!     0.9 × this profile's GEMM efficiency), with the usual small-M roll-off per expert's
//!     rows (`gemm_half_tokens`). The dense Marlin paper's "~10% below FP16" (Frantar et
//!     al., PPoPP 2025) was the previous price and does not describe the MoE MXFP4 variant.
//!   - The profile's `moe_gemm` (SGLang's triton fused MoE) does not describe this kernel.
//! - **SGLang on sm80: `triton_kernels`' `matmul_ogs`, per release stack** ([`sglang_sm80_stack`]).
//!   Every release read (0.5.1 … 0.5.8.post1 wheels) runs it at `ep_size` 1 (`server_args.py`
//!   GptOss block: `auto` → `triton_kernel` when `triton_kernels` imports, which it does:
//!   sgl-kernel installs triton's `python/triton_kernels` at a pinned commit), with the weights
//!   in `StridedLayout` and `tl.dot_scaled(bf16, e2m1)`, which Triton decomposes into an
//!   fp4 → bf16 upcast in the `mma` operand layout and `mma.sync` (both stacks compiled for sm80:
//!   tensor cores in both; validation/gpustack/gpt-oss-notes.md, hoss80). The expert code
//!   changes once: sgl-kernel ≤ 0.3.17.post1 (SGLang ≤ 0.5.5.post3, torch 2.8 / Triton 3.4)
//!   ship one identical `triton_kernels`, sgl-kernel 0.3.18.post2 / 0.3.21 (0.5.6 /
//!   0.5.8.post1, torch 2.9.1 / Triton 3.5.1) another.
//!   - **≤ 0.5.5.post3: the profile's `mxfp4_*` constants**, fitted on seed 003 (0.5.1), whose
//!     expert stack is byte-identical to 0.5.3's and 0.5.4.post2's. Those runs (and GPUStack's
//!     0.5.3 / 0.5.4.post2 rows) are 5–10× slower than the kernel's instruction mix allows; the
//!     cause is not in the sources read (a negative result, kept as a fit).
//!   - **from 0.5.6: the compiled loop's issue bound** ([`MATMUL_OGS_SM80_PEAK_FRACTION`],
//!     0.380 of the bf16 peak at large M, under Marlin's [`MARLIN_MOE_PEAK_FRACTION`]) and, at
//!     small M, vLLM Marlin's packed-weight rate [`MARLIN_STREAM_BYTES_PER_S_SM80`] (the same
//!     class of kernel: W4A16, dequantised per tile in registers, `mma.sync`). No timing of
//!     `matmul_ogs` on sm80 was found; 0.5.8.post1 on 8 × A100 (public P014) prefills
//!     ≥ 42 TFLOP/s of experts per GPU (389,505 prompt tokens × 7.17 GFLOP / 8 GPUs / 8.18 s), out of the fitted path's reach (≈ 5), so the fit does
//!     not carry over. Releases after 0.5.8.post1 (torch 2.11+ / Triton 3.6+ from 0.5.14)
//!     are taken as the same (not read).
//! - **vLLM 0.10.x–0.11.0 on sm90 (H100/H200/H20): Marlin too.** `get_mxfp4_backend` (0.10.2
//!   and 0.11.0 sdists, identical) returns FlashInfer BF16 on sm90 only with
//!   `VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1` (default 0), then Marlin when
//!   `has_triton_kernels()` is false, and neither release's `requirements/*.txt` nor CUDA
//!   `docker/Dockerfile` installs `triton_kernels` (only the ROCm base image builds it). The
//!   kernel is the same `mma.sync` code, so the bundled tables' measured `mxfp4` rows (vLLM
//!   0.24.0's native kernels) do not describe it and the roofline prices it:
//!   - small M, per SM-clock from the H20 (same SM architecture): 132 / 78 SMs at the same
//!     1.98 GHz boost gives [`marlin_stream_bytes_per_s`] ≈ 2.23 TB/s on H100/H200, the H20's
//!     own 1.32 TB/s on the H20;
//!   - large M: [`MARLIN_MOE_PEAK_FRACTION_SM90`] = 0.27 of the dense bf16 peak: the sm80
//!     fraction (0.54) halved, because `mma.sync` code (no `wgmma`) runs at Ampere's rate per
//!     SM-clock on Hopper: 2048 dense bf16 FLOP per SM-cycle against the 4096 `wgmma` reaches
//!     (A100 312 TFLOP/s = 108 SMs × 1.41 GHz × 2048; H100 989 = 132 × 1.83 GHz × 4096), as
//!     FlashAttention-2 (same `mma.sync` / `cp.async` pipeline) shows: 73% of the A100's peak
//!     (FA2 paper) but 35% of the H100's (FA3 paper), a ratio of 0.48.
//!   - the price never drops under the tables' measured native `mxfp4` row at the same shape
//!     (`cost/kernels`): that wgmma kernel is what vLLM picks on sm90 whenever it can.
//! - **Which bundled table rows price the experts** ([`moe_table_dtypes`]): SGLang on sm100
//!   the MXFP8-activation rows (`mxfp4_mxfp8`, the FlashInfer call it makes by default);
//!   elsewhere `mxfp4`, which on sm90 measured the bf16-upcast Triton fused MoE, not the
//!   `triton_kernels` `matmul_ogs` SGLang serves at ep_size 1 ([`table_provenance`]; no
//!   timing at these shapes, not repriced: validation/gpustack/gpt-oss-notes.md, hoss).
//! - **vLLM on sm90 from 0.11.1 (not read) and sm100 without table rows:** the grouped-GEMM
//!   efficiency (`moe_gemm`) (triton_kernels `matmul_ogs` / FlashInfer; the bundled tables
//!   normally price it).
use crate::spec::hardware::{Arch, HardwareProfile};
use crate::spec::model::WeightFormat;
use crate::spec::server::ServerConfig;
use crate::spec::version::Version;
use crate::spec::vllm::mxfp4::{self as vllm_mxfp4, VllmMxfp4Backend};

/// The first SGLang release whose sm80 gpt-oss expert stack is the second one read: sglang
/// 0.5.6's wheel pins `sgl-kernel==0.3.18.post2` and `torch==2.9.1` (Triton 3.5.1); 0.5.5.post3
/// pins `sgl-kernel==0.3.17.post1` and `torch==2.8.0` (Triton 3.4.0), whose `triton_kernels`
/// is byte-identical to 0.3.5's (SGLang 0.5.1).
pub const SGLANG_SM80_STACK_CHANGE: Version = Version::new(0, 5, 6);

/// Instructions in the main K loop of SGLang 0.5.6+'s sm80 `matmul_ogs` per warp per K step,
/// at the tile `opt_flags_nvidia` picks for ≥ 128 rows per expert (BLOCK_M 128, BLOCK_N 256,
/// BLOCK_K 128, 8 warps): the kernel of sgl-kernel 0.3.21's `triton_kernels` compiled for sm80
/// with Triton 3.5.1 (its bundled ptxas), SASS counted (validation/gpustack/gpt-oss-notes.md,
/// hoss80). 256 of them are `HMMA.16816.F32.BF16`.
const MATMUL_OGS_SM80_LOOP_INSTRUCTIONS: f64 = 5387.0;
/// `HMMA.16816` instructions in that loop per warp per K step (128 × 256 × 128 / 8 warps /
/// (16 · 8 · 16)).
const MATMUL_OGS_SM80_LOOP_HMMA: f64 = 256.0;
/// Tensor-core cycles of one `HMMA.16816` (4096 FLOP) on an A100 SM sub-partition: 312 TFLOP/s
/// = 108 SMs × 4 sub-partitions × 512 FLOP/clk × 1.41 GHz (A100 whitepaper).
const HMMA_16816_CYCLES_SM80: f64 = 8.0;

/// The most of the bf16 peak SGLang's sm80 `matmul_ogs` can reach at large M: one warp
/// instruction issues per cycle per sub-partition, so its tensor cores are busy at most
/// 256 · 8 / 5387 = 0.380 of the time. An upper bound (the loop also spills: ptxas keeps ~30
/// registers and a 5 KB stack per thread at this tile; spills served by L1 at 128 B/clk would
/// pull it to ~0.13). Under [`MARLIN_MOE_PEAK_FRACTION`], so it is the price.
pub const MATMUL_OGS_SM80_PEAK_FRACTION: f64 =
    MATMUL_OGS_SM80_LOOP_HMMA * HMMA_16816_CYCLES_SM80 / MATMUL_OGS_SM80_LOOP_INSTRUCTIONS;

/// Which `triton_kernels` / Triton pair runs SGLang's MXFP4 experts on sm80.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SglangSm80Stack {
    /// sgl-kernel 0.3.5 … 0.3.17.post1's `triton_kernels` with torch 2.8.0 / Triton 3.4.0:
    /// SGLang 0.5.1 … 0.5.5.post3 (earlier gpt-oss releases taken as the same).
    Torch28,
    /// sgl-kernel 0.3.18.post2 / 0.3.21's `triton_kernels` with torch 2.9.1 / Triton 3.5.1:
    /// SGLang 0.5.6 … 0.5.8.post1 (later releases taken as the same, not read).
    Torch291,
}

/// The sm80 expert stack of an SGLang `version` (wheel METADATA `Requires-Dist`, read per
/// release: validation/gpustack/gpt-oss-notes.md, hoss80).
pub fn sglang_sm80_stack(version: Version) -> SglangSm80Stack {
    if version >= SGLANG_SM80_STACK_CHANGE {
        SglangSm80Stack::Torch291
    } else {
        SglangSm80Stack::Torch28
    }
}

/// vLLM's Marlin MXFP4 fused MoE at large M, as a fraction of the bf16 tensor peak: 52–54%
/// measured on an H20 at 1024–8192 rows per expert (FlagGems PRs #4483 / #4943, vLLM
/// baseline); bounds 0.48–0.69. Capped at the profile's dense GEMM efficiency.
pub const MARLIN_MOE_PEAK_FRACTION: f64 = 0.54;

/// Packed-weight bytes per second vLLM's Marlin MXFP4 fused MoE streams at 1–8 tokens on an
/// H20 (FlagGems PRs #4483 / #4943: 1.30 / 1.33 / 1.32 TB/s).
const H20_MARLIN_STREAM_BYTES_PER_S: f64 = 1.32e12;
/// H20: 78 SMs (Geekbench 6 listing) at Hopper's 1.98 GHz boost (assumed; bounds 1.755–1.98).
const H20_SM_CYCLES_PER_S: f64 = 78.0 * 1.98e9;
/// A100 SXM4: 108 SMs at 1.41 GHz boost (NVIDIA A100 whitepaper; the bundled profile's
/// `peaks.sm_count` × `peaks.sm_boost_clock_hz`).
const A100_SM_CYCLES_PER_S: f64 = 108.0 * 1.41e9;

/// The packed-weight stream rate of vLLM's Marlin MXFP4 fused MoE on the bundled A100 SXM4:
/// the H20's measured rate per SM-clock, ≈ 1.30e12 B/s (bounds 1.28–1.61e12). The experts'
/// weight bytes stream at the smaller of this and the profile's `bandwidth × memory`.
pub const MARLIN_STREAM_BYTES_PER_S_SM80: f64 =
    H20_MARLIN_STREAM_BYTES_PER_S * A100_SM_CYCLES_PER_S / H20_SM_CYCLES_PER_S;
/// H100 / H200 SXM: 132 SMs (H100 whitepaper; the H200 is the same GH100 die) at 1.98 GHz:
/// the SM-clock a Hopper profile without `peaks.sm_count` is taken to have.
const GH100_SXM_SM_CYCLES_PER_S: f64 = 132.0 * 1.98e9;

/// vLLM's Marlin MXFP4 fused MoE at large M on sm90, as a fraction of the dense bf16 peak
/// (989 TFLOP/s on H100): [`MARLIN_MOE_PEAK_FRACTION`] × 0.5, the share of Hopper's peak an
/// `mma.sync` kernel can issue (2048 of 4096 FLOP per SM-cycle; FlashAttention-2: 73% of the
/// A100's peak, 35% of the H100's, ratio 0.48). No Hopper timing of this kernel was found.
/// Bounds 0.137 (the H20's 80 TFLOP/s carried per SM-clock, 132 / 78 SMs: as if the H100 SM
/// issued no faster than the H20's rate-limited one) to 0.37 (the sm80 bound 0.69 × 0.54, the
/// ratio at a 1.98 GHz boost); 0.54 (the H20's fraction of its own peak) is out of reach.
pub const MARLIN_MOE_PEAK_FRACTION_SM90: f64 = 0.27;

/// The packed-weight stream rate of vLLM's Marlin MXFP4 fused MoE on `hw`: the H20's measured
/// rate per SM-clock, times the profile's SM-cycles per second (`peaks.sm_count` ×
/// `peaks.sm_boost_clock_hz`: ≈ 1.30e12 B/s on the A100 SXM4, ≈ 2.23e12 on H100 / H200, the
/// H20's own 1.32e12 on the H20). A profile without SM figures is taken as the A100 SXM4
/// (sm80) or the GH100 SXM die (sm90), and [`sm_clock_source`] says so. `None` off sm80 / sm90.
pub fn marlin_stream_bytes_per_s(hw: &HardwareProfile) -> Option<f64> {
    let fallback = match hw.arch {
        Arch::Ampere => A100_SM_CYCLES_PER_S,
        Arch::Hopper => GH100_SXM_SM_CYCLES_PER_S,
        _ => return None,
    };
    let cycles = hw.peaks.sm_cycles_per_s().unwrap_or(fallback);
    Some(H20_MARLIN_STREAM_BYTES_PER_S * cycles / H20_SM_CYCLES_PER_S)
}

/// The Marlin bounds of `r` on `hw` for `--explain`: SM-clock source, large-M peak share, the
/// half-rate rows and the weight streaming rate of `bits`-bit packed weights.
fn marlin_bounds(hw: &HardwareProfile, r: &ExpertRates, bits: &str) -> String {
    format!(
        "carried per SM-clock ({}): {:.3} of the bf16 peak at large M, half at {:.1} rows per expert, the packed {bits}-bit weights streamed at {:.2} TB/s (× {:.3} of the profile's memory rate)",
        sm_clock_source(hw),
        r.peak_eff,
        r.half_tokens,
        hw.memory.bandwidth_bytes_per_s * hw.efficiency.memory * r.memory_mult / 1e12,
        r.memory_mult
    )
}

/// Where [`marlin_stream_bytes_per_s`] took the SM-clock from, for `--explain`.
fn sm_clock_source(hw: &HardwareProfile) -> String {
    match (hw.peaks.sm_count, hw.peaks.sm_boost_clock_hz) {
        (Some(n), Some(hz)) => format!("{n} SMs at {:.2} GHz", hz / 1e9),
        _ if hw.arch == Arch::Ampere => {
            "no SM figures in the profile: the A100 SXM4's assumed".into()
        }
        _ => "no SM figures in the profile: the H100 SXM's assumed".into(),
    }
}

/// The bundled MoE table dtypes (`hardware-profiles/kernels/<system>/<version>/moe.txt`) to
/// price this server's MXFP4 experts with, best first: the rows AIConfigurator measured with
/// the kernel the server runs.
///
/// - **SGLang on sm100 (B200): `mxfp4_mxfp8` first.** Every release read (0.5.1, 0.5.3, 0.5.6,
///   0.5.8.post1, 0.5.10, 0.5.14 wheels) sets `moe_runner_backend = "flashinfer_mxfp4"` for an
///   MXFP4 gpt-oss on sm100 (`server_args.py`, GptOss block; 0.5.6 and 0.5.8.post1 unless
///   `--enable-piecewise-cuda-graph`, off by default), and at the default
///   `flashinfer_mxfp4_moe_precision = "default"` its `Mxfp4MoEMethod.apply` quantizes the
///   activations with `mxfp8_quantize` before `trtllm_fp4_block_scale_moe` (0.5.6
///   `layers/quantization/mxfp4.py:636-637`; 0.5.8.post1 :628-629). AIConfigurator's collector
///   measures that call as `w4a8_mxfp4_mxfp8` (precision "default") and its `w4a16_mxfp4` rows
///   with precision "bf16" (`collector/sglang/collect_moe.py` `_mxfp4_activation_precision`),
///   a different, slower kernel (bf16 activations): the `mxfp4` rows are the fallback.
/// - **Everything else: `mxfp4`.** On sm90 those rows measured SGLang's Triton fused MoE over
///   weights upcast to bf16 at load, not the `triton_kernels` `matmul_ogs` SGLang serves at
///   `ep_size` 1 (see [`table_provenance`]).
pub fn moe_table_dtypes(hw: &HardwareProfile, server: &ServerConfig) -> &'static [&'static str] {
    if server.vllm.is_none() && hw.arch == Arch::Blackwell {
        &["mxfp4_mxfp8", "mxfp4"]
    } else {
        &["mxfp4"]
    }
}

/// What the bundled table's MXFP4 MoE rows (`dtype`) measured against what this server runs,
/// for `--explain`; empty where they are the same kernel.
pub fn table_provenance(hw: &HardwareProfile, server: &ServerConfig, dtype: &str) -> String {
    match (server.vllm.is_none(), hw.arch, dtype) {
        (true, Arch::Blackwell, "mxfp4_mxfp8") => "; FlashInfer trtllm-gen MXFP4 x MXFP8 MoE, the kernel SGLang runs on sm100 (flashinfer_mxfp4, default precision)".into(),
        (true, Arch::Blackwell, _) => "; rows measured with bf16 activations (AIConfigurator w4a16_mxfp4): SGLang serves MXFP8 activations on sm100".into(),
        // SGLang 0.5.3-0.5.14 `server_args.py`: `auto` becomes `triton_kernel` at ep_size 1
        // when `triton_kernels` imports; otherwise Mxfp4MoEMethod upcasts to bf16 at load and
        // runs the Triton fused MoE, the kernel the rows measured.
        (true, Arch::Hopper, _) if !server.expert_parallel.as_ref().is_some_and(|e| e.ep_size > 1) => "; rows measured SGLang's Triton fused MoE over weights upcast to bf16 at load (AIConfigurator w4a16_mxfp4, backend triton on sm90); SGLang serves ep_size 1 with triton_kernels matmul_ogs over the packed MXFP4 weights, no measured timing at these shapes: not repriced (validation/gpustack/gpt-oss-notes.md)".into(),
        (true, Arch::Hopper, _) => "; SGLang's Triton fused MoE over bf16-upcast weights: what SGLang runs at ep_size > 1".into(),
        _ => String::new(),
    }
}

/// The MXFP4 expert kernel of a deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mxfp4Kernel {
    /// SGLang's MXFP4 MoE path: the profile's `efficiency.mxfp4_*` constants (on sm80: the
    /// torch 2.8 stack, [`SglangSm80Stack::Torch28`]).
    SglangProfile,
    /// SGLang's `triton_kernels` `matmul_ogs` on sm80 from 0.5.6 ([`SglangSm80Stack::Torch291`]),
    /// priced with the Marlin bounds.
    SglangMatmulOgsSm80,
    /// vLLM's Marlin W4A16 fused MoE (sm80; sm90 up to vLLM 0.11.0).
    VllmMarlin,
    /// vLLM's native MXFP4 kernels (sm90+): the grouped-GEMM efficiency.
    VllmNative,
    /// SGLang's Marlin W4A16 fused MoE over int4 group-32 experts (`WeightFormat::W4a16Int4`,
    /// Kimi-K2.5): `CompressedTensorsWNA16MoE` repacks them for Marlin
    /// (`gptq_marlin_moe_repack`) and runs `fused_marlin_moe`
    /// (`layers/quantization/compressed_tensors/schemes/compressed_tensors_wNa16_moe.py`,
    /// 0.5.14 l. 441–465): the same Marlin MoE template as vLLM's MXFP4 path (sgl-kernel's
    /// `moe_wna16_marlin_gemm`, ported from vLLM), so it takes [`Self::VllmMarlin`]'s bounds
    /// (an int4 tile's dequant is a shift and a multiply, no costlier than e2m1's). sm80 / sm90
    /// only: no Marlin rate was derived for sm100 (refused there before SGLang 0.5.10,
    /// `spec::server`).
    SglangMarlinInt4,
    /// SGLang 0.5.10+ on sm100 over int4 group-32 experts: `server_args.py` marks Kimi-K2 /
    /// K2.5 thinking int4 (`is_kimi_k2_k25_thinking_int4`: compressed-tensors, 4-bit int
    /// weights, group 32) and sets `moe_runner_backend = "flashinfer_trtllm"` ("Use
    /// flashinfer_trtllm as MoE runner backend on Blackwell for Kimi K2 / K2.5 thinking int4",
    /// 0.5.14 l. 3683-3736; 0.5.10 l. 1623; absent in 0.5.9, which runs Marlin), so
    /// `CompressedTensorsMxInt4MoE` runs flashinfer's `trtllm_mxint4_block_scale_moe`
    /// (compressed_tensors.py 0.5.14 l. 677-685). AIConfigurator measured that kernel (moe
    /// rows `int4_wo`, lane sglang_flashinfer_trtllm_moe); off the table the roofline takes
    /// the profile's sm100 TRT-LLM MoE rates, as [`Self::SglangProfile`].
    SglangTrtllmMxint4,
}

/// The kernel running this server's routed experts, `None` unless they are MXFP4.
pub fn kernel(hw: &HardwareProfile, server: &ServerConfig) -> Option<Mxfp4Kernel> {
    if server.weight_format == WeightFormat::W4a16Int4 {
        let trtllm = hw.arch == Arch::Blackwell
            && server.vllm.is_none()
            && server.version >= crate::spec::hf_quant::TRTLLM_MXINT4_FROM;
        return Some(if trtllm {
            Mxfp4Kernel::SglangTrtllmMxint4
        } else {
            Mxfp4Kernel::SglangMarlinInt4
        });
    }
    if server.weight_format != WeightFormat::Mxfp4 {
        return None;
    }
    Some(match (&server.vllm, hw.arch) {
        (None, Arch::Ampere) => match sglang_sm80_stack(server.version) {
            SglangSm80Stack::Torch28 => Mxfp4Kernel::SglangProfile,
            SglangSm80Stack::Torch291 => Mxfp4Kernel::SglangMatmulOgsSm80,
        },
        (None, _) => Mxfp4Kernel::SglangProfile,
        // The backend rule per GPU and version lives with the loaded bytes it decides.
        (Some(v), arch) => match vllm_mxfp4::backend(arch, v.version) {
            VllmMxfp4Backend::Marlin => Mxfp4Kernel::VllmMarlin,
            _ => Mxfp4Kernel::VllmNative,
        },
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

/// Multiplier on the profile's weight-stream rate (`bandwidth × memory`) that brings it down
/// to [`marlin_stream_bytes_per_s`]; 1 where the profile's own rate is already lower.
fn marlin_memory_mult(hw: &HardwareProfile) -> f64 {
    let plain = hw.memory.bandwidth_bytes_per_s * hw.efficiency.memory;
    match marlin_stream_bytes_per_s(hw) {
        Some(stream) if plain > 0.0 => (stream / plain).min(1.0),
        _ => 1.0,
    }
}

/// [`MARLIN_MOE_PEAK_FRACTION_SM90`] on sm90, [`MARLIN_MOE_PEAK_FRACTION`] elsewhere.
fn marlin_peak_fraction(hw: &HardwareProfile) -> f64 {
    if hw.arch == Arch::Hopper {
        MARLIN_MOE_PEAK_FRACTION_SM90
    } else {
        MARLIN_MOE_PEAK_FRACTION
    }
}

impl Mxfp4Kernel {
    /// The efficiencies of this kernel on `hw`.
    pub fn rates(self, hw: &HardwareProfile) -> ExpertRates {
        let e = &hw.efficiency;
        let moe_gemm = e.moe_gemm.unwrap_or(e.gemm);
        match self {
            Mxfp4Kernel::SglangProfile | Mxfp4Kernel::SglangTrtllmMxint4 => ExpertRates {
                peak_eff: moe_gemm * e.mxfp4_compute,
                memory_mult: e.mxfp4_memory,
                half_tokens: e.mxfp4_half_tokens.unwrap_or(e.gemm_half_tokens),
            },
            Mxfp4Kernel::VllmMarlin | Mxfp4Kernel::SglangMarlinInt4 => ExpertRates {
                peak_eff: marlin_peak_fraction(hw).min(e.gemm),
                memory_mult: marlin_memory_mult(hw),
                half_tokens: e.gemm_half_tokens,
            },
            Mxfp4Kernel::SglangMatmulOgsSm80 => ExpertRates {
                peak_eff: MARLIN_MOE_PEAK_FRACTION
                    .min(MATMUL_OGS_SM80_PEAK_FRACTION)
                    .min(e.gemm),
                memory_mult: marlin_memory_mult(hw),
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
                "MXFP4 experts: SGLang's path, profile mxfp4_compute {:.4} × moe_gemm, mxfp4_memory {:.3}, half at {:.1} rows (fitted on seed 003){}",
                hw.efficiency.mxfp4_compute,
                r.memory_mult,
                r.half_tokens,
                if hw.arch == Arch::Ampere {
                    "; sm80: triton_kernels matmul_ogs of sgl-kernel <= 0.3.17.post1 with torch 2.8 / Triton 3.4 (SGLang <= 0.5.5.post3, the same code as seed 003's 0.5.1), slow for a cause not found in the sources (validation/gpustack/gpt-oss-notes.md, hoss80)"
                } else {
                    ""
                }
            ),
            Mxfp4Kernel::SglangMatmulOgsSm80 => format!(
                "MXFP4 experts: SGLang >= 0.5.6 on sm80, triton_kernels matmul_ogs of sgl-kernel >= 0.3.18.post2 with torch 2.9.1 / Triton 3.5.1 (tl.dot_scaled: fp4 -> bf16 in registers, mma.sync); no timing of it on sm80: {:.3} of the bf16 peak at large M (its compiled loop's issue bound, 256 HMMA x 8 cycles / 5387 instructions, under Marlin's 0.54), half at {:.1} rows per expert, the packed 4.25-bit weights streamed at {:.2} TB/s (vLLM Marlin's measured rate, the same W4A16 mma.sync class, carried per SM-clock: {}) (validation/gpustack/gpt-oss-notes.md, hoss80)",
                r.peak_eff,
                r.half_tokens,
                hw.memory.bandwidth_bytes_per_s * hw.efficiency.memory * r.memory_mult / 1e12,
                sm_clock_source(hw)
            ),
            Mxfp4Kernel::VllmMarlin => format!(
                "MXFP4 experts: vLLM's Marlin W4A16 fused MoE (sm80, or sm90 up to vLLM 0.11.0 without triton_kernels; vLLM mxfp4.py), bounded roofline of the kernel's H20 timings (FlagGems #4483/#4943) {}",
                marlin_bounds(hw, &r, "4.25")
            ),
            Mxfp4Kernel::VllmNative => format!(
                "MXFP4 experts: vLLM's native MXFP4 MoE, no table row: moe_gemm {:.3}",
                r.peak_eff
            ),
            Mxfp4Kernel::SglangTrtllmMxint4 => format!(
                "int4 W4A16 experts (group 32): SGLang >= 0.5.10 on sm100 runs flashinfer's trtllm_mxint4_block_scale_moe (moe_runner_backend flashinfer_trtllm for Kimi-K2/K2.5 int4); off the measured int4_wo rows, the profile's TRT-LLM MoE rates: {:.3} of the bf16 peak at large M, memory × {:.3}, half at {:.1} rows",
                r.peak_eff, r.memory_mult, r.half_tokens
            ),
            Mxfp4Kernel::SglangMarlinInt4 => format!(
                "int4 W4A16 experts (group 32): SGLang's fused_marlin_moe (compressed-tensors WNA16), priced with vLLM Marlin's bounds {}",
                marlin_bounds(hw, &r, "4.5")
            ),
        }
    }
}
