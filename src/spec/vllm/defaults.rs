//! vLLM's version-dependent defaults, one function per rule, each naming the source it was
//! read from (the released wheels `vllm==V`, summarised in the project's vLLM reference,
//! sections A.2 token budget / `max_num_seqs`, A.4 async scheduling, A.9 memory, A.10 CUDA
//! graphs). V1 from 0.8.0 (its default engine), V0 for 0.6.0–0.7.x (section A.3's V0 notes).
use crate::spec::hardware::Arch;
use crate::spec::version::Version;

const fn v(a: u32, b: u32, c: u32) -> Version {
    Version::new(a, b, c)
}

/// The oldest vLLM whose default engine is V1 (`VLLM_USE_V1="1"` in `envs.py`@0.8.0).
pub const OLDEST_V1: Version = v(0, 8, 0);
/// The oldest vLLM modelled: V0 as 0.6.x and 0.7.x run it by default (`vllm/core/scheduler.py`).
pub const OLDEST_V0: Version = v(0, 6, 0);

/// Whether `version` runs the V0 engine by default (before 0.8.0).
pub fn is_v0(version: Version) -> bool {
    version < OLDEST_V1
}

/// V0's `--max-num-seqs` default (`max_num_seqs: int = 256`, `EngineArgs`@0.6.3).
pub const V0_MAX_NUM_SEQS: u64 = 256;
/// V0's block-manager watermark: admission keeps 1% of the GPU blocks free
/// (`BlockSpaceManager(watermark=0.01)`, `can_allocate`@0.6.3).
pub const V0_WATERMARK: f64 = 0.01;
/// Contexts above this turn V0's chunked prefill on by default (`arg_utils.py`@0.6.3:
/// `max_model_len > 32K`, GPU, no sliding window).
pub const V0_CHUNKED_PREFILL_ABOVE_LEN: u64 = 32768;

/// V0's chunked-prefill default: on for contexts above 32K tokens without a sliding window.
pub fn v0_chunked_prefill(max_model_len: u64, sliding_window: bool) -> bool {
    max_model_len > V0_CHUNKED_PREFILL_ABOVE_LEN && !sliding_window
}

/// V0's `max_num_batched_tokens` default (`SchedulerConfig.__init__`@0.6.3): with chunked
/// prefill 512 up to 0.6.4, 2048 from 0.6.5; without, `max(max_model_len, 2048)` (a whole
/// prompt must fit one step).
pub fn v0_max_num_batched_tokens(version: Version, chunked: bool, max_model_len: u64) -> u64 {
    match (chunked, version < v(0, 6, 5)) {
        (true, true) => 512,
        (true, false) => 2048,
        (false, _) => max_model_len.max(2048),
    }
}

/// V0's decode CUDA-graph batch sizes, ascending (reference A.10): `[1, 2, 4] + 8·i` up to
/// the smallest of them ≥ `max_num_seqs` (`_get_max_graph_batch_size`@0.6.3, whose list
/// ends at 256; `_set_cudagraph_sizes`'s V0 branch@0.7, whose list runs to 8192).
pub fn v0_capture_sizes(version: Version, max_num_seqs: u64) -> Vec<u64> {
    let cap = if version < v(0, 7, 0) { 256 } else { 8192 };
    let top = if max_num_seqs <= 4 {
        max_num_seqs.next_power_of_two()
    } else {
        max_num_seqs.div_ceil(8) * 8
    }
    .min(cap);
    let mut sizes: Vec<u64> = vec![1, 2, 4];
    sizes.extend((8..=cap).step_by(8));
    sizes.retain(|&s| s <= top);
    sizes
}
/// The newest vLLM release whose rules are modelled (the default `--vllm-version`).
pub const NEWEST: Version = v(0, 33, 0);

/// `--max-num-batched-tokens` and `--max-num-seqs` defaults of `vllm serve`
/// (`UsageContext.OPENAI_API_SERVER`; `EngineArgs._set_default_args` ≤0.11, then
/// `get_batch_defaults`): keyed on the device name before 0.8.5, on total memory after.
/// `device` is the profile's name and description (lowercased inside).
pub fn batch_defaults(version: Version, device: &str, total_gib: f64) -> (u64, u64) {
    let name = device.to_ascii_lowercase();
    let hopper_name = name.contains("h100") || name.contains("h200");
    let large = total_gib >= 70.0;
    if version < v(0, 8, 5) {
        // 0.8.0–0.8.4: "h100"/"h200" in the device name; max_num_seqs 1024 on any GPU.
        return (if hopper_name { 8192 } else { 2048 }, 1024);
    }
    if version < v(0, 9, 0) {
        // 0.8.5: total_memory ≥ 70 GiB.
        return if large { (8192, 1024) } else { (2048, 256) };
    }
    // 0.9.0+: A100-80G keeps the small defaults (vLLM PR #17885).
    let mid = large && !name.contains("a100");
    if version >= v(0, 28, 0) && total_gib >= 160.0 {
        // 0.28+: a ≥160 GiB tier (B200/B300; PR #51726).
        return (16384, 1024);
    }
    if mid {
        (8192, 1024)
    } else {
        (2048, 256)
    }
}

