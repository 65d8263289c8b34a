//! `--dataset-name prefix_repetition` (`PrefixRepetitionRandomDataset`, `vllm bench serve`
//! 0.10.1+): `num_prefixes` random prefixes of `prefix_len` tokens, each followed by
//! `N // num_prefixes` random suffixes of `suffix_len` tokens, so prompts of one prefix share
//! their first `prefix_len` tokens (what a prefix cache reuses). As vLLM's source does it:
//!
//! 1. `random.seed(seed); np.random.seed(seed)` when the dataset is built;
//! 2. `prompts_per_prefix = N // num_prefixes` (a ValueError when 0), so the run has
//!    `num_prefixes · prompts_per_prefix` requests, not always N, and no oversampling;
//! 3. per prefix: `np.random.randint(0, V, prefix_len)`, then per prompt
//!    `np.random.randint(0, V, suffix_len)` (global numpy, which the arrival gaps use next);
//! 4. `random.shuffle(requests)` (CPython), skipped under `--disable-shuffle` (0.11.2+).
//!
//! Each token list is decoded and re-encoded to exactly its target length; the client's
//! `prompt_len` is `prefix_len + suffix_len`, and the server adds its special tokens (the
//! BOS). servesim keeps these nominal lengths and assumes the re-encode drew no extra tokens
//! (an extra draw would move the arrival gaps of a finite `--request-rate`).
use crate::client::dataset::DatasetRow;
use crate::client::rng::{NumpyRandomState, PyRandom};
use crate::spec::vllm_client::PrefixRepetition;

/// Most token draws replayed to position numpy's global state for the arrival gaps.
pub const MAX_TOKEN_DRAWS: u64 = 1 << 31;

/// The rows in send order, with the global numpy state advanced past the token draws when
/// `advance_global` (a finite rate: the gaps come next from that state). `special_tokens` is
/// added to each prompt (the server's count) and to the shared prefix (the BOS is shared).
/// Errors are vLLM's own refusals, as a message.
pub fn rows(
    p: &PrefixRepetition,
    num_prompts: u64,
    seed: u64,
    shuffle: bool,
    special_tokens: u64,
    vocab_size: u64,
    global: Option<&mut NumpyRandomState>,
) -> Result<Vec<DatasetRow>, String> {
    let per_prefix = num_prompts / p.num_prefixes;
    if per_prefix == 0 {
        return Err(format!(
            "vLLM raises: num_requests ({num_prompts}) must be greater than or equal to \
             num_prefixes ({}); raise --num-prompts or lower --prefix-repetition-num-prefixes",
            p.num_prefixes
        ));
    }
    if let Some(g) = global {
        let draws = p.num_prefixes.saturating_mul(p.prefix_len).saturating_add(
            per_prefix
                .saturating_mul(p.num_prefixes)
                .saturating_mul(p.suffix_len),
        );
        if draws > MAX_TOKEN_DRAWS {
            return Err(format!(
                "{draws} random prompt tokens are beyond the {MAX_TOKEN_DRAWS} servesim replays \
                 to place the arrival gaps; use --request-rate inf or shorter prompts"
            ));
        }
        let vocab = i64::try_from(vocab_size.max(1)).unwrap_or(i64::MAX);
        for _ in 0..p.num_prefixes {
            g.try_randint_n(0, vocab, p.prefix_len as usize);
            for _ in 0..per_prefix {
                g.try_randint_n(0, vocab, p.suffix_len as usize);
            }
        }
    }
    let prompt_len = p.prefix_len + p.suffix_len + special_tokens;
    let mut rows: Vec<DatasetRow> = (0..p.num_prefixes)
        .flat_map(|k| {
            (0..per_prefix).map(move |_| DatasetRow {
                prompt_len,
                output_len: p.output_len,
                prefix_group: Some(k),
                prefix_len: p.prefix_len + special_tokens,
                ..Default::default()
            })
        })
        .collect();
    if shuffle {
        PyRandom::new(seed).shuffle(&mut rows);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_counts_and_shuffle() {
        let p = PrefixRepetition {
            prefix_len: 100,
            suffix_len: 20,
            num_prefixes: 3,
            output_len: 7,
        };
        // 10 // 3 = 3 prompts per prefix: 9 requests.
        let rows = rows(&p, 10, 1, false, 1, 1000, None).unwrap();
        assert_eq!(rows.len(), 9);
        assert!(rows
            .iter()
            .all(|r| r.prompt_len == 121 && r.prefix_len == 101));
        let groups: Vec<u64> = rows.iter().map(|r| r.prefix_group.unwrap()).collect();
        assert_eq!(groups, [0, 0, 0, 1, 1, 1, 2, 2, 2]);
        // CPython: random.seed(1); a = list(range(9)); random.shuffle(a); [x // 3 for x in a]
        let shuffled = super::rows(&p, 10, 1, true, 1, 1000, None).unwrap();
        let groups: Vec<u64> = shuffled.iter().map(|r| r.prefix_group.unwrap()).collect();
        assert_eq!(groups, [1, 2, 2, 1, 1, 0, 2, 0, 0]);
        assert!(super::rows(&p, 2, 1, true, 1, 1000, None).is_err());
    }
}
