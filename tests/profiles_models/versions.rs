//! SGLang's defaults per release, read from the wheels: 0.5.9–0.5.15.post1 and 0.5.16–0.5.23; and
//! 0.5.5.post1's KV pool for Qwen3-32B on one 80 GB H100 / A100 (the GPUStack pages), by hand.
use super::*;

#[test]
fn sglang_versions_after_0_5_8_get_their_own_defaults() {
    use servesim::spec::server::{ServerConfig, ServerFlags};
    use servesim::spec::version::Version;
    let hw = load_hardware("h100-sxm5-80gb").unwrap();
    let model = load_model("qwen3-8b").unwrap();
    let at = |v: &str, disable_pcg: bool| ServerFlags {
        sglang_version: Some(v.parse().unwrap()),
        disable_piecewise_cuda_graph: disable_pcg,
        ..Default::default()
    };
    let resolve = |f: &ServerFlags| ServerConfig::resolve(f, &hw, &model).unwrap();
    let mfs = |f: &ServerFlags| resolve(f).mem_fraction_static;
    assert_eq!(mfs(&ServerFlags::default()), 0.830);
    assert_eq!(Version::NEWEST.to_string(), "0.5.23");
    assert_eq!(mfs(&at("0.5.6.post2", false)), 0.835);
    assert_eq!(mfs(&at("0.5.9", false)), 0.835);
    assert_eq!(mfs(&at("0.5.10", false)), 0.830);
    assert_eq!(mfs(&at("0.5.13", true)), 0.835);
    assert_eq!(mfs(&at("0.5.15.post1", false)), 0.830);
    let no_graphs = |v: &str| ServerFlags {
        disable_cuda_graph: true,
        ..at(v, false)
    };
    assert_eq!(mfs(&no_graphs("0.5.13.post1")), 0.830);
    assert_eq!(mfs(&no_graphs("0.5.14")), 0.835);
    assert_eq!(mfs(&no_graphs("0.5.15")), 0.841);
    let capped = |v: &str| {
        resolve(&ServerFlags {
            max_running_requests: Some(6000),
            ..at(v, false)
        })
    };
    let (old, new) = (capped("0.5.13.post1"), capped("0.5.14"));
    assert_eq!(old.kv_pool_tokens, new.kv_pool_tokens);
    assert!(new.kv_pool_tokens / 2 > 6000, "{}", new.kv_pool_tokens);
    assert_eq!((old.req_pool_size, old.max_running_requests), (4096, 4096));
    assert_eq!((new.req_pool_size, new.max_running_requests), (6000, 6000));
    let e = ServerConfig::resolve(&at("0.5.24", false), &hw, &model)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("0.5.24") && e.contains("0.3.0 to 0.5.23") && e.contains("newest modelled"),
        "{e}"
    );
}

