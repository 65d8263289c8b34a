//! numpy's `np.random.default_rng(seed)` = `Generator(PCG64(SeedSequence(seed)))`, bit-exact
//! for the one call `vllm bench serve` (0.10.2 and later) makes: `rng.integers(low, high,
//! size=n)` with the default int64 dtype and `endpoint=False`.
//!
//! An independent implementation of the published algorithms, checked against vectors that
//! real numpy printed (`scripts/gen_vllm_vectors.py` → `tests/vectors/vllm_vectors.json`):
//! * `SeedSequence` (O'Neill's seed_seq hash: pool of 4 words, `hashmix`/`mix`, then
//!   `generate_state(4, uint64)`), entropy = the seed's 32-bit words, little end first;
//! * PCG64 = PCG XSL-RR 128/64: `state = state * MULT + inc`, output
//!   `rotr64(hi ^ lo, state >> 122)`; seeding `state = 0; step; state += initstate; step`
//!   with `inc = (initseq << 1) | 1`;
//! * `next_uint32` hands out the low half of a 64-bit output and buffers the high half;
//! * bounded integers (`random_bounded_uint64_fill`, `use_masked = false`): a span below
//!   2^32 uses Lemire's method on 32-bit words, a larger one Lemire on 64-bit words; a
//!   one-value range consumes nothing.

const M32: u64 = 0xFFFF_FFFF;
const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const XSHIFT: u32 = 16;
const POOL_SIZE: usize = 4;
/// PCG's default 128-bit multiplier.
const PCG_MULT: u128 = (2_549_297_995_355_413_924u128 << 64) + 4_865_540_595_714_422_341u128;

/// `SeedSequence(seed).generate_state(n_words64, np.uint64)`.
fn seed_sequence_state(seed: u64, n_words64: usize) -> Vec<u64> {
    let mut hash_const = INIT_A;
    let mut hashmix = |v: u32| -> u32 {
        let mut v = v ^ hash_const;
        hash_const = hash_const.wrapping_mul(MULT_A);
        v = v.wrapping_mul(hash_const);
        v ^ (v >> XSHIFT)
    };
    let mix = |x: u32, y: u32| -> u32 {
        let r = MIX_MULT_L
            .wrapping_mul(x)
            .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
        r ^ (r >> XSHIFT)
    };
    // Entropy words: 0 -> [0]; else the 32-bit words of the seed, little end first.
    let entropy: Vec<u32> = if seed == 0 {
        vec![0]
    } else {
        let mut words = Vec::new();
        let mut s = seed;
        while s > 0 {
            words.push((s & M32) as u32);
            s >>= 32;
        }
        words
    };
    let mut pool = [0u32; POOL_SIZE];
    for (i, slot) in pool.iter_mut().enumerate() {
        *slot = hashmix(entropy.get(i).copied().unwrap_or(0));
    }
    for src in 0..POOL_SIZE {
        for dst in 0..POOL_SIZE {
            if src != dst {
                let h = hashmix(pool[src]);
                pool[dst] = mix(pool[dst], h);
            }
        }
    }
    for &word in entropy.iter().skip(POOL_SIZE) {
        for slot in pool.iter_mut() {
            let h = hashmix(word);
            *slot = mix(*slot, h);
        }
    }
    let mut hash_const_b = INIT_B;
    let words32: Vec<u32> = (0..n_words64 * 2)
        .map(|i| {
            let mut v = pool[i % POOL_SIZE] ^ hash_const_b;
            hash_const_b = hash_const_b.wrapping_mul(MULT_B);
            v = v.wrapping_mul(hash_const_b);
            v ^ (v >> XSHIFT)
        })
        .collect();
    words32
        .chunks(2)
        .map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32))
        .collect()
}

/// numpy's `default_rng(seed)`: PCG64 seeded through `SeedSequence`.
#[derive(Debug, Clone)]
pub struct Pcg64 {
    state: u128,
    inc: u128,
    /// The high half of the last 64-bit output, not yet handed out by `next_u32`.
    buffered_u32: Option<u32>,
}

impl Pcg64 {
    /// `np.random.default_rng(seed)` for a non-negative integer seed.
    pub fn new(seed: u64) -> Self {
        let v = seed_sequence_state(seed, 4);
        let init_state = (u128::from(v[0]) << 64) | u128::from(v[1]);
        let init_seq = (u128::from(v[2]) << 64) | u128::from(v[3]);
        let mut rng = Pcg64 {
            state: 0,
            inc: (init_seq << 1) | 1,
            buffered_u32: None,
        };
        rng.step();
        rng.state = rng.state.wrapping_add(init_state);
        rng.step();
        rng
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULT).wrapping_add(self.inc);
    }

    /// The next 64-bit output (XSL-RR).
    pub fn next_u64(&mut self) -> u64 {
        self.step();
        let s = self.state;
        let x = ((s >> 64) as u64) ^ (s as u64);
        x.rotate_right((s >> 122) as u32)
    }

    /// numpy's `next_uint32` for PCG64: the low half of a fresh 64-bit output, the high half
    /// on the next call.
    pub fn next_u32(&mut self) -> u32 {
        if let Some(high) = self.buffered_u32.take() {
            return high;
        }
        let n = self.next_u64();
        self.buffered_u32 = Some((n >> 32) as u32);
        n as u32
    }

    /// `Generator.integers(low, high, size=n)` (int64, high exclusive); `None` without
    /// consuming anything when `high <= low` (numpy raises `ValueError`).
    pub fn integers(&mut self, low: i64, high: i64, n: usize) -> Option<Vec<i64>> {
        if high <= low {
            return None;
        }
        let span = (high as u64).wrapping_sub(low as u64).wrapping_sub(1);
        Some(
            (0..n)
                .map(|_| low.wrapping_add(self.bounded(span) as i64))
                .collect(),
        )
    }

    /// Uniform on `[0, span]` (numpy `random_bounded_uint64_fill`, Lemire).
    fn bounded(&mut self, span: u64) -> u64 {
        if span == 0 {
            0
        } else if span < M32 {
            let span = span as u32;
            let excl = u64::from(span) + 1;
            let mut m = u64::from(self.next_u32()) * excl;
            if (m & M32) < excl {
                let threshold = (M32 - u64::from(span)) % excl;
                while (m & M32) < threshold {
                    m = u64::from(self.next_u32()) * excl;
                }
            }
            m >> 32
        } else if span == M32 {
            u64::from(self.next_u32())
        } else if span == u64::MAX {
            self.next_u64()
        } else {
            let excl = u128::from(span) + 1;
            let mut m = u128::from(self.next_u64()) * excl;
            if (m as u64 as u128) < excl {
                let threshold = u128::from((u64::MAX - span) % (span + 1));
                while (m as u64 as u128) < threshold {
                    m = u128::from(self.next_u64()) * excl;
                }
            }
            (m >> 64) as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn one_value_range_consumes_nothing() {
        let mut a = Pcg64::new(0);
        let mut b = Pcg64::new(0);
        assert_eq!(a.integers(1024, 1025, 5), Some(vec![1024; 5]));
        assert_eq!(a.next_u64(), b.next_u64());
        assert_eq!(a.integers(3, 3, 1), None);
    }
    #[test]
    fn draws_stay_in_range() {
        let mut a = Pcg64::new(42);
        let v = a.integers(-5, 7, 2000).unwrap();
        assert!(v.iter().all(|x| (-5..7).contains(x)));
        assert!(v.contains(&-5) && v.contains(&6));
        let big = a.integers(0, 1 << 40, 100).unwrap();
        assert!(big.iter().all(|x| (0..1 << 40).contains(x)));
    }
}
