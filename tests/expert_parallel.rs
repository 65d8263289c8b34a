//! Expert parallelism (`--ep-size`, `--moe-a2a-backend deepep`, `--enable-eplb`,
//! `--ep-num-redundant-experts`, vLLM's `--enable-expert-parallel`): expert weights per rank
//! and the KV pool by hand, the MoE layer's price (busiest rank, DeepEP all-to-all) by hand,
//! physics across nodes, the per-version refusals, and a deterministic end-to-end run.
use servesim::cost::breakdown::{Component, StepBreakdown};
use servesim::cost::roofline::Roofline;
use servesim::cost::{BatchShape, StepCost};
use servesim::simulation::{run, Scenario};
use servesim::spec::bundled::{load_hardware, load_model};
use servesim::spec::engine::{resolve as resolve_engine, Engine};
use servesim::spec::expert_parallel::ExpertParallelFlags;
use servesim::spec::hardware::HardwareProfile;
use servesim::spec::server::{ServerConfig, ServerFlags};
use servesim::spec::workload::{ClientFlags, ScenarioFile};

/// DeepSeek-V3 on two 8×H100 nodes: TP16, or 16 DP-attention ranks.
fn dsv3(dp_attention: bool, ep: ExpertParallelFlags) -> ServerFlags {
    ServerFlags {
        tp: Some(16),
        dp: dp_attention.then_some(16),
        enable_dp_attention: dp_attention,
        mem_fraction_static: Some(0.8),
        expert_parallel: ep,
        ..Default::default()
    }
}

fn resolve(hw: &str, model: &str, f: &ServerFlags) -> servesim::error::Result<ServerConfig> {
    ServerConfig::resolve(f, &load_hardware(hw).unwrap(), &load_model(model).unwrap())
}

fn h100(model: &str, f: &ServerFlags) -> ServerConfig {
    resolve("h100-sxm5-80gb", model, f).unwrap()
}

fn ep(size: u64) -> ExpertParallelFlags {
    ExpertParallelFlags {
        ep_size: Some(size),
        ..Default::default()
    }
}

fn deepep() -> ExpertParallelFlags {
    ExpertParallelFlags {
        moe_a2a_backend: Some("deepep".into()),
        ..Default::default()
    }
}

/// One routed expert of DeepSeek-V3: gate, up, down of 7168 × 2048; 58 MoE layers; FP8 with
/// one f32 scale per 128×128 block.
const DSV3_EXPERT_PARAMS: f64 = 3.0 * 7168.0 * 2048.0;
const DSV3_MOE_LAYERS: f64 = 58.0;
const FP8_BYTES: f64 = 1.0 + 4.0 / 16384.0;

#[test]
fn expert_weight_bytes_per_rank_by_hand() {
    let base = h100("deepseek-v3", &dsv3(true, Default::default()));
    // EP16 = tp: each rank holds 256/16 = 16 whole experts instead of 256 sixteenths: same bytes.
    let ep16 = h100("deepseek-v3", &dsv3(true, ep(16)));
    assert!((ep16.weight_bytes_per_rank - base.weight_bytes_per_rank).abs() < 1.0);
    let l = ep16.expert_parallel.as_ref().unwrap();
    assert_eq!((l.ep_size, l.moe_tp), (16, 1));
    // 32 redundant experts: 288 / 16 = 18 per rank, 2 more whole experts per MoE layer.
    let red = h100(
        "deepseek-v3",
        &dsv3(
            true,
            ExpertParallelFlags {
                ep_num_redundant_experts: Some(32),
                ..ep(16)
            },
        ),
    );
    let want = DSV3_MOE_LAYERS * 2.0 * DSV3_EXPERT_PARAMS * FP8_BYTES; // 5.109 GB
    let got = red.weight_bytes_per_rank - base.weight_bytes_per_rank;
    assert!((got - want).abs() < 1e3, "{got} vs {want}");
    // DeepEP: the shared expert (1 × 2048) runs unsharded on every rank: + 15/16 of it.
    let d = h100("deepseek-v3", &dsv3(true, deepep()));
    let want = DSV3_MOE_LAYERS * DSV3_EXPERT_PARAMS * (15.0 / 16.0) * FP8_BYTES; // 2.395 GB
    let got = d.weight_bytes_per_rank - base.weight_bytes_per_rank;
    assert!((got - want).abs() < 1e3, "{got} vs {want}");
    assert!(d.kv_pool_tokens < base.kv_pool_tokens);
    // vLLM: EP = TP × DP = 4 ranks of Qwen3-30B-A3B (128 experts of 3 × 2048 × 768, 48
    // layers, bf16): 32 whole experts per rank instead of 128 halves.
    let vllm = |on: bool| {
        let f = ServerFlags {
            engine: Some("vllm".into()),
            tp: Some(2),
            dp: Some(2),
            expert_parallel: ExpertParallelFlags {
                enable_expert_parallel: on,
                ..Default::default()
            },
            ..Default::default()
        };
        let hw = load_hardware("h100-sxm5-80gb").unwrap();
        let m = load_model("qwen3-30b-a3b").unwrap();
        resolve_engine(Engine::Vllm, &f, &hw, &m).unwrap()
    };
    let (on, off) = (vllm(true), vllm(false));
    let want = -48.0 * 32.0 * 3.0 * 2048.0 * 768.0 * 2.0; // −14.50 GB
    let got = on.weight_bytes_per_rank - off.weight_bytes_per_rank;
    assert!((got - want).abs() < 1.0, "{got} vs {want}");
    assert_eq!(on.expert_parallel.as_ref().unwrap().ep_size, 4);
    assert!(on.kv_pool_tokens > off.kv_pool_tokens);
}

