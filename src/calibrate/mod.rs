//! Calibration: fit a hardware profile's efficiency and overhead constants to recorded runs
//! (`servesim calibrate`), or several profiles jointly on the union of their runs (shared
//! constants one value for all, per-hardware constants one per profile), report in-sample and
//! cross-validated error, and write each fitted profile with a provenance comment on every
//! fitted field.
//!
//! Pieces: [`runs`] (the manifest entries replayed once, simulated in parallel with candidate
//! constants, memoised), [`params`] (names, bounds and coordinates of the constants),
//! [`loss`] (the stated loss), [`optimize`] (deterministic bounded Levenberg–Marquardt plus a
//! pattern-search polish), [`fit`] (one fit, predictions), [`identify`] (the sensitivity
//! screen that picks the default parameters), [`crossval`] (leave-one-out, leave-one-model-out
//! and leave-one-hardware-out, and the JSON the README reads), [`yaml_edit`] (line edits that
//! keep the rest of the profile intact).
pub mod backend;
pub mod crossval;
pub mod engine_scope;
pub mod fit;
pub mod fit_run;
pub mod identify;
pub mod loss;
pub mod optimize;
pub mod param_list;
pub mod params;
pub mod report;
pub mod runs;
pub mod values;
pub mod vllm_runs;
pub mod yaml_edit;

use crate::error::{Error, Result};
use crate::spec::bundled::hardware_yaml;
use crate::spec::hardware::HardwareProfile;
use crate::spec::load::{from_yaml_str, read_text};
use crate::validate::manifest::Manifest;
use fit::{FitResult, FitSpec};
use identify::{sensitivities, IDENTIFY_THRESHOLD};
use loss::{median_abs, LossSpec};
use optimize::{Options, Progress};
use param_list::parse_list_of;
use params::{format_value, Param};
use runs::RunSet;
use std::path::Path;

/// What `servesim calibrate` was asked to do.
#[derive(Debug, Clone)]
pub struct Request {
    /// Bundled profile names or profile YAML paths, comma-separated; several make a joint fit.
    pub profile: String,
    /// `--runs`: comma-separated ids or `*` patterns; default: the runs on these profiles.
    pub runs: Option<String>,
    /// `--params`: comma-separated names, each optionally `@hw` or `@shared`; default: every
    /// identifiable constant, with its default sharing.
    pub params: Option<String>,
    pub loss: LossSpec,
    pub options: Options,
    /// `--cost-model`: the backend every run is priced with; `None` = the default rule.
    pub cost_model: Option<crate::cost::CostModel>,
}

/// A prepared calibration: the profiles (text and parsed), the runs, what to fit.
pub struct Calibration {
    /// Each profile as given on the command line (a bundled name or a path).
    pub args: Vec<String>,
    /// Each profile's YAML text as given (bundled or read from the file).
    pub texts: Vec<String>,
    pub bases: Vec<HardwareProfile>,
    pub set: RunSet,
    /// Indices of the runs to fit on (all of `set`).
    pub runs: Vec<usize>,
    pub spec: FitSpec,
    /// Constants left out of the default set, with the reason.
    pub dropped: Vec<(String, String)>,
    /// Starting values outside a constant's physical bounds, clamped (one line each).
    pub clamped: Vec<String>,
    /// The manifest's path, as given (for provenance).
    pub manifest: String,
    /// Per profile: its runs are priced by the measured kernels, so the fit is of its
    /// `kernels_overheads:` block ([`backend`]).
    pub kernels: Vec<bool>,
    /// Profiles left out of a kernel-priced joint fit (no kernel tables), one line each.
    pub skipped: Vec<String>,
}

