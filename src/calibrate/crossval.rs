//! Out-of-sample error: leave-one-out (fit on every run but one, predict it),
//! leave-one-model-out (fit on the runs of every model but one, predict that model's runs; only
//! when the runs cover at least two models) and, for a joint fit, leave-one-hardware-out (fit
//! on the other profiles' runs, predict this profile's runs with the shared constants fitted
//! on the others and this profile's per-hardware constants at their priors; see
//! [`super::fit`]). Every fold starts from the same profiles as the in-sample fit, never from
//! its result, so no fold sees the run it predicts. The results are written to a JSON file
//! (`validation/crossval.json`, one entry per fit) that the README's accuracy section reads.
use super::fit::{fit_joint, predict_joint, Errors, FitResult, FitSpec};
use super::runs::RunSet;
use crate::cost::CostModel;
use crate::error::{Error, Result};
use crate::spec::hardware::HardwareProfile;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Errors (%) of the three scored metrics of one run.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MetricErrors {
    pub out_tok_s: Option<f64>,
    pub med_tpot_itl: Option<f64>,
    pub mean_ttft: Option<f64>,
}

impl MetricErrors {
    /// From signed % errors in [`super::runs::Metric::ALL`] order, rounded to 0.01%.
    pub fn from_errors(e: &Errors) -> MetricErrors {
        let r = |v: Option<f64>| v.map(|x| (x * 100.0).round() / 100.0);
        MetricErrors {
            out_tok_s: r(e[0]),
            med_tpot_itl: r(e[1]),
            mean_ttft: r(e[2]),
        }
    }

    /// Back to [`Errors`] order.
    pub fn as_array(&self) -> Errors {
        [self.out_tok_s, self.med_tpot_itl, self.mean_ttft]
    }
}

/// One run's in-sample and out-of-sample errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunCv {
    pub id: String,
    pub model: String,
    /// Weight format of the run (`bf16`, `fp8`, `w8a8_int8`, `mxfp4`).
    pub weight_format: String,
    /// The run's request lengths are approximate (ShareGPT from the bundled sample).
    pub approx_lengths: bool,
    pub in_sample: MetricErrors,
    /// Predicted by the fit on every other run (absent with a single run).
    pub leave_one_out: Option<MetricErrors>,
    /// Predicted by the fit on the other models' runs (absent with a single model).
    pub leave_one_model_out: Option<MetricErrors>,
    /// The run's hardware profile (joint fits only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<String>,
    /// Predicted by the fit on the other profiles' runs, with this profile's per-hardware
    /// constants at their priors (joint fits only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leave_one_hardware_out: Option<MetricErrors>,
    /// The server engine, for a run printed by vLLM's client (`vllm` or `sglang`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Metrics reported but not fitted (the log lacks them, or they are a flag: output
    /// throughput of a vLLM-client run without `--ignore-eos`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unscored: Vec<String>,
}

/// Cross-validation of one fit (one profile on one set of runs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileCv {
    /// The profile's name.
    pub profile: String,
    /// The runs fitted on, as id ranges (`003-00..003-15`).
    pub runs_label: String,
    /// The loss, as [`super::loss::LossSpec::describe`] words it.
    pub loss: String,
    /// Date of the fit.
    pub date: String,
    /// Fitted values by parameter name (the in-sample fit; `name@profile` or `name@shared`
    /// in a joint fit).
    pub fitted: BTreeMap<String, f64>,
    pub runs: Vec<RunCv>,
    /// The profiles of a joint fit (empty for a fit of one profile).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<String>,
    /// Constants that ended at a physical bound, with what that means.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub at_bound: BTreeMap<String, String>,
    /// The step-cost backend every run was priced with (`--cost-model`: `roofline` or
    /// `kernels`); absent: servesim's default rule (kernels where the profile has tables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_model: Option<String>,
}

impl ProfileCv {
    /// `profile (runs)`, the label of the fit in tables.
    pub fn label(&self) -> String {
        match &self.cost_model {
            Some(m) => format!("{} ({}), {m}", self.profile, self.runs_label),
            None => format!("{} ({})", self.profile, self.runs_label),
        }
    }
}

/// The cross-validation file: one entry per fit.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CrossvalFile {
    /// How the file was made.
    pub note: String,
    /// Ordered by profile, then first run id.
    pub fits: Vec<ProfileCv>,
}

