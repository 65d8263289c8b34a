//! A system's kernel tables, bundled in the binary (`hardware-profiles/kernels/<system>/<SGLang
//! version>/`, converted from NVIDIA AIConfigurator's measured SGLang kernels, and vLLM's in
//! `<system>_vllm/`; see NOTICE) or read from a `--kernel-db DIR` in the same format, and the
//! per-shape curves built from them at resolve. With several SGLang versions, each op holds its
//! tables in the order the run's version prefers them ([`super::versions`]); a lookup takes the
//! first version that has the shape, and tags its curve with that version for `--explain`.
use super::curve::{locate, Curve, Surface};
use super::table::Table;
use super::versions;
use crate::error::{Error, Result};
use crate::spec::version::Version;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

macro_rules! bundled {
    ($($sys:literal / $ver:literal => [$($op:literal),*]),* $(,)?) => {
        &[$($(($sys, $ver, $op, include_str!(concat!(
            "../../../hardware-profiles/kernels/", $sys, "/", $ver, $op, ".txt"))),)*)*]
    };
}

/// (system, `<SGLang version>/` or "" for vLLM's one version, op, text) of every bundled table.
const BUNDLED: &[(&str, &str, &str, &str)] = bundled! {
    "a100_sxm" / "0.5.9/" => ["custom_allreduce"],
    "a100_sxm" / "0.5.10/" => ["gemm", "context_attention", "generation_attention", "moe",
                               "custom_allreduce", "nccl_allreduce", "context_gdn",
                               "generation_gdn"],
    "h100_sxm" / "0.5.6.post2/" => ["gemm"],
    "h100_sxm" / "0.5.9/" => ["custom_allreduce"],
    "h100_sxm" / "0.5.10/" => ["moe", "custom_allreduce"],
    "h100_sxm" / "0.5.14/" => ["gemm", "context_attention", "generation_attention", "context_mla",
                               "generation_mla", "moe", "custom_allreduce", "nccl_allreduce",
                               "context_gdn", "generation_gdn"],
    "h200_sxm" / "0.5.9/" => ["custom_allreduce"],
    "h200_sxm" / "0.5.10/" => ["moe", "custom_allreduce"],
    "h200_sxm" / "0.5.14/" => ["gemm", "context_attention", "generation_attention", "context_mla",
                               "generation_mla", "moe", "custom_allreduce", "nccl_allreduce",
                               "context_gdn", "generation_gdn"],
    "b200_sxm" / "0.5.9/" => ["custom_allreduce", "moe_triton"],
    "b200_sxm" / "0.5.10/" => ["custom_allreduce"],
    "b200_sxm" / "0.5.14/" => ["gemm", "context_attention", "generation_attention", "context_mla",
                               "generation_mla", "moe", "custom_allreduce", "nccl_allreduce",
                               "context_gdn", "generation_gdn", "moe_triton"],
    "b300_sxm" / "0.5.9/" => ["custom_allreduce", "moe_triton"],
    "b300_sxm" / "0.5.10/" => ["custom_allreduce"],
    "b300_sxm" / "0.5.14/" => ["gemm", "context_attention", "generation_attention", "context_mla",
                               "generation_mla", "moe", "custom_allreduce", "nccl_allreduce",
                               "context_gdn", "generation_gdn", "moe_triton"],
    "gb200" / "0.5.9/" => ["custom_allreduce", "moe_triton"],
    "gb200" / "0.5.10/" => ["custom_allreduce"],
    "gb200" / "0.5.14/" => ["gemm", "context_attention", "generation_attention", "context_mla",
                            "generation_mla", "moe", "custom_allreduce", "nccl_allreduce",
                            "context_gdn", "generation_gdn", "moe_triton"],
    "l40s" / "0.5.10/" => ["custom_allreduce"],
    "l40s" / "0.5.12/" => ["custom_allreduce"],
    "l40s" / "0.5.14/" => ["gemm", "context_attention", "generation_attention", "context_mla",
                           "generation_mla", "moe", "custom_allreduce", "nccl_allreduce",
                           "context_gdn", "generation_gdn"],
    "rtx_pro_6000_server" / "0.5.10/" => ["custom_allreduce"],
    "rtx_pro_6000_server" / "0.5.14/" => ["gemm", "context_attention", "generation_attention",
                                          "context_mla", "generation_mla", "moe",
                                          "custom_allreduce", "nccl_allreduce",
                                          "context_gdn", "generation_gdn"],
    // vLLM's kernels, one version each (no MLA tables: AIConfigurator has only module-level
    // vLLM MLA rows).
    "a100_sxm_vllm" / "" => ["gemm", "context_attention", "generation_attention", "moe",
                             "custom_allreduce", "nccl_allreduce"],
    "h100_sxm_vllm" / "" => ["gemm", "context_attention", "generation_attention", "moe",
                             "custom_allreduce", "nccl_allreduce"],
    "h200_sxm_vllm" / "" => ["gemm", "context_attention", "generation_attention", "moe",
                             "custom_allreduce", "nccl_allreduce"],
    "b200_sxm_vllm" / "" => ["gemm", "context_attention", "generation_attention", "moe",
                             "custom_allreduce", "nccl_allreduce"],
    "b300_sxm_vllm" / "" => ["gemm", "context_attention", "generation_attention", "moe",
                             "custom_allreduce", "nccl_allreduce"],
    "gb200_vllm" / "" => ["gemm", "context_attention", "generation_attention", "moe",
                          "custom_allreduce", "nccl_allreduce"],
    // AIConfigurator's l40s vLLM slot (0.24.0) has no custom all-reduce rows (only 0.14.0 and
    // 0.22.0 directories hold them).
    "l40s_vllm" / "" => ["gemm", "context_attention", "generation_attention", "moe",
                         "nccl_allreduce"],
    "rtx_pro_6000_server_vllm" / "" => ["gemm", "context_attention", "generation_attention",
                                        "moe", "custom_allreduce", "nccl_allreduce"],
};

