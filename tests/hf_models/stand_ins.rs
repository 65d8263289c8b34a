//! Checkpoint names priced with a bundled stand-in's layer stack and their own context length
//! (`spec::checkpoint_name` same-architecture builds, `spec::checkpoint_context`): Llama 3,
//! QwQ-32B, Qwen2.5-Coder-32B. Sizes by hand and against the publishers' figures, KV bytes per
//! token by hand, the context length each checkpoint's own config states.
use super::{near, total_params};
use servesim::spec::bundled::load_model;
use servesim::spec::model::{KvDtype, WeightFormat};

#[test]
fn llama_3_is_llama_3_1s_stack_with_an_8k_context() {
    // Meta's Llama 3 model card (meta-llama/llama3 MODEL_CARD.md): "8B and 70B parameters",
    // context length 8k for both. By hand (no norms): 8B embedding + LM head 2·128,256·4096
    // = 1,050,673,152, a layer 2·4096² + 2·4096·1024 + 3·4096·14,336 = 218,103,808, × 32;
    // 70B 2·128,256·8192 = 2,101,346,304, a layer 2·8192² + 2·8192·1024 + 3·8192·28,672
    // = 855,638,016, × 80.
    for (id, hand, card_b, kv_layers) in [
        (
            "meta-llama/Meta-Llama-3-8B-Instruct",
            1_050_673_152.0 + 32.0 * 218_103_808.0,
            8.0,
            32.0,
        ),
        ("meta-llama/Meta-Llama-3-8B", 8_029_995_008.0, 8.0, 32.0),
        (
            "meta-llama/Meta-Llama-3-70B-Instruct",
            2_101_346_304.0 + 80.0 * 855_638_016.0,
            70.0,
            80.0,
        ),
    ] {
        let m = load_model(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(total_params(&m), hand, "{id}");
        near(id, total_params(&m), card_b, 0.01);
        assert_eq!(m.context_length, 8192, "{id}");
        // 2 (K, V) × layers × 8 KV heads × 128 × 2 B.
        assert_eq!(
            m.kv_bytes_per_token_per_rank(1, KvDtype::Bf16),
            2.0 * kv_layers * 8.0 * 128.0 * 2.0,
            "{id}"
        );
        assert_eq!(m.hf_id.as_deref(), Some(id));
        assert!(m.notes.iter().any(|n| n.contains("8192")), "{id}");
    }
    // Its FP8 builds keep the stand-in and the context.
    let m = load_model("neuralmagic/Meta-Llama-3-8B-Instruct-FP8").unwrap();
    assert_eq!((m.weights, m.context_length), (WeightFormat::Fp8, 8192));
    // Llama 3.1 keeps its own 131,072 (rope_scaling llama3: SGLang applies no factor).
    assert_eq!(
        load_model("meta-llama/Llama-3.1-8B-Instruct")
            .unwrap()
            .context_length,
        131_072
    );
}

#[test]
fn qwq_and_qwen2_5_coder_32b_are_qwen2_5_32bs_stack() {
    // QwQ-32B-Preview's card (kalle's copy, pypi-mirror-382) and Qwen2.5-Coder-32B-Instruct's
    // (telekom/aifoundation-docs): 32.5B parameters, 64 layers, 40 / 8 heads.
    for (id, context) in [
        ("Qwen/QwQ-32B", 131_072),
        ("Qwen/QwQ-32B-Preview", 32_768),
        ("Qwen/Qwen2.5-Coder-32B-Instruct", 32_768),
        ("Qwen/Qwen2.5-Coder-32B", 32_768),
    ] {
        let m = load_model(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        near(id, total_params(&m), 32.5, 0.01);
        assert!(m.qkv_bias, "{id}: Qwen2 projects q/k/v with bias");
        assert_eq!(m.context_length, context, "{id}");
        // 2 × 64 layers × 8 KV heads × 128 × 2 B.
        assert_eq!(m.kv_bytes_per_token_per_rank(1, KvDtype::Bf16), 262_144.0);
    }
    let m = load_model("Qwen/QwQ-32B-AWQ").unwrap_err().to_string();
    assert!(m.contains("AWQ"), "{m}");
}

#[test]
fn phi_4_and_mistral_small_resolve_by_name() {
    // phi-4 by id; its mini / multimodal / reasoning siblings are refused by name, never
    // priced as phi-4.
    let m = load_model("microsoft/phi-4").unwrap();
    assert_eq!((m.name.as_str(), m.context_length), ("phi-4", 16_384));
    assert_eq!(
        load_model("microsoft/phi-4-FP8").unwrap().weights,
        WeightFormat::Fp8
    );
    for id in [
        "microsoft/Phi-4-mini-instruct",
        "microsoft/Phi-4-reasoning-plus",
    ] {
        let e = load_model(id).unwrap_err().to_string();
        assert!(e.contains(id) && !e.contains('\n'), "{id}: {e}");
    }
    // A Phi3ForCausalLM config.json reads as the Llama decoder SGLang serves it as.
    let text = r#"{"architectures": ["Phi3ForCausalLM"], "hidden_size": 64,
        "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
        "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 4096,
        "sliding_window": 2047}"#;
    let p = servesim::spec::hf_config::model_from_hf_config(text, std::path::Path::new("p.json"))
        .unwrap();
    assert!(p.sliding_window.is_none() && !p.qkv_bias);
    // Attention 64·64 + 2·64·32 + 64·64 = 12,288, MLP 3·64·128 = 24,576, a layer; embedding and
    // LM head 2·100·64.
    assert_eq!(total_params(&p), (2 * (12_288 + 24_576) + 12_800) as f64);
    for id in [
        "mistralai/Mistral-Small-24B-Instruct-2501",
        "mistralai/Mistral-Small-24B-Base-2501",
    ] {
        let m = load_model(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(m.name, "mistral-small-24b-instruct-2501", "{id}");
        assert_eq!((m.head_dim, m.context_length), (128, 32_768), "{id}");
    }
}

#[test]
fn qwen2_5_instruct_checkpoints_state_a_32k_context() {
    // Qwen2.5 Instruct cards: "The current config.json is set for context length up to 32,768
    // tokens"; the base configs (aiconfigurator 0.7.0 copies) state 131,072.
    for (id, context) in [
        ("Qwen/Qwen2.5-7B-Instruct", 32_768),
        ("Qwen/Qwen2.5-32B-Instruct", 32_768),
        ("Qwen/Qwen2.5-72B-Instruct-FP8", 32_768),
        ("Qwen/Qwen2.5-1.5B-Instruct", 32_768),
        ("Qwen/Qwen2.5-72B", 131_072),
        ("Qwen/Qwen2.5-7B", 131_072),
    ] {
        let m = load_model(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(m.context_length, context, "{id}");
    }
}
