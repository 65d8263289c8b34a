//! Sorting latency samples (integer nanoseconds, or `f64` in `f64::total_cmp` order) with an
//! LSD radix sort of their bits: O(n) in at most six 11-bit passes (passes whose digit is the
//! same for every sample are skipped), for the per-request lists of million-request runs. The
//! result is exactly what a comparison sort gives: equal keys are equal bits.

/// Below this many samples a comparison sort is faster.
const RADIX_MIN_LEN: usize = 1024;

/// `f64::total_cmp` order as an unsigned key (a bijection; see [`value`]).
fn key(v: f64) -> u64 {
    let b = v.to_bits();
    (b ^ ((((b as i64) >> 63) as u64) >> 1)) ^ (1 << 63)
}

/// Inverse of [`key`].
fn value(k: u64) -> f64 {
    let b = k ^ (1 << 63);
    f64::from_bits(b ^ ((((b as i64) >> 63) as u64) >> 1))
}

/// Bits per radix digit: 2048 counters per pass stay in L1/L2; six passes cover 64 bits.
const DIGIT_BITS: u32 = 11;
const DIGITS: usize = 64_usize.div_ceil(DIGIT_BITS as usize);
const BUCKETS: usize = 1 << DIGIT_BITS;

/// `values` sorted by `f64::total_cmp`.
pub fn sorted_total(mut values: Vec<f64>) -> Vec<f64> {
    if values.len() < RADIX_MIN_LEN {
        values.sort_unstable_by(f64::total_cmp);
        return values;
    }
    // Same size and alignment: these collects reuse the allocation.
    let keys: Vec<u64> = values.into_iter().map(key).collect();
    sorted_u64(keys).into_iter().map(value).collect()
}

/// `keys` in ascending order (LSD radix sort for long inputs).
pub fn sorted_u64(mut keys: Vec<u64>) -> Vec<u64> {
    let n = keys.len();
    if n < RADIX_MIN_LEN {
        keys.sort_unstable();
        return keys;
    }
    let digit = |k: u64, d: usize| ((k >> (d as u32 * DIGIT_BITS)) as usize) & (BUCKETS - 1);
    let mut counts = vec![[0usize; BUCKETS]; DIGITS];
    for &k in &keys {
        for (d, c) in counts.iter_mut().enumerate() {
            c[digit(k, d)] += 1;
        }
    }
    let mut buf = vec![0u64; n];
    for (d, c) in counts.iter().enumerate() {
        if c.contains(&n) {
            continue; // every key has the same digit here: the pass would not move anything
        }
        let mut next = [0usize; BUCKETS];
        let mut total = 0;
        for (slot, &count) in next.iter_mut().zip(c) {
            *slot = total;
            total += count;
        }
        for &k in &keys {
            let b = digit(k, d);
            buf[next[b]] = k;
            next[b] += 1;
        }
        std::mem::swap(&mut keys, &mut buf);
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_order_is_total_cmp_order() {
        let mut x: u64 = 99;
        let mut v: Vec<f64> = (0..5000)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                match i % 5 {
                    0 => (x >> 11) as f64 * 1e-9,
                    1 => -((x >> 40) as f64),
                    2 => f64::from_bits(x),
                    3 => ((x >> 60) as f64) * 0.5,
                    _ => [0.0, -0.0, f64::INFINITY, f64::MIN_POSITIVE][(x >> 62) as usize],
                }
            })
            .collect();
        let got = sorted_total(v.clone());
        v.sort_by(f64::total_cmp);
        let bits = |s: &[f64]| s.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&v));
        assert_eq!(
            bits(&sorted_total(vec![2.0, -1.0, 0.5])),
            bits(&[-1.0, 0.5, 2.0])
        );
        let mut ints: Vec<u64> = (0..3000u64)
            .map(|i| (i * 7919) % 2000 + ((i % 3) << 40))
            .collect();
        let got = sorted_u64(ints.clone());
        ints.sort_unstable();
        assert_eq!(got, ints);
        for f in [0.0, -0.0, 1.5, -2.25, f64::MAX, f64::NAN] {
            assert_eq!(value(key(f)).to_bits(), f.to_bits());
        }
    }
}
