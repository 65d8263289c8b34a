//! vLLM V1's scheduler and configuration, checked by hand: the KV cache sized from
//! `gpu_memory_utilization` and the profile run as `gpu_worker.determine_available_memory`
//! does, the token budget shared by decodes and a chunked prefill in one step, the
//! preemption victim (the last admitted running request, requeued at the front) and its
//! recompute, `max_num_seqs`, and whole runs through the event loop. V0 (before 0.8) in
//! `v0.rs`; CUDA-graph rules, async scheduling and vLLM's CPU costs in `rules.rs`; the serial host
//! time per step with and without async scheduling in `host_time.rs`; the KV budget
//! against real start-up logs in `logged_memory.rs`.
#[path = "../common/mod.rs"]
mod common;
mod host_time;
mod hybrid;
mod logged_memory;
mod paste;
mod rules;
mod v0;

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
    // Profile-run peak: the dummy sampler over min(1024, 8192) sequences × 128256 vocab × 14 B
    // (bf16 logits 2, their float32 copy 4, FlashInfer's top-k-masked copy 4 and its softmax
    // 4) = 1,838,678,016 B, above the forward's 8192 tokens × 2 B × (2·4096 + 48·128 +
    // 3·14336) = 939,524,096 B.
    let activation = 1024.0 * 128256.0 * 14.0;
    assert_eq!(v.activation_peak_bytes, activation);
    // Non-torch memory 0.25 GiB; no CUDA-graph estimate before 0.20.
    let kv = requested - weights - activation - 256.0 * MIB;
    // One block: 16 tokens × 32 layers × 2 (K, V) × 8 KV heads × 128 × 2 B = 2 MiB.
    let blocks = (kv / (2.0 * MIB)).floor() as u64;
    assert_eq!(v.num_gpu_blocks, blocks);
    assert!((27_000..29_000).contains(&blocks), "{blocks}");
    // The null block is not usable.
    assert_eq!(c.kv_pool_tokens, (blocks - 1) * 16);

    // 0.20+: utilization 0.92 and the CUDA-graph estimate (0.5 GiB) come off too.
    let n = llama_8b_on_h100("0.20.0");
    let kv20 = 81559.0 * MIB * 0.92 - weights - activation - 768.0 * MIB;
    assert_eq!(
        n.vllm.unwrap().num_gpu_blocks,
        (kv20 / (2.0 * MIB)).floor() as u64
    );
}

/// Qwen3-32B (BF16, 40,960 context) on one 80 GB GPU under `vllm serve` 0.11.0 defaults.
fn qwen3_32b_alone(hw: &str, max_model_len: Option<u64>) -> servesim::error::Result<ServerConfig> {
    let flags = ServerFlags {
        vllm_version: Some("0.11.0".parse().unwrap()),
        max_model_len,
        ..Default::default()
    };
    resolve(
        Engine::Vllm,
        &flags,
        &load_hardware(hw).unwrap(),
        &load_model("qwen3-32b").unwrap(),
    )
}

