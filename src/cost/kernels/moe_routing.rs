//! How many experts a step's tokens touch, and the MoE table's routing corrected to a real
//! decode batch's.
//!
//! At decode the fused-MoE kernel is bound by reading the weights of every expert the batch's
//! tokens picked, so its time follows the number of *distinct* experts touched, not the token
//! count. AIConfigurator's MoE tables were measured with synthetic power-law routing
//! (`power_law_logits_v3`, α = 1.2, the rows `scripts/import_aiconfigurator.py` keeps): it
//! draws one power-law load per expert, scales the loads to `tokens × k` and hands the experts
//! out in load order, so a small batch's tokens crowd onto a few experts: 2 tokens × top-8 of
//! 128 touch 9 experts, 16 tokens 49 (the expected value of their generator, reproduced here
//! from quantiles and checked against a Monte-Carlo run of their code). A real decode batch
//! holds independent sequences; each token's top-k is its own, and the expected number of
//! distinct experts is `E·(1 − (1 − k/E)^m)` (15.5 and 82.4 at m = 2 and 16; the roofline
//! backend's own routing). So the table under-prices the memory-bound range (m·k ≲ 4E) by the
//! weights of the experts it did not touch.
//!
//! The correction adds, at each measured token count, the missing experts' weight-read time at
//! the table's own measured price per expert: the least-squares slope of the table's time
//! against its routing's distinct experts over the memory-bound points (A100, H100, H200, B200
//! bf16 Qwen3 rows: 0.7–2.9 µs per expert, 64–88% of the datasheet HBM bandwidth for one
//! expert's weights). The slope is bounded by physics: never below reading the expert at the
//! datasheet bandwidth, never above reading it at half of it. One token (k experts either way)
//! and large batches (every expert touched either way) are unchanged; the curve stays monotone.
//! Applied to the tables' single-rank rows of bf16 / block-FP8 experts (EP rows carry their
//! own routing imbalance; MXFP4 kernels are priced elsewhere).
use super::curve::Curve;

/// The power-law exponent of the table rows kept (AIConfigurator's MoE models use 1.2).
pub const POWER_LAW_ALPHA: f64 = 1.2;
/// The memory-bound range whose points give the per-expert slope: `tokens × k ≤` this many
/// times E (beyond it the grouped GEMMs' compute grows with the tokens).
const SLOPE_RANGE_TIMES_E: f64 = 4.0;
/// Lowest bandwidth the slope may imply, as a share of the datasheet's.
const MIN_BANDWIDTH_SHARE: f64 = 0.5;

/// Expected distinct experts touched by `tokens` tokens each routed to `k` of `e` experts,
/// independently and uniformly: `E·(1 − (1 − k/E)^m)`; `k` at one token, → E at large batch.
pub fn distinct_uniform(tokens: f64, e: f64, k: f64) -> f64 {
    if tokens <= 0.0 || e <= 0.0 {
        return 0.0;
    }
    e * (1.0 - (1.0 - (k / e).min(1.0)).powf(tokens))
}

/// Distinct experts AIConfigurator's power-law generator (`power_law_logits_v3`, exponent
/// [`POWER_LAW_ALPHA`]) routes `tokens` tokens to, at the quantiles `(j + ½)/E` of its draw
/// instead of random ones: loads drawn on [0.01, 2] (`tokens·k ≤ E`) or [1, 0.8·tokens],
/// scaled to `tokens·k`, rounded half to even (torch.round), the rounding deficit added to the
/// busiest experts or the surplus taken from the idlest; each token then keeps k distinct
/// experts (its top-k of a one-hot map), so at least k are touched.
pub fn distinct_power_law(tokens: u64, e: u64, k: u64) -> f64 {
    if tokens == 0 || e == 0 {
        return 0.0;
    }
    let a = 1.0 - POWER_LAW_ALPHA;
    let total = tokens * k;
    let (lo, hi): (f64, f64) = if total > e {
        (1.0, 0.8 * tokens as f64)
    } else {
        (0.01, 2.0)
    };
    let draw: Vec<f64> = (0..e)
        .map(|j| {
            let u = (j as f64 + 0.5) / e as f64;
            ((hi.powf(a) - lo.powf(a)) * u + lo.powf(a)).powf(1.0 / a)
        })
        .collect();
    let sum: f64 = draw.iter().sum();
    let mut load: Vec<i64> = draw
        .iter()
        .map(|x| (x / sum * total as f64).round_ties_even() as i64)
        .collect();
    let mut by_load: Vec<usize> = (0..load.len()).collect();
    by_load.sort_by_key(|&i| std::cmp::Reverse(load[i]));
    let delta = total as i64 - load.iter().sum::<i64>();
    let n = by_load.len();
    for i in 0..delta.unsigned_abs() as usize {
        if delta > 0 {
            load[by_load[i % n]] += 1;
        } else {
            let idle = by_load[n - 1 - i % n];
            let from = if load[idle] > 0 {
                idle
            } else {
                // torch.argmax: the first busiest expert
                (0..n).fold(0, |b, j| if load[j] > load[b] { j } else { b })
            };
            load[from] -= 1;
        }
    }
    let touched = load.iter().filter(|&&l| l > 0).count() as f64;
    touched.max(k.min(e) as f64)
}

