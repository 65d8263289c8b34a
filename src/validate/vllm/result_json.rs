//! The object `vllm bench serve --save-result` (and `benchmark_serving.py --save-result`)
//! writes: every numeric top-level key is kept under its own name (so `mean_ttft_ms`,
//! `p99_itl_ms` and the rest need no table), except the per-request lists. The legacy key
//! `"request_goodput:"` (with a colon, 0.6.4–0.9.1) is read as `request_goodput`;
//! `request_rate` may be the string `"inf"`. `--append-result` files (one object per line) give
//! one result per line.
use super::{VllmResult, REQUIRED};
use crate::error::{Error, Result};
use serde_json::Value;
use std::path::PathBuf;

fn parse_error(source: &str, line: Option<usize>, reason: String) -> Error {
    Error::Parse {
        path: PathBuf::from(source),
        line,
        reason,
    }
}

/// One saved object.
pub fn from_value(v: &Value, source: &str, line: Option<usize>) -> Result<VllmResult> {
    let obj = v
        .as_object()
        .ok_or_else(|| parse_error(source, line, "a vLLM result is a JSON object".into()))?;
    let mut run = VllmResult::default();
    for (k, val) in obj {
        let key = k.trim_end_matches(':').to_string();
        match (key.as_str(), val) {
            ("request_rate", Value::String(s)) if s == "inf" => {
                run.request_rate = Some(f64::INFINITY)
            }
            ("max_concurrency", Value::Number(n)) => run.max_concurrency = n.as_u64(),
            (_, Value::Number(n)) => {
                if key == "request_rate" {
                    run.request_rate = n.as_f64();
                }
                if let Some(x) = n.as_f64() {
                    run.values.insert(key, x);
                }
            }
            _ => {}
        }
    }
    if let Some(missing) = REQUIRED.iter().find(|k| !run.values.contains_key(**k)) {
        return Err(parse_error(
            source,
            line,
            format!("vLLM result JSON without `{missing}`"),
        ));
    }
    Ok(run)
}

/// A `--save-result` file: one object, or one object per line (`--append-result`).
pub fn parse_result_json(text: &str, source: &str) -> Result<Vec<VllmResult>> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Ok(vec![from_value(&v, source, None)?]);
    }
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: Value = serde_json::from_str(line)
            .map_err(|e| parse_error(source, Some(i + 1), format!("not a JSON object: {e}")))?;
        out.push(from_value(&v, source, Some(i + 1))?);
    }
    Ok(out)
}
