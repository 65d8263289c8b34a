//! One converted kernel table (`hardware-profiles/kernels/<system>/<op>.txt`, written by
//! `scripts/import_aiconfigurator.py` from AIConfigurator's parquet files): `#!` header lines
//! (op, system, SGLang version, source, key names, axis name, unit, grid), then one line per key
//! with the latency in µs at each grid point (`-` where not measured). A malformed file fails
//! with one line naming the file and the line.
use crate::error::{Error, Result};
use std::path::Path;

/// One key's measured latencies along the table's axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub key: Vec<String>,
    /// Latency in ns at each grid point, `None` where not measured.
    pub values_ns: Vec<Option<f64>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub op: String,
    pub system: String,
    /// SGLang version the kernels were measured with.
    pub sglang: String,
    pub source: String,
    pub keys: Vec<String>,
    pub axis: String,
    pub grid: Vec<f64>,
    pub rows: Vec<Row>,
}

impl Table {
    /// Parses `text`; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &Path) -> Result<Table> {
        let err = |line: usize, reason: String| Error::Parse {
            path: origin.to_path_buf(),
            line: Some(line),
            reason,
        };
        let mut t = Table {
            op: String::new(),
            system: String::new(),
            sglang: String::new(),
            source: String::new(),
            keys: Vec::new(),
            axis: String::new(),
            grid: Vec::new(),
            rows: Vec::new(),
        };
        let mut unit_scale = None;
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(h) = line.strip_prefix("#!") {
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
                    "sglang" => t.sglang = value.into(),
                    "source" => t.source = value.into(),
                    "keys" => t.keys = value.split_whitespace().map(String::from).collect(),
                    "axis" => t.axis = value.into(),
                    "unit" => {
                        unit_scale = Some(match value {
                            "us" => 1e3,
                            "ms" => 1e6,
                            "ns" => 1.0,
                            u => return Err(err(n, format!("unit `{u}`: expected us, ms or ns"))),
                        })
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
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            let (Some(scale), false, false) = (unit_scale, t.grid.is_empty(), t.keys.is_empty())
            else {
                return Err(err(
                    n,
                    "data before the `#! keys`, `#! unit` and `#! grid` headers".into(),
                ));
            };
            let fields: Vec<&str> = line.split_whitespace().collect();
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
            let (key, vals) = fields.split_at(t.keys.len());
            let values_ns = vals
                .iter()
                .map(|v| match *v {
                    "-" => Ok(None),
                    v => match v.parse::<f64>() {
                        Ok(x) if x > 0.0 && x.is_finite() => Ok(Some(x * scale)),
                        _ => Err(err(
                            n,
                            format!("latency `{v}`: expected a positive number or `-`"),
                        )),
                    },
                })
                .collect::<Result<Vec<_>>>()?;
            t.rows.push(Row {
                key: key.iter().map(|s| s.to_string()).collect(),
                values_ns,
            });
        }
        if t.op.is_empty() || t.grid.is_empty() {
            return Err(err(
                1,
                "not a servesim kernel table (no `#! op` / `#! grid` header)".into(),
            ));
        }
        Ok(t)
    }

    /// Position of key column `name`.
    pub fn key_index(&self, name: &str) -> Option<usize> {
        self.keys.iter().position(|k| k == name)
    }

    /// Rows whose key columns named in `want` equal the given values.
    pub fn select<'a>(
        &'a self,
        want: &'a [(&'a str, String)],
    ) -> impl Iterator<Item = &'a Row> + 'a {
        let idx: Vec<Option<usize>> = want.iter().map(|(k, _)| self.key_index(k)).collect();
        self.rows.iter().filter(move |r| {
            idx.iter()
                .zip(want)
                .all(|(i, (_, v))| i.is_some_and(|i| r.key[i] == *v))
        })
    }

    /// The numeric value of key column `i` of `row` (0 if not a number).
    pub fn num(row: &Row, i: usize) -> f64 {
        row.key[i].parse().unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "#! servesim-kernels 1\n#! op gemm\n#! system x\n#! sglang 0.5.14\n#! keys dtype n k\n#! axis m\n#! unit us\n#! grid 1 2\nbf16 32 32 2.5 -\n";

    #[test]
    fn parses_values_in_ns() {
        let t = Table::parse(T, Path::new("t.txt")).unwrap();
        assert_eq!(t.rows[0].values_ns, vec![Some(2500.0), None]);
        assert_eq!(t.grid, vec![1.0, 2.0]);
    }

    #[test]
    fn bad_row_names_file_and_line() {
        let bad = T.replace("2.5 -", "2.5 x");
        let e = Table::parse(&bad, Path::new("t.txt"))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "t.txt:9: latency `x`: expected a positive number or `-`");
    }
}
