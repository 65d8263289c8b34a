//! One-line caveats a run prints on stderr when a result rests on something the deployment's
//! own numbers do not decide: a hardware profile no recorded run was fitted on, or a
//! speculative accept length servesim assumed rather than was given.
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
