//! Which server engine a scenario runs (`--engine sglang|vllm`), the rule that picks it when
//! only bench_serving's `--backend` names it, the refusal of one engine's flags under the
//! other, and the one entry point that resolves server flags for either engine.
use super::hardware::HardwareProfile;
use super::model::ModelSpec;
use super::server::{ServerConfig, ServerFlags};
use crate::error::{Error, Result};

/// The server engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Sglang,
    Vllm,
}

impl Engine {
    pub const NAMES: &'static str = "sglang, vllm";

    pub fn parse(s: &str) -> Result<Engine> {
        match s.trim().to_ascii_lowercase().as_str() {
            "sglang" => Ok(Engine::Sglang),
            "vllm" => Ok(Engine::Vllm),
            _ => Err(Error::Unknown {
                kind: "engine",
                name: s.into(),
                available: Engine::NAMES.into(),
            }),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Engine::Sglang => "sglang",
            Engine::Vllm => "vllm",
        }
    }

    /// The engine of a resolved server.
    pub fn of(server: &ServerConfig) -> Engine {
        if server.vllm.is_some() {
            Engine::Vllm
        } else {
            Engine::Sglang
        }
    }
}

/// The engine `--engine` names; without it, vLLM when the client's `--backend` is `vllm` or
/// `vllm-chat` (people benchmark a vLLM server with that backend), else SGLang.
pub fn engine_for(flags: &ServerFlags, client_backend: Option<&str>) -> Result<Engine> {
    match flags.engine.as_deref() {
        Some(e) => Engine::parse(e),
        None if matches!(client_backend, Some("vllm") | Some("vllm-chat")) => Ok(Engine::Vllm),
        None => Ok(Engine::Sglang),
    }
}

