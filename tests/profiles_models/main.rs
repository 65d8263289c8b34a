//! The bundled hardware profiles and models: every file is registered and valid, the derived
//! sizes match the reference (/work/shared/reference/hardware-and-models.md §3), the Hugging
//! Face config reader agrees with the bundled YAML, and bad inputs give errors that name the
//! file, line or field.
use servesim::spec::bundled::{
    hardware_names, hardware_yaml, load_hardware, load_model, model_names, model_yaml,
};
use servesim::spec::hf_config::model_from_hf_config;
use servesim::spec::model::{KvDtype, ModelSpec, WeightFormat};
use std::path::{Path, PathBuf};

#[path = "../common/mod.rs"]
mod common;
mod gemma3;
mod h200_runs;
mod hccl;
mod logged_pools;
mod new_gpus;
mod pcie_gpus;
mod sourced;
mod swa_pools;
mod versions;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The stems of the `.yaml` files in `dir`, sorted.
fn yaml_stems(dir: &str) -> Vec<String> {
    let mut stems: Vec<String> = std::fs::read_dir(crate_dir().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    stems.sort();
    stems
}

fn sorted(mut v: Vec<&str>) -> Vec<String> {
    v.sort();
    v.into_iter().map(String::from).collect()
}

/// A scratch file in the temp directory, unique to this test process.
fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("servesim-profiles-models-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn every_hardware_file_is_bundled_and_valid() {
    let files = yaml_stems("hardware-profiles");
    assert_eq!(
        files,
        sorted(hardware_names()),
        "hardware-profiles/ vs bundled.rs"
    );
    for name in &files {
        let hw = load_hardware(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&hw.name, name, "the `name` field matches the file name");
        let path = crate_dir()
            .join("hardware-profiles")
            .join(format!("{name}.yaml"));
        assert_eq!(
            hardware_yaml(name).unwrap(),
            std::fs::read_to_string(&path).unwrap()
        );
        assert_eq!(
            load_hardware(path.to_str().unwrap()).unwrap(),
            hw,
            "{name} by path"
        );
    }
}

#[test]
fn every_model_file_is_bundled_and_valid() {
    let files = yaml_stems("models");
    assert_eq!(files, sorted(model_names()), "models/ vs bundled.rs");
    for name in &files {
        let m = load_model(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&m.name, name, "the `name` field matches the file name");
        let path = crate_dir().join("models").join(format!("{name}.yaml"));
        assert_eq!(
            model_yaml(name).unwrap(),
            std::fs::read_to_string(&path).unwrap()
        );
        assert_eq!(
            load_model(path.to_str().unwrap()).unwrap(),
            m,
            "{name} by path"
        );
    }
}

#[test]
fn hardware_profiles_have_the_expected_shape() {
    for name in hardware_names() {
        let hw = load_hardware(name).unwrap();
        let backends: Vec<&str> = hw.efficiency.attention.keys().map(String::as_str).collect();
        let expected: &[&str] = match hw.arch {
            servesim::spec::hardware::Arch::Hopper => &["fa3", "flashinfer", "triton"],
            // Ada and sm120 run no fa3 and no trtllm kernels in SGLang (pcie_gpus.rs).
            servesim::spec::hardware::Arch::Ampere
            | servesim::spec::hardware::Arch::Ada
            | servesim::spec::hardware::Arch::Sm120 => &["flashinfer", "triton"],
            servesim::spec::hardware::Arch::Blackwell => {
                &["flashinfer", "triton", "trtllm_mha", "trtllm_mla"]
            }
            _ => &["ascend"],
        };
        assert_eq!(backends, expected, "{name}");
        // A GB200 compute tray (one host) holds 4 GPUs; the NVL72 rack's NVLink joins the trays.
        let per_node = match name {
            "ascend-a3" => 16,
            "gb200-186gb" => 4,
            _ => 8,
        };
        assert_eq!(hw.link.devices_per_node, per_node, "{name}");
        assert!(
            hw.memory.free_at_start_gib * 1024.0 < hw.memory.reported_total_mib,
            "{name}"
        );
        // The profiles with recorded runs are fitted (issue 4), jointly since issue 12: h100 by
        // its one run (001) and the constants shared with the others; the others say they are
        // not. h200 was fitted on seed 004 until 004 turned out to be a B200 run (issue 12):
        // reset; b200 is left out of the joint fit (004's early-Blackwell SGLang is reported
        // apart).
        let cal = hw.calibration.as_deref().unwrap_or_default();
        if ["a100-sxm4-80gb", "ascend-a3", "h100-sxm5-80gb"].contains(&name) {
            assert!(
                cal.starts_with("fitted 2026-11-2")
                    && cal.contains("2026-11-23 by `servesim calibrate` jointly"),
                "{name}: {cal}"
            );
        } else {
            assert_eq!(cal, "datasheet defaults; not fitted", "{name}");
        }
    }
}

const MS24: &str = "mistral-small-24b-instruct-2501";

fn rel_err(got: f64, want: f64) -> f64 {
    (got - want).abs() / want
}

#[test]
fn weight_bytes_match_reference() {
    // (model, format, reference bytes, tolerance): reference §3.
    let cases = [
        ("qwen2.5-0.5b", WeightFormat::Bf16, 0.988e9, 0.015),
        ("qwen3-8b", WeightFormat::Bf16, 16.38e9, 0.015),
        ("qwen3-32b", WeightFormat::Bf16, 65.52e9, 0.015),
        ("qwen3-30b-a3b", WeightFormat::Bf16, 61.06e9, 0.015),
        ("qwen3-235b-a22b", WeightFormat::Bf16, 470.2e9, 0.015),
        ("qwen3-coder-480b-a35b", WeightFormat::Bf16, 960.3e9, 0.015),
        ("llama-3.1-8b", WeightFormat::Bf16, 16.06e9, 0.015),
        ("llama-3.1-70b", WeightFormat::Bf16, 141.11e9, 0.015),
        ("gpt-oss-20b", WeightFormat::Mxfp4, 13.76e9, 0.03),
        ("gpt-oss-120b", WeightFormat::Mxfp4, 65.25e9, 0.03),
        ("deepseek-v3", WeightFormat::Fp8, 673e9, 0.02),
        // Meta's Llama-3.2-3B card: 3.21B parameters (tied embedding).
        ("llama-3.2-3b", WeightFormat::Bf16, 6.42e9, 0.015),
        // Qwen3-14B card: "Number of Parameters: 14.8B".
        ("qwen3-14b", WeightFormat::Bf16, 29.6e9, 0.015),
        // Meta's Llama-3.2-1B card: 1.23B parameters (tied embedding).
        ("llama-3.2-1b", WeightFormat::Bf16, 2.46e9, 0.015),
        // Qwen3's card: Qwen3-4B, 4.0B parameters (tied embedding).
        ("qwen3-4b", WeightFormat::Bf16, 8.0e9, 0.015),
        // zai-org/GLM-4.5 README: 355B total (GLM-4.5; GLM-4.6 the same stack), 106B
        // (GLM-4.5-Air); the MTP layer is not counted by servesim.
        ("glm-4.5", WeightFormat::Bf16, 2.0 * 355e9, 0.015),
        ("glm-4.5-air", WeightFormat::Bf16, 2.0 * 106e9, 0.015),
        ("glm-4.6", WeightFormat::Bf16, 2.0 * 355e9, 0.015),
        // Mistral's Mistral 7B announcement: "a 7.3B parameter model" (v0.3 adds 768 tokens
        // to the vocabulary); Mistral NeMo's: "a 12B model" (a round figure, so 3%).
        ("mistral-7b-v0.1", WeightFormat::Bf16, 2.0 * 7.3e9, 0.015),
        ("mistral-7b-v0.3", WeightFormat::Bf16, 2.0 * 7.3e9, 0.015),
        (
            "mistral-nemo-base-2407",
            WeightFormat::Bf16,
            2.0 * 12e9,
            0.03,
        ),
        // Gemma 3 Technical Report (arXiv 2503.19786) Table 1, vision encoder + embedding +
        // non-embedding parameters: 1B 0 + 302M + 698M, 4B 417M + 675M + 3,209M, 12B 417M +
        // 1,012M + 10,759M, 27B 417M + 1,416M + 25,600M (tied embedding; norms not counted).
        ("gemma-3-1b-it", WeightFormat::Bf16, 2.0 * 1.000e9, 0.003),
        ("gemma-3-4b-it", WeightFormat::Bf16, 2.0 * 4.301e9, 0.003),
        ("gemma-3-12b-it", WeightFormat::Bf16, 2.0 * 12.188e9, 0.003),
        ("gemma-3-27b-it", WeightFormat::Bf16, 2.0 * 27.433e9, 0.003),
        // Microsoft's phi-4 card: "14B parameters"; by hand 2·100,352·5120 + 40 × (65,536,000
        // attention + 275,251,200 MLP) = 14,659,092,480 (the Hub's 14.7B).
        ("phi-4", WeightFormat::Bf16, 2.0 * 14_659_092_480.0, 1e-9),
        // Mistral's card: "24 billion parameters" (a round figure, so 3%).
        (MS24, WeightFormat::Bf16, 2.0 * 24e9, 0.03),
        ("qwen3-next-80b-a3b", WeightFormat::Bf16, 160e9, 0.01), // Qwen: 80B total
    ];
    assert_eq!(
        cases.len(),
        model_names().len(),
        "every bundled model has a case"
    );
    for (name, format, want, tol) in cases {
        let m = load_model(name).unwrap();
        assert_eq!(m.weights, format, "{name}: default weight format");
        let got = m.weight_bytes_per_rank(1, format);
        assert!(
            rel_err(got, want) < tol,
            "{name}: {got:.4e} B vs reference {want:.4e} B"
        );
    }
    // Llama-3.1-8B: exact parameter count minus the norms (reference 8,030,261,248 incl. 65 norms).
    let llama = load_model("llama-3.1-8b").unwrap();
    assert_eq!(
        llama.weight_bytes_per_rank(1, WeightFormat::Bf16),
        2.0 * (8_030_261_248.0 - 65.0 * 4096.0)
    );
}

#[test]
fn kv_bytes_per_token_match_reference() {
    let cases = [
        ("qwen2.5-0.5b", 12288.0),
        ("qwen3-8b", 147456.0),
        ("qwen3-32b", 262144.0),
        ("qwen3-30b-a3b", 98304.0),
        ("qwen3-235b-a22b", 192512.0),
        ("qwen3-coder-480b-a35b", 253952.0),
        ("llama-3.1-8b", 131072.0),
        ("llama-3.1-70b", 327680.0),
        ("gpt-oss-20b", 49152.0), // every layer counted (naive_all_layers)
        ("gpt-oss-120b", 73728.0),
        ("deepseek-v3", 70272.0),
        // 2 (K, V) × layers × KV heads × head_dim × 2 bytes: 28 × 8 × 128 and 40 × 8 × 128.
        ("llama-3.2-3b", 2.0 * 28.0 * 8.0 * 128.0 * 2.0),
        ("qwen3-14b", 2.0 * 40.0 * 8.0 * 128.0 * 2.0),
        ("llama-3.2-1b", 2.0 * 16.0 * 8.0 * 64.0 * 2.0),
        ("qwen3-4b", 2.0 * 36.0 * 8.0 * 128.0 * 2.0),
        // GLM-4.5 / 4.6: 92 layers × 8 KV heads × 128; Air: 46 layers (GQA, no MLA).
        ("glm-4.5", 2.0 * 92.0 * 8.0 * 128.0 * 2.0),
        ("glm-4.5-air", 2.0 * 46.0 * 8.0 * 128.0 * 2.0),
        ("glm-4.6", 2.0 * 92.0 * 8.0 * 128.0 * 2.0),
        // Mistral 7B: 32 layers × 8 KV heads × 128 (no sliding window in SGLang); NeMo: 40.
        ("mistral-7b-v0.1", 2.0 * 32.0 * 8.0 * 128.0 * 2.0),
        ("mistral-7b-v0.3", 2.0 * 32.0 * 8.0 * 128.0 * 2.0),
        ("mistral-nemo-base-2407", 2.0 * 40.0 * 8.0 * 128.0 * 2.0),
        // Gemma-3: SGLang runs no hybrid SWA pool for it, so every layer, window or not, holds
        // K and V for every token: 26 × 1 × 256, 34 × 4 × 256, 48 × 8 × 256, 62 × 16 × 128.
        ("gemma-3-1b-it", 2.0 * 26.0 * 1.0 * 256.0 * 2.0),
        ("gemma-3-4b-it", 2.0 * 34.0 * 4.0 * 256.0 * 2.0),
        ("gemma-3-12b-it", 2.0 * 48.0 * 8.0 * 256.0 * 2.0),
        ("gemma-3-27b-it", 2.0 * 62.0 * 16.0 * 128.0 * 2.0),
        // phi-4: 40 layers × 10 KV heads × 128; Mistral-Small-24B: 40 × 8 × 128.
        ("phi-4", 2.0 * 40.0 * 10.0 * 128.0 * 2.0),
        (MS24, 2.0 * 40.0 * 8.0 * 128.0 * 2.0),
        ("qwen3-next-80b-a3b", 2.0 * 12.0 * 2.0 * 256.0 * 2.0), // 12 full layers
    ];
    assert_eq!(
        cases.len(),
        model_names().len(),
        "every bundled model has a case"
    );
    for (name, want) in cases {
        let m = load_model(name).unwrap();
        assert_eq!(
            m.kv_bytes_per_token_per_rank(1, KvDtype::Bf16),
            want,
            "{name}"
        );
    }
    // MLA caches one latent per token on every rank, whatever the TP.
    let ds = load_model("deepseek-v3").unwrap();
    assert_eq!(ds.kv_bytes_per_token_per_rank(8, KvDtype::Bf16), 70272.0);
    assert_eq!(ds.kv_bytes_per_token_per_rank(8, KvDtype::Fp8), 35136.0);
    // GQA: KV heads split over TP, replicated once TP exceeds them.
    let qwen = load_model("qwen3-8b").unwrap();
    assert_eq!(
        qwen.kv_bytes_per_token_per_rank(8, KvDtype::Bf16),
        147456.0 / 8.0
    );
    assert_eq!(
        qwen.kv_bytes_per_token_per_rank(16, KvDtype::Bf16),
        147456.0 / 8.0
    );
}

fn fixture(name: &str) -> PathBuf {
    crate_dir()
        .join("tests/fixtures/hf")
        .join(format!("{name}.json"))
}

/// `m` with the bundled model's name and hub id, so the rest can be compared whole.
fn renamed(mut m: ModelSpec, like: &ModelSpec) -> ModelSpec {
    m.name.clone_from(&like.name);
    m.hf_id.clone_from(&like.hf_id);
    m
}

#[test]
fn hf_configs_match_bundled_models() {
    for name in [
        "qwen2.5-0.5b",
        "qwen3-8b",
        "qwen3-30b-a3b",
        "deepseek-v3",
        "gpt-oss-20b",
        "llama-3.1-8b",
        // Written from the sourced values in the YAML headers: the 1B's full config, the 4B's
        // text_config with only the keys that differ from Gemma3TextConfig's defaults (as the
        // published multimodal configs give it), the 27B's with its explicit shapes.
        "gemma-3-1b-it",
        "gemma-3-4b-it",
        "gemma-3-27b-it",
    ] {
        let path = fixture(name);
        let bundled = load_model(name).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let hf = model_from_hf_config(&text, &path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(hf.hf_id, bundled.hf_id, "{name}: hf_id from _name_or_path");
        assert_eq!(renamed(hf, &bundled), bundled, "{name}");
        // load_model takes a .json path as an HF config.
        let loaded = load_model(path.to_str().unwrap()).unwrap();
        assert_eq!(renamed(loaded, &bundled), bundled, "{name} via load_model");
    }
}

#[test]
fn hf_config_in_a_directory_is_named_after_it() {
    let text = std::fs::read_to_string(fixture("llama-3.1-8b")).unwrap();
    let text = text.replace("\"_name_or_path\": \"meta-llama/Llama-3.1-8B\",", "");
    let path = temp_file("config.json", &text);
    let dir = path.parent().unwrap();
    let m = load_model(dir.to_str().unwrap()).unwrap();
    assert_eq!(m.name, dir.file_name().unwrap().to_string_lossy());
    assert_eq!(m.hf_id, None);
    assert_eq!(m.num_layers, 32);
}

fn hf_error(name: &str, edit: impl Fn(String) -> String) -> String {
    let text = edit(std::fs::read_to_string(fixture(name)).unwrap());
    model_from_hf_config(&text, Path::new("x/config.json"))
        .unwrap_err()
        .to_string()
}

#[test]
fn hf_config_errors_and_defaults() {
    let e = hf_error("llama-3.1-8b", |t| {
        t.replace("LlamaForCausalLM", "MambaForCausalLM")
    });
    assert!(
        e.contains("MambaForCausalLM")
            && e.contains("Qwen3MoeForCausalLM")
            && e.contains("GptOssForCausalLM"),
        "{e}"
    );
    let e = hf_error("llama-3.1-8b", |t| {
        t.replace("\"vocab_size\": 128256", "\"vocab\": 1")
    });
    assert!(e.contains("vocab_size") && e.contains("missing"), "{e}");
    let e = hf_error("qwen3-30b-a3b", |t| {
        t.replace("\"mlp_only_layers\": []", "\"mlp_only_layers\": [5]")
    });
    assert!(
        e.contains("mlp_only_layers") && e.contains("unsupported"),
        "{e}"
    );
    let e = hf_error("deepseek-v3", |t| {
        t.replace("\"quant_method\": \"fp8\"", "\"quant_method\": \"gptq\"")
    });
    assert!(e.contains("gptq") && e.contains("unsupported"), "{e}");

    // Dense-prefix Qwen3-MoE pattern: mlp_only_layers [0, 1] → 2 dense layers.
    let text = std::fs::read_to_string(fixture("qwen3-30b-a3b")).unwrap();
    let text = text.replace("\"mlp_only_layers\": []", "\"mlp_only_layers\": [0, 1]");
    let m = model_from_hf_config(&text, Path::new("q.json")).unwrap();
    assert_eq!(m.moe.unwrap().dense_layers, 2);

    // DeepSeek-V2-Lite style: q_lora_rank null → 0; V2 architecture accepted.
    let text = std::fs::read_to_string(fixture("deepseek-v3")).unwrap();
    let text = text
        .replace("\"q_lora_rank\": 1536", "\"q_lora_rank\": null")
        .replace("DeepseekV3ForCausalLM\"]", "DeepseekV2ForCausalLM\"]");
    let m = model_from_hf_config(&text, Path::new("d.json")).unwrap();
    assert_eq!(m.mla.unwrap().q_lora_rank, 0);
    assert_eq!(m.architecture, "DeepseekV2ForCausalLM");

    // head_dim and num_key_value_heads default to hidden/heads and num_attention_heads.
    let text = std::fs::read_to_string(fixture("qwen3-8b")).unwrap();
    let text = text
        .replace("\"head_dim\": 128,", "")
        .replace("\"num_key_value_heads\": 8,", "");
    let m = model_from_hf_config(&text, Path::new("q.json")).unwrap();
    assert_eq!((m.head_dim, m.num_kv_heads), (128, 32));

    // compressed-tensors W8A8 INT8.
    let text = std::fs::read_to_string(fixture("qwen3-8b")).unwrap().replace(
        "\"rope_scaling\": null,",
        r#""quantization_config": {"quant_method": "compressed-tensors", "config_groups": {"group_0": {
            "weights": {"num_bits": 8, "type": "int"}, "input_activations": {"num_bits": 8, "type": "int"}}}},"#,
    );
    let m = model_from_hf_config(&text, Path::new("q.json")).unwrap();
    assert_eq!(m.weights, WeightFormat::W8a8Int8);
}

