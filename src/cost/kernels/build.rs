//! Resolve-time construction of a [`KernelCost`]: for the deployment's model, TP, weight
//! format, KV dtype and attention backend, pick the table rows (nearest head count, the
//! backend's lane, the dtype) and build every operator's curve once.
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
        WeightFormat::Bf16 | WeightFormat::Mxfp4 => &["bf16"],
        // SGLang runs FP8 checkpoints (DeepSeek, Qwen3-FP8) with 128×128 block scales.
        WeightFormat::Fp8 => &["fp8_block", "fp8"],
        WeightFormat::W8a8Int8 => &[],
    }
}

fn moe_dtype(w: WeightFormat) -> Option<&'static str> {
    match w {
        WeightFormat::Bf16 => Some("bf16"),
        WeightFormat::Fp8 => Some("fp8_block"),
        WeightFormat::Mxfp4 => Some("mxfp4"),
        WeightFormat::W8a8Int8 => None,
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

/// The nearest measured (heads, kv_heads) to the rank's, by log distance.
fn nearest(cands: &[Vec<String>], h: f64, kv: f64) -> Option<(f64, f64)> {
    cands
        .iter()
        .filter_map(|c| {
            Some((
                c.first()?.parse::<f64>().ok()?,
                c.get(1)?.parse::<f64>().ok()?,
            ))
        })
        .filter(|&(a, b)| a > 0.0 && b > 0.0)
        .min_by(|a, b| {
            let d = |p: &(f64, f64)| (p.0 / h).ln().abs() + (p.1 / kv).ln().abs();
            d(a).total_cmp(&d(b))
        })
}

/// GQA attention of one phase (`op` = generation_attention or context_attention).
fn gqa(db: &KernelDb, op: &str, model: &ModelSpec, server: &ServerConfig) -> Attention {
    let h = model.q_heads_per_rank(server.attn_tp);
    let kv = model.kv_heads_per_rank(server.attn_tp) as f64;
    let lanes = [
        server.attention_backend.as_str(),
        "flash_attention",
        "fa3",
        "trtllm_mha",
        "flashinfer",
        "triton",
    ];
    let kvs = [kv_name(server.kv_dtype), "bf16"];
    for lane in lanes {
        for kvd in kvs {
            let base = vec![
                ("lane", s(lane)),
                ("kv_dtype", s(kvd)),
                ("head_dim", s(model.head_dim)),
                ("window", s(0)),
            ];
            let cands = db.key_values(op, &base, &["heads", "kv_heads"]);
            let Some((hc, kvc)) = nearest(&cands, h, kv) else {
                continue;
            };
            let mut want = base.clone();
            want.push(("heads", s(hc)));
            want.push(("kv_heads", s(kvc)));
            let Some(mut surface) = db.surface(op, &want) else {
                continue;
            };
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
            if lane != server.attention_backend {
                note += &format!(" (no {} rows)", server.attention_backend);
            }
            return Attention {
                surface: Some(surface),
                scale,
                note,
            };
        }
    }
    Attention {
        surface: None,
        scale: 1.0,
        note: format!(
            "roofline: no {op} rows for head_dim {} in the {} tables",
            model.head_dim, db.system
        ),
    }
}

/// MLA attention of one phase (`op` = generation_mla or context_mla), by heads per rank.
fn mla(db: &KernelDb, op: &str, model: &ModelSpec, server: &ServerConfig) -> Attention {
    let h = model.q_heads_per_rank(server.attn_tp);
    for kvd in [kv_name(server.kv_dtype), "bf16"] {
        let base = vec![("kv_dtype", s(kvd))];
        let cands = db.key_values(op, &base, &["heads", "tp"]);
        let Some((hc, tpc)) = cands
            .iter()
            .filter_map(|c| Some((c[0].parse::<f64>().ok()?, c[1].parse::<f64>().ok()?)))
            .min_by(|a, b| {
                let d =
                    |p: &(f64, f64)| ((p.0 / h).ln().abs(), (p.1 - server.attn_tp as f64).abs());
                d(a).partial_cmp(&d(b)).unwrap_or(std::cmp::Ordering::Equal)
            })
        else {
            continue;
        };
        let mut want = base;
        want.push(("heads", s(hc)));
        want.push(("tp", s(tpc)));
        let Some(mut surface) = db.surface(op, &want) else {
            continue;
        };
        if op.starts_with("context") {
            surface.exponents = (1.0, 2.0);
        }
        let scale = h / hc;
        let mut note = format!("{op} kv {kvd}, heads {hc} (tp {tpc})");
        if scale != 1.0 {
            note += &format!(", scaled ×{scale:.3} to the rank's {h} heads");
        }
        return Attention {
            surface: Some(surface),
            scale,
            note,
        };
    }
    Attention {
        surface: None,
        scale: 1.0,
        note: format!("roofline: no SGLang {op} table for {}", db.system),
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
                mla(db, "generation_mla", model, server),
                mla(db, "context_mla", model, server),
            )
        } else {
            (
                gqa(db, "generation_attention", model, server),
                gqa(db, "context_attention", model, server),
            )
        };
        let (experts, experts_note) = match (&model.moe, moe_dtype(server.weight_format)) {
            (Some(m), Some(d)) => {
                let want = [
                    ("dtype", s(d)),
                    ("hidden", s(model.hidden_size)),
                    ("inter", s(m.expert_intermediate_size)),
                    ("topk", s(m.experts_per_token)),
                    ("experts", s(m.num_experts)),
                    ("moe_tp", s(tp)),
                    ("moe_ep", s(1)),
                ];
                match db.curve("moe", &want) {
                    Some(c) => (
                        Some(c),
                        format!(
                            "moe table {d}, E={} top-{} inter {} moe_tp {tp}",
                            m.num_experts, m.experts_per_token, m.expert_intermediate_size
                        ),
                    ),
                    None => (
                        None,
                        format!(
                            "roofline: no {d} moe rows for hidden {} inter {} E={} top-{} moe_tp {tp}",
                            model.hidden_size, m.expert_intermediate_size, m.num_experts, m.experts_per_token
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
        let gpus = [("gpus", s(tp))];
        let lane = |l: &str| [("gpus", s(tp)), ("lane", s(l))];
        let first_table = db.table("gemm").or_else(|| db.table("moe"));
        Ok(KernelCost {
            overheads: Overheads::new(hw, model, server),
            provenance: format!(
                "{} sglang {} ({})",
                db.system,
                first_table.map_or("?", |t| t.sglang.as_str()),
                db.origin
            ),
            gemm_dtype: dtypes.first().map_or("none".into(), |d| d.to_string()),
            hidden: model.hidden_size as f64,
            tp,
            num_layers: model.num_layers as f64,
            dense_layers: (model.num_layers - model.moe_layers()) as f64,
            moe_layers: model.moe_layers() as f64,
            windowed_layers: model
                .sliding_window
                .as_ref()
                .map_or(0.0, |w| w.layers as f64),
            window: model
                .sliding_window
                .as_ref()
                .map(|w| w.window_tokens as f64),
            attn_gemms: lin(ops::attention(model, server.attn_tp)),
            dense_mlp: lin(ops::dense_mlp(model, tp)),
            moe_dense: lin(ops::moe_dense(model, tp)),
            experts,
            experts_note,
            lm_head: linear(db, ops::lm_head(model, tp), dtypes),
            decode_attn,
            prefill_attn,
            all_reduce: AllReduce {
                custom_graph: db.curve("custom_allreduce", &lane("graph")),
                custom_eager: db.curve("custom_allreduce", &lane("eager")),
                nccl: db.curve("nccl_allreduce", &gpus),
            },
            dp_attention: server.dp_attention,
            roof,
        })
    }
}
