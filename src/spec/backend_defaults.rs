//! SGLang's default attention backend per accelerator, model and version, and the KV page
//! size a backend forces (server_args.py; reference A.6). Re-exported by `spec::defaults`.
use super::hardware::Arch;
use super::version::Version;

fn v(a: u32, b: u32, c: u32) -> Version {
    Version::new(a, b, c)
}

/// Model families SGLang 0.5.6 sends to FA3 on Hopper.
const FA3_ARCHS: &[&str] = &[
    "Qwen2ForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM",
    "LlamaForCausalLM",
    "Llama4ForCausalLM",
    "Olmo2ForCausalLM",
    "Gemma2ForCausalLM",
    "Gemma3ForCausalLM",
    "Glm4MoeForCausalLM",
];

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
        Arch::Hopper
            if version >= v(0, 4, 6) && (is_mla || gpt_oss || FA3_ARCHS.contains(&model_arch)) =>
        {
            "fa3"
        }
        // sm100 (0.5.6, reference A.6): TensorRT-LLM kernels for gpt-oss and DeepSeek-V3; from
        // 0.5.6.post1 trtllm_mha for every MHA model (server_args.py `is_blackwell()` branch).
        Arch::Blackwell if version >= v(0, 5, 6) && gpt_oss => "trtllm_mha",
        Arch::Blackwell if version >= Version::post(0, 5, 6, 1) && !is_mla => "trtllm_mha",
        Arch::Blackwell
            if version >= v(0, 5, 6) && is_mla && model_arch == "DeepseekV3ForCausalLM" =>
        {
            "trtllm_mla"
        }
        Arch::Blackwell if version >= v(0, 5, 6) && is_mla => "flashinfer",
        _ if gpt_oss => "triton",
        _ if is_mla && version >= v(0, 5, 0) => "triton",
        _ => "flashinfer",
    }
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
        assert_eq!(page_size("ascend"), 128);
    }
}
