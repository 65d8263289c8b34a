//! A system's kernel tables, bundled in the binary (`hardware-profiles/kernels/<system>/`,
//! converted from NVIDIA AIConfigurator's measured SGLang kernels, and vLLM's in
//! `<system>_vllm/`; see NOTICE) or read from a
//! `--kernel-db DIR` in the same format, and the per-shape curves built from them at resolve.
use super::curve::{locate, Curve, Surface};
use super::table::Table;
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
    // vLLM's kernels (no MLA tables: AIConfigurator has only module-level vLLM MLA rows).
    "a100_sxm_vllm" => ["gemm", "context_attention", "generation_attention", "moe",
                        "custom_allreduce", "nccl_allreduce"],
    "h100_sxm_vllm" => ["gemm", "context_attention", "generation_attention", "moe",
                        "custom_allreduce", "nccl_allreduce"],
    "h200_sxm_vllm" => ["gemm", "context_attention", "generation_attention", "moe",
                        "custom_allreduce", "nccl_allreduce"],
    "b200_sxm_vllm" => ["gemm", "context_attention", "generation_attention", "moe",
                        "custom_allreduce", "nccl_allreduce"],
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
    /// GEMM n and k grid levels per dtype, found once.
    gemm_levels: GemmLevels,
    /// GEMM curves already built, by (dtype, n bits, k bits): a sweep resolves the same
    /// shapes again and again.
    gemm_curves: GemmCurves,
}

/// (dtype, n bits, k bits) → the curve and its off-grid flag.
type GemmCurves = Mutex<BTreeMap<(String, u64, u64), Option<(Curve, bool)>>>;
type GemmLevels = Mutex<BTreeMap<String, Option<Arc<(Vec<f64>, Vec<f64>)>>>>;

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
            tables.insert(op.to_string(), Table::trusted(text, &origin)?);
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
            gemm_levels: Mutex::default(),
            gemm_curves: Mutex::default(),
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
            gemm_levels: Mutex::default(),
            gemm_curves: Mutex::default(),
        })
    }

    pub fn table(&self, op: &str) -> Option<&Table> {
        self.tables.get(op)
    }

    /// GEMM time over m rows for one (dtype, n, k), interpolated log-log between the table's
    /// n and k grid points (proportional beyond them). The flag says n or k left the grid.
    pub fn gemm(&self, dtype: &str, n: f64, k: f64) -> Option<(Curve, bool)> {
        let key = (dtype.to_string(), n.to_bits(), k.to_bits());
        if let Some(c) = self.gemm_curves.lock().ok()?.get(&key) {
            return c.clone();
        }
        let c = self.build_gemm(dtype, n, k);
        self.gemm_curves.lock().ok()?.insert(key, c.clone());
        c
    }

    fn build_gemm(&self, dtype: &str, n: f64, k: f64) -> Option<(Curve, bool)> {
        let t = self.table("gemm")?;
        let d = dtype.to_string();
        let levels = self.gemm_levels(t, &d)?;
        let (ns, ks) = (&levels.0, &levels.1);
        let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<_>>();
        let (pn, pk) = (locate(&ln(ns), n), locate(&ln(ks), k));
        let corner = |a: usize, b: usize| {
            t.rows_with(&[d.clone(), ns[a].to_string(), ks[b].to_string()])
                .into_iter()
                .next()
                .map(|r| r.values_ns)
        };
        let (c00, c10, c01, c11) = (
            corner(pn.lo, pk.lo)?,
            corner(pn.hi, pk.lo)?,
            corner(pn.lo, pk.hi)?,
            corner(pn.hi, pk.hi)?,
        );
        let mut points = Vec::new();
        for (j, &m) in t.grid.iter().enumerate() {
            let (Some(a), Some(b), Some(c), Some(e)) = (c00[j], c10[j], c01[j], c11[j]) else {
                continue;
            };
            let (a, b, c, e) = (a.ln(), b.ln(), c.ln(), e.ln());
            let lo = a + pn.t * (b - a);
            let hi = c + pn.t * (e - c);
            points.push((m, (lo + pk.t * (hi - lo)).exp() * pn.scale * pk.scale));
        }
        Curve::new(&points, true).map(|c| (c, pn.outside || pk.outside))
    }

    /// The n levels of `dtype`'s GEMM rows and the k levels under the first n (the grid).
    fn gemm_levels(&self, t: &Table, d: &str) -> Option<Arc<(Vec<f64>, Vec<f64>)>> {
        let mut cache = self.gemm_levels.lock().ok()?;
        cache
            .entry(d.to_string())
            .or_insert_with(|| {
                let nums = |v: Vec<String>| -> Vec<f64> {
                    v.iter().filter_map(|x| x.parse().ok()).collect()
                };
                let ns = nums(t.distinct_next(&[d.to_string()]));
                let ks = nums(t.distinct_next(&[d.to_string(), ns.first()?.to_string()]));
                (!ks.is_empty()).then(|| Arc::new((ns, ks)))
            })
            .clone()
    }

    /// A 1-D table's curve for the exact key `key`.
    pub fn curve(&self, op: &str, key: &[String]) -> Option<Curve> {
        let t = self.table(op)?;
        let row = t.rows_with(key).into_iter().next()?;
        let pts: Vec<(f64, f64)> = t
            .grid
            .iter()
            .zip(&row.values_ns)
            .filter_map(|(&x, v)| v.map(|v| (x, v)))
            .collect();
        Curve::new(&pts, true)
    }

    /// A surface batch × axis from the rows under key prefix `prefix`, whose next (last) key
    /// field is the batch size.
    pub fn surface(&self, op: &str, prefix: &[String]) -> Option<Surface> {
        let t = self.table(op)?;
        let rows = t.rows_with(prefix);
        let xs: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.key.get(prefix.len())?.parse().ok())
            .collect();
        if xs.len() != rows.len() {
            return None;
        }
        let vals: Vec<Vec<Option<f64>>> = rows.into_iter().map(|r| r.values_ns).collect();
        Surface::new(&xs, &t.grid, &vals)
    }

    /// The distinct values of the key field after `prefix`.
    pub fn next_values(&self, op: &str, prefix: &[String]) -> Vec<String> {
        self.table(op)
            .map_or(Vec::new(), |t| t.distinct_next(prefix))
    }
}

fn poisoned() -> Error {
    Error::Msg("kernel table cache poisoned by an earlier panic".into())
}
