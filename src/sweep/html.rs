//! The HTML page of a sweep file (`servesim report --sweep`): grid, charts, Pareto frontier,
//! every point; built from `report::html`'s pieces.
use super::analysis::{curve_flag, pareto};
use super::output::SweepFile;
use crate::report::html::{escape, figure, num, page, section, table, MAX_TABLE_ROWS};

/// Report of a sweep file: grid, charts, Pareto frontier, every point.
pub fn sweep_report(f: &SweepFile) -> String {
    let mut body = String::new();
    let grid: Vec<(bool, Vec<String>)> = f
        .grid
        .axes
        .iter()
        .map(|a| {
            (
                false,
                vec![
                    format!("--{}", a.flag),
                    a.spec.clone(),
                    a.values.len().to_string(),
                ],
            )
        })
        .collect();
    body.push_str(&section(
        "Grid",
        &format!(
            "<p>{} points ({} ran, {} could not run) over the base scenario {}.</p>\n{}",
            f.rows.len(),
            f.ok_rows().count(),
            f.rows.len() - f.ok_rows().count(),
            escape(f.scenario.as_deref().unwrap_or("(bundled default)")),
            table(&["flag".into(), "values".into(), "count".into()], &grid)
        ),
    ));
    let mut charts = String::new();
    for (stem, c) in super::charts::charts(f) {
        charts.push_str(&figure(&c.svg(), &format!("{stem}.svg")));
    }
    body.push_str(&section("Charts", &charts));
    let metrics = [
        ("output tok/s", "output_throughput"),
        ("req/s", "request_throughput"),
        ("mean TTFT ms", "mean_ttft_ms"),
        ("p99 TTFT ms", "p99_ttft_ms"),
        ("mean TPOT ms", "mean_tpot_ms"),
        ("p99 TPOT ms", "p99_tpot_ms"),
        ("p99 E2E ms", "p99_e2e_latency_ms"),
    ];
    let varying: Vec<&str> = f.grid.varying().map(|a| a.flag.as_str()).collect();
    let mut header: Vec<String> = vec!["#".into()];
    header.extend(varying.iter().map(|v| v.to_string()));
    header.extend(metrics.iter().map(|m| m.0.to_string()));
    header.push("error".into());
    let row = |r: &super::point::Row, hl: bool| {
        let mut cells = vec![r.index.to_string()];
        cells.extend(
            varying
                .iter()
                .map(|v| r.params.get(*v).cloned().unwrap_or_default()),
        );
        cells.extend(metrics.iter().map(|m| num(r.metric(m.1))));
        cells.push(r.error.clone().unwrap_or_default());
        (hl, cells)
    };
    let front = pareto(&f.rows);
    let front_rows: Vec<_> = front.iter().map(|r| row(r, false)).collect();
    body.push_str(&section(
        "Pareto frontier: output throughput vs P99 TPOT",
        &format!(
            "<p>Points no other point beats on both (by increasing P99 TPOT).</p>\n{}",
            table(&header, &front_rows)
        ),
    ));
    let points = super::frontier::of_rows(&f.rows);
    let per_gpu = super::frontier::table(
        &super::frontier::frontier(&points),
        &["#".to_string()],
        |i| vec![i.to_string()],
    );
    let per_gpu_rows: Vec<_> = per_gpu.rows.into_iter().map(|r| (false, r)).collect();
    body.push_str(&section(
        "Per-GPU frontier: output tok/s per GPU vs tok/s per user",
        &format!(
            "<p>Points no other point beats on both throughput per GPU and speed per user (1000 / mean TPOT); cost from the profiles' prices.</p>\n{}",
            table(&per_gpu.header, &per_gpu_rows)
        ),
    ));
    let all: Vec<_> = f
        .rows
        .iter()
        .take(MAX_TABLE_ROWS)
        .map(|r| row(r, front.iter().any(|p| p.index == r.index)))
        .collect();
    let more = f.rows.len().saturating_sub(MAX_TABLE_ROWS);
    body.push_str(&section(
        "All points",
        &format!(
            "{}{}",
            table(&header, &all),
            if more > 0 {
                format!("<p>… and {more} more points (see the CSV).</p>\n")
            } else {
                String::new()
            }
        ),
    ));
    let sub = format!(
        "{} points{}; servesim {}",
        f.points,
        curve_flag(f).map_or(String::new(), |c| format!(", curves along --{c}")),
        f.servesim_version
    );
    page("servesim sweep", &sub, &body)
}
