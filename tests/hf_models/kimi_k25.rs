//! Kimi-K2.5 (models/hf/, from aiconfigurator-core 0.12.0): the DeepSeek-V3 text decoder of
//! `kimi_k25.py` with its routed experts in compressed-tensors int4 W4A16 (group 32), the rest
//! bf16 (`spec::hf_quant`, `WeightFormat::W4a16Int4`).
use super::{active_params, near, parse, total_params};
use servesim::spec::bundled::load_model;
use servesim::spec::hf_config::model_from_hf_config;
use servesim::spec::model::WeightFormat;
use std::path::Path;

const K25: &str = "moonshotai--Kimi-K2.5";

#[test]
fn kimi_k2_5_matches_moonshots_card() {
    // huggingface.co/moonshotai/Kimi-K2.5, "Model Summary": "Total Parameters 1T",
    // "Activated Parameters 32B" (the 0.47B MoonViT vision tower is not counted here).
    let m = parse(K25);
    assert_eq!(m.weights, WeightFormat::W4a16Int4);
    let moe = m.moe.as_ref().unwrap();
    assert_eq!(
        (moe.num_experts, moe.experts_per_token, moe.dense_layers),
        (384, 8, 1)
    );
    near("Kimi-K2.5 total", total_params(&m), 1000.0, 0.05);
    near("Kimi-K2.5 active", active_params(&m), 32.0, 0.05);
    assert_eq!(
        load_model("moonshotai/Kimi-K2.5").unwrap().name,
        "kimi-k2.5"
    );
}

#[test]
fn int4_experts_weigh_4_5_bits_by_hand() {
    // 60 MoE layers × 384 experts × 3·7168·2048 = 1,014,686,023,680 routed-expert weights,
    // 126,835,752,960 per rank at TP 8; int4 + one bf16 scale per 32 = 0.5625 B each instead
    // of 2: the int4 build is 126,835,752,960 × 1.4375 B lighter per rank, nothing else moves.
    let m = parse(K25);
    let bf16 = m.weight_bytes_per_rank(8, WeightFormat::Bf16);
    let int4 = m.weight_bytes_per_rank(8, WeightFormat::W4a16Int4);
    assert_eq!(bf16 - int4, 126_835_752_960.0 * 1.4375);
}

#[test]
fn other_int4_schemes_stay_refused() {
    let text = std::fs::read_to_string(super::hf_path(K25)).unwrap();
    for (from, to) in [
        // A group of 128 (4.125 bits), asymmetric weights (zero points), int8 activations, or
        // attention left in the quantised set: not the priced scheme.
        (r#""group_size": 32"#, r#""group_size": 128"#),
        (r#""symmetric": true"#, r#""symmetric": false"#),
        (
            r#""input_activations": null"#,
            r#""input_activations": {"num_bits": 8, "type": "int"}"#,
        ),
        (r#""re:.*self_attn.*","#, ""),
    ] {
        assert!(text.contains(from), "{from}");
        let e = model_from_hf_config(&text.replace(from, to), Path::new("k.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unsupported") && !e.contains('\n'),
            "{from}: {e}"
        );
    }
}
