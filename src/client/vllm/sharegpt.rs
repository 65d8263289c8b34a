//! `--dataset-name sharegpt` as vLLM's benchmark clients select it, over the same token
//! counts as bench_serving's ShareGPT (the bundled SAMPLE tables, or the user's file with
//! `--dataset-path FILE --tokenizer tokenizer.json`; see `client::dataset::sharegpt`).
//!
//! The selection, read from vLLM's released sources (`sample_sharegpt_requests` in
//! `benchmarks/benchmark_serving.py` 0.6.x–0.7.x; `ShareGPTDataset` in
//! `benchmarks/benchmark_dataset.py` 0.8.0–0.10.1 and `vllm/benchmarks/datasets.py` 0.9.2+):
//!
//! 1. the conversations with at least two turns, as (turn 0, turn 1), in file order;
//! 2. `random.seed(seed)`; `random.shuffle(pairs)` (CPython's generator), skipped under
//!    `--disable-shuffle` (0.11.2+);
//! 3. walk the list until `--num-prompts` pairs are accepted by `is_valid_sequence`: drop
//!    prompt < 4 tokens, output < 4 (only without `--sharegpt-output-len`), prompt > 1024,
//!    prompt + output > 2048 (the caps hold even with a fixed output length);
//! 4. when fewer than `--num-prompts` survive, oversample ([`Oversample`]) unless
//!    `--no-oversample` (0.11.0+): `random.seed(seed)` again, then `random.choices(rows,
//!    k=missing)` (legacy 0.8.5–0.10.1, CLI 0.9.2–0.11.0) or one `random.choice(rows)` per
//!    missing row (CLI 0.11.2+); the 0.6.x–0.8.0 scripts send what survived.
//!
//! Counts are `len(tokenizer(text).input_ids)`, special tokens included (the Llama-3 BOS is
//! in both the prompt and the completion count), which is also what the server counts.
use super::flavour::{Script, VllmFlavour};
use crate::client::rng::PyRandom;
use crate::spec::version::Version;

/// How missing rows are refilled when the filter leaves fewer than `--num-prompts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oversample {
    /// `sample_sharegpt_requests` (legacy ≤0.7.x) and `ShareGPTDataset` of legacy 0.8.0:
    /// the run has fewer requests.
    Never,
    /// `random.choices(rows, k=missing)` after `random.seed(seed)`.
    Choices,
    /// `random.choice(rows)` once per missing row after `random.seed(seed)` (CLI 0.11.2+).
    ChoiceEach,
}

/// The first legacy release sampled with `maybe_oversample_requests` (0.8.0 has none).
pub const LEGACY_OVERSAMPLE_FROM: Version = Version::new(0, 8, 5);
/// The first `vllm bench serve` with datasets other than `random`.
pub const CLI_DATASETS_FROM: Version = Version::new(0, 9, 2);
/// `--no-oversample` appears (CLI).
pub const NO_OVERSAMPLE_FROM: Version = Version::new(0, 11, 0);
/// `--disable-shuffle` appears, and oversampling switches to `random.choice` (CLI).
pub const DISABLE_SHUFFLE_FROM: Version = Version::new(0, 11, 2);

/// The oversampling rule of `flavour`.
pub fn oversample_of(flavour: &VllmFlavour) -> Oversample {
    match flavour.script {
        Script::Legacy if flavour.version < LEGACY_OVERSAMPLE_FROM => Oversample::Never,
        Script::Legacy => Oversample::Choices,
        Script::Cli if flavour.version < DISABLE_SHUFFLE_FROM => Oversample::Choices,
        Script::Cli => Oversample::ChoiceEach,
    }
}

/// Everything vLLM's ShareGPT selection depends on besides the token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VllmShareGpt {
    pub num_prompts: u64,
    /// `--seed` (CPython `random.seed`).
    pub seed: u64,
    /// `--sharegpt-output-len`.
    pub fixed_output_len: Option<u64>,
    /// False under `--disable-shuffle`.
    pub shuffle: bool,
    pub oversample: Oversample,
}

impl VllmShareGpt {
    /// `is_valid_sequence(prompt, output, skip_min_output_len_check=fixed)`: the
    /// (prompt, output) lengths of one pair if kept.
    pub fn accept(&self, prompt_tokens: u64, completion_tokens: u64) -> Option<(u64, u64)> {
        let p = prompt_tokens;
        let o = self.fixed_output_len.unwrap_or(completion_tokens);
        let short = p < 4 || (self.fixed_output_len.is_none() && o < 4);
        let long = p > 1024 || p.saturating_add(o) > 2048;
        (!short && !long).then_some((p, o))
    }

