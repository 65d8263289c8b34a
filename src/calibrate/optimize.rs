//! A deterministic bounded least-squares optimiser: Levenberg–Marquardt with a forward-difference
//! Jacobian in the box-constrained coordinates of [`super::params`], then a coordinate pattern
//! search (the best of the 2·d neighbours at steps 0.1, 0.03, 0.01) to polish where the
//! simulator's discrete decisions make the residuals step-shaped. No randomness: the same
//! start, bounds and residual function give the same iterates, bit for bit. Every batch of
//! points (a Jacobian, a neighbourhood) is handed to the residual function at once so it can
//! evaluate them in parallel.

/// Residuals of a batch of points (one residual vector per point, in order).
pub type BatchResiduals<'a> = dyn Fn(&[Vec<f64>]) -> Vec<Vec<f64>> + Sync + 'a;

/// Optimiser settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Levenberg–Marquardt iterations (each one Jacobian).
    pub max_iterations: usize,
    /// Forward-difference step in the coordinates (≈ relative step of the value).
    pub fd_step: f64,
    /// Stop when an accepted step lowers the loss by less than this fraction.
    pub rel_tol: f64,
    /// Pattern-search step sizes, largest first (empty: no polish).
    pub polish_steps: Vec<f64>,
    /// Pattern-search moves per step size.
    pub polish_rounds: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_iterations: 25,
            fd_step: 0.02,
            rel_tol: 1e-4,
            polish_steps: vec![0.1, 0.03, 0.01],
            polish_rounds: 4,
        }
    }
}

/// Where the optimiser stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub x: Vec<f64>,
    pub loss: f64,
    /// Loss when Levenberg–Marquardt stopped (before the polish).
    pub loss_lm: f64,
    /// Levenberg–Marquardt iterations done.
    pub iterations: usize,
    /// Points evaluated.
    pub evaluations: usize,
}

/// Progress after each iteration: (iteration, iterations at most, current loss).
pub type Progress<'a> = dyn Fn(usize, usize, f64) + Sync + 'a;

fn sq(r: &[f64]) -> f64 {
    r.iter().map(|v| v * v).sum()
}

fn clamp(x: &[f64], lo: &[f64], hi: &[f64]) -> Vec<f64> {
    x.iter()
        .zip(lo.iter().zip(hi))
        .map(|(v, (l, h))| v.clamp(*l, *h))
        .collect()
}

struct State<'a> {
    f: &'a BatchResiduals<'a>,
    evaluations: usize,
}

impl State<'_> {
    fn eval(&mut self, pts: &[Vec<f64>]) -> Vec<Vec<f64>> {
        self.evaluations += pts.len();
        (self.f)(pts)
    }
}

/// Minimises `Σ r(x)²` over the box `[lo, hi]` from `x0`.
pub fn minimize(
    x0: &[f64],
    lo: &[f64],
    hi: &[f64],
    f: &BatchResiduals<'_>,
    opts: &Options,
    progress: &Progress<'_>,
) -> Outcome {
    let d = x0.len();
    let mut st = State { f, evaluations: 0 };
    let mut x = clamp(x0, lo, hi);
    let mut r = st.eval(std::slice::from_ref(&x)).remove(0);
    let mut loss = sq(&r);
    let mut mu = 1e-2;
    let mut iterations = 0;
    while iterations < opts.max_iterations && d > 0 {
        iterations += 1;
        progress(iterations, opts.max_iterations, loss);
        // Forward differences, backwards at the upper bound.
        let steps: Vec<f64> = (0..d)
            .map(|j| {
                if x[j] + opts.fd_step > hi[j] {
                    -opts.fd_step
                } else {
                    opts.fd_step
                }
            })
            .collect();
        let pts: Vec<Vec<f64>> = (0..d)
            .map(|j| {
                let mut p = x.clone();
                p[j] += steps[j];
                p
            })
            .collect();
        let rs = st.eval(&pts);
        let n = r.len();
        let jac: Vec<Vec<f64>> = (0..d)
            .map(|j| (0..n).map(|i| (rs[j][i] - r[i]) / steps[j]).collect())
            .collect();
        let g: Vec<f64> = (0..d)
            .map(|j| (0..n).map(|i| jac[j][i] * r[i]).sum())
            .collect();
        let a: Vec<Vec<f64>> = (0..d)
            .map(|j| {
                (0..d)
                    .map(|k| (0..n).map(|i| jac[j][i] * jac[k][i]).sum())
                    .collect()
            })
            .collect();
        // Coordinates held at a bound by the gradient stay there this iteration.
        let free: Vec<usize> = (0..d)
            .filter(|&j| !((x[j] <= lo[j] && g[j] > 0.0) || (x[j] >= hi[j] && g[j] < 0.0)))
            .collect();
        let mut accepted = None;
        for _ in 0..8 {
            let Some(step) = damped_step(&a, &g, &free, mu) else {
                mu *= 4.0;
                continue;
            };
            let mut cand = x.clone();
            for (s, &j) in step.iter().zip(&free) {
                cand[j] += s;
            }
            let cand = clamp(&cand, lo, hi);
            if cand == x {
                break;
            }
            let rc = st.eval(std::slice::from_ref(&cand)).remove(0);
            let lc = sq(&rc);
            if lc < loss {
                accepted = Some((cand, rc, lc));
                mu = (mu / 3.0).max(1e-7);
                break;
            }
            mu *= 4.0;
        }
        let Some((cand, rc, lc)) = accepted else {
            break;
        };
        let gain = loss - lc;
        x = cand;
        r = rc;
        loss = lc;
        if gain < opts.rel_tol * loss {
            break;
        }
    }
    let loss_lm = loss;
    for &s in &opts.polish_steps {
        for _ in 0..opts.polish_rounds {
            let pts: Vec<Vec<f64>> = (0..2 * d)
                .map(|k| {
                    let mut p = x.clone();
                    p[k / 2] += if k % 2 == 0 { s } else { -s };
                    clamp(&p, lo, hi)
                })
                .filter(|p| *p != x)
                .collect();
            if pts.is_empty() {
                break;
            }
            let rs = st.eval(&pts);
            let best = rs
                .iter()
                .map(|v| sq(v))
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            match best {
                Some((k, l)) if l < loss => {
                    x = pts[k].clone();
                    loss = l;
                }
                _ => break,
            }
        }
    }
    progress(opts.max_iterations, opts.max_iterations, loss);
    Outcome {
        x,
        loss,
        loss_lm,
        iterations,
        evaluations: st.evaluations,
    }
}

