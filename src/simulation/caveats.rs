//! One-line caveats a run prints on stderr when a result rests on something the deployment's
//! own numbers do not decide: a hardware profile no recorded run was fitted on, a speculative
//! accept length servesim assumed rather than was given, or steps priced beyond the measured
//! kernel tables; or a deployment where published real runs are known to differ from servesim
//! in a way it does not model (the closed-loop first wave, early-2025 MLA decode, gpt-oss's
//! MXFP4 experts on SGLang, an untuned fused-MoE config servesim does not price, bf16 Qwen3
//! MoE on Blackwell before SGLang 0.5.8).
use super::{RunOutput, Scenario};
use crate::cost::breakdown::Component;
use crate::cost::kernels::explain::EXTRAPOLATED;
use crate::cost::select::CostModel;
use crate::metrics::BenchMetrics;
use crate::spec::hardware::HardwareProfile;
use crate::spec::model::WeightFormat;
use crate::spec::server::ServerConfig;
use crate::spec::version::Version;

/// "not calibrated" when `hw`'s profile has never been fitted to a recorded run (its
/// `calibration:` line still says "datasheet defaults").
pub fn uncalibrated_profile(hw: &HardwareProfile) -> Option<String> {
    let calibration = hw.calibration.as_deref().unwrap_or("datasheet defaults");
    calibration.starts_with("datasheet defaults").then(|| {
        format!(
            "{} is not calibrated: no recorded run of it was fitted (roofline efficiencies are \
             datasheet values; measured kernel tables, where the GPU has them, price the steps; \
             host-side constants are shared from other GPUs' fits), so expect larger errors than \
             on fitted hardware",
            hw.name
        )
    })
}

/// "accept length assumed" when speculative decoding runs with servesim's default acceptance
/// instead of `--speculative-accept-length` (or an acceptance the user gave).
pub fn assumed_accept_length(server: &ServerConfig) -> Option<String> {
    let s = server.speculative.as_ref()?;
    (!s.accept_given).then(|| {
        format!(
            "speculative accept length {:.2} is assumed, not simulated ({}); a real run's depends \
             on the draft model and the prompts: set --speculative-accept-length",
            s.accept_length, s.accept_source
        )
    })
}

/// "spans N nodes" when one tensor-parallel group is larger than a node: its all-reduces cross
/// the network, priced from the profile's inter-node link (a per-GPU share of the node's NICs
/// and a judged latency), which no recorded run checks.
pub fn multi_node_group(hw: &HardwareProfile, server: &ServerConfig) -> Option<String> {
    let per_node = u64::from(hw.link.devices_per_node.max(1));
    let ranks = server.group_ranks_per_node(hw.link.devices_per_node);
    (server.tp > ranks).then(|| {
        let nodes = server.tp.div_ceil(ranks);
        let layout = match server.nnodes {
            Some(n) => format!(
                "{n} nodes (--nnodes {n}: {ranks} ranks on each {per_node}-device {} node)",
                hw.name
            ),
            None => format!("{nodes} nodes of {per_node} {}", hw.name),
        };
        format!(
            "tp {} spans {layout}: every all-reduce crosses the network, priced from the \
             profile's inter-node link (a per-GPU share of the node's NICs, latency a \
             judgement); no recorded multi-node run checks it",
            server.tp
        )
    })
}

/// "priced beyond the measured tables" when the run's representative decode or prefill step
/// (`--explain`'s) has a component whose measured grid it left. The LM head is left out: its
/// vocabulary-wide GEMM lies past the GEMM grid's n for most models, and the curve scales it.
/// Prices two steps (O(1)); `run` calls it, not the simulation loop.
pub fn beyond_tables(sc: &Scenario, out: &RunOutput) -> Option<String> {
    let cost = sc.step_cost().ok()?;
    let (decode, prefill) = super::explain::representative_shapes(sc, out);
    let mut parts: Vec<String> = Vec::new();
    for (name, shape) in [("decode", &decode), ("prefill", &prefill)] {
        let b = cost.explain(shape);
        let left: Vec<&str> = b
            .items
            .iter()
            .filter(|i| i.component != Component::LmHead && i.detail.contains(EXTRAPOLATED))
            .map(|i| i.component.name())
            .collect();
        if !left.is_empty() {
            parts.push(format!("{name}: {}", left.join(", ")));
        }
    }
    (!parts.is_empty()).then(|| {
        format!(
            "the run's typical steps are priced partly beyond the measured kernel tables ({}): \
             those parts are extrapolated from the nearest measurements; `--explain` shows which",
            parts.join("; ")
        )
    })
}

/// How much longer the first `c` requests of published closed-loop SGLang runs (rate inf,
/// `--max-concurrency` 16–100) waited than servesim's warmed server: the median and range over
/// the 11 runs of `validation/public/ttft-notes.md` §3 ("excess a first-wave request"; 9 of
/// the 11 exceed 0.2 s).
const FIRST_WAVE_EXCESS_MEDIAN_MS: f64 = 509.0;

