//! The rate search of one deployment: its capacity (the closed-loop request throughput, every
//! request sent at once through the same concurrency cap), the verdict at a given rate, and the
//! highest rate at which it meets the SLOs (bisection on `--request-rate`, geometric, each
//! probe one simulation of the whole workload with Poisson arrivals).
//!
//! No rate above the capacity is sustainable (the search stays below it, and a target above it
//! fails without a probe). A probe passes when no request failed, every SLO holds, and the
//! deployment kept up with the arrivals: a client-side backlog does not show in bench_serving's TTFT (timing starts after
//! the concurrency semaphore), so the run's duration must not exceed the arrival span
//! (N / rate, plus three standard deviations of a Poisson span, 3·√N / rate) by more than the
//! slowest request's latency.
//!
//! With a concurrency cap (`--max-concurrency`), the closed-loop run (the cap always full) must
//! meet the SLOs as well: a cap is the admission control that keeps latency within the SLOs
//! however high the load, so a cap too large to do that disqualifies the deployment. The
//! largest cap that still meets them is then the knee of the latency-throughput curve.
use super::Slo;
use crate::error::Result;
use crate::metrics::BenchMetrics;
use crate::simulation::{run, Scenario};
use serde::Serialize;

/// One SLO violated at a probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// `p99 TTFT`, `p99 TPOT`, `p99 E2E`.
    pub metric: &'static str,
    pub value_ms: f64,
    pub limit_ms: f64,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} ms > {} ms SLO ({:+.0}%)",
            self.metric,
            fmt_ms(self.value_ms),
            self.limit_ms,
            (self.value_ms / self.limit_ms - 1.0) * 100.0
        )
    }
}

/// The outcome of one simulated rate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Probe {
    /// Offered request rate (req/s).
    pub rate: f64,
    pub p99_ttft_ms: f64,
    pub p99_tpot_ms: f64,
    /// Mean TPOT: its inverse is the per-user decode speed of the per-GPU frontier.
    pub mean_tpot_ms: f64,
    pub p99_e2e_ms: f64,
    pub output_throughput: f64,
    pub request_throughput: f64,
    pub duration_s: f64,
    /// The longest the run may take if the deployment keeps up (see the module doc).
    pub allowed_duration_s: f64,
    pub failed: u64,
    pub violations: Vec<Violation>,
    /// PD deployments: the side holding requests longest (`engine::pd::PdStats::bottleneck`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pd_bottleneck: Option<&'static str>,
    /// The run's client-bound warning, when the benchmark client set its pace.
    pub client_bound: Option<String>,
}

impl Probe {
    fn new(rate: f64, n: u64, m: &BenchMetrics, slo: &Slo) -> Probe {
        let n_f = n.max(1) as f64;
        let span = n_f / rate * (1.0 + 3.0 / n_f.sqrt());
        Probe {
            rate,
            p99_ttft_ms: m.ttft_ms.p99,
            p99_tpot_ms: m.tpot_ms.p99,
            mean_tpot_ms: m.tpot_ms.mean,
            p99_e2e_ms: m.e2e_ms.p99,
            output_throughput: m.output_throughput,
            request_throughput: m.request_throughput,
            duration_s: m.duration_s,
            allowed_duration_s: span + m.e2e_ms.max / 1000.0,
            failed: m.failed,
            violations: slo.violations(m),
            pd_bottleneck: None,
            client_bound: None,
        }
    }

    /// The deployment kept up with the arrivals.
    pub fn sustained(&self) -> bool {
        self.duration_s <= self.allowed_duration_s
    }

    /// No request failed and every SLO holds.
    pub fn meets_slos(&self) -> bool {
        self.failed == 0 && self.violations.is_empty()
    }

    /// Everything holds at this rate: the SLOs, and the deployment kept up.
    pub fn ok(&self) -> bool {
        self.meets_slos() && self.sustained()
    }

    /// Why the probe failed, one clause per reason ("" when it passed).
    pub fn why(&self) -> String {
        let mut out: Vec<String> = self.violations.iter().map(|v| v.to_string()).collect();
        if !self.sustained() && self.rate.is_finite() {
            out.push(format!(
                "falls behind at {} req/s (run took {:.0} s, at most {:.0} s if it kept up)",
                fmt_rate(self.rate),
                self.duration_s,
                self.allowed_duration_s
            ));
        }
        if self.failed > 0 {
            out.push(format!("{} requests failed", self.failed));
        }
        out.join("; ")
    }
}

/// Milliseconds: 2 decimals below 10, 1 below 1000, none above.
pub fn fmt_ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A rate with 3 significant digits.
pub fn fmt_rate(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}")
    } else if r >= 10.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.2}")
    }
}

/// Lowest rate the search tries, as a fraction of the capacity.
pub const MIN_RATE_FRACTION: f64 = 1.0 / 64.0;

