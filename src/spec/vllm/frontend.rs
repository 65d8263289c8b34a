//! vLLM's API-server process (the front end): one asyncio process per server by default
//! (`--api-server-count 1`) that, for every request, parses it, renders the chat template,
//! tokenizes the prompt (a one-thread executor, `serving_engine._tokenizer_executor`,
//! issue #25301) and hands it to `AsyncLLM`; and, for every engine step in V1 (0.8+), runs
//! `OutputProcessor.process_outputs` (incremental detokenization of each request's new token,
//! `vllm/v1/engine/output_processor.py`) and writes one SSE chunk per request. Each kind of
//! work is serial (a burst of arrivals queues; a large batch's chunks take longer than a
//! short GPU step); the asyncio loop interleaves the two kinds (`engine::frontend`), and
//! their sum is the process's busy time. (V0, 0.6–0.7: detokenization runs in
//! the engine process and is in its CPU step cost, `super::overheads`; only the request path
//! is here.)
//!
//! Named, sourced, bounded judgements, not fitted on any run servesim scores:
//! - vLLM PR #10635 (2024-11, tokenization off the event loop): Qwen2.5-1.5B on one H100,
//!   ShareGPT 1000 prompts at rate inf, `/v1/chat/completions`: 57.63 req/s, 171,968 output
//!   tokens in 17.35 s = 9,911 streamed tokens/s for a model whose GPU step is far shorter, so
//!   one streamed token costs the front end at most ≈ 0.10 ms.
//! - vLLM PR #41181 (2026-04): `--api-server-count 4`, 8192 chat requests of 32 prompt / 32
//!   output tokens at once: 740 req/s, i.e. 2,048 requests per API process in 11.06 s, at most
//!   5.4 ms of front-end time per request *with* its 32 chunks.
//! - vLLM PR #121 (2023): incremental detokenization with a fast tokenizer costs ≈ 30 µs per
//!   token (0.03 s for 8 × 128 tokens); issue #5206: ≈ 20 µs per `detokenize_incrementally`
//!   call. The rest of a chunk's 0.1 ms is building and writing the SSE JSON.
//!
//! One exact constant, read in the code, not judged: the tokenizer's micro-batching window
//! ([`TOKENIZER_BATCH_WAIT_NS`]), a wait (the process is idle meanwhile), not work. One
//! measured: vLLM 0.11.0's per-request parse of the chat template ([`CHAT_TEMPLATE_PARSE_NS`]).
use super::defaults;
use crate::spec::version::Version;

/// The front end's serial CPU time, ns: per request on its way in, per streamed token chunk
/// on its way out.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrontendCosts {
    pub request_ns: f64,
    pub chunk_ns: f64,
    /// How long a prompt waits for others to tokenize with (the micro-batching window), ns;
    /// 0 where the version has none.
    pub batch_wait_ns: f64,
    /// The part of `request_ns` that holds the asyncio loop without yielding (vLLM 0.11.0's
    /// chat-template parse), ns: a step's output processing that finds the request path busy
    /// waits for one such piece (`engine::frontend`).
    pub blocking_ns: f64,
}

/// Per request (validation, chat template, tokenizer call, `add_request` and its IPC): 1.0 ms.
/// Bounds 0.3–3 ms: with the 0.1 ms chunks it leaves 1.0 + 32 × 0.1 = 4.2 ms per request of
/// PR #41181's case, under its 5.4 ms ceiling. Prompt tokenization proper is the profile's
/// `tokenize_per_token_ns` on the same queue.
pub const REQUEST_NS: f64 = 1.0e6;

/// Per streamed token chunk in V1 (detokenize one token, build and write one SSE chunk):
/// 0.1 ms, PR #10635's ceiling. Bounds 0.03 ms (detokenization alone, PR #121) to 0.1 ms.
pub const CHUNK_NS: f64 = 0.1e6;

/// The API server's tokenizer micro-batching window: `AsyncMicrobatchTokenizer(tokenizer)`
/// (`vllm/utils/__init__.py`, later `vllm/utils/async_utils.py`: `batch_wait_timeout_s: float =
/// 0.002`, read in the 0.10.1.1, 0.11.0, 0.11.2, 0.20.2, 0.21.0, 0.22.1 and 0.23.0 sdists; PR
/// #19334 "microbatch tokenization", 2025-06/07) serves every
/// prompt's `encode` (`serving_engine._tokenize_prompt_input_async`, the chat path included):
/// the first prompt of a batch waits until `batch_wait_timeout_s` after it was queued for
/// others to join (up to 32), so a prompt alone waits the whole 2 ms. vLLM PR #44172 (2026-06)
/// measured it as "about 2ms of frontend latency for low-concurrency" workloads; PR #45759
/// (2026-06-16) removed the class (absent from the 0.24.0 and 0.33.0 sdists).
pub const TOKENIZER_BATCH_WAIT_NS: f64 = 2.0e6;

