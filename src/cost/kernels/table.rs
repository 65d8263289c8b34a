//! One converted kernel table (`hardware-profiles/kernels/<system>/<op>.txt`, written by
//! `scripts/import_aiconfigurator.py` from AIConfigurator's parquet files): `#!` header lines
//! (op, system, SGLang version, source, key names, axis name, unit, grid), then one line per key,
//! sorted by key (numbers numerically, before words), with the latency at each grid point (`-`
//! where not measured). The data lines' positions are found in one pass on a table's first
//! lookup; rows are then found by binary search and parsed only when used, so building a
//! deployment's curves parses a few kB whatever the table's size. A user's table
//! (`--kernel-db`) is checked line by line first: a malformed one fails with one line naming
//! the file and the line.
use crate::error::{Error, Result};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::path::Path;
use std::sync::OnceLock;

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
    /// The data lines, indexed on first use ([`Table::lines`]).
    lines: OnceLock<Vec<(usize, usize)>>,
}

/// One key field of a lookup, parsed once: a number, or a word.
#[derive(Debug, Clone, Copy)]
enum Field<'a> {
    Num(f64),
    Word(&'a str),
}

impl<'a> Field<'a> {
    fn new(s: &'a str) -> Field<'a> {
        match parse_num(s) {
            Some(x) => Field::Num(x),
            None => Field::Word(s),
        }
    }
}

/// `s` as a number, as `str::parse::<f64>` reads it (plain digit strings of up to 15 digits,
/// the tables' keys, without the general parser: every such integer is exact in an f64).
fn parse_num(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if !b.is_empty() && b.len() <= 15 && b.iter().all(u8::is_ascii_digit) {
        return Some(b.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')) as f64);
    }
    s.parse::<f64>().ok()
}

/// Compares one key field of a line with a lookup's: numbers numerically and before words,
/// words bytewise (the converter's sort order).
fn cmp_field(a: &str, b: Field) -> Ordering {
    match (parse_num(a), b) {
        (Some(x), Field::Num(y)) => x.total_cmp(&y),
        (Some(_), Field::Word(_)) => Ordering::Less,
        (None, Field::Num(_)) => Ordering::Greater,
        (None, Field::Word(w)) => a.cmp(w),
    }
}

/// Compares a line's first `want.len()` key fields with `want`.
fn cmp_prefix(line: &str, want: &[Field]) -> Ordering {
    let mut fields = line.split_ascii_whitespace();
    for &w in want {
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

/// `want` parsed for [`cmp_prefix`].
fn parse_key(want: &[String]) -> Vec<Field<'_>> {
    want.iter().map(|w| Field::new(w)).collect()
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
                if cmp_prefix(p, &parse_key(&key)) != Ordering::Less {
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
            lines: OnceLock::new(),
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

    /// (start, end) bytes of every non-empty data line, trailing blanks trimmed: found once,
    /// on the first lookup, so a lookup's binary search reads only the lines it compares.
    fn lines(&self) -> &[(usize, usize)] {
        self.lines.get_or_init(|| {
            let text = &self.text[..];
            let ends = memchr::memchr_iter(b'\n', &text.as_bytes()[self.body..])
                .map(|i| self.body + i + 1)
                .chain((!text.ends_with('\n')).then_some(text.len()));
            let mut out = Vec::new();
            let mut start = self.body;
            for end in ends {
                let line = text[start..end].trim_end();
                if !line.trim_start().is_empty() {
                    out.push((start, start + line.len()));
                }
                start = end;
            }
            out
        })
    }

    fn line(&self, i: usize) -> &str {
        let (start, end) = self.lines()[i];
        &self.text[start..end]
    }

    /// Index of the first data line whose key prefix is ≥ `want` (`upper`: > `want`), from
    /// line `from` on (every line before `from` must be below).
    fn bound(&self, want: &[Field], upper: bool, from: usize) -> usize {
        let (mut lo, mut hi) = (from, self.lines().len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let o = cmp_prefix(self.line(mid), want);
            if o == Ordering::Less || (upper && o == Ordering::Equal) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Parsed rows whose first key fields equal `want`, in key order.
    pub fn rows_with(&self, want: &[String]) -> Vec<Row> {
        let want_f = parse_key(want);
        let n = self.lines().len();
        (self.bound(&want_f, false, 0)..n)
            .map(|i| self.line(i))
            .take_while(|line| cmp_prefix(line, &want_f) == Ordering::Equal)
            .map(|line| self.row(line))
            .collect()
    }

    /// The distinct values of key field `want.len()` among rows whose first fields equal `want`.
    pub fn distinct_next(&self, want: &[String]) -> Vec<String> {
        let want_f = parse_key(want);
        let mut out = Vec::new();
        let mut at = self.bound(&want_f, false, 0);
        while at < self.lines().len() {
            let line = self.line(at);
            if cmp_prefix(line, &want_f) != Ordering::Equal {
                break;
            }
            let Some(v) = line.split_ascii_whitespace().nth(want.len()) else {
                break;
            };
            let mut prefix = want_f.clone();
            prefix.push(Field::new(v));
            out.push(v.to_string());
            at = self.bound(&prefix, true, at);
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
    fn fast_key_parse_reads_numbers_as_the_float_parser_does() {
        for s in [
            "0",
            "007",
            "64",
            "131072",
            "999999999999999",
            "1234567890123456",
            "1e3",
            "2.5",
            "-4",
            "+4",
            "inf",
            "fa3",
            "bf16",
            "-",
            "",
        ] {
            assert_eq!(parse_num(s), s.parse::<f64>().ok(), "{s}");
        }
    }

    #[test]
    fn lookups_skip_blank_lines_and_read_a_last_line_without_newline() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let text = T.replace("bf16 128 32", "\n  \nbf16 128 32");
        let text = text.trim_end();
        let t = Table::parse(text, Path::new("t.txt")).unwrap();
        assert_eq!(t.rows().len(), 4);
        assert_eq!(t.distinct_next(&s(&["bf16"])), s(&["32", "128"]));
        assert_eq!(
            t.rows_with(&s(&["fp8", "32", "32"]))[0].values_ns,
            vec![Some(1000.0), Some(1000.0)]
        );
        assert_eq!(t.rows_with(&s(&["bf16", "128"])).len(), 1);
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
