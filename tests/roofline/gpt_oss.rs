//! gpt-oss under vLLM and SGLang: MXFP4 experts per GPU (src/cost/mxfp4.rs) and vLLM's Triton
//! unified attention on Ampere (src/cost/unified_attention.rs), priced by hand.
use super::*;

/// gpt-oss-20b's MXFP4 experts on one A100 under vLLM 0.11.0 run vLLM's Marlin W4A16 fused
/// MoE (vLLM `mxfp4.py`: the Marlin backend below sm90; src/cost/mxfp4.rs), priced by hand:
/// a 4096-token prefill routes 4 of 32 experts per token, so every expert is touched
/// (32 · (1 − (28/32)^4096) = 32), each with 3 · 2880 · 2880 weights at 4.25 bits. Compute
/// is a bf16 GEMM at 54% of the bf16 peak (the kernel's large-M rate on an H20, FlagGems
/// #4483) plus the roll-off's padding rows (`gemm_half_tokens` per expert, capped at reading
/// the weights); the packed weights stream at the H20's measured 1.32 TB/s carried per
/// SM-clock to the A100 (× 108 · 1.41 GHz / (78 · 1.98 GHz) ≈ 1.30 TB/s, under the profile's
/// plain weight rate); 24 layers. Under both backends (A100's tables hold no MXFP4 MoE rows),
/// and not the profile's SGLang constants: SGLang's price differs.
#[test]
fn vllm_mxfp4_experts_on_a100_cost_a_marlin_bf16_gemm_by_hand() {
    use servesim::cost::breakdown::Component;
    use servesim::cost::CostModel;
    let hw = load_hardware("a100-sxm4-80gb").unwrap();
    let e = &hw.efficiency;
    let p = 3.0 * 2880.0 * 2880.0;
    let (m, k, experts) = (4096.0, 4.0, 32.0);
    let rate = hw.peaks.bf16_flops_per_s * 0.54;
    let marlin_bw: f64 = 1.32e12 * (108.0 * 1.41e9) / (78.0 * 1.98e9);
    assert!((marlin_bw / 1.3016e12 - 1.0).abs() < 1e-3, "{marlin_bw}");
    let bw = (hw.memory.bandwidth_bytes_per_s * e.memory).min(marlin_bw);
    assert!(
        bw < hw.memory.bandwidth_bytes_per_s * e.memory,
        "the Marlin rate binds"
    );
    let weights_s = experts * p * 4.25 / 8.0 / bw;
    let padding_s = (2.0 * experts * p * e.gemm_half_tokens / rate).min(weights_s);
    let compute_s = 2.0 * m * k * p / rate + padding_s;
    let memory_s = weights_s + m * k * 2880.0 * 4.0 / bw;
    let want_ns = 24.0 * compute_s.max(memory_s) * 1e9;
    let mut prefill = BatchShape::default();
    prefill.add_prefill(4096, 0, None);
    // SGLang 0.5.1: the torch 2.8 expert stack the profile's constants describe (0.5.6+ is
    // priced in tests/roofline/sglang_mxfp4_sm80.rs).
    let flags = |engine: &str| ServerFlags {
        engine: (engine == "vllm").then(|| engine.into()),
        vllm_version: (engine == "vllm").then(|| "0.11.0".parse().unwrap()),
        sglang_version: (engine != "vllm").then(|| "0.5.1".parse().unwrap()),
        ..Default::default()
    };
    for cost in [CostModel::Roofline, CostModel::Kernels] {
        let got = component_ns(
            "a100-sxm4-80gb",
            "gpt-oss-20b",
            &flags("vllm"),
            cost,
            Component::Moe,
            &prefill,
        );
        assert!(
            (got / want_ns - 1.0).abs() < 1e-9,
            "{cost:?}: {got} ns, by hand {want_ns} ns"
        );
        let sglang = component_ns(
            "a100-sxm4-80gb",
            "gpt-oss-20b",
            &flags("sglang"),
            cost,
            Component::Moe,
            &prefill,
        );
        assert!(
            sglang > 1.5 * got,
            "{cost:?}: SGLang's fitted sm80 path {sglang} ns vs Marlin {got} ns"
        );
    }
}

