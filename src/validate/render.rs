//! Rendering of validation results: the tables of `servesim replay` and `servesim validate`
//! (as `report::table::Table`s), their JSON, and the README's "How accurate is it?" section
//! (regenerated, never typed by hand): the run table, the error summary and which profiles are
//! fitted; `calibrate::report` appends the cross-validation tables.
use super::compare::{Cell, GroupSummary, Headline, MetricRow, RunRow, Validation};
use super::replay::LengthSource;
use super::sampled;
use crate::error::{Error, Result};
use crate::report::table::{fmt_compact, fmt_err, fmt_value, Style, Table};
use crate::spec::bundled::load_hardware;

/// The side-by-side table of one replayed run.
pub fn replay_table(rows: &[MetricRow]) -> Table {
    Table {
        header: ["metric", "real", "simulated", "error"]
            .map(String::from)
            .to_vec(),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.label.clone(),
                    fmt_value(Some(r.real)),
                    fmt_value(r.sim),
                    fmt_err(r.err_pct),
                ]
            })
            .collect(),
        right: vec![false, true, true, true],
    }
}

fn run_label(r: &RunRow) -> String {
    let label = match (r.lengths, r.totals_exact) {
        (Some(LengthSource::Sampled), _) => format!("{} [{}]", r.workload, sampled::LABEL),
        (_, Some(false)) => format!("{} [totals differ]", r.workload),
        _ => r.workload.clone(),
    };
    match r.out_of_medians {
        Some(_) => format!("{label} [not in medians]"),
        None => label,
    }
}

/// One row per run: id, model, hardware, workload, then real/sim/error per headline metric.
pub fn runs_table(v: &Validation) -> Table {
    let mut header: Vec<String> = ["id", "model", "hardware", "workload"]
        .map(String::from)
        .to_vec();
    for m in Headline::ALL {
        header.push(format!("{} real", m.title()));
        header.push("sim".into());
        header.push("err".into());
    }
    let rows = v
        .runs
        .iter()
        .map(|r| {
            let mut row = vec![
                r.id.clone(),
                r.model.clone(),
                r.hardware.clone(),
                run_label(r),
            ];
            for c in &r.cells {
                let Cell {
                    metric,
                    real,
                    sim,
                    err_pct,
                } = *c;
                let tag = if metric == Headline::MedianTpot && r.tpot_metric == "ITL" {
                    " (ITL)"
                } else {
                    ""
                };
                row.push(format!("{}{tag}", fmt_compact(real)));
                row.push(if r.error.is_some() {
                    "error".into()
                } else {
                    fmt_compact(sim)
                });
                row.push(fmt_err(err_pct));
            }
            row
        })
        .collect();
    let mut right = vec![false; 4];
    right.extend([true; 18]);
    Table {
        header,
        rows,
        right,
    }
}

/// Median and max |error| per metric, overall and per hardware family.
pub fn summary_table(groups: &[GroupSummary]) -> Table {
    let mut header: Vec<String> = ["group", "runs"].map(String::from).to_vec();
    for m in Headline::ALL {
        header.push(format!("{} median", m.title()));
        header.push("max".into());
    }
    let abs = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1}%"));
    let rows = groups
        .iter()
        .map(|g| {
            let mut row = vec![g.group.clone(), g.runs.to_string()];
            for s in &g.metrics {
                row.push(abs(s.median_abs_err_pct));
                row.push(abs(s.max_abs_err_pct));
            }
            row
        })
        .collect();
    let mut right = vec![false, true];
    right.extend([true; 12]);
    Table {
        header,
        rows,
        right,
    }
}

fn legend(v: &Validation) -> Vec<String> {
    let mut out = vec![
        "err = (simulated − real) / real. `med TPOT/ITL`: median TPOT, or median ITL (marked) where the log prints no TPOT.".to_string(),
        format!("[{}]: {}.", sampled::LABEL, sampled::DESCRIPTION),
    ];
    out.extend(v.runs.iter().filter_map(|r| {
        r.out_of_medians
            .as_ref()
            .map(|why| format!("{}: not in the medians: {why}", r.id))
    }));
    out.extend(
        v.runs
            .iter()
            .filter_map(|r| r.error.as_ref().map(|e| format!("{}: error: {e}", r.id))),
    );
    out
}

