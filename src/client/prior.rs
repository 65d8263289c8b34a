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
use super::dataset::random::sample_random_lengths;
use crate::spec::prior_runs::PriorRun;

/// The longest earlier prompt of each index `0..n` still in a cache of `capacity_tokens`
/// (0 where none is), for runs drawn with `seed` (`output_min_one`: bench_serving ≥ 0.5.6.post2).
pub fn held_prompt_lens(
    runs: &[PriorRun],
    seed: u32,
    output_min_one: bool,
    n: usize,
    capacity_tokens: u64,
) -> Vec<u64> {
    let mut held = vec![0u64; n];
    let mut used: u64 = 0;
    for run in runs.iter().rev() {
        let lengths = sample_random_lengths(
            seed,
            run.num_prompts,
            run.input_len,
            run.output_len,
            run.range_ratio,
            output_min_one,
        );
        for (i, &(prompt, output)) in lengths.iter().enumerate().rev() {
            let newer = held.get(i).copied().unwrap_or(0);
            let add = prompt.saturating_sub(newer).saturating_add(output);
            if used.saturating_add(add) > capacity_tokens {
                return held;
            }
            used += add;
            if let Some(h) = held.get_mut(i) {
                *h = newer.max(prompt);
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
        let held = held_prompt_lens(&[run(10, 1000, 1000)], 1, false, 80, u64::MAX);
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
        let held = held_prompt_lens(&[run(3, 100, 10)], 1, false, 3, cap);
        assert_eq!(held, vec![0, 0, a[2].0]);
        // A later run's longer prompt of index 0 covers the earlier one's: it adds nothing.
        let held = held_prompt_lens(&[run(1, 50, 0), run(1, 50, 0)], 1, false, 1, 50);
        assert_eq!(held[0], sample_random_lengths(1, 1, 50, 0, 0.0, false)[0].0);
    }

    #[test]
    fn a_cut_costs_one_token() {
        assert_eq!(cached_prefix(500, 300), 299);
        assert_eq!(cached_prefix(300, 500), 299);
        assert_eq!(cached_prefix(300, 300), 300);
        assert_eq!(cached_prefix(300, 0), 0);
    }
}
