//! SGLang's default attention backend per accelerator, model and version, the KV page size a
//! backend forces (server_args.py; reference A.6), and the release that turns CUDA graphs off
//! for a model (ModelRunner's model-specific adjustment). Re-exported by `spec::defaults`.
use super::hardware::Arch;
use super::version::Version;

fn v(a: u32, b: u32, c: u32) -> Version {
    Version::new(a, b, c)
}

/// Model families SGLang 0.5.6 sends to FA3 on Hopper. Gemma-3 is there as
/// `Gemma3ForConditionalGeneration` only: `is_fa3_default_architecture` lists that name, never
/// the text-only `Gemma3ForCausalLM` (gemma-3-1b), in every release read (0.4.6 `utils.py`,
/// 0.5.1 `utils.py`, 0.5.4 / 0.5.8 / 0.5.10 `utils/common.py`), so the 1B takes flashinfer.
const FA3_ARCHS: &[&str] = &[
    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM",
    "LlamaForCausalLM",
    "Llama4ForCausalLM",
    "Olmo2ForCausalLM",
    "Gemma2ForCausalLM",
    "Gemma3ForConditionalGeneration",
    "Glm4MoeForCausalLM",
];

/// Llama 4's multimodal wrapper, the architecture its checkpoints name.
const LLAMA4: &str = "Llama4ForConditionalGeneration";

/// SGLang's default attention backend for this hardware and model.
pub fn attention_backend(
    arch: Arch,
    model_arch: &str,
    is_mla: bool,
    version: Version,
) -> &'static str {
    let gpt_oss = model_arch.starts_with("GptOss");
    match arch {
        Arch::Ascend => "ascend",
        // Llama 4's own branch (`model_specific_adjustments`, 0.5.6+ wheels): trtllm_mha on
        // sm100, fa3 on sm90, triton elsewhere on CUDA. Releases before 0.5.6 assert that the
        // flag names one of those (0.5.1: fa3 or aiter), so a real run gave it; the same
        // choice is taken there.
        Arch::Blackwell if model_arch == LLAMA4 => "trtllm_mha",
        Arch::Hopper if model_arch == LLAMA4 => "fa3",
        _ if model_arch == LLAMA4 => "triton",
        // 0.5.8+: every model on Hopper ("flashinfer 0.6.1 caused performance regression on
        // Hopper attention kernel ... we choose fa3 as the default backend on Hopper MHA", issue
        // 17411; server_args.py 0.5.8:1661, 0.5.10:2239; not in 0.5.4/0.5.6/0.5.7).
        Arch::Hopper
            if version >= v(0, 5, 8)
                || version >= v(0, 4, 6)
                    && (is_mla || gpt_oss || FA3_ARCHS.contains(&model_arch)) =>
        {
            "fa3"
        }
        // sm100: gpt-oss trtllm_mha since 0.5.0rc2 (its own branch; 0.5.1/0.5.5.post1 wheels);
        // DeepSeek-V3 0.5.6+, every MHA model 0.5.6.post1+ (`is_blackwell()` branch, A.6).
        Arch::Blackwell if gpt_oss => "trtllm_mha",
        Arch::Blackwell if version >= Version::post(0, 5, 6, 1) && !is_mla => "trtllm_mha",
        Arch::Blackwell
            if version >= v(0, 5, 6) && is_mla && model_arch == "DeepseekV3ForCausalLM" =>
        {
            "trtllm_mla"
        }
        // Kimi-K2.5's wrapper joins DeepSeek's sm100 list in 0.5.9 (server_args.py 0.5.9
        // l. 1197-1199, 0.5.14 l. 3519-3522; not in 0.5.8.post1).
        Arch::Blackwell
            if version >= v(0, 5, 9)
                && is_mla
                && model_arch == "KimiK25ForConditionalGeneration" =>
        {
            "trtllm_mla"
        }
        // sm100 MLA: flashinfer from 0.4.7 (`elif is_sm100_supported()`), triton before.
        Arch::Blackwell if version >= v(0, 4, 7) && is_mla => "flashinfer",
        _ if gpt_oss => "triton",
        // ModelRunner sends MLA to triton in every release (0.4.1: "MLA optimization is turned
        // on. Use triton backend."; 0.4.6+: the non-Hopper MLA default).
        _ if is_mla => "triton",
        _ => "flashinfer",
    }
}

