//! Engine tests: scheduler behaviour on small hand-checkable scenarios, the DESIGN.md
//! invariants, determinism, and a golden bench_serving report.
use servesim::engine::scheduler::Scheduler;
use servesim::metrics::record::RequestOutcome;
use servesim::simulation::{run, run_with_record, Scenario};
use servesim::spec::bundled::{load_hardware, load_model};
use servesim::spec::server::{ServerConfig, ServerFlags};
use servesim::spec::workload::{ClientFlags, ScenarioFile};

fn scenario(hw: &str, model: &str, server: ServerFlags, client: ClientFlags) -> Scenario {
    let mut sc = Scenario::resolve(
        &ScenarioFile::default(),
        Some(hw),
        Some(model),
        &server,
        &client,
    )
    .expect("scenario resolves");
    sc.check_invariants = true;
    sc
}

fn random_client(n: u64, input: u64, output: u64, ratio: f64) -> ClientFlags {
    ClientFlags {
        num_prompts: Some(n),
        random_input_len: Some(input),
        random_output_len: Some(output),
        random_range_ratio: Some(ratio),
        ..Default::default()
    }
}

fn small_server(extra: impl FnOnce(&mut ServerFlags)) -> ServerConfig {
    let mut f = ServerFlags::default();
    extra(&mut f);
    let hw = load_hardware("h100-sxm5-80gb").unwrap();
    let m = load_model("qwen2.5-0.5b").unwrap();
    ServerConfig::resolve(&f, &hw, &m).unwrap()
}

#[test]
fn long_prompt_is_prefilled_in_chunks_with_decode_stalled() {
    let cfg = small_server(|f| f.chunked_prefill_size = Some(1000));
    let mut s = Scheduler::new(&cfg, None);
    // A short request already decoding, then a 3500-token prompt arrives.
    let a = s.add_request(10, 50);
    s.arrive(a);
    let b = s.next_batch().unwrap();
    assert_eq!(b.prefill.len(), 1);
    s.complete(&b);
    let long = s.add_request(3500, 5);
    s.arrive(long);
    let mut chunks = Vec::new();
    loop {
        let b = s.next_batch().unwrap();
        if b.decode && b.prefill.is_empty() {
            break;
        }
        assert!(
            !b.decode,
            "decode must stall while the long prompt is chunked"
        );
        chunks.push(b.prefill[0].extend);
        s.complete(&b);
        s.check_invariants().unwrap();
    }
    assert_eq!(
        chunks,
        vec![1000, 1000, 1000, 500],
        "ceil(3500/1000) = 4 prefill steps back to back"
    );
    assert_eq!(s.running_len(), 2);
}

#[test]
fn running_cap_holds() {
    let sc = scenario(
        "h100-sxm5-80gb",
        "qwen2.5-0.5b",
        ServerFlags {
            max_running_requests: Some(8),
            ..Default::default()
        },
        random_client(100, 64, 32, 0.5),
    );
    assert_eq!(sc.server.max_running_requests, 8);
    let out = run(&sc).unwrap();
    assert_eq!(out.stats.sched.max_running, 8);
    assert_eq!(out.metrics.completed, 100);
}

#[test]
fn small_kv_pool_forces_retraction_and_everything_finishes() {
    // Arrivals spread over time let the decayed new-token ratio over-admit, as in SGLang up to
    // 0.5.21; from 0.5.22 running ignore_eos requests reserve their whole remaining output
    // (schedule_policy.py at v0.5.22, `_get_running_request_total_token_offset`), so the same
    // load admits only what fits and never retracts.
    let client = ClientFlags {
        request_rate: Some(100.0),
        ..random_client(64, 200, 400, 1.0)
    };
    let small_pool = |version: &str| {
        scenario(
            "h100-sxm5-80gb",
            "qwen2.5-0.5b",
            ServerFlags {
                max_total_tokens: Some(6000),
                sglang_version: Some(version.parse().unwrap()),
                ..Default::default()
            },
            client.clone(),
        )
    };
    let sc = small_pool("0.5.21");
    assert_eq!(sc.server.kv_pool_tokens, 6000);
    let out = run(&sc).unwrap();
    assert!(
        out.stats.sched.retractions > 0,
        "a 6000-token pool cannot hold 64 × 600 tokens"
    );
    assert!(out.stats.sched.max_kv_used_tokens <= 6000);
    assert_eq!(out.metrics.completed, 64);
    assert_eq!(
        out.metrics.total_output_tokens,
        64 * 400,
        "output tokens produced = requested"
    );
    // A retraction is a long gap on the client side.
    assert!(out.metrics.itl_ms.max > 5.0 * out.metrics.itl_ms.median);
    let full = run(&small_pool("0.5.22")).unwrap();
    assert_eq!(full.stats.sched.retractions, 0);
    assert!(full.stats.sched.max_kv_used_tokens <= 6000);
    assert_eq!(full.metrics.completed, 64);
}

