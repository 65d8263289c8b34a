//! vLLM V1's serial host time per engine step, by hand (validation/vllm/host-time-notes.md):
//! without async scheduling `EngineCore.step` (`v1/engine/core.py`@0.11.0) runs
//! `schedule()`, the model runner's `_update_states` / `_prepare_inputs`, the forward pass,
//! the sampled-token `.tolist()` sync, the bookkeeping and `update_from_output()` one after
//! the other, so the host time adds to the GPU time; with `--async-scheduling`
//! (`step_with_batch_queue`, batch queue of 2, and the model runner's
//! `AsyncGPUModelRunnerOutput` from PR #23569, in 0.10.2 and 0.11.0) it runs under the
//! previous step's GPU time. The host time is `spec::vllm::overheads::V1_CPU`: 1.0 ms + 8 µs
//! per scheduled request.
use super::*;
use servesim::cost::{BatchShape, StepTime};

/// A pure decode step of `reqs` requests at 512 tokens of context each.
fn decode(reqs: u64) -> BatchShape {
    BatchShape {
        decode_reqs: reqs,
        decode_ctx_sum: reqs * 512,
        graph_bs: Some(reqs),
        ..Default::default()
    }
}

/// The price of `shape` on a vLLM `version` server, with the given async flags.
fn priced(version: &str, async_flag: bool, no_async: bool, shape: &BatchShape) -> StepTime {
    let sc = scenario(
        ServerFlags {
            engine: Some("vllm".into()),
            vllm_version: Some(version.parse().unwrap()),
            async_scheduling: async_flag,
            no_async_scheduling: no_async,
            ..Default::default()
        },
        client(8, 100, 10),
    );
    sc.step_cost().unwrap().step_time(shape)
}

#[test]
fn v1_host_time_at_batch_32_and_256_is_serial_without_async_scheduling() {
    // By hand: 1.0 ms + 32 × 8 µs = 1.256 ms; 1.0 ms + 256 × 8 µs = 3.048 ms.
    for (reqs, want_ns) in [(32, 1.256e6), (256, 3.048e6)] {
        for version in ["0.10.2", "0.11.0"] {
            let t = priced(version, false, false, &decode(reqs));
            assert!((t.cpu_ns - want_ns).abs() < 1.0, "{version} b{reqs}: {t:?}");
            // `step()`: schedule → execute_model (forward, then the .tolist() sync) →
            // update_from_output, in series.
            assert!(
                (t.total_ns - (t.gpu_ns + want_ns)).abs() < 1.0,
                "{version} b{reqs}: {t:?}"
            );
        }
    }
    // A mixed step counts its prefill request too: 1.0 ms + (31 + 1) × 8 µs.
    let mixed = BatchShape {
        prefill_reqs: 1,
        prefill_tokens: 200,
        ..decode(31)
    };
    let t = priced("0.11.0", false, false, &mixed);
    assert!((t.cpu_ns - 1.256e6).abs() < 1.0, "{t:?}");
}

#[test]
fn async_scheduling_hides_the_host_time_under_the_gpu_step() {
    // Long contexts (32K tokens each: 12 KiB of KV per token on Qwen2.5-0.5B) make the GPU
    // step the longer one; short ones at batch 256 leave the 3.048 ms host loop longer.
    let long = |reqs: u64| BatchShape {
        decode_ctx_sum: reqs * 32_768,
        ..decode(reqs)
    };
    for (shape, reqs) in [(long(32), 32), (long(256), 256)] {
        let want_cpu_ns = 1.0e6 + reqs as f64 * 8e3;
        let sync = priced("0.11.0", false, false, &shape);
        assert!(
            sync.gpu_ns > want_cpu_ns,
            "premise: GPU-bound b{reqs}: {sync:?}"
        );
        let flagged = priced("0.11.0", true, false, &shape);
        // 0.14+ schedules asynchronously unless told not to.
        let default_async = priced("0.14.0", false, false, &shape);
        let opted_out = priced("0.14.0", false, true, &shape);
        for (name, t) in [
            ("0.11.0 --async-scheduling", flagged),
            ("0.14.0", default_async),
        ] {
            // The same host work, run under the GPU step: the step is the GPU time.
            assert!(
                (t.cpu_ns - want_cpu_ns).abs() < 1.0,
                "{name} b{reqs}: {t:?}"
            );
            assert_eq!(t.total_ns, t.gpu_ns, "{name} b{reqs}: {t:?}");
        }
        // Async scheduling saves exactly the host time of a step.
        assert_eq!(flagged.gpu_ns, sync.gpu_ns);
        assert!(
            (sync.total_ns - flagged.total_ns - want_cpu_ns).abs() < 1.0,
            "b{reqs}: {sync:?} vs {flagged:?}"
        );
        assert!(
            (opted_out.total_ns - (opted_out.gpu_ns + want_cpu_ns)).abs() < 1.0,
            "0.14.0 --no-async-scheduling b{reqs}: {opted_out:?}"
        );
    }
    // A 0.5B model's decode at batch 256 with short contexts is shorter than the host loop:
    // the host bounds the async step (the GPU waits for the next schedule).
    let short = BatchShape {
        decode_ctx_sum: 256 * 64,
        ..decode(256)
    };
    let t = priced("0.11.0", true, false, &short);
    assert!(t.gpu_ns < 3.048e6, "premise: host-bound: {t:?}");
    assert!((t.total_ns - 3.048e6).abs() < 1.0, "{t:?}");
}