#[test]
fn dsv3_on_16_h100_ep16_with_dp_attention_holds_more_kv_than_tp16() {
    let tp16 = h100("deepseek-v3", &dsv3(false, Default::default()));
    let ep16 = h100("deepseek-v3", &dsv3(true, deepep()));
    assert_eq!(ep16.expert_parallel.as_ref().unwrap().ep_size, 16);
    // TP16 replicates MLA's latent KV on all 16 GPUs: one pool. DP attention gives each of the
    // 16 ranks its own pool of its own requests.
    let tp_tokens = tp16.kv_pool_tokens;
    let ep_tokens = ep16.kv_pool_tokens * ep16.dp;
    assert!(ep_tokens > 5 * tp_tokens, "{ep_tokens} vs {tp_tokens}");
}

fn roofline(hw: &HardwareProfile, model: &str, f: &ServerFlags) -> Roofline {
    let m = load_model(model).unwrap();
    let s = ServerConfig::resolve(f, hw, &m).unwrap();
    Roofline::new(hw, &m, &s).unwrap()
}

fn item(b: &StepBreakdown, c: Component) -> f64 {
    b.items
        .iter()
        .find(|i| i.component == c)
        .map_or(0.0, |i| i.time_ns)
}

fn prefill(tokens: u64) -> BatchShape {
    let mut s = BatchShape::default();
    s.add_prefill(tokens, 0, None);
    s
}

#[test]
fn ep_size_equal_to_tp_prices_the_busiest_ranks_tokens() {
    // Qwen3-30B-A3B, TP4 vs TP4 + --ep-size 4 (no all-to-all): the experts of the busiest rank
    // run 1.9 × the tokens (EPLB off); every other part of the step is unchanged.
    let hw = load_hardware("h100-sxm5-80gb").unwrap();
    let base = ServerFlags {
        tp: Some(4),
        cost_model: Some("roofline".into()),
        ..Default::default()
    };
    let tp = roofline(&hw, "qwen3-30b-a3b", &base);
    let epf = ServerFlags {
        expert_parallel: ep(4),
        ..base.clone()
    };
    let ep4 = roofline(&hw, "qwen3-30b-a3b", &epf);
    let (e, t) = (ep4.explain(&prefill(1000)), tp.explain(&prefill(1000)));
    let t1900 = tp.explain(&prefill(1900));
    assert!((item(&e, Component::Moe) - item(&t1900, Component::Moe)).abs() < 1e-6);
    let extra = item(&e, Component::Moe) - item(&t, Component::Moe);
    assert!(extra > 0.0);
    assert!((e.time.gpu_ns - t.time.gpu_ns - extra).abs() < 1e-3);
    assert_eq!(item(&e, Component::AllToAll), 0.0);
    // With EPLB the busiest rank carries 1.1 ×.
    let eplb = ServerFlags {
        expert_parallel: ExpertParallelFlags {
            enable_eplb: true,
            ..ep(4)
        },
        ..base
    };
    let b = roofline(&hw, "qwen3-30b-a3b", &eplb).explain(&prefill(1000));
    let t1100 = tp.explain(&prefill(1100));
    assert!((item(&b, Component::Moe) - item(&t1100, Component::Moe)).abs() < 1e-6);
}

