//! vLLM V1's scheduler and configuration, checked by hand: the KV cache sized from
//! `gpu_memory_utilization` and the profile run as `gpu_worker.determine_available_memory`
//! does, the token budget shared by decodes and a chunked prefill in one step, the
//! preemption victim (the last admitted running request, requeued at the front) and its
//! recompute, `max_num_seqs`, and whole runs through the event loop; V0 (before 0.8): its
//! defaults, prefill-first steps, the admission watermark and its chunked-prefill policy.
mod common;

use servesim::engine::request::Phase;
use servesim::engine::scheduler::Batch;
use servesim::engine::vllm::VllmScheduler;
use servesim::simulation::{run, Scenario};
use servesim::spec::bundled::{load_hardware, load_model};
use servesim::spec::engine::{resolve, Engine};
use servesim::spec::server::{ServerConfig, ServerFlags};
use servesim::spec::workload::{ClientFlags, ScenarioFile};

const MIB: f64 = 1024.0 * 1024.0;

fn vllm(flags: ServerFlags, hw: &str, model: &str) -> ServerConfig {
    resolve(
        Engine::Vllm,
        &flags,
        &load_hardware(hw).unwrap(),
        &load_model(model).unwrap(),
    )
    .unwrap()
}

/// A batch's prefill items as (id, extend, prefix, last chunk).
fn chunks(b: &Batch) -> Vec<(usize, u64, u64, bool)> {
    b.prefill
        .iter()
        .map(|p| (p.id, p.extend, p.prefix, p.last_chunk))
        .collect()
}

/// Llama-3.1-8B on one H100 under `vllm serve` of `version`, all defaults.
fn llama_8b_on_h100(version: &str) -> ServerConfig {
    let flags = ServerFlags {
        vllm_version: Some(version.parse().unwrap()),
        ..Default::default()
    };
    vllm(flags, "h100-sxm5-80gb", "llama-3.1-8b")
}

/// qwen2.5-0.5b with blocks of 16, `blocks` KV blocks (one of them vLLM's null block),
/// `max_model_len` 64 and the given budgets.
fn small(blocks: u64, mnbt: u64, mns: u64) -> VllmScheduler {
    let flags = ServerFlags {
        num_gpu_blocks_override: Some(blocks),
        max_num_batched_tokens: Some(mnbt),
        max_num_seqs: Some(mns),
        max_model_len: Some(64),
        vllm_version: Some("0.11.0".parse().unwrap()),
        ..Default::default()
    };
    VllmScheduler::new(&vllm(flags, "h100-sxm5-80gb", "qwen2.5-0.5b"), None).unwrap()
}

fn step(s: &mut VllmScheduler) -> Batch {
    let b = s.next_batch().expect("a batch");
    s.complete(&b);
    s.check_invariants().unwrap();
    b
}

#[test]
fn kv_cache_is_sized_as_vllm_sizes_it_by_hand() {
    // Llama-3.1-8B on one H100 (nvidia-smi 81559 MiB), `vllm serve` 0.11.0: utilization 0.90,
    // budget 8192 tokens / 1024 sequences (reference A.2: ≥ 70 GiB, not an A100), block 16.
    let c = llama_8b_on_h100("0.11.0");
    let v = c.vllm.as_ref().unwrap();
    assert_eq!((v.max_num_batched_tokens, v.max_num_seqs), (8192, 1024));
    assert_eq!((v.block_size, v.gpu_memory_utilization), (16, 0.90));
    // requested = 81559 MiB × 0.90 = 73403.1 MiB.
    let requested = 81559.0 * MIB * 0.90;
    // Weights: 8,030,261,248 parameters in bf16 (embedding and LM head untied).
    let weights = c.weight_bytes_per_rank;
    assert!((weights / 2.0 - 8.03e9).abs() < 0.01e9, "{weights}");
    // Profile-run peak: the sampler's float32 logits + probabilities of min(1024, 8192)
    // sequences × 128256 vocab × 8 B = 1,050,673,152 B, above the forward's 8192 tokens ×
    // 2 B × (2·4096 + 48·128 + 3·14336) = 939,524,096 B.
    let activation = 1024.0 * 128256.0 * 8.0;
    assert_eq!(v.activation_peak_bytes, activation);
    // Non-torch memory 0.5 GiB; no CUDA-graph estimate before 0.20.
    let kv = requested - weights - activation - 512.0 * MIB;
    // One block: 16 tokens × 32 layers × 2 (K, V) × 8 KV heads × 128 × 2 B = 2 MiB.
    let blocks = (kv / (2.0 * MIB)).floor() as u64;
    assert_eq!(v.num_gpu_blocks, blocks);
    assert!((27_000..29_000).contains(&blocks), "{blocks}");
    // The null block is not usable.
    assert_eq!(c.kv_pool_tokens, (blocks - 1) * 16);

    // 0.20+: utilization 0.92 and the CUDA-graph estimate (0.5 GiB) come off too.
    let n = llama_8b_on_h100("0.20.0");
    let kv20 = 81559.0 * MIB * 0.92 - weights - activation - 1024.0 * MIB;
    assert_eq!(
        n.vllm.unwrap().num_gpu_blocks,
        (kv20 / (2.0 * MIB)).floor() as u64
    );
}

