//! `--explain` for the kernel backend: the step's components with the tables (or roofline
//! fallbacks) that priced them, the engine version each table was measured under
//! ([`super::versions`]), and whether a lookup left a table's grid.
use super::curve::Curve;
use super::{KernelCost, Linear, Parts, X_AR, X_ATTN, X_GEMM, X_HEAD, X_MOE};
use crate::cost::breakdown::{Component, CostItem, StepBreakdown};
use crate::cost::{BatchShape, Launch};
use std::sync::Arc;

/// "; tables SGLang 0.5.6.post2, SGLang 0.5.14": the versions whose tables priced a part
/// (distinct, in first-use order), empty when none did.
fn measured(tags: impl IntoIterator<Item = Option<Arc<str>>>) -> String {
    let mut seen: Vec<Arc<str>> = Vec::new();
    for t in tags.into_iter().flatten() {
        if !seen.contains(&t) {
            seen.push(t);
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    format!("; tables {}", seen.join(", "))
}

fn tag(c: Option<&Curve>) -> Option<Arc<str>> {
    c.and_then(|c| c.table_version.clone())
}

/// What a breakdown item's detail carries when its price left a table's measured grid.
pub const EXTRAPOLATED: &str = "EXTRAPOLATED beyond the measured grid";

fn flag(p: &Parts, bit: u8) -> String {
    if p.extrapolated & bit != 0 {
        format!("; {EXTRAPOLATED}")
    } else {
        String::new()
    }
}

fn gemm_list(ops: &[Linear], dtype: &str) -> String {
    ops.iter()
        .map(|o| {
            let src = match (&o.curve, o.shape.bf16) {
                (None, _) => "roofline".to_string(),
                (Some(_), true) => "bf16".into(),
                (Some(_), false) => dtype.into(),
            };
            format!("{} {}x{} {src}", o.shape.name, o.shape.n, o.shape.k)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn breakdown(k: &KernelCost, s: &BatchShape) -> StepBreakdown {
    let p = k.parts(s);
    let time = k.overheads.with_cpu(
        p.gpu_ns(),
        k.overheads.cpu_ns(s.decode_reqs + s.prefill_reqs),
    );
    let prov = &k.provenance;
    let mut linear: Vec<Linear> = k.attn_gemms.clone();
    linear.extend(k.dense_mlp.iter().cloned());
    linear.extend(k.moe_dense.iter().cloned());
    let (prefill_floors, decode_floors) = k.roof.floor_descriptions();
    let mut attn = Vec::new();
    if s.decode_reqs > 0 {
        attn.push(format!(
            "decode: {} at batch {} × mean context {:.0}",
            k.decode_attn.note,
            s.decode_reqs,
            s.decode_ctx_sum as f64 / s.decode_reqs as f64
        ));
        attn.extend(
            decode_floors
                .iter()
                .map(|d| format!("decode floored per layer by {d}")),
        );
    }
    if s.prefill_reqs > 0 {
        let prefix = s.prefill_kv_tokens.saturating_sub(s.prefill_tokens);
        attn.push(format!(
            "prefill: {} at {} requests × equivalent prompt {:.0}{}",
            k.prefill_attn.note,
            s.prefill_reqs,
            (2.0 * s.prefill_attn_work / s.prefill_reqs as f64).sqrt(),
            k.mla_prefill
                .map_or(String::new(), |m| format!("; {}", m.describe(prefix)))
        ));
        attn.extend(
            prefill_floors
                .iter()
                .map(|d| format!("floored per layer by {d}")),
        );
    }
    if let Some(g) = &k.gdn {
        attn.extend(g.describe(s.decode_reqs > 0, s.decode_width, s.prefill_reqs > 0));
    }
    let attn_tables = measured(
        [
            (s.decode_reqs > 0, &k.decode_attn),
            (s.prefill_reqs > 0, &k.prefill_attn),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, a)| a.surface.as_ref().and_then(|sf| sf.table_version.clone()))
        .chain(k.gdn.iter().flat_map(|g| g.versions(s))),
    );
    let ar = &k.all_reduce;
    let ar_tables = if k.tp <= 1 || k.roof.spans_nodes() {
        String::new()
    } else if p.nccl {
        measured([tag(ar.nccl.as_ref())])
    } else if p.launch == Launch::Eager {
        measured([tag(ar.custom_eager.as_ref().or(ar.custom_graph.as_ref()))])
    } else {
        measured([tag(ar.custom_graph.as_ref().or(ar.custom_eager.as_ref()))])
    };
    let ar_detail = if k.tp <= 1 {
        "tp 1: none".to_string()
    } else if k.roof.spans_nodes() {
        format!(
            "no table spans nodes (NCCL tables cover one node): roofline link model over tp {}, {}",
            k.tp,
            k.roof.placement_note()
        )
    } else {
        format!(
            "{} per layer ×2 of {:.0} rows × hidden {} bf16 over tp {}{}{}",
            if p.nccl {
                "nccl_allreduce table"
            } else if p.launch == Launch::Eager {
                "custom_allreduce table (eager lane)"
            } else {
                "custom_allreduce table (graph lane)"
            },
            p.rows,
            k.hidden,
            k.tp,
            flag(&p, X_AR),
            crate::cost::qk_norm_tp::QkNormAllReduce::describe(k.roof.qk_norm.as_ref())
        )
    };
    let all_to_all = k.all_to_all_part(&p, s.prefill_reqs > 0);
    let mut items = vec![
        CostItem {
            component: Component::Gemm,
            time_ns: p.gemm,
            detail: format!(
                "kernels {prov}: gemm table at m={:.0}{}: {}{}{}{}",
                p.rows,
                if s.launch() != Launch::Eager { " (CUDA-graph padded)" } else { "" },
                gemm_list(&linear, &k.gemm_dtype),
                measured(linear.iter().map(|o| tag(o.curve.as_ref()))),
                flag(&p, X_GEMM),
                k.bound_note(&p, 0)
            ),
        },
        CostItem {
            component: Component::Attention,
            time_ns: p.attention,
            detail: format!(
                "kernels: {}{attn_tables}{}{}",
                attn.join("; "),
                flag(&p, X_ATTN),
                k.bound_note(&p, 1)
            ),
        },
        CostItem {
            component: Component::Moe,
            time_ns: p.moe,
            detail: if k.moe_layers > 0.0 {
                format!(
                    "kernels: {} at {:.0} tokens{}{}{}",
                    k.experts_note,
                    p.rows,
                    measured([tag(k.experts.as_ref())]),
                    flag(&p, X_MOE),
                    k.bound_note(&p, 2)
                )
            } else {
                "dense model".into()
            },
        },
        CostItem {
            component: Component::AllReduce,
            time_ns: p.all_reduce - all_to_all,
            detail: format!(
                "kernels: {ar_detail}{ar_tables}{}{}",
                k.transfer
                    .as_ref()
                    .filter(|_| k.tp > 1 && !k.roof.spans_nodes())
                    .map_or(String::new(), |x| format!("; {}", x.note)),
                k.bound_note(&p, 3)
            ),
        },
        CostItem {
            component: Component::LmHead,
            time_ns: p.lm_head,
            detail: format!(
                "kernels: {} over {} logit rows{}{}{}",
                gemm_list(std::slice::from_ref(&k.lm_head), "bf16"),
                s.decode_reqs + s.prefill_reqs,
                measured([tag(k.lm_head.curve.as_ref())]),
                flag(&p, X_HEAD),
                k.bound_note(&p, 4)
            ),
        },
        CostItem {
            component: Component::GpuOverhead,
            time_ns: p.fixed,
            detail: format!(
                "profile overheads ({}): {} step (graph launch, sampling, per-layer floors{})",
                k.overheads.block,
                match p.launch {
                    Launch::Eager if k.overheads.prefill_graphed(p.extend) => {
                        "piecewise CUDA-graph (SGLang prefill)"
                    }
                    Launch::Eager => "eager",
                    Launch::Piecewise => "piecewise CUDA-graph",
                    Launch::Graph => "CUDA-graph",
                },
                k.overheads.launch_note(p.launch, p.extend)
            ),
        },
        CostItem {
            component: Component::Cpu,
            time_ns: time.cpu_ns,
            detail: format!("profile overheads ({}): scheduler CPU per step + per request (hidden under the GPU by the overlap scheduler, else serial)", k.overheads.block),
        },
    ];
    if let Some(e) = k.roof.expert_parallel() {
        items.insert(
            4,
            CostItem {
                component: Component::AllToAll,
                time_ns: all_to_all,
                detail: format!("{} (link model, no table)", e.describe(s.prefill_reqs > 0)),
            },
        );
    }
    StepBreakdown {
        backend: "kernels".into(),
        items,
        time,
    }
}
