//! GLM-4.5 / 4.5-Air / 4.6 / 4.7 bundled (`models/glm-4.5*.yaml`, `glm-4.6.yaml`, GLM-4.7 as
//! GLM-4.6's architecture): their sizes against Zhipu's published figures, the public config
//! copies they were read from parsed the way a real `config.json` is, the checkpoint names
//! that resolve (`zai-org/`, `THUDM/`, `-FP8`, `-Base`) and the one that must not
//! (GLM-4.7-Flash is another model), and the MTP draft SGLang loads for EAGLE.
use super::{active_params, near, total_params};
use servesim::spec::bundled::load_model;
use servesim::spec::hf_config::model_from_hf_config;
use servesim::spec::model::WeightFormat;
use servesim::spec::speculative::{SpeculativeConfig, SpeculativeFlags};
use std::path::Path;

#[test]
fn glm_sizes_match_zhipu() {
    // zai-org/GLM-4.5 README: "GLM-4.5 has 355 billion total parameters with 32 billion active
    // parameters, while GLM-4.5-Air ... 106 billion total parameters and 12 billion active".
    // servesim leaves out the MTP layer (not served without speculation, ~3.9B / ~2.3B) and
    // the qk-norm and router-bias vectors, so 1.5% on the totals.
    for (name, total_b, active_b) in [
        ("glm-4.5", 355.0, 32.0),
        ("glm-4.6", 355.0, 32.0),
        ("glm-4.5-air", 106.0, 12.0),
    ] {
        let m = load_model(name).unwrap();
        near(name, total_params(&m), total_b, 0.015);
        // Active by the Mistral/Moonshot convention (embedding and LM head both counted): by
        // hand, GLM-4.5 12.54 (attention) + 0.57 (dense) + 89 × 0.2132 (MoE) + 1.55 = 33.6B;
        // Air 5.02 + 0.13 + 45 × 0.1562 + 1.24 = 13.4B. Zhipu's round figures are lower
        // (their convention is not published), so only within 12%.
        near(name, active_params(&m), active_b, 0.12);
    }
    // GLM-4.6's context is longer than GLM-4.5's, the layer stack the same.
    let (a, b) = (
        load_model("glm-4.5").unwrap(),
        load_model("glm-4.6").unwrap(),
    );
    assert_eq!((a.context_length, b.context_length), (131_072, 202_752));
    assert_eq!((a.moe.clone(), a.num_layers), (b.moe.clone(), b.num_layers));
}

/// GLM-4.5-Air's config as the transformers GLM-4-MoE weight converter writes it
/// (huggingface/transformers models/glm4_moe, `CONFIG`), the fields servesim reads.
const AIR_CONFIG: &str = r#"{"architectures": ["Glm4MoeForCausalLM"], "attention_bias": true,
    "head_dim": 128, "hidden_size": 4096, "intermediate_size": 10944,
    "max_position_embeddings": 131072, "moe_intermediate_size": 1408,
    "num_attention_heads": 96, "n_routed_experts": 128, "n_shared_experts": 1,
    "num_experts_per_tok": 8, "first_k_dense_replace": 1, "num_hidden_layers": 46,
    "num_key_value_heads": 8, "partial_rotary_factor": 0.5, "tie_word_embeddings": false,
    "torch_dtype": "bfloat16", "vocab_size": 151552}"#;

/// GLM-4.7's config as alibaba/rtp-llm's glm4_moe tests quote it ("GLM-4.7's real values").
const GLM47_CONFIG: &str = r#"{"architectures": ["Glm4MoeForCausalLM"], "hidden_size": 5120,
    "intermediate_size": 12288, "num_attention_heads": 96, "num_key_value_heads": 8,
    "head_dim": 128, "num_hidden_layers": 92, "vocab_size": 151552, "num_experts_per_tok": 8,
    "n_routed_experts": 160, "moe_intermediate_size": 1536, "n_shared_experts": 1,
    "first_k_dense_replace": 3, "use_qk_norm": true, "num_nextn_predict_layers": 1,
    "max_position_embeddings": 202752, "attention_bias": true, "tie_word_embeddings": false,
    "dtype": "bfloat16"}"#;