#[test]
fn unknown_names_list_the_bundled_ones() {
    // `h100-pcie` is no bundled GPU (`h100` alone is the SXM5 profile, with a note).
    let e = load_hardware("h100-pcie").unwrap_err().to_string();
    assert!(
        e.contains("h100-pcie") && e.contains("h100-sxm5-80gb") && e.contains("ascend-a3"),
        "{e}"
    );
    let hw = load_hardware("h100").unwrap();
    assert_eq!(hw.name, "h100-sxm5-80gb");
    assert!(
        hw.notes.iter().any(|n| n.contains("`h100`")),
        "{:?}",
        hw.notes
    );
    let e = load_model("qwen3").unwrap_err().to_string();
    assert!(e.contains("qwen3-8b") && e.contains("deepseek-v3"), "{e}");
}

fn h100_with(from: &str, to: &str) -> String {
    let text = hardware_yaml("h100-sxm5-80gb").unwrap();
    assert!(text.contains(from), "{from}");
    text.replacen(from, to, 1)
}

/// The error of loading `text` as a hardware profile written to a temp file `name`.
fn load_error(name: &str, text: &str) -> String {
    let path = temp_file(name, text);
    load_hardware(path.to_str().unwrap())
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_profiles_name_the_line_or_field() {
    let bad_indent = "name: x\ndescription: y\n  arch: hopper\npeaks: {}\n";
    let e = load_error("bad-indent.yaml", bad_indent);
    assert!(e.contains("bad-indent.yaml") && e.contains(":3"), "{e}");

    let tab = "name: x\ndescription: y\n\tarch: hopper\n";
    let e = load_error("tab.yaml", tab);
    assert!(e.contains("tab.yaml") && e.contains(":3"), "{e}");

    let negative = h100_with(
        "bandwidth_bytes_per_s: 3.35e12",
        "bandwidth_bytes_per_s: -3.35e12",
    );
    let e = load_error("negative.yaml", &negative);
    assert!(
        e.contains("negative.yaml") && e.contains("memory.bandwidth_bytes_per_s"),
        "{e}"
    );

    let unknown = h100_with(
        "  runtime_reserved_gib:",
        "  bogus_field: 1\n  runtime_reserved_gib:",
    );
    let e = load_error("unknown.yaml", &unknown);
    assert!(
        e.contains("unknown.yaml") && e.contains("bogus_field"),
        "{e}"
    );

    let e = load_hardware("no/such/profile.yaml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no/such/profile.yaml") && e.contains("cannot read"),
        "{e}"
    );
}

