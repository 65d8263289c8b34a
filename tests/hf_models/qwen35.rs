//! Qwen3.5 (models/hf/, from aiconfigurator 0.10.0) as SGLang 0.5.9's `qwen3_5.py` /
//! `qwen3_next.py` build it (src/spec/hf_qwen3_next.rs): sizes against Qwen's stated figures,
//! the hybrid layer layout, the KV cell over the full-attention layers only, and the
//! per-request recurrent state by hand.
use super::{active_params, near, parse, total_params};
use servesim::spec::model::KvDtype;
use servesim::spec::speculative::{SpeculativeConfig, SpeculativeFlags};

const DENSE: &str = "Qwen--Qwen3.5-27B";
const MOE_35B: &str = "Qwen--Qwen3.5-35B-A3B";
const MOE_397B: &str = "Qwen--Qwen3.5-397B-A17B";

#[test]
fn sizes_match_qwens_stated_figures() {
    // The names are Qwen's own totals and active counts (huggingface.co/Qwen/Qwen3.5-27B,
    // -35B-A3B, -397B-A17B: "27B", "35B total, 3B activated", "397B total, 17B activated"),
    // vision encoder included (counted here as SGLang loads it).
    // By hand, 27B: 48 GDN layers × (115 875 840 + MLP 3·5120·17408 = 267 386 880) and 16 full
    // layers × (gated q 5120·12288 + k, v 2·5120·1024 + o 6144·5120 = 104 857 600 + MLP);
    // embedding and LM head 2 · 248 320 · 5120; the vision tower as Qwen3-VL's.
    let dense = parse(DENSE);
    near("27B total", total_params(&dense), 27.0, 0.03);
    let m35 = parse(MOE_35B);
    near("35B-A3B total", total_params(&m35), 35.0, 0.03);
    // "A3B" is a rounded label: with the embedding and LM head (2 · 248 320 · 2048 = 1.02B,
    // the convention of `active_params`) this counts 3.45B, without them 2.43B; the label sits
    // between.
    let active = active_params(&m35) / 1e9;
    let embed_and_head = 2.0 * 248_320.0 * 2048.0 / 1e9;
    assert!(active > 3.0 && active - embed_and_head < 3.0, "{active}");
    let m397 = parse(MOE_397B);
    near("397B-A17B total", total_params(&m397), 397.0, 0.01);
    near("397B-A17B active", active_params(&m397), 17.0, 0.05);
}

#[test]
fn layers_kv_and_state_by_hand() {
    let m = parse(DENSE);
    let l = m.linear_attention.as_ref().expect("GDN layers");
    // full_attention_interval 4 over 64 layers: 16 full, 48 linear (`layers_block_type`).
    assert_eq!((m.full_attention_layers(), l.layers), (16, 48));
    // KV cell: 16 full layers × 4 KV heads × 256 × 2 (K and V) × 2 B = 65 536 B at TP 1,
    // 32 768 B at TP 2 (2 KV heads a rank).
    assert_eq!(m.kv_bytes_per_token_per_rank(1, KvDtype::Bf16), 65_536.0);
    assert_eq!(m.kv_bytes_per_token_per_rank(2, KvDtype::Bf16), 32_768.0);
    // State (`mamba_cache_per_req`): per GDN layer conv (2·2048 + 6144) × 3 × 2 B = 61 440 B and
    // temporal 48 × 128 × 128 × 4 B (mamba_ssm_dtype float32) = 3 145 728 B; × 48 layers.
    assert_eq!(m.linear_state_bytes_per_request(1), 48.0 * 3_207_168.0);
    // 35B-A3B: 40 layers, 30 GDN with 32 value heads: (4096 + 4096) × 3 × 2 + 32·128·128·4.
    let m = parse(MOE_35B);
    assert_eq!(m.full_attention_layers(), 10);
    assert_eq!(
        m.linear_state_bytes_per_request(1),
        30.0 * (49_152.0 + 2_097_152.0)
    );
}

#[test]
fn nextn_drafts_with_qwen35s_own_mtp_layer_from_0_5_9() {
    // SGLang 0.5.9: a draft worker with no --speculative-draft-model-path loads the target
    // (configs/model_config.py line 251, `model_path=model_path or server_args.model_path`) and
    // `_config_draft_model` rewrites a Qwen3.5 draft to `Qwen3_5ForCausalLMMTP` (lines 324-329),
    // one full-attention layer (qwen3_5_mtp.py lines 66-67) over `fc` (2h -> h). The cookbook's
    // Qwen3.5-397B H200 run launches NEXTN this way (skipped-sources.md).
    let target = parse(MOE_397B);
    let nextn = SpeculativeFlags {
        speculative_algorithm: Some("NEXTN".into()),
        speculative_num_steps: Some(3),
        speculative_eagle_topk: Some(1),
        speculative_num_draft_tokens: Some(4),
        ..Default::default()
    };
    let c = SpeculativeConfig::resolve(&nextn, &target, "0.5.9".parse().unwrap(), 8)
        .unwrap()
        .unwrap();
    let d = c.draft.as_ref().unwrap();
    assert_eq!(d.architecture, "Qwen3_5ForCausalLMMTP");
    assert_eq!((d.num_layers, d.full_attention_layers()), (1, 1));
    // By hand, per rank at TP 8 in bf16: 512 experts × 3 · 4096 · 1024 = 6.442e9 parameters
    // (1.611e9 B a rank) plus the shared expert (3 · 4096 · 1024), router (512 · 4096), gated
    // attention (4096 · 16 384 + 2 · 4096 · 512 + 8192 · 4096) and fc (8192 · 4096): 1.64e9 B.
    // The embedding and LM head are the target's.
    let b = c.draft_weight_bytes_per_rank;
    assert!(b > 1.61e9 && b < 1.70e9, "{b}");
    // 0.5.8 serves no Qwen3.5 (no qwen3_5.py in its wheel), so no default draft either.
    assert!(SpeculativeConfig::resolve(&nextn, &target, "0.5.8".parse().unwrap(), 8).is_err());
}
