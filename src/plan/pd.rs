//! PD candidates in `plan`: a grid over `--prefill-replicas`, `--decode-replicas`,
//! `--prefill-tp`, `--decode-tp` (and `--prefill-hardware`/`--decode-hardware`) with
//! `--disaggregation` is searched like any other deployment; this module prices a mixed
//! fleet side by side and names each candidate's xPyD shape and bottleneck side.
use super::{Candidate, Plan, Prices};
use crate::spec::pd::{PdConfig, PdSide};

/// USD per hour of every GPU of both sides (each at its own hardware's price), or `None`
/// when a side's hardware has no price.
pub fn cost_per_hour(prices: &Prices, pd: &PdConfig) -> Option<f64> {
    let side = |s: &PdSide| {
        let hw = &s.hardware;
        prices
            .per_hardware
            .get(&hw.name)
            .copied()
            .or(prices.all)
            .or(hw.cost_per_device_hour_usd)
            .map(|usd| usd * (s.replicas * s.server.tp) as f64)
    };
    Some(side(&pd.prefill)? + side(&pd.decode)?)
}

/// True when some candidate is a PD deployment (the table then shows the PD columns).
pub fn any_pd(p: &Plan) -> bool {
    p.candidates
        .iter()
        .any(|c| c.deployment.as_ref().is_some_and(|d| d.pd.is_some()))
}

/// The PD columns of a candidate: its xPyD shape and the side that limits it at capacity.
pub fn columns(c: &Candidate) -> [String; 2] {
    [
        c.deployment
            .as_ref()
            .and_then(|d| d.pd.clone())
            .unwrap_or_else(|| "-".into()),
        c.search
            .as_ref()
            .and_then(|s| s.pd_bottleneck)
            .unwrap_or("-")
            .to_string(),
    ]
}
