//! Direct tests of `cost::roofline` against hand calculations. The profile is an H100 with
//! round numbers put in (1e15 bf16 FLOP/s, 1e12 B/s, every efficiency 1 except decode
//! attention at 0.5, no GEMM roll-off, no overheads unless a test sets them), the model is
//! Qwen2.5-0.5B at TP 1 in bf16, whose sizes are worked out here from its config.json
//! (hidden 896, 24 layers, 14 query heads, 2 KV heads of 64, intermediate 4864, vocab 151936):
//! - linear weights per layer: q 896·896 + k, v 2·896·128 + o 896·896 + MLP 3·896·4864
//!   = 14 909 440 parameters (no biases counted); LM head 151936·896 = 136 134 656;
//! - KV per token: 2 (K and V) · 2 heads · 64 · 2 bytes = 512 B per layer, 12 288 B in all;
//! - attention FLOPs per (query, key) pair per layer: 4 · 14 heads · 64 = 3584.
use servesim::cost::roofline::Roofline;
use servesim::cost::{BatchShape, StepCost};
use servesim::spec::bundled::{load_hardware, load_model};
use servesim::spec::hardware::{AttentionEfficiency, HardwareProfile};
use servesim::spec::model::ModelSpec;
use servesim::spec::server::{ServerConfig, ServerFlags};

const LAYERS: f64 = 24.0;
const LINEAR_PARAMS: f64 = 14_909_440.0;
const HEAD_PARAMS: f64 = 136_134_656.0;
const HIDDEN: f64 = 896.0;
const PEAK: f64 = 1e15;
const BW: f64 = 1e12;

fn setup() -> (HardwareProfile, ModelSpec, ServerConfig) {
    let mut hw = load_hardware("h100-sxm5-80gb").unwrap();
    let model = load_model("qwen2.5-0.5b").unwrap();
    let server = ServerConfig::resolve(&ServerFlags::default(), &hw, &model).unwrap();
    hw.peaks.bf16_flops_per_s = PEAK;
    hw.peaks.fp8_flops_per_s = None;
    hw.peaks.int8_ops_per_s = None;
    hw.memory.bandwidth_bytes_per_s = BW;
    let e = &mut hw.efficiency;
    e.gemm = 1.0;
    e.gemm_half_tokens = 0.0;
    e.memory = 1.0;
    e.collective = 1.0;
    e.moe_gemm = None;
    e.attention.insert(
        server.attention_backend.clone(),
        AttentionEfficiency {
            prefill: 1.0,
            decode: 0.5,
        },
    );
    let o = &mut hw.overheads;
    o.step_cpu_ns = 0.0;
    o.per_request_cpu_ns = 0.0;
    o.graph_step_ns = 0.0;
    o.eager_layer_ns = 0.0;
    o.layer_ns = 0.0;
    o.moe_layer_ns = 0.0;
    (hw, model, server)
}

fn roofline() -> Roofline {
    let (hw, model, server) = setup();
    Roofline::new(&hw, &model, &server).unwrap()
}

fn decode(reqs: u64, ctx_sum: u64, graph_bs: Option<u64>) -> BatchShape {
    BatchShape {
        decode_reqs: reqs,
        decode_ctx_sum: ctx_sum,
        graph_bs,
        ..Default::default()
    }
}

fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "got {got} ns, hand calculation {want} ns"
    );
}

#[test]
fn the_model_sizes_used_by_hand_are_the_resolved_ones() {
    let (_, model, server) = setup();
    assert_eq!(server.kv_bytes_per_token, 12_288.0);
    let l = model.layer_params(0, 1);
    assert_eq!(l.attention + l.dense_mlp, LINEAR_PARAMS);
    assert_eq!(model.lm_head_params(1), HEAD_PARAMS);
}

