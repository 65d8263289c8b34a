//! Kimi-K2.5's int4 W4A16 routed experts under SGLang (src/cost/mxfp4.rs, `SglangMarlinInt4`):
//! `fused_marlin_moe`, priced with vLLM Marlin's bounds, by hand.
use super::*;
use servesim::cost::breakdown::Component;
use servesim::cost::CostModel;

/// One decode token on 8 × H200 routes to 8 of 384 experts in each of the 60 MoE layers. One
/// expert on one rank holds 3 · 7168 · 2048 / 8 = 5,505,024 weights at 4.5 bits (int4 + a bf16
/// scale per 32). They stream at Marlin's packed-weight rate, the H20's measured 1.32 TB/s
/// carried per SM-clock to 132 SMs at the same 1.98 GHz (1.32e12 · 132 / 78 ≈ 2.23 TB/s, under
/// the H200's plain rate); compute is the bf16 peak × 0.27 with the roll-off's padding rows
/// capped at the weight read. Both cost backends (no measured int4 MoE rows).
#[test]
fn kimi_k2_5_int4_experts_on_h200_cost_marlin_by_hand() {
    let hw = load_hardware("h200-sxm-141gb").unwrap();
    let e = &hw.efficiency;
    let p = 3.0 * 7168.0 * 2048.0 / 8.0;
    let touched = 8.0;
    let stream = 1.32e12 * 132.0 / 78.0;
    let bw = (hw.memory.bandwidth_bytes_per_s * e.memory).min(stream);
    assert!(bw == stream, "the Marlin rate binds on the H200");
    let rate = hw.peaks.bf16_flops_per_s * 0.27f64.min(e.gemm);
    let weights_s = touched * p * 4.5 / 8.0 / bw;
    let padding_s = (2.0 * touched * p * e.gemm_half_tokens / rate).min(weights_s);
    let compute_s = 2.0 * touched * p / rate + padding_s;
    let memory_s = weights_s + touched * 7168.0 * 4.0 / bw;
    let want_ns = 60.0 * compute_s.max(memory_s) * 1e9;
    let flags = ServerFlags {
        tp: Some(8),
        ..Default::default()
    };
    for cost in [CostModel::Roofline, CostModel::Kernels] {
        let got = component_ns(
            "h200-sxm-141gb",
            "moonshotai/Kimi-K2.5",
            &flags,
            cost,
            Component::Moe,
            &decode(1, 1000, Some(1)),
        );
        assert!(
            (got / want_ns - 1.0).abs() < 1e-9,
            "{cost:?}: {got} ns, by hand {want_ns} ns"
        );
    }
}

/// No Marlin rate was derived for sm100 (where SGLang before 0.5.10 runs Marlin; 0.5.10+ runs
/// flashinfer's TRT-LLM mxint4 MoE, priced from its measured rows, tests/kernels/nvfp4.rs), and
/// vLLM's int4 MoE path is not modelled: both are refused in one line rather than priced by
/// another kernel's numbers.
#[test]
fn kimi_k2_5_is_refused_where_its_kernel_is_not_priced() {
    use servesim::spec::engine::{resolve, Engine};
    let m = load_model("moonshotai/Kimi-K2.5").unwrap();
    let b200 = load_hardware("b200-sxm-180gb").unwrap();
    let flags = ServerFlags {
        tp: Some(8),
        sglang_version: Some("0.5.9".parse().unwrap()),
        ..Default::default()
    };
    let e = resolve(Engine::Sglang, &flags, &b200, &m)
        .unwrap_err()
        .to_string();
    assert!(e.contains("sm80 and sm90 only") && !e.contains('\n'), "{e}");
    let h200 = load_hardware("h200-sxm-141gb").unwrap();
    let vllm = ServerFlags {
        tp: Some(8),
        engine: Some("vllm".into()),
        ..Default::default()
    };
    let e = resolve(Engine::Vllm, &vllm, &h200, &m)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--engine sglang") && !e.contains('\n'), "{e}");
}