#[test]
fn deepep_all_to_all_of_one_decode_step_by_hand() {
    // Qwen3-30B-A3B on one 8×H100 node, DeepEP (EP8), a decode step of 64 requests (graph bs
    // 64): low-latency kernels. Per rank 64 / 8 × 1.9 = 15.2 tokens; each sends top-8 copies,
    // 7/8 of them to the node's 7 other ranks over NVLink (no RDMA on one node). Per layer:
    // dispatch 8000 ns + 7 × 2048 × 1.03125 × 15.2 B / (450e9 × 0.8), combine the same with
    // 2 B per element. All 48 layers are MoE layers; their all-reduces (the attention one under
    // plain TP) keep one per layer.
    let hw = load_hardware("h100-sxm5-80gb").unwrap();
    let f = ServerFlags {
        tp: Some(8),
        cost_model: Some("roofline".into()),
        expert_parallel: deepep(),
        ..Default::default()
    };
    let r = roofline(&hw, "qwen3-30b-a3b", &f);
    let s = BatchShape {
        decode_reqs: 64,
        decode_ctx_sum: 64 * 1000,
        graph_bs: Some(64),
        ..Default::default()
    };
    let eff = hw.efficiency.collective;
    let tokens = 64.0 / 8.0 * 1.9;
    let phase = |b: f64| 8000.0 + 7.0 * 2048.0 * b * tokens / (450e9 * eff) * 1e9;
    let want = 48.0 * (phase(1.0 + 4.0 / 128.0) + phase(2.0));
    let b = r.explain(&s);
    let got = item(&b, Component::AllToAll);
    assert!((got - want).abs() < 1e-3, "{got} vs {want}");
    // = 48 × (8.624 + 9.211) µs = 856.1 µs: the latency dominates a small decode batch.
    assert!((got / 1e3 - 856.1).abs() < 0.1, "{got}");
    // Every component adds up to the step's GPU time.
    assert!((b.gpu_items_ns() - b.time.gpu_ns).abs() < 1e-3);
}

#[test]
fn ep_across_nodes_is_slower_than_inside_one() {
    // The same EP8 DeepEP deployment on 8-GPU nodes and on 4-GPU nodes (two nodes over RDMA).
    let one = load_hardware("h100-sxm5-80gb").unwrap();
    let mut two = one.clone();
    two.link.devices_per_node = 4;
    let f = ServerFlags {
        tp: Some(8),
        dp: Some(8),
        enable_dp_attention: true,
        mem_fraction_static: Some(0.85),
        cost_model: Some("roofline".into()),
        expert_parallel: deepep(),
        ..Default::default()
    };
    for s in [prefill(4096), prefill(256)] {
        let (a, b) = (
            roofline(&one, "qwen3-30b-a3b", &f).explain(&s),
            roofline(&two, "qwen3-30b-a3b", &f).explain(&s),
        );
        let (ia, ib) = (item(&a, Component::AllToAll), item(&b, Component::AllToAll));
        assert!(ib > ia, "{ib} vs {ia}");
        assert!(b.time.total_ns > a.time.total_ns);
    }
    // More tokens never make the all-to-all cheaper.
    let r = roofline(&one, "qwen3-30b-a3b", &f);
    let mut last = 0.0;
    for t in [1, 64, 512, 4096, 16384] {
        let a2a = item(&r.explain(&prefill(t)), Component::AllToAll);
        assert!(a2a >= last);
        last = a2a;
    }
}