/// Whether vLLM `version`'s API server micro-batches tokenization ([`TOKENIZER_BATCH_WAIT_NS`]):
/// from 0.10.0 (the first release after PR #19334; 0.9.2 not checked) through 0.23.x.
pub fn microbatch_tokenizer(version: Version) -> bool {
    version >= Version::new(0, 10, 0) && version < MICROBATCH_REMOVED
}

/// First vLLM release without `AsyncMicrobatchTokenizer` (PR #45759, merged 2026-06-16): the
/// 0.23.0 sdist has it, the 0.24.0 sdist does not.
pub const MICROBATCH_REMOVED: Version = Version::new(0, 24, 0);

/// vLLM 0.11.0 parses the chat template on every chat request: `apply_hf_chat_template` calls
/// `resolve_chat_template_kwargs` (`vllm/entrypoints/chat_utils.py`@0.11.0), which builds a
/// jinja2 `ImmutableSandboxedEnvironment`, `env.parse(chat_template)` and
/// `jinja2.meta.find_undeclared_variables` (a code-generation pass) with no cache, on the API
/// server's event loop. 0.10.2 has no such call (`apply_hf_chat_template` renders directly;
/// 0.10.1.1 and 0.10.2 sdists read); 0.11.1 caches it (`_cached_resolve_chat_template_kwargs =
/// lru_cache(...)`, 0.11.1 and 0.11.2 sdists). Measured here, not fitted: that exact call
/// sequence on Qwen3's 4,169-character chat template (jinja2 3.1.6, CPython 3.11, one Xeon
/// core) takes 8.8 ms (min of 50; median 9.05 ms); rendering the compiled template is 0.03 ms.
/// Bounds 4–10 ms (a faster host core; the Llama-3 / DeepSeek templates are of the same
/// size class). gpt-oss takes the Harmony path (`_make_request_with_harmony`), no template.
pub const CHAT_TEMPLATE_PARSE_NS: f64 = 8.8e6;

/// The versions that parse the chat template per request ([`CHAT_TEMPLATE_PARSE_NS`]): 0.11.0.
pub fn parses_chat_template_per_request(version: Version) -> bool {
    version >= Version::new(0, 11, 0) && version < Version::new(0, 11, 1)
}

/// The front-end costs of a vLLM `version` server for a client on the chat endpoint (`chat`:
/// `--backend openai-chat`) of a model rendered by a jinja chat template (`jinja_template`:
/// all but gpt-oss): V1 pays both paths; V0 only the request path (its detokenization is in
/// the engine's step CPU).
pub fn frontend_costs_for(version: Version, chat: bool, jinja_template: bool) -> FrontendCosts {
    let mut c = frontend_costs(version);
    if chat && jinja_template && parses_chat_template_per_request(version) {
        c.request_ns += CHAT_TEMPLATE_PARSE_NS;
        c.blocking_ns = CHAT_TEMPLATE_PARSE_NS;
    }
    c
}

/// The front-end costs of a vLLM `version` server on the completions endpoint: V1 pays both
/// paths; V0 only the request path (its detokenization is in the engine's step CPU).
pub fn frontend_costs(version: Version) -> FrontendCosts {
    FrontendCosts {
        request_ns: REQUEST_NS,
        chunk_ns: if defaults::is_v0(version) {
            0.0
        } else {
            CHUNK_NS
        },
        batch_wait_ns: if microbatch_tokenizer(version) {
            TOKENIZER_BATCH_WAIT_NS
        } else {
            0.0
        },
        blocking_ns: 0.0,
    }
}

/// One `--explain` line naming the front end's terms.
pub fn explain_line(costs: &FrontendCosts) -> String {
    let parse = if costs.request_ns > REQUEST_NS {
        format!(
            "; of it {:.1} ms parsing the chat template per request, vLLM 0.11.0's uncached \
             resolve_chat_template_kwargs",
            CHAT_TEMPLATE_PARSE_NS / 1e6
        )
    } else {
        String::new()
    };
    let wait = if costs.batch_wait_ns > 0.0 {
        format!(
            ", then a {:.1} ms tokenizer micro-batch window (AsyncMicrobatchTokenizer, \
             batch_wait_timeout_s; a prompt alone waits all of it)",
            costs.batch_wait_ns / 1e6
        )
    } else {
        String::new()
    };
    format!(
        "front end: vLLM API-server process (spec::vllm::frontend): {:.1} ms per request in \
         (validation, chat template, add_request{parse}){wait}; {:.2} ms per streamed token \
         chunk out\n",
        costs.request_ns / 1e6,
        costs.chunk_ns / 1e6
    )
}

