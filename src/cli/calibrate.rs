//! `servesim calibrate`: fit the efficiency and overhead constants of one hardware profile, or
//! of several jointly (shared constants one value for all, per-hardware constants one per
//! profile), to the recorded runs of a validation manifest; print what moved and the in-sample
//! (and, with `--cross-validate`, leave-one-out, leave-one-model-out and
//! leave-one-hardware-out) errors, and write each fitted profile with a provenance comment on
//! every fitted field (to `--out` / `--out-dir`, else to stdout; the report then goes to
//! stderr).
use super::print::{emit, progress_bar};
use crate::calibrate::crossval::{cross_validate, groups, CrossvalFile, FoldKind};
use crate::calibrate::loss::LossSpec;
use crate::calibrate::optimize::Options;
use crate::calibrate::report::fit_report;
use crate::calibrate::{fit_date, Calibration, Request};
use crate::error::{Error, Result};
use crate::validate::manifest::Manifest;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// The validation manifest; log files are relative to its directory. Default: as
    /// `validate` finds it ($SERVESIM_VALIDATION_DIR/manifest.yaml, ./validation/manifest.yaml,
    /// then the source checkout's).
    #[arg(long)]
    pub manifest: Option<PathBuf>,
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
    /// Step-cost backend every run is priced with while fitting: `roofline` or `kernels`
    /// (measured SGLang kernel tables); default: the same rule as `run` (kernels where the
    /// profile names tables, else the roofline).
    #[arg(long)]
    pub cost_model: Option<String>,
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
    let manifest_path = match &a.manifest {
        Some(p) => p.clone(),
        None => super::validate::default_manifest()?,
    };
    let manifest = Manifest::load(&manifest_path)?;
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
        cost_model: a
            .cost_model
            .as_deref()
            .map(crate::cost::CostModel::parse)
            .transpose()?,
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
    let report = fit_report(&cal, &full, cv.as_ref(), &kinds);
    if let (Some(path), Some(cv)) = (&a.out_crossval, cv) {
        CrossvalFile::update(path, cv)?;
    }
    if let Some(dir) = &a.out_dir {
        let mut written = Vec::new();
        for (h, yaml) in yamls.iter().enumerate() {
            let path = dir.join(cal.file_name(h));
            std::fs::write(&path, yaml).map_err(|e| Error::io_write(&path, e))?;
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
            std::fs::write(path, &yamls[0]).map_err(|e| Error::io_write(path, e))?;
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
