//! `servesim validate`: replay every entry of the validation manifest, print one row per run
//! (real, simulated, error % for the headline metrics) and the error summary, as text, JSON or
//! the README's markdown section; `--update-readme` rewrites that section in place.
use super::print::emit;
use crate::calibrate::report::readme_markdown;
use crate::error::{Error, Result};
use crate::validate::compare::validate as run_validation;
use crate::validate::manifest::Manifest;
use crate::validate::render::{replace_readme_section, validation_json, validation_text};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// The validation manifest; log files are relative to its directory.
    #[arg(long, default_value = "validation/manifest.yaml")]
    pub manifest: PathBuf,
    /// text, json or markdown (the README section).
    #[arg(long, default_value = "text")]
    pub format: String,
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
    let manifest = Manifest::load(&a.manifest)?;
    let pb = super::print::spinner(a.format == "json", "replaying the validation runs");
    let v = run_validation(&manifest);
    pb.finish_and_clear();
    if let Some(path) = &a.update_readme {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let new = replace_readme_section(&text, &readme_markdown(&v))?;
        std::fs::write(path, new).map_err(|e| Error::io(path, e))?;
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
