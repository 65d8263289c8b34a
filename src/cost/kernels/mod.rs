//! The measured-kernel [`StepCost`]: SGLang's own kernels as NVIDIA AIConfigurator measured
//! them (GEMM by dtype×m×n×k, context and generation attention, MLA, gated delta-net
//! ([`gdn_tables`]), fused MoE, custom all-reduce and NCCL; tables in
//! `hardware-profiles/kernels/`, see NOTICE), interpolated.
//!
//! At resolve, every operator of the deployment becomes a curve over the one quantity a step
//! varies: each GEMM of a layer (n, k fixed by model and TP) over m tokens, the routed experts
//! over tokens, the all-reduce over message size, decode attention over (batch, context) and
//! prefill attention over (requests, prompt length). A step is then a handful of lookups,
//! O(log grid), never O(batch). The batch arrives as aggregates ([`BatchShape`]), so:
//! decode attention is priced at the batch's mean context (exact for a memory-bound kernel,
//! whose time is linear in Σ context); prefill attention at the prompt length with the same
//! causal work per request, L = √(2·work/requests) (exact for a compute-bound kernel; prefixes
//! are folded into the work). Sliding-window layers clip the context / work to the window.
//! An operator the tables do not cover (no rows for the dtype, head_dim, MoE shape or TP size;
//! MLA where SGLang has no table) falls back to the roofline's price for that operator alone,
//! and `--explain` says so. The fixed and CPU overheads are the shared [`Overheads`].
mod build;
pub mod curve;
pub mod db;
pub mod envelope;
pub mod explain;
pub mod flashinfer_decode;
pub mod gdn_tables;
pub mod memo;
pub mod mla_form;
pub mod moe_routing;
pub mod ops;
pub mod table;
pub mod transfer;
pub mod versions;

use super::overheads::{Extend, Overheads};
use super::roofline::Roofline;
use super::{BatchShape, Launch, StepCost, StepTime};
use curve::{Curve, Surface};
use ops::GemmShape;

/// Largest message SGLang's custom all-reduce takes (its `max_size`, 8 MiB); NCCL above.
pub const CUSTOM_ALLREDUCE_MAX_BYTES: f64 = 8.0 * 1024.0 * 1024.0;

/// Bits of [`Parts::extrapolated`]: which components left a table's grid.
const X_GEMM: u8 = 1;
const X_ATTN: u8 = 2;
const X_MOE: u8 = 4;
const X_AR: u8 = 8;
const X_HEAD: u8 = 16;

/// One GEMM of the deployment: its curve over m, or the roofline's price.
#[derive(Debug, Clone)]
struct Linear {
    shape: GemmShape,
    curve: Option<Curve>,
    /// n or k outside the table's grid (the curve is extrapolated in n/k).
    nk_outside: bool,
}

/// Attention of one phase (decode or prefill): a surface over (batch, length), scaled from the
/// nearest measured head count, or the roofline's price.
#[derive(Debug, Clone)]
struct Attention {
    surface: Option<Surface>,
    scale: f64,
    note: String,
    /// Decode priced by [`flashinfer_decode`]'s bounded roofline (no surface then).
    bounded: Option<flashinfer_decode::BoundedDecode>,
}

/// The TP all-reduce: custom all-reduce (graph and eager lanes) below its size limit, NCCL above.
#[derive(Debug, Clone)]
struct AllReduce {
    custom_graph: Option<Curve>,
    custom_eager: Option<Curve>,
    nccl: Option<Curve>,
}

/// The parts of a step that depend only on its GEMM rows (and whether it runs eagerly): the
/// linear layers, the routed experts and the all-reduces.
#[derive(Debug, Clone, Copy, Default)]
struct RowParts {
    /// GEMMs of the attention projections (every layer) and of the dense / MoE-shared MLPs.
    gemm: f64,
    moe: f64,
    all_reduce: f64,
    nccl: bool,
    extrapolated: u8,
}