/// One decode token of gpt-oss-120b on one A100 under vLLM touches 4 of 128 experts per
/// layer: Marlin's price is the packed weights (4 · 3 · 2880 · 2880 · 4.25 / 8 bytes per layer,
/// 36 layers) at the rate vLLM's `fused_marlin_moe` streamed MXFP4 weights on an H20 at one
/// token (FlagGems #4483: 0.144 ms for 2 Mixtral experts, 2 · 3 · 4096 · 14336 · 4.25 / 8 bytes)
/// carried per SM-clock (A100 108 × 1.41 GHz, H20 78 × 1.98 GHz), plus a few percent of tensor
/// work; not the 1.84 TB/s plain weights stream at (which would be ≥ 25% cheaper).
#[test]
fn vllm_marlin_decode_streams_the_packed_experts_at_the_kernels_measured_rate() {
    use servesim::cost::breakdown::Component;
    use servesim::cost::CostModel;
    let h20_bytes_per_s: f64 = 2.0 * 3.0 * 4096.0 * 14336.0 * 4.25 / 8.0 / 0.144e-3;
    assert!(
        (h20_bytes_per_s / 1.30e12 - 1.0).abs() < 0.01,
        "{h20_bytes_per_s}"
    );
    let a100_bytes_per_s = h20_bytes_per_s * (108.0 * 1.41) / (78.0 * 1.98);
    let want_ns = 36.0 * 4.0 * 3.0 * 2880.0 * 2880.0 * 4.25 / 8.0 / a100_bytes_per_s * 1e9;
    let decode = BatchShape {
        decode_reqs: 1,
        decode_ctx_sum: 1000,
        ..Default::default()
    };
    for cost in [CostModel::Roofline, CostModel::Kernels] {
        let got = component_ns(
            "a100-sxm4-80gb",
            "gpt-oss-120b",
            &vllm_gpt_oss("0.11.0"),
            cost,
            Component::Moe,
            &decode,
        );
        assert!(
            got >= 0.99 * want_ns && got <= 1.06 * want_ns,
            "{cost:?}: {got} ns, packed weights at the Marlin rate {want_ns} ns"
        );
    }
}

/// On H100 (vLLM past 0.11.0, whose sm90 backend servesim does not take for Marlin) and B200
/// vLLM's MXFP4 experts are priced by the measured `mxfp4` MoE rows of the
/// bundled vLLM tables (hardware-profiles/kernels/{h100,b200}_sxm_vllm/moe.txt, row
/// `mxfp4 2880 2880 4 32 1 1`: 1649 and 1563 µs per layer at 4096 tokens, a grid point), so a
/// 4096-token gpt-oss-20b prefill's experts cost 24 × that; A100 (no row) prices its Marlin
/// kernel dearer than both.
#[test]
fn vllm_mxfp4_experts_on_h100_and_b200_cost_the_measured_rows() {
    use servesim::cost::breakdown::Component;
    use servesim::cost::CostModel;
    let mut prefill = BatchShape::default();
    prefill.add_prefill(4096, 0, None);
    let flags = ServerFlags {
        engine: Some("vllm".into()),
        vllm_version: Some("0.14.0".parse().unwrap()),
        ..Default::default()
    };
    let moe = |hw: &str| {
        component_ns(
            hw,
            "gpt-oss-20b",
            &flags,
            CostModel::Kernels,
            Component::Moe,
            &prefill,
        )
    };
    let (h100, b200, a100) = (
        moe("h100-sxm5-80gb"),
        moe("b200-sxm-180gb"),
        moe("a100-sxm4-80gb"),
    );
    assert!((h100 - 24.0 * 1649e3).abs() < 1.0, "h100 {h100} ns");
    assert!((b200 - 24.0 * 1563e3).abs() < 1.0, "b200 {b200} ns");
    assert!(a100 > h100, "a100 {a100} ns vs h100 {h100} ns");
}

/// gpt-oss on one GPU under vLLM, with `version` and the bundled gpt-oss-20b.
fn vllm_gpt_oss(version: &str) -> ServerFlags {
    ServerFlags {
        engine: Some("vllm".into()),
        vllm_version: Some(version.parse().unwrap()),
        ..Default::default()
    }
}