#[test]
fn a_long_prefill_is_chunked_while_decodes_continue_in_the_same_step() {
    // Budget 64 tokens per step; 100 usable blocks.
    let mut s = small(101, 64, 8);
    let a = s.add_request(20, 30);
    s.arrive(a);
    let b1 = step(&mut s);
    assert_eq!(b1.shape.prefill_tokens, 20);
    assert_eq!(s.phase(a), Phase::Running);
    let b = s.add_request(40, 5);
    let c = s.add_request(60, 5);
    s.arrive(b);
    s.arrive(c);
    // A decodes 1 token, B prefills all 40, C gets the 23 left of 64.
    let b2 = step(&mut s);
    assert_eq!(b2.shape.decode_reqs, 1);
    assert_eq!(b2.shape.prefill_tokens, 63);
    assert_eq!(chunks(&b2), vec![(b, 40, 0, true), (c, 23, 0, false)]);
    // Next: A and B decode (2 tokens), C continues with its 37 remaining tokens.
    let b3 = step(&mut s);
    assert_eq!(b3.shape.decode_reqs, 2);
    assert_eq!(chunks(&b3), vec![(c, 37, 23, true)]);
    assert_eq!(
        (s.output_tokens(a), s.output_tokens(b), s.output_tokens(c)),
        (3, 2, 1)
    );
}

#[test]
fn the_long_prefill_threshold_caps_each_chunk() {
    // A 64-token budget and --long-prefill-token-threshold 16, under vLLM `version`.
    let flags = |version: Option<&str>| ServerFlags {
        num_gpu_blocks_override: Some(101),
        max_num_batched_tokens: Some(64),
        max_num_seqs: Some(8),
        max_model_len: Some(64),
        long_prefill_token_threshold: Some(16),
        vllm_version: version.map(|v| v.parse().unwrap()),
        ..Default::default()
    };
    let cfg = vllm(flags(None), "h100-sxm5-80gb", "qwen2.5-0.5b");
    let mut s = VllmScheduler::new(&cfg, None).unwrap();
    for _ in 0..2 {
        let id = s.add_request(40, 4);
        s.arrive(id);
    }
    let b = step(&mut s);
    assert_eq!(
        b.prefill.iter().map(|p| p.extend).collect::<Vec<_>>(),
        vec![16, 16]
    );
    // A lone request: uncapped from 0.31 (it takes the whole 40), capped before.
    for (version, expect) in [("0.33.0", 40), ("0.30.0", 16)] {
        let cfg = vllm(flags(Some(version)), "h100-sxm5-80gb", "qwen2.5-0.5b");
        let mut s = VllmScheduler::new(&cfg, None).unwrap();
        let id = s.add_request(40, 4);
        s.arrive(id);
        assert_eq!(step(&mut s).prefill[0].extend, expect, "vLLM {version}");
    }
}

