//! Physics laws every step-cost backend must obey, checked on every bundled model at every TP
//! that fits (issue 12): a stronger GPU is never slower at the same batch shape, a step never
//! gets cheaper with more batch or context, and more bandwidth or FLOPs never makes a step
//! slower. Costs are built by `Scenario::step_cost` (as `run` does) under each backend: the
//! roofline, and the measured kernels under their cross-GPU envelope on every profile with
//! tables. One test holds the first law at run level too (a closed-loop benchmark per GPU).
use servesim::cost::{BatchShape, StepCost};
use servesim::simulation::Scenario;
use servesim::spec::bundled::{load_hardware, model_names};
use servesim::spec::server::ServerFlags;
use servesim::spec::workload::{ClientFlags, ScenarioFile};

/// The bundled GPUs with kernel tables; the law holds for every pair the datasheets order
/// ([`ladder_pairs`]): A100 → H100 → H200 → B200 → {B300, GB200}; L40S and RTX PRO 6000: none.
#[rustfmt::skip]
const LADDER: [&str; 8] = [
    "a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "b200-sxm-180gb",
    "b300-sxm-288gb", "gb200-186gb", "l40s-48gb", "rtx-pro-6000-96gb",
];

/// Whether `fast` is at least as strong as `slow` on every datasheet figure: HBM and link
/// bandwidth, dense BF16, FP8, FP4 (absent = 0), SM clock where both state one (L40S 2.52, RTX
/// 2.43 > H100 1.98 GHz); a profile out of the envelope (`envelope_floor: false`) is below none.
fn at_least_as_strong(slow: &str, fast: &str) -> bool {
    let (a, b) = (load_hardware(slow).unwrap(), load_hardware(fast).unwrap());
    let clock = |h: &servesim::spec::hardware::HardwareProfile| h.peaks.sm_boost_clock_hz;
    if !a.envelope_floor || matches!((clock(&a), clock(&b)), (Some(x), Some(y)) if x > y) {
        return false;
    }
    let figures = |h: &servesim::spec::hardware::HardwareProfile| {
        [
            h.memory.bandwidth_bytes_per_s,
            h.link.bandwidth_bytes_per_s,
            h.peaks.bf16_flops_per_s,
            h.peaks.fp8_flops_per_s.unwrap_or(0.0),
            h.peaks.fp4_flops_per_s.unwrap_or(0.0),
        ]
    };
    figures(&a).iter().zip(figures(&b)).all(|(x, y)| *x <= y)
}

/// The (slower, faster) index pairs of [`LADDER`] the law applies to; with `covering`, only
/// the pairs with no third GPU between them (the run-level test's pairs).
fn ladder_pairs(covering: bool) -> Vec<(usize, usize)> {
    let n = LADDER.len();
    let ordered = |i: usize, j: usize| i != j && at_least_as_strong(LADDER[i], LADDER[j]);
    let between = |i, j| (0..n).any(|k| k != i && k != j && ordered(i, k) && ordered(k, j));
    (0..n * n)
        .map(|x| (x / n, x % n))
        .filter(|&(i, j)| ordered(i, j) && !(covering && between(i, j)))
        .collect()
}

#[test]
fn the_ladder_is_the_datasheet_order() {
    assert_eq!(ladder_pairs(true), [(0, 1), (1, 2), (2, 3), (3, 4), (3, 5)]);
    assert_eq!(ladder_pairs(false).len(), 6 + 4 + 4);
}

const TPS: [u64; 4] = [1, 2, 4, 8];

/// Profiles without kernel tables: the roofline prices them under every backend choice.
const ROOFLINE_ONLY: [&str; 2] = ["h20-96gb", "ascend-a3"];

/// Every backend, as `--cost-model` names it.
const BACKENDS: [&str; 2] = ["roofline", "kernels"];

/// The scenario of `model` at `tp` on `hw` priced by `backend` (the roofline on a profile
/// without tables), or `None` when the weights do not fit.
fn scenario_with(hw: &str, model: &str, tp: u64, backend: &str) -> Option<Scenario> {
    let backend = if ROOFLINE_ONLY.contains(&hw) {
        "roofline"
    } else {
        backend
    };
    let flags = ServerFlags {
        tp: Some(tp),
        cost_model: Some(backend.into()),
        ..Default::default()
    };
    resolve(hw, model, &flags)
}