/// The note written into every cross-validation file.
pub const NOTE: &str = "written by `servesim calibrate --cross-validate --out-crossval FILE`; read by `servesim validate --format markdown`";

impl CrossvalFile {
    /// Reads a cross-validation file.
    pub fn load(path: &Path) -> Result<CrossvalFile> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        serde_json::from_str(&text).map_err(|e| Error::Parse {
            path: path.to_path_buf(),
            line: Some(e.line()),
            reason: e.to_string(),
        })
    }

    /// The file beside a manifest (`crossval.json` in its directory), when there is one.
    pub fn beside(manifest: &Path) -> Option<CrossvalFile> {
        let p = manifest
            .parent()
            .unwrap_or(Path::new(""))
            .join("crossval.json");
        p.is_file().then(|| CrossvalFile::load(&p).ok()).flatten()
    }

    /// Writes `cv` into the file at `path`, replacing the fits of the same profile that share
    /// a run with it and keeping every other fit.
    pub fn update(path: &Path, cv: ProfileCv) -> Result<()> {
        let mut file = if path.is_file() {
            CrossvalFile::load(path)?
        } else {
            CrossvalFile::default()
        };
        file.note = NOTE.to_string();
        file.fits.retain(|f| {
            f.profile != cv.profile
                || f.cost_model != cv.cost_model
                || !f.runs.iter().any(|r| cv.runs.iter().any(|s| s.id == r.id))
        });
        file.fits.push(cv);
        file.fits.sort_by(|a, b| {
            let first = |f: &ProfileCv| f.runs.first().map(|r| r.id.clone()).unwrap_or_default();
            (a.profile.as_str(), first(a), &a.cost_model).cmp(&(
                b.profile.as_str(),
                first(b),
                &b.cost_model,
            ))
        });
        let text = serde_json::to_string_pretty(&file).map_err(|e| Error::Msg(e.to_string()))?;
        std::fs::write(path, format!("{text}\n")).map_err(|e| Error::io_write(path, e))
    }
}

/// Progress of a cross-validation: (fit index, fits in all, iteration, iterations at most, loss).
pub type CvProgress<'a> = dyn Fn(usize, usize, usize, usize, f64) + Sync + 'a;

/// A kind of cross-validation fold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoldKind {
    /// Leave one run out.
    Run,
    /// Leave one model's runs out.
    Model,
    /// Leave one hardware profile's runs out.
    Hardware,
}

impl FoldKind {
    /// Parses `--folds` (`loo,lomo,loho`).
    pub fn parse_list(list: &str) -> Result<Vec<FoldKind>> {
        let mut out = Vec::new();
        for k in list.split(',').map(str::trim).filter(|k| !k.is_empty()) {
            let kind = match k {
                "loo" => FoldKind::Run,
                "lomo" => FoldKind::Model,
                "loho" => FoldKind::Hardware,
                other => {
                    return Err(Error::invalid(
                        "--folds",
                        "folds",
                        format!("unknown fold kind `{other}`; use loo, lomo, loho"),
                    ))
                }
            };
            if !out.contains(&kind) {
                out.push(kind);
            }
        }
        Ok(out)
    }
}

