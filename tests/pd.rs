//! Prefill/decode disaggregation (issue 16): TTFT with an instant and a slow KV link against
//! hand-computed numbers, the decode pre-allocation queue when decode is short of capacity,
//! PD removing colocated prefill stalls from the ITL tail, and the invariants across both
//! sides (conservation, KV bounds per server, monotonic clock, byte-identical reruns).
use clap::Parser;
use servesim::simulation::{run, run_with_record, RunOutput, Scenario};
use servesim::spec::bundled::{load_hardware, load_model};
use servesim::spec::workload::ScenarioFile;
use servesim::sweep::grid::PointArgs;

/// A scenario from `servesim run` flags (no warm-up, fixed lengths unless given).
fn scenario(args: &str) -> Scenario {
    let argv: Vec<&str> = args.split_whitespace().collect();
    let p = PointArgs::try_parse_from(argv).expect("flags parse");
    let mut sc = Scenario::from_flags(&ScenarioFile::default(), &p.flags).expect("resolves");
    sc.check_invariants = true;
    sc
}

fn sim(args: &str) -> RunOutput {
    run(&scenario(args)).expect("simulates")
}

const LLAMA: &str = "--hardware h100-sxm5-80gb --model llama-3.1-8b --warmup-requests 0";

#[test]
fn instant_transfer_ttft_is_the_prefill_servers_own_plus_one_prebuilt_iteration() {
    // One request at a time: the unified server's TTFT is its prefill step; PD adds only the
    // decode server's PREBUILT iteration (CPU: step + one request), nothing for the transfer.
    let load = "--num-prompts 6 --random-input-len 1500 --random-output-len 8 --random-range-ratio 1 --max-concurrency 1";
    let unified = sim(&format!("{LLAMA} {load}"));
    let pd = sim(&format!(
        "{LLAMA} {load} --disaggregation --transfer-bandwidth 1e6 --transfer-latency-us 0"
    ));
    let o = load_hardware("h100-sxm5-80gb").unwrap().overheads;
    let prebuilt_ms = (o.step_cpu_ns + o.per_request_cpu_ns) / 1e6;
    let gap = pd.metrics.ttft_ms.mean - unified.metrics.ttft_ms.mean;
    assert!(
        (gap - prebuilt_ms).abs() < 0.01,
        "PD TTFT {} vs unified {}: gap {gap} ms, expected one PREBUILT iteration {prebuilt_ms} ms",
        pd.metrics.ttft_ms.mean,
        unified.metrics.ttft_ms.mean
    );
    let st = pd.pd.expect("PD stats");
    assert_eq!(
        st.prealloc_wait.max_ms, 0.0,
        "an idle decode server pre-allocates at once"
    );
    assert!(st.transfer.max_ms < 1e-3);
}

#[test]
fn slow_link_adds_prompt_bytes_over_bandwidth_to_ttft() {
    // Llama-3.1-8B bf16, tp 1: 32 layers × 8 KV heads × 128 dims × (K, V) × 2 bytes
    // = 131,072 bytes per token; 1,000 prompt tokens over 2 GB/s = 65.536 ms.
    let m = load_model("llama-3.1-8b").unwrap();
    assert_eq!((m.num_layers, m.num_kv_heads, m.head_dim), (32, 8, 128));
    // bench_serving 0.5.8: the prompt is the 1000 tokens drawn (0.5.9+ takes Llama-3's BOS off).
    let load = "--num-prompts 5 --random-input-len 1000 --random-output-len 4 --random-range-ratio 1 --max-concurrency 1 --disaggregation --transfer-latency-us 0 --bench-version 0.5.8";
    let fast = sim(&format!("{LLAMA} {load} --transfer-bandwidth 1e6"));
    let slow = sim(&format!("{LLAMA} {load} --transfer-bandwidth 2"));
    let expect_ms = 1000.0 * 131_072.0 / 2e9 * 1e3;
    let grew = slow.metrics.ttft_ms.mean - fast.metrics.ttft_ms.mean;
    assert!(
        (grew - expect_ms).abs() < 0.01,
        "TTFT grew {grew} ms, expected {expect_ms} ms"
    );
    // TPOT does not see the link.
    assert!((slow.metrics.tpot_ms.mean - fast.metrics.tpot_ms.mean).abs() < 1e-6);
}

