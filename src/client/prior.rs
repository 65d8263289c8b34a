//! Radix-cache hits from earlier runs on the same server (`--prior-runs`, `spec::prior_runs`).
//!
//! bench_serving's `random` dataset (`sample_random_requests`) shuffles the ShareGPT pairs with
//! Python's `random` seeded by `--seed`, independently of `--num-prompts` and the lengths, and
//! builds prompt `i` from the `i`-th non-empty first turn, truncated or repeated
//! (`(ids * ratio)[:L]`) to the drawn length `L_i`. Its numpy draws are sequential, so the first
//! `k` input lengths of a run of `N ≥ k` prompts do not depend on `N` either. Two runs with the
//! same seed therefore send, at the same index, prompts of which the shorter is a prefix of the
//! longer (as token ids; the text is decoded and re-tokenized by the server, which can change
//! the token at the cut). SGLang's radix cache (on by default) keeps every finished request's
//! prompt and output, and bench_serving flushes it only with `--flush-cache` (or in SGLang's
//! CI), so request `i` finds `min(L_i, P_i)` tokens cached, where `P_i` is the longest earlier
//! prompt of index `i` still held; one token less when the lengths differ (the re-tokenized
//! cut).
//!
//! What is still held: SGLang evicts least-recently-used leaves, so the cache keeps the newest
//! requests' prompts and outputs up to the KV pool. Requests are walked newest first (later
//! runs, and within a run later indices, finish later), each adding its output and the part
//! of its prompt no newer request of the same index already holds, until the pool is full.
//! Eviction during this run by its own requests is not modelled (the hits matter most for the
//! first requests, which arrive before this run has filled anything).
//!
//! Data parallelism: each DP rank has its own radix cache, and SGLang's `DataParallelController`
//! (`round_robin_scheduler`, the default `--load-balance-method`) hands every generate request,
//! warm-ups included, to the next rank in turn (read in the 0.5.9 wheel; its start-up warm-up
//! sends one request per rank, so a fresh server's counter is back at rank 0). A run of `w`
//! warm-ups and `N` requests therefore moves the counter by `w + N`, and prompt `i` of an
//! earlier run sits on the rank of this run's request `i` only when the runs between them moved
//! the counter by a multiple of the DP size ([`RoundRobinRanks`]).
use super::dataset::random::sample_random_lengths;
use crate::spec::prior_runs::PriorRun;

/// Where SGLang's round-robin DP controller sends each request of a sequence of runs on one
/// server: `dp` ranks, `warmups` warm-up requests before each run's requests (each earlier run
/// is assumed to have sent as many as this one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundRobinRanks {
    pub dp: usize,
    pub warmups: u64,
}

impl RoundRobinRanks {
    /// One rank (no data parallelism): every request on rank 0.
    pub const SINGLE: RoundRobinRanks = RoundRobinRanks { dp: 1, warmups: 0 };

    /// The counter (mod `dp`) when the first warm-up of the run after `runs` arrives.
    pub fn counter_after(&self, runs: &[PriorRun]) -> usize {
        let dp = self.dp.max(1) as u64;
        let moved = runs.iter().fold(0u64, |acc, r| {
            (acc + (self.warmups + r.num_prompts) % dp) % dp
        });
        moved as usize
    }

    /// The rank of request 0 of the run after `runs`: where the router starts.
    pub fn first_rank(&self, runs: &[PriorRun]) -> usize {
        self.rank_of(self.counter_after(runs), 0)
    }

    /// The rank of request `i` of a run whose first warm-up found the counter at `start`.
    pub fn rank_of(&self, start: usize, i: usize) -> usize {
        let dp = self.dp.max(1) as u64;
        ((start as u64 + self.warmups % dp + i as u64 % dp) % dp) as usize
    }

    /// True when one of the run's warm-ups (request 0's prompt) landed on request 0's rank:
    /// never with fewer warm-ups than ranks, always on one rank.
    pub fn warmup_shares_rank_of_request_0(&self) -> bool {
        self.dp <= 1 || self.warmups >= self.dp as u64
    }
}

/// How an earlier run's random prompts are drawn and counted: bench_serving's `--seed`, whether
/// its output lengths are at least 1 (≥ 0.5.6.post2), and the special tokens it takes off each
/// drawn prompt length (`dataset::random_special_tokens`), as for this run's prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PriorDraws {
    pub seed: u32,
    pub output_min_one: bool,
    pub less_special: u64,
}

/// The longest earlier prompt of each index `0..n` still in a cache of `capacity_tokens` (0
/// where none is), for earlier runs drawn and counted as `draws` says. Under round-robin data
/// parallelism (`ranks`) request `i` of this run finds only what the earlier requests routed
/// to its own rank left there, each rank's cache holding `capacity_tokens` (the newest
/// requests first); on one rank every earlier run counts.
pub fn held_prompt_lens(
    runs: &[PriorRun],
    draws: PriorDraws,
    n: usize,
    capacity_tokens: u64,
    ranks: RoundRobinRanks,
) -> Vec<u64> {
    let PriorDraws {
        seed,
        output_min_one,
        less_special,
    } = draws;
    let dp = ranks.dp.max(1);
    let now = ranks.counter_after(runs);
    let mut held = vec![0u64; n];
    let mut used = vec![0u64; dp];
    let mut full = vec![false; dp];
    for (k, run) in runs.iter().enumerate().rev() {
        let start = ranks.counter_after(&runs[..k]);
        let lengths = sample_random_lengths(
            seed,
            run.num_prompts,
            run.input_len,
            run.output_len,
            run.range_ratio,
            output_min_one,
        );
        for (i, &(drawn, output)) in lengths.iter().enumerate().rev() {
            let prompt = drawn.saturating_sub(less_special).max(1);
            let rank = ranks.rank_of(start, i);
            if full[rank] {
                continue;
            }
            // Only a same-index prompt on this run's request-i rank is a hit; the others still
            // fill their rank's cache.
            let same_rank = i < n && ranks.rank_of(now, i) == rank;
            let newer = if same_rank { held[i] } else { 0 };
            let add = prompt.saturating_sub(newer).saturating_add(output);
            if used[rank].saturating_add(add) > capacity_tokens {
                full[rank] = true;
                if full.iter().all(|&f| f) {
                    return held;
                }
                continue;
            }
            used[rank] += add;
            if same_rank {
                held[i] = newer.max(prompt);
            }
        }
    }
    held
}