/// Prompt tokenization is CPU work of the HF fast tokenizer, not accelerator work: every bundled
/// profile states the one sourced rate (1 µs per token, `spec::tokenize_cost`, ≈ 20× the old
/// unsourced 50 ns), inside its bounds, and a user's profile without the line gets it.
#[test]
fn tokenization_cost_is_the_sourced_host_rate_in_every_profile() {
    use servesim::spec::tokenize_cost::{
        HF_FAST_TOKENIZE_PER_TOKEN_NS as RATE, TOKENIZE_PER_TOKEN_NS_MAX as MAX,
        TOKENIZE_PER_TOKEN_NS_MIN as MIN,
    };
    // An HF fast tokenizer encodes ≈ 0.5–2.5 M tokens/s on one core (tokenize-notes.md).
    assert!((400.0..=1000.0).contains(&MIN) && (1000.0..=3000.0).contains(&MAX));
    assert!((MIN..=MAX).contains(&RATE), "{RATE}");
    for name in hardware_names() {
        let hw = load_hardware(name).unwrap();
        for kernels in [false, true] {
            let got = hw.overheads_for(kernels).tokenize_per_token_ns;
            assert_eq!(got, RATE, "{name} (kernels {kernels})");
        }
    }
    let line = hardware_yaml("h100-sxm5-80gb")
        .unwrap()
        .lines()
        .find(|l| l.trim_start().starts_with("tokenize_per_token_ns:"))
        .unwrap()
        .to_string();
    let path = temp_file("no-tokenize.yaml", &h100_with(&format!("{line}\n"), ""));
    let hw = load_hardware(path.to_str().unwrap()).unwrap();
    assert_eq!(hw.overheads.tokenize_per_token_ns, RATE);
    let path = temp_file(
        "own-tokenize.yaml",
        &h100_with(&line, "  tokenize_per_token_ns: 250"),
    );
    let hw = load_hardware(path.to_str().unwrap()).unwrap();
    assert_eq!(hw.overheads.tokenize_per_token_ns, 250.0);
}

