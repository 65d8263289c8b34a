//! The command lines that deploy and benchmark a simulated scenario for real: the server's
//! launch command and the benchmark client's, per serving engine. Every setting that decides a
//! simulated number is pinned to the value servesim resolved (memory fraction, chunk size,
//! CUDA-graph batch sizes, attention backend, …), so the real server runs what was simulated
//! even where the engine's defaults would differ by version or machine.
//!
//! SGLang: `python -m sglang.launch_server` (with its speculative-decoding flags when on);
//! vLLM: `vllm serve` (the engine's resolved budget, sequence cap, memory utilization, block
//! size and model length). The client is `python -m sglang.bench_serving` (`--backend vllm`
//! against a vLLM server) or `vllm bench serve` when the scenario emulates vLLM's client.
//! PD deployments: `launch_pd::render_deployment` (one line per server and the router).
use crate::simulation::Scenario;
use crate::spec::model::KvDtype;
use crate::spec::server::{LoadBalanceMethod, SchedulePolicy};
use crate::spec::speculative_v2;
use serde::Serialize;

/// The serving engine whose command lines are rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    Sglang,
    Vllm,
}

impl Engine {
    /// The engine `sc`'s server runs.
    pub fn of(sc: &Scenario) -> Engine {
        match sc.server.vllm {
            Some(_) => Engine::Vllm,
            None => Engine::Sglang,
        }
    }
}

/// A deployment's two command lines.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchCommands {
    pub engine: Engine,
    /// Starts the server (one line; multi-node groups add the per-node flags). A PD
    /// deployment (`launch_pd`): one line per prefill server, per decode server, then the
    /// router.
    pub server: String,
    /// Runs the benchmark client against it with the simulated workload.
    pub client: String,
}

/// The commands of `sc` for `engine`.
pub fn render(sc: &Scenario, engine: Engine) -> LaunchCommands {
    let server = match engine {
        Engine::Sglang => sglang_launch_server(sc),
        Engine::Vllm => vllm_serve(sc),
    };
    let client = match sc.client.kind.is_vllm() {
        true => vllm_bench_serve(sc),
        false => sglang_bench_serving(sc),
    };
    LaunchCommands {
        engine,
        server,
        client,
    }
}

/// A flag value as a shell word: quoted when it holds anything but `[A-Za-z0-9._/:=,+-]`.
fn shell_word(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/:=,+-".contains(c));
    if plain {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', r"'\''"))
    }
}

struct Line(Vec<String>);

impl Line {
    fn new(program: &str) -> Line {
        Line(vec![format!("python -m {program}")])
    }
    fn command(words: &str) -> Line {
        Line(vec![words.to_string()])
    }
    fn word(&mut self, w: &str) -> &mut Line {
        self.0.push(shell_word(w));
        self
    }
    fn flag(&mut self, name: &str) -> &mut Line {
        self.0.push(format!("--{name}"));
        self
    }
    fn arg(&mut self, name: &str, v: impl ToString) -> &mut Line {
        self.0
            .push(format!("--{name} {}", shell_word(&v.to_string())));
        self
    }
    fn done(&self) -> String {
        self.0.join(" ")
    }
}

fn schedule_policy(p: SchedulePolicy) -> &'static str {
    match p {
        SchedulePolicy::Fcfs => "fcfs",
        SchedulePolicy::Lpm => "lpm",
        SchedulePolicy::Lof => "lof",
        SchedulePolicy::Random => "random",
        SchedulePolicy::DfsWeight => "dfs-weight",
    }
}

/// `python -m sglang.launch_server ...` for `sc`'s server.
pub fn sglang_launch_server(sc: &Scenario) -> String {
    let s = &sc.server;
    let m = &sc.model;
    let mut l = match &s.speculative {
        Some(spec) if speculative_v2::needs_env_opt_in(spec, s.version) => {
            Line::command("SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server")
        }
        _ => Line::new("sglang.launch_server"),
    };
    l.arg("model-path", m.hf_id.as_deref().unwrap_or(&m.name))
        .arg("tp", s.tp);
    let per_node = sc.hardware.link.devices_per_node.max(1) as u64;
    if s.tp > per_node {
        // One command per node: --node-rank 0 .. nnodes-1, the same --dist-init-addr.
        l.arg("nnodes", s.tp.div_ceil(per_node))
            .arg("node-rank", 0)
            .arg("dist-init-addr", "HEAD_NODE_IP:5000");
    }
    if s.dp > 1 {
        l.arg("dp", s.dp);
        if s.dp_attention {
            l.flag("enable-dp-attention");
        }
        if s.router == LoadBalanceMethod::ShortestQueue {
            l.arg("load-balance-method", "shortest_queue");
        }
    }
    for (name, value) in s
        .expert_parallel
        .as_ref()
        .map_or(Vec::new(), |e| e.sglang_launch_flags(s.version))
    {
        match value {
            Some(v) => l.arg(name, v),
            None => l.flag(name),
        };
    }
    if s.weight_format != m.weights {
        l.arg("quantization", s.weight_format.name());
    }
    if s.kv_dtype != m.kv_cache_dtype {
        l.arg(
            "kv-cache-dtype",
            match s.kv_dtype {
                KvDtype::Fp8 => "fp8_e4m3",
                KvDtype::Bf16 => "bf16",
            },
        );
    }
    // With DP attention the chunk and the running cap were resolved per rank; the flags
    // are the server's (SGLang divides them by dp).
    let ranks = if s.dp_attention { s.dp.max(1) } else { 1 };
    l.arg("attention-backend", &s.attention_backend)
        .arg("mem-fraction-static", s.mem_fraction_static)
        .arg(
            "chunked-prefill-size",
            s.chunked_prefill_size.map_or(-1, |c| (c * ranks) as i64),
        )
        .arg("max-prefill-tokens", s.max_prefill_tokens)
        .arg("max-running-requests", s.max_running_requests * ranks)
        .arg("max-total-tokens", s.kv_pool_tokens)
        .arg("page-size", s.page_size)
        .arg("schedule-policy", schedule_policy(s.schedule_policy));
    if s.cuda_graph_batch_sizes.is_empty() {
        l.flag("disable-cuda-graph");
    } else {
        l.arg("cuda-graph-max-bs", s.cuda_graph_max_bs());
    }
    if !s.radix_cache {
        l.flag("disable-radix-cache");
    }
    if s.mixed_chunk {
        l.flag("enable-mixed-chunk");
    }
    if !s.overlap_schedule {
        l.flag("disable-overlap-schedule");
    }
    if let Some(spec) = &s.speculative {
        l.arg("speculative-algorithm", spec.algorithm.name());
        if let Some(d) = &spec.draft {
            l.arg(
                "speculative-draft-model-path",
                d.hf_id.as_deref().unwrap_or(&d.name),
            );
        }
        l.arg("speculative-num-steps", spec.num_steps)
            .arg("speculative-eagle-topk", spec.topk)
            .arg("speculative-num-draft-tokens", spec.num_draft_tokens);
    }
    l.done()
}

