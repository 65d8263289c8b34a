//! Llama 4 Scout and Maverick (models/hf/, from aiconfigurator 0.10.0) as SGLang's
//! `llama4.py` builds them (src/spec/hf_llama4.rs): sizes against Meta's stated figures, the
//! layer layout by hand, the `-FP8` build's weight format, and vLLM's clear refusal.
use super::{active_params, near, parse, total_params};
use servesim::spec::bundled::{load_hardware, load_model};
use servesim::spec::engine::{resolve, Engine};
use servesim::spec::model::{WeightFormat, WindowKind};
use servesim::spec::server::ServerFlags;

const SCOUT: &str = "meta-llama--Llama-4-Scout-17B-16E-Instruct";
const MAVERICK: &str = "meta-llama--Llama-4-Maverick-17B-128E-Instruct";

#[test]
fn scout_and_maverick_match_metas_stated_sizes() {
    // Meta's model card (github.com/meta-llama/llama-models, models/llama4/MODEL_CARD.md):
    // "Llama 4 Scout (17Bx16E) ... 17B activated, 109B total"; "Llama 4 Maverick (17Bx128E)
    // ... 17B activated, 400B total". Those totals include the vision encoder, which SGLang
    // does not load (multimodal off for Llama 4 by default) and the bundled configs do not
    // describe, so the text decoder falls short of 109B by about it (~1B).
    // By hand, Scout: attention 48 · (5120·5120·2 + 2·5120·1024) = 3.020B; 48 layers × 17
    // experts (16 routed + 1 shared) × 3·5120·8192 = 102.677B; routers 48·5120·16; embedding
    // and LM head 2 · 202048 · 5120 = 2.069B: 107.769B.
    let scout = parse(SCOUT);
    assert_eq!(total_params(&scout), 107_769_364_480.0);
    near("Scout total", total_params(&scout), 109.0, 0.015);
    assert!(
        total_params(&scout) < 109e9,
        "the vision encoder is not counted"
    );
    near("Scout active", active_params(&scout), 17.0, 0.015);
    // Maverick: 24 MoE layers × 129 experts × 125.8M = 389.567B, 24 dense layers ×
    // 3·5120·16384 = 6.040B, attention 3.020B, routers 24·5120·128, embedding + head 2.069B.
    let maverick = parse(MAVERICK);
    assert_eq!(total_params(&maverick), 400_711_352_320.0);
    near("Maverick total", total_params(&maverick), 400.0, 0.005);
    near("Maverick active", active_params(&maverick), 17.0, 0.015);
}

#[test]
fn scout_weights_per_rank_at_tp8_by_hand() {
    // One layer on one of 8 ranks: q and o 5120·5120/8 each, k and v 2·5120·128 (8 KV heads,
    // one per rank) = 7,864,320; shared expert 3·5120·8192/8 = 15,728,640; 16 routed experts
    // of the same = 251,658,240; the replicated router 5120·16 = 81,920: 275,333,120 a layer,
    // × 48 = 13,215,989,760; embedding and LM head vocab-parallel 2 · 202048·5120/8 =
    // 258,621,440. In bf16: 2 × 13,474,611,200 B.
    let scout = parse(SCOUT);
    assert_eq!(
        scout.weight_bytes_per_rank(8, WeightFormat::Bf16),
        2.0 * 13_474_611_200.0
    );
}

#[test]
fn layer_layout_is_the_one_llama4_py_builds() {
    for (file, dense, experts, ctx) in [(SCOUT, 0, 16, 10_485_760), (MAVERICK, 24, 128, 1_048_576)]
    {
        let m = parse(file);
        assert_eq!(m.architecture, "Llama4ForConditionalGeneration");
        // `_is_moe_layer`: (i + 1) % interleave_moe_layer_step == 0 (step 1 Scout, 2 Maverick).
        let moe = m.moe.as_ref().unwrap();
        assert_eq!(
            (moe.num_experts, moe.experts_per_token, moe.dense_layers),
            (experts, 1, dense),
            "{file}"
        );
        // Experts and the shared expert of `intermediate_size`, dense layers of
        // `intermediate_size_mlp`.
        assert_eq!(
            (
                moe.expert_intermediate_size,
                moe.shared_expert_intermediate_size
            ),
            (8192, 8192)
        );
        assert_eq!(m.intermediate_size, 16_384);
        // `use_rope = (layer_id + 1) % 4 != 0`: 36 chunked layers of 8192 tokens, 12 global.
        let w = m.sliding_window.as_ref().unwrap();
        assert_eq!(
            (w.window_tokens, w.layers, w.kind),
            (8192, 36, WindowKind::Chunked)
        );
        assert_eq!(m.context_length, ctx);
        // KV: 8 KV heads × 128 × (K, V) × 2 bytes × 48 layers = 196,608 B per token at TP 1.
        assert_eq!(
            m.kv_bytes_per_token_per_rank(1, servesim::spec::model::KvDtype::Bf16),
            196_608.0
        );
        assert_eq!(m.vision_params, 0, "SGLang does not load the vision tower");
        assert!(m.notes.iter().any(|n| n.contains("--enable-multimodal")));
    }
}

