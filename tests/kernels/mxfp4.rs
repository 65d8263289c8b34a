//! Which bundled MoE rows price SGLang's MXFP4 (gpt-oss) experts: on sm100 the MXFP8-activation
//! rows (the FlashInfer trtllm-gen call SGLang makes at the default
//! `flashinfer_mxfp4_moe_precision`), on sm90 the `mxfp4` rows, whose measured kernel
//! `--explain` names (`cost::mxfp4::moe_table_dtypes`, `table_provenance`).
use super::*;

/// The MoE line of one decode step's `--explain`.
fn moe_item(
    k: &dyn StepCost,
    server: &ServerConfig,
    bs: u64,
) -> servesim::cost::breakdown::CostItem {
    k.explain(&decode(server, bs, 1024))
        .items
        .into_iter()
        .find(|i| i.component.name() == "moe")
        .unwrap()
}

#[test]
fn b200_sglang_gpt_oss_decode_prices_the_mxfp8_activation_rows() {
    // AIConfigurator 0.12.0, b200_sxm/moe/sglang/0.5.14/moe_perf.parquet, power-law α 1.2,
    // hidden 2880, inter 2880, top-4 of 128, moe_tp 8, 64 tokens (read with pyarrow):
    // w4a8_mxfp4_mxfp8 (sglang_flashinfer_trtllm_moe) 0.05986 ms, w4a16_mxfp4 0.07394 ms.
    // gpt-oss-120b has 36 MoE layers; a graphed batch of 64 runs 64 rows.
    let (k, _, server) = deployment("b200-sxm-180gb", "gpt-oss-120b", 8).unwrap();
    assert_eq!(server.graph_batch_size(64), Some(64));
    let item = moe_item(k.as_ref(), &server, 64);
    let layer_us = item.time_ns / 36.0 / 1e3;
    assert!(
        (layer_us / 59.86 - 1.0).abs() < 0.01,
        "{layer_us} µs: {}",
        item.detail
    );
    assert!(layer_us < 0.9 * 73.94, "{layer_us} µs");
    assert!(item.detail.contains("mxfp4_mxfp8"), "{}", item.detail);
}

#[test]
fn h100_sglang_gpt_oss_explain_names_the_tables_bf16_upcast_kernel() {
    // The h100_sxm sglang 0.5.14 w4a16_mxfp4 rows are kernel_source sglang_fused_moe_triton:
    // the collector runs Mxfp4MoEMethod with the triton runner on sm90, which upcasts the
    // experts to bf16 at load. SGLang serves ep_size 1 with triton_kernels matmul_ogs.
    let (k, _, server) = deployment("h100-sxm5-80gb", "gpt-oss-120b", 8).unwrap();
    let item = moe_item(k.as_ref(), &server, 64);
    assert!(item.detail.contains("moe table mxfp4,"), "{}", item.detail);
    assert!(item.detail.contains("upcast to bf16"), "{}", item.detail);
    assert!(item.detail.contains("matmul_ogs"), "{}", item.detail);
    // The row (moe_tp 8, 64 tokens) is 251.2 µs. 64 independent tokens touch
    // 128 × (1 − (124/128)^64) ≈ 110 experts of 3 × 2880 × 360 weights: 684 MB in bf16,
    // 2.7 TB/s (81% of the H100's 3.35), but 182 MB packed at 4.25 bits, 0.72 TB/s: a bf16
    // weight stream, as the kernel_source says. The row is not repriced, but the cross-GPU
    // envelope (cost/kernels/envelope.rs) bounds it by the A100's price of the same step:
    // SGLang from 0.5.6 (the default release here) serves matmul_ogs there over the packed
    // weights (cost/mxfp4.rs, hoss80), which streams at vLLM Marlin's H20 rate carried per
    // SM-clock, 1.32 TB/s × 108 · 1.41 / (78 · 1.98), and issues HMMA at most 256 · 8 / 5387
    // of the time: 111.2 experts (128 · (1 − (1 − 4/128)^64)) × 3 · 2880 · 360 · 4.25 / 8 bytes
    // bound the roll-off's padding, plus 2 · 64 · 4 · 3 · 2880 · 360 FLOP at that rate.
    let layer_us = item.time_ns / 36.0 / 1e3;
    let p = 3.0 * 2880.0 * 360.0;
    let touched = 128.0 * (1.0 - (1.0f64 - 4.0 / 128.0).powi(64));
    let stream = 1.32e12 * (108.0 * 1.41) / (78.0 * 1.98);
    let rate = 312e12 * 256.0 * 8.0 / 5387.0;
    let a100_us = (touched * p * 4.25 / 8.0 / stream + 2.0 * 64.0 * 4.0 * p / rate) * 1e6;
    assert!(a100_us < 251.2, "{a100_us}");
    assert!(
        (layer_us / a100_us - 1.0).abs() < 0.01,
        "{layer_us} µs vs the A100 bound {a100_us} µs: {}",
        item.detail
    );
    assert!(item.detail.contains("ENVELOPE"), "{}", item.detail);
}
