//! The `sglang.bench_serving` flags that are not scenario facts, so that a bench_serving
//! command line runs unchanged under `servesim run`. Taken from bench_serving's argparse
//! (`python/sglang/bench_serving.py`, `if __name__ == "__main__":` block, 0.4.x to 0.5.8, and
//! `sglang/benchmark/serving.py`, where 0.5.23 keeps it):
//! the flags with no effect on what is simulated (where the server listens, progress bars,
//! profiling, request headers) are accepted and ignored; those that would change the result
//! and are not modelled are accepted by the parser and then refused with one line naming the
//! flag, unless given at bench_serving's default value.
use crate::error::{Error, Result};

/// bench_serving flags with no effect on a simulation: accepted, ignored.
#[derive(clap::Args, Debug, Default, Clone, PartialEq)]
#[command(
    next_help_heading = "bench_serving flags accepted and ignored (no effect on a simulation)"
)]
pub struct IgnoredBenchFlags {
    /// Server address (nothing is contacted).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    #[arg(long, value_name = "PORT")]
    pub port: Option<String>,
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The model name sent in requests (the simulated model is --model).
    #[arg(long, value_name = "NAME")]
    pub served_model_name: Option<String>,
    #[arg(long)]
    pub disable_tqdm: bool,
    #[arg(long)]
    pub print_requests: bool,
    /// Torch profiler of the server (and its --profile-* options).
    #[arg(long)]
    pub profile: bool,
    #[arg(long, num_args = 1.., value_name = "ACTIVITY")]
    pub profile_activities: Vec<String>,
    #[arg(long, value_name = "N")]
    pub profile_num_steps: Option<String>,
    #[arg(long)]
    pub profile_by_stage: bool,
    #[arg(long, num_args = 1.., value_name = "STAGE")]
    pub profile_stages: Vec<String>,
    #[arg(long, value_name = "DIR")]
    pub profile_output_dir: Option<String>,
    #[arg(long, value_name = "PREFIX")]
    pub profile_prefix: Option<String>,
    #[arg(long, num_args = 0.., value_name = "URL")]
    pub profile_prefill_url: Vec<String>,
    #[arg(long, num_args = 0.., value_name = "URL")]
    pub profile_decode_url: Vec<String>,
    /// Terminal plot of throughput (servesim: --timeline / --plot).
    #[arg(long)]
    pub plot_throughput: bool,
    /// HTTP headers `Key=Value`.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub header: Vec<String>,
    /// JSON merged into each request body (sampling parameters are not simulated: requests
    /// generate exactly their output length, as with bench_serving's ignore_eos).
    #[arg(long, value_name = "JSON")]
    pub extra_request_body: Option<String>,
    /// Chat template around prompts (lengths are simulated as drawn).
    #[arg(long)]
    pub apply_chat_template: bool,
    #[arg(long, value_name = "TEXT")]
    pub prompt_suffix: Option<String>,
    /// LoRA adapters per request (adapters are not simulated) and their sampling.
    #[arg(long, num_args = 0.., value_name = "NAME")]
    pub lora_name: Vec<String>,
    #[arg(long, value_name = "DIST")]
    pub lora_request_distribution: Option<String>,
    #[arg(long, value_name = "ALPHA")]
    pub lora_zipf_alpha: Option<String>,
    /// bench_serving's PD mode only changes how it reads server info (PD itself: --pd flags).
    #[arg(long)]
    pub pd_separated: bool,
    #[arg(long)]
    pub gsp_fast_prepare: bool,
    #[arg(long)]
    pub gsp_send_routing_key: bool,
    /// Image dataset options (the image and mmmu datasets are refused).
    #[arg(long, value_name = "N")]
    pub image_count: Option<String>,
    #[arg(long, value_name = "RES")]
    pub image_resolution: Option<String>,
    #[arg(long, value_name = "FMT")]
    pub image_format: Option<String>,
    #[arg(long, value_name = "KIND")]
    pub image_content: Option<String>,
    #[arg(long)]
    pub random_image_count: bool,
    #[arg(long, value_name = "WORKLOAD")]
    pub mooncake_workload: Option<String>,
    /// Newer clients (`sglang.benchmark.serving` 0.5.23; the first four `vllm bench serve`
    /// too): the readiness wait, sampling parameters (lengths are fixed under ignore_eos), cache
    /// and profiler reports, logprob options (only used with the refused --return-logprob),
    /// the Rust client's thread count, other datasets' options.
    #[arg(long, value_name = "S")]
    pub ready_check_timeout_sec: Option<String>,
    #[arg(long, value_name = "T")]
    pub temperature: Option<String>,
    #[arg(long, value_name = "P")]
    pub top_p: Option<String>,
    #[arg(long)]
    pub cache_report: bool,
    #[arg(long, value_name = "S")]
    pub flush_cache_timeout: Option<String>,
    #[arg(long, value_name = "N")]
    pub profile_steps: Option<String>,
    #[arg(long, value_name = "N")]
    pub profile_start_step: Option<String>,
    #[arg(long, value_name = "N")]
    pub logprob_start_len: Option<String>,
    #[arg(long, num_args = 1.., value_name = "ID")]
    pub token_ids_logprob: Vec<String>,
    #[arg(long, value_name = "N")]
    pub top_logprobs_num: Option<String>,
    #[arg(long, value_name = "N")]
    pub rust_worker_threads: Option<String>,
    #[arg(long, value_name = "ALPHA")]
    pub gsp_zipf_alpha: Option<String>,
    #[arg(long, value_name = "N")]
    pub agentic_max_turns: Option<String>,
    #[arg(long, value_name = "NAME")]
    pub speed_bench_category: Option<String>,
    #[arg(long, value_name = "N")]
    pub speed_bench_output_len: Option<String>,
}