#[test]
fn too_few_decode_servers_queue_in_preallocation_ttft_grows_tpot_flat() {
    // Decode batches capped at 8: one decode server holds 8 running + 16 pre-allocated
    // (SGLang's 2 × max_running extra slots below 33); 40 concurrent requests overflow it.
    let load = "--num-prompts 120 --random-input-len 600 --random-output-len 150 --random-range-ratio 1 --max-concurrency 40 --disaggregation --decode-max-running-requests 8";
    let one = sim(&format!("{LLAMA} {load} --decode-replicas 1"));
    let four = sim(&format!("{LLAMA} {load} --decode-replicas 4"));
    let (p1, p4) = (one.pd.unwrap(), four.pd.unwrap());
    assert!(
        p1.prealloc_wait.mean_ms > 10.0 * p4.prealloc_wait.mean_ms.max(1.0),
        "pre-allocation wait 1D {} ms vs 4D {} ms",
        p1.prealloc_wait.mean_ms,
        p4.prealloc_wait.mean_ms
    );
    assert_eq!(p1.bottleneck, "decode");
    assert!(
        one.metrics.ttft_ms.median > 3.0 * four.metrics.ttft_ms.median,
        "TTFT 1D {} vs 4D {}",
        one.metrics.ttft_ms.median,
        four.metrics.ttft_ms.median
    );
    let (t1, t4) = (one.metrics.tpot_ms.median, four.metrics.tpot_ms.median);
    assert!(
        (t1 - t4).abs() < 0.25 * t4,
        "TPOT stays flat: 1D {t1} ms vs 4D {t4} ms"
    );
}

#[test]
fn pd_removes_prefill_stalls_from_the_itl_tail_at_equal_gpu_count() {
    // Prefill-heavy: 4,000-token prompts, 64 outputs. Two GPUs either way: two colocated
    // replicas (decode steps wait behind 4k-token prefills) or 1P1D.
    let load = "--num-prompts 80 --random-input-len 4000 --random-output-len 64 --random-range-ratio 1 --request-rate 6";
    let colocated = sim(&format!("{LLAMA} {load} --dp 2"));
    let pd = sim(&format!("{LLAMA} {load} --disaggregation"));
    assert_eq!(pd.metrics.completed, 80);
    let (c, p) = (colocated.metrics.itl_ms.p99, pd.metrics.itl_ms.p99);
    assert!(
        p < 0.5 * c,
        "ITL p99: colocated {c} ms, PD {p} ms (prefill stalls should be gone)"
    );
}

