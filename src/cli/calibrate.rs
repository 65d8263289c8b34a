//! `servesim calibrate`: fit the efficiency and overhead constants of one hardware profile, or
//! of several jointly (shared constants one value for all, per-hardware constants one per
//! profile), to the recorded runs of a validation manifest; print what moved and the in-sample
//! (and, with `--cross-validate`, leave-one-out, leave-one-model-out and
//! leave-one-hardware-out) errors, and write each fitted profile with a provenance comment on
//! every fitted field (to `--out` / `--out-dir`, else to stdout; the report then goes to
//! stderr).
use super::print::{emit, progress_bar};
use crate::calibrate::crossval::{cross_validate, groups, CrossvalFile, FoldKind, ProfileCv};
use crate::calibrate::fit::FitResult;
use crate::calibrate::loss::{max_abs, median_abs, LossSpec};
use crate::calibrate::optimize::Options;
use crate::calibrate::params::{format_value, AtBound, Sharing};
use crate::calibrate::runs::Metric;
use crate::calibrate::{fit_date, id_ranges, Calibration, Request};
use crate::error::{Error, Result};
use crate::report::table::{fmt_err, Style, Table};
use crate::spec::model::WeightFormat;
use crate::validate::manifest::Manifest;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// The validation manifest; log files are relative to its directory.
    #[arg(long, default_value = "validation/manifest.yaml")]
    pub manifest: PathBuf,
    /// The profile to fit: a bundled name or a profile YAML path; several, comma-separated,
    /// are fitted jointly on the union of their runs.
    #[arg(long)]
    pub profile: String,
    /// Runs to fit on: comma-separated manifest ids, `*` patterns or `a..b` ranges, `!PATTERN`
    /// to exclude (`003-*,000`, `*,!002`); default: the entries whose hardware is one of the
    /// profiles. With one profile, the selected runs are replayed on it whatever hardware the
    /// manifest names; with several, only entries whose hardware is one of them are selected.
    #[arg(long)]
    pub runs: Option<String>,
    /// Constants to fit (`gemm,memory,attention.flashinfer.decode,step_cpu_ns`), each
    /// optionally `@hw` (one value per profile) or `@shared` (one value for all profiles of a
    /// joint fit); default: every constant that moves a scored metric of the selected runs by
    /// at least 1% when doubled, with its default sharing (host-side overheads shared,
    /// accelerator constants per hardware; see src/calibrate/params.rs).
    #[arg(long)]
    pub params: Option<String>,
    /// Write the fitted profile here (may be the input file) instead of printing it (a fit of
    /// one profile; see --out-dir for a joint fit).
    #[arg(long, conflicts_with = "out_dir")]
    pub out: Option<PathBuf>,
    /// Write each fitted profile into this directory, named as its input file (or
    /// `<name>.yaml` for a bundled profile), e.g. `hardware-profiles`.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
    /// Also fit cross-validation folds and report their errors.
    #[arg(long)]
    pub cross_validate: bool,
    /// With --cross-validate: the folds, from `loo` (leave one run out), `lomo` (leave one
    /// model out), `loho` (leave one hardware out); default `loo,lomo` for one profile,
    /// `lomo,loho` for a joint fit.
    #[arg(long, requires = "cross_validate")]
    pub folds: Option<String>,
    /// With --cross-validate: write this profile's results into a JSON file (other profiles'
    /// entries are kept), e.g. validation/crossval.json for the README.
    #[arg(long, requires = "cross_validate")]
    pub out_crossval: Option<PathBuf>,
    /// Date recorded in the provenance comments (YYYY-MM-DD); default: SOURCE_DATE_EPOCH,
    /// else today (UTC).
    #[arg(long)]
    pub date: Option<String>,
    /// Weight λ of the prior term (pulls every fitted constant towards its starting value in
    /// the optimiser's log coordinates); larger trusts the datasheet more.
    #[arg(long, default_value_t = LossSpec::default().prior)]
    pub prior: f64,
    /// Scale δ of the soft-L1 loss (log error below δ counts quadratically, above linearly).
    #[arg(long, default_value_t = LossSpec::default().delta)]
    pub delta: f64,
    /// Levenberg–Marquardt iterations per fit, at most.
    #[arg(long, default_value_t = Options::default().max_iterations)]
    pub max_iterations: usize,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

