//! CUDA-graph defaults of SGLang 0.5.16 and later: which prefill graph a server captures
//! (0.5.10–0.5.15's piecewise graphs, `defaults::piecewise_cuda_graph_default`, become
//! "breakable" prefill graphs, the CUDA default from 0.5.16, [`BREAKABLE_PREFILL_GRAPH_FROM`]),
//! whether `mem_fraction_static` reserves room for them, and the decode graph's `max_bs` cap
//! by a given `--max-running-requests` ([`DECODE_MAX_BS_RUNNING_CAP_FROM`]). Read from the PyPI
//! packages' `server_args.py` (0.5.16–0.5.18), `arg_groups/{cuda_graph_hook,memory_hook}.py`
//! (0.5.19–0.5.23) and `model_executor/cuda_graph_config.py`.
use super::defaults::{piecewise_cuda_graph_default, PdRole, GRAPH_CONFIG_FROM};
use super::hardware::Arch;
use super::server_flags::ServerFlags;
use super::version::Version;

/// First release whose CUDA prefill default is the breakable graph (cuda_graph_config.py at
/// v0.5.16, `default_prefill_backend`: `BREAKABLE if is_cuda() else TC_PIECEWISE`; server_args.py
/// `_disable_breakable_cudagraph_if_incompatible`). Unlike the piecewise graphs it stays on for
/// a PD prefill server (only `_apply_cuda_graph_disaggregation_roles` turns the prefill phase
/// off, on a decode server); off for MLA, DeepSeek-V4 and DP attention; the reserve is the
/// 0.5.10 one (8 MiB per captured token count, 1.5 GiB for MLA, `reserve_for_graph_mb`).
pub const BREAKABLE_PREFILL_GRAPH_FROM: Version = Version::new(0, 5, 16);

/// First release keeping breakable prefill graphs with DP attention (server_args.py at v0.5.17:
/// the "DP attention" rule leaves `_disable_breakable_cudagraph_if_incompatible`) and for the
/// sparse-attention (DSA) MLA models (rule "MLA attention (non-DSA)").
pub const BREAKABLE_DP_ATTENTION_FROM: Version = Version::new(0, 5, 17);

/// First release keeping breakable prefill graphs for every MLA model (server_args.py at
/// v0.5.18: the MLA rule is gone; DeepSeek-V3 on `trtllm_mla` still runs prefill eager,
/// `_disable_prefill_cuda_graph_for_deepseek_trtllm_mla`, after the memory reserve is set).
pub const BREAKABLE_MLA_FROM: Version = Version::new(0, 5, 18);

/// First release capping the default decode graph `max_bs` by a given
/// `--max-running-requests` (arg_groups/memory_hook.py at v0.5.22,
/// `handle_gpu_memory_settings`: `decode_max_bs_is_default and max_running_requests is not
/// None and max_bs > max_running_requests`), before the reserve and the capture list.
pub const DECODE_MAX_BS_RUNNING_CAP_FROM: Version = Version::new(0, 5, 22);

/// Sparse-attention MLA models (`is_deepseek_dsa`, model_config.py at v0.5.17), exempt from
/// 0.5.17's MLA rule.
const DSA_ARCHS: &[&str] = &["DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"];

/// DeepSeek-V4 (`is_deepseek_v4`): no breakable prefill graphs (capture-pool memory pressure).
const DEEPSEEK_V4_ARCHS: &[&str] = &["DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN"];

/// What decides a server's prefill CUDA graph.
#[derive(Debug, Clone, Copy)]
pub struct PrefillGraphInput<'a> {
    pub version: Version,
    pub arch: Arch,
    pub model_arch: &'a str,
    pub is_mla: bool,
    /// DP attention really on (`--enable-dp-attention` with `--dp` > 1).
    pub dp_attention: bool,
    pub speculative: bool,
    pub pd_role: Option<PdRole>,
    /// `--disable-piecewise-cuda-graph`, or `--disable-cuda-graph` from 0.5.14 (both phases).
    pub disabled_by_flag: bool,
    /// The resolved attention backend.
    pub attention_backend: &'a str,
}

/// The prefill graph facts: whether `mem_fraction_static` reserves room for it (the backend is
/// not `disabled` when `_handle_gpu_memory_settings` runs) and whether prefills replay it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefillGraph {
    pub reserve: bool,
    pub replay: bool,
}

impl PrefillGraph {
    /// What `ServerConfig::piecewise_prefill` (the cost layer's "prefills replay a graph")
    /// gets: [`PrefillGraph::reserve`]. DeepSeek-V3 on trtllm_mla keeps the reserve but
    /// prefills eagerly (`replay` false); not passed on, because the cost layer's MLA eager
    /// host time applies to every eager step, decode included (`cost::eager_host`), so a B200
    /// would price slower than an H200 at the same decode shape (`tests/physics.rs`).
    pub fn cost_layer_replay(&self) -> bool {
        self.reserve
    }
}

