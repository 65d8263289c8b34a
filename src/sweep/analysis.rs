//! What a sweep's rows say beyond the rows: curves (the points along the innermost varying flag,
//! one curve per combination of the other varying flags) and the Pareto frontier of output
//! throughput against P99 TPOT.
use super::output::SweepFile;
use super::point::Row;

/// Metric keys the frontier trades off.
pub const FRONTIER_X: &str = "p99_tpot_ms";
pub const FRONTIER_Y: &str = "output_throughput";

/// The points along one flag with every other flag fixed.
#[derive(Debug, Clone)]
pub struct Curve<'a> {
    /// The fixed flags (`tp=2 hardware=h100-sxm5-80gb`), or `all points` when only one flag varies.
    pub label: String,
    /// Rows that ran, in grid order (so in the order of the curve flag's values).
    pub rows: Vec<&'a Row>,
}

/// The flag the curves run along (the innermost varying flag), if any flag varies.
pub fn curve_flag(file: &SweepFile) -> Option<&str> {
    file.grid.varying().last().map(|a| a.flag.as_str())
}

/// One curve per combination of the varying flags other than [`curve_flag`], in grid order.
pub fn curves(file: &SweepFile) -> Vec<Curve<'_>> {
    let along = curve_flag(file);
    let others: Vec<&str> = file
        .grid
        .varying()
        .map(|a| a.flag.as_str())
        .filter(|f| Some(*f) != along)
        .collect();
    let mut out: Vec<Curve> = Vec::new();
    for r in file.ok_rows() {
        let label = if others.is_empty() {
            "all points".to_string()
        } else {
            others
                .iter()
                .map(|f| format!("{f}={}", r.params.get(*f).map_or("", |v| v.as_str())))
                .collect::<Vec<_>>()
                .join(" ")
        };
        match out.iter_mut().find(|c| c.label == label) {
            Some(c) => c.rows.push(r),
            None => out.push(Curve {
                label,
                rows: vec![r],
            }),
        }
    }
    out
}

/// The points no other point beats on both output throughput (higher) and P99 TPOT (lower),
/// by increasing P99 TPOT. Ties keep the lower grid index.
pub fn pareto(rows: &[Row]) -> Vec<&Row> {
    let mut pts: Vec<(&Row, f64, f64)> = rows
        .iter()
        .filter_map(|r| Some((r, r.metric(FRONTIER_X)?, r.metric(FRONTIER_Y)?)))
        .collect();
    pts.sort_by(|a, b| {
        a.1.total_cmp(&b.1)
            .then(b.2.total_cmp(&a.2))
            .then(a.0.index.cmp(&b.0.index))
    });
    let mut best = f64::NEG_INFINITY;
    let mut out = Vec::new();
    for (r, _, y) in pts {
        if y > best {
            best = y;
            out.push(r);
        }
    }
    out
}

/// The highest-throughput point whose P99 TPOT is within `slo_ms`.
pub fn best_under(rows: &[Row], slo_ms: f64) -> Option<&Row> {
    pareto(rows)
        .into_iter()
        .take_while(|r| r.metric(FRONTIER_X).is_some_and(|t| t <= slo_ms))
        .last()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn row(index: usize, tpot: f64, tput: f64) -> Row {
        Row {
            index,
            params: BTreeMap::new(),
            deployment: None,
            error: None,
            client_bound: None,
            metrics: Some(
                [
                    (FRONTIER_X.to_string(), tpot),
                    (FRONTIER_Y.to_string(), tput),
                ]
                .into_iter()
                .collect(),
            ),
        }
    }

    #[test]
    fn frontier_keeps_undominated_points() {
        let rows = vec![
            row(0, 10.0, 100.0),
            row(1, 20.0, 90.0), // dominated by 0
            row(2, 30.0, 300.0),
            row(3, 5.0, 50.0),
            row(4, 30.0, 300.0), // tie with 2: lower index kept
        ];
        let f: Vec<usize> = pareto(&rows).iter().map(|r| r.index).collect();
        assert_eq!(f, [3, 0, 2]);
        assert_eq!(best_under(&rows, 25.0).unwrap().index, 0);
        assert!(best_under(&rows, 1.0).is_none());
    }
}
