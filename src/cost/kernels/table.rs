//! One converted kernel table (`hardware-profiles/kernels/<system>/<op>.txt`, written by
//! `scripts/import_aiconfigurator.py` from AIConfigurator's parquet files): `#!` header lines
//! (op, system, SGLang version, source, key names, axis name, unit, grid), then one line per key,
//! sorted by key (numbers numerically, before words), with the latency at each grid point (`-`
//! where not measured). Rows are found by binary search in the text and parsed only when used,
//! so building a deployment's curves reads a few kB whatever the table's size. A user's table
//! (`--kernel-db`) is checked line by line first: a malformed one fails with one line naming
//! the file and the line.
use crate::error::{Error, Result};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::path::Path;

/// One key's measured latencies along the table's axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub key: Vec<String>,
    /// Latency in ns at each grid point, `None` where not measured.
    pub values_ns: Vec<Option<f64>>,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub op: String,
    pub system: String,
    /// Engine version the kernels were measured with (SGLang's, or vLLM's when
    /// `framework` is `vllm`).
    pub sglang: String,
    /// Whose kernels: `sglang` (the `#! sglang V` header) or `vllm` (`#! vllm V`).
    pub framework: String,
    pub source: String,
    pub keys: Vec<String>,
    pub axis: String,
    pub grid: Vec<f64>,
    /// ns per stored unit.
    scale: f64,
    text: Cow<'static, str>,
    /// Byte offset of the first data line.
    body: usize,
}

/// Compares one key field: numbers numerically and before words, words bytewise (the
/// converter's sort order).
fn cmp_field(a: &str, b: &str) -> Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// Compares a line's first `want.len()` key fields with `want`.
fn cmp_prefix(line: &str, want: &[String]) -> Ordering {
    let mut fields = line.split_ascii_whitespace();
    for w in want {
        match fields.next() {
            None => return Ordering::Less,
            Some(f) => match cmp_field(f, w) {
                Ordering::Equal => {}
                o => return o,
            },
        }
    }
    Ordering::Equal
}

impl Table {
    /// Parses the header of `text` and checks every data line (a user's table); `origin`
    /// names the file in errors.
    pub fn parse(text: &str, origin: &Path) -> Result<Table> {
        let t = Self::header(Cow::Owned(text.to_string()), origin)?;
        let err = |line: usize, reason: String| Error::Parse {
            path: origin.to_path_buf(),
            line: Some(line),
            reason,
        };
        let first_line = text[..t.body].lines().count() + 1;
        let mut prev: Option<&str> = None;
        for (i, line) in text[t.body..].lines().enumerate() {
            let n = first_line + i;
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split_ascii_whitespace().collect();
            let want = t.keys.len() + t.grid.len();
            if fields.len() != want {
                return Err(err(
                    n,
                    format!(
                        "{} fields; expected {} keys + {} grid values = {want}",
                        fields.len(),
                        t.keys.len(),
                        t.grid.len()
                    ),
                ));
            }
            for v in &fields[t.keys.len()..] {
                if *v != "-" && !v.parse::<f64>().is_ok_and(|x| x > 0.0 && x.is_finite()) {
                    return Err(err(
                        n,
                        format!("latency `{v}`: expected a positive number or `-`"),
                    ));
                }
            }
            if let Some(p) = prev {
                let key: Vec<String> = fields[..t.keys.len()]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                if cmp_prefix(p, &key) != Ordering::Less {
                    return Err(err(
                        n,
                        "rows not sorted by key (numbers numerically, then words); regenerate with scripts/import_aiconfigurator.py".into(),
                    ));
                }
            }
            prev = Some(line);
        }
        Ok(t)
    }

    /// Parses only the header (a bundled table, checked by the tests).
    pub fn trusted(text: &'static str, origin: &Path) -> Result<Table> {
        Self::header(Cow::Borrowed(text), origin)
    }