#[test]
fn preemption_takes_the_last_admitted_and_recomputes_it_from_the_front_of_the_queue() {
    // 6 usable blocks (96 tokens). Three requests of 16 prompt tokens take a block each, then
    // a second block each at their first decode (context 16 fills the first): 6 blocks.
    let mut s = small(7, 64, 8);
    let ids: Vec<usize> = (0..3)
        .map(|_| {
            let id = s.add_request(16, 30);
            s.arrive(id);
            id
        })
        .collect();
    let d = s.add_request(16, 4); // arrives later, waits behind
    step(&mut s); // prefill A, B, C
    s.arrive(d);
    // 16 decode steps: contexts 16 → 32, all six blocks in use, D cannot be admitted.
    for _ in 0..16 {
        let b = step(&mut s);
        assert!(b.prefill.is_empty(), "D never fits while A, B, C run");
    }
    assert_eq!(s.computed_tokens(ids[2]), 32);
    // Context 32 fills two blocks each: three new blocks are needed, none is free. vLLM pops
    // the last admitted (C), frees its two blocks, and A and B take one each.
    let b = step(&mut s);
    assert_eq!(b.retracted, vec![ids[2]]);
    assert_eq!(b.shape.decode_reqs, 2);
    assert!(
        b.prefill.is_empty(),
        "no admission in a step that preempted"
    );
    assert_eq!(s.phase(ids[2]), Phase::Waiting);
    assert_eq!(s.output_tokens(ids[2]), 17, "its outputs are kept");
    // C went to the FRONT of the waiting queue, ahead of D (SGLang appends to the tail).
    assert_eq!(s.waiting_ids().collect::<Vec<_>>(), vec![ids[2], d]);
    // A and B finish at 30 outputs (13 more steps, before their contexts reach 48 and would
    // need a fourth block); C (33 tokens: 16 prompt + 17 outputs, 3 blocks) is admitted as
    // soon as their blocks are free, its cached blocks having been evicted to make room for
    // A and B's third blocks.
    let mut recompute = None;
    for _ in 0..40 {
        let b = step(&mut s);
        if let Some(p) = b.prefill.iter().find(|p| p.id == ids[2]) {
            recompute = Some((p.extend, p.prefix, p.last_chunk));
            break;
        }
    }
    assert_eq!(recompute, Some((33, 0, true)));
    assert_eq!(
        s.output_tokens(ids[2]),
        18,
        "the recompute yields its 18th token"
    );
}

#[test]
fn max_num_seqs_caps_the_running_requests() {
    let mut s = small(101, 64, 2);
    for _ in 0..3 {
        let id = s.add_request(8, 3);
        s.arrive(id);
    }
    let b = step(&mut s);
    assert_eq!(
        b.prefill.len(),
        2,
        "budget left (48 tokens) but max_num_seqs is 2"
    );
    assert_eq!((s.running_len(), s.waiting_len()), (2, 1));
    // The third is admitted only when one finishes (3 outputs: after 2 decode steps).
    let b = step(&mut s);
    assert!(b.prefill.is_empty());
    let b = step(&mut s);
    assert!(b.prefill.is_empty());
    let b = step(&mut s);
    assert_eq!(b.prefill.len(), 1);
}

fn scenario(server: ServerFlags, client: ClientFlags) -> Scenario {
    let mut sc = common::small_h100_scenario(&server, &client);
    sc.check_invariants = true;
    sc
}

fn client(n: u64, input: u64, output: u64) -> ClientFlags {
    ClientFlags {
        num_prompts: Some(n),
        random_input_len: Some(input),
        random_output_len: Some(output),
        random_range_ratio: Some(1.0),
        ..Default::default()
    }
}

#[test]
fn a_crowded_vllm_run_preempts_and_still_serves_every_token() {
    let server = ServerFlags {
        engine: Some("vllm".into()),
        num_gpu_blocks_override: Some(60),
        max_model_len: Some(512),
        ..Default::default()
    };
    let sc = scenario(server, client(64, 200, 200));
    let out = run(&sc).unwrap();
    assert_eq!(out.metrics.completed, 64);
    assert_eq!(out.metrics.total_output_tokens, 64 * 200);
    assert!(
        out.stats.sched.retractions > 0,
        "59 blocks cannot hold 64 × 400 tokens"
    );
    assert!(out.stats.sched.max_running <= 1024);
    let again = run(&sc).unwrap();
    assert_eq!(format!("{:?}", out.metrics), format!("{:?}", again.metrics));
}

