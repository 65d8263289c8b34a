//! SGLang's piecewise (prefill/extend) CUDA graphs of 0.5.10–0.5.15: whether they are on by
//! default, the token counts captured, and the MiB their capture buffers add to the
//! `mem_fraction_static` reserve (re-exported by `spec::defaults`; from 0.5.16 the prefill
//! graph rules are `spec::graph_defaults`).
use super::hardware::Arch;
use super::version::Version;

const GIB_MIB: f64 = 1024.0;

/// First release with piecewise CUDA graphs on by default (`disable_piecewise_cuda_graph:
/// bool = False` replaces `enable_piecewise_cuda_graph = False`, server_args.py at v0.5.10;
/// also where the EAGLE draft reserve grows to 4 GB and the decode capture list always ends
/// at `cuda_graph_max_bs`).
pub const PIECEWISE_CUDA_GRAPH_FROM: Version = Version::new(0, 5, 10);

/// Model architectures SGLang never gives piecewise graphs (model_config.py v0.5.10 …
/// v0.5.13.post1, `piecewise_cuda_graph_disabled_model_archs` or `is_deepseek_nsa`: the
/// DeepSeek-V4 pair from v0.5.12, when the model arrived; none of the bundled models).
const PIECEWISE_DISABLED_ARCHS: &[&str] = &[
    "DeepseekV4ForCausalLM",
    "DeepseekV4ForCausalLMNextN",
    "DeepseekV32ForCausalLM",
    "Qwen3NextForCausalLM",
    "GlmMoeDsaForCausalLM",
    "BailingMoeV2_5ForCausalLM",
    "LLaDAModelLM",
];

/// Whether SGLang's `_handle_piecewise_cuda_graph` (server_args.py, v0.5.10 … v0.5.13) leaves
/// piecewise CUDA graphs on: from 0.5.10, on CUDA GPUs (not Ascend), without DP attention or
/// disaggregation (`disabled_by_flag` covers `--disable-piecewise-cuda-graph` and PD), not
/// for the listed architectures, and in 0.5.10 only not with speculative decoding (0.5.11
/// dropped that rule).
pub fn piecewise_cuda_graph_default(
    version: Version,
    arch: Arch,
    model_arch: &str,
    dp_attention: bool,
    speculative: bool,
    disabled_by_flag: bool,
) -> bool {
    let off = version < PIECEWISE_CUDA_GRAPH_FROM
        || arch == Arch::Ascend
        || dp_attention
        || disabled_by_flag
        || PIECEWISE_DISABLED_ARCHS.contains(&model_arch)
        || (speculative && version < Version::new(0, 5, 11));
    !off
}

/// Token counts SGLang captures piecewise graphs for (`_generate_piecewise_cuda_graph_tokens`,
/// v0.5.10 … v0.5.13), up to `max_tokens`.
pub fn piecewise_cuda_graph_tokens(max_tokens: u64) -> Vec<u64> {
    let mut l: Vec<u64> = (4..=32).step_by(4).collect();
    l.extend((48..=256).step_by(16));
    l.extend((288..=512).step_by(32));
    l.extend((576..=1024).step_by(64));
    l.extend((1280..=4096).step_by(256));
    l.extend((4608..=max_tokens.max(4608)).step_by(512));
    l.retain(|&t| t <= max_tokens);
    l
}

/// MiB the 0.5.10+ `mem_fraction_static` default reserves for piecewise graphs when they are
/// on: 8 MiB per captured token count up to `piecewise_cuda_graph_max_tokens` (the chunked
/// prefill size, none when chunking is off, capped by `--max-total-tokens`), or a flat
/// 1.5 GiB for MLA models (server_args.py at v0.5.10, `_handle_gpu_memory_settings`).
pub fn piecewise_reserve_mib(
    on: bool,
    is_mla: bool,
    chunked_prefill_size: Option<u64>,
    max_total_tokens: Option<u64>,
) -> f64 {
    if !on {
        return 0.0;
    }
    if is_mla {
        return 1.5 * GIB_MIB;
    }
    let max_tokens = chunked_prefill_size
        .unwrap_or(0)
        .min(max_total_tokens.unwrap_or(u64::MAX));
    piecewise_cuda_graph_tokens(max_tokens).len() as f64 * 8.0
}
