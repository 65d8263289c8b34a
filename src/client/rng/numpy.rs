//! numpy's legacy `RandomState` (the global `np.random.*` functions), bit-exact for the calls
//! bench_serving makes: `np.random.seed(int)`, `np.random.randint(low, high, size=n)` with the
//! default int64 dtype, and `np.random.exponential(scale)`.
//!
//! * Seeding is MT19937 `init_genrand(seed)`; numpy accepts seeds in `[0, 2^32)`.
//! * `randint` is numpy's *masked rejection* sampler (`random_bounded_uint64_fill` with
//!   `use_masked = true`): `range = high - 1 - low`; `range == 0` yields `low` and consumes
//!   nothing; otherwise `mask` is the smallest `2^k - 1 >= range` and draws repeat until
//!   `(draw & mask) <= range`. A draw is one 32-bit word when `range < 2^32`, otherwise one
//!   64-bit word made of two 32-bit words, the first one being the high half.
//! * `exponential(scale) = -ln(1 - U) * scale` with `U` the 53-bit double of two words.
use super::Mt19937;

/// numpy legacy `RandomState` (MT19937). Clone it to fork a stream.
#[derive(Clone, Debug)]
pub struct NumpyRandomState {
    mt: Mt19937,
    /// The second normal of the last polar Box-Muller pair (`has_gauss`/`gauss`).
    gauss: Option<f64>,
}

impl NumpyRandomState {
    /// `np.random.seed(seed)` / `np.random.RandomState(seed)`.
    pub fn new(seed: u32) -> Self {
        NumpyRandomState {
            mt: Mt19937::from_genrand(seed),
            gauss: None,
        }
    }

    /// The next raw 32-bit output (numpy `next_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        self.mt.next_u32()
    }

    /// numpy `next_uint64` for the legacy MT19937: `(first << 32) | second`.
    pub fn next_u64(&mut self) -> u64 {
        let high = u64::from(self.mt.next_u32());
        let low = u64::from(self.mt.next_u32());
        (high << 32) | low
    }

    /// `np.random.random_sample()`: uniform on [0, 1) with 53 random bits from two words,
    /// `((a >> 5) * 2^26 + (b >> 6)) / 2^53`.
    pub fn next_double(&mut self) -> f64 {
        self.mt.next_res53()
    }

    /// `np.random.randint(low, high)`: uniform on the integers `[low, high)`, or `None`
    /// without consuming anything when `high <= low` (where numpy raises
    /// `ValueError: low >= high`).
    pub fn try_randint(&mut self, low: i64, high: i64) -> Option<i64> {
        let range = Self::range(low, high)?;
        Some(self.draw_offset(low, range, mask_for(range)))
    }

    /// `np.random.randint(low, high)`: uniform on the integers `[low, high)` (high
    /// exclusive). A one-value range (`high == low + 1`) consumes no randomness.
    ///
    /// Precondition: `high > low` (numpy raises otherwise). Checked by `debug_assert`; in
    /// release builds an empty range returns `low` and consumes nothing.
    pub fn randint(&mut self, low: i64, high: i64) -> i64 {
        debug_assert!(high > low, "randint: empty range [{low}, {high})");
        self.try_randint(low, high).unwrap_or(low)
    }

    /// `np.random.randint(low, high, size=n)`: `n` values, drawn in order; `None` without
    /// consuming anything when `high <= low`.
    pub fn try_randint_n(&mut self, low: i64, high: i64, n: usize) -> Option<Vec<i64>> {
        let range = Self::range(low, high)?;
        let mask = mask_for(range);
        Some((0..n).map(|_| self.draw_offset(low, range, mask)).collect())
    }

    /// `np.random.randint(low, high, size=n)`: `n` values, drawn in order.
    ///
    /// Precondition: `high > low`, as for [`randint`](Self::randint); in release builds an
    /// empty range yields `n` copies of `low` and consumes nothing.
    pub fn randint_n(&mut self, low: i64, high: i64, n: usize) -> Vec<i64> {
        debug_assert!(high > low, "randint_n: empty range [{low}, {high})");
        self.try_randint_n(low, high, n)
            .unwrap_or_else(|| vec![low; n])
    }

    /// `np.random.exponential(scale)`: `-ln(1 - U) * scale`, one 53-bit double consumed.
    /// bench_serving calls it with `scale = 1 / request_rate` (seconds).
    ///
    /// Precondition: `scale >= 0` (numpy raises otherwise); other values are used as given.
    pub fn exponential(&mut self, scale: f64) -> f64 {
        -(1.0 - self.next_double()).ln() * scale
    }

    /// `np.random.gamma(shape, scale)` (numpy `legacy_gamma`): `scale * standard_gamma(shape)`.
    /// vLLM's client draws its inter-arrival gaps with it (`--burstiness`); shape 1 is exactly
    /// [`exponential`](Self::exponential). Precondition: `shape >= 0` (numpy raises otherwise).
    pub fn gamma(&mut self, shape: f64, scale: f64) -> f64 {
        scale * self.standard_gamma(shape)
    }

    /// numpy `legacy_standard_gamma`: shape 1 exponential; shape < 1 Johnk-style rejection
    /// (Ahrens-Dieter GS); shape > 1 Marsaglia-Tsang with the legacy polar normals.
    fn standard_gamma(&mut self, shape: f64) -> f64 {
        if shape == 1.0 {
            return self.exponential(1.0);
        }
        if shape <= 0.0 {
            return 0.0;
        }
        if shape < 1.0 {
            loop {
                let u = self.next_double();
                let v = self.exponential(1.0);
                if u <= 1.0 - shape {
                    let x = u.powf(1.0 / shape);
                    if x <= v {
                        return x;
                    }
                } else {
                    let y = -((1.0 - u) / shape).ln();
                    let x = (1.0 - shape + shape * y).powf(1.0 / shape);
                    if x <= v + y {
                        return x;
                    }
                }
            }
        }
        let b = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * b).sqrt();
        loop {
            let (x, v) = loop {
                let x = self.gauss();
                let v = 1.0 + c * x;
                if v > 0.0 {
                    break (x, v);
                }
            };
            let v = v * v * v;
            let u = self.next_double();
            if u < 1.0 - 0.0331 * (x * x) * (x * x) {
                return b * v;
            }
            if u.ln() < 0.5 * x * x + b * (1.0 - v + v.ln()) {
                return b * v;
            }
        }
    }

    /// numpy `legacy_gauss`: polar Box-Muller, the second value of each pair kept for the
    /// next call.
    fn gauss(&mut self) -> f64 {
        if let Some(g) = self.gauss.take() {
            return g;
        }
        let (x1, x2, r2) = loop {
            let x1 = 2.0 * self.next_double() - 1.0;
            let x2 = 2.0 * self.next_double() - 1.0;
            let r2 = x1 * x1 + x2 * x2;
            if r2 < 1.0 && r2 != 0.0 {
                break (x1, x2, r2);
            }
        };
        let f = (-2.0 * r2.ln() / r2).sqrt();
        self.gauss = Some(f * x1);
        f * x2
    }

    /// `high - 1 - low` as an unsigned span, or `None` for an empty range.
    fn range(low: i64, high: i64) -> Option<u64> {
        // Two's-complement wrapping gives the exact span even for i64::MIN..i64::MAX.
        (high > low).then(|| (high as u64).wrapping_sub(low as u64).wrapping_sub(1))
    }

    /// `low + v` with `v` uniform on `[0, range]` by masked rejection.
    fn draw_offset(&mut self, low: i64, range: u64, mask: u64) -> i64 {
        let v = if range == 0 {
            0
        } else if range <= u64::from(u32::MAX) {
            loop {
                let v = u64::from(self.next_u32()) & mask;
                if v <= range {
                    break v;
                }
            }
        } else {
            loop {
                let v = self.next_u64() & mask;
                if v <= range {
                    break v;
                }
            }
        };
        // low + v <= high - 1 fits in i64; wrapping add of the unsigned offset is exact.
        low.wrapping_add(v as i64)
    }
}