/// `--gpu-memory-utilization` default: 0.90 up to 0.19, 0.92 from 0.20 (`config/cache.py`).
pub fn gpu_memory_utilization(version: Version) -> f64 {
    if version >= v(0, 20, 0) {
        0.92
    } else {
        0.90
    }
}

/// First version with `--async-scheduling` (`async_scheduling: bool = False`@0.10.0).
pub const ASYNC_FLAG_SINCE: Version = v(0, 10, 0);
/// First version where async scheduling is on unless disabled (`None` = enabled@0.14.x).
pub const ASYNC_DEFAULT_SINCE: Version = v(0, 14, 0);
/// First version whose async scheduler skips a request that reached `max_tokens` in the
/// step in flight ("Avoid scheduling an extra step", `schedule`@0.12.0); before it (0.10–0.11)
/// such a request takes one more, wasted, decode slot.
pub const ASYNC_SKIPS_FINISHED_SINCE: Version = v(0, 12, 0);
/// First version that subtracts the estimated CUDA-graph memory from the KV budget
/// (`VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS` defaults to "1"@0.20).
pub const CUDAGRAPH_MEMORY_DEDUCTED_SINCE: Version = v(0, 20, 0);
/// First version whose admission needs blocks for the whole prompt
/// (`scheduler_reserve_full_isl=True`, 0.19.x).
pub const FULL_SEQUENCE_MUST_FIT_SINCE: Version = v(0, 19, 0);
/// First version whose API server clips `max_tokens` to `max_model_len − prompt` instead of
/// answering HTTP 400 (`get_max_tokens`@0.32.0).
pub const CLIPS_MAX_TOKENS_SINCE: Version = v(0, 32, 0);

/// First version that skips the long-prefill cap when one request is running or waiting in
/// all (`schedule`@0.31+: a lone request may take the whole budget).
pub const LONE_REQUEST_UNCAPPED_SINCE: Version = v(0, 31, 0);

/// First version whose `cudagraph_mode` defaults to FULL_AND_PIECEWISE (reference A.10):
/// pure decode steps replay full graphs (attention inside), mixed steps piecewise ones.
/// Before it (0.8.0–0.10.x) every graphed step is piecewise (attention always eager).
pub const FULL_AND_PIECEWISE_SINCE: Version = v(0, 11, 0);

/// Default KV block size: 16 on CUDA (`platforms/cuda.py`), forced by the MLA backends:
/// FlashMLA 64 on Hopper (0.8.5+), CUTLASS-MLA 128 on Blackwell (0.11+), Triton-MLA 16 else.
pub fn block_size(arch: Arch, mla: bool, version: Version) -> u64 {
    match (mla, arch) {
        (true, Arch::Hopper) => 64,
        (true, Arch::Blackwell) if version >= v(0, 11, 0) => 128,
        (true, Arch::Blackwell) => 64,
        _ => 16,
    }
}

/// Block sizes vLLM's `--block-size` accepts (`CacheConfig.BlockSize`).
pub const BLOCK_SIZES: &[u64] = &[1, 8, 16, 32, 64, 128];

/// CUDA-graph capture sizes in tokens, ascending (reference A.10):
/// - 0.8.0–0.9.x: `[1, 2, 4] + range(8, 513, 8)`;
/// - 0.10.0–0.11.1: `[1, 2, 4] + range(8, max + 1, 8)`, `max = min(2·max_num_seqs, 512)`;
/// - 0.11.2+: `[1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16)`, the same max (1024 on
///   Blackwell from 0.28); 0.33 appends `max_num_batched_tokens` when it is below the max;
///
/// always only sizes ≤ `max_num_batched_tokens` (a step never has more tokens).
pub fn capture_sizes(version: Version, arch: Arch, max_num_seqs: u64, mnbt: u64) -> Vec<u64> {
    let mut sizes: Vec<u64> = vec![1, 2, 4];
    if version < v(0, 10, 0) {
        sizes.extend((8..=512).step_by(8));
    } else {
        let cap = if version >= v(0, 28, 0) && arch == Arch::Blackwell {
            1024
        } else {
            512
        };
        let max = (2 * max_num_seqs).min(cap);
        if version < v(0, 11, 2) {
            sizes.extend((8..=max).step_by(8));
        } else {
            sizes.extend((8..256).step_by(8));
            sizes.extend((256..=max).step_by(16));
        }
        sizes.retain(|&s| s <= max);
        if version >= v(0, 33, 0) && mnbt <= max && !sizes.contains(&mnbt) {
            sizes.push(mnbt);
            sizes.sort_unstable();
        }
    }
    sizes.retain(|&s| s <= mnbt);
    sizes
}

