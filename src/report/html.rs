//! `servesim report`: one self-contained HTML file (inline CSS and SVG; no script, no network,
//! no external font) for a run or a validation (the sweep's page: `sweep::html`), and the
//! page, section, table and figure pieces every report is built from. Deterministic: the same input gives
//! the same bytes (no timestamps).
use super::charts::{BarChart, LineChart, Scale};
use crate::error::{Error, Result};
use crate::metrics::BenchMetrics;
use serde_json::Value;

pub use super::markup::escape;

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:24px auto;max-width:1180px;color:#222;padding:0 16px}\
h1{font-size:1.5em;margin-bottom:0.2em}h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:4px}\
p.sub{color:#555;margin-top:0}pre{background:#f6f8fa;padding:12px;overflow-x:auto;font-size:13px;line-height:1.35}\
div.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:13px;margin:8px 0}\
th,td{border:1px solid #ddd;padding:3px 8px;white-space:nowrap}\
th{background:#f0f3f6;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}\
tr.hl td{background:#eaf5ea}figure{margin:16px 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}\
figcaption{color:#555;font-size:13px}.err{color:#a00}";

/// A whole page around `body` (already HTML).
pub fn page(title: &str, subtitle: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{t}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n<p class=\"sub\">{s}</p>\n{body}</body>\n</html>\n",
        t = escape(title),
        s = escape(subtitle),
    )
}

/// `<h2>` section.
pub fn section(title: &str, body: &str) -> String {
    format!("<h2>{}</h2>\n{body}", escape(title))
}

/// An inline SVG figure with a caption.
pub fn figure(svg: &str, caption: &str) -> String {
    let svg = svg.trim_start_matches(|c| c != '<');
    let svg = match svg.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or(rest, |(_, s)| s).trim_start(),
        None => svg,
    };
    format!(
        "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
        svg.trim_end(),
        escape(caption)
    )
}

/// A preformatted block.
pub fn pre(text: &str) -> String {
    format!("<pre>{}</pre>\n", escape(text.trim_end()))
}

/// A table; cells that parse as numbers are right-aligned; rows flagged `true` highlighted.
pub fn table(header: &[String], rows: &[(bool, Vec<String>)]) -> String {
    let mut out = String::from("<div class=\"scroll\"><table>\n<tr>");
    for h in header {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr>\n");
    for (hl, r) in rows {
        out.push_str(if *hl { "<tr class=\"hl\">" } else { "<tr>" });
        for c in r {
            let numeric = c
                .trim_end_matches('%')
                .trim_start_matches('+')
                .parse::<f64>()
                .is_ok();
            out.push_str(&format!(
                "<td{}>{}</td>",
                if numeric { " class=\"n\"" } else { "" },
                escape(c)
            ));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    out
}

/// A number for a table cell: whole numbers and values from 1000 without decimals, others
/// with 2.
pub fn num(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
        Some(x) if x.abs() >= 1000.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.2}"),
    }
}

/// Most rows a sweep table shows.
pub const MAX_TABLE_ROWS: usize = 2000;

/// Report of one run: the scenario, bench_serving's result block, the latency statistics
/// and the time-series charts (none when `charts` is empty).
pub fn run_report(
    preamble: &str,
    result_text: &str,
    metrics: &BenchMetrics,
    charts: &[(&str, LineChart)],
) -> String {
    let mut body = section("Scenario", &pre(preamble));
    body.push_str(&section("bench_serving result", &pre(result_text)));
    let header: Vec<String> = ["ms", "mean", "median", "std", "p90", "p95", "p99", "max"]
        .map(String::from)
        .to_vec();
    let rows: Vec<(bool, Vec<String>)> = [
        ("TTFT", &metrics.ttft_ms),
        ("TPOT", &metrics.tpot_ms),
        ("ITL", &metrics.itl_ms),
        ("E2E", &metrics.e2e_ms),
    ]
    .into_iter()
    .map(|(name, st)| {
        let mut row = vec![name.to_string()];
        row.extend(
            [st.mean, st.median, st.std, st.p90, st.p95, st.p99, st.max].map(|v| num(Some(v))),
        );
        (false, row)
    })
    .collect();
    body.push_str(&section("Latency statistics", &table(&header, &rows)));
    if !charts.is_empty() {
        let figs: String = charts
            .iter()
            .map(|(stem, c)| figure(&c.svg(), &format!("{stem}.svg")))
            .collect();
        body.push_str(&section("Over time", &figs));
    }
    let sub = preamble.lines().next().unwrap_or("");
    page("servesim run", sub, &body)
}

fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value> {
    v.get(key)
        .ok_or_else(|| Error::Msg(format!("validation JSON: missing `{key}`")))
}

fn humanize(key: &str) -> String {
    key.replace('_', " ")
}

/// Report of `servesim validate --format json`: the run table and real-vs-simulated bars per
/// headline metric.
pub fn validation_report(v: &Value) -> Result<String> {
    let runs = field(v, "runs")?
        .as_array()
        .ok_or_else(|| Error::Msg("validation JSON: `runs` is not a list".into()))?;
    let s = |x: &Value, k: &str| x.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let f = |x: &Value, k: &str| x.get(k).and_then(Value::as_f64);
    let metrics: Vec<String> = runs
        .first()
        .and_then(|r| r.get("cells"))
        .and_then(Value::as_array)
        .map(|cells| cells.iter().map(|c| s(c, "metric")).collect())
        .unwrap_or_default();
    let mut header: Vec<String> = ["id", "model", "hardware", "workload"]
        .map(String::from)
        .to_vec();
    for m in &metrics {
        header.extend([format!("{} real", humanize(m)), "sim".into(), "err".into()]);
    }
    header.push("error".into());
    let cell = |r: &Value, m: &str| -> Option<Value> {
        r.get("cells")?
            .as_array()?
            .iter()
            .find(|c| c.get("metric").and_then(Value::as_str) == Some(m))
            .cloned()
    };
    let rows: Vec<(bool, Vec<String>)> = runs
        .iter()
        .map(|r| {
            let mut row = vec![
                s(r, "id"),
                s(r, "model"),
                s(r, "hardware"),
                s(r, "workload"),
            ];
            for m in &metrics {
                let c = cell(r, m).unwrap_or(Value::Null);
                row.push(num(f(&c, "real")));
                row.push(num(f(&c, "sim")));
                row.push(f(&c, "err_pct").map_or("-".into(), |e| format!("{e:+.1}%")));
            }
            row.push(s(r, "error"));
            (false, row)
        })
        .collect();
    let mut body = section("Runs", &table(&header, &rows));
    body.push_str(&section(
        "Median and max |error| per metric",
        &summary_table(v, &metrics),
    ));
    let mut bars = String::new();
    for m in &metrics {
        let chart = BarChart {
            title: format!("{}: real vs simulated", humanize(m)),
            value: Scale::log(&humanize(m)),
            categories: runs.iter().map(|r| s(r, "id")).collect(),
            groups: ["real", "sim"]
                .iter()
                .map(|g| {
                    let vals = runs
                        .iter()
                        .map(|r| cell(r, m).and_then(|c| f(&c, g)))
                        .collect();
                    (g.replace("sim", "simulated"), vals)
                })
                .collect(),
        };
        bars.push_str(&figure(&chart.svg(), &format!("{m} (log scale)")));
    }
    body.push_str(&section("Real vs simulated", &bars));
    let sub = format!(
        "{} runs from {}",
        runs.len(),
        v.get("manifest").and_then(Value::as_str).unwrap_or("?")
    );
    Ok(page("servesim validation", &sub, &body))
}

/// The validation's `summary`: one row per group (all, hardware families).
fn summary_table(v: &Value, metrics: &[String]) -> String {
    let mut header: Vec<String> = vec!["group".into(), "runs".into()];
    for m in metrics {
        header.extend([format!("{} median", humanize(m)), "max".into()]);
    }
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |p| format!("{p:.1}%"));
    let rows: Vec<(bool, Vec<String>)> = v
        .get("summary")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|g| {
            let mut row = vec![
                g.get("group")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                g.get("runs")
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
                    .to_string(),
            ];
            for m in metrics {
                let spread = g.get("metrics").and_then(Value::as_array).and_then(|ms| {
                    ms.iter()
                        .find(|x| x.get("metric").and_then(Value::as_str) == Some(m))
                });
                let get = |k: &str| spread.and_then(|x| x.get(k)).and_then(Value::as_f64);
                row.push(pct(get("median_abs_err_pct")));
                row.push(pct(get("max_abs_err_pct")));
            }
            (false, row)
        })
        .collect();
    table(&header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_strips_prolog() {
        assert_eq!(
            escape("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
        let f = figure("<?xml version=\"1.0\"?>\n<svg></svg>", "c");
        assert!(f.starts_with("<figure>\n<svg></svg>"), "{f}");
    }

    #[test]
    fn validation_page_from_json() {
        let v: Value = serde_json::json!({
            "manifest": "validation/manifest.yaml",
            "runs": [{"id": "001", "model": "m", "hardware": "h", "workload": "w",
                      "cells": [{"metric": "output_throughput", "real": 100.0, "sim": 110.0, "err_pct": 10.0}],
                      "error": null}],
            "summary": []
        });
        let html = validation_report(&v).unwrap();
        assert!(html.contains("+10.0%") && html.contains("<svg") && html.contains(">001<"));
    }
}
