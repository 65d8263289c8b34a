//! SGLang server settings (`launch_server` flag names) and their resolution into the concrete
//! values the scheduler uses: defaults by version, KV pool size and running-request cap derived
//! exactly as SGLang derives them (reference A.2, A.3).
use super::defaults::{self, DefaultsInput, PdRole, GRAPH_CONFIG_FROM};
use super::dp_attention_rules as dp_rules;
use super::expert_parallel::ExpertParallel;
use super::graph_defaults;
use super::hardware::{Arch, HardwareProfile};
pub use super::load_balance::LoadBalanceMethod;
use super::model::{KvDtype, ModelSpec, WeightFormat};
pub use super::server_flags::ServerFlags;
use super::server_parse as parse;
pub use super::server_parse::SchedulePolicy;
use super::speculative::SpeculativeConfig;
use super::speculative_rules::{
    self as speculative, check_draft_fits, check_spec_constraints, page_size_hint,
    spec_pool_headroom,
};
use super::version::Version;
use crate::error::{Error, Result};
use serde::Serialize;

/// The concrete settings of one server replica, every default resolved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerConfig {
    pub version: Version,
    pub tp: u64,
    pub weight_format: WeightFormat,
    pub kv_dtype: KvDtype,
    pub attention_backend: String,
    pub mem_fraction_static: f64,
    /// `None` when chunking is disabled.
    pub chunked_prefill_size: Option<u64>,
    pub max_prefill_tokens: u64,
    pub page_size: u64,
    pub schedule_policy: SchedulePolicy,
    pub schedule_conservativeness: f64,
    pub radix_cache: bool,
    pub mixed_chunk: bool,
    pub overlap_schedule: bool,
    /// SGLang's prefill CUDA graphs replay (0.5.10–0.5.15 piecewise, 0.5.16+ breakable:
    /// `graph_defaults::prefill_graph`): prefills replay captured graphs instead of launching
    /// every kernel from Python (only the MLA eager host cost reads it, `cost::eager_host`).
    /// Always false for vLLM.
    #[serde(skip)]
    pub piecewise_prefill: bool,
    /// MLA models: SGLang's chunked prefix cache (`spec::chunked_prefix`); vLLM: the default.
    #[serde(skip)]
    pub chunked_prefix: super::chunked_prefix::ChunkedPrefixCache,
    /// Captured decode batch sizes, ascending; empty when CUDA graphs are disabled.
    pub cuda_graph_batch_sizes: Vec<u64>,
    /// KV pool size in tokens (`max_total_num_tokens`); with hybrid SWA pools the smaller
    /// of the two (`swa_pools`: the scheduler keeps both).
    pub kv_pool_tokens: u64,
    /// SGLang's hybrid full + sliding-window pools, when on (`spec::hybrid_kv`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swa_pools: Option<super::hybrid_kv::SwaPools>,
    /// Request slots (`req_to_token_pool.size`).
    pub req_pool_size: u64,
    pub max_running_requests: u64,
    /// Model weights held by one rank, bytes.
    pub weight_bytes_per_rank: f64,
    /// KV bytes per token per rank (`cell_size`).
    pub kv_bytes_per_token: f64,
    pub context_length: u64,
    /// `--nnodes`: the nodes one TP group spans, `tp / nnodes` ranks each (`spec::nodes`);
    /// `None`: packed onto as few nodes as hold it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nnodes: Option<u64>,
    /// Data-parallel replicas (each a full TP group with its own scheduler and KV pool).
    pub dp: u64,
    /// GPUs per attention rank: `tp`, or `tp / dp` with DP attention.
    pub attn_tp: u64,
    /// `--enable-dp-attention`: the `dp` schedulers are attention ranks of one TP group that
    /// step in lockstep (their MoE/MLP layers run over every rank's tokens together), not
    /// independent replicas.
    pub dp_attention: bool,
    pub router: LoadBalanceMethod,
    /// Speculative decoding, when on (`--speculative-algorithm`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speculative: Option<SpeculativeConfig>,
    /// Request slots a PD decode server keeps for pre-allocated requests beyond
    /// `max_running_requests` (`pre_alloc_size`): 2 × the cap when it is ≤ 32, else 0; from
    /// 0.5.14 (`disaggregation_decode_extra_slots`, pd_disaggregation_hook.py at v0.5.14,
    /// line 68) only when `--max-running-requests` is given (2 × its per-DP-worker share).
    pub decode_prealloc_slots: u64,
    /// Draft KV bytes per token per rank (0 without a draft model): the draft pool has as many
    /// token slots as the target's, with the draft's layers only.
    #[serde(skip_serializing_if = "is_zero")]
    pub draft_kv_bytes_per_token: f64,
    /// Expert parallelism of the MoE layers, when on (`--ep-size` > 1, DeepEP, vLLM's
    /// `--enable-expert-parallel`; `spec::expert_parallel`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expert_parallel: Option<ExpertParallel>,
    /// Defaults servesim chose where SGLang's own would not run, one line each (printed as
    /// notes by `run`).
    pub notes: Vec<String>,
    /// The vLLM settings when the engine is vLLM (`None` for SGLang); the fields above then
    /// hold their vLLM equivalents (page = block, chunk = token budget, running cap =
    /// max_num_seqs, context = max_model_len, overlap = async scheduling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vllm: Option<super::vllm::config::VllmConfig>,
    /// `--fused-moe-config`: `Some(true)` tuned, `Some(false)` SGLang's default tile config,
    /// `None` by the release's shipped config files (`cost::moe_config`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fused_moe_tuned: Option<bool>,
}

