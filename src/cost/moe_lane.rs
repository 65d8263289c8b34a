//! Which fused-MoE runner (the kernel table "lane") SGLang runs bf16 and block-FP8 routed
//! experts with on an sm100 GPU (B200, B300, GB200), per release and model architecture. The
//! measured tables hold both lanes: the `moe` table's rows are FlashInfer's TRT-LLM MoE for
//! most shapes (AIConfigurator 0.12.0 `kernel_source sglang_flashinfer_trtllm_moe`), the
//! `moe_triton` tables SGLang's triton fused MoE (`sglang_fused_moe_triton`: AIConfigurator
//! 0.10.0's SGLang 0.5.9 rows and 0.12.0's 0.5.14 ones; `scripts/import_aiconfigurator.py
//! --triton-lane-wheel`). The two differ 1.1–2.2× at decode sizes (Qwen3-235B-A22B bf16 TP8,
//! one token: 33.67 µs triton, 20.16 µs TRT-LLM), so a run is priced from its release's lane.
//!
//! The rule, from `python/sglang/srt/server_args.py` (`_handle_model_specific_adjustments`,
//! PyPI wheels), with `--moe-runner-backend auto` and `--moe-a2a-backend none`, both defaults.
//! `auto` is the triton fused MoE for bf16 and for block FP8 without an all-to-all backend
//! (0.5.9 `layers/quantization/fp8.py` 1347–1351 and 697–700: DeepGEMM only with DeepEP /
//! Mooncake; 0.5.1 fp8.py 517–521: CUTLASS only with `SGLANG_CUTLASS_MOE` set). Switches to
//! `flashinfer_trtllm` on sm100:
//! - 0.4.7 … 0.5.3: none (0.4.10 and 0.5.1 have only the opt-in `--enable-flashinfer-trtllm-moe`).
//! - 0.5.5: DeepseekV3ForCausalLM with `quantization in ["fp8", "modelopt_fp8", "modelopt_fp4"]`
//!   (line 932–937), Llama-4 with fp8 / modelopt_fp8 (1011–1013). bf16: none.
//! - 0.5.6, 0.5.6.post1/.post2, 0.5.7: as 0.5.5, and Qwen3MoeForCausalLM /
//!   Qwen3VLMoeForConditionalGeneration and Qwen3NextForCausalLM with `self.quantization in
//!   ("fp8", "modelopt_fp4")` (0.5.6 lines 1227–1232 and 1237–; 0.5.6.post1 1277–1282; 0.5.7
//!   1364–1371, 1384–1391): bf16 runs triton.
//! - 0.5.8, 0.5.8.post1: the two Qwen3 blocks add `or self.quantization is None` (0.5.8.post1
//!   lines 1472–1482, 1490–1500): bf16 Qwen3 MoE / Qwen3-Next run TRT-LLM; GLM-4 MoE switches
//!   only ModelOpt FP4 (line 1519–).
//! - 0.5.9: as 0.5.8, and Qwen3_5MoeForConditionalGeneration / Qwen3_5ForConditionalGeneration
//!   join the Qwen3-Next block (lines 1579–1598); Llama-4 switches only FP8 (1469–1471).
//!
//! Releases after 0.5.9 (and 0.5.4) are not read here: their runs keep the `moe` table as before
//! ([`lane`] is `None`) unless the TRT-LLM switch already holds, as do non-sm100 GPUs, vLLM
//! servers, expert parallelism with an all-to-all backend and other formats (MXFP4, NVFP4,
//! int4: `cost::mxfp4` and the `moe` table's own lanes).
use crate::spec::expert_parallel::A2aBackend;
use crate::spec::hardware::HardwareProfile;
use crate::spec::model::{ModelSpec, WeightFormat};
use crate::spec::server::ServerConfig;
use crate::spec::version::Version;

/// The fused-MoE runner SGLang runs bf16 experts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoeLane {
    /// SGLang's triton fused MoE (`moe_runner_backend auto`).
    Triton,
    /// FlashInfer's TRT-LLM MoE (`moe_runner_backend flashinfer_trtllm`).
    FlashinferTrtllm,
}