#[test]
fn invariants_hold_on_both_sides_with_decode_retraction_and_reruns_are_identical() {
    // A 2P2D deployment whose decode pools are small enough to retract (a small decode
    // reserve lets pre-allocation admit more than the pool can grow into): the scheduler
    // invariants (KV used = allocations ≤ pool, caps, phases) are checked after every step on
    // every server (`check_invariants`).
    let args = format!(
        "{LLAMA} --num-prompts 60 --random-input-len 900 --random-output-len 700 --random-range-ratio 0.5 --request-rate 40 --disaggregation --prefill-replicas 2 --decode-replicas 2 --max-total-tokens 12000 --prefill-chunked-prefill-size 512 --transfer-bandwidth 20 --num-reserved-decode-tokens 16"
    );
    let mut sc = scenario(&args);
    sc.record_timeline = true;
    let (out, record) = run_with_record(&sc).expect("simulates with invariants checked");
    let st = out.pd.clone().unwrap();
    assert!(st.decode.sched.retractions > 0, "the decode side retracts");
    // Conservation: every request finished with exactly its output length.
    assert_eq!(out.metrics.completed, 60);
    let outputs: u64 = record.requests.iter().map(|r| r.output_len).sum();
    assert_eq!(out.metrics.total_output_tokens, outputs);
    let emitted: u64 = record.emissions.iter().map(|e| e.count).sum();
    assert_eq!(emitted, outputs, "every output token streamed exactly once");
    // KV bounds on each server, and each server's steps never overlap (monotonic clock).
    let mut last_end = std::collections::BTreeMap::new();
    for s in &out.timeline {
        assert!(s.kv_used_tokens <= s.kv_capacity_tokens);
        let prev = last_end
            .insert(s.replica, s.time_ns + s.duration_ns)
            .unwrap_or(0);
        assert!(s.time_ns >= prev, "server {} steps overlap", s.replica);
    }
    assert_eq!(last_end.len(), 4, "all four servers stepped");
    assert!(st.prefill.max_kv_used_tokens <= 12000 && st.decode.max_kv_used_tokens <= 12000);
    // Stage times are ordered: none negative, TTFT covers them.
    for r in &record.requests {
        assert!(r.ttft_ns > 0 && r.ttft_ns <= r.latency_ns);
    }
    // Byte-identical rerun.
    let (again, record2) = run_with_record(&sc).unwrap();
    assert_eq!(format!("{:?}", out.metrics), format!("{:?}", again.metrics));
    assert_eq!(format!("{:?}", record), format!("{:?}", record2));
    assert_eq!(
        format!("{:?}", out.timeline),
        format!("{:?}", again.timeline)
    );
}

#[test]
fn pd_flags_are_checked() {
    let bad = |args: &str, needle: &str| {
        let argv: Vec<&str> = args.split_whitespace().collect();
        let p = PointArgs::try_parse_from(argv).unwrap();
        let e = Scenario::from_flags(&ScenarioFile::default(), &p.flags)
            .map(|_| ())
            .expect_err("rejected")
            .to_string();
        assert!(e.contains(needle), "{e}");
    };
    bad(&format!("{LLAMA} --prefill-replicas 2"), "--disaggregation");
    bad(
        &format!("{LLAMA} --disaggregation --decode-replicas 0"),
        "--decode-replicas",
    );
    bad(
        &format!("{LLAMA} --disaggregation --transfer-bandwidth 0"),
        "--transfer-bandwidth",
    );
    bad(
        &format!("{LLAMA} --disaggregation --prefill-hardware h20-96gb --prefill-replicas 8"),
        "pd_transfer",
    );
}

#[test]
fn plan_prices_each_side_and_names_the_bottleneck_side() {
    // A mixed fleet: one H100 TP2 prefill server and two H200 TP1 decode servers, each GPU at
    // its own profile's price.
    let sc = scenario(&format!(
        "{LLAMA} --disaggregation --prefill-tp 2 --decode-hardware h200-sxm-141gb --decode-replicas 2"
    ));
    let pd = sc.pd.as_ref().unwrap();
    assert_eq!(pd.devices(), 4);
    let price = |hw: &str| load_hardware(hw).unwrap().cost_per_device_hour_usd.unwrap();
    let expect = 2.0 * price("h100-sxm5-80gb") + 2.0 * price("h200-sxm-141gb");
    let got = servesim::plan::pd::cost_per_hour(&Default::default(), pd).unwrap();
    assert!((got - expect).abs() < 1e-9, "{got} vs {expect}");
    // Saturated (closed loop): one prefill server feeding four decode servers is prefill-bound;
    // four prefill servers feeding one decode server capped at 8 running are decode-bound.
    let load = "--num-prompts 120 --random-input-len 1500 --random-output-len 100 --random-range-ratio 1 --request-rate inf --disaggregation";
    let p_bound = sim(&format!(
        "{LLAMA} {load} --prefill-replicas 1 --decode-replicas 4"
    ));
    let d_bound = sim(&format!(
        "{LLAMA} {load} --prefill-replicas 4 --decode-replicas 1 --decode-max-running-requests 8"
    ));
    assert_eq!(p_bound.pd.unwrap().bottleneck, "prefill");
    assert_eq!(d_bound.pd.unwrap().bottleneck, "decode");
}
