//! DP attention (`--dp D --enable-dp-attention`, reference A.8): per-rank limits and memory,
//! lockstep steps across the attention ranks, and what it buys on a KV-bound MLA model.
use servesim::simulation::{run, RunOutput, Scenario};
use servesim::spec::bundled::{load_hardware, load_model};
use servesim::spec::server::{ServerConfig, ServerFlags};
use servesim::spec::workload::{ClientFlags, ScenarioFile};

fn flags(dp: Option<u64>, dp_attention: bool) -> ServerFlags {
    ServerFlags {
        tp: Some(8),
        dp,
        enable_dp_attention: dp_attention,
        sglang_version: Some("0.5.6".parse().unwrap()),
        ..Default::default()
    }
}

fn config(f: &ServerFlags) -> ServerConfig {
    let hw = load_hardware("h200-sxm-141gb").unwrap();
    let m = load_model("deepseek-v3").unwrap();
    ServerConfig::resolve(f, &hw, &m).unwrap()
}

fn simulate(f: ServerFlags, prompts: u64, cap: u64, timeline: bool) -> RunOutput {
    let client = ClientFlags {
        num_prompts: Some(prompts),
        random_input_len: Some(1000),
        random_output_len: Some(1000),
        random_range_ratio: Some(1.0),
        max_concurrency: Some(cap),
        ..Default::default()
    };
    let mut sc = Scenario::resolve(
        &ScenarioFile::default(),
        Some("h200-sxm-141gb"),
        Some("deepseek-v3"),
        &f,
        &client,
    )
    .unwrap();
    sc.check_invariants = true;
    sc.record_timeline = timeline;
    run(&sc).unwrap()
}

#[test]
fn per_rank_limits_and_memory_follow_sglang() {
    let tp = config(&flags(None, false));
    let dpa = config(&flags(Some(8), true));
    assert_eq!(dpa.attn_tp, 1);
    assert!(dpa.dp_attention);
    // chunked_prefill_size //= dp; schedule_conservativeness *= 0.3.
    assert_eq!(dpa.chunked_prefill_size, Some(8192 / 8));
    assert!((dpa.schedule_conservativeness - 0.3).abs() < 1e-12);
    // Reserved memory grows by cuda_graph_max_bs · dp · 4.5 MiB (bs > 300), so mfs drops.
    assert!(dpa.mem_fraction_static < tp.mem_fraction_static);
    // MLA's latent KV is the same per GPU at any attn_tp, but each rank now holds only its own
    // requests: eight pools instead of one replicated pool.
    assert_eq!(dpa.kv_bytes_per_token, tp.kv_bytes_per_token);
    // Attention weights are no longer sharded eight ways: more weight bytes per GPU.
    assert!(dpa.weight_bytes_per_rank > tp.weight_bytes_per_rank + 5e9);
    assert!(8 * dpa.kv_pool_tokens > 2 * tp.kv_pool_tokens);
    // A user's --max-running-requests is split over the ranks.
    let capped = config(&ServerFlags {
        max_running_requests: Some(800),
        ..flags(Some(8), true)
    });
    assert_eq!(capped.max_running_requests, 100);
}

#[test]
fn invalid_dp_attention_settings_are_clear_errors() {
    let hw = load_hardware("h200-sxm-141gb").unwrap();
    let m = load_model("deepseek-v3").unwrap();
    for dp in [Some(3), Some(16)] {
        let e = ServerConfig::resolve(&flags(dp, true), &hw, &m)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--enable-dp-attention") && e.contains("dp"),
            "{e}"
        );
    }
}

/// `--enable-dp-attention` with the default `--dp 1` (GPUStack's DeepSeek-R1 H200 runs, SGLang
/// 0.5.3): `_handle_data_parallelism` drops the flag, so attention stays TP-sharded with no
/// per-rank split, but `_handle_gpu_memory_settings` ran first and reserved for it:
/// cuda_graph_max_bs · dp · 3 + (bs > 300: cuda_graph_max_bs · dp · 1.5) = 512·3 + 512·1.5
/// = 2304 MiB more than plain TP at tp 8 on a 141 GB GPU.
#[test]
fn dp_attention_with_dp_1_is_plain_tp_with_its_memory_reservation() {
    let hw = load_hardware("h200-sxm-141gb").unwrap();
    let v053 = |dp_attention| ServerFlags {
        sglang_version: Some("0.5.3".parse().unwrap()),
        ..flags(None, dp_attention)
    };
    let tp = config(&v053(false));
    let dp1 = config(&v053(true));
    assert!(!dp1.dp_attention);
    assert_eq!(dp1.attn_tp, 8);
    assert_eq!(dp1.chunked_prefill_size, tp.chunked_prefill_size);
    assert_eq!(dp1.chunked_prefill_size, Some(8192));
    assert_eq!(dp1.schedule_conservativeness, tp.schedule_conservativeness);
    assert_eq!(dp1.weight_bytes_per_rank, tp.weight_bytes_per_rank);
    let g = hw.memory.reported_total_mib;
    let drop = tp.mem_fraction_static - dp1.mem_fraction_static;
    assert!(
        (drop - 2304.0 / g).abs() < 0.0011,
        "{drop} vs {}",
        2304.0 / g
    );
    assert!(dp1.kv_pool_tokens < tp.kv_pool_tokens);
}

#[test]
fn attention_ranks_step_in_lockstep() {
    let out = simulate(flags(Some(4), true), 64, 32, true);
    let t = &out.timeline;
    assert!(t.iter().any(|s| s.replica == 3), "every rank gets work");
    // Samples taken at the same launch time all have the same duration (one group step), and
    // no rank's step overlaps another step of the group.
    let mut by_time: std::collections::BTreeMap<u64, Vec<u64>> = Default::default();
    for s in t {
        by_time.entry(s.time_ns).or_default().push(s.duration_ns);
    }
    let mut last_end = 0;
    for (start, durs) in &by_time {
        assert!(
            durs.iter().all(|&d| d == durs[0]),
            "one duration per group step"
        );
        assert!(*start >= last_end, "group steps never overlap");
        last_end = start + durs[0];
    }
    assert!(by_time.values().any(|d| d.len() > 1), "ranks share steps");
    assert_eq!(out.metrics.completed, 64);
}

#[test]
fn dp_attention_beats_plain_tp_when_kv_bound() {
    // 1024 concurrent 2000-token requests: plain TP8 holds ~340 (the MLA cache is replicated on
    // every GPU); eight attention ranks hold them all.
    let tp = simulate(flags(None, false), 2000, 1024, false);
    let dpa = simulate(flags(Some(8), true), 2000, 1024, false);
    assert!(tp.stats.sched.retractions > 0 || tp.stats.sched.max_running < 700);
    assert!(dpa.stats.sched.retractions == 0);
    let gain = dpa.metrics.output_throughput / tp.metrics.output_throughput;
    assert!(gain > 1.4, "DP attention throughput gain {gain}");
    // At concurrency 1 there is nothing to gain: one rank works, and it pays for the
    // unsharded attention weights.
    let tp1 = simulate(flags(None, false), 8, 1, false);
    let dpa1 = simulate(flags(Some(8), true), 8, 1, false);
    assert!(dpa1.metrics.output_throughput <= tp1.metrics.output_throughput * 1.02);
}
