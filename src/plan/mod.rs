//! `servesim plan`: capacity planning. Every point of a grid of `run` flags (typically
//! hardware × `--tp` × `--dp` × `--max-concurrency`, the workload fixed by the client flags)
//! is a candidate deployment; for each, the rate search of [`search`] finds its capacity, the
//! highest request rate at which it meets the SLOs and, with a target rate, whether it meets
//! them there. Candidates are then ranked:
//! * `--target-rate R`: those meeting the SLOs at R first, cheapest first (cost per hour =
//!   devices × price per device-hour), more headroom (higher max rate) breaking ties;
//! * `--budget-per-hour B`: those costing at most B first, highest max rate first, cheaper
//!   breaking ties.
//!
//! A concurrency cap is admission control: with `--max-concurrency` set, a deployment must
//! meet the SLOs also when the cap is full (the closed-loop run), so the largest cap meeting
//! them wins on throughput; without a cap only the Poisson probes count.
//!
//! `--gpu-budget N` drops every candidate using more than N devices before it is searched.
//! Each candidate that meets the SLOs at some rate gets its point on the capacity planner's
//! frontier at its highest such rate ([`crate::sweep::frontier`]: output tok/s per GPU vs
//! tok/s per user, and cost per million output tokens), and the recommended one its launch
//! commands ([`launch`]).
//!
//! Prices come from the hardware profiles (`cost_per_device_hour_usd`) unless
//! `--cost-per-device-hour` overrides them; a candidate without a price is an error before
//! anything is simulated. Devices are tp × dp (tp alone with `--enable-dp-attention`).
pub mod launch;
pub mod launch_pd;
pub mod pd;
pub mod render;
pub mod search;

use crate::error::{Error, Result};
use crate::metrics::BenchMetrics;
use crate::simulation::Scenario;
use crate::spec::workload::ScenarioFile;
use crate::sweep::frontier::{self, EfficiencyPoint};
use crate::sweep::grid::Grid;
use crate::sweep::point::{self, Deployment};
use rayon::prelude::*;
use search::{RateSearch, Violation};
use serde::Serialize;
use std::collections::BTreeMap;
use std::str::FromStr;

/// Latency objectives on bench_serving's P99s (milliseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Slo {
    pub ttft_p99_ms: Option<f64>,
    pub tpot_p99_ms: Option<f64>,
    pub e2e_p99_ms: Option<f64>,
}