/// `--mem-fraction-static` servesim uses on Ascend when SGLang's default leaves no room for a
/// KV cache. SGLang has no NPU branch for this default (0.5.6: `_handle_gpu_memory_settings`
/// applies the GPU formula, whose reserve of 1.5 × the 32768-token NPU chunk gives ≈ 0.19 on a
/// 64 GB die; later versions' `hardware_backend/npu/utils.py::set_default_server_args` sets
/// chunk and graph sizes but no memory fraction), so Ascend deployments pass the flag; 0.8 is
/// the value they typically pass (the same assumption as seeds 000/002 in
/// validation/manifest.yaml), not an SGLang default.
pub const ASCEND_DEPLOYED_MEM_FRACTION: f64 = 0.8;

const GIB: f64 = (1u64 << 30) as f64;

impl ServerConfig {
    /// Resolves `flags` for `model` on `hw` as SGLang's `ServerArgs` + `ModelRunner` would.
    pub fn resolve(
        flags: &ServerFlags,
        hw: &HardwareProfile,
        model: &ModelSpec,
    ) -> Result<ServerConfig> {
        Self::resolve_as(flags, hw, model, None)
    }

    /// [`ServerConfig::resolve`] for one side of a PD deployment (`--disaggregation-mode`;
    /// `None`: colocated).
    pub fn resolve_as(
        flags: &ServerFlags,
        hw: &HardwareProfile,
        model: &ModelSpec,
        pd_role: Option<PdRole>,
    ) -> Result<ServerConfig> {
        let version = flags
            .sglang_version
            .unwrap_or(Version::NEWEST)
            .check_known("--sglang-version")?;
        let dp = parse::dp(flags.dp)?;
        let router = parse::router(flags.load_balance_method.as_deref())?;
        let tp = parse::tp(flags.tp)?;
        model.check_tp(tp)?;
        let nnodes = super::nodes::resolve(flags.nnodes, tp, hw)?;
        // Up to 0.4.4 DP attention sets dp = tp whatever `--dp` says (`dp_attention_rules`).
        let dp = if flags.enable_dp_attention {
            dp_rules::dp_size(version, dp, tp)
        } else {
            dp
        };
        // DP attention: `dp` attention ranks inside the one TP group, each with attn_tp_size =
        // tp / dp GPUs (reference A.8). With dp 1 SGLang drops the flag
        // (server_args._handle_data_parallelism, 0.5.3: `if self.dp_size == 1:
        // self.enable_dp_attention = False`): plain TP attention, but the memory defaults,
        // computed before that, still reserve for it (dp_attention 1 in `DefaultsInput`).
        let dp_attention = flags.enable_dp_attention && dp > 1;
        if dp_attention && tp % dp != 0 {
            return Err(Error::invalid(
                "--enable-dp-attention",
                "dp",
                format!("DP attention needs --dp dividing --tp, got dp {dp} and tp {tp}"),
            ));
        }
        let attn_tp = if dp_attention { tp / dp } else { tp };
        if dp_attention {
            model.check_tp(attn_tp)?;
        }
        let weight_format = WeightFormat::from_flag(flags.quantization.as_deref(), model.weights)?;
        let trtllm_int4 =
            hw.arch == Arch::Blackwell && version >= super::hf_quant::TRTLLM_MXINT4_FROM;
        if weight_format == WeightFormat::W4a16Int4
            && !matches!(hw.arch, Arch::Ampere | Arch::Hopper)
            && !trtllm_int4
        {
            // SGLang's Marlin W4A16 MoE is priced from sm80 / sm90 rates only (`cost::mxfp4`);
            // on sm100 SGLang 0.5.10+ runs flashinfer's TRT-LLM mxint4 MoE instead.
            return Err(Error::invalid(
                "--hardware",
                "hardware",
                format!(
                    "{}: int4 W4A16 experts (SGLang's Marlin fused MoE) are priced on sm80 and \
                     sm90 only, and on sm100 from SGLang 0.5.10 (flashinfer TRT-LLM mxint4 \
                     MoE), not on {} with SGLang {version}",
                    model.name, hw.name
                ),
            ));
        }
        if weight_format == WeightFormat::Nvfp4 {
            super::nvfp4::check_gpu(&model.name, hw)?;
        }
        let (expert_parallel, ep_notes) = ExpertParallel::resolve_sglang(
            &flags.expert_parallel,
            version,
            tp,
            dp_attention,
            model,
        )?;
        let kv_dtype = parse::kv_dtype(
            flags.kv_cache_dtype.as_deref(),
            super::nvfp4::auto_kv(model, weight_format, version),
        )?;
        let is_npu = hw.arch == Arch::Ascend;
        let disable_cuda_graph = flags.disable_cuda_graph
            || defaults::graphs_forced_off(&model.architecture, model.mla.is_some(), version);
        let mut spec = SpeculativeConfig::resolve(&flags.speculative, model, version, tp)?;
        let dinp = DefaultsInput {
            gpu_mem_mib: hw.memory.reported_total_mib,
            tp,
            is_npu,
            version,
            dp_attention: if flags.enable_dp_attention { dp } else { 0 },
            spec_reserve_mib: spec
                .as_ref()
                .filter(|_| version >= Version::new(0, 4, 7))
                .map_or(0.0, |s| speculative::reserve_mib(s.algorithm, version)),
            pd_role,
            decode_graphs: !disable_cuda_graph,
            max_running_requests: flags.max_running_requests,
            num_draft_tokens: flags.speculative.speculative_num_draft_tokens,
        };
        let attention_backend = match &flags.attention_backend {
            Some(b) => b.clone(),
            // `is_no_spec_infer_or_topk_one`: a tree draft (top-k > 1) keeps flashinfer.
            None => match defaults::attention_backend(
                hw.arch,
                &model.architecture,
                model.mla.is_some(),
                version,
            ) {
                "trtllm_mha" if spec.as_ref().is_some_and(|s| s.topk > 1) => "flashinfer",
                b => b,
            }
            .to_string(),
        };
        hw.attention(&attention_backend)?;
        let max_prefill_tokens =
            parse::positive_flag("--max-prefill-tokens", flags.max_prefill_tokens)?
                .unwrap_or(16384);
        let fused_moe_tuned = parse::fused_moe_tuned(flags.fused_moe_config.as_deref())?;
        let chunked_prefill_size = parse::chunked_prefill_size(flags.chunked_prefill_size, || {
            defaults::chunked_prefill_size(&dinp)
        })?;
        let cg_default = graph_defaults::capped_decode_max_bs(
            version,
            defaults::cuda_graph_max_bs(&dinp),
            flags.max_running_requests,
        );
        let cg_max_bs = graph_defaults::explicit_max_bs(
            version,
            flags.cuda_graph_bs.as_deref(),
            parse::positive_flag("--cuda-graph-max-bs", flags.cuda_graph_max_bs)?.or(cg_default),
        );
        let prefill_graph = graph_defaults::prefill_graph(&graph_defaults::PrefillGraphInput {
            version,
            arch: hw.arch,
            model_arch: &model.architecture,
            is_mla: model.mla.is_some(),
            dp_attention,
            speculative: spec.is_some(),
            pd_role,
            disabled_by_flag: graph_defaults::disabled_by_flags(flags, version, pd_role),
            attention_backend: &attention_backend,
        });
        let piecewise_prefill = prefill_graph.cost_layer_replay();
        let mem_fraction_static = parse::mem_fraction_static(flags.mem_fraction_static, || {
            defaults::mem_fraction_static(
                &dinp,
                chunked_prefill_size.unwrap_or(max_prefill_tokens),
                cg_max_bs.unwrap_or(0),
                defaults::piecewise_reserve_mib(
                    prefill_graph.reserve,
                    model.mla.is_some(),
                    chunked_prefill_size,
                    flags.max_total_tokens,
                ),
            )
        })?;
        let page_size = parse::positive_flag("--page-size", flags.page_size)?
            .unwrap_or_else(|| defaults::page_size(&attention_backend));
        parse::check_chunk_fits_pages(chunked_prefill_size, page_size)?;
        // With DP attention every rank prefills at most chunk / dp tokens per step (chunk / 2
        // up to 0.4.4), after the memory default, which uses the full chunk.
        let chunked_prefill_size = match chunked_prefill_size {
            Some(c) if dp_attention => Some(dp_rules::chunk_per_rank(version, c, dp)),
            c => c,
        };
        let schedule_policy = parse::schedule_policy(flags.schedule_policy.as_deref(), version)?;
        let schedule_conservativeness =
            parse::schedule_conservativeness(flags.schedule_conservativeness)?
                * if dp_attention { 0.3 } else { 1.0 };

        // Memory: weights, then the KV pool (profile_max_num_token).
        // DP attention shards attention weights over attn_tp GPUs only.
        let weight_bytes_per_rank = model.weight_bytes_per_rank(tp, weight_format)
            + model.num_layers as f64
                * (model.attention_params_per_rank(attn_tp) - model.attention_params_per_rank(tp))
                * weight_format.bytes_per_param().0
            + expert_parallel.as_ref().map_or(0.0, |e| {
                e.extra_weight_bytes_per_rank(model, tp, weight_format)
            });
        let kv_bytes_per_token = model.kv_bytes_per_token_per_rank(attn_tp, kv_dtype);
        let free0_gib = hw.memory.free_before_weights_gib(tp);
        let weights_gib = weight_bytes_per_rank / GIB;
        if weights_gib + hw.memory.runtime_reserved_gib >= free0_gib {
            return Err(Error::Impossible(format!(
                "{} weights need {weights_gib:.1} GiB per rank at tp {tp} ({weight_format:?}) but {} has {free0_gib:.1} GiB free per device",
                model.name, hw.name
            )));
        }
        // 0.5.14+: the draft's weights are loaded before the KV pool is sized (they come out
        // of the pool, not out of a reserve in the default `mem_fraction_static`).
        let draft_weights_gib = match &spec {
            Some(s) if version >= GRAPH_CONFIG_FROM => s.draft_weight_bytes_per_rank / GIB,
            _ => 0.0,
        };
        let available_gib =
            free0_gib - weights_gib - draft_weights_gib - hw.memory.runtime_reserved_gib;
        let rest_at = |f: f64| available_gib - free0_gib * (1.0 - f);
        let mut notes = ep_notes;
        let mem_fraction_static =
            if is_npu && flags.mem_fraction_static.is_none() && rest_at(mem_fraction_static) <= 0.0
            {
                notes.push(format!(
                "--mem-fraction-static {ASCEND_DEPLOYED_MEM_FRACTION} assumed: SGLang's default on \
                 this NPU ({mem_fraction_static}) leaves no room for a KV cache, so Ascend \
                 deployments pass the flag; {ASCEND_DEPLOYED_MEM_FRACTION} is the value they \
                 typically pass, not an SGLang default (give --mem-fraction-static to change it)"
            ));
                ASCEND_DEPLOYED_MEM_FRACTION
            } else {
                mem_fraction_static
            };
        let mamba = super::mamba_pool::MambaPool::size(
            model,
            attn_tp,
            rest_at(mem_fraction_static),
            flags
                .max_running_requests
                .map(|u| if dp_attention { u / dp } else { u }),
            !flags.disable_radix_cache,
            spec.is_some(),
        )?;
        let rest_gib = mamba.map_or(rest_at(mem_fraction_static), |m| m.rest_gib);
        let pool_cell_bytes = speculative::pool_cell_bytes(
            spec.as_ref(),
            kv_bytes_per_token,
            model.num_layers,
            version,
        );
        let mut kv_pool_tokens = if rest_gib > 0.0 {
            (rest_gib * GIB / pool_cell_bytes).floor() as u64
        } else {
            0
        };
        let mut notes_spec = Vec::new();
        if let Some(s) = spec.as_mut() {
            kv_pool_tokens += spec_pool_headroom(s, version, flags.max_running_requests)?;
            notes_spec = check_spec_constraints(
                s,
                flags.enable_mixed_chunk,
                version,
                page_size_hint(flags.page_size, &attention_backend),
                &attention_backend,
                dp_attention,
            )?;
            let (worker, notes_v2) = super::speculative_v2::choose(
                s,
                &flags.speculative,
                version,
                flags.disable_overlap_schedule,
            )?;
            s.worker = worker;
            notes_spec.extend(notes_v2);
        }
        if let Some(m) = parse::positive_flag("--max-total-tokens", flags.max_total_tokens)? {
            kv_pool_tokens = kv_pool_tokens.min(m);
            if flags.mem_fraction_static.is_none() && rest_gib <= 0.0 {
                kv_pool_tokens = m; // the user states the pool size outright
            }
        }
        kv_pool_tokens = kv_pool_tokens / page_size * page_size;
        if kv_pool_tokens == 0 {
            // SGLang's own default can be the cause (DP attention reserves dp × 4.5 MiB per
            // graph batch slot from 0.5.3): the real server fails the same way, so say which flag.
            let hint = if flags.mem_fraction_static.is_none() {
                "; that fraction is SGLang's own default for this deployment (the real server \
                 would fail too): its reserve grows with --chunked-prefill-size (1.5 MiB a token \
                 from 0.5.3) and --cuda-graph-max-bs (per rank under DP attention); lower those \
                 or pass --mem-fraction-static"
            } else {
                ""
            };
            return Err(Error::Impossible(format!(
                "no room for a KV cache: {free0_gib:.1} GiB free × mem_fraction_static {mem_fraction_static} leaves {:.2} GiB after {weights_gib:.1} GiB of weights per rank{hint}",
                rest_gib
            )));
        }
        let swa_pools = super::hybrid_kv::sglang_swa_pools(
            flags,
            model,
            version,
            &attention_backend,
            spec.is_some(),
            kv_pool_tokens,
            page_size,
        )?;
        // The request-pool estimate reads the all-layer count (`init_memory_pool` sizes it
        // before `set_num_tokens_hybrid_swa`).
        let all_layer_tokens = kv_pool_tokens;
        if let Some(p) = &swa_pools {
            kv_pool_tokens = p.scheduler_tokens();
        }
        let context_length = parse::positive_flag("--context-length", flags.context_length)?
            .unwrap_or(model.context_length);
        let user_running =
            parse::positive_flag("--max-running-requests", flags.max_running_requests)?.or(spec
                .as_ref()
                .map(|_| speculative::default_max_running_requests(version)));
        let estimated_reqs =
            ((all_layer_tokens as f64 / context_length as f64 * 512.0) as u64).clamp(2048, 4096);
        // 0.5.10+ `_resolve_max_num_reqs` (model_runner_kv_cache_mixin.py at v0.5.10): the
        // request pool is min(cap / dp, estimate), or min(estimate, token capacity / 2).
        let req_pool_size = if version >= defaults::PIECEWISE_CUDA_GRAPH_FROM {
            match user_running {
                // 0.5.14+ (`_resolve_max_num_reqs` at v0.5.14): capped by half the KV pool,
                // no longer by the estimate.
                Some(u) if version >= GRAPH_CONFIG_FROM => {
                    let per_worker = if dp_attention { u / dp } else { u };
                    per_worker.min(kv_pool_tokens / 2).max(1)
                }
                Some(u) if dp_attention => (u / dp).max(1).min(estimated_reqs),
                Some(u) => u.min(estimated_reqs),
                None => estimated_reqs.min((kv_pool_tokens / 2).max(1)),
            }
        } else {
            user_running.unwrap_or(estimated_reqs)
        };
        let req_pool_size = mamba.map_or(req_pool_size, |m| req_pool_size.min(m.max_requests));
        let max_running_requests = user_running
            .map(|u| if dp_attention { (u / dp).max(1) } else { u })
            .unwrap_or(kv_pool_tokens / 2)
            .min(req_pool_size)
            .max(1);

        let cuda_graph_batch_sizes = if disable_cuda_graph
            || expert_parallel
                .as_ref()
                .is_some_and(|e| e.disables_cuda_graph(version))
        {
            Vec::new()
        } else {
            let l = match (&flags.cuda_graph_bs, &spec) {
                (Some(l), _) => graph_defaults::explicit_capture_list(version, l, cg_max_bs),
                (None, Some(_)) => {
                    speculative::capture_batch_sizes(version, dinp.gpu_mem_mib, cg_max_bs)
                }
                (None, None) => defaults::capture_batch_sizes(&dinp, cg_max_bs),
            };
            graph_defaults::within_request_pool(l, req_pool_size)
        };
        let draft_kv_bytes_per_token = spec
            .as_ref()
            .and_then(|s| s.draft.as_ref())
            .map_or(0.0, |d| d.kv_bytes_per_token_per_rank(attn_tp, kv_dtype));
        // 0.5.14+ sizes the draft's weights and KV share into the target's pool itself.
        if let Some(s) = spec.as_ref().filter(|_| version < GRAPH_CONFIG_FROM) {
            check_draft_fits(
                s,
                draft_kv_bytes_per_token,
                kv_pool_tokens,
                free0_gib,
                mem_fraction_static,
            )?;
        }
        notes.extend(notes_spec);
        notes.extend(hw.notes.iter().cloned());
        notes.extend(model.notes.iter().cloned());
        parse::positive_flag("--torch-compile-max-bs", flags.torch_compile_max_bs)?;
        notes.extend(super::torch_compile::note(
            flags.enable_torch_compile,
            flags.torch_compile_max_bs,
            &cuda_graph_batch_sizes,
            version,
        ));
        let spec_on = spec.is_some();
        let small_cap_slots = |cap: u64| if cap <= 32 { 2 * cap } else { 0 };
        let decode_prealloc_slots = match flags.max_running_requests {
            _ if version < GRAPH_CONFIG_FROM => small_cap_slots(max_running_requests),
            Some(u) => small_cap_slots(u / dp),
            None => 0,
        };
        let chunked_prefix = super::chunked_prefix::ChunkedPrefixCache::resolve(
            model.mla.is_some(),
            flags.disable_chunked_prefix_cache,
            flags.sgl_chunked_prefix_cache_threshold,
            version,
            page_size,
            &attention_backend,
        );
        Ok(ServerConfig {
            version,
            tp,
            weight_format,
            kv_dtype,
            attention_backend,
            mem_fraction_static,
            chunked_prefill_size,
            max_prefill_tokens,
            page_size,
            schedule_policy,
            schedule_conservativeness,
            radix_cache: !flags.disable_radix_cache,
            // Speculation forces mixed chunks off (0.4.7+); its overlap is spec v2's
            // (`speculative_v2`: off with spec v1, on by default from 0.5.11).
            mixed_chunk: flags.enable_mixed_chunk && !spec_on,
            overlap_schedule: match &spec {
                Some(s) => s.worker.overlap,
                None => {
                    let forced_off = (dp_attention && dp_rules::disables_overlap(version))
                        || (mamba.is_some() && !flags.disable_radix_cache);
                    !(flags.disable_overlap_schedule || forced_off)
                        && super::scheduler_cpu::group(version).overlap_by_default
                }
            },
            piecewise_prefill,
            chunked_prefix,
            cuda_graph_batch_sizes,
            kv_pool_tokens,
            swa_pools,
            req_pool_size,
            max_running_requests,
            weight_bytes_per_rank,
            kv_bytes_per_token,
            context_length,
            nnodes,
            dp,
            attn_tp,
            dp_attention,
            router,
            speculative: spec,
            decode_prealloc_slots,
            draft_kv_bytes_per_token,
            expert_parallel,
            notes,
            vllm: None,
            fused_moe_tuned,
        })
    }

