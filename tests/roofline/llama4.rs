//! Llama 4's chunked local attention priced by hand (src/cost/window.rs): under SGLang's fa3
//! (the Hopper default) the 36 chunked layers of Llama-4-Scout read min(context, C = 8192)
//! keys per request and the 12 NoPE global layers the whole context; under trtllm_mha (the
//! sm100 default) and triton, which never apply `use_irope`, all 48 layers read the whole
//! context. One layer's price L(c) is taken from the same model with the window removed
//! (48 full layers: A(c) = 48 · L(c)), so the hand identity is
//! A_chunked(c) = 12 · L(c) + 36 · L(min(c, C)), checked below, at and above C.
use super::*;
use servesim::cost::breakdown::Component;
use servesim::cost::{build, CostChoice, CostModel};
use servesim::spec::engine::{resolve, Engine};

const SCOUT: &str = "meta-llama/Llama-4-Scout-17B-16E-Instruct";
const C: u64 = 8192;

/// The attention component (ns) of `s` for `model` on `hw` with `backend`.
fn attention_ns(
    hw: &str,
    model: &ModelSpec,
    backend: &str,
    cost: CostModel,
    s: &BatchShape,
) -> f64 {
    let hw = load_hardware(hw).unwrap();
    let flags = ServerFlags {
        tp: Some(8),
        attention_backend: Some(backend.into()),
        ..Default::default()
    };
    let server = resolve(Engine::Sglang, &flags, &hw, model).unwrap();
    assert_eq!(server.attention_backend, backend);
    let choice = CostChoice {
        model: Some(cost),
        kernel_db: None,
    };
    build(&hw, model, &server, &choice)
        .unwrap()
        .explain(s)
        .items
        .iter()
        .filter(|i| i.component == Component::Attention)
        .map(|i| i.time_ns)
        .sum()
}

#[test]
fn chunked_layers_read_at_most_one_chunk_under_fa3_only() {
    let scout = load_model(SCOUT).unwrap();
    let w = scout.sliding_window.as_ref().unwrap();
    assert_eq!((w.window_tokens, w.layers), (C, 36));
    let mut full = scout.clone();
    full.sliding_window = None;
    let reqs = 8;
    for cost in [CostModel::Roofline, CostModel::Kernels] {
        for ctx in [C / 2, C, 2 * C, 4 * C] {
            let s = decode(reqs, reqs * ctx, Some(reqs));
            let one_layer = |c: u64, backend: &str| {
                let s = decode(reqs, reqs * c, Some(reqs));
                attention_ns("h100-sxm5-80gb", &full, backend, cost, &s) / 48.0
            };
            let got = attention_ns("h100-sxm5-80gb", &scout, "fa3", cost, &s);
            let want = 12.0 * one_layer(ctx, "fa3") + 36.0 * one_layer(ctx.min(C), "fa3");
            assert!(
                (got / want - 1.0).abs() < 1e-9,
                "{cost:?} fa3 ctx {ctx}: {got} ns, by hand {want} ns"
            );
            // Above C the chunked price is below the full-attention price; at or below it is
            // the same (the chunk covers the whole context).
            let all_full = 48.0 * one_layer(ctx, "fa3");
            if ctx > C {
                assert!(got < all_full, "{cost:?} ctx {ctx}");
            } else {
                assert!((got / all_full - 1.0).abs() < 1e-9, "{cost:?} ctx {ctx}");
            }
            // trtllm_mha (B200) and triton apply no chunk: every layer reads the whole context.
            // (Not trtllm_mha under the kernels backend: its cross-GPU envelope bounds a B200
            // step by the H100's price, where fa3 does apply the chunk.)
            let no_chunk: &[(&str, &str)] = match cost {
                CostModel::Roofline => &[
                    ("b200-sxm-180gb", "trtllm_mha"),
                    ("a100-sxm4-80gb", "triton"),
                ],
                _ => &[("a100-sxm4-80gb", "triton")],
            };
            for &(hw, backend) in no_chunk {
                let got = attention_ns(hw, &scout, backend, cost, &s);
                let want = attention_ns(hw, &full, backend, cost, &s);
                assert!(
                    (got / want - 1.0).abs() < 1e-9,
                    "{cost:?} {backend} ctx {ctx}: {got} ns vs full {want} ns"
                );
            }
        }
    }
}

