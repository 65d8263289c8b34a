//! Architectures servesim does not price are refused in one line that names the architecture
//! and the mechanism (hybrid linear attention, Mamba, sparse attention, ...).
use servesim::spec::hf_config::model_from_hf_config;
use servesim::spec::hf_refuse::refused_architectures;
use std::path::Path;

#[test]
fn refused_architectures_say_why() {
    let base = std::fs::read_to_string(super::hf_path("meta-llama--Meta-Llama-3.1-405B")).unwrap();
    for (arch, mechanism) in [
        ("MiniMaxText01ForCausalLM", "linear) attention"),
        ("NemotronHForCausalLM", "Mamba"),
        ("DeepseekV32ForCausalLM", "sparse attention"),
        ("GlmMoeDsaForCausalLM", "sparse attention"),
        ("DeepseekV4ForCausalLM", "sparse attention"),
        ("Gemma4ForConditionalGeneration", "sliding"),
        ("MiMoV2FlashForCausalLM", "sliding-window"),
        ("Step3p7FlashForCausalLM", "sliding"),
        ("KimiK3ForConditionalGeneration", "linear"),
    ] {
        let text = base.replace("LlamaForCausalLM", arch);
        let e = model_from_hf_config(&text, Path::new("c.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(arch)
                && e.contains(mechanism)
                && e.contains("not priced")
                && !e.contains('\n'),
            "{arch}: {e}"
        );
    }
    assert!(refused_architectures().count() >= 10);
}

#[test]
fn minimax_lightning_layers_and_int4_weights_are_refused_with_the_reason() {
    let m2 = std::fs::read_to_string(super::hf_path("MiniMaxAI--MiniMax-M2.7")).unwrap();
    // M2.7 lists `attn_type_list` (all 1, softmax); a 0 is lightning attention.
    let text = m2.replacen(
        "\"attn_type_list\": [\n    1,",
        "\"attn_type_list\": [\n    0,",
        1,
    );
    assert_ne!(text, m2, "the edit applies");
    let e = model_from_hf_config(&text, Path::new("m.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("attn_type_list") && e.contains("lightning"),
        "{e}"
    );
    // Kimi-K2.5's experts: int4 weight-only compressed-tensors, named in the error.
    let k2 = std::fs::read_to_string(super::hf_path("moonshotai--Kimi-K2-Instruct")).unwrap();
    let text = k2.replace(
        r#""quant_method": "fp8","#,
        r#""quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int"}, "input_activations": null}},"#,
    );
    let e = model_from_hf_config(&text, Path::new("k.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("int4 weights") && e.contains("unsupported"),
        "{e}"
    );
}

/// A checkpoint named by id whose architecture is refused says why by name (the same reason a
/// config.json would get), rather than "not bundled, pass its config.json"; builds of those
/// names too, and a same-architecture DeepSeek build still resolves.
#[test]
fn refused_architectures_are_refused_by_checkpoint_name() {
    use servesim::spec::bundled::load_model;
    for (id, arch, mechanism) in [
        (
            "deepseek-ai/DeepSeek-V3.2-Exp",
            "DeepseekV32ForCausalLM",
            "sparse attention",
        ),
        (
            "zai-org/GLM-5-FP8",
            "GlmMoeDsaForCausalLM",
            "sparse attention",
        ),
        (
            "MiniMaxAI/MiniMax-M3",
            "MiniMaxM3ForCausalLM",
            "block-sparse",
        ),
    ] {
        let e = load_model(id).unwrap_err().to_string();
        assert!(
            e.contains(arch) && e.contains(mechanism) && !e.contains("config.json"),
            "{id}: {e}"
        );
    }
    assert!(load_model("deepseek-ai/DeepSeek-V3.1").is_ok());
}

/// Gemma-2 and Gemma-4 checkpoints, and a Gemma2ForCausalLM config.json, are refused with the
/// mechanism; NVIDIA's Kimi-K2.6 NVFP4 build (Kimi-K2.5's sizes) is priced as NVFP4.
#[test]
fn gemma_2_and_4_are_refused_and_kimi_k2_6_nvfp4_resolves() {
    use servesim::spec::bundled::load_model;
    use servesim::spec::model::WeightFormat;
    for (id, arch, mechanism) in [
        ("google/gemma-2-27b-it", "Gemma2ForCausalLM", "soft-capping"),
        (
            "google/gemma-2-9b-it",
            "Gemma2ForCausalLM",
            "every other layer",
        ),
        (
            "google/gemma-4-31B-it",
            "Gemma4ForConditionalGeneration",
            "SWA pool",
        ),
        (
            "nvidia/Gemma-4-26B-A4B-NVFP4",
            "Gemma4ForConditionalGeneration",
            "K=V",
        ),
    ] {
        let e = load_model(id).unwrap_err().to_string();
        assert!(
            e.contains(arch) && e.contains(mechanism) && !e.contains('\n'),
            "{id}: {e}"
        );
    }
    assert!(load_model("google/gemma-3-27b-it").is_ok());
    let base = std::fs::read_to_string(super::hf_path("meta-llama--Meta-Llama-3.1-405B")).unwrap();
    let text = base.replace("LlamaForCausalLM", "Gemma2ForCausalLM");
    let e = model_from_hf_config(&text, Path::new("g.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("not priced") && e.contains("soft-capping"),
        "{e}"
    );
    let m = load_model("nvidia/Kimi-K2.6-NVFP4").unwrap();
    let k25 = load_model("moonshotai/Kimi-K2.5").unwrap();
    assert_eq!(m.weights, WeightFormat::Nvfp4);
    assert_eq!(
        (m.num_layers, &m.moe, &m.mla),
        (k25.num_layers, &k25.moe, &k25.mla)
    );
}