#[test]
fn one_token_decode_reads_every_weight_once() {
    // m = 1, no context: every GEMM is memory-bound (2·params FLOPs at 1e15 is 1000× less
    // than 2·params bytes at 1e12). Bytes: weights in bf16 + one token's activations in and
    // out (896 · 4 bytes), per layer; then the LM head on the one logit row.
    let per_layer_ns = (LINEAR_PARAMS * 2.0 + HIDDEN * 4.0) / BW * 1e9;
    let head_ns = (HEAD_PARAMS * 2.0 + HIDDEN * 4.0) / BW * 1e9;
    // 24 · 29 822.464 + 272 272.896 = 988 012.032 ns
    close(per_layer_ns * LAYERS + head_ns, 988_012.032);
    close(roofline().gpu_ns(&decode(1, 0, None)), 988_012.032);
}

#[test]
fn decode_attention_reads_the_kv_cache_at_the_decode_efficiency() {
    // 1000 more context tokens: 1000 · 12 288 B / (1e12 B/s · 0.5) = 24.576 µs (compute,
    // 1000 · 3584 · 24 FLOPs at 1e15, is 3.6 µs less: memory-bound).
    let r = roofline();
    let base = r.gpu_ns(&decode(4, 1000, None));
    close(r.gpu_ns(&decode(4, 2000, None)) - base, 24_576.0);
    // Twice the bandwidth halves it (physics: a faster memory never makes a step slower).
    let (mut hw, model, server) = setup();
    hw.memory.bandwidth_bytes_per_s = 2.0 * BW;
    let fast = Roofline::new(&hw, &model, &server).unwrap();
    close(
        fast.gpu_ns(&decode(4, 2000, None)) - fast.gpu_ns(&decode(4, 1000, None)),
        12_288.0,
    );
}

#[test]
fn a_long_prefill_is_compute_bound() {
    // One 4096-token prefill with no prefix. Per layer:
    // GEMMs: 2 · 4096 · 14 909 440 FLOPs / 1e15 = 122 138.132 48 ns (memory: (29 818 880 +
    //   4096 · 3584) B / 1e12 = 44 498.944 ns, less);
    // attention: 4096 · (0 + 4096/2) pairs · 3584 FLOPs / 1e15 = 30 064.771 072 ns (memory:
    //   4096 · 512 B / 1e12 = 2 097.152 ns, less);
    // then the LM head on the one logit row: 272 272.896 ns.
    let mut s = BatchShape::default();
    s.add_prefill(4096, 0, None);
    let gemm_ns = 2.0 * 4096.0 * LINEAR_PARAMS / PEAK * 1e9;
    let attn_ns = 4096.0 * 2048.0 * 3584.0 / PEAK * 1e9;
    close(gemm_ns, 122_138.132_48);
    close(attn_ns, 30_064.771_072);
    let want = LAYERS * (gemm_ns + attn_ns) + 272_272.896;
    close(roofline().gpu_ns(&s), want);
}

#[test]
fn eager_steps_pay_the_per_layer_launch_cost() {
    let (mut hw, model, server) = setup();
    hw.overheads.graph_step_ns = 5000.0;
    hw.overheads.layer_ns = 100.0;
    hw.overheads.eager_layer_ns = 1000.0;
    let r = Roofline::new(&hw, &model, &server).unwrap();
    let kernels = roofline().gpu_ns(&decode(1, 0, Some(1)));
    // Graph replay: 5000 + 24 · 100 = 7400 ns; eager: 5000 + 24 · (1000 + 100) = 31 400 ns.
    close(r.gpu_ns(&decode(1, 0, Some(1))) - kernels, 7400.0);
    close(r.gpu_ns(&decode(1, 0, None)) - kernels, 31_400.0);
}

