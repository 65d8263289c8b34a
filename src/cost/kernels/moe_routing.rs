//! How many experts a step's tokens touch, and the MoE table's routing corrected to a real
//! decode batch's.
//!
//! At decode the fused-MoE kernel is bound by reading the weights of every expert the batch's
//! tokens picked, so its time follows the number of *distinct* experts touched, not the token
//! count. AIConfigurator's MoE tables were measured with synthetic power-law routing
//! (`power_law_logits_v3`, α = 1.2, the rows `scripts/import_aiconfigurator.py` keeps): it
//! draws one power-law load per expert, scales the loads to `tokens × k`, caps each at
//! `tokens` (the cap and the spill of its overflow onto idle experts came with AIConfigurator
//! PR #335, 2026-02; the bundled SGLang tables match it, below) and hands the
//! experts out in load order, so a small batch's tokens crowd onto fewer experts: 16 tokens ×
//! top-8 of 128 touch 59 experts, 8 tokens 43, 2 tokens all 16 of their picks (the expected
//! value of their generator, reproduced here from quantiles and checked against a Monte-Carlo
//! run of it, and against the tables' own `balanced` rows, whose routing touches a known
//! number of experts: interpolated there, the power-law rows' times imply 1.00× / 1.00× /
//! 0.98× these counts at 2 / 4 / 8 tokens, median over ~880 rows of the six bundled table
//! sets; without the cap, 0.68× / 0.67× / 0.72×). A real decode batch
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
//!
//! Independent check (a unit test): SGLang PR #6825's A100 PCIe benchmark of the same default
//! kernel under random (uniform) gating, Qwen3-30B-A3B at TP1, scaled by the datasheet
//! bandwidth ratio, is within +1…+6% of the repriced A100 row from 2 to 96 tokens.
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

