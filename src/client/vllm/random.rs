//! `--dataset-name random` lengths as vLLM's benchmark clients draw them, per era
//! ([`RandomEra`]); the lengths depend only on (era, seed, N, I, O, P, r, S, V), so no
//! tokenizer is needed. Ranges are inclusive; a one-value range consumes no randomness.
//!
//! * lower-fraction (legacy ≤0.8.3, CLI 0.8.0–0.9.1), global `RandomState`:
//!   `prefix = randint(0, V, P)`; `in = randint(int(I·r), I+1, N)`;
//!   `out = randint(int(O·r), O+1, N)`; `offsets = randint(0, V, N)`.
//! * symmetric (legacy 0.8.4–0.10.1, CLI 0.9.2–0.10.1), global `RandomState`:
//!   `I' = I − S` (0.9.0+; `I` before); `in ∈ [int(I'(1−r)), int(I'(1+r))]`,
//!   `out ∈ [int(O(1−r)) (≥1 from 0.10.0), int(O(1+r))]`; draws prefix (if P>0), in, out, offsets.
//! * PCG64 (CLI 0.10.2+), private `default_rng(seed)`: `real = max(0, I − S)`;
//!   `in ∈ [⌊real(1−r)⌋, ⌈real(1+r)⌉]`, `out ∈ [max(⌊O(1−r)⌋, 1), max(⌈O(1+r)⌉, 1)]`; draws in,
//!   out, offsets, then the prefix.
//!
//! The prompt a request carries is `P + in[i]` tokens on the client side; the server adds its
//! special tokens (`S`, the BOS) when it tokenizes. vLLM re-encodes the decoded text (0.9.0+)
//! and, from 0.11.2, pads or trims it back to the target; servesim keeps the target length.
use super::flavour::{RandomEra, VllmFlavour};
use crate::client::rng::{NumpyRandomState, Pcg64};

/// The parameters of one draw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomParams {
    pub seed: u32,
    pub num_prompts: u64,
    pub input_len: u64,
    pub output_len: u64,
    pub prefix_len: u64,
    pub range_ratio: f64,
    /// `tokenizer.num_special_tokens_to_add()` (1 for Llama-style BOS tokenizers).
    pub special_tokens: u64,
    /// `tokenizer.vocab_size` (the base vocabulary).
    pub vocab_size: u64,
}

/// What one draw produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RandomDraw {
    /// Client-side prompt length (`P + in[i]`) and output length of each request.
    pub lengths: Vec<(u64, u64)>,
    /// The token offsets (`offsets[i]`), for checking the draw order against numpy.
    pub offsets: Vec<i64>,
}

/// Why vLLM's client would raise on these parameters.
pub fn check(era: RandomEra, p: &RandomParams) -> Result<(), String> {
    if era != RandomEra::LowerFraction && p.range_ratio >= 1.0 {
        return Err(format!(
            "this vLLM client version requires --random-range-ratio < 1 (its range is [L(1-r), L(1+r)]), got {}",
            p.range_ratio
        ));
    }
    if p.vocab_size == 0 || p.vocab_size > 1 << 40 || p.num_prompts > 1 << 40 {
        return Err("vocabulary or prompt count out of range".into());
    }
    Ok(())
}

fn to_u64(v: Vec<i64>) -> Vec<u64> {
    v.into_iter().map(|x| x.max(0) as u64).collect()
}

/// Draws the lengths for `flavour`'s era. `global` is the global numpy state (already seeded
/// by the caller's `np.random.seed(seed)`); the eras that use it leave it just after their
/// draws, ready for the arrival gaps. Call [`check`] first (bad parameters give empty draws).
pub fn draw(flavour: &VllmFlavour, p: &RandomParams, global: &mut NumpyRandomState) -> RandomDraw {
    let n = p.num_prompts as usize;
    let vocab = p.vocab_size as i64;
    let (i_len, o_len, r) = (p.input_len as f64, p.output_len as f64, p.range_ratio);
    match flavour.random_era {
        RandomEra::LowerFraction | RandomEra::Symmetric => {
            let ((in_lo, in_hi), (out_lo, out_hi)) =
                if flavour.random_era == RandomEra::LowerFraction {
                    (
                        ((i_len * r) as i64, p.input_len as i64),
                        ((o_len * r) as i64, p.output_len as i64),
                    )
                } else {
                    let eff = if flavour.subtract_special_tokens {
                        p.input_len as f64 - p.special_tokens as f64
                    } else {
                        i_len
                    };
                    let out_lo = (o_len * (1.0 - r)) as i64;
                    (
                        ((eff * (1.0 - r)) as i64, (eff * (1.0 + r)) as i64),
                        (
                            if flavour.output_min_one {
                                out_lo.max(1)
                            } else {
                                out_lo
                            },
                            (o_len * (1.0 + r)) as i64,
                        ),
                    )
                };
            let _prefix = global.try_randint_n(0, vocab, p.prefix_len as usize);
            let ins = global
                .try_randint_n(in_lo, in_hi + 1, n)
                .unwrap_or_default();
            let outs = global
                .try_randint_n(out_lo, out_hi + 1, n)
                .unwrap_or_default();
            let offsets = global.try_randint_n(0, vocab, n).unwrap_or_default();
            assemble(p.prefix_len, to_u64(ins), to_u64(outs), offsets)
        }
        RandomEra::Pcg64 => {
            let mut rng = Pcg64::new(u64::from(p.seed));
            let real = p.input_len.saturating_sub(p.special_tokens) as f64;
            let in_lo = (real * (1.0 - r)).floor() as i64;
            let in_hi = (real * (1.0 + r)).ceil() as i64;
            let out_lo = ((o_len * (1.0 - r)).floor() as i64).max(1);
            let out_hi = ((o_len * (1.0 + r)).ceil() as i64).max(1);
            let ins = rng.integers(in_lo, in_hi + 1, n).unwrap_or_default();
            let outs = rng.integers(out_lo, out_hi + 1, n).unwrap_or_default();
            let offsets = rng.integers(0, vocab, n).unwrap_or_default();
            if p.prefix_len > 0 {
                let _prefix = rng.integers(0, vocab, p.prefix_len as usize);
            }
            assemble(p.prefix_len, to_u64(ins), to_u64(outs), offsets)
        }
    }
}

fn assemble(prefix_len: u64, ins: Vec<u64>, outs: Vec<u64>, offsets: Vec<i64>) -> RandomDraw {
    RandomDraw {
        lengths: ins
            .into_iter()
            .zip(outs)
            .map(|(i, o)| (prefix_len + i, o))
            .collect(),
        offsets,
    }
}