#[test]
fn scheduler_cpu_time_hides_under_the_gpu_only_with_overlap() {
    let (mut hw, model, mut server) = setup();
    hw.overheads.step_cpu_ns = 2_000_000.0;
    hw.overheads.per_request_cpu_ns = 1000.0;
    let gpu = 988_012.032; // one_token_decode_reads_every_weight_once
    let cpu = 2_000_000.0 + 1000.0; // one request
    server.overlap_schedule = true;
    let t = Roofline::new(&hw, &model, &server)
        .unwrap()
        .step_time(&decode(1, 0, None));
    close(t.gpu_ns, gpu);
    close(t.cpu_ns, cpu);
    close(t.total_ns, cpu); // max(gpu, cpu)
    server.overlap_schedule = false;
    let t = Roofline::new(&hw, &model, &server)
        .unwrap()
        .step_time(&decode(1, 0, None));
    close(t.total_ns, gpu + cpu);
}

/// The time `--explain` gives `component` in the step `s` of `model` on `hw` under `flags`
/// (SGLang's server, or vLLM's with `engine: vllm`), priced by backend `cost`.
fn component_ns(
    hw: &str,
    model: &str,
    flags: &ServerFlags,
    cost: servesim::cost::CostModel,
    component: servesim::cost::breakdown::Component,
    s: &BatchShape,
) -> f64 {
    use servesim::cost::{build, CostChoice};
    let hw = load_hardware(hw).unwrap();
    let model = load_model(model).unwrap();
    use servesim::spec::engine::{resolve, Engine};
    let engine = match flags.engine.as_deref() {
        Some("vllm") => Engine::Vllm,
        _ => Engine::Sglang,
    };
    let server = resolve(engine, flags, &hw, &model).unwrap();
    let choice = CostChoice {
        model: Some(cost),
        kernel_db: None,
    };
    let c = build(&hw, &model, &server, &choice).unwrap();
    c.explain(s)
        .items
        .iter()
        .filter(|i| i.component == component)
        .map(|i| i.time_ns)
        .sum()
}

