//! Which speculative worker SGLang runs, per version: spec v1 (`EAGLEWorker`, the scheduler
//! without overlap) or spec v2 (`EAGLEWorkerV2`, run by the overlap scheduler, so the CPU
//! scheduling of step n + 1 hides under the GPU's draft + verify of step n), and with v2 the
//! KV it holds per request. Read from SGLang's `server_args.py` / `arg_groups/speculative_hook.py`
//! and `speculative/spec_info.py::create_worker` of each release:
//!
//! * ≤ 0.5.4: v1 only (0.5.4's `--enable-beta-spec` is not a servesim flag).
//! * 0.5.5–0.5.10: env `SGLANG_ENABLE_SPEC_V2` (default off). On, it forces the overlap on for
//!   EAGLE / NEXTN (EAGLE3 from 0.5.7, STANDALONE from 0.5.9; 0.5.8 is read as 0.5.7), and
//!   0.5.7+ refuses a user top-k > 1; the other algorithms stay v1. In 0.5.5–0.5.6.post2 the
//!   env also leaves the overlap on for EAGLE3 (it is forced off only without the env), so
//!   EAGLE3 runs `EAGLEWorkerV2` there unless `--disable-overlap-schedule` (read in the
//!   0.5.5, 0.5.6, 0.5.6.post1 and 0.5.6.post2 wheels: `server_args.py`,
//!   `speculative/spec_info.py::_create_eagle_worker`).
//! * 0.5.11–0.5.12: the env defaults on (PR #21062): EAGLE / EAGLE3 / NEXTN / STANDALONE run v2
//!   unless `--disable-overlap-schedule`, the env is off, or the user set top-k > 1 (then v1;
//!   an auto-chosen top-k > 1 keeps v2). NGRAM: v1.
//! * 0.5.13: the V2 worker always runs for those; the env off or `--disable-overlap-schedule`
//!   runs it synchronously (no overlap, v2's KV allocation). NGRAM: no overlap.
//! * 0.5.14+: the env is removed (a warning); only `--disable-overlap-schedule` turns the
//!   overlap off, NGRAM included (its worker follows `enable_overlap`).
//!
//! The env is servesim's `--sglang-enable-spec-v2 true|false` (servesim has no env mechanism).
//! What the overlap hides is priced by the engine's one overlap model (`cost::overheads`,
//! `cost::speculative`: a step takes max(GPU, CPU) instead of GPU + CPU; finished requests ride
//! one more step). The V2 worker's KV: `prepare_for_decode` keeps each request allocated to
//! `kv_committed_len + 2 · ALLOC_LEN_PER_DECODE`, `ALLOC_LEN_PER_DECODE = max(K·k, N)`
//! (`eagle_info_v2.py`, `schedule_batch.py::_new_tokens_required_next_decode_spec_v2`), and its
//! draft extend runs on a fixed N tokens per request (`DRAFT_EXTEND_V2`) instead of K + 1.
use super::speculative::{SpecAlgorithm, SpecWorker, SpeculativeConfig, SpeculativeFlags};
use super::version::Version;
use crate::error::{Error, Result};

/// First version with env `SGLANG_ENABLE_SPEC_V2` (default off).
pub const SPEC_V2_ENV_FROM: Version = Version::new(0, 5, 5);
/// First version whose env forces the overlap on for EAGLE3 as for EAGLE (server_args.py
/// `_handle_speculative_decoding`, 0.5.7; 0.5.5–0.5.6.post2 force it on for EAGLE only).
pub const EAGLE3_OVERLAP_FORCED_FROM: Version = Version::new(0, 5, 7);
/// First version where spec v2 (the overlapped worker) is the default (PR #21062).
pub const SPEC_V2_DEFAULT_FROM: Version = Version::new(0, 5, 11);
/// First version that runs the V2 worker for a user top-k > 1 and without overlap.
pub const SPEC_V2_ALWAYS_FROM: Version = Version::new(0, 5, 13);
/// First version without the env (overlap follows `--disable-overlap-schedule` only, NGRAM too).
pub const SPEC_V2_ENV_REMOVED_FROM: Version = Version::new(0, 5, 14);

impl SpecWorker {
    pub const V1: SpecWorker = SpecWorker {
        v2: false,
        overlap: false,
    };
    pub const V2_OVERLAP: SpecWorker = SpecWorker {
        v2: true,
        overlap: true,
    };
}

/// Algorithms the 0.5.5–0.5.10 env can switch to v2 (NEXTN is SGLang's EAGLE).
fn env_supports(a: SpecAlgorithm, version: Version) -> bool {
    match a {
        SpecAlgorithm::Eagle | SpecAlgorithm::Nextn => true,
        // 0.5.5–0.5.6.post2 leave the overlap on for EAGLE3 when the env is set (they only
        // force it off without the env), and `_create_eagle_worker` then builds
        // `EAGLEWorkerV2` for EAGLE3 as for EAGLE; 0.5.7 forces it on for both.
        SpecAlgorithm::Eagle3 => version >= SPEC_V2_ENV_FROM,
        SpecAlgorithm::Standalone => version >= Version::new(0, 5, 9),
        SpecAlgorithm::Ngram => false,
    }
}

