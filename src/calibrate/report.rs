//! The calibration's text reports. [`fit_report`]: what `servesim calibrate` prints about a
//! fit. [`crossval_markdown`]: the cross-validation part of the README's accuracy section: per
//! fitted run, the in-sample, leave-one-model-out, leave-one-out and (when some fit is joint)
//! leave-one-hardware-out errors side by side, and their medians per fit (with the MXFP4-expert
//! runs also summarised apart, since their behaviour on pre-Hopper GPUs is outside what the
//! cost model covers, and a joint fit's runs also per hardware). Built from a committed
//! [`CrossvalFile`]; when the file's in-sample errors no longer match `servesim validate`'s,
//! the section says it is stale.
use super::crossval::{CrossvalFile, FoldKind, ProfileCv, RunCv};
use super::fit::FitResult;
use super::loss::{max_abs, median_abs};
use super::params::{format_value, AtBound, Sharing};
use super::runs::Metric;
use super::{id_ranges, Calibration};
use crate::report::table::{fmt_err, Style, Table};
use crate::spec::model::WeightFormat;
use crate::validate::compare::{Headline, Validation};
use crate::validate::render::validation_markdown;
use std::collections::BTreeMap;

/// The command that writes the cross-validation file for one profile.
pub const CROSSVAL_COMMAND: &str =
    "servesim calibrate --profile P --cross-validate --out-crossval validation/crossval.json";

/// Signed % errors of one run's scored metrics.
type Errs = [Option<f64>; 3];

/// The error kinds shown: in-sample, LOMO, LOO, and LOHO when some run has it.
fn kind_names(file: &CrossvalFile) -> &'static [&'static str] {
    const ALL: [&str; 4] = ["in-sample", "LOMO", "LOO", "LOHO"];
    let loho = file
        .fits
        .iter()
        .any(|f| f.runs.iter().any(|r| r.leave_one_hardware_out.is_some()));
    if loho {
        &ALL
    } else {
        &ALL[..3]
    }
}

fn kinds(r: &RunCv, n: usize) -> Vec<Errs> {
    let e = |m: &Option<super::crossval::MetricErrors>| m.map_or([None; 3], |e| e.as_array());
    let mut out = vec![
        r.in_sample.as_array(),
        e(&r.leave_one_model_out),
        e(&r.leave_one_out),
        e(&r.leave_one_hardware_out),
    ];
    out.truncate(n);
    out
}

const METRICS: [&str; 3] = ["out tok/s", "med TPOT/ITL", "mean TTFT"];

fn header(first: &[&str], names: &[&str]) -> (Vec<String>, Vec<bool>) {
    let mut h: Vec<String> = first.iter().map(|s| s.to_string()).collect();
    for m in METRICS {
        for k in names {
            h.push(format!("{m} {k}"));
        }
    }
    let mut right = vec![false; first.len()];
    right.extend(vec![true; 3 * names.len()]);
    (h, right)
}

/// One row per fitted run.
fn runs_table(file: &CrossvalFile) -> Table {
    let names = kind_names(file);
    let (header, right) = header(&["profile", "id", "model"], names);
    let mut rows = Vec::new();
    for p in &file.fits {
        for r in &p.runs {
            let k = kinds(r, names.len());
            let mut profile = r.hardware.clone().unwrap_or_else(|| p.profile.clone());
            if let Some(m) = &p.cost_model {
                profile = format!("{profile}, {m}");
            }
            let mut row = vec![profile, r.id.clone(), r.model.clone()];
            for m in 0..3 {
                for e in &k {
                    row.push(fmt_err(e[m]));
                }
            }
            rows.push(row);
        }
    }
    Table {
        header,
        rows,
        right,
    }
}