/// A step's GPU time by component, ns, with the extrapolation flags.
#[derive(Debug, Clone, Copy, Default)]
struct Parts {
    gemm: f64,
    attention: f64,
    moe: f64,
    all_reduce: f64,
    lm_head: f64,
    fixed: f64,
    extrapolated: u8,
    /// The all-reduce went to NCCL (message above the custom all-reduce's limit).
    nccl: bool,
    rows: f64,
    launch: Launch,
    /// What the step extends (joined over a lockstep group).
    extend: Extend,
    /// Per component (gemm, attention, moe, all-reduce, LM head): 0 when this deployment's
    /// tables priced it, else 1 + the index of the weaker GPU whose price bound it
    /// ([`envelope`]).
    bound_by: [u8; envelope::COMPONENTS],
    /// Per component: 0, else 1 + the index of the GPU whose measured price raised this GPU's
    /// roofline fallback ([`envelope`]).
    floored_by: [u8; envelope::COMPONENTS],
    /// Bit j: component j (as [`Parts::component`]) was priced by the roofline fallback.
    fallback: u8,
}

impl Parts {
    fn gpu_ns(&self) -> f64 {
        self.gemm + self.attention + self.moe + self.all_reduce + self.lm_head + self.fixed
    }

    /// Component j: gemm, attention, moe, all-reduce, LM head.
    fn component(&self, j: usize) -> f64 {
        [
            self.gemm,
            self.attention,
            self.moe,
            self.all_reduce,
            self.lm_head,
        ][j]
    }

    fn set_component(&mut self, j: usize, v: f64) {
        *[
            &mut self.gemm,
            &mut self.attention,
            &mut self.moe,
            &mut self.all_reduce,
            &mut self.lm_head,
        ][j] = v;
    }
}

/// The measured-kernel backend for one deployment.
#[derive(Debug, Clone)]
pub struct KernelCost {
    roof: Roofline,
    overheads: Overheads,
    /// `system, sglang version, origin` of the tables, for `--explain`.
    provenance: String,
    gemm_dtype: String,
    hidden: f64,
    tp: u64,
    num_layers: f64,
    dense_layers: f64,
    moe_layers: f64,
    windowed_layers: f64,
    window: Option<f64>,
    /// The prefill kernel's window clips only the cached prefix ([`crate::cost::window`]).
    window_prefix_only: bool,
    attn_gemms: Vec<Linear>,
    dense_mlp: Vec<Linear>,
    moe_dense: Vec<Linear>,
    experts: Option<Curve>,
    experts_note: String,
    /// The `experts` curve's tokens per step token: 1 without EP or on the table's own EP rows
    /// (their routing carries the imbalance), else the busiest EP rank's share
    /// (`build::moe_rows_to_try`, `cost::expert_parallel`).
    experts_rows_scale: f64,
    lm_head: Linear,
    decode_attn: Attention,
    prefill_attn: Attention,
    /// An MLA model's prefill form rules, when `prefill_attn` is a `context_mla` surface.
    mla_prefill: Option<mla_form::MlaPrefill>,
    all_reduce: AllReduce,
    dp_attention: bool,
    /// Tuned routed-expert time at the untuned window's floor rows, when the deployment's
    /// fused MoE runs SGLang's default config ([`crate::cost::moe_config`]).
    untuned_moe_floor_ns: Option<f64>,
    /// [`RowParts`] of every captured decode batch size, ascending (built at resolve).
    graph_rows: Vec<(u64, RowParts)>,
    /// The deployment on the other ladder GPUs with tables ([`envelope`]).
    bounds: Vec<envelope::Bound>,
    /// Priced from a same-architecture donor's tables ([`transfer`]).
    transfer: Option<std::sync::Arc<transfer::Transfer>>,
    /// The measured gated delta-net kernels of a hybrid model ([`gdn_tables`]).
    gdn: Option<gdn_tables::MeasuredGdn>,
}

/// Rows the GEMMs of `s` run over: tokens, or the padded batch under a CUDA graph.
fn rows(s: &BatchShape) -> f64 {
    s.gemm_rows()
}

fn eager(s: &BatchShape) -> bool {
    s.launch() == Launch::Eager
}

impl KernelCost {
    fn linear(&self, ops: &[Linear], rows: f64, x: &mut u8, bit: u8) -> f64 {
        if rows <= 0.0 {
            return 0.0;
        }
        let mut t = 0.0;
        for op in ops {
            t += self.linear_one(op, rows, x, bit);
        }
        t
    }