/// The held-out groups of one kind, as indices into the run set: one per run, one per model
/// (only with two models or more) or one per hardware profile (only with two or more), each
/// group in `runs` order. A fold trains on `runs` minus its group ([`train_runs`]).
pub fn groups(set: &RunSet, runs: &[usize], kind: FoldKind) -> Vec<Vec<usize>> {
    let key = |r: usize| -> String {
        match kind {
            FoldKind::Run => set.runs[r].id.clone(),
            FoldKind::Model => set.runs[r].model.clone(),
            FoldKind::Hardware => set.runs[r].hw.to_string(),
        }
    };
    let mut keys: Vec<String> = Vec::new();
    for &r in runs {
        let k = key(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    if keys.len() < 2 {
        return Vec::new();
    }
    keys.iter()
        .map(|k| runs.iter().copied().filter(|&r| key(r) == *k).collect())
        .collect()
}

/// The held-out groups: one per run (leave-one-out) and, with two or more models, one per
/// model (leave-one-model-out), as indices into `runs`.
pub fn folds(set: &RunSet, runs: &[usize]) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
    (
        groups(set, runs, FoldKind::Run),
        groups(set, runs, FoldKind::Model),
    )
}

/// The runs a fold trains on: `runs` without the held-out ones.
pub fn train_runs(runs: &[usize], held: &[usize]) -> Vec<usize> {
    runs.iter().copied().filter(|r| !held.contains(r)).collect()
}

/// Predictions for each held-out group: fit on `runs` minus the group, predict the group.
/// Returns the errors of every run of `runs` that some fold held out, and each fold's fit.
pub fn held_out_errors(
    set: &RunSet,
    bases: &[HardwareProfile],
    spec: &FitSpec,
    runs: &[usize],
    groups: &[Vec<usize>],
    on_fold: &(dyn Fn(usize, usize, usize, f64) + Sync),
) -> (BTreeMap<usize, Errors>, Vec<FitResult>) {
    let mut out = BTreeMap::new();
    let mut fits = Vec::new();
    for (g, held) in groups.iter().enumerate() {
        let train = train_runs(runs, held);
        let f: FitResult = fit_joint(set, bases, spec, &train, &|i, n, l| on_fold(g, i, n, l));
        for (&r, e) in held.iter().zip(predict_joint(set, &f.profiles, held)) {
            out.insert(r, e);
        }
        fits.push(f);
    }
    (out, fits)
}

/// The cross-validation record of `full` (the in-sample fit on `runs`), with the folds of
/// `kinds` (those that apply: see [`groups`]).
pub fn cross_validate(
    set: &RunSet,
    bases: &[HardwareProfile],
    spec: &FitSpec,
    full: &FitResult,
    kinds: &[FoldKind],
    date: &str,
    progress: &CvProgress<'_>,
) -> ProfileCv {
    let runs = &full.runs;
    let all: Vec<(FoldKind, Vec<Vec<usize>>)> =
        kinds.iter().map(|&k| (k, groups(set, runs, k))).collect();
    let total = 1 + all.iter().map(|(_, g)| g.len()).sum::<usize>();
    let mut done = 1;
    let mut errs: BTreeMap<(usize, usize), Errors> = BTreeMap::new();
    for (k, (_, gs)) in all.iter().enumerate() {
        let base = done;
        let (e, _) = held_out_errors(set, bases, spec, runs, gs, &|g, i, n, l| {
            progress(base + g, total, i, n, l)
        });
        done += gs.len();
        errs.extend(e.into_iter().map(|(r, e)| ((k, r), e)));
    }
    let of = |kind: FoldKind, r: usize| {
        all.iter()
            .position(|(k, _)| *k == kind)
            .and_then(|k| errs.get(&(k, r)))
            .map(MetricErrors::from_errors)
    };
    let joint = bases.len() > 1;
    let rows = runs
        .iter()
        .zip(&full.errors)
        .map(|(&r, e)| {
            let run = &set.runs[r];
            RunCv {
                id: run.id.clone(),
                model: run.model.clone(),
                weight_format: serde_json::to_value(run.replay.scenario.server.weight_format)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                approx_lengths: run.approx_lengths(),
                in_sample: MetricErrors::from_errors(e),
                leave_one_out: of(FoldKind::Run, r),
                leave_one_model_out: of(FoldKind::Model, r),
                hardware: joint.then(|| bases[run.hw].name.clone()),
                leave_one_hardware_out: of(FoldKind::Hardware, r),
                engine: run.vllm_client.then(|| {
                    match run.engine {
                        crate::spec::engine::Engine::Sglang => "sglang",
                        crate::spec::engine::Engine::Vllm => "vllm",
                    }
                    .to_string()
                }),
                unscored: ["out_tok_s", "med_tpot_itl", "mean_ttft"]
                    .iter()
                    .zip(run.scored)
                    .filter(|(_, s)| !s)
                    .map(|(n, _)| n.to_string())
                    .collect(),
            }
        })
        .collect();
    let names: Vec<String> = bases.iter().map(|b| b.name.clone()).collect();
    ProfileCv {
        profile: if joint {
            format!("joint: {}", names.join(" + "))
        } else {
            names[0].clone()
        },
        runs_label: super::id_ranges(set, runs),
        loss: spec.loss.describe(),
        date: date.to_string(),
        fitted: full
            .names
            .iter()
            .cloned()
            .zip(full.fitted.iter().copied())
            .collect(),
        runs: rows,
        profiles: if joint { names } else { Vec::new() },
        at_bound: full.at_bounds(&spec.params).into_iter().collect(),
        cost_model: set.cost_model.map(|m| {
            match m {
                CostModel::Roofline => "roofline",
                CostModel::Kernels => "kernels",
            }
            .to_string()
        }),
    }
}