#[test]
fn invariants_hold_and_outputs_are_conserved_on_a_mix_of_scenarios() {
    let cases: Vec<(&str, &str, ServerFlags, ClientFlags)> = vec![
        (
            "h100-sxm5-80gb",
            "qwen3-8b",
            ServerFlags::default(),
            random_client(300, 1024, 256, 0.0),
        ),
        (
            "a100-sxm4-80gb",
            "qwen3-30b-a3b",
            ServerFlags {
                tp: Some(2),
                sglang_version: Some("0.5.1".parse().unwrap()),
                ..Default::default()
            },
            random_client(200, 2000, 300, 0.0),
        ),
        (
            "h200-sxm-141gb",
            "deepseek-v3",
            ServerFlags {
                tp: Some(8),
                disable_radix_cache: true,
                ..Default::default()
            },
            ClientFlags {
                max_concurrency: Some(16),
                ..random_client(48, 1000, 100, 1.0)
            },
        ),
        (
            "ascend-a3",
            "qwen3-coder-480b-a35b",
            ServerFlags {
                tp: Some(16),
                quantization: Some("w8a8_int8".into()),
                mem_fraction_static: Some(0.8),
                ..Default::default()
            },
            random_client(40, 3500, 150, 1.0),
        ),
        (
            "h100-sxm5-80gb",
            "gpt-oss-20b",
            ServerFlags {
                enable_mixed_chunk: true,
                chunked_prefill_size: Some(512),
                ..Default::default()
            },
            ClientFlags {
                request_rate: Some(20.0),
                ..random_client(100, 1500, 200, 0.0)
            },
        ),
        (
            "h100-sxm5-80gb",
            "llama-3.1-8b",
            ServerFlags {
                disable_cuda_graph: true,
                disable_overlap_schedule: true,
                page_size: Some(16),
                ..Default::default()
            },
            random_client(100, 700, 300, 0.0),
        ),
    ];
    for (hw, model, sf, cf) in cases {
        let sc = scenario(hw, model, sf, cf.clone());
        let out = run(&sc).unwrap_or_else(|e| panic!("{model} on {hw}: {e}"));
        let m = &out.metrics;
        assert_eq!(
            m.completed + m.failed,
            cf.num_prompts.unwrap(),
            "{model}: conservation"
        );
        assert!(
            m.ttft_ms.max <= m.e2e_ms.max + 1e-9,
            "{model}: first token after finish"
        );
        assert!(m.duration_s > 0.0);
    }
}

