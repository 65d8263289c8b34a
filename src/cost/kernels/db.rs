//! A system's kernel tables, bundled in the binary (`hardware-profiles/kernels/<system>/`,
//! converted from NVIDIA AIConfigurator's measured SGLang kernels; see NOTICE) or read from a
//! `--kernel-db DIR` in the same format, and the per-shape curves built from them at resolve.
use super::curve::{locate, Curve, Surface};
use super::table::{Row, Table};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

macro_rules! bundled {
    ($($sys:literal => [$($op:literal),*]),* $(,)?) => {
        &[$($(($sys, $op, include_str!(concat!(
            "../../../hardware-profiles/kernels/", $sys, "/", $op, ".txt"))),)*)*]
    };
}

/// (system, op, text) of every bundled table.
const BUNDLED: &[(&str, &str, &str)] = bundled! {
    "a100_sxm" => ["gemm", "context_attention", "generation_attention", "moe",
                   "custom_allreduce", "nccl_allreduce"],
    "h100_sxm" => ["gemm", "context_attention", "generation_attention", "context_mla",
                   "generation_mla", "moe", "custom_allreduce", "nccl_allreduce"],
    "h200_sxm" => ["gemm", "context_attention", "generation_attention", "context_mla",
                   "generation_mla", "moe", "custom_allreduce", "nccl_allreduce"],
    "b200_sxm" => ["gemm", "context_attention", "generation_attention", "context_mla",
                   "generation_mla", "moe", "custom_allreduce", "nccl_allreduce"],
};

/// The op files a kernel database may hold.
pub const OPS: &[&str] = &[
    "gemm",
    "context_attention",
    "generation_attention",
    "context_mla",
    "generation_mla",
    "moe",
    "custom_allreduce",
    "nccl_allreduce",
];

/// The kernel tables of one system.
#[derive(Debug)]
pub struct KernelDb {
    pub system: String,
    /// Where the tables come from (`bundled` or the directory), for `--explain`.
    pub origin: String,
    tables: BTreeMap<String, Table>,
}

/// Names of the systems with bundled tables.
pub fn bundled_systems() -> Vec<&'static str> {
    let mut v: Vec<&str> = BUNDLED.iter().map(|b| b.0).collect();
    v.dedup();
    v
}

