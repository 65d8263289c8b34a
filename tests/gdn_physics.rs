//! The physics laws of tests/physics.rs on the hybrid gated delta-net models (Qwen3.5, bundled
//! as Hugging Face configs, which physics.rs's YAML model list does not reach): under both
//! backends a step never gets cheaper with more batch or context, and A100 → H100 → H200 →
//! B200 is never slower at the same shape. Plus the mechanism's signature: a decode step's
//! growth with context comes from the full-attention layers only.
#[path = "common/mod.rs"]
mod common;
use servesim::cost::{BatchShape, StepCost};
use servesim::simulation::Scenario;
use servesim::spec::server::ServerFlags;
use servesim::spec::workload::{ClientFlags, ScenarioFile};

const MODELS: [&str; 2] = ["Qwen/Qwen3.5-27B", "Qwen/Qwen3.5-35B-A3B"];
const LADDER: [&str; 4] = [
    "a100-sxm4-80gb",
    "h100-sxm5-80gb",
    "h200-sxm-141gb",
    "b200-sxm-180gb",
];

fn cost(hw: &str, model: &str, tp: u64, backend: &str) -> Option<Box<dyn StepCost>> {
    let flags = ServerFlags {
        tp: Some(tp),
        cost_model: Some(backend.into()),
        fused_moe_config: Some("tuned".into()),
        ..Default::default()
    };
    let sc = Scenario::resolve(
        &ScenarioFile::default(),
        Some(hw),
        Some(model),
        &flags,
        &ClientFlags::default(),
    )
    .ok()?;
    Some(sc.step_cost().unwrap())
}

fn decode(bs: u64, ctx: u64) -> BatchShape {
    common::decode_shape(bs, ctx)
}

fn prefill(reqs: u64, extend: u64) -> BatchShape {
    common::prefill_shape(reqs, extend)
}

fn t(c: &dyn StepCost, s: &BatchShape) -> f64 {
    let v = c.step_time(s).total_ns;
    assert!(v.is_finite() && v > 0.0, "{v} for {s:?}");
    v
}

const EPS: f64 = 1e-9;

