//! Resolve-time construction of a [`KernelCost`]: for the deployment's model, TP, weight
//! format, KV dtype and attention backend, pick the table rows (nearest head count, the
//! backend's lane, the dtype) and build every operator's curve once.
use super::curve::{nearest, Curve};
use super::db::KernelDb;
use super::{ops, AllReduce, Attention, KernelCost, Linear};
use crate::cost::overheads::Overheads;
use crate::cost::roofline::Roofline;
use crate::error::Result;
use crate::spec::hardware::HardwareProfile;
use crate::spec::model::{KvDtype, ModelSpec, WeightFormat};
use crate::spec::server::ServerConfig;

fn s(v: impl ToString) -> String {
    v.to_string()
}

/// GEMM table dtypes to try for the checkpoint's linear layers, best first.
fn gemm_dtypes(w: WeightFormat) -> &'static [&'static str] {
    match w {
        WeightFormat::Bf16 | WeightFormat::Mxfp4 | WeightFormat::W4a16Int4 => &["bf16"],
        // SGLang runs FP8 checkpoints (DeepSeek, Qwen3-FP8) with 128×128 block scales.
        WeightFormat::Fp8 => &["fp8_block", "fp8"],
        WeightFormat::W8a8Int8 => &[],
        // SGLang's measured NVFP4 GEMM (flashinfer CuTe-DSL on sm100, CUTLASS on sm120).
        WeightFormat::Nvfp4 => &["nvfp4"],
    }
}

/// MoE table dtypes to try for the checkpoint's routed experts, best first (MXFP4: the rows
/// that measured the kernel the server runs, `cost::mxfp4::moe_table_dtypes`).
fn moe_dtypes(hw: &HardwareProfile, server: &ServerConfig) -> &'static [&'static str] {
    match server.weight_format {
        WeightFormat::Bf16 => &["bf16"],
        WeightFormat::Fp8 => &["fp8_block"],
        WeightFormat::Mxfp4 => crate::cost::mxfp4::moe_table_dtypes(hw, server),
        // SGLang's measured NVFP4 MoE (flashinfer TRT-LLM on sm100, CUTLASS on sm120).
        WeightFormat::Nvfp4 => &["nvfp4"],
        // int4 experts: the measured TRT-LLM mxint4 rows where SGLang runs that kernel (sm100,
        // 0.5.10+); no measured Marlin rows: its roofline elsewhere (`cost::mxfp4`).
        WeightFormat::W4a16Int4
            if crate::cost::mxfp4::kernel(hw, server)
                == Some(crate::cost::mxfp4::Mxfp4Kernel::SglangTrtllmMxint4) =>
        {
            &["int4_wo"]
        }
        WeightFormat::W8a8Int8 | WeightFormat::W4a16Int4 => &[],
    }
}

/// The single-rank MoE curve `c` (dtype `d`, `moe_tp` ranks) repriced from the table's
/// power-law routing to independent tokens' ([`super::moe_routing`]), with its `--explain`
/// note; bf16, block-FP8, NVFP4 and int4 experts only (other dtypes unchanged).
fn uniform_routing(
    c: Curve,
    hw: &HardwareProfile,
    hidden: u64,
    m: &crate::spec::model::Moe,
    moe_tp: u64,
    d: &str,
) -> (Curve, String) {
    let bytes_per_param = match d {
        "bf16" => 2.0,
        "fp8_block" => 1.0,
        "nvfp4" | "int4_wo" => 4.5 / 8.0,
        _ => return (c, String::new()),
    };
    let expert_bytes =
        3.0 * (hidden * m.expert_intermediate_size) as f64 / moe_tp.max(1) as f64 * bytes_per_param;
    let (e, k) = (m.num_experts, m.experts_per_token);
    match super::moe_routing::uniform_routing(
        &c,
        e,
        k,
        expert_bytes,
        hw.memory.bandwidth_bytes_per_s,
    ) {
        Some(fix) => {
            let note = format!(
                "; routed as independent tokens: +{:.2} µs per expert the table's power-law \
                 routing left untouched (16 tokens touch {:.0} experts, the table's routing {:.0}){}",
                fix.per_expert_ns / 1e3,
                super::moe_routing::distinct_uniform(16.0, e as f64, k as f64),
                super::moe_routing::distinct_power_law(16, e, k),
                if fix.clamped {
                    ", slope bounded by the HBM bandwidth"
                } else {
                    ""
                }
            );
            (fix.curve, note)
        }
        None => (c, String::new()),
    }
}