#[test]
fn qwen3_32b_on_one_h100_gets_less_kv_than_on_one_a100_and_cannot_hold_40960_by_hand() {
    // The GPUStack Qwen3-32B pages (validation/gpustack): one 80 GB GPU, `vllm serve` 0.11.0.
    // Worked from vLLM 0.11's rules (arg_utils: ≥ 70 GiB and not an A100 → 8192 tokens / 1024
    // sequences, else 2048 / 256; gpu_worker.determine_available_memory: 0.90 × total − weights
    // − profile-run peak − non-torch memory), not from servesim's code.
    let h = qwen3_32b_alone("h100-sxm5-80gb", Some(32768)).unwrap();
    let a = qwen3_32b_alone("a100-sxm4-80gb", Some(32768)).unwrap();
    let (hv, av) = (h.vllm.as_ref().unwrap(), a.vllm.as_ref().unwrap());
    assert_eq!((hv.max_num_batched_tokens, hv.max_num_seqs), (8192, 1024));
    assert_eq!((av.max_num_batched_tokens, av.max_num_seqs), (2048, 256));
    // Weights: 32,762,123,264 parameters in bf16 (64 layers of 5120 × (8192 + 2 × 1024) QKV,
    // 8192 × 5120 O, 3 × 5120 × 25600 MLP, norms; untied 151936 × 5120 embedding and LM head).
    let weights = h.weight_bytes_per_rank;
    assert!((weights / 2.0 - 32.762e9).abs() < 0.01e9, "{weights}");
    assert_eq!(a.weight_bytes_per_rank, weights);
    // Profile-run peak: the dummy sampler's min(seqs, tokens) × 151936 vocab × 14 B, above the
    // forward's tokens × 2 B × (2·5120 + 80·128 + 3·25600) = 194,560 B per token on both GPUs.
    let (h_peak, a_peak) = (1024.0 * 151_936.0 * 14.0, 256.0 * 151_936.0 * 14.0);
    assert!(h_peak > 8192.0 * 194_560.0 && a_peak > 2048.0 * 194_560.0);
    assert_eq!(hv.activation_peak_bytes, h_peak);
    assert_eq!(av.activation_peak_bytes, a_peak);
    // One block: 16 tokens × 64 layers × 2 × 8 KV heads × 128 × 2 B = 4 MiB; non-torch 0.25 GiB.
    let blocks = |total_mib: f64, peak: f64| {
        ((total_mib * MIB * 0.90 - weights - peak - 256.0 * MIB) / (4.0 * MIB)).floor() as u64
    };
    assert_eq!(hv.num_gpu_blocks, blocks(81559.0, h_peak));
    assert_eq!(av.num_gpu_blocks, blocks(81920.0, a_peak));
    // By hand: H100 (71.68 − 61.02 − 2.03 − 0.25) GiB = 8.38 GiB → 2145 blocks, 34,304 tokens
    // (the null block is not usable); A100 (72.0 − 61.02 − 0.51 − 0.25) GiB = 10.22 GiB →
    // ~2616 blocks, ~41,840 tokens: the H100's 1024 sampled sequences cost it 1.5 GiB of KV.
    assert_eq!(hv.num_gpu_blocks, 2145);
    assert_eq!(h.kv_pool_tokens, 34_304);
    assert!(
        (2614..=2618).contains(&av.num_gpu_blocks),
        "{}",
        av.num_gpu_blocks
    );
    // So at the model's own 40,960-token context the H100 refuses to start, as vLLM does, and
    // the A100 starts.
    let err = qwen3_32b_alone("h100-sxm5-80gb", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("(40960)") && err.contains("(34304)"), "{err}");
    let a40 = qwen3_32b_alone("a100-sxm4-80gb", None).unwrap();
    assert!(a40.kv_pool_tokens >= 40_960, "{}", a40.kv_pool_tokens);
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
    let out = crowded_run_serves_every_token(server);
    assert!(out.stats.sched.max_running <= 1024);
}

/// 64 requests of 200/200 against a 60-block pool (`server` sets it): more than the pool can
/// hold at once (64 × 400 tokens), so the run must preempt, yet serve every token, and a rerun
/// must print the same metrics.
fn crowded_run_serves_every_token(server: ServerFlags) -> servesim::simulation::RunOutput {
    let sc = scenario(server, client(64, 200, 200));
    let out = run(&sc).unwrap();
    assert_eq!(out.metrics.completed, 64);
    assert_eq!(out.metrics.total_output_tokens, 64 * 200);
    assert!(
        out.stats.sched.retractions > 0,
        "60 blocks (59 usable in V1: one null block) cannot hold 64 × 400 tokens"
    );
    let again = run(&sc).unwrap();
    assert_eq!(format!("{:?}", out.metrics), format!("{:?}", again.metrics));
    out
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
                // The SGLang table named below is the one nearest 0.5.13.post1.
                sglang_version: (engine == "sglang").then(|| "0.5.13.post1".parse().unwrap()),
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
    assert!(s.contains("h100_sxm sglang 0.5.6.post2"), "{s}");
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
