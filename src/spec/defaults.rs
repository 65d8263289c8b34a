//! SGLang's version-dependent defaults (`server_args.py`): `mem_fraction_static`,
//! `chunked_prefill_size`, `cuda_graph_max_bs` and the CUDA-graph capture list, the attention
//! backend and page size. See reference A.3, A.5, A.6. From 0.5.10 piecewise CUDA graphs
//! (prefill/extend graphs) are on by default and their capture buffers enter the
//! `mem_fraction_static` reserve ([`piecewise_cuda_graph_default`], [`piecewise_reserve_mib`]).
//! From 0.5.14 the graph settings live in `cuda_graph_config` ([`GRAPH_CONFIG_FROM`]); from
//! 0.5.15 the reserve depends on the PD role ([`PD_ROLE_RESERVE_FROM`]).
use super::hardware::Arch;
use super::version::Version;

const GIB_MIB: f64 = 1024.0;

fn v(a: u32, b: u32, c: u32) -> Version {
    Version::new(a, b, c)
}

/// Facts the defaults depend on.
#[derive(Debug, Clone, Copy)]
pub struct DefaultsInput {
    /// nvidia-smi `memory.total` (MiB) or the NPU's reported total.
    pub gpu_mem_mib: f64,
    pub tp: u64,
    pub is_npu: bool,
    pub version: Version,
    /// DP-attention ranks (`--dp` with `--enable-dp-attention`); 0 when DP attention is off.
    pub dp_attention: u64,
    /// Memory reserved for a speculative draft, MiB (0 without speculation; see
    /// `spec::speculative::reserve_mib`).
    pub spec_reserve_mib: f64,
    /// The server's side in a PD deployment (`--disaggregation-mode`), `None` colocated.
    pub pd_role: Option<PdRole>,
    /// Decode CUDA graphs on (not `--disable-cuda-graph`, not a PD prefill server).
    pub decode_graphs: bool,
    /// `--max-running-requests` as given (the speculative default of 48 is set later).
    pub max_running_requests: Option<u64>,
    /// `--speculative-num-draft-tokens` as given (its default is set later).
    pub num_draft_tokens: Option<u64>,
}

/// A PD server's side (`--disaggregation-mode prefill|decode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PdRole {
    Prefill,
    Decode,
}

/// First release reading the graph settings from `cuda_graph_config` (one prefill and one
/// decode phase; server_args.py at v0.5.14, `_parse_cuda_graph_config`): `--disable-cuda-graph`
/// turns the prefill (piecewise) graphs off too, so their reserve goes; the speculative draft
/// reserve leaves `_handle_gpu_memory_settings` (draft weights are loaded before the KV pool is
/// sized and the target's KV cell grows by the draft's layers: `spec::server`); a given
/// `--max-running-requests` caps the request pool at half the KV pool instead of the estimate.
pub const GRAPH_CONFIG_FROM: Version = Version::new(0, 5, 14);

/// First release sizing the `mem_fraction_static` reserve by PD role (server_args.py at
/// v0.5.15, `_handle_gpu_memory_settings`): a decode server reserves activations for
/// max(running requests × draft tokens, 2048) tokens instead of the chunk, a prefill server and
/// any server without decode graphs reserve nothing for them, and a prefill server nothing for
/// DP attention's padding.
pub const PD_ROLE_RESERVE_FROM: Version = Version::new(0, 5, 15);

/// First release giving 20–35 GiB GPUs (RTX 5090, A10, L4 class) chunk 4096 and decode graphs
/// up to 48 (TP < 4) or 160 requests, not 2048 and 24 / 80 (arg_groups/memory_hook.py at
/// v0.5.20, `handle_gpu_memory_settings`).
pub const SMALL_GPU_TIER_FROM: Version = Version::new(0, 5, 20);

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
        || (speculative && version < v(0, 5, 11));
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

