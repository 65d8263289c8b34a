//! Command lines around a vLLM run. [`bench_client_flags`] reads `vllm bench serve ...` or
//! `python benchmarks/benchmark_serving.py ...` into servesim's client flags (`--client vllm`
//! or `vllm-legacy`); [`parse_serve_command`] reads `vllm serve MODEL ...` or `python -m
//! vllm.entrypoints.openai.api_server --model MODEL ...` into a neutral
//! [`VllmServeCommand`], which maps onto servesim's vLLM-engine flags
//! ([`VllmServeCommand::engine_args`]) or, where SGLang has an equivalent, onto SGLang's
//! ([`VllmServeCommand::sglang_args`]). Flags are matched by their full names (and vLLM's short
//! aliases `-tp`, `-dp`, `-pp`, `-q`); `--flag=value` is accepted; anything else is listed
//! as ignored, never an error.
use crate::spec::server::ServerFlags;
use crate::spec::vllm_client::{ClientKind, RampUp, VllmClientFlags};
use crate::spec::workload::ClientFlags;
use std::collections::BTreeMap;

/// Shell words of a command: whitespace-separated, surrounding quotes removed.
fn words(cmd: &str) -> Vec<String> {
    cmd.split_whitespace()
        .map(|w| w.trim_matches(|c| c == '"' || c == '\'').to_string())
        .collect()
}

/// `--name value` / `--name=value` / bare `--name` pairs after the command word; bare
/// positionals (e.g. `vllm serve MODEL`) under the key `""`.
fn flag_pairs(cmd: &str) -> Vec<(String, Vec<String>)> {
    let w = words(cmd);
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for tok in w {
        if let Some(body) = tok.strip_prefix("--").or_else(|| {
            tok.strip_prefix('-')
                .filter(|b| ["tp", "dp", "pp", "q"].contains(b))
        }) {
            match body.split_once('=') {
                Some((n, v)) => out.push((n.to_string(), vec![v.to_string()])),
                None => out.push((body.to_string(), Vec::new())),
            }
        } else if let Some(last) = out.last_mut() {
            last.1.push(tok);
        } else {
            out.push((String::new(), vec![tok]));
        }
    }
    out
}

/// A flag as written in the command, for the list of ignored ones.
fn as_written(name: &str, values: &[String]) -> String {
    let mut w = format!("--{name}");
    for x in values {
        w.push(' ');
        w.push_str(x);
    }
    w
}

/// Parses `value` into `slot`; false (and `slot` unchanged) when it does not parse.
fn parse_into<T: std::str::FromStr>(value: &str, slot: &mut Option<T>) -> bool {
    match value.parse() {
        Ok(x) => {
            *slot = Some(x);
            true
        }
        Err(_) => false,
    }
}

/// Sets `slot` to `value`; always true (a flag that takes any value).
fn set<T>(slot: &mut Option<T>, value: T) -> bool {
    *slot = Some(value);
    true
}

/// What a client command line says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BenchCommand {
    pub flags: ClientFlags,
    /// `--model` (the served model's name or path).
    pub model: Option<String>,
    /// Flags servesim does not model, as written.
    pub ignored: Vec<String>,
    /// Modelled flags whose value does not parse, with the value.
    pub bad: BTreeMap<String, String>,
}

