//! vLLM rules that change a step's price or timing, by hand: which steps run under full or
//! piecewise CUDA graphs per version and what a piecewise step costs, async scheduling's
//! late arrivals and (before 0.12) wasted decode slots, vLLM's own CPU per step and its
//! API-server process on the request path.
use super::*;

#[test]
fn graph_rules_by_version_pure_decode_full_mixed_piecewise_v0_eager() {
    use servesim::cost::Launch;
    // One step with a decode and a 40-token prefill, then a pure decode step, per version.
    let launches = |version: &str| {
        let flags = ServerFlags {
            num_gpu_blocks_override: Some(101),
            max_num_batched_tokens: Some(64),
            max_num_seqs: Some(32),
            max_model_len: Some(64),
            enable_chunked_prefill: version.starts_with("0.6"),
            vllm_version: Some(version.parse().unwrap()),
            ..Default::default()
        };
        let mut s =
            VllmScheduler::new(&vllm(flags, "h100-sxm5-80gb", "qwen2.5-0.5b"), None).unwrap();
        let a = s.add_request(20, 30);
        s.arrive(a);
        step(&mut s);
        let b = s.add_request(40, 1);
        s.arrive(b);
        let mixed = step(&mut s).shape;
        let decode = step(&mut s).shape;
        assert_eq!((mixed.prefill_reqs, decode.prefill_reqs), (1, 0));
        (
            mixed.launch(),
            mixed.graph_bs,
            decode.launch(),
            decode.graph_bs,
        )
    };
    // 0.11+ FULL_AND_PIECEWISE: the mixed step (41 tokens) pads to the 48-token piece
    // (capture sizes 1, 2, 4, 8, …, 64 = 2 × max_num_seqs).
    let want = (Launch::Piecewise, Some(48), Launch::Graph, Some(1));
    assert_eq!(launches("0.11.0"), want);
    // 0.8–0.10 PIECEWISE: the pure decode step is piecewise too.
    let want = (Launch::Piecewise, Some(48), Launch::Piecewise, Some(1));
    assert_eq!(launches("0.10.0"), want);
    // V0: decode-only graphs by batch size; the mixed step is eager.
    assert_eq!(
        launches("0.6.3"),
        (Launch::Eager, None, Launch::Graph, Some(1))
    );
}

#[test]
fn piecewise_graphs_keep_three_tenths_of_the_eager_launch_cost_by_hand() {
    use servesim::cost::BatchShape;
    // qwen2.5-0.5b (24 layers, tp 1: no all-reduce) on an H100, at its profile's eager launch
    // cost per layer (`overheads.eager_layer_ns`). The same 8-request decode step, padded to
    // the graph of 8: a full graph pays no per-layer launch, piecewise graphs 0.3 × that per
    // layer (three launches of about ten), eager all of it. Every other term is the same: both
    // backends.
    let eager_layer_ns = load_hardware("h100-sxm5-80gb")
        .unwrap()
        .overheads
        .eager_layer_ns;
    for backend in ["roofline", "kernels"] {
        let sc = scenario(
            ServerFlags {
                engine: Some("vllm".into()),
                vllm_version: Some("0.11.0".parse().unwrap()),
                cost_model: Some(backend.into()),
                ..Default::default()
            },
            client(8, 100, 10),
        );
        let cost = sc.step_cost().unwrap();
        let full = BatchShape {
            decode_reqs: 8,
            decode_ctx_sum: 8 * 1024,
            graph_bs: Some(8),
            ..Default::default()
        };
        let piecewise = BatchShape {
            piecewise: true,
            ..full
        };
        let eager = BatchShape {
            graph_bs: None,
            ..full
        };
        let gpu = |s: &BatchShape| cost.step_time(s).gpu_ns;
        let (f, p, e) = (gpu(&full), gpu(&piecewise), gpu(&eager));
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b;
        assert!(
            close(p - f, 24.0 * 0.3 * eager_layer_ns),
            "{backend}: {}",
            p - f
        );
        assert!(close(e - f, 24.0 * eager_layer_ns), "{backend}: {}", e - f);
    }
}