/// Tokens of a `prompt_len`-token prompt found in the cache when an earlier prompt of the same
/// index and `held` tokens is there: the common prefix, less the re-tokenized cut.
pub fn cached_prefix(prompt_len: u64, held: u64) -> u64 {
    let common = prompt_len.min(held);
    if prompt_len == held {
        common
    } else {
        common.saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 1, bench_serving before 0.5.6.post2, no special tokens taken off.
    const DRAWS: PriorDraws = PriorDraws {
        seed: 1,
        output_min_one: false,
        less_special: 0,
    };
    const ONE: RoundRobinRanks = RoundRobinRanks::SINGLE;

    fn run(n: u64, input: u64, output: u64) -> PriorRun {
        PriorRun {
            num_prompts: n,
            input_len: input,
            output_len: output,
            range_ratio: 0.0,
        }
    }

    #[test]
    fn same_index_prompts_of_a_smaller_run_are_the_larger_runs_first_ones() {
        // bench_serving 0.5.6, seed 1, random 1000/1000 ratio 0: the first inputs of the
        // 10- and 80-prompt runs (totals 6101 and 39668 in the SGLang cookbook's logs).
        let ten = sample_random_lengths(1, 10, 1000, 1000, 0.0, false);
        let eighty = sample_random_lengths(1, 80, 1000, 1000, 0.0, false);
        assert_eq!(ten.iter().map(|l| l.0).sum::<u64>(), 6101);
        assert_eq!(eighty.iter().map(|l| l.0).sum::<u64>(), 39668);
        let held = held_prompt_lens(&[run(10, 1000, 1000)], DRAWS, 80, u64::MAX, ONE);
        for i in 0..10 {
            assert_eq!(held[i], eighty[i].0, "index {i}");
            assert_eq!(cached_prefix(eighty[i].0, held[i]), eighty[i].0);
        }
        assert!(held[10..].iter().all(|&h| h == 0));
    }

    #[test]
    fn a_full_pool_keeps_the_newest_requests_only() {
        let a = sample_random_lengths(1, 3, 100, 10, 0.0, false);
        // Room for the newest request only (index 2: its prompt and output).
        let cap = a[2].0 + a[2].1;
        let held = held_prompt_lens(&[run(3, 100, 10)], DRAWS, 3, cap, ONE);
        assert_eq!(held, vec![0, 0, a[2].0]);
        // A later run's longer prompt of index 0 covers the earlier one's: it adds nothing.
        let held = held_prompt_lens(&[run(1, 50, 0), run(1, 50, 0)], DRAWS, 1, 50, ONE);
        assert_eq!(held[0], sample_random_lengths(1, 1, 50, 0, 0.0, false)[0].0);
    }

    /// benchmaq's TP4×DP2 sweep (p010-benchmaq-notes §2): 1 warm-up + 100 requests a run, so
    /// the counter moves by 101 (odd) a run and prompt i of the run just before sits on the
    /// other rank; two runs back it is on the same rank again.
    #[test]
    fn under_dp2_round_robin_only_runs_an_even_distance_back_share_a_rank() {
        let ranks = RoundRobinRanks { dp: 2, warmups: 1 };
        let r = |n| run(n, 1000, 128);
        assert_eq!(ranks.counter_after(&[r(100)]), 1);
        assert_eq!(ranks.counter_after(&[r(100), r(100)]), 0);
        // Fresh server: warm-up on rank 0, request 0 on rank 1, request 1 on rank 0.
        assert_eq!(ranks.rank_of(0, 0), 1);
        assert_eq!(ranks.rank_of(0, 1), 0);
        assert!(!ranks.warmup_shares_rank_of_request_0());
        assert!(RoundRobinRanks { dp: 2, warmups: 2 }.warmup_shares_rank_of_request_0());
        let one_back = held_prompt_lens(&[r(100)], DRAWS, 100, u64::MAX, ranks);
        assert!(one_back.iter().all(|&h| h == 0), "{one_back:?}");
        let two_back = held_prompt_lens(&[r(100), r(100)], DRAWS, 100, u64::MAX, ranks);
        let lens = sample_random_lengths(1, 100, 1000, 128, 0.0, false);
        for i in 0..100 {
            assert_eq!(two_back[i], lens[i].0, "index {i}");
        }
        // One rank: every earlier run counts, as before.
        let single = held_prompt_lens(&[r(100)], DRAWS, 100, u64::MAX, ONE);
        assert_eq!(single[5], lens[5].0);
        // An even run length (100 warm-ups... here 99 + 1) keeps the ranks aligned.
        let even = held_prompt_lens(&[r(99)], DRAWS, 99, u64::MAX, ranks);
        assert!(even.iter().zip(&lens).all(|(h, l)| *h == l.0));
    }

    #[test]
    fn a_cut_costs_one_token() {
        assert_eq!(cached_prefix(500, 300), 299);
        assert_eq!(cached_prefix(300, 500), 299);
        assert_eq!(cached_prefix(300, 300), 300);
        assert_eq!(cached_prefix(300, 0), 0);
    }
}
