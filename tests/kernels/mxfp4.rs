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
    // The row (moe_tp 8, 64 tokens) is 251.2 µs, and it prices the step: A100 (no MXFP4
    // rows; SGLang's matmul_ogs over packed weights, cost/mxfp4.rs) is no stronger than H100,
    // so its guess is floored by H100's own measurement and cannot undercut it (the envelope's
    // floor, cost/kernels/envelope.rs).
    let layer_us = item.time_ns / 36.0 / 1e3;
    assert!(
        (layer_us / 251.2 - 1.0).abs() < 1e-3,
        "{layer_us}: {}",
        item.detail
    );
    assert!(!item.detail.contains("ENVELOPE"), "{}", item.detail);
}
