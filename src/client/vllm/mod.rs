//! vLLM's benchmark client (`vllm bench serve`, and the legacy `benchmarks/benchmark_serving.py`)
//! as data: which behaviours a version has ([`flavour`]), its `random` dataset bit for bit
//! ([`random`]), its ShareGPT selection ([`sharegpt`]) and `prefix_repetition` dataset
//! ([`prefix_repetition`]), its send times ([`arrivals`]). [`workload`] turns a resolved client into the
//! requests and send times the event loop runs; the timing differences from bench_serving
//! (no closing `/get_server_info`, the test request, no extra sleep after the last request from
//! 0.10) are decided here too. Its metrics and report: `metrics::vllm`, `report::vllm`.
pub mod arrivals;
pub mod flavour;
pub mod notes;
pub mod prefix_repetition;
pub mod random;
pub mod sharegpt;

use crate::client::dataset::sharegpt_table::TokenizerFamily;
use crate::client::dataset::{sharegpt as sglang_sharegpt, tokenize, trace, DatasetRow};
use crate::client::rng::NumpyRandomState;
use crate::error::{Error, Result};
use crate::spec::model::ModelSpec;
use crate::spec::vllm_client::ClientKind;
use crate::spec::workload::ClientConfig;
use flavour::{Script, VllmFlavour};

/// The flavour of a resolved vLLM client.
pub fn flavour_of(c: &ClientConfig) -> VllmFlavour {
    let script = VllmFlavour::script_for(c.kind == ClientKind::VllmLegacy, c.bench_version);
    VllmFlavour::new(script, c.bench_version)
}

/// `(num_special_tokens_to_add, vocab_size)` of the model's tokenizer: Llama-3 adds a BOS;
/// Qwen and o200k add nothing; other models are taken as adding nothing, with the model's
/// vocabulary.
pub fn tokenizer_facts(model: &ModelSpec) -> (u64, u64) {
    match TokenizerFamily::for_model(model) {
        Some(TokenizerFamily::Llama3) => (1, TokenizerFamily::Llama3.base_vocab_size()),
        Some(f) => (0, f.base_vocab_size()),
        None => (0, model.vocab_size.max(1)),
    }
}

/// What the event loop needs from vLLM's client.
#[derive(Debug, Clone)]
pub struct VllmWorkload {
    /// Rows as the server sees them: `prompt_len` includes the tokenizer's special tokens.
    pub rows: Vec<DatasetRow>,
    pub dispatch_ns: Vec<u64>,
    pub dispatch_end_ns: u64,
    /// Request 0's prompt was sent once before the run (the initial test request).
    pub warm_first: bool,
    /// Special tokens the server adds to each prompt (to take off a client-side input total).
    pub special_tokens: u64,
    pub flavour: VllmFlavour,
    /// What the run assumes about the dataset (printed as `note:` lines).
    pub notes: Vec<String>,
}

/// What to take off the server's prompt count to get the client's own (`prompt_len` without
/// the special tokens): the random datasets count without the BOS, ShareGPT with it.
pub fn client_count_offset(c: &ClientConfig, model: &ModelSpec) -> u64 {
    if c.dataset_name == "sharegpt" {
        0
    } else {
        tokenizer_facts(model).0
    }
}

fn invalid(flag: &str, field: &str, msg: impl Into<String>) -> Error {
    Error::invalid(flag, field, msg.into())
}