/// Smallest `2^k - 1` that is `>= range` (numpy `gen_mask`).
fn mask_for(range: u64) -> u64 {
    if range == 0 {
        0
    } else {
        u64::MAX >> range.leading_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_is_smallest_all_ones_cover() {
        assert_eq!(mask_for(0), 0);
        assert_eq!(mask_for(1), 1);
        assert_eq!(mask_for(1023), 1023);
        assert_eq!(mask_for(1024), 2047);
        assert_eq!(mask_for(u64::from(u32::MAX)), u64::from(u32::MAX));
        assert_eq!(mask_for(1 << 32), (1 << 33) - 1);
        assert_eq!(mask_for(u64::MAX), u64::MAX);
    }

    #[test]
    fn seed_1_matches_numpy() {
        // np.random.seed(1); np.random.randint(1, 1025, size=5); then randint(0, 1025, 5)
        let mut rng = NumpyRandomState::new(1);
        assert_eq!(rng.randint_n(1, 1025, 5), [38, 236, 909, 73, 768]);
        assert_eq!(rng.randint_n(0, 1025, 5), [905, 715, 847, 960, 144]);
    }

    #[test]
    fn single_value_range_consumes_nothing() {
        let mut a = NumpyRandomState::new(3);
        let mut b = NumpyRandomState::new(3);
        assert_eq!(a.randint_n(2048, 2049, 100), vec![2048; 100]);
        assert_eq!(a.randint(-5, -4), -5);
        assert_eq!(a.next_u32(), b.next_u32());
    }

    #[test]
    fn empty_range_is_none_and_consumes_nothing() {
        let mut a = NumpyRandomState::new(9);
        let mut b = NumpyRandomState::new(9);
        assert_eq!(a.try_randint(5, 5), None);
        assert_eq!(a.try_randint(5, 4), None);
        assert_eq!(a.try_randint_n(i64::MAX, i64::MIN, 3), None);
        assert_eq!(a.next_u32(), b.next_u32());
    }

    #[test]
    fn extreme_ranges_stay_in_bounds() {
        let mut rng = NumpyRandomState::new(11);
        for _ in 0..1000 {
            let v = rng.randint(i64::MIN, i64::MAX);
            assert!(v < i64::MAX);
            let w = rng.randint(-3, 1 << 40);
            assert!((-3..1 << 40).contains(&w));
            let x = rng.randint(-7, 3);
            assert!((-7..3).contains(&x));
        }
    }

    #[test]
    fn exponential_is_nonnegative_and_scaled() {
        let mut a = NumpyRandomState::new(4);
        let mut b = NumpyRandomState::new(4);
        for _ in 0..1000 {
            let x = a.exponential(0.25);
            let y = b.exponential(1.0);
            assert!(x >= 0.0 && x.is_finite());
            assert_eq!(x, y * 0.25);
        }
        assert_eq!(a.exponential(0.0), 0.0);
    }

    #[test]
    fn clone_forks_the_stream() {
        let mut a = NumpyRandomState::new(2);
        a.next_u32();
        let mut b = a.clone();
        assert_eq!(a.next_double().to_bits(), b.next_double().to_bits());
    }
}
