//! numpy's summary statistics (`np.percentile` with the default `'linear'` method,
//! `np.median`, `np.mean`, `np.std` with `ddof=0`, `np.max`) over a multiset given as runs
//! `(value, count)`, without expanding it: memory grows with distinct values, not samples.
//!
//! Percentiles and medians are bit-for-bit what numpy returns for the expanded array (same
//! neighbours, same interpolation weight, same `_lerp` arithmetic). Mean and std are sums and
//! agree with numpy's pairwise summation to a few ulps, far below the 0.01 ms bench_serving
//! prints.
//!
//! An empty multiset gives 0 for every statistic: bench_serving calls `np.mean(x or 0)`,
//! i.e. the statistics of the one-element array `[0]`.

/// A multiset of finite `f64` values, either as sorted runs of equal values (any counts) or,
/// for per-request lists where every count is 1, as the plain sorted values (8 bytes a sample,
/// one unstable sort). Both give bit-identical statistics: the sums walk the same groups of
/// equal values in the same order.
#[derive(Debug, Clone, PartialEq)]
pub struct Runs(Repr, Sum);

/// `np.sum` of the samples, computed once (mean and std both need it).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sum(f64);

#[derive(Debug, Clone, PartialEq)]
enum Repr {
    Runs {
        /// Distinct values in ascending order with their multiplicities (all > 0).
        runs: Vec<(f64, u64)>,
        /// `ends[i]` = number of samples in `runs[..=i]` (the rank just past run `i`).
        ends: Vec<u64>,
    },
    /// Every sample, ascending; no −0.0 (so equal values have equal bits).
    Values(Vec<f64>),
}

impl Default for Runs {
    fn default() -> Self {
        Runs::with_sum(Repr::Values(Vec::new()))
    }
}