/// Issue 12: SGLang's default mem_fraction_static on a 64 GB Ascend die (≈ 0.19, the GPU formula
/// with the NPU's 32768-token chunk) leaves no KV cache for qwen3-32b at TP 4; servesim assumes
/// the 0.8 Ascend deployments pass and says so, and keeps a value the user gives.
#[test]
fn ascend_runs_with_default_flags_at_the_deployed_mem_fraction() {
    use servesim::spec::server::{ServerConfig, ServerFlags, ASCEND_DEPLOYED_MEM_FRACTION};
    let hw = load_hardware("ascend-a3").unwrap();
    let model = load_model("qwen3-32b").unwrap();
    let flags = ServerFlags {
        tp: Some(4),
        ..Default::default()
    };
    let c = ServerConfig::resolve(&flags, &hw, &model).unwrap();
    assert_eq!(c.mem_fraction_static, ASCEND_DEPLOYED_MEM_FRACTION);
    assert_eq!(c.notes.len(), 1);
    assert!(
        c.notes[0].contains("0.192") && c.notes[0].contains("not an SGLang default"),
        "{}",
        c.notes[0]
    );
    // 60.2 GiB free; 0.2 of it reserved; 32.8B bf16 params / 4 ≈ 15.3 GiB of weights; 1 GiB
    // runtime: ≈ 31.9 GiB of KV at 64 layers × 8 KV heads / 4 × 128 × 2 × 2 B = 64 KiB/token.
    let kv_gib = c.kv_pool_tokens as f64 * c.kv_bytes_per_token / (1u64 << 30) as f64;
    assert!((kv_gib - 31.9).abs() < 0.5, "{kv_gib} GiB");
    let given = ServerFlags {
        mem_fraction_static: Some(0.7),
        ..flags.clone()
    };
    let c = ServerConfig::resolve(&given, &hw, &model).unwrap();
    assert_eq!(c.mem_fraction_static, 0.7);
    assert!(c.notes.is_empty());
    // A GPU keeps SGLang's own default, even where it is small.
    let h100 = load_hardware("h100-sxm5-80gb").unwrap();
    let c = ServerConfig::resolve(&flags, &h100, &model).unwrap();
    assert!(c.notes.is_empty() && c.mem_fraction_static < 0.85);
}