/// Median |error| per group, and the worst leave-one-model-out throughput error.
fn summary_table(file: &CrossvalFile, applied: &[bool]) -> Table {
    let names = kind_names(file);
    let (mut header, mut right) = header(&["group", "runs"], names);
    header.push("max |err| out tok/s LOMO".into());
    right.push(true);
    right[1] = true;
    let mut rows = Vec::new();
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1}%"));
    for (p, &in_profiles) in file.fits.iter().zip(applied) {
        let name = if in_profiles {
            p.label()
        } else {
            format!("{} (not in the profiles)", p.label())
        };
        let mxfp4 = |r: &&RunCv| r.weight_format == "mxfp4";
        let all: Vec<&RunCv> = p.runs.iter().collect();
        let mut groups = vec![(name.clone(), all.clone())];
        if all.iter().any(mxfp4) && !all.iter().all(mxfp4) {
            groups.push((
                format!("{name} without MXFP4 runs"),
                all.iter().copied().filter(|r| !mxfp4(r)).collect(),
            ));
            groups.push((
                format!("{name} MXFP4 runs only"),
                all.iter().copied().filter(mxfp4).collect(),
            ));
        }
        for hw in &p.profiles {
            let on: Vec<&RunCv> = all
                .iter()
                .copied()
                .filter(|r| r.hardware.as_ref() == Some(hw) && !mxfp4(r))
                .collect();
            if !on.is_empty() {
                groups.push((format!("{name}: {hw} runs without MXFP4"), on));
            }
        }
        for (label, rs) in groups {
            let per_kind: Vec<Vec<Errs>> = (0..names.len())
                .map(|k| rs.iter().map(|r| kinds(r, names.len())[k]).collect())
                .collect();
            let med: Vec<Errs> = per_kind.iter().map(|v| median_abs(v)).collect();
            let mut row = vec![label, rs.len().to_string()];
            for m in 0..3 {
                for s in &med {
                    row.push(pct(s[m]));
                }
            }
            row.push(pct(max_abs(&per_kind[1])[0]));
            rows.push(row);
        }
    }
    Table {
        header,
        rows,
        right,
    }
}

/// Whether `fit`'s fitted constants are the bundled profiles' values (to the digits written):
/// false for a fit superseded by a later one, or one not written to the profiles (e.g. a fit
/// with another backend that made the held-out runs worse). Such a fit's in-sample errors are
/// what its own constants give, not the table above, so they are never stale.
fn in_profiles(fit: &ProfileCv) -> bool {
    let names = if fit.profiles.is_empty() {
        vec![fit.profile.clone()]
    } else {
        fit.profiles.clone()
    };
    let Ok(profiles) = names
        .iter()
        .map(|n| crate::spec::bundled::load_hardware(n))
        .collect::<crate::error::Result<Vec<_>>>()
    else {
        return false;
    };
    fit.fitted.iter().all(|(key, &value)| {
        let (name, on) = key.split_once('@').unwrap_or((key, ""));
        let Ok(param) = super::params::Param::parse(name, &profiles) else {
            return false;
        };
        profiles
            .iter()
            .filter(|h| on.is_empty() || on == "shared" || on == h.name)
            .filter(|h| param.applies_to(h))
            .all(|h| format_value(param.get(h)) == format_value(value))
    })
}

/// The validation a fit's in-sample errors are compared with: `v` for a fit made with the
/// default backend rule, else the same manifest replayed with the fit's backend (one replay
/// per backend, memoised in `forced`).
fn validation_for<'a>(
    fit: &ProfileCv,
    v: &'a Validation,
    forced: &'a mut BTreeMap<String, Option<Validation>>,
) -> Option<&'a Validation> {
    let Some(model) = &fit.cost_model else {
        return Some(v);
    };
    forced
        .entry(model.clone())
        .or_insert_with(|| {
            let manifest =
                crate::validate::manifest::Manifest::load(std::path::Path::new(&v.manifest))
                    .ok()?;
            let mut ov = crate::validate::replay::Overrides::default();
            ov.server.cost_model = Some(model.clone());
            Some(crate::validate::compare::validate_with(&manifest, &ov))
        })
        .as_ref()
}