/// The (moe_tp, moe_ep) rows of the MoE table to try for this server's experts, best first,
/// each with the factor its token axis takes over the step's tokens (the roofline's busiest
/// rank `imbalance` otherwise): without EP the TP rows; with EP and EPLB off the EP rows
/// themselves (AIConfigurator's power-law routing is the measured imbalance, factor 1); then
/// one rank's slice as the single-rank rows of its width, `(moe_tp, 1)` at the busiest rank's
/// `T × imbalance / ep` tokens (the same token-expert pairs at the same expert width); last
/// the TP-sharded rows at `T × imbalance`.
///
/// The EP rows count the tokens of the whole MoE group: SGLang's group is the server (the
/// step's tokens), vLLM's spans its `dp` replicas, each priced on its own, so a replica's
/// tokens are scaled by `ep · moe_tp / tp` (= dp, replicas assumed equally loaded).
fn moe_rows_to_try(server: &ServerConfig, imbalance: f64) -> Vec<((u64, u64), f64)> {
    let tp = server.tp;
    match server.expert_parallel.as_ref().filter(|e| e.ep_size > 1) {
        None => vec![((tp, 1), imbalance)],
        Some(e) => {
            let group = (e.ep_size * e.moe_tp) as f64 / tp as f64;
            let mut v = Vec::new();
            if !e.eplb {
                v.push(((e.moe_tp, e.ep_size), group));
            }
            v.push(((e.moe_tp, 1), group * imbalance / e.ep_size as f64));
            v.push(((tp, 1), imbalance));
            v
        }
    }
}

fn kv_name(k: KvDtype) -> &'static str {
    match k {
        KvDtype::Bf16 => "bf16",
        KvDtype::Fp8 => "fp8",
    }
}

fn linear(db: &KernelDb, shape: ops::GemmShape, dtypes: &[&str]) -> Linear {
    let dtypes: &[&str] = if shape.bf16 { &["bf16"] } else { dtypes };
    for d in dtypes {
        if let Some((curve, nk_outside)) = db.gemm(d, shape.n, shape.k) {
            return Linear {
                shape,
                curve: Some(curve),
                nk_outside,
            };
        }
    }
    Linear {
        shape,
        curve: None,
        nk_outside: false,
    }
}

fn num(v: &str) -> f64 {
    v.parse().unwrap_or(1.0)
}

