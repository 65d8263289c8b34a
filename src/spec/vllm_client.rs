//! `--client` (which benchmark client is emulated) and the flags only vLLM's client has
//! (`vllm bench serve` / `benchmark_serving.py`): burstiness, ramp-up, prefix length, goodput,
//! the percentile selection. Resolved here (pure data); the behaviour lives in `client::vllm`.
use super::version::Version;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The newest vLLM release whose client servesim models (default `--bench-version` of
/// `--client vllm`).
pub const VLLM_NEWEST: Version = Version::new(0, 33, 0);
/// The first release whose sdist ships `benchmarks/benchmark_serving.py`.
pub const VLLM_OLDEST: Version = Version::new(0, 6, 2);
/// From this release `benchmark_serving.py` is a stub that exits with status 1.
pub const LEGACY_UNTIL: Version = Version::new(0, 10, 2);

/// Which benchmark client is emulated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ClientKind {
    /// `python -m sglang.bench_serving` (the default).
    #[default]
    Sglang,
    /// `vllm bench serve` (from 0.8.0; older versions mean `benchmark_serving.py`).
    Vllm,
    /// vLLM's `benchmarks/benchmark_serving.py` (0.6.2 to 0.10.1.1).
    VllmLegacy,
}

impl ClientKind {
    pub fn is_vllm(self) -> bool {
        self != ClientKind::Sglang
    }
    pub fn name(self) -> &'static str {
        match self {
            ClientKind::Sglang => "sglang",
            ClientKind::Vllm => "vllm",
            ClientKind::VllmLegacy => "vllm-legacy",
        }
    }
}

/// `--ramp-up-strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RampUp {
    Linear,
    Exponential,
}

/// vLLM-client flags; `None` means the client's default for its version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct VllmClientFlags {
    /// Benchmark client emulated: sglang (sglang.bench_serving, default), vllm (`vllm bench
    /// serve`; its version via --bench-version, default 0.33.0) or vllm-legacy (vLLM's
    /// benchmarks/benchmark_serving.py, 0.6.2 to 0.10.1.1). Any client drives any engine.
    #[arg(long, value_enum)]
    pub client: Option<ClientKind>,
    /// vLLM client: gamma shape of the inter-arrival gaps (1 = Poisson; default 1).
    #[arg(long)]
    pub burstiness: Option<f64>,
    /// vLLM client: shared random prefix tokens in front of every random prompt (default 0).
    #[arg(long)]
    pub random_prefix_len: Option<u64>,
    /// vLLM client (0.9.2+): ramp the rate from --ramp-up-start-rps to --ramp-up-end-rps.
    #[arg(long, value_enum)]
    pub ramp_up_strategy: Option<RampUp>,
    #[arg(long)]
    pub ramp_up_start_rps: Option<f64>,
    #[arg(long)]
    pub ramp_up_end_rps: Option<f64>,
    /// vLLM client: SLOs for goodput, e.g. `ttft:300 tpot:50` (milliseconds).
    #[arg(long, num_args = 1..)]
    pub goodput: Option<Vec<String>>,
    /// vLLM client: comma-separated metrics to summarise (default ttft,tpot,itl).
    #[arg(long)]
    pub percentile_metrics: Option<String>,
    /// vLLM client: comma-separated percentiles (default 99).
    #[arg(long)]
    pub metric_percentiles: Option<String>,
    /// vLLM client (0.11.0+): with fewer valid ShareGPT pairs than --num-prompts, send only
    /// those instead of drawing repeats.
    #[arg(long)]
    #[serde(default)]
    pub no_oversample: bool,
    /// vLLM client (0.11.2+): keep ShareGPT (and prefix_repetition) rows in file order.
    #[arg(long)]
    #[serde(default)]
    pub disable_shuffle: bool,
    /// vLLM client, `--dataset-name prefix_repetition` (CLI 0.10.1+): tokens of each shared
    /// prefix (default 256).
    #[arg(long)]
    pub prefix_repetition_prefix_len: Option<u64>,
    /// prefix_repetition: tokens after the prefix, distinct per prompt (default 256).
    #[arg(long)]
    pub prefix_repetition_suffix_len: Option<u64>,
    /// prefix_repetition: number of distinct prefixes (default 10).
    #[arg(long)]
    pub prefix_repetition_num_prefixes: Option<u64>,
    /// prefix_repetition: output tokens per request (default 128).
    #[arg(long)]
    pub prefix_repetition_output_len: Option<u64>,
}

