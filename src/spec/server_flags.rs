//! SGLang's (and, with `--engine vllm`, vLLM's) server flags as a user gives them, by their
//! `launch_server` / `vllm serve` names, and the field-wise merge of a scenario file's server
//! section with the command line. Resolution into concrete values: `spec::server`.
use super::expert_parallel::ExpertParallelFlags;
use super::speculative::SpeculativeFlags;
use super::version::Version;
use serde::{Deserialize, Serialize};

/// Server flags as a user gives them; `None` means "SGLang's default for this version".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ServerFlags {
    /// Tensor-parallel size (ranks per replica).
    #[arg(long = "tp", aliases = ["tp-size", "tensor-parallel-size"])]
    #[serde(alias = "tp-size", alias = "tensor-parallel-size")]
    pub tp: Option<u64>,
    /// Fraction of free memory for weights + KV pool (default: SGLang's rule per version).
    #[arg(long)]
    pub mem_fraction_static: Option<f64>,
    /// Chunk size for long prefills; -1 disables chunking.
    #[arg(long, allow_hyphen_values = true)]
    pub chunked_prefill_size: Option<i64>,
    /// Token budget of one prefill batch (default 16384).
    #[arg(long)]
    pub max_prefill_tokens: Option<u64>,
    /// Cap on running requests (default: derived from the KV pool).
    #[arg(long)]
    pub max_running_requests: Option<u64>,
    /// KV pool size in tokens (copy `max_total_num_tokens` from the server's start-up log).
    #[arg(long)]
    pub max_total_tokens: Option<u64>,
    /// KV page size (default 1; 128 with the ascend backend).
    #[arg(long)]
    pub page_size: Option<u64>,
    /// fcfs, lpm, lof, random, dfs-weight (default fcfs from 0.4.5, lpm before).
    #[arg(long)]
    pub schedule_policy: Option<String>,
    /// Scales the new-token-ratio reserve (default 1.0).
    #[arg(long)]
    pub schedule_conservativeness: Option<f64>,
    #[arg(long)]
    #[serde(default)]
    pub disable_radix_cache: bool,
    #[arg(long)]
    #[serde(default)]
    pub disable_cuda_graph: bool,
    /// SGLang 0.5.10+: no piecewise (prefill) CUDA graphs, so no room reserved for them in
    /// the `mem_fraction_static` default (PD servers always run without them).
    #[arg(long)]
    #[serde(default)]
    pub disable_piecewise_cuda_graph: bool,
    /// MLA models: no chunked prefix cache, so an extend with a cached prefix runs absorbed
    /// MLA instead of MHA over the up-projected prefix (`spec::chunked_prefix`).
    #[arg(long)]
    #[serde(default)]
    pub disable_chunked_prefix_cache: bool,
    /// SGLang's env `SGL_CHUNKED_PREFIX_CACHE_THRESHOLD`: Σ cached tokens of an MLA extend
    /// batch from which it runs as MHA over the prefix (default 8192).
    #[arg(long, value_name = "TOKENS")]
    pub sgl_chunked_prefix_cache_threshold: Option<u64>,
    /// Largest captured decode batch.
    #[arg(long, aliases = ["cuda-graph-max-bs-decode"])]
    #[serde(alias = "cuda-graph-max-bs-decode")]
    pub cuda_graph_max_bs: Option<u64>,
    /// Decode batch sizes to capture, replacing SGLang's list (`spec::graph_defaults::
    /// explicit_capture_list`).
    #[arg(long, aliases = ["cuda-graph-bs-decode"], num_args = 1.., value_name = "BS")]
    #[serde(alias = "cuda-graph-bs-decode")]
    pub cuda_graph_bs: Option<Vec<u64>>,
    /// Longest request in tokens, prompt + output (default: the model's); also sizes SGLang's
    /// request pool.
    #[arg(long)]
    pub context_length: Option<u64>,
    /// torch.compile of the decode CUDA graphs up to --torch-compile-max-bs: accepted, NOT
    /// modelled (priced as plain CUDA-graph steps; the run prints a note; `spec::torch_compile`).
    #[arg(long)]
    #[serde(default)]
    pub enable_torch_compile: bool,
    /// Largest decode batch compiled with --enable-torch-compile (default 32).
    #[arg(long)]
    pub torch_compile_max_bs: Option<u64>,
    #[arg(long)]
    #[serde(default)]
    pub enable_mixed_chunk: bool,
    #[arg(long)]
    #[serde(default)]
    pub disable_overlap_schedule: bool,
    /// auto, bf16, fp8_e4m3 (fp8).
    #[arg(long)]
    pub kv_cache_dtype: Option<String>,
    /// flashinfer, triton, fa3, ascend, ... (default: SGLang's rule per hardware and model).
    #[arg(long)]
    pub attention_backend: Option<String>,
    /// Weight format: bf16, fp8, w8a8_int8, mxfp4, w4a16_int4 (default: the checkpoint's).
    #[arg(long)]
    pub quantization: Option<String>,
    /// SGLang version whose defaults and scheduler rules apply (e.g. 0.5.1, 0.5.6.post2).
    #[arg(long)]
    pub sglang_version: Option<Version>,
    /// Data-parallel replicas (independent servers behind a router), or attention DP ranks
    /// with --enable-dp-attention.
    #[arg(long = "dp", aliases = ["dp-size", "data-parallel-size"])]
    #[serde(alias = "dp-size", alias = "data-parallel-size")]
    pub dp: Option<u64>,
    /// Nodes one TP group spans (SGLang `--nnodes`): `tp / nnodes` ranks on each node, so
    /// every all-reduce crosses the network when > 1 (default: as few nodes as hold `--tp`).
    #[arg(long)]
    pub nnodes: Option<u64>,
    /// Router between replicas: round_robin (default) or shortest_queue.
    #[arg(long)]
    pub load_balance_method: Option<String>,
    /// DeepSeek-style DP attention inside one TP group (one scheduler per DP rank).
    #[arg(long)]
    #[serde(default)]
    pub enable_dp_attention: bool,
    /// Speculative decoding (`--speculative-*`; in a scenario file, a `speculative:` map).
    #[command(flatten)]
    #[serde(default, skip_serializing_if = "SpeculativeFlags::is_unset")]
    pub speculative: SpeculativeFlags,
    /// Expert parallelism (`--ep-size`, `--moe-a2a-backend`, …; vLLM's
    /// `--enable-expert-parallel`; in a scenario file, an `expert-parallel:` map).
    #[command(flatten)]
    #[serde(default, skip_serializing_if = "ExpertParallelFlags::is_unset")]
    pub expert_parallel: ExpertParallelFlags,
    // --- servesim's own settings (not SGLang flags): which step-cost backend prices the run.
    /// Step-cost backend: kernels (measured SGLang kernel tables under the cross-GPU envelope;
    /// the default on the profiles that name `kernel_tables`: A100, H100, H200, B200) or
    /// roofline (the default elsewhere: H20, Ascend); see README "Cost models".
    #[arg(long)]
    pub cost_model: Option<String>,
    /// A directory of kernel tables converted from your own AIConfigurator data by
    /// scripts/import_aiconfigurator.py (implies --cost-model kernels).
    #[arg(long, value_name = "DIR")]
    pub kernel_db: Option<std::path::PathBuf>,
    /// Triton fused-MoE tile config: tuned (a tuned JSON for the shape) or default (SGLang's
    /// `get_default_config` fallback, e.g. a development build between two releases);
    /// default: whether the run's SGLang release ships a tuned file for the GPU and the
    /// shape (`cost::moe_config`).
    #[arg(long, value_name = "tuned|default")]
    pub fused_moe_config: Option<String>,
    // --- The engine, and vLLM's own flags (`vllm serve` names; refused under SGLang).
    /// Server engine: sglang (default) or vllm (`--backend vllm` alone also selects vllm).
    #[arg(long)]
    pub engine: Option<String>,
    /// vLLM version whose defaults and scheduler rules apply (engine vllm; default 0.33.0, the
    /// newest modelled).
    #[arg(long)]
    pub vllm_version: Option<Version>,
    /// vLLM: cap on running requests (default by version and GPU memory).
    #[arg(long)]
    pub max_num_seqs: Option<u64>,
    /// vLLM: token budget of one step, shared by decodes and prefill chunks.
    #[arg(long)]
    pub max_num_batched_tokens: Option<u64>,
    /// vLLM: fraction of total GPU memory for weights, activations and KV cache.
    #[arg(long)]
    pub gpu_memory_utilization: Option<f64>,
    /// vLLM: prefix caching on (the V1 default).
    #[arg(long)]
    #[serde(default)]
    pub enable_prefix_caching: bool,
    /// vLLM: prefix caching off.
    #[arg(long)]
    #[serde(default)]
    pub no_enable_prefix_caching: bool,
    /// vLLM: no CUDA graphs (every step eager).
    #[arg(long)]
    #[serde(default)]
    pub enforce_eager: bool,
    /// vLLM: KV block size in tokens (default 16; 64 or 128 for MLA backends).
    #[arg(long)]
    pub block_size: Option<u64>,
    /// vLLM: longest sequence (default: the model's context length).
    #[arg(long)]
    pub max_model_len: Option<u64>,
    /// vLLM: cap on the tokens one request prefills per step (0 = off, the default).
    #[arg(long)]
    pub long_prefill_token_threshold: Option<u64>,
    /// vLLM: overlap scheduling with the forward pass (default on from 0.14).
    #[arg(long)]
    #[serde(default)]
    pub async_scheduling: bool,
    /// vLLM: synchronous scheduling.
    #[arg(long)]
    #[serde(default)]
    pub no_async_scheduling: bool,
    /// vLLM: KV blocks per GPU, replacing the profiled count (copy from the server log).
    #[arg(long)]
    pub num_gpu_blocks_override: Option<u64>,
    /// vLLM V0 (before 0.8): chunked prefill on (default on when max_model_len > 32768).
    #[arg(long)]
    #[serde(default)]
    pub enable_chunked_prefill: bool,
    /// vLLM V0 (before 0.8): chunked prefill off (prefill-first scheduling).
    #[arg(long)]
    #[serde(default)]
    pub no_enable_chunked_prefill: bool,
    // --- Hybrid sliding-window KV pools (`spec::hybrid_kv`).
    /// SGLang: one all-layer KV pool for window models (gpt-oss) instead of the full + SWA
    /// pools (0.5.10+ default for gpt-oss: hybrid).
    #[arg(long)]
    #[serde(default)]
    pub disable_hybrid_swa_memory: bool,
    /// SGLang: SWA-pool tokens / full-pool tokens of the hybrid pools (default 0.8).
    #[arg(long)]
    pub swa_full_tokens_ratio: Option<f64>,
    /// vLLM: every layer in one KV group (sliding-window layers keep the whole context).
    #[arg(long)]
    #[serde(default)]
    pub disable_hybrid_kv_cache_manager: bool,
}