/// One rule per SGLang release from 0.5.16 to 0.5.23, read from the PyPI wheels (hand
/// figures: reported MiB − reserve, rounded to 3 places as `_handle_gpu_memory_settings`
/// does; H100 81559 MiB, H200 143771 MiB; chunk 8192 → 58 prefill token counts × 8 MiB).
#[test]
fn sglang_releases_0_5_16_to_0_5_23_get_their_own_defaults() {
    use servesim::spec::defaults::{self, DefaultsInput, PdRole};
    use servesim::spec::server::{ServerConfig, ServerFlags};
    use servesim::spec::version::Version;
    use servesim::spec::version_rules::running_reserve_ratio;
    let h100 = load_hardware("h100-sxm5-80gb").unwrap();
    let qwen = load_model("qwen3-8b").unwrap();
    let v = |s: &str| s.parse::<Version>().unwrap();
    let at = |s: &str| ServerFlags {
        sglang_version: Some(v(s)),
        ..Default::default()
    };
    let on =
        |f: &ServerFlags, hw, model, role| ServerConfig::resolve_as(f, hw, model, role).unwrap();
    // 0.5.16: breakable prefill graphs are the CUDA default and stay on for a PD prefill
    // server (cuda_graph_config.py line 104; server_args.py line 4186 reserves
    // `len(bs) * 8` unless `disaggregation_mode == "decode"`): 0.5.15 512 + 12288 + 128 =
    // 12928 MiB → 0.841; 0.5.16 + 464 = 13392 → 0.836, and prefills replay the graph.
    let prefill = |s: &str| {
        let f = ServerFlags {
            disable_cuda_graph: true, // what `spec::pd` gives the prefill side
            ..at(s)
        };
        on(&f, &h100, &qwen, Some(PdRole::Prefill))
    };
    let (p15, p16) = (prefill("0.5.15.post1"), prefill("0.5.16"));
    assert_eq!(
        (p15.mem_fraction_static, p15.piecewise_prefill),
        (0.841, false)
    );
    assert_eq!(
        (p16.mem_fraction_static, p16.piecewise_prefill),
        (0.836, true)
    );
    // 0.5.17: DP attention keeps them (server_args.py at v0.5.16 line 3799 drops the prefill
    // graph for DP attention; gone at v0.5.17). Qwen3-30B-A3B, TP2 DP2: 512 + 12288 + 256 +
    // 2 × 256 + 3 × 256 × 2 = 15104 MiB → 0.815; with the 464 MiB reserve 15568 → 0.809.
    let moe = load_model("qwen3-30b-a3b").unwrap();
    let dp = |s: &str| {
        let f = ServerFlags {
            tp: Some(2),
            dp: Some(2),
            enable_dp_attention: true,
            ..at(s)
        };
        let c = on(&f, &h100, &moe, None);
        (c.mem_fraction_static, c.piecewise_prefill)
    };
    assert_eq!(
        (dp("0.5.16"), dp("0.5.17")),
        ((0.815, false), (0.809, true))
    );
    // 0.5.18: MLA models keep them (server_args.py at v0.5.17 line 4469 "MLA attention
    // (non-DSA)"; gone at v0.5.18). DeepSeek-V3 on H200 TP8: 512 + 12288 + 1024 + 2 × 512 =
    // 14848 MiB → 0.897; + 1.5 GiB (MLA) → 16384 → 0.886.
    let h200 = load_hardware("h200-sxm-141gb").unwrap();
    let ds = load_model("deepseek-v3").unwrap();
    let mla = |s: &str| {
        let f = ServerFlags {
            tp: Some(8),
            ..at(s)
        };
        let c = on(&f, &h200, &ds, None);
        (c.mem_fraction_static, c.piecewise_prefill)
    };
    assert_eq!(
        (mla("0.5.17"), mla("0.5.18")),
        ((0.897, false), (0.886, true))
    );
    // 0.5.19 splits server_args.py; the reserve is unchanged (arg_groups/memory_hook.py at
    // v0.5.19 lines 250-256 and 321): 512 + 12288 + 128 + 512 + 464 = 13904 MiB → 0.830.
    let mfs = |f: &ServerFlags| on(f, &h100, &qwen, None).mem_fraction_static;
    assert_eq!(mfs(&at("0.5.19")), 0.830);
    // 0.5.20: 20–35 GiB GPUs get chunk 4096 and decode graphs to 48 / 160 (memory_hook.py at
    // v0.5.20 lines 110-116), not 2048 and 24 / 80. An RTX 5090 reports 32607 MiB.
    let small = |s: &str, tp: u64| {
        let i = DefaultsInput::gpu(32607.0, tp, v(s));
        (
            defaults::chunked_prefill_size(&i),
            defaults::cuda_graph_max_bs(&i),
        )
    };
    assert_eq!(small("0.5.19", 1), (2048, Some(24)));
    assert_eq!(small("0.5.20", 1), (4096, Some(48)));
    assert_eq!(small("0.5.20", 4), (4096, Some(160)));
    // 0.5.21 moves the PrefillAdder's memory budget into mem_cache/prefill_budget.py; running
    // requests still reserve remaining × new_token_ratio (schedule_policy.py at v0.5.21 line
    // 794).
    assert_eq!(running_reserve_ratio(v("0.5.21"), 0.7), 0.7);
    // 0.5.22: ignore_eos requests reserve their whole remaining output (schedule_policy.py at
    // v0.5.22 line 756), and a given --max-running-requests caps the default decode graph
    // max_bs (memory_hook.py at v0.5.22 line 188): at 64, the reserve's 2 × 256 MiB becomes
    // 2 × 64, 13904 − 384 = 13520 MiB → 0.834.
    assert_eq!(running_reserve_ratio(v("0.5.22"), 0.7), 1.0);
    let capped = |s: &str| ServerFlags {
        max_running_requests: Some(64),
        ..at(s)
    };
    assert_eq!(
        (mfs(&capped("0.5.21")), mfs(&capped("0.5.22"))),
        (0.830, 0.834)
    );
    // 0.5.23: the default reserve is the same (memory_hook.py at v0.5.23 lines 309-315, 386).
    assert_eq!(mfs(&at("0.5.23")), 0.830);
}