impl Slo {
    fn limits(&self, m: &BenchMetrics) -> [(&'static str, Option<f64>, f64); 3] {
        [
            ("p99 TTFT", self.ttft_p99_ms, m.ttft_ms.p99),
            ("p99 TPOT", self.tpot_p99_ms, m.tpot_ms.p99),
            ("p99 E2E", self.e2e_p99_ms, m.e2e_ms.p99),
        ]
    }

    /// The objectives `m` misses.
    pub fn violations(&self, m: &BenchMetrics) -> Vec<Violation> {
        self.limits(m)
            .into_iter()
            .filter_map(|(metric, limit, value)| {
                let limit_ms = limit?;
                (value > limit_ms).then_some(Violation {
                    metric,
                    value_ms: value,
                    limit_ms,
                })
            })
            .collect()
    }

    /// `p99 TTFT ≤ 10000 ms, p99 TPOT ≤ 50 ms`.
    pub fn describe(&self) -> String {
        self.limits(&BenchMetrics::default())
            .into_iter()
            .filter_map(|(name, limit, _)| Some(format!("{name} ≤ {} ms", limit?)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn check(&self) -> Result<()> {
        let limits = [
            ("--slo-ttft-p99", self.ttft_p99_ms),
            ("--slo-tpot-p99", self.tpot_p99_ms),
            ("--slo-e2e-p99", self.e2e_p99_ms),
        ];
        if limits.iter().all(|(_, v)| v.is_none()) {
            return Err(Error::Msg(
                "plan needs at least one SLO: --slo-ttft-p99, --slo-tpot-p99 or --slo-e2e-p99 (ms)"
                    .into(),
            ));
        }
        for (flag, v) in limits {
            if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0)) {
                return Err(Error::invalid(
                    flag,
                    flag.trim_start_matches("--").replace('-', "_"),
                    format!(
                        "an SLO must be a finite number of ms > 0, got {}",
                        crate::spec::flag_values::show_f64(v)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// What the plan optimises.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Goal {
    /// Cheapest deployment meeting the SLOs at this many requests per second.
    TargetRate(f64),
    /// Highest sustainable rate for at most this many USD per hour.
    BudgetPerHour(f64),
}

/// `--cost-per-device-hour`: `USD` for every profile, and/or `HARDWARE=USD` items.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Prices {
    pub all: Option<f64>,
    pub per_hardware: BTreeMap<String, f64>,
}

impl FromStr for Prices {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Prices, String> {
        let mut p = Prices::default();
        for item in s.split(',').map(str::trim) {
            let (hw, usd) = match item.split_once('=') {
                Some((h, u)) => (Some(h.trim()), u),
                None => (None, item),
            };
            let usd: f64 = usd
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    format!("`{item}` is not a price: write USD or HARDWARE=USD (comma-separated)")
                })?;
            match hw {
                Some(h) => {
                    let known = crate::spec::bundled::hardware_names();
                    if !known.contains(&h) {
                        return Err(format!(
                            "unknown hardware `{h}` in `{item}`; bundled: {} (price a custom \
                             profile with cost_per_device_hour_usd in its YAML, or one USD \
                             figure for every profile)",
                            known.join(", ")
                        ));
                    }
                    p.per_hardware.insert(h.to_string(), usd);
                }
                None => p.all = Some(usd),
            }
        }
        Ok(p)
    }
}

impl Prices {
    /// Price of one device-hour of `d`'s hardware: the override, else the profile's.
    pub fn device_hour(&self, d: &Deployment) -> Option<f64> {
        self.per_hardware
            .get(&d.hardware)
            .copied()
            .or(self.all)
            .or(d.cost_per_device_hour_usd)
    }
}

/// A plan to compute.
#[derive(Debug, Clone)]
pub struct PlanSpec {
    pub file: ScenarioFile,
    pub grid: Grid,
    pub slo: Slo,
    pub goal: Goal,
    pub prices: Prices,
    /// Relative resolution of the max-rate bisection (e.g. 0.02).
    pub tolerance: f64,
    /// `--gpu-budget`: never propose a deployment of more devices.
    pub gpu_budget: Option<u64>,
}

/// One candidate deployment and what the search found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// Grid index.
    pub index: usize,
    pub params: BTreeMap<String, String>,
    pub deployment: Option<Deployment>,
    /// USD per hour for all its devices.
    pub cost_per_hour: Option<f64>,
    pub search: Option<RateSearch>,
    /// Its point on the per-GPU / per-user frontier, at its highest rate meeting the SLOs.
    pub efficiency: Option<EfficiencyPoint>,
    /// Why it could not be evaluated (does not fit, invalid flags, over the GPU budget, ...).
    pub error: Option<String>,
}

impl Candidate {
    /// Meets the goal: SLOs held at the target rate, or within budget with some passing rate.
    pub fn qualifies(&self, goal: Goal) -> bool {
        let Some(s) = &self.search else { return false };
        match goal {
            Goal::TargetRate(t) => {
                t <= s.capacity_rps && s.at_target.as_ref().is_some_and(|p| p.ok())
            }
            Goal::BudgetPerHour(b) => {
                self.cost_per_hour.is_some_and(|c| c <= b) && s.max_rate > 0.0
            }
        }
    }

    /// Highest rate meeting the SLOs (0 when unknown).
    pub fn max_rate(&self) -> f64 {
        self.search.as_ref().map_or(0.0, |s| s.max_rate)
    }
}

/// The ranked candidates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub goal: Goal,
    pub slo: Slo,
    pub tolerance: f64,
    /// Flags that vary across candidates (table columns).
    pub varying: Vec<String>,
    /// `--gpu-budget`, when given.
    pub gpu_budget: Option<u64>,
    /// Best first.
    pub candidates: Vec<Candidate>,
    /// Grid indices of the candidates on the per-GPU / per-user frontier, by increasing
    /// tok/s per user.
    pub per_gpu_frontier: Vec<usize>,
    /// How to deploy and benchmark the recommended candidate for real.
    pub launch: Option<launch::LaunchCommands>,
}

impl Plan {
    /// The recommended deployment, if any candidate qualifies.
    pub fn best(&self) -> Option<&Candidate> {
        self.candidates.first().filter(|c| c.qualifies(self.goal))
    }
}

fn check(spec: &PlanSpec) -> Result<()> {
    spec.slo.check()?;
    if spec.grid.axes.iter().any(|a| a.flag == "request-rate") {
        return Err(Error::Msg(
            "plan searches the request rate itself: drop --request-rate (use --target-rate or --budget-per-hour)"
                .into(),
        ));
    }
    let (name, v) = match spec.goal {
        Goal::TargetRate(r) => ("--target-rate", r),
        Goal::BudgetPerHour(b) => ("--budget-per-hour", b),
    };
    if !(v.is_finite() && v > 0.0) {
        return Err(Error::Msg(format!("{name} must be a finite number > 0")));
    }
    if !(spec.tolerance > 0.0 && spec.tolerance < 1.0) {
        return Err(Error::Msg("--rate-tolerance must be in (0, 1)".into()));
    }
    Ok(())
}

/// A resolved candidate waiting for its search.
struct Pending {
    cand: Candidate,
    scenario: Option<Scenario>,
}

fn resolve(spec: &PlanSpec, index: usize) -> Pending {
    let params = spec
        .grid
        .point(index)
        .into_iter()
        .map(|(f, v)| (f.to_string(), v.to_string()))
        .collect();
    let mut cand = Candidate {
        index,
        params,
        deployment: None,
        cost_per_hour: None,
        search: None,
        efficiency: None,
        error: None,
    };
    let resolved = spec.grid.args(index).and_then(|a| {
        let sc = point::resolve(&spec.file, &a)?;
        Ok((Deployment::of(&sc), sc))
    });
    match resolved {
        Ok((d, _)) if spec.gpu_budget.is_some_and(|b| d.devices > b) => {
            cand.cost_per_hour = spec.prices.device_hour(&d).map(|p| p * d.devices as f64);
            cand.error = Some(format!(
                "uses {} devices, over --gpu-budget {}",
                d.devices,
                spec.gpu_budget.unwrap_or_default()
            ));
            cand.deployment = Some(d);
            Pending {
                cand,
                scenario: None,
            }
        }
        Ok((d, sc)) => {
            cand.cost_per_hour = match &sc.pd {
                Some(cfg) => pd::cost_per_hour(&spec.prices, cfg),
                None => spec.prices.device_hour(&d).map(|p| p * d.devices as f64),
            };
            cand.deployment = Some(d);
            Pending {
                cand,
                scenario: Some(sc),
            }
        }
        Err(e) => {
            cand.error = Some(e.to_string());
            Pending {
                cand,
                scenario: None,
            }
        }
    }
}

/// Errors when a resolvable candidate has no price.
fn check_prices(pending: &[Pending]) -> Result<()> {
    let mut missing: Vec<&str> = pending
        .iter()
        .filter(|p| p.scenario.is_some() && p.cand.cost_per_hour.is_none())
        .filter_map(|p| p.cand.deployment.as_ref().map(|d| d.hardware.as_str()))
        .collect();
    missing.sort();
    missing.dedup();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::Msg(format!(
        "no price per device-hour for {}: pass --cost-per-device-hour {}=USD (or one USD figure for every profile), or set cost_per_device_hour_usd in the profile",
        missing.join(", "),
        missing[0]
    )))
}

/// Runs the searches (in parallel on the current rayon pool; `progress` once per candidate)
/// and ranks the candidates.
pub fn plan(spec: &PlanSpec, progress: &(dyn Fn() + Sync)) -> Result<Plan> {
    check(spec)?;
    let pending: Vec<Pending> = (0..spec.grid.len())
        .into_par_iter()
        .map(|i| resolve(spec, i))
        .collect();
    check_prices(&pending)?;
    let target = match spec.goal {
        Goal::TargetRate(r) => Some(r),
        Goal::BudgetPerHour(_) => None,
    };
    let mut candidates: Vec<Candidate> = pending
        .into_par_iter()
        .map(|p| {
            let mut c = p.cand;
            let over_budget = match spec.goal {
                Goal::BudgetPerHour(b) => c.cost_per_hour.is_some_and(|x| x > b),
                Goal::TargetRate(_) => false,
            };
            if let (Some(sc), false) = (&p.scenario, over_budget) {
                match search::search(sc, &spec.slo, spec.tolerance, target) {
                    Ok(s) => {
                        c.efficiency = efficiency(&c, &s);
                        c.search = Some(s);
                    }
                    Err(e) => c.error = Some(e.to_string()),
                }
            }
            progress();
            c
        })
        .collect();
    rank(&mut candidates, spec.goal);
    let points: Vec<EfficiencyPoint> = candidates
        .iter()
        .filter_map(|c| c.efficiency.clone())
        .collect();
    let per_gpu_frontier = frontier::frontier(&points)
        .iter()
        .map(|p| p.index)
        .collect();
    let mut p = Plan {
        goal: spec.goal,
        slo: spec.slo,
        tolerance: spec.tolerance,
        varying: spec.grid.varying().map(|a| a.flag.clone()).collect(),
        gpu_budget: spec.gpu_budget,
        candidates,
        per_gpu_frontier,
        launch: None,
    };
    p.launch = p.best().and_then(|b| launch_commands(spec, b));
    Ok(p)
}

/// The frontier point of a searched candidate at its highest rate meeting the SLOs.
fn efficiency(c: &Candidate, s: &RateSearch) -> Option<EfficiencyPoint> {
    let d = c.deployment.as_ref()?;
    let probe = s.best.as_ref().filter(|p| s.max_rate > 0.0 && p.ok())?;
    EfficiencyPoint::new(
        c.index,
        d.devices,
        probe.output_throughput,
        probe.mean_tpot_ms,
        c.cost_per_hour,
    )
}

/// The launch and benchmark commands of the recommended candidate, at the rate it was chosen
/// for (the target rate, or its highest rate meeting the SLOs on a budget).
fn launch_commands(spec: &PlanSpec, best: &Candidate) -> Option<launch::LaunchCommands> {
    let args = spec.grid.args(best.index).ok()?;
    let mut sc = point::resolve(&spec.file, &args).ok()?;
    sc.client.request_rate = match spec.goal {
        Goal::TargetRate(r) => r,
        Goal::BudgetPerHour(_) => best.max_rate(),
    };
    Some(launch_pd::render_deployment(&sc, launch::Engine::of(&sc)))
}

/// Orders candidates best first (see the module doc); errors last, grid order breaking ties.
pub fn rank(cands: &mut [Candidate], goal: Goal) {
    cands.sort_by(|a, b| {
        let cost = |c: &Candidate| c.cost_per_hour.unwrap_or(f64::INFINITY);
        let tier = |c: &Candidate| (!c.qualifies(goal), c.error.is_some());
        let by_goal = match goal {
            Goal::TargetRate(_) => cost(a)
                .total_cmp(&cost(b))
                .then(b.max_rate().total_cmp(&a.max_rate())),
            Goal::BudgetPerHour(_) => b
                .max_rate()
                .total_cmp(&a.max_rate())
                .then(cost(a).total_cmp(&cost(b))),
        };
        tier(a)
            .cmp(&tier(b))
            .then(by_goal)
            .then(a.index.cmp(&b.index))
    });
}
