//! `--dataset-name generated-shared-prefix`: bench_serving's
//! `sample_generated_shared_prefix_requests`, traffic whose prompts share long system
//! prompts.
//!
//! bench_serving (0.4.1 to 0.5.6, same algorithm), with CPython's `random` seeded by `--seed`:
//!
//! 1. one system prompt per group: `random.choices(vocab, k=system_prompt_len)`, decoded;
//! 2. one question per (group, prompt): `random.choices(vocab, k=question_len)`, decoded;
//! 3. rows in group-major order, prompt `f"{system_prompt}\n\n{question}"`;
//! 4. `random.shuffle(rows)`.
//!
//! `random.choices` without weights draws one `random()` (two 32-bit words) per token, so
//! the shuffle starts `2 × (G·S + G·P·Q)` words into the stream whatever the vocabulary:
//! the order here is bench_serving's exactly. `--num-prompts` is ignored (there are G·P
//! rows), as in bench_serving.
//!
//! Lengths are nominal: bench_serving reports `len(tokenizer.encode(prompt))` of decoded
//! random tokens, which re-tokenize to roughly, not exactly, as many tokens. Here a prompt
//! is `system_prompt_len + 1 + question_len` tokens (the `"\n\n"` separator counted as one
//! token). Every row of group `g` gets `prefix_group = g` and `prefix_len =
//! system_prompt_len`: the radix cache can serve the system prompt to all but the first
//! request of a group that reaches the server while it is cached.
use super::DatasetRow;
use crate::client::rng::PyRandom;
use crate::error::{Error, Result};

/// Tokens counted for the `"\n\n"` between system prompt and question.
pub const SEPARATOR_TOKENS: u64 = 1;

/// Most `random()` calls replayed to reach the shuffle (about a minute of work).
const MAX_DRAWS: u64 = 1 << 34;
/// Most rows (requests) generated.
const MAX_ROWS: u64 = 1 << 24;

pub use crate::spec::workload::GspConfig;

impl GspConfig {
    /// Rows in bench_serving's (shuffled) order for `--seed seed`.
    pub fn rows(&self, seed: u64) -> Result<Vec<DatasetRow>> {
        let too_large = || {
            Error::invalid(
                "--dataset-name generated-shared-prefix",
                "gsp",
                format!(
                    "{} groups × {} prompts of {} + {} tokens is too large to reproduce \
                     bench_serving's order",
                    self.num_groups,
                    self.prompts_per_group,
                    self.system_prompt_len,
                    self.question_len
                ),
            )
        };
        let n = self
            .num_groups
            .checked_mul(self.prompts_per_group)
            .filter(|&n| n <= MAX_ROWS)
            .ok_or_else(too_large)?;
        let draws = self
            .num_groups
            .checked_mul(self.system_prompt_len)
            .zip(n.checked_mul(self.question_len))
            .and_then(|(a, b)| a.checked_add(b))
            .filter(|&d| d <= MAX_DRAWS)
            .ok_or_else(too_large)?;
        let mut rng = PyRandom::new(seed);
        for _ in 0..draws {
            rng.random();
        }
        let prompt_len = self.system_prompt_len + SEPARATOR_TOKENS + self.question_len;
        let mut rows: Vec<DatasetRow> = (0..self.num_groups)
            .flat_map(|g| {
                (0..self.prompts_per_group).map(move |_| DatasetRow {
                    prompt_len,
                    output_len: self.output_len,
                    dispatch_ns: None,
                    prefix_group: Some(g),
                    prefix_len: self.system_prompt_len,
                })
            })
            .collect();
        rng.shuffle(&mut rows);
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_prefixes() {
        let c = GspConfig {
            num_groups: 3,
            prompts_per_group: 4,
            system_prompt_len: 100,
            question_len: 10,
            output_len: 7,
        };
        let rows = c.rows(1).unwrap();
        assert_eq!(rows.len(), 12);
        for g in 0..3 {
            assert_eq!(rows.iter().filter(|r| r.prefix_group == Some(g)).count(), 4);
        }
        assert!(rows
            .iter()
            .all(|r| r.prompt_len == 111 && r.prefix_len == 100 && r.output_len == 7));
        assert_eq!(c.rows(1).unwrap(), rows);
    }

    #[test]
    fn absurd_sizes_are_errors() {
        let c = GspConfig {
            num_groups: u64::MAX,
            ..GspConfig::default()
        };
        assert!(c.rows(1).is_err());
    }
}