#[test]
fn blackwell_mha_models_default_to_trtllm_mha_from_0_5_6_post1() {
    // server_args.py, "MHA architecture" branch of the default attention backend: 0.5.6 sends
    // non-gpt-oss MHA models on sm100 to flashinfer; 0.5.6.post1 adds `elif is_blackwell() and
    // is_no_spec_infer_or_topk_one(self): "trtllm_mha"` (still there in 0.5.23's
    // arg_groups/model_override_base.py: "Use trtllm_mha for SM100/SM103"). A tree draft
    // (top-k > 1) keeps flashinfer; MLA models keep their own rule.
    use servesim::spec::server::{ServerConfig, ServerFlags};
    use servesim::spec::speculative::SpeculativeFlags;
    let hw = load_hardware("b200-sxm-180gb").unwrap();
    let backend = |model: &str, v: &str, topk: Option<u64>| {
        let flags = ServerFlags {
            sglang_version: Some(v.parse().unwrap()),
            tp: Some(if model == "deepseek-v3" { 8 } else { 1 }),
            speculative: SpeculativeFlags {
                speculative_algorithm: topk.map(|_| "EAGLE3".into()),
                speculative_draft_model_path: topk.map(|_| "qwen3-8b-eagle3".into()),
                speculative_num_steps: topk.map(|_| 3),
                speculative_eagle_topk: topk,
                speculative_num_draft_tokens: topk.map(|k| if k > 1 { 8 } else { 4 }),
                ..Default::default()
            },
            ..Default::default()
        };
        let m = load_model(model).unwrap();
        ServerConfig::resolve(&flags, &hw, &m)
            .unwrap()
            .attention_backend
    };
    assert_eq!(backend("qwen3-8b", "0.5.6", None), "flashinfer");
    assert_eq!(backend("qwen3-8b", "0.5.6.post1", None), "trtllm_mha");
    assert_eq!(backend("qwen3-8b", "0.5.23", None), "trtllm_mha");
    assert_eq!(backend("qwen3-8b", "0.5.23", Some(1)), "trtllm_mha");
    assert_eq!(backend("qwen3-8b", "0.5.23", Some(4)), "flashinfer");
    assert_eq!(backend("deepseek-v3", "0.5.23", None), "trtllm_mla");
}

/// GPUStack's Qwen3-32B pages (validation/gpustack): `python3 -m sglang.launch_server
/// --model-path Qwen/Qwen3-32B` 0.5.5.post1 on one 80 GB H100 and one 80 GB A100. Both are in
/// the < 90 GiB tier of `_handle_gpu_memory_settings` (chunk 8192, decode graphs to batch 256),
/// so the reserve is 512 + 1.5 × 8192 + 2 × 256 + 1/8 × 1024 = 13440 MiB on both and the pools
/// come out alike, to within what the free memory before the weights is known to (worked by
/// hand from `profile_max_num_token`: rest = free − weights − runtime − free × (1 − fraction)).
#[test]
fn sglang_0_5_5_post1_gives_qwen3_32b_the_same_pool_on_one_h100_as_on_one_a100() {
    use servesim::spec::server::{ServerConfig, ServerFlags};
    let model = load_model("qwen3-32b").unwrap();
    let flags = ServerFlags {
        sglang_version: Some("0.5.5.post1".parse().unwrap()),
        ..Default::default()
    };
    let gib = (1u64 << 30) as f64;
    let mut pools = Vec::new();
    for (name, total_mib, fraction) in [
        ("h100-sxm5-80gb", 81559.0, 0.835),
        ("a100-sxm4-80gb", 81920.0, 0.836),
    ] {
        let hw = load_hardware(name).unwrap();
        let c = ServerConfig::resolve(&flags, &hw, &model).unwrap();
        let by_hand = ((total_mib - 13440.0) / total_mib * 1000.0_f64).round() / 1000.0;
        assert_eq!(
            (c.mem_fraction_static, by_hand),
            (fraction, fraction),
            "{name}"
        );
        assert_eq!(c.chunked_prefill_size, Some(8192), "{name}");
        assert_eq!(c.cuda_graph_batch_sizes.iter().max(), Some(&256), "{name}");
        // 64 layers × 2 × 8 KV heads × 128 × 2 B = 256 KiB per token.
        assert_eq!(c.kv_bytes_per_token, 262_144.0);
        let free = hw.memory.free_before_weights_gib(1);
        let rest = free
            - c.weight_bytes_per_rank / gib
            - hw.memory.runtime_reserved_gib
            - free * (1.0 - fraction);
        assert_eq!(
            c.kv_pool_tokens,
            (rest * gib / 262_144.0).floor() as u64,
            "{name}"
        );
        pools.push(c.kv_pool_tokens as f64);
    }
    // ~4.6–4.9 GiB of KV each (18,874 tokens on the H100, 20,223 on the A100): alike to within
    // the 0.5 GiB the free memory before the weights is known to (logged H100 TP 1 readings
    // spread 78.43–78.81 GiB; the A100's 78.9 is an assumption; tests/profiles_models/
    // logged_pools.rs), not to a fixed share of a pool this small.
    assert!((18_000.0..21_000.0).contains(&pools[0]), "{pools:?}");
    assert!(
        (pools[0] - pools[1]).abs() * 262_144.0 / gib < 0.5,
        "{pools:?}"
    );
}

