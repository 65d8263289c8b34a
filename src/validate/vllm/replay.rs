//! Replaying a recorded vLLM run: its client command (`vllm bench serve ...`) becomes
//! `--client vllm` flags, its `vllm serve` command the server flags SGLang has equivalents for
//! (until the vLLM engine's own flags are wired in), the user's overrides win, and every number
//! the block or JSON states is compared with servesim's under vLLM's own key.
pub use super::command::vllm_server_flags;
use super::command::{bench_client_flags, parse_serve_command};
use super::VllmResult;
use crate::error::{Error, Result};
use crate::report::vllm::json_entries;
use crate::simulation::vllm::{run_vllm, VllmRun};
use crate::simulation::Scenario;
use crate::spec::server::ServerFlags;
use crate::spec::vllm_client::ClientKind;
use crate::spec::workload::{ClientFlags, ScenarioFile};
use crate::validate::compare::{err_pct, MetricRow};
use crate::validate::replay::{is_set, server_flags_from_command};

/// What the caller may override.
#[derive(Debug, Clone, Default)]
pub struct VllmOverrides {
    pub hardware: Option<String>,
    pub model: Option<String>,
    pub server: ServerFlags,
    pub client: ClientFlags,
}

/// The scenario of a recorded run.
pub fn scenario_for(run: &VllmResult, ov: &VllmOverrides) -> Result<Scenario> {
    let bench = run.bench_command.as_deref().map(bench_client_flags);
    let mut client = bench.as_ref().map(|b| b.flags.clone()).unwrap_or_default();
    if client.vllm.client.is_none() {
        client.vllm.client = Some(ClientKind::Vllm);
    }
    if client.max_concurrency.is_none() {
        client.max_concurrency = run.max_concurrency;
    }
    if client.request_rate.is_none() {
        client.request_rate = run.request_rate;
    }
    let client = client.merged(&ov.client);
    let sglang = run
        .serve_command
        .as_deref()
        .filter(|c| c.contains("sglang.launch_server"));
    let serve = match sglang {
        Some(_) => None,
        None => run.serve_command.as_deref().map(parse_serve_command),
    };
    let server = match sglang {
        // One vLLM client against an SGLang server: the launch command's SGLang flags.
        Some(cmd) => {
            let parsed = server_flags_from_command(cmd);
            if let Some((flag, why)) = parsed.bad.iter().find(|(f, _)| !is_set(&ov.server, f)) {
                return Err(Error::invalid("server command", flag.as_str(), why.clone()));
            }
            ServerFlags {
                engine: Some("sglang".into()),
                ..parsed.flags
            }
        }
        None => serve
            .as_ref()
            .map(vllm_server_flags)
            // A vLLM log without its serve command still ran a vLLM server.
            .unwrap_or_else(|| ServerFlags {
                engine: Some("vllm".into()),
                ..ServerFlags::default()
            }),
    }
    .merged(&ov.server);
    let model = ov.model.clone().or_else(|| {
        let named = bench
            .as_ref()
            .and_then(|b| b.model.clone())
            .or_else(|| serve.as_ref().and_then(|s| s.model.clone()))?;
        // Resolved by name as `run --model` does (`spec::checkpoint_name`).
        crate::spec::bundled::load_model(&named).ok().map(|_| named)
    });
    let Some(model) = model else {
        return Err(Error::invalid(
            "--model",
            "model",
            "the run's model is not a bundled one (or not stated); pass --model",
        ));
    };
    let Some(hardware) = ov.hardware.clone() else {
        return Err(Error::invalid(
            "--hardware",
            "hardware",
            "a vLLM log does not name its GPU; pass --hardware",
        ));
    };
    Scenario::resolve(
        &ScenarioFile::default(),
        Some(&hardware),
        Some(&model),
        &server,
        &client,
    )
}

/// Real against simulated for every number the run states, under vLLM's JSON key.
pub fn compare(run: &VllmResult, sim: &VllmRun) -> Vec<MetricRow> {
    let simulated = json_entries(&sim.metrics, &sim.header, &sim.flavour);
    run.values
        .iter()
        .map(|(key, &real)| {
            let s = simulated
                .iter()
                .find(|(k, _)| k.trim_end_matches(':') == key)
                .and_then(|(_, v)| v.as_f64());
            MetricRow {
                label: key.clone(),
                real,
                sim: s,
                err_pct: s.and_then(|s| err_pct(real, s)),
            }
        })
        .collect()
}

/// Builds, simulates and compares one recorded run.
pub fn replay_run(run: &VllmResult, ov: &VllmOverrides) -> Result<(VllmRun, Vec<MetricRow>)> {
    let sc = scenario_for(run, ov)?;
    let sim = run_vllm(&sc)?;
    let rows = compare(run, &sim);
    Ok((sim, rows))
}
