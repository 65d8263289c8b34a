//! Writes fitted values into a profile's YAML text by editing only the lines of the fitted
//! fields, so every other line (comments, sources, layout) stays as it was. A field is found
//! by its key path (`efficiency` → `attention` → `fa3` → `decode`), following indentation; a
//! value inside a flow mapping (`fa3: {prefill: 0.6, decode: 0.8}`) is edited in place; a
//! field the file does not list (e.g. `moe_gemm`) is inserted at the end of its section, and a
//! top-level section it lacks (`kernels_overheads:`) right after the section its name extends
//! (`overheads:`), else at the end of the file. The
//! edited line's trailing comment is replaced by the provenance comment, aligned where the old
//! comment started.
use crate::error::{Error, Result};

/// One value to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    /// Key path from the top level (`["efficiency", "gemm"]`).
    pub path: Vec<String>,
    /// The value exactly as it is to appear (see [`super::params::format_value`]).
    pub value: String,
    /// Provenance comment, without the `#`.
    pub comment: String,
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn is_content(line: &str) -> bool {
    let t = line.trim_start();
    !t.is_empty() && !t.starts_with('#')
}

/// The key of a `key: value` / `key:` line.
fn key_of(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let t = t.strip_prefix("- ").unwrap_or(t);
    let (k, _) = t.split_once(':')?;
    Some(k.trim())
}

/// Byte offset of a trailing ` #` comment, if any (values here are numbers and flow maps).
fn comment_at(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    (1..b.len()).find(|&i| b[i] == b'#' && b[i - 1].is_ascii_whitespace())
}

/// End (exclusive) of the block of the content line `at`: the next content line indented no
/// deeper than it, or the end.
fn block_end(lines: &[String], at: usize) -> usize {
    let ind = indent(&lines[at]);
    (at + 1..lines.len())
        .find(|&i| is_content(&lines[i]) && indent(&lines[i]) <= ind)
        .unwrap_or(lines.len())
}

/// `line` with its value replaced by `value` and its comment by `comment`.
fn rewrite(line: &str, value: &str, comment: &str) -> String {
    let col = comment_at(line);
    let body = col.map_or(line, |c| &line[..c]).trim_end();
    let (head, _) = body.split_once(':').unwrap_or((body, ""));
    set_comment(&format!("{head}: {value}"), col, comment)
}

fn set_comment(body: &str, col: Option<usize>, comment: &str) -> String {
    let body = body.trim_end();
    let pad = col
        .filter(|&c| c > body.len())
        .map_or(2, |c| c - body.len());
    format!("{body}{}# {comment}", " ".repeat(pad))
}

/// `line` (`key: {a: 1, b: 2}  # ...`) with `field` of the flow map set to `value`.
fn rewrite_flow(line: &str, field: &str, value: &str, comment: &str) -> Option<String> {
    let col = comment_at(line);
    let body = col.map_or(line, |c| &line[..c]).trim_end();
    let open = body.find('{')?;
    let close = body.rfind('}')?;
    let mut found = false;
    let items: Vec<String> = body[open + 1..close]
        .split(',')
        .map(|item| match item.split_once(':') {
            Some((k, _)) if k.trim() == field => {
                found = true;
                format!("{}: {value}", k.trim())
            }
            _ => item.trim().to_string(),
        })
        .collect();
    found.then(|| {
        set_comment(
            &format!("{}{{{}}}", &body[..open], items.join(", ")),
            col,
            comment,
        )
    })
}

fn missing(path: &[String], why: &str) -> Error {
    Error::Msg(format!(
        "cannot write `{}` into the profile: {why}",
        path.join(".")
    ))
}

