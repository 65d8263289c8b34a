//! Prefill/decode disaggregation (issue 16): TTFT with an instant and a slow KV link against
//! hand-computed numbers, the decode pre-allocation queue when decode is short of capacity,
//! PD removing colocated prefill stalls from the ITL tail, and the invariants across both
//! sides (conservation, KV bounds per server, monotonic clock, byte-identical reruns).
mod common;

use clap::Parser;
use servesim::metrics::record::RunRecord;
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
    // One request at a time: the unified server's TTFT is its prefill step; PD adds the
    // decode server's PREBUILT iteration (CPU: step + one request), nothing for the transfer.
    // SGLang 0.5.10–0.5.15 turn piecewise prefill graphs off with disaggregation, so there the
    // prefill server's 32 dense layers also pay the eager extend's host time (303.6 µs,
    // src/cost/eager_host.rs) where the unified server replays graphs (0.3 × the profile's
    // `eager_layer_ns` per layer for the attention ops); from 0.5.16 (the default 0.5.23) a PD
    // prefill server replays breakable prefill graphs like the unified one.
    let load = "--num-prompts 6 --random-input-len 1500 --random-output-len 8 --random-range-ratio 1 --max-concurrency 1";
    let o = load_hardware("h100-sxm5-80gb").unwrap().overheads;
    let prebuilt_ms = (o.step_cpu_ns + o.per_request_cpu_ns) / 1e6;
    let eager_extend_ms = 32.0 * (303.6e3 - 0.3 * o.eager_layer_ns) / 1e6;
    let mut pd = None;
    for (version, extra_ms) in [("0.5.15.post1", eager_extend_ms), ("0.5.23", 0.0)] {
        let unified = sim(&format!("{LLAMA} {load} --sglang-version {version}"));
        let run = sim(&format!(
            "{LLAMA} {load} --sglang-version {version} --disaggregation --transfer-bandwidth 1e6 --transfer-latency-us 0"
        ));
        let gap = run.metrics.ttft_ms.mean - unified.metrics.ttft_ms.mean;
        assert!(
            (gap - prebuilt_ms - extra_ms).abs() < 0.01,
            "{version}: PD TTFT {} vs unified {}: gap {gap} ms, expected one PREBUILT iteration {prebuilt_ms} ms + eager extend {extra_ms} ms",
            run.metrics.ttft_ms.mean,
            unified.metrics.ttft_ms.mean
        );
        pd = Some(run);
    }
    let pd = pd.unwrap();
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
    let (sc, out, record) = run_recorded(&args);
    let st = out.pd.clone().unwrap();
    assert!(st.decode.sched.retractions > 0, "the decode side retracts");
    // Conservation: every request finished with exactly its output length.
    assert_eq!(out.metrics.completed, 60);
    let outputs: u64 = record.requests.iter().map(|r| r.output_len).sum();
    assert_eq!(out.metrics.total_output_tokens, outputs);
    assert_eq!(
        conserved_bounded_and_serial(&out, &record),
        4,
        "all four servers stepped"
    );
    assert!(st.prefill.max_kv_used_tokens <= 12000 && st.decode.max_kv_used_tokens <= 12000);
    // Stage times are ordered: none negative, TTFT covers them.
    for r in &record.requests {
        assert!(r.ttft_ns > 0 && r.ttft_ns <= r.latency_ns);
    }
    let again = rerun_is_identical(&sc, &out, &record);
    assert_eq!(format!("{:?}", out.metrics), format!("{:?}", again.metrics));
}

/// The scenario of `args` run with its timeline recorded (invariants checked every step).
fn run_recorded(args: &str) -> (Scenario, RunOutput, RunRecord) {
    let mut sc = scenario(args);
    sc.record_timeline = true;
    let (out, record) = run_with_record(&sc).expect("simulates with invariants checked");
    (sc, out, record)
}