    fn linear_one(&self, op: &Linear, rows: f64, x: &mut u8, bit: u8) -> f64 {
        match &op.curve {
            Some(c) => {
                let nk = op.shape.n * op.shape.k;
                let (v, out) = self.xfer_at(c, rows, |r| r.gemm_op_ns(nk, rows, op.shape.bf16));
                if out || op.nk_outside {
                    *x |= bit;
                }
                v.max(self.roof.weight_stream_ns(nk, op.shape.bf16))
            }
            None => self
                .roof
                .gemm_op_ns(op.shape.n * op.shape.k, rows, op.shape.bf16),
        }
    }

    fn experts_ns(&self, rows: f64, x: &mut u8) -> f64 {
        if rows <= 0.0 || self.moe_layers == 0.0 {
            return 0.0;
        }
        match &self.experts {
            Some(c) => {
                let (v, out) = c.at(rows * self.experts_rows_scale);
                if out {
                    *x |= X_MOE;
                }
                let v = match self.untuned_moe_floor_ns {
                    Some(floor) => crate::cost::moe_config::untuned_ns(v, floor),
                    None => v,
                };
                let v = self.xfer(v, |r| r.experts_op_ns(r.ep_rows(rows)));
                // vLLM's Marlin MXFP4 MoE on sm90 (up to 0.11.0): the roofline of that kernel,
                // never under the measured native row vLLM prefers when it can (cost/mxfp4.rs).
                if self.roof.mxfp4 == Some(crate::cost::mxfp4::Mxfp4Kernel::VllmMarlin) {
                    v.max(self.roof.experts_op_ns(self.roof.ep_rows(rows)))
                } else {
                    v
                }
            }
            // The roofline applies the untuned-config slowdown itself.
            None => self.roof.experts_op_ns(self.roof.ep_rows(rows)),
        }
    }

    /// All-reduce of `tokens` hidden states over the TP group; returns (ns, went to NCCL).
    fn all_reduce_ns(&self, tokens: f64, graph: bool, x: &mut u8) -> (f64, bool) {
        self.all_reduce_elements_ns(tokens * self.hidden, graph, x)
    }

    /// All-reduce of `elements` bf16 values per rank over the TP group.
    fn all_reduce_elements_ns(&self, elements: f64, graph: bool, x: &mut u8) -> (f64, bool) {
        let tokens = elements / self.hidden;
        if self.tp <= 1 || tokens <= 0.0 {
            return (0.0, false);
        }
        // The tables measure one node (≤ 8 GPUs); across nodes the roofline's link model.
        if self.roof.spans_nodes() {
            return (self.roof.all_reduce_op_ns(tokens), false);
        }
        let ar = &self.all_reduce;
        let custom = if graph {
            ar.custom_graph.as_ref().or(ar.custom_eager.as_ref())
        } else {
            ar.custom_eager.as_ref().or(ar.custom_graph.as_ref())
        };
        let (curve, nccl) = if 2.0 * elements <= CUSTOM_ALLREDUCE_MAX_BYTES {
            (custom.or(ar.nccl.as_ref()), custom.is_none())
        } else {
            (ar.nccl.as_ref().or(custom), ar.nccl.is_some())
        };
        match curve {
            Some(c) => {
                let (v, out) = self.xfer_at(c, elements, |r| r.all_reduce_op_ns(tokens));
                if out {
                    *x |= X_AR;
                }
                (v, nccl)
            }
            None => (self.roof.all_reduce_op_ns(tokens), false),
        }
    }

