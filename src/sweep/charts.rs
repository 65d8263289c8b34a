//! A sweep's charts: latency percentiles against output throughput along each curve (TTFT and
//! TPOT), output throughput against the curve flag, and the Pareto frontier of output
//! throughput against P99 TPOT.
use super::analysis::{curve_flag, curves, pareto, Curve, FRONTIER_X, FRONTIER_Y};
use super::frontier::{frontier, of_rows, EfficiencyPoint};
use super::output::SweepFile;
use crate::report::charts::{LineChart, Mark, Scale, Series};

/// Percentiles drawn per curve: (key prefix, label, mark).
const PERCENTILES: [(&str, &str, Mark); 3] = [
    ("median", "p50", Mark::LinePoints),
    ("p90", "p90", Mark::Dashed),
    ("p99", "p99", Mark::Line),
];

fn label(c: &Curve, many: bool, what: &str) -> String {
    if many {
        format!("{} {what}", c.label)
    } else {
        what.to_string()
    }
}

/// Latency (`ttft` or `tpot`) percentiles against output throughput, one colour per curve.
fn latency_chart(f: &SweepFile, list: &str, title: &str) -> LineChart {
    let cs = curves(f);
    let many = cs.len() > 1;
    let series = cs
        .iter()
        .enumerate()
        .flat_map(|(k, c)| {
            PERCENTILES.iter().map(move |(stat, name, mark)| {
                let key = format!("{stat}_{list}_ms");
                Series {
                    label: label(c, many, name),
                    points: c
                        .rows
                        .iter()
                        .filter_map(|r| Some((r.metric("output_throughput")?, r.metric(&key)?)))
                        .collect(),
                    color: k,
                    mark: *mark,
                }
            })
        })
        .collect();
    LineChart {
        title: title.into(),
        x: Scale::linear("output throughput (tok/s)"),
        y: Scale::log(&format!("{} (ms)", list.to_uppercase())),
        series,
    }
}

/// An axis title for a grid flag: its quantity and unit (`request rate (req/s)`), or the
/// flag's words for one without a unit.
pub fn axis_title(flag: &str) -> String {
    let unit = match flag {
        "request-rate" => "req/s",
        "max-concurrency" | "num-prompts" | "max-running-requests" => "requests",
        "random-input-len"
        | "random-output-len"
        | "chunked-prefill-size"
        | "max-prefill-tokens"
        | "max-total-tokens"
        | "cuda-graph-max-bs"
        | "page-size" => "tokens",
        "tp" | "dp" => "GPUs",
        "mem-fraction-static" | "random-range-ratio" => "fraction",
        "client-send-us" => "µs",
        _ => "",
    };
    let words = flag.replace('-', " ");
    if unit.is_empty() {
        words
    } else {
        format!("{words} ({unit})")
    }
}

/// Output throughput against the curve flag, when its values are numbers.
fn throughput_chart(f: &SweepFile) -> Option<LineChart> {
    let flag = curve_flag(f)?;
    let cs = curves(f);
    let many = cs.len() > 1;
    let series: Vec<Series> = cs
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let points = c
                .rows
                .iter()
                .map(|r| {
                    let x = r.params.get(flag)?.parse::<f64>().ok()?;
                    Some((x, r.metric("output_throughput")?))
                })
                .collect::<Option<Vec<_>>>();
            points.map(|points| Series {
                label: label(c, many, "output tok/s"),
                points,
                color: k,
                mark: Mark::LinePoints,
            })
        })
        .collect::<Option<_>>()?;
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (lo, hi) = xs.fold((f64::INFINITY, 0f64), |(l, h), x| (l.min(x), h.max(x)));
    let x_label = axis_title(flag);
    Some(LineChart {
        title: format!("Output throughput vs {}", flag.replace('-', " ")),
        x: if lo > 0.0 && hi / lo >= 16.0 {
            Scale::log(&x_label)
        } else {
            Scale::linear(&x_label)
        },
        y: Scale::linear("output throughput (tok/s)"),
        series,
    })
}

fn pareto_chart(f: &SweepFile) -> LineChart {
    let pt = |r: &super::point::Row| Some((r.metric(FRONTIER_X)?, r.metric(FRONTIER_Y)?));
    LineChart {
        title: "Pareto frontier: output throughput vs P99 TPOT".into(),
        x: Scale::linear("P99 TPOT (ms)"),
        y: Scale::linear("output throughput (tok/s)"),
        series: vec![
            Series {
                label: "all points".into(),
                points: f.ok_rows().filter_map(pt).collect(),
                color: 6,
                mark: Mark::Points,
            },
            Series {
                label: "Pareto frontier".into(),
                points: pareto(&f.rows).into_iter().filter_map(pt).collect(),
                color: 1,
                mark: Mark::LinePoints,
            },
        ],
    }
}

/// The capacity planner's frontier: output tok/s per GPU against tok/s per user.
pub fn per_gpu_chart(points: &[EfficiencyPoint]) -> LineChart {
    let pt = |p: &EfficiencyPoint| (p.tok_s_per_user, p.tok_s_per_gpu);
    LineChart {
        title: "Throughput per GPU vs speed per user".into(),
        x: Scale::linear("output speed per user (tok/s = 1000 / mean TPOT ms)"),
        y: Scale::linear("output throughput per GPU (tok/s/GPU)"),
        series: vec![
            Series {
                label: "all points".into(),
                points: points.iter().map(pt).collect(),
                color: 6,
                mark: Mark::Points,
            },
            Series {
                label: "frontier".into(),
                points: frontier(points).into_iter().map(pt).collect(),
                color: 2,
                mark: Mark::LinePoints,
            },
        ],
    }
}

/// Every chart of a sweep: `(file stem, chart)`.
pub fn charts(f: &SweepFile) -> Vec<(&'static str, LineChart)> {
    let mut out = vec![
        (
            "ttft",
            latency_chart(f, "ttft", "TTFT percentiles vs output throughput"),
        ),
        (
            "tpot",
            latency_chart(f, "tpot", "TPOT percentiles vs output throughput"),
        ),
    ];
    if let Some(t) = throughput_chart(f) {
        out.push(("throughput", t));
    }
    out.push(("pareto", pareto_chart(f)));
    out.push(("per_gpu", per_gpu_chart(&of_rows(&f.rows))));
    out
}
