//! The Hugging Face configs servesim bundles (models/hf/, copied verbatim from
//! aiconfigurator-core 0.12.0 by scripts/import_model_configs.py) and the architectures added
//! for them: each parses, and its parameter counts match the total and active parameters its
//! publisher states (an independent source: model cards and release posts, quoted per case).
use servesim::spec::hf_config::model_from_hf_config;
use servesim::spec::model::{ModelSpec, WeightFormat};
use std::path::{Path, PathBuf};

#[path = "../common/mod.rs"]
mod common;
mod downstream;
mod glm;
mod kimi_k25;
mod llama4;
mod names;
mod nvfp4;
mod qwen35;
mod refusals;
mod stand_ins;

fn hf_path(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models/hf")
        .join(format!("{file}.json"))
}

fn parse(file: &str) -> ModelSpec {
    let path = hf_path(file);
    let text = std::fs::read_to_string(&path).unwrap();
    model_from_hf_config(&text, &path).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Every parameter the spec counts (weights + embedding + LM head + vision tower), from the
/// bf16 weight bytes at TP 1.
fn total_params(m: &ModelSpec) -> f64 {
    m.weight_bytes_per_rank(1, WeightFormat::Bf16) / 2.0
}

/// Parameters one token touches: attention, dense MLP or shared expert, `experts_per_token`
/// routed experts and the router of every layer, plus embedding and LM head (the convention of
/// Mistral's and Moonshot's "active parameters").
fn active_params(m: &ModelSpec) -> f64 {
    let topk = m.moe.as_ref().map_or(0, |e| e.experts_per_token) as f64;
    let layers: f64 = (0..m.num_layers)
        .map(|i| {
            let p = m.layer_params(i, 1);
            p.attention + p.dense_mlp + p.shared_expert + topk * p.expert + p.router
        })
        .sum();
    let embed = (m.vocab_size * m.hidden_size) as f64;
    layers
        + if m.tie_word_embeddings {
            embed
        } else {
            2.0 * embed
        }
}

/// `got` within `tol` (relative) of the published `want`, in billions.
fn near(what: &str, got: f64, want_b: f64, tol: f64) {
    let got_b = got / 1e9;
    assert!(
        (got_b / want_b - 1.0).abs() <= tol,
        "{what}: {got_b:.2}B counted, {want_b}B published (±{:.0}%)",
        tol * 100.0
    );
}

#[test]
fn mixtral_matches_mistral_published_sizes() {
    // mistral.ai/news/mixtral-of-experts: "Mixtral has 46.7B total parameters but only uses
    // 12.9B parameters per token."
    let m = parse("mistralai--Mixtral-8x7B-v0.1");
    let moe = m.moe.as_ref().unwrap();
    assert_eq!((moe.num_experts, moe.experts_per_token), (8, 2));
    assert_eq!(
        (moe.shared_expert_intermediate_size, moe.dense_layers),
        (0, 0)
    );
    assert_eq!(moe.expert_intermediate_size, 14336);
    near("Mixtral-8x7B total", total_params(&m), 46.7, 0.005);
    near("Mixtral-8x7B active", active_params(&m), 12.9, 0.005);
    // mistral.ai/news/mixtral-8x22b: "39B active parameters out of 141B".
    let m = parse("mistralai--Mixtral-8x22B-v0.1");
    near("Mixtral-8x22B total", total_params(&m), 141.0, 0.005);
    near("Mixtral-8x22B active", active_params(&m), 39.0, 0.02);
}

#[test]
fn minimax_m2_matches_its_model_card() {
    // huggingface.co/MiniMaxAI/MiniMax-M2 (M2.5 and M2.7 share the architecture): "230 billion
    // total parameters with 10 billion active parameters".
    for file in ["MiniMaxAI--MiniMax-M2.5", "MiniMaxAI--MiniMax-M2.7"] {
        let m = parse(file);
        let moe = m.moe.as_ref().unwrap();
        assert_eq!((moe.num_experts, moe.experts_per_token), (256, 8), "{file}");
        assert_eq!(moe.shared_expert_intermediate_size, 0, "{file}");
        assert_eq!(m.weights, WeightFormat::Fp8, "{file}");
        assert!(!m.qkv_bias, "{file}");
        near(file, total_params(&m), 230.0, 0.01);
        // 10B is rounded to 2 significant digits: 9.5–10.5B, and the card counts no embedding.
        let embed = 2.0 * (m.vocab_size * m.hidden_size) as f64;
        near(file, active_params(&m) - embed, 10.0, 0.05);
    }
}

#[test]
fn kimi_k2_and_deepseek_r1_match_their_cards() {
    // huggingface.co/moonshotai/Kimi-K2-Instruct: "32 billion activated parameters and 1
    // trillion total parameters".
    let m = parse("moonshotai--Kimi-K2-Instruct");
    assert_eq!(m.moe.as_ref().unwrap().num_experts, 384);
    near("Kimi-K2 total", total_params(&m), 1000.0, 0.05);
    near("Kimi-K2 active", active_params(&m), 32.0, 0.05);
    // huggingface.co/deepseek-ai/DeepSeek-R1: "671B total parameters, 37B activated" (the
    // 685B on the Hub adds the 14B MTP module, which servesim does not load).
    let m = parse("deepseek-ai--DeepSeek-R1");
    near("DeepSeek-R1 total", total_params(&m), 671.0, 0.01);
    near("DeepSeek-R1 active", active_params(&m), 37.0, 0.03);
}

#[test]
fn qwen3_vl_counts_text_and_vision() {
    // Qwen3-VL model cards' names give total / active sizes (30B-A3B, 235B-A22B; the Qwen3 text
    // model cards: 30.5B total / 3.3B active, 235B / 22B). The vision tower adds ~0.4-0.6B.
    let m = parse("Qwen--Qwen3-VL-30B-A3B-Instruct");
    assert_eq!(m.architecture, "Qwen3VLMoeForConditionalGeneration");
    assert_eq!(m.name, "Qwen--Qwen3-VL-30B-A3B-Instruct");
    let moe = m.moe.as_ref().unwrap();
    assert_eq!((moe.num_experts, moe.experts_per_token), (128, 8));
    near(
        "Qwen3-VL-30B-A3B text",
        total_params(&m) - m.vision_params as f64,
        30.5,
        0.01,
    );
    near("Qwen3-VL-30B-A3B active", active_params(&m), 3.3, 0.03);
    let m = parse("Qwen--Qwen3-VL-235B-A22B-Instruct");
    near(
        "Qwen3-VL-235B-A22B",
        total_params(&m) - m.vision_params as f64,
        235.0,
        0.01,
    );
    near("Qwen3-VL-235B-A22B active", active_params(&m), 22.0, 0.03);
    // Qwen3-8B's card: "Number of Parameters: 8.2B"; Qwen3-VL-8B's text decoder is the same
    // shape. Its vision tower by hand (vision_config: hidden 1152, MLP 4304, depth 27, patch
    // 16, temporal 2, 3 channels, 2304 positions, merge 2, out 4096, 3 deepstack mergers):
    // patch embed 3·2·16²·1152 + 1152 = 1,770,624; positions 2304·1152 = 2,654,208; a block
    // 4·1152² + 4·1152 (qkv, proj) + 2·1152·4304 + 4304 + 1152 (MLP) + 4·1152 (2 LayerNorms)
    // = 15,239,504, × 27 = 411,466,608; a merger 4608² + 4608 + 4608·4096 + 4096 = 40,116,736
    // plus its LayerNorm (2·1152 for the main one, 2·4608 for the 3 deepstack ones).
    let m = parse("Qwen--Qwen3-VL-8B-Instruct");
    assert_eq!(m.architecture, "Qwen3VLForConditionalGeneration");
    let vision =
        1_770_624 + 2_654_208 + 411_466_608 + (40_116_736 + 2304) + 3 * (40_116_736 + 9216);
    assert_eq!(m.vision_params, vision);
    near(
        "Qwen3-VL-8B text",
        total_params(&m) - m.vision_params as f64,
        8.2,
        0.01,
    );
    // Small ones tie the embedding (top-level and text_config `tie_word_embeddings: true`).
    assert!(parse("Qwen--Qwen3-VL-2B-Instruct").tie_word_embeddings);
}

#[test]
fn dense_additions_match_their_cards() {
    // Qwen3-0.6B / 1.7B cards: "Number of Parameters: 0.6B ... 1.7B" (tied embeddings).
    near(
        "Qwen3-0.6B",
        total_params(&parse("Qwen--Qwen3-0.6B")),
        0.6,
        0.05,
    );
    near(
        "Qwen3-1.7B",
        total_params(&parse("Qwen--Qwen3-1.7B")),
        1.7,
        0.05,
    );
    // Llama 3.1 405B.
    near(
        "Llama-3.1-405B",
        total_params(&parse("meta-llama--Meta-Llama-3.1-405B")),
        405.0,
        0.01,
    );
}

#[test]
fn mistral_is_llama_shaped_with_full_attention() {
    // MistralForCausalLM is SGLang's LlamaForCausalLM (models/mistral.py): a sliding_window in
    // the config does not change the KV cache SGLang keeps.
    let text = std::fs::read_to_string(hf_path("meta-llama--Meta-Llama-3.1-405B"))
        .unwrap()
        .replace("LlamaForCausalLM", "MistralForCausalLM")
        .replace(
            "\"max_position_embeddings\"",
            "\"sliding_window\": 4096, \"max_position_embeddings\"",
        );
    let m = model_from_hf_config(&text, Path::new("m.json")).unwrap();
    assert_eq!(m.architecture, "MistralForCausalLM");
    assert_eq!(m.sliding_window, None);
    assert_eq!(m.num_layers, 126);
}

#[test]
fn every_bundled_config_resolves_by_id_short_name_and_path() {
    use servesim::spec::bundled::load_model;
    use servesim::spec::bundled_hf::bundled_hf;
    let mut files: Vec<String> = std::fs::read_dir(hf_path("x").parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            p.file_stem()
                .unwrap()
                .to_string_lossy()
                .replacen("--", "/", 1)
        })
        .collect();
    files.sort();
    let mut ids: Vec<String> = bundled_hf().map(|b| b.hf_id()).collect();
    ids.sort();
    assert_eq!(files, ids, "models/hf/ vs bundled_hf.rs");
    for b in bundled_hf() {
        let id = b.hf_id();
        let by_id = load_model(&id).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(by_id.hf_id.as_deref(), Some(id.as_str()));
        assert_eq!(by_id.name, b.short_name());
        // The same text as the file on disk (verbatim copy).
        let file = hf_path(&id.replacen('/', "--", 1));
        assert_eq!(b.text, std::fs::read_to_string(&file).unwrap());
        let by_short = load_model(&b.short_name()).unwrap();
        let by_path =
            load_model(&format!("/no/such/dir/{}/", id.split('/').nth(1).unwrap())).unwrap();
        assert_eq!(by_short, by_id, "{id} by short name");
        assert_eq!(by_path, by_id, "{id} by a --model-path ending in its name");
        let by_file = load_model(file.to_str().unwrap()).unwrap();
        assert_eq!(by_file.num_layers, by_id.num_layers, "{id} by its file");
    }
    // Two configs with the same text stay two models.
    let t = load_model("Qwen/Qwen3-VL-32B-Thinking").unwrap();
    assert_eq!(t.name, "qwen3-vl-32b-thinking");
    // The bundled YAML models keep priority.
    assert_eq!(load_model("Qwen/Qwen3-8B").unwrap().name, "qwen3-8b");
}