    /// Attention kernels of every layer for `s`.
    fn attention_ns(&self, s: &BatchShape, x: &mut u8) -> f64 {
        // Gated delta-net layers: their measured tables, else the roofline ([`gdn_tables`]).
        let full_layers = self.num_layers - self.windowed_layers - self.roof.linear_layers();
        let mut t = 0.0;
        if s.decode_reqs > 0 {
            let d = &self.decode_attn;
            // The decode tables hold one query per request: a speculative verify or a wide
            // draft pass (width > 1) takes the roofline's price.
            let one_query = s.decode_width <= 1;
            match (d.surface.as_ref().filter(|_| one_query), d.bounded) {
                (Some(sf), _) => {
                    let b = s.decode_reqs as f64;
                    let mean = s.decode_ctx_sum as f64 / b;
                    let (v, out) = sf.at(b, mean);
                    let only = transfer::decode_only(s);
                    let v = self.xfer_attention(v * d.scale, &only);
                    t += full_layers * v.max(self.roof.decode_floor_ns(s));
                    t += self.gdn_layers_ns(&only, x);
                    if self.windowed_layers > 0.0 {
                        let w = self.window.map_or(mean, |w| mean.min(w));
                        t += self.windowed_layers
                            * self.xfer_attention(sf.at(b, w).0 * d.scale, &only);
                    }
                    if out {
                        *x |= X_ATTN;
                    }
                }
                (None, Some(b)) if one_query => {
                    let ctx = s.decode_ctx_sum as f64;
                    t += full_layers * b.layer_ns(ctx).max(self.roof.decode_floor_ns(s));
                    t += self.gdn_layers_ns(&transfer::decode_only(s), x);
                    if self.windowed_layers > 0.0 {
                        let reqs = s.decode_reqs as f64;
                        let w = self.window.map_or(ctx, |w| ctx.min(w * reqs));
                        t += self.windowed_layers * b.layer_ns(w);
                    }
                }
                _ => t += self.roof_attention_ns(&transfer::decode_only(s), x),
            }
        }
        if s.prefill_reqs > 0 {
            let p = &self.prefill_attn;
            match &p.surface {
                Some(sf) => {
                    let r = s.prefill_reqs as f64;
                    let len = |work: f64| (2.0 * work / r).sqrt().max(1.0);
                    let prefix = s.prefill_kv_tokens.saturating_sub(s.prefill_tokens);
                    let form = self.mla_prefill.map_or(1.0, |m| m.len_factor(prefix));
                    let (v, out) = sf.at(r, form * len(s.prefill_attn_work));
                    let only = transfer::prefill_only(s);
                    let v = self.xfer_attention(v * p.scale, &only);
                    t += full_layers * v.max(self.roof.prefill_floor_ns(s, false));
                    t += self.gdn_layers_ns(&only, x);
                    if self.windowed_layers > 0.0 {
                        let work = crate::cost::window::prefill_work(s, self.window_prefix_only);
                        let w = self.xfer_attention(sf.at(r, len(work)).0 * p.scale, &only);
                        t += self.windowed_layers * w.max(self.roof.prefill_floor_ns(s, true));
                    }
                    if out {
                        *x |= X_ATTN;
                    }
                    t += full_layers * self.mla_prefix_kv_b_ns(prefix, x);
                }
                None => t += self.roof_attention_ns(&transfer::prefill_only(s), x),
            }
        }
        t
    }

    /// One layer's `kv_b_proj` over the cached prefix an MLA batch up-projects ([`mla_form`]).
    fn mla_prefix_kv_b_ns(&self, prefix: u64, x: &mut u8) -> f64 {
        let rows = self.mla_prefill.map_or(0.0, |m| m.kv_b_rows(prefix));
        match self.attn_gemms.iter().find(|l| l.shape.name == "kv_b_proj") {
            Some(l) if rows > 0.0 => self.linear_one(l, rows, x, X_GEMM),
            _ => 0.0,
        }
    }

    /// The linear layers (`attn_gemm`, the attention projections' time, else those of every
    /// layer over `rows`; then the dense and MoE-shared MLPs), routed experts and all-reduces
    /// over `rows` GEMM rows.
    fn rows_only(&self, rows: f64, eager: bool, attn_gemm: Option<f64>) -> RowParts {
        let mut r = RowParts::default();
        let x = &mut r.extrapolated;
        r.gemm = match attn_gemm {
            Some(t) => t,
            None => self.num_layers * self.linear(&self.attn_gemms, rows, x, X_GEMM),
        };
        r.gemm += self.dense_layers * self.linear(&self.dense_mlp, rows, x, X_GEMM);
        if self.moe_layers > 0.0 {
            r.gemm += self.moe_layers * self.linear(&self.moe_dense, rows, x, X_GEMM);
            r.moe += self.moe_layers * self.experts_ns(rows, x);
        }
        let (ar, nccl) = self.all_reduce_ns(rows, !eager, x);
        r.all_reduce = self.num_layers * 2.0 * ar;
        if let Some(q) = &self.roof.qk_norm {
            // Below the smallest measured message the time is the latency floor it measures:
            // not an extrapolation worth a warning.
            let qk = rows * q.elements_per_token;
            let ar = self.all_reduce_elements_ns(qk, !eager, &mut 0).0;
            r.all_reduce += self.num_layers * q.per_layer * ar;
        }
        r.nccl = nccl;
        r
    }