/// `chunked_prefill_size` default (positive; SGLang's `-1` means disabled and is handled by the caller).
pub fn chunked_prefill_size(i: &DefaultsInput) -> u64 {
    let g = i.gpu_mem_mib;
    let ver = i.version;
    if ver < v(0, 4, 6) {
        return if g < 25000.0 { 2048 } else { 8192 };
    }
    if ver < v(0, 4, 8) {
        return if g < 25000.0 {
            2048
        } else if ver >= v(0, 4, 7) && g > 180000.0 {
            16384
        } else {
            8192
        };
    }
    if ver < v(0, 5, 3) {
        return if g < 35.0 * GIB_MIB {
            2048
        } else if g < 160.0 * GIB_MIB {
            8192
        } else {
            16384
        };
    }
    tier_053(i).0
}

/// (chunk, cuda_graph_max_bs) of the 0.5.3+ table (`_handle_gpu_memory_settings`).
fn tier_053(i: &DefaultsInput) -> (u64, u64) {
    let g = i.gpu_mem_mib;
    let small_tp = i.tp < 4;
    let npu_tiers = i.is_npu && i.version >= v(0, 5, 4);
    if g < 20.0 * GIB_MIB {
        (2048, 8)
    } else if npu_tiers && g < 32.0 * GIB_MIB {
        (32768, if small_tp { 16 } else { 64 })
    } else if g < 35.0 * GIB_MIB && i.version >= SMALL_GPU_TIER_FROM {
        (4096, if small_tp { 48 } else { 160 })
    } else if g < 35.0 * GIB_MIB {
        let bs = if !small_tp {
            80
        } else if i.version >= v(0, 5, 5) {
            24
        } else {
            16
        };
        (2048, bs)
    } else if g < 60.0 * GIB_MIB {
        (4096, if small_tp { 32 } else { 160 })
    } else if npu_tiers && g < 64.0 * GIB_MIB {
        (32768, if small_tp { 64 } else { 128 })
    } else if g < 160.0 * GIB_MIB {
        (8192, if small_tp { 256 } else { 512 })
    } else {
        (16384, 512)
    }
}

/// `cuda_graph_max_bs` default where the version sets one (`None`: the capture list decides).
pub fn cuda_graph_max_bs(i: &DefaultsInput) -> Option<u64> {
    let g = i.gpu_mem_mib;
    if i.version >= v(0, 5, 3) {
        return Some(tier_053(i).1);
    }
    if i.version >= v(0, 4, 8) {
        return (g < 35.0 * GIB_MIB).then_some(if i.tp < 4 { 8 } else { 80 });
    }
    if i.version >= v(0, 4, 6) {
        return (g < 25000.0).then_some(if i.tp < 4 { 8 } else { 80 });
    }
    Some(if g < 25000.0 {
        if i.version >= v(0, 4, 3) && i.tp >= 4 {
            80
        } else {
            8
        }
    } else {
        160
    })
}