/// [`scenario_with`] with tuned fused-MoE configs everywhere: a release's config files per GPU
/// are software (none for B300 / GB200 up to 0.5.14); the untuned-MoE test covers them.
fn ladder_scenario(hw: &str, model: &str, tp: u64, backend: &str) -> Option<Scenario> {
    let flags = ServerFlags {
        tp: Some(tp),
        cost_model: Some(
            if ROOFLINE_ONLY.contains(&hw) {
                "roofline"
            } else {
                backend
            }
            .into(),
        ),
        fused_moe_config: Some("tuned".into()),
        ..Default::default()
    };
    resolve(hw, model, &flags)
}

/// `model` on `hw` under `flags` and the default client, if it resolves.
fn resolve(hw: &str, model: &str, flags: &ServerFlags) -> Option<Scenario> {
    Scenario::resolve(
        &ScenarioFile::default(),
        Some(hw),
        Some(model),
        flags,
        &ClientFlags::default(),
    )
    .ok()
}

/// Whether `tp` ranks fit in one node of `hw`: a TP group across hosts is another deployment
/// (SGLang's custom all-reduce serves one host; NCCL takes over), e.g. TP 8 on GB200's trays.
fn one_node(hw: &str, tp: u64) -> bool {
    load_hardware(hw).is_ok_and(|h| tp <= u64::from(h.link.devices_per_node))
}

/// [`scenario_with`] under the default backend choice.
fn scenario(hw: &str, model: &str, tp: u64) -> Option<Scenario> {
    let flags = ServerFlags {
        tp: Some(tp),
        ..Default::default()
    };
    resolve(hw, model, &flags)
}

fn decode(bs: u64, ctx: u64, graph: bool) -> BatchShape {
    BatchShape {
        decode_reqs: bs,
        decode_ctx_sum: bs * ctx,
        graph_bs: graph.then_some(bs),
        ..Default::default()
    }
}

fn prefill(reqs: u64, extend: u64, prefix: u64) -> BatchShape {
    let mut s = BatchShape::default();
    for _ in 0..reqs {
        s.add_prefill(extend, prefix, None);
    }
    s
}

/// Decode (graph and eager), prefill and mixed shapes, small to large.
fn shapes() -> Vec<(String, BatchShape)> {
    let mut v = Vec::new();
    for bs in [1, 8, 64, 256] {
        for ctx in [128, 4096] {
            for graph in [true, false] {
                v.push((
                    format!("decode bs {bs} ctx {ctx} graph {graph}"),
                    decode(bs, ctx, graph),
                ));
            }
        }
    }
    for (reqs, extend, prefix) in [(1, 16, 0), (1, 1024, 0), (4, 2048, 1024), (1, 8192, 0)] {
        v.push((
            format!("prefill {reqs}×{extend} over {prefix}"),
            prefill(reqs, extend, prefix),
        ));
    }
    let mut mixed = decode(32, 2048, false);
    mixed.add_prefill(512, 0, None);
    v.push(("mixed 32 decode + 512 prefill".into(), mixed));
    v
}

fn time_ns(cost: &dyn StepCost, s: &BatchShape) -> f64 {
    let t = cost.step_time(s).total_ns;
    assert!(t.is_finite() && t > 0.0, "step time {t} for {s:?}");
    t
}

/// Relative slack for floating-point noise only.
const EPS: f64 = 1e-9;

/// Asserts that every (weaker i, stronger j) pair of `costs` prices each shape no slower on j;
/// returns how many comparisons ran.
fn assert_ladder(
    costs: &[Option<Box<dyn StepCost>>],
    pairs: &[(usize, usize)],
    shapes: &[(String, BatchShape)],
    what: &str,
) -> usize {
    let mut compared = 0;
    for &(i, j) in pairs {
        let (Some(slow), Some(fast)) = (&costs[i], &costs[j]) else {
            continue;
        };
        for (name, s) in shapes {
            let (a, b) = (time_ns(slow.as_ref(), s), time_ns(fast.as_ref(), s));
            let (weak, strong) = (LADDER[i], LADDER[j]);
            assert!(
                b <= a * (1.0 + EPS),
                "{what}, {name}: {strong} {b:.0} ns > {weak} {a:.0} ns"
            );
            compared += 1;
        }
    }
    compared
}

