//! Gemma-3 (1B / 4B / 12B / 27B) as SGLang serves it, against independent figures: Google's
//! parameter counts (Gemma 3 Technical Report, arXiv 2503.19786, Table 1), the SigLIP tower and
//! the KV pool by hand, and the rules read in the SGLang wheels (0.4.6, 0.5.1, 0.5.4, 0.5.8,
//! 0.5.10, 0.5.23): one full-length KV pool on every layer (`disable_hybrid_swa_memory` forced
//! for Gemma-3 in `model_specific_adjustments`, and Gemma-3 in no `is_hybrid_swa_model` list),
//! FA3 on Hopper for `Gemma3ForConditionalGeneration` only (`is_fa3_default_architecture`)
//! until 0.5.7, for every MHA model from 0.5.8.
use super::sourced::explain_small_run;
use super::swa_pools::sglang;
use servesim::spec::bundled::{load_hardware, load_model};
use servesim::spec::hf_config::model_from_hf_config;
use servesim::spec::model::{KvDtype, WeightFormat};
use std::path::Path;

const GIB: f64 = (1u64 << 30) as f64;

/// SigLIP-so400m as SGLang's `siglip.py` builds it for Gemma-3 (hidden 1152, MLP 4304, 27
/// blocks, patch 14 over 3 channels, 896-pixel images): patch conv 3·14²·1152 + 1152 =
/// 678,528; positions (896/14)² · 1152 = 4,718,592; a block 15,239,504 (the same block
/// tests/hf_models counts for Qwen3-VL's 1152-wide tower), × 27 = 411,466,608; post LayerNorm
/// 2,304.
const SIGLIP: u64 = 678_528 + 4_718_592 + 27 * 15_239_504 + 2_304;

#[test]
fn layer_stacks_match_googles_non_embedding_counts() {
    // Table 1's non-embedding parameters (millions) and vision encoder (417M, 0 for the 1B).
    for (name, non_embedding_m, vision_m) in [
        ("gemma-3-1b-it", 698.0, 0.0),
        ("gemma-3-4b-it", 3_209.0, 417.0),
        ("gemma-3-12b-it", 10_759.0, 417.0),
        ("gemma-3-27b-it", 25_600.0, 417.0),
    ] {
        let m = load_model(name).unwrap();
        let layers: f64 = (0..m.num_layers)
            .map(|i| {
                let p = m.layer_params(i, 1);
                p.attention + p.dense_mlp
            })
            .sum();
        // Norms (≈ 4 × hidden per layer) are not counted: within 0.05%.
        assert!(
            (layers / 1e6 / non_embedding_m - 1.0).abs() < 5e-4,
            "{name}: {layers:.4e} vs {non_embedding_m}M"
        );
        assert!(
            (m.vision_params as f64 / 1e6 - vision_m).abs() < 7.0,
            "{name}: vision {}",
            m.vision_params
        );
        assert!(
            m.tie_word_embeddings && !m.qkv_bias && m.moe.is_none(),
            "{name}"
        );
    }
    // The projector (1152 × text hidden + its 1152-wide RMSNorm) on top of the tower.
    for (name, hidden) in [
        ("gemma-3-4b-it", 2560),
        ("gemma-3-12b-it", 3840),
        ("gemma-3-27b-it", 5376),
    ] {
        assert_eq!(
            load_model(name).unwrap().vision_params,
            SIGLIP + 1152 * hidden + 1152,
            "{name}"
        );
    }
}

#[test]
fn five_of_six_layers_slide() {
    // Layer i slides unless (i + 1) % 6 == 0 (gemma_pytorch attn_types, SGLang gemma3_causal.py).
    for (name, layers, window_layers, window) in [
        ("gemma-3-1b-it", 26, 22, 512),
        ("gemma-3-4b-it", 34, 29, 1024),
        ("gemma-3-12b-it", 48, 40, 1024),
        ("gemma-3-27b-it", 62, 52, 1024),
    ] {
        let m = load_model(name).unwrap();
        let w = m.sliding_window.as_ref().unwrap();
        assert_eq!(m.num_layers, layers, "{name}");
        assert_eq!(
            w.layers,
            (0..layers).filter(|i| (i + 1) % 6 != 0).count() as u64
        );
        assert_eq!(
            (w.layers, w.window_tokens),
            (window_layers, window),
            "{name}"
        );
    }
}

