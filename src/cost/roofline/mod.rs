//! The default [`StepCost`]: a roofline over the model's operators on one rank. Each operator
//! costs max(compute / (peak · efficiency), bytes / (bandwidth · efficiency)); per layer:
//! linear projections (dense, shared expert), routed experts (expected distinct experts
//! touched), attention (prefill over prefix + extend, decode over each context, GQA or MLA,
//! sliding windows), TP all-reduce (alpha-beta); then the LM head on logit tokens only, and
//! fixed overheads (per step, per layer when eager, per request CPU).
mod explain;
mod ops;

use super::collective::{self, Placement};
use super::moe_config;
use super::overheads::{Extend, Overheads};
use super::{BatchShape, Launch, StepCost, StepTime};
use crate::spec::hardware::{Arch, AttentionEfficiency, ComputeType, HardwareProfile};
use crate::spec::model::{ModelSpec, WeightFormat};
use crate::spec::server::ServerConfig;

/// Pre-computed per-rank constants so each step is a handful of arithmetic operations.
#[derive(Debug, Clone)]
pub struct Roofline {
    hw: HardwareProfile,
    attn: AttentionEfficiency,
    overheads: Overheads,
    tp: f64,
    hidden: f64,
    num_layers: f64,
    dense_layers: f64,
    moe_layers: f64,
    /// Linear params per rank in a dense layer / in an MoE layer (attention + dense or shared).
    dense_linear_params: f64,
    moe_linear_params: f64,
    router_params: f64,
    expert_params: f64,
    num_experts: f64,
    experts_per_token: f64,
    linear_bytes_per_param: f64,
    expert_bytes_per_param: f64,
    linear_compute: ComputeType,
    expert_is_mxfp4: bool,
    /// The MXFP4 expert kernel's efficiencies per engine × GPU ([`super::mxfp4`]): SGLang's
    /// path from the profile's `efficiency.mxfp4_*`, vLLM's Marlin W4A16 on sm80 from the
    /// dense GEMM rate, vLLM's native kernels from `moe_gemm`. `None`: not MXFP4.
    pub(crate) mxfp4: Option<super::mxfp4::Mxfp4Kernel>,
    mxfp4_rates: Option<super::mxfp4::ExpertRates>,
    lm_head_params: f64,
    /// Attention: FLOPs per (query token × attended token) per layer, and KV bytes per
    /// attended token per layer, on this rank.
    attn_flops_per_pair: f64,
    decode_attn_flops_per_pair: f64,
    kv_bytes_per_token_layer: f64,
    window_tokens: Option<f64>,
    windowed_layers: f64,
    /// Gated delta-net layers ([`super::gdn`]), priced instead of softmax attention on them.
    gdn: Option<super::gdn::GdnCost>,
    /// The prefill kernel's window clips only the cached prefix ([`super::window`]).
    window_prefix_only: bool,
    /// vLLM's Triton unified attention's tile-rate-bound prefill ([`super::unified_attention`]).
    unified: Option<super::unified_attention::UnifiedAttention>,
    /// SGLang's triton extend kernel at MLA prefill ([`super::triton_mla_prefill`]).
    triton_mla: Option<super::triton_mla_prefill::TritonMlaPrefill>,
    /// SGLang's static-split triton kernel at MLA decode ([`super::triton_mla_decode`]).
    triton_mla_decode: Option<super::triton_mla_decode::TritonMlaDecode>,
    /// Set with DP attention: the per-layer weights split by where they run.
    dp_attention: Option<DpAttention>,
    /// SGLang's custom all-reduce serves messages below [`CUSTOM_AR_MAX_BYTES`].
    custom_all_reduce: bool,
    /// The TP group on nodes: one node, or several over the inter-node link.
    placement: Placement,
    /// Tuned routed-expert time at the untuned window's floor rows, when this deployment's
    /// fused MoE runs SGLang's default config ([`super::moe_config`]).
    untuned_moe_floor_ns: Option<f64>,
    /// Expert parallelism's busiest-rank tokens and all-to-all ([`super::expert_parallel`]).
    ep: Option<super::expert_parallel::EpCost>,
    /// MiniMax-M2's QK-norm all-reduces ([`super::qk_norm_tp`]).
    pub(crate) qk_norm: Option<super::qk_norm_tp::QkNormAllReduce>,
}