#[test]
fn public_config_copies_parse_to_the_bundled_models() {
    for (text, bundled, id) in [
        (AIR_CONFIG, "glm-4.5-air", "zai-org/GLM-4.5-Air"),
        (GLM47_CONFIG, "glm-4.6", "zai-org/GLM-4.7"),
    ] {
        let mut parsed = model_from_hf_config(text, Path::new("config.json")).unwrap();
        let by_name = load_model(id).unwrap();
        parsed.name.clone_from(&by_name.name);
        parsed.hf_id.clone_from(&by_name.hf_id);
        parsed.notes.clone_from(&by_name.notes);
        assert_eq!(parsed, by_name, "{id}");
        assert_eq!(by_name.name, bundled);
    }
}

#[test]
fn glm_checkpoint_names_resolve() {
    for (id, name, format) in [
        ("zai-org/GLM-4.5", "glm-4.5", WeightFormat::Bf16),
        ("zai-org/GLM-4.5-FP8", "glm-4.5", WeightFormat::Fp8),
        ("zai-org/GLM-4.5-Base", "glm-4.5", WeightFormat::Bf16),
        ("THUDM/GLM-4.5-Air", "glm-4.5-air", WeightFormat::Bf16),
        ("zai-org/GLM-4.5-Air-FP8", "glm-4.5-air", WeightFormat::Fp8),
        ("/models/GLM-4.6-FP8/", "glm-4.6", WeightFormat::Fp8),
        ("zai-org/GLM-4.6", "glm-4.6", WeightFormat::Bf16),
        ("zai-org/GLM-4.7-FP8", "glm-4.6", WeightFormat::Fp8),
    ] {
        let m = load_model(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!((m.name.as_str(), m.weights), (name, format), "{id}");
    }
    let m = load_model("zai-org/GLM-4.7").unwrap();
    assert!(m.notes.iter().any(|n| n.contains("slime")), "{:?}", m.notes);
    // GLM-4.7-Flash (Glm4MoeLiteForCausalLM, MLA) is refused, not priced as GLM-4.7.
    let e = load_model("zai-org/GLM-4.7-Flash").unwrap_err().to_string();
    assert!(
        e.contains("Glm4MoeLite") && e.contains("config.json"),
        "{e}"
    );
    assert!(load_model("zai-org/GLM-4.7-Flash-FP8").is_err());
}

fn eagle(draft: Option<&str>) -> SpeculativeFlags {
    SpeculativeFlags {
        speculative_algorithm: Some("EAGLE".into()),
        speculative_draft_model_path: draft.map(str::to_string),
        speculative_num_steps: Some(3),
        speculative_eagle_topk: Some(1),
        speculative_num_draft_tokens: Some(4),
        ..Default::default()
    }
}

#[test]
fn eagle_drafts_with_glms_own_mtp_layer() {
    // SGLang 0.4.10+ server_args.py: for Glm4MoeForCausalLM the draft path defaults to the
    // model path, and ModelConfig rewrites a Glm4MoeForCausalLM draft to
    // Glm4MoeForCausalLMNextN: one MoE decoder layer (glm4_moe_nextn.py, is_nextn=True).
    let target = load_model("zai-org/GLM-4.6-FP8").unwrap();
    let v = "0.5.6".parse().unwrap();
    for draft in [None, Some("zai-org/GLM-4.6-FP8"), Some("glm-4.6")] {
        let c = SpeculativeConfig::resolve(&eagle(draft), &target, v, 8)
            .unwrap()
            .unwrap();
        let d = c.draft.as_ref().unwrap();
        assert_eq!(d.architecture, "Glm4MoeForCausalLMNextN", "{draft:?}");
        assert_eq!(d.num_layers, 1, "{draft:?}");
        assert_eq!(d.moe.as_ref().unwrap().dense_layers, 0, "{draft:?}");
        // One layer's weights at TP 8, far below the target's (GLM-4.6 FP8 ≈ 44 GB a rank).
        assert!(c.draft_weight_bytes_per_rank < 1e9, "{draft:?}");
    }
    // 0.4.9 has no glm4_moe.py, so no default draft either.
    let old = "0.4.9".parse().unwrap();
    assert!(SpeculativeConfig::resolve(&eagle(None), &target, old, 8).is_err());
}
