//! Which [`StepCost`] backend prices a scenario: `--cost-model roofline|kernels` (or
//! `cost-model:` in a scenario's `server:` section). Default: the measured kernels where the
//! hardware profile names bundled tables (`kernel_tables:` in the A100, H100, H200 and B200
//! profiles), a same-architecture donor's (`kernel_tables_from:` in H20 and H800, each op
//! scaled to the GPU's datasheet, [`super::kernels::transfer`]), or `--kernel-db DIR` gives
//! tables, the roofline elsewhere (Ascend). The bundled tables are priced under the cross-GPU
//! envelope ([`super::kernels::envelope`]): a step is never dearer than the weaker GPUs'
//! tables price it.
//!
//! The evidence (2026-11-23; median |err| out tok/s / median TPOT·ITL / mean TTFT). Out of
//! sample the kernels win: on 29 public SGLang runs nothing was ever fitted on
//! (`validation/public/` of branch h12p: B200 and A100, SGLang 0.4.6–0.5.6) 13.5/11.9/51.0%
//! against the roofline's 54.3/36.8/64.4%; on seed 004 (8×B200, not fitted) 25/18/61% against
//! 71/40/76%. In sample they lose: fitted jointly on the 18 seed runs (`calibrate --cost-model
//! roofline|kernels --runs '*,!002,!003-16..003-23,!004-*' --cross-validate`) the roofline
//! reaches 5.6/6.4/4.3% (LOMO 6.6/8.5/4.1%, LOHO 7.0/10.7/6.2%), the kernels 18.6/23.3/16.0%
//! (LOMO 19.3/23.5/16.8%, LOHO 20.4/23.8/17.1%): AIConfigurator's A100 tables (SGLang 0.5.10)
//! price seed 003's SGLang 0.5.1 long-context decode 25–35% slower than it ran; fitting the
//! kernel backend's overheads to it (A100 per-layer floor 2.2 µs, graph step 78 µs) makes the
//! public A100 runs worse (3.9/8.0/30.4% → 12.5/11.7/32.6%), so the profiles keep the joint
//! fit's overheads. What kept the kernels from being the default was physics: across the GPU
//! ladder the measured tables alone break "a newer GPU is never slower at the same shape" in
//! 170 step comparisons (tests/physics.rs), by up to 37%: B200 slower than H200 on small eager
//! decode steps (up to 30%), H100/H200 slower than A100 for gpt-oss at TP 8 where A100's MXFP4
//! experts fall back to the roofline, H200 up to 3% slower than H100 in compute-bound prefill
//! (same tensor cores: measurement noise). The cross-GPU envelope makes the law hold (the
//! ladder test runs for both backends), and the kernels are the default where tables exist.
//! With the envelope (2026-11-24, `validate`): public 29 runs 13.4/12.9/51.2% (13.5/11.9/51.0%
//! without it; roofline unchanged at 54.3/36.8/64.4%); the 31 seed runs under the new default
//! 20.6/29.2/25.5% (in sample, the 18: 19.9/23.6/16.0%) against the roofline default's
//! 7.5/14.7/8.5% (5.6/6.3/4.2%), which `--cost-model roofline` still reproduces.
//! A profile may carry the kernel backend's own overheads (`kernels_overheads:`,
//! [`crate::spec::hardware_backend`]); the 2026-11-24 kernels fit into it (in sample
//! 6.8/8.2/5.8% on the 18 seeds) made public 12.9/10.8/43.5% → 17.1/15.5/44.1% and is not applied.
use super::kernels::db::{bundled_systems, KernelDb};
use super::kernels::{memo, KernelCost};
use super::npu_graph_update::NpuGraphUpdate;
use super::roofline::Roofline;
use super::speculative::SpeculativeCost;
use super::StepCost;
use crate::error::{Error, Result};
use crate::spec::hardware::{Arch, HardwareProfile};
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;
use std::path::PathBuf;

/// A step-cost backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostModel {
    Roofline,
    Kernels,
}

