//! Whether SGLang ever serves a request, and with what `max_new_tokens`: the one home of the
//! rules. The event loop calls [`admit`] when a request reaches the server
//! (`engine::sim`), and the up-front check (`simulation::sanity`) calls [`admit`] and
//! [`waits_forever`] on every drawn request, so the two can never disagree.
//!
//! The rules (reference A.2.6, A.2.4):
//! - the TokenizerManager rejects `prompt ≥ context` or `prompt + max_new ≥ context`;
//! - the scheduler aborts a prompt with `prompt + 1 ≥ pool` (`max_req_input_len`);
//! - the scheduler clips `max_new ≤ max_req_len − prompt − 1`, where
//!   `max_req_len = min(context − 1, pool − 1)`;
//! - without the radix cache (bench_serving sends `ignore_eos`), the PrefillAdder's
//!   `add_one_req_ignore_eos` admits a request only if, alone in an empty server,
//!   `pool − candidate − max_new > 1`. Before SGLang 0.4.8 `candidate` is the prompt length
//!   (`len(origin_input_ids)`); from 0.4.8 (sglang PR #7434, June 2025) it is the page-rounded
//!   extend length, so with `--page-size` > 1 a request clipped to the longest output whose
//!   prompt does not end on a page boundary is never admitted and SGLang leaves it waiting
//!   for ever.
use crate::spec::server::ServerConfig;
use crate::spec::version::Version;

/// First SGLang version whose ignore-EOS admission subtracts the page-rounded extend length
/// rather than the prompt length (sglang PR #7434).
pub const PAGE_ROUNDED_IGNORE_EOS_SINCE: Version = Version::new(0, 4, 8);

/// The server limits admission depends on, copied out of a [`ServerConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionLimits {
    pub context_length: u64,
    pub kv_pool_tokens: u64,
    pub page_size: u64,
    /// The radix cache is off: admission takes the stricter ignore-EOS path.
    pub ignore_eos_path: bool,
    /// The ignore-EOS path subtracts the page-rounded extend (0.4.8+), not the prompt.
    pub page_rounded_candidate: bool,
    /// vLLM's API-server rule replaces SGLang's (`None` for SGLang).
    pub vllm: Option<VllmAdmission>,
}

/// vLLM's request validation (`serving_engine._validate_input`, reference A.6): HTTP 400
/// when `prompt ≥ max_model_len`, or (up to 0.31) when `prompt + max_tokens > max_model_len`;
/// from 0.32 `max_tokens` is clipped to `max_model_len − prompt` instead. The KV cache always
/// holds `max_model_len` tokens (vLLM refuses to start otherwise), so nothing waits for ever.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VllmAdmission {
    pub max_model_len: u64,
    pub clips_max_tokens: bool,
}

impl AdmissionLimits {
    pub fn of(cfg: &ServerConfig) -> Self {
        AdmissionLimits {
            context_length: cfg.context_length,
            kv_pool_tokens: cfg.kv_pool_tokens,
            page_size: cfg.page_size.max(1),
            ignore_eos_path: !cfg.radix_cache,
            page_rounded_candidate: cfg.version >= PAGE_ROUNDED_IGNORE_EOS_SINCE,
            vllm: cfg.vllm.as_ref().map(|v| VllmAdmission {
                max_model_len: v.max_model_len,
                clips_max_tokens: v.clips_max_tokens,
            }),
        }
    }

    /// KV tokens the ignore-EOS check charges a candidate whose prompt is `prompt_len` and
    /// whose extend (tokens to prefill now) is `extend_len`.
    pub fn ignore_eos_candidate_tokens(&self, prompt_len: u64, extend_len: u64) -> u64 {
        if self.page_rounded_candidate {
            extend_len.div_ceil(self.page_size) * self.page_size
        } else {
            prompt_len
        }
    }
}

/// Why the server refuses a request outright (bench_serving counts it as failed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// prompt ≥ context, or prompt + output ≥ context (rejected by the TokenizerManager).
    Context,
    /// prompt + 1 ≥ KV pool (aborted by the scheduler).
    KvPool,
}

