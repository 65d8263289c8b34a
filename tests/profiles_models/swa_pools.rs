//! SGLang's hybrid SWA pools for gpt-oss (`spec::hybrid_kv`): which releases turn them on
//! (`model_specific_adjustments` in the 0.5.1–0.5.23 wheels) and the split
//! `set_num_tokens_hybrid_swa` makes of the all-layer pool, by hand.
use servesim::spec::bundled::{load_hardware, load_model};
use servesim::spec::server::{ServerConfig, ServerFlags};

/// SGLang `version`'s server for `model` on `hw`, with `f` applied to its flags.
pub fn sglang(
    hw: &str,
    model: &str,
    version: &str,
    f: impl FnOnce(&mut ServerFlags),
) -> ServerConfig {
    let mut flags = ServerFlags {
        sglang_version: Some(version.parse().unwrap()),
        ..Default::default()
    };
    f(&mut flags);
    ServerConfig::resolve(
        &flags,
        &load_hardware(hw).unwrap(),
        &load_model(model).unwrap(),
    )
    .unwrap_or_else(|e| panic!("{model} on {hw}: {e}"))
}

#[test]
fn gpt_oss_pools_split_the_all_layer_pool_by_hand() {
    // gpt-oss-20b: 12 window + 12 full layers; 120b: 18 + 18. With the default ratio 0.8,
    // full = int(M·L / (0.8·S + F)) (Python floats), swa = int(full · 0.8), page 1.
    for (hw, model, layers, half) in [
        ("a100-sxm4-80gb", "gpt-oss-20b", 24.0, 12.0),
        ("h100-sxm5-80gb", "gpt-oss-20b", 24.0, 12.0),
        ("a100-sxm4-80gb", "gpt-oss-120b", 36.0, 18.0),
        ("h100-sxm5-80gb", "gpt-oss-120b", 36.0, 18.0),
    ] {
        let on = sglang(hw, model, "0.5.10", |_| {});
        let off = sglang(hw, model, "0.5.10", |f| f.disable_hybrid_swa_memory = true);
        assert!(off.swa_pools.is_none());
        let m = off.kv_pool_tokens as f64; // the all-layer max_total_num_tokens
        let full = (m * layers / (0.8 * half + half)) as u64;
        let swa = (full as f64 * 0.8) as u64;
        let p = on
            .swa_pools
            .expect("gpt-oss runs hybrid SWA pools from 0.5.10");
        assert_eq!((p.full_tokens, p.swa_tokens), (full, swa), "{hw} {model}");
        assert!(full > off.kv_pool_tokens && swa < off.kv_pool_tokens);
        // servesim's scheduler charges the smaller pool (no SWA eviction modelled).
        assert_eq!(on.kv_pool_tokens, swa);
        // --swa-full-tokens-ratio 1: both pools equal the all-layer pool.
        let one = sglang(hw, model, "0.5.10", |f| f.swa_full_tokens_ratio = Some(1.0));
        let p1 = one.swa_pools.unwrap();
        assert_eq!(
            (p1.full_tokens, p1.swa_tokens),
            (off.kv_pool_tokens, off.kv_pool_tokens)
        );
    }
}

