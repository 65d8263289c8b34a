//! `servesim calibrate`: fit a hardware profile's efficiency and overhead constants to the
//! recorded runs of a validation manifest, print what moved and the in-sample (and, with
//! `--cross-validate`, leave-one-out and leave-one-model-out) errors, and write the fitted
//! profile with a provenance comment on every fitted field (to `--out`, else to stdout; the
//! report then goes to stderr).
use super::print::{emit, progress_bar};
use crate::calibrate::crossval::{cross_validate, CrossvalFile, ProfileCv};
use crate::calibrate::fit::FitResult;
use crate::calibrate::loss::{max_abs, median_abs, LossSpec};
use crate::calibrate::optimize::Options;
use crate::calibrate::params::format_value;
use crate::calibrate::runs::Metric;
use crate::calibrate::{fit_date, id_ranges, Calibration, Request};
use crate::error::{Error, Result};
use crate::report::table::{fmt_err, Style, Table};
use crate::validate::manifest::Manifest;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// The validation manifest; log files are relative to its directory.
    #[arg(long, default_value = "validation/manifest.yaml")]
    pub manifest: PathBuf,
    /// The profile to fit: a bundled name or a profile YAML path.
    #[arg(long)]
    pub profile: String,
    /// Runs to fit on: comma-separated manifest ids or `*` patterns (`003-*,000`); default:
    /// the entries whose hardware is this profile.
    #[arg(long)]
    pub runs: Option<String>,
    /// Constants to fit (`gemm,memory,attention.flashinfer.decode,step_cpu_ns`); default: every
    /// constant that moves a scored metric of the selected runs by at least 1% when doubled.
    #[arg(long)]
    pub params: Option<String>,
    /// Write the fitted profile here (may be the input file) instead of printing it.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also fit leave-one-out and leave-one-model-out folds and report their errors.
    #[arg(long)]
    pub cross_validate: bool,
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
    let iters = a.max_iterations.max(1) as u64;
    let fits = if a.cross_validate {
        let (loo, lomo) = crate::calibrate::crossval::folds(&cal.set, &cal.runs);
        1 + loo.len() + lomo.len()
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
            &cal.base,
            &cal.spec,
            &full,
            &date,
            &|f, _, i, _, l| show(f, i, l),
        )
    });
    pb.finish_and_clear();

    let yaml = cal.fitted_yaml(&full, &date)?;
    let report = report(&cal, &full, cv.as_ref());
    if let (Some(path), Some(cv)) = (&a.out_crossval, cv) {
        CrossvalFile::update(path, cv)?;
    }
    match &a.out {
        Some(path) => {
            std::fs::write(path, &yaml).map_err(|e| Error::io(path, e))?;
            emit(
                out,
                &format!("{report}\nfitted profile written to {}\n", path.display()),
            )
        }
        None => {
            eprint!("{report}");
            emit(out, &yaml)
        }
    }
}

/// The text report: what was fitted, the constants, per-run errors, medians.
fn report(cal: &Calibration, full: &FitResult, cv: Option<&ProfileCv>) -> String {
    let mut out = format!(
        "servesim calibrate: {} on {} runs ({}) of {}\nloss: {}\n",
        cal.base.name,
        full.runs.len(),
        id_ranges(&cal.set, &full.runs),
        cal.manifest,
        cal.spec.loss.describe()
    );
    for (name, why) in &cal.dropped {
        out.push_str(&format!("left out: {name}: {why}\n"));
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
        header: ["constant", "start", "fitted"].map(String::from).to_vec(),
        rows: full
            .names
            .iter()
            .zip(full.start.iter().zip(&full.fitted))
            .map(|(n, (s, f))| vec![n.clone(), format_value(*s), format_value(*f)])
            .collect(),
        right: vec![false, true, true],
    };
    out.push_str(&constants.render(Style::Text));
    out.push('\n');
    let mut header = vec!["run".to_string(), "model".to_string()];
    let kinds: &[&str] = if cv.is_some() {
        &["in", "LOMO", "LOO"]
    } else {
        &["in"]
    };
    for m in Metric::ALL {
        for k in kinds {
            header.push(format!("{} {k}", m.title()));
        }
    }
    let mut rows = Vec::new();
    let mut cols: Vec<Vec<[Option<f64>; 3]>> = vec![Vec::new(); kinds.len()];
    for (k, &r) in full.runs.iter().enumerate() {
        let run = &cal.set.runs[r];
        let mut per_kind = vec![full.errors[k]];
        if let Some(cv) = cv {
            let row = &cv.runs[k];
            for e in [&row.leave_one_model_out, &row.leave_one_out] {
                per_kind.push(e.map_or([None; 3], |e| e.as_array()));
            }
        }
        let mut line = vec![run.id.clone(), run.model.clone()];
        for m in 0..3 {
            for e in &per_kind {
                line.push(fmt_err(e[m]));
            }
        }
        for (c, e) in cols.iter_mut().zip(per_kind) {
            c.push(e);
        }
        rows.push(line);
    }
    for (label, f) in [
        (
            "median |err|",
            median_abs as fn(&[[Option<f64>; 3]]) -> [Option<f64>; 3],
        ),
        ("max |err|", max_abs),
    ] {
        let mut line = vec![label.to_string(), String::new()];
        let stats: Vec<[Option<f64>; 3]> = cols.iter().map(|c| f(c)).collect();
        for m in 0..3 {
            for s in &stats {
                line.push(s[m].map_or("-".into(), |v| format!("{v:.1}%")));
            }
        }
        rows.push(line);
    }
    let n = header.len();
    let mut right = vec![false, false];
    right.extend(vec![true; n - 2]);
    out.push_str(
        &Table {
            header,
            rows,
            right,
        }
        .render(Style::Text),
    );
    out.push_str(
        "\nerr = (simulated − real) / real; in = in-sample; LOMO = fitted without that model's runs; LOO = fitted without that run\n",
    );
    out
}
