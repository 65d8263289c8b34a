//! Scheduler rules SGLang changed after 0.5.15, each at the release that changed it (read from
//! the PyPI packages' `managers/schedule_policy.py` and `managers/scheduler.py`). bench_serving
//! sends every request with `ignore_eos` and servesim's requests always stop at their length,
//! so both rules apply to every simulated request.
use super::version::Version;

/// First release reserving a running `ignore_eos` request's whole remaining output in the
/// PrefillAdder instead of `remaining × new_token_ratio` (schedule_policy.py at v0.5.22,
/// `_get_running_request_total_token_offset`: "Fixed-length requests cannot benefit from the
/// early-EOS estimate", `ratio = 1.0 if req.sampling_params.ignore_eos`).
pub const IGNORE_EOS_FULL_RESERVE_FROM: Version = Version::new(0, 5, 22);

/// First release whose overlap scheduler leaves a request out of the next decode batch when
/// the result in flight finishes it by length (scheduler.py at v0.5.22,
/// `_reqs_finishing_inflight`, on in `event_loop_overlap`): it no longer rides one more decode
/// step; a decode step that does not fit while such requests finish waits for their KV
/// instead of retracting.
pub const SKIP_FINISHING_DECODE_FROM: Version = Version::new(0, 5, 22);

/// The ratio the PrefillAdder applies to running requests' remaining outputs.
pub fn running_reserve_ratio(version: Version, new_token_ratio: f64) -> f64 {
    if version >= IGNORE_EOS_FULL_RESERVE_FROM {
        1.0
    } else {
        new_token_ratio
    }
}

/// Whether a request that finished in a decode step still rides the next decode step under
/// the overlap scheduler (`overlap`: the overlap scheduler is on).
pub fn finished_rides_next_decode(version: Version, overlap: bool) -> bool {
    overlap && version < SKIP_FINISHING_DECODE_FROM
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_change_at_0_5_22() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert_eq!(running_reserve_ratio(v("0.5.21"), 0.4), 0.4);
        assert_eq!(running_reserve_ratio(v("0.5.22"), 0.4), 1.0);
        assert!(finished_rides_next_decode(v("0.5.21"), true));
        assert!(!finished_rides_next_decode(v("0.5.22"), true));
        assert!(!finished_rides_next_decode(v("0.5.13"), false));
    }
}