#[test]
fn a_newer_gpu_is_never_slower_at_the_same_shape() {
    let shapes = shapes();
    let pairs = ladder_pairs(false);
    let mut compared = 0;
    // Both backends; the measured tables alone break this law in 170 comparisons, by up to
    // 37% (src/cost/select.rs): the envelope is what makes it hold.
    for backend in BACKENDS {
        for model in model_names() {
            for tp in TPS {
                let costs: Vec<Option<Box<dyn StepCost>>> = LADDER
                    .iter()
                    .map(|hw| {
                        ladder_scenario(hw, model, tp, backend)
                            .filter(|_| one_node(hw, tp))
                            .map(|sc| sc.step_cost().unwrap())
                    })
                    .collect();
                let what = format!("{model} tp {tp} {backend}");
                compared += assert_ladder(&costs, &pairs, &shapes, &what);
            }
        }
    }
    // Every model fits somewhere on the ladder; most at several TPs.
    assert!(compared > 2000, "only {compared} comparisons");
}

/// Every bundled model at every TP that fits on `hw`, under each backend `hw` has.
fn costs_on(hw: &str) -> Vec<(String, Scenario)> {
    let mut v = Vec::new();
    let backends: &[&str] = if ROOFLINE_ONLY.contains(&hw) {
        &BACKENDS[..1]
    } else {
        &BACKENDS
    };
    for model in model_names() {
        for tp in TPS {
            for backend in backends {
                if let Some(sc) = scenario_with(hw, model, tp, backend) {
                    v.push((format!("{model} tp {tp} on {hw} ({backend})"), sc));
                }
            }
        }
    }
    v
}

#[test]
fn more_batch_or_context_never_makes_a_step_cheaper() {
    for hw in LADDER.iter().chain(&ROOFLINE_ONLY) {
        for (what, sc) in costs_on(hw) {
            let cost = sc.step_cost().unwrap();
            let t = |s: &BatchShape| time_ns(cost.as_ref(), s);
            for graph in [true, false] {
                for ctx in [1, 512, 4096, 32768] {
                    let mut prev = 0.0;
                    for bs in [1, 2, 3, 8, 16, 33, 64, 128, 256, 512] {
                        let now = t(&decode(bs, ctx, graph));
                        assert!(
                            now >= prev * (1.0 - EPS),
                            "{what}: decode bs {bs} ctx {ctx} graph {graph}: {now:.0} < {prev:.0}"
                        );
                        prev = now;
                    }
                }
                for bs in [1, 16, 256] {
                    let mut prev = 0.0;
                    for ctx in [1, 64, 1000, 4096, 32768, 131072] {
                        let now = t(&decode(bs, ctx, graph));
                        assert!(
                            now >= prev * (1.0 - EPS),
                            "{what}: decode bs {bs} graph {graph} ctx {ctx}: {now:.0} < {prev:.0}"
                        );
                        prev = now;
                    }
                }
            }
            for prefix in [0, 4096] {
                let mut prev = 0.0;
                for extend in [1, 7, 64, 500, 2048, 8192, 16384, 65536] {
                    let now = t(&prefill(1, extend, prefix));
                    assert!(
                        now >= prev * (1.0 - EPS),
                        "{what}: prefill {extend} over {prefix}: {now:.0} < {prev:.0}"
                    );
                    prev = now;
                }
            }
            let mut prev = 0.0;
            for prefix in [0, 100, 4096, 65536] {
                let now = t(&prefill(2, 1024, prefix));
                assert!(
                    now >= prev * (1.0 - EPS),
                    "{what}: prefill 2×1024 over {prefix}: {now:.0} < {prev:.0}"
                );
                prev = now;
            }
        }
    }
}