/// Result of [`search`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateSearch {
    /// Closed-loop request throughput (req/s): the most the deployment can serve.
    pub capacity_rps: f64,
    /// Output tokens/s of the closed-loop run.
    pub capacity_output_tps: f64,
    /// With a concurrency cap: the closed-loop run judged against the SLOs (the cap full).
    pub saturation: Option<Probe>,
    /// Highest passing rate found (0: none down to capacity × [`MIN_RATE_FRACTION`], or the
    /// SLOs fail with the cap full).
    pub max_rate: f64,
    /// The probe at `max_rate`, or the lowest failing probe when none passed.
    pub best: Option<Probe>,
    /// The probe at the target rate, in target-rate mode (not run above the capacity).
    pub at_target: Option<Probe>,
    /// Simulations run.
    pub probes: u32,
    /// PD deployments: the bottleneck side of the closed-loop run (at capacity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pd_bottleneck: Option<&'static str>,
}

impl RateSearch {
    /// The SLOs hold with the concurrency cap full (always true without a cap).
    pub fn saturation_ok(&self) -> bool {
        self.saturation.as_ref().map_or(true, Probe::meets_slos)
    }

    /// Whether rates were searched at all: not when the closed loop missed the SLOs or served
    /// nothing (`max_rate` is then 0 by default, not a measured rate).
    pub fn searched(&self) -> bool {
        self.saturation_ok() && self.capacity_rps > 0.0
    }
}

/// Simulates `sc` at `rate` (Poisson) and judges it against `slo`.
pub fn probe(sc: &Scenario, rate: f64, slo: &Slo) -> Result<Probe> {
    let mut sc = sc.clone();
    sc.client.request_rate = rate;
    let out = run(&sc)?;
    let mut p = Probe::new(rate, sc.client.num_prompts, &out.metrics, slo);
    p.pd_bottleneck = out.pd.map(|pd| pd.bottleneck);
    p.client_bound = crate::sweep::point::client_bound(&out.notes);
    Ok(p)
}

/// Capacity, the highest rate meeting `slo` (relative resolution `tolerance`) and, when
/// `target` is given, the verdict at that rate. With a concurrency cap the closed-loop run
/// must meet the SLOs too (the cap is what protects latency under overload; see the plan
/// module); when it does not, no rate is searched.
pub fn search(sc: &Scenario, slo: &Slo, tolerance: f64, target: Option<f64>) -> Result<RateSearch> {
    let closed = probe(sc, f64::INFINITY, slo)?;
    let mut s = RateSearch {
        capacity_rps: closed.request_throughput,
        capacity_output_tps: closed.output_throughput,
        pd_bottleneck: closed.pd_bottleneck,
        saturation: sc.client.max_concurrency.map(|_| closed),
        max_rate: 0.0,
        best: None,
        at_target: None,
        probes: 1,
    };
    if !s.searched() {
        return Ok(s);
    }
    // Above the closed-loop throughput the deployment cannot keep up, whatever the SLOs say
    // about a finite run (without a cap the backlog hides in latencies an SLO may not bound).
    if let Some(t) = target.filter(|&t| t <= s.capacity_rps) {
        s.at_target = Some(probe(sc, t, slo)?);
        s.probes += 1;
    }
    let mut bisect = Bisect {
        sc,
        slo,
        reuse: s.at_target.clone(),
        probes: 0,
        passed: None,
        lowest_fail: None,
    };
    let (mut lo, mut hi) = (s.capacity_rps * MIN_RATE_FRACTION, s.capacity_rps);
    if bisect.check(hi)? {
        lo = hi;
    } else {
        while hi / lo > 1.0 + tolerance {
            let mid = (lo * hi).sqrt();
            if bisect.check(mid)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        if bisect.passed.is_none() {
            bisect.check(lo)?;
        }
    }
    if bisect.passed.is_some() {
        s.max_rate = lo;
    }
    s.probes += bisect.probes;
    s.best = bisect.passed.or(bisect.lowest_fail);
    Ok(s)
}

/// The state of one bisection.
struct Bisect<'a> {
    sc: &'a Scenario,
    slo: &'a Slo,
    /// A probe already run (at the target rate), reused when the search lands on its rate.
    reuse: Option<Probe>,
    probes: u32,
    /// The last passing probe (the highest, as the bisection only moves up on success).
    passed: Option<Probe>,
    lowest_fail: Option<Probe>,
}

impl Bisect<'_> {
    fn check(&mut self, rate: f64) -> Result<bool> {
        let p = match &self.reuse {
            Some(t) if t.rate == rate => t.clone(),
            _ => {
                self.probes += 1;
                probe(self.sc, rate, self.slo)?
            }
        };
        let ok = p.ok();
        if ok {
            self.passed = Some(p);
        } else if self.lowest_fail.as_ref().map_or(true, |f| p.rate < f.rate) {
            self.lowest_fail = Some(p);
        }
        Ok(ok)
    }
}