    fn header(text: Cow<'static, str>, origin: &Path) -> Result<Table> {
        let err = |line: usize, reason: String| Error::Parse {
            path: origin.to_path_buf(),
            line: Some(line),
            reason,
        };
        let mut t = Table {
            op: String::new(),
            system: String::new(),
            sglang: String::new(),
            framework: "sglang".into(),
            source: String::new(),
            keys: Vec::new(),
            axis: String::new(),
            grid: Vec::new(),
            scale: 0.0,
            text: Cow::Borrowed(""),
            body: text.len(),
        };
        let mut offset = 0;
        let src: &str = &text;
        for (i, raw) in src.split_inclusive('\n').enumerate() {
            let n = i + 1;
            let line = raw.trim();
            let Some(h) = line.strip_prefix('#') else {
                if !line.is_empty() {
                    t.body = offset;
                    break;
                }
                offset += raw.len();
                continue;
            };
            offset += raw.len();
            let Some(h) = h.strip_prefix('!') else {
                continue;
            };
            let (name, value) = h.trim().split_once(' ').unwrap_or((h.trim(), ""));
            let value = value.trim();
            match name {
                "servesim-kernels" if value == "1" => {}
                "servesim-kernels" => {
                    return Err(err(
                        n,
                        format!("format version {value}; this servesim reads 1"),
                    ))
                }
                "op" => t.op = value.into(),
                "system" => t.system = value.into(),
                "sglang" | "vllm" => {
                    t.sglang = value.into();
                    t.framework = name.into();
                }
                "source" => t.source = value.into(),
                "keys" => t.keys = value.split_whitespace().map(String::from).collect(),
                "axis" => t.axis = value.into(),
                "unit" => {
                    t.scale = match value {
                        "us" => 1e3,
                        "ms" => 1e6,
                        "ns" => 1.0,
                        u => return Err(err(n, format!("unit `{u}`: expected us, ms or ns"))),
                    }
                }
                "grid" => {
                    t.grid = value
                        .split_whitespace()
                        .map(|v| v.parse::<f64>().ok().filter(|x| *x > 0.0 && x.is_finite()))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| err(n, "grid: expected positive numbers".into()))?;
                    if t.grid.is_empty() || t.grid.windows(2).any(|w| w[0] >= w[1]) {
                        return Err(err(n, "grid: expected increasing values".into()));
                    }
                }
                other => return Err(err(n, format!("unknown header `{other}`"))),
            }
        }
        t.text = text;
        if t.op.is_empty() || t.grid.is_empty() || t.keys.is_empty() || t.scale == 0.0 {
            return Err(err(
                1,
                "not a servesim kernel table (needs `#! op`, `#! keys`, `#! unit` and `#! grid` headers before the data)".into(),
            ));
        }
        Ok(t)
    }

    /// Position of key column `name`.
    pub fn key_index(&self, name: &str) -> Option<usize> {
        self.keys.iter().position(|k| k == name)
    }

    /// The data line starting at byte `at` (which must be a line start), and the next start.
    fn line_at(&self, at: usize) -> (&str, usize) {
        let rest = &self.text[at..];
        let end = rest.find('\n').map_or(rest.len(), |e| e + 1);
        (rest[..end].trim_end(), at + end)
    }

    /// Start of the line containing byte `at`.
    fn line_start(&self, at: usize) -> usize {
        self.text[self.body..at]
            .rfind('\n')
            .map_or(self.body, |i| self.body + i + 1)
    }

    /// Byte offset of the first line whose key prefix is ≥ `want` (`upper`: > `want`).
    fn bound(&self, want: &[String], upper: bool) -> usize {
        let (mut lo, mut hi) = (self.body, self.text.len());
        // Invariant: every line starting before `lo` is below; every line starting at or after
        // `hi` is at or above the bound.
        while lo < hi {
            let mid = self.line_start(lo + (hi - lo) / 2);
            let start = mid.max(lo);
            let (line, next) = self.line_at(start);
            let o = cmp_prefix(line, want);
            let below = o == Ordering::Less || (upper && o == Ordering::Equal);
            if line.is_empty() && next >= hi {
                hi = start;
            } else if below {
                lo = next;
            } else {
                hi = start;
            }
        }
        lo
    }

    /// Parsed rows whose first key fields equal `want`, in key order.
    pub fn rows_with(&self, want: &[String]) -> Vec<Row> {
        let mut at = self.bound(want, false);
        let mut out = Vec::new();
        while at < self.text.len() {
            let (line, next) = self.line_at(at);
            if line.is_empty() || cmp_prefix(line, want) != Ordering::Equal {
                break;
            }
            out.push(self.row(line));
            at = next;
        }
        out
    }

    /// The distinct values of key field `want.len()` among rows whose first fields equal `want`.
    pub fn distinct_next(&self, want: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        let mut at = self.bound(want, false);
        let mut prefix = want.to_vec();
        while at < self.text.len() {
            let (line, _) = self.line_at(at);
            if line.is_empty() || cmp_prefix(line, want) != Ordering::Equal {
                break;
            }
            let Some(v) = line.split_ascii_whitespace().nth(want.len()) else {
                break;
            };
            out.push(v.to_string());
            prefix.truncate(want.len());
            prefix.push(v.to_string());
            at = self.bound(&prefix, true);
        }
        out
    }

    fn row(&self, line: &str) -> Row {
        let mut fields = line.split_ascii_whitespace();
        let key = fields
            .by_ref()
            .take(self.keys.len())
            .map(String::from)
            .collect();
        let values_ns = fields
            .map(|v| {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| *x > 0.0)
                    .map(|x| x * self.scale)
            })
            .collect();
        Row { key, values_ns }
    }

    /// Every row (tests, tools).
    pub fn rows(&self) -> Vec<Row> {
        self.rows_with(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "#! servesim-kernels 1\n#! op gemm\n#! system x\n#! sglang 0.5.14\n#! keys dtype n k\n#! axis m\n#! unit us\n#! grid 1 2\nbf16 32 32 2.5 -\nbf16 32 64 3 4\nbf16 128 32 5 6\nfp8 32 32 1 1\n";

    #[test]
    fn parses_values_in_ns_and_finds_rows_by_key() {
        let t = Table::parse(T, Path::new("t.txt")).unwrap();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            t.rows_with(&s(&["bf16", "32", "32"]))[0].values_ns,
            vec![Some(2500.0), None]
        );
        assert_eq!(t.rows_with(&s(&["bf16"])).len(), 3);
        assert_eq!(t.distinct_next(&s(&["bf16"])), s(&["32", "128"]));
        assert_eq!(t.distinct_next(&[]), s(&["bf16", "fp8"]));
        assert!(t.rows_with(&s(&["bf16", "64"])).is_empty());
        assert_eq!(t.rows().len(), 4);
    }

    #[test]
    fn bad_row_names_file_and_line() {
        let bad = T.replace("2.5 -", "2.5 x");
        let e = Table::parse(&bad, Path::new("t.txt"))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "t.txt:9: latency `x`: expected a positive number or `-`");
        let unsorted = T.replace("bf16 128 32", "bf16 16 32");
        let e = Table::parse(&unsorted, Path::new("t.txt"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("t.txt:11: rows not sorted"), "{e}");
    }
}