/// Largest message SGLang's custom all-reduce takes: `CustomAllreduce(max_size=8192 * 1024)`
/// (python/sglang/srt/distributed/device_communicators/custom_all_reduce.py, unchanged from
/// 0.3 to 0.5.x); larger ones go to NCCL.
pub const CUSTOM_AR_MAX_BYTES: f64 = 8.0 * 1024.0 * 1024.0;

/// TP sizes the custom all-reduce supports (`_SUPPORTED_WORLD_SIZES = [2, 4, 6, 8]`).
pub const CUSTOM_AR_WORLD_SIZES: [u64; 4] = [2, 4, 6, 8];

/// With DP attention each attention rank runs the attention projections (sharded over
/// `attn_tp` GPUs) on its own tokens; the MLP / MoE weights (sharded over all `tp`) run on the
/// tokens gathered from every rank.
#[derive(Debug, Clone, Copy)]
struct DpAttention {
    /// Attention projection params per GPU per layer (at attn_tp).
    attn_params: f64,
    /// Dense MLP params per GPU in a dense layer, shared-expert params in an MoE layer (at tp).
    dense_mlp_params: f64,
    shared_expert_params: f64,
}

impl Roofline {
    pub fn new(
        hw: &HardwareProfile,
        model: &ModelSpec,
        server: &ServerConfig,
    ) -> crate::error::Result<Self> {
        let tp = server.tp;
        let dense = model.layer_params(0, tp);
        let sparse = model.layer_params(model.num_layers.saturating_sub(1), tp);
        let (lin_b, exp_b) = server.weight_format.bytes_per_param();
        let linear_compute = server.weight_format.linear_compute();
        let nh_r = model.q_heads_per_rank(server.attn_tp);
        let (attn_flops_per_pair, decode_attn_flops_per_pair) = match &model.mla {
            // Extend runs MHA-style over decompressed K/V (qk dim nope+rope, v dim v_head).
            // Decode runs absorbed: scores over the latent (kv_lora + rope), output over kv_lora.
            Some(m) => (
                2.0 * nh_r * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) as f64,
                2.0 * nh_r * (2 * m.kv_lora_rank + m.qk_rope_head_dim) as f64,
            ),
            None => {
                let f = 4.0 * nh_r * model.head_dim as f64;
                (f, f)
            }
        };
        // KV bytes per token of one layer that caches (a hybrid GDN model caches none on its
        // linear layers: `kv_bytes_per_token` counts the full-attention layers only).
        let kv_bytes_per_token_layer =
            server.kv_bytes_per_token / model.full_attention_layers().max(1) as f64;
        let moe = model.moe.as_ref();
        let per_node = server.group_ranks_per_node(hw.link.devices_per_node);
        let group = format!("--tp {tp}");
        let placement = Placement::checked(tp, per_node, hw, [&group, "all-reduce", "--tp"])?;
        let (window_tokens, windowed_layers) = super::window::applied_for_cost(model, server);
        let mxfp4 = super::mxfp4::kernel(hw, server);
        Ok(Roofline {
            placement,
            qk_norm: super::qk_norm_tp::QkNormAllReduce::of(model, server),
            attn: hw.attention(super::unified_attention::efficiency_key(hw, server))?,
            hw: hw.clone(),
            overheads: Overheads::new(hw, model, server),
            tp: tp as f64,
            hidden: model.hidden_size as f64,
            num_layers: model.num_layers as f64,
            dense_layers: (model.num_layers - model.moe_layers()) as f64,
            moe_layers: model.moe_layers() as f64,
            dense_linear_params: dense.attention + dense.dense_mlp,
            moe_linear_params: sparse.attention + sparse.shared_expert,
            router_params: sparse.router,
            expert_params: sparse.expert,
            num_experts: moe.map_or(0.0, |m| m.num_experts as f64),
            experts_per_token: moe.map_or(0.0, |m| m.experts_per_token as f64),
            linear_bytes_per_param: lin_b,
            expert_bytes_per_param: exp_b,
            linear_compute,
            // 4-bit experts (MXFP4, int4) are dequantised to bf16 for the tensor cores.
            expert_is_mxfp4: matches!(
                server.weight_format,
                WeightFormat::Mxfp4 | WeightFormat::W4a16Int4
            ),
            mxfp4_rates: mxfp4.map(|k| k.rates(hw)),
            mxfp4,
            lm_head_params: model.lm_head_params(tp),
            attn_flops_per_pair,
            decode_attn_flops_per_pair,
            kv_bytes_per_token_layer,
            window_tokens,
            windowed_layers,
            gdn: model
                .linear_attention
                .as_ref()
                .map(|l| super::gdn::GdnCost::of(l, server.attn_tp)),
            window_prefix_only: super::window::extend_clips_prefix_only(server),
            unified: super::unified_attention::UnifiedAttention::of(hw, model, server),
            triton_mla: super::triton_mla_prefill::TritonMlaPrefill::of(hw, model, server),
            triton_mla_decode: super::triton_mla_decode::TritonMlaDecode::of(hw, model, server),
            // NVIDIA only (SGLang sets disable_custom_all_reduce on NPU), never across nodes
            // (custom_all_reduce.py 0.5.9 l. 94); over PCIe for two GPUs only (`has_nvlink`).
            custom_all_reduce: hw.arch != Arch::Ascend
                && (hw.arch.has_nvlink() || tp == 2)
                && CUSTOM_AR_WORLD_SIZES.contains(&tp)
                && !placement.spans_nodes(),
            dp_attention: server.dp_attention.then(|| DpAttention {
                attn_params: model.attention_params_per_rank(server.attn_tp),
                dense_mlp_params: dense.dense_mlp,
                shared_expert_params: sparse.shared_expert,
            }),
            untuned_moe_floor_ns: None,
            ep: super::expert_parallel::EpCost::new(hw, model, server)?,
        }
        .with_untuned_moe(hw, model, server))
    }

    fn with_untuned_moe(
        mut self,
        hw: &HardwareProfile,
        model: &ModelSpec,
        s: &ServerConfig,
    ) -> Self {
        if moe_config::untuned(hw, model, s, None).is_some() {
            self.untuned_moe_floor_ns = Some(self.tuned_experts_ns(moe_config::UNTUNED_FLOOR_ROWS));
        }
        self
    }

    fn bandwidth(&self) -> f64 {
        self.hw.memory.bandwidth_bytes_per_s
    }

    /// Large-shape grouped-GEMM (expert) efficiency.
    fn moe_gemm_peak_eff(&self) -> f64 {
        let e = &self.hw.efficiency;
        e.moe_gemm.unwrap_or(e.gemm)
    }

    /// Rows per expert at which the grouped GEMM reaches half its large-shape efficiency;
    /// MXFP4 experts roll off with their kernel's half-point ([`super::mxfp4`]).
    fn moe_half_tokens(&self) -> f64 {
        self.mxfp4_rates
            .map_or(self.hw.efficiency.gemm_half_tokens, |r| r.half_tokens)
    }

    /// Time (ns) of a GEMM of `params` weights over `m` tokens.
    ///
    /// The small-M roll-off eff(m) = gemm · m / (m + half) prices the compute as if `half`
    /// extra rows were padded in (2 · params · (m + half) / (peak · gemm)). At small M a GEMM
    /// is weight-read-bound: that padding can never cost more than streaming the weights at
    /// memory efficiency, so it is capped there (a profile with a large `gemm_half_tokens`
    /// or a slow dtype path otherwise makes a batch-1 GEMM slower than reading its weights).
    fn gemm_ns(
        &self,
        params: f64,
        m: f64,
        bytes_per_param: f64,
        compute: ComputeType,
        compute_mult: f64,
        mem_mult: f64,
    ) -> f64 {
        if params <= 0.0 || m <= 0.0 {
            return 0.0;
        }
        let e = &self.hw.efficiency;
        let rate = self.hw.peak_ops_per_s(compute) * e.gemm * compute_mult;
        let weights_s = params * bytes_per_param / (self.bandwidth() * e.memory * mem_mult);
        let padding_s = (2.0 * params * e.gemm_half_tokens / rate).min(weights_s);
        let compute_s = 2.0 * m * params / rate + padding_s;
        let memory_s = weights_s + m * self.hidden * 4.0 / (self.bandwidth() * e.memory * mem_mult); // + activations in/out
        compute_s.max(memory_s) * 1e9
    }

    /// Routed experts of one MoE layer for `m` tokens (expected distinct experts touched under
    /// uniform routing: E·(1 − (1 − k/E)^m)).
    fn experts_ns(&self, m: f64) -> f64 {
        let tuned = self.tuned_experts_ns(m);
        match self.untuned_moe_floor_ns {
            Some(floor) => moe_config::untuned_ns(tuned, floor),
            None => tuned,
        }
    }

    /// Routed experts with a tuned fused-MoE config.
    fn tuned_experts_ns(&self, m: f64) -> f64 {
        if self.num_experts == 0.0 || m <= 0.0 {
            return 0.0;
        }
        let e = self.num_experts;
        let k = self.experts_per_token;
        let touched = e * (1.0 - (1.0 - k / e).powf(m));
        let (peak_eff, mmul) = self
            .mxfp4_rates
            .map_or((self.moe_gemm_peak_eff(), 1.0), |r| {
                (r.peak_eff, r.memory_mult)
            });
        let compute = if self.expert_is_mxfp4 {
            ComputeType::Bf16
        } else {
            self.linear_compute
        };
        // As for a dense GEMM (see `gemm_ns`): per touched expert, the roll-off's padding rows
        // cost at most reading that expert's weights.
        let rate = self.hw.peak_ops_per_s(compute) * peak_eff;
        let weights_s = touched * self.expert_params * self.expert_bytes_per_param
            / (self.bandwidth() * self.hw.efficiency.memory * mmul);
        let padding_s =
            (2.0 * touched * self.expert_params * self.moe_half_tokens() / rate).min(weights_s);
        let compute_s = 2.0 * m * k * self.expert_params / rate + padding_s;
        let memory_s = weights_s
            + m * k * self.hidden * 4.0 / (self.bandwidth() * self.hw.efficiency.memory * mmul);
        compute_s.max(memory_s) * 1e9
    }

    /// The floor a measured kernel puts under one layer's prefill attention (ns), 0 where no
    /// such kernel runs: vLLM's Triton unified attention ([`super::unified_attention`], full
    /// and windowed layers) and SGLang's triton extend kernel at MLA prefill
    /// ([`super::triton_mla_prefill`], full layers). Both backends take the max with it.
    pub(crate) fn prefill_floor_ns(&self, s: &BatchShape, windowed: bool) -> f64 {
        let unified = self.unified.map_or(0.0, |u| {
            u.prefill_floor_ns(s, windowed, self.kv_bytes_per_token_layer)
        });
        let mla = match self.triton_mla {
            Some(k) if !windowed => k.layer_ns(s),
            _ => 0.0,
        };
        unified.max(mla)
    }

    /// What [`Self::prefill_floor_ns`] and [`Self::decode_floor_ns`] apply, one `describe()`
    /// line per floor: (prefill, decode). Both backends' `--explain` print them.
    pub(crate) fn floor_descriptions(&self) -> (Vec<String>, Vec<String>) {
        let prefill = [
            self.unified.map(|u| u.describe()),
            self.triton_mla.map(|t| t.describe()),
        ];
        let decode = [self.triton_mla_decode.map(|t| t.describe())];
        (
            prefill.into_iter().flatten().collect(),
            decode.into_iter().flatten().collect(),
        )
    }

    /// The floor SGLang's static-split triton kernel at MLA decode puts under one
    /// full-attention layer's decode (ns), 0 under every other kernel
    /// ([`super::triton_mla_decode`]). Both backends take the max with it.
    pub(crate) fn decode_floor_ns(&self, s: &BatchShape) -> f64 {
        self.triton_mla_decode.map_or(0.0, |k| k.layer_ns(s))
    }

    /// Attention of one layer (ns); `windowed` selects the sliding-window variant.
    fn attention_ns(&self, s: &BatchShape, windowed: bool) -> f64 {
        let peak = self.hw.peaks.bf16_flops_per_s;
        let bw = self.bandwidth();
        let mut t = 0.0;
        if s.prefill_reqs > 0 {
            let work = if windowed {
                super::window::prefill_work(s, self.window_prefix_only)
            } else {
                s.prefill_attn_work
            };
            let kv_tokens = match (windowed, self.window_tokens) {
                (true, Some(w)) => (s.prefill_kv_tokens as f64)
                    .min(s.prefill_tokens as f64 + w * s.prefill_reqs as f64),
                _ => s.prefill_kv_tokens as f64,
            };
            let compute_s = work * self.attn_flops_per_pair / (peak * self.attn.prefill);
            let memory_s =
                kv_tokens * self.kv_bytes_per_token_layer / (bw * self.hw.efficiency.memory);
            t += compute_s
                .max(memory_s)
                .max(self.prefill_floor_ns(s, windowed) / 1e9);
        }
        if s.decode_reqs > 0 {
            let ctx = match (windowed, self.window_tokens) {
                (true, Some(w)) => (s.decode_ctx_sum as f64).min(w * s.decode_reqs as f64),
                _ => s.decode_ctx_sum as f64,
            };
            // A verify (width N) runs N queries per request over the same KV, read once.
            let width = s.decode_width.max(1) as f64;
            let compute_s =
                width * ctx * self.decode_attn_flops_per_pair / (peak * self.attn.prefill);
            let memory_s = ctx * self.kv_bytes_per_token_layer / (bw * self.attn.decode);
            let floor_s = if windowed {
                0.0
            } else {
                self.decode_floor_ns(s) / 1e9
            };
            t += compute_s.max(memory_s).max(floor_s);
        }
        t * 1e9
    }

    /// One TP all-reduce of `tokens` hidden states in bf16 (ns): alpha-beta over the
    /// 2(N−1)/N of the message each rank moves.
    ///
    /// Below [`CUSTOM_AR_MAX_BYTES`] SGLang's custom all-reduce runs (one-shot for small
    /// messages, two-shot above ≈ 256–512 KiB at 8 ranks; the kernel picks): its fixed latency
    /// and its effective link efficiency at these sizes, which covers both algorithms (issue
    /// 12: ≈ 0.15–0.25 and 8–15 µs). Above the limit, and where the custom kernel does not run,
    /// NCCL's ring at `collective` efficiency. The ring's price is floored at the custom
    /// kernel's price at the limit, so a larger message never costs less (until the ring's
    /// higher efficiency catches up, the crossover the 8 MiB limit approximates).
    fn all_reduce_ns(&self, tokens: f64) -> f64 {
        if self.tp <= 1.0 || tokens <= 0.0 {
            return 0.0;
        }
        let bytes = tokens * self.hidden * 2.0;
        let link = &self.hw.link;
        let moved = |b: f64| 2.0 * (self.tp - 1.0) / self.tp * b;
        // Checked in `new`: a group spanning nodes has an inter-node link.
        let ring_ns =
            collective::all_reduce_ns(bytes, self.placement, link, self.hw.efficiency.collective)
                .unwrap_or(f64::INFINITY);
        if !self.custom_all_reduce {
            return ring_ns;
        }
        let custom_ns = |b: f64| {
            link.custom_all_reduce_latency_ns
                + moved(b) / (link.bandwidth_bytes_per_s * self.hw.efficiency.custom_all_reduce)
                    * 1e9
        };
        if bytes < CUSTOM_AR_MAX_BYTES {
            custom_ns(bytes)
        } else {
            ring_ns.max(custom_ns(CUSTOM_AR_MAX_BYTES))
        }
    }

    /// Rows the GEMMs of `s` run over: tokens, or the padded batch under a CUDA graph.
    fn rows(s: &BatchShape) -> f64 {
        s.gemm_rows()
    }

    /// A linear layer of `params` weights (the model's linear format) over `rows` tokens.
    fn lin(&self, params: f64, rows: f64) -> f64 {
        self.gemm_ns(
            params,
            rows,
            self.linear_bytes_per_param,
            self.linear_compute,
            1.0,
            1.0,
        )
    }

    fn router_ns(&self, rows: f64) -> f64 {
        self.gemm_ns(self.router_params, rows, 2.0, ComputeType::Bf16, 1.0, 1.0)
    }

    /// `t` plus the attention kernels of every layer (full and sliding-window) for `s`.
    fn add_attention_layers(&self, t: f64, s: &BatchShape) -> f64 {
        let full_layers = self.num_layers - self.windowed_layers - self.linear_layers();
        let mut t = t + full_layers * self.attention_ns(s, false) + self.linear_layers_ns(s);
        if self.windowed_layers > 0.0 {
            t += self.windowed_layers * self.attention_ns(s, true);
        }
        t
    }

    /// `t` plus the LM head over the logit rows, then the fixed per-step / per-layer costs
    /// (by what the step extends).
    fn add_head_and_fixed(&self, t: f64, logits: f64, launch: Launch, extend: Extend) -> f64 {
        let head = self.gemm_ns(
            self.lm_head_params,
            logits,
            2.0,
            ComputeType::Bf16,
            1.0,
            1.0,
        );
        t + head + self.overheads.fixed_gpu_ns(launch, extend)
    }

    /// GPU time of the forward pass (kernels + launch overheads), ns.
    pub fn gpu_ns(&self, s: &BatchShape) -> f64 {
        if s.prefill_tokens + s.decode_reqs == 0 {
            return 0.0;
        }
        let rows = Self::rows(s);
        let mut t = self.dense_layers * self.lin(self.dense_linear_params, rows);
        if self.moe_layers > 0.0 {
            t += self.moe_layers
                * (self.lin(self.moe_linear_params, rows)
                    + self.router_ns(rows)
                    + self.experts_ns(self.ep_rows(rows)));
        }
        t = self.add_attention_layers(t, s);
        let c = self.collectives(rows, s.prefill_reqs > 0);
        t += c.all_reduce_ns + c.all_to_all_ns;
        let logits = s.logit_rows();
        self.add_head_and_fixed(t, logits, s.launch(), Extend::of(s))
    }

    /// GPU time of one lockstep step of DP-attention ranks (`shapes[r]` = rank r's batch; an
    /// idle rank has an empty shape). Attention runs per rank (the slowest rank sets the pace);
    /// MLP / MoE layers, their collectives and the LM head run over the tokens gathered from
    /// every rank, padded to ranks × the largest rank's rows when all ranks replay graphs.
    pub fn group_gpu_ns(&self, shapes: &[BatchShape]) -> f64 {
        let Some(d) = self.dp_attention.filter(|_| shapes.len() > 1) else {
            return shapes.iter().map(|s| self.gpu_ns(s)).fold(0.0, f64::max);
        };
        let busy = || shapes.iter().filter(|s| !s.is_empty());
        if busy().next().is_none() {
            return 0.0;
        }
        let launch = busy().map(BatchShape::launch).max().unwrap_or_default();
        let gathered = if launch == Launch::Eager {
            busy()
                .map(|s| (s.prefill_tokens + s.decode_tokens()) as f64)
                .sum()
        } else {
            shapes.len() as f64 * busy().map(Self::rows).fold(0.0, f64::max)
        };
        let attention = busy()
            .map(|s| {
                self.add_attention_layers(
                    self.num_layers * self.lin(d.attn_params, Self::rows(s)),
                    s,
                )
            })
            .fold(0.0, f64::max);
        let mut t = attention + self.dense_layers * self.lin(d.dense_mlp_params, gathered);
        if self.moe_layers > 0.0 {
            t += self.moe_layers
                * (self.lin(d.shared_expert_params, gathered)
                    + self.router_ns(gathered)
                    + self.experts_ns(self.ep_rows(gathered)));
        }
        let c = self.collectives(gathered, busy().any(|s| s.prefill_reqs > 0));
        t += c.all_reduce_ns + c.all_to_all_ns;
        let logits: f64 = busy().map(BatchShape::logit_rows).sum();
        let extend = busy().map(Extend::of).fold(Extend::None, Extend::join);
        self.add_head_and_fixed(t, logits, launch, extend)
    }
}

