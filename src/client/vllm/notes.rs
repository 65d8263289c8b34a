//! What a vLLM-client run must say about its dataset (printed as `note:` lines, so no length
//! is silently taken for the real client's), and the dataset flags a version does not have.
//!
//! * random prompts are token ids decoded to text; whether the client re-encodes them, and
//!   whether it pads them back to the sampled length, depends on the version; servesim has no
//!   tokenizer and always uses the sampled (nominal) lengths;
//! * the bundled ShareGPT table is a sample of ShareGPT, not the file a user downloads;
//! * a filter that leaves fewer pairs than `--num-prompts` means repeats or a shorter run.
use super::flavour::{RandomEra, Script, VllmFlavour};
use super::sharegpt::{
    Oversample, VllmShareGpt, CLI_DATASETS_FROM, DISABLE_SHUFFLE_FROM, NO_OVERSAMPLE_FROM,
};
use crate::client::dataset::sharegpt_table::TokenizerFamily;
use crate::error::{Error, Result};
use crate::spec::model::ModelSpec;
use crate::spec::version::Version;
use crate::spec::workload::ClientConfig;

/// The first `vllm bench serve` sampled with `prefix_repetition`.
pub const PREFIX_REPETITION_FROM: Version = Version::new(0, 10, 1);

/// Refuses a dataset or dataset flag the emulated script/version does not have.
pub fn check_flags(c: &ClientConfig, f: &VllmFlavour) -> Result<()> {
    let cli = f.script == Script::Cli;
    let v = f.version;
    let refuse = |flag: &str, field: &str, msg: String| Err(Error::invalid(flag, field, msg));
    match c.dataset_name.as_str() {
        "sharegpt" if cli && v < CLI_DATASETS_FROM => {
            return refuse(
                "--dataset-name sharegpt",
                "dataset_name",
                format!(
                    "vllm bench serve {v} accepts only --dataset-name random (sharegpt from \
                     {CLI_DATASETS_FROM}; --client vllm-legacy emulates benchmark_serving.py)"
                ),
            )
        }
        "prefix_repetition" if !cli || v < PREFIX_REPETITION_FROM => {
            return refuse(
                "--dataset-name prefix_repetition",
                "dataset_name",
                format!(
                    "only vllm bench serve {PREFIX_REPETITION_FROM} and later has it (got {} {v})",
                    super::script_name(f)
                ),
            )
        }
        _ => {}
    }
    if c.vllm.no_oversample && (!cli || v < NO_OVERSAMPLE_FROM) {
        return refuse(
            "--no-oversample",
            "no_oversample",
            format!(
                "vllm bench serve has it from {NO_OVERSAMPLE_FROM} (got {} {v})",
                super::script_name(f)
            ),
        );
    }
    if c.vllm.disable_shuffle && (!cli || v < DISABLE_SHUFFLE_FROM) {
        return refuse(
            "--disable-shuffle",
            "disable_shuffle",
            format!(
                "vllm bench serve has it from {DISABLE_SHUFFLE_FROM} (got {} {v})",
                super::script_name(f)
            ),
        );
    }
    Ok(())
}

/// How the version treats the random token ids' text, and that servesim keeps the sampled
/// lengths.
pub fn random_lengths(f: &VllmFlavour) -> String {
    let what = if f.random_era == RandomEra::Pcg64 && f.version >= Version::new(0, 11, 2) {
        "re-encodes the decoded random prompts and pads or trims them back to the sampled length \
         (up to 10 retries), so the sampled lengths hold unless the retries run out"
    } else if f.subtract_special_tokens {
        "re-encodes the decoded random prompts and cuts them to the sampled length without \
         padding, so a prompt whose text re-tokenizes shorter is sent shorter (the lengths here \
         are an upper bound)"
    } else {
        "sends the decoded random token ids as text without re-encoding; the server's count of \
         that text differs from the sampled length by the tokenizer's merges"
    };
    format!(
        "random dataset: {} {} {what}; servesim has no tokenizer and uses the sampled (nominal) \
         lengths",
        super::script_name(f),
        f.version
    )
}

/// The bundled ShareGPT table is a sample.
pub fn bundled_sharegpt(model: &ModelSpec) -> String {
    let family = TokenizerFamily::for_model(model).map_or("?", TokenizerFamily::name);
    format!(
        "sharegpt: token counts from servesim's bundled SAMPLE of ShareGPT (17,400 conversations, \
         {family} tokenizer), not the full file, so vLLM's shuffle picks other conversations; \
         --dataset-path FILE --tokenizer tokenizer.json gives the exact selection"
    )
}

/// A note when fewer pairs pass the filter than `--num-prompts` (`total` rows were selected).
pub fn short_sharegpt(sel: &VllmShareGpt, pairs: &[(u32, u32)], total: usize) -> Option<String> {
    let valid = pairs
        .iter()
        .filter(|&&(p, o)| sel.accept(u64::from(p), u64::from(o)).is_some())
        .count();
    if valid as u64 >= sel.num_prompts {
        return None;
    }
    Some(match sel.oversample {
        Oversample::Never => format!(
            "sharegpt: only {valid} pairs pass vLLM's filter (prompt 4..=1024, total <= 2048); \
             the run has {total} requests"
        ),
        _ => format!(
            "sharegpt: only {valid} pairs pass vLLM's filter (prompt 4..=1024, total <= 2048); \
             vLLM oversamples {} repeats to reach {total}",
            total - valid
        ),
    })
}

/// prefix_repetition's send times assume the re-encode drew no extra tokens.
pub fn prefix_repetition_gaps() -> String {
    "prefix_repetition: prompts are the nominal prefix + suffix lengths (vLLM re-encodes them to \
     exactly that), and the send times assume its re-encode drew no extra random tokens from \
     numpy's global state (servesim has no tokenizer)"
        .into()
}