/// Default `mem_fraction_static`. `chunk` is the effective chunked prefill size (or
/// max_prefill_tokens when chunking is off), `cg_max_bs` the effective graph max bs and
/// `piecewise_mib` the [`piecewise_reserve_mib`] (0 before 0.5.10).
pub fn mem_fraction_static(
    i: &DefaultsInput,
    chunk: u64,
    cg_max_bs: u64,
    piecewise_mib: f64,
) -> f64 {
    let g = i.gpu_mem_mib;
    let ps = i.tp as f64;
    let tp_table = || {
        if ps >= 16.0 {
            0.79
        } else if ps >= 8.0 {
            0.81
        } else if ps >= 4.0 {
            0.85
        } else if ps >= 2.0 {
            0.87
        } else {
            0.88
        }
    };
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    if i.version < v(0, 4, 6) {
        return tp_table();
    }
    if i.version < v(0, 4, 8) {
        let mut f = if g <= 81920.0 { tp_table() } else { 0.88 };
        if g > 96.0 * GIB_MIB {
            f = f64::min(f + 48.0 * GIB_MIB * (1.0 - f) / g, (g - 18.0 * GIB_MIB) / g);
        }
        if i.version >= v(0, 4, 7) && g > 180000.0 && !i.is_npu {
            f = 0.79;
        }
        // 0.4.7 with speculation: ×0.95 on ≤ 96 GB GPUs, else reserve 20 GB instead of 18.
        if i.version >= v(0, 4, 7) && i.spec_reserve_mib > 0.0 {
            f = if g <= 96.0 * GIB_MIB {
                f * 0.95
            } else {
                f.min((g - 20.0 * GIB_MIB) / g)
            };
        }
        return f;
    }
    if i.version < v(0, 5, 3) {
        let dp_extra = if i.dp_attention > 0 {
            4.0 * GIB_MIB
        } else {
            0.0
        };
        let r = dp_extra
            + if g < 35.0 * GIB_MIB {
                (2.8 + ps / 10.0) * GIB_MIB
            } else if g < 90.0 * GIB_MIB {
                (9.5 + ps / 2.0) * GIB_MIB
            } else if g < 160.0 * GIB_MIB {
                (12.0 + ps / 2.0) * GIB_MIB
            } else {
                32.0 * GIB_MIB
            }
            + i.spec_reserve_mib;
        return round3((g - r) / g);
    }
    let role_rules = i.version >= PD_ROLE_RESERVE_FROM;
    let activation_tokens = match i.pd_role {
        Some(PdRole::Decode) if role_rules => {
            let running = i.max_running_requests.unwrap_or(cg_max_bs).max(1);
            running * i.num_draft_tokens.unwrap_or(1).max(1)
        }
        _ => chunk,
    };
    let decode_side = !(role_rules && i.pd_role == Some(PdRole::Prefill));
    let mut r = 512.0 + (activation_tokens.max(2048) as f64) * 1.5 + ps / 8.0 * 1024.0;
    if decode_side && (i.decode_graphs || !role_rules) {
        r += cg_max_bs as f64 * 2.0;
    }
    if i.dp_attention > 0 && decode_side {
        let bs_dp = (cg_max_bs * i.dp_attention) as f64;
        r += bs_dp * 3.0 + if cg_max_bs > 300 { bs_dp * 1.5 } else { 0.0 };
    }
    r += piecewise_mib; // before the 10 GB floor, as in SGLang
    if g > 60.0 * GIB_MIB {
        r = r.max(10.0 * GIB_MIB);
    }
    r += i.spec_reserve_mib; // the draft model and its graphs, after the floor
    round3((g - r) / g)
}

