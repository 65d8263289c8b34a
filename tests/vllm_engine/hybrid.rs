//! vLLM's hybrid KV cache manager on gpt-oss (full + 128-token sliding-window layers), checked
//! by hand against vLLM 0.10.2 / 0.11.0's `kv_cache_utils.get_kv_cache_config_from_groups`
//! (one pool of `available // (block × layer bytes) // layers_per_group` blocks shared by a
//! full group and a window group) and `SlidingWindowManager.remove_skipped_blocks`.
use super::{step, vllm};
use servesim::engine::vllm::VllmScheduler;
use servesim::spec::server::ServerFlags;
use servesim::spec::workload::ClientFlags;

fn gpt_oss(
    hw: &str,
    model: &str,
    version: &str,
    disable: bool,
) -> servesim::spec::server::ServerConfig {
    let flags = ServerFlags {
        vllm_version: Some(version.parse().unwrap()),
        max_model_len: Some(32768),
        disable_hybrid_kv_cache_manager: disable,
        ..Default::default()
    };
    vllm(flags, hw, model)
}

#[test]
fn gpt_oss_pool_is_one_groups_blocks_by_hand() {
    // Per layer and token: 8 KV heads × 64 × 2 (K, V) × 2 B = 2048 B at TP 1; a block of 16
    // tokens of one layer is 32 KiB. gpt-oss-20b has 12 full + 12 window layers (groups of
    // 12), gpt-oss-120b 18 + 18 (groups of 18): a pool block is 12 (18) layer blocks, half
    // of an all-layer block, so the same bytes give twice the blocks, and vLLM logs
    // num_blocks // 2 groups × 16 tokens.
    for (hw, model, group_layers) in [
        ("a100-sxm4-80gb", "gpt-oss-20b", 12.0),
        ("h100-sxm5-80gb", "gpt-oss-20b", 12.0),
        ("a100-sxm4-80gb", "gpt-oss-120b", 18.0),
        ("h100-sxm5-80gb", "gpt-oss-120b", 18.0),
    ] {
        for version in ["0.10.2", "0.11.0"] {
            let c = gpt_oss(hw, model, version, false);
            let v = c.vllm.as_ref().unwrap();
            let kv = v.kv_cache_bytes;
            let blocks = (kv / (16.0 * 2048.0 * group_layers)).floor() as u64;
            assert_eq!(v.num_gpu_blocks, blocks, "{hw} {model} {version}");
            let h = v.hybrid.unwrap();
            assert_eq!((h.full_groups, h.window_groups), (1, 1));
            assert_eq!(h.logged_tokens(v.num_gpu_blocks, 16), blocks / 2 * 16);
            // The scheduler's pool: every usable block of the shared pool.
            assert_eq!(c.kv_pool_tokens, (blocks - 1) * 16);
            // --disable-hybrid-kv-cache-manager: blocks of every layer, half as many.
            let u = gpt_oss(hw, model, version, true);
            let uv = u.vllm.as_ref().unwrap();
            assert!(uv.hybrid.is_none());
            let all = (kv / (16.0 * 2048.0 * 2.0 * group_layers)).floor() as u64;
            assert_eq!(uv.num_gpu_blocks, all);
            assert!(blocks == 2 * all || blocks == 2 * all + 1);
        }
    }
}

/// gpt-oss-20b under vLLM 0.11.0 with `blocks` pool blocks (one the null block).
fn small_oss(blocks: u64, max_model_len: u64) -> VllmScheduler {
    let flags = ServerFlags {
        num_gpu_blocks_override: Some(blocks),
        max_model_len: Some(max_model_len),
        vllm_version: Some("0.11.0".parse().unwrap()),
        ..Default::default()
    };
    VllmScheduler::new(&vllm(flags, "h100-sxm5-80gb", "gpt-oss-20b"), Some(128)).unwrap()
}

#[test]
fn a_long_request_holds_its_chunk_then_only_the_window_in_the_window_group() {
    let mut s = small_oss(1001, 2048);
    let id = s.add_request(1000, 300);
    s.arrive(id);
    let b = s.next_batch().unwrap();
    // allocate_slots(num_computed 0, 1000 new): 63 blocks in each group.
    assert_eq!(s.kv_used(), 2 * 63 * 16);
    s.complete(&b);
    // The next call's remove_skipped_blocks(1000): last useful token 873, block 54: blocks
    // 0..54 of the window group are freed, 9 stay.
    assert_eq!(s.kv_used(), 63 * 16 + 9 * 16);
    s.check_invariants().unwrap();
    for _ in 0..250 {
        step(&mut s);
        let ctx = s.computed_tokens(id);
        let full = ctx.div_ceil(16) * 16;
        let window = s.kv_used() - full;
        // At most ⌈(128 + 15) / 16⌉ = 9 blocks, never fewer than the window's 8.
        assert!(
            (128..=144).contains(&window),
            "ctx {ctx}: window group {window}"
        );
    }
}

