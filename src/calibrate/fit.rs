//! One fit: the chosen constants of one or several profiles moved together to minimise the
//! [`LossSpec`] over a subset of a [`RunSet`]; plus predictions with given profiles.
//!
//! A fit of several profiles (a joint fit) has one optimiser coordinate per *slot*: a shared
//! constant is one slot applied to every profile that has it; a per-hardware constant is one
//! slot per profile that has training runs. A profile without training runs (the held-out
//! hardware of a leave-one-hardware-out fold) gets the shared slots' values and its
//! per-hardware constants at their priors (the datasheet / initial values, never a fitted
//! value), so its runs are predicted from nothing measured on it. A constant that acts on one
//! engine only (SGLang's or vLLM's host CPU) gets a slot only where runs of that engine train
//! it, so a fit on vLLM runs leaves SGLang's host constants as they were, and the reverse.
use super::loss::{run_errors, LossSpec};
use super::optimize::{minimize, Options, Progress};
use super::params::{Param, Sharing};
use super::runs::{RunSet, Values};
use crate::spec::hardware::HardwareProfile;

/// Signed % errors of one run's scored metrics (see [`super::runs::Metric::ALL`]).
pub type Errors = [Option<f64>; 3];

/// What to fit and how.
#[derive(Debug, Clone)]
pub struct FitSpec {
    pub params: Vec<Param>,
    pub loss: LossSpec,
    pub options: Options,
}

/// One optimiser coordinate: a parameter, on one profile or shared by all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Index into `FitSpec::params`.
    pub param: usize,
    /// The profile (index into the fit's profiles), or `None` for a shared value.
    pub hw: Option<usize>,
}

/// The result of one fit.
#[derive(Debug, Clone, PartialEq)]
pub struct FitResult {
    /// The starting profiles with the fitted values set (one per profile of the fit).
    pub profiles: Vec<HardwareProfile>,
    /// The coordinates fitted.
    pub slots: Vec<Slot>,
    /// Slot names (`memory` in a fit of one profile; `memory@a100-sxm4-80gb` or
    /// `step_cpu_ns@shared` in a joint fit), starting and fitted values, in slot order.
    pub names: Vec<String>,
    pub start: Vec<f64>,
    pub fitted: Vec<f64>,
    pub loss_start: f64,
    /// Loss after Levenberg–Marquardt, before the polish.
    pub loss_lm: f64,
    pub loss: f64,
    /// Indices (into the run set) of the runs fitted on.
    pub runs: Vec<usize>,
    /// In-sample signed % errors of those runs.
    pub errors: Vec<Errors>,
    pub iterations: usize,
    pub evaluations: usize,
}

impl FitResult {
    /// The fitted profile of a fit of one profile.
    pub fn profile(&self) -> &HardwareProfile {
        &self.profiles[0]
    }

    /// `(name, note)` of every slot that ended at a bound.
    pub fn at_bounds(&self, params: &[Param]) -> Vec<(String, String)> {
        self.slots
            .iter()
            .zip(&self.names)
            .zip(&self.fitted)
            .filter_map(|((s, n), &v)| params[s.param].bound_note(v).map(|w| (n.clone(), w)))
            .collect()
    }
}

/// Whether constant `p` of profile `h` has training runs: runs on `h` of an engine it acts on
/// (see [`super::engine_scope`]).
pub type Trained<'a> = dyn Fn(&Param, usize) -> bool + 'a;

/// The slots of `params` for `profiles` when `trained(p, h)` says whether constant `p` has
/// training runs on profile `h`.
pub fn slots(params: &[Param], profiles: &[HardwareProfile], trained: &Trained<'_>) -> Vec<Slot> {
    let mut out = Vec::new();
    for (i, p) in params.iter().enumerate() {
        let on: Vec<usize> = (0..profiles.len())
            .filter(|&h| trained(p, h) && p.applies_to(&profiles[h]))
            .collect();
        match p.sharing {
            Sharing::Shared if !on.is_empty() => out.push(Slot { param: i, hw: None }),
            Sharing::Shared => {}
            Sharing::PerHardware => out.extend(on.into_iter().map(|h| Slot {
                param: i,
                hw: Some(h),
            })),
        }
    }
    out
}

/// The slot's name as reports and JSON show it.
pub fn slot_name(params: &[Param], profiles: &[HardwareProfile], s: Slot) -> String {
    let p = &params[s.param];
    match (profiles.len(), s.hw) {
        (1, _) => p.name.clone(),
        (_, Some(h)) => format!("{}@{}", p.name, profiles[h].name),
        (_, None) => format!("{}@shared", p.name),
    }
}

/// `profiles` with every slot set to the value of its coordinate.
pub fn with_slots(
    profiles: &[HardwareProfile],
    params: &[Param],
    slots: &[Slot],
    x: &[f64],
) -> Vec<HardwareProfile> {
    let mut out = profiles.to_vec();
    for (s, &xi) in slots.iter().zip(x) {
        let p = &params[s.param];
        let v = p.from_x(xi);
        match s.hw {
            Some(h) => p.set(&mut out[h], v),
            None => out
                .iter_mut()
                .filter(|h| p.applies_to(h))
                .for_each(|h| p.set(h, v)),
        }
    }
    out
}