/// Distinct experts AIConfigurator's power-law generator (`_generate_power_law_distribution`
/// behind `power_law_logits_v3` in its `collector/helper.py`, exponent [`POWER_LAW_ALPHA`],
/// one EP rank) routes `tokens` tokens to, at the quantiles `(j + ½)/E` of its draw instead of
/// random ones: loads drawn on [0.01, 2] (`tokens·k ≤ E`) or [1, 0.8·tokens], scaled to
/// `tokens·k` and rounded half to even (torch.round); each load clamped to `tokens` (a token
/// picks an expert at most once), the overflow and any rounding deficit handed one at a time to
/// the least-loaded expert still below `tokens` (torch.argmin), a surplus taken from the
/// busiest (torch.argmax). Each token then keeps k distinct experts (column-major fill), so the
/// experts touched are those with a non-zero load.
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
    let cap = tokens as i64;
    let mut load: Vec<i64> = draw
        .iter()
        .map(|x| (x / sum * total as f64).round_ties_even() as i64)
        .collect();
    // The rounding's deficit (> 0) or surplus (< 0) against `tokens·k`.
    let delta = total as i64 - load.iter().sum::<i64>();
    let overflow: i64 = load.iter().map(|&l| (l - cap).max(0)).sum();
    load.iter_mut().for_each(|l| *l = (*l).min(cap));
    // Overflow and deficit go to the least-loaded expert below the cap (first index on ties).
    for _ in 0..overflow + delta.max(0) {
        let Some(i) = (0..load.len())
            .filter(|&i| load[i] < cap)
            .min_by_key(|&i| load[i])
        else {
            break;
        };
        load[i] += 1;
    }
    // A surplus comes off the busiest expert (first index on ties).
    for _ in 0..(-delta).max(0) {
        let busiest = (0..load.len()).fold(0, |b, j| if load[j] > load[b] { j } else { b });
        load[busiest] -= 1;
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
        // generator (random draws, 200 per size) averages 16.0 distinct experts at 2 tokens,
        // 42.9 at 8, 59.0 at 16, 106.6 at 32. At 2 tokens the clamp leaves no expert more than
        // 2 of the 16 picks, and the overflow fills idle experts: every pick on its own expert.
        assert!((distinct_uniform(16.0, 128.0, 8.0) - 82.42).abs() < 0.01);
        assert_eq!(distinct_power_law(2, 128, 8), 16.0);
        assert!((distinct_power_law(8, 128, 8) - 42.9).abs() <= 1.5);
        assert!((distinct_power_law(16, 128, 8) - 59.0).abs() <= 1.5);
        assert!((distinct_power_law(32, 128, 8) - 106.6).abs() <= 3.0);
        // What the tables themselves say: AIConfigurator's A100 SGLang 0.5.10 rows for
        // Qwen3-235B's experts at moe_tp 8 (hidden 4096, inter 1536) take 83.7 / 162.5 /
        // 210.2 µs at 2 / 8 / 16 tokens under this routing; its `balanced` rows
        // (`balanced_logits`: token t of m on experts 16·t/m + 16·i, i < 8, so exactly 8·m
        // distinct up to m = 16) take 67.5 / 86.8 / 125.5 / 215.7 / 417.3 µs at 8 / 16 / 32 /
        // 64 / 128 experts. Interpolated
        // there, the power-law times mean 14.7 / 45.1 / 62.0 experts (the older generator
        // without the clamp gives 9 / 34 / 49).
        for (m, implied) in [(2, 14.7), (8, 45.1), (16, 62.0)] {
            let d = distinct_power_law(m, 128, 8);
            assert!((d / implied - 1.0).abs() < 0.1, "{m}: {d} vs {implied}");
        }
        // More tokens never touch fewer experts under uniform routing.
        let mut last = 0.0;
        for m in 1..2048 {
            let d = distinct_uniform(m as f64, 128.0, 8.0);
            assert!(d >= last && d <= 128.0);
            last = d;
        }
    }

    #[test]
    fn the_a100_table_repriced_matches_sglangs_own_uniform_routing_benchmark() {
        // Independent check of the whole correction on A100: SGLang PR #6825 ran
        // `tuning_fused_moe_triton.py` (random gating: independent uniform routing) for
        // Qwen3-30B-A3B at TP1 (E=128, N=768, hidden 2048, bf16) with the default config on an
        // A100 PCIe 40GB (1,555 GB/s): 159.81 / 268.89 / 403.13 / 611.19 / 730.19 / 808.53 /
        // 885.97 / 917.45 / 943.14 µs at 2 / 4 / 8 / 16 / 24 / 32 / 48 / 64 / 96 tokens. Scaled
        // to the SXM4 part's 2,039 GB/s (its 109.21 µs at one token against the table's 82.19
        // is 0.753, the bandwidth ratio 0.763), the repriced AIConfigurator A100 row (SGLang
        // 0.5.10, power-law routing, same default config) must agree within 10%; without the
        // generator's clamp it priced 2..16 tokens 15-29% above it.
        let table: [(f64, f64); 14] = [
            (1.0, 82.19),
            (2.0, 123.1),
            (4.0, 211.0),
            (8.0, 280.2),
            (16.0, 363.3),
            (32.0, 610.1),
            (48.0, 650.7),
            (64.0, 684.5),
            (80.0, 712.7),
            (96.0, 727.3),
            (128.0, 753.1),
            (160.0, 1017.0),
            (192.0, 1024.0),
            (256.0, 1054.0),
        ];
        let pts: Vec<(f64, f64)> = table.iter().map(|&(m, us)| (m, us * 1e3)).collect();
        let curve = Curve::new(&pts, true).unwrap();
        let expert_bytes = 3.0 * 2048.0 * 768.0 * 2.0;
        let fix = uniform_routing(&curve, 128, 8, expert_bytes, 2.039e12).unwrap();
        let pcie = [
            (2.0, 159.81),
            (4.0, 268.89),
            (8.0, 403.13),
            (16.0, 611.19),
            (24.0, 730.19),
            (32.0, 808.53),
            (48.0, 885.97),
            (64.0, 917.45),
            (96.0, 943.14),
        ];
        for (m, us) in pcie {
            let want_ns = us * 1e3 * 1.555e12 / 2.039e12;
            let got_ns = fix.curve.at(m).0;
            assert!(
                (got_ns / want_ns - 1.0).abs() < 0.10,
                "{m} tokens: {got_ns} ns vs {want_ns}"
            );
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
