//! Untuned fused-MoE kernel configurations: SGLang's triton fused-MoE kernel reads its tile
//! sizes from a JSON file per (experts E, shard width N, device, dtype); when none matches, it
//! falls back to a default configuration ("Using default MoE config. Performance might be
//! sub-optimal!"), which at decode batch sizes is several times slower than a tuned one.
//!
//! Which (architecture, SGLang version, model) ran untuned is a fact of SGLang's history, not
//! a fitted constant: each [`UntunedMoe`] entry below names the pull requests that opened and
//! closed the gap. How much slower, from SGLang PR #3272's kernel benchmark of DeepSeek-V3's
//! expert shape `(m, N=7168, K=2048)` on Blackwell, default vs tuned: 38.2 vs 14.2 µs at m = 16,
//! 38.2 vs 25.6 at 64, 62.2 vs 57.5 at 256. The default's small tiles make it flat up to
//! m ≈ 64 and ~8% slower at large m, so the untuned time is
//! `max(UNTUNED_TAIL × tuned(m), UNTUNED_FLOOR × tuned(16))` (38.2, 38.2 and 62.1 µs at the
//! three measured m): never below the tuned kernel, never faster at a larger batch. Both cost
//! backends apply it to their routed-expert time.
use crate::spec::hardware::{Arch, HardwareProfile};
use crate::spec::model::ModelSpec;
use crate::spec::version::Version;

/// One known window of SGLang versions in which a model's fused-MoE shape had no tuned
/// configuration on an architecture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UntunedMoe {
    pub arch: Arch,
    /// Routed experts of the model (the shape's E is this plus a fused shared expert).
    pub routed_experts: u64,
    /// First affected version and first version with a tuned configuration again.
    pub since: Version,
    pub until: Version,
    pub source: &'static str,
}

/// The known windows.
pub const UNTUNED_MOE: &[UntunedMoe] = &[UntunedMoe {
    arch: Arch::Blackwell,
    routed_experts: 256,
    since: Version::new(0, 4, 7),
    until: Version::new(0, 4, 8),
    source: "SGLang PR #6736 (shared-expert fusion) changed DeepSeek-V3's fused-MoE shape from \
             E=264 to E=257, for which no B200 config existed until PR #6939 ('Add triton fused \
             moe kernel config for E=257 on B200', June 2025); 0.4.7 is the release between",
}];

/// Default over tuned kernel time at large m (PR #3272: 62.2 / 57.5 µs at m = 256).
pub const UNTUNED_TAIL: f64 = 62.2 / 57.5;
/// The default configuration's floor, in tuned kernel times at [`UNTUNED_FLOOR_ROWS`] (PR
/// #3272: 38.2 / 14.2 µs at m = 16, and 38.2 µs again at m = 64).
pub const UNTUNED_FLOOR: f64 = 38.2 / 14.2;
pub const UNTUNED_FLOOR_ROWS: f64 = 16.0;

/// The untuned-config window this deployment falls in, if any.
pub fn untuned(hw: &HardwareProfile, model: &ModelSpec, version: Version) -> Option<UntunedMoe> {
    let moe = model.moe.as_ref()?;
    let shared = moe.shared_expert_intermediate_size > 0;
    UNTUNED_MOE
        .iter()
        .find(|u| {
            u.arch == hw.arch
                && shared
                && moe.num_experts == u.routed_experts
                && version >= u.since
                && version < u.until
        })
        .copied()
}

/// The untuned kernel time from the tuned one at the step's rows (`tuned_ns`) and at
/// [`UNTUNED_FLOOR_ROWS`] (`tuned_floor_rows_ns`).
pub fn untuned_ns(tuned_ns: f64, tuned_floor_rows_ns: f64) -> f64 {
    if tuned_ns <= 0.0 {
        return 0.0;
    }
    (UNTUNED_TAIL * tuned_ns).max(UNTUNED_FLOOR * tuned_floor_rows_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduces_the_measured_default_kernel_times() {
        // PR #3272's tuned times at m = 16, 64, 256 give back its default times.
        let t16 = 14.2;
        for (tuned, default) in [(14.2, 38.2), (25.6, 38.2), (57.5, 62.2)] {
            let u = untuned_ns(tuned, t16);
            assert!(
                (u - default).abs() / default < 0.01,
                "{tuned}: {u} vs {default}"
            );
            assert!(u >= tuned);
        }
        assert_eq!(untuned_ns(0.0, t16), 0.0);
    }
}
