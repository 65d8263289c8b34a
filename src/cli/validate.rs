//! `servesim validate`: replay every entry of the validation manifest, print one row per run
//! (real, simulated, error % for the headline metrics) and the error summary, as text, JSON or
//! the README's markdown section; `--update-readme` rewrites that section in place.
use super::print::emit;
use crate::calibrate::report::readme_markdown;
use crate::cost::select::CostModel;
use crate::error::{Error, Result};
use crate::validate::compare::validate_with;
use crate::validate::manifest::Manifest;
use crate::validate::render::{replace_readme_section, validation_json, validation_text};
use crate::validate::replay::Overrides;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// The validation manifest; log files are relative to its directory. Default: the first
    /// that exists of $SERVESIM_VALIDATION_DIR/manifest.yaml, ./validation/manifest.yaml and
    /// the source checkout's validation/manifest.yaml (where the binary was built, so a
    /// `cargo install --path .` binary finds it from any directory).
    #[arg(long)]
    pub manifest: Option<PathBuf>,
    /// text, json or markdown (the README section).
    #[arg(long, default_value = "text")]
    pub format: String,
    /// Step-cost backend for every run: roofline or kernels (default: each entry's own
    /// setting, else servesim's default).
    #[arg(long)]
    pub cost_model: Option<String>,
    /// Rewrite the section between `<!-- accuracy:begin -->` and `<!-- accuracy:end -->` of
    /// this file with the markdown output, instead of printing.
    #[arg(long)]
    pub update_readme: Option<PathBuf>,
}

pub fn validate(a: &ValidateArgs, out: &mut dyn Write) -> Result<()> {
    if !["text", "json", "markdown"].contains(&a.format.as_str()) {
        return Err(Error::Unknown {
            kind: "format",
            name: a.format.clone(),
            available: "text, json, markdown".into(),
        });
    }
    if let Some(c) = &a.cost_model {
        CostModel::parse(c)?;
    }
    let manifest = Manifest::load(&match &a.manifest {
        Some(p) => p.clone(),
        None => default_manifest()?,
    })?;
    let mut ov = Overrides::default();
    ov.server.cost_model = a.cost_model.clone();
    let pb = super::print::spinner(a.format == "json", "replaying the validation runs");
    let v = validate_with(&manifest, &ov);
    pb.finish_and_clear();
    if let Some(path) = &a.update_readme {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let new = replace_readme_section(&text, &readme_markdown(&v))?;
        std::fs::write(path, new).map_err(|e| Error::io_write(path, e))?;
        eprintln!(
            "{}: accuracy section updated ({} runs)",
            path.display(),
            v.runs.len()
        );
        return Ok(());
    }
    emit(
        out,
        &match a.format.as_str() {
            "json" => format!("{}\n", validation_json(&v)),
            "markdown" => readme_markdown(&v),
            _ => validation_text(&v),
        },
    )
}

/// The default manifest: the first existing of the places `--manifest`'s help lists.
pub(super) fn default_manifest() -> Result<PathBuf> {
    let candidates: Vec<PathBuf> = std::env::var_os("SERVESIM_VALIDATION_DIR")
        .map(|d| PathBuf::from(d).join("manifest.yaml"))
        .into_iter()
        .chain([
            PathBuf::from("validation/manifest.yaml"),
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/validation/manifest.yaml"
            )),
        ])
        .collect();
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| {
            Error::Msg(format!(
                "no validation manifest found (tried {}); pass --manifest FILE or set \
                 SERVESIM_VALIDATION_DIR",
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}
