//! SGLang's gpt-oss MXFP4 experts on A100 (sm80), per release (src/cost/mxfp4.rs): which
//! `triton_kernels` / Triton stack a release ships, and the price of one MoE step per stack,
//! worked out by hand from the sources (validation/gpustack/gpt-oss-notes.md, hoss80).
use super::*;
use servesim::cost::breakdown::Component;
use servesim::cost::mxfp4::{self, Mxfp4Kernel, SglangSm80Stack};
use servesim::cost::CostModel;
use servesim::spec::version::Version;

/// Each release's pins as read in its PyPI wheel (`sglang-X.dist-info/METADATA`,
/// `Requires-Dist: sgl-kernel==` / `torch==`), and whether that sgl-kernel's bundled
/// `triton_kernels/` (installed from triton's `python/triton_kernels` by sgl-kernel's
/// CMakeLists) is byte-identical to 0.3.5's: md5 of its 38 `.py` files d05b2b0a402f for
/// 0.3.5, 0.3.14.post1, 0.3.16.post4, 0.3.16.post5, 0.3.17.post1; 3fb5e3f24c9c (40 files) for
/// 0.3.18.post2 and 0.3.21. 0.3.20 (0.5.7) was not downloaded.
const RELEASES: &[(&str, &str, &str)] = &[
    ("0.5.1", "0.3.5", "2.8.0"),
    ("0.5.3", "0.3.14.post1", "2.8.0"),
    ("0.5.4.post2", "0.3.16.post4", "2.8.0"),
    ("0.5.5", "0.3.16.post5", "2.8.0"),
    ("0.5.5.post3", "0.3.17.post1", "2.8.0"),
    ("0.5.6", "0.3.18.post2", "2.9.1"),
    ("0.5.7", "0.3.20", "2.9.1"),
    ("0.5.8.post1", "0.3.21", "2.9.1"),
];

/// The stack follows the torch pin (torch 2.8.0 bundles Triton 3.4.0, torch 2.9.1 Triton
/// 3.5.1), which in every release read changes together with the `triton_kernels` copy.
#[test]
fn sglang_sm80_release_maps_to_the_stack_its_wheel_pins() {
    for &(release, sgl_kernel, torch) in RELEASES {
        let want = match torch {
            "2.8.0" => SglangSm80Stack::Torch28,
            "2.9.1" => SglangSm80Stack::Torch291,
            other => panic!("unread torch pin {other}"),
        };
        let v: Version = release.parse().unwrap();
        assert_eq!(
            mxfp4::sglang_sm80_stack(v),
            want,
            "SGLang {release} (sgl-kernel {sgl_kernel}, torch {torch})"
        );
    }
    // The kernel a resolved A100 server takes, for the releases servesim accepts.
    let hw = load_hardware("a100-sxm4-80gb").unwrap();
    let h100 = load_hardware("h100-sxm5-80gb").unwrap();
    let model = load_model("gpt-oss-20b").unwrap();
    for (release, want) in [
        ("0.5.1", Mxfp4Kernel::SglangProfile),
        ("0.5.5", Mxfp4Kernel::SglangProfile),
        ("0.5.6", Mxfp4Kernel::SglangMatmulOgsSm80),
        ("0.5.8", Mxfp4Kernel::SglangMatmulOgsSm80),
    ] {
        let flags = ServerFlags {
            sglang_version: Some(release.parse().unwrap()),
            ..Default::default()
        };
        let server = ServerConfig::resolve(&flags, &hw, &model).unwrap();
        assert_eq!(mxfp4::kernel(&hw, &server), Some(want), "{release}");
        // Off sm80 the release does not pick between these two.
        let server = ServerConfig::resolve(&flags, &h100, &model).unwrap();
        assert_eq!(
            mxfp4::kernel(&h100, &server),
            Some(Mxfp4Kernel::SglangProfile),
            "{release} on H100"
        );
    }
}

/// The MoE time of a 4096-token gpt-oss-20b prefill on one A100 under SGLang `release`.
fn prefill_moe_ns(release: &str, cost: CostModel) -> f64 {
    let mut prefill = BatchShape::default();
    prefill.add_prefill(4096, 0, None);
    let flags = ServerFlags {
        sglang_version: Some(release.parse().unwrap()),
        ..Default::default()
    };
    component_ns(
        "a100-sxm4-80gb",
        "gpt-oss-20b",
        &flags,
        cost,
        Component::Moe,
        &prefill,
    )
}