#[test]
fn one_full_length_pool_on_every_layer_27b_h100_by_hand() {
    // SGLang forces disable_hybrid_swa_memory for Gemma-3 (0.5.1 server_args.py:2283-2296,
    // 0.5.10 :1865-1876, 0.5.23 arg_groups/model_overrides/gemma2_gemma3.py), so no release
    // splits its pool, whatever the backend or flags.
    for v in ["0.5.1", "0.5.8", "0.5.10", "0.5.23"] {
        let c = sglang("h100-sxm5-80gb", "gemma-3-27b-it", v, |_| {});
        assert!(c.swa_pools.is_none(), "{v}");
        assert_eq!(c.kv_pool_tokens, c.full_pool_tokens(), "{v}");
    }
    let hw = load_hardware("h100-sxm5-80gb").unwrap();
    let c = sglang("h100-sxm5-80gb", "gemma-3-27b-it", "0.5.10", |_| {});
    // Weights: 62 layers × (q 5376·4096 + k, v 2 · 5376·2048 + o 4096·5376 + MLP 3 · 5376·21504)
    // = 25,598,361,600, tied embedding 262,208 · 5376 = 1,409,630,208, vision 423,060,336; bf16.
    let weights = 2.0 * (25_598_361_600.0 + 1_409_630_208.0 + 423_060_336.0);
    assert_eq!(c.weight_bytes_per_rank, weights);
    // Cell: K and V of 16 heads × 128 on all 62 layers, bf16 = 507,904 bytes.
    let cell = 2.0 * 62.0 * 16.0 * 128.0 * 2.0;
    assert_eq!(c.kv_bytes_per_token, cell);
    // profile_max_num_token: rest = avail after weights − total · (1 − mem_fraction_static).
    let total = hw.memory.free_at_start_gib;
    let rest = total
        - weights / GIB
        - hw.memory.runtime_reserved_gib
        - total * (1.0 - c.mem_fraction_static);
    assert_eq!(c.kv_pool_tokens, (rest * GIB / cell).floor() as u64);
    // About 30k tokens: 15 requests of 2000 tokens fill it (the 1B holds ~2.5M).
    assert!(
        (25_000..35_000).contains(&c.kv_pool_tokens),
        "{}",
        c.kv_pool_tokens
    );
}

#[test]
fn attention_backend_by_architecture_name() {
    // is_fa3_default_architecture lists Gemma3ForConditionalGeneration (4B/12B/27B), never
    // Gemma3ForCausalLM (the text-only 1B): 0.4.6 utils.py:1964, 0.5.1 utils.py:2274, 0.5.10
    // utils/common.py:2676.
    let backend = |hw: &str, m: &str, v: &str| sglang(hw, m, v, |_| {}).attention_backend;
    assert_eq!(backend("h100-sxm5-80gb", "gemma-3-27b-it", "0.5.4"), "fa3");
    assert_eq!(backend("h100-sxm5-80gb", "gemma-3-4b-it", "0.5.4"), "fa3");
    assert_eq!(
        backend("h100-sxm5-80gb", "gemma-3-1b-it", "0.5.4"),
        "flashinfer"
    );
    assert_eq!(
        backend("a100-sxm4-80gb", "gemma-3-27b-it", "0.5.4"),
        "flashinfer"
    );
}

#[test]
fn checkpoint_names_resolve() {
    for (id, name) in [
        ("google/gemma-3-27b-it", "gemma-3-27b-it"),
        ("google/gemma-3-12b-it", "gemma-3-12b-it"),
        ("google/gemma-3-4b-it", "gemma-3-4b-it"),
        ("google/gemma-3-1b-it", "gemma-3-1b-it"),
    ] {
        let m = load_model(id).unwrap();
        assert_eq!((m.name.as_str(), m.hf_id.as_deref()), (name, Some(id)));
    }
    let m = load_model("RedHatAI/gemma-3-27b-it-FP8-dynamic").unwrap();
    assert_eq!(m.weights, WeightFormat::Fp8);
    let e = load_model("RedHatAI/gemma-3-27b-it-quantized.w4a16").unwrap_err();
    assert!(e.to_string().contains("W4A16"), "{e}");
}