#[test]
fn more_bandwidth_or_flops_is_never_slower() {
    type Scale = fn(&mut Scenario);
    let scalings: [(&str, Scale); 4] = [
        ("×2 FLOP/s", |sc| {
            let p = &mut sc.hardware.peaks;
            p.bf16_flops_per_s *= 2.0;
            p.fp8_flops_per_s = p.fp8_flops_per_s.map(|v| v * 2.0);
            p.int8_ops_per_s = p.int8_ops_per_s.map(|v| v * 2.0);
        }),
        ("×2 HBM bandwidth", |sc| {
            sc.hardware.memory.bandwidth_bytes_per_s *= 2.0
        }),
        ("×2 link bandwidth", |sc| {
            sc.hardware.link.bandwidth_bytes_per_s *= 2.0
        }),
        ("×1.5 everything", |sc| {
            sc.hardware.peaks.bf16_flops_per_s *= 1.5;
            sc.hardware.memory.bandwidth_bytes_per_s *= 1.5;
            sc.hardware.link.bandwidth_bytes_per_s *= 1.5;
        }),
    ];
    let shapes = shapes();
    for hw in LADDER.iter().chain(&ROOFLINE_ONLY) {
        for (what, sc) in costs_on(hw) {
            let base = sc.step_cost().unwrap();
            for (how, scale) in &scalings {
                let mut faster = sc.clone();
                scale(&mut faster);
                let fast = faster.step_cost().unwrap();
                for (name, s) in &shapes {
                    let (a, b) = (time_ns(base.as_ref(), s), time_ns(fast.as_ref(), s));
                    assert!(
                        b <= a * (1.0 + EPS),
                        "{what} {how}, {name}: {b:.0} ns > {a:.0} ns"
                    );
                }
            }
        }
    }
}

/// The example: qwen3-32b at TP 8 must be faster on H200 (same compute, 4.8 vs 3.35
/// TB/s HBM) than on H100; it was slower while the H200 profile was fitted on a B200 run.
#[test]
fn h200_beats_h100_on_qwen3_32b_tp8() {
    let h100 = scenario("h100-sxm5-80gb", "qwen3-32b", 8)
        .unwrap()
        .step_cost()
        .unwrap();
    let h200 = scenario("h200-sxm-141gb", "qwen3-32b", 8)
        .unwrap()
        .step_cost()
        .unwrap();
    for bs in [1, 16, 128] {
        let s = decode(bs, 3500, true);
        let (a, b) = (time_ns(h100.as_ref(), &s), time_ns(h200.as_ref(), &s));
        assert!(b < a, "bs {bs}: h200 {b:.0} ns ≥ h100 {a:.0} ns");
    }
}

/// Issue 14: TP 16 on 8-GPU nodes spans two nodes and pays the inter-node link. For every
/// model that fits at TP 16 (plain TP, and DP attention's gathered MLP for the MoE models),
/// with both cost backends, a step is never cheaper than the same TP 16 inside one node (the
/// profile's node widened to 16 devices), and strictly dearer on some shape.
#[test]
fn tp16_across_two_nodes_is_never_cheaper_than_inside_one() {
    let tp16 = |hw: &str, model: &str, dp_attention: bool, cost_model: &str| {
        let flags = ServerFlags {
            tp: Some(16),
            dp: dp_attention.then_some(16),
            enable_dp_attention: dp_attention,
            cost_model: Some(cost_model.into()),
            ..Default::default()
        };
        resolve(hw, model, &flags)
    };
    let shapes = shapes();
    let mut compared = 0;
    let mut dearer = 0;
    for hw in ["h100-sxm5-80gb", "a100-sxm4-80gb", "b200-sxm-180gb"] {
        for model in model_names() {
            for dp_attention in [false, true] {
                for cost_model in ["roofline", "kernels"] {
                    let Some(two) = tp16(hw, model, dp_attention, cost_model) else {
                        continue;
                    };
                    assert_eq!(two.hardware.link.devices_per_node, 8);
                    let mut one = two.clone();
                    one.hardware.link.devices_per_node = 16;
                    let (a, b) = (two.step_cost().unwrap(), one.step_cost().unwrap());
                    for (name, s) in &shapes {
                        let (t2, t1) = if dp_attention {
                            let group = vec![*s; 16];
                            (
                                a.group_step_time(&group).total_ns,
                                b.group_step_time(&group).total_ns,
                            )
                        } else {
                            (time_ns(a.as_ref(), s), time_ns(b.as_ref(), s))
                        };
                        assert!(
                            t2 >= t1 * (1.0 - EPS),
                            "{model} tp 16 on {hw} ({cost_model}, dp attention {dp_attention}), {name}: two nodes {t2:.0} ns < one node {t1:.0} ns"
                        );
                        compared += 1;
                        dearer += usize::from(t2 > t1 * (1.0 + 1e-6));
                    }
                }
            }
        }
    }
    assert!(
        compared > 100,
        "only {compared} comparisons: no model fit at tp 16?"
    );
    assert!(
        dearer * 2 > compared,
        "two nodes dearer on only {dearer}/{compared} shapes"
    );
}