/// Per request: arrival (the request function's start) ≤ first token ≤ finish; and the client's
/// semaphore: with every request dispatched at t = 0 and a cap of 32, exactly the first 32 start
/// at 0, every later one starts at the instant an earlier one finished, and at no instant are
/// more than 32 in flight.
#[test]
fn every_request_has_arrival_before_first_token_before_finish() {
    let sc = scenario(
        "h100-sxm5-80gb",
        "qwen3-8b",
        ServerFlags::default(),
        ClientFlags {
            max_concurrency: Some(32),
            ..random_client(200, 512, 128, 0.0)
        },
    );
    let (out, rec) = run_with_record(&sc).unwrap();
    assert_eq!(rec.requests.len(), 200);
    assert_eq!(out.metrics.completed, 200);
    let finish = |r: &RequestOutcome| r.start_ns + r.latency_ns;
    for (i, r) in rec.requests.iter().enumerate() {
        assert!(r.success, "request {i} failed");
        assert!(r.output_len > 0, "request {i} has no output");
        let first = r.start_ns + r.ttft_ns;
        assert!(r.ttft_ns > 0, "request {i}: first token at its arrival");
        assert!(
            r.start_ns < first,
            "request {i}: arrival {} ≥ first token {first}",
            r.start_ns
        );
        assert!(
            first <= finish(r),
            "request {i}: first token {first} after finish {}",
            finish(r)
        );
        assert!(
            finish(r) <= rec.duration_ns,
            "request {i} finishes after the run"
        );
    }
    let at_zero = rec.requests.iter().filter(|r| r.start_ns == 0).count();
    assert_eq!(at_zero, 32, "the first 32 requests start at once");
    let finishes: std::collections::HashSet<u64> = rec.requests.iter().map(finish).collect();
    for (i, r) in rec
        .requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.start_ns > 0)
    {
        assert!(
            finishes.contains(&r.start_ns),
            "request {i} starts when no slot frees"
        );
    }
    // In flight at each start (a request finishing at t frees its slot for one starting at t).
    for r in &rec.requests {
        let t = r.start_ns;
        let live = rec
            .requests
            .iter()
            .filter(|q| q.start_ns <= t && finish(q) > t)
            .count();
        assert!(live <= 32, "{live} requests in flight at {t} ns");
    }
}

#[test]
fn same_scenario_twice_gives_identical_bytes() {
    let render = || {
        let sc = scenario(
            "h100-sxm5-80gb",
            "qwen3-8b",
            ServerFlags::default(),
            ClientFlags {
                request_rate: Some(12.0),
                ..random_client(300, 800, 200, 0.0)
            },
        );
        let out = run(&sc).unwrap();
        servesim::report::text::render(&out.metrics, &sc.header())
    };
    assert_eq!(render(), render());
}

#[test]
fn golden_report_small_scenario() {
    // Seed 001's workload: Qwen2.5-0.5B, random 64/16, ratio 0, 200 prompts, bench_serving 0.5.8.
    let client = ClientFlags {
        bench_version: Some("0.5.8".parse().unwrap()),
        ..random_client(200, 64, 16, 0.0)
    };
    let sc = scenario(
        "h100-sxm5-80gb",
        "qwen2.5-0.5b",
        ServerFlags::default(),
        client,
    );
    let out = run(&sc).unwrap();
    assert_eq!(
        (
            out.metrics.total_input_tokens,
            out.metrics.total_output_tokens
        ),
        (5661, 1653)
    );
    let text = servesim::report::text::render(&out.metrics, &sc.header());
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/qwen2.5-0.5b-h100-random-64-16.txt"
    );
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(path).expect("golden file (UPDATE_GOLDEN=1 to create)");
    assert_eq!(
        text, golden,
        "report changed; if intended, rerun with UPDATE_GOLDEN=1 and review the diff"
    );
}

#[test]
fn poisson_and_concurrency_scenario_golden_json_is_stable() {
    let client = ClientFlags {
        request_rate: Some(4.0),
        max_concurrency: Some(8),
        ..random_client(60, 300, 100, 0.0)
    };
    let sc = scenario(
        "a100-sxm4-80gb",
        "llama-3.1-8b",
        ServerFlags::default(),
        client,
    );
    let out = run(&sc).unwrap();
    let json = servesim::report::json::render(&out.metrics, &sc.header(), &serde_json::json!({}));
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/llama-3.1-8b-a100-poisson4-cap8.json"
    );
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &json).unwrap();
    }
    assert_eq!(
        json,
        std::fs::read_to_string(path).expect("golden file (UPDATE_GOLDEN=1 to create)")
    );
}

mod radix {
    use servesim::engine::scheduler::Scheduler;
    use servesim::engine::sim::{simulate, ClientRequest, SimInput};
    use servesim::simulation::Scenario;
    use servesim::spec::server::ServerFlags;
    use servesim::spec::workload::{ClientFlags, ScenarioFile};

    /// 8 groups × 8 prompts of a 2048-token system prompt + 128-token question, sent one at a
    /// time (max concurrency 1), so every request after a group's first finds the prefix.
    fn shared_prefix(radix: bool) -> (servesim::engine::sim::SimOutput, u64) {
        shared_prefix_with(radix, None, 1, 8)
    }