#[test]
fn backend_vllm_alone_selects_the_vllm_engine() {
    let sc = scenario(
        ServerFlags::default(),
        ClientFlags {
            backend: Some("vllm".into()),
            ..client(8, 100, 10)
        },
    );
    assert!(sc.server.vllm.is_some());
    let out = run(&sc).unwrap();
    assert_eq!(out.metrics.completed, 8);
}

#[test]
fn each_engine_refuses_the_other_engines_flags_in_one_line() {
    common::fails_with(
        &[
            "run",
            "--engine",
            "vllm",
            "--mem-fraction-static",
            "0.8",
            "--model",
            "qwen2.5-0.5b",
            "--hardware",
            "h100-sxm5-80gb",
        ],
        &["--mem-fraction-static", "SGLang flag"],
    );
    common::fails_with(
        &[
            "run",
            "--max-num-seqs",
            "8",
            "--model",
            "qwen2.5-0.5b",
            "--hardware",
            "h100-sxm5-80gb",
        ],
        &["--max-num-seqs", "--engine vllm"],
    );
    common::fails_with(
        &[
            "run",
            "--engine",
            "vllm",
            "--vllm-version",
            "0.5.4",
            "--model",
            "qwen2.5-0.5b",
            "--hardware",
            "h100-sxm5-80gb",
        ],
        &["0.5.4", "oldest modelled, 0.6.0"],
    );
    let vllm_run = |extra: &[&str], want: &[&str]| {
        let mut args = vec!["run", "--engine", "vllm", "--model", "qwen2.5-0.5b"];
        args.extend_from_slice(&["--hardware", "h100-sxm5-80gb"]);
        args.extend_from_slice(extra);
        common::fails_with(&args, want);
    };
    vllm_run(
        &["--vllm-version", "0.11.0", "--no-enable-chunked-prefill"],
        &["--no-enable-chunked-prefill", "V0"],
    );
    vllm_run(
        &[
            "--vllm-version",
            "0.6.3",
            "--long-prefill-token-threshold",
            "16",
        ],
        &["--long-prefill-token-threshold", "0.8.0"],
    );
    vllm_run(
        &[
            "--vllm-version",
            "0.6.3",
            "--max-model-len",
            "4096",
            "--max-num-batched-tokens",
            "2048",
        ],
        &["max_num_batched_tokens (2048)", "max_model_len (4096)"],
    );
}

#[test]
fn a_sweep_compares_the_engines_point_by_point() {
    use servesim::sweep::grid::Grid;
    use servesim::sweep::Sweep;
    let grid = Grid::of(&[
        ("hardware", "h100-sxm5-80gb"),
        ("model", "qwen2.5-0.5b"),
        ("num-prompts", "64"),
        ("random-input-len", "256"),
        ("random-output-len", "64"),
        ("random-range-ratio", "1"),
        ("engine", "sglang,vllm"),
    ]);
    let sweep = Sweep {
        file: ScenarioFile::default(),
        scenario: None,
        grid: grid.unwrap(),
    };
    let out = sweep.run(None, &|| {});
    let engines: Vec<String> = out
        .rows
        .iter()
        .map(|r| r.deployment.as_ref().expect("resolved").engine.clone())
        .collect();
    assert_eq!(engines, vec!["sglang", "vllm"]);
    assert!(out.rows.iter().all(|r| r.error.is_none()), "{:?}", out.rows);
    // vLLM sizes its KV cache differently (0.92 of total memory, in 16-token blocks).
    let pools: Vec<u64> = out
        .rows
        .iter()
        .map(|r| r.deployment.as_ref().unwrap().kv_pool_tokens)
        .collect();
    assert_ne!(pools[0], pools[1]);
    assert_eq!(pools[1] % 16, 0);
}

