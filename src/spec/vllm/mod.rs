//! vLLM server settings (`vllm serve` flag names, in [`ServerFlags`]) resolved into the
//! values vLLM's V1 engine runs with: the token budget and running cap by version and GPU,
//! the KV cache sized as `gpu_worker.determine_available_memory` sizes it, block size,
//! CUDA-graph capture sizes, async scheduling. The result is a [`ServerConfig`] whose common
//! fields hold the vLLM equivalents, with [`VllmConfig`] in `ServerConfig::vllm`.
pub mod config;
pub mod defaults;
pub mod frontend;
pub mod mxfp4;
pub mod overheads;

pub use config::VllmConfig;

use super::hybrid_kv::VllmHybridKv;

use super::hardware::{Arch, HardwareProfile};
use super::model::{KvDtype, ModelSpec, WeightFormat, WindowKind};
use super::server::{LoadBalanceMethod, SchedulePolicy, ServerConfig, ServerFlags};
use super::version::Version;
use crate::error::{Error, Result};

const GIB: f64 = (1u64 << 30) as f64;
const MIB: f64 = (1u64 << 20) as f64;

/// Memory outside torch's allocator that grows from the worker's start to the end of the profile
/// run (`MemoryProfilingResult.non_torch_increase`: cuBLAS workspaces, NCCL and custom
/// all-reduce buffers), bytes, TP 1. Sourced from logged V1 runs on one GPU: 0.07 GiB
/// ("0.07 GiB for non-torch memory", 0.11.0, H100) and 0.26 GiB ("15.26 GiB for consumed memory
/// (weights + non-torch)" after "Model loading took 15.0 GiB", 0.31.0, A100, Llama-3.1-8B);
/// V0 logs of the same measurement 0.08–0.26 GiB ("non_torch_memory takes 0.16GiB", H100,
/// vllm-project/vllm#12126; validation/vllm/kv-memory-notes.md). Bounds 0.07–0.26 GiB.
pub const NON_TORCH_BYTES: f64 = 0.25 * GIB;
/// Extra non-torch memory with TP > 1 (NCCL channels, custom all-reduce IPC buffers): an
/// assumption (no TP > 1 log of this term on a bundled GPU was found; one B200 TP 4 + EP log
/// reads 0.95 GiB in all).
const NON_TORCH_TP_BYTES: f64 = 0.25 * GIB;
/// `profile_cudagraph_memory()`'s estimate subtracted from 0.20 on, bytes: an assumption
/// (logged estimates: 0.23 GiB Llama-3.1-8B A100, 0.17 GiB on TP 4 RTX 3090s, 4.99 GiB for a
/// 106 GiB-per-rank MoE on B200; real graph pools are logged at 0.2–1.9 GiB).
pub const CUDAGRAPH_ESTIMATE_BYTES: f64 = 0.5 * GIB;
/// Bytes the profile run's dummy sampler holds per (sequence × vocabulary entry) at its peak:
/// the bf16 logits of `compute_logits` (2), `Sampler.forward`'s float32 copy (4, divided by
/// the temperature in place), then FlashInfer's `top_k_top_p_sampling_from_logits`, which
/// masks the top-k into a new float32 tensor (4) and takes its softmax (4) while the others
/// are alive (`_dummy_sampler_run` sets top_k = vocab − 1, top_p = 0.9; read in the 0.11.0 and
/// 0.31.0 wheels). FlashInfer is assumed present: vLLM's CUDA images build it and 0.31.0
/// requires `flashinfer-python`; a bare pip install of 0.11 (where it is an extra) sorts the
/// vocabulary instead (`apply_top_k_top_p`, 28–40 B per entry: not modelled; the gpt-oss-120b
/// H100 logs of vllm#23278 and #27508 are that path).
pub const SAMPLER_BYTES_PER_LOGIT: f64 = 14.0;
/// V0's (0.6–0.7) profile-run peak per (sequence × vocabulary entry): the bf16 logits only.
/// Logged: Llama-3.1-8B, 0.6.4, chunked prefill on (512 tokens over 256 sequences),
/// "peak_torch_memory=15.05GiB" after "Loading model weights took 14.9888 GB": 0.06 GiB, the
/// size of 256 × 128,256 bf16 logits (vllm-project/vllm#10517). V0's sampler code was not read.
pub const V0_SAMPLER_BYTES_PER_LOGIT: f64 = 2.0;

