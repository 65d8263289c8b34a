//! The GEMMs of one layer on one rank, as (n, k) shapes: SGLang's column/row-parallel linear
//! layers (fused QKV, O, fused gate-up, down; MLA's q_a/q_b/kv_a/kv_b/o; shared experts; the
//! router) and the LM head. `m` (tokens) varies per step; n and k are fixed per deployment.
use crate::spec::model::ModelSpec;

/// One linear layer: output features `n`, input features `k` on this rank.
#[derive(Debug, Clone, PartialEq)]
pub struct GemmShape {
    pub name: &'static str,
    pub n: f64,
    pub k: f64,
    /// Runs in bf16 whatever the checkpoint's format (router gate, LM head).
    pub bf16: bool,
}

fn g(name: &'static str, n: f64, k: f64) -> GemmShape {
    GemmShape {
        name,
        n,
        k,
        bf16: false,
    }
}

/// Attention projections of one layer at attention-TP size `tp`.
pub fn attention(model: &ModelSpec, tp: u64) -> Vec<GemmShape> {
    let h = model.hidden_size as f64;
    let tpf = tp.max(1) as f64;
    let nh = model.num_attention_heads as f64 / tpf;
    match &model.mla {
        Some(m) => {
            let qk = (m.qk_nope_head_dim + m.qk_rope_head_dim) as f64;
            let mut v = Vec::new();
            if m.q_lora_rank > 0 {
                v.push(g("q_a_proj", m.q_lora_rank as f64, h));
                v.push(g("q_b_proj", nh * qk, m.q_lora_rank as f64));
            } else {
                v.push(g("q_proj", nh * qk, h));
            }
            v.push(g(
                "kv_a_proj",
                (m.kv_lora_rank + m.qk_rope_head_dim) as f64,
                h,
            ));
            // Decode runs kv_b absorbed as two batched GEMMs of the same weights; priced as one
            // GEMM of the same size.
            v.push(g(
                "kv_b_proj",
                nh * (m.qk_nope_head_dim + m.v_head_dim) as f64,
                m.kv_lora_rank as f64,
            ));
            v.push(g("o_proj", h, nh * m.v_head_dim as f64));
            v
        }
        None => {
            let d = model.head_dim as f64;
            let kv = model.kv_heads_per_rank(tp) as f64;
            let Some(l) = &model.linear_attention else {
                return vec![
                    g("qkv_proj", (nh + 2.0 * kv) * d, h),
                    g("o_proj", h, nh * d),
                ];
            };
            hybrid(model, l, nh, kv, d, tpf)
        }
    }
}

/// A hybrid GDN stack's projections, each weighted by its share of the layers: the caller
/// multiplies the list by every layer, so a shape of `share` of the layers is looked up at
/// `share · n` output features (same weight bytes and FLOPs as the true layer count; a
/// narrower GEMM reads as slightly less efficient in the tables, so this errs dear).
/// Full layers: the gated q (`attn_output_gate` doubles the query heads), k, v and o. GDN
/// layers (`qwen3_next.py` / `qwen3_5.py`): in (q, k, v, z, b, a) and out.
fn hybrid(
    model: &ModelSpec,
    l: &crate::spec::model::LinearAttention,
    nh: f64,
    kv: f64,
    d: f64,
    tpf: f64,
) -> Vec<GemmShape> {
    let h = model.hidden_size as f64;
    let lin = l.layers as f64 / model.num_layers.max(1) as f64;
    let full = 1.0 - lin;
    let q = if l.full_attention_output_gate {
        2.0
    } else {
        1.0
    };
    let (kd, vd) = (l.key_dim() as f64, l.value_dim() as f64);
    vec![
        g("qkv_proj", full * (q * nh + 2.0 * kv) * d, h),
        g("o_proj", full * h, nh * d),
        g(
            "gdn_in_proj",
            lin * (2.0 * kd + 2.0 * vd + 2.0 * l.num_v_heads as f64) / tpf,
            h,
        ),
        g("gdn_out_proj", lin * h, vd / tpf),
    ]
}

/// A gated MLP of intermediate size `inter` split over `tp` ranks.
fn mlp(h: f64, inter: f64, tp: u64) -> Vec<GemmShape> {
    if inter <= 0.0 {
        return Vec::new();
    }
    let i = inter / tp.max(1) as f64;
    vec![g("gate_up_proj", 2.0 * i, h), g("down_proj", h, i)]
}

/// The dense MLP of a dense layer.
pub fn dense_mlp(model: &ModelSpec, tp: u64) -> Vec<GemmShape> {
    mlp(model.hidden_size as f64, model.intermediate_size as f64, tp)
}

/// The GEMMs of an MoE layer besides the routed experts: shared expert and router gate.
pub fn moe_dense(model: &ModelSpec, tp: u64) -> Vec<GemmShape> {
    let Some(m) = &model.moe else {
        return Vec::new();
    };
    let h = model.hidden_size as f64;
    let mut v = mlp(h, m.shared_expert_intermediate_size as f64, tp);
    for s in &mut v {
        s.name = if s.name == "gate_up_proj" {
            "shared_gate_up"
        } else {
            "shared_down"
        };
    }
    v.push(GemmShape {
        name: "router",
        n: m.num_experts as f64,
        k: h,
        bf16: true,
    });
    v
}

/// The LM head: vocab-parallel, or whole on every rank ([`ModelSpec::replicated_embedding`]).
pub fn lm_head(model: &ModelSpec, tp: u64) -> GemmShape {
    GemmShape {
        name: "lm_head",
        n: model.vocab_size as f64 / model.vocab_shards(tp),
        k: model.hidden_size as f64,
        bf16: true,
    }
}