/// The CUDA-graph capture list before clipping by the request pool (`max_bs` = effective
/// `cuda_graph_max_bs`, or `None` where the version does not set one).
pub fn capture_batch_sizes(i: &DefaultsInput, max_bs: Option<u64>) -> Vec<u64> {
    let g = i.gpu_mem_mib;
    let mut list: Vec<u64>;
    if i.version >= v(0, 5, 3) {
        let m = max_bs.unwrap_or(160);
        list = vec![1, 2, 4, 8, 12];
        list.extend((16..=256).step_by(8));
        list.extend((272..512).step_by(16));
        list.extend((512..=m.max(512)).step_by(32));
        list.retain(|&b| b <= m);
        // 0.5.10+: `if self.cuda_graph_max_bs not in capture_bs: capture_bs.append(...)`.
        if i.version >= PIECEWISE_CUDA_GRAPH_FROM && !list.contains(&m) {
            list.push(m);
        }
        return list;
    }
    if i.version >= v(0, 4, 6) {
        list = vec![1, 2, 4, 8];
        list.extend((16..=160).step_by(8));
        let big = if i.version >= v(0, 4, 8) {
            90.0 * GIB_MIB
        } else {
            96.0 * GIB_MIB
        };
        let huge = if i.version >= v(0, 4, 8) {
            160000.0
        } else {
            180000.0
        };
        if g > big {
            list.extend((168..=256).step_by(8));
        }
        if g > huge {
            list.extend((272..=512).step_by(16));
        }
    } else if i.version >= v(0, 4, 5) {
        list = vec![1, 2, 4, 8];
        list.extend((16..=160).step_by(8));
    } else {
        list = vec![1, 2, 4];
        list.extend((8..=160).step_by(8));
    }
    if let Some(m) = max_bs {
        list.retain(|&b| b <= m);
    }
    list
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
        // sm100: gpt-oss trtllm_mha since 0.5.0rc2 (its own branch; 0.5.1/0.5.5.post1 wheels);
        // DeepSeek-V3 0.5.6+, every MHA model 0.5.6.post1+ (`is_blackwell()` branch, A.6).
        Arch::Blackwell if gpt_oss => "trtllm_mha",
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
    fn inp(g: f64, tp: u64, ver: &str) -> DefaultsInput {
        DefaultsInput {
            gpu_mem_mib: g,
            tp,
            is_npu: false,
            version: ver.parse().unwrap(),
            dp_attention: 0,
            spec_reserve_mib: 0.0,
            pd_role: None,
            decode_graphs: true,
            max_running_requests: None,
            num_draft_tokens: None,
        }
    }
    fn mfs(g: f64, tp: u64, ver: &str) -> (f64, u64, Option<u64>) {
        let i = inp(g, tp, ver);
        let c = chunked_prefill_size(&i);
        let bs = cuda_graph_max_bs(&i);
        (mem_fraction_static(&i, c, bs.unwrap_or(0), 0.0), c, bs)
    }
    #[test]
    fn reference_table_053_plus() {
        assert_eq!(mfs(81559.0, 1, "0.5.6"), (0.835, 8192, Some(256)));
        assert_eq!(mfs(81559.0, 2, "0.5.6").0, 0.834);
        assert_eq!(mfs(81559.0, 4, "0.5.6"), (0.824, 8192, Some(512)));
        assert_eq!(mfs(81559.0, 8, "0.5.6").0, 0.818);
        assert_eq!(mfs(81920.0, 1, "0.5.6").0, 0.836);
        assert_eq!(mfs(81920.0, 8, "0.5.6").0, 0.819);
        assert_eq!(mfs(40960.0, 1, "0.5.6"), (0.833, 4096, Some(32)));
        assert_eq!(mfs(40960.0, 8, "0.5.6").0, 0.805);
        assert_eq!(mfs(97871.0, 1, "0.5.6").0, 0.863);
        assert_eq!(mfs(97871.0, 8, "0.5.6").0, 0.848);
        assert_eq!(mfs(143771.0, 1, "0.5.6").0, 0.907);
        assert_eq!(mfs(143771.0, 8, "0.5.6").0, 0.897);
        assert_eq!(mfs(183359.0, 1, "0.5.6"), (0.857, 16384, Some(512)));
        assert_eq!(mfs(24564.0, 1, "0.5.6"), (0.847, 2048, Some(24)));
    }
    /// 0.5.10+ default with piecewise graphs on for a non-MLA model (hand calculation from
    /// server_args.py at v0.5.10: 58 token counts up to chunk 8192 → 464 MiB more reserve).
    fn mfs_pcg(g: f64, tp: u64, ver: &str, mla: bool) -> f64 {
        let i = inp(g, tp, ver);
        let c = chunked_prefill_size(&i);
        let bs = cuda_graph_max_bs(&i).unwrap_or(0);
        let on = piecewise_cuda_graph_default(
            i.version,
            Arch::Hopper,
            "Qwen3ForCausalLM",
            false,
            false,
            false,
        );
        mem_fraction_static(&i, c, bs, piecewise_reserve_mib(on, mla, Some(c), None))
    }
    #[test]
    fn piecewise_graphs_from_0_5_10() {
        assert_eq!(piecewise_cuda_graph_tokens(8192).len(), 58);
        assert_eq!(piecewise_cuda_graph_tokens(4096).len(), 50);
        assert_eq!(*piecewise_cuda_graph_tokens(16384).last().unwrap(), 16384);
        // 0.5.9 is still 0.5.8's rule (piecewise graphs off by default): H100 TP1 0.835.
        assert_eq!(mfs_pcg(81559.0, 1, "0.5.9", false), 0.835);
        assert_eq!(mfs_pcg(81559.0, 1, "0.5.10", false), 0.830);
        assert_eq!(mfs_pcg(81559.0, 1, "0.5.13", false), 0.830);
        assert_eq!(mfs_pcg(81559.0, 1, "0.5.13", true), 0.816); // MLA: flat 1.5 GiB
        assert_eq!(mfs_pcg(40960.0, 1, "0.5.13", false), 0.823);
        assert_eq!(mfs_pcg(183359.0, 1, "0.5.13", false), 0.854);
        // Off by default before 0.5.10, on Ascend, with DP attention, for PD / the flag,
        // and with speculation in 0.5.10 only.
        let on = |ver: &str, arch, dp, spec, flag| {
            piecewise_cuda_graph_default(
                ver.parse().unwrap(),
                arch,
                "LlamaForCausalLM",
                dp,
                spec,
                flag,
            )
        };
        assert!(!on("0.5.9", Arch::Hopper, false, false, false));
        assert!(on("0.5.10", Arch::Ampere, false, false, false));
        assert!(!on("0.5.10", Arch::Ascend, false, false, false));
        assert!(!on("0.5.13", Arch::Hopper, true, false, false));
        assert!(!on("0.5.13", Arch::Hopper, false, false, true));
        assert!(!on("0.5.10", Arch::Hopper, false, true, false));
        assert!(on("0.5.11", Arch::Hopper, false, true, false));
        assert!(!piecewise_cuda_graph_default(
            Version::new(0, 5, 13),
            Arch::Hopper,
            "Qwen3NextForCausalLM",
            false,
            false,
            false
        ));
        assert_eq!(piecewise_reserve_mib(true, false, None, None), 0.0); // chunking off
        assert_eq!(
            piecewise_reserve_mib(true, false, Some(8192), Some(1000)),
            8.0 * 37.0
        );
        // 0.5.10+ captures cuda_graph_max_bs itself.
        let l = capture_batch_sizes(&inp(81920.0, 1, "0.5.9"), Some(100));
        assert_eq!(*l.last().unwrap(), 96);
        let l = capture_batch_sizes(&inp(81920.0, 1, "0.5.10"), Some(100));
        assert_eq!(&l[l.len() - 2..], &[96, 100]);
    }
    #[test]
    fn reference_table_048_to_052() {
        assert_eq!(mfs(81559.0, 1, "0.5.1").0, 0.874);
        assert_eq!(mfs(81559.0, 8, "0.5.1").0, 0.831);
        assert_eq!(mfs(81920.0, 1, "0.5.1").0, 0.875);
        assert_eq!(mfs(81920.0, 8, "0.5.1").0, 0.831);
        assert_eq!(mfs(40960.0, 1, "0.5.1").0, 0.75);
        assert_eq!(mfs(97871.0, 1, "0.5.1").0, 0.869);
        assert_eq!(mfs(143771.0, 8, "0.5.1").0, 0.886);
        assert_eq!(mfs(183359.0, 1, "0.5.1"), (0.821, 16384, None));
    }
    #[test]
    fn reference_table_older() {
        assert_eq!(mfs(81559.0, 1, "0.4.6").0, 0.88);
        assert_eq!(mfs(81559.0, 8, "0.4.6").0, 0.81);
        assert!((mfs(143771.0, 1, "0.4.6").0 - 0.8718).abs() < 1e-4);
        assert_eq!(mfs(81559.0, 4, "0.4.3").0, 0.85);
    }
    #[test]
    fn capture_lists() {
        let l = capture_batch_sizes(&inp(81920.0, 1, "0.5.6"), Some(256));
        assert_eq!(&l[..6], &[1, 2, 4, 8, 12, 16]);
        assert_eq!(*l.last().unwrap(), 256);
        let l = capture_batch_sizes(&inp(81920.0, 1, "0.5.1"), None);
        assert_eq!(*l.last().unwrap(), 160);
        let l = capture_batch_sizes(&inp(97871.0, 8, "0.5.1"), None);
        assert_eq!(*l.last().unwrap(), 256);
        let l = capture_batch_sizes(&inp(81920.0, 8, "0.5.6"), Some(512));
        assert!(l.contains(&496) && l.contains(&512) && !l.contains(&264));
    }
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