/// gpt-oss-20b's prefill attention on one A100 under vLLM runs Triton unified attention
/// (vLLM `platforms/cuda.py`: sinks and not sm90 → `TRITON_ATTN`), priced by hand from
/// `triton_unified_attention.py`: 16 rows per program = 2 query tokens × 8 query heads per KV
/// head, so each K/V tile (8 KV heads × 64 × 2 × 2 bytes = 2048 B per token per layer) is
/// loaded once per 2 query tokens, at 2.47 TB/s (src/cost/unified_attention.rs, vllm#18152). A
/// 4096-token extend over 8192 cached tokens: the 12 full layers attend 4096 · (8192 + 2048)
/// pairs, the 12 window layers (128) 4096 · 128 from 0.11.0 (tiles outside the window
/// skipped, vllm#24390) but the full causal work in 0.10.2 (mask only). The floor is above
/// the FlashAttention price vLLM's other A100 models get (16384 FLOP per pair at the
/// profile's flashinfer prefill efficiency) and the KV stream from HBM at these shapes, so
/// it is the price under both backends. Decode keeps that price (not SGLang's triton's).
#[test]
fn vllm_gpt_oss_on_a100_prefill_attention_is_l2_bound_triton_by_hand() {
    use servesim::cost::breakdown::Component;
    use servesim::cost::CostModel;
    let hw = load_hardware("a100-sxm4-80gb").unwrap();
    let model = load_model("gpt-oss-20b").unwrap();
    let server = servesim::spec::engine::resolve(
        servesim::spec::engine::Engine::Vllm,
        &vllm_gpt_oss("0.11.0"),
        &hw,
        &model,
    )
    .unwrap();
    assert_eq!(server.attention_backend, "triton");
    let mut s = BatchShape::default();
    s.add_prefill(4096, 8192, Some(128));
    let per_pair_s = 2048.0 / 2.0 / 2.47e12;
    let tensor_per_pair_s =
        16384.0 / (hw.peaks.bf16_flops_per_s * hw.attention("flashinfer").unwrap().prefill);
    assert!(per_pair_s > tensor_per_pair_s, "the tile-rate floor binds");
    let decode = decode(64, 64 * 3000, Some(64));
    let sglang_flash = ServerFlags {
        attention_backend: Some("flashinfer".into()),
        ..Default::default()
    };
    let vllm_decode = component_ns(
        "a100-sxm4-80gb",
        "gpt-oss-20b",
        &vllm_gpt_oss("0.11.0"),
        CostModel::Roofline,
        Component::Attention,
        &decode,
    );
    let flash_decode = component_ns(
        "a100-sxm4-80gb",
        "gpt-oss-20b",
        &sglang_flash,
        CostModel::Roofline,
        Component::Attention,
        &decode,
    );
    assert_eq!(vllm_decode, flash_decode, "decode at the flashinfer price");
    let full = 4096.0 * (8192.0 + 2048.0);
    for (version, window_work) in [("0.11.0", 4096.0 * 128.0), ("0.10.2", full)] {
        let want_ns = 12.0 * (full + window_work) * per_pair_s * 1e9;
        for cost in [CostModel::Roofline, CostModel::Kernels] {
            let got = component_ns(
                "a100-sxm4-80gb",
                "gpt-oss-20b",
                &vllm_gpt_oss(version),
                cost,
                Component::Attention,
                &s,
            );
            assert!(
                (got / want_ns - 1.0).abs() < 1e-9,
                "{version} {cost:?}: {got} ns, by hand {want_ns} ns"
            );
        }
    }
}

/// Elsewhere the kernel does not run: vLLM on H100 keeps FlashAttention 3 (with sinks; the
/// tables' fa3 rows), SGLang on A100 its own triton extend kernel. Physics at the same
/// shapes: H100 never slower than A100, and more cached context never cheaper on A100.
#[test]
fn gpt_oss_attention_h100_beats_a100_and_grows_with_context() {
    use servesim::cost::breakdown::Component;
    use servesim::cost::CostModel;
    let h100 = load_hardware("h100-sxm5-80gb").unwrap();
    let model = load_model("gpt-oss-20b").unwrap();
    let vllm = servesim::spec::engine::Engine::Vllm;
    let server =
        servesim::spec::engine::resolve(vllm, &vllm_gpt_oss("0.10.2"), &h100, &model).unwrap();
    assert_eq!(server.attention_backend, "fa3");
    let attn = |hw: &str, flags: &ServerFlags, cost, s: &BatchShape| {
        component_ns(hw, "gpt-oss-20b", flags, cost, Component::Attention, s)
    };
    let sglang = ServerFlags::default();
    for cost in [CostModel::Roofline, CostModel::Kernels] {
        for flags in [
            vllm_gpt_oss("0.10.2"),
            vllm_gpt_oss("0.11.0"),
            sglang.clone(),
        ] {
            let mut last_a100 = 0.0;
            for prefix in [0, 1000, 8192, 30000] {
                for extend in [512, 2048, 8192] {
                    let mut s = BatchShape::default();
                    s.add_prefill(extend, prefix, Some(128));
                    let a = attn("a100-sxm4-80gb", &flags, cost, &s);
                    let h = attn("h100-sxm5-80gb", &flags, cost, &s);
                    assert!(
                        h <= a,
                        "{cost:?} {flags:?} {prefix}+{extend}: H100 {h} > A100 {a}"
                    );
                    if extend == 2048 {
                        assert!(
                            a >= last_a100,
                            "{cost:?} prefix {prefix}: {a} < {last_a100}"
                        );
                        last_a100 = a;
                    }
                }
            }
        }
    }
}

/// SGLang's gpt-oss branch of `server_args.py` (read in the 0.5.0rc2, 0.5.1 and 0.5.5.post1
/// wheels): sm100 trtllm_mha, sm90 fa3, else triton, before 0.5.6's Blackwell rule existed.
#[test]
fn sglang_gpt_oss_attention_backend_before_0_5_6() {
    use servesim::spec::defaults::attention_backend;
    use servesim::spec::hardware::Arch;
    for ver in ["0.5.1", "0.5.5.post1", "0.5.23"] {
        let v = ver.parse().unwrap();
        let oss = |arch| attention_backend(arch, "GptOssForCausalLM", false, v);
        assert_eq!(oss(Arch::Blackwell), "trtllm_mha", "{ver}");
        assert_eq!(oss(Arch::Hopper), "fa3", "{ver}");
        assert_eq!(oss(Arch::Ampere), "triton", "{ver}");
    }
}