/// qwen2.5-0.5b on vLLM `version` with 101 blocks of 16, a 64-token budget, 8 sequences and
/// `--async-scheduling` when `async_flag` (0.14+ has it on by default).
fn small_at(version: &str, async_flag: bool) -> VllmScheduler {
    let flags = ServerFlags {
        num_gpu_blocks_override: Some(101),
        max_num_batched_tokens: Some(64),
        max_num_seqs: Some(8),
        max_model_len: Some(64),
        async_scheduling: async_flag,
        vllm_version: Some(version.parse().unwrap()),
        ..Default::default()
    };
    VllmScheduler::new(&vllm(flags, "h100-sxm5-80gb", "qwen2.5-0.5b"), None).unwrap()
}

#[test]
fn async_scheduling_sees_a_request_arriving_mid_step_one_step_later() {
    // `step_with_batch_queue`: step N+1 is scheduled while step N runs, so B, arriving
    // during A's prefill step, is first scheduled in the step after next (A decodes alone
    // in between); synchronous 0.13 admits it at once.
    for (version, b_admitted_in) in [("0.14.0", 3), ("0.13.0", 2)] {
        let mut s = small_at(version, false);
        let a = s.add_request(20, 30);
        s.arrive(a);
        let first = s.next_batch().unwrap();
        let b = s.add_request(20, 5);
        s.arrive(b); // while step 1 is in flight
        s.complete(&first);
        let mut admitted = None;
        for n in 2..=3 {
            let batch = step(&mut s);
            if batch.prefill.iter().any(|p| p.id == b) && admitted.is_none() {
                admitted = Some(n);
            }
        }
        assert_eq!(admitted, Some(b_admitted_in), "vLLM {version}");
    }
    // Nothing else to run: the late arrival is scheduled at once.
    let mut s = small_at("0.14.0", false);
    let a = s.add_request(20, 1);
    s.arrive(a);
    let first = s.next_batch().unwrap();
    let b = s.add_request(20, 5);
    s.arrive(b);
    s.complete(&first);
    assert_eq!(chunks(&step(&mut s)), vec![(b, 20, 0, true)]);
}

#[test]
fn async_scheduling_before_0_12_wastes_a_decode_slot_on_a_finished_request() {
    // A (2 outputs) and B (10) prefill together, then decode once: A finishes. In 0.10–0.11
    // with --async-scheduling the next step was scheduled before A's finish was seen: A
    // still takes a decode slot (its output dropped); 0.12+ skips it ("Avoid scheduling an
    // extra step"), and so does synchronous scheduling.
    for (version, async_flag, decodes) in [
        ("0.11.0", true, 2),
        ("0.11.0", false, 1),
        ("0.12.0", true, 1),
    ] {
        let mut s = small_at(version, async_flag);
        let a = s.add_request(20, 2);
        let b = s.add_request(20, 10);
        s.arrive(a);
        s.arrive(b);
        step(&mut s);
        step(&mut s);
        assert_eq!(s.phase(a), Phase::Finished);
        let third = step(&mut s);
        assert_eq!(
            third.shape.decode_reqs, decodes,
            "vLLM {version} async {async_flag}"
        );
        // The wasted slot attends to A's 22 tokens (context 21 + the dropped one).
        let b_only = 22;
        assert_eq!(
            third.shape.decode_ctx_sum,
            b_only + (decodes - 1) * 22,
            "vLLM {version}"
        );
        assert_eq!(s.output_tokens(b), 3);
    }
}

#[test]
fn vllm_servers_pay_vllms_own_cpu_per_step_not_sglangs() {
    use servesim::cost::BatchShape;
    // spec::vllm::overheads: V1 1.0 ms + 8 µs per request, V0 2.0 ms + 12 µs; SGLang keeps
    // the H100 profile's `step_cpu_ns` + 5 µs. A 10-request decode step, by hand.
    let sglang_step_cpu_ns = load_hardware("h100-sxm5-80gb")
        .unwrap()
        .overheads
        .step_cpu_ns;
    let shape = BatchShape {
        decode_reqs: 10,
        decode_ctx_sum: 10 * 512,
        graph_bs: Some(16),
        ..Default::default()
    };
    for (engine, version, want_ns) in [
        ("vllm", Some("0.11.0"), 1.0e6 + 10.0 * 8e3),
        ("vllm", Some("0.6.3"), 2.0e6 + 10.0 * 12e3),
        ("sglang", None, sglang_step_cpu_ns + 10.0 * 5e3),
    ] {
        let sc = scenario(
            ServerFlags {
                engine: Some(engine.into()),
                vllm_version: version.map(|v| v.parse().unwrap()),
                ..Default::default()
            },
            client(8, 100, 10),
        );
        let cpu = sc.step_cost().unwrap().step_time(&shape).cpu_ns;
        assert!((cpu - want_ns).abs() < 1.0, "{engine} {version:?}: {cpu}");
    }
}

