//! Checkpoints named by id with no file here (`spec::checkpoint_name`): the Qwen2.5 and Llama-2
//! configs bundled from aiconfigurator 0.7.0 match their publishers' sizes; a checkpoint name's
//! weight format is priced (`-FP8`, `quantized.w8a8`) or refused (AWQ, GPTQ, FP4), never
//! dropped; same-architecture builds resolve to their stand-in with a note.
use super::{near, parse, total_params};
use servesim::spec::bundled::load_model;
use servesim::spec::model::WeightFormat;

#[test]
fn qwen2_5_and_llama_2_match_their_cards() {
    // Qwen2.5 model cards, "Number of Parameters": 1.54B, 7.61B, 32.5B, 72.7B (biased q/k/v,
    // 1.5B ties its embedding).
    for (file, want_b) in [
        ("Qwen--Qwen2.5-1.5B", 1.54),
        ("Qwen--Qwen2.5-7B", 7.61),
        ("Qwen--Qwen2.5-32B", 32.5),
        ("Qwen--Qwen2.5-72B", 72.7),
    ] {
        let m = parse(file);
        assert!(m.qkv_bias, "{file}: Qwen2 projects q/k/v with bias");
        assert_eq!(m.sliding_window, None, "{file}: use_sliding_window false");
        near(file, total_params(&m), want_b, 0.01);
    }
    // Llama 2 paper (Touvron et al. 2023), Table 1 / the model cards: 7B, 13B, 70B (the
    // checkpoints hold 6.74B, 13.0B, 69.0B).
    for (file, want_b) in [
        ("meta-llama--Llama-2-7b-hf", 6.74),
        ("meta-llama--Llama-2-13b-hf", 13.0),
        ("meta-llama--Llama-2-70b-hf", 69.0),
    ] {
        near(file, total_params(&parse(file)), want_b, 0.01);
    }
}

#[test]
fn a_quantized_checkpoint_name_sets_the_weight_format() {
    let m = load_model("Qwen/Qwen3-32B-FP8").unwrap();
    assert_eq!(m.weights, WeightFormat::Fp8);
    assert!(m
        .notes
        .iter()
        .any(|n| n.contains("fp8") && n.contains("Qwen3-32B-FP8")));
    // FP8 weights are about half the bf16 bytes (Qwen3-32B: 32.8B parameters).
    let bf16 = load_model("Qwen/Qwen3-32B").unwrap();
    assert_eq!(bf16.weights, WeightFormat::Bf16);
    assert!(bf16.notes.is_empty());
    let m = load_model("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8").unwrap();
    assert_eq!(m.weights, WeightFormat::W8a8Int8);
    let m = load_model("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8").unwrap();
    assert_eq!(
        (m.name.as_str(), m.weights),
        ("qwen3-235b-a22b", WeightFormat::Fp8)
    );
    // DeepSeek-V3 ships FP8: an unmarked re-release keeps it, with no note.
    let m = load_model("deepseek-ai/DeepSeek-V3-0324").unwrap();
    assert_eq!(m.weights, WeightFormat::Fp8);
    assert!(m.notes.is_empty());
}

#[test]
fn unpriced_formats_are_refused_by_name() {
    for (id, what) in [
        ("Qwen/Qwen2.5-72B-Instruct-AWQ", "AWQ"),
        ("Qwen/Qwen3-32B-GPTQ-Int4", "GPTQ"),
        // NVIDIA's own -FP4 / any -NVFP4 build is priced (tests/hf_models/nvfp4.rs); another
        // publisher's bare -FP4 names no known scheme.
        ("someone/Qwen3-8B-FP4", "FP4"),
        ("unsloth/Qwen3-8B-bnb-4bit", "bitsandbytes"),
        ("someone/Llama-3.1-8B-MXFP4", "MoE experts only"),
    ] {
        let e = load_model(id).expect_err(id).to_string();
        assert!(e.contains(id) && e.contains(what), "{id}: {e}");
        assert_eq!(e.lines().count(), 1, "{id}: {e}");
    }
}