pub fn calibrate(a: &CalibrateArgs, out: &mut dyn Write) -> Result<()> {
    let date = fit_date(a.date.as_deref())?;
    if !(a.prior.is_finite() && a.prior >= 0.0) {
        return Err(Error::invalid("--prior", "prior", "must be a number ≥ 0"));
    }
    if !(a.delta.is_finite() && a.delta > 0.0) {
        return Err(Error::invalid("--delta", "delta", "must be a number > 0"));
    }
    let manifest = Manifest::load(&a.manifest)?;
    let req = Request {
        profile: a.profile.clone(),
        runs: a.runs.clone(),
        params: a.params.clone(),
        loss: LossSpec {
            prior: a.prior,
            delta: a.delta,
            ..LossSpec::default()
        },
        options: Options {
            max_iterations: a.max_iterations,
            ..Options::default()
        },
    };
    let cal = Calibration::prepare(&manifest, &req)?;
    if cal.joint() && a.out.is_some() {
        return Err(Error::invalid(
            "--out",
            "out",
            "a joint fit writes several profiles: use --out-dir DIR",
        ));
    }
    let kinds = match &a.folds {
        Some(f) => FoldKind::parse_list(f)?,
        None if cal.joint() => vec![FoldKind::Model, FoldKind::Hardware],
        None => vec![FoldKind::Run, FoldKind::Model],
    };
    let iters = a.max_iterations.max(1) as u64;
    let fits = if a.cross_validate {
        1 + kinds
            .iter()
            .map(|&k| groups(&cal.set, &cal.runs, k).len())
            .sum::<usize>()
    } else {
        1
    };
    let pb = progress_bar(fits * iters as usize, a.quiet, "fit iterations");
    let show = |fit: usize, i: usize, loss: f64| {
        pb.set_position(fit as u64 * iters + (i as u64).min(iters));
        pb.set_message(format!("loss {loss:.5}"));
    };
    let full = cal.fit(&|i, _, l| show(0, i, l));
    let cv = a.cross_validate.then(|| {
        cross_validate(
            &cal.set,
            &cal.bases,
            &cal.spec,
            &full,
            &kinds,
            &date,
            &|f, _, i, _, l| show(f, i, l),
        )
    });
    pb.finish_and_clear();

    let yamls: Vec<String> = (0..cal.bases.len())
        .map(|h| cal.fitted_yaml(&full, h, &date))
        .collect::<Result<_>>()?;
    let report = report(&cal, &full, cv.as_ref(), &kinds);
    if let (Some(path), Some(cv)) = (&a.out_crossval, cv) {
        CrossvalFile::update(path, cv)?;
    }
    if let Some(dir) = &a.out_dir {
        let mut written = Vec::new();
        for (h, yaml) in yamls.iter().enumerate() {
            let path = dir.join(cal.file_name(h));
            std::fs::write(&path, yaml).map_err(|e| Error::io(&path, e))?;
            written.push(path.display().to_string());
        }
        return emit(
            out,
            &format!(
                "{report}\nfitted profiles written to {}\n",
                written.join(", ")
            ),
        );
    }
    match &a.out {
        Some(path) => {
            std::fs::write(path, &yamls[0]).map_err(|e| Error::io(path, e))?;
            emit(
                out,
                &format!("{report}\nfitted profile written to {}\n", path.display()),
            )
        }
        None => {
            eprint!("{report}");
            // Several profiles: one YAML document each.
            let docs: Vec<String> = yamls
                .iter()
                .enumerate()
                .map(|(h, y)| {
                    if cal.joint() {
                        format!("--- # {}\n{y}", cal.file_name(h))
                    } else {
                        y.clone()
                    }
                })
                .collect();
            emit(out, &docs.concat())
        }
    }
}

/// Signed % errors of one run's scored metrics.
type Errs = [Option<f64>; 3];

/// The text report: what was fitted, the constants, per-run errors, medians.
fn report(
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
    if cal.joint() {
        for p in params {
            out.push_str(&format!(
                "{}: {} ({})\n",
                p.name,
                match p.sharing {
                    Sharing::Shared => "shared",
                    Sharing::PerHardware => "per hardware",
                },
                p.sharing_why
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
