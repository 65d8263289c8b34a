//! `servesim merge`: joins the files of a sharded sweep into the file the unsharded sweep
//! writes.
use super::output::SweepFile;
use super::shard::Shard;
use crate::error::{Error, Result};
use std::collections::BTreeMap;

/// Joins sweep files (named by `names` in errors) into one. The files must come from the same
/// grid, scenario and servesim version, must not overlap, and must together cover every point;
/// the result is byte-for-byte what the unsharded sweep writes.
pub fn merge(files: &[(String, SweepFile)]) -> Result<SweepFile> {
    let Some((first_name, first)) = files.first() else {
        return Err(Error::Msg("merge: no input files".into()));
    };
    let mut rows = BTreeMap::new();
    let mut seen_shards: BTreeMap<Shard, &str> = BTreeMap::new();
    for (name, f) in files {
        check_compatible(first_name, first, name, f)?;
        if let Some(s) = f.shard {
            if let Some(other) = seen_shards.insert(s, name) {
                return Err(Error::Msg(format!(
                    "merge: shard {s} is given twice ({other} and {name})"
                )));
            }
        }
        for r in &f.rows {
            if r.index >= f.points {
                return Err(Error::Msg(format!(
                    "merge: {name}: row index {} is outside the grid of {} points",
                    r.index, f.points
                )));
            }
            if let Some((other, _)) = rows.insert(r.index, (name.as_str(), r.clone())) {
                return Err(Error::Msg(format!(
                    "merge: point {} is in both {other} and {name} (overlapping shards)",
                    r.index
                )));
            }
        }
    }
    let missing: Vec<usize> = (0..first.points)
        .filter(|i| !rows.contains_key(i))
        .collect();
    if let Some(m) = missing.first() {
        return Err(Error::Msg(format!(
            "merge: {} of {} points are missing (first: point {m}); is a shard's file missing?",
            missing.len(),
            first.points
        )));
    }
    Ok(SweepFile::new(
        first.scenario.clone(),
        first.grid.clone(),
        None,
        rows.into_values().map(|(_, r)| r).collect(),
    ))
}

fn check_compatible(an: &str, a: &SweepFile, bn: &str, b: &SweepFile) -> Result<()> {
    let differ = |what: &str, x: String, y: String| {
        Err(Error::Msg(format!(
            "merge: {an} and {bn} come from different sweeps: {what} differs ({x} vs {y})"
        )))
    };
    if a.servesim_version != b.servesim_version {
        return differ(
            "servesim version",
            a.servesim_version.clone(),
            b.servesim_version.clone(),
        );
    }
    if a.scenario != b.scenario {
        return differ(
            "scenario",
            format!("{:?}", a.scenario),
            format!("{:?}", b.scenario),
        );
    }
    if a.grid != b.grid || a.points != b.points {
        let show = |f: &SweepFile| {
            f.grid
                .axes
                .iter()
                .map(|x| format!("--{} {}", x.flag, x.spec))
                .collect::<Vec<_>>()
                .join(" ")
        };
        return differ("grid", show(a), show(b));
    }
    let count = |f: &SweepFile| f.shard.map(|s| s.count);
    if count(a) != count(b) {
        let show = |f: &SweepFile| f.shard.map_or("unsharded".to_string(), |s| s.to_string());
        return differ("shard count", show(a), show(b));
    }
    Ok(())
}