/// `vllm serve MODEL ...` for `sc`'s vLLM server (`None` fields of an SGLang scenario are not
/// reached: [`render`] picks this only for a vLLM server).
pub fn vllm_serve(sc: &Scenario) -> String {
    let s = &sc.server;
    let m = &sc.model;
    let mut l = Line::command("vllm serve");
    l.word(m.hf_id.as_deref().unwrap_or(&m.name))
        .arg("tensor-parallel-size", s.tp);
    if s.dp > 1 {
        l.arg("data-parallel-size", s.dp);
    }
    if s.expert_parallel.is_some() {
        l.flag("enable-expert-parallel");
    }
    if s.weight_format != m.weights {
        l.arg("quantization", s.weight_format.name());
    }
    if s.kv_dtype != m.kv_cache_dtype {
        l.arg("kv-cache-dtype", "fp8");
    }
    if let Some(v) = &s.vllm {
        l.arg("max-num-seqs", v.max_num_seqs)
            .arg("max-num-batched-tokens", v.max_num_batched_tokens)
            .arg("gpu-memory-utilization", v.gpu_memory_utilization)
            .arg("block-size", v.block_size)
            .arg("max-model-len", v.max_model_len)
            .arg("num-gpu-blocks-override", v.num_gpu_blocks);
        if v.long_prefill_token_threshold > 0 {
            l.arg(
                "long-prefill-token-threshold",
                v.long_prefill_token_threshold,
            );
        }
        l.flag(match v.prefix_caching {
            true => "enable-prefix-caching",
            false => "no-enable-prefix-caching",
        });
        if v.enforce_eager {
            l.flag("enforce-eager");
        }
        if v.async_scheduling {
            l.flag("async-scheduling");
        }
    }
    l.done()
}

/// `vllm bench serve ...` with `sc`'s workload (its random dataset).
pub fn vllm_bench_serve(sc: &Scenario) -> String {
    let c = &sc.client;
    let m = &sc.model;
    let mut l = Line::command("vllm bench serve");
    l.arg("backend", &c.backend)
        .arg("model", m.hf_id.as_deref().unwrap_or(&m.name))
        .arg("dataset-name", &c.dataset_name)
        .arg("num-prompts", c.num_prompts);
    if c.dataset_name == "random" {
        l.arg("random-input-len", c.random_input_len)
            .arg("random-output-len", c.random_output_len)
            .arg("random-range-ratio", c.random_range_ratio);
    }
    l.arg("request-rate", c.request_rate);
    if let Some(mc) = c.max_concurrency {
        l.arg("max-concurrency", mc);
    }
    l.arg("seed", c.seed);
    l.done()
}

/// `python -m sglang.bench_serving ...` with `sc`'s workload.
pub fn sglang_bench_serving(sc: &Scenario) -> String {
    let c = &sc.client;
    let m = &sc.model;
    // Against a vLLM server bench_serving needs its vLLM backend.
    let backend = match sc.server.vllm.is_some() && c.backend.starts_with("sglang") {
        true => "vllm",
        false => c.backend.as_str(),
    };
    let mut l = Line::new("sglang.bench_serving");
    l.arg("backend", backend)
        .arg("model", m.hf_id.as_deref().unwrap_or(&m.name))
        .arg("dataset-name", &c.dataset_name);
    if let Some(p) = &c.dataset_path {
        l.arg("dataset-path", p.display());
    }
    l.arg("num-prompts", c.num_prompts);
    if c.dataset_name.starts_with("random") {
        l.arg("random-input-len", c.random_input_len)
            .arg("random-output-len", c.random_output_len)
            .arg("random-range-ratio", c.random_range_ratio);
    }
    if let Some(o) = c
        .sharegpt_output_len
        .filter(|_| c.dataset_name == "sharegpt")
    {
        l.arg("sharegpt-output-len", o);
    }
    if c.request_rate.is_finite() {
        l.arg("request-rate", c.request_rate);
    }
    if let Some(mc) = c.max_concurrency {
        l.arg("max-concurrency", mc);
    }
    l.arg("seed", c.seed);
    l.done()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_with_shell_characters_are_quoted() {
        assert_eq!(shell_word("Qwen/Qwen3-8B"), "Qwen/Qwen3-8B");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