#[test]
fn the_kernel_backend_prices_a_vllm_server_with_vllms_kernels() {
    use servesim::cost::BatchShape;
    let kernels = |engine: &str| {
        let sc = scenario(
            ServerFlags {
                engine: Some(engine.into()),
                cost_model: Some("kernels".into()),
                ..Default::default()
            },
            client(8, 100, 10),
        );
        sc.step_cost().unwrap()
    };
    let (sglang, vllm) = (kernels("sglang"), kernels("vllm"));
    let shape = BatchShape {
        decode_reqs: 64,
        decode_ctx_sum: 64 * 2048,
        graph_bs: Some(64),
        ..Default::default()
    };
    let text = |b: &servesim::cost::breakdown::StepBreakdown| {
        b.items
            .iter()
            .map(|i| i.detail.clone())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let v = text(&vllm.explain(&shape));
    assert!(v.contains("h100_sxm_vllm vllm 0.24.0"), "{v}");
    assert!(v.contains("lane fa3"), "{v}");
    let s = text(&sglang.explain(&shape));
    assert!(s.contains("h100_sxm sglang 0.5.14"), "{s}");
    // Different measured kernels: the same step has a different price.
    assert_ne!(
        sglang.step_time(&shape).gpu_ns,
        vllm.step_time(&shape).gpu_ns
    );
}

/// The plan's launch command for a vLLM deployment is `vllm serve` with the values servesim
/// resolved (the block count pinned, so the real server runs the simulated KV cache), and the
/// SGLang client switches to its vLLM backend.
#[test]
fn a_vllm_deployment_launches_with_vllm_serve_and_pinned_values() {
    use servesim::plan::launch::{render, Engine as LaunchEngine};
    let server = ServerFlags {
        engine: Some("vllm".into()),
        max_num_seqs: Some(96),
        max_model_len: Some(4096),
        ..Default::default()
    };
    let sc = scenario(server, client(8, 100, 10));
    assert_eq!(LaunchEngine::of(&sc), LaunchEngine::Vllm);
    let l = render(&sc, LaunchEngine::of(&sc));
    let blocks = sc.server.vllm.as_ref().unwrap().num_gpu_blocks;
    assert!(
        l.server
            .starts_with("vllm serve Qwen/Qwen2.5-0.5B-Instruct "),
        "{}",
        l.server
    );
    for needle in [
        " --tensor-parallel-size 1",
        " --max-num-seqs 96",
        " --max-model-len 4096",
        &format!(" --num-gpu-blocks-override {blocks}"),
    ] {
        assert!(l.server.contains(needle), "{needle} in {}", l.server);
    }
    assert!(
        l.client
            .starts_with("python -m sglang.bench_serving --backend vllm "),
        "{}",
        l.client
    );
}

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

#[test]
fn v0_without_chunked_prefill_runs_prompts_in_steps_of_their_own() {
    let mut s = small_v0(101, false);
    let a = s.add_request(20, 30);
    s.arrive(a);
    step(&mut s);
    let b = s.add_request(40, 5);
    let c = s.add_request(60, 5);
    s.arrive(b);
    s.arrive(c);
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
    let a = s.add_request(20, 30);
    s.arrive(a);
    step(&mut s);
    let b = s.add_request(40, 5);
    let c = s.add_request(60, 5);
    s.arrive(b);
    s.arrive(c);
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
        let sc = scenario(server, client(64, 200, 200));
        let out = run(&sc).unwrap();
        assert_eq!(out.metrics.completed, 64);
        assert_eq!(out.metrics.total_output_tokens, 64 * 200);
        assert!(
            out.stats.sched.retractions > 0,
            "60 blocks, 64 × 400 tokens"
        );
        let again = run(&sc).unwrap();
        assert_eq!(format!("{:?}", out.metrics), format!("{:?}", again.metrics));
    }
}

