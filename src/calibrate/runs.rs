//! The runs a fit is scored on: manifest entries replayed once into scenarios (with the profile
//! being fitted), then simulated many times with candidate constants. Simulations of many
//! (candidate, run) pairs run in parallel on the current rayon pool and are collected in
//! order, so results never depend on the thread count; every result is memoised by the exact
//! candidate constants, so cross-validation folds share the evaluations they have in common.
pub use super::fit_run::{FitRun, Metric, Values};
use crate::cost::CostModel;
use crate::error::{Error, Result};
use crate::simulation::run as simulate;
use crate::spec::engine::Engine;
use crate::spec::hardware::HardwareProfile;
use crate::spec::server::ServerConfig;
use crate::validate::compare::{read_log, Log};
use crate::validate::logparse::{parse_log_file, Metrics};
use crate::validate::manifest::Manifest;
use crate::validate::replay::{scenario_for, with_prior_runs, Overrides};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

fn real_values(m: &Metrics) -> (Values, bool) {
    let (tpot, itl) = match m.median_tpot_ms {
        Some(t) => (t, false),
        None => (m.median_itl_ms, true),
    };
    ([m.output_throughput, tpot, m.mean_ttft_ms], itl)
}

/// True when `id` matches one comma-separated pattern of `filter` and no `!` pattern: an id,
/// a glob where `*` matches any run of characters (`003-*`), or an inclusive range of ids
/// compared as strings (`003-00..003-15`); `!PATTERN` excludes (`*,!002,!003-16..003-23`). A
/// filter of exclusions only selects every id they do not exclude.
pub fn matches_filter(id: &str, filter: &str) -> bool {
    let one = |p: &str| match p.split_once("..") {
        Some((a, b)) => a <= id && id <= b,
        None => glob(p.as_bytes(), id.as_bytes()),
    };
    let pats: Vec<&str> = filter
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let (excl, incl): (Vec<&str>, Vec<&str>) = pats.iter().partition(|p| p.starts_with('!'));
    let included = if incl.is_empty() {
        !excl.is_empty()
    } else {
        incl.iter().any(|p| one(p))
    };
    included && !excl.iter().any(|p| one(&p[1..]))
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|i| glob(rest, &s[i..])),
        Some((c, rest)) => s.first() == Some(c) && glob(rest, &s[1..]),
    }
}

/// Simulated values by (run index, parameter bit patterns); `None` when the run failed.
type Memo = HashMap<(usize, Vec<u64>), Option<Values>>;

/// The runs of a fit plus a memo of every simulation made.
pub struct RunSet {
    pub runs: Vec<FitRun>,
    /// The backend every run is priced with (`calibrate --cost-model`); `None`: each run's own
    /// choice, else the default rule (measured kernels where the profile names tables).
    pub cost_model: Option<CostModel>,
    memo: Mutex<Memo>,
}

impl RunSet {
    /// The manifest entries to fit `profile` on: those whose hardware is `profile_name`, or,
    /// with `filter`, those whose id matches it (whatever hardware the manifest names; the
    /// profile replaces it). `profile_arg` (a bundled name or a profile YAML path) is the
    /// hardware every selected run is replayed with.
    pub fn load(
        manifest: &Manifest,
        profile_arg: &str,
        profile_name: &str,
        filter: Option<&str>,
    ) -> Result<RunSet> {
        Self::load_many(
            manifest,
            &[(profile_arg.to_string(), profile_name.to_string())],
            filter,
        )
    }