/// Runs whose in-sample errors, in a fit whose constants are the profiles' (see
/// [`in_profiles`]), differ by more than rounding from `v`'s (or, for a fit made with a named
/// backend, from a replay with that backend).
fn stale_runs(file: &CrossvalFile, v: &Validation, applied: &[bool]) -> Vec<String> {
    let metric = [
        Headline::OutputThroughput,
        Headline::MedianTpot,
        Headline::MeanTtft,
    ];
    let mut forced = BTreeMap::new();
    let mut out = Vec::new();
    for (p, _) in file.fits.iter().zip(applied).filter(|(_, &a)| a) {
        let Some(v) = validation_for(p, v, &mut forced) else {
            continue;
        };
        for r in &p.runs {
            let now = v.runs.iter().find(|row| row.id == r.id).map(|row| {
                metric.map(|m| {
                    row.cells
                        .iter()
                        .find(|c| c.metric == m)
                        .and_then(|c| c.err_pct)
                })
            });
            let fine = now.is_some_and(|now| {
                now.iter()
                    .zip(r.in_sample.as_array())
                    .all(|(a, b)| match (a, b) {
                        (Some(a), Some(b)) => (a - b).abs() <= 0.011,
                        (None, None) => true,
                        _ => false,
                    })
            });
            // A run in several fits (a joint fit and a per-profile one) is listed once.
            if !fine && !out.contains(&r.id) {
                out.push(r.id.clone());
            }
        }
    }
    out
}

/// The markdown of the cross-validation part (empty when the file lists no profile).
pub fn crossval_markdown(file: &CrossvalFile, v: &Validation) -> String {
    if file.fits.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "### Out of sample: cross-validation\n\n\
         The errors above are in-sample for the fitted profiles: their constants were fitted to these very runs. \
         The numbers to quote are out of sample: **LOMO** (leave-one-model-out) predicts each run with constants fitted \
         only on the *other models'* runs of the same profile; **LOO** (leave-one-out) with constants fitted on every run \
         but that one. A profile whose runs cover one model has no LOMO column. ",
    );
    if kind_names(file).len() == 4 {
        out.push_str(
            "**LOHO** (leave-one-hardware-out, joint fits) predicts each run with the shared constants fitted only on the \
             *other hardware's* runs and this hardware's own constants at their priors (datasheet values): the error to \
             expect on hardware nobody has measured. ",
        );
    }
    out.push_str(&format!(
        "Written by `{CROSSVAL_COMMAND}` into `validation/crossval.json`; loss and date per profile are in that file.\n\n"
    ));
    out.push_str(
        "Median |error| per group (the last column: the worst LOMO throughput error):\n\n",
    );
    let applied: Vec<bool> = file.fits.iter().map(in_profiles).collect();
    out.push_str(&summary_table(file, &applied).render(Style::Markdown));
    let superseded: Vec<String> = file
        .fits
        .iter()
        .zip(&applied)
        .filter(|(_, &a)| !a)
        .map(|(p, _)| format!("{} of {}", p.label(), p.date))
        .collect();
    if !superseded.is_empty() {
        out.push_str(&format!(
            "\n*Not in the profiles:* the constants of {} are not the bundled profiles' (a later fit replaced them, or \
             they were not written because they made the held-out runs worse); their in-sample column is what those \
             constants give, not the table above.\n",
            superseded.join("; ")
        ));
    }
    out.push_str("\nPer run:\n\n");
    out.push_str(&runs_table(file).render(Style::Markdown));
    let stale = stale_runs(file, v, &applied);
    if !stale.is_empty() {
        out.push_str(&format!(
            "\n**Stale:** the in-sample errors recorded for {} no longer match the table above (the engine or a profile \
             changed since the cross-validation was written); rerun `{CROSSVAL_COMMAND}` for the affected profiles.\n",
            stale.join(", ")
        ));
    }
    out
}

/// `servesim validate --format markdown`: the README's whole accuracy section, with the
/// cross-validation tables read from `crossval.json` beside the manifest.
pub fn readme_markdown(v: &Validation) -> String {
    let mut out = validation_markdown(v);
    if let Some(cv) = CrossvalFile::beside(std::path::Path::new(&v.manifest)) {
        let part = crossval_markdown(&cv, v);
        if !part.is_empty() {
            out.push('\n');
            out.push_str(&part);
        }
    }
    out
}