impl VllmClientFlags {
    /// `over`'s values where set, else `self`'s.
    pub fn merged(&self, over: &VllmClientFlags) -> VllmClientFlags {
        macro_rules! pick {
            ($($f:ident),*) => { VllmClientFlags {
                $($f: over.$f.clone().or_else(|| self.$f.clone()),)*
                no_oversample: over.no_oversample || self.no_oversample,
                disable_shuffle: over.disable_shuffle || self.disable_shuffle,
            } };
        }
        pick!(
            client,
            burstiness,
            random_prefix_len,
            ramp_up_strategy,
            ramp_up_start_rps,
            ramp_up_end_rps,
            goodput,
            percentile_metrics,
            metric_percentiles,
            prefix_repetition_prefix_len,
            prefix_repetition_suffix_len,
            prefix_repetition_num_prefixes,
            prefix_repetition_output_len
        )
    }
}

impl VllmClientFlags {
    /// The first vLLM-only flag given (they mean nothing to sglang.bench_serving).
    pub fn vllm_only_flag(&self) -> Option<&'static str> {
        [
            (self.burstiness.is_some(), "--burstiness"),
            (self.random_prefix_len.is_some(), "--random-prefix-len"),
            (self.ramp_up_strategy.is_some(), "--ramp-up-strategy"),
            (self.ramp_up_start_rps.is_some(), "--ramp-up-start-rps"),
            (self.ramp_up_end_rps.is_some(), "--ramp-up-end-rps"),
            (self.goodput.is_some(), "--goodput"),
            (self.percentile_metrics.is_some(), "--percentile-metrics"),
            (self.metric_percentiles.is_some(), "--metric-percentiles"),
            (self.no_oversample, "--no-oversample"),
            (self.disable_shuffle, "--disable-shuffle"),
            (
                self.prefix_repetition_prefix_len.is_some(),
                "--prefix-repetition-prefix-len",
            ),
            (
                self.prefix_repetition_suffix_len.is_some(),
                "--prefix-repetition-suffix-len",
            ),
            (
                self.prefix_repetition_num_prefixes.is_some(),
                "--prefix-repetition-num-prefixes",
            ),
            (
                self.prefix_repetition_output_len.is_some(),
                "--prefix-repetition-output-len",
            ),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// The `--dataset-name` values servesim models for vLLM's client (`client::vllm`).
pub const VLLM_DATASETS: &[&str] = &["random", "sharegpt", "prefix_repetition", "trace"];

/// vLLM client datasets servesim knows but does not model, with the reason (all need the
/// prompt text and the model's own tokenizer, or a Hugging Face download, to get lengths).
pub const VLLM_UNMODELLED_DATASETS: &[(&str, &str)] = &[
    (
        "sonnet",
        "its lengths come from tokenizing sonnet.txt lines inside the model's chat template",
    ),
    (
        "hf",
        "it downloads a Hugging Face dataset and tokenizes its text",
    ),
    ("custom", "it tokenizes the prompts of your JSONL file"),
    (
        "burstgpt",
        "it reads BurstGPT's CSV and draws prompt tokens from the tokenizer",
    ),
    ("random-mm", "multimodal items are not modelled"),
    ("random-rerank", "pooling requests are not modelled"),
    (
        "spec_bench",
        "it downloads and tokenizes SpecBench's questions",
    ),
    ("txt-slices", "it tokenizes slices of a text file"),
];

/// Refuses a `--dataset-name` vLLM's client has but servesim does not model (or that is no
/// dataset at all), in one line naming the supported ones.
pub fn check_dataset(name: &str, kind: ClientKind) -> Result<()> {
    if VLLM_DATASETS.contains(&name) {
        return Ok(());
    }
    let supported = VLLM_DATASETS.join(", ");
    let client = kind.name();
    Err(
        match VLLM_UNMODELLED_DATASETS.iter().find(|(n, _)| *n == name) {
            Some((_, why)) => bad(
                "--dataset-name",
                "dataset_name",
                format!(
                    "`{name}` is not modelled for --client {client}: {why}, and servesim has no \
                     tokenizer or text for it; supported: {supported}"
                ),
            ),
            None => Error::Unknown {
                kind: "dataset",
                name: name.to_string(),
                available: supported,
            },
        },
    )
}

/// `prefix_repetition`'s four lengths (`PrefixRepetitionRandomDataset`'s defaults: 256, 256,
/// 10 prefixes, 128).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PrefixRepetition {
    pub prefix_len: u64,
    pub suffix_len: u64,
    pub num_prefixes: u64,
    pub output_len: u64,
}

/// The metrics `--percentile-metrics` may name, in vLLM's print order.
pub const PERCENTILE_METRICS: [&str; 4] = ["ttft", "tpot", "itl", "e2el"];

/// Resolved vLLM-client settings (unused by the SGLang client).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VllmClientConfig {
    pub burstiness: f64,
    pub random_prefix_len: u64,
    /// `--random-range-ratio` as given (the default depends on the version's era).
    pub range_ratio_given: Option<f64>,
    pub ramp_up: Option<(RampUp, f64, f64)>,
    /// `(metric, threshold ms)` pairs of `--goodput`, metric one of ttft, tpot, e2el.
    pub goodput_ms: Vec<(String, f64)>,
    /// Selected metrics, in print order.
    pub percentile_metrics: Vec<String>,
    pub metric_percentiles: Vec<f64>,
    /// `--no-oversample`.
    pub no_oversample: bool,
    /// `--disable-shuffle`.
    pub disable_shuffle: bool,
    pub prefix_repetition: PrefixRepetition,
}