impl ServerFlags {
    /// `over`'s values where set, else `self`'s.
    pub fn merged(&self, over: &ServerFlags) -> ServerFlags {
        macro_rules! pick {
            ($($f:ident),*) => { ServerFlags { $($f: over.$f.clone().or_else(|| self.$f.clone()),)*
                disable_radix_cache: over.disable_radix_cache || self.disable_radix_cache,
                disable_cuda_graph: over.disable_cuda_graph || self.disable_cuda_graph,
                disable_piecewise_cuda_graph: over.disable_piecewise_cuda_graph
                    || self.disable_piecewise_cuda_graph,
                disable_chunked_prefix_cache: over.disable_chunked_prefix_cache
                    || self.disable_chunked_prefix_cache,
                enable_mixed_chunk: over.enable_mixed_chunk || self.enable_mixed_chunk,
                enable_torch_compile: over.enable_torch_compile || self.enable_torch_compile,
                disable_overlap_schedule: over.disable_overlap_schedule || self.disable_overlap_schedule,
                enable_dp_attention: over.enable_dp_attention || self.enable_dp_attention,
                speculative: self.speculative.merged(&over.speculative),
                expert_parallel: self.expert_parallel.merged(&over.expert_parallel),
                enable_prefix_caching: over.enable_prefix_caching || self.enable_prefix_caching,
                no_enable_prefix_caching: over.no_enable_prefix_caching || self.no_enable_prefix_caching,
                enforce_eager: over.enforce_eager || self.enforce_eager,
                async_scheduling: over.async_scheduling || self.async_scheduling,
                no_async_scheduling: over.no_async_scheduling || self.no_async_scheduling,
                enable_chunked_prefill: over.enable_chunked_prefill || self.enable_chunked_prefill,
                no_enable_chunked_prefill: over.no_enable_chunked_prefill || self.no_enable_chunked_prefill,
                disable_hybrid_swa_memory: over.disable_hybrid_swa_memory || self.disable_hybrid_swa_memory,
                disable_hybrid_kv_cache_manager: over.disable_hybrid_kv_cache_manager
                    || self.disable_hybrid_kv_cache_manager,
            } };
        }
        pick!(
            tp,
            mem_fraction_static,
            chunked_prefill_size,
            max_prefill_tokens,
            max_running_requests,
            max_total_tokens,
            page_size,
            schedule_policy,
            schedule_conservativeness,
            cuda_graph_max_bs,
            cuda_graph_bs,
            context_length,
            sgl_chunked_prefix_cache_threshold,
            torch_compile_max_bs,
            kv_cache_dtype,
            attention_backend,
            quantization,
            sglang_version,
            dp,
            nnodes,
            load_balance_method,
            cost_model,
            kernel_db,
            fused_moe_config,
            engine,
            vllm_version,
            max_num_seqs,
            max_num_batched_tokens,
            gpu_memory_utilization,
            block_size,
            max_model_len,
            long_prefill_token_threshold,
            num_gpu_blocks_override,
            swa_full_tokens_ratio
        )
    }
}