#[test]
fn glm4_moe_layout_by_hand() {
    // No verbatim GLM-4.5/4.6 config.json was found to bundle; the layout SGLang's
    // glm4_moe.py builds, on a tiny config counted by hand: hidden 64, 4 heads and 2 KV heads
    // of 16, 3 layers, the first dense (128 wide), then 8 experts of 32 (top-2) plus 1 shared.
    let text = r#"{"architectures": ["Glm4MoeForCausalLM"], "attention_bias": true,
        "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "num_hidden_layers": 3, "first_k_dense_replace": 1, "intermediate_size": 128,
        "moe_intermediate_size": 32, "n_routed_experts": 8, "n_shared_experts": 1,
        "num_experts_per_tok": 2, "vocab_size": 100, "max_position_embeddings": 4096,
        "partial_rotary_factor": 0.5, "use_qk_norm": true, "num_nextn_predict_layers": 1}"#;
    let m = model_from_hf_config(text, Path::new("glm.json")).unwrap();
    assert!(m.qkv_bias);
    let moe = m.moe.as_ref().unwrap();
    assert_eq!(
        (moe.dense_layers, moe.shared_expert_intermediate_size),
        (1, 32)
    );
    // Attention 64·64 + 2·64·32 + 64·64 = 12,288 a layer; dense MLP 3·64·128 = 24,576; an MoE
    // layer 8 experts × 3·64·32 = 49,152 + shared 6,144 + router 512; embedding + LM head
    // 2·100·64 = 12,800.
    assert_eq!(
        total_params(&m),
        (3 * 12_288 + 24_576 + 2 * (49_152 + 6_144 + 512) + 12_800) as f64
    );
    assert_eq!(
        active_params(&m),
        (3 * 12_288 + 24_576 + 2 * (2 * 6_144 + 6_144 + 512) + 12_800) as f64
    );
}

