//! Which constants the selected runs can identify: the default `--params`.
//!
//! Every fittable constant is moved once (its coordinate grows by ln 2: an efficiency doubles,
//! an overhead `v` becomes `2v + scale`) and the change of each run's scored metrics recorded.
//! A constant is a candidate when it changes some run's metric by at least
//! [`IDENTIFY_THRESHOLD`]. Candidates are then taken greedily (a pivoted Gram–Schmidt on the
//! loss-weighted change vectors): each time the one whose effect is largest after removing what
//! the constants already taken explain; a candidate whose remaining effect is less than
//! [`COLLINEAR`] of its own is left out (the runs cannot tell it from those taken), and at most
//! half as many constants as the runs have scored values are taken.
//! Memory constants and the sourced ones ([`SOURCED`]: cited measurements with bounds, such as
//! the tokenization rate) are opt-in only (named in `--params`).
use super::loss::LossSpec;
use super::params::{all_params_of, Param, Section};
use super::runs::RunSet;
use crate::spec::hardware::HardwareProfile;

/// A constant identifies a run when moving it changes one of the run's scored metrics by more
/// than this (log) fraction.
pub const IDENTIFY_THRESHOLD: f64 = 0.01;

/// A candidate whose effect, after removing what the constants already taken explain, keeps
/// less than this fraction of its norm is collinear with them.
pub const COLLINEAR: f64 = 0.1;

/// The effect of moving one constant.
#[derive(Debug, Clone, PartialEq)]
pub struct Sensitivity {
    pub param: Param,
    /// Largest |Δ ln metric| of each run (in `runs` order).
    pub per_run: Vec<f64>,
    /// Loss-weighted Δ ln of every (run, metric), run-major.
    pub column: Vec<f64>,
}

