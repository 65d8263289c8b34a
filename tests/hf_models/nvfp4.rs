//! NVFP4 checkpoints (`WeightFormat::Nvfp4`, `spec::nvfp4`): the format and the FP8 KV cache
//! from the checkpoint's name or its ModelOpt `quantization_config`, weight bytes by hand, and
//! the one-line refusals (another publisher's bare `-FP4`, GPUs SGLang does not run NVFP4 on).
use servesim::spec::bundled::{load_hardware, load_model};
use servesim::spec::hf_config::model_from_hf_config;
use servesim::spec::model::{KvDtype, WeightFormat};
use servesim::spec::server::{ServerConfig, ServerFlags};
use std::path::Path;

#[test]
fn nvidia_fp4_and_nvfp4_names_resolve_to_nvfp4_with_an_fp8_kv_cache() {
    // nvidia/DeepSeek-R1-0528-FP4 and nvidia/Qwen3-235B-A22B-NVFP4 are ModelOpt NVFP4 builds
    // whose hf_quant_config.json states quant_algo NVFP4, kv_cache_quant_algo FP8 (the Qwen3 and
    // DeepSeek-V3.1 ones are bundled in aiconfigurator 0.10.0's model_configs).
    for (id, base) in [
        ("nvidia/DeepSeek-R1-0528-FP4", "deepseek-r1"),
        ("nvidia/DeepSeek-V3.1-NVFP4", "deepseek-v3"),
        ("nvidia/Qwen3-235B-A22B-NVFP4", "qwen3-235b-a22b"),
        ("nvidia/Llama-3.3-70B-Instruct-FP4", "llama-3.1-70b"),
    ] {
        let m = load_model(id).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(m.name, base, "{id}");
        assert_eq!(m.weights, WeightFormat::Nvfp4, "{id}");
        assert_eq!(m.kv_cache_dtype, KvDtype::Fp8, "{id}");
        assert!(m.notes.iter().any(|n| n.contains("NVFP4")), "{id}");
    }
    // The base checkpoints keep their own formats.
    assert_eq!(
        load_model("deepseek-ai/DeepSeek-R1-0528").unwrap().weights,
        WeightFormat::Fp8
    );
    assert_eq!(
        load_model("Qwen/Qwen3-235B-A22B").unwrap().kv_cache_dtype,
        KvDtype::Bf16
    );
}

#[test]
fn another_publishers_bare_fp4_is_refused_in_one_line() {
    let e = load_model("someone/Qwen3-235B-A22B-FP4")
        .unwrap_err()
        .to_string();
    assert!(e.contains("FP4") && !e.contains('\n'), "{e}");
}