/// Whether the user's flags turn the prefill graph off: `--disable-piecewise-cuda-graph`, or
/// from 0.5.14 `--disable-cuda-graph` (both phases; a PD prefill server's own
/// `disable_cuda_graph` is `spec::pd`'s decode-graph switch, not the user's).
pub fn disabled_by_flags(flags: &ServerFlags, version: Version, pd_role: Option<PdRole>) -> bool {
    flags.disable_piecewise_cuda_graph
        || (flags.disable_cuda_graph
            && version >= GRAPH_CONFIG_FROM
            && pd_role != Some(PdRole::Prefill))
}

/// SGLang's prefill CUDA graph default for this server (piecewise before 0.5.16, breakable from).
pub fn prefill_graph(i: &PrefillGraphInput) -> PrefillGraph {
    let v = i.version;
    if v < BREAKABLE_PREFILL_GRAPH_FROM {
        // 0.5.10–0.5.15: `_handle_piecewise_cuda_graph` turns them off with PD on either side.
        let on = piecewise_cuda_graph_default(
            v,
            i.arch,
            i.model_arch,
            i.dp_attention,
            i.speculative,
            i.disabled_by_flag || i.pd_role.is_some(),
        );
        return PrefillGraph {
            reserve: on,
            replay: on,
        };
    }
    let mla_off = i.is_mla
        && v < BREAKABLE_MLA_FROM
        && !(v >= BREAKABLE_DP_ATTENTION_FROM && DSA_ARCHS.contains(&i.model_arch));
    // Ascend: the non-CUDA default (tc_piecewise until 0.5.21, then disabled) is turned off
    // for non-CUDA hardware.
    let off = i.arch == Arch::Ascend
        || i.disabled_by_flag
        || i.pd_role == Some(PdRole::Decode)
        || DEEPSEEK_V4_ARCHS.contains(&i.model_arch)
        || mla_off
        || (i.dp_attention && v < BREAKABLE_DP_ATTENTION_FROM);
    let trtllm_mla_eager =
        i.model_arch == "DeepseekV3ForCausalLM" && i.attention_backend == "trtllm_mla";
    PrefillGraph {
        reserve: !off,
        replay: !off && !trtllm_mla_eager,
    }
}

/// The default decode graph `max_bs` after 0.5.22's cap by a given `--max-running-requests`
/// (`given_running`; the speculative default of 48 is set later and does not cap it).
pub fn capped_decode_max_bs(
    version: Version,
    default_max_bs: Option<u64>,
    given_running: Option<u64>,
) -> Option<u64> {
    match (default_max_bs, given_running) {
        (Some(bs), Some(r)) if version >= DECODE_MAX_BS_RUNNING_CAP_FROM && bs > r => Some(r),
        (bs, _) => bs,
    }
}

/// First release whose `server_args` sets `cuda_graph_max_bs = max(cuda_graph_bs)` for a given
/// `--cuda-graph-bs` list (server_args.py at v0.5.3; absent at v0.5.2): the list is captured
/// as given. Before, `get_batch_sizes_to_capture` (cuda_graph_runner.py 0.4.7–0.5.2) filters it
/// by the default `cuda_graph_max_bs` and, when its largest size is below that cap, appends
/// `range(max(list), cap + 1, 16)`.
pub const EXPLICIT_LIST_SETS_MAX_FROM: Version = Version::new(0, 5, 3);

/// The largest captured decode batch for a `--cuda-graph-bs` list, else `max_bs` as resolved.
pub fn explicit_max_bs(version: Version, list: Option<&[u64]>, max_bs: Option<u64>) -> Option<u64> {
    match list {
        Some(l) if version >= EXPLICIT_LIST_SETS_MAX_FROM => l.iter().copied().max().or(max_bs),
        _ => max_bs,
    }
}

/// The decode capture list for a `--cuda-graph-bs` list, before the request-pool filter
/// (the caller applies it as for the default list); `max_bs` from [`explicit_max_bs`].
pub fn explicit_capture_list(version: Version, list: &[u64], max_bs: Option<u64>) -> Vec<u64> {
    let mut l: Vec<u64> = list.iter().copied().filter(|&b| b > 0).collect();
    if let (true, Some(cap)) = (version < EXPLICIT_LIST_SETS_MAX_FROM, max_bs) {
        l.retain(|&b| b <= cap);
        let top = l.iter().copied().max().unwrap_or(cap);
        if top < cap {
            l.extend((top..=cap).step_by(16));
        }
    }
    l.sort_unstable();
    l.dedup();
    l
}

