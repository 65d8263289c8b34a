//! Bit-exact ports of the two random-number generators `python -m sglang.bench_serving`
//! draws from, so a simulated run sees the very same request lengths, ShareGPT order and
//! Poisson arrival gaps as the real client with the same `--seed`.
//!
//! * [`numpy::NumpyRandomState`]: numpy's legacy global `RandomState` (`np.random.seed`,
//!   `np.random.randint`, `np.random.exponential`). It drives the `random` / `random-ids`
//!   dataset lengths and the `--request-rate` inter-arrival gaps.
//! * [`python::PyRandom`]: CPython's `random.Random` (`random.seed`, `random.shuffle`). It
//!   drives the order in which ShareGPT conversations are taken.
//!
//! Both are MT19937 underneath; they differ only in seeding (numpy: `init_genrand`,
//! CPython: `init_by_array`) and in how raw words become numbers. The shared generator core
//! lives here, private to this module tree. Only `std` is used; every operation is a pure
//! function of the seed and the call sequence, on every platform (except the `ln` inside
//! [`numpy::NumpyRandomState::exponential`], which is the platform libm's).
pub mod numpy;
pub mod pcg64;
pub mod python;

pub use numpy::NumpyRandomState;
pub use pcg64::Pcg64;
pub use python::PyRandom;

/// Number of 32-bit words of MT19937 state.
const STATE_WORDS: usize = 624;
/// Offset of the "middle" word in the MT19937 recurrence.
const MIDDLE: usize = 397;

/// The MT19937 generator (Matsumoto & Nishimura, 1998): state plus tempering. Seeding
/// policy belongs to the wrappers in [`numpy`] and [`python`].
#[derive(Clone)]
struct Mt19937 {
    state: [u32; STATE_WORDS],
    /// Next word of `state` to temper; `STATE_WORDS` means "regenerate first".
    index: usize,
}

impl std::fmt::Debug for Mt19937 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // 624 words of state are noise in a debug dump; the position identifies progress.
        f.debug_struct("Mt19937")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl Mt19937 {
    /// Reference `init_genrand(seed)`: the seeding numpy's `RandomState.seed(int)` uses.
    fn from_genrand(seed: u32) -> Self {
        let mut state = [0u32; STATE_WORDS];
        state[0] = seed;
        for i in 1..STATE_WORDS {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 {
            state,
            index: STATE_WORDS,
        }
    }

    /// Reference `init_by_array(key)`: the seeding CPython's `random.seed(int)` uses, with
    /// `key` the little-endian 32-bit words of `|seed|` (`[0]` for seed 0). An empty key is
    /// treated as `[0]`, which is what CPython passes for 0.
    fn from_key(key: &[u32]) -> Self {
        let key: &[u32] = if key.is_empty() { &[0] } else { key };
        let mut mt = Self::from_genrand(19_650_218);
        let s = &mut mt.state;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..STATE_WORDS.max(key.len()) {
            let prev = s[i - 1];
            s[i] = (s[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= STATE_WORDS {
                s[0] = s[STATE_WORDS - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..STATE_WORDS - 1 {
            let prev = s[i - 1];
            s[i] =
                (s[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= STATE_WORDS {
                s[0] = s[STATE_WORDS - 1];
                i = 1;
            }
        }
        s[0] = 0x8000_0000; // MSB set: guarantees a non-zero initial state
        mt
    }

    /// Regenerates all 624 words (the "twist").
    fn twist(&mut self) {
        let s = &mut self.state;
        for i in 0..STATE_WORDS {
            let y = (s[i] & 0x8000_0000) | (s[(i + 1) % STATE_WORDS] & 0x7fff_ffff);
            let mag = if y & 1 == 1 { 0x9908_b0df } else { 0 };
            s[i] = s[(i + MIDDLE) % STATE_WORDS] ^ (y >> 1) ^ mag;
        }
        self.index = 0;
    }

    /// Next tempered 32-bit output (`genrand_int32`).
    fn next_u32(&mut self) -> u32 {
        if self.index >= STATE_WORDS {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `genrand_res53`: a double uniform on [0, 1) with 53 random bits, from two words
    /// (`a` = first word >> 5, `b` = second word >> 6, `(a * 2^26 + b) / 2^53`). numpy's
    /// legacy `random_sample` and CPython's `random()` share this formula.
    fn next_res53(&mut self) -> f64 {
        let a = f64::from(self.next_u32() >> 5);
        let b = f64::from(self.next_u32() >> 6);
        (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_init_genrand_5489() {
        // The MT19937 reference output for the default seed 5489 (also C++ std::mt19937).
        let mut mt = Mt19937::from_genrand(5489);
        assert_eq!(mt.next_u32(), 3_499_211_612);
        for _ in 1..9999 {
            mt.next_u32();
        }
        assert_eq!(mt.next_u32(), 4_123_659_995); // the 10000th output
    }

    #[test]
    fn reference_init_by_array() {
        // mt19937ar.c's test driver: init_by_array({0x123, 0x234, 0x345, 0x456}).
        let mut mt = Mt19937::from_key(&[0x123, 0x234, 0x345, 0x456]);
        let first: Vec<u32> = (0..5).map(|_| mt.next_u32()).collect();
        assert_eq!(
            first,
            [
                1_067_595_299,
                955_945_823,
                477_289_528,
                4_107_218_783,
                4_228_976_476
            ]
        );
    }

    #[test]
    fn empty_key_is_zero_key() {
        let mut a = Mt19937::from_key(&[]);
        let mut b = Mt19937::from_key(&[0]);
        assert!((0..700).all(|_| a.next_u32() == b.next_u32()));
    }

    #[test]
    fn res53_is_in_unit_interval() {
        let mut mt = Mt19937::from_genrand(7);
        assert!((0..10_000).all(|_| (0.0..1.0).contains(&mt.next_res53())));
    }
}