/// The op files a kernel database may hold.
pub const OPS: &[&str] = &[
    "gemm",
    "context_attention",
    "generation_attention",
    "context_mla",
    "generation_mla",
    "moe",
    // SGLang's triton fused MoE on sm100, apart from `moe` (`cost::moe_lane`).
    "moe_triton",
    "custom_allreduce",
    "nccl_allreduce",
    "context_gdn",
    "generation_gdn",
];

/// The kernel tables of one system, for one run's SGLang version.
#[derive(Debug)]
pub struct KernelDb {
    pub system: String,
    /// Where the tables come from (`bundled` or the directory), for `--explain`.
    pub origin: String,
    /// Per op, its tables in the order the run's version prefers them (one without versions).
    tables: BTreeMap<String, Vec<Table>>,
    /// "priced with SGLang X tables; run is Y" when the run lies outside the tables' versions.
    span_note: Option<String>,
    /// GEMM n and k grid levels per (table, dtype), found once.
    gemm_levels: GemmLevels,
    /// GEMM curves already built, by (dtype, n bits, k bits): a sweep resolves the same
    /// shapes again and again.
    gemm_curves: GemmCurves,
}

/// (dtype, n bits, k bits) → the curve and its off-grid flag.
type GemmCurves = Mutex<BTreeMap<(String, u64, u64), Option<(Curve, bool)>>>;
type GemmLevels = Mutex<BTreeMap<(usize, String), Option<Arc<(Vec<f64>, Vec<f64>)>>>>;

/// One version's tables by op (`version` `None`: a table set without versions).
type Layer = (Option<Version>, BTreeMap<String, Table>);

/// Names of the systems with bundled tables.
pub fn bundled_systems() -> Vec<&'static str> {
    let mut v: Vec<&str> = BUNDLED.iter().map(|b| b.0).collect();
    v.dedup();
    v
}

/// The SGLang versions of `system`'s bundled tables, oldest first, each with its ops (empty
/// for a system without versions, as vLLM's).
pub fn bundled_versions(system: &str) -> Vec<(Version, Vec<&'static str>)> {
    let mut out: Vec<(Version, Vec<&str>)> = Vec::new();
    for (_, ver, op, _) in BUNDLED.iter().filter(|b| b.0 == system) {
        let Ok(v) = ver.trim_end_matches('/').parse::<Version>() else {
            continue;
        };
        match out.iter_mut().find(|(x, _)| *x == v) {
            Some((_, ops)) => ops.push(op),
            None => out.push((v, vec![op])),
        }
    }
    out.sort_by_key(|(v, _)| *v);
    out
}