/// Peak torch memory of vLLM's profile run (`profile_run`: one forward of
/// `max_num_batched_tokens` tokens over `min(max_num_seqs, max_num_batched_tokens)`
/// sequences, then the sampler on their last tokens), bytes per rank: the widest layer's
/// live activations in bf16 (hidden and residual, the fused QKV output, the MLP's gate/up
/// output and its activation) per token, or the sampler's [`SAMPLER_BYTES_PER_LOGIT`] over
/// every sequence's full vocabulary (the logits are gathered to every TP rank), whichever is
/// larger. V0 keeps only the bf16 logits ([`V0_SAMPLER_BYTES_PER_LOGIT`]).
pub fn activation_peak_bytes(
    model: &ModelSpec,
    tp: u64,
    mnbt: u64,
    max_num_seqs: u64,
    v0: bool,
) -> f64 {
    let tp = tp.max(1) as f64;
    let h = model.hidden_size as f64;
    let qkv = (model.num_attention_heads + 2 * model.num_kv_heads) as f64 * model.head_dim as f64;
    let mlp = match &model.moe {
        // fused_moe keeps every routed copy's gate/up output (not divided by TP at this size).
        Some(m) => {
            (m.experts_per_token * m.expert_intermediate_size) as f64 * 3.0 / tp
                + m.shared_expert_intermediate_size as f64 * 3.0 / tp
        }
        None => model.intermediate_size as f64 * 3.0 / tp,
    };
    let per_token = 2.0 * (2.0 * h + qkv / tp + mlp);
    let forward = mnbt as f64 * per_token;
    let seqs = max_num_seqs.min(mnbt) as f64;
    let per_logit = if v0 {
        V0_SAMPLER_BYTES_PER_LOGIT
    } else {
        SAMPLER_BYTES_PER_LOGIT
    };
    let sampler = seqs * model.vocab_size as f64 * per_logit;
    forward.max(sampler)
}

fn positive(flag: &str, v: Option<u64>) -> Result<Option<u64>> {
    match v {
        Some(x) if x == 0 || x > 1 << 40 => Err(Error::invalid(
            flag,
            flag.trim_start_matches('-').replace('-', "_"),
            format!("must be between 1 and 2^40, got {x}"),
        )),
        o => Ok(o),
    }
}

/// `--kv-cache-dtype` as vLLM spells it.
fn kv_dtype(flag: Option<&str>, model: &ModelSpec) -> Result<KvDtype> {
    match flag {
        None | Some("auto") => Ok(model.kv_cache_dtype),
        Some("bfloat16") | Some("float16") | Some("bf16") => Ok(KvDtype::Bf16),
        Some("fp8") | Some("fp8_e4m3") | Some("fp8_e5m2") => Ok(KvDtype::Fp8),
        Some(o) => Err(Error::Unknown {
            kind: "vLLM --kv-cache-dtype",
            name: o.into(),
            available: "auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2".into(),
        }),
    }
}

/// Chunked prefill: always on in V1 (refusing `--no-enable-chunked-prefill`, not modelled
/// there); in V0 the flag, else on above a 32K context without a sliding window.
fn chunked_prefill(
    flags: &ServerFlags,
    version: Version,
    max_model_len: u64,
    model: &ModelSpec,
) -> Result<bool> {
    let flag = "--enable-chunked-prefill";
    match (
        flags.enable_chunked_prefill,
        flags.no_enable_chunked_prefill,
    ) {
        (true, true) => Err(Error::invalid(
            flag,
            "enable_chunked_prefill",
            "give --enable-chunked-prefill or --no-enable-chunked-prefill, not both",
        )),
        (_, true) if !defaults::is_v0(version) => Err(Error::invalid(
            "--no-enable-chunked-prefill",
            "enable_chunked_prefill",
            format!(
                "servesim models vLLM {version}'s V1 engine with chunked prefill only; \
                 prefill-first scheduling is modelled for V0 (before 0.8.0)"
            ),
        )),
        (true, _) => Ok(true),
        (_, true) => Ok(false),
        _ if defaults::is_v0(version) => Ok(defaults::v0_chunked_prefill(
            max_model_len,
            model.sliding_window.is_some(),
        )),
        _ => Ok(true),
    }
}