#[test]
fn graph_rules_by_version_pure_decode_full_mixed_piecewise_v0_eager() {
    use servesim::cost::Launch;
    // One step with a decode and a 40-token prefill, then a pure decode step, per version.
    let launches = |version: &str| {
        let flags = ServerFlags {
            num_gpu_blocks_override: Some(101),
            max_num_batched_tokens: Some(64),
            max_num_seqs: Some(32),
            max_model_len: Some(64),
            enable_chunked_prefill: version.starts_with("0.6"),
            vllm_version: Some(version.parse().unwrap()),
            ..Default::default()
        };
        let mut s =
            VllmScheduler::new(&vllm(flags, "h100-sxm5-80gb", "qwen2.5-0.5b"), None).unwrap();
        let a = s.add_request(20, 30);
        s.arrive(a);
        step(&mut s);
        let b = s.add_request(40, 1);
        s.arrive(b);
        let mixed = step(&mut s).shape;
        let decode = step(&mut s).shape;
        assert_eq!((mixed.prefill_reqs, decode.prefill_reqs), (1, 0));
        (
            mixed.launch(),
            mixed.graph_bs,
            decode.launch(),
            decode.graph_bs,
        )
    };
    // 0.11+ FULL_AND_PIECEWISE: the mixed step (41 tokens) pads to the 48-token piece
    // (capture sizes 1, 2, 4, 8, …, 64 = 2 × max_num_seqs).
    let want = (Launch::Piecewise, Some(48), Launch::Graph, Some(1));
    assert_eq!(launches("0.11.0"), want);
    // 0.8–0.10 PIECEWISE: the pure decode step is piecewise too.
    let want = (Launch::Piecewise, Some(48), Launch::Piecewise, Some(1));
    assert_eq!(launches("0.10.0"), want);
    // V0: decode-only graphs by batch size; the mixed step is eager.
    assert_eq!(
        launches("0.6.3"),
        (Launch::Eager, None, Launch::Graph, Some(1))
    );
}

#[test]
fn piecewise_graphs_keep_three_tenths_of_the_eager_launch_cost_by_hand() {
    use servesim::cost::BatchShape;
    // qwen2.5-0.5b (24 layers, tp 1: no all-reduce) on an H100, whose profile's eager launch
    // cost is 43,300 ns per layer. The same 8-request decode step, padded to the graph of 8:
    // a full graph pays no per-layer launch, piecewise graphs 0.3 × 43,300 per layer (three
    // launches of about ten), eager all of it. Every other term is the same: both backends.
    for backend in ["roofline", "kernels"] {
        let sc = scenario(
            ServerFlags {
                engine: Some("vllm".into()),
                vllm_version: Some("0.11.0".parse().unwrap()),
                cost_model: Some(backend.into()),
                ..Default::default()
            },
            client(8, 100, 10),
        );
        let cost = sc.step_cost().unwrap();
        let full = BatchShape {
            decode_reqs: 8,
            decode_ctx_sum: 8 * 1024,
            graph_bs: Some(8),
            ..Default::default()
        };
        let piecewise = BatchShape {
            piecewise: true,
            ..full
        };
        let eager = BatchShape {
            graph_bs: None,
            ..full
        };
        let gpu = |s: &BatchShape| cost.step_time(s).gpu_ns;
        let (f, p, e) = (gpu(&full), gpu(&piecewise), gpu(&eager));
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b;
        assert!(close(p - f, 24.0 * 0.3 * 43_300.0), "{backend}: {}", p - f);
        assert!(close(e - f, 24.0 * 43_300.0), "{backend}: {}", e - f);
    }
}

/// qwen2.5-0.5b on vLLM `version` with 101 blocks of 16, a 64-token budget, 8 sequences and
/// `--async-scheduling` when `async_flag` (0.14+ has it on by default).
fn small_at(version: &str, async_flag: bool) -> VllmScheduler {
    let flags = ServerFlags {
        num_gpu_blocks_override: Some(101),
        max_num_batched_tokens: Some(64),
        max_num_seqs: Some(8),
        max_model_len: Some(64),
        async_scheduling: async_flag,
        vllm_version: Some(version.parse().unwrap()),
        ..Default::default()
    };
    VllmScheduler::new(&vllm(flags, "h100-sxm5-80gb", "qwen2.5-0.5b"), None).unwrap()
}