impl CostModel {
    pub const NAMES: &'static str = "roofline, kernels";
    pub fn parse(s: &str) -> Result<CostModel> {
        match s {
            "roofline" => Ok(CostModel::Roofline),
            "kernels" | "kernel" => Ok(CostModel::Kernels),
            other => Err(Error::Unknown {
                kind: "cost model (--cost-model)",
                name: other.into(),
                available: Self::NAMES.into(),
            }),
        }
    }
}

/// The user's choice: backend (`None` = the default rule) and an optional table directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CostChoice {
    pub model: Option<CostModel>,
    pub kernel_db: Option<PathBuf>,
}

impl CostChoice {
    /// The backend this choice resolves to on `hw`: the one asked for, else the measured
    /// kernels when `--kernel-db` gives tables or the profile names bundled ones
    /// (`kernel_tables:`, or a donor's `kernel_tables_from:`), else the roofline.
    pub fn resolve(&self, hw: &HardwareProfile) -> CostModel {
        self.model
            .unwrap_or(if self.kernel_db.is_some() || tables_of(hw).is_some() {
                CostModel::Kernels
            } else {
                CostModel::Roofline
            })
    }
}

/// Builds the step-cost backend of one deployment (with speculative decoding: the target's and
/// the draft's instances of the backend behind [`SpeculativeCost`]).
pub fn build(
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
    choice: &CostChoice,
) -> Result<Box<dyn StepCost>> {
    // On an NPU, graph replays wait for the host's attention-task updates (npu_graph_update).
    let target = NpuGraphUpdate::wrap(build_one(hw, model, server, choice)?, hw, model, server);
    let Some(spec) = &server.speculative else {
        return Ok(target);
    };
    let draft = match &spec.draft {
        Some(d) => {
            let mut ds = server.clone();
            ds.speculative = None;
            ds.kv_bytes_per_token = server.draft_kv_bytes_per_token;
            ds.weight_format = spec.draft_weight_format;
            Some(NpuGraphUpdate::wrap(
                build_one(hw, d, &ds, choice)?,
                hw,
                d,
                &ds,
            ))
        }
        None => None,
    };
    Ok(Box::new(SpeculativeCost::new(
        target,
        draft,
        spec,
        server.overlap_schedule,
        hw.arch == Arch::Ascend,
    )))
}

fn build_one(
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
    choice: &CostChoice,
) -> Result<Box<dyn StepCost>> {
    match choice.resolve(hw) {
        CostModel::Roofline => Ok(Box::new(Roofline::new(hw, model, server)?)),
        CostModel::Kernels => {
            let system = tables_of(hw);
            let db = match (&choice.kernel_db, system) {
                (Some(dir), _) => std::sync::Arc::new(KernelDb::from_dir(
                    dir,
                    system.unwrap_or_default(),
                    server.version,
                )?),
                (None, Some(sys)) => bundled_tables(sys, server).map_err(|e| match e {
                    Error::Unknown { name, available, .. } => Error::invalid(
                        format!("hardware profile {}", hw.name),
                        if hw.kernel_tables.is_some() { "kernel_tables" } else { "kernel_tables_from" },
                        format!("no bundled kernel tables `{name}`; bundled: {available} (or pass --kernel-db DIR)"),
                    ),
                    e => e,
                })?,
                (None, None) => {
                    return Err(Error::invalid(
                        "--cost-model",
                        "cost_model",
                        format!(
                            "kernels: hardware profile {} names no kernel tables (`kernel_tables:`); pass --kernel-db DIR or --cost-model roofline",
                            hw.name
                        ),
                    ))
                }
            };
            if choice.kernel_db.is_some() {
                return Ok(Box::new(KernelCost::new(hw, model, server, &db)?));
            }
            // The bundled tables are bounded by the weaker GPUs' (the cross-GPU envelope); a
            // donor's are carried to this GPU's datasheet first.
            let cost = memo::deployment(hw, model, server, || {
                let own = match (&hw.kernel_tables_from, system) {
                    (Some(_), Some(sys)) => KernelCost::transferred(hw, model, server, &db, sys)?,
                    _ => KernelCost::new(hw, model, server, &db)?,
                };
                Ok(own.with_envelope(hw, model, server, |w, server| {
                    bundled_tables(w.kernel_tables.as_deref().unwrap_or_default(), server)
                }))
            })?;
            Ok(Box::new(cost))
        }
    }
}