#[test]
fn more_batch_or_context_never_makes_a_gdn_step_cheaper() {
    let mut checked = 0;
    for backend in ["roofline", "kernels"] {
        for hw in LADDER {
            for model in MODELS {
                for tp in [1, 2, 4, 8] {
                    let Some(c) = cost(hw, model, tp, backend) else {
                        continue;
                    };
                    let what = format!("{model} tp {tp} on {hw} ({backend})");
                    for ctx in [128, 4096] {
                        let ts: Vec<f64> = [1, 8, 64, 256]
                            .map(|b| t(c.as_ref(), &decode(b, ctx)))
                            .into();
                        assert!(ts.windows(2).all(|w| w[1] >= w[0] * (1.0 - EPS)), "{what}");
                    }
                    for bs in [1, 64] {
                        let (a, b) = (
                            t(c.as_ref(), &decode(bs, 128)),
                            t(c.as_ref(), &decode(bs, 4096)),
                        );
                        assert!(b >= a * (1.0 - EPS), "{what} bs {bs}: {a} → {b}");
                    }
                    let ps: Vec<f64> = [16, 1024, 8192]
                        .map(|e| t(c.as_ref(), &prefill(1, e)))
                        .into();
                    assert!(ps.windows(2).all(|w| w[1] >= w[0] * (1.0 - EPS)), "{what}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 20, "{checked}");
}

#[test]
fn a_newer_gpu_is_never_slower_on_a_gdn_model() {
    let shapes = [
        decode(1, 128),
        decode(64, 4096),
        decode(256, 128),
        prefill(1, 1024),
        prefill(4, 8192),
    ];
    let mut compared = 0;
    for backend in ["roofline", "kernels"] {
        for model in MODELS {
            for tp in [1, 2, 4, 8] {
                let costs: Vec<_> = LADDER
                    .iter()
                    .map(|hw| cost(hw, model, tp, backend))
                    .collect();
                for i in 0..costs.len() {
                    for j in i + 1..costs.len() {
                        let (Some(a), Some(b)) = (&costs[i], &costs[j]) else {
                            continue;
                        };
                        for s in &shapes {
                            let (ta, tb) = (t(a.as_ref(), s), t(b.as_ref(), s));
                            assert!(
                                tb <= ta * (1.0 + EPS),
                                "{model} tp {tp} {backend}: {} {ta} < {} {tb} at {s:?}",
                                LADDER[i],
                                LADDER[j]
                            );
                            compared += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(compared > 100, "{compared}");
}

/// A long-context decode step of a hybrid model reads the KV of every full-attention layer:
/// Qwen3.5-27B at TP 1 caches 16 layers × 4 KV heads × 256 × 2 (K, V) × 2 B = 65,536 B per token
/// (by hand from its config), so 64 requests at 32,768 tokens read 137.4 GB, plus at least
/// 50 GB of bf16 weights (≥ 25B parameters), which H100's 3.35 TB/s HBM (datasheet) cannot
/// stream in under 56 ms. A price
/// spread over all 64 layers instead of the 16 that cache would read a quarter of that KV.
#[test]
fn a_hybrid_decode_reads_the_kv_of_its_full_attention_layers() {
    let kv_bytes = 64.0 * 32768.0 * 65536.0;
    let weight_bytes = 2.0 * 25e9;
    let floor_ns = (kv_bytes + weight_bytes) / 3.35e12 * 1e9;
    for backend in ["roofline", "kernels"] {
        let c = cost("h100-sxm5-80gb", "Qwen/Qwen3.5-27B", 1, backend).unwrap();
        let got = c.step_time(&decode(64, 32768)).gpu_ns;
        assert!(got >= floor_ns, "{backend}: {got} ns < {floor_ns} ns");
    }
}

/// The attention component (full-attention and GDN kernels) of a step.
fn attention_ns(c: &dyn StepCost, s: &BatchShape) -> f64 {
    c.explain(s)
        .items
        .iter()
        .filter(|i| i.component == servesim::cost::breakdown::Component::Attention)
        .map(|i| i.time_ns)
        .sum()
}

/// More prefill requests at the same length, or more tokens per request, never price a
/// hybrid model's prefill cheaper (the measured GDN surface over requests × length).
#[test]
fn a_gdn_prefill_grows_with_requests_and_tokens() {
    for hw in LADDER {
        for model in MODELS {
            for tp in [1, 4] {
                let Some(c) = cost(hw, model, tp, "kernels") else {
                    continue;
                };
                for len in [64, 1024, 8192] {
                    let ts: Vec<f64> = [1, 2, 8, 32, 100]
                        .map(|r| attention_ns(c.as_ref(), &prefill(r, len)))
                        .into();
                    assert!(
                        ts.windows(2).all(|w| w[1] >= w[0] * (1.0 - EPS)),
                        "{hw} {model} tp {tp} len {len}: {ts:?}"
                    );
                }
                for reqs in [1, 8] {
                    let ts: Vec<f64> = [1, 63, 64, 65, 1000, 40000]
                        .map(|l| attention_ns(c.as_ref(), &prefill(reqs, l)))
                        .into();
                    assert!(
                        ts.windows(2).all(|w| w[1] >= w[0] * (1.0 - EPS)),
                        "{hw} {model} tp {tp} reqs {reqs}: {ts:?}"
                    );
                }
            }
        }
    }
}

/// Tensor parallelism splits the GDN heads over the ranks: one GDN layer on a rank never costs
/// more at a higher TP, in either phase, measured (every bundled system's tables) or roofline.
/// (The full-attention layers are not in this law: at TP 8 Qwen3.5-27B's single KV head is
/// replicated and the tables' 3-query-head rows can price above the 6-head ones.)
#[test]
fn tp_never_makes_a_ranks_gdn_layer_dearer() {
    use servesim::cost::kernels::db::KernelDb;
    use servesim::cost::kernels::gdn_tables::MeasuredGdn;
    let shapes = [
        decode(1, 128),
        decode(64, 4096),
        decode(512, 1024),
        prefill(1, 8192),
        prefill(8, 1024),
        prefill(64, 128),
    ];
    let mut compared = 0;
    for model in MODELS {
        let sc = Scenario::resolve(
            &ScenarioFile::default(),
            Some("h200-sxm-141gb"),
            Some(model),
            &ServerFlags::default(),
            &ClientFlags::default(),
        )
        .unwrap();
        let l = sc.model.linear_attention.clone().unwrap();
        let hidden = sc.model.hidden_size;
        let hw = sc.hardware.clone();
        let attn = hw.attention("fa3").unwrap();
        for system in ["a100_sxm", "h100_sxm", "h200_sxm", "b200_sxm", "l40s"] {
            let db = KernelDb::bundled(system, "0.5.14".parse().unwrap()).unwrap();
            for s in &shapes {
                let price = |tp: u64| {
                    let measured = MeasuredGdn::build(&db, &l, tp, hidden).layer_ns(s);
                    let roof = servesim::cost::gdn::GdnCost::of(&l, tp).layer_ns(&hw, &attn, s);
                    (measured.map(|m| m.0), roof)
                };
                for w in [1, 2, 4, 8].windows(2) {
                    let ((ma, ra), (mb, rb)) = (price(w[0]), price(w[1]));
                    assert!(
                        rb <= ra * (1.0 + EPS),
                        "{model} roofline tp {w:?}: {ra} → {rb} at {s:?}"
                    );
                    if let (Some(a), Some(b)) = (ma, mb) {
                        assert!(
                            b <= a * (1.0 + EPS),
                            "{model} {system} tp {w:?}: {a} → {b} at {s:?}"
                        );
                        compared += 1;
                    }
                }
            }
        }
    }
    assert!(compared > 100, "{compared}");
}

/// The bundled table reproduces AIConfigurator's parquet rows, read by hand with pyarrow from
/// aiconfigurator-core 0.12.0 `systems/data/h100_sxm/linear_attention/sglang/0.5.14/gdn_perf.parquet`
/// (Qwen/Qwen3.5-27B at TP 1: 16 key / 48 value heads of 128, d_conv 4, d_model 5120):
/// - `chunk_gated_delta_rule`, context, batch 1 × seq_len 8192: 1.0854064178466796 ms;
/// - `causal_conv1d_fn`, same shape: 0.14768896102905274 ms;
/// - `fused_recurrent_gated_delta_rule_packed_decode`, generation, batch 1: 0.005197439789772033 ms;
/// - `causal_conv1d_update`, batch 1: 0.0016883200407028197 ms.
///
/// And the kernels backend prices the 48 GDN layers of a 1 × 8192 prefill with them: at least
/// 48 × (1.0854 + 0.1477) ms = 59.2 ms of attention, where the FLOP roofline (cost/gdn.rs)
/// would give ≈ 0.09 ms a layer.
#[test]
fn the_gdn_table_reproduces_aiconfigurators_rows() {
    use servesim::cost::kernels::db::KernelDb;
    let db = KernelDb::bundled("h100_sxm", "0.5.14".parse().unwrap()).unwrap();
    let key = |k: &str| -> Vec<String> {
        [k, "4", "128", "128", "48", "16", "5120"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let rule = db
        .surface("context_gdn", &key("chunk_gated_delta_rule"))
        .unwrap();
    let (v, out) = rule.at(1.0, 8192.0);
    assert!(!out && (v / 1085.4064e3 - 1.0).abs() < 5e-4, "{v} ns");
    let conv = db.surface("context_gdn", &key("causal_conv1d_fn")).unwrap();
    assert!((conv.at(1.0, 8192.0).0 / 147.68896e3 - 1.0).abs() < 5e-4);
    let dec = db
        .curve(
            "generation_gdn",
            &key("fused_recurrent_gated_delta_rule_packed_decode"),
        )
        .unwrap();
    assert!((dec.at(1.0).0 / 5.19744e3 - 1.0).abs() < 5e-4);
    let upd = db
        .curve("generation_gdn", &key("causal_conv1d_update"))
        .unwrap();
    assert!((upd.at(1.0).0 / 1.68832e3 - 1.0).abs() < 5e-4);

    let k = cost("h100-sxm5-80gb", "Qwen/Qwen3.5-27B", 1, "kernels").unwrap();
    let got = attention_ns(k.as_ref(), &prefill(1, 8192));
    let gdn_floor = 48.0 * (1.0854 + 0.1477) * 1e6;
    assert!(got >= gdn_floor, "{got} ns < {gdn_floor} ns");
    let detail = k
        .explain(&prefill(1, 8192))
        .items
        .iter()
        .map(|i| i.detail.clone())
        .collect::<String>();
    assert!(
        detail.contains("context_gdn") && detail.contains("chunk_gated_delta_rule"),
        "{detail}"
    );
}

/// AIConfigurator's SGLang decode rows keep float32 recurrent states
/// (collector/sglang/collect_gdn.py `run_gdn_generation_benchmark`: `recurrent_state` of
/// torch.float32): a checkpoint whose `mamba_ssm_dtype` is bfloat16 moves half those bytes, so
/// its decode is not read off them (the roofline prices it); its prefill still is.
#[test]
fn a_bf16_state_decode_is_not_priced_from_float32_rows() {
    use servesim::cost::kernels::db::KernelDb;
    use servesim::cost::kernels::gdn_tables::MeasuredGdn;
    let db = KernelDb::bundled("h100_sxm", "0.5.14".parse().unwrap()).unwrap();
    // Qwen3.5-27B's GDN shape (its config.json: 16 key / 48 value heads of 128, conv 4).
    let mut l = servesim::spec::linear_attention::qwen35_27b();
    let fp32 = MeasuredGdn::build(&db, &l, 1, 5120);
    assert!(fp32.layer_ns(&decode(8, 128)).is_some());
    l.ssm_state_bytes = 2.0;
    let bf16 = MeasuredGdn::build(&db, &l, 1, 5120);
    assert!(bf16.layer_ns(&decode(8, 128)).is_none());
    assert!(bf16.layer_ns(&prefill(1, 1024)).is_some());
}