/// bench_serving flags that change the result and are not modelled: refused when set
/// (a value equal to bench_serving's default is accepted).
#[derive(clap::Args, Debug, Default, Clone, PartialEq)]
#[command(next_help_heading = "bench_serving flags not modelled (refused unless at their default)")]
pub struct RefusedBenchFlags {
    /// Non-streaming responses (TTFT = whole latency).
    #[arg(long)]
    pub disable_stream: bool,
    /// Requests stop at EOS (servesim generates exactly the requested lengths).
    #[arg(long)]
    pub disable_ignore_eos: bool,
    #[arg(long)]
    pub return_logprob: bool,
    #[arg(long)]
    pub return_routed_experts: bool,
    /// mooncake dataset timing (use --dataset-name trace --dataset-path FILE).
    #[arg(long)]
    pub use_trace_timestamps: bool,
    #[arg(long, value_name = "F")]
    pub mooncake_slowdown_factor: Option<f64>,
    #[arg(long, value_name = "N")]
    pub mooncake_num_rounds: Option<u64>,
    /// generated-shared-prefix options beyond the modelled --gsp-* flags.
    #[arg(long, value_name = "R")]
    pub gsp_range_ratio: Option<f64>,
    #[arg(long, value_name = "N")]
    pub gsp_num_turns: Option<u64>,
    #[arg(long)]
    pub gsp_ordered: bool,
    /// `sglang.benchmark.serving` 0.5.23: the Rust client parses each response stream on its
    /// own thread (servesim emulates the Python client's one asyncio thread).
    #[arg(long)]
    pub rust_client: bool,
    /// 0.5.23: decode-only benchmarking with fake prefills.
    #[arg(long)]
    pub fake_prefill: bool,
    /// 0.5.23: rotates the conversation list before sampling (other prompts than servesim's).
    #[arg(long, value_name = "N")]
    pub dataset_offset: Option<u64>,
    /// 0.5.23: how generated-shared-prefix requests pick their group (default uniform).
    #[arg(long, value_name = "DIST")]
    pub gsp_group_distribution: Option<String>,
}

impl RefusedBenchFlags {
    /// An error naming the first flag set away from bench_serving's default.
    pub fn check(&self) -> Result<()> {
        let set: [(&str, bool); 14] = [
            ("--disable-stream", self.disable_stream),
            ("--disable-ignore-eos", self.disable_ignore_eos),
            ("--return-logprob", self.return_logprob),
            ("--return-routed-experts", self.return_routed_experts),
            ("--use-trace-timestamps", self.use_trace_timestamps),
            (
                "--mooncake-slowdown-factor",
                self.mooncake_slowdown_factor.is_some_and(|f| f != 1.0),
            ),
            (
                "--mooncake-num-rounds",
                self.mooncake_num_rounds.is_some_and(|n| n != 1),
            ),
            (
                "--gsp-range-ratio",
                self.gsp_range_ratio.is_some_and(|r| r != 1.0),
            ),
            (
                "--gsp-num-turns",
                self.gsp_num_turns.is_some_and(|n| n != 1),
            ),
            ("--gsp-ordered", self.gsp_ordered),
            ("--rust-client", self.rust_client),
            ("--fake-prefill", self.fake_prefill),
            (
                "--dataset-offset",
                self.dataset_offset.is_some_and(|n| n != 0),
            ),
            (
                "--gsp-group-distribution",
                self.gsp_group_distribution
                    .as_deref()
                    .is_some_and(|d| d != "uniform"),
            ),
        ];
        refuse_first(&set, "bench_serving")
    }
}

/// An error naming the first flag of `set` that is on: it changes what `client` measures in a
/// way servesim does not model.
pub(super) fn refuse_first(set: &[(&str, bool)], client: &str) -> Result<()> {
    match set.iter().find(|(_, on)| *on) {
        Some((flag, _)) => Err(Error::invalid(
            *flag,
            flag.trim_start_matches('-').replace('-', "_"),
            format!(
                "changes what {client} measures in a way servesim does not model; remove it (or \
                 give the client's default)"
            ),
        )),
        None => Ok(()),
    }
}
