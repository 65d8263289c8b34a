//! What `--enable-dp-attention` changed in SGLang's server arguments, per release (read in the
//! PyPI wheels' `srt/server_args.py`, `__post_init__`):
//! - up to 0.4.4: `self.dp_size = self.tp_size` (every TP rank is an attention DP rank, `--dp`
//!   ignored) and `self.chunked_prefill_size //= 2`: each rank's scheduler prefills up to half
//!   the chunk per step;
//! - from 0.4.4.post1: `--dp` must be > 1 and divide `--tp`, and the chunk is divided by it
//!   (`chunked_prefill_size // dp_size`: the flag became a budget over all ranks);
//! - 0.4.1 to 0.4.1.post6 also set `disable_overlap_schedule = True` (0.4.1.post7 dropped it).
//!
//! The schedule conservativeness × 0.3 is the same in every release and stays in
//! `spec::server`.
use super::version::Version;

/// First release dividing the chunk by `--dp` instead of halving it, and honouring `--dp`.
pub const CHUNK_DIVIDED_BY_DP_FROM: Version = Version::post(0, 4, 4, 1);
/// First release that no longer turns the overlap scheduler off under DP attention.
pub const OVERLAP_KEPT_FROM: Version = Version::post(0, 4, 1, 7);

/// The attention-DP size a release runs with: `--dp` from 0.4.4.post1, `--tp` before.
pub fn dp_size(version: Version, dp_flag: u64, tp: u64) -> u64 {
    if version >= CHUNK_DIVIDED_BY_DP_FROM {
        dp_flag
    } else {
        tp
    }
}

/// The chunked-prefill budget of one attention-DP rank's scheduler.
pub fn chunk_per_rank(version: Version, chunk_tokens: u64, dp: u64) -> u64 {
    let divisor = if version >= CHUNK_DIVIDED_BY_DP_FROM {
        dp
    } else {
        2
    };
    (chunk_tokens / divisor).max(1)
}

/// Whether the release turns the overlap scheduler off under DP attention.
pub fn disables_overlap(version: Version) -> bool {
    version < OVERLAP_KEPT_FROM
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    #[test]
    fn releases_before_0_4_4_post1_halve_the_chunk_and_force_dp_to_tp() {
        // 0.4.1 on 8 GPUs, default chunk 8192: 4096 tokens per rank, dp 8 whatever --dp says.
        assert_eq!(dp_size(v("0.4.1"), 1, 8), 8);
        assert_eq!(chunk_per_rank(v("0.4.1"), 8192, 8), 4096);
        assert_eq!(chunk_per_rank(v("0.4.4"), 8192, 8), 4096);
        // From 0.4.4.post1: the flag's dp, chunk / dp.
        assert_eq!(dp_size(v("0.4.4.post1"), 4, 8), 4);
        assert_eq!(chunk_per_rank(v("0.4.4.post1"), 8192, 4), 2048);
        assert_eq!(chunk_per_rank(v("0.5.6"), 16384, 8), 2048);
    }

    #[test]
    fn overlap_is_off_under_dp_attention_until_0_4_1_post7() {
        assert!(disables_overlap(v("0.4.1")));
        assert!(disables_overlap(v("0.4.1.post6")));
        assert!(!disables_overlap(v("0.4.1.post7")));
        assert!(!disables_overlap(v("0.5.1")));
    }
}