#[test]
fn importer_notice_and_bundle_agree() {
    // scripts/import_model_configs.py is the only way a file enters models/hf/: every
    // bundled stem is in one of its lists, every listed stem is bundled, and every wheel
    // sha256 it pins is the one NOTICE names (an added wheel needs both).
    use servesim::spec::bundled_hf::bundled_hf;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = std::fs::read_to_string(root.join("scripts/import_model_configs.py")).unwrap();
    let notice = std::fs::read_to_string(root.join("NOTICE")).unwrap();
    let mut listed: Vec<String> = script
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix('"')?.strip_suffix("\",").map(str::to_string))
        .filter(|s| s.contains("--"))
        .collect();
    listed.sort();
    let mut bundled: Vec<String> = bundled_hf()
        .map(|b| b.hf_id().replacen('/', "--", 1))
        .collect();
    bundled.sort();
    assert_eq!(listed, bundled);
    let pins: Vec<&str> = script
        .lines()
        .filter(|l| l.contains("SHA256 = \""))
        .filter_map(|l| l.split('"').nth(1))
        .collect();
    assert_eq!(pins.len(), 3, "0.12.0, 0.7.0 and 0.10.0 wheels");
    for pin in pins {
        assert_eq!(pin.len(), 64);
        assert!(notice.contains(pin), "NOTICE lacks the pinned wheel {pin}");
    }
}