/// The bundled tables of `system` for `server`: vLLM's kernels for a vLLM server where they
/// are bundled, else SGLang's, each op's versions in the order `server.version` prefers them
/// ([`super::kernels::versions`]).
fn bundled_tables(system: &str, server: &ServerConfig) -> Result<std::sync::Arc<KernelDb>> {
    match format!("{system}_vllm") {
        v if server.vllm.is_some() && bundled_systems().contains(&v.as_str()) => {
            KernelDb::bundled(&v, server.version)
        }
        _ => KernelDb::bundled(system, server.version),
    }
}

/// The run's one-line note when the kernel backend prices it from a donor GPU's tables
/// ("H20 priced from h100_sxm tables scaled to H20's datasheet (same sm90 kernels)") or with
/// tables of SGLang versions that all lie before or after the run's ("priced with SGLang X
/// tables; run is Y"), joined by "; "; `None`
/// for the roofline, for a run inside the tables' span, or when the tables cannot be read
/// (the backend's own build reports that).
pub fn table_version_note(
    hw: &HardwareProfile,
    server: &ServerConfig,
    choice: &CostChoice,
) -> Option<String> {
    if choice.resolve(hw) != CostModel::Kernels {
        return None;
    }
    let system = tables_of(hw).unwrap_or_default();
    let db = match &choice.kernel_db {
        Some(dir) => std::sync::Arc::new(KernelDb::from_dir(dir, system, server.version).ok()?),
        None => bundled_tables(system, server).ok()?,
    };
    let version = match &server.vllm {
        Some(v) => vllm_version_note(&db.measured_under(), v.version),
        None => db.span_note().map(String::from),
    };
    // No silent extrapolation: a GPU priced from a donor's tables says so.
    let transfer = match (&hw.kernel_tables_from, &choice.kernel_db) {
        (Some(_), None) => Some(super::kernels::transfer::note(hw, system)),
        _ => None,
    };
    let notes: Vec<String> = transfer.into_iter().chain(version).collect();
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// The SGLang version of the fused-MoE table a kernel-backend run reads first (`None` for the
/// roofline, a vLLM server or a GPU without tables).
pub fn moe_table_version(
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
    choice: &CostChoice,
) -> Option<crate::spec::version::Version> {
    if choice.resolve(hw) != CostModel::Kernels || server.vllm.is_some() {
        return None;
    }
    let system = tables_of(hw)?;
    let db = match &choice.kernel_db {
        Some(dir) => std::sync::Arc::new(KernelDb::from_dir(dir, system, server.version).ok()?),
        None => bundled_tables(system, server).ok()?,
    };
    let op = super::moe_lane::lane(hw, model, server).map_or("moe", |l| l.table_op());
    db.table(op)?.sglang.parse().ok()
}

/// The table system that prices `hw`: its own (`kernel_tables`), else its same-architecture
/// donor's (`kernel_tables_from`, [`super::kernels::transfer`]).
pub fn tables_of(hw: &HardwareProfile) -> Option<&str> {
    hw.kernel_tables
        .as_deref()
        .or(hw.kernel_tables_from.as_deref())
}

/// A vLLM run priced with tables measured under another vLLM release: vLLM's tables carry one
/// version (AIConfigurator measured vLLM's kernels under one release), and kernels, attention
/// backends and graph capture change between releases, so the run says which.
fn vllm_version_note(measured: &[String], run: crate::spec::version::Version) -> Option<String> {
    let run = format!("vLLM {run}");
    // "vLLM 0.24.0 (nccl 2.29.2)" is the 0.24.0 measurement too.
    let mut measured: Vec<&str> = measured
        .iter()
        .map(|m| m.split(" (").next().unwrap_or(m))
        .collect();
    measured.dedup();
    if measured.is_empty() || measured.iter().all(|m| *m == run) {
        return None;
    }
    Some(format!(
        "priced with {} kernel tables; run is {run} (kernels, attention backends and CUDA-graph \
         capture differ between releases)",
        measured.join(" and ")
    ))
}