/// Share of the run the front end must be busy for a run to count as front-end-bound (the same
/// M/D/1 reasoning as the benchmark client's `CLIENT_BOUND_BUSY_SHARE`).
pub const FRONTEND_BOUND_BUSY_SHARE: f64 = 0.8;

/// One line saying vLLM's API-server process limited the run, when its serial work (`busy_ns`)
/// filled at least [`FRONTEND_BOUND_BUSY_SHARE`] of the benchmark's `duration_s`.
pub fn frontend_bound_note(busy_ns: f64, duration_s: f64) -> Option<String> {
    if busy_ns <= 0.0 || !(duration_s.is_finite() && duration_s > 0.0) {
        return None;
    }
    let busy_s = busy_ns / 1e9;
    let share = busy_s / duration_s;
    (share >= FRONTEND_BOUND_BUSY_SHARE).then(|| {
        format!(
            "front-end-bound: vLLM's API-server process was busy {busy_s:.1} s of the \
             {duration_s:.1} s run ({:.0}%: {:.1} ms per request in, {:.2} ms per streamed \
             token out, one process), so it, not the GPU, limited the run",
            100.0 * share,
            REQUEST_NS / 1e6,
            CHUNK_NS / 1e6
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_pays_chunks_v0_only_requests_and_both_fit_the_sources() {
        let v1 = frontend_costs(Version::new(0, 11, 0));
        let v0 = frontend_costs(Version::new(0, 6, 3));
        assert_eq!(v1.chunk_ns, 0.1e6);
        assert_eq!(v0.chunk_ns, 0.0);
        assert_eq!(v0.request_ns, v1.request_ns);
        // The 2 ms micro-batch window: 0.10.0 (PR #19334) to the 0.24.0 removal (PR #45759).
        assert_eq!(v1.batch_wait_ns, 0.002e9);
        assert_eq!(v0.batch_wait_ns, 0.0);
        assert_eq!(frontend_costs(Version::new(0, 9, 2)).batch_wait_ns, 0.0);
        assert_eq!(frontend_costs(Version::new(0, 10, 0)).batch_wait_ns, 2e6);
        assert_eq!(frontend_costs(Version::new(0, 33, 0)).batch_wait_ns, 0.0);
        // PR #41181: ≤ 5.4 ms per request with 32 chunks; PR #10635: ≥ 9,911 tokens/s.
        assert!(v1.request_ns + 32.0 * v1.chunk_ns <= 5.4e6);
        assert!(1e9 / v1.chunk_ns >= 9_911.0);
    }

    #[test]
    fn only_0_11_0_chat_requests_with_a_jinja_template_parse_it() {
        let v = |m, p| Version::new(0, m, p);
        let base = frontend_costs(v(11, 0)).request_ns;
        // 0.11.0, chat endpoint, jinja template: + 8.8 ms (measured, bounds 4-10 ms).
        let parsed = frontend_costs_for(v(11, 0), true, true).request_ns - base;
        assert_eq!(parsed, 8.8e6);
        assert_eq!(frontend_costs_for(v(11, 0), true, true).blocking_ns, 8.8e6);
        assert_eq!(frontend_costs(v(11, 0)).blocking_ns, 0.0);
        assert!((4e6..=10e6).contains(&parsed));
        // Not on /v1/completions, not for gpt-oss's Harmony path.
        assert_eq!(frontend_costs_for(v(11, 0), false, true).request_ns, base);
        assert_eq!(frontend_costs_for(v(11, 0), true, false).request_ns, base);
        // 0.10.2 has no per-request parse; 0.11.1 caches it.
        assert_eq!(frontend_costs_for(v(10, 2), true, true).request_ns, base);
        assert_eq!(frontend_costs_for(v(11, 1), true, true).request_ns, base);
        let line = explain_line(&frontend_costs_for(v(11, 0), true, true));
        assert!(
            line.contains("9.8 ms per request") && line.contains("8.8 ms parsing"),
            "{line}"
        );
    }

    #[test]
    fn front_end_bound_from_80_percent_busy() {
        assert!(frontend_bound_note(8e9, 10.0).is_some());
        assert!(frontend_bound_note(7.9e9, 10.0).is_none());
        assert!(frontend_bound_note(0.0, 10.0).is_none());
        let line = frontend_bound_note(9e9, 10.0).unwrap();
        assert!(!line.contains('\n') && line.contains("90%"), "{line}");
    }
}
