//! When vLLM's benchmark client sends each request (`get_request`), per [`ArrivalEra`]:
//!
//! * ≤0.6.3: yield, then sleep `exponential(1/rate)`: first send at 0, one extra sleep after
//!   the last request before the dispatch loop ends;
//! * 0.6.4–0.9.x: the same with `gamma(burstiness, 1/(rate·burstiness))`;
//! * 0.10.0+: N gaps drawn up front (`gamma`, or `1/rate` at `--burstiness inf` from 0.11.2),
//!   summed in order, and without a ramp-up rescaled by `(N/rate)/cum[-1]` so the last send is
//!   at exactly N/rate; request i is sent at `cum[i]` (the first one waits its own gap).
//!
//! With `--ramp-up-strategy` the rate of request i is `a + (b−a)·p` (linear) or `a·(b/a)^p`
//! (exponential), `p = i / max(N−1, 1)`; a rate of 0 (or inf) gives a zero gap.
use super::flavour::{ArrivalEra, VllmFlavour};
use crate::client::rng::NumpyRandomState;
use crate::spec::vllm_client::RampUp;

/// The arrival parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArrivalParams {
    pub request_rate: f64,
    pub burstiness: f64,
    pub ramp_up: Option<(RampUp, f64, f64)>,
}

fn rate_of(p: &ArrivalParams, i: usize, n: usize) -> f64 {
    match p.ramp_up {
        None => p.request_rate,
        Some((kind, a, b)) => {
            let progress = i as f64 / (n.saturating_sub(1).max(1)) as f64;
            match kind {
                RampUp::Linear => a + (b - a) * progress,
                RampUp::Exponential => a * (b / a).powf(progress),
            }
        }
    }
}

fn ns(t_s: f64) -> u64 {
    (t_s * 1e9).round() as u64
}

/// Send times (s) of `n` requests and the time the dispatch loop ends (s), drawing from `rng`.
/// `Err` where vLLM would raise (`--burstiness inf` before 0.11.2).
pub fn send_times_s(
    flavour: &VllmFlavour,
    n: usize,
    p: &ArrivalParams,
    rng: &mut NumpyRandomState,
) -> Result<(Vec<f64>, f64), String> {
    if p.burstiness.is_infinite() && !flavour.constant_gaps_at_inf_burstiness {
        return Err(format!(
            "vLLM's client {} has no constant-rate mode (--burstiness inf needs 0.11.2+)",
            flavour.version
        ));
    }
    let gap = |i: usize, rng: &mut NumpyRandomState| -> f64 {
        let rate = rate_of(p, i, n);
        if !rate.is_finite() || rate <= 0.0 {
            return 0.0;
        }
        match flavour.arrivals {
            ArrivalEra::Exponential => rng.exponential(1.0 / rate),
            _ if p.burstiness.is_infinite() => 1.0 / rate,
            _ => rng.gamma(p.burstiness, 1.0 / (rate * p.burstiness)),
        }
    };
    match flavour.arrivals {
        ArrivalEra::Exponential | ArrivalEra::GammaAfterEach => {
            let mut t = 0.0f64;
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                out.push(t);
                t += gap(i, rng);
            }
            Ok((out, t))
        }
        ArrivalEra::GammaNormalized => {
            let mut cum = Vec::with_capacity(n);
            let mut t = 0.0f64;
            for i in 0..n {
                // Python: delay_ts[i] += delay_ts[i - 1], in order.
                t = if i == 0 { gap(i, rng) } else { t + gap(i, rng) };
                cum.push(t);
            }
            if let (None, Some(&last)) = (p.ramp_up, cum.last()) {
                if last != 0.0 && p.request_rate.is_finite() {
                    let factor = (n as f64 / p.request_rate) / last;
                    cum.iter_mut().for_each(|d| *d *= factor);
                }
            }
            let end = cum.last().copied().unwrap_or(0.0);
            Ok((cum, end))
        }
    }
}

/// [`send_times_s`] in integer ns.
pub fn dispatch_ns(
    flavour: &VllmFlavour,
    n: usize,
    p: &ArrivalParams,
    rng: &mut NumpyRandomState,
) -> Result<(Vec<u64>, u64), String> {
    let (times, end) = send_times_s(flavour, n, p, rng)?;
    Ok((times.into_iter().map(ns).collect(), ns(end)))
}