/// Whether the release turns CUDA graphs off for this model whatever the flags say: SGLang
/// 0.4.1's ModelRunner (`FIXME(HandH1998)`) sets `disable_cuda_graph` for
/// DeepseekV3ForCausalLM with MLA on; 0.4.1.post1 dropped it (model_runner.py in the wheels).
pub fn graphs_forced_off(model_arch: &str, is_mla: bool, version: Version) -> bool {
    is_mla && model_arch == "DeepseekV3ForCausalLM" && version == v(0, 4, 1)
}

/// Page size the backend forces (1 = token granularity).
pub fn page_size(backend: &str) -> u64 {
    match backend {
        "ascend" | "cutlass_mla" | "intel_xpu" => 128,
        "flashmla" | "trtllm_mla" | "trtllm_mha" => 64,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn backends() {
        let v = Version::NEWEST;
        assert_eq!(
            attention_backend(Arch::Hopper, "Qwen3ForCausalLM", false, v),
            "fa3"
        );
        assert_eq!(
            attention_backend(Arch::Ampere, "Qwen3ForCausalLM", false, v),
            "flashinfer"
        );
        // sm100: Kimi-K2.5 takes DeepSeek's trtllm_mla from 0.5.9, flashinfer before.
        let kimi = "KimiK25ForConditionalGeneration";
        assert_eq!(
            attention_backend(Arch::Blackwell, kimi, true, Version::new(0, 5, 9)),
            "trtllm_mla"
        );
        assert_eq!(
            attention_backend(Arch::Blackwell, kimi, true, Version::post(0, 5, 8, 1)),
            "flashinfer"
        );
        // Hopper: FA3_ARCHS only before 0.5.8, every model from 0.5.8.
        assert_eq!(
            attention_backend(
                Arch::Hopper,
                "Gemma3ForCausalLM",
                false,
                Version::new(0, 5, 7)
            ),
            "flashinfer"
        );
        assert_eq!(
            attention_backend(
                Arch::Hopper,
                "Gemma3ForCausalLM",
                false,
                Version::new(0, 5, 8)
            ),
            "fa3"
        );
        assert_eq!(
            attention_backend(Arch::Ampere, "GptOssForCausalLM", false, v),
            "triton"
        );
        assert_eq!(
            attention_backend(Arch::Ampere, "DeepseekV3ForCausalLM", true, v),
            "triton"
        );
        assert_eq!(
            attention_backend(Arch::Ascend, "Qwen3MoeForCausalLM", false, v),
            "ascend"
        );
        assert_eq!(
            attention_backend(Arch::Blackwell, "DeepseekV3ForCausalLM", true, v),
            "trtllm_mla"
        );
        assert_eq!(
            attention_backend(Arch::Blackwell, "GptOssForCausalLM", false, v),
            "trtllm_mha"
        );
        assert_eq!(
            attention_backend(Arch::Blackwell, "Qwen3ForCausalLM", false, v),
            "trtllm_mha"
        );
        assert_eq!(
            attention_backend(
                Arch::Blackwell,
                "DeepseekV3ForCausalLM",
                true,
                Version::new(0, 4, 7)
            ),
            "flashinfer"
        );
        // MLA off Hopper / Blackwell, and on Blackwell before 0.4.7: triton in every release
        // (0.4.1 ModelRunner: "MLA optimization is turned on. Use triton backend.").
        for (arch, ver) in [
            (Arch::Ampere, Version::new(0, 4, 1)),
            (Arch::Ampere, v),
            (Arch::Hopper, Version::new(0, 4, 3)),
            (Arch::Blackwell, Version::new(0, 4, 6)),
        ] {
            assert_eq!(
                attention_backend(arch, "DeepseekV3ForCausalLM", true, ver),
                "triton"
            );
        }
        assert!(graphs_forced_off(
            "DeepseekV3ForCausalLM",
            true,
            Version::new(0, 4, 1)
        ));
        assert!(!graphs_forced_off(
            "DeepseekV3ForCausalLM",
            true,
            Version::post(0, 4, 1, 1)
        ));
        assert_eq!(page_size("ascend"), 128);
    }
}