impl KernelDb {
    /// The bundled tables of `system` (parsed once per process).
    pub fn bundled(system: &str) -> Result<Arc<KernelDb>> {
        static CACHE: OnceLock<Mutex<BTreeMap<String, Arc<KernelDb>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(BTreeMap::new()));
        if let Some(db) = cache.lock().map_err(|_| poisoned())?.get(system) {
            return Ok(db.clone());
        }
        let mut tables = BTreeMap::new();
        for (_, op, text) in BUNDLED.iter().filter(|b| b.0 == system) {
            let origin = PathBuf::from(format!("hardware-profiles/kernels/{system}/{op}.txt"));
            tables.insert(op.to_string(), Table::parse(text, &origin)?);
        }
        if tables.is_empty() {
            return Err(Error::Unknown {
                kind: "kernel table system",
                name: system.into(),
                available: bundled_systems().join(", "),
            });
        }
        let db = Arc::new(KernelDb {
            system: system.into(),
            origin: "bundled AIConfigurator 0.12.0 tables".into(),
            tables,
        });
        cache
            .lock()
            .map_err(|_| poisoned())?
            .insert(system.into(), db.clone());
        Ok(db)
    }

    /// Tables converted by `scripts/import_aiconfigurator.py --out DIR`: `DIR/<system>/<op>.txt`,
    /// or `DIR/<op>.txt` directly.
    pub fn from_dir(dir: &Path, system: &str) -> Result<KernelDb> {
        if !dir.is_dir() {
            return Err(Error::invalid(
                "--kernel-db",
                "kernel_db",
                format!("{} is not a directory", dir.display()),
            ));
        }
        let sub = dir.join(system);
        let base = if sub.is_dir() { sub } else { dir.to_path_buf() };
        let mut tables = BTreeMap::new();
        for op in OPS {
            let path = base.join(format!("{op}.txt"));
            if path.exists() {
                let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
                tables.insert(op.to_string(), Table::parse(&text, &path)?);
            }
        }
        if tables.is_empty() {
            return Err(Error::invalid(
                "--kernel-db",
                "kernel_db",
                format!(
                    "{} holds no kernel tables for {system} (expected {}/<op>.txt with op one of {}; convert with scripts/import_aiconfigurator.py)",
                    dir.display(),
                    system,
                    OPS.join(", ")
                ),
            ));
        }
        Ok(KernelDb {
            system: system.into(),
            origin: dir.display().to_string(),
            tables,
        })
    }

    pub fn table(&self, op: &str) -> Option<&Table> {
        self.tables.get(op)
    }

    /// GEMM time over m rows for one (dtype, n, k), interpolated log-log between the table's
    /// n and k grid points (proportional beyond them). The flag says n or k left the grid.
    pub fn gemm(&self, dtype: &str, n: f64, k: f64) -> Option<(Curve, bool)> {
        let t = self.table("gemm")?;
        let want = [("dtype", dtype.to_string())];
        let rows: Vec<&Row> = t.select(&want).collect();
        let (ni, ki) = (t.key_index("n")?, t.key_index("k")?);
        let axis = |i: usize| {
            let mut v: Vec<f64> = rows.iter().map(|r| Table::num(r, i)).collect();
            v.sort_by(f64::total_cmp);
            v.dedup();
            v
        };
        let (ns, ks) = (axis(ni), axis(ki));
        if ns.is_empty() || ks.is_empty() {
            return None;
        }
        let cell: BTreeMap<(u64, u64), &Row> = rows
            .iter()
            .map(|r| ((Table::num(r, ni) as u64, Table::num(r, ki) as u64), *r))
            .collect();
        let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<_>>();
        let (pn, pk) = (locate(&ln(&ns), n), locate(&ln(&ks), k));
        let mut points = Vec::new();
        for (j, &m) in t.grid.iter().enumerate() {
            let at = |a: usize, b: usize| {
                cell.get(&(ns[a] as u64, ks[b] as u64))
                    .and_then(|r| r.values_ns[j])
                    .map(f64::ln)
            };
            let (Some(a), Some(b), Some(c), Some(d)) = (
                at(pn.lo, pk.lo),
                at(pn.hi, pk.lo),
                at(pn.lo, pk.hi),
                at(pn.hi, pk.hi),
            ) else {
                continue;
            };
            let lo = a + pn.t * (b - a);
            let hi = c + pn.t * (d - c);
            points.push((m, (lo + pk.t * (hi - lo)).exp() * pn.scale * pk.scale));
        }
        Curve::new(&points, true).map(|c| (c, pn.outside || pk.outside))
    }

    /// A 1-D table's curve for the exact key `want`.
    pub fn curve(&self, op: &str, want: &[(&str, String)]) -> Option<Curve> {
        let t = self.table(op)?;
        let row = t.select(want).next()?;
        let pts: Vec<(f64, f64)> = t
            .grid
            .iter()
            .zip(&row.values_ns)
            .filter_map(|(&x, v)| v.map(|v| (x, v)))
            .collect();
        Curve::new(&pts, true)
    }

    /// A surface batch × axis from the rows matching `want`, whose `batch` key column gives x.
    pub fn surface(&self, op: &str, want: &[(&str, String)]) -> Option<Surface> {
        let t = self.table(op)?;
        let bi = t.key_index("batch")?;
        let mut by_batch: BTreeMap<u64, &Row> = BTreeMap::new();
        for r in t.select(want) {
            by_batch.entry(Table::num(r, bi) as u64).or_insert(r);
        }
        let xs: Vec<f64> = by_batch.keys().map(|&b| b as f64).collect();
        let vals: Vec<Vec<Option<f64>>> = by_batch.values().map(|r| r.values_ns.clone()).collect();
        Surface::new(&xs, &t.grid, &vals)
    }

    /// Distinct values of key columns `cols` among rows matching `want`.
    pub fn key_values(&self, op: &str, want: &[(&str, String)], cols: &[&str]) -> Vec<Vec<String>> {
        let Some(t) = self.table(op) else {
            return Vec::new();
        };
        let idx: Vec<usize> = cols.iter().filter_map(|c| t.key_index(c)).collect();
        if idx.len() != cols.len() {
            return Vec::new();
        }
        let mut v: Vec<Vec<String>> = t
            .select(want)
            .map(|r| idx.iter().map(|&i| r.key[i].clone()).collect())
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

fn poisoned() -> Error {
    Error::Msg("kernel table cache poisoned by an earlier panic".into())
}
