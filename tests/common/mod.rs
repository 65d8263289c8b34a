//! Helpers shared by the integration tests that run the `servesim` binary.
#![allow(dead_code)] // each test binary uses its own subset
use std::process::Command;

pub mod synthetic;

/// The arguments of `servesim run` of Qwen2.5-0.5B on one H100, then `extra`.
pub fn small_h100_run_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let base: [&'a str; 5] = [
        "run",
        "--hardware",
        "h100-sxm5-80gb",
        "--model",
        "qwen2.5-0.5b",
    ];
    base.iter().chain(extra).copied().collect()
}

/// [`small_h100_run_args`] through vLLM's client with 4 prompts (the base of the vLLM-client
/// command-line tests), then `extra`.
pub fn vllm_client_run_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let client: [&'a str; 4] = ["--client", "vllm", "--num-prompts", "4"];
    small_h100_run_args(&client.iter().chain(extra).copied().collect::<Vec<_>>())
}

/// The elements of a JSON array read by `item` (e.g. `serde_json::Value::as_u64`); panics, naming
/// the element, when the value is not an array or an element does not read.
pub fn json_vec<T>(
    v: &serde_json::Value,
    item: impl Fn(&serde_json::Value) -> Option<T>,
) -> Vec<T> {
    let array = v
        .as_array()
        .unwrap_or_else(|| panic!("not a JSON array: {v}"));
    array
        .iter()
        .map(|x| item(x).unwrap_or_else(|| panic!("unexpected JSON element {x}")))
        .collect()
}

/// Runs the binary in the crate root: (exit code, stdout, stderr).
/// `servesim run ARGS` on a small random workload (20 prompts of 500 → 50 tokens at
/// concurrency 8) with `--explain`: (exit code, stdout, stderr).
#[allow(dead_code)]
pub fn explain_small(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&[
        "--num-prompts",
        "20",
        "--random-input-len",
        "500",
        "--random-output-len",
        "50",
        "--max-concurrency",
        "8",
        "--explain",
    ]);
    servesim(&all)
}

pub fn servesim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_servesim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts a non-zero exit with a one-line error (no panic) containing every needle; returns
/// the error.
pub fn fails_with(args: &[&str], needles: &[&str]) -> String {
    let (code, _out, err) = servesim(args);
    assert_ne!(code, 0, "{args:?} should fail");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert_eq!(
        err.trim().lines().count(),
        1,
        "{args:?}: one-line error expected, got: {err}"
    );
    for n in needles {
        assert!(
            err.contains(n),
            "{args:?}: error `{}` lacks `{n}`",
            err.trim()
        );
    }
    err
}

/// qwen2.5-0.5b on an H100 under `server` and `client` (a small, fast scenario).
pub fn small_h100_scenario(
    server: &servesim::spec::server::ServerFlags,
    client: &servesim::spec::workload::ClientFlags,
) -> servesim::simulation::Scenario {
    servesim::simulation::Scenario::resolve(
        &servesim::spec::workload::ScenarioFile::default(),
        Some("h100-sxm5-80gb"),
        Some("qwen2.5-0.5b"),
        server,
        client,
    )
    .expect("qwen2.5-0.5b resolves on an H100")
}

/// A `--client vllm` scenario at bench version `version` (16 prompts, Llama-3.1-8B on one
/// H100, SGLang server defaults), after `extra` adjusts the client flags.
pub fn vllm_client_scenario(
    version: &str,
    extra: impl FnOnce(&mut servesim::spec::workload::ClientFlags),
) -> servesim::simulation::Scenario {
    use servesim::spec::vllm_client::{ClientKind, VllmClientFlags};
    use servesim::spec::workload::{ClientFlags, ScenarioFile};
    let mut client = ClientFlags {
        num_prompts: Some(16),
        bench_version: Some(version.parse().unwrap()),
        vllm: VllmClientFlags {
            client: Some(ClientKind::Vllm),
            ..Default::default()
        },
        ..Default::default()
    };
    extra(&mut client);
    servesim::simulation::Scenario::resolve(
        &ScenarioFile::default(),
        Some("h100-sxm5-80gb"),
        Some("llama-3.1-8b"),
        &servesim::spec::server::ServerFlags::default(),
        &client,
    )
    .unwrap()
}

/// vLLM's benchmark client of `script` ("legacy" = benchmarks/benchmark_serving.py, else
/// `vllm bench serve`) at `version`.
pub fn vllm_flavour(script: &str, version: &str) -> servesim::client::vllm::flavour::VllmFlavour {
    use servesim::client::vllm::flavour::{Script, VllmFlavour};
    let script = if script == "legacy" {
        Script::Legacy
    } else {
        Script::Cli
    };
    VllmFlavour::new(script, version.parse().unwrap())
}

/// gpt-oss-20b on one H100 under `server` and `client`, run with the engine's invariant
/// checks on.
pub fn checked_gpt_oss_run(
    server: &servesim::spec::server::ServerFlags,
    client: &servesim::spec::workload::ClientFlags,
) -> servesim::simulation::RunOutput {
    let mut sc = servesim::simulation::Scenario::resolve(
        &servesim::spec::workload::ScenarioFile::default(),
        Some("h100-sxm5-80gb"),
        Some("gpt-oss-20b"),
        server,
        client,
    )
    .expect("gpt-oss-20b resolves on an H100");
    sc.check_invariants = true;
    servesim::simulation::run(&sc).expect("the run completes")
}

/// A CUDA-graph decode batch of `bs` requests at `ctx` tokens of context each.
#[allow(dead_code)]
pub fn decode_shape(bs: u64, ctx: u64) -> servesim::cost::BatchShape {
    servesim::cost::BatchShape {
        decode_reqs: bs,
        decode_ctx_sum: bs * ctx,
        graph_bs: Some(bs),
        ..Default::default()
    }
}

/// A prefill of `reqs` requests extending `extend` tokens each, nothing cached.
#[allow(dead_code)]
pub fn prefill_shape(reqs: u64, extend: u64) -> servesim::cost::BatchShape {
    let mut s = servesim::cost::BatchShape::default();
    for _ in 0..reqs {
        s.add_prefill(extend, 0, None);
    }
    s
}
