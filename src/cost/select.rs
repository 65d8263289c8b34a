//! Which [`StepCost`] backend prices a scenario: `--cost-model roofline|kernels` (or
//! `cost-model:` in a scenario's `server:` section). Default: the roofline, unless
//! `--kernel-db DIR` is given. The measured-kernel tables (`kernel_tables:` in the A100, H100,
//! H200 and B200 profiles) are opt-in for now: on the recorded A100 runs (SGLang 0.5.1,
//! flashinfer) the SGLang 0.5.10 tables with the overheads fitted for the roofline price steps
//! 20–35% too slow at large batch, and calibration fits the roofline's constants; the kernel
//! backend becomes the default once a joint fit of its overheads validates it.
use super::kernels::db::{bundled_systems, KernelDb};
use super::kernels::KernelCost;
use super::roofline::Roofline;
use super::speculative::SpeculativeCost;
use super::StepCost;
use crate::error::{Error, Result};
use crate::spec::hardware::HardwareProfile;
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
    /// The backend this choice resolves to.
    pub fn resolve(&self) -> CostModel {
        self.model.unwrap_or(if self.kernel_db.is_some() {
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
    let target = build_one(hw, model, server, choice)?;
    let Some(spec) = &server.speculative else {
        return Ok(target);
    };
    let draft = match &spec.draft {
        Some(d) => {
            let mut ds = server.clone();
            ds.speculative = None;
            ds.kv_bytes_per_token = server.draft_kv_bytes_per_token;
            ds.weight_format = spec.draft_weight_format;
            Some(build_one(hw, d, &ds, choice)?)
        }
        None => None,
    };
    Ok(Box::new(SpeculativeCost::new(
        target,
        draft,
        spec,
        server.overlap_schedule,
    )))
}

fn build_one(
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
    choice: &CostChoice,
) -> Result<Box<dyn StepCost>> {
    match choice.resolve() {
        CostModel::Roofline => Ok(Box::new(Roofline::new(hw, model, server)?)),
        CostModel::Kernels => {
            let system = hw.kernel_tables.as_deref();
            let db = match (&choice.kernel_db, system) {
                (Some(dir), _) => std::sync::Arc::new(KernelDb::from_dir(
                    dir,
                    system.unwrap_or_default(),
                )?),
                // A vLLM server is priced with vLLM's kernels where they are bundled.
                (None, Some(sys)) => match format!("{sys}_vllm") {
                    v if server.vllm.is_some() && bundled_systems().contains(&v.as_str()) => {
                        KernelDb::bundled(&v)?
                    }
                    _ => KernelDb::bundled(sys)?,
                },
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
            Ok(Box::new(KernelCost::new(hw, model, server, &db)?))
        }
    }
}