/// SGLang 0.5.10+ reserves room for piecewise CUDA graphs in the default mem_fraction_static
/// (server_args.py at v0.5.10: 58 token counts × 8 MiB at chunk 8192), so on an H100 at TP1 the
/// default falls from 0.835 (0.5.6.post2 … 0.5.9) to 0.830 (hand calculation:
/// (81559 − 13440 − 464) / 81559). 0.5.14 turns both graph phases off with
/// `--disable-cuda-graph` (server_args.py at v0.5.14, lines 2942-2944), so that reserve goes:
/// (81559 − 13440) / 81559 = 0.835; 0.5.15 also drops the decode graphs' 2 × 256 MiB
/// (server_args.py at v0.5.15, line 3641): (81559 − 12928) / 81559 = 0.841. 0.5.14 caps a
/// given --max-running-requests by half the KV pool, not by the 4096 estimate
/// (model_runner_kv_cache_mixin.py at v0.5.14, line 991). Versions past the newest checked
/// release are refused.
#[test]
fn bundled_specs_are_parsed_once_but_files_are_read_every_time() {
    // Bundled names come from a per-process parse cache: the same spec every time, equal to a
    // fresh parse of the embedded YAML. A file on disk must be read again on every load (a
    // cache keyed on the path would hand back the old contents after an edit).
    let h100 = || load_hardware("h100-sxm5-80gb").unwrap();
    let fresh: servesim::spec::hardware::HardwareProfile = servesim::spec::load::from_yaml_str(
        hardware_yaml("h100-sxm5-80gb").unwrap(),
        Path::new("h100"),
    )
    .unwrap();
    assert_eq!(h100(), fresh);
    assert_eq!(h100(), h100());
    assert_eq!(
        load_model("qwen3-8b").unwrap(),
        load_model("qwen3-8b").unwrap()
    );
    let path = temp_file("h100-edited.yaml", hardware_yaml("h100-sxm5-80gb").unwrap());
    let first = load_hardware(path.to_str().unwrap()).unwrap();
    assert_eq!(first, fresh);
    std::fs::write(
        &path,
        h100_with("name: h100-sxm5-80gb", "name: h100-edited"),
    )
    .unwrap();
    let second = load_hardware(path.to_str().unwrap()).unwrap();
    assert_eq!(second.name, "h100-edited");
    assert_eq!(
        load_hardware("h100-sxm5-80gb").unwrap().name,
        "h100-sxm5-80gb"
    );
}
