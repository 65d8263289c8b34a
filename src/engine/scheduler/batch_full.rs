//! When SGLang clears `batch_is_full` after requests finish in a decode step. The flag stops
//! every prefill attempt (`get_new_batch_prefill` returns at once while it is set), and only
//! `update_running_batch` clears it, when `filter_batch` drops finished requests — which runs
//! after that iteration's prefill attempt (`get_next_batch_to_run`, scheduler.py at v0.5.1
//! lines 1489–1506 and 1679–1713; the same order in every release read, 0.4.0 to 0.5.23).
//! So requests that finish in decode step k free room for a prefill at the earliest:
//! - without the overlap scheduler, in iteration k + 2 (iteration k + 1 decodes the rest of
//!   the batch and clears the flag);
//! - with the overlap scheduler before 0.5.22, in iteration k + 3: iteration k + 1 is formed
//!   before step k's results are known (the finished requests ride it), iteration k + 2 filters
//!   them and clears the flag;
//! - with the overlap scheduler from 0.5.22, in iteration k + 2: `_reqs_finishing_inflight`
//!   drops the requests that step k finishes by length from iteration k + 1's batch.
//!
//! A request finishing at its prefill is filtered when the prefill batch is merged, before the
//! next prefill attempt (scheduler.py v0.5.1 lines 1474–1478), so that clears the flag at once.
use crate::spec::version::Version;
use crate::spec::version_rules;

/// How many iterations after the decode step in which requests finished their
/// `update_running_batch` can first filter them (1 = the next iteration's), whether or not
/// the iterations between run a prefill.
pub fn clear_after_decodes(version: Version, overlap: bool) -> u8 {
    if version_rules::finished_rides_next_decode(version, overlap) {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::request::Phase;
    use crate::engine::scheduler::Scheduler;
    use crate::spec::bundled::{load_hardware, load_model};
    use crate::spec::server::{ServerConfig, ServerFlags};

    /// The iteration (1-based) that prefills a waiting request, when the running batch is
    /// full and one of its two requests finishes in iteration 1's decode step.
    fn first_prefill_iteration(version: &str, overlap: bool) -> usize {
        let flags = ServerFlags {
            sglang_version: Some(version.parse().unwrap()),
            disable_overlap_schedule: !overlap,
            ..Default::default()
        };
        let hw = load_hardware("h100-sxm5-80gb").unwrap();
        let cfg = ServerConfig::resolve(&flags, &hw, &load_model("qwen2.5-0.5b").unwrap()).unwrap();
        assert_eq!(cfg.overlap_schedule, overlap);
        let mut s = Scheduler::new(&cfg, None);
        for (i, max_new) in [2, 100].into_iter().enumerate() {
            let id = s.add_request(10, max_new);
            s.reqs[id].phase = Phase::Running;
            s.running.join(id, 11, 1, 10, max_new, i as u64);
            s.allocate(11);
        }
        let waiting = s.add_request(10, 10);
        s.arrive(waiting);
        s.batch_is_full = true; // the last admission ran out of tokens
        for iteration in 1..10 {
            let b = s.next_batch().unwrap();
            if !b.prefill.is_empty() {
                return iteration;
            }
            s.complete(&b);
        }
        panic!("never prefilled");
    }

    /// Iterations as P (prefill) / D (decode) with the running cap at 4: four running requests
    /// finishing one per decode step, ten waiting.
    fn pattern(version: &str) -> String {
        let flags = ServerFlags {
            sglang_version: Some(version.parse().unwrap()),
            max_running_requests: Some(4),
            ..Default::default()
        };
        let hw = load_hardware("h100-sxm5-80gb").unwrap();
        let cfg = ServerConfig::resolve(&flags, &hw, &load_model("qwen2.5-0.5b").unwrap()).unwrap();
        let mut s = Scheduler::new(&cfg, None);
        for (i, max_new) in [2, 3, 4, 5].into_iter().enumerate() {
            let id = s.add_request(10, max_new);
            s.reqs[id].phase = Phase::Running;
            s.running.join(id, 11, 1, 10, max_new, i as u64);
            s.allocate(11);
        }
        for _ in 0..10 {
            let id = s.add_request(10, 50);
            s.arrive(id);
        }
        (0..6)
            .map(|_| {
                let b = s.next_batch().unwrap();
                s.complete(&b);
                if b.prefill.is_empty() {
                    'D'
                } else {
                    'P'
                }
            })
            .collect()
    }

    #[test]
    fn a_prefill_between_does_not_delay_the_clear() {
        // 0.5.1 overlap, by hand: iteration 1 hits the cap (flag set) and decodes, finishing A;
        // A rides 2 (B finishes); 3 filters A and clears; 4 prefills up to the cap (flag set);
        // 5 filters B and C (their results were processed in 3 and 4) and clears; 6 prefills.
        assert_eq!(pattern("0.5.1"), "DDDPDP");
    }

    #[test]
    fn a_finish_frees_admission_two_or_three_iterations_later() {
        // Iteration 1 finishes the first request. Normal loop: iteration 2 filters it and
        // clears the flag after its prefill attempt, iteration 3 prefills.
        assert_eq!(first_prefill_iteration("0.5.1", false), 3);
        // Overlap before 0.5.22: it rides iteration 2, iteration 3 filters it.
        assert_eq!(first_prefill_iteration("0.5.1", true), 4);
        // Overlap from 0.5.22: iteration 2 already leaves it out.
        assert_eq!(first_prefill_iteration("0.5.22", true), 3);
    }

    #[test]
    fn overlap_delays_the_clear_one_more_step_until_0_5_22() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert_eq!(clear_after_decodes(v("0.5.1"), true), 2);
        assert_eq!(clear_after_decodes(v("0.5.1"), false), 1);
        assert_eq!(clear_after_decodes(v("0.5.21"), true), 2);
        assert_eq!(clear_after_decodes(v("0.5.22"), true), 1);
    }
}