/// Solves `(A + μ·diag(A)) δ = −g` restricted to the `free` coordinates.
fn damped_step(a: &[Vec<f64>], g: &[f64], free: &[usize], mu: f64) -> Option<Vec<f64>> {
    let m: Vec<Vec<f64>> = free
        .iter()
        .map(|&j| {
            free.iter()
                .map(|&k| {
                    let v = a[j][k];
                    if j == k {
                        v + mu * v.max(1e-12)
                    } else {
                        v
                    }
                })
                .collect()
        })
        .collect();
    let b: Vec<f64> = free.iter().map(|&j| -g[j]).collect();
    solve(m, b)
}

/// Gaussian elimination with partial pivoting; `None` when singular.
pub fn solve(mut m: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[piv][col].abs() < 1e-300 || !m[piv][col].is_finite() {
            return None;
        }
        m.swap(col, piv);
        b.swap(col, piv);
        for row in col + 1..n {
            let f = m[row][col] / m[col][col];
            let (top, bottom) = m.split_at_mut(row);
            for (x, &p) in bottom[0][col..n].iter_mut().zip(&top[col][col..n]) {
                *x -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| m[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / m[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_a_bounded_exponential() {
        // r_i = a·e^{b·t_i} − y_i with y from a = 2, b = −0.5; b bounded at ≥ −0.4.
        let ts: Vec<f64> = (0..10).map(|i| i as f64 * 0.3).collect();
        let f = |pts: &[Vec<f64>]| -> Vec<Vec<f64>> {
            pts.iter()
                .map(|p| {
                    ts.iter()
                        .map(|t| p[0] * (p[1] * t).exp() - 2.0 * (-0.5 * t).exp())
                        .collect()
                })
                .collect()
        };
        let opts = Options::default();
        let fit = |lo_b: f64| {
            minimize(
                &[1.0, 0.0],
                &[0.1, lo_b],
                &[5.0, 1.0],
                &f,
                &opts,
                &|_, _, _| {},
            )
        };
        let free = fit(-3.0);
        assert!(
            (free.x[0] - 2.0).abs() < 1e-3 && (free.x[1] + 0.5).abs() < 1e-3,
            "{free:?}"
        );
        let bounded = fit(-0.4);
        assert_eq!(bounded.x[1], -0.4);
        let again = fit(-0.4);
        assert_eq!(bounded, again);
    }

    #[test]
    fn solves_linear_systems() {
        let x = solve(vec![vec![2.0, 1.0], vec![1.0, 3.0]], vec![3.0, 5.0]).unwrap();
        assert!((x[0] - 0.8).abs() < 1e-12 && (x[1] - 1.4).abs() < 1e-12);
        assert!(solve(vec![vec![0.0]], vec![1.0]).is_none());
    }
}