/// No inter-node link, no TP across nodes: a clear error naming the field, not an NVLink price.
#[test]
fn tp_beyond_a_node_without_an_inter_node_link_is_refused() {
    let mut sc = scenario("h100-sxm5-80gb", "qwen3-32b", 8).unwrap();
    sc.hardware.link.inter_node_bandwidth_bytes_per_s = None;
    assert!(sc.step_cost().is_ok(), "tp 8 stays inside one node");
    sc.server.tp = 16;
    let err = sc
        .step_cost()
        .err()
        .expect("tp 16 needs the link")
        .to_string();
    assert!(
        err.contains("link.inter_node_bandwidth_bytes_per_s") && err.contains("--tp ≤ 8"),
        "{err}"
    );
}

/// gpt-oss-120b under vLLM 0.11.0, whose MXFP4 experts run a different kernel on every rung
/// (Marlin W4A16 on A100, no measured row: the bounded roofline of src/cost/mxfp4.rs; the
/// measured `mxfp4` MoE rows of the H100, H200 and B200 vLLM tables): still never slower on a
/// newer GPU at the same shape, under both backends, at every TP that fits.
#[test]
fn vllm_gpt_oss_120b_is_never_slower_on_a_newer_gpu() {
    let shapes = shapes();
    let mut compared = 0;
    for backend in BACKENDS {
        for tp in TPS {
            let flags = ServerFlags {
                tp: Some(tp),
                engine: Some("vllm".into()),
                vllm_version: Some("0.11.0".parse().unwrap()),
                cost_model: Some(backend.into()),
                ..Default::default()
            };
            let costs: Vec<Option<Box<dyn StepCost>>> = LADDER
                .iter()
                .map(|hw| {
                    resolve(hw, "gpt-oss-120b", &flags)
                        .filter(|_| one_node(hw, tp))
                        .map(|sc| sc.step_cost().unwrap())
                })
                .collect();
            let what = format!("tp {tp} {backend}");
            compared += assert_ladder(&costs, &ladder_pairs(true), &shapes, &what);
        }
    }
    assert!(compared >= 2 * 3 * 4 * 17, "only {compared} comparisons");
}

