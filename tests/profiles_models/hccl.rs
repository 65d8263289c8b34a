//! The A3 profile's small-message all-reduce against Huawei's own HCCL measurements on Atlas 800
//! A3 (Ascend/msmodeling perf-database reports, CANN 8.5, `HCCL_OP_EXPANSION_MODE=AIV`, ACL graph
//! decode; quoted in validation/public/p017-ascend-notes.md §5): the time grows with the ranks.
use servesim::cost::collective::{all_reduce_ns, Placement};
use servesim::spec::bundled::load_hardware;

/// One all-reduce of `bytes` over `ranks` A3 dies of one node, µs, as servesim prices it.
fn a3_all_reduce_us(bytes: f64, ranks: u64) -> f64 {
    let hw = load_hardware("ascend-a3").unwrap();
    let p = Placement::packed(ranks, hw.link.devices_per_node as u64);
    all_reduce_ns(bytes, p, &hw.link, hw.efficiency.collective).unwrap() / 1e3
}

#[test]
fn a3_all_reduce_at_16_ranks_matches_the_measured_decode_all_reduce() {
    // Qwen3-32B BF16 TP16 decode at c=1: hcom_allReduce_ of 160 KB, stable median 19.8 µs
    // (p10–p90); bounds: the bare HCCL kernel in a micro-benchmark, 12.1 µs, and the mean
    // non-overlapped communication per all-reduce in the same trace, 668 ms / 25 671 = 26 µs.
    let us = a3_all_reduce_us(160.0 * 1024.0, 16);
    assert!((us - 19.8).abs() / 19.8 < 0.10, "{us} µs");
    assert!((12.1..=26.0).contains(&us), "{us} µs");
}

#[test]
fn a3_all_reduce_at_8_ranks_sits_with_the_measured_8_rank_collectives() {
    // DeepSeek-V3 W8A8 TP8 decode at c=8 on the same machine: the small collectives of 1–14 KB
    // take 6.4–7.0 µs (all-gather) and 8.1 µs (reduce-scatter of 14 KB), the report's production
    // values (the p10; its medians include the MoE ranks' coordination wait). servesim's 14 KB
    // all-reduce lands in that range (±15%), well below the 16-rank one.
    let us8 = a3_all_reduce_us(14.0 * 1024.0, 8);
    assert!((6.4 * 0.85..=8.1 * 1.15).contains(&us8), "{us8} µs");
    let us16 = a3_all_reduce_us(14.0 * 1024.0, 16);
    assert!(us16 > 1.8 * us8, "{us16} vs {us8} µs");
}