/// The server's verdict on a request of `prompt_len` tokens asking for `output_len`: refused,
/// or queued with `max_new_tokens` after the scheduler's clip.
pub fn admit(lim: &AdmissionLimits, prompt_len: u64, output_len: u64) -> Result<u64, Refusal> {
    if let Some(v) = lim.vllm {
        let room = v.max_model_len.saturating_sub(prompt_len);
        return match () {
            _ if prompt_len >= v.max_model_len => Err(Refusal::Context),
            _ if v.clips_max_tokens => Ok(output_len.min(room)),
            _ if output_len > room => Err(Refusal::Context),
            _ => Ok(output_len),
        };
    }
    let ctx = lim.context_length;
    if prompt_len >= ctx || prompt_len.saturating_add(output_len) >= ctx {
        return Err(Refusal::Context);
    }
    if prompt_len.saturating_add(1) >= lim.kv_pool_tokens {
        return Err(Refusal::KvPool);
    }
    let max_req_len = (ctx - 1).min(lim.kv_pool_tokens - 1);
    Ok(output_len.min(max_req_len.saturating_sub(prompt_len + 1)))
}

/// A queued request (`max_new` after the clip) that the PrefillAdder would refuse even alone
/// in an empty server: SGLang leaves it, and every request behind it, waiting for ever.
pub fn waits_forever(lim: &AdmissionLimits, prompt_len: u64, max_new: u64) -> bool {
    if !lim.ignore_eos_path || lim.vllm.is_some() {
        // add_one_req: prompt + max_new < pool always holds after the clip.
        return false;
    }
    let candidate = lim.ignore_eos_candidate_tokens(prompt_len, prompt_len);
    // IGNORE_EOS_RESERVE_TOKENS = 1 with the request alone (bs = 1).
    lim.kv_pool_tokens as i128 - candidate as i128 - max_new as i128 <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(page: u64, rounded: bool) -> AdmissionLimits {
        AdmissionLimits {
            context_length: 32768,
            kv_pool_tokens: 1088,
            page_size: page,
            ignore_eos_path: true,
            page_rounded_candidate: rounded,
            vllm: None,
        }
    }

    #[test]
    fn clip_and_refusals_by_hand() {
        let lim = limits(16, false);
        // max_req_len = min(32767, 1087) = 1087; max_new ≤ 1087 − 1 − 1 = 1085.
        assert_eq!(admit(&lim, 1, 1080), Ok(1080));
        assert_eq!(admit(&lim, 1, 5000), Ok(1085));
        assert_eq!(admit(&lim, 1087, 1), Err(Refusal::KvPool));
        assert_eq!(admit(&lim, 1086, 1), Ok(0));
        assert_eq!(admit(&lim, 32768, 1), Err(Refusal::Context));
        assert_eq!(admit(&lim, 100, 32668), Err(Refusal::Context));
    }

    #[test]
    fn page_rounded_candidate_never_fits_at_the_longest_output() {
        // 0.4.6: 1088 − 1 − 1085 = 2 > 1, admitted.
        assert!(!waits_forever(&limits(16, false), 1, 1085));
        // 0.4.8+: 1088 − 16 − 1085 = −13 ≤ 1, never admitted.
        assert!(waits_forever(&limits(16, true), 1, 1085));
        // A page-aligned prompt: 1088 − 16 − 1070 = 2 > 1.
        assert!(!waits_forever(&limits(16, true), 16, 1070));
        // Page 1: 1088 − 1 − 1085 = 2 > 1.
        assert!(!waits_forever(&limits(1, true), 1, 1085));
        // The radix-cache path never refuses a clipped request.
        let radix = AdmissionLimits {
            ignore_eos_path: false,
            ..limits(16, true)
        };
        assert!(!waits_forever(&radix, 1, 1085));
    }

    #[test]
    fn vllm_rejects_over_long_requests_until_0_32_then_clips() {
        let old = AdmissionLimits {
            vllm: Some(VllmAdmission {
                max_model_len: 4096,
                clips_max_tokens: false,
            }),
            ..limits(16, true)
        };
        assert_eq!(admit(&old, 4000, 96), Ok(96)); // 4000 + 96 = 4096 ≤ 4096
        assert_eq!(admit(&old, 4000, 97), Err(Refusal::Context));
        assert_eq!(admit(&old, 4096, 1), Err(Refusal::Context));
        let new = AdmissionLimits {
            vllm: Some(VllmAdmission {
                max_model_len: 4096,
                clips_max_tokens: true,
            }),
            ..old
        };
        assert_eq!(admit(&new, 4000, 500), Ok(96));
        assert_eq!(admit(&new, 4096, 1), Err(Refusal::Context));
        assert!(!waits_forever(&new, 4000, 96));
    }
}
