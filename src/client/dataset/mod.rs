//! Datasets: where each request's prompt and output lengths (and, for traces and shared-prefix
//! workloads, its dispatch time and cached-prefix group) come from.
//!
//! | `--dataset-name` | module |
//! |---|---|
//! | `random`, `random-ids` | [`random`] (numpy-exact lengths) |
//! | `sharegpt` | [`sharegpt`] (bundled sample tables in [`sharegpt_table`], or the exact path in [`tokenize`]) |
//! | `generated-shared-prefix` | [`gsp`] |
//! | `trace` | [`trace`] (JSONL/CSV, Mooncake and Azure layouts, multi-turn conversations) |
pub mod gsp;
pub mod random;
pub mod sharegpt;
pub mod sharegpt_table;
pub mod tokenize;
pub mod trace;

/// One request as a dataset describes it (bench_serving's `DatasetRow`, plus what traces and
/// shared-prefix workloads add).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DatasetRow {
    /// Prompt tokens (the client-side count bench_serving reports).
    pub prompt_len: u64,
    /// Requested output tokens (`max_new_tokens`, generated exactly with ignore_eos).
    pub output_len: u64,
    /// Dispatch time from the start of the run, ns; `None` = use `--request-rate`.
    pub dispatch_ns: Option<u64>,
    /// Requests with the same group share their first `prefix_len` prompt tokens (a system
    /// prompt, or the earlier turns of a conversation); the radix cache can reuse them.
    pub prefix_group: Option<u64>,
    /// Leading prompt tokens shared within `prefix_group` (≤ `prompt_len`).
    pub prefix_len: u64,
}

impl DatasetRow {
    /// A row with lengths only.
    pub fn lengths(prompt_len: u64, output_len: u64) -> Self {
        DatasetRow {
            prompt_len,
            output_len,
            ..Default::default()
        }
    }
}

use crate::client::rng::NumpyRandomState;
use crate::error::{Error, Result};
use crate::spec::model::ModelSpec;
use crate::spec::version::Version;
use crate::spec::workload::ClientConfig;
use sharegpt_table::TokenizerFamily;

/// bench_serving release that takes the tokenizer's special tokens off each random prompt
/// length (`sample_random_requests`, bench_serving.py at v0.5.9: "server encode will add
/// special token"), so the server sees the drawn length and the client counts it less them.
pub const RANDOM_LESS_SPECIAL_TOKENS_FROM: Version = Version::new(0, 5, 9);
/// bench_serving release where a random length of 0 gives zeros without drawing.
pub const RANDOM_ZERO_LEN_FROM: Version = Version::new(0, 5, 10);

/// Random prompt lengths as bench_serving 0.5.9+ reports them: `max(len - special, 0)`
/// (0.5.9) or `max(len - special, 1)` (0.5.10+), `special` = 1 for Llama-3's BOS, 0 for
/// Qwen and gpt-oss. servesim keeps at least one token for the engine, so 0.5.9's 0 for a
/// one-token Llama prompt is not reproduced.
fn random_prompt_less_special_tokens(
    rows: Vec<DatasetRow>,
    bench_version: Version,
    model: &ModelSpec,
) -> Vec<DatasetRow> {
    let special = random_special_tokens(bench_version, model);
    if special == 0 {
        return rows;
    }
    rows.into_iter()
        .map(|r| DatasetRow {
            prompt_len: r.prompt_len.saturating_sub(special).max(1),
            ..r
        })
        .collect()
}

/// The special tokens bench_serving `bench_version` takes off each drawn random prompt length
/// for `model` (1 for Llama-3's BOS from 0.5.9, else 0): earlier runs' prompts
/// (`client::prior`) are counted the same way as this run's.
pub fn random_special_tokens(bench_version: Version, model: &ModelSpec) -> u64 {
    match TokenizerFamily::for_model(model) {
        Some(TokenizerFamily::Llama3) if bench_version >= RANDOM_LESS_SPECIAL_TOKENS_FROM => 1,
        _ => 0,
    }
}

/// Builds the dataset's rows in bench_serving's order, drawing from the shared numpy RNG `rng`
/// (which the caller keeps using for Poisson arrivals afterwards, as bench_serving does).
/// `model` picks the ShareGPT table (its tokenizer family) and the `random-ids` vocabulary.
pub fn build_rows(
    c: &ClientConfig,
    model: &ModelSpec,
    output_min_one: bool,
    rng: &mut NumpyRandomState,
) -> Result<Vec<DatasetRow>> {
    match c.dataset_name.as_str() {
        "sharegpt" => sharegpt::rows(c, model),
        "generated-shared-prefix" => c.gsp.rows(c.seed),
        "trace" => {
            let path = c.dataset_path.as_deref().ok_or_else(|| {
                Error::invalid(
                    "--dataset-name trace",
                    "dataset_path",
                    "needs --dataset-path",
                )
            })?;
            trace::read_trace(path, c.num_prompts)
        }
        name => {
            // bench_serving 0.5.10+ (`compute_random_lens`, benchmark/datasets/common.py):
            // `full_len <= 0` gives zeros without drawing, as randint(0, 1) does.
            let zero_ok = c.bench_version >= RANDOM_ZERO_LEN_FROM;
            let output_min_one = output_min_one && !(zero_ok && c.random_output_len == 0);
            if output_min_one && c.random_output_len == 0 {
                // bench_serving 0.5.6.post2+: randint(max(int(0 * ratio), 1), 0 + 1) raises.
                return Err(Error::invalid(
                    "--random-output-len",
                    "random_output_len",
                    format!(
                        "must be at least 1 with bench_serving {} (output lengths are drawn \
                         from [max(int(len * ratio), 1), len]); 0 works up to --bench-version \
                         0.5.6 and from 0.5.10",
                        c.bench_version
                    ),
                ));
            }
            let rows: Vec<DatasetRow> = random::sample_random_lengths_with_rng(
                rng,
                c.num_prompts,
                c.random_input_len,
                c.random_output_len,
                c.random_range_ratio,
                output_min_one,
            )
            .into_iter()
            .map(|(p, o)| DatasetRow::lengths(p, o))
            .collect();
            let rows = random_prompt_less_special_tokens(rows, c.bench_version, model);
            if name == "random-ids" {
                // bench_serving: offsets = np.random.randint(0, tokenizer.vocab_size, N). Only
                // the draws matter (they move the stream the Poisson gaps come from).
                let vocab = TokenizerFamily::for_model(model)
                    .map_or(model.vocab_size, TokenizerFamily::base_vocab_size);
                let vocab = i64::try_from(vocab.max(1)).unwrap_or(i64::MAX);
                let _ = rng.try_randint_n(0, vocab, rows.len());
            }
            Ok(rows)
        }
    }
}