impl KernelDb {
    /// The bundled tables of `system` for a run at SGLang `run` (parsed once per process).
    pub fn bundled(system: &str, run: Version) -> Result<Arc<KernelDb>> {
        type Cache = Mutex<BTreeMap<(String, Version), Arc<KernelDb>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(BTreeMap::new()));
        let key = (system.to_string(), run);
        if let Some(db) = cache.lock().map_err(|_| poisoned())?.get(&key) {
            return Ok(db.clone());
        }
        let mut layers: Vec<Layer> = Vec::new();
        for (_, ver, op, text) in BUNDLED.iter().filter(|b| b.0 == system) {
            let origin = PathBuf::from(format!("hardware-profiles/kernels/{system}/{ver}{op}.txt"));
            let version = ver.trim_end_matches('/').parse::<Version>().ok();
            let table = Table::trusted(text, &origin)?;
            match layers.iter_mut().find(|l| l.0 == version) {
                Some(l) => {
                    l.1.insert(op.to_string(), table);
                }
                None => layers.push((version, BTreeMap::from([(op.to_string(), table)]))),
            }
        }
        if layers.is_empty() {
            return Err(Error::Unknown {
                kind: "kernel table system",
                name: system.into(),
                available: bundled_systems().join(", "),
            });
        }
        let db = Arc::new(KernelDb::assemble(
            system,
            "bundled AIConfigurator 0.12.0 tables".into(),
            layers,
            run,
        ));
        cache
            .lock()
            .map_err(|_| poisoned())?
            .insert(key, db.clone());
        Ok(db)
    }

    /// The database of `layers`, each op's tables ordered by the versions `run` prefers.
    fn assemble(system: &str, origin: String, layers: Vec<Layer>, run: Version) -> KernelDb {
        let versions: Vec<Version> = layers.iter().filter_map(|l| l.0).collect();
        let order = if versions.len() == layers.len() {
            versions::preference(run, &versions)
        } else {
            (0..layers.len()).collect()
        };
        let mut tables: BTreeMap<String, Vec<Table>> = BTreeMap::new();
        let mut first: BTreeMap<String, Version> = BTreeMap::new();
        let mut layers: Vec<Option<Layer>> = layers.into_iter().map(Some).collect();
        for i in order {
            let Some((version, ops)) = layers[i].take() else {
                continue;
            };
            for (op, t) in ops {
                if let Some(v) = version {
                    first.entry(op.clone()).or_insert(v);
                }
                tables.entry(op).or_default().push(t);
            }
        }
        let used: Vec<Version> = first.into_values().collect();
        KernelDb {
            system: system.into(),
            origin,
            tables,
            span_note: versions::span_note(run, &used, &versions),
            gemm_levels: Mutex::default(),
            gemm_curves: Mutex::default(),
        }
    }

    /// "priced with SGLang X tables; run is Y" when the run's SGLang release lies outside the
    /// span of the tables' versions.
    pub fn span_note(&self) -> Option<&str> {
        self.span_note.as_deref()
    }

    /// The engine releases the tables were measured under, distinct and sorted
    /// ("SGLang 0.5.14", "vLLM 0.24.0").
    pub fn measured_under(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .tables
            .values()
            .flatten()
            .map(|t| measured_under(t).to_string())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// Tables converted by `scripts/import_aiconfigurator.py --out DIR`, for a run at SGLang
    /// `run`: `DIR/<system>/<version>/<op>.txt` (several versions, chosen per op as the bundled
    /// ones), or one version's `DIR/<system>/<op>.txt` or `DIR/<op>.txt`.
    pub fn from_dir(dir: &Path, system: &str, run: Version) -> Result<KernelDb> {
        if !dir.is_dir() {
            return Err(Error::invalid(
                "--kernel-db",
                "kernel_db",
                format!("{} is not a directory", dir.display()),
            ));
        }
        let sub = dir.join(system);
        let base = if sub.is_dir() { sub } else { dir.to_path_buf() };
        let mut layers: Vec<Layer> = Vec::new();
        let flat = read_ops(&base)?;
        if !flat.is_empty() {
            layers.push((None, flat));
        } else {
            let entries = std::fs::read_dir(&base).map_err(|e| Error::io(&base, e))?;
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect();
            names.sort();
            for name in names {
                let Ok(v) = name.parse::<Version>() else {
                    continue;
                };
                let ops = read_ops(&base.join(&name))?;
                if !ops.is_empty() {
                    layers.push((Some(v), ops));
                }
            }
        }
        if layers.is_empty() {
            return Err(Error::invalid(
                "--kernel-db",
                "kernel_db",
                format!(
                    "{} holds no kernel tables for {system} (expected {}/<op>.txt or {}/<sglang version>/<op>.txt with op one of {}; convert with scripts/import_aiconfigurator.py)",
                    dir.display(),
                    system,
                    system,
                    OPS.join(", ")
                ),
            ));
        }
        Ok(KernelDb::assemble(
            system,
            dir.display().to_string(),
            layers,
            run,
        ))
    }

    /// The first (preferred) table of `op`.
    pub fn table(&self, op: &str) -> Option<&Table> {
        self.tables(op).first()
    }

    /// Every table of `op`, the preferred version first.
    pub fn tables(&self, op: &str) -> &[Table] {
        self.tables.get(op).map_or(&[], |v| v.as_slice())
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

    /// The first version's GEMM curve that has `dtype` rows.
    fn build_gemm(&self, dtype: &str, n: f64, k: f64) -> Option<(Curve, bool)> {
        (0..self.tables("gemm").len()).find_map(|i| self.build_gemm_in(i, dtype, n, k))
    }

    fn build_gemm_in(&self, i: usize, dtype: &str, n: f64, k: f64) -> Option<(Curve, bool)> {
        let t = &self.tables("gemm")[i];
        let d = dtype.to_string();
        let levels = self.gemm_levels(i, t, &d)?;
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
        Curve::new(&points, true).map(|c| (tagged(c, t), pn.outside || pk.outside))
    }

    /// The n levels of `dtype`'s GEMM rows and the k levels under the first n (the grid).
    fn gemm_levels(&self, i: usize, t: &Table, d: &str) -> Option<Arc<(Vec<f64>, Vec<f64>)>> {
        let mut cache = self.gemm_levels.lock().ok()?;
        cache
            .entry((i, d.to_string()))
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

    /// A 1-D table's curve for the exact key `key`, from the first version that has it.
    pub fn curve(&self, op: &str, key: &[String]) -> Option<Curve> {
        self.tables(op).iter().find_map(|t| {
            let row = t.rows_with(key).into_iter().next()?;
            let pts: Vec<(f64, f64)> = t
                .grid
                .iter()
                .zip(&row.values_ns)
                .filter_map(|(&x, v)| v.map(|v| (x, v)))
                .collect();
            Curve::new(&pts, true).map(|c| tagged(c, t))
        })
    }

    /// A surface batch × axis from the rows under key prefix `prefix`, whose next (last) key
    /// field is the batch size, from the first version that has them.
    pub fn surface(&self, op: &str, prefix: &[String]) -> Option<Surface> {
        self.tables(op).iter().find_map(|t| {
            let rows = t.rows_with(prefix);
            let xs: Vec<f64> = rows
                .iter()
                .filter_map(|r| r.key.get(prefix.len())?.parse().ok())
                .collect();
            if xs.len() != rows.len() {
                return None;
            }
            let vals: Vec<Vec<Option<f64>>> = rows.into_iter().map(|r| r.values_ns).collect();
            let mut s = Surface::new(&xs, &t.grid, &vals)?;
            s.table_version = Some(measured_under(t));
            Some(s)
        })
    }

    /// The distinct values of the key field after `prefix`, in the first version that has any.
    pub fn next_values(&self, op: &str, prefix: &[String]) -> Vec<String> {
        self.tables(op)
            .iter()
            .map(|t| t.distinct_next(prefix))
            .find(|v| !v.is_empty())
            .unwrap_or_default()
    }
}

/// "SGLang 0.5.14" or "vLLM 0.24.0": the engine version table `t` was measured with.
fn measured_under(t: &Table) -> Arc<str> {
    let engine = if t.framework == "vllm" {
        "vLLM"
    } else {
        "SGLang"
    };
    format!("{engine} {}", t.sglang).into()
}

/// `c` tagged with the engine version `t` was measured with.
fn tagged(mut c: Curve, t: &Table) -> Curve {
    c.table_version = Some(measured_under(t));
    c
}

/// The op tables directly in `dir` (`<op>.txt`), checked line by line.
fn read_ops(dir: &Path) -> Result<BTreeMap<String, Table>> {
    let mut tables = BTreeMap::new();
    for op in OPS {
        let path = dir.join(format!("{op}.txt"));
        if path.exists() {
            let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
            tables.insert(op.to_string(), Table::parse(&text, &path)?);
        }
    }
    Ok(tables)
}

fn poisoned() -> Error {
    Error::Msg("kernel table cache poisoned by an earlier panic".into())
}