/// Decode attention of an SGLang flashinfer server from its GPU's FlashAttention-2 rows, when
/// the bundled SGLang tables of the GPU hold no flashinfer decode rows, only rows of SGLang's
/// FA3 backend run off Hopper (lane `flash_attention`: A100), which SGLang does not run there.
/// Decode streams the KV cache, so the kernel's bandwidth is the price, and FA3 on sm80 streams
/// it slower than flashinfer (sgl-project/sglang#5938: on A100, `--attention-backend fa3`
/// serves 10–18% fewer tokens/s than flashinfer, attention ~1.2–1.5× slower at ~30% of the
/// step). The same database measured the same GPU's FlashAttention-2 decode kernel (vLLM's
/// tables: 645 µs at batch 128 × context 2048, 32/8 heads, ~82% of HBM, where the FA3 rows
/// take 915 µs): a split-KV decode kernel like flashinfer's, and the one measured rate of a
/// kernel SGLang's default would match. `Some` with that surface when this case applies,
/// unless SGLang decodes on FlashInfer's tensor-core path on a GPU family FlashInfer's own
/// benchmark measured: then [`super::flashinfer_decode`]'s bounded roofline prices it.
fn flashinfer_decode_from_fa2(
    db: &KernelDb,
    op: &str,
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
) -> Option<Attention> {
    let lacks = |lane: &str| db.next_values(op, &[s(lane)]).is_empty();
    let applies = op == "generation_attention"
        && server.vllm.is_none()
        && server.attention_backend == "flashinfer"
        && db.origin.starts_with("bundled")
        && lacks("flashinfer")
        && !lacks("flash_attention");
    if !applies {
        return None;
    }
    if let Some((bounded, note)) = super::flashinfer_decode::bounded(hw, model, server) {
        return Some(Attention {
            surface: None,
            scale: 1.0,
            note,
            bounded: Some(bounded),
        });
    }
    let fa2 = KernelDb::bundled(&format!("{}_vllm", db.system), server.version).ok()?;
    let mut a = gqa_lanes(&fa2, op, model, server, &["flash_attn"])?;
    a.note += &format!(
        " for SGLang's flashinfer: {}'s SGLang tables measured only its FA3 backend on this GPU, which decodes slower (sgl-project/sglang#5938)",
        db.system
    );
    Some(a)
}

/// Whether table lane `lane` measured SGLang attention backend `backend`. AIConfigurator's
/// SGLang collector names SGLang's `FlashAttentionBackend` (`--attention-backend fa3`)
/// `flash_attention` in its data up to 0.5.10 (ai-dynamo/aiconfigurator
/// collector/sglang/collect_attn.py at cb4d907c7: every GPU below sm100 ran that backend,
/// A100 included), `fa3` later.
fn same_backend(lane: &str, backend: &str) -> bool {
    lane == backend || (backend == "fa3" && lane == "flash_attention")
}

/// GQA attention of one phase (`op` = generation_attention or context_attention).
fn gqa(
    db: &KernelDb,
    op: &str,
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
) -> Attention {
    if let Some(a) = flashinfer_decode_from_fa2(db, op, hw, model, server) {
        return a;
    }
    let lanes = [
        server.attention_backend.as_str(),
        "flash_attention",
        "fa3",
        "trtllm_mha",
        "flashinfer",
        "triton",
        // vLLM's lanes (scripts/import_aiconfigurator.py --framework vllm): FlashAttention 2
        // (A100), FlashInfer's TRT-LLM kernels (B200), Triton.
        "flash_attn",
        if op.starts_with("context") {
            "flashinfer_trtllmprefill"
        } else {
            "flashinfer_trtllmdecode"
        },
        "triton_attn",
    ];
    gqa_lanes(db, op, model, server, &lanes).unwrap_or_else(|| Attention {
        surface: None,
        scale: 1.0,
        note: format!(
            "roofline: no {op} rows for head_dim {} in the {} tables",
            model.head_dim, db.system
        ),
        bounded: None,
    })
}