/// "first wave" when an SGLang run is closed-loop (rate inf, a concurrency cap) and the first
/// wave's unmodelled wait, spread over the run's requests, moves the mean TTFT by ≥ 10%: the
/// real first `c` requests have waited 0.24–3.4 s longer than simulated on 9 of 11 cookbook
/// runs, for no cause the sources settle (ttft-notes §3), so the simulated mean reads low; on
/// benchmaq's 0.5.9 H100 servers only the first run after a start did (p010-benchmaq-notes §1).
pub fn closed_loop_first_wave(sc: &Scenario, metrics: &BenchMetrics) -> Option<String> {
    // Only inside the published runs' range of caps: at c1 no such wait shows (ttft-notes §2).
    let c = sc.client.max_concurrency.filter(|&c| c >= 16)?;
    if sc.server.vllm.is_some() || sc.client.request_rate.is_finite() || metrics.completed == 0 {
        return None;
    }
    let n = metrics.completed as f64;
    let shift_ms = (c as f64).min(n) / n * FIRST_WAVE_EXCESS_MEDIAN_MS;
    let mean_ms = metrics.ttft_ms.mean;
    // The first wave is a minority of the requests unless the cap is half the run or more.
    let median = match 2 * c < metrics.completed {
        true => "median TTFT and TPOT are barely affected",
        false => "with the cap at half the requests or more, the median TTFT too",
    };
    (shift_ms >= 5.0 && shift_ms >= 0.1 * mean_ms).then(|| {
        format!(
            "closed loop at --max-concurrency {c}: in 9 of 11 cookbook SGLang runs like this \
             (c16–c100, B200 and A100, 0.5.6) the first {c} requests waited 0.24–3.4 s longer \
             than a warmed server (median 0.51 s; validation/public/ttft-notes.md §3), though on \
             an H100 deployment of 0.5.9 only a server's first run did (p010-benchmaq-notes.md); \
             servesim does not model it: the real mean TTFT may be up to ≈ {shift_ms:.0} ms above \
             the simulated {mean_ms:.0} ms; {median}"
        )
    })
}

/// SGLang releases whose MLA decode published runs found far slower than servesim prices it:
/// 0.4.1 (PR #2738's serving logs, validation/public/p007-notes.md), 0.4.2 (PR #3232) and main
/// after 0.4.5 (PR #5432) (`bench_one_batch`, validation/step-bench-notes.md §2). PR #2643
/// (0.4.1.post2, batch 1–32) agreed within 13%; GPUStack's 0.5.3 and seed 004's 0.4.7 agree.
const SLOW_MLA_DECODE: (Version, Version) = (Version::new(0, 4, 1), Version::new(0, 4, 6));

/// "MLA decode optimistic" for an MLA model on an SGLang release in [`SLOW_MLA_DECODE`].
pub fn early_mla_decode(sc: &Scenario) -> Option<String> {
    let v = sc.server.version;
    let (from, to) = SLOW_MLA_DECODE;
    (sc.model.mla.is_some() && sc.server.vllm.is_none() && v >= from && v < to).then(|| {
        format!(
            "{} on SGLang {v}: published runs of SGLang 0.4.1–0.4.5 with MLA decoded 40–73% \
             slower per step than servesim prices in 3 of 4 sources (validation/public/\
             p007-notes.md, validation/step-bench-notes.md §2); the cause is not settled, so \
             treat TPOT as optimistic and throughput as high",
            sc.model.name
        )
    })
}

/// "MXFP4 experts rough" for a model with MXFP4 experts (gpt-oss) on an SGLang server: over the
/// 38 SGLang gpt-oss runs servesim replays (seed 003's 8 on A100 at 0.5.1; public P003 on B200
/// at 0.5.6 and P012–P014 on H100 / H200 / A100 at 0.5.8.post1; GPUStack's 4 on A100 / H100 at
/// 0.5.3–0.5.4.post2) its median |error| is 46% on median TPOT and 65% on output throughput,
/// with both signs: the MXFP4 MoE kernels SGLang picks per GPU and release are not priced
/// reliably (A100's slow path is a fit on seed 003 that the 0.5.8.post1 runs contradict).
pub fn mxfp4_on_sglang(sc: &Scenario) -> Option<String> {
    (sc.server.weight_format == WeightFormat::Mxfp4 && sc.server.vllm.is_none()).then(|| {
        format!(
            "{} (MXFP4 experts) on SGLang: on the 38 recorded and published SGLang gpt-oss runs \
             servesim replays (A100, H100, H200, B200; SGLang 0.5.1–0.5.8.post1) its median \
             error is 46% on TPOT and 65% on throughput, in both directions (validation/\
             gpustack/gpt-oss-notes.md, validation/public/p010-benchmaq-notes.md): SGLang's \
             MXFP4 MoE kernels per GPU and release are not priced reliably; treat this run as \
             rough",
            sc.model.name
        )
    })
}

/// "untuned fused-MoE default, not priced" (`cost::moe_config::unpriced_default`), unless the
/// kernel backend read the experts from a table measured without a tuned file either. Only
/// then prices one decode step (O(1)) to see where the experts came from.
pub fn unpriced_moe_default(sc: &Scenario) -> Option<String> {
    use crate::cost::moe_config::unpriced_default;
    let (hw, model, server) = (&sc.hardware, &sc.model, &sc.server);
    let note = unpriced_default(hw, model, server, None)?;
    if sc.cost.resolve(hw) != CostModel::Kernels {
        return Some(note);
    }
    let one_token = crate::cost::BatchShape {
        decode_reqs: 1,
        decode_ctx_sum: 1000,
        graph_bs: Some(1),
        ..Default::default()
    };
    let from_table = sc.step_cost().ok().is_some_and(|c| {
        c.explain(&one_token).items.iter().any(|i| {
            i.component == Component::Moe
                && (i.detail.contains("moe table") || i.detail.contains("moe_triton table"))
        })
    });
    match from_table {
        true => unpriced_default(
            hw,
            model,
            server,
            crate::cost::select::moe_table_version(hw, model, server, &sc.cost),
        ),
        false => Some(note),
    }
}