/// The scored values of `runs` under `profile`, in order.
pub fn simulate(set: &RunSet, profile: &HardwareProfile, runs: &[usize]) -> Vec<Option<Values>> {
    set.evaluate(std::slice::from_ref(profile), runs)
        .pop()
        .unwrap_or_default()
}

/// Signed % errors of `runs` under `profile`, in order.
pub fn predict(set: &RunSet, profile: &HardwareProfile, runs: &[usize]) -> Vec<Errors> {
    predict_joint(set, std::slice::from_ref(profile), runs)
}

/// Signed % errors of `runs`, each under the profile of its hardware, in order.
pub fn predict_joint(set: &RunSet, profiles: &[HardwareProfile], runs: &[usize]) -> Vec<Errors> {
    set.evaluate_joint(&[profiles.to_vec()], runs)
        .pop()
        .unwrap_or_default()
        .into_iter()
        .zip(runs)
        .map(|(v, &r)| run_errors(&set.runs[r], v))
        .collect()
}

/// Fits `spec.params` of `base` on `runs` of `set` (a fit of one profile).
pub fn fit(
    set: &RunSet,
    base: &HardwareProfile,
    spec: &FitSpec,
    runs: &[usize],
    progress: &Progress<'_>,
) -> FitResult {
    fit_joint(set, std::slice::from_ref(base), spec, runs, progress)
}

/// The starting value of a slot: the profile's value (the mean coordinate over the profiles
/// that have it, for a shared slot), clamped into the bounds.
fn start_x(p: &Param, profiles: &[HardwareProfile], s: Slot) -> f64 {
    let x = |h: &HardwareProfile| p.to_x(p.clamp(p.get(h)));
    match s.hw {
        Some(h) => x(&profiles[h]),
        None => {
            let xs: Vec<f64> = profiles.iter().filter(|h| p.applies_to(h)).map(x).collect();
            xs.iter().sum::<f64>() / xs.len().max(1) as f64
        }
    }
}

/// Fits `spec.params` of `bases` (one profile per hardware of the run set) on `runs`.
pub fn fit_joint(
    set: &RunSet,
    bases: &[HardwareProfile],
    spec: &FitSpec,
    runs: &[usize],
    progress: &Progress<'_>,
) -> FitResult {
    let params = &spec.params;
    let trained: Vec<bool> = (0..bases.len())
        .map(|h| runs.iter().any(|&r| set.runs[r].hw == h))
        .collect();
    // Profiles without training runs: per-hardware constants at their priors.
    let mut bases = bases.to_vec();
    for (base, _) in bases.iter_mut().zip(&trained).filter(|(_, t)| !**t) {
        for p in params.iter().filter(|p| p.sharing == Sharing::PerHardware) {
            if p.applies_to(base) {
                p.set(base, p.from_x(p.to_x(p.clamp(p.prior))));
            }
        }
    }
    let trained_on = |p: &Param, h: usize| {
        runs.iter()
            .any(|&r| set.runs[r].hw == h && p.engine.covers(set.runs[r].engine))
    };
    let slots = slots(params, &bases, &trained_on);
    let x0: Vec<f64> = slots
        .iter()
        .map(|&s| start_x(&params[s.param], &bases, s))
        .collect();
    let start: Vec<f64> = slots
        .iter()
        .zip(&x0)
        .map(|(s, &x)| {
            let p = &params[s.param];
            s.hw.map_or_else(|| p.from_x(x), |h| p.get(&bases[h]))
        })
        .collect();
    let centre: Vec<f64> = slots
        .iter()
        .map(|s| {
            let p = &params[s.param];
            p.to_x(p.clamp(p.prior))
        })
        .collect();
    let bounds: Vec<(f64, f64)> = slots.iter().map(|s| params[s.param].x_bounds()).collect();
    let (lo, hi): (Vec<f64>, Vec<f64>) = bounds.into_iter().unzip();
    let sd: Vec<f64> = slots.iter().map(|s| params[s.param].prior_sd).collect();
    let fit_runs: Vec<&_> = runs.iter().map(|&r| &set.runs[r]).collect();
    let residuals = |pts: &[Vec<f64>]| -> Vec<Vec<f64>> {
        let candidates: Vec<Vec<HardwareProfile>> = pts
            .iter()
            .map(|x| with_slots(&bases, params, &slots, x))
            .collect();
        set.evaluate_joint(&candidates, runs)
            .iter()
            .zip(pts)
            .map(|(sims, x)| {
                let mut r = spec.loss.residuals(&fit_runs, sims);
                r.extend(spec.loss.prior_residuals(x, &centre, &sd));
                r
            })
            .collect()
    };
    let loss_start = residuals(std::slice::from_ref(&x0))[0]
        .iter()
        .map(|v| v * v)
        .sum();
    let out = minimize(&x0, &lo, &hi, &residuals, &spec.options, progress);
    let profiles = with_slots(&bases, params, &slots, &out.x);
    let fitted = slots
        .iter()
        .zip(&out.x)
        .map(|(s, &x)| params[s.param].from_x(x))
        .collect();
    let errors = predict_joint(set, &profiles, runs);
    FitResult {
        names: slots
            .iter()
            .map(|&s| slot_name(params, &profiles, s))
            .collect(),
        profiles,
        slots,
        start,
        fitted,
        loss_start,
        loss_lm: out.loss_lm,
        loss: out.loss,
        runs: runs.to_vec(),
        errors,
        iterations: out.iterations,
        evaluations: out.evaluations + 1,
    }
}