#[test]
fn async_scheduling_sees_a_request_arriving_mid_step_one_step_later() {
    // `step_with_batch_queue`: step N+1 is scheduled while step N runs, so B, arriving
    // during A's prefill step, is first scheduled in the step after next (A decodes alone
    // in between); synchronous 0.13 admits it at once.
    for (version, b_admitted_in) in [("0.14.0", 3), ("0.13.0", 2)] {
        let mut s = small_at(version, false);
        let a = s.add_request(20, 30);
        s.arrive(a);
        let first = s.next_batch().unwrap();
        let b = s.add_request(20, 5);
        s.arrive(b); // while step 1 is in flight
        s.complete(&first);
        let mut admitted = None;
        for n in 2..=3 {
            let batch = step(&mut s);
            if batch.prefill.iter().any(|p| p.id == b) && admitted.is_none() {
                admitted = Some(n);
            }
        }
        assert_eq!(admitted, Some(b_admitted_in), "vLLM {version}");
    }
    // Nothing else to run: the late arrival is scheduled at once.
    let mut s = small_at("0.14.0", false);
    let a = s.add_request(20, 1);
    s.arrive(a);
    let first = s.next_batch().unwrap();
    let b = s.add_request(20, 5);
    s.arrive(b);
    s.complete(&first);
    assert_eq!(chunks(&step(&mut s)), vec![(b, 20, 0, true)]);
}

#[test]
fn async_scheduling_before_0_12_wastes_a_decode_slot_on_a_finished_request() {
    // A (2 outputs) and B (10) prefill together, then decode once: A finishes. In 0.10–0.11
    // with --async-scheduling the next step was scheduled before A's finish was seen: A
    // still takes a decode slot (its output dropped); 0.12+ skips it ("Avoid scheduling an
    // extra step"), and so does synchronous scheduling.
    for (version, async_flag, decodes) in [
        ("0.11.0", true, 2),
        ("0.11.0", false, 1),
        ("0.12.0", true, 1),
    ] {
        let mut s = small_at(version, async_flag);
        let a = s.add_request(20, 2);
        let b = s.add_request(20, 10);
        s.arrive(a);
        s.arrive(b);
        step(&mut s);
        step(&mut s);
        assert_eq!(s.phase(a), Phase::Finished);
        let third = step(&mut s);
        assert_eq!(
            third.shape.decode_reqs, decodes,
            "vLLM {version} async {async_flag}"
        );
        // The wasted slot attends to A's 22 tokens (context 21 + the dropped one).
        let b_only = 22;
        assert_eq!(
            third.shape.decode_ctx_sum,
            b_only + (decodes - 1) * 22,
            "vLLM {version}"
        );
        assert_eq!(s.output_tokens(b), 3);
    }
}

#[test]
fn vllm_servers_pay_vllms_own_cpu_per_step_not_sglangs() {
    use servesim::cost::BatchShape;
    // spec::vllm::overheads: V1 1.0 ms + 8 µs per request, V0 2.0 ms + 12 µs; SGLang keeps
    // the H100 profile's 2.296 ms + 5 µs. A 10-request decode step, by hand.
    let shape = BatchShape {
        decode_reqs: 10,
        decode_ctx_sum: 10 * 512,
        graph_bs: Some(16),
        ..Default::default()
    };
    for (engine, version, want_ns) in [
        ("vllm", Some("0.11.0"), 1.0e6 + 10.0 * 8e3),
        ("vllm", Some("0.6.3"), 2.0e6 + 10.0 * 12e3),
        ("sglang", None, 2.296e6 + 10.0 * 5e3),
    ] {
        let sc = scenario(
            ServerFlags {
                engine: Some(engine.into()),
                vllm_version: version.map(|v| v.parse().unwrap()),
                ..Default::default()
            },
            client(8, 100, 10),
        );
        let cpu = sc.step_cost().unwrap().step_time(&shape).cpu_ns;
        assert!((cpu - want_ns).abs() < 1.0, "{engine} {version:?}: {cpu}");
    }
}
