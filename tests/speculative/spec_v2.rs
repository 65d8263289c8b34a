//! SGLang's overlapped speculative decoding ("spec v2", the default from 0.5.11): the host time it hides, its version rules, and its invariants.
use super::*;

/// EAGLE3 (K=3, k=1, N=4) flags at `version`, with `SGLANG_ENABLE_SPEC_V2` as given.
fn eagle3_v2(version: &str, spec_v2: Option<bool>) -> ServerFlags {
    let mut f = eagle3(Some(3.0), Some(3));
    f.sglang_version = Some(version.parse().unwrap());
    f.speculative.sglang_enable_spec_v2 = spec_v2;
    f
}

/// One decode step of a concurrency-1 EAGLE3 run on SGLang 0.5.12, priced with spec v2 (the
/// default: overlap) and with `SGLANG_ENABLE_SPEC_V2=false` (spec v1): the same GPU work, and
/// the difference is the scheduler's host time for one request, which the H100 profile states
/// (step_cpu_ns + per_request_cpu_ns): hidden with v2, serial with v1. Over a whole
/// one-request run, every step (the prefill and each verify) hides it once.
#[test]
fn spec_v2_hides_the_host_time_of_each_step() {
    let c = client(1, 200, 301, 1);
    let v2 = scenario(H100, "qwen3-8b", &eagle3_v2("0.5.12", None), &c);
    let v1 = scenario(H100, "qwen3-8b", &eagle3_v2("0.5.12", Some(false)), &c);
    assert!(v2.server.overlap_schedule && !v1.server.overlap_schedule);
    let o = &v2.hardware.overheads;
    let host_ns = o.step_cpu_ns + o.per_request_cpu_ns;
    let (a, b) = (decode_step(&v1, 1, 400), decode_step(&v2, 1, 400));
    assert_eq!(a.gpu_ns, b.gpu_ns, "same draft + verify + extend");
    assert!(
        (a.cpu_ns - host_ns).abs() < 1e-6,
        "{} vs {host_ns}",
        a.cpu_ns
    );
    assert!(b.gpu_ns > host_ns, "a bs-1 8B step outlasts its host time");
    assert!((a.total_ns - (b.gpu_ns + host_ns)).abs() < 1e-3);
    assert!((b.total_ns - b.gpu_ns).abs() < 1e-3);
    // The run: 1 prefill + 300 / 3 = 100 verifies, each hiding `host_ns`.
    let (ra, rb) = (run(&v1).unwrap().metrics, run(&v2).unwrap().metrics);
    let hidden_ms = ra.e2e_ms.mean - rb.e2e_ms.mean;
    let want_ms = 101.0 * host_ns / 1e6;
    assert!(
        (hidden_ms / want_ms - 1.0).abs() < 0.01,
        "hidden {hidden_ms:.3} ms vs 101 × host time {want_ms:.3} ms"
    );
}