    fn shared_prefix_with(
        radix: bool,
        pool: Option<u64>,
        concurrency: u64,
        groups: u64,
    ) -> (servesim::engine::sim::SimOutput, u64) {
        let server = ServerFlags {
            disable_radix_cache: !radix,
            max_total_tokens: pool,
            ..Default::default()
        };
        let sc = Scenario::resolve(
            &ScenarioFile::default(),
            Some("h100-sxm5-80gb"),
            Some("qwen3-8b"),
            &server,
            &ClientFlags::default(),
        )
        .unwrap();
        let (per_group, system, question) = (8u64, 2048u64, 128u64);
        let mut requests = Vec::new();
        for g in 0..groups {
            for _ in 0..per_group {
                requests.push(ClientRequest {
                    prompt_len: system + question,
                    output_len: 16,
                    cached_prefix: 0,
                    cached_rank: None,
                    prefix_group: Some(g),
                    prefix_len: system,
                });
            }
        }
        let n = requests.len();
        let input = SimInput {
            requests,
            dispatch_ns: vec![0; n],
            dispatch_end_ns: 0,
            max_concurrency: Some(concurrency),
            server_info_at_end: true,
            overheads: sc.hardware.overheads.clone(),
            client_send_ns: sc.client_send_ns(),
            frontend: Default::default(),
            max_events: 1_000_000,
            check_invariants: true,
            record_timeline: false,
            reference_itl: false,
            deadline: None,
        };
        let sched = Scheduler::new(&sc.server, None);
        let cost =
            servesim::cost::roofline::Roofline::new(&sc.hardware, &sc.model, &sc.server).unwrap();
        let expected_hit = groups * (per_group - 1) * system;
        (simulate(&input, sched, &cost).unwrap(), expected_hit)
    }

    #[test]
    fn shared_prefix_hits_match_the_arithmetic_and_cut_ttft() {
        let (with, expected_hit) = shared_prefix(true);
        let (without, _) = shared_prefix(false);
        assert_eq!(
            with.stats.sched.prefix_hit_tokens, expected_hit,
            "groups × (prompts − 1) × system_len"
        );
        assert_eq!(with.stats.sched.prompt_tokens, 64 * (2048 + 128));
        assert_eq!(without.stats.sched.prefix_hit_tokens, 0);
        let ttft = |o: &servesim::engine::sim::SimOutput| {
            servesim::metrics::compute(&o.record).ttft_ms.mean
        };
        assert!(
            ttft(&with) < 0.8 * ttft(&without),
            "{} vs {}",
            ttft(&with),
            ttft(&without)
        );
    }

    #[test]
    fn cache_evicts_lru_groups_when_the_pool_is_small_and_invariants_hold() {
        // 40 groups of 2048-token prefixes cannot all stay cached in 30000 tokens.
        let (out, expected_if_never_evicted) = shared_prefix_with(true, Some(30000), 8, 40);
        let hits = out.stats.sched.prefix_hit_tokens;
        assert!(hits > 0 && hits <= expected_if_never_evicted);
        assert_eq!(
            out.record.requests.iter().filter(|r| r.success).count(),
            40 * 8
        );
        assert!(out.stats.sched.max_kv_used_tokens <= 30000);
    }
}

#[test]
fn data_parallel_replicas_share_the_load() {
    // Saturating workload: two replicas finish it in about half the time of one.
    let run_dp = |dp: u64, lb: Option<&str>| {
        let f = ServerFlags {
            dp: Some(dp),
            load_balance_method: lb.map(String::from),
            ..Default::default()
        };
        run(&scenario(
            "h100-sxm5-80gb",
            "qwen3-8b",
            f,
            random_client(600, 1000, 300, 1.0),
        ))
        .unwrap()
    };
    let one = run_dp(1, None);
    let two = run_dp(2, None);
    let two_sq = run_dp(2, Some("shortest_queue"));
    let ratio = one.metrics.duration_s / two.metrics.duration_s;
    assert!((1.6..2.4).contains(&ratio), "dp2 speed-up {ratio}");
    assert_eq!(two.metrics.completed, 600);
    assert_eq!(two_sq.metrics.total_output_tokens, 600 * 300);
}