    /// [`Self::rows_only`] with the attention projections, from the resolve-time table when
    /// `rows` is a captured graph batch.
    fn row_parts(&self, rows: f64, eager: bool) -> RowParts {
        if !eager {
            let bs = rows as u64;
            if let Ok(i) = self.graph_rows.binary_search_by_key(&bs, |g| g.0) {
                return self.graph_rows[i].1;
            }
        }
        self.rows_only(rows, eager, None)
    }

    /// Tabulates the captured decode batches' row-dependent parts again, after a change to how
    /// rows are priced (a transfer, a ladder instance's untuned fused-MoE config).
    fn retabulate_graph_rows(&mut self) {
        let sizes: Vec<u64> = self.graph_rows.drain(..).map(|g| g.0).collect();
        self.graph_rows = sizes
            .into_iter()
            .map(|bs| (bs, self.row_parts(bs as f64, false)))
            .collect();
    }

    /// The LM head over `logits` rows and the fixed GPU overheads, into `p`.
    fn add_head_and_fixed(&self, p: &mut Parts, logits: f64) {
        if logits > 0.0 {
            p.lm_head += self.linear_one(&self.lm_head, logits, &mut p.extrapolated, X_HEAD);
        }
        p.fixed = self.overheads.fixed_gpu_ns(p.launch, p.extend);
    }

    /// The step's parts under the cross-GPU envelope.
    fn parts(&self, s: &BatchShape) -> Parts {
        self.envelope(|k| k.own_parts(s))
    }

    fn own_parts(&self, s: &BatchShape) -> Parts {
        let mut p = Parts::default();
        if s.prefill_tokens + s.decode_reqs == 0 {
            return p;
        }
        p.rows = rows(s);
        p.launch = s.launch();
        p.extend = Extend::of(s);
        let r = self.row_parts(p.rows, eager(s));
        p.gemm = r.gemm;
        p.moe = r.moe;
        p.all_reduce = r.all_reduce;
        p.nccl = r.nccl;
        p.extrapolated = r.extrapolated;
        p.attention = self.attention_ns(s, &mut p.extrapolated);
        self.add_all_to_all(&mut p, s.prefill_reqs > 0);
        p.fallback = self.fallback(s.decode_reqs > 0, s.decode_width, s.prefill_reqs > 0);
        self.add_head_and_fixed(&mut p, s.logit_rows());
        p
    }

    /// With DeepEP, the MoE layers' all-reduces become the all-to-all (counted in the
    /// all-reduce component, which the envelope bounds as the step's communication;
    /// `--explain` shows it on its own line).
    fn add_all_to_all(&self, p: &mut Parts, extend: bool) {
        if let Some(e) = self.roof.expert_parallel().filter(|e| e.has_all_to_all()) {
            let one = p.all_reduce / (2.0 * self.num_layers);
            let c = e.collectives(self.num_layers, one, p.rows, extend);
            p.all_reduce = c.all_reduce_ns + c.all_to_all_ns;
        }
    }

    /// The all-to-all part of `p`'s all-reduce component, for `--explain`.
    fn all_to_all_part(&self, p: &Parts, extend: bool) -> f64 {
        self.roof.expert_parallel().map_or(0.0, |e| {
            e.collectives(self.num_layers, 0.0, p.rows, extend)
                .all_to_all_ns
        })
    }