/// Resolves `flags` for `model` on `hw` as vLLM's `EngineArgs` + `gpu_worker` would.
pub fn resolve(
    flags: &ServerFlags,
    hw: &HardwareProfile,
    model: &ModelSpec,
) -> Result<ServerConfig> {
    let version = flags.vllm_version.unwrap_or(defaults::NEWEST);
    if version < defaults::OLDEST_V0 {
        return Err(Error::invalid(
            "--vllm-version",
            "vllm_version",
            format!(
                "vLLM {version} is older than the oldest modelled, {} (V0 from 0.6.0, V1 from 0.8.0)",
                defaults::OLDEST_V0
            ),
        ));
    }
    let v0 = defaults::is_v0(version);
    if version > Version::new(defaults::NEWEST.major, defaults::NEWEST.minor, 99) {
        return Err(Error::invalid(
            "--vllm-version",
            "vllm_version",
            format!(
                "vLLM {version} is newer than the newest modelled, {}",
                defaults::NEWEST
            ),
        ));
    }
    if hw.arch == Arch::Ascend {
        return Err(Error::invalid(
            "--engine",
            "engine",
            format!(
                "vLLM on Ascend (vllm-ascend) is not modelled; {} needs --engine sglang",
                hw.name
            ),
        ));
    }
    if model.linear_attention.is_some() {
        // vLLM V1 keeps GDN state in its own KV-cache group (`MambaSpec`), sized with the
        // attention pages; that split is not modelled (SGLang's is, `spec::mamba_pool`).
        return Err(Error::invalid(
            "--engine",
            "engine",
            format!(
                "{}: vLLM's memory for gated delta-net layers is not modelled; use --engine sglang",
                model.name
            ),
        ));
    }
    if model
        .sliding_window
        .as_ref()
        .is_some_and(|w| w.kind == WindowKind::Chunked)
    {
        // vLLM keeps chunked layers in their own KV group kind (`ChunkedLocalAttentionSpec`,
        // `ChunkedLocalAttentionManager`), neither of the two kinds `hybrid_kv` models.
        return Err(Error::invalid(
            "--engine",
            "engine",
            format!(
                "{}: vLLM's chunked local-attention KV groups are not modelled; use --engine \
                 sglang",
                model.name
            ),
        ));
    }
    let tp = positive("--tensor-parallel-size", flags.tp)?.unwrap_or(1);
    model.check_tp(tp)?;
    let dp = flags.dp.unwrap_or(1);
    if dp == 0 || dp > 1 << 16 {
        return Err(Error::invalid(
            "--data-parallel-size",
            "data_parallel_size",
            format!("must be between 1 and 65536, got {dp}"),
        ));
    }
    let weight_format = WeightFormat::from_flag(flags.quantization.as_deref(), model.weights)?;
    if matches!(weight_format, WeightFormat::W4a16Int4 | WeightFormat::Nvfp4) {
        return Err(Error::invalid(
            "--engine",
            "engine",
            format!(
                "{}: vLLM's {} path is not modelled; use --engine sglang",
                model.name,
                if weight_format == WeightFormat::Nvfp4 {
                    "NVFP4"
                } else {
                    "int4 W4A16 MoE"
                }
            ),
        ));
    }
    let kv_dtype = kv_dtype(flags.kv_cache_dtype.as_deref(), model)?;
    let device = format!("{} {}", hw.name, hw.description);
    let total_bytes = hw.memory.reported_total_mib * MIB;
    let (mnbt_default, mns_default) = defaults::batch_defaults(version, &device, total_bytes / GIB);
    let mns_default = if v0 {
        defaults::V0_MAX_NUM_SEQS
    } else {
        mns_default
    };
    let max_num_seqs = positive("--max-num-seqs", flags.max_num_seqs)?.unwrap_or(mns_default);
    let max_model_len = match positive("--max-model-len", flags.max_model_len)? {
        Some(m) if m > model.context_length => {
            return Err(Error::invalid(
                "--max-model-len",
                "max_model_len",
                format!(
                    "{m} is greater than {}'s max_position_embeddings {} (vLLM refuses it)",
                    model.name, model.context_length
                ),
            ))
        }
        Some(m) => m,
        None => model.context_length,
    };
    let chunked_prefill = chunked_prefill(flags, version, max_model_len, model)?;
    let mnbt_default = if v0 {
        defaults::v0_max_num_batched_tokens(version, chunked_prefill, max_model_len)
    } else {
        mnbt_default
    };
    let mnbt =
        positive("--max-num-batched-tokens", flags.max_num_batched_tokens)?.unwrap_or(mnbt_default);
    if mnbt < max_num_seqs {
        return Err(Error::invalid(
            "--max-num-batched-tokens",
            "max_num_batched_tokens",
            format!(
                "max_num_batched_tokens ({mnbt}) must be greater than or equal to max_num_seqs \
                 ({max_num_seqs}), as vLLM's SchedulerConfig requires"
            ),
        ));
    }
    if !chunked_prefill && mnbt < max_model_len {
        return Err(Error::invalid(
            "--max-num-batched-tokens",
            "max_num_batched_tokens",
            format!(
                "max_num_batched_tokens ({mnbt}) is smaller than max_model_len ({max_model_len}) \
                 without chunked prefill, which vLLM V0 refuses: raise it, lower --max-model-len \
                 or give --enable-chunked-prefill"
            ),
        ));
    }
    let util = match flags.gpu_memory_utilization {
        Some(u) if !(u.is_finite() && u > 0.0 && u <= 1.0) => {
            return Err(Error::invalid(
                "--gpu-memory-utilization",
                "gpu_memory_utilization",
                format!("must be in (0, 1], got {u}"),
            ))
        }
        Some(u) => u,
        None => defaults::gpu_memory_utilization(version),
    };
    let block_size = match flags.block_size {
        Some(b) if !defaults::BLOCK_SIZES.contains(&b) => {
            return Err(Error::invalid(
                "--block-size",
                "block_size",
                format!("must be one of 1, 8, 16, 32, 64, 128, got {b}"),
            ))
        }
        Some(b) => b,
        None => defaults::block_size(hw.arch, model.mla.is_some(), version),
    };
    if flags.enable_prefix_caching && flags.no_enable_prefix_caching {
        return Err(Error::invalid(
            "--enable-prefix-caching",
            "enable_prefix_caching",
            "give --enable-prefix-caching or --no-enable-prefix-caching, not both",
        ));
    }
    if flags.async_scheduling && flags.no_async_scheduling {
        return Err(Error::invalid(
            "--async-scheduling",
            "async_scheduling",
            "give --async-scheduling or --no-async-scheduling, not both",
        ));
    }
    if (flags.async_scheduling || flags.no_async_scheduling) && version < defaults::ASYNC_FLAG_SINCE
    {
        return Err(Error::invalid(
            "--async-scheduling",
            "async_scheduling",
            format!("vLLM {version} has no async scheduling (the flag exists from 0.10.0)"),
        ));
    }
    let async_scheduling = if flags.no_async_scheduling {
        false
    } else {
        flags.async_scheduling || version >= defaults::ASYNC_DEFAULT_SINCE
    };
    if v0 && flags.long_prefill_token_threshold.is_some() {
        return Err(Error::invalid(
            "--long-prefill-token-threshold",
            "long_prefill_token_threshold",
            format!(
                "servesim models the threshold in V1 only (0.8.0 and later), not in vLLM {version}"
            ),
        ));
    }
    let threshold = flags.long_prefill_token_threshold.unwrap_or(0);
    let capture_sizes = if flags.enforce_eager {
        Vec::new()
    } else if v0 {
        defaults::v0_capture_sizes(version, max_num_seqs)
    } else {
        defaults::capture_sizes(version, hw.arch, max_num_seqs, mnbt)
    };
    let attention_backend =
        defaults::attention_keys(hw.arch, model.mla.is_some(), model.has_attention_sinks())
            .iter()
            .find(|k| hw.attention(k).is_ok())
            .map(|k| k.to_string())
            .ok_or_else(|| {
                Error::invalid(
                    "hardware profile",
                    "efficiency.attention",
                    format!(
                        "{} has none of the attention backends vLLM runs there",
                        hw.name
                    ),
                )
            })?;

    // Memory (gpu_worker.determine_available_memory, reference A.9).
    let expert_parallel = crate::spec::expert_parallel::ExpertParallel::resolve_vllm(
        &flags.expert_parallel,
        version,
        tp,
        dp,
        model,
    )?;
    // MXFP4 experts as vLLM's backend loads them (`spec::vllm::mxfp4`; TP only).
    let mxfp4_extra = if weight_format == WeightFormat::Mxfp4 && expert_parallel.is_none() {
        mxfp4::loaded_extra_bytes_per_rank(model, tp, mxfp4::backend(hw.arch, version))
    } else {
        0.0
    };
    let weight_bytes_per_rank = model.weight_bytes_per_rank(tp, weight_format)
        + mxfp4_extra
        + expert_parallel.as_ref().map_or(0.0, |e| {
            e.extra_weight_bytes_per_rank(model, tp, weight_format)
        });
    let kv_bytes_per_token = model.kv_bytes_per_token_per_rank(tp, kv_dtype);
    let requested_bytes = total_bytes * util;
    let activation = activation_peak_bytes(model, tp, mnbt, max_num_seqs, v0);
    let non_torch = NON_TORCH_BYTES + if tp > 1 { NON_TORCH_TP_BYTES } else { 0.0 };
    let cudagraph = if version >= defaults::CUDAGRAPH_MEMORY_DEDUCTED_SINCE && !flags.enforce_eager
    {
        CUDAGRAPH_ESTIMATE_BYTES
    } else {
        0.0
    };
    let kv_cache_bytes =
        requested_bytes - weight_bytes_per_rank - activation - non_torch - cudagraph;
    // Window models on the V1 hybrid manager: one pool of blocks of one group's layers
    // (`spec::hybrid_kv`); otherwise blocks of every layer.
    let hybrid = (!v0)
        .then(|| VllmHybridKv::of(model, version, flags.disable_hybrid_kv_cache_manager))
        .flatten();
    let block_bytes = block_size as f64 * kv_bytes_per_token;
    let profiled_blocks = match &hybrid {
        Some(h) => h.num_blocks(kv_cache_bytes, block_bytes / model.num_layers as f64),
        None if kv_cache_bytes > 0.0 => (kv_cache_bytes / block_bytes).floor() as u64,
        None => 0,
    };
    let overridden = positive("--num-gpu-blocks-override", flags.num_gpu_blocks_override)?;
    if let Some(n) = overridden {
        // vLLM allocates the overridden count as is: past the budget the allocation fails.
        if n <= 1 || n > profiled_blocks.max(1) {
            return Err(Error::invalid(
                "--num-gpu-blocks-override",
                "num_gpu_blocks_override",
                if n <= 1 {
                    format!("{n} leaves no usable block (V1 keeps one as its null block): give at least 2")
                } else {
                    format!(
                        "{n} blocks need {:.2} GiB of KV per GPU, but the memory budget leaves {:.2} GiB \
                         ({profiled_blocks} blocks): vLLM would run out of memory allocating them",
                        n as f64 * block_bytes / GIB,
                        kv_cache_bytes.max(0.0) / GIB
                    )
                },
            ));
        }
    }
    let num_gpu_blocks = overridden.unwrap_or(profiled_blocks);
    if num_gpu_blocks <= 1 {
        return Err(Error::Impossible(format!(
            "no room for a KV cache: {:.1} GiB × gpu_memory_utilization {util} leaves {:.2} GiB after \
             {:.1} GiB of weights, {:.2} GiB of activations and {:.2} GiB of other memory per GPU \
             (vLLM: \"No available memory for the cache blocks\")",
            total_bytes / GIB,
            kv_cache_bytes / GIB,
            weight_bytes_per_rank / GIB,
            activation / GIB,
            (non_torch + cudagraph) / GIB
        )));
    }
    let usable = if v0 {
        num_gpu_blocks
    } else {
        num_gpu_blocks - 1
    };
    let one_request_blocks = hybrid
        .as_ref()
        .map_or(max_model_len.div_ceil(block_size), |h| {
            h.max_request_blocks(max_model_len, mnbt, block_size)
        });
    if usable < one_request_blocks {
        let stored = hybrid
            .as_ref()
            .map_or(usable * block_size, |h| h.logged_tokens(usable, block_size));
        return Err(Error::Impossible(format!(
            "the model's max seq len ({max_model_len}) is larger than the maximum number of tokens \
             that can be stored in KV cache ({stored}); vLLM refuses to start: {}",
            if overridden.is_some() {
                "raise --num-gpu-blocks-override or lower --max-model-len"
            } else {
                "raise --gpu-memory-utilization or lower --max-model-len"
            }
        )));
    }
    let cfg = VllmConfig {
        version,
        max_num_seqs,
        max_num_batched_tokens: mnbt,
        gpu_memory_utilization: util,
        block_size,
        num_gpu_blocks,
        max_model_len,
        long_prefill_token_threshold: threshold,
        // V0: off unless asked (`enable_prefix_caching: bool = False`@0.6.3); V1: on.
        prefix_caching: if v0 {
            flags.enable_prefix_caching
        } else {
            !flags.no_enable_prefix_caching
        },
        enforce_eager: flags.enforce_eager,
        async_scheduling,
        capture_sizes: capture_sizes.clone(),
        // V0's block manager allocates the whole prompt at admission.
        full_sequence_must_fit: v0 || version >= defaults::FULL_SEQUENCE_MUST_FIT_SINCE,
        chunked_prefill,
        watermark_blocks: if v0 {
            (defaults::V0_WATERMARK * num_gpu_blocks as f64) as u64
        } else {
            0
        },
        clips_max_tokens: version >= defaults::CLIPS_MAX_TOKENS_SINCE,
        requested_bytes,
        activation_peak_bytes: activation,
        non_torch_bytes: non_torch,
        cudagraph_bytes: cudagraph,
        kv_cache_bytes,
        hybrid,
    };
    Ok(ServerConfig {
        version: Version::NEWEST,
        tp,
        weight_format,
        kv_dtype,
        attention_backend,
        mem_fraction_static: util,
        chunked_prefill_size: Some(mnbt),
        max_prefill_tokens: mnbt,
        page_size: block_size,
        schedule_policy: SchedulePolicy::Fcfs,
        schedule_conservativeness: 1.0,
        radix_cache: cfg.prefix_caching,
        mixed_chunk: true,
        overlap_schedule: async_scheduling,
        piecewise_prefill: false,
        chunked_prefix: Default::default(),
        cuda_graph_batch_sizes: capture_sizes,
        kv_pool_tokens: usable * block_size,
        swa_pools: None,
        req_pool_size: max_num_seqs,
        max_running_requests: max_num_seqs,
        weight_bytes_per_rank,
        kv_bytes_per_token,
        context_length: max_model_len,
        nnodes: None,
        dp,
        attn_tp: tp,
        dp_attention: false,
        // vLLM's DP front-end sends each request to the engine with the lowest
        // `4·waiting + running` score; the shortest queue is the closest router servesim has.
        router: LoadBalanceMethod::ShortestQueue,
        // servesim's vLLM engine has no speculative decoding (refused by `spec::engine`).
        speculative: None,
        decode_prealloc_slots: 0,
        draft_kv_bytes_per_token: 0.0,
        expert_parallel,
        notes: Vec::new(),
        vllm: Some(cfg),
        fused_moe_tuned: None,
    })
}