/// DeepSeek-V3's fused MoE with SGLang's default triton config (src/cost/moe_config.rs)
/// costs PR #3272's default / tuned ratio, 38.2 / 14.2 µs at 16 rows and 62.2 / 57.5 µs at
/// large m, under both backends: when asked for (`--fused-moe-config default`, seed 004's
/// development build), and where the release ships no file for the shape: 0.4.6 fuses
/// tp = 8 shared-expert copies (E = 264) and has no E=264 B200 file, 0.4.6.post5 has one;
/// every release from 0.4.7 ships the E=257 B200 file, and 0.4.6's H200 has its E=264 file.
#[test]
fn untuned_fused_moe_costs_the_measured_default_kernel_ratio() {
    use servesim::cost::breakdown::Component;
    use servesim::cost::CostModel;
    let moe_ns = |hw: &str, version: &str, moe: Option<&str>, cost: CostModel, s: &BatchShape| {
        let flags = ServerFlags {
            tp: Some(8),
            sglang_version: Some(version.parse().unwrap()),
            fused_moe_config: moe.map(str::to_string),
            ..Default::default()
        };
        component_ns(hw, "deepseek-v3", &flags, cost, Component::Moe, s)
    };
    let decode16 = BatchShape {
        decode_reqs: 16,
        decode_ctx_sum: 16 * 2000,
        graph_bs: Some(16),
        ..Default::default()
    };
    let mut prefill = BatchShape::default();
    prefill.add_prefill(4096, 0, None);
    for cost in [CostModel::Roofline, CostModel::Kernels] {
        let forced = |hw: &str, s: &BatchShape| {
            moe_ns(hw, "0.4.7", Some("default"), cost, s) / moe_ns(hw, "0.4.7", None, cost, s)
        };
        let r16 = forced("b200-sxm-180gb", &decode16);
        assert!((r16 - 38.2 / 14.2).abs() < 1e-6, "{cost:?}: 16 rows ×{r16}");
        let rbig = forced("b200-sxm-180gb", &prefill);
        assert!(
            (rbig - 62.2 / 57.5).abs() < 1e-6,
            "{cost:?}: 4096 rows ×{rbig}"
        );
        let h200 = forced("h200-sxm-141gb", &decode16);
        assert!((h200 - 38.2 / 14.2).abs() < 1e-6, "{cost:?}: h200 ×{h200}");
        let tuned = moe_ns("b200-sxm-180gb", "0.4.7", Some("tuned"), cost, &decode16);
        let auto = moe_ns("b200-sxm-180gb", "0.4.7", None, cost, &decode16);
        assert_eq!(
            tuned, auto,
            "{cost:?}: the 0.4.7 release ships the E=257 B200 file"
        );
        let release = |hw: &str, old: &str, new: &str| {
            moe_ns(hw, old, None, cost, &decode16) / moe_ns(hw, new, None, cost, &decode16)
        };
        let b200 = release("b200-sxm-180gb", "0.4.6", "0.4.6.post5");
        assert!(
            (b200 - 38.2 / 14.2).abs() < 1e-6,
            "{cost:?}: 0.4.6 B200 ×{b200}"
        );
        let h200 = release("h200-sxm-141gb", "0.4.6", "0.4.6.post5");
        assert!((h200 - 1.0).abs() < 1e-12, "{cost:?}: 0.4.6 H200 ×{h200}");
        // Below 16 rows the default costs the extra time it costs at 16 rows: SGLang PR #6111
        // (B200, E=264) lost the same 6.25 / 5.68 ms a step at batch 1 and 32, where a flat
        // 2.69 × tuned(16) floor would charge one row 1.69 × tuned(16) + (tuned(16) − tuned(1)).
        let extra = |bs: u64| {
            let s = BatchShape {
                decode_reqs: bs,
                decode_ctx_sum: bs * 2000,
                graph_bs: Some(bs),
                ..Default::default()
            };
            let (u, t) = (
                moe_ns("b200-sxm-180gb", "0.4.7", Some("default"), cost, &s),
                moe_ns("b200-sxm-180gb", "0.4.7", Some("tuned"), cost, &s),
            );
            assert!(u > t, "{cost:?} bs {bs}: {u} vs tuned {t}");
            u - t
        };
        let at16 = extra(16);
        for bs in [1, 2, 8] {
            let e = extra(bs);
            assert!(
                (e / at16 - 1.0).abs() < 1e-9,
                "{cost:?}: extra {e} at bs {bs} vs {at16} at 16"
            );
        }
    }
}