impl Calibration {
    /// Loads the profiles and the runs and decides the parameters.
    pub fn prepare(manifest: &Manifest, req: &Request) -> Result<Calibration> {
        let args: Vec<String> = req
            .profile
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        if args.is_empty() {
            return Err(Error::invalid("--profile", "profile", "no profile given"));
        }
        let mut texts = Vec::new();
        let mut bases: Vec<HardwareProfile> = Vec::new();
        for arg in &args {
            let text = match hardware_yaml(arg) {
                Some(t) => t.to_string(),
                // A bare name that is not bundled: list the bundled ones, as `run` does.
                None if !arg.contains('/')
                    && !arg.ends_with(".yaml")
                    && !Path::new(arg).exists() =>
                {
                    return Err(Error::Unknown {
                        kind: "hardware profile",
                        name: arg.to_string(),
                        available: crate::spec::bundled::hardware_names().join(", "),
                    })
                }
                None => read_text(Path::new(arg))?,
            };
            let base: HardwareProfile = from_yaml_str(&text, Path::new(arg))?;
            base.validate(arg)?;
            if bases.iter().any(|b| b.name == base.name) {
                return Err(Error::invalid(
                    "--profile",
                    arg,
                    format!("profile `{}` is listed twice", base.name),
                ));
            }
            texts.push(text);
            bases.push(base);
        }
        // A joint fit for the kernel backend leaves out the profiles it cannot price (no
        // tables): their runs would be priced by the roofline, whose constants are fitted
        // with --cost-model roofline.
        let mut skipped = Vec::new();
        let (mut args, mut texts, mut bases) = (args, texts, bases);
        if req.cost_model == Some(crate::cost::CostModel::Kernels) && bases.len() > 1 {
            let mut h = 0;
            while h < bases.len() {
                if crate::cost::select::tables_of(&bases[h]).is_none() && bases.len() > 1 {
                    skipped.push(format!(
                        "{}: no kernel tables (`kernel_tables:` or `kernel_tables_from:`), so the roofline prices its runs; left out of this kernels fit",
                        bases[h].name
                    ));
                    args.remove(h);
                    texts.remove(h);
                    bases.remove(h);
                } else {
                    h += 1;
                }
            }
        }
        let kernels: Vec<bool> = bases
            .iter()
            .map(|b| backend::kernels_priced(b, req.cost_model))
            .collect();
        for (b, &k) in bases.iter_mut().zip(&kernels) {
            if k {
                *b = b.folded_for_kernels();
            }
        }
        let pairs: Vec<(String, String)> = args
            .iter()
            .cloned()
            .zip(bases.iter().map(|b| b.name.clone()))
            .collect();
        let mut set = RunSet::load_many(manifest, &pairs, req.runs.as_deref())?;
        set.cost_model = req.cost_model;
        let runs: Vec<usize> = (0..set.runs.len()).collect();
        let any_kernels = kernels.contains(&true);
        let (params, dropped) = match &req.params {
            Some(list) if any_kernels => (
                backend::kernel_params(parse_list_of(list, &bases)?),
                Vec::new(),
            ),
            Some(list) => (parse_list_of(list, &bases)?, Vec::new()),
            None => identify::default_params(&set, &bases, &runs, &req.loss, any_kernels),
        };
        if params.is_empty() {
            return Err(Error::Msg(
                "no constant of the profile moves any selected run; nothing to fit".into(),
            ));
        }
        let mut clamped = Vec::new();
        for p in &params {
            for b in bases.iter().filter(|b| p.applies_to(b)) {
                let v = p.get(b);
                if p.clamp(v) != v {
                    clamped.push(format!(
                        "{} of {} starts at {}, outside its physical bounds [{}, {}] ({}): the fit starts from {}",
                        p.name,
                        b.name,
                        format_value(v),
                        format_value(p.lo),
                        format_value(p.hi),
                        p.bounds_why,
                        format_value(p.clamp(v))
                    ));
                }
            }
        }
        Ok(Calibration {
            args,
            texts,
            bases,
            set,
            runs,
            spec: FitSpec {
                params,
                loss: req.loss.clone(),
                options: req.options.clone(),
            },
            dropped,
            clamped,
            manifest: manifest.path.display().to_string(),
            kernels,
            skipped,
        })
    }

    /// True for a fit of several profiles together.
    pub fn joint(&self) -> bool {
        self.bases.len() > 1
    }