/// The worker SGLang `version` runs for `s`, given the user's flags; notes say why when it
/// differs from the version's default. Errors where SGLang refuses (env on with a user top-k > 1
/// in 0.5.7–0.5.10).
pub fn choose(
    s: &SpeculativeConfig,
    f: &SpeculativeFlags,
    version: Version,
    disable_overlap: bool,
) -> Result<(SpecWorker, Vec<String>)> {
    let env = f.sglang_enable_spec_v2;
    let user_topk_above_1 = f.speculative_eagle_topk.is_some_and(|k| k > 1);
    let mut notes = Vec::new();
    let ngram = s.algorithm == SpecAlgorithm::Ngram;
    if env.is_some() && !(SPEC_V2_ENV_FROM..SPEC_V2_ENV_REMOVED_FROM).contains(&version) {
        notes.push(format!(
            "--sglang-enable-spec-v2 has no effect in SGLang {version} (SGLANG_ENABLE_SPEC_V2 \
             exists in {SPEC_V2_ENV_FROM} to {}; 0.5.14+ always runs spec v2, \
             --disable-overlap-schedule runs it without overlap)",
            Version::new(0, 5, 13)
        ));
    }
    let worker = if version >= SPEC_V2_ENV_REMOVED_FROM {
        SpecWorker {
            v2: !ngram,
            overlap: !disable_overlap,
        }
    } else if version >= SPEC_V2_ALWAYS_FROM {
        SpecWorker {
            v2: !ngram,
            overlap: !ngram && !disable_overlap && env != Some(false),
        }
    } else if version >= SPEC_V2_DEFAULT_FROM {
        let v2 = !ngram && !disable_overlap && env != Some(false) && !user_topk_above_1;
        if !ngram && !disable_overlap && env != Some(false) && user_topk_above_1 {
            notes.push(format!(
                "spec v1 (no overlap): SGLang {version}'s spec v2 supports only a user top-k of 1"
            ));
        }
        SpecWorker { v2, overlap: v2 }
    } else if version >= SPEC_V2_ENV_FROM && env == Some(true) {
        if !env_supports(s.algorithm, version) {
            notes.push(format!(
                "--sglang-enable-spec-v2: SGLang {version} has no spec v2 for {} (spec v1 runs)",
                s.algorithm.name()
            ));
            SpecWorker::V1
        } else if s.algorithm == SpecAlgorithm::Eagle3
            && version < EAGLE3_OVERLAP_FORCED_FROM
            && disable_overlap
        {
            notes.push(format!(
                "--disable-overlap-schedule: SGLang {version} does not turn the overlap on for \
                 EAGLE3 with SGLANG_ENABLE_SPEC_V2 (only for EAGLE, from 0.5.7 for both), so \
                 spec v1 runs"
            ));
            SpecWorker::V1
        } else if user_topk_above_1 && version >= EAGLE3_OVERLAP_FORCED_FROM {
            return Err(Error::invalid(
                "--speculative-eagle-topk",
                "speculative_eagle_topk",
                format!(
                    "SGLang {version}'s spec v2 (--sglang-enable-spec-v2 true) supports only \
                     top-k 1, got {}",
                    s.topk
                ),
            ));
        } else {
            if disable_overlap {
                notes.push(
                    "--disable-overlap-schedule is overridden: spec v2 turns the overlap \
                     scheduler on"
                        .into(),
                );
            }
            SpecWorker::V2_OVERLAP
        }
    } else {
        SpecWorker::V1
    };
    Ok((worker, notes))
}

/// `ALLOC_LEN_PER_DECODE` of the V2 worker: max(K·k, N) KV slots (the draft tree or the verify,
/// whichever is longer).
pub fn alloc_len_per_decode(s: &SpeculativeConfig) -> u64 {
    (s.num_steps * s.topk).max(s.num_draft_tokens)
}

/// The launch command needs `SGLANG_ENABLE_SPEC_V2=1` (spec v2 before it is the default; from
/// 0.5.11 the env off is what `--disable-overlap-schedule` gives).
pub fn needs_env_opt_in(s: &SpeculativeConfig, version: Version) -> bool {
    s.worker.v2 && version < SPEC_V2_DEFAULT_FROM
}

impl SpeculativeConfig {
    /// KV tokens per running request `check_decode_mem` wants free before a decode step
    /// (spec v1: `decode_mem_cache_buf_multiplier` = N + k·K, transient draft and verify
    /// slots, N for NGRAM; spec v2: the 2 · max(K·k, N) slots it keeps allocated ahead).
    pub fn decode_buffer_tokens(&self) -> u64 {
        match self.algorithm {
            _ if self.worker.v2 => 2 * alloc_len_per_decode(self),
            SpecAlgorithm::Ngram => self.num_draft_tokens,
            _ => self.num_draft_tokens + self.topk * self.num_steps,
        }
    }