/// The names whose flag is set, in order.
fn names_if_set(flags: &[(bool, &'static str)]) -> Vec<&'static str> {
    flags.iter().filter(|f| f.0).map(|f| f.1).collect()
}

/// The SGLang-only flags `flags` sets (as typed on the command line).
fn sglang_only(f: &ServerFlags) -> Vec<&'static str> {
    let mut names = names_if_set(&[
        (f.mem_fraction_static.is_some(), "--mem-fraction-static"),
        (f.chunked_prefill_size.is_some(), "--chunked-prefill-size"),
        (f.max_prefill_tokens.is_some(), "--max-prefill-tokens"),
        (f.max_running_requests.is_some(), "--max-running-requests"),
        (f.max_total_tokens.is_some(), "--max-total-tokens"),
        (f.page_size.is_some(), "--page-size"),
        (f.schedule_policy.is_some(), "--schedule-policy"),
        (
            f.schedule_conservativeness.is_some(),
            "--schedule-conservativeness",
        ),
        (f.disable_radix_cache, "--disable-radix-cache"),
        (f.disable_cuda_graph, "--disable-cuda-graph"),
        (
            f.disable_piecewise_cuda_graph,
            "--disable-piecewise-cuda-graph",
        ),
        (f.cuda_graph_max_bs.is_some(), "--cuda-graph-max-bs"),
        (f.cuda_graph_bs.is_some(), "--cuda-graph-bs"),
        (f.context_length.is_some(), "--context-length"),
        (
            f.disable_chunked_prefix_cache,
            "--disable-chunked-prefix-cache",
        ),
        (
            f.sgl_chunked_prefix_cache_threshold.is_some(),
            "--sgl-chunked-prefix-cache-threshold",
        ),
        (f.enable_mixed_chunk, "--enable-mixed-chunk"),
        (f.enable_torch_compile, "--enable-torch-compile"),
        (f.torch_compile_max_bs.is_some(), "--torch-compile-max-bs"),
        (f.disable_overlap_schedule, "--disable-overlap-schedule"),
        (f.attention_backend.is_some(), "--attention-backend"),
        (f.sglang_version.is_some(), "--sglang-version"),
        (f.load_balance_method.is_some(), "--load-balance-method"),
        (f.enable_dp_attention, "--enable-dp-attention"),
        (f.nnodes.is_some(), "--nnodes"),
        (f.disable_hybrid_swa_memory, "--disable-hybrid-swa-memory"),
        (f.swa_full_tokens_ratio.is_some(), "--swa-full-tokens-ratio"),
        (
            !f.speculative.is_unset(),
            "--speculative-algorithm (servesim models speculative decoding for SGLang only)",
        ),
    ]);
    names.extend(f.expert_parallel.sglang_only());
    names
}

/// The vLLM-only flags `flags` sets.
fn vllm_only(f: &ServerFlags) -> Vec<&'static str> {
    names_if_set(&[
        (f.vllm_version.is_some(), "--vllm-version"),
        (
            f.disable_hybrid_kv_cache_manager,
            "--disable-hybrid-kv-cache-manager",
        ),
        (
            f.expert_parallel.enable_expert_parallel,
            "--enable-expert-parallel",
        ),
        (f.max_num_seqs.is_some(), "--max-num-seqs"),
        (
            f.max_num_batched_tokens.is_some(),
            "--max-num-batched-tokens",
        ),
        (
            f.gpu_memory_utilization.is_some(),
            "--gpu-memory-utilization",
        ),
        (f.enable_prefix_caching, "--enable-prefix-caching"),
        (f.no_enable_prefix_caching, "--no-enable-prefix-caching"),
        (f.enforce_eager, "--enforce-eager"),
        (f.block_size.is_some(), "--block-size"),
        (f.max_model_len.is_some(), "--max-model-len"),
        (
            f.long_prefill_token_threshold.is_some(),
            "--long-prefill-token-threshold",
        ),
        (f.async_scheduling, "--async-scheduling"),
        (f.no_async_scheduling, "--no-async-scheduling"),
        (f.enable_chunked_prefill, "--enable-chunked-prefill"),
        (f.no_enable_chunked_prefill, "--no-enable-chunked-prefill"),
        (
            f.num_gpu_blocks_override.is_some(),
            "--num-gpu-blocks-override",
        ),
    ])
}

/// Refuses the other engine's flags with one line naming the first and the fix.
pub fn check_flags(engine: Engine, flags: &ServerFlags) -> Result<()> {
    let (foreign, owner, other) = match engine {
        Engine::Sglang => (vllm_only(flags), "vLLM", "--engine vllm"),
        Engine::Vllm => (sglang_only(flags), "SGLang", "--engine sglang"),
    };
    match foreign.first() {
        None => Ok(()),
        Some(flag) => Err(Error::invalid(
            *flag,
            flag.trim_start_matches('-').replace('-', "_"),
            format!(
                "is a {owner} flag and the engine is {} (give {other}, or drop the flag)",
                engine.name()
            ),
        )),
    }
}

/// Resolves the server flags for `engine`: SGLang's `ServerConfig::resolve` or vLLM's
/// [`super::vllm::resolve`], after refusing the other engine's flags.
/// `model` as `engine` builds it: vLLM's model files shard every embedding and LM head over
/// the vocabulary (`VocabParallelEmbedding`, `ParallelLMHead`), so a table SGLang replicates
/// ([`ModelSpec::replicated_embedding`], Gemma-3) is vocab-parallel there.
pub fn model_as_built(engine: Engine, mut model: ModelSpec) -> ModelSpec {
    if engine == Engine::Vllm {
        model.replicated_embedding = false;
    }
    model
}

pub fn resolve(
    engine: Engine,
    flags: &ServerFlags,
    hw: &HardwareProfile,
    model: &ModelSpec,
) -> Result<ServerConfig> {
    check_flags(engine, flags)?;
    match engine {
        Engine::Sglang => ServerConfig::resolve(flags, hw, model),
        Engine::Vllm => super::vllm::resolve(flags, hw, model),
    }
}

/// vLLM's two-letter short flags, which clap cannot declare (`-tp 2`, `-tp=2`, `-dp 2`),
/// rewritten to their long names; `None` for any other argument.
pub fn long_form_of_vllm_short_flag(arg: &str) -> Option<String> {
    for (short, long) in [
        ("-tp", "--tensor-parallel-size"),
        ("-dp", "--data-parallel-size"),
    ] {
        if arg == short {
            return Some(long.to_string());
        }
        if let Some(v) = arg.strip_prefix(short).and_then(|r| r.strip_prefix('=')) {
            return Some(format!("{long}={v}"));
        }
    }
    None
}

/// [`long_form_of_vllm_short_flag`] over a command line; other arguments are kept as is.
pub fn normalize_vllm_short_flags(args: Vec<String>) -> Vec<String> {
    args.into_iter()
        .map(|a| long_form_of_vllm_short_flag(&a).unwrap_or(a))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_vllm_selects_the_vllm_engine_unless_engine_is_given() {
        let f = ServerFlags::default();
        assert_eq!(engine_for(&f, Some("vllm")).unwrap(), Engine::Vllm);
        assert_eq!(engine_for(&f, Some("vllm-chat")).unwrap(), Engine::Vllm);
        assert_eq!(engine_for(&f, Some("sglang")).unwrap(), Engine::Sglang);
        assert_eq!(engine_for(&f, None).unwrap(), Engine::Sglang);
        let g = ServerFlags {
            engine: Some("sglang".into()),
            ..Default::default()
        };
        assert_eq!(engine_for(&g, Some("vllm")).unwrap(), Engine::Sglang);
        let bad = ServerFlags {
            engine: Some("trt".into()),
            ..Default::default()
        };
        assert!(engine_for(&bad, None).is_err());
    }

    #[test]
    fn foreign_flags_are_refused_by_name() {
        let f = ServerFlags {
            max_num_seqs: Some(8),
            ..Default::default()
        };
        let e = check_flags(Engine::Sglang, &f).unwrap_err().to_string();
        assert!(
            e.contains("--max-num-seqs") && e.contains("--engine vllm"),
            "{e}"
        );
        let g = ServerFlags {
            mem_fraction_static: Some(0.8),
            ..Default::default()
        };
        let e = check_flags(Engine::Vllm, &g).unwrap_err().to_string();
        assert!(
            e.contains("--mem-fraction-static") && e.contains("SGLang"),
            "{e}"
        );
        assert!(check_flags(Engine::Vllm, &f).is_ok());
    }

    #[test]
    fn short_flags_are_rewritten() {
        let a: Vec<String> = ["run", "-tp", "2", "-dp=4", "--tp", "1", "-t"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            normalize_vllm_short_flags(a),
            vec![
                "run",
                "--tensor-parallel-size",
                "2",
                "--data-parallel-size=4",
                "--tp",
                "1",
                "-t"
            ]
        );
    }
}
