//! The server's prompt tokenization cost per token: a property of the host CPU and of the
//! tokenizer library (Hugging Face `tokenizers`, the Rust "fast" tokenizer that SGLang's
//! TokenizerManager and vLLM's API server call through `transformers`), not of the accelerator,
//! so every bundled hardware profile states the same `overheads.tokenize_per_token_ns` and a
//! profile that omits the field gets [`HF_FAST_TOKENIZE_PER_TOKEN_NS`].
//!
//! Where it is paid: SGLang's TokenizerManager encodes a text prompt in its one asyncio
//! process, on the event loop (`self.tokenizer.encode(text)` in 0.4.x, `self.tokenizer([text])`
//! in 0.5.x, unless `--enable-dynamic-batch-tokenizer`), so a burst of prompts is tokenized one
//! after another (`engine::frontend`); bench_serving's `sglang` backend sends text (its `random`
//! prompts are decoded ShareGPT tokens) unless `--tokenize-prompt`. vLLM's API server encodes on
//! one executor thread (`spec::vllm::frontend`, whose per-request cost excludes the encode).
//! Sources and bounds: validation/public/tokenize-notes.md.

/// One thread of an HF fast BPE tokenizer (Llama-3 / Qwen / DeepSeek, 100k–150k vocabularies)
/// on English chat text, ns per prompt token: 1 µs. Sources: `tokenizers` PR #1582 (Llama-3.1
/// tokenizer, one thread, multilingual XNLI: 1.3–2.1 MB/s, ≈ 2–3.7 µs/token at 4–4.7 bytes per
/// token); the
/// `tokenizers` CI benchmark of v0.23.1 (2026, Xeon 8375C, one thread, ~10 kB English: 2.6–3.9
/// MB/s ≈ 1.2–1.8 µs/token); bpe-qwen's README (HF Qwen tokenizer sequential on WikiText:
/// 1.02 M tokens/s ≈ 0.98 µs/token); vLLM PR #19334 (100 × ≈ 10k-token Qwen prompts tokenized
/// serially by the API server in 1.34 s: ≤ 1.3 µs/token, everything else included); a local
/// run of the Llama-3.2 tokenizer through `transformers` 5.24 / `tokenizers` 0.23.3 as SGLang
/// calls it (1.0–1.4 µs/token at 128–8000 tokens, on a shared 2-core Xeon). Bounds
/// [`TOKENIZE_PER_TOKEN_NS_MIN`]–[`TOKENIZE_PER_TOKEN_NS_MAX`].
pub const HF_FAST_TOKENIZE_PER_TOKEN_NS: f64 = 1000.0;

/// Lower bound: a fast (≈ 4 GHz) server core with `tokenizers` ≥ 0.20 on cache-friendly
/// English (≈ 2× the local rate; tiktoken-based tokenizers, which SGLang also calls, reach
/// 0.16–0.6 µs/token: SGLang PRs #39196, #25265).
pub const TOKENIZE_PER_TOKEN_NS_MIN: f64 = 400.0;

/// Upper bound: `tokenizers` PR #1582's slowest one-thread rate (1.28 MB/s on one long
/// document) at ≈ 4 bytes per token.
pub const TOKENIZE_PER_TOKEN_NS_MAX: f64 = 3000.0;

/// Serde default of `overheads.tokenize_per_token_ns`.
pub fn default_tokenize_per_token_ns() -> f64 {
    HF_FAST_TOKENIZE_PER_TOKEN_NS
}
