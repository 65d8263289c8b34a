//! A `--client vllm` run end to end: the simulation's record turned into vLLM's metrics and the
//! header its report echoes (`report::vllm`).
use super::{run_with_record, RunOutput, Scenario};
use crate::client::vllm::flavour::{Script, VllmFlavour};
use crate::client::vllm::{client_count_offset, flavour_of};
use crate::error::Result;
use crate::metrics::vllm::{compute_vllm, VllmMetrics, VllmMetricsConfig};
use crate::report::vllm::VllmHeader;
use crate::spec::version::Version;
use crate::spec::vllm_client::RampUp;

/// What a vLLM-client report needs.
#[derive(Debug, Clone)]
pub struct VllmRun {
    pub output: RunOutput,
    pub metrics: VllmMetrics,
    pub header: VllmHeader,
    pub flavour: VllmFlavour,
}

/// The `--backend` vLLM's client would show: the user's, or the version's default request
/// function name (`openai-comp` CLI 0.8.0–0.9.x, `vllm` for 0.9.2–0.10.x and the legacy
/// script, `openai` from 0.11.0). servesim's own default (`sglang`) counts as not given.
pub fn backend_name(given: &str, f: &VllmFlavour) -> String {
    if given != "sglang" {
        return given.to_string();
    }
    match f.script {
        Script::Legacy => "vllm",
        Script::Cli if f.version < Version::new(0, 9, 2) => "openai-comp",
        Script::Cli if f.version < Version::new(0, 11, 0) => "vllm",
        Script::Cli => "openai",
    }
    .to_string()
}

/// The front-end costs of the scenario's vLLM server (`None` for SGLang): its version's, plus
/// the chat template's per-request parse when the client is on the chat endpoint
/// (`--backend openai-chat`) of a model with a jinja template (gpt-oss uses Harmony).
pub fn frontend_costs(sc: &Scenario) -> Option<crate::spec::vllm::frontend::FrontendCosts> {
    let v = sc.server.vllm.as_ref()?;
    let chat = sc.client.backend == "openai-chat";
    let jinja = sc.model.architecture != "GptOssForCausalLM";
    Some(crate::spec::vllm::frontend::frontend_costs_for(
        v.version, chat, jinja,
    ))
}

/// Runs the scenario and computes vLLM's aggregates.
pub fn run_vllm(sc: &Scenario) -> Result<VllmRun> {
    let (output, rec) = run_with_record(sc)?;
    let c = &sc.client;
    let flavour = flavour_of(c);
    let special_tokens = client_count_offset(c, &sc.model);
    let cfg = VllmMetricsConfig {
        percentile_metrics: c.vllm.percentile_metrics.clone(),
        metric_percentiles: c.vllm.metric_percentiles.clone(),
        goodput_ms: c.vllm.goodput_ms.clone(),
        client_count_offset: if flavour.server_prompt_count || sc.lengths.is_some() {
            0
        } else {
            special_tokens
        },
    };
    let metrics = compute_vllm(&rec, &cfg);
    let header = VllmHeader {
        backend: backend_name(&c.backend, &flavour),
        model_id: sc.model.name.clone(),
        num_prompts: c.num_prompts,
        request_rate: c.request_rate,
        burstiness: c.vllm.burstiness,
        max_concurrency: c.max_concurrency,
        ramp_up: c.vllm.ramp_up.map(|(k, a, b)| {
            let name = match k {
                RampUp::Linear => "linear",
                RampUp::Exponential => "exponential",
            };
            (name.to_string(), a, b)
        }),
    };
    Ok(VllmRun {
        output,
        metrics,
        header,
        flavour,
    })
}