#[test]
fn a_crowded_async_run_with_wasted_slots_keeps_its_kv_accounts_and_serves_every_token() {
    // 0.11.0 with --async-scheduling (wasted slots) and 0.14.0 (late arrivals only), with
    // the invariants (KV used = Σ allocations + the wasted slots' blocks) checked each step.
    for (version, async_flag) in [("0.11.0", true), ("0.14.0", false)] {
        let server = ServerFlags {
            engine: Some("vllm".into()),
            vllm_version: Some(version.parse().unwrap()),
            async_scheduling: async_flag,
            num_gpu_blocks_override: Some(60),
            max_model_len: Some(512),
            ..Default::default()
        };
        let out = run(&scenario(server, client(64, 200, 200))).unwrap();
        assert_eq!(out.metrics.completed, 64, "vLLM {version}");
        assert_eq!(out.metrics.total_output_tokens, 64 * 200);
        assert!(out.stats.sched.retractions > 0);
    }
}

/// MXFP4 experts on A100 (no native FP4): the profile's `mxfp4_*` constants describe SGLang's
/// slow dequantising MoE path (fitted on seed 003's gpt-oss runs); vLLM runs them through its
/// Marlin W4A16 fused MoE, priced as a bf16 GEMM at the kernel's measured large-M rate and
/// packed-weight stream rate (src/cost/mxfp4.rs) with the plain roll-off. So a vLLM server's
/// step is the SGLang server's step on a profile whose MXFP4 constants give those rates
/// (compute peak fraction / moe_gemm, memory the stream rate over the profile's plain weight
/// rate, half-point gemm_half_tokens; within 2%:
/// the engines' attention kernels differ), and cheaper than SGLang's on the bundled profile
/// (2× at a 2000-token prefill, more at decode).
#[test]
fn a_vllm_server_prices_mxfp4_experts_on_a100_with_marlin_not_sglangs_slow_path() {
    use servesim::cost::roofline::Roofline;
    use servesim::cost::BatchShape;
    let hw = load_hardware("a100-sxm4-80gb").unwrap();
    let model = load_model("gpt-oss-20b").unwrap();
    assert!(hw.efficiency.mxfp4_compute < 0.2, "the fitted slow path");
    let v = vllm(ServerFlags::default(), "a100-sxm4-80gb", "gpt-oss-20b");
    // SGLang 0.5.1: the constants describe the torch 2.8 stack (≤ 0.5.5.post3); from 0.5.6
    // SGLang's sm80 experts are priced without them (tests/roofline/sglang_mxfp4_sm80.rs).
    let old_sglang = ServerFlags {
        sglang_version: Some("0.5.1".parse().unwrap()),
        ..Default::default()
    };
    let sglang = |hw: &servesim::spec::hardware::HardwareProfile| {
        let s = resolve(Engine::Sglang, &old_sglang, hw, &model).unwrap();
        Roofline::new(hw, &model, &s).unwrap()
    };
    let mut neutral = hw.clone();
    let e = &mut neutral.efficiency;
    use servesim::cost::mxfp4::{MARLIN_MOE_PEAK_FRACTION, MARLIN_STREAM_BYTES_PER_S_SM80};
    e.mxfp4_compute = MARLIN_MOE_PEAK_FRACTION.min(e.gemm) / e.moe_gemm.unwrap_or(e.gemm);
    e.mxfp4_memory = (MARLIN_STREAM_BYTES_PER_S_SM80
        / (neutral.memory.bandwidth_bytes_per_s * e.memory))
        .min(1.0);
    e.mxfp4_half_tokens = Some(e.gemm_half_tokens);
    for shape in [
        BatchShape {
            decode_reqs: 8,
            decode_ctx_sum: 8 * 1000,
            ..Default::default()
        },
        BatchShape {
            prefill_reqs: 1,
            prefill_tokens: 2000,
            ..Default::default()
        },
    ] {
        // Kernels only: 0.5.1's eager prefill launches (no piecewise graphs) are not the
        // experts' business.
        let kernels = |r: &Roofline| -> f64 {
            use servesim::cost::breakdown::Component;
            use servesim::cost::StepCost;
            r.explain(&shape)
                .items
                .iter()
                .filter(|i| !matches!(i.component, Component::GpuOverhead | Component::Cpu))
                .map(|i| i.time_ns)
                .sum()
        };
        let on_vllm = kernels(&Roofline::new(&hw, &model, &v).unwrap());
        let on_neutral = kernels(&sglang(&neutral));
        let on_sglang = kernels(&sglang(&hw));
        assert!(
            (on_vllm - on_neutral).abs() <= 0.02 * on_neutral,
            "{on_vllm} vs {on_neutral}"
        );
        assert!(on_sglang > 1.5 * on_vllm, "{on_sglang} vs {on_vllm}");
    }
}