/// Reads a `vllm bench serve` / `benchmark_serving.py` command.
pub fn bench_client_flags(cmd: &str) -> BenchCommand {
    let mut out = BenchCommand::default();
    let mut v = VllmClientFlags {
        client: Some(if cmd.contains("benchmark_serving.py") {
            ClientKind::VllmLegacy
        } else {
            ClientKind::Vllm
        }),
        ..VllmClientFlags::default()
    };
    let f = &mut out.flags;
    for (name, values) in flag_pairs(cmd) {
        let first = values.first().cloned().unwrap_or_default();
        let ok = match name.as_str() {
            "" => continue,
            "num-prompts" => parse_into(&first, &mut f.num_prompts),
            "random-input-len" | "input-len" => parse_into(&first, &mut f.random_input_len),
            "random-output-len" | "output-len" => parse_into(&first, &mut f.random_output_len),
            "max-concurrency" => parse_into(&first, &mut f.max_concurrency),
            "seed" => parse_into(&first, &mut f.seed),
            "sharegpt-output-len" => parse_into(&first, &mut f.sharegpt_output_len),
            "random-prefix-len" => parse_into(&first, &mut v.random_prefix_len),
            "prefix-repetition-prefix-len" => {
                parse_into(&first, &mut v.prefix_repetition_prefix_len)
            }
            "prefix-repetition-suffix-len" => {
                parse_into(&first, &mut v.prefix_repetition_suffix_len)
            }
            "prefix-repetition-num-prefixes" => {
                parse_into(&first, &mut v.prefix_repetition_num_prefixes)
            }
            "prefix-repetition-output-len" => {
                parse_into(&first, &mut v.prefix_repetition_output_len)
            }
            "no-oversample" => {
                v.no_oversample = true;
                true
            }
            "disable-shuffle" => {
                v.disable_shuffle = true;
                true
            }
            "random-range-ratio" => parse_into(&first, &mut f.random_range_ratio),
            "request-rate" => match first.parse::<f64>() {
                Ok(r) if r > 0.0 => {
                    f.request_rate = Some(r);
                    true
                }
                _ => false,
            },
            "burstiness" => parse_into(&first, &mut v.burstiness),
            "ramp-up-start-rps" => parse_into(&first, &mut v.ramp_up_start_rps),
            "ramp-up-end-rps" => parse_into(&first, &mut v.ramp_up_end_rps),
            "ramp-up-strategy" => match first.as_str() {
                "linear" => set(&mut v.ramp_up_strategy, RampUp::Linear),
                "exponential" => set(&mut v.ramp_up_strategy, RampUp::Exponential),
                _ => false,
            },
            "goodput" => set(&mut v.goodput, values.clone()),
            "percentile-metrics" => set(&mut v.percentile_metrics, first.clone()),
            "metric-percentiles" => set(&mut v.metric_percentiles, first.clone()),
            // `openai-chat` sends each prompt as one chat message to /v1/chat/completions: the
            // client runs as `openai` (the chat template's few prompt tokens are not counted)
            // and the vLLM server pays its chat path (`spec::vllm::frontend`).
            "backend" | "endpoint-type" => set(&mut f.backend, first.clone()),
            "dataset-name" => set(&mut f.dataset_name, first.clone()),
            "dataset-path" => set(&mut f.dataset_path, first.clone().into()),
            "model" => set(&mut out.model, first.clone()),
            _ => {
                out.ignored.push(as_written(&name, &values));
                continue;
            }
        };
        if !ok {
            out.bad.insert(name.clone(), first.clone());
        }
        if name == "request-rate" && first.eq_ignore_ascii_case("inf") {
            out.bad.remove("request-rate");
            f.request_rate = Some(f64::INFINITY);
        }
    }
    // A recorded ShareGPT run's --dataset-path is a file on the benchmark host: the replay uses
    // the bundled ShareGPT sample tables (rows labelled `sampled`).
    if out.flags.dataset_name.as_deref() == Some("sharegpt") {
        if let Some(p) = out.flags.dataset_path.take() {
            out.ignored.push(format!(
                "--dataset-path {} (bundled sample used)",
                p.display()
            ));
        }
    }
    out.flags.vllm = v;
    out
}

/// A `vllm serve` command, flag by flag (`None`: not given, vLLM's default applies).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct VllmServeCommand {
    pub model: Option<String>,
    pub tensor_parallel_size: Option<u64>,
    pub data_parallel_size: Option<u64>,
    pub pipeline_parallel_size: Option<u64>,
    pub max_num_seqs: Option<u64>,
    pub max_num_batched_tokens: Option<u64>,
    pub gpu_memory_utilization: Option<f64>,
    /// `Some(true)` for `--enable-prefix-caching`, `Some(false)` for `--no-enable-prefix-caching`.
    pub enable_prefix_caching: Option<bool>,
    pub enable_chunked_prefill: Option<bool>,
    pub enforce_eager: bool,
    pub kv_cache_dtype: Option<String>,
    pub block_size: Option<u64>,
    pub max_model_len: Option<u64>,
    pub long_prefill_token_threshold: Option<u64>,
    pub async_scheduling: bool,
    pub quantization: Option<String>,
    pub dtype: Option<String>,
    /// Flags not modelled, as written.
    pub ignored: Vec<String>,
    /// Modelled flags whose value does not parse, with the value.
    pub bad: BTreeMap<String, String>,
}

/// Reads a `vllm serve` / `api_server` command.
pub fn parse_serve_command(cmd: &str) -> VllmServeCommand {
    let mut s = VllmServeCommand::default();
    let after_serve = cmd.split_once("vllm serve").map(|(_, r)| r);
    if let Some(rest) = after_serve {
        s.model = words(rest).into_iter().find(|w| !w.starts_with('-'));
    }
    for (name, values) in flag_pairs(cmd) {
        let first = values.first().cloned().unwrap_or_default();
        let ok = match name.as_str() {
            "" => continue,
            "model" => set(&mut s.model, first.clone()),
            "tensor-parallel-size" | "tp" => parse_into(&first, &mut s.tensor_parallel_size),
            "data-parallel-size" | "dp" => parse_into(&first, &mut s.data_parallel_size),
            "pipeline-parallel-size" | "pp" => parse_into(&first, &mut s.pipeline_parallel_size),
            "max-num-seqs" => parse_into(&first, &mut s.max_num_seqs),
            "max-num-batched-tokens" => parse_into(&first, &mut s.max_num_batched_tokens),
            "block-size" => parse_into(&first, &mut s.block_size),
            "max-model-len" => parse_into(&first, &mut s.max_model_len),
            "long-prefill-token-threshold" => {
                parse_into(&first, &mut s.long_prefill_token_threshold)
            }
            "gpu-memory-utilization" => parse_into(&first, &mut s.gpu_memory_utilization),
            "enable-prefix-caching" => set(&mut s.enable_prefix_caching, true),
            "no-enable-prefix-caching" => set(&mut s.enable_prefix_caching, false),
            "enable-chunked-prefill" => set(&mut s.enable_chunked_prefill, true),
            "no-enable-chunked-prefill" => set(&mut s.enable_chunked_prefill, false),
            "enforce-eager" => {
                s.enforce_eager = true;
                true
            }
            "async-scheduling" => {
                s.async_scheduling = true;
                true
            }
            "kv-cache-dtype" => set(&mut s.kv_cache_dtype, first.clone()),
            "quantization" | "q" => set(&mut s.quantization, first.clone()),
            "dtype" => set(&mut s.dtype, first.clone()),
            _ => {
                s.ignored.push(as_written(&name, &values));
                continue;
            }
        };
        if !ok {
            s.bad.insert(name.clone(), first.clone());
        }
    }
    s
}