    /// Bits (as [`Parts::component`]) of the components the roofline prices for a step with
    /// decode requests of `width` query tokens and / or prefill requests.
    fn fallback(&self, decode: bool, width: u64, prefill: bool) -> u8 {
        let lin = |v: &[Linear]| v.iter().any(|o| o.curve.is_none());
        let ar = &self.all_reduce;
        let no_ar = ar.custom_graph.is_none() && ar.custom_eager.is_none() && ar.nccl.is_none();
        let mut b = 0;
        if lin(&self.attn_gemms) || lin(&self.dense_mlp) || lin(&self.moe_dense) {
            b |= 1;
        }
        let decode_priced =
            self.decode_attn.surface.is_some() || self.decode_attn.bounded.is_some();
        if (decode && (!decode_priced || width > 1))
            || (prefill && self.prefill_attn.surface.is_none())
            || self.gdn_on_roofline(decode, width, prefill)
        {
            b |= 2;
        }
        if self.moe_layers > 0.0 && self.experts.is_none() {
            b |= 4;
        }
        if self.tp > 1 && (self.roof.spans_nodes() || no_ar) {
            b |= 8;
        }
        if self.lm_head.curve.is_none() {
            b |= 16;
        }
        b
    }

    /// One lockstep step of DP-attention ranks, as the roofline's `group_gpu_ns`: attention
    /// (projections and kernels) per rank, the slowest rank setting the pace; MLP / MoE,
    /// collectives and LM head over the tokens gathered from every rank (padded to ranks × the
    /// largest rank's rows when all ranks replay graphs).
    fn group_parts(&self, shapes: &[BatchShape]) -> Parts {
        self.envelope(|k| k.own_group_parts(shapes))
    }

    fn own_group_parts(&self, shapes: &[BatchShape]) -> Parts {
        let mut p = Parts::default();
        let busy = || shapes.iter().filter(|s| !s.is_empty());
        if busy().next().is_none() {
            return p;
        }
        p.launch = busy().map(BatchShape::launch).max().unwrap_or_default();
        p.extend = busy().map(Extend::of).fold(Extend::None, Extend::join);
        let group_eager = p.launch == Launch::Eager;
        p.rows = if group_eager {
            busy()
                .map(|s| (s.prefill_tokens + s.decode_tokens()) as f64)
                .sum()
        } else {
            shapes.len() as f64 * busy().map(rows).fold(0.0, f64::max)
        };
        for s in busy() {
            let mut x = 0;
            let g = self.num_layers * self.linear(&self.attn_gemms, rows(s), &mut x, X_GEMM);
            let a = self.attention_ns(s, &mut x);
            if g + a > p.gemm + p.attention {
                p.gemm = g;
                p.attention = a;
            }
            p.extrapolated |= x;
        }
        let r = self.rows_only(p.rows, group_eager, Some(p.gemm));
        p.gemm = r.gemm;
        p.moe = r.moe;
        p.all_reduce = r.all_reduce;
        p.nccl = r.nccl;
        p.extrapolated |= r.extrapolated;
        self.add_all_to_all(&mut p, busy().any(|s| s.prefill_reqs > 0));
        let decode = busy().find(|s| s.decode_reqs > 0);
        p.fallback = self.fallback(
            decode.is_some(),
            decode.map_or(1, |s| s.decode_width),
            busy().any(|s| s.prefill_reqs > 0),
        );
        let logits: f64 = busy().map(BatchShape::logit_rows).sum();
        self.add_head_and_fixed(&mut p, logits);
        p
    }
}

impl StepCost for KernelCost {
    fn step_time(&self, s: &BatchShape) -> StepTime {
        let o = &self.overheads;
        o.with_cpu(
            self.parts(s).gpu_ns(),
            o.cpu_ns(s.decode_reqs + s.prefill_reqs),
        )
    }

    fn explain(&self, s: &BatchShape) -> super::breakdown::StepBreakdown {
        explain::breakdown(self, s)
    }

    /// Each rank's scheduler runs its own CPU work in parallel: the slowest one counts.
    fn group_step_time(&self, shapes: &[BatchShape]) -> StepTime {
        if !self.dp_attention || shapes.len() <= 1 {
            return super::slowest_rank(shapes, |s| self.step_time(s));
        }
        let o = &self.overheads;
        let cpu_ns = shapes
            .iter()
            .map(|s| o.cpu_ns(s.decode_reqs + s.prefill_reqs))
            .fold(0.0, f64::max);
        o.with_cpu(self.group_parts(shapes).gpu_ns(), cpu_ns)
    }
}