/// The attention-efficiency key of the hardware profile that prices vLLM's default backend
/// (`platforms/cuda.py::get_attn_backend_cls`): FlashAttention 3 on Hopper, FlashInfer on
/// Blackwell (0.10.1+), FlashAttention 2 elsewhere (priced as flashinfer, the closest
/// measured kernel), FlashMLA for MLA on Hopper; alternatives follow in order. A model with
/// attention sinks (gpt-oss, `sinks`) runs Triton unified attention on sm80 (0.10.1–0.11.x:
/// `if (has_sink or use_fp8_kv_cache) and not cls.is_device_capability(90)`; later releases
/// reject FlashAttention 2 for sinks and fall to Triton too): `cost::unified_attention`.
pub fn attention_keys(arch: Arch, mla: bool, sinks: bool) -> &'static [&'static str] {
    match (arch, mla) {
        (Arch::Ampere, false) if sinks => &["triton", "flashinfer", "fa3"],
        (Arch::Hopper, true) => &["flashmla", "fa3", "flashinfer", "triton"],
        (Arch::Hopper, false) => &["fa3", "flashinfer", "triton"],
        (Arch::Blackwell, _) => &["flashinfer", "triton"],
        _ => &["flashinfer", "fa3", "triton"],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_by_version_and_gpu() {
        // Reference A.2's worked example: H100-80G (79.6 GiB) under `vllm serve`.
        for (version, device, gib, want) in [
            (v(0, 11, 0), "h100-sxm5-80gb", 79.6, (8192, 1024)),
            (v(0, 11, 0), "a100-sxm4-80gb", 79.6, (2048, 256)),
            (v(0, 8, 5), "a100-sxm4-80gb", 79.6, (8192, 1024)),
            (v(0, 8, 0), "a100-sxm4-80gb", 79.6, (2048, 1024)),
            (v(0, 33, 0), "b200", 179.1, (16384, 1024)),
            (v(0, 27, 0), "b200", 179.1, (8192, 1024)),
            (v(0, 33, 0), "l4", 22.0, (2048, 256)),
        ] {
            assert_eq!(
                batch_defaults(version, device, gib),
                want,
                "{device} {gib} GiB"
            );
        }
    }

    #[test]
    fn v0_defaults() {
        // A.2: Llama-3.1-8B's 131072 context turns chunking on with a 512 budget in 0.6.0–0.6.4.
        assert!(v0_chunked_prefill(131072, false) && !v0_chunked_prefill(32768, false));
        assert_eq!(v0_max_num_batched_tokens(v(0, 6, 3), true, 131072), 512);
        assert_eq!(v0_max_num_batched_tokens(v(0, 6, 5), true, 131072), 2048);
        assert_eq!(v0_max_num_batched_tokens(v(0, 6, 3), false, 8192), 8192);
        assert_eq!(v0_max_num_batched_tokens(v(0, 6, 3), false, 1024), 2048);
        let g = v0_capture_sizes(v(0, 6, 3), 256);
        assert_eq!((g.len(), g[3], *g.last().unwrap()), (35, 8, 256));
        assert_eq!(*v0_capture_sizes(v(0, 6, 3), 1000).last().unwrap(), 256);
        assert_eq!(*v0_capture_sizes(v(0, 7, 3), 1000).last().unwrap(), 1000);
        assert_eq!(v0_capture_sizes(v(0, 7, 3), 3), vec![1, 2, 4]);
    }

    #[test]
    fn capture_sizes_by_era() {
        let old = capture_sizes(v(0, 9, 0), Arch::Hopper, 1024, 8192);
        assert_eq!((old.len(), old[3], *old.last().unwrap()), (67, 8, 512));
        let mid = capture_sizes(v(0, 10, 0), Arch::Hopper, 256, 2048);
        assert_eq!(*mid.last().unwrap(), 512);
        let small = capture_sizes(v(0, 10, 0), Arch::Hopper, 16, 2048);
        assert_eq!(small, vec![1, 2, 4, 8, 16, 24, 32]);
        let new = capture_sizes(v(0, 11, 2), Arch::Hopper, 1024, 8192);
        // 3 + 31 (8..248) + 17 (256..512 by 16).
        assert_eq!(new.len(), 51);
        assert!(new.contains(&248) && new.contains(&272) && !new.contains(&264));
        let b200 = capture_sizes(v(0, 28, 0), Arch::Blackwell, 1024, 16384);
        assert_eq!(*b200.last().unwrap(), 1024);
    }
}