/// The version boundary: SGLang 0.5.10 runs spec v1 (no overlap: step = GPU + CPU) unless the
/// env asks for v2; 0.5.11 runs v2 (step = max(GPU, CPU)) unless the env turns it off or the
/// user sets top-k > 1. The v2 worker keeps 2 · max(K·k, N) KV slots per request ahead.
#[test]
fn spec_v2_is_the_default_from_0_5_11() {
    let c = client(1, 10, 10, 1);
    let at = |v: &str, env: Option<bool>| scenario(H100, "qwen3-8b", &eagle3_v2(v, env), &c);
    for (v, env, overlap) in [
        // 0.5.5–0.5.6.post2 (their wheels): with the env, the overlap stays on for EAGLE3 and
        // `_create_eagle_worker` builds EAGLEWorkerV2; without it, forced off. 0.5.4: no env.
        ("0.5.4", Some(true), false),
        ("0.5.6.post2", None, false),
        ("0.5.6.post2", Some(true), true),
        ("0.5.10", None, false),
        ("0.5.10", Some(true), true),
        ("0.5.11", None, true),
        ("0.5.11", Some(false), false),
        ("0.5.13", Some(false), false),
        ("0.5.14", Some(false), true),
    ] {
        let sc = at(v, env);
        assert_eq!(sc.server.overlap_schedule, overlap, "{v} env {env:?}");
        let t = decode_step(&sc, 4, 300);
        let want = if overlap {
            t.gpu_ns.max(t.cpu_ns)
        } else {
            t.gpu_ns + t.cpu_ns
        };
        assert!((t.total_ns - want).abs() < 1e-3, "{v} env {env:?}");
    }
    // Before 0.5.7 the env does not force the overlap on for EAGLE3: the user's
    // --disable-overlap-schedule keeps spec v1.
    let mut off = eagle3_v2("0.5.6", Some(true));
    off.disable_overlap_schedule = true;
    assert!(!scenario(H100, "qwen3-8b", &off, &c).server.overlap_schedule);
    let s = |sc: &Scenario| sc.server.speculative.clone().unwrap();
    assert_eq!(s(&at("0.5.10", None)).decode_buffer_tokens(), 4 + 3);
    assert_eq!(s(&at("0.5.11", None)).decode_buffer_tokens(), 2 * 4);
    // 0.5.11's v2 supports only a user top-k of 1: top-k 4 falls back to v1.
    let mut f = eagle3_v2("0.5.11", None);
    f.speculative.speculative_eagle_topk = Some(4);
    f.speculative.speculative_num_draft_tokens = Some(8);
    assert!(!scenario(H100, "qwen3-8b", &f, &c).server.overlap_schedule);
    // The launch command reproduces the choice: the env opt-in before 0.5.11, the overlap flag
    // after (SGLANG_ENABLE_SPEC_V2=0 and --disable-overlap-schedule give the same server).
    let launch = |v: &str, env: Option<bool>| sglang_launch_server(&at(v, env));
    assert!(launch("0.5.10", Some(true))
        .starts_with("SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server "));
    assert!(launch("0.5.10", None).contains("--disable-overlap-schedule"));
    let l = launch("0.5.11", None);
    assert!(l.starts_with("python -m") && !l.contains("overlap"), "{l}");
    assert!(launch("0.5.11", Some(false)).contains("--disable-overlap-schedule"));
    // 0.5.7–0.5.10 refuse it when the env asks for spec v2.
    let mut args = vec!["run", "--hardware", H100, "--num-prompts", "2"];
    args.extend(QWEN3_8B_EAGLE3);
    args.extend([
        "--sglang-version",
        "0.5.10",
        "--sglang-enable-spec-v2",
        "true",
    ]);
    args.extend([
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "4",
    ]);
    common::fails_with(&args, &["--speculative-eagle-topk", "only top-k 1, got 4"]);
}

/// The overlap never makes a step slower: the same worker (SGLang 0.5.13's V2 worker, with the
/// env on and off) at any batch, context and top-k; a spec-v2 run is deterministic.
#[test]
fn spec_v2_overlap_never_slows_a_step_and_runs_are_deterministic() {
    let c = client(1, 10, 10, 1);
    for topk in [1, 4] {
        let with = |env: bool| {
            let mut f = eagle3_v2("0.5.13", Some(env));
            f.speculative.speculative_eagle_topk = Some(topk);
            f.speculative.speculative_num_draft_tokens = Some(if topk > 1 { 8 } else { 4 });
            scenario(H100, "qwen3-8b", &f, &c)
        };
        let (on, off) = (with(true), with(false));
        for bs in [1, 8, 48, 64] {
            for ctx in [64, 8192] {
                let (a, b) = (decode_step(&on, bs, ctx), decode_step(&off, bs, ctx));
                assert_eq!(a.gpu_ns, b.gpu_ns);
                assert!(a.total_ns <= b.total_ns, "topk {topk} bs {bs} ctx {ctx}");
            }
        }
    }
    let sc = scenario(
        H100,
        "qwen3-8b",
        &eagle3_v2("0.5.12", None),
        &client(24, 200, 150, 6),
    );
    let (a, b) = (run(&sc).unwrap(), run(&sc).unwrap());
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(
        text::render(&a.metrics, &sc.header()),
        text::render(&b.metrics, &sc.header())
    );
}