/// `servesim validate` as text.
pub fn validation_text(v: &Validation) -> String {
    let mut out = format!(
        "servesim validate: {} runs from {}\n\n",
        v.runs.len(),
        v.manifest
    );
    out.push_str(&runs_table(v).render(Style::Text));
    out.push_str("\nmedian / max |error| per metric\n\n");
    out.push_str(&summary_table(&v.summary).render(Style::Text));
    out.push('\n');
    for l in legend(v) {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// `servesim validate --format json`.
pub fn validation_json(v: &Validation) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// The command that regenerates the README section.
pub const README_COMMAND: &str =
    "cargo run --release -- validate --format markdown --update-readme README.md";

/// The README's accuracy section up to the cross-validation tables (the whole section, with
/// them: `calibrate::report::readme_markdown`).
pub fn validation_markdown(v: &Validation) -> String {
    let mut out = format!(
        "servesim replays each of the {} benchmark results recorded in `validation/` (real SGLang servers driven by \
         `sglang.bench_serving`; what each log states and what servesim assumes is in `validation/manifest.yaml`) and \
         compares its prediction with what was measured. This section is generated: `{README_COMMAND}` rewrites it, \
         and `cargo test` fails when it is out of date.\n\n{}\n\n",
        v.runs.len(),
        calibration_status(v)
    );
    out.push_str(&runs_table(v).render(Style::Markdown));
    out.push_str("\nMedian and max |error| per metric, over all runs and per hardware family:\n\n");
    out.push_str(&summary_table(&v.summary).render(Style::Markdown));
    out.push('\n');
    for l in legend(v) {
        out.push_str(&format!("- {l}\n"));
    }
    out
}

/// Which profiles of the table are fitted (their `calibration:` field starts with `fitted`)
/// and which keep datasheet defaults.
fn calibration_status(v: &Validation) -> String {
    let mut fitted = Vec::new();
    let mut defaults = Vec::new();
    for r in &v.runs {
        let name = format!("`{}`", r.hardware);
        if fitted.contains(&name) || defaults.contains(&name) {
            continue;
        }
        let is_fitted = load_hardware(&r.hardware)
            .ok()
            .and_then(|h| h.calibration)
            .is_some_and(|c| c.starts_with("fitted"));
        if is_fitted {
            fitted.push(name);
        } else {
            defaults.push(name);
        }
    }
    if fitted.is_empty() {
        return "**The hardware profiles use datasheet defaults; nothing is fitted yet.** Errors are expected to be large at \
                this stage; they show where the model needs work. No constant is tuned per run."
            .to_string();
    }
    let mut s = format!(
        "**Calibration:** {} {} fitted by `servesim calibrate` to {} runs here, so {} rows show *in-sample* errors (the \
         out-of-sample errors follow the summary)",
        fitted.join(", "),
        if fitted.len() == 1 { "is" } else { "are" },
        if fitted.len() == 1 { "its" } else { "their" },
        if fitted.len() == 1 { "its" } else { "their" },
    );
    if !defaults.is_empty() {
        s.push_str(&format!(
            "; {} keep datasheet defaults",
            defaults.join(", ")
        ));
    }
    s.push_str(". No constant is tuned per run: one set of constants per profile.");
    s.push_str(
        " The constants were fitted with the roofline cost model; unless `--cost-model` says \
         otherwise the rows are priced by the default backend (the measured kernel tables where \
         the profile has them, else the roofline: `cost::select`), so on profiles with tables they \
         are the kernel backend's errors with the roofline's fitted overheads, and \
         `validate --cost-model roofline` shows the fit's own in-sample errors.",
    );
    s
}

/// Markers around the generated README section.
pub const BEGIN: &str = "<!-- accuracy:begin -->";
pub const END: &str = "<!-- accuracy:end -->";

/// The text between the markers (without the newlines right after `BEGIN` and before `END`).
pub fn readme_section(readme: &str) -> Result<&str> {
    let (start, end) = markers(readme)?;
    Ok(readme
        .get(start..end)
        .unwrap_or("")
        .trim_start_matches('\n'))
}

/// `readme` with the section between the markers replaced by `section`.
pub fn replace_readme_section(readme: &str, section: &str) -> Result<String> {
    let (start, end) = markers(readme)?;
    let body = section.trim_end_matches('\n');
    Ok(format!("{}\n{body}\n{}", &readme[..start], &readme[end..]))
}

fn markers(readme: &str) -> Result<(usize, usize)> {
    let missing = |m: &str| Error::Msg(format!("README has no `{m}` marker"));
    let start = readme.find(BEGIN).ok_or_else(|| missing(BEGIN))? + BEGIN.len();
    let end = readme[start..].find(END).ok_or_else(|| missing(END))? + start;
    Ok((start, end))
}
