//! NVFP4 checkpoints on B200 are priced from SGLang's measured NVFP4 kernels (AIConfigurator
//! 0.12.0 `nvfp4` GEMM and MoE rows), checked against values read from the parquet by hand.
use super::*;
use servesim::cost::breakdown::CostItem;

#[test]
fn b200_nvfp4_rows_hold_the_parquet_values() {
    // b200_sxm/{moe,gemm}/sglang/0.5.14/*.parquet, read with pyarrow:
    // moe nvfp4 (sglang_flashinfer_trtllm_moe, power_law_1.2) hidden 4096, inter 1536, top-8 of
    // 128, moe_tp 4, moe_ep 1: 64 tokens 0.0714131 ms, 8192 tokens 0.4424262 ms;
    // gemm nvfp4 (sglang_flashinfer_cutedsl_nvfp4) n 4096, k 2048: m 8192 0.0474729 ms.
    let db = KernelDb::bundled("b200_sxm", "0.5.14".parse().unwrap()).unwrap();
    let at = |op: &str, key: &[&str], x: f64| {
        let t = db.table(op).unwrap();
        let rows = t.rows();
        let row = rows.iter().find(|r| r.key == key).expect("row present");
        let j = t.grid.iter().position(|&g| g == x).expect("grid point");
        row.values_ns[j].unwrap()
    };
    let moe = ["nvfp4", "4096", "1536", "8", "128", "4", "1"];
    for (x, ms) in [(64.0, 0.0714131), (8192.0, 0.4424262)] {
        let ns = at("moe", &moe, x);
        assert!((ns / (ms * 1e6) - 1.0).abs() < 6e-4, "moe @ {x}: {ns}");
    }
    let ns = at("gemm", &["nvfp4", "4096", "2048"], 8192.0);
    assert!((ns / 47_472.9 - 1.0).abs() < 6e-4, "gemm: {ns}");
}

/// The routed experts' line of `k`'s `--explain` for `shape`.
fn moe_item(k: &dyn StepCost, shape: &BatchShape) -> CostItem {
    k.explain(shape)
        .items
        .into_iter()
        .find(|i| i.component.name() == "moe")
        .unwrap()
}

#[test]
fn qwen3_235b_nvfp4_on_b200_prices_its_experts_from_the_nvfp4_rows() {
    // Qwen3-235B-A22B at TP 4: 94 MoE layers of 128 experts (4096 × 1536, top 8), one rank
    // holding a quarter of each expert: the nvfp4 row above. A prefill of 8192 tokens touches
    // every expert under either routing, so the row stands as measured: 442.4 µs per layer.
    let (k, _, server) = deployment("b200-sxm-180gb", "nvidia/Qwen3-235B-A22B-NVFP4", 4).unwrap();
    let item = moe_item(k.as_ref(), &prefill(8192, 0));
    assert!(item.detail.contains("nvfp4"), "{}", item.detail);
    let layer_us = item.time_ns / 94.0 / 1e3;
    assert!(
        (layer_us / 442.43 - 1.0).abs() < 0.01,
        "{layer_us} µs: {}",
        item.detail
    );
    // A decode step of 64 can only touch more experts under uniform routing than the table's
    // power law: never below the row (71.41 µs), and not above reading every expert's quarter
    // (128 × 3·4096·384 × 4.5/8 B = 340 MB at 8 TB/s = 42.5 µs) on top of it.
    let item = moe_item(k.as_ref(), &decode(&server, 64, 1024));
    let layer_us = item.time_ns / 94.0 / 1e3;
    assert!(
        (71.41 * 0.999..=71.41 + 42.5).contains(&layer_us),
        "{layer_us} µs: {}",
        item.detail
    );
}