/// A 16384-token prompt (no cache) under fa3: the 36 chunked layers are priced at the
/// C-token window's work, Σ extend · min(prefix + extend / 2, C) = 16384 · 8192 token pairs,
/// the 12 global layers at 16384 · 8192 too (16384² / 2): so the whole prefill attention is
/// 48 layers at the full causal price of a 16384-token prompt, which is also what a
/// 16384-token prompt costs when one layer's work equals the full layer's. Below C (4096
/// tokens) every layer's work is the causal 4096² / 2.
#[test]
fn chunked_prefill_work_by_hand() {
    let mut s = BatchShape::default();
    s.add_prefill(16_384, 0, Some(C));
    assert_eq!(s.prefill_attn_work, 16_384.0 * 8_192.0);
    assert_eq!(s.prefill_attn_work_windowed, 16_384.0 * 8_192.0);
    let mut long = BatchShape::default();
    long.add_prefill(32_768, 0, Some(C));
    assert_eq!(long.prefill_attn_work, 32_768.0 * 16_384.0);
    assert_eq!(long.prefill_attn_work_windowed, 32_768.0 * 8_192.0);
    let mut short = BatchShape::default();
    short.add_prefill(4_096, 0, Some(C));
    assert_eq!(short.prefill_attn_work_windowed, 4_096.0 * 2_048.0);
}

/// Physics on Llama 4 (tests/physics.rs covers the YAML models only): with the chunk passed
/// to the batch shapes as the simulation passes it (`cost::window::applied_tokens`), a step
/// never gets cheaper with more context or batch, on every GPU with its default backend
/// (fa3 applies the chunk, trtllm_mha and triton do not), under both cost models.
#[test]
fn more_context_or_batch_is_never_cheaper_for_llama4() {
    use servesim::cost::window::applied_tokens;
    let mut checked = 0;
    for model in [SCOUT, "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"] {
        let m = load_model(model).unwrap();
        for hw_name in [
            "a100-sxm4-80gb",
            "h100-sxm5-80gb",
            "h200-sxm-141gb",
            "b200-sxm-180gb",
        ] {
            let hw = load_hardware(hw_name).unwrap();
            let flags = ServerFlags {
                tp: Some(8),
                ..Default::default()
            };
            let Ok(server) = resolve(Engine::Sglang, &flags, &hw, &m) else {
                continue; // does not fit (Maverick on 8 × 80 GB)
            };
            let window = applied_tokens(&m, &server);
            for cost in [CostModel::Roofline, CostModel::Kernels] {
                let choice = CostChoice {
                    model: Some(cost),
                    kernel_db: None,
                };
                let c = build(&hw, &m, &server, &choice).unwrap();
                let t = |s: &BatchShape| c.step_time(s).total_ns;
                let what = format!("{model} on {hw_name} {cost:?}");
                for bs in [1, 16, 256] {
                    let mut prev = 0.0;
                    for ctx in [
                        1, 1000, 4096, 8191, 8192, 8193, 12_000, 16_384, 32_768, 131_072,
                    ] {
                        let now = t(&decode(bs, bs * ctx, Some(bs.min(512))));
                        assert!(
                            now >= prev * (1.0 - 1e-9),
                            "{what}: decode bs {bs} ctx {ctx}"
                        );
                        prev = now;
                    }
                }
                for prefix in [0, 4096, 8192, 20_000] {
                    let mut prev = 0.0;
                    for extend in [1, 64, 2048, 8191, 8192, 8193, 16_384, 65_536] {
                        let mut s = BatchShape::default();
                        s.add_prefill(extend, prefix, window);
                        let now = t(&s);
                        assert!(
                            now >= prev * (1.0 - 1e-9),
                            "{what}: prefill {extend} over {prefix}"
                        );
                        prev = now;
                    }
                }
                let mut prev = 0.0;
                for prefix in [0, 100, 4096, 8192, 65_536] {
                    let mut s = BatchShape::default();
                    s.add_prefill(1024, prefix, window);
                    s.add_prefill(1024, prefix, window);
                    let now = t(&s);
                    assert!(
                        now >= prev * (1.0 - 1e-9),
                        "{what}: prefill 2×1024 over {prefix}"
                    );
                    prev = now;
                }
                checked += 1;
            }
        }
    }
    // Both models on all four GPUs (Maverick's ~400 GB of fp8 weights fit 8 × 80 GB).
    assert_eq!(checked, 2 * 2 * 4);
}