/// vLLM's API-server process (spec::vllm::frontend) serves arrivals one at a time: 1.0 ms per
/// request plus the profile's 50 ns per prompt token. 400 one-token requests of 16 prompt
/// tokens, all at once from an ideal client: the k-th reaches the engine k × 1.0008 ms after
/// the first byte, so, by hand, the mean TTFT is at least (400 + 1) / 2 × 1.0008 = 200.66 ms,
/// the run lasts at least 400 × 1.0008 = 400.3 ms, and the front end, busy ≥ 80% of it, is
/// named as the limit. The SGLang server (tokenization only, 0.8 µs per request) on the same
/// load finishes in a fraction of that, with no such note.
#[test]
fn vllms_api_server_serialises_arrivals_by_hand_and_says_when_it_binds() {
    use servesim::spec::workload::ClientModel;
    let per_request_ms = 1.0 + 16.0 * 50e-6;
    let load = ClientFlags {
        client_model: Some(ClientModel::Ideal),
        ..client(400, 16, 1)
    };
    let run_with = |engine: &str| {
        let server = ServerFlags {
            engine: Some(engine.into()),
            ..Default::default()
        };
        run(&scenario(server, load.clone())).unwrap()
    };
    let vllm = run_with("vllm");
    let m = &vllm.metrics;
    let floor_ms = 401.0 / 2.0 * per_request_ms;
    assert!(
        m.ttft_ms.mean >= floor_ms && m.ttft_ms.mean < floor_ms + 60.0,
        "mean TTFT {} ms, hand floor {floor_ms} ms",
        m.ttft_ms.mean
    );
    assert!(
        m.duration_s >= 400.0 * per_request_ms / 1e3,
        "{}",
        m.duration_s
    );
    assert!(
        vllm.notes.iter().any(|n| n.starts_with("front-end-bound")),
        "{:?}",
        vllm.notes
    );
    let sglang = run_with("sglang");
    assert!(sglang.metrics.duration_s < 0.5 * m.duration_s);
    assert!(!sglang.notes.iter().any(|n| n.contains("front-end")));
}

