//! Speculative decoding (issue 15): ITL and throughput against the cost model's own prediction,
//! the gain shrinking with batch, accept length 1 never faster, token conservation, the
//! "Accept length" line, the KV pool as SGLang sizes it with a draft, and one-line errors.
#[path = "../common/mod.rs"]
mod common;

use servesim::cost::{BatchShape, StepTime};
use servesim::plan::launch::sglang_launch_server;
use servesim::report::text;
use servesim::simulation::{run, run_with_record, Scenario};
use servesim::spec::server::ServerFlags;
use servesim::spec::speculative::SpeculativeFlags;
use servesim::spec::workload::{ClientFlags, ScenarioFile};

mod spec_v2;

const H100: &str = "h100-sxm5-80gb";

/// Qwen3-8B with its EAGLE3 draft head, as `run` flags.
const QWEN3_8B_EAGLE3: [&str; 6] = [
    "--model",
    "qwen3-8b",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "qwen3-8b-eagle3",
];

fn eagle3(accept: Option<f64>, steps: Option<u64>) -> ServerFlags {
    ServerFlags {
        speculative: SpeculativeFlags {
            speculative_algorithm: Some("EAGLE3".into()),
            speculative_draft_model_path: Some("qwen3-8b-eagle3".into()),
            speculative_num_steps: steps,
            speculative_eagle_topk: steps.map(|_| 1),
            speculative_accept_length: accept,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn client(n: u64, input: u64, output: u64, conc: u64) -> ClientFlags {
    ClientFlags {
        num_prompts: Some(n),
        random_input_len: Some(input),
        random_output_len: Some(output),
        random_range_ratio: Some(1.0),
        max_concurrency: Some(conc),
        ..Default::default()
    }
}

fn scenario(hw: &str, model: &str, server: &ServerFlags, client: &ClientFlags) -> Scenario {
    let mut sc = Scenario::resolve(
        &ScenarioFile::default(),
        Some(hw),
        Some(model),
        server,
        client,
    )
    .expect("scenario resolves");
    sc.check_invariants = true;
    sc
}

/// Decode step at batch `bs` over a mean context `ctx`, as the scenario prices it.
fn decode_step(sc: &Scenario, bs: u64, ctx: u64) -> StepTime {
    let shape = BatchShape {
        decode_reqs: bs,
        decode_ctx_sum: bs * ctx,
        graph_bs: sc.server.graph_batch_size(bs),
        ..Default::default()
    };
    sc.step_cost().unwrap().step_time(&shape)
}

fn decode_step_ns(sc: &Scenario, bs: u64, ctx: u64) -> f64 {
    decode_step(sc, bs, ctx).total_ns
}

/// At concurrency 1 on a memory-bound model, TPOT drops by A × T_decode / T_iteration, where
/// T_iteration = draft passes + verify + draft extend, each priced by the cost model: the
/// simulated ratio must match that prediction within 5% (prefill steps and clipping at the end
/// of each request are what separates them).
#[test]
fn itl_at_concurrency_one_drops_as_accept_length_over_cost_ratio_predicts() {
    let c = client(6, 200, 600, 1);
    let base = scenario(H100, "qwen3-8b", &ServerFlags::default(), &c);
    let spec = scenario(H100, "qwen3-8b", &eagle3(Some(3.0), Some(3)), &c);
    let a = run(&base).unwrap().metrics;
    let b = run(&spec).unwrap().metrics;
    let ctx = 200 + 300;
    let predicted = 3.0 * decode_step_ns(&base, 1, ctx) / decode_step_ns(&spec, 1, ctx);
    let measured = a.tpot_ms.mean / b.tpot_ms.mean;
    assert!(
        (measured / predicted - 1.0).abs() < 0.05,
        "TPOT speed-up {measured:.3} vs predicted {predicted:.3}"
    );
    assert!(
        measured > 1.5,
        "EAGLE3 at A=3 should speed up bs 1: {measured}"
    );
    // The sglang backend splits each chunk's gap over its tokens: median ITL = iteration / A.
    let iter_ms = decode_step_ns(&spec, 1, ctx) / 1e6;
    assert!((b.itl_ms.mean - iter_ms / 3.0).abs() / (iter_ms / 3.0) < 0.1);
}

/// The speed-up shrinks as the batch grows (verify and draft passes grow with it, the weight
/// reads they amortise do not), and an accept length of 1 (no draft ever accepted) is slower
/// than no speculation at any concurrency.
#[test]
fn the_gain_shrinks_with_batch_and_accept_length_one_never_wins() {
    let speedup = |conc: u64, accept: f64| {
        let c = client(conc * 3, 256, 256, conc);
        let base = run(&scenario(H100, "qwen3-8b", &ServerFlags::default(), &c)).unwrap();
        let spec = run(&scenario(
            H100,
            "qwen3-8b",
            &eagle3(Some(accept), Some(3)),
            &c,
        ))
        .unwrap();
        spec.metrics.output_throughput / base.metrics.output_throughput
    };
    let (s1, s48) = (speedup(1, 3.0), speedup(48, 3.0));
    assert!(
        s1 > s48,
        "speed-up at 1 ({s1:.2}) must exceed that at 48 ({s48:.2})"
    );
    for conc in [1, 16] {
        let s = speedup(conc, 1.0);
        assert!(
            s < 1.0,
            "accept length 1 at concurrency {conc}: speed-up {s:.3}"
        );
    }
}

/// Every request ends with exactly its output length (the last verify is clipped), the fast
/// cohort ITL path equals the per-request reference path, and the accept length reported is
/// Σ gained / Σ batch size over folded 40-iteration windows: between 1 and A, close to A.
#[test]
fn tokens_are_conserved_and_the_fast_itl_path_matches_the_reference() {
    let c = ClientFlags {
        random_range_ratio: Some(0.3),
        ..client(40, 300, 333, 8)
    };
    let server = eagle3(Some(3.4), None); // auto (5, 4, 8) at 0.5.6.post2
    let sc = scenario(H100, "qwen3-8b", &server, &c);
    let (out, rec) = run_with_record(&sc).unwrap();
    let base = run_with_record(&scenario(H100, "qwen3-8b", &ServerFlags::default(), &c))
        .unwrap()
        .1;
    for (r, b) in rec.requests.iter().zip(&base.requests) {
        assert!(r.success);
        assert_eq!(r.output_len, b.output_len, "requested length, never more");
    }
    let itl_tokens: u64 = rec.itl.iter().map(|r| r.count).sum();
    let outputs: u64 = rec.requests.iter().map(|r| r.output_len - 1).sum();
    assert_eq!(
        itl_tokens, outputs,
        "one ITL entry per token after the first"
    );
    let emitted: u64 = rec.emissions.iter().map(|e| e.count).sum();
    assert_eq!(emitted, out.metrics.total_output_tokens);
    let al = out.metrics.accept_length.expect("accept length reported");
    assert!(al > 3.0 && al <= 3.4 + 1e-9, "accept length {al}");
    let mut reference = sc.clone();
    reference.reference_itl = true;
    assert_eq!(run(&reference).unwrap().metrics, out.metrics);
}

/// "Accept length:" follows "Concurrency:" from bench_serving 0.4.3.post3, with a backend that
/// queries the server's info; older clients and other backends print no such line.
#[test]
fn accept_length_line_where_the_version_prints_it() {
    let c = client(8, 100, 100, 2);
    let out = run(&scenario(H100, "qwen3-8b", &eagle3(Some(2.5), Some(3)), &c)).unwrap();
    let sc = scenario(H100, "qwen3-8b", &eagle3(Some(2.5), Some(3)), &c);
    let mut h = sc.header();
    let block = text::render(&out.metrics, &h);
    let lines: Vec<&str> = block.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with("Concurrency:"))
        .unwrap();
    assert!(lines[i + 1].starts_with("Accept length:"), "{block}");
    let v: f64 = lines[i + 1][40..].trim().parse().unwrap();
    assert!((v - out.metrics.accept_length.unwrap()).abs() < 0.005);
    h.bench_version = "0.4.3".parse().unwrap();
    assert!(!text::render(&out.metrics, &h).contains("Accept length"));
    h.bench_version = "0.5.6".parse().unwrap();
    h.backend = "vllm".into();
    assert!(!text::render(&out.metrics, &h).contains("Accept length"));
    let plain = run(&scenario(H100, "qwen3-8b", &ServerFlags::default(), &c)).unwrap();
    assert_eq!(plain.metrics.accept_length, None);
}

/// SGLang 0.5.14 sizes the pool with the draft loaded: no 4 GB draft reserve in the default
/// mem_fraction_static (server_args.py at v0.5.13.post1, line 1633 `reserved_mem += 4 * 1024`,
/// gone at v0.5.14), the draft's weights come out of the pool (model_runner_kv_cache_mixin.py
/// at v0.5.14, line 96: free memory is measured after both loads, "draft weights are now
/// counted") and the target's cell grows by the draft's layers (pool_configurator.py at
/// v0.5.14, line 144: int(cell × (1 + 1/36)) for the one-layer EAGLE3 head).
#[test]
fn kv_pool_holds_the_draft_from_0_5_14() {
    let c = client(1, 10, 10, 1);
    let at = |v: &str| ServerFlags {
        sglang_version: Some(v.parse().unwrap()),
        ..eagle3(None, None)
    };
    let old = scenario(H100, "qwen3-8b", &at("0.5.13.post1"), &c).server;
    let sc = scenario(H100, "qwen3-8b", &at("0.5.14"), &c);
    let (new, hw) = (&sc.server, &sc.hardware);
    let g = hw.memory.reported_total_mib;
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    // 13440 MiB (see above) + 58 piecewise token counts × 8 MiB; the draft's 4 GiB until
    // 0.5.13.post1.
    let r = 13440.0 + 58.0 * 8.0;
    assert_eq!(old.mem_fraction_static, round3((g - r - 4096.0) / g));
    assert_eq!(new.mem_fraction_static, round3((g - r) / g));
    let gib = (1u64 << 30) as f64;
    let cell = (36 * 8 * 128 * 2 * 2) as f64;
    let grown = (cell * (1.0 + 1.0 / 36.0)).floor();
    assert_eq!(grown, 151552.0);
    let draft_gib = new
        .speculative
        .as_ref()
        .unwrap()
        .draft_weight_bytes_per_rank
        / gib;
    let free = hw.memory.free_at_start_gib;
    let available =
        free - new.weight_bytes_per_rank / gib - draft_gib - hw.memory.runtime_reserved_gib;
    let rest_gib = available - free * (1.0 - new.mem_fraction_static);
    assert_eq!(new.kv_pool_tokens, (rest_gib * gib / grown).floor() as u64);
    // The cell the engine moves and prices stays the target's own.
    assert_eq!(new.kv_bytes_per_token, cell);
}

/// The KV pool as SGLang ≤ 0.5.6 sizes it with a draft: `mem_fraction_static` reserves 2 GB
/// more (0.5.3+ formula, then + 2048 MiB after the 10 GiB floor), the pool is the target
/// formula at that fraction, plus the shared-index headroom 48·K·k + 48·N + 100 (reference
/// §1.8: +1444 at (5,4,8), +436 at (3,1,4)); 48 running requests, graphs up to 48.
#[test]
fn kv_pool_shrinks_by_the_draft_reserve_as_sglang_computes_it() {
    let c = client(1, 10, 10, 1);
    // 0.5.6.post2: before 0.5.10's piecewise-graph reserve and 4 GB draft reserve.
    let v = Some("0.5.6.post2".parse().unwrap());
    let plain = ServerFlags {
        sglang_version: v,
        ..Default::default()
    };
    let with_draft = ServerFlags {
        sglang_version: v,
        ..eagle3(None, None)
    };
    let base = scenario(H100, "qwen3-8b", &plain, &c).server;
    let spec = scenario(H100, "qwen3-8b", &with_draft, &c).server;
    let hw = scenario(H100, "qwen3-8b", &plain, &c).hardware;
    let g = hw.memory.reported_total_mib;
    // 0.5.3+: 512 + 1.5 × chunk 8192 + 2 × graph bs 256 + tp/8 GiB = 13440 MiB (≥ 10 GiB).
    let r = 512.0 + 1.5 * 8192.0 + 2.0 * 256.0 + 1024.0 / 8.0;
    let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
    assert_eq!(base.mem_fraction_static, round3((g - r) / g));
    assert_eq!(spec.mem_fraction_static, round3((g - r - 2048.0) / g));
    // Qwen3-8B cell: 36 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes.
    let cell = (36 * 8 * 128 * 2 * 2) as f64;
    let free = hw.memory.free_at_start_gib;
    let rest = |f: f64| {
        (free
            - base.weight_bytes_per_rank / (1u64 << 30) as f64
            - hw.memory.runtime_reserved_gib
            - free * (1.0 - f))
            * (1u64 << 30) as f64
    };
    assert_eq!(
        base.kv_pool_tokens,
        (rest(base.mem_fraction_static) / cell) as u64
    );
    let headroom = 48 * 5 * 4 + 48 * 8 + 100;
    assert_eq!(headroom, 1444);
    assert_eq!(
        spec.kv_pool_tokens,
        (rest(spec.mem_fraction_static) / cell) as u64 + headroom
    );
    assert!(spec.kv_pool_tokens < base.kv_pool_tokens);
    assert_eq!(spec.max_running_requests, 48);
    assert!(!spec.overlap_schedule && base.overlap_schedule);
    let tail: Vec<u64> = spec
        .cuda_graph_batch_sizes
        .iter()
        .rev()
        .take(4)
        .copied()
        .collect();
    assert_eq!(tail, vec![48, 44, 40, 32]);
    // The draft's KV: one layer of the same cell; DeepSeek's MTP: one layer of 576 × 2 B.
    assert_eq!(spec.draft_kv_bytes_per_token, cell / 36.0);
    let nextn = ServerFlags {
        tp: Some(8),
        sglang_version: v,
        speculative: SpeculativeFlags {
            speculative_algorithm: Some("NEXTN".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let ds = scenario("h200-sxm-141gb", "deepseek-v3", &nextn, &c).server;
    let s = ds.speculative.as_ref().unwrap();
    assert_eq!((s.num_steps, s.topk, s.num_draft_tokens), (3, 1, 4));
    assert_eq!(ds.draft_kv_bytes_per_token, 576.0 * 2.0);
    let mut plain = nextn.clone();
    plain.speculative = SpeculativeFlags::default();
    let ds0 = scenario("h200-sxm-141gb", "deepseek-v3", &plain, &c).server;
    let reserve_tokens = 2048.0 * (1u64 << 20) as f64 / ds0.kv_bytes_per_token;
    let shrink = ds0.kv_pool_tokens as f64 - (ds.kv_pool_tokens - 436) as f64;
    // Both fractions are rounded to 3 decimals: the reserve lands within 0.1% of the GPU.
    let h200 = scenario("h200-sxm-141gb", "deepseek-v3", &plain, &c).hardware;
    let slack =
        0.001 * h200.memory.free_at_start_gib * (1u64 << 30) as f64 / ds0.kv_bytes_per_token;
    assert!(
        (shrink - reserve_tokens).abs() < slack,
        "{shrink} vs {reserve_tokens}"
    );
    // 0.5.7 dropped the headroom.
    let mut v057 = nextn.clone();
    v057.sglang_version = Some("0.5.7".parse().unwrap());
    let ds7 = scenario("h200-sxm-141gb", "deepseek-v3", &v057, &c).server;
    let mut p057 = plain.clone();
    p057.sglang_version = v057.sglang_version;
    assert!(
        ds7.kv_pool_tokens
            < scenario("h200-sxm-141gb", "deepseek-v3", &p057, &c)
                .server
                .kv_pool_tokens
    );
}

#[test]
fn bad_speculative_input_is_a_one_line_error() {
    let base = ["run", "--hardware", H100, "--num-prompts", "2"];
    fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        [base, extra].concat()
    }
    common::fails_with(
        &with(
            &base,
            &[
                "--model",
                "llama-3.1-8b",
                "--speculative-algorithm",
                "EAGLE3",
                "--speculative-draft-model-path",
                "qwen3-8b-eagle3",
            ],
        ),
        &["vocab_size 151936", "128256"],
    );
    common::fails_with(
        &with(
            &base,
            &[
                "--model",
                "qwen3-32b",
                "--speculative-algorithm",
                "EAGLE3",
                "--speculative-draft-model-path",
                "qwen3-8b-eagle3",
            ],
        ),
        &["hidden_size 4096", "5120"],
    );
    let eagle = [&QWEN3_8B_EAGLE3[..], &["--speculative-num-steps", "3"]].concat();
    common::fails_with(
        &with(
            &base,
            &[&eagle[..], &["--speculative-accept-length", "0.5"]].concat(),
        ),
        &["--speculative-accept-length", "between 1"],
    );
    common::fails_with(
        &with(
            &base,
            &[&eagle[..], &["--speculative-accept-length", "4.5"]].concat(),
        ),
        &["and 4"],
    );
    common::fails_with(
        &with(
            &base,
            &[
                "--model",
                "qwen3-8b",
                "--speculative-algorithm",
                "NGRAM",
                "--speculative-eagle-topk",
                "4",
            ],
        ),
        &["NGRAM", "--speculative-eagle-topk 4"],
    );
    common::fails_with(
        &[
            "run",
            "--hardware",
            "b200-sxm-180gb",
            "--model",
            "deepseek-v3",
            "--tp",
            "8",
            "--speculative-algorithm",
            "NEXTN",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "2",
            "--speculative-num-draft-tokens",
            "4",
        ],
        &["top-k 2", "page size 64", "trtllm_mla"],
    );
    common::fails_with(
        &with(
            &base,
            &["--model", "qwen3-8b", "--speculative-algorithm", "EAGLE3"],
        ),
        &["needs a draft model"],
    );
    common::fails_with(
        &with(
            &base,
            &["--model", "qwen3-8b", "--speculative-num-steps", "3"],
        ),
        &["need --speculative-algorithm"],
    );
}

/// `sweep` takes the speculative flags as grid axes (num-steps × concurrency here).
#[test]
fn sweep_varies_speculative_flags() {
    let dir = std::env::temp_dir().join(format!("servesim-spec-sweep-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let sweep = [
        "sweep",
        "--out",
        d,
        "--quiet",
        "--no-charts",
        "--hardware",
        H100,
    ];
    let grid = [
        "--speculative-num-steps",
        "1,3",
        "--speculative-eagle-topk",
        "1",
        "--max-concurrency",
        "1,8",
        "--num-prompts",
        "8",
        "--random-input-len",
        "64",
        "--random-output-len",
        "64",
    ];
    let (code, _out, err) = common::servesim(&[&sweep[..], &QWEN3_8B_EAGLE3, &grid].concat());
    assert_eq!(code, 0, "{err}");
    let json = std::fs::read_to_string(dir.join("sweep.json")).unwrap();
    assert!(
        json.contains("speculative-num-steps"),
        "the axis is recorded"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Physics with a draft: a speculative iteration never gets cheaper with more batch or context,
/// costs more than the plain decode it replaces, and an H200 is never slower than an H100.
#[test]
fn speculative_steps_obey_the_physics_laws() {
    let c = client(1, 10, 10, 1);
    let flags = eagle3(Some(3.0), Some(3));
    let h100 = scenario(H100, "qwen3-8b", &flags, &c);
    let h200 = scenario("h200-sxm-141gb", "qwen3-8b", &flags, &c);
    let plain = scenario(H100, "qwen3-8b", &ServerFlags::default(), &c);
    for bs in [1, 4, 16, 48, 64] {
        for ctx in [128, 4096] {
            let a = decode_step_ns(&h100, bs, ctx);
            assert!(a > decode_step_ns(&plain, bs, ctx), "bs {bs} ctx {ctx}");
            assert!(decode_step_ns(&h200, bs, ctx) <= a * (1.0 + 1e-9));
            assert!(decode_step_ns(&h100, bs * 2, ctx) >= a);
            assert!(decode_step_ns(&h100, bs, ctx * 2) >= a);
        }
    }
    // Same inputs, same bytes.
    let c = client(24, 200, 150, 6);
    let sc = scenario(H100, "qwen3-8b", &flags, &c);
    assert_eq!(run(&sc).unwrap().metrics, run(&sc).unwrap().metrics);
}