impl StepCost for Roofline {
    fn step_time(&self, s: &BatchShape) -> StepTime {
        let o = &self.overheads;
        o.with_cpu(self.gpu_ns(s), o.cpu_ns(s.decode_reqs + s.prefill_reqs))
    }

    fn explain(&self, s: &BatchShape) -> super::breakdown::StepBreakdown {
        self.breakdown(s)
    }

    /// Each rank's scheduler runs its own CPU work in parallel: the slowest one counts.
    fn group_step_time(&self, shapes: &[BatchShape]) -> StepTime {
        let o = &self.overheads;
        let cpu_ns = shapes
            .iter()
            .map(|s| o.cpu_ns(s.decode_reqs + s.prefill_reqs))
            .fold(0.0, f64::max);
        o.with_cpu(self.group_gpu_ns(shapes), cpu_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::bundled::{load_hardware, load_model};
    use crate::spec::server::ServerFlags;

    fn roofline(hw: &str, tp: u64) -> Roofline {
        let hw = load_hardware(hw).unwrap();
        let model = load_model("qwen3-32b").unwrap();
        let flags = ServerFlags {
            tp: Some(tp),
            ..Default::default()
        };
        let server = ServerConfig::resolve(&flags, &hw, &model).unwrap();
        Roofline::new(&hw, &model, &server).unwrap()
    }

    /// Hand calculation on H100 (450 GB/s link; custom all-reduce 10 µs, efficiency 0.2; NCCL
    /// 8 µs, 0.8) for qwen3-32b (hidden 5120, bf16: 10240 bytes per token) at TP 8, where each
    /// rank moves 2·7/8 = 1.75 of the message.
    #[test]
    fn all_reduce_uses_the_custom_kernel_below_8_mib_and_the_ring_above() {
        let r = roofline("h100-sxm5-80gb", 8);
        // 1 token: 10 µs + 1.75 · 10240 B / 90 GB/s = 10 199.1 ns.
        assert!((r.all_reduce_ns(1.0) - 10_199.11).abs() < 0.1);
        // 64 tokens (655 360 B): 10 µs + 12 743.1 ns.
        assert!((r.all_reduce_ns(64.0) - 22_743.1).abs() < 0.1);
        // 8192 tokens (83.9 MB) take the ring: 8 µs + 1.75 · 83 886 080 / 360 GB/s.
        assert!((r.all_reduce_ns(8192.0) - (8000.0 + 407_779.6)).abs() < 1.0);
        // Just above the limit the ring is floored at the custom kernel's price at 8 MiB.
        let at_limit = 10_000.0 + 1.75 * CUSTOM_AR_MAX_BYTES / 90e9 * 1e9;
        assert!((r.all_reduce_ns(820.0) - at_limit).abs() < 1.0);
        assert!(r.all_reduce_ns(819.0) <= at_limit);
        // TP 1: no all-reduce at all.
        let r3 = roofline("h100-sxm5-80gb", 1);
        assert_eq!(r3.all_reduce_ns(64.0), 0.0);
        // Ascend never uses it (HCCL): 7 peers × 1.17 µs (the A3 profile's measured per-peer
        // latency) + 1.75 · 655 360 / (196 GB/s · 0.8).
        let a = {
            let mut hw = load_hardware("ascend-a3").unwrap();
            hw.efficiency.collective = 0.8; // the hand calculation's value, not the fitted one
            let model = load_model("qwen3-32b").unwrap();
            let flags = ServerFlags {
                tp: Some(8),
                mem_fraction_static: Some(0.8),
                ..Default::default()
            };
            let server = ServerConfig::resolve(&flags, &hw, &model).unwrap();
            Roofline::new(&hw, &model, &server).unwrap()
        };
        assert!(
            (a.all_reduce_ns(64.0) - (7.0 * 1170.0 + 1.75 * 655_360.0 / 156.8e9 * 1e9)).abs() < 1.0
        );
    }

    /// At batch 1 a GEMM costs what reading its weights costs, whatever the roll-off says.
    #[test]
    fn a_small_gemm_is_weight_read_bound() {
        let mut r = roofline("h100-sxm5-80gb", 1);
        r.hw.efficiency.gemm_half_tokens = 1e6; // an absurd roll-off
        let params = 1e9;
        let weights_ns = params * 2.0 / (3.35e12 * 0.85) * 1e9;
        let t = r.gemm_ns(params, 1.0, 2.0, ComputeType::Bf16, 1.0, 1.0);
        let flops_ns = 2.0 * params / (989.4e12 * 0.8) * 1e9;
        assert!(t <= weights_ns + flops_ns + 10.0, "{t} vs {weights_ns}");
        assert!(t >= weights_ns);
    }
}
