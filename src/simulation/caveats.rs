//! One-line caveats a run prints on stderr when a result rests on something the deployment's
//! own numbers do not decide: a hardware profile no recorded run was fitted on, a speculative
//! accept length servesim assumed rather than was given, or steps priced beyond the measured
//! kernel tables.
use super::{RunOutput, Scenario};
use crate::cost::breakdown::Component;
use crate::cost::kernels::explain::EXTRAPOLATED;
use crate::spec::hardware::HardwareProfile;
use crate::spec::server::ServerConfig;

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
    (server.tp > per_node).then(|| {
        format!(
            "tp {} spans {} nodes of {per_node} {}: every all-reduce crosses the network, priced \
             from the profile's inter-node link (a per-GPU share of the node's NICs, latency a \
             judgement); no recorded multi-node run checks it",
            server.tp,
            server.tp.div_ceil(per_node),
            hw.name
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
