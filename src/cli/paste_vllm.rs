//! A pasted `vllm serve MODEL ...` (or `python -m vllm.entrypoints.openai.api_server --model
//! MODEL ...`) command: the vLLM engine's `run` flags it means (`--engine vllm` and vLLM's own
//! flag names, read by `validate::vllm::command`), with the flags servesim does not model
//! named on stderr, harmless ones in a note and the rest in a warning.
use crate::validate::vllm::command::parse_serve_command;

/// `vllm serve` flags that cannot change what a benchmark measures: addresses, logging,
/// names, authentication, loading, the host swap space (V1 preempts by recomputation).
const HARMLESS_VLLM_FLAGS: &[&str] = &[
    "host",
    "port",
    "trust-remote-code",
    "served-model-name",
    "api-key",
    "disable-log-requests",
    "disable-log-stats",
    "enable-log-requests",
    "uvicorn-log-level",
    "download-dir",
    "load-format",
    "tokenizer",
    "tokenizer-mode",
    "revision",
    "seed",
    "swap-space",
    "chat-template",
    "reasoning-parser",
    "tool-call-parser",
    "enable-auto-tool-choice",
    "disable-fastapi-docs",
];

/// The `run` flags of a `vllm serve` command (`cmd`: its words, program included).
pub fn serve_args(cmd: &[String]) -> Vec<String> {
    let s = parse_serve_command(&cmd.join(" "));
    let mut out = Vec::new();
    if let Some(m) = &s.model {
        out.extend(["--model".to_string(), m.clone()]);
    }
    out.extend(s.engine_args());
    if let Some(q) = &s.quantization {
        out.extend(["--quantization".to_string(), q.clone()]);
    }
    match s.enable_chunked_prefill {
        Some(true) => out.push("--enable-chunked-prefill".into()),
        Some(false) => out.push("--no-enable-chunked-prefill".into()),
        None => {}
    }
    let sixteen_bit = |d: &str| ["auto", "bfloat16", "float16", "half"].contains(&d);
    let mut ignored = s.ignored.clone();
    if let Some(d) = s.dtype.as_deref().filter(|d| !sixteen_bit(d)) {
        ignored.push(format!("--dtype {d}"));
    }
    let (harmless, other): (Vec<_>, Vec<_>) = ignored.iter().partition(|w| {
        let name = w
            .trim_start_matches('-')
            .split([' ', '='])
            .next()
            .unwrap_or("");
        HARMLESS_VLLM_FLAGS.contains(&name)
    });
    if !harmless.is_empty() {
        eprintln!(
            "note: vllm serve flags with no effect on the simulation, ignored: {}",
            harmless
                .iter()
                .map(|w| w.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    let bad = s
        .bad
        .iter()
        .map(|(k, v)| format!("--{k} {v} (not a value servesim reads)"));
    let other: Vec<String> = other.into_iter().cloned().chain(bad).collect();
    if !other.is_empty() {
        eprintln!(
            "warning: vllm serve flags servesim does not model, ignored (the real server's numbers may differ): {}",
            other.join(" ")
        );
    }
    out
}