#[test]
fn hf_reader_takes_gemma3_defaults_and_layer_types() {
    let path = super::fixture("gemma-3-4b-it");
    let text = std::fs::read_to_string(&path).unwrap();
    // The 4B text_config names no heads, head_dim, vocabulary or context: Gemma3TextConfig's
    // defaults (8 / 4 heads of 256, 262,208, 131,072) fill them.
    let m = model_from_hf_config(&text, &path).unwrap();
    assert_eq!(
        (m.num_attention_heads, m.num_kv_heads, m.head_dim),
        (8, 4, 256)
    );
    assert_eq!((m.vocab_size, m.context_length), (262_208, 131_072));
    assert_eq!(m.kv_bytes_per_token_per_rank(1, KvDtype::Bf16), 139_264.0);
    // An explicit layer_types list wins over the pattern (here: 3 full layers of 34).
    let types: Vec<&str> = (0..34)
        .map(|i| {
            if i % 12 == 11 {
                "full_attention"
            } else {
                "sliding_attention"
            }
        })
        .collect();
    let listed = text.replace(
        "\"sliding_window\": 1024",
        &format!("\"sliding_window\": 1024, \"layer_types\": {types:?}"),
    );
    let m = model_from_hf_config(&listed, &path).unwrap();
    assert_eq!(m.sliding_window.unwrap().layers, 32);
    // A pattern of 1 makes every layer global: no window at all.
    let global = text.replace(
        "\"sliding_window\": 1024",
        "\"sliding_window\": 1024, \"sliding_window_pattern\": 1",
    );
    assert!(model_from_hf_config(&global, &path)
        .unwrap()
        .sliding_window
        .is_none());
    for bad in [
        "\"sliding_window_pattern\": 0",
        "\"layer_types\": 3",
        "\"sliding_window\": 0",
    ] {
        let t = text.replace("\"sliding_window\": 1024", bad);
        assert!(
            model_from_hf_config(&t, Path::new("g.json")).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn explain_names_the_fallbacks() {
    // Under 0.5.7 the 1B runs flashinfer, which has no head_dim-256 rows in the bundled tables,
    // and no table reaches a 262k-row LM head: --explain says both.
    let (code, out, err) = super::common::explain_small(&[
        "--hardware",
        "h100-sxm5-80gb",
        "--model",
        "google/gemma-3-1b-it",
        "--sglang-version",
        "0.5.7",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("attention_backend=flashinfer"), "{out}");
    assert!(out.contains("head_dim 256 (no flashinfer rows)"), "{out}");
    assert!(
        out.contains("lm_head 262144x1152") && out.contains("EXTRAPOLATED"),
        "{out}"
    );
    // From 0.5.8 (the default here is newer) every MHA model on Hopper runs fa3.
    let out = explain_small_run("h100-sxm5-80gb", "google/gemma-3-1b-it", "1");
    assert!(out.contains("attention_backend=fa3"), "{out}");
}

#[test]
fn sglang_replicates_the_embedding_and_lm_head_over_tp() {
    // gemma3_causal.py: embed_tokens is a plain nn.Embedding and lm_head = embed_tokens, so at
    // TP 2 each rank holds the whole 262,208 × 5376 table (vLLM's VocabParallelEmbedding
    // halves it): per rank, bf16, layers / 2 + embedding + vision / 2.
    let c = sglang("h100-sxm5-80gb", "gemma-3-27b-it", "0.5.10", |f| {
        f.tp = Some(2)
    });
    let layers = 25_598_361_600.0 / 2.0;
    let embedding = 1_409_630_208.0;
    assert_eq!(
        c.weight_bytes_per_rank,
        2.0 * (layers + embedding + 423_060_336.0 / 2.0)
    );
    let m = load_model("gemma-3-27b-it").unwrap();
    assert_eq!(m.lm_head_params(2), embedding);
    let vllm = servesim::spec::engine::model_as_built(servesim::spec::engine::Engine::Vllm, m);
    assert_eq!(vllm.lm_head_params(2), embedding / 2.0);
    assert_eq!(
        vllm.weight_bytes_per_rank(2, WeightFormat::Bf16),
        2.0 * (layers + embedding / 2.0 + 423_060_336.0 / 2.0)
    );
    // The --explain line prices the whole head on each of the 2 ranks.
    let out = explain_small_run("h100-sxm5-80gb", "google/gemma-3-27b-it", "2");
    assert!(out.contains("lm_head 262208x5376"), "{out}");
}
