//! Interpolants over a kernel table's grid. Piecewise linear in log-log space between grid
//! points; below the grid the smallest measured shape's time (a kernel never gets cheaper than
//! its smallest measurement); above the grid proportional to the axis (time ∝ work, what the
//! roofline says of a saturated kernel), with a flag whenever a lookup leaves the grid. Built
//! monotone non-decreasing along every axis (measurement noise removed by an isotonic fit), so
//! more tokens, batch or context never price cheaper.

/// Where `x` falls on a grid of logarithms: interpolate between `lo` and `hi` with weight `t`
/// on `hi`, then multiply by `scale` (≠ 1 only above the grid).
#[derive(Debug, Clone, Copy)]
pub(super) struct Position {
    pub lo: usize,
    pub hi: usize,
    pub t: f64,
    pub scale: f64,
    pub outside: bool,
}

pub(super) fn locate(ln_grid: &[f64], x: f64) -> Position {
    let last = ln_grid.len() - 1;
    let lx = x.max(f64::MIN_POSITIVE).ln();
    if lx <= ln_grid[0] {
        return Position {
            lo: 0,
            hi: 0,
            t: 0.0,
            scale: 1.0,
            outside: lx < ln_grid[0] - 1e-12,
        };
    }
    if lx >= ln_grid[last] {
        return Position {
            lo: last,
            hi: last,
            t: 0.0,
            scale: (lx - ln_grid[last]).exp(),
            outside: lx > ln_grid[last] + 1e-12,
        };
    }
    let hi = ln_grid.partition_point(|&g| g < lx).max(1);
    let lo = hi - 1;
    let t = (lx - ln_grid[lo]) / (ln_grid[hi] - ln_grid[lo]);
    Position {
        lo,
        hi,
        t,
        scale: 1.0,
        outside: false,
    }
}

/// Least-squares non-decreasing fit of `ys` (pool adjacent violators), in place.
pub fn isotonic(ys: &mut [f64]) {
    // Blocks of (sum, count); each block's mean is non-decreasing once merged.
    let mut blocks: Vec<(f64, usize)> = Vec::with_capacity(ys.len());
    for &y in ys.iter() {
        blocks.push((y, 1));
        while blocks.len() > 1 {
            let (s1, n1) = blocks[blocks.len() - 1];
            let (s0, n0) = blocks[blocks.len() - 2];
            if s0 / n0 as f64 <= s1 / n1 as f64 {
                break;
            }
            blocks.pop();
            *blocks.last_mut().expect("two blocks") = (s0 + s1, n0 + n1);
        }
    }
    let mut i = 0;
    for (s, n) in blocks {
        for y in &mut ys[i..i + n] {
            *y = s / n as f64;
        }
        i += n;
    }
}

/// A time as a function of one axis (tokens, message size), in ns.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    ln_x: Vec<f64>,
    ln_y: Vec<f64>,
    /// The engine version whose table this curve was read from ("SGLang 0.5.14"), for
    /// `--explain` ([`super::versions`]).
    pub table_version: Option<std::sync::Arc<str>>,
}

impl Curve {
    /// From `(x, time_ns)` points with positive values, sorted by x (duplicates not allowed).
    /// `None` when there is no point.
    pub fn new(points: &[(f64, f64)], monotone: bool) -> Option<Curve> {
        let pts: Vec<(f64, f64)> = points
            .iter()
            .copied()
            .filter(|&(x, y)| x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite())
            .collect();
        if pts.is_empty() {
            return None;
        }
        let mut ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
        if monotone {
            isotonic(&mut ys);
        }
        Some(Curve {
            ln_x: pts.iter().map(|p| p.0.ln()).collect(),
            ln_y: ys.iter().map(|y| y.ln()).collect(),
            table_version: None,
        })
    }

    /// Time at `x` and whether `x` lies outside the measured grid.
    pub fn at(&self, x: f64) -> (f64, bool) {
        let p = locate(&self.ln_x, x);
        let ln = self.ln_y[p.lo] + p.t * (self.ln_y[p.hi] - self.ln_y[p.lo]);
        (ln.exp() * p.scale, p.outside)
    }

    /// The grid points `(x, time_ns)` (after the monotone fit).
    pub fn points(&self) -> Vec<(f64, f64)> {
        self.ln_x
            .iter()
            .zip(&self.ln_y)
            .map(|(x, y)| (x.exp(), y.exp()))
            .collect()
    }

    /// Largest x measured.
    pub fn x_max(&self) -> f64 {
        self.ln_x.last().map_or(0.0, |l| l.exp())
    }
}

