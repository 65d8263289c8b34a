//! Checks every number in a scenario file's YAML before it is read into flags, so the error
//! names the file and the field as written.
use crate::error::{Error, Result};

/// Largest count or length accepted anywhere (2^40).
pub const MAX_COUNT: u64 = 1 << 40;

/// Checks every number in a scenario file's YAML `text` before it is read into flags, so the
/// error names the file and the field as written: NaN, ±infinity and negative numbers are
/// refused (except `client.request-rate: inf` and a negative `server.chunked-prefill-size`,
/// which disables chunking), and so are integers beyond 2^40.
pub fn check_yaml_numbers(text: &str, origin: &std::path::Path) -> Result<()> {
    let Ok(value) = serde_norway::from_str::<serde_norway::Value>(text) else {
        return Ok(()); // the typed parse reports syntax errors with their line
    };
    walk(&value, &mut String::new(), &origin.display().to_string())
}

fn walk(v: &serde_norway::Value, path: &mut String, origin: &str) -> Result<()> {
    use serde_norway::Value;
    match v {
        Value::Mapping(m) => {
            for (k, child) in m {
                let len = path.len();
                let key = match k {
                    Value::String(s) => s.clone(),
                    other => serde_norway::to_string(other)
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                };
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&key);
                walk(child, path, origin)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::Sequence(s) => {
            for (i, child) in s.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(child, path, origin)?;
                path.truncate(len);
            }
            Ok(())
        }
        Value::Tagged(t) => walk(&t.value, path, origin),
        Value::Number(n) => number(n, path, origin),
        _ => Ok(()),
    }
}

fn number(n: &serde_norway::Number, field: &str, origin: &str) -> Result<()> {
    let leaf = field.rsplit('.').next().unwrap_or(field).replace('_', "-");
    let bad = |reason: String| Err(Error::invalid(origin, field, reason));
    if let Some(u) = n.as_u64() {
        if u > MAX_COUNT {
            return bad(format!("{u} is beyond 2^40"));
        }
        return Ok(());
    }
    if let Some(i) = n.as_i64() {
        if leaf == "chunked-prefill-size" && i >= -(MAX_COUNT as i64) {
            return Ok(());
        }
        return bad(format!("must not be negative, got {i}"));
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f.is_nan() {
        bad("must be a number, got NaN".into())
    } else if f == f64::INFINITY && leaf == "request-rate" {
        Ok(())
    } else if f.is_infinite() {
        bad(format!("must be finite, got {f}"))
    } else if f < 0.0 {
        bad(format!("must not be negative, got {f}"))
    } else if f > MAX_COUNT as f64 {
        bad(format!("{f} is beyond 2^40"))
    } else {
        Ok(())
    }
}