    /// The selected (prompt, output) lengths, in send order, from `pairs` in file order.
    pub fn select(&self, pairs: &[(u32, u32)]) -> Vec<(u64, u64)> {
        self.select_with_sources(pairs)
            .into_iter()
            .map(|(p, o, _)| (p, o))
            .collect()
    }

    /// [`Self::select`], each row with the index of the filtered row it copies (its own
    /// index, or for an oversampled repeat the row drawn): a repeat is the same prompt text,
    /// which a prefix cache serves.
    pub fn select_with_sources(&self, pairs: &[(u32, u32)]) -> Vec<(u64, u64, usize)> {
        let mut order: Vec<u32> = (0..pairs.len() as u32).collect();
        if self.shuffle {
            PyRandom::new(self.seed).shuffle(&mut order);
        }
        let want = usize::try_from(self.num_prompts).unwrap_or(usize::MAX);
        let mut rows: Vec<(u64, u64, usize)> = order
            .iter()
            .filter_map(|&i| {
                let (p, o) = pairs[i as usize];
                self.accept(u64::from(p), u64::from(o))
            })
            .take(want)
            .enumerate()
            .map(|(k, (p, o))| (p, o, k))
            .collect();
        let missing = want - rows.len();
        if missing == 0 || rows.is_empty() {
            // With nothing to draw from, `random.choices` returns [] (and `random.choice`
            // raises; the run then has no requests, which the caller refuses).
            return rows;
        }
        let mut rng = PyRandom::new(self.seed);
        let n = rows.len();
        match self.oversample {
            Oversample::Never => {}
            Oversample::Choices => {
                // CPython: [population[floor(random() * n)] for i in range(k)]
                for _ in 0..missing {
                    let i = (rng.random() * n as f64).floor() as usize;
                    rows.push(rows[i.min(n - 1)]);
                }
            }
            Oversample::ChoiceEach => {
                // CPython: seq[_randbelow(len(seq))] over the rows that survived the filter
                // (the list does not grow while the additions are drawn).
                for _ in 0..missing {
                    let i = rng.randbelow(n as u64) as usize;
                    rows.push(rows[i]);
                }
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(fixed: Option<u64>, over: Oversample, n: u64) -> VllmShareGpt {
        VllmShareGpt {
            num_prompts: n,
            seed: 1,
            fixed_output_len: fixed,
            shuffle: true,
            oversample: over,
        }
    }

    #[test]
    fn filter_is_is_valid_sequence() {
        let s = sel(None, Oversample::Never, 10);
        assert_eq!(s.accept(3, 100), None);
        assert_eq!(s.accept(4, 3), None);
        assert_eq!(s.accept(4, 4), Some((4, 4)));
        assert_eq!(s.accept(1025, 4), None);
        assert_eq!(s.accept(1024, 1024), Some((1024, 1024)));
        assert_eq!(s.accept(1024, 1025), None);
        // A fixed output skips the minimum-output check but not the total cap (unlike
        // sglang.bench_serving before 0.4.3).
        let fixed = sel(Some(1500), Oversample::Never, 10);
        assert_eq!(fixed.accept(548, 3), Some((548, 1500)));
        assert_eq!(fixed.accept(549, 3), None);
        assert_eq!(
            sel(Some(1), Oversample::Never, 1).accept(9, 0),
            Some((9, 1))
        );
    }

    #[test]
    fn shuffle_walk_and_oversampling() {
        // CPython: random.seed(1); a = list(range(10)); random.shuffle(a)
        //   -> [6, 8, 9, 7, 5, 3, 0, 4, 1, 2]
        let pairs: Vec<(u32, u32)> = (0..10).map(|i| (10 + i, 5)).collect();
        let got =
            |s: VllmShareGpt| -> Vec<u64> { s.select(&pairs).iter().map(|r| r.0 - 10).collect() };
        assert_eq!(got(sel(None, Oversample::Never, 4)), [6, 8, 9, 7]);
        assert_eq!(got(sel(None, Oversample::Never, 12)).len(), 10);
        // ...; random.seed(1); random.choices(a, k=2) -> [8, 1]
        let choices = got(sel(None, Oversample::Choices, 12));
        assert_eq!(choices[10..], [8, 1]);
        // ...; random.seed(1); [random.choice(a) for _ in range(2)] -> [9, 2]
        let each = got(sel(None, Oversample::ChoiceEach, 12));
        assert_eq!(each[10..], [9, 2]);
        let mut unshuffled = sel(None, Oversample::Never, 3);
        unshuffled.shuffle = false;
        assert_eq!(got(unshuffled), [0, 1, 2]);
    }
}