/// A time as a function of two axes (batch × context length), in ns; monotone in both.
#[derive(Debug, Clone, PartialEq)]
pub struct Surface {
    /// Growth exponent above the grid along x and y (time ∝ axis^exponent: 1 for batch,
    /// tokens or context read, 2 for a causal prompt length).
    pub exponents: (f64, f64),
    ln_x: Vec<f64>,
    ln_y: Vec<f64>,
    /// ln time at (x_i, y_j), row-major by x.
    ln_v: Vec<Vec<f64>>,
    /// As [`Curve::table_version`].
    pub table_version: Option<std::sync::Arc<str>>,
}

impl Surface {
    /// From a grid of optional times: `vals[i][j]` at `(xs[i], ys[j])`. Each row's gaps are
    /// filled from its own points; rows with no point are dropped. `None` if nothing is left.
    pub fn new(xs: &[f64], ys: &[f64], vals: &[Vec<Option<f64>>]) -> Option<Surface> {
        let mut kept_x = Vec::new();
        let mut rows: Vec<Vec<f64>> = Vec::new();
        for (i, row) in vals.iter().enumerate() {
            let pts: Vec<(f64, f64)> = ys
                .iter()
                .zip(row)
                .filter_map(|(&y, v)| v.map(|v| (y, v)))
                .collect();
            let Some(c) = Curve::new(&pts, true) else {
                continue;
            };
            rows.push(ys.iter().map(|&y| c.at(y).0).collect());
            kept_x.push(xs[i]);
        }
        if rows.is_empty() {
            return None;
        }
        // Monotone along x as well: the max of two non-decreasing rows is non-decreasing.
        for i in 1..rows.len() {
            let (done, rest) = rows.split_at_mut(i);
            for (v, below) in rest[0].iter_mut().zip(&done[i - 1]) {
                *v = v.max(*below);
            }
        }
        Some(Surface {
            exponents: (1.0, 1.0),
            ln_x: kept_x.iter().map(|x| x.ln()).collect(),
            ln_y: ys.iter().map(|y| y.ln()).collect(),
            ln_v: rows
                .into_iter()
                .map(|r| r.into_iter().map(f64::ln).collect())
                .collect(),
            table_version: None,
        })
    }

    /// Time at `(x, y)` and whether the point lies outside the measured grid.
    pub fn at(&self, x: f64, y: f64) -> (f64, bool) {
        let px = locate(&self.ln_x, x);
        let py = locate(&self.ln_y, y);
        let row = |i: usize| {
            let r = &self.ln_v[i];
            r[py.lo] + py.t * (r[py.hi] - r[py.lo])
        };
        let (a, b) = (row(px.lo), row(px.hi));
        let ln = a + px.t * (b - a);
        (
            ln.exp() * px.scale.powf(self.exponents.0) * py.scale.powf(self.exponents.1),
            px.outside || py.outside,
        )
    }
}

/// Of numeric `values`, the one nearest `target` in log distance.
pub(super) fn nearest(values: &[String], target: f64) -> Option<String> {
    values
        .iter()
        .filter_map(|v| Some((v.parse::<f64>().ok().filter(|x| *x > 0.0)?, v)))
        .min_by(|a, b| {
            let d = |x: f64| (x / target).ln().abs();
            d(a.0).total_cmp(&d(b.0))
        })
        .map(|(_, v)| v.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_is_exact_at_grid_points_and_log_linear_between() {
        let c = Curve::new(&[(1.0, 10.0), (4.0, 40.0), (16.0, 80.0)], true).unwrap();
        assert!((c.at(4.0).0 - 40.0).abs() < 1e-9);
        assert!((c.at(16.0).0 - 80.0).abs() < 1e-9);
        // Halfway in log between 1 and 4 is 2; ln-linear between 10 and 40 gives 20.
        assert!((c.at(2.0).0 - 20.0).abs() < 1e-9);
        let (v, out) = c.at(0.5);
        assert!(out && (v - 10.0).abs() < 1e-9);
        let (v, out) = c.at(32.0);
        assert!(out && (v - 160.0).abs() < 1e-9);
    }

    #[test]
    fn isotonic_removes_dips_by_pooling() {
        let mut ys = [1.0, 3.0, 2.0, 4.0];
        isotonic(&mut ys);
        assert_eq!(ys, [1.0, 2.5, 2.5, 4.0]);
    }

    #[test]
    fn surface_is_monotone_in_both_axes() {
        let s = Surface::new(
            &[1.0, 2.0],
            &[1.0, 10.0],
            &[vec![Some(5.0), Some(4.0)], vec![Some(3.0), None]],
        )
        .unwrap();
        assert!(s.at(2.0, 10.0).0 >= s.at(1.0, 10.0).0);
        assert!(s.at(1.0, 10.0).0 >= s.at(1.0, 1.0).0);
        assert!((s.at(1.0, 1.0).0 - 4.5).abs() < 1e-9);
    }
}