#[test]
fn a_modelopt_nvfp4_quantization_config_reads_as_nvfp4_with_fp8_kv() {
    // The flat `quantization_config` NVIDIA's NVFP4 config.json files carry (Kimi-K2.6-NVFP4 in
    // aiconfigurator-core 0.12.0 model_configs: quant_method modelopt, quant_algo NVFP4,
    // kv_cache_scheme 8-bit float); SGLang reads quant_algo (modelopt_quant.py, 0.5.9).
    let base = std::fs::read_to_string(super::hf_path("meta-llama--Meta-Llama-3.1-405B")).unwrap();
    let quant = r#""quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4",
        "kv_cache_scheme": {"dynamic": false, "num_bits": 8, "type": "float"}},"#;
    let text = base.replacen('{', &format!("{{{quant}"), 1);
    let m = model_from_hf_config(&text, Path::new("c.json")).unwrap();
    assert_eq!(m.weights, WeightFormat::Nvfp4);
    assert_eq!(m.kv_cache_dtype, KvDtype::Fp8);
    // ModelOpt FP8 (per-tensor) is not the block FP8 servesim prices: refused in one line.
    let fp8 = text.replace(r#""quant_algo": "NVFP4""#, r#""quant_algo": "FP8""#);
    let e = model_from_hf_config(&fp8, Path::new("c.json"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("modelopt") && e.contains("unsupported") && !e.contains('\n'),
        "{e}"
    );
}

#[test]
fn deepseek_r1_nvfp4_weighs_4_5_bits_per_linear_weight_by_hand() {
    // DeepSeek-R1 (61 layers, 3 dense, 256 routed experts of 7168 × 2048, one shared expert of
    // the same size, dense MLP 18,432, MLA q_lora 1536 / kv_lora 512 / 128 heads of 128+64 qk,
    // 128 v). Per rank at TP 8:
    //   routed experts: 58 × 256 × 3·7168·2048 / 8 = 81,738,596,352;
    //   every other linear weight: attention (q_a 7168·1536 and kv_a 7168·576 replicated, as
    //   SGLang's fused_qkv_a_proj_with_mqa is; q_b 1536·24576, kv_b 512·32768, o 16384·7168 split)
    //   36,634,624 × 61 + dense MLP 3·7168·18432 / 8 × 3 + shared expert 3·7168·2048 / 8 × 58
    //   = 2,702,639,104.
    // bf16 → int4-experts moves only the experts (2 → 0.5625 B); int4-experts → NVFP4 moves
    // only the other linears (2 → 0.5625 B); the router, embedding and LM head stay bf16.
    let m = load_model("deepseek-r1").unwrap();
    let b = |f| m.weight_bytes_per_rank(8, f);
    let experts = 81_738_596_352.0 * 1.4375;
    let linear = 2_702_639_104.0 * 1.4375;
    let got_experts = b(WeightFormat::Bf16) - b(WeightFormat::W4a16Int4);
    let got_linear = b(WeightFormat::W4a16Int4) - b(WeightFormat::Nvfp4);
    assert!((got_experts / experts - 1.0).abs() < 1e-9, "{got_experts}");
    assert!((got_linear / linear - 1.0).abs() < 0.01, "{got_linear}");
    // TP 4 holds twice the split weights per rank.
    let e4 = m.weight_bytes_per_rank(4, WeightFormat::Bf16)
        - m.weight_bytes_per_rank(4, WeightFormat::W4a16Int4);
    assert!((e4 / (2.0 * experts) - 1.0).abs() < 1e-9, "{e4}");
}

fn resolve(hw: &str, model: &str, tp: u64, version: Option<&str>) -> Result<ServerConfig, String> {
    let h = load_hardware(hw).unwrap();
    let m = load_model(model).unwrap();
    let flags = ServerFlags {
        tp: Some(tp),
        sglang_version: version.map(|v| v.parse().unwrap()),
        ..Default::default()
    };
    ServerConfig::resolve(&flags, &h, &m).map_err(|e| e.to_string())
}

#[test]
fn nvfp4_is_refused_off_blackwell_in_one_line() {
    // SGLang: ModelOptFp4Config.get_min_capability() = 100; the NVFP4 MoE method raises
    // "Please use Blackwell and above" (modelopt_quant.py, 0.5.9).
    for hw in [
        "h100-sxm5-80gb",
        "h200-sxm-141gb",
        "a100-sxm4-80gb",
        "l40s-48gb",
    ] {
        let e = resolve(hw, "nvidia/Qwen3-235B-A22B-NVFP4", 8, None).unwrap_err();
        assert!(
            e.contains("Blackwell") && e.contains(hw) && !e.contains('\n'),
            "{hw}: {e}"
        );
    }
    for hw in ["b200-sxm-180gb", "b300-sxm-288gb", "gb200-186gb"] {
        resolve(hw, "nvidia/Qwen3-235B-A22B-NVFP4", 4, None)
            .unwrap_or_else(|e| panic!("{hw}: {e}"));
    }
}

#[test]
fn the_fp8_kv_cache_follows_the_checkpoint_from_sglang_0_5_4() {
    // model_runner.py configure_kv_cache_dtype reads kv_cache_quant_algo in 0.5.4 and 0.5.6;
    // 0.5.2 keeps the model dtype with --kv-cache-dtype auto.
    let kv = |v| {
        resolve("b200-sxm-180gb", "nvidia/Qwen3-235B-A22B-NVFP4", 4, Some(v))
            .unwrap()
            .kv_dtype
    };
    assert_eq!(kv("0.5.4"), KvDtype::Fp8);
    assert_eq!(kv("0.5.2"), KvDtype::Bf16);
}