    /// GPUs (NPUs) the deployment occupies: one TP group with DP attention, else `dp`
    /// replicas of `tp` each.
    pub fn devices(&self) -> u64 {
        if self.dp_attention {
            self.tp
        } else {
            self.tp * self.dp
        }
    }

    /// Ranks of one TP group on a node of `devices_per_node` (`spec::nodes`).
    pub fn group_ranks_per_node(&self, devices_per_node: u32) -> u64 {
        super::nodes::group_ranks_per_node(self.nnodes, self.tp, devices_per_node)
    }

    /// The full-attention pool's tokens: `kv_pool_tokens`, or with hybrid SWA pools the full
    /// pool's (what SGLang logs as `max_total_num_tokens` and the scheduler's main pool holds).
    pub fn full_pool_tokens(&self) -> u64 {
        self.swa_pools
            .as_ref()
            .map_or(self.kv_pool_tokens, |p| p.full_tokens)
    }

    /// Largest captured decode batch (0 without CUDA graphs).
    pub fn cuda_graph_max_bs(&self) -> u64 {
        self.cuda_graph_batch_sizes.last().copied().unwrap_or(0)
    }

    /// The captured size a decode batch of `bs` is padded to, or `None` when it runs eagerly.
    pub fn graph_batch_size(&self, bs: u64) -> Option<u64> {
        let i = self.cuda_graph_batch_sizes.partition_point(|&b| b < bs);
        self.cuda_graph_batch_sizes.get(i).copied()
    }

    /// Rounds a token count up to whole pages.
    pub fn ceil_page(&self, tokens: u64) -> u64 {
        tokens.div_ceil(self.page_size) * self.page_size
    }
}

/// serde: leave a zero out of the JSON (an absent draft model).
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