impl MoeLane {
    /// The kernel table op that measured this lane.
    pub fn table_op(self) -> &'static str {
        match self {
            MoeLane::Triton => "moe_triton",
            MoeLane::FlashinferTrtllm => "moe",
        }
    }

    /// The lane's name for `--explain` and notes.
    pub fn describe(self) -> &'static str {
        match self {
            MoeLane::Triton => "SGLang triton fused MoE",
            MoeLane::FlashinferTrtllm => "FlashInfer TRT-LLM MoE",
        }
    }
}

/// The last release whose `server_args.py` this module's rule was read from.
pub const LAST_READ: Version = Version::new(0, 5, 9);
/// The one release in 0.4.7 … 0.5.9 whose `server_args.py` was not read (no wheel source at
/// hand): its FP8 lane is left unpriced by this rule (`None`).
pub const UNREAD: Version = Version::new(0, 5, 4);

/// The first release that switches `arch`'s experts of weight format `w` (Bf16 or Fp8) to
/// FlashInfer's TRT-LLM MoE on sm100, if any up to [`LAST_READ`].
fn trtllm_from(architecture: &str, w: WeightFormat) -> Option<Version> {
    let qwen3 = matches!(
        architecture,
        "Qwen3MoeForCausalLM" | "Qwen3VLMoeForConditionalGeneration" | "Qwen3NextForCausalLM"
    );
    let qwen35 = matches!(
        architecture,
        "Qwen3_5MoeForConditionalGeneration" | "Qwen3_5ForConditionalGeneration"
    );
    match (w, architecture) {
        (WeightFormat::Bf16, _) if qwen3 => Some(Version::new(0, 5, 8)),
        (WeightFormat::Bf16 | WeightFormat::Fp8, _) if qwen35 => Some(Version::new(0, 5, 9)),
        (WeightFormat::Fp8, _) if qwen3 => Some(Version::new(0, 5, 6)),
        (WeightFormat::Fp8, "DeepseekV3ForCausalLM" | "Llama4ForConditionalGeneration") => {
            Some(Version::new(0, 5, 5))
        }
        _ => None,
    }
}

/// The lane of an architecture's `w` experts at release `v` by the rule above (sm100,
/// defaults); `None` where the rule was not read (release [`UNREAD`] or after [`LAST_READ`],
/// unless the TRT-LLM switch already holds) or for another weight format.
pub fn rule(architecture: &str, w: WeightFormat, v: Version) -> Option<MoeLane> {
    if !matches!(w, WeightFormat::Bf16 | WeightFormat::Fp8) {
        return None;
    }
    match trtllm_from(architecture, w) {
        Some(from) if v >= from => Some(MoeLane::FlashinferTrtllm),
        _ if release(v) > release(LAST_READ) || release(v) == release(UNREAD) => None,
        _ => Some(MoeLane::Triton),
    }
}

/// The lane this deployment's bf16 experts run in, where the rule applies (module doc);
/// `None` elsewhere (block FP8 too: see the comment inside).
pub fn lane(hw: &HardwareProfile, model: &ModelSpec, server: &ServerConfig) -> Option<MoeLane> {
    let sm100 = matches!(
        cuda_device_name(hw),
        Some("NVIDIA_B200" | "NVIDIA_B300_SXM6_AC" | "NVIDIA_GB200")
    );
    let a2a = server
        .expert_parallel
        .as_ref()
        .is_some_and(|e| e.a2a_backend != A2aBackend::None);
    // Block FP8 keeps the `moe` table: priced from the triton rows, seed 004 (DeepSeek-V3 FP8
    // on B200, a build just before 0.4.7 that ran the triton fused MoE) went from TPOT -15..+5%
    // to +26..+70% (validation/public/p001-c1-notes.md, "Block FP8"): the lane is known, its
    // price is not yet trusted.
    if !sm100 || a2a || server.vllm.is_some() || server.weight_format != WeightFormat::Bf16 {
        return None;
    }
    rule(&model.architecture, server.weight_format, server.version)
}