fn apply_one(lines: &mut Vec<String>, e: &Edit) -> Result<()> {
    let (mut lo, mut hi) = (0, lines.len());
    let mut parent: Option<usize> = None;
    for (depth, key) in e.path.iter().enumerate() {
        let last = depth + 1 == e.path.len();
        let child_indent = (lo..hi)
            .find(|&i| is_content(&lines[i]))
            .map(|i| indent(&lines[i]));
        let found = (lo..hi).find(|&i| {
            is_content(&lines[i])
                && Some(indent(&lines[i])) == child_indent
                && key_of(&lines[i]) == Some(key.as_str())
        });
        match found {
            Some(i) if last => {
                lines[i] = rewrite(&lines[i], &e.value, &e.comment);
                return Ok(());
            }
            Some(i) if lines[i].contains('{') && depth + 2 == e.path.len() => {
                let field = &e.path[depth + 1];
                lines[i] = rewrite_flow(&lines[i], field, &e.value, &e.comment)
                    .ok_or_else(|| missing(&e.path, "flow mapping without that field"))?;
                return Ok(());
            }
            Some(i) => {
                parent = Some(i);
                lo = i + 1;
                hi = block_end(lines, i);
            }
            None if last && parent.is_some() => {
                let ind =
                    child_indent.unwrap_or_else(|| parent.map_or(0, |p| indent(&lines[p]) + 2));
                // After the section's last content line (not after comments that follow it).
                let at = (lo..hi)
                    .rev()
                    .find(|&i| is_content(&lines[i]))
                    .map_or(lo, |i| i + 1);
                let body = format!("{}{key}: {}", " ".repeat(ind), e.value);
                // Align the comment with the section's other comments.
                // Align with the nearest sibling `key: value` line that has a comment (section
                // headers such as `attention:` are not siblings with values).
                let col = (lo..at)
                    .rev()
                    .filter(|&i| is_content(&lines[i]) && indent(&lines[i]) == ind)
                    .filter(|&i| {
                        let l = &lines[i];
                        let body = comment_at(l).map_or(l.as_str(), |c| &l[..c]).trim_end();
                        !body.ends_with(':')
                    })
                    .find_map(|i| comment_at(&lines[i]));
                lines.insert(at, set_comment(&body, col, &e.comment));
                return Ok(());
            }
            None if depth == 0 && !last => {
                let at = insert_section(lines, key);
                parent = Some(at);
                lo = at + 1;
                hi = at + 1;
            }
            None => return Err(missing(&e.path, &format!("no `{key}` section"))),
        }
    }
    Err(missing(&e.path, "empty key path"))
}

/// Inserts the empty top-level section `key:` after the block of the section its name extends
/// (`kernels_overheads` after `overheads`), else at the end; returns its line.
fn insert_section(lines: &mut Vec<String>, key: &str) -> usize {
    let base = key.split_once('_').map_or(key, |(_, b)| b);
    let at = lines
        .iter()
        .position(|l| is_content(l) && indent(l) == 0 && key_of(l) == Some(base))
        .map_or(lines.len(), |i| block_end(lines, i));
    lines.insert(at, format!("{key}:"));
    at
}

/// `text` with every edit applied and, when given, the top-level `calibration:` line set to
/// `calibration` (appended when the file has none).
pub fn apply(text: &str, edits: &[Edit], calibration: Option<&str>) -> Result<String> {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for e in edits {
        apply_one(&mut lines, e)?;
    }
    if let Some(c) = calibration {
        let quoted = serde_json::to_string(c).map_err(|e| Error::Msg(e.to_string()))?;
        let line = format!("calibration: {quoted}");
        match lines
            .iter()
            .position(|l| indent(l) == 0 && key_of(l) == Some("calibration"))
        {
            Some(i) => lines[i] = line,
            None => lines.push(line),
        }
    }
    Ok(lines.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# head\nname: x\nefficiency:\n  gemm: 0.85                # datasheet\n  attention:   # per backend\n    fa3: {prefill: 0.60, decode: 0.80}   # guess\n  # a comment\n  memory: 0.8\n# between\noverheads:\n  step_cpu_ns: 2.0e6   # guess\ncalibration: datasheet defaults\n";

    fn edit(path: &[&str], value: &str) -> Edit {
        Edit {
            path: path.iter().map(|s| s.to_string()).collect(),
            value: value.into(),
            comment: "fitted".into(),
        }
    }

    #[test]
    fn edits_scalars_flow_maps_and_inserts() {
        let out = apply(
            TEXT,
            &[
                edit(&["efficiency", "gemm"], "0.5"),
                edit(&["efficiency", "attention", "fa3", "decode"], "0.7"),
                edit(&["efficiency", "moe_gemm"], "0.3"),
                edit(&["overheads", "step_cpu_ns"], "1.5e6"),
            ],
            Some("fitted: see comments"),
        )
        .unwrap();
        let want = "# head\nname: x\nefficiency:\n  gemm: 0.5                 # fitted\n  attention:   # per backend\n    fa3: {prefill: 0.60, decode: 0.7}    # fitted\n  # a comment\n  memory: 0.8\n  moe_gemm: 0.3             # fitted\n# between\noverheads:\n  step_cpu_ns: 1.5e6   # fitted\ncalibration: \"fitted: see comments\"\n";
        assert_eq!(out, want);
        assert!(apply(
            TEXT,
            &[edit(&["efficiency", "attention", "triton", "decode"], "1")],
            None
        )
        .is_err());
    }

    #[test]
    fn creates_a_missing_section_after_the_one_it_extends() {
        let out = apply(
            TEXT,
            &[
                edit(&["kernels_overheads", "layer_ns"], "8e3"),
                edit(&["kernels_overheads", "step_cpu_ns"], "2e6"),
            ],
            None,
        )
        .unwrap();
        let want = "overheads:\n  step_cpu_ns: 2.0e6   # guess\nkernels_overheads:\n  layer_ns: 8e3  # fitted\n  step_cpu_ns: 2e6  # fitted\ncalibration: datasheet defaults\n";
        assert!(out.ends_with(want), "{out}");
    }
}
