//! Speculative decoding in the scheduler: how many tokens a verify gives the running batch,
//! drawn deterministically from the seed, and SGLang's accept-length counters.
//!
//! The draw mirrors SGLang's own synthetic acceptance (`SGLANG_SIMULATE_ACC_LEN` with
//! `match-expected`): one gain per batch per iteration, ⌊L⌋ or ⌈L⌉ with probabilities that
//! make its mean exactly L. Every running request gains it (clipped at its output length), so
//! the running batch stays a set of constant offsets and a step stays O(1) amortised;
//! per-request spread around the mean is not modelled.
//!
//! The counters are `scheduler_metrics_mixin.py`'s (0.4.3.post3+): every decode iteration adds
//! Σ(accepted + 1) and the batch size to a window that `log_decode_stats` folds into the totals
//! every `decode_log_interval` (40) iterations; `avg_spec_accept_length` = totals' ratio, so
//! the last < 40 iterations are not in it.
use super::config::SpecDecode;

/// SGLang's `decode_log_interval` default.
pub const DECODE_LOG_INTERVAL: u64 = 40;

/// The gain draws and accept-length counters of one scheduler.
#[derive(Debug, Clone, Default)]
pub struct Acceptance {
    rng: u64,
    decode_iters: u64,
    /// (Σ tokens gained, Σ batch size) since the last fold, and folded totals.
    window: (u64, u64),
    total: (u64, u64),
}

impl Acceptance {
    pub fn new(seed: u64) -> Self {
        Acceptance {
            rng: seed,
            ..Default::default()
        }
    }

    /// SplitMix64: a uniform draw in [0, 1).
    fn uniform(&mut self) -> f64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Tokens every running request gains in the next verify: ⌊L⌋ + 1 with probability
    /// frac(L), else ⌊L⌋ (mean L), within [1, max_gain].
    pub fn draw(&mut self, spec: &SpecDecode) -> u64 {
        let l = spec.accept_length;
        let floor = l.floor();
        let up = self.uniform() < l - floor;
        ((floor as u64) + up as u64).clamp(1, spec.max_gain.max(1))
    }

    /// One decode iteration of `bs` requests gained `tokens` in all.
    pub fn record(&mut self, bs: u64, tokens: u64) {
        self.window.0 += tokens;
        self.window.1 += bs;
        self.decode_iters += 1;
        if self.decode_iters % DECODE_LOG_INTERVAL == 0 {
            self.total.0 += std::mem::take(&mut self.window.0);
            self.total.1 += std::mem::take(&mut self.window.1);
        }
    }

    /// `avg_spec_accept_length` as `/get_server_info` reports it (`None` before the first
    /// 40 decode iterations, where SGLang reports 0 and bench_serving prints nothing).
    pub fn accept_length(&self) -> Option<f64> {
        (self.total.1 > 0).then(|| self.total.0 as f64 / self.total.1 as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_average_to_the_accept_length() {
        let spec = SpecDecode {
            accept_length: 2.3,
            max_gain: 4,
            buffer_tokens: 7,
        };
        let mut a = Acceptance::new(7);
        let n = 100_000;
        let sum: u64 = (0..n).map(|_| a.draw(&spec)).sum();
        assert!((sum as f64 / n as f64 - 2.3).abs() < 0.01);
        let mut b = Acceptance::new(7);
        assert!((0..100).all(|_| (2..=3).contains(&b.draw(&spec))));
    }

    #[test]
    fn accept_length_folds_every_forty_iterations() {
        let mut a = Acceptance::new(0);
        for _ in 0..39 {
            a.record(2, 6);
        }
        assert_eq!(a.accept_length(), None);
        a.record(2, 6);
        assert_eq!(a.accept_length(), Some(3.0));
        for _ in 0..39 {
            a.record(1, 1); // not folded yet
        }
        assert_eq!(a.accept_length(), Some(3.0));
    }
}
