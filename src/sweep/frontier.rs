//! The capacity planner's view (AIConfigurator's): output tokens/s per GPU (what a deployment
//! earns from its hardware) against output tokens/s per user (how fast each user's stream
//! runs, 1000 / mean TPOT in ms), and the cost of a million output tokens. The frontier keeps
//! the deployments no other one beats on both axes; along it, faster users cost GPUs.
//!
//! Used by `sweep` (every point that ran) and `plan` (each candidate at its highest rate
//! meeting the SLOs).
use super::point::{Deployment, Row};
use crate::report::table::Table;
use serde::Serialize;

/// One deployment in the per-GPU / per-user plane.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EfficiencyPoint {
    /// Grid index of the point (sweep) or candidate (plan).
    pub index: usize,
    pub devices: u64,
    /// Output tokens/s of the whole deployment.
    pub output_throughput: f64,
    /// Output tokens/s per device: `output_throughput / devices`.
    pub tok_s_per_gpu: f64,
    /// Output tokens/s each user sees while decoding: `1000 / mean TPOT (ms)`.
    pub tok_s_per_user: f64,
    /// USD per hour for all its devices, when a price is known.
    pub cost_per_hour_usd: Option<f64>,
    /// USD per million output tokens: cost per hour / (output tok/s × 3600) × 10⁶.
    pub cost_per_1m_output_tokens_usd: Option<f64>,
}

impl EfficiencyPoint {
    /// The point of a deployment serving `output_throughput` tok/s at `mean_tpot_ms`;
    /// `None` when either is not positive (nothing decoded, or single-token outputs).
    pub fn new(
        index: usize,
        devices: u64,
        output_throughput: f64,
        mean_tpot_ms: f64,
        cost_per_hour_usd: Option<f64>,
    ) -> Option<EfficiencyPoint> {
        let ok = |v: f64| v.is_finite() && v > 0.0;
        if !(ok(output_throughput) && ok(mean_tpot_ms) && devices > 0) {
            return None;
        }
        Some(EfficiencyPoint {
            index,
            devices,
            output_throughput,
            tok_s_per_gpu: output_throughput / devices as f64,
            tok_s_per_user: 1000.0 / mean_tpot_ms,
            cost_per_hour_usd,
            cost_per_1m_output_tokens_usd: cost_per_hour_usd
                .map(|c| cost_per_million(c, output_throughput)),
        })
    }

    /// A sweep row's point, priced by `price` (USD per device-hour of its hardware).
    pub fn of_row(r: &Row, price: impl Fn(&Deployment) -> Option<f64>) -> Option<Self> {
        let d = r.deployment.as_ref()?;
        Self::new(
            r.index,
            d.devices,
            r.metric("output_throughput")?,
            r.metric("mean_tpot_ms")?,
            price(d).map(|p| p * d.devices as f64),
        )
    }
}

/// USD per million output tokens at `cost_per_hour_usd` and `output_tok_s`.
pub fn cost_per_million(cost_per_hour_usd: f64, output_tok_s: f64) -> f64 {
    cost_per_hour_usd / (output_tok_s * 3600.0) * 1e6
}

/// The points no other beats on both tok/s per GPU and tok/s per user (higher is better on
/// both), by increasing tok/s per user. Ties keep the lower index.
pub fn frontier(points: &[EfficiencyPoint]) -> Vec<&EfficiencyPoint> {
    let mut pts: Vec<&EfficiencyPoint> = points.iter().collect();
    pts.sort_by(|a, b| {
        b.tok_s_per_user
            .total_cmp(&a.tok_s_per_user)
            .then(b.tok_s_per_gpu.total_cmp(&a.tok_s_per_gpu))
            .then(a.index.cmp(&b.index))
    });
    let mut best = f64::NEG_INFINITY;
    let mut out = Vec::new();
    for p in pts {
        if p.tok_s_per_gpu > best {
            best = p.tok_s_per_gpu;
            out.push(p);
        }
    }
    out.reverse();
    out
}

/// Every sweep row that ran, priced by the profiles' `cost_per_device_hour_usd`.
pub fn of_rows(rows: &[Row]) -> Vec<EfficiencyPoint> {
    rows.iter()
        .filter_map(|r| EfficiencyPoint::of_row(r, |d| d.cost_per_device_hour_usd))
        .collect()
}

/// The frontier as a table: `label_header` columns from `label(index)`, then devices,
/// tok/s/GPU, tok/s/user, output tok/s, $/h and $ per 1M output tokens.
pub fn table(
    points: &[&EfficiencyPoint],
    label_header: &[String],
    label: impl Fn(usize) -> Vec<String>,
) -> Table {
    let mut header = label_header.to_vec();
    header.extend(
        [
            "devices",
            "tok/s/GPU",
            "tok/s/user",
            "output tok/s",
            "$/h",
            "$/1M out tok",
        ]
        .map(String::from),
    );
    let usd = |v: Option<f64>| v.map_or("-".into(), |c| format!("{c:.3}"));
    let rows = points
        .iter()
        .map(|p| {
            let mut row = label(p.index);
            row.extend([
                p.devices.to_string(),
                format!("{:.1}", p.tok_s_per_gpu),
                format!("{:.1}", p.tok_s_per_user),
                format!("{:.1}", p.output_throughput),
                usd(p.cost_per_hour_usd),
                usd(p.cost_per_1m_output_tokens_usd),
            ]);
            row
        })
        .collect();
    let right = vec![true; header.len()];
    Table {
        header,
        rows,
        right,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(index: usize, devices: u64, tput: f64, tpot: f64) -> EfficiencyPoint {
        EfficiencyPoint::new(index, devices, tput, tpot, Some(3.0 * devices as f64)).unwrap()
    }

    #[test]
    fn per_gpu_per_user_and_cost_by_hand() {
        // 8 GPUs at $3/h serving 7200 tok/s at 20 ms TPOT: 900 tok/s/GPU, 50 tok/s/user,
        // $24/h / (7200 × 3600 tok/h) = $0.925926 per million.
        let x = p(0, 8, 7200.0, 20.0);
        assert_eq!(x.tok_s_per_gpu, 900.0);
        assert_eq!(x.tok_s_per_user, 50.0);
        let c = x.cost_per_1m_output_tokens_usd.unwrap();
        assert!((c - 24.0 / (7200.0 * 3600.0) * 1e6).abs() < 1e-12 && (c - 0.925926).abs() < 1e-6);
        assert!(EfficiencyPoint::new(1, 1, 100.0, 0.0, None).is_none());
    }

    #[test]
    fn the_frontier_drops_points_beaten_on_both_axes() {
        // Same total throughput on 1 vs 2 GPUs: the 2-GPU point is dominated unless its
        // users are faster.
        let pts = vec![
            p(0, 1, 1000.0, 20.0), // 1000/GPU, 50/user
            p(1, 2, 1000.0, 20.0), // 500/GPU, 50/user: dominated by 0
            p(2, 2, 1200.0, 10.0), // 600/GPU, 100/user: faster users
            p(3, 1, 400.0, 12.5),  // 400/GPU, 80/user: dominated by 2
        ];
        let f: Vec<usize> = frontier(&pts).iter().map(|p| p.index).collect();
        assert_eq!(f, vec![0, 2]);
    }
}