/// vLLM 0.10.2 / 0.11.0 on sm90 without `triton_kernels` run the same Marlin MXFP4 MoE as on
/// A100 (their `get_mxfp4_backend`, read in both sdists); a release past those read keeps the
/// native kernel. By hand: the H20's 1.32 TB/s packed-weight rate per SM-clock (132 / 78 SMs
/// at the same clock) is 2.2338 TB/s on H100, 1.32 TB/s on the H20 itself, and the roofline
/// prices the experts like SGLang's path on a profile whose MXFP4 constants give Marlin's
/// sm90 rates (0.27 of the bf16 peak, that stream rate; within 2%: attention kernels differ).
/// With the measured tables, the Marlin price never drops under the native row, and at an
/// 8000-token prefill (250 rows per expert: tensor-bound) it is the slower of the two.
#[test]
fn vllm_up_to_0_11_runs_marlin_mxfp4_moe_on_h100_by_hand_and_later_releases_do_not() {
    use servesim::cost::mxfp4::{self, Mxfp4Kernel, MARLIN_MOE_PEAK_FRACTION_SM90};
    use servesim::cost::roofline::Roofline;
    use servesim::cost::{BatchShape, CostChoice, CostModel};
    let h100 = load_hardware("h100-sxm5-80gb").unwrap();
    let model = load_model("gpt-oss-20b").unwrap();
    let at = |version: &str| {
        let flags = ServerFlags {
            vllm_version: Some(version.parse().unwrap()),
            ..Default::default()
        };
        vllm(flags, "h100-sxm5-80gb", "gpt-oss-20b")
    };
    for (version, want) in [
        ("0.10.2", Mxfp4Kernel::VllmMarlin),
        ("0.11.0", Mxfp4Kernel::VllmMarlin),
        ("0.14.0", Mxfp4Kernel::VllmNative),
    ] {
        assert_eq!(mxfp4::kernel(&h100, &at(version)), Some(want), "{version}");
    }
    let stream = |hw: &str| mxfp4::marlin_stream_bytes_per_s(&load_hardware(hw).unwrap());
    let h100_stream = stream("h100-sxm5-80gb").unwrap();
    assert!((h100_stream - 2.2338e12).abs() < 1e8, "{h100_stream}");
    assert!((stream("h20-96gb").unwrap() - 1.32e12).abs() < 1e6);
    assert_eq!(
        stream("h200-sxm-141gb"),
        Some(h100_stream),
        "the same GH100 SMs"
    );
    assert_eq!(stream("b200-sxm-180gb"), None);
    // The rate follows the profile's SM-clock, not its name: half the SMs, half the rate; a
    // Hopper profile without SM figures is taken as the H100 SXM.
    let mut small = load_hardware("h100-sxm5-80gb").unwrap();
    small.peaks.sm_count = Some(66);
    let half = mxfp4::marlin_stream_bytes_per_s(&small).unwrap();
    assert!((half - h100_stream / 2.0).abs() < 1e6, "{half}");
    let mut renamed = load_hardware("h20-96gb").unwrap();
    renamed.name = "my-hopper".into();
    assert!((mxfp4::marlin_stream_bytes_per_s(&renamed).unwrap() - 1.32e12).abs() < 1e6);
    renamed.peaks.sm_count = None;
    renamed.peaks.sm_boost_clock_hz = None;
    assert_eq!(
        mxfp4::marlin_stream_bytes_per_s(&renamed),
        Some(h100_stream)
    );
    assert!((MARLIN_MOE_PEAK_FRACTION_SM90 - 0.27).abs() < 1e-12);

    let server = at("0.11.0");
    let mut neutral = h100.clone();
    let e = &mut neutral.efficiency;
    e.mxfp4_compute = 0.27f64.min(e.gemm) / e.moe_gemm.unwrap_or(e.gemm);
    e.mxfp4_memory = (2.2338e12 / (neutral.memory.bandwidth_bytes_per_s * e.memory)).min(1.0);
    e.mxfp4_half_tokens = Some(e.gemm_half_tokens);
    let sglang = resolve(Engine::Sglang, &ServerFlags::default(), &neutral, &model).unwrap();
    let decode = BatchShape {
        decode_reqs: 8,
        decode_ctx_sum: 8 * 1000,
        ..Default::default()
    };
    let prefill = |tokens: u64| BatchShape {
        prefill_reqs: 1,
        prefill_tokens: tokens,
        ..Default::default()
    };
    for shape in [decode, prefill(2000)] {
        let on_vllm = Roofline::new(&h100, &model, &server)
            .unwrap()
            .gpu_ns(&shape);
        let on_neutral = Roofline::new(&neutral, &model, &sglang)
            .unwrap()
            .gpu_ns(&shape);
        assert!(
            (on_vllm - on_neutral).abs() <= 0.02 * on_neutral,
            "{on_vllm} vs {on_neutral}"
        );
    }
    let kernels = CostChoice {
        model: Some(CostModel::Kernels),
        kernel_db: None,
    };
    let step = |version: &str, shape: &BatchShape| {
        servesim::cost::build(&h100, &model, &at(version), &kernels)
            .unwrap()
            .step_time(shape)
            .gpu_ns
    };
    for shape in [decode, prefill(2000), prefill(8000)] {
        let (marlin, native) = (step("0.11.0", &shape), step("0.14.0", &shape));
        assert!(marlin >= native * 0.999, "{marlin} vs {native}");
    }
    let (marlin, native) = (
        step("0.11.0", &prefill(8000)),
        step("0.14.0", &prefill(8000)),
    );
    assert!(marlin > 1.2 * native, "{marlin} vs {native}");
}
