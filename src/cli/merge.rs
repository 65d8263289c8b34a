//! `servesim merge`: joins the sweep.json files of a sharded sweep into the file the whole
//! sweep would have written (rejecting overlapping, missing or incompatible shards), with the
//! CSV and charts beside it on request.
use crate::error::{Error, Result};
use crate::sweep::merge::merge as merge_files;
use crate::sweep::output::SweepFile;
use crate::sweep::write_outputs;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The shards' sweep.json files.
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// The merged JSON file.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out: PathBuf,
    /// Also write sweep.json, sweep.csv and the charts into this directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn merge(a: &MergeArgs, out: &mut dyn Write) -> Result<()> {
    let files = a
        .files
        .iter()
        .map(|p| Ok((p.display().to_string(), SweepFile::load(p)?)))
        .collect::<Result<Vec<_>>>()?;
    let merged = merge_files(&files)?;
    std::fs::write(&a.out, merged.to_json()).map_err(|e| Error::io_write(&a.out, e))?;
    if let Some(dir) = &a.dir {
        write_outputs(&merged, dir, true)?;
    }
    super::print::emit(
        out,
        &format!(
            "servesim merge: {} files, {} points → {}\n",
            files.len(),
            merged.rows.len(),
            a.out.display()
        ),
    )
}