    /// The profiles' names, comma-separated.
    pub fn names(&self) -> String {
        self.bases
            .iter()
            .map(|b| b.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The in-sample fit on every selected run.
    pub fn fit(&self, progress: &Progress<'_>) -> FitResult {
        fit::fit_joint(&self.set, &self.bases, &self.spec, &self.runs, progress)
    }

    /// The fitted YAML of profile `hw`: its original text with each fitted field rewritten and
    /// a provenance comment on it, and the `calibration:` field summarising the fit.
    pub fn fitted_yaml(&self, full: &FitResult, hw: usize, date: &str) -> Result<String> {
        let ids = |rs: &[usize]| id_ranges(&self.set, rs);
        let all = ids(&full.runs);
        let loss = self.spec.loss.short();
        let params = &self.spec.params;
        let sens = sensitivities(
            &self.set,
            &full.profiles,
            params,
            &full.runs,
            &self.spec.loss,
        );
        let on_hw: Vec<usize> = (0..full.runs.len())
            .filter(|&k| self.set.runs[full.runs[k]].hw == hw)
            .collect();
        let others: Vec<&str> = (0..self.bases.len())
            .filter(|&h| h != hw)
            .map(|h| self.bases[h].name.as_str())
            .collect();
        let backend = if self.kernels[hw] {
            "for the kernel backend "
        } else {
            ""
        };
        let mut edits = Vec::new();
        let mut written: Vec<&Param> = Vec::new();
        for (i, slot) in full.slots.iter().enumerate() {
            let p = &params[slot.param];
            let shared = slot.hw.is_none();
            if slot.hw.is_some_and(|h| h != hw) || !p.applies_to(&self.bases[hw]) {
                continue;
            }
            let v = full.fitted[i];
            // Runs this value acts on: every run for a shared value, this profile's otherwise.
            let scope: Vec<usize> = if shared {
                (0..full.runs.len()).collect()
            } else {
                on_hw.clone()
            };
            let s = &sens[slot.param];
            let moved: Vec<usize> = scope
                .iter()
                .copied()
                .filter(|&k| s.per_run[k] >= IDENTIFY_THRESHOLD)
                .collect();
            let shown = if moved.is_empty() { &scope } else { &moved };
            let errs: Vec<_> = shown.iter().map(|&k| full.errors[k]).collect();
            let moved_ids: Vec<usize> = moved.iter().map(|&k| full.runs[k]).collect();
            let how = if !self.joint() {
                format!("on {} runs {all} of {}", full.runs.len(), self.manifest)
            } else if shared {
                format!(
                    "jointly on {} runs {all} of {}, one value shared with {} ({})",
                    full.runs.len(),
                    self.manifest,
                    others.join(", "),
                    p.sharing_why
                )
            } else {
                let own: Vec<usize> = on_hw.iter().map(|&k| full.runs[k]).collect();
                format!(
                    "jointly with {} on {} runs {all} of {}, per hardware: this profile's runs {}",
                    others.join(", "),
                    full.runs.len(),
                    self.manifest,
                    ids(&own)
                )
            };
            let comment = format!(
                "fitted {date} by servesim calibrate {backend}{how}, loss {loss}; moves {}; in-sample median |err| there: {}; was {}{}",
                if moved.is_empty() { "no scored metric by 1% at the fitted values".to_string() } else { ids(&moved_ids) },
                summary(&median_abs(&errs)),
                format_value(p.get(&self.bases[hw])),
                p.bound_note(v).map_or(String::new(), |n| format!("; {n}")),
            );
            let mut path = vec![backend::section_key(p.section, self.kernels[hw]).to_string()];
            path.extend(p.yaml_path());
            edits.push(yaml_edit::Edit {
                path,
                value: format_value(v),
                comment,
            });
            written.push(p);
        }
        // A profile fitted in stages (e.g. shared constants first, then a weight format's)
        // keeps the earlier stages' summary.
        let earlier = self.bases[hw]
            .calibration
            .as_deref()
            .filter(|c| c.starts_with("fitted"));
        let own_errors: Vec<_> = on_hw.iter().map(|&k| full.errors[k]).collect();
        let this = format!(
            "fitted {date} by `servesim calibrate` {backend}{}on {} runs {all} of {} ({} constants: {}); loss {}; in-sample median |err| {}{}; {}",
            if self.joint() { format!("jointly with {} ", others.join(", ")) } else { String::new() },
            full.runs.len(),
            self.manifest,
            written.len(),
            full.slots
                .iter()
                .zip(&full.names)
                .filter(|(s, _)| s.hw.map_or(params[s.param].applies_to(&self.bases[hw]), |h| h == hw))
                .map(|(s, n)| if self.joint() && s.hw.is_some() { params[s.param].name.clone() } else { n.clone() })
                .collect::<Vec<_>>()
                .join(", "),
            self.spec.loss.describe(),
            summary(&median_abs(&own_errors)),
            if self.joint() { format!(" on this profile's runs, {} on all", summary(&median_abs(&full.errors))) } else { String::new() },
            if earlier.is_some() {
                "every other constant keeps its value from the stage before"
            } else {
                "every other constant keeps its datasheet default"
            },
        );
        let calibration = match earlier {
            Some(e) => history(e, &this),
            None => this,
        };
        let out = yaml_edit::apply(&self.texts[hw], &edits, Some(&calibration))?;
        check_written(&out, &written, &full.profiles[hw], self.kernels[hw])?;
        Ok(out)
    }

    /// The file name a profile's fitted YAML gets in `--out-dir`: the given file's name, or
    /// `<name>.yaml` for a bundled profile.
    pub fn file_name(&self, hw: usize) -> String {
        let arg = &self.args[hw];
        if hardware_yaml(arg).is_some() {
            format!("{}.yaml", self.bases[hw].name)
        } else {
            Path::new(arg).file_name().map_or_else(
                || format!("{}.yaml", self.bases[hw].name),
                |f| f.to_string_lossy().into_owned(),
            )
        }
    }
}

/// Errors that the written text does not parse back to exactly the fitted values.
fn check_written(
    text: &str,
    params: &[&Param],
    fitted: &HardwareProfile,
    kernels: bool,
) -> Result<()> {
    let back: HardwareProfile = from_yaml_str(text, Path::new("<fitted profile>"))?;
    back.validate("<fitted profile>")?;
    let back = if kernels {
        back.folded_for_kernels()
    } else {
        back
    };
    for p in params {
        if p.get(&back) != p.get(fitted) {
            return Err(Error::Msg(format!(
                "internal: `{}` was written as {} but reads back as {}",
                p.name,
                p.get(fitted),
                p.get(&back)
            )));
        }
    }
    Ok(())
}

/// `thr 3.1%, TPOT/ITL 2.0%, TTFT 8.2%` from median |errors|.
pub fn summary(m: &[Option<f64>; 3]) -> String {
    let f = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1}%"));
    format!(
        "out tok/s {}, med TPOT/ITL {}, mean TTFT {}",
        f(m[0]),
        f(m[1]),
        f(m[2])
    )
}

/// Run ids with consecutive runs of the set joined: `003-00..003-07, 003-12`.
pub fn id_ranges(set: &RunSet, runs: &[usize]) -> String {
    let mut sorted = runs.to_vec();
    sorted.sort_unstable();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        let a = &set.runs[sorted[i]].id;
        let b = &set.runs[sorted[j]].id;
        parts.push(match j - i {
            0 => a.clone(),
            1 => format!("{a}, {b}"),
            _ => format!("{a}..{b}"),
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// The date (UTC, `YYYY-MM-DD`) of a Unix time in seconds.
pub fn date_from_unix(secs: i64) -> String {
    // Howard Hinnant's days-to-civil.
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The date of the fit: `explicit` (`--date`), else `SOURCE_DATE_EPOCH`, else today (UTC).
pub fn fit_date(explicit: Option<&str>) -> Result<String> {
    if let Some(d) = explicit {
        let ok = d.len() == 10
            && d.bytes().enumerate().all(|(i, b)| {
                if i == 4 || i == 7 {
                    b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            });
        return if ok {
            Ok(d.to_string())
        } else {
            Err(Error::invalid(
                "--date",
                "date",
                format!("`{d}` is not YYYY-MM-DD"),
            ))
        };
    }
    if let Ok(s) = std::env::var("SOURCE_DATE_EPOCH") {
        let secs: i64 = s.trim().parse().map_err(|_| {
            Error::invalid(
                "SOURCE_DATE_EPOCH",
                "value",
                format!("`{s}` is not a Unix time"),
            )
        })?;
        return Ok(date_from_unix(secs));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    Ok(date_from_unix(now))
}

/// A profile's `calibration:` history with stage `this` appended: an earlier stage that fitted
/// the same constants on the same runs (a refit of that stage) is dropped, so the line keeps one
/// entry per distinct stage instead of growing with every refit.
fn history(earlier: &str, this: &str) -> String {
    // "on N runs R of M (K constants: ...)": what a stage fitted, on what.
    let key = |stage: &str| -> Option<String> {
        let start = stage.find(" on ")?;
        let end = start + stage[start..].find("constants:")?;
        let close = end + stage[end..].find(')')?;
        Some(stage[start..=close].to_string())
    };
    let this_key = key(this);
    let stages: Vec<&str> = earlier.split(" || then ").collect();
    let mut kept: Vec<&str> = Vec::new();
    for (i, s) in stages.iter().enumerate() {
        let k = key(s);
        let superseded =
            k.is_some() && (k == this_key || stages[i + 1..].iter().any(|later| key(later) == k));
        if !superseded {
            kept.push(s);
        }
    }
    kept.push(this);
    kept.join(" || then ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refit_stage_replaces_its_earlier_entries_in_the_history() {
        let joint = |d: &str| {
            format!("fitted {d} jointly on 18 runs 000..003-15 of m.yaml (2 constants: gemm, memory); loss L")
        };
        let goss = |d: &str| {
            format!("fitted {d} on 8 runs 003-16..003-23 of m.yaml (1 constants: mxfp4_compute); loss L")
        };
        let earlier = [joint("d1"), goss("d1"), joint("d2"), goss("d2")].join(" || then ");
        assert_eq!(
            history(&earlier, &joint("d3")),
            [goss("d2"), joint("d3")].join(" || then ")
        );
        // A new stage keeps every earlier distinct one.
        let other = "fitted d3 on 1 runs 000 of m.yaml (1 constants: memory); loss L";
        assert_eq!(
            history(&joint("d1"), other),
            [joint("d1"), other.to_string()].join(" || then ")
        );
    }

    #[test]
    fn dates() {
        assert_eq!(date_from_unix(0), "1970-01-01");
        assert_eq!(date_from_unix(951_782_400), "2000-02-29");
        assert_eq!(date_from_unix(1_767_225_600), "2026-01-01");
        assert_eq!(fit_date(Some("2025-06-01")).unwrap(), "2025-06-01");
        assert!(fit_date(Some("June 1")).is_err());
    }
}