impl VllmServeCommand {
    /// The flags for servesim's vLLM engine (`--engine vllm`, vLLM's own flag names).
    pub fn engine_args(&self) -> Vec<String> {
        let mut a = vec!["--engine".to_string(), "vllm".to_string()];
        let mut push = |flag: &str, v: Option<String>| {
            if let Some(v) = v {
                a.push(flag.to_string());
                a.push(v);
            }
        };
        push("--tp", self.tensor_parallel_size.map(|x| x.to_string()));
        push("--dp", self.data_parallel_size.map(|x| x.to_string()));
        push("--max-num-seqs", self.max_num_seqs.map(|x| x.to_string()));
        push(
            "--max-num-batched-tokens",
            self.max_num_batched_tokens.map(|x| x.to_string()),
        );
        push(
            "--gpu-memory-utilization",
            self.gpu_memory_utilization.map(|x| x.to_string()),
        );
        push("--block-size", self.block_size.map(|x| x.to_string()));
        push("--max-model-len", self.max_model_len.map(|x| x.to_string()));
        push(
            "--long-prefill-token-threshold",
            self.long_prefill_token_threshold.map(|x| x.to_string()),
        );
        push("--kv-cache-dtype", self.kv_cache_dtype.clone());
        match self.enable_prefix_caching {
            Some(true) => a.push("--enable-prefix-caching".into()),
            Some(false) => a.push("--no-enable-prefix-caching".into()),
            None => {}
        }
        if self.enforce_eager {
            a.push("--enforce-eager".into());
        }
        if self.async_scheduling {
            a.push("--async-scheduling".into());
        }
        a
    }

    /// The SGLang flags with the same meaning (for running a vLLM deployment's workload on
    /// servesim's SGLang engine), and the vLLM flags that have none, as written.
    pub fn sglang_args(&self) -> (Vec<String>, Vec<String>) {
        let mut a = Vec::new();
        let mut unmapped = Vec::new();
        let mut push = |flag: &str, v: Option<u64>| {
            if let Some(v) = v {
                a.push(flag.to_string());
                a.push(v.to_string());
            }
        };
        push("--tp", self.tensor_parallel_size);
        push("--dp", self.data_parallel_size);
        push("--max-running-requests", self.max_num_seqs);
        // vLLM's budget covers decodes too; SGLang's chunk covers prefill only.
        push("--chunked-prefill-size", self.max_num_batched_tokens);
        if let Some(d) = &self.kv_cache_dtype {
            a.push("--kv-cache-dtype".into());
            a.push(d.clone());
        }
        if self.enable_prefix_caching == Some(false) {
            a.push("--disable-radix-cache".into());
        }
        if self.enforce_eager {
            a.push("--disable-cuda-graph".into());
        }
        if let Some(u) = self.gpu_memory_utilization {
            unmapped.push(format!("--gpu-memory-utilization {u}"));
        }
        if let Some(b) = self.block_size {
            unmapped.push(format!("--block-size {b}"));
        }
        if let Some(l) = self.max_model_len {
            unmapped.push(format!("--max-model-len {l}"));
        }
        (a, unmapped)
    }
}

/// The vLLM engine's flags of a `vllm serve` command (`--engine vllm`, `spec::engine`).
pub fn vllm_server_flags(s: &VllmServeCommand) -> ServerFlags {
    ServerFlags {
        engine: Some("vllm".into()),
        tp: s.tensor_parallel_size,
        dp: s.data_parallel_size,
        max_num_seqs: s.max_num_seqs,
        max_num_batched_tokens: s.max_num_batched_tokens,
        gpu_memory_utilization: s.gpu_memory_utilization,
        enable_prefix_caching: s.enable_prefix_caching == Some(true),
        no_enable_prefix_caching: s.enable_prefix_caching == Some(false),
        enforce_eager: s.enforce_eager,
        kv_cache_dtype: s.kv_cache_dtype.clone(),
        block_size: s.block_size,
        max_model_len: s.max_model_len,
        long_prefill_token_threshold: s.long_prefill_token_threshold,
        async_scheduling: s.async_scheduling,
        quantization: s.quantization.clone(),
        ..ServerFlags::default()
    }
}