/// The text report of a fit: what was fitted, the constants (start, fitted, prior, bounds),
/// per-run signed errors in-sample and in the cross-validation folds run, and their medians
/// and maxima (per hardware for a joint fit; MXFP4-expert runs also apart when mixed).
pub fn fit_report(
    cal: &Calibration,
    full: &FitResult,
    cv: Option<&ProfileCv>,
    kinds: &[FoldKind],
) -> String {
    let params = &cal.spec.params;
    let mut out = format!(
        "servesim calibrate: {}{} on {} runs ({}) of {}\nloss: {}\n",
        if cal.joint() { "jointly " } else { "" },
        cal.names(),
        full.runs.len(),
        id_ranges(&cal.set, &full.runs),
        cal.manifest,
        cal.spec.loss.describe()
    );
    for (name, why) in &cal.dropped {
        out.push_str(&format!("left out: {name}: {why}\n"));
    }
    for line in &cal.clamped {
        out.push_str(&format!("clamped: {line}\n"));
    }
    for line in &cal.skipped {
        out.push_str(&format!("left out: {line}\n"));
    }
    for (b, _) in cal.bases.iter().zip(&cal.kernels).filter(|(_, &k)| k) {
        out.push_str(&format!(
            "{}: priced by the measured kernels: the overheads are fitted into its `kernels_overheads:` block\n",
            b.name
        ));
    }
    if cal.joint() {
        for p in params {
            out.push_str(&format!(
                "{}: {} ({}){}\n",
                p.name,
                match p.sharing {
                    Sharing::Shared => "shared",
                    Sharing::PerHardware => "per hardware",
                },
                p.sharing_why,
                p.engine.note().map_or(String::new(), |n| format!("; {n}"))
            ));
        }
    }
    out.push_str(&format!(
        "fit: loss {:.5} -> {:.5} in {} iterations, {:.5} after the polish ({} evaluations of {} runs)\n\n",
        full.loss_start,
        full.loss_lm,
        full.iterations,
        full.loss,
        full.evaluations,
        full.runs.len()
    ));
    let constants = Table {
        header: ["constant", "start", "fitted", "prior", "bounds", ""]
            .map(String::from)
            .to_vec(),
        rows: full
            .slots
            .iter()
            .zip(&full.names)
            .zip(full.start.iter().zip(&full.fitted))
            .map(|((slot, n), (s, f))| {
                let p = &params[slot.param];
                vec![
                    n.clone(),
                    format_value(*s),
                    format_value(*f),
                    format_value(p.prior),
                    format!("[{}, {}]", format_value(p.lo), format_value(p.hi)),
                    match p.at_bound(*f) {
                        Some(AtBound::Lower) => "AT LOWER BOUND".into(),
                        Some(AtBound::Upper) => "AT UPPER BOUND".into(),
                        None => String::new(),
                    },
                ]
            })
            .collect(),
        right: vec![false, true, true, true, true, false],
    };
    out.push_str(&constants.render(Style::Text));
    for (name, note) in full.at_bounds(params) {
        out.push_str(&format!("{name}: {note}\n"));
    }
    out.push('\n');
    // Columns: in-sample, then the folds run, in the README's order.
    let shown: Vec<(&str, Option<FoldKind>)> = [
        ("in", None),
        ("LOMO", Some(FoldKind::Model)),
        ("LOO", Some(FoldKind::Run)),
        ("LOHO", Some(FoldKind::Hardware)),
    ]
    .into_iter()
    .filter(|(_, k)| k.map_or(true, |k| cv.is_some() && kinds.contains(&k)))
    .collect();
    let mut header = vec!["run".to_string(), "model".to_string()];
    if cal.joint() {
        header.push("hardware".into());
    }
    let lead = header.len();
    for m in Metric::ALL {
        for (k, _) in &shown {
            header.push(format!("{} {k}", m.title()));
        }
    }
    let mut rows = Vec::new();
    // Per profile (joint fits), then all: the per-kind error rows of the runs.
    let mut cols: Vec<Vec<Vec<Errs>>> = vec![vec![Vec::new(); shown.len()]; cal.bases.len()];
    for (k, &r) in full.runs.iter().enumerate() {
        let run = &cal.set.runs[r];
        let per_kind: Vec<[Option<f64>; 3]> = shown
            .iter()
            .map(|(_, kind)| match (kind, cv) {
                (None, _) => full.errors[k],
                (Some(kind), Some(cv)) => {
                    let row = &cv.runs[k];
                    match kind {
                        FoldKind::Run => row.leave_one_out,
                        FoldKind::Model => row.leave_one_model_out,
                        FoldKind::Hardware => row.leave_one_hardware_out,
                    }
                    .map_or([None; 3], |e| e.as_array())
                }
                (Some(_), None) => [None; 3],
            })
            .collect();
        let mut line = vec![run.id.clone(), run.model.clone()];
        if cal.joint() {
            line.push(cal.bases[run.hw].name.clone());
        }
        for m in 0..3 {
            for e in &per_kind {
                line.push(fmt_err(e[m]));
            }
        }
        for (c, e) in cols[run.hw].iter_mut().zip(per_kind) {
            c.push(e);
        }
        rows.push(line);
    }
    let all: Vec<Vec<Errs>> = (0..shown.len())
        .map(|k| cols.iter().flat_map(|c| c[k].iter().copied()).collect())
        .collect();
    // MXFP4-expert runs (gpt-oss on pre-Hopper GPUs) are reported apart when mixed with others.
    let mxfp4: Vec<bool> = full
        .runs
        .iter()
        .map(|&r| cal.set.runs[r].replay.scenario.server.weight_format == WeightFormat::Mxfp4)
        .collect();
    let split = |keep: bool| -> Vec<Vec<Errs>> {
        let mut seen = vec![0usize; cal.bases.len()];
        let mut out: Vec<Vec<Errs>> = vec![Vec::new(); shown.len()];
        for (k, &r) in full.runs.iter().enumerate() {
            let h = cal.set.runs[r].hw;
            if mxfp4[k] == keep {
                for (o, c) in out.iter_mut().zip(&cols[h]) {
                    o.push(c[seen[h]]);
                }
            }
            seen[h] += 1;
        }
        out
    };
    let (plain, apart) = (split(false), split(true));
    let mut groups: Vec<(String, &Vec<Vec<Errs>>)> = Vec::new();
    if cal.joint() {
        for (h, c) in cols.iter().enumerate() {
            groups.push((cal.bases[h].name.clone(), c));
        }
    }
    groups.push((String::new(), &all));
    if mxfp4.iter().any(|&m| m) && !mxfp4.iter().all(|&m| m) {
        groups.push(("without MXFP4 runs".into(), &plain));
        groups.push(("MXFP4 runs only".into(), &apart));
    }
    for (label, f) in [
        (
            "median |err|",
            median_abs as fn(&[[Option<f64>; 3]]) -> [Option<f64>; 3],
        ),
        ("max |err|", max_abs),
    ] {
        for (group, c) in &groups {
            let mut line = vec![label.to_string(), String::new()];
            match (cal.joint(), group.is_empty()) {
                (true, true) => line.push("all".into()),
                (true, false) => line.push(group.clone()),
                (false, false) => line[1] = group.clone(),
                (false, true) => {}
            }
            let stats: Vec<[Option<f64>; 3]> = c.iter().map(|c| f(c)).collect();
            for m in 0..3 {
                for s in &stats {
                    line.push(s[m].map_or("-".into(), |v| format!("{v:.1}%")));
                }
            }
            rows.push(line);
        }
    }
    let n = header.len();
    let mut right = vec![false; lead];
    right.extend(vec![true; n - lead]);
    out.push_str(
        &Table {
            header,
            rows,
            right,
        }
        .render(Style::Text),
    );
    out.push_str(
        "\nerr = (simulated − real) / real; in = in-sample; LOMO = fitted without that model's runs; LOO = fitted without that run; LOHO = fitted without that hardware's runs (its per-hardware constants at their priors)\n",
    );
    if cv.is_some() && kinds.contains(&FoldKind::Hardware) && cal.joint() {
        out.push_str(
            "LOHO resets only the constants this fit fits; every other constant of the held-out profile keeps its value in the profile given (start from datasheet profiles for a LOHO free of earlier fits)\n",
        );
    }
    out
}