#[test]
fn same_architecture_builds_resolve_with_a_note() {
    // oumi-ai/oumi's Llama 3.3 table: 80 layers, hidden 8192, MLP 28,672, 64 / 8 heads,
    // vocab 128,256.
    let m = load_model("meta-llama/Llama-3.3-70B-Instruct").unwrap();
    assert_eq!(
        (m.num_layers, m.hidden_size, m.intermediate_size),
        (80, 8192, 28672)
    );
    assert_eq!(
        (m.num_attention_heads, m.num_kv_heads, m.vocab_size),
        (64, 8, 128256)
    );
    assert!(m.notes.iter().any(|n| n.contains("llama-3.1-70b")));
    // Its FP8 build: both the stand-in and the format.
    let m = load_model("nvidia/Llama-3.3-70B-Instruct-FP8").unwrap();
    assert_eq!((m.num_layers, m.weights), (80, WeightFormat::Fp8));
    // DeepSeek's distills keep their bases' shapes (Qwen2.5-32B: 64 layers, hidden 5120).
    let m = load_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B").unwrap();
    assert_eq!((m.num_layers, m.hidden_size, m.qkv_bias), (64, 5120, true));
    // A dated re-release of a bundled config resolves by prefix: R1-0528 is MLA, 61 layers.
    let m = load_model("deepseek-ai/DeepSeek-R1-0528").unwrap();
    assert!(m.mla.is_some());
    assert_eq!(m.num_layers, 61);
    let m = load_model("mistralai/Mixtral-8x7B-Instruct-v0.1").unwrap();
    let moe = m.moe.as_ref().unwrap();
    assert_eq!((moe.num_experts, moe.experts_per_token), (8, 2));
    // Bundled configs named with Meta's prefix match without it, suffix and all.
    let m = load_model("meta-llama/Llama-3.1-405B-Instruct-FP8").unwrap();
    assert_eq!((m.num_layers, m.weights), (126, WeightFormat::Fp8));
    // MiniMax-M2 (card: 230B total / 10B active) is the bundled M2.5's architecture.
    let m = load_model("MiniMaxAI/MiniMax-M2").unwrap();
    assert_eq!(m.moe.as_ref().unwrap().num_experts, 256);
    near("MiniMax-M2", total_params(&m), 230.0, 0.01);
    // DeepSeek-V3.2 is a different architecture (sparse attention): never the V3 stand-in.
    let e = load_model("deepseek-ai/DeepSeek-V3.2")
        .unwrap_err()
        .to_string();
    assert!(e.contains("DeepseekV32ForCausalLM"), "{e}");
}

#[test]
fn mistral_checkpoint_names_resolve() {
    // Mistral-7B v0.1 / v0.2 (vocab 32,000) and v0.3 (32,768, its card), NeMo (131,072).
    for (id, name, vocab) in [
        ("mistralai/Mistral-7B-v0.1", "mistral-7b-v0.1", 32_000),
        (
            "mistralai/Mistral-7B-Instruct-v0.1",
            "mistral-7b-v0.1",
            32_000,
        ),
        (
            "mistralai/Mistral-7B-Instruct-v0.2",
            "mistral-7b-v0.1",
            32_000,
        ),
        (
            "mistralai/Mistral-7B-Instruct-v0.3",
            "mistral-7b-v0.3",
            32_768,
        ),
        ("mistralai/Mistral-7B-v0.3", "mistral-7b-v0.3", 32_768),
        (
            "mistralai/Mistral-Nemo-Instruct-2407",
            "mistral-nemo-base-2407",
            131_072,
        ),
    ] {
        let m = load_model(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!((m.name.as_str(), m.vocab_size), (name, vocab), "{id}");
        assert_eq!(m.architecture, "MistralForCausalLM", "{id}");
        // SGLang's MistralForCausalLM is its LlamaForCausalLM: no sliding window.
        assert_eq!(m.sliding_window, None, "{id}");
    }
    // NeMo's heads are 128 wide on a 5120 hidden size (head_dim explicit in its config).
    let m = load_model("mistralai/Mistral-Nemo-Base-2407").unwrap();
    assert_eq!((m.hidden_size, m.head_dim, m.num_layers), (5120, 128, 40));
    let m = load_model("neuralmagic/Mistral-7B-Instruct-v0.3-FP8").unwrap();
    assert_eq!(m.weights, WeightFormat::Fp8);
}

/// A checkpoint resolved by name keeps the id it was named by: the launch command `plan`
/// prints deploys that checkpoint (`zai-org/GLM-4.6-FP8`), not the bundled stand-in
/// (`zai-org/GLM-4.6`, twice the weight bytes) it was priced with.
#[test]
fn a_checkpoint_resolved_by_name_keeps_its_id_in_the_launch_command() {
    use servesim::plan::launch::sglang_launch_server;
    use servesim::simulation::Scenario;
    use servesim::spec::server::ServerFlags;
    use servesim::spec::workload::{ClientFlags, ScenarioFile};
    let id = "zai-org/GLM-4.6-FP8";
    assert_eq!(load_model(id).unwrap().hf_id.as_deref(), Some(id));
    let flags = ServerFlags {
        tp: Some(8),
        ..Default::default()
    };
    let sc = Scenario::resolve(
        &ScenarioFile::default(),
        Some("h200-sxm-141gb"),
        Some(id),
        &flags,
        &ClientFlags::default(),
    )
    .unwrap();
    let launch = sglang_launch_server(&sc);
    assert!(launch.contains(&format!("--model-path {id} ")), "{launch}");
    assert!(!launch.contains("--quantization"), "{launch}");
}