/// A capture list within the request pool: a list reaching past `req_pool_size` keeps the
/// sizes below it and captures the pool's size itself (`get_batch_sizes_to_capture`: "make
/// sure we capture the maximum bs").
pub fn within_request_pool(mut list: Vec<u64>, req_pool_size: u64) -> Vec<u64> {
    if list.last().is_some_and(|&max| req_pool_size < max) {
        list.retain(|&b| b <= req_pool_size);
        list.push(req_pool_size);
        list.dedup();
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input<'a>(ver: &str, model_arch: &'a str, is_mla: bool) -> PrefillGraphInput<'a> {
        PrefillGraphInput {
            version: ver.parse().unwrap(),
            arch: Arch::Hopper,
            model_arch,
            is_mla,
            dp_attention: false,
            speculative: false,
            pd_role: None,
            disabled_by_flag: false,
            attention_backend: "fa3",
        }
    }

    fn on(i: &PrefillGraphInput) -> bool {
        prefill_graph(i).replay
    }

    #[test]
    fn breakable_graphs_keep_a_pd_prefill_server_and_drop_mla_until_0_5_18() {
        let q = "Qwen3ForCausalLM";
        // PD prefill: piecewise off (0.5.15), breakable on (0.5.16, server_args.py
        // `_apply_cuda_graph_disaggregation_roles` only clears the decode server's prefill).
        for (ver, want) in [("0.5.15", false), ("0.5.16", true)] {
            let i = PrefillGraphInput {
                pd_role: Some(PdRole::Prefill),
                ..input(ver, q, false)
            };
            assert_eq!(on(&i), want, "{ver}");
        }
        let dec = PrefillGraphInput {
            pd_role: Some(PdRole::Decode),
            ..input("0.5.23", q, false)
        };
        assert!(!prefill_graph(&dec).reserve);
        // MLA: piecewise on at 0.5.15, breakable off at 0.5.16/0.5.17, on at 0.5.18.
        let ds = "DeepseekV3ForCausalLM";
        for (ver, want) in [
            ("0.5.15", true),
            ("0.5.16", false),
            ("0.5.17", false),
            ("0.5.18", true),
        ] {
            assert_eq!(on(&input(ver, ds, true)), want, "{ver}");
        }
        // 0.5.17 exempts the DSA models from the MLA rule.
        assert!(on(&input("0.5.17", "DeepseekV32ForCausalLM", true)));
        // DeepSeek-V3 on trtllm_mla: reserved, then turned off (runs eager).
        let b200 = PrefillGraphInput {
            arch: Arch::Blackwell,
            attention_backend: "trtllm_mla",
            ..input("0.5.23", ds, true)
        };
        assert_eq!(
            prefill_graph(&b200),
            PrefillGraph {
                reserve: true,
                replay: false
            }
        );
        // Qwen3-Next is on the piecewise blacklist, not on the breakable one.
        assert!(!on(&input("0.5.15", "Qwen3NextForCausalLM", false)));
        assert!(on(&input("0.5.16", "Qwen3NextForCausalLM", false)));
        // DP attention: off at 0.5.16, on from 0.5.17. Ascend: off.
        let dp = |ver| PrefillGraphInput {
            dp_attention: true,
            ..input(ver, q, false)
        };
        assert!(!on(&dp("0.5.16")) && on(&dp("0.5.17")));
        let npu = PrefillGraphInput {
            arch: Arch::Ascend,
            ..input("0.5.23", q, false)
        };
        assert!(!on(&npu));
    }

    #[test]
    fn decode_max_bs_is_capped_by_a_given_running_cap_from_0_5_22() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert_eq!(
            capped_decode_max_bs(v("0.5.21"), Some(256), Some(64)),
            Some(256)
        );
        assert_eq!(
            capped_decode_max_bs(v("0.5.22"), Some(256), Some(64)),
            Some(64)
        );
        assert_eq!(
            capped_decode_max_bs(v("0.5.23"), Some(256), Some(512)),
            Some(256)
        );
        assert_eq!(
            capped_decode_max_bs(v("0.5.23"), Some(256), None),
            Some(256)
        );
    }

    #[test]
    fn an_explicit_capture_list_follows_the_release() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        // 0.5.3+: captured as given, and its largest size is the cap.
        assert_eq!(
            explicit_max_bs(v("0.5.9"), Some(&[1, 2, 4, 8, 16]), Some(256)),
            Some(16)
        );
        assert_eq!(
            explicit_capture_list(v("0.5.9"), &[16, 1, 4, 2, 8], Some(16)),
            [1, 2, 4, 8, 16]
        );
        // 0.4.7–0.5.2 with a cap set (160): filtered by it, then range(16, 161, 16) appended
        // (cuda_graph_runner.py 0.5.1 l. 207–212), by hand.
        assert_eq!(
            explicit_max_bs(v("0.5.1"), Some(&[1, 2, 4, 8, 16]), Some(160)),
            Some(160)
        );
        let mut want = vec![1, 2, 4, 8];
        want.extend((16..=160).step_by(16));
        assert_eq!(
            explicit_capture_list(v("0.5.1"), &[1, 2, 4, 8, 16], Some(160)),
            want
        );
        assert_eq!(
            explicit_capture_list(v("0.5.1"), &[1, 200], Some(160)),
            [1, 17, 33, 49, 65, 81, 97, 113, 129, 145]
        );
        // No cap set (0.4.8–0.5.2 on a GPU of 35 GiB or more): as given.
        assert_eq!(
            explicit_capture_list(v("0.5.1"), &[1, 2, 4, 8, 16], None),
            [1, 2, 4, 8, 16]
        );
        // The request pool bounds every list.
        assert_eq!(within_request_pool(vec![1, 2, 4, 8, 16], 6), [1, 2, 4, 6]);
    }
}
