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
