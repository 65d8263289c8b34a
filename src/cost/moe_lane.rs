//! Which fused-MoE runner (the kernel table "lane") SGLang runs unquantized (bf16) routed
//! experts with on an sm100 GPU (B200, B300, GB200), per release and model architecture. The
//! measured tables hold both lanes: the `moe` table's bf16 rows are FlashInfer's TRT-LLM MoE for
//! most shapes (AIConfigurator 0.12.0 `kernel_source sglang_flashinfer_trtllm_moe`), the
//! `moe_triton` tables SGLang's triton fused MoE (`sglang_fused_moe_triton`: AIConfigurator
//! 0.10.0's SGLang 0.5.9 rows and 0.12.0's 0.5.14 ones; `scripts/import_aiconfigurator.py
//! --triton-lane-wheel`). The two differ 1.1–2.2× at decode sizes (Qwen3-235B-A22B TP8, one
//! token: 33.67 µs triton, 20.16 µs TRT-LLM), so a run is priced from its release's lane.
//!
//! The rule, from `python/sglang/srt/server_args.py` (`_handle_model_specific_adjustments`,
//! PyPI wheels), with `--moe-runner-backend auto` and `--moe-a2a-backend none`, both defaults:
//! - 0.4.7 … 0.5.5: no architecture switches bf16 to `flashinfer_trtllm` (0.5.5 switches only
//!   DeepSeek-V3 FP8 / ModelOpt, line 937, and Llama-4 FP8, line 1013); `auto` runs triton.
//! - 0.5.6, 0.5.6.post1/.post2, 0.5.7: Qwen3MoeForCausalLM / Qwen3VLMoeForConditionalGeneration
//!   and Qwen3NextForCausalLM switch only `self.quantization in ("fp8", "modelopt_fp4")`
//!   (0.5.6 lines 1227–1232 and 1237–; 0.5.6.post1 1277–1282; 0.5.7 1364–1371, 1384–1391):
//!   bf16 runs triton.
//! - 0.5.8, 0.5.8.post1: the same two blocks add `or self.quantization is None` (0.5.8.post1
//!   lines 1472–1482, 1490–1500): bf16 Qwen3 MoE / Qwen3-Next run TRT-LLM; GLM-4 MoE switches
//!   only ModelOpt FP4 (line 1519–).
//! - 0.5.9: as 0.5.8, and Qwen3_5MoeForConditionalGeneration / Qwen3_5ForConditionalGeneration
//!   join the Qwen3-Next block (lines 1579–1598); Llama-4 switches only FP8 (1469–1471).
//!
//! Releases after 0.5.9 are not read here: their bf16 runs keep the `moe` table as before
//! ([`bf16_lane`] is `None`), as do non-sm100 GPUs, vLLM servers, expert parallelism with an
//! all-to-all backend and every quantized format (whose runner choice is not modelled here).
use crate::cost::moe_config::cuda_device_name;
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
/// First release running bf16 Qwen3 MoE / Qwen3-Next with FlashInfer's TRT-LLM MoE on sm100.
pub const QWEN3_BF16_TRTLLM: Version = Version::new(0, 5, 8);
/// First release adding the Qwen3.5 architectures to the Qwen3-Next block.
pub const QWEN35_BF16_TRTLLM: Version = Version::new(0, 5, 9);

/// The lane of a bf16 architecture at release `v` by the rule above (sm100, defaults).
pub fn rule(architecture: &str, v: Version) -> MoeLane {
    let trtllm_from = match architecture {
        "Qwen3MoeForCausalLM" | "Qwen3VLMoeForConditionalGeneration" | "Qwen3NextForCausalLM" => {
            Some(QWEN3_BF16_TRTLLM)
        }
        "Qwen3_5MoeForConditionalGeneration" | "Qwen3_5ForConditionalGeneration" => {
            Some(QWEN35_BF16_TRTLLM)
        }
        _ => None,
    };
    match trtllm_from {
        Some(from) if v >= from => MoeLane::FlashinferTrtllm,
        _ => MoeLane::Triton,
    }
}

/// The lane this deployment's bf16 experts run in, where the rule applies (module doc);
/// `None` elsewhere.
pub fn bf16_lane(
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
) -> Option<MoeLane> {
    let sm100 = matches!(
        cuda_device_name(hw),
        Some("NVIDIA_B200" | "NVIDIA_B300_SXM6_AC" | "NVIDIA_GB200")
    );
    let a2a = server
        .expert_parallel
        .as_ref()
        .is_some_and(|e| e.a2a_backend != A2aBackend::None);
    if !sm100 || a2a || server.vllm.is_some() || server.weight_format != WeightFormat::Bf16 {
        return None;
    }
    let lane = rule(&model.architecture, server.version);
    // Qwen3's TRT-LLM switch holds from 0.5.8 on; other architectures' later releases unread.
    (lane == MoeLane::FlashinferTrtllm || release(server.version) <= release(LAST_READ))
        .then_some(lane)
}

fn release(v: Version) -> (u32, u32, u32) {
    (v.major, v.minor, v.patch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn qwen3_bf16_switches_at_0_5_8_and_qwen35_at_0_5_9() {
        let q = "Qwen3MoeForCausalLM";
        for r in ["0.4.7", "0.5.5", "0.5.6", "0.5.6.post1", "0.5.7"] {
            assert_eq!(rule(q, v(r)), MoeLane::Triton, "{r}");
        }
        for r in ["0.5.8", "0.5.8.post1", "0.5.9"] {
            assert_eq!(rule(q, v(r)), MoeLane::FlashinferTrtllm, "{r}");
        }
        let q35 = "Qwen3_5MoeForConditionalGeneration";
        assert_eq!(rule(q35, v("0.5.8.post1")), MoeLane::Triton);
        assert_eq!(rule(q35, v("0.5.9")), MoeLane::FlashinferTrtllm);
        // No bf16 switch for GLM-4 MoE, DeepSeek-V3, MiniMax, Llama-4 in any release read.
        for a in [
            "Glm4MoeForCausalLM",
            "DeepseekV3ForCausalLM",
            "MiniMaxM2ForCausalLM",
            "Llama4ForConditionalGeneration",
        ] {
            assert_eq!(rule(a, v("0.5.9")), MoeLane::Triton, "{a}");
        }
    }
}