fn bad(flag: &str, field: &str, msg: String) -> Error {
    Error::invalid(flag, field, msg)
}

impl VllmClientConfig {
    /// Checks the flags against vLLM's own rules for `version`.
    pub fn resolve(
        f: &VllmClientFlags,
        range_ratio: Option<f64>,
        request_rate: f64,
    ) -> Result<Self> {
        let burstiness = f.burstiness.unwrap_or(1.0);
        if burstiness.is_nan() || burstiness <= 0.0 {
            return Err(bad(
                "--burstiness",
                "burstiness",
                format!("must be > 0 (a gamma shape), got {burstiness}"),
            ));
        }
        let ramp_up = match f.ramp_up_strategy {
            None => None,
            Some(s) => {
                let (Some(a), Some(b)) = (f.ramp_up_start_rps, f.ramp_up_end_rps) else {
                    return Err(bad(
                        "--ramp-up-strategy",
                        "ramp_up_strategy",
                        "needs --ramp-up-start-rps and --ramp-up-end-rps".into(),
                    ));
                };
                let ok = |x: f64| x.is_finite() && x > 0.0;
                if !ok(a) || !ok(b) {
                    return Err(bad(
                        "--ramp-up-start-rps",
                        "ramp_up_start_rps",
                        format!(
                            "vLLM asserts every ramp rate is > 0 (and finite), got {a} and {b}"
                        ),
                    ));
                }
                if request_rate.is_finite() {
                    return Err(bad(
                        "--ramp-up-strategy",
                        "request_rate",
                        "vLLM requires --request-rate inf with a ramp-up".into(),
                    ));
                }
                Some((s, a, b))
            }
        };
        let mut goodput_ms = Vec::new();
        for item in f.goodput.iter().flatten() {
            let parsed = item.split_once(':').and_then(|(k, v)| {
                let v: f64 = v.parse().ok()?;
                (["ttft", "tpot", "e2el"].contains(&k) && v.is_finite() && v >= 0.0)
                    .then(|| (k.to_string(), v))
            });
            goodput_ms.push(parsed.ok_or_else(|| {
                bad(
                    "--goodput",
                    "goodput",
                    format!("`{item}` is not KEY:MS with KEY ttft, tpot or e2el"),
                )
            })?);
        }
        let percentile_metrics: Vec<String> = f
            .percentile_metrics
            .as_deref()
            .unwrap_or("ttft,tpot,itl")
            .split(',')
            .map(|s| s.trim().to_string())
            .collect();
        if let Some(m) = percentile_metrics
            .iter()
            .find(|m| !PERCENTILE_METRICS.contains(&m.as_str()))
        {
            return Err(bad(
                "--percentile-metrics",
                "percentile_metrics",
                format!("unknown metric `{m}` (ttft, tpot, itl, e2el)"),
            ));
        }
        let mut metric_percentiles = Vec::new();
        for p in f.metric_percentiles.as_deref().unwrap_or("99").split(',') {
            match p.trim().parse::<f64>() {
                Ok(v) if (0.0..=100.0).contains(&v) => metric_percentiles.push(v),
                _ => {
                    return Err(bad(
                        "--metric-percentiles",
                        "metric_percentiles",
                        format!("`{p}` is not a percentile in [0, 100]"),
                    ))
                }
            }
        }
        let random_prefix_len = f.random_prefix_len.unwrap_or(0);
        if random_prefix_len > super::yaml_numbers::MAX_COUNT {
            return Err(bad(
                "--random-prefix-len",
                "random_prefix_len",
                format!("must be at most 2^40, got {random_prefix_len}"),
            ));
        }
        let limit = |flag: &str, v: Option<u64>, default: u64, min: u64| {
            let v = v.unwrap_or(default);
            if v < min || v > super::yaml_numbers::MAX_COUNT {
                return Err(bad(
                    flag,
                    &flag[2..].replace('-', "_"),
                    format!("must be between {min} and 2^40, got {v}"),
                ));
            }
            Ok(v)
        };
        let prefix_repetition = PrefixRepetition {
            prefix_len: limit(
                "--prefix-repetition-prefix-len",
                f.prefix_repetition_prefix_len,
                256,
                0,
            )?,
            suffix_len: limit(
                "--prefix-repetition-suffix-len",
                f.prefix_repetition_suffix_len,
                256,
                0,
            )?,
            num_prefixes: limit(
                "--prefix-repetition-num-prefixes",
                f.prefix_repetition_num_prefixes,
                10,
                1,
            )?,
            output_len: limit(
                "--prefix-repetition-output-len",
                f.prefix_repetition_output_len,
                128,
                0,
            )?,
        };
        Ok(VllmClientConfig {
            burstiness,
            random_prefix_len,
            range_ratio_given: range_ratio,
            ramp_up,
            goodput_ms,
            percentile_metrics,
            metric_percentiles,
            no_oversample: f.no_oversample,
            disable_shuffle: f.disable_shuffle,
            prefix_repetition,
        })
    }

    /// Whether `version` of the client could have been run as `kind`.
    pub fn check_version(kind: ClientKind, version: Version) -> Result<()> {
        if version < VLLM_OLDEST || version > VLLM_NEWEST {
            return Err(bad(
                "--bench-version",
                "bench_version",
                format!(
                    "vLLM's client is modelled from {VLLM_OLDEST} to {VLLM_NEWEST}, got {version}"
                ),
            ));
        }
        if kind == ClientKind::VllmLegacy && version >= LEGACY_UNTIL {
            return Err(bad(
                "--bench-version",
                "bench_version",
                format!("benchmark_serving.py is a deprecation stub from {LEGACY_UNTIL}; use --client vllm (got {version})"),
            ));
        }
        Ok(())
    }
}