#[test]
fn admission_counts_both_groups_and_the_freed_window_blocks() {
    // 96 usable blocks; prompts of 256 need 16 full + 16 window blocks each at admission.
    let mut s = small_oss(97, 512);
    for _ in 0..4 {
        let id = s.add_request(256, 100);
        s.arrive(id);
    }
    let b = step(&mut s);
    assert_eq!(
        b.prefill.len(),
        3,
        "3 × 32 blocks fill the pool; the 4th waits"
    );
    // After the prefill each keeps 8 window blocks (remove_skipped_blocks(256): blocks 0..8
    // freed), the full group 16: 3 × 24 blocks.
    assert_eq!(s.kv_used(), 3 * 24 * 16);
    // Decode step (num_computed 256): a new block in each group: 3 × 26 blocks held, 18
    // free, still short of the 4th request's 32.
    let b = step(&mut s);
    assert!(b.prefill.is_empty());
    assert_eq!(s.kv_used(), 3 * 26 * 16);
    assert_eq!(s.waiting_len(), 1);
}

#[test]
fn a_crowded_gpt_oss_run_keeps_the_invariants_and_serves_every_token() {
    let server = ServerFlags {
        engine: Some("vllm".into()),
        vllm_version: Some("0.10.2".parse().unwrap()),
        num_gpu_blocks_override: Some(140),
        max_model_len: Some(1024),
        async_scheduling: true,
        ..Default::default()
    };
    let client = ClientFlags {
        num_prompts: Some(48),
        random_input_len: Some(300),
        random_output_len: Some(200),
        random_range_ratio: Some(0.2),
        ..Default::default()
    };
    let out = super::common::checked_gpt_oss_run(&server, &client);
    assert_eq!(out.metrics.completed, 48);
    assert!(
        out.stats.sched.retractions > 0,
        "139 blocks cannot hold 48 requests of ~500 tokens in two groups"
    );
}

#[test]
fn gpt_oss_weights_are_what_vllm_logs_after_loading() {
    // vllm#23278 (vLLM 0.10.1, one H100, Marlin since its torch 2.7.1 is older than 2.8):
    // "Model loading took 65.9651 GiB". 0.10.2 / 0.11.0 also run Marlin on sm80 and sm90
    // (no triton_kernels), with the same padding (2880 × 2880 experts held as 2944 × 3072).
    // The checkpoint's own 4.25 bits per expert weight give 60.7 GiB, 5 GiB short.
    // gpt-oss-20b under Marlin logs 13.7153–13.72 GiB (public startup logs, one of which
    // prints the padded shapes: w13 (32, 5888, 1536), w2 (32, 3072, 1472) bytes).
    let gib = (1u64 << 30) as f64;
    for hw in ["h100-sxm5-80gb", "a100-sxm4-80gb"] {
        for version in ["0.10.2", "0.11.0"] {
            for (model, logged) in [("gpt-oss-120b", 65.9651), ("gpt-oss-20b", 13.7164)] {
                let w = gpt_oss(hw, model, version, false).weight_bytes_per_rank / gib;
                assert!(
                    (w - logged).abs() < 0.1,
                    "{hw} {model} {version}: {w:.3} GiB"
                );
            }
        }
    }
    // vllm#33155 (0.14.1, one H100, "Using Triton backend"): "Model loading took 64.38 GiB";
    // the swizzled copies keep the original scales and make the biases fp32.
    use servesim::spec::model::WeightFormat;
    use servesim::spec::vllm::mxfp4::{loaded_extra_bytes_per_rank, VllmMxfp4Backend};
    let m = servesim::spec::bundled::load_model("gpt-oss-120b").unwrap();
    let triton = (m.weight_bytes_per_rank(1, WeightFormat::Mxfp4)
        + loaded_extra_bytes_per_rank(&m, 1, VllmMxfp4Backend::Triton))
        / gib;
    assert!((triton - 64.38).abs() < 0.3, "triton {triton:.3} GiB");
}
