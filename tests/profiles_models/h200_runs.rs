//! GLM-4.5 / 4.5-Air / 4.6 and the Mistral dense models on 8 × H200 (the deployment Zhipu's README and SGLang's GLM docs
//! name for GLM): `servesim run --explain` says the kernels backend prices their routed experts with
//! the roofline (AIConfigurator measured no MoE rows at E=160 / E=128 with these widths), and
//! that roofline's decode MoE time is the bytes of the experts a step touches over H200's HBM,
//! counted by hand, at a memory efficiency between 50% and 100%. The Mistral dense models run
//! there too, each decode step no faster than streaming its weights once.
use super::sourced::explain_small_run;
use servesim::spec::bundled::load_model;
use servesim::spec::model::WeightFormat;

/// The `moe` line of the representative decode step: its milliseconds and its text.
fn decode_moe(out: &str) -> (f64, String) {
    let decode = out
        .split("decode step:")
        .nth(1)
        .expect("a representative decode step");
    let line = decode
        .lines()
        .find(|l| l.trim_start().starts_with("moe "))
        .expect("a moe line");
    let ms = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    (ms, line.to_string())
}

#[test]
fn glm_decode_moe_is_the_touched_experts_over_hbm() {
    // H200 datasheet: 4.8 TB/s HBM3e. A decode step of b tokens with top-8 routing over E
    // experts touches E·(1 − (1 − 8/E)^b) experts, each 3 × hidden × (width / 8) weights on a
    // TP-8 rank; the representative step of this run is CUDA-graph batch 8 (6 requests).
    const HBM: f64 = 4.8e12;
    let touched = |e: f64, b: f64| e * (1.0 - (1.0 - 8.0 / e).powf(b));
    for (id, e, hidden, width, moe_layers, bytes, shape) in [
        (
            "zai-org/GLM-4.6",
            160.0,
            5120.0,
            1536.0,
            89.0,
            2.0,
            "hidden 5120 inter 1536 E=160",
        ),
        (
            "zai-org/GLM-4.6-FP8",
            160.0,
            5120.0,
            1536.0,
            89.0,
            1.0,
            "E=160 top-8",
        ),
        (
            "zai-org/GLM-4.5-Air",
            128.0,
            4096.0,
            1408.0,
            45.0,
            2.0,
            "hidden 4096 inter 1408 E=128",
        ),
    ] {
        let out = explain_small_run("h200-sxm-141gb", id, "8");
        assert!(out.contains("CUDA graph bs 8"), "{id}: {out}");
        let (ms, line) = decode_moe(&out);
        assert!(
            line.contains("roofline: no") && line.contains(shape),
            "{id}: {line}"
        );
        let floor_ms =
            moe_layers * touched(e, 8.0) * 3.0 * hidden * width / 8.0 * bytes / HBM * 1e3;
        assert!(
            ms >= floor_ms && ms <= 2.0 * floor_ms,
            "{id}: moe {ms} ms vs {floor_ms:.3} ms of expert bytes at full HBM bandwidth"
        );
    }
}

#[test]
fn mistral_decode_steps_stream_their_weights() {
    // H200 datasheet 4.8 TB/s: a decode step reads every weight of the rank at least once.
    for name in [
        "mistral-7b-v0.1",
        "mistral-7b-v0.3",
        "mistral-nemo-base-2407",
        "mistral-small-24b-instruct-2501",
    ] {
        let out = explain_small_run("h200-sxm-141gb", name, "8");
        let step_ms: f64 = out
            .split("decode step:")
            .nth(1)
            .and_then(|d| d.lines().find(|l| l.trim_start().starts_with("step ")))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name}: no decode step in {out}"));
        let bytes = load_model(name)
            .unwrap()
            .weight_bytes_per_rank(8, WeightFormat::Bf16);
        let floor_ms = bytes / 4.8e12 * 1e3;
        assert!(
            step_ms >= floor_ms && step_ms < 50.0 * floor_ms,
            "{name}: decode step {step_ms} ms vs {floor_ms:.3} ms to stream the weights"
        );
    }
}