/// Checks every output token streamed exactly once, KV ≤ pool on every step, and each
/// server's (or rank's) steps never overlapping; returns how many servers (ranks) stepped.
fn conserved_bounded_and_serial(out: &RunOutput, record: &RunRecord) -> usize {
    let outputs: u64 = record.requests.iter().map(|r| r.output_len).sum();
    let emitted: u64 = record.emissions.iter().map(|e| e.count).sum();
    assert_eq!(emitted, outputs, "every output token streamed exactly once");
    let mut last_end = std::collections::BTreeMap::new();
    for s in &out.timeline {
        assert!(s.kv_used_tokens <= s.kv_capacity_tokens);
        let prev = last_end
            .insert(s.replica, s.time_ns + s.duration_ns)
            .unwrap_or(0);
        assert!(s.time_ns >= prev, "server {} steps overlap", s.replica);
    }
    last_end.len()
}

/// Runs `sc` again and checks the record and the timeline are byte-identical; returns the rerun.
fn rerun_is_identical(sc: &Scenario, out: &RunOutput, record: &RunRecord) -> RunOutput {
    let (again, record2) = run_with_record(sc).unwrap();
    assert_eq!(format!("{:?}", record), format!("{:?}", record2));
    assert_eq!(
        format!("{:?}", out.timeline),
        format!("{:?}", again.timeline)
    );
    again
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

/// Peak number of requests in the decode side's running batches at one instant (summed over
/// a server's DP ranks, which step together), from the per-step timeline.
fn peak_decode_running(out: &RunOutput, first_decode_unit: u32) -> u64 {
    let mut at = std::collections::BTreeMap::new();
    for s in out
        .timeline
        .iter()
        .filter(|s| s.replica >= first_decode_unit)
    {
        *at.entry(s.time_ns).or_insert(0) += s.running;
    }
    at.values().copied().max().unwrap_or(0)
}

#[test]
fn dp_attention_decode_server_holds_more_requests_because_mla_kv_is_not_replicated() {
    // DeepSeek-V3 (MLA): the latent KV, 61 layers × (512 + 64) × 2 bytes = 70,272 bytes per
    // token, is replicated on every attention-TP rank, so a TP8 decode server stores each
    // token 8 times; with DP attention (8 ranks of attn_tp 1) each GPU holds only its own
    // requests' KV, so the server stores 8 pools' worth of distinct tokens. Each rank's pool
    // is smaller than a TP8 GPU's: the attention weights (≈ 187 M params × 61 layers ≈ 11 GB
    // in fp8) are replicated instead of split 8 ways, and SGLang's memory default reserves
    // more with DP attention; still the server holds > 3× the tokens.
    let m = load_model("deepseek-v3").unwrap();
    let base =
        "--hardware h200-sxm-141gb --model deepseek-v3 --warmup-requests 0 --tp 8 --disaggregation";
    let tp = scenario(base);
    let dpa = scenario(&format!(
        "{base} --decode-dp 8 --decode-enable-dp-attention"
    ));
    let (d0, d1) = (
        &tp.pd.as_ref().unwrap().decode,
        &dpa.pd.as_ref().unwrap().decode,
    );
    assert!(m.mla.is_some());
    assert_eq!(d0.server.kv_bytes_per_token, 70_272.0);
    assert_eq!(d1.server.kv_bytes_per_token, 70_272.0);
    assert_eq!((d1.server.attn_tp, d1.ranks(), d1.devices()), (1, 8, 8));
    let total = |d: &servesim::spec::pd::PdSide| d.ranks() * d.server.kv_pool_tokens;
    let ratio = total(d1) as f64 / total(d0) as f64;
    assert!(
        (3.0..=8.0).contains(&ratio),
        "decode KV capacity ratio {ratio} ({} vs {} tokens)",
        total(d1),
        total(d0)
    );
    // Under load the DP-attention decode server runs more requests at once. Per-rank pools
    // are capped at 12,000 tokens on both deployments (--max-total-tokens is per rank in
    // SGLang), so one TP8 server fits ≈ 12,000 / (1,500 + 512 reserved) = 5 requests and
    // eight DP ranks about eight times as many. 80 output tokens keep requests on the decode
    // side long enough that its capacity, not the prefill server's pace (each eager DeepSeek
    // extend pays ≈ 60 ms of host time, src/cost/eager_host.rs), sets the peak.
    let load = "--num-prompts 48 --random-input-len 1500 --random-output-len 80 --random-range-ratio 1 --request-rate inf --max-total-tokens 12000";
    let run_peak = |extra: &str| {
        let mut sc = scenario(&format!("{base} {load} {extra}"));
        sc.record_timeline = true;
        let prefill_units = {
            let p = &sc.pd.as_ref().unwrap().prefill;
            (p.replicas * p.ranks()) as u32
        };
        let out = run(&sc).expect("simulates");
        assert_eq!(out.metrics.completed, 48);
        peak_decode_running(&out, prefill_units)
    };
    let (p0, p1) = (
        run_peak(""),
        run_peak("--decode-dp 8 --decode-enable-dp-attention"),
    );
    assert!(p0 <= 6, "TP8 decode peak running {p0}");
    assert!(
        p1 >= 4 * p0,
        "DP-attention decode peak running {p1} vs TP8 {p0}"
    );
}

#[test]
fn transfer_bytes_per_rank_with_dp_attention_match_the_hand_figure() {
    // Llama-3.1-8B bf16 (MHA): 131,072 bytes of KV per token in all. Prefill TP2 without DP
    // attention holds half the heads on each GPU and both NICs send at once: 65,536 bytes per
    // token on the busiest NIC for a TP2 decode server. With prefill DP attention (2 ranks of
    // attn_tp 1) one GPU holds the request's whole KV and its NIC sends both decode ranks'
    // halves: 131,072 bytes. Over 2 GB/s, 1,000 prompt tokens: 32.768 ms vs 65.536 ms.
    let load = "--num-prompts 4 --random-input-len 1000 --random-output-len 4 --random-range-ratio 1 --max-concurrency 1 --disaggregation --transfer-latency-us 0 --prefill-tp 2 --decode-tp 2 --bench-version 0.5.8";
    let ttft_growth = |extra: &str| {
        let fast = sim(&format!("{LLAMA} {load} {extra} --transfer-bandwidth 1e6"));
        let slow = sim(&format!("{LLAMA} {load} {extra} --transfer-bandwidth 2"));
        slow.metrics.ttft_ms.mean - fast.metrics.ttft_ms.mean
    };
    let tp = scenario(&format!("{LLAMA} {load}"));
    assert_eq!(tp.pd.as_ref().unwrap().link_bytes_per_token(), 65_536.0);
    let dpa_args = "--prefill-dp 2 --prefill-enable-dp-attention";
    let dpa = scenario(&format!("{LLAMA} {load} {dpa_args}"));
    assert_eq!(dpa.pd.as_ref().unwrap().link_bytes_per_token(), 131_072.0);
    let (g0, g1) = (ttft_growth(""), ttft_growth(dpa_args));
    assert!((g0 - 32.768).abs() < 0.01, "TP2 prefill: TTFT grew {g0} ms");
    assert!(
        (g1 - 65.536).abs() < 0.01,
        "DP-attention prefill: TTFT grew {g1} ms"
    );
}

#[test]
fn dp_attention_inside_pd_keeps_the_invariants_and_reruns_identically() {
    // 2 prefill servers of 2 DP-attention ranks, 1 decode server of 4, small pools (retraction),
    // invariants checked after every step of every rank; the ranks of a server step together.
    let args = format!(
        "{LLAMA} --num-prompts 50 --random-input-len 700 --random-output-len 300 --random-range-ratio 0.5 --request-rate 30 --disaggregation --prefill-replicas 2 --prefill-tp 2 --prefill-dp 2 --prefill-enable-dp-attention --decode-tp 4 --decode-dp 4 --decode-enable-dp-attention --max-total-tokens 5000 --num-reserved-decode-tokens 16 --transfer-bandwidth 20"
    );
    let (sc, out, record) = run_recorded(&args);
    assert_eq!(sc.pd.as_ref().unwrap().devices(), 8);
    assert_eq!(out.metrics.completed, 50);
    assert_eq!(
        conserved_bounded_and_serial(&out, &record),
        8,
        "every rank (4 prefill, 4 decode) stepped"
    );
    // Lockstep: the decode ranks' steps start at the same instants.
    let starts = |u: u32| -> std::collections::BTreeSet<u64> {
        out.timeline
            .iter()
            .filter(|s| s.replica == u)
            .map(|s| s.time_ns)
            .collect()
    };
    let all: std::collections::BTreeSet<u64> = (4..8).flat_map(starts).collect();
    assert!(starts(4).iter().chain(&starts(5)).all(|t| all.contains(t)));
    assert!(
        all.len() < starts(4).len() + starts(5).len() + starts(6).len() + starts(7).len(),
        "decode ranks share step starts"
    );
    rerun_is_identical(&sc, &out, &record);
}

const QWEN_EAGLE3: &str = "--hardware h100-sxm5-80gb --model qwen3-8b --warmup-requests 0 --speculative-algorithm EAGLE3 --speculative-draft-model-path qwen3-8b-eagle3 --speculative-accept-length 3";

#[test]
fn speculative_decoding_inside_pd_cuts_tpot_like_colocated_and_ships_the_draft_kv() {
    // The decode server runs EAGLE3 exactly as a colocated server does; the prefill server
    // runs the draft prefill and ships the draft KV with the target's (same indices).
    let load = "--num-prompts 4 --random-input-len 300 --random-output-len 400 --random-range-ratio 1 --max-concurrency 1";
    let pd = "--disaggregation --transfer-bandwidth 1e6 --transfer-latency-us 0";
    let colo_spec = sim(&format!("{QWEN_EAGLE3} {load}"));
    let pd_spec = sim(&format!("{QWEN_EAGLE3} {load} {pd}"));
    let qwen = "--hardware h100-sxm5-80gb --model qwen3-8b --warmup-requests 0";
    let colo_plain = sim(&format!("{qwen} {load}"));
    let pd_plain = sim(&format!("{qwen} {load} {pd}"));
    let (cs, ps) = (colo_spec.metrics.tpot_ms.mean, pd_spec.metrics.tpot_ms.mean);
    assert!(
        (ps - cs).abs() < 0.03 * cs,
        "TPOT PD+EAGLE3 {ps} vs colocated {cs}"
    );
    let (cp, pp) = (
        colo_plain.metrics.tpot_ms.mean,
        pd_plain.metrics.tpot_ms.mean,
    );
    let (colo_gain, pd_gain) = (cp / cs, pp / ps);
    assert!(
        pd_gain > 1.5,
        "speculation speeds PD decode: {pp} → {ps} ms"
    );
    assert!(
        (pd_gain - colo_gain).abs() < 0.05 * colo_gain,
        "TPOT gain PD {pd_gain} vs colocated {colo_gain}"
    );
    assert_eq!(pd_spec.metrics.accept_length, Some(3.0));
    // Qwen3-8B: 36 layers × 8 KV heads × 128 × (K, V) × 2 bytes = 147,456; EAGLE3 draft
    // layer 1 × 8 × 128 × 2 × 2 = 4,096: 151,552 bytes per token over the link.
    let sc = scenario(&format!("{QWEN_EAGLE3} {load} {pd}"));
    assert_eq!(sc.pd.as_ref().unwrap().link_bytes_per_token(), 151_552.0);
}

/// Each server is pinned like a colocated one, plus its PD flags: the prefill server without
/// CUDA graphs, the decode server without the radix cache (what SGLang forces), the prefill
/// server naming the decode side's TP (0.4.8–0.5.9), one `--prefill URL BOOTSTRAP_PORT` per
/// prefill server on the router.
#[test]
fn pd_launch_commands_name_every_server_and_the_router() {
    let sc = scenario(&format!(
        "{LLAMA} --num-prompts 10 --request-rate 4 --disaggregation --prefill-replicas 2 --decode-tp 2 --decode-max-running-requests 64 --sglang-version 0.5.8"
    ));
    let l =
        servesim::plan::launch_pd::render_deployment(&sc, servesim::plan::launch::Engine::Sglang);
    let lines: Vec<&str> = l.server.lines().collect();
    assert_eq!(lines.len(), 4, "{}", l.server);
    assert_eq!(lines[0], EXPECT_PREFILL_0);
    assert_eq!(lines[2], EXPECT_DECODE_0);
    assert_eq!(lines[3], "python -m sglang_router.launch_router --pd-disaggregation --prefill http://PREFILL_0_IP:30000 8998 --prefill http://PREFILL_1_IP:30000 8998 --decode http://DECODE_0_IP:30000 --policy round_robin --host 0.0.0.0 --port 8000");
    // Before 0.4.8: the Python mini load balancer with comma-separated URL lists.
    let old = scenario(&format!(
        "{LLAMA} --sglang-version 0.4.7 --disaggregation --prefill-replicas 2"
    ));
    let l =
        servesim::plan::launch_pd::render_deployment(&old, servesim::plan::launch::Engine::Sglang);
    assert_eq!(l.server.lines().last().unwrap(), "python -m sglang.srt.disaggregation.mini_lb --prefill http://PREFILL_0_IP:30000,http://PREFILL_1_IP:30000 --decode http://DECODE_0_IP:30000 --host 0.0.0.0 --port 8000");
}

const EXPECT_PREFILL_0: &str = "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B --tp 1 --attention-backend fa3 --mem-fraction-static 0.835 --chunked-prefill-size 8192 --max-prefill-tokens 16384 --max-running-requests 2048 --max-total-tokens 415121 --page-size 1 --schedule-policy fcfs --disable-cuda-graph --disaggregation-mode prefill --disaggregation-transfer-backend mooncake --host PREFILL_0_IP --port 30000 --disaggregation-bootstrap-port 8998 --disaggregation-decode-tp 2 --disaggregation-decode-dp 1";
const EXPECT_DECODE_0: &str = "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B --tp 2 --attention-backend fa3 --mem-fraction-static 0.834 --chunked-prefill-size 8192 --max-prefill-tokens 16384 --max-running-requests 64 --max-total-tokens 935085 --page-size 1 --schedule-policy fcfs --cuda-graph-max-bs 64 --disable-radix-cache --disaggregation-mode decode --disaggregation-transfer-backend mooncake --host DECODE_0_IP --port 30000";

#[test]
fn pd_rules_follow_the_sglang_version() {
    let bad = |args: &str, needle: &str| {
        let argv: Vec<&str> = args.split_whitespace().collect();
        let p = PointArgs::try_parse_from(argv).unwrap();
        let e = Scenario::from_flags(&ScenarioFile::default(), &p.flags)
            .map(|_| ())
            .expect_err("rejected")
            .to_string();
        assert!(e.contains(needle), "{e}");
    };
    bad(
        &format!("{LLAMA} --sglang-version 0.4.3 --disaggregation"),
        "0.4.4.post2",
    );
    bad(
        &format!("{LLAMA} --sglang-version 0.4.5 --disaggregation --tp 2 --decode-dp 2 --decode-enable-dp-attention"),
        "0.4.6",
    );
    // 0.4.5: the transfer stub moves no KV, so a slow link costs nothing.
    let load = "--num-prompts 3 --random-input-len 1000 --random-output-len 4 --random-range-ratio 1 --max-concurrency 1 --disaggregation --transfer-latency-us 0";
    let ttft = |v: &str, bw: &str| {
        sim(&format!(
            "{LLAMA} --sglang-version {v} {load} --transfer-bandwidth {bw}"
        ))
        .metrics
        .ttft_ms
        .mean
    };
    assert!((ttft("0.4.5", "2") - ttft("0.4.5", "1e6")).abs() < 1e-6);
    assert!(ttft("0.4.8", "2") - ttft("0.4.8", "1e6") > 60.0);
    // Pre-allocation: from 0.4.8 a request also needs room for min(max_new, 4096) tokens
    // beyond what running requests could give back; before, input + 512 was enough. Decode
    // pool 4,000 tokens, two 1,000-token prompts with 1,500 outputs sent together: after the
    // first (1,000 held + 512 reserved) 2,488 tokens are allocatable, enough for 0.4.7's
    // 1,512 but not for 0.4.8+'s 1,000 + 1,500 while nothing runs yet.
    let two = "--num-prompts 2 --random-input-len 1000 --random-output-len 1500 --random-range-ratio 1 --request-rate inf --disaggregation --max-total-tokens 4000";
    let wait = |v: &str| {
        sim(&format!("{LLAMA} --sglang-version {v} {two}"))
            .pd
            .unwrap()
            .prealloc_wait
            .max_ms
    };
    assert_eq!(wait("0.4.7"), 0.0);
    assert!(wait("0.5.6") > 1.0, "0.5.6 waits: {} ms", wait("0.5.6"));
    // 0.5.15 sizes the default mem_fraction_static by role (server_args.py at v0.5.15, lines
    // 3633 and 3641): a decode server reserves activations for max(256 graph bs, 2048) tokens,
    // not the 8192 chunk (512 + 3072 + 512 + 128 MiB, under the 10 GiB floor on an H100:
    // (81559 − 10240) / 81559 = 0.874); a prefill server (no CUDA graphs) drops the decode
    // graphs' 2 × 256 MiB: (81559 − 12928) / 81559 = 0.841. 0.5.14: 13440 MiB on both, 0.835.
    let fractions = |v: &str| {
        let pd = scenario(&format!("{LLAMA} --sglang-version {v} --disaggregation"))
            .pd
            .unwrap();
        (
            pd.prefill.server.mem_fraction_static,
            pd.decode.server.mem_fraction_static,
        )
    };
    assert_eq!(fractions("0.5.14"), (0.835, 0.835));
    assert_eq!(fractions("0.5.15"), (0.841, 0.874));
    // Pre-allocation slots beyond a decode cap of ≤ 32: 2 × the cap up to 0.5.13.post1, from
    // 0.5.14 only when --max-running-requests is given (pd_disaggregation_hook.py at v0.5.14,
    // line 68). A 64-token decode pool caps running requests at 32 by itself.
    let slots = |v: &str, extra: &str| {
        let pd = scenario(&format!(
            "{LLAMA} --sglang-version {v} --disaggregation --max-total-tokens 64 {extra}"
        ))
        .pd
        .unwrap();
        let d = &pd.decode.server;
        (d.max_running_requests, d.decode_prealloc_slots)
    };
    assert_eq!(slots("0.5.13.post1", ""), (32, 64));
    assert_eq!(slots("0.5.14", ""), (32, 0));
    assert_eq!(slots("0.5.14", "--max-running-requests 16"), (16, 32));
}

#[test]
fn a_pd_run_header_counts_every_gpu_and_names_no_colocated_server() {
    let (code, out, err) = common::servesim(&[
        "run",
        "--model",
        "qwen3-32b",
        "--hardware",
        "h100-sxm5-80gb",
        "--tp",
        "2",
        "--disaggregation",
        "--prefill-replicas",
        "1",
        "--decode-replicas",
        "1",
        "--num-prompts",
        "20",
        "--request-rate",
        "4",
    ]);
    assert_eq!(code, 0, "{err}");
    // One TP2 prefill server and one TP2 decode server: 4 GPUs, each side's pool in `pd:`.
    assert!(out.starts_with("pd: 1P1D, 4 GPUs"), "{out}");
    assert!(
        out.contains("on 4 × h100-sxm5-80gb (prefill/decode disaggregated)"),
        "{out}"
    );
    assert!(!out.contains("server: max_total_num_tokens"), "{out}");
}