#[test]
fn gpt_oss_hybrid_swa_by_release_and_backend() {
    let pools = |hw: &str, v: &str| sglang(hw, "gpt-oss-20b", v, |_| {}).swa_pools.is_some();
    // 0.5.1–0.5.7: `disable_hybrid_swa_memory = True` for GptOssForCausalLM unconditionally
    // (seed 003's 0.5.1, P003's 0.5.6, GPUStack's 0.5.3 / 0.5.4.post2 all run one pool).
    for v in ["0.5.1", "0.5.3", "0.5.4.post2", "0.5.6", "0.5.7"] {
        assert!(!pools("h100-sxm5-80gb", v), "{v}");
    }
    // 0.5.8 / 0.5.9: off only with trtllm_mha (the B200 default); 0.5.10+: on everywhere.
    assert!(pools("h100-sxm5-80gb", "0.5.8"));
    assert!(pools("a100-sxm4-80gb", "0.5.9"));
    assert!(!pools("b200-sxm-180gb", "0.5.9"));
    assert!(pools("b200-sxm-180gb", "0.5.10"));
    assert!(pools("b200-sxm-180gb", "0.5.23"));
    // Other models never (no window layers).
    let q = sglang("h100-sxm5-80gb", "qwen3-8b", "0.5.23", |_| {});
    assert!(q.swa_pools.is_none());
    // A ratio outside (0, 1] is refused in one line naming the flag.
    let err = ServerConfig::resolve(
        &ServerFlags {
            sglang_version: Some("0.5.10".parse().unwrap()),
            swa_full_tokens_ratio: Some(1.5),
            ..Default::default()
        },
        &load_hardware("h100-sxm5-80gb").unwrap(),
        &load_model("gpt-oss-20b").unwrap(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("--swa-full-tokens-ratio") && err.contains("(0, 1]"),
        "{err}"
    );
}

/// gpt-oss-20b under SGLang 0.5.10 with an all-layer pool of `tokens` (`--max-total-tokens`):
/// full = int(tokens · 24 / 21.6), swa = int(full · 0.8).
fn small_hybrid(tokens: u64) -> servesim::engine::scheduler::Scheduler {
    let cfg = sglang("h100-sxm5-80gb", "gpt-oss-20b", "0.5.10", |f| {
        f.max_total_tokens = Some(tokens);
        f.disable_overlap_schedule = true;
    });
    servesim::engine::scheduler::Scheduler::new(&cfg, Some(128))
}

fn step(s: &mut servesim::engine::scheduler::Scheduler) -> servesim::engine::scheduler::Batch {
    let b = s.next_batch().expect("a batch");
    s.complete(&b);
    s.check_invariants().unwrap();
    b
}

#[test]
fn admission_counts_the_smaller_pool_and_decode_frees_swa_behind_the_window() {
    // 9000 all-layer tokens: full int(9000·24 / 21.6) = 10000 (Python gives exactly
    // 10000.0 here), swa 8000.
    let mut s = small_hybrid(9000);
    let p = s.cfg().swa.unwrap();
    assert_eq!((s.cfg().kv_pool_tokens, p), (10000, (8000, 128)));
    // Four 2000-token prompts fit the SWA pool's 8000 only without the output reserve.
    for _ in 0..4 {
        let id = s.add_request(2000, 600);
        s.arrive(id);
    }
    let b = step(&mut s);
    assert!(
        b.prefill.len() < 4,
        "the SWA pool bounds admission, not the full pool"
    );
    let admitted = b.prefill.len() as u64;
    // The prompt keeps its SWA slots (locked in the tree); decode tokens behind the window
    // go every 128 decode batches from the 129th: after 129 + 1 batches each request has
    // had 1 token freed, after 257 + 1 another 128.
    let used = |s: &servesim::engine::scheduler::Scheduler| s.kv_used();
    let mut batches = 0;
    while batches < 260 && s.running_len() == admitted {
        let b = step(&mut s);
        if b.prefill.is_empty() {
            batches += 1;
        }
    }
    assert_eq!(batches, 260, "{} running", s.running_len());
    // Full pool: the prompt + 260 decode tokens each; SWA: 1 + 128 fewer each.
    assert_eq!(used(&s), admitted * (2000 + 260));
    let swa_free = 8000 - admitted * (2000 + 260 - 129);
    assert!(swa_free < 10000 - used(&s));
    assert_eq!(s.kv_free(), swa_free);
}

#[test]
fn a_crowded_hybrid_sglang_run_keeps_both_pools_consistent() {
    use servesim::spec::workload::ClientFlags;
    let shared = ClientFlags {
        dataset_name: Some("generated-shared-prefix".into()),
        gsp_num_groups: Some(4),
        gsp_prompts_per_group: Some(10),
        gsp_system_prompt_len: Some(256),
        gsp_question_len: Some(64),
        gsp_output_len: Some(300),
        ..Default::default()
    };
    for version in ["0.5.10", "0.5.23"] {
        let server = ServerFlags {
            sglang_version: Some(version.parse().unwrap()),
            max_total_tokens: Some(6000),
            // A small output reserve admits more than fits, so decode must retract.
            schedule_conservativeness: Some(0.05),
            ..Default::default()
        };
        let client = ClientFlags {
            num_prompts: Some(40),
            random_input_len: Some(300),
            random_output_len: Some(400),
            random_range_ratio: Some(0.3),
            ..Default::default()
        };
        let out = super::common::checked_gpt_oss_run(&server, &client);
        assert_eq!(out.metrics.completed, 40, "{version}");
        if version == "0.5.10" {
            // (0.5.23's admission reserves more and never needs to retract here.)
            assert!(out.stats.sched.retractions > 0, "40 × ~700 tokens in ~5300");
        }
        // Shared prefixes move into the radix cache (out of both pools' request charges).
        let out = super::common::checked_gpt_oss_run(&server, &shared);
        assert_eq!(out.metrics.completed, 40, "{version}");
        assert!(out.stats.sched.prefix_hit_tokens > 0);
    }
}

#[test]
fn llama4_scout_pools_on_8_h100_split_by_hand() {
    // Llama 4 is in `is_hybrid_swa_model` from 0.5.8 (0.5.5 and before: only with
    // --hybrid-kvcache-ratio, off by default): 36 chunked layers on the SWA pool with the
    // 8192-token chunk as the window, 12 global layers on the full pool. full =
    // int(M · 48 / (0.8 · 36 + 12)) (Python: 0.8 · 36 + 12 = 40.8), swa = int(full · 0.8),
    // page 1 under fa3 (the Hopper default).
    let scout = |v: &str, f: &dyn Fn(&mut ServerFlags)| {
        sglang(
            "h100-sxm5-80gb",
            "meta-llama/Llama-4-Scout-17B-16E-Instruct",
            v,
            |flags| {
                flags.tp = Some(8);
                f(flags)
            },
        )
    };
    assert!(scout("0.5.5", &|_| {}).swa_pools.is_none());
    assert!(scout("0.5.7", &|_| {}).swa_pools.is_none());
    for v in ["0.5.8", "0.5.14", "0.5.23"] {
        let on = scout(v, &|_| {});
        let off = scout(v, &|f| f.disable_hybrid_swa_memory = true);
        assert_eq!(on.attention_backend, "fa3");
        let m = off.kv_pool_tokens as f64;
        let full = (m * 48.0 / (0.8 * 36.0 + 12.0)) as u64;
        let swa = (full as f64 * 0.8) as u64;
        let p = on
            .swa_pools
            .expect("Llama 4 runs hybrid SWA pools from 0.5.8");
        assert_eq!(
            (p.full_tokens, p.swa_tokens, p.window_tokens),
            (full, swa, 8192),
            "{v}"
        );
    }
    // B200 (trtllm_mha, page 64): both pools floored to whole pages.
    let b200 = |f: &dyn Fn(&mut ServerFlags)| {
        sglang(
            "b200-sxm-180gb",
            "meta-llama/Llama-4-Scout-17B-16E-Instruct",
            "0.5.14",
            |flags| {
                flags.tp = Some(8);
                f(flags)
            },
        )
    };
    let on = b200(&|_| {});
    assert_eq!(
        (on.attention_backend.as_str(), on.page_size),
        ("trtllm_mha", 64)
    );
    let m = b200(&|f| f.disable_hybrid_swa_memory = true).kv_pool_tokens as f64;
    let full = (m * 48.0 / 40.8) as u64;
    let swa = (full as f64 * 0.8) as u64;
    let p = on.swa_pools.unwrap();
    assert_eq!(
        (p.full_tokens, p.swa_tokens),
        (full / 64 * 64, swa / 64 * 64)
    );
}