/// Draws vLLM's requests and send times for `c` (a `--client vllm` configuration).
pub fn workload(c: &ClientConfig, model: &ModelSpec) -> Result<VllmWorkload> {
    let flavour = flavour_of(c);
    let (special_tokens, vocab_size) = tokenizer_facts(model);
    let mut global = NumpyRandomState::new(c.seed as u32);
    notes::check_flags(c, &flavour)?;
    let mut notes = Vec::new();
    let rows: Vec<DatasetRow> = match c.dataset_name.as_str() {
        "random" => {
            let params = random::RandomParams {
                seed: c.seed as u32,
                num_prompts: c.num_prompts,
                input_len: c.random_input_len,
                output_len: c.random_output_len,
                prefix_len: c.vllm.random_prefix_len,
                range_ratio: c
                    .vllm
                    .range_ratio_given
                    .unwrap_or(flavour.default_range_ratio),
                special_tokens,
                vocab_size,
            };
            random::check(flavour.random_era, &params)
                .map_err(|m| invalid("--random-range-ratio", "random_range_ratio", m))?;
            let draw = random::draw(&flavour, &params, &mut global);
            if flavour.random_era == flavour::RandomEra::Pcg64 {
                // The dataset used a private generator; the gaps come from a fresh global one.
                global = NumpyRandomState::new(c.seed as u32);
            }
            notes.push(notes::random_lengths(&flavour));
            draw.lengths
                .into_iter()
                .map(|(p, o)| DatasetRow::lengths(p + special_tokens, o))
                .collect()
        }
        "sharegpt" => sharegpt_rows(c, model, &flavour, &mut notes)?,
        "prefix_repetition" => prefix_repetition::rows(
            &c.vllm.prefix_repetition,
            c.num_prompts,
            c.seed,
            !c.vllm.disable_shuffle,
            special_tokens,
            vocab_size,
            c.request_rate.is_finite().then_some(&mut global),
        )
        .map_err(|m| invalid("--dataset-name prefix_repetition", "num_prompts", m))
        .inspect(|_| {
            if c.request_rate.is_finite() {
                notes.push(notes::prefix_repetition_gaps());
            }
        })?,
        "trace" => {
            let path = c.dataset_path.as_deref().ok_or_else(|| {
                invalid(
                    "--dataset-name trace",
                    "dataset_path",
                    "needs --dataset-path",
                )
            })?;
            trace::read_trace(path, c.num_prompts)?
        }
        other => {
            return Err(invalid(
                "--dataset-name",
                "dataset_name",
                format!(
                    "`{other}` is not modelled for --client {} (random, sharegpt, \
                     prefix_repetition, trace)",
                    c.kind.name()
                ),
            ))
        }
    };
    if rows.is_empty() {
        return Err(invalid(
            "--dataset-name",
            "num_prompts",
            format!(
                "no {} request passes vLLM's filter, so its client sends nothing",
                c.dataset_name
            ),
        ));
    }
    let params = arrivals::ArrivalParams {
        request_rate: c.request_rate,
        burstiness: c.vllm.burstiness,
        ramp_up: c.vllm.ramp_up,
    };
    if params.ramp_up.is_some() && flavour.version < crate::spec::version::Version::new(0, 9, 2) {
        return Err(invalid(
            "--ramp-up-strategy",
            "ramp_up_strategy",
            format!("vLLM's client {} has no ramp-up (0.9.2+)", flavour.version),
        ));
    }
    let (dispatch_ns, dispatch_end_ns) =
        arrivals::dispatch_ns(&flavour, rows.len(), &params, &mut global)
            .map_err(|m| invalid("--burstiness", "burstiness", m))?;
    Ok(VllmWorkload {
        rows,
        dispatch_ns,
        dispatch_end_ns,
        warm_first: flavour.test_request,
        special_tokens,
        flavour,
        notes,
    })
}

/// vLLM's ShareGPT selection over the user's file (`--dataset-path` with `--tokenizer`) or the
/// model's bundled sample table.
fn sharegpt_rows(
    c: &ClientConfig,
    model: &ModelSpec,
    flavour: &VllmFlavour,
    notes: &mut Vec<String>,
) -> Result<Vec<DatasetRow>> {
    let pairs = match (&c.dataset_path, &c.tokenizer) {
        (Some(data), Some(tok)) => tokenize::sharegpt_pairs(data, tok)?.pairs,
        (Some(_), None) => {
            return Err(invalid(
                "--dataset-path",
                "tokenizer",
                "a ShareGPT file needs --tokenizer PATH (the model's tokenizer.json, or a \
                 directory holding it) to count its tokens",
            ))
        }
        (None, _) => {
            notes.push(notes::bundled_sharegpt(model));
            notes.extend(crate::client::dataset::sharegpt_table::borrowed_table_note(
                model,
            ));
            sglang_sharegpt::bundled_table(model)?.pairs
        }
    };
    let sel = sharegpt::VllmShareGpt {
        num_prompts: c.num_prompts,
        seed: c.seed,
        fixed_output_len: c.sharegpt_output_len,
        shuffle: !c.vllm.disable_shuffle,
        oversample: if c.vllm.no_oversample {
            sharegpt::Oversample::Never
        } else {
            sharegpt::oversample_of(flavour)
        },
    };
    let rows = sel.select_with_sources(&pairs);
    notes.extend(notes::short_sharegpt(&sel, &pairs, rows.len()));
    // An oversampled repeat sends the same prompt text again: it and its original form a
    // prefix group over the whole prompt, so a prefix cache can serve the repeat.
    let mut copies = vec![0u32; rows.len()];
    for &(_, _, src) in &rows {
        copies[src] += 1;
    }
    Ok(rows
        .into_iter()
        .map(|(p, o, src)| {
            let mut row = DatasetRow::lengths(p, o);
            if copies[src] > 1 {
                row.prefix_group = Some(src as u64);
                row.prefix_len = p;
            }
            row
        })
        .collect())
}

/// The command a user would type for this client (for notes and reports).
pub fn script_name(f: &VllmFlavour) -> &'static str {
    match f.script {
        Script::Legacy => "benchmarks/benchmark_serving.py",
        Script::Cli => "vllm bench serve",
    }
}