/// The table's routing replaced by independent uniform routing, see the module doc.
#[derive(Debug, Clone)]
pub struct RoutingFix {
    /// The corrected curve (same grid, same version tag).
    pub curve: Curve,
    /// Measured time per extra expert touched, ns.
    pub per_expert_ns: f64,
    /// Whether the slope fit fell outside the physical bounds and was clamped.
    pub clamped: bool,
}

/// Corrects `table` (time in ns against tokens on one rank, measured with power-law routing
/// over `e` experts, top-`k`) to uniform routing. `expert_bytes`: one expert's weights on this
/// rank; `bandwidth_bytes_per_s`: the GPU's datasheet HBM bandwidth. `None` when the table has
/// fewer than two memory-bound points.
pub fn uniform_routing(
    table: &Curve,
    e: u64,
    k: u64,
    expert_bytes: f64,
    bandwidth_bytes_per_s: f64,
) -> Option<RoutingFix> {
    let points = table.points();
    let fit: Vec<(f64, f64)> = points
        .iter()
        .filter(|(m, _)| m * k as f64 <= SLOPE_RANGE_TIMES_E * e as f64)
        .map(|&(m, t)| (distinct_power_law(m.round() as u64, e, k), t))
        .collect();
    if fit.len() < 2 || expert_bytes <= 0.0 || bandwidth_bytes_per_s <= 0.0 {
        return None;
    }
    let n = fit.len() as f64;
    let (mx, my) = (
        fit.iter().map(|p| p.0).sum::<f64>() / n,
        fit.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = fit.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = fit.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let fastest_ns = expert_bytes / bandwidth_bytes_per_s * 1e9;
    let slowest_ns = fastest_ns / MIN_BANDWIDTH_SHARE;
    let per_expert_ns = slope.clamp(fastest_ns, slowest_ns);
    let corrected: Vec<(f64, f64)> = points
        .iter()
        .map(|&(m, t)| {
            let missing = distinct_uniform(m, e as f64, k as f64)
                - distinct_power_law(m.round() as u64, e, k);
            (m, t + per_expert_ns * missing.max(0.0))
        })
        .collect();
    let mut curve = Curve::new(&corrected, true)?;
    curve.table_version = table.table_version.clone();
    Some(RoutingFix {
        curve,
        per_expert_ns,
        clamped: per_expert_ns != slope,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_experts_at_one_token_and_at_large_batch() {
        // One token touches exactly its k experts under either routing.
        assert!((distinct_uniform(1.0, 128.0, 8.0) - 8.0).abs() < 1e-9);
        assert_eq!(distinct_power_law(1, 128, 8), 8.0);
        // A large batch touches every expert: 128 × (1 − (15/16)^1024) rounds to 128.
        assert!((distinct_uniform(1024.0, 128.0, 8.0) - 128.0).abs() < 1e-9);
        assert!(distinct_power_law(1024, 128, 8) >= 126.0);
        // By hand: 128 × (1 − (15/16)^16) = 82.42; a Monte-Carlo run of AIConfigurator's
        // generator (200 draws) averages 49.3 distinct experts at 16 tokens, 9.6 at 2, 34.3 at 8.
        assert!((distinct_uniform(16.0, 128.0, 8.0) - 82.42).abs() < 0.01);
        assert!((distinct_power_law(16, 128, 8) - 49.3).abs() <= 1.0);
        assert!((distinct_power_law(2, 128, 8) - 9.6).abs() <= 1.0);
        assert!((distinct_power_law(8, 128, 8) - 34.3).abs() <= 1.0);
        // More tokens never touch fewer experts under uniform routing.
        let mut last = 0.0;
        for m in 1..2048 {
            let d = distinct_uniform(m as f64, 128.0, 8.0);
            assert!(d >= last && d <= 128.0);
            last = d;
        }
    }

    #[test]
    fn a_table_linear_in_its_routings_experts_is_repriced_at_uniform_routing() {
        // A synthetic table measured exactly as 20 µs + 1 µs per touched expert under the
        // power-law routing: the correction recovers the 1 µs slope and prices 16 tokens at
        // 20 + 82.42 µs (uniform routing's experts), 1 token unchanged at 28 µs.
        let grid = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 48.0, 64.0, 128.0, 512.0];
        let pts: Vec<(f64, f64)> = grid
            .iter()
            .map(|&m| (m, 20e3 + 1e3 * distinct_power_law(m as u64, 128, 8)))
            .collect();
        let table = Curve::new(&pts, true).unwrap();
        // One expert's weights (0.8 MB) read at 1 TB/s take 0.8 µs: bounds 0.8–1.6 µs.
        let fix = uniform_routing(&table, 128, 8, 0.8e6, 1e12).unwrap();
        assert!(
            (fix.per_expert_ns - 1e3).abs() < 1e-6,
            "{}",
            fix.per_expert_ns
        );
        assert!(!fix.clamped);
        assert!((fix.curve.at(16.0).0 - (20e3 + 82.42e3)).abs() < 20.0);
        assert!((fix.curve.at(1.0).0 - 28e3).abs() < 1e-6);
        // Monotone: more tokens never price cheaper.
        let mut last = 0.0;
        for m in 1..600 {
            let t = fix.curve.at(m as f64).0;
            assert!(t >= last - 1e-6, "{m}: {t} < {last}");
            last = t;
        }
        // A slope faster than the datasheet bandwidth allows is clamped to it.
        let fast = uniform_routing(&table, 128, 8, 4e6, 1e12).unwrap();
        assert!(fast.clamped && (fast.per_expert_ns - 4e3).abs() < 1e-6);
    }
}