fn refused(
    model: &str,
    version: &str,
    tp: u64,
    dp_attention: bool,
    e: ExpertParallelFlags,
) -> String {
    let f = ServerFlags {
        tp: Some(tp),
        dp: dp_attention.then_some(tp),
        enable_dp_attention: dp_attention,
        mem_fraction_static: Some(0.85),
        sglang_version: Some(version.parse().unwrap()),
        expert_parallel: e,
        ..Default::default()
    };
    match resolve("h200-sxm-141gb", model, &f) {
        Ok(_) => panic!("accepted: {version} {e:?}", e = f.expert_parallel),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_combinations_are_refused_in_one_line_per_version() {
    let q = "qwen3-30b-a3b";
    let cases: Vec<(String, &str)> = vec![
        (
            refused(
                q,
                "0.5.6",
                8,
                false,
                ExpertParallelFlags {
                    enable_ep_moe: true,
                    ..Default::default()
                },
            ),
            "--enable-ep-moe",
        ),
        (
            refused(
                q,
                "0.5.3",
                8,
                false,
                ExpertParallelFlags {
                    enable_deepep_moe: true,
                    ..Default::default()
                },
            ),
            "--moe-a2a-backend",
        ),
        (refused(q, "0.4.9", 8, false, deepep()), "added in 0.5.0"),
        (refused(q, "0.4.0", 8, false, ep(8)), "added in 0.4.1"),
        (refused(q, "0.5.6", 8, false, ep(3)), "must divide"),
        (refused(q, "0.5.6", 4, false, ep(8)), "must divide"),
        (
            refused(
                q,
                "0.5.6",
                8,
                false,
                ExpertParallelFlags {
                    enable_eplb: true,
                    ..Default::default()
                },
            ),
            "ep_size > 1",
        ),
        (refused(q, "0.4.8", 8, true, deepep_old()), "auto"),
        (
            refused("qwen3-32b", "0.5.6", 8, false, ep(8)),
            "dense model",
        ),
        (
            refused(
                q,
                "0.5.6",
                8,
                false,
                ExpertParallelFlags {
                    ep_num_redundant_experts: Some(3),
                    ..ep(8)
                },
            ),
            "split evenly",
        ),
        (
            refused(
                q,
                "0.5.6",
                8,
                false,
                ExpertParallelFlags {
                    moe_a2a_backend: Some("mooncake".into()),
                    ..Default::default()
                },
            ),
            "not modelled",
        ),
    ];
    for (msg, want) in cases {
        assert!(msg.contains(want), "{msg:?} lacks {want:?}");
        assert_eq!(msg.lines().count(), 1, "{msg}");
    }
    // Accepted: 0.4.9 lifted the auto + DP attention refusal; 0.5.2 still honours the old
    // flag with a deprecation note; DeepEP normal mode turns CUDA graphs off.
    let ok = |v: &str, dpa: bool, e: ExpertParallelFlags| {
        let f = ServerFlags {
            tp: Some(8),
            dp: dpa.then_some(8),
            enable_dp_attention: dpa,
            mem_fraction_static: Some(0.85),
            sglang_version: Some(v.parse().unwrap()),
            expert_parallel: e,
            ..Default::default()
        };
        resolve("h200-sxm-141gb", q, &f).unwrap()
    };
    assert!(ok("0.4.9", true, deepep_old()).expert_parallel.is_some());
    let old = ok(
        "0.5.2",
        false,
        ExpertParallelFlags {
            enable_ep_moe: true,
            ..Default::default()
        },
    );
    assert_eq!(old.expert_parallel.as_ref().unwrap().ep_size, 8);
    assert!(old.notes.iter().any(|n| n.contains("deprecated")));
    let normal = ok(
        "0.5.6",
        false,
        ExpertParallelFlags {
            deepep_mode: Some("normal".into()),
            ..deepep()
        },
    );
    assert!(normal.cuda_graph_batch_sizes.is_empty());
    assert!(!ok("0.5.6", false, deepep())
        .cuda_graph_batch_sizes
        .is_empty());
    // vLLM's flag under SGLang, SGLang's under vLLM, vLLM before 0.8.
    let engine = |engine: &str, version: Option<&str>, e: ExpertParallelFlags| {
        let f = ServerFlags {
            engine: Some(engine.into()),
            tp: Some(2),
            vllm_version: version.map(|v| v.parse().unwrap()),
            expert_parallel: e,
            ..Default::default()
        };
        let hw = load_hardware("h100-sxm5-80gb").unwrap();
        let e = Engine::parse(engine).unwrap();
        resolve_engine(e, &f, &hw, &load_model(q).unwrap())
            .unwrap_err()
            .to_string()
    };
    let vllm_ep = ExpertParallelFlags {
        enable_expert_parallel: true,
        ..Default::default()
    };
    assert!(engine("sglang", None, vllm_ep.clone()).contains("--enable-expert-parallel"));
    assert!(engine("vllm", None, ep(2)).contains("--ep-size"));
    assert!(engine("vllm", Some("0.7.3"), vllm_ep).contains("added in 0.8.0"));
}

/// `--enable-deepep-moe` (0.4.5–0.5.2), default auto mode.
fn deepep_old() -> ExpertParallelFlags {
    ExpertParallelFlags {
        enable_deepep_moe: true,
        ..Default::default()
    }
}

#[test]
fn a_deepep_dp_attention_run_is_deterministic_and_conserves_requests() {
    let f = ServerFlags {
        tp: Some(8),
        dp: Some(8),
        enable_dp_attention: true,
        mem_fraction_static: Some(0.85),
        expert_parallel: ExpertParallelFlags {
            enable_eplb: true,
            ep_num_redundant_experts: Some(32),
            ..deepep()
        },
        ..Default::default()
    };
    let client = ClientFlags {
        num_prompts: Some(48),
        random_input_len: Some(300),
        random_output_len: Some(40),
        random_range_ratio: Some(1.0),
        max_concurrency: Some(32),
        ..Default::default()
    };
    let go = |f: &ServerFlags| {
        let mut sc = Scenario::resolve(
            &ScenarioFile::default(),
            Some("h100-sxm5-80gb"),
            Some("qwen3-30b-a3b"),
            f,
            &client,
        )
        .unwrap();
        sc.check_invariants = true;
        run(&sc).unwrap()
    };
    let (a, b) = (go(&f), go(&f));
    assert_eq!(a.metrics.completed, 48);
    assert_eq!(a.metrics, b.metrics);
    // The same deployment without EP prices a different (cheaper all-reduce, balanced) step.
    let plain = ServerFlags {
        expert_parallel: Default::default(),
        ..f
    };
    assert_ne!(go(&plain).metrics, a.metrics);
}

#[test]
fn launch_lines_carry_the_ep_flags_of_the_version() {
    let line = |version: &str, engine: Option<&str>, e: ExpertParallelFlags| {
        let f = ServerFlags {
            tp: Some(8),
            mem_fraction_static: (engine.is_none()).then_some(0.85),
            sglang_version: engine.is_none().then(|| version.parse().unwrap()),
            engine: engine.map(String::from),
            expert_parallel: e,
            ..Default::default()
        };
        let sc = Scenario::resolve(
            &ScenarioFile::default(),
            Some("h200-sxm-141gb"),
            Some("qwen3-30b-a3b"),
            &f,
            &ClientFlags::default(),
        )
        .unwrap();
        servesim::plan::launch::render(&sc, servesim::plan::launch::Engine::of(&sc)).server
    };
    let eplb = ExpertParallelFlags {
        enable_eplb: true,
        ep_num_redundant_experts: Some(8),
        ..deepep()
    };
    let new = line("0.5.6", None, eplb.clone());
    assert!(
        new.contains("--moe-a2a-backend deepep --enable-eplb --ep-num-redundant-experts 8"),
        "{new}"
    );
    let old = line(
        "0.4.9",
        None,
        ExpertParallelFlags {
            enable_deepep_moe: true,
            deepep_mode: Some("low_latency".into()),
            ..Default::default()
        },
    );
    assert!(
        old.contains("--enable-deepep-moe --deepep-mode low_latency"),
        "{old}"
    );
    assert!(line("0.5.6", None, ep(4)).contains("--ep-size 4"));
    let vllm = line(
        "",
        Some("vllm"),
        ExpertParallelFlags {
            enable_expert_parallel: true,
            ..Default::default()
        },
    );
    assert!(vllm.contains("--enable-expert-parallel"), "{vllm}");
}
