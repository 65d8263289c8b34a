//! vLLM V0 (0.6.0–0.7.x, `vllm/core/scheduler.py`) by hand: its defaults and KV sizing,
//! prefill-first steps without chunked prefill, the 1% admission watermark, the chunked
//! policy (decodes first), and crowded runs that preempt.
use super::*;

/// qwen2.5-0.5b under vLLM 0.6.3 (V0) with blocks of 16, `blocks` KV blocks (all usable in
/// V0), `max_model_len` 64, `max_num_seqs` 32, and `chunked` prefill with a 64-token budget (else V0's default
/// budget, max(64, 2048)).
fn small_v0(blocks: u64, chunked: bool) -> VllmScheduler {
    let flags = ServerFlags {
        num_gpu_blocks_override: Some(blocks),
        max_model_len: Some(64),
        max_num_batched_tokens: chunked.then_some(64),
        max_num_seqs: Some(32),
        enable_chunked_prefill: chunked,
        vllm_version: Some("0.6.3".parse().unwrap()),
        ..Default::default()
    };
    VllmScheduler::new(&vllm(flags, "h100-sxm5-80gb", "qwen2.5-0.5b"), None).unwrap()
}

#[test]
fn v0_defaults_and_kv_sizing_by_hand() {
    // Llama-3.1-8B's 131072-token context turns V0's chunked prefill on, with a 512-token
    // budget up to 0.6.4 (reference A.2); max_num_seqs 256; prefix caching off.
    let c = llama_8b_on_h100("0.6.3");
    let v = c.vllm.as_ref().unwrap();
    assert!(v.chunked_prefill && !v.prefix_caching && !c.radix_cache);
    assert_eq!((v.max_num_batched_tokens, v.max_num_seqs), (512, 256));
    // Every block is usable (no null block), the watermark is 1% of them.
    assert_eq!(c.kv_pool_tokens, v.num_gpu_blocks * 16);
    assert_eq!(v.watermark_blocks, v.num_gpu_blocks / 100);
    // Decode graphs by batch size: [1, 2, 4, 8, …, 256].
    assert_eq!((v.capture_sizes.len(), v.capture_sizes[34]), (35, 256));
    // --max-model-len 8192: chunking off, budget max(8192, 2048).
    let flags = ServerFlags {
        vllm_version: Some("0.7.3".parse().unwrap()),
        max_model_len: Some(8192),
        ..Default::default()
    };
    let c = vllm(flags, "h100-sxm5-80gb", "llama-3.1-8b");
    let v = c.vllm.unwrap();
    assert!(!v.chunked_prefill);
    assert_eq!(v.max_num_batched_tokens, 8192);
}

/// Request A (20 + 30) prefilled and decoding, then B (40 + 5) and C (60 + 5) arrive: (A, B, C).
fn decoding_a_then_b_and_c(s: &mut VllmScheduler) -> (usize, usize, usize) {
    let a = s.add_request(20, 30);
    s.arrive(a);
    step(s);
    let b = s.add_request(40, 5);
    let c = s.add_request(60, 5);
    s.arrive(b);
    s.arrive(c);
    (a, b, c)
}

#[test]
fn v0_without_chunked_prefill_runs_prompts_in_steps_of_their_own() {
    let mut s = small_v0(101, false);
    let (a, b, c) = decoding_a_then_b_and_c(&mut s);
    // `_schedule_default`: B and C (100 tokens, under the 2048 budget) prefill whole, and A
    // does not decode in that step (V1 would decode A alongside).
    let b2 = step(&mut s);
    assert!(!b2.decode && b2.shape.decode_reqs == 0);
    assert_eq!(chunks(&b2), vec![(b, 40, 0, true), (c, 60, 0, true)]);
    assert_eq!(s.output_tokens(a), 1, "A waited");
    // Nothing left to admit: the three decode together.
    let b3 = step(&mut s);
    assert!(b3.prefill.is_empty());
    assert_eq!(b3.shape.decode_reqs, 3);
    // A pure decode step replays the batch-size graph of 4 (3 padded); prefill steps are eager.
    assert_eq!((b3.shape.graph_bs, b2.shape.graph_bs), (Some(4), None));
}

#[test]
fn v0_admission_keeps_the_one_percent_watermark_free() {
    // 100 blocks, watermark ⌊0.01·100⌋ = 1. Prompts of 64 tokens take 4 blocks each: 24 fit
    // (96 blocks, 4 left); the 25th would leave 0 < 1 free, so it waits (the budget of 2048
    // tokens would take all 25 × 64 = 1600).
    let mut s = small_v0(100, false);
    for _ in 0..25 {
        let id = s.add_request(64, 4);
        s.arrive(id);
    }
    let b = step(&mut s);
    assert_eq!(b.prefill.len(), 24);
    assert_eq!((s.running_len(), s.waiting_len()), (24, 1));
}

#[test]
fn v0_chunked_prefill_schedules_decodes_first_then_chunks() {
    // `_schedule_chunked_prefill` with a 64-token budget: the same step as V1's: A decodes,
    // B prefills its 40 tokens, C gets the 23 left.
    let mut s = small_v0(101, true);
    let (_, b, c) = decoding_a_then_b_and_c(&mut s);
    let b2 = step(&mut s);
    assert_eq!(b2.shape.decode_reqs, 1);
    assert_eq!(chunks(&b2), vec![(b, 40, 0, true), (c, 23, 0, false)]);
    // Mixed steps run eagerly in V0 (decode graphs only).
    assert_eq!(b2.shape.graph_bs, None);
    let b3 = step(&mut s);
    assert_eq!(b3.shape.decode_reqs, 2);
    assert_eq!(chunks(&b3), vec![(c, 37, 23, true)]);
}

#[test]
fn a_crowded_v0_run_preempts_and_still_serves_every_token() {
    for chunked in [false, true] {
        let server = ServerFlags {
            engine: Some("vllm".into()),
            vllm_version: Some("0.6.3".parse().unwrap()),
            num_gpu_blocks_override: Some(60),
            max_model_len: Some(512),
            enable_chunked_prefill: chunked,
            ..Default::default()
        };
        crowded_run_serves_every_token(server);
    }
}
