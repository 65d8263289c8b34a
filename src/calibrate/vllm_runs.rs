//! Calibration runs printed by vLLM's client (`vllm bench serve` blocks, e.g.
//! validation/gpustack/), against either engine: the entry is replayed as `servesim validate`
//! replays it (`validate::vllm::entry`), simulated through the vLLM client path (so a vLLM
//! server is priced by the vLLM cost path), and read under vLLM's JSON keys.
//!
//! What enters the loss is what the block measures: a metric the block does not print (a
//! `--percentile-metrics` without `ttft`, say) is not scored, and output throughput is scored
//! only when the client command passes `--ignore-eos`. Without it the real server stops at EOS
//! and generates fewer tokens than requested while servesim generates all of them, so the
//! throughput is a flag (still reported, never fitted).
use super::fit_run::{FitRun, Values};
use crate::error::Result;
use crate::simulation::vllm::run_vllm;
use crate::simulation::Scenario;
use crate::spec::engine::Engine;
use crate::validate::manifest::Entry;
use crate::validate::replay::{LengthSource, Overrides, Replay};
use crate::validate::vllm::entry::{entry_scenario_file, simulated_values, VllmLog};
use crate::validate::vllm::VllmResult;

/// vLLM's keys of the scored metrics, in [`super::runs::Metric::ALL`] order (`itl`: median
/// ITL where the block prints no TPOT).
fn keys(itl: bool) -> [&'static str; 3] {
    [
        "output_throughput",
        if itl {
            "median_itl_ms"
        } else {
            "median_tpot_ms"
        },
        "mean_ttft_ms",
    ]
}

/// True when the client command passes `--ignore-eos` (every requested token generated).
pub fn ignores_eos(run: &VllmResult) -> bool {
    run.bench_command
        .as_deref()
        .is_some_and(|c| c.split_whitespace().any(|w| w == "--ignore-eos"))
}

/// The fit run of manifest entry `e`, block `e.run` of `log`, replayed with `ov` (whose
/// `hardware` is the profile being fitted).
pub fn fit_run(
    log: &VllmLog,
    e: &Entry,
    ov: &Overrides,
    source: &str,
    hw: usize,
) -> Result<FitRun> {
    let file = entry_scenario_file(log, e.run, e, ov, source)?;
    let scenario = Scenario::resolve(&file, None, None, &ov.server, &ov.client)?;
    let run = &log.runs[e.run];
    let itl = run.get("median_tpot_ms").is_none();
    let real: Values = keys(itl).map(|k| run.get(k).unwrap_or(f64::NAN));
    let mut scored = real.map(f64::is_finite);
    scored[0] &= ignores_eos(run);
    let lengths = if scenario.client.dataset_name == "sharegpt" {
        LengthSource::Sampled
    } else {
        LengthSource::Random
    };
    let engine = if scenario.server.vllm.is_some() {
        Engine::Vllm
    } else {
        Engine::Sglang
    };
    Ok(FitRun {
        id: e.id.clone(),
        model: e.model.value.clone(),
        replay: Replay {
            scenario,
            lengths,
            notes: Vec::new(),
            server_flags: file.server.merged(&ov.server),
        },
        real,
        itl,
        hw,
        engine,
        vllm_client: true,
        scored,
    })
}

/// The scored values of a scenario run through vLLM's client (NaN where `real` has none).
pub fn simulate(sc: &Scenario, run: &FitRun) -> Option<Values> {
    let sim = run_vllm(sc).ok()?;
    let values = simulated_values(&sim);
    let v = keys(run.itl).map(|k| values.get(k).copied().unwrap_or(f64::NAN));
    let needed = v
        .iter()
        .zip(&run.real)
        .all(|(s, r)| !r.is_finite() || s.is_finite());
    needed.then_some(v)
}