/// GQA attention of one phase from the first of `lanes` with rows for the model's head_dim.
fn gqa_lanes(
    db: &KernelDb,
    op: &str,
    model: &ModelSpec,
    server: &ServerConfig,
    lanes: &[&str],
) -> Option<Attention> {
    let h = model.q_heads_per_rank(server.attn_tp);
    let kv = model.kv_heads_per_rank(server.attn_tp) as f64;
    let tail = [s(model.head_dim), s(0)];
    for &lane in lanes {
        for kvd in [kv_name(server.kv_dtype), "bf16"] {
            let base = [s(lane), s(kvd)];
            // The rank's exact (heads, kv_heads), else the nearest measured heads, then the
            // nearest kv_heads measured with them, that has rows for this head_dim.
            let mut pairs = vec![(s(h), s(kv))];
            let hs = db.next_values(op, &base);
            if let Some(hc) = nearest(&hs, h) {
                let kvs = db.next_values(op, &[base[0].clone(), base[1].clone(), hc.clone()]);
                if let Some(kvc) = nearest(&kvs, kv) {
                    pairs.push((hc, kvc));
                }
            }
            for (hc, kvc) in pairs {
                let want = [
                    base[0].clone(),
                    base[1].clone(),
                    hc.clone(),
                    kvc.clone(),
                    tail[0].clone(),
                    tail[1].clone(),
                ];
                let Some(mut surface) = db.surface(op, &want) else {
                    continue;
                };
                let (hc, kvc) = (num(&hc), num(&kvc));
                let context = op.starts_with("context");
                if context {
                    surface.exponents = (1.0, 2.0);
                }
                // Decode is bound by reading K/V (∝ KV heads), prefill by FLOPs (∝ query heads).
                let scale = if context { h / hc } else { kv / kvc };
                let mut note = format!(
                    "{op} lane {lane}, kv {kvd}, heads {hc}/{kvc}, head_dim {}",
                    model.head_dim
                );
                if scale != 1.0 {
                    note += &format!(", scaled ×{scale:.3} to the rank's {h}/{kv} heads");
                }
                if !same_backend(lane, &server.attention_backend) {
                    note += &format!(" (no {} rows)", server.attention_backend);
                }
                return Some(Attention {
                    surface: Some(surface),
                    scale,
                    note,
                    bounded: None,
                });
            }
        }
    }
    None
}

/// The MLA backend AIConfigurator measured SGLang's MLA tables with (its collector's
/// `_select_default_mla_backend`: SGLang 0.5.14's default for DeepSeek-V3; the l40s and
/// rtx_pro_6000_server tables' `kernel_source` is `triton`).
fn mla_table_backend(hw: &HardwareProfile) -> Option<&'static str> {
    use crate::spec::hardware::Arch;
    match hw.arch {
        Arch::Blackwell => Some("trtllm_mla"),
        Arch::Hopper => Some("fa3"),
        Arch::Ada | Arch::Sm120 => Some("triton"),
        _ => None,
    }
}

/// Run backend over table backend, by the profile's attention efficiencies (1 when either
/// is missing or they are the same backend), and the note saying so.
fn backend_scale(hw: &HardwareProfile, server: &ServerConfig, context: bool) -> (f64, String) {
    let Some(table) = mla_table_backend(hw) else {
        return (1.0, String::new());
    };
    let run = server.attention_backend.as_str();
    let eff = |b: &str| {
        hw.attention(b)
            .ok()
            .map(|e| if context { e.prefill } else { e.decode })
    };
    match (eff(table), eff(run)) {
        (Some(t), Some(r)) if run != table && r > 0.0 => (
            t / r,
            format!(", ×{:.3} for the {run} backend (table measured {table}; profile efficiencies {t} / {r})", t / r),
        ),
        _ => (1.0, String::new()),
    }
}

/// MLA attention of one phase (`op` = generation_mla or context_mla), by heads per rank.
fn mla(
    db: &KernelDb,
    op: &str,
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
) -> Attention {
    let h = model.q_heads_per_rank(server.attn_tp);
    for kvd in [kv_name(server.kv_dtype), "bf16"] {
        let Some(hc) = nearest(&db.next_values(op, &[s(kvd)]), h) else {
            continue;
        };
        let Some(tpc) = nearest(
            &db.next_values(op, &[s(kvd), hc.clone()]),
            server.attn_tp as f64,
        ) else {
            continue;
        };
        let Some(mut surface) = db.surface(op, &[s(kvd), hc.clone(), tpc.clone()]) else {
            continue;
        };
        if op.starts_with("context") {
            surface.exponents = (1.0, 2.0);
        }
        let heads = h / num(&hc);
        let mut note = format!("{op} kv {kvd}, heads {hc} (tp {tpc})");
        if heads != 1.0 {
            note += &format!(", scaled ×{heads:.3} to the rank's {h} heads");
        }
        let (backend, why) = backend_scale(hw, server, op.starts_with("context"));
        note += &why;
        let scale = heads * backend;
        return Attention {
            surface: Some(surface),
            scale,
            note,
            bounded: None,
        };
    }
    Attention {
        surface: None,
        scale: 1.0,
        note: format!("roofline: no SGLang {op} table for {}", db.system),
        bounded: None,
    }
}