/// SGLang's default (untuned) fused-MoE config (`--fused-moe-config default`,
/// src/cost/moe_config.rs) never makes a step cheaper than the tuned kernel, keeps a bigger
/// batch never cheaper, and keeps the ladder: the same software on a newer GPU is never
/// slower. Both backends; the MoE models whose experts run the triton kernel (block-FP8
/// DeepSeek-V3, bf16 Qwen3 MoE) at TP8 on H100, H200, B200 and B300 (TP 8 spans two of
/// GB200's 4-GPU trays: [`one_node`]).
#[test]
fn an_untuned_fused_moe_is_never_cheaper_and_keeps_the_ladder() {
    let ladder = [
        "h100-sxm5-80gb",
        "h200-sxm-141gb",
        "b200-sxm-180gb",
        "b300-sxm-288gb",
    ];
    let mut compared = 0;
    for backend in BACKENDS {
        for model in ["deepseek-v3", "qwen3-235b-a22b", "qwen3-30b-a3b"] {
            let cost = |hw: &str, moe: &str| {
                let flags = ServerFlags {
                    tp: Some(8),
                    cost_model: Some(backend.into()),
                    sglang_version: Some("0.4.7".parse().unwrap()),
                    fused_moe_config: Some(moe.into()),
                    ..Default::default()
                };
                resolve(hw, model, &flags)
                    .filter(|_| one_node(hw, 8))
                    .map(|sc| sc.step_cost().unwrap())
            };
            let mut last_untuned: Option<(usize, Vec<f64>)> = None;
            for (i, hw) in ladder.iter().enumerate() {
                let (Some(tuned), Some(untuned)) = (cost(hw, "tuned"), cost(hw, "default")) else {
                    continue;
                };
                let mut times = Vec::new();
                let mut previous_bs = 0.0;
                for bs in [1, 2, 8, 15, 16, 17, 32, 64, 256] {
                    let s = decode(bs, 1024, true);
                    let (t, u) = (time_ns(tuned.as_ref(), &s), time_ns(untuned.as_ref(), &s));
                    assert!(
                        u >= t * (1.0 - EPS),
                        "{model} {hw} {backend} bs {bs}: untuned {u:.0} < tuned {t:.0}"
                    );
                    assert!(
                        u >= previous_bs * (1.0 - EPS),
                        "{model} {hw} {backend}: untuned bs {bs} {u:.0} < smaller batch {previous_bs:.0}"
                    );
                    previous_bs = u;
                    times.push(u);
                    compared += 1;
                }
                if let Some((j, slower)) = &last_untuned {
                    for (k, (a, b)) in slower.iter().zip(&times).enumerate() {
                        assert!(
                            b <= &(a * (1.0 + EPS)),
                            "{model} {backend} shape {k}: untuned {hw} {b:.0} > {} {a:.0}",
                            ladder[*j]
                        );
                    }
                }
                last_untuned = Some((i, times));
            }
        }
    }
    assert!(compared >= 60, "only {compared} comparisons");
}

/// The law at run level, where memory sizing, scheduling and the client join the step price:
/// the same closed-loop benchmark (200 prompts of 2000 in / 300 out at concurrency 64, the
/// default client) never gets less output throughput on a newer GPU of the ladder, for every
/// bundled model at every TP that fits on both. Discrete scheduling (a larger pool admits
/// different batches) may move a run by a little either way; 1% is allowed for that, far
/// below the 40% inversion of issue 12's H200 profile.
#[test]
fn a_newer_gpu_never_serves_a_benchmark_slower() {
    let client = ClientFlags {
        num_prompts: Some(200),
        random_input_len: Some(2000),
        random_output_len: Some(300),
        max_concurrency: Some(64),
        ..Default::default()
    };
    let throughput = |hw: &str, model: &str, tp: u64| {
        let flags = ServerFlags {
            tp: Some(tp),
            ..Default::default()
        };
        let sc = Scenario::resolve(
            &ScenarioFile::default(),
            Some(hw),
            Some(model),
            &flags,
            &client,
        )
        .ok()
        .filter(|_| one_node(hw, tp))?;
        servesim::simulation::run(&sc)
            .ok()
            .map(|o| o.metrics.output_throughput)
    };
    let mut compared = 0;
    for model in model_names() {
        for tp in TPS {
            let runs: Vec<(&str, Option<f64>)> = LADDER
                .iter()
                .map(|&hw| (hw, throughput(hw, model, tp)))
                .collect();
            for (i, j) in ladder_pairs(true) {
                let ((older, Some(a)), (newer, Some(b))) = (runs[i], runs[j]) else {
                    continue;
                };
                compared += 1;
                assert!(
                    b >= 0.99 * a,
                    "{model} tp {tp}: {newer} {b:.1} tok/s < {older} {a:.1} tok/s"
                );
            }
        }
    }
    assert!(compared >= 40, "only {compared} pairs fit on both GPUs");
}