    /// The manifest entries of a joint fit of `profiles` ((argument, name) pairs): with one
    /// profile as [`RunSet::load`]; with several, the entries whose hardware is one of their
    /// names (and whose id matches `filter`, when given), each replayed with its own profile.
    /// Every profile of a joint fit must have a run.
    pub fn load_many(
        manifest: &Manifest,
        profiles: &[(String, String)],
        filter: Option<&str>,
    ) -> Result<RunSet> {
        let single = profiles.len() == 1;
        let mut logs: BTreeMap<String, Log> = BTreeMap::new();
        let mut runs = Vec::new();
        for e in &manifest.entries {
            let on = profiles
                .iter()
                .position(|(_, name)| *name == e.hardware.value);
            let hw = match (filter, on) {
                (Some(f), _) if single && matches_filter(&e.id, f) => 0,
                (Some(f), Some(h)) if !single && matches_filter(&e.id, f) => h,
                (None, Some(h)) => h,
                _ => continue,
            };
            let ov = Overrides {
                hardware: Some(profiles[hw].0.clone()),
                ..Overrides::default()
            };
            if !logs.contains_key(&e.file) {
                let parsed = read_log(&manifest.log_path(e))?;
                logs.insert(e.file.clone(), parsed);
            }
            let source = manifest.log_path(e).display().to_string();
            let no_run = || Error::Msg(format!("{source}: no run {} (entry {})", e.run, e.id));
            let run = match logs.get(&e.file) {
                Some(Log::Vllm(log)) => {
                    if e.run >= log.runs.len() {
                        return Err(no_run());
                    }
                    runs.push(super::vllm_runs::fit_run(log, e, &ov, &source, hw)?);
                    continue;
                }
                Some(Log::Sglang(log)) => log.runs.get(e.run).ok_or_else(no_run)?,
                None => return Err(no_run()),
            };
            // Entries with `prior-runs:` (none among the seeds) re-read the listed runs' logs.
            let ov = with_prior_runs(&ov, e, &run.args, |id| {
                let p = manifest.entry(id)?;
                let log = parse_log_file(&manifest.log_path(p)).ok()?;
                log.runs.get(p.run).map(|r| r.args.clone())
            })?;
            let replay = scenario_for(run, Some(e), &ov, &source)?;
            let (real, itl) = real_values(&run.metrics);
            runs.push(FitRun::sglang(
                e.id.clone(),
                e.model.value.clone(),
                replay,
                real,
                itl,
                hw,
            ));
        }
        if runs.is_empty() && single {
            return Err(Error::Msg(match filter {
                Some(f) => format!("no manifest entry matches --runs `{f}`"),
                None => format!(
                    "no manifest entry uses hardware `{}`; select runs with --runs",
                    profiles[0].1
                ),
            }));
        }
        for (h, (_, name)) in profiles.iter().enumerate() {
            if !runs.iter().any(|r| r.hw == h) {
                return Err(Error::Msg(format!(
                    "--profile: no selected manifest entry uses hardware `{name}`{}; a joint fit needs runs on every profile",
                    filter.map_or(String::new(), |f| format!(" (--runs `{f}`)"))
                )));
            }
        }
        Ok(RunSet::new(runs))
    }

