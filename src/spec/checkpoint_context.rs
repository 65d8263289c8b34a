//! Checkpoints priced with a bundled stand-in's layer stack ([`super::checkpoint_name`]'s
//! same-architecture builds) whose own `config.json` states another `max_position_embeddings`.
//! SGLang takes its context length from that key (`get_context_length`, `hf_transformers_utils.py`:
//! the first of `max_sequence_length` … `max_position_embeddings` present; a `rope_scaling`
//! factor only when the type is not `llama3` and no `original_max_position_embeddings` is
//! given), and the context length refuses longer requests and sizes the request pool
//! (`server.rs`), so the checkpoint's own value replaces the stand-in's.

/// Qwen2.5's Instruct checkpoints resolve to the base configs (131,072 positions), but state
/// 32,768 themselves.
const QWEN2_5_INSTRUCT: &str = "Qwen2.5 Instruct model cards, \"Processing Long Texts\": \"The \
     current config.json is set for context length up to 32,768 tokens\" (YaRN beyond it; \
     quoted from the Qwen2.5-32B-Instruct card in vllm-project/vllm#10737; the 0.5B-7B \
     Instruct configs on the Hub: max_position_embeddings 32768)";

/// (checkpoint name lower-cased without its organisation, its context length in tokens, the
/// source). A name matches itself or itself followed by `-`; the longest match wins.
const OWN_CONTEXT: &[(&str, u64, &str)] = &[
    (
        "llama-3-8b",
        8192,
        "Meta's Llama 3 model card (meta-llama/llama3 MODEL_CARD.md: context length 8k) and \
         Meta-Llama-3-8B-Instruct's config (dumped in Retruth/deontic nlp_models/llama3/README.md \
         @a77cf87: max_position_embeddings 8192, rope_scaling null)",
    ),
    (
        "llama-3-70b",
        8192,
        "Meta's Llama 3 model card (meta-llama/llama3 MODEL_CARD.md: context length 8k for the \
         8B and the 70B)",
    ),
    ("qwen2.5-1.5b-instruct", 32768, QWEN2_5_INSTRUCT),
    ("qwen2.5-7b-instruct", 32768, QWEN2_5_INSTRUCT),
    ("qwen2.5-32b-instruct", 32768, QWEN2_5_INSTRUCT),
    ("qwen2.5-72b-instruct", 32768, QWEN2_5_INSTRUCT),
    (
        "qwq-32b-preview",
        32768,
        "Qwen/QwQ-32B-Preview's config (copied at huggingface.co/unsloth/QwQ-32B-Preview \
         config.json @1397937, and dumped in Retruth/deontic nlp_models/qwq/README.md): \
         max_position_embeddings 32768",
    ),
    (
        "qwen2.5-coder-32b",
        32768,
        "Qwen/Qwen2.5-Coder-32B-Instruct's config (copied in huggingface.co/ai-team-20/\
         qwen3-coder-480b-3 commit 6e6b0cb, \"Add config.json from \
         Qwen/Qwen2.5-Coder-32B-Instruct\"; the base's in mlx-community/Qwen2.5-Coder-32B-4bit): \
         max_position_embeddings 32768",
    ),
];

/// The context length the checkpoint `name` (lower-cased, no organisation) states when it
/// differs from its stand-in's, with a note naming the source.
pub fn own_context(name: &str) -> Option<(u64, String)> {
    let (base, tokens, source) = OWN_CONTEXT
        .iter()
        .filter(|(base, _, _)| super::checkpoint_name::names_build_of(name, base))
        .max_by_key(|(base, _, _)| base.len())?;
    Some((
        *tokens,
        format!("`{name}`: context length {tokens} tokens, its own config's ({base}: {source})"),
    ))
}