    /// Tokens per request of the draft extend after a verify: K + 1 (spec v1's draft-extend
    /// graph), N with spec v2 (`DRAFT_EXTEND_V2` over every verified slot).
    pub fn draft_extend_width(&self) -> u64 {
        if self.worker.v2 {
            self.num_draft_tokens
        } else {
            self.num_steps + 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::bundled::load_model;

    fn eagle3(flags: &SpeculativeFlags, version: Version) -> SpeculativeConfig {
        let target = load_model("qwen3-8b").unwrap();
        let mut f = flags.clone();
        f.speculative_algorithm = Some("EAGLE3".into());
        f.speculative_draft_model_path = Some("qwen3-8b-eagle3".into());
        SpeculativeConfig::resolve(&f, &target, version, 1)
            .unwrap()
            .unwrap()
    }

    fn worker(env: Option<bool>, topk: Option<u64>, v: &str, disable: bool) -> Result<SpecWorker> {
        let version: Version = v.parse().unwrap();
        let f = SpeculativeFlags {
            sglang_enable_spec_v2: env,
            speculative_eagle_topk: topk,
            speculative_num_steps: topk.map(|_| 3),
            speculative_num_draft_tokens: topk.map(|k| if k > 1 { 8 } else { 4 }),
            ..Default::default()
        };
        choose(&eagle3(&f, version), &f, version, disable).map(|(w, _)| w)
    }

    #[test]
    fn default_is_v1_until_0_5_10_and_overlapped_v2_from_0_5_11() {
        assert_eq!(worker(None, None, "0.5.10", false).unwrap(), SpecWorker::V1);
        assert_eq!(
            worker(None, None, "0.5.11", false).unwrap(),
            SpecWorker::V2_OVERLAP
        );
        assert_eq!(
            worker(None, None, "0.5.15", false).unwrap(),
            SpecWorker::V2_OVERLAP
        );
    }

    #[test]
    fn env_and_flags_per_version() {
        // Opt-in before 0.5.11; it even overrides --disable-overlap-schedule there.
        assert_eq!(
            worker(Some(true), None, "0.5.7", true).unwrap(),
            SpecWorker::V2_OVERLAP
        );
        // 0.5.6 (wheel: server_args.py forces the overlap off for EAGLE3 only without the
        // env; `_create_eagle_worker` builds EAGLEWorkerV2 for it): v2 with the env, unless the
        // user disables the overlap, which 0.5.6 does not override for EAGLE3.
        assert_eq!(
            worker(Some(true), None, "0.5.6", false).unwrap(),
            SpecWorker::V2_OVERLAP
        );
        assert_eq!(
            worker(Some(true), None, "0.5.6", true).unwrap(),
            SpecWorker::V1
        );
        assert_eq!(
            worker(Some(true), None, "0.5.4", false).unwrap(),
            SpecWorker::V1
        );
        // 0.5.7–0.5.10 refuse a user top-k > 1 with spec v2 on.
        assert!(worker(Some(true), Some(4), "0.5.10", false).is_err());
        // 0.5.11–0.5.12 fall back to v1 for it, or when the env is off.
        assert_eq!(
            worker(None, Some(4), "0.5.12", false).unwrap(),
            SpecWorker::V1
        );
        assert_eq!(
            worker(Some(false), None, "0.5.11", false).unwrap(),
            SpecWorker::V1
        );
        // 0.5.13: the V2 worker, synchronous when the env is off.
        let sync = SpecWorker {
            v2: true,
            overlap: false,
        };
        assert_eq!(worker(Some(false), None, "0.5.13", false).unwrap(), sync);
        assert_eq!(
            worker(None, Some(4), "0.5.13", false).unwrap(),
            SpecWorker::V2_OVERLAP
        );
        // 0.5.14+: the env is gone; --disable-overlap-schedule alone turns the overlap off.
        assert_eq!(
            worker(Some(false), None, "0.5.14", false).unwrap(),
            SpecWorker::V2_OVERLAP
        );
        assert_eq!(worker(None, None, "0.5.14", true).unwrap(), sync);
    }

    #[test]
    fn alloc_len_is_the_longer_of_tree_and_verify() {
        let f = SpeculativeFlags {
            speculative_num_steps: Some(5),
            speculative_eagle_topk: Some(4),
            speculative_num_draft_tokens: Some(8),
            ..Default::default()
        };
        assert_eq!(
            alloc_len_per_decode(&eagle3(&f, Version::new(0, 5, 13))),
            20
        );
        assert_eq!(
            alloc_len_per_decode(&eagle3(
                &SpeculativeFlags::default(),
                Version::new(0, 5, 13)
            )),
            4
        );
    }
}