fn release(v: Version) -> (u32, u32, u32) {
    (v.major, v.minor, v.patch)
}

/// `torch.cuda.get_device_name()` with spaces as underscores, for the bundled NVIDIA profiles.
pub fn cuda_device_name(hw: &HardwareProfile) -> Option<&'static str> {
    Some(match hw.name.as_str() {
        "b200-sxm-180gb" => "NVIDIA_B200",
        // torch.cuda.get_device_name() of the two (nvidia-smi "NVIDIA B300 SXM6 AC",
        // "NVIDIA GB200"); no SGLang release up to 0.5.14 ships a config file for either
        // (0.5.9 and 0.5.14 wheels), so their measured tables hold the default config's time.
        "b300-sxm-288gb" => "NVIDIA_B300_SXM6_AC",
        "gb200-186gb" => "NVIDIA_GB200",
        "h200-sxm-141gb" => "NVIDIA_H200",
        "h100-sxm5-80gb" => "NVIDIA_H100_80GB_HBM3",
        "a100-sxm4-80gb" => "NVIDIA_A100-SXM4-80GB",
        "h20-96gb" => "NVIDIA_H20",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn r(arch: &str, w: WeightFormat, ver: &str) -> Option<MoeLane> {
        rule(arch, w, v(ver))
    }

    #[test]
    fn qwen3_bf16_switches_at_0_5_8_and_qwen35_at_0_5_9() {
        let (q, bf16) = ("Qwen3MoeForCausalLM", WeightFormat::Bf16);
        for ver in ["0.4.7", "0.5.5", "0.5.6", "0.5.6.post1", "0.5.7"] {
            assert_eq!(r(q, bf16, ver), Some(MoeLane::Triton), "{ver}");
        }
        for ver in ["0.5.8", "0.5.8.post1", "0.5.9", "0.5.14"] {
            assert_eq!(r(q, bf16, ver), Some(MoeLane::FlashinferTrtllm), "{ver}");
        }
        let q35 = "Qwen3_5MoeForConditionalGeneration";
        assert_eq!(r(q35, bf16, "0.5.8.post1"), Some(MoeLane::Triton));
        assert_eq!(r(q35, bf16, "0.5.9"), Some(MoeLane::FlashinferTrtllm));
        // No bf16 switch for GLM-4 MoE, DeepSeek-V3, MiniMax, Llama-4 in any release read;
        // releases after 0.5.9 unread.
        for a in [
            "Glm4MoeForCausalLM",
            "DeepseekV3ForCausalLM",
            "MiniMaxM2ForCausalLM",
        ] {
            assert_eq!(r(a, bf16, "0.5.9"), Some(MoeLane::Triton), "{a}");
            assert_eq!(r(a, bf16, "0.5.10"), None, "{a}");
        }
    }

    #[test]
    fn fp8_switches_deepseek_at_0_5_5_and_qwen3_at_0_5_6() {
        let (ds, fp8) = ("DeepseekV3ForCausalLM", WeightFormat::Fp8);
        assert_eq!(r(ds, fp8, "0.4.7"), Some(MoeLane::Triton));
        assert_eq!(r(ds, fp8, "0.5.3"), Some(MoeLane::Triton));
        assert_eq!(r(ds, fp8, "0.5.4"), None);
        assert_eq!(r(ds, fp8, "0.5.5"), Some(MoeLane::FlashinferTrtllm));
        assert_eq!(
            r("Qwen3MoeForCausalLM", fp8, "0.5.5"),
            Some(MoeLane::Triton)
        );
        assert_eq!(
            r("Qwen3MoeForCausalLM", fp8, "0.5.6"),
            Some(MoeLane::FlashinferTrtllm)
        );
        assert_eq!(r("Glm4MoeForCausalLM", fp8, "0.5.9"), Some(MoeLane::Triton));
        assert_eq!(r(ds, WeightFormat::Nvfp4, "0.5.9"), None);
    }
}