/// DeepSeek-V3 with `--tp 8 --enable-dp-attention` (no `--dp`), as in SGLang PR #2738's H200
/// logs (validation/public 007/008). Read in the wheels' server_args.py / model_runner.py:
/// up to 0.4.4 DP attention sets dp = tp and halves the chunk (8192 → 4096 per rank's
/// scheduler), 0.4.1 … 0.4.1.post6 turn the overlap scheduler off, 0.4.1 alone turns CUDA
/// graphs off for DeepseekV3ForCausalLM, and MLA runs on triton; from 0.4.4.post1 `--dp` must
/// be given and the chunk is divided by it.
#[test]
fn dp_attention_follows_each_release_rules_for_dp_chunk_overlap_and_graphs() {
    use servesim::spec::server::{ServerConfig, ServerFlags};
    let hw = load_hardware("h200-sxm-141gb").unwrap();
    let model = load_model("deepseek-v3").unwrap();
    let resolve = |v: &str, dp: Option<u64>| {
        let flags = ServerFlags {
            sglang_version: Some(v.parse().unwrap()),
            tp: Some(8),
            dp,
            enable_dp_attention: true,
            ..Default::default()
        };
        ServerConfig::resolve(&flags, &hw, &model).unwrap()
    };
    let c = resolve("0.4.1", None);
    assert_eq!((c.dp, c.chunked_prefill_size), (8, Some(4096)));
    assert!(!c.overlap_schedule);
    assert!(c.cuda_graph_batch_sizes.is_empty());
    assert_eq!(c.attention_backend, "triton");
    assert!((c.schedule_conservativeness - 0.3).abs() < 1e-12);
    let c = resolve("0.4.1.post4", None);
    assert_eq!((c.dp, c.chunked_prefill_size), (8, Some(4096)));
    assert!(!c.overlap_schedule);
    assert!(!c.cuda_graph_batch_sizes.is_empty());
    // 0.5.6: the chunk without DP attention, divided by the flag's dp (4 here, not tp).
    let plain = ServerConfig::resolve(
        &ServerFlags {
            sglang_version: Some("0.5.6".parse().unwrap()),
            tp: Some(8),
            ..Default::default()
        },
        &hw,
        &model,
    )
    .unwrap();
    let c = resolve("0.5.6", Some(4));
    assert_eq!(c.dp, 4);
    assert_eq!(
        c.chunked_prefill_size.unwrap(),
        plain.chunked_prefill_size.unwrap() / 4
    );
    assert!(c.overlap_schedule);
}

/// `--enable-torch-compile` (spec::torch_compile): 0.4.0 on an H200 compiles the captured sizes
/// up to 32 (cuda_graph_runner.py); servesim prices nothing differently, so the resolved server
/// equals the uncompiled one except for the note, and a zero max_bs is refused.
#[test]
fn torch_compile_is_accepted_and_changes_only_a_note() {
    use servesim::spec::server::{ServerConfig, ServerFlags};
    let hw = load_hardware("h200-sxm-141gb").unwrap();
    let m = load_model("llama-3.1-70b").unwrap();
    let plain = ServerFlags {
        tp: Some(4),
        sglang_version: Some("0.4.0".parse().unwrap()),
        ..Default::default()
    };
    let compiled = ServerFlags {
        enable_torch_compile: true,
        ..plain.clone()
    };
    let a = ServerConfig::resolve(&plain, &hw, &m).unwrap();
    let mut b = ServerConfig::resolve(&compiled, &hw, &m).unwrap();
    let n = b.notes.pop().unwrap();
    assert!(n.contains("batch 1..=32"), "{n}");
    assert_eq!(a, b, "the flag must change nothing but the note");
    let zero = ServerFlags {
        torch_compile_max_bs: Some(0),
        ..compiled.clone()
    };
    let e = ServerConfig::resolve(&zero, &hw, &m)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--torch-compile-max-bs"), "{e}");
    let eager = ServerFlags {
        disable_cuda_graph: true,
        ..compiled
    };
    let c = ServerConfig::resolve(&eager, &hw, &m).unwrap();
    assert!(
        c.notes.iter().any(|n| n.contains("no effect")),
        "{:?}",
        c.notes
    );
}