/// The MLA eager host time (src/cost/eager_host.rs) at the request level: one DeepSeek-V3
/// prompt at concurrency 1 on SGLang 0.5.13.post1, whose piecewise prefill graphs are on by
/// default, and the same with `--disable-piecewise-cuda-graph` (every extend eager, as in
/// 0.5.6): the TTFT differs by exactly the one extend step's extra host time, 61 layers ×
/// (975 µs − the graphed prefill's attention-op launches, 0.3 × the profile's
/// `eager_layer_ns`), as SGLang PR #12160's eager vs graphed one-token extend of DeepSeek-V3
/// says, and the CUDA-graph decode steps (TPOT) not at all.
#[test]
fn a_c1_deepseek_ttft_carries_the_mla_eager_host_time_once() {
    let base_ns = load_hardware("b200-sxm-180gb")
        .unwrap()
        .overheads
        .eager_layer_ns;
    let run_with = |disable_piecewise: bool| {
        let server = ServerFlags {
            tp: Some(8),
            sglang_version: Some("0.5.13.post1".parse().unwrap()),
            disable_piecewise_cuda_graph: disable_piecewise,
            ..Default::default()
        };
        let client = ClientFlags {
            max_concurrency: Some(1),
            ..random_client(1, 1000, 8, 1.0)
        };
        run(&scenario("b200-sxm-180gb", "deepseek-v3", server, client)).unwrap()
    };
    let (graphs, eager) = (run_with(false), run_with(true));
    let want_ms = 61.0 * (975e3 - 0.3 * base_ns) / 1e6;
    let got_ms = eager.metrics.ttft_ms.mean - graphs.metrics.ttft_ms.mean;
    assert!(
        (got_ms - want_ms).abs() < 1e-6,
        "TTFT +{got_ms} ms, hand {want_ms} ms"
    );
    let tpot = (eager.metrics.tpot_ms.mean, graphs.metrics.tpot_ms.mean);
    assert!((tpot.0 - tpot.1).abs() < 1e-9, "TPOT {tpot:?}");
}

/// SGLang's TokenizerManager encodes a text prompt on its one event loop before the scheduler
/// sees it: at concurrency 1 a 1000-token prompt's TTFT carries exactly 1000 × the profile's
/// `tokenize_per_token_ns` (1 µs, `spec::tokenize_cost`) = 1 ms, and the decode steps nothing.
#[test]
fn a_c1_ttft_carries_the_prompt_tokenization_once() {
    let run_ids = |tokenize_per_token_ns: f64, tokenize_prompt: bool| {
        let client = ClientFlags {
            max_concurrency: Some(1),
            tokenize_prompt,
            ..random_client(2, 1000, 8, 1.0)
        };
        let mut sc = scenario(
            "h100-sxm5-80gb",
            "qwen2.5-0.5b",
            ServerFlags::default(),
            client,
        );
        sc.hardware.overheads.tokenize_per_token_ns = tokenize_per_token_ns;
        run(&sc).unwrap()
    };
    let run_with = |tokenize_per_token_ns: f64| run_ids(tokenize_per_token_ns, false);
    let rate = servesim::spec::tokenize_cost::HF_FAST_TOKENIZE_PER_TOKEN_NS;
    assert_eq!(
        load_hardware("h100-sxm5-80gb")
            .unwrap()
            .overheads
            .tokenize_per_token_ns,
        rate
    );
    let (with, without) = (run_with(rate), run_with(0.0));
    let got_ms = with.metrics.ttft_ms.mean - without.metrics.ttft_ms.mean;
    assert!((got_ms - 1.0).abs() < 1e-6, "TTFT +{got_ms} ms, hand 1 ms");
    let tpot = (with.metrics.tpot_ms.mean, without.metrics.tpot_ms.mean);
    assert!((tpot.0 - tpot.1).abs() < 1e-9, "TPOT {tpot:?}");
    // `--tokenize-prompt` sends `input_ids`: the server encodes nothing.
    let ids = run_ids(rate, true);
    assert_eq!(ids.metrics.ttft_ms.mean, without.metrics.ttft_ms.mean);
}