/// `f64::total_cmp` as an integer key (same order; equal keys are equal bits).
fn total_key(v: f64) -> i64 {
    let bits = v.to_bits() as i64;
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

impl Runs {
    /// Builds the multiset from runs in any order; zero counts are dropped and equal values
    /// merged. Values are ordered with `f64::total_cmp` (callers pass finite values).
    pub fn new(runs: impl IntoIterator<Item = (f64, u64)>) -> Self {
        let mut sorted: Vec<(f64, u64)> = runs.into_iter().filter(|&(_, c)| c > 0).collect();
        // Equal keys are equal values, whose counts are merged: the order among them is moot.
        sorted.sort_unstable_by_key(|r| total_key(r.0));
        let mut merged: Vec<(f64, u64)> = Vec::with_capacity(sorted.len());
        for (v, c) in sorted {
            match merged.last_mut() {
                Some(last) if last.0 == v => last.1 += c,
                _ => merged.push((v, c)),
            }
        }
        let mut ends = Vec::with_capacity(merged.len());
        let mut total = 0u64;
        for &(_, c) in &merged {
            total += c;
            ends.push(total);
        }
        Runs::with_sum(Repr::Runs { runs: merged, ends })
    }

    fn with_sum(repr: Repr) -> Self {
        let mut r = Runs(repr, Sum(0.0));
        r.1 = Sum(r.sum_groups(|v, c| v * c as f64));
        r
    }

    /// The multiset of `values`, each counted once (what [`Runs::new`] gives for count 1).
    pub fn from_values(values: impl IntoIterator<Item = f64>) -> Self {
        Self::from_sorted(super::sort::sorted_total(values.into_iter().collect()))
    }

    /// [`Runs::from_values`] of `convert(t)` for integer samples `t`, where `convert` is
    /// non-decreasing (e.g. ns to seconds): the integers are sorted, then converted.
    pub fn from_ints(ints: impl IntoIterator<Item = u64>, convert: impl Fn(u64) -> f64) -> Self {
        let sorted = super::sort::sorted_u64(ints.into_iter().collect());
        Self::from_sorted(sorted.into_iter().map(convert).collect())
    }

    /// `v` must be in `total_cmp` order.
    fn from_sorted(v: Vec<f64>) -> Self {
        if v.iter().any(|&x| x == 0.0 && x.is_sign_negative()) {
            // −0.0 == 0.0 but has other bits: keep the runs form's choice of representative.
            return Runs::new(v.into_iter().map(|x| (x, 1)));
        }
        Runs::with_sum(Repr::Values(v))
    }

    /// Number of samples (Σ counts).
    pub fn len(&self) -> u64 {
        match &self.0 {
            Repr::Runs { ends, .. } => ends.last().copied().unwrap_or(0),
            Repr::Values(v) => v.len() as u64,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with the distinct values ascending and their counts (groups of equal
    /// values), then returns the compensated sum of what `f` returned.
    fn sum_groups(&self, mut f: impl FnMut(f64, u64) -> f64) -> f64 {
        let mut acc = Neumaier::default();
        match &self.0 {
            Repr::Runs { runs, .. } => runs.iter().for_each(|&(v, c)| acc.add(f(v, c))),
            Repr::Values(v) => {
                let mut i = 0;
                while i < v.len() {
                    let x = v[i];
                    let start = i;
                    i += 1;
                    while i < v.len() && v[i] == x {
                        i += 1;
                    }
                    acc.add(f(x, (i - start) as u64));
                }
            }
        }
        acc.total()
    }

    /// The sample at 0-based `rank` of the sorted expansion (`rank < len()`).
    fn at(&self, rank: u64) -> f64 {
        match &self.0 {
            Repr::Runs { runs, ends } => {
                let i = ends.partition_point(|&end| end <= rank);
                runs[i.min(runs.len() - 1)].0
            }
            Repr::Values(v) => v[(rank as usize).min(v.len() - 1)],
        }
    }

    /// `np.percentile(x, q_pct)` (method `'linear'`), for `q_pct` in [0, 100].
    pub fn percentile(&self, q_pct: f64) -> f64 {
        let n = self.len();
        if n == 0 {
            return 0.0;
        }
        // numpy: q = true_divide(q, 100); virtual index = (n - 1) * q.
        let q = q_pct / 100.0;
        let virtual_index = (n - 1) as f64 * q;
        let (lo, hi) = if virtual_index >= (n - 1) as f64 {
            (n - 1, n - 1)
        } else if virtual_index < 0.0 {
            (0, 0)
        } else {
            let floor = virtual_index.floor() as u64;
            (floor, floor + 1)
        };
        // gamma = virtual index - floor(virtual index), computed before clamping (numpy's
        // `_get_gamma` uses the floor, not the clamped neighbour).
        let gamma = virtual_index - virtual_index.floor();
        lerp(self.at(lo), self.at(hi), gamma)
    }

    /// `np.median(x)`: the middle sample, or the mean `(a + b) / 2` of the two middle samples.
    /// (Not `percentile(50)`, whose interpolation rounds differently.)
    pub fn median(&self) -> f64 {
        let n = self.len();
        if n == 0 {
            return 0.0;
        }
        if n % 2 == 1 {
            self.at(n / 2)
        } else {
            (self.at(n / 2 - 1) + self.at(n / 2)) / 2.0
        }
    }

    /// `np.mean(x)`.
    pub fn mean(&self) -> f64 {
        let n = self.len();
        if n == 0 {
            return 0.0;
        }
        self.sum() / n as f64
    }

    /// `np.sum(x)` (0 when empty).
    pub fn sum(&self) -> f64 {
        self.1 .0
    }

    /// `np.std(x)` with `ddof=0`: `sqrt(mean(|x - mean(x)|^2))`.
    pub fn std(&self) -> f64 {
        let n = self.len();
        if n == 0 {
            return 0.0;
        }
        let mean = self.mean();
        let sq = self.sum_groups(|v, c| {
            let d = v - mean;
            d * d * c as f64
        });
        (sq / n as f64).sqrt()
    }

    /// `np.max(x)` (0 when empty).
    pub fn max(&self) -> f64 {
        match &self.0 {
            Repr::Runs { runs, .. } => runs.last().map_or(0.0, |&(v, _)| v),
            Repr::Values(v) => v.last().copied().unwrap_or(0.0),
        }
    }
}

/// numpy's `_lerp(a, b, t)`: `a + (b - a) * t`, except that for `t >= 0.5` it is computed
/// from the upper end as `b - (b - a) * (1 - t)` (numpy ≥ 1.22), which is what makes the
/// result monotonic and exact at `t = 1`.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff_b_a = b - a;
    if t >= 0.5 {
        b - diff_b_a * (1.0 - t)
    } else {
        a + diff_b_a * t
    }
}

/// Kahan–Babuška (Neumaier) summation: within an ulp or two of the exact sum, so it agrees
/// with numpy's pairwise summation to far better than anything bench_serving prints.
#[derive(Default)]
struct Neumaier {
    sum: f64,
    comp: f64,
}

impl Neumaier {
    fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.comp += (self.sum - t) + x;
        } else {
            self.comp += (x - t) + self.sum;
        }
        self.sum = t;
    }
    fn total(&self) -> f64 {
        self.sum + self.comp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_all_zero() {
        let r = Runs::new(Vec::new());
        assert_eq!(r.len(), 0);
        for v in [
            r.percentile(99.0),
            r.median(),
            r.mean(),
            r.std(),
            r.max(),
            r.sum(),
        ] {
            assert_eq!(v, 0.0);
        }
    }

    #[test]
    fn small_cases_match_hand_numpy() {
        // np.percentile([1, 2, 3, 4], 99) = 3.97; np.median = 2.5; np.std = 1.118033988749895
        let r = Runs::new([(4.0, 1), (1.0, 1), (3.0, 1), (2.0, 1)]);
        assert_eq!(r.percentile(99.0), 3.9699999999999998);
        assert_eq!(r.median(), 2.5);
        assert_eq!(r.mean(), 2.5);
        assert_eq!(r.std(), 1.118033988749895);
        assert_eq!(r.max(), 4.0);
        // Runs merge and zero counts vanish.
        let r = Runs::new([(2.0, 0), (1.0, 2), (1.0, 1)]);
        assert_eq!(r.len(), 3);
        assert_eq!(r.percentile(100.0), 1.0);
    }

    #[test]
    fn plain_values_give_the_same_bits_as_runs() {
        let mut x: u64 = 7;
        let values: Vec<f64> = (0..5000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Many ties, and values whose sums round.
                ((x >> 52) % 300) as f64 * 0.001 + 1e-9 * ((x >> 40) % 3) as f64
            })
            .collect();
        let a = Runs::new(values.iter().map(|&v| (v, 1)));
        let b = Runs::from_values(values.iter().copied());
        assert!(matches!(b.0, Repr::Values(_)));
        for q in [0.0, 1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0] {
            assert_eq!(a.percentile(q).to_bits(), b.percentile(q).to_bits(), "p{q}");
        }
        assert_eq!(a.median().to_bits(), b.median().to_bits());
        assert_eq!(a.mean().to_bits(), b.mean().to_bits());
        assert_eq!(a.std().to_bits(), b.std().to_bits());
        assert_eq!(a.max().to_bits(), b.max().to_bits());
        assert_eq!(a.len(), b.len());
        let z = Runs::from_values([0.0, -0.0, 1.0]);
        assert_eq!(z, Runs::new([(0.0, 1), (-0.0, 1), (1.0, 1)]));
        assert_eq!(Runs::from_values([]).max(), 0.0);
        let ints: Vec<u64> = (0..3000).map(|i| (i * 7919) % 1000 * 1_000_003).collect();
        let c = Runs::from_ints(ints.iter().copied(), |t| t as f64 / 1e9);
        assert_eq!(c, Runs::from_values(ints.iter().map(|&t| t as f64 / 1e9)));
    }
}
