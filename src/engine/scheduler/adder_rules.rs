//! The PrefillAdder rules SGLang changed between releases, each keyed to the first release
//! with the new rule (read line by line in the PyPI wheels' `managers/schedule_policy.py`,
//! 0.4.0 through 0.5.23). What did not change is stated here too, so the adder cites one place:
//! - `_update_prefill_budget` reserves an admitted request's whole `max_new_tokens`
//!   (clipped to `CLIP_MAX_NEW_TOKENS`), not what is left of it, in every release read:
//!   `add_one_req` (0.5.1 line 545, 0.5.10 line 810, 0.5.23 line 1636:
//!   `min(req.sampling_params.max_new_tokens, CLIP_MAX_NEW_TOKENS)`), `add_chunked_req` on
//!   its last chunk and `add_one_req_ignore_eos`. A retracted request, re-admitted with `output_ids` kept,
//!   therefore reserves its outputs twice over (its fill holds them, and the reservation
//!   counts them again).
use crate::spec::version::Version;

/// First release whose `add_one_req` NO_TOKEN check charges a request its remaining outputs,
/// `max(max_new_tokens − len(output_ids), 0)` (schedule_policy.py at v0.5.4); up to 0.5.3 it
/// charges the whole `max_new_tokens` (`total_tokens = req.extend_input_len +
/// min(req.sampling_params.max_new_tokens, CLIP_MAX_NEW_TOKENS)`, 0.5.1 line 501).
pub const REMAINING_OUTPUT_CHECK_FROM: Version = Version::new(0, 5, 4);

/// First release whose `add_chunked_req` truncates the chunked request to
/// `min(rem_chunk_tokens, int(rem_total_tokens))` (schedule_policy.py at v0.5.2, line 383); up
/// to 0.5.1 it takes `min(extend_input_len, rem_chunk_tokens)` whatever the memory budget.
pub const CHUNK_CAPPED_BY_TOTAL_FROM: Version = Version::new(0, 5, 2);

/// The release-dependent choices of one [`super::adder::PrefillAdder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdderRules {
    /// `add_one_req`'s check charges the remaining outputs (else the whole `max_new_tokens`).
    pub check_remaining_outputs: bool,
    /// `add_chunked_req` caps the chunk by the memory budget `rem_total_tokens`.
    pub chunk_capped_by_total: bool,
}

impl AdderRules {
    /// The rules of SGLang `version`.
    pub fn of(version: Version) -> Self {
        AdderRules {
            check_remaining_outputs: version >= REMAINING_OUTPUT_CHECK_FROM,
            chunk_capped_by_total: version >= CHUNK_CAPPED_BY_TOTAL_FROM,
        }
    }
}

impl Default for AdderRules {
    /// The newest rules (what the adder did before it was keyed by release).
    fn default() -> Self {
        AdderRules {
            check_remaining_outputs: true,
            chunk_capped_by_total: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_change_at_0_5_2_and_0_5_4() {
        let v = |s: &str| AdderRules::of(s.parse().unwrap());
        assert_eq!(
            v("0.5.1"),
            AdderRules {
                check_remaining_outputs: false,
                chunk_capped_by_total: false
            }
        );
        assert!(v("0.5.2").chunk_capped_by_total && !v("0.5.3").check_remaining_outputs);
        assert!(v("0.5.4").check_remaining_outputs);
        assert_eq!(v("0.5.10"), AdderRules::default());
    }
}
