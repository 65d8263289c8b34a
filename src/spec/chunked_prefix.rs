//! SGLang's chunked prefix cache for MLA models: whether an extend batch may run as MHA over
//! an up-projected cached prefix (`MHA_CHUNKED_KV`), and from how many cached tokens on. The
//! form a batch then runs in is priced by `cost::kernels::mla_form`; this module only resolves
//! the two settings, read in the sglang wheels from PyPI:
//! - `--disable-chunked-prefix-cache` (server_args.py, default False in every release read,
//!   0.4.7–0.5.14);
//! - env `SGL_CHUNKED_PREFIX_CACHE_THRESHOLD` (deepseek_v2.py `get_int_env_var(…, 8192)`;
//!   0.5.8+ in `deepseek_common`), given to servesim as `--sgl-chunked-prefix-cache-threshold`
//!   or as the `VAR=value` prefix of a pasted launch command;
//! - `model_runner.py` turns the cache off by itself: for a non-MLA model (every release), when
//!   `page_size > 1` (0.4.7–0.4.10; gone by 0.5.1), and from 0.5.8 when the attention backend is
//!   not in `CHUNKED_PREFIX_CACHE_SUPPORTED_ATTENTION_BACKENDS` (flashinfer, fa3, fa4, flashmla,
//!   cutlass_mla, trtllm_mla).
use super::version::Version;

/// `SGL_CHUNKED_PREFIX_CACHE_THRESHOLD`'s default (deepseek_v2.py 0.4.7–0.5.3,
/// `deepseek_common` 0.5.8–0.5.14).
pub const DEFAULT_THRESHOLD_TOKENS: u64 = 8192;

/// First release without 0.4.x's `page_size > 1` rule (0.4.10 has it, 0.5.1 does not).
pub const PAGE_RULE_DROPPED: Version = Version::new(0, 5, 1);

/// First release that turns the cache off for a backend outside its supported list.
pub const SUPPORTED_LIST_FROM: Version = Version::new(0, 5, 8);

/// `CHUNKED_PREFIX_CACHE_SUPPORTED_ATTENTION_BACKENDS` (model_runner.py 0.5.8.post1, 0.5.9).
const SUPPORTED_BACKENDS: &[&str] = &[
    "flashinfer",
    "fa3",
    "fa4",
    "flashmla",
    "cutlass_mla",
    "trtllm_mla",
];

/// The resolved chunked-prefix-cache settings of an SGLang server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkedPrefixCache {
    /// `not server_args.disable_chunked_prefix_cache` after `model_runner`'s own rules.
    pub enabled: bool,
    /// Σ cached prefix tokens of a batch from which it runs as MHA over the prefix.
    pub threshold_tokens: u64,
}

impl Default for ChunkedPrefixCache {
    fn default() -> Self {
        ChunkedPrefixCache {
            enabled: true,
            threshold_tokens: DEFAULT_THRESHOLD_TOKENS,
        }
    }
}

impl ChunkedPrefixCache {
    /// The settings of a server of `version` on `attention_backend` with `page_size`, for a
    /// model with MLA (`mla`), given the flag and the env value.
    pub fn resolve(
        mla: bool,
        disable_flag: bool,
        threshold_env: Option<u64>,
        version: Version,
        page_size: u64,
        attention_backend: &str,
    ) -> Self {
        let off = !mla
            || disable_flag
            || (version < PAGE_RULE_DROPPED && page_size > 1)
            || (version >= SUPPORTED_LIST_FROM && !SUPPORTED_BACKENDS.contains(&attention_backend));
        ChunkedPrefixCache {
            enabled: !off,
            threshold_tokens: threshold_env.unwrap_or(DEFAULT_THRESHOLD_TOKENS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn model_runner_turns_it_off_as_each_release_does() {
        let on = |ver: &str, page: u64, be: &str| {
            ChunkedPrefixCache::resolve(true, false, None, v(ver), page, be).enabled
        };
        // 0.4.7–0.4.10: `elif self.page_size > 1: disable_chunked_prefix_cache = True`.
        assert!(on("0.4.10", 1, "fa3"));
        assert!(!on("0.4.10", 64, "fa3"));
        // 0.5.1: the page rule is gone.
        assert!(on("0.5.1", 64, "fa3"));
        // 0.5.8: backends outside the supported list (triton) turn it off.
        assert!(on("0.5.6", 1, "triton"));
        assert!(!on("0.5.8", 1, "triton"));
        assert!(on("0.5.8", 64, "trtllm_mla"));
        // Non-MLA models never have it; the flag turns it off everywhere.
        assert!(!ChunkedPrefixCache::resolve(false, false, None, v("0.5.3"), 1, "fa3").enabled);
        assert!(!ChunkedPrefixCache::resolve(true, true, None, v("0.5.3"), 1, "fa3").enabled);
        let t = ChunkedPrefixCache::resolve(true, false, Some(4096), v("0.5.3"), 1, "fa3");
        assert_eq!(t.threshold_tokens, 4096);
    }
}