    /// A run set from already prepared runs (tests, synthetic data).
    pub fn new(runs: Vec<FitRun>) -> RunSet {
        RunSet {
            runs,
            cost_model: None,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// Simulates every (candidate, run) pair: `out[c][k]` is run `runs[k]` under
    /// `candidates[c]` (`None` when the simulation fails). Only the efficiency and overhead
    /// sections of a candidate (and its `kernel_tables`) are used; everything else comes from the
    /// replayed scenario.
    pub fn evaluate(
        &self,
        candidates: &[HardwareProfile],
        runs: &[usize],
    ) -> Vec<Vec<Option<Values>>> {
        let joint: Vec<Vec<HardwareProfile>> = candidates
            .iter()
            .map(|c| vec![c.clone(); self.profiles()])
            .collect();
        self.evaluate_joint(&joint, runs)
    }

    /// Profiles the runs use (one more than the largest `hw`).
    pub fn profiles(&self) -> usize {
        self.runs.iter().map(|r| r.hw + 1).max().unwrap_or(1)
    }

    /// As [`RunSet::evaluate`] for a joint fit: `candidates[c][h]` is candidate `c`'s profile
    /// of hardware `h`, and each run is simulated with the profile of its own hardware.
    pub fn evaluate_joint(
        &self,
        candidates: &[Vec<HardwareProfile>],
        runs: &[usize],
    ) -> Vec<Vec<Option<Values>>> {
        let key = |c: usize, r: usize| (r, constants_key(&candidates[c][self.runs[r].hw]));
        let pairs: Vec<(usize, usize)> = (0..candidates.len())
            .flat_map(|c| runs.iter().map(move |&r| (c, r)))
            .collect();
        let todo: Vec<(usize, usize)> = {
            let memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
            let mut seen = std::collections::HashSet::new();
            pairs
                .iter()
                .copied()
                .filter(|&(c, r)| {
                    let k = key(c, r);
                    !memo.contains_key(&k) && seen.insert(k)
                })
                .collect()
        };
        let fresh: Vec<Option<Values>> = todo
            .par_iter()
            .map(|&(c, r)| self.simulate_one(&candidates[c][self.runs[r].hw], r))
            .collect();
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        for (&(c, r), v) in todo.iter().zip(fresh) {
            memo.insert(key(c, r), v);
        }
        (0..candidates.len())
            .map(|c| {
                runs.iter()
                    .map(|&r| memo.get(&key(c, r)).copied().flatten())
                    .collect()
            })
            .collect()
    }

    fn simulate_one(&self, candidate: &HardwareProfile, r: usize) -> Option<Values> {
        let replay = &self.runs[r].replay;
        let mut sc = replay.scenario.clone();
        if candidate.memory != sc.hardware.memory {
            sc.hardware.memory = candidate.memory.clone();
            sc.server = match self.runs[r].engine {
                Engine::Sglang => {
                    ServerConfig::resolve(&replay.server_flags, &sc.hardware, &sc.model).ok()?
                }
                Engine::Vllm => crate::spec::engine::resolve(
                    Engine::Vllm,
                    &replay.server_flags,
                    &sc.hardware,
                    &sc.model,
                )
                .ok()?,
            };
        }
        sc.hardware.efficiency = candidate.efficiency.clone();
        sc.hardware.overheads = candidate.overheads.clone();
        sc.hardware.kernels_overheads = candidate.kernels_overheads.clone();
        // The profile being fitted decides whether measured kernels exist (default rule).
        sc.hardware.kernel_tables = candidate.kernel_tables.clone();
        sc.hardware.kernel_tables_from = candidate.kernel_tables_from.clone();
        if let Some(m) = self.cost_model {
            // Measured kernels only where the profile has tables (or the run names its own);
            // the roofline prices the others, as the default rule would.
            let tables = crate::cost::select::tables_of(&sc.hardware).is_some()
                || sc.cost.kernel_db.is_some();
            sc.cost.model = Some(if tables { m } else { CostModel::Roofline });
        }
        if self.runs[r].vllm_client {
            return super::vllm_runs::simulate(&sc, &self.runs[r]);
        }
        let out = simulate(&sc).ok()?;
        let m = &out.metrics;
        let tpot = if self.runs[r].itl {
            m.itl_ms.median
        } else {
            m.tpot_ms.median
        };
        let v = [m.output_throughput, tpot, m.ttft_ms.mean];
        v.iter().all(|x| x.is_finite()).then_some(v)
    }
}

/// The exact bits of every efficiency and overhead constant (the memo key).
fn constants_key(h: &HardwareProfile) -> Vec<u64> {
    let e = &h.efficiency;
    let o = &h.overheads;
    let mut k: Vec<u64> = [
        h.memory.runtime_reserved_gib,
        e.gemm,
        e.gemm_half_tokens,
        e.memory,
        e.collective,
        e.custom_all_reduce,
        h.link.custom_all_reduce_latency_ns,
        e.mxfp4_compute,
        e.mxfp4_memory,
        e.moe_gemm.unwrap_or(-1.0),
        e.mxfp4_half_tokens.unwrap_or(-1.0),
        o.step_cpu_ns,
        o.per_request_cpu_ns,
        o.graph_step_ns,
        o.eager_layer_ns,
        o.layer_ns,
        o.moe_layer_ns,
        o.request_latency_ns,
        o.tokenize_per_token_ns,
        o.stream_latency_ns,
        o.worker_thread_cpu_scale,
        o.vllm_step_cpu_scale,
        o.vllm_per_request_cpu_scale,
    ]
    .iter()
    .map(|v| v.to_bits())
    .collect();
    for a in e.attention.values() {
        k.push(a.prefill.to_bits());
        k.push(a.decode.to_bits());
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters() {
        assert!(matches_filter("003-05", "003-*"));
        assert!(matches_filter("003-05", "000,003-05"));
        assert!(!matches_filter("003-05", "003-1*"));
        assert!(matches_filter("004-01", "*-01"));
        assert!(!matches_filter("000", ""));
        assert!(matches_filter("003-10", "003-00..003-15"));
        assert!(!matches_filter("003-16", "003-00..003-15,004-*"));
        assert!(matches_filter("003-05", "*,!002"));
        assert!(!matches_filter("002", "*,!002"));
        assert!(matches_filter("001", "!002,!003-16..003-23"));
        assert!(!matches_filter("003-17", "!002,!003-16..003-23"));
    }
}