#[test]
fn names_resolve_and_the_fp8_build_prices_fp8() {
    let scout = load_model("meta-llama/Llama-4-Scout-17B-16E-Instruct").unwrap();
    assert_eq!(scout.name, "llama-4-scout-17b-16e-instruct");
    assert_eq!(scout.weights, WeightFormat::Bf16);
    let fp8 = load_model("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8").unwrap();
    assert_eq!(fp8.weights, WeightFormat::Fp8);
    assert_eq!(fp8.moe.as_ref().unwrap().num_experts, 128);
    // Maverick FP8 on 8 × H200: (1 + 4/16384) bytes per linear weight, bf16 embeddings.
    let bytes = fp8.weight_bytes_per_rank(8, WeightFormat::Fp8);
    let bf16 = fp8.weight_bytes_per_rank(8, WeightFormat::Bf16);
    assert!(
        bytes < 0.52 * bf16 && bytes > 0.5 * bf16,
        "{bytes} vs {bf16}"
    );
}

#[test]
fn vllm_refuses_chunked_attention_in_one_line() {
    let hw = load_hardware("h100-sxm5-80gb").unwrap();
    let m = load_model("meta-llama/Llama-4-Scout-17B-16E-Instruct").unwrap();
    let flags = ServerFlags {
        tp: Some(8),
        engine: Some("vllm".into()),
        ..Default::default()
    };
    let e = resolve(Engine::Vllm, &flags, &hw, &m)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("chunked local-attention") && e.contains("--engine sglang"),
        "{e}"
    );
    assert!(!e.contains('\n'));
}

#[test]
fn explain_runs_price_the_chunked_layers_on_the_default_backends() {
    for (hw, model, backend, page) in [
        (
            "H100",
            "meta-llama/Llama-4-Scout-17B-16E-Instruct",
            "fa3",
            1,
        ),
        (
            "H200",
            "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8",
            "fa3",
            1,
        ),
        (
            "B200",
            "meta-llama/Llama-4-Scout-17B-16E-Instruct",
            "trtllm_mha",
            64,
        ),
    ] {
        let (code, out, err) =
            super::common::explain_small(&["--hardware", hw, "--model", model, "--tp", "8"]);
        assert_eq!(code, 0, "{hw} {model}: {err}");
        assert!(
            out.contains(&format!("attention_backend={backend}, page_size={page}")),
            "{out}"
        );
        // SGLang 0.5.8+ puts the 36 chunked layers on the SWA pool (8192-token window).
        assert!(out.contains("swa_max_total_num_tokens=") && out.contains("8192-token window"));
        assert!(err.contains("chunked local attention") || out.contains("chunked local attention"));
        assert!(out.contains("--- explain"), "{out}");
    }
}

#[test]
fn odd_llama4_configs_read_or_fail_in_one_line() {
    use servesim::spec::hf_config::model_from_hf_config;
    use std::path::Path;
    let base = std::fs::read_to_string(super::hf_path(MAVERICK)).unwrap();
    let read = |from: &str, to: &str| {
        assert!(base.contains(from), "{from}");
        model_from_hf_config(&base.replace(from, to), Path::new("c.json"))
    };
    // Step 0: every layer MoE when there are experts (`_is_moe_layer`).
    let m = read(
        "\"interleave_moe_layer_step\": 2",
        "\"interleave_moe_layer_step\": 0",
    )
    .unwrap();
    assert_eq!(m.moe.unwrap().dense_layers, 0);
    // A step beyond the layer count: no MoE layer, a dense model of intermediate_size_mlp.
    let m = read(
        "\"interleave_moe_layer_step\": 2",
        "\"interleave_moe_layer_step\": 99",
    )
    .unwrap();
    assert!(m.moe.is_none());
    assert_eq!(m.intermediate_size, 16_384);
    // No chunk: no local attention.
    let m = read(
        "\"attention_chunk_size\": 8192",
        "\"attention_chunk_size\": 0",
    )
    .unwrap();
    assert!(m.sliding_window.is_none());
    // Missing or zero sizes fail in one line naming the field.
    for (from, to, field) in [
        (
            "\"attention_chunk_size\": 8192,",
            "",
            "attention_chunk_size",
        ),
        (
            "\"num_local_experts\": 128",
            "\"num_local_experts\": 0",
            "num_local_experts",
        ),
        (
            "\"intermediate_size_mlp\": 16384,",
            "",
            "intermediate_size_mlp",
        ),
        (
            "\"num_experts_per_tok\": 1",
            "\"num_experts_per_tok\": 129",
            "experts_per_token",
        ),
    ] {
        let e = read(from, to).unwrap_err().to_string();
        assert!(e.contains(field) && !e.contains('\n'), "{field}: {e}");
    }
}