/// The effect of each of `candidates` on `runs` at `bases` (one profile per hardware of the
/// run set; a constant is moved on every profile that has it).
pub fn sensitivities(
    set: &RunSet,
    bases: &[HardwareProfile],
    candidates: &[Param],
    runs: &[usize],
    loss: &LossSpec,
) -> Vec<Sensitivity> {
    let step = std::f64::consts::LN_2;
    let mut profiles = vec![bases.to_vec()];
    for p in candidates {
        let (lo, hi) = p.x_bounds();
        let mut moved_all = bases.to_vec();
        for h in moved_all.iter_mut().filter(|h| p.applies_to(h)) {
            let x = p.to_x(p.get(h));
            let moved = if x + step <= hi { x + step } else { x - step };
            p.set(h, p.from_x(moved.clamp(lo, hi)));
        }
        profiles.push(moved_all);
    }
    let sims = set.evaluate_joint(&profiles, runs);
    let run_refs: Vec<_> = runs.iter().map(|&r| &set.runs[r]).collect();
    let weights = loss.weight_matrix(&run_refs);
    candidates
        .iter()
        .enumerate()
        .map(|(c, p)| {
            let mut per_run = Vec::new();
            let mut column = Vec::new();
            for (k, (a, b)) in sims[0].iter().zip(&sims[c + 1]).enumerate() {
                let d: [f64; 3] = match (a, b) {
                    (Some(a), Some(b)) => [0, 1, 2].map(|m| (b[m] / a[m]).ln()),
                    _ => [f64::INFINITY; 3],
                };
                // Only the metrics the run scores (a flag or a missing metric moves nothing).
                let scored = set.runs[runs[k]].scored;
                per_run.push(
                    d.iter()
                        .zip(scored)
                        .filter(|(_, s)| *s)
                        .map(|(v, _)| v.abs())
                        .fold(0.0, f64::max),
                );
                for m in 0..3 {
                    let v = d[m] * weights[k][m].sqrt();
                    column.push(if v.is_finite() { v } else { 0.0 });
                }
            }
            Sensitivity {
                param: p.clone(),
                per_run,
                column,
            }
        })
        .collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The constants to fit, in profile order, and why each other one is left out.
pub fn select(sens: &[Sensitivity], runs: usize) -> (Vec<Param>, Vec<(String, String)>) {
    let max_params = (3 * runs / 2).max(1);
    let mut dropped = Vec::new();
    let mut pool = Vec::new();
    for (i, s) in sens.iter().enumerate() {
        let most = s.per_run.iter().copied().fold(0.0, f64::max);
        if most >= IDENTIFY_THRESHOLD {
            pool.push(i);
        } else {
            dropped.push((i, format!(
                "not identifiable from these runs (doubling it moves no scored metric by {:.0}%; at most {:.2}%)",
                IDENTIFY_THRESHOLD * 100.0,
                most * 100.0
            )));
        }
    }
    let mut chosen: Vec<usize> = Vec::new();
    let mut basis: Vec<Vec<f64>> = Vec::new();
    while !pool.is_empty() {
        let resid: Vec<(usize, Vec<f64>, f64)> = pool
            .iter()
            .map(|&i| {
                let mut r = sens[i].column.clone();
                for b in &basis {
                    let c = dot(&r, b);
                    r.iter_mut().zip(b).for_each(|(x, y)| *x -= c * y);
                }
                let own = dot(&sens[i].column, &sens[i].column).sqrt();
                let left = dot(&r, &r).sqrt();
                (i, r, if own > 0.0 { left / own } else { 0.0 })
            })
            .collect();
        pool.clear();
        let mut best: Option<(usize, Vec<f64>, f64)> = None;
        for (i, r, rel) in resid {
            if rel < COLLINEAR {
                let names: Vec<&str> = chosen
                    .iter()
                    .map(|&c| sens[c].param.name.as_str())
                    .collect();
                dropped.push((
                    i,
                    format!(
                        "the runs cannot tell it apart from {} ({:.0}% of its effect is theirs)",
                        names.join(", "),
                        (1.0 - rel * rel) * 100.0
                    ),
                ));
                continue;
            }
            let norm = dot(&r, &r).sqrt();
            pool.push(i);
            if best.as_ref().map_or(true, |b| norm > b.2) {
                best = Some((i, r, norm));
            }
        }
        let Some((i, r, norm)) = best else { break };
        if chosen.len() == max_params {
            for &j in &pool {
                dropped.push((
                    j,
                    format!(
                        "at most {max_params} constants for {runs} runs (half their scored values)"
                    ),
                ));
            }
            break;
        }
        chosen.push(i);
        basis.push(r.iter().map(|v| v / norm).collect());
        pool.retain(|&j| j != i);
    }
    chosen.sort_unstable();
    dropped.sort_by_key(|d| d.0);
    (
        chosen.iter().map(|&i| sens[i].param.clone()).collect(),
        dropped
            .into_iter()
            .map(|(i, why)| (sens[i].param.name.clone(), why))
            .collect(),
    )
}

/// The default constants for `runs` (see the module documentation), for a fit of `bases`.
pub fn default_params(
    set: &RunSet,
    bases: &[HardwareProfile],
    runs: &[usize],
    loss: &LossSpec,
    kernels: bool,
) -> (Vec<Param>, Vec<(String, String)>) {
    let (memory, candidates): (Vec<Param>, Vec<Param>) = all_params_of(bases)
        .into_iter()
        .partition(|p| p.section == Section::Memory);
    let (sourced, candidates): (Vec<Param>, Vec<Param>) = candidates
        .into_iter()
        .partition(|p| SOURCED.contains(&p.name.as_str()));
    // A kernel-priced fit: the overheads only, with the kernel backend's bounds.
    let (candidates, not_kernels) = if kernels {
        super::backend::kernel_candidates(candidates)
    } else {
        (candidates, Vec::new())
    };
    let sens = sensitivities(set, bases, &candidates, runs, loss);
    let (chosen, mut dropped) = select(&sens, runs.len());
    dropped.extend(not_kernels);
    // Memory constants size the KV pool: their effect on retraction-bound runs is a step
    // function that a fit over-uses (on seed 003, fitting runtime_reserved_gib lowered the
    // in-sample errors but raised the leave-one-model-out median TPOT error from 8.8% to 12.4%).
    dropped.extend(memory.into_iter().map(|p| {
        (
            p.name,
            "opt-in only (name it in --params): it moves the KV pool, which over-fits".to_string(),
        )
    }));
    dropped.extend(sourced.into_iter().map(|p| {
        (
            p.name,
            "opt-in only (name it in --params): a sourced measurement, not a fit (spec::tokenize_cost)"
                .to_string(),
        )
    }));
    (chosen, dropped)
}

/// Constants set from a cited measurement with bounds rather than fitted: a default fit keeps
/// them (the seed runs would only nudge them inside their bounds and pin the comment to a fit).
const SOURCED: &[&str] = &["tokenize_per_token_ns"];