#[test]
fn nvfp4_roofline_reads_the_fp4_peak_and_4_5_bit_weights() {
    // The roofline of the same deployment: a bf16 and an NVFP4 build differ in the bytes the
    // experts stream (2 vs 0.5625 B per weight), so a memory-bound decode step of the NVFP4
    // build is faster, and a large prefill's compute runs at the FP4 peak (9 vs 2.25 PFLOPS).
    let (_, r4, s4) = deployment("b200-sxm-180gb", "nvidia/Qwen3-235B-A22B-NVFP4", 4).unwrap();
    let (_, r16, s16) = deployment("b200-sxm-180gb", "Qwen/Qwen3-235B-A22B", 4).unwrap();
    let t = |r: &dyn StepCost, s: &BatchShape| r.step_time(s).gpu_ns;
    assert!(t(r4.as_ref(), &decode(&s4, 8, 1024)) < t(r16.as_ref(), &decode(&s16, 8, 1024)));
    assert!(t(r4.as_ref(), &prefill(8192, 0)) < t(r16.as_ref(), &prefill(8192, 0)));
}

#[test]
fn kimi_k2_5_int4_experts_on_b200_take_the_trtllm_mxint4_rows_from_sglang_0_5_10() {
    // SGLang 0.5.10+ on sm100 serves Kimi-K2.5's int4 group-32 experts with flashinfer's
    // trtllm_mxint4_block_scale_moe (server_args.py is_kimi_k2_k25_thinking_int4; 0.5.9 runs
    // Marlin, refused). AIConfigurator 0.12.0 b200_sxm/moe/sglang/0.5.14/moe_perf.parquet,
    // int4_wo, sglang_flashinfer_trtllm_moe, power_law_1.2, hidden 7168, inter 2048, top-8 of
    // 384, moe_tp 8, moe_ep 1: 8192 tokens 1.466145 ms (every expert touched under either
    // routing, so the row stands). Kimi-K2.5 has 60 MoE layers (61, first_k_dense_replace 1).
    let (k, _, _) = deployment("b200-sxm-180gb", "moonshotai/Kimi-K2.5", 8).unwrap();
    let item = moe_item(k.as_ref(), &prefill(8192, 0));
    assert!(item.detail.contains("int4_wo"), "{}", item.detail);
    let layer_us = item.time_ns / 60.0 / 1e3;
    assert!(
        (layer_us / 1466.1 - 1.0).abs() < 0.01,
        "{layer_us} µs: {}",
        item.detail
    );
    fails_with(
        &[
            "run",
            "--hardware",
            "b200-sxm-180gb",
            "--model",
            "moonshotai/Kimi-K2.5",
            "--tp",
            "8",
            "--sglang-version",
            "0.5.9",
        ],
        &["0.5.10", "Marlin"],
    );
}

#[test]
fn nvfp4_steps_obey_the_physics_laws() {
    // More work never costs less, and B300 (B200's figures, 1.5× its FP4) is never slower than
    // B200 on the same NVFP4 step, on both backends.
    let b200 = deployment("b200-sxm-180gb", "nvidia/DeepSeek-R1-0528-FP4", 8).unwrap();
    let b300 = deployment("b300-sxm-288gb", "nvidia/DeepSeek-R1-0528-FP4", 8).unwrap();
    let gpu = |k: &dyn StepCost, s: &BatchShape| k.step_time(s).gpu_ns;
    for (weak, strong) in [
        (b200.0.as_ref(), b300.0.as_ref()),
        (b200.1.as_ref(), b300.1.as_ref()),
    ] {
        let mut last = 0.0;
        for bs in [1, 2, 4, 8, 16, 32, 64, 128, 256] {
            let s = decode(&b200.2, bs, 1024);
            let t = gpu(weak, &s);
            assert!(t >= last, "decode {bs}: {t} < {last}");
            last = t;
            let s3 = decode(&b300.2, bs, 1024);
            assert!(gpu(strong, &s3) <= t * 1.0001, "decode {bs}");
        }
        let mut last = 0.0;
        for tokens in [256, 1024, 4096, 8192, 16384] {
            let t = gpu(weak, &prefill(tokens, 0));
            assert!(t >= last, "prefill {tokens}: {t} < {last}");
            last = t;
            assert!(
                gpu(strong, &prefill(tokens, 0)) <= t * 1.0001,
                "prefill {tokens}"
            );
        }
    }
}