/// SGLang's eager extend pays the host time measured per layer kind (src/cost/eager_host.rs):
/// MLA (SGLang PR #12160: DeepSeek-V3 one-token extend 82.6 ms eager vs 23.1 ms graphed,
/// / 61 layers ≈ 975 µs), MoE (SGLang PR #11845: Qwen3-30B-A3B TTFT 310 vs 289 ms, / 48 layers
/// = 437.5 µs), dense (sfllm PR #46: Qwen3-4B 16.613 vs 5.685 ms, / 36 layers ≈ 303.6 µs).
/// By hand, under both backends: an eager step's fixed GPU overhead exceeds a graphed decode
/// step's by layers × the per-layer cost (graph launch, per-layer and MoE floors are the same
/// in both). A c1 one-token extend of Llama-3.1-70B at TP8 on SGLang 0.5.6 therefore costs
/// GPU + 80 × 303.6 µs; on 0.5.13.post1 (piecewise prefill graphs on by default) it replays
/// the graphs and pays only the attention ops' launches, 80 × 0.3 × `eager_layer_ns`, unless
/// the step exceeds the largest captured token count (`chunked_prefill_size`) or mixes in
/// decode requests; an eager pure decode step of a dense model keeps the profile's cost.
#[test]
fn an_sglang_eager_extend_pays_the_measured_host_time_per_layer_kind() {
    use servesim::cost::breakdown::Component;
    use servesim::cost::CostModel;
    let base_ns = load_hardware("b200-sxm-180gb")
        .unwrap()
        .overheads
        .eager_layer_ns;
    let extra_chunked_ns = |model: &str, version: &str, chunk: i64, cost, s: &BatchShape| {
        let flags = ServerFlags {
            tp: Some(8),
            sglang_version: Some(version.parse().unwrap()),
            chunked_prefill_size: Some(chunk),
            ..Default::default()
        };
        let overhead = |s: &BatchShape| {
            let hw = "b200-sxm-180gb";
            component_ns(hw, model, &flags, cost, Component::GpuOverhead, s)
        };
        overhead(s) - overhead(&decode(1, 1001, Some(1)))
    };
    let extra_ns = |model: &str, version: &str, cost: CostModel, s: &BatchShape| {
        extra_chunked_ns(model, version, 2048, cost, s)
    };
    // A one-token extend over a 1000-token cached prefix (a radix-cache hit at c1).
    let mut hit = BatchShape::default();
    hit.add_prefill(1, 1000, None);
    // A 4096-token cold prefill: above the 2048-token piecewise capture limit.
    let mut long = BatchShape::default();
    long.add_prefill(4096, 0, None);
    for cost in [CostModel::Roofline, CostModel::Kernels] {
        let close_to = |got: f64, want: f64| {
            assert!(
                (got - want).abs() < 1.0,
                "{cost:?}: {got} ns, by hand {want} ns"
            )
        };
        close_to(extra_ns("deepseek-v3", "0.5.6", cost, &hit), 61.0 * 975e3);
        close_to(
            extra_ns("qwen3-30b-a3b", "0.5.6", cost, &hit),
            48.0 * 437.5e3,
        );
        let dense_70b = extra_ns("llama-3.1-70b", "0.5.6", cost, &hit);
        close_to(dense_70b, 80.0 * 303.6e3);
        // Monotonic in layers: Llama-3.1-8B's 32 layers pay less than the 70B's 80.
        let dense_8b = extra_ns("llama-3.1-8b", "0.5.6", cost, &hit);
        close_to(dense_8b, 32.0 * 303.6e3);
        assert!(dense_8b < dense_70b);
        // Prefill graphs (0.5.10+ default): none of the host time, up to the capture limit.
        let graphed = extra_ns("llama-3.1-70b", "0.5.13.post1", cost, &hit);
        close_to(graphed, 80.0 * 0.3 * base_ns);
        let above_cap = extra_ns("llama-3.1-70b", "0.5.13.post1", cost, &long);
        close_to(above_cap, 80.0 * 303.6e3);
        // A mixed step (the hit plus one decode request, `--enable-mixed-chunk`) is priced
        // eager, so adding a request never makes the graphed prefill step cheaper.
        let mut mixed = hit;
        mixed.decode_reqs = 1;
        mixed.decode_ctx_sum = 500;
        let mixed_ns = extra_ns("llama-3.1-70b", "0.5.13.post1", cost, &mixed);
        close_to(mixed_ns, 80.0 * 303.6e3);
        assert!(mixed_ns > graphed);
        // With 8192-token chunks a 4096-token prefill is graphed, but not on an MLA model,
        // whose graphs stop at 2048 tokens (`piecewise_cuda_graph_max_tokens`, PR #15927).
        let v = "0.5.13.post1";
        let dense_long = extra_chunked_ns("llama-3.1-70b", v, 8192, cost, &long);
        close_to(dense_long, 80.0 * 0.3 * base_ns);
        let mla_long = extra_chunked_ns("deepseek-v3", v, 8192, cost, &long);
        close_to(mla_long, 61.0 * 975e3);
        // An eager pure decode step (no graph) of a dense model: the profile's launch cost.
        let eager_decode = extra_ns("llama-3.1-70b", "0.5.6", cost, &decode(1, 1001, None));
        close_to(eager_decode, 80.0 * base_ns);
    }
}

mod gpt_oss;
mod kimi_k25;
mod llama4;
mod sglang_mxfp4_sm80;