impl KernelCost {
    /// Builds the deployment's curves from `db`.
    pub fn new(
        hw: &HardwareProfile,
        model: &ModelSpec,
        server: &ServerConfig,
        db: &KernelDb,
    ) -> Result<KernelCost> {
        let roof = Roofline::new(hw, model, server)?;
        let dtypes = gemm_dtypes(server.weight_format);
        let lin = |v: Vec<ops::GemmShape>| -> Vec<Linear> {
            v.into_iter().map(|g| linear(db, g, dtypes)).collect()
        };
        let tp = server.tp;
        let (decode_attn, prefill_attn) = if model.mla.is_some() {
            (
                mla(db, "generation_mla", hw, model, server),
                mla(db, "context_mla", hw, model, server),
            )
        } else {
            (
                gqa(db, "generation_attention", hw, model, server),
                gqa(db, "context_attention", hw, model, server),
            )
        };
        let imbalance = roof.ep_rows(1.0);
        let mut experts_rows_scale = imbalance;
        let moe_dtypes = moe_dtypes(hw, server);
        let moe_lane = crate::cost::moe_lane::lane(hw, model, server);
        let moe_op = moe_lane.map_or("moe", |l| l.table_op());
        let lane_note = moe_lane.map_or(String::new(), |l| {
            format!(
                " ({} lane, SGLang {}: cost/moe_lane.rs)",
                l.describe(),
                server.version
            )
        });
        let (experts, experts_note) = match (&model.moe, moe_dtypes.first()) {
            (Some(m), Some(&d0)) => {
                let want = |d: &str, (moe_tp, ep): (u64, u64)| {
                    [
                        s(d),
                        s(model.hidden_size),
                        s(m.expert_intermediate_size),
                        s(m.experts_per_token),
                        s(m.num_experts),
                        s(moe_tp),
                        s(ep),
                    ]
                };
                let found = moe_dtypes.iter().find_map(|&d| {
                    moe_rows_to_try(server, imbalance)
                        .into_iter()
                        .find_map(|(k, scale)| {
                            db.curve(moe_op, &want(d, k)).map(|c| (c, k, scale, d))
                        })
                });
                match found {
                    Some((c, (moe_tp, ep), scale, d)) => {
                        experts_rows_scale = scale;
                        let (c, routing) = if ep == 1 && scale == 1.0 {
                            uniform_routing(c, hw, model.hidden_size, m, moe_tp, d)
                        } else {
                            (c, String::new())
                        };
                        (
                        Some(c),
                        format!(
                            "{moe_op} table {d}, E={} top-{} inter {} moe_tp {moe_tp}{lane_note}{}{routing}{}",
                            m.num_experts, m.experts_per_token, m.expert_intermediate_size,
                            if ep > 1 { format!(" moe_ep {ep} at {scale:.4} × the step's tokens (AIConfigurator's power-law α 1.2 routing: the busiest rank's imbalance measured)") }
                            else if scale != 1.0 { format!(" at {scale:.4} × the step's tokens (the busiest EP rank's share, cost/expert_parallel.rs)") }
                            else { String::new() },
                            if server.weight_format == WeightFormat::Mxfp4 { crate::cost::mxfp4::table_provenance(hw, server, d) } else { String::new() }
                        ),
                    )
                    }
                    None => (
                        None,
                        format!(
                            "roofline: no {d0} {moe_op} rows for hidden {} inter {} E={} top-{} moe_tp {tp}{lane_note}{}",
                            model.hidden_size, m.expert_intermediate_size, m.num_experts, m.experts_per_token,
                            crate::cost::mxfp4::kernel(hw, server).map_or(String::new(), |k| format!("; {}", k.describe(hw)))
                        ),
                    ),
                }
            }
            (Some(_), None) => (
                None,
                format!(
                    "roofline: no moe table for {:?} weights",
                    server.weight_format
                ),
            ),
            _ => (None, String::new()),
        };
        let gpus = [s(tp)];
        let lane = |l: &str| [s(tp), s(l)];
        let first_table = db.table("gemm").or_else(|| db.table("moe"));
        let (window, windowed_layers) = crate::cost::window::applied_for_cost(model, server);
        let mut cost = KernelCost {
            overheads: Overheads::for_backend(hw, model, server, true),
            provenance: format!(
                "{} {} {} ({})",
                db.system,
                first_table.map_or("sglang", |t| t.framework.as_str()),
                first_table.map_or("?", |t| t.sglang.as_str()),
                db.origin
            ),
            gemm_dtype: dtypes.first().map_or("none".into(), |d| d.to_string()),
            hidden: model.hidden_size as f64,
            tp,
            num_layers: model.num_layers as f64,
            dense_layers: (model.num_layers - model.moe_layers()) as f64,
            moe_layers: model.moe_layers() as f64,
            windowed_layers,
            window,
            window_prefix_only: crate::cost::window::extend_clips_prefix_only(server),
            attn_gemms: lin(ops::attention(model, server.attn_tp)),
            dense_mlp: lin(ops::dense_mlp(model, tp)),
            moe_dense: lin(ops::moe_dense(model, tp)),
            experts_rows_scale,
            experts,
            experts_note,
            lm_head: linear(db, ops::lm_head(model, tp), dtypes),
            mla_prefill: prefill_attn
                .surface
                .as_ref()
                .and_then(|_| super::mla_form::MlaPrefill::of(hw, model, server)),
            decode_attn,
            prefill_attn,
            all_reduce: AllReduce {
                custom_graph: db.curve("custom_allreduce", &lane("graph")),
                custom_eager: db.curve("custom_allreduce", &lane("eager")),
                nccl: db.curve("nccl_allreduce", &gpus),
            },
            dp_attention: server.dp_attention,
            roof,
            untuned_moe_floor_ns: None,
            graph_rows: Vec::new(),
            bounds: Vec::new(),
            transfer: None,
            gdn: model.linear_attention.as_ref().map(|l| {
                super::gdn_tables::MeasuredGdn::build(db, l, server.attn_tp, model.hidden_size)
            }),
        };
        let moe_table_version = db.table(moe_op).and_then(|t| t.sglang.parse().ok());
        if let Some(u) = crate::cost::moe_config::untuned(hw, model, server, moe_table_version) {
            if let Some(c) = &cost.experts {
                let floor = crate::cost::moe_config::UNTUNED_FLOOR_ROWS;
                cost.untuned_moe_floor_ns = Some(c.at(floor).0);
                cost.experts_note += &format!(
                    "; default (untuned) fused-MoE config: max({:.3}× tuned, {:.3}× tuned at {floor} rows) ({})",
                    crate::cost::moe_config::UNTUNED_TAIL,
                    crate::cost::moe_config::UNTUNED_FLOOR,
                    u.why
                );
            }
        }
        // Every captured decode batch's row-dependent parts, once: a graph step then prices
        // them with one binary search (the values are the ones the step would compute).
        cost.graph_rows = server
            .cuda_graph_batch_sizes
            .iter()
            .map(|&bs| (bs, cost.row_parts(bs as f64, false)))
            .collect();
        Ok(cost)
    }
}
