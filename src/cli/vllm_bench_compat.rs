//! `vllm bench serve` flags that are not scenario facts, so that a vLLM client command line
//! runs under `servesim run --client vllm` (the vLLM-only workload flags, burstiness, ramp-up,
//! goodput, ..., are scenario facts in `spec::vllm_client`). Read in vLLM's
//! `vllm/benchmarks/serve.py` `add_cli_args`: flags with no effect on what is simulated (result
//! files, labels, the endpoint path, sampling parameters under ignore_eos) are accepted and
//! ignored; `--ignore-eos` is the behaviour servesim models (every request generates its
//! requested length) and without it `run` says so; flags that change the measurement and are not
//! modelled are refused with one line naming the flag, unless given at the client's default.
use crate::error::{Error, Result};

/// `vllm bench serve` flags: accepted and ignored, `--ignore-eos`, and refused ones.
#[derive(clap::Args, Debug, Default, Clone, PartialEq)]
#[command(next_help_heading = "vllm bench serve flags (with --client vllm)")]
pub struct VllmBenchFlags {
    /// Send `ignore_eos` with every request: the behaviour servesim simulates. Without it a real
    /// server stops each request at EOS (real outputs can be shorter), and `run` says so.
    #[arg(long)]
    pub ignore_eos: bool,
    /// Result label, endpoint path and tokenizer mode (no effect on a simulation).
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    #[arg(long, value_name = "PATH")]
    pub endpoint: Option<String>,
    #[arg(long, value_name = "MODE")]
    pub tokenizer_mode: Option<String>,
    #[arg(long)]
    pub trust_remote_code: bool,
    /// Warm-up requests before the timed run (the simulated server starts warm).
    #[arg(long, value_name = "N")]
    pub num_warmups: Option<u64>,
    /// Result files (servesim: --output-format json, --output-file).
    #[arg(long)]
    pub save_result: bool,
    #[arg(long)]
    pub save_detailed: bool,
    #[arg(long)]
    pub append_result: bool,
    #[arg(long, num_args = 0.., value_name = "KEY=VALUE")]
    pub metadata: Vec<String>,
    #[arg(long, value_name = "DIR")]
    pub result_dir: Option<String>,
    #[arg(long, value_name = "FILE")]
    pub result_filename: Option<String>,
    #[arg(long, value_name = "PREFIX")]
    pub request_id_prefix: Option<String>,
    #[arg(long)]
    pub insecure: bool,
    #[arg(long)]
    pub plot_timeline: bool,
    #[arg(long)]
    pub skip_tokenizer_init: bool,
    /// Sampling parameters (lengths are fixed under ignore_eos; sampling cost is not priced).
    #[arg(long, value_name = "K")]
    pub top_k: Option<String>,
    #[arg(long, value_name = "P")]
    pub min_p: Option<String>,
    #[arg(long, value_name = "X")]
    pub frequency_penalty: Option<String>,
    #[arg(long, value_name = "X")]
    pub presence_penalty: Option<String>,
    #[arg(long, value_name = "X")]
    pub repetition_penalty: Option<String>,
    /// JSON merged into each request (not simulated, as bench_serving's --extra-request-body).
    #[arg(long, value_name = "JSON")]
    pub extra_body: Option<String>,
    #[arg(long, value_name = "JSON")]
    pub chat_template_kwargs: Option<String>,
    /// Not modelled: refused when set.
    #[arg(long)]
    pub use_beam_search: bool,
    #[arg(long, value_name = "N")]
    pub logprobs: Option<u64>,
    #[arg(long, num_args = 1.., value_name = "NAME")]
    pub lora_modules: Vec<String>,
    #[arg(long, value_name = "REQ_PER_S")]
    pub probe_request_rate: Option<f64>,
}

impl VllmBenchFlags {
    /// Refuses the flags given without `--client vllm`, and the unmodelled ones set away from
    /// the client's default; one line naming the flag.
    pub fn check(&self, vllm_client: bool) -> Result<()> {
        let refused: [(&str, bool); 4] = [
            ("--use-beam-search", self.use_beam_search),
            ("--logprobs", self.logprobs.is_some()),
            ("--lora-modules", !self.lora_modules.is_empty()),
            (
                "--probe-request-rate",
                self.probe_request_rate.is_some_and(|r| r != 0.0),
            ),
        ];
        super::bench_compat::refuse_first(&refused, "vllm bench serve")?;
        if !vllm_client && *self != VllmBenchFlags::default() {
            return Err(Error::invalid(
                "--client",
                "client",
                "vllm bench serve's flags (--ignore-eos, --endpoint, --save-result, ...) need \
                 --client vllm; sglang.bench_serving has none of them (it sends ignore_eos unless \
                 --disable-ignore-eos)",
            ));
        }
        Ok(())
    }

    /// The one-line note of a vLLM-client run without `--ignore-eos`.
    pub fn eos_note(&self) -> Option<&'static str> {
        (!self.ignore_eos).then_some(
            "vllm bench serve without --ignore-eos: a real server stops each request at EOS, so \
             real outputs (and output throughput) can fall short of the requested lengths; \
             servesim generates every requested token (compare TTFT, TPOT and ITL first)",
        )
    }
}