/// One expert layer by hand: 32 experts all touched by 4096 tokens × top-4
/// (32 · (1 − (28/32)^4096) = 32), 3 · 2880 · 2880 weights each at 4.25 bits; compute at
/// `rate` plus the roll-off's `half` padding rows per expert (capped at reading the weights),
/// against the packed weights and activations at `bw`; 24 layers.
fn by_hand_ns(rate: f64, bw: f64, half: f64) -> f64 {
    let p = 3.0 * 2880.0 * 2880.0;
    let (m, k, experts) = (4096.0, 4.0, 32.0);
    let weights_s = experts * p * 4.25 / 8.0 / bw;
    let padding_s = (2.0 * experts * p * half / rate).min(weights_s);
    let compute_s = 2.0 * m * k * p / rate + padding_s;
    let memory_s = weights_s + m * k * 2880.0 * 4.0 / bw;
    24.0 * compute_s.max(memory_s) * 1e9
}

/// From 0.5.6 the compiled `matmul_ogs` main loop at BLOCK_M 128 (8 warps) issues 5387
/// instructions per warp per K step, 256 of them HMMA.16816 at 8 tensor cycles each
/// (312 TFLOP/s = 108 SMs × 4 × 512 FLOP/clk × 1.41 GHz): the tensor cores work at most
/// 2048 / 5387 = 38.0% of the time, under Marlin's 54%. The packed weights stream at vLLM
/// Marlin's H20 rate carried per SM-clock (1.32 TB/s × 108 · 1.41 / (78 · 1.98)).
/// Before 0.5.6 the profile's SGLang constants: moe_gemm × mxfp4_compute of the bf16 peak,
/// the plain weight rate × mxfp4_memory, mxfp4_half_tokens.
#[test]
fn sglang_sm80_prefill_experts_cost_their_stack_by_hand() {
    let hw = load_hardware("a100-sxm4-80gb").unwrap();
    let e = &hw.efficiency;
    let peak = hw.peaks.bf16_flops_per_s;
    let issue_bound: f64 = 256.0 * 8.0 / 5387.0;
    assert!((issue_bound / 0.3802 - 1.0).abs() < 1e-3, "{issue_bound}");
    let marlin_bw: f64 = 1.32e12 * (108.0 * 1.41e9) / (78.0 * 1.98e9);
    let plain_bw = hw.memory.bandwidth_bytes_per_s * e.memory;
    let new = by_hand_ns(
        peak * issue_bound,
        plain_bw.min(marlin_bw),
        e.gemm_half_tokens,
    );
    let old = by_hand_ns(
        peak * e.moe_gemm.unwrap() * e.mxfp4_compute,
        plain_bw * e.mxfp4_memory,
        e.mxfp4_half_tokens.unwrap(),
    );
    for cost in [CostModel::Roofline, CostModel::Kernels] {
        let got = prefill_moe_ns("0.5.8", cost);
        assert!(
            (got / new - 1.0).abs() < 1e-9,
            "{cost:?} 0.5.8: {got} ns, by hand {new} ns"
        );
        let got = prefill_moe_ns("0.5.1", cost);
        assert!(
            (got / old - 1.0).abs() < 1e-9,
            "{cost:?} 0.5.1: {got} ns, by hand {old} ns"
        );
    }
    // 2 · 4096 · 4 · 24.9e6 · 24 FLOP = 19.6 TFLOP: 0.165 s at 38% of 312 TFLOP/s, + the
    // padding rows (32 experts × 111.6 rows): ≈ 0.17 s; the fitted path takes ~4× as long.
    assert!((new / 1e9 / 0.17 - 1.0).abs() < 0.05, "{new} ns");
    assert!(old > 3.0 * new, "{old} ns vs {new} ns");
}

/// `--explain` names the path and where it comes from, per release.
#[test]
fn sglang_sm80_explain_names_the_expert_stack() {
    use servesim::cost::{build, CostChoice};
    let hw = load_hardware("a100-sxm4-80gb").unwrap();
    let model = load_model("gpt-oss-20b").unwrap();
    let mut s = BatchShape::default();
    s.add_prefill(4096, 0, None);
    for (release, must) in [
        ("0.5.1", ["torch 2.8", "seed 003"]),
        ("0.5.8", ["matmul_ogs", "5387 instructions"]),
    ] {
        let flags = ServerFlags {
            sglang_version: Some(release.parse().unwrap()),
            ..Default::default()
        };
        let server = ServerConfig::resolve(&flags, &hw, &model).unwrap();
        for cost in [CostModel::Roofline, CostModel::Kernels] {
            let choice = CostChoice {
                model: Some(cost),
                kernel_db: None,
            };
            let c = build(&hw, &model, &server, &choice).unwrap();
            let detail = c
                .explain(&s)
                .items
                .into_iter()
                .find(|i| i.component == Component::Moe)
                .unwrap()
                .detail;
            for m in must {
                assert!(detail.contains(m), "{release} {cost:?}: {detail}");
            }
            assert!(detail.contains("hoss80"), "{release} {cost:?}: {detail}");
        }
    }
}
