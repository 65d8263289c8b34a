//! Which [`StepCost`] backend prices a scenario: `--cost-model roofline|kernels` (or
//! `cost-model:` in a scenario's `server:` section). Default: the measured-kernel tables
//! where the hardware profile names them (`kernel_tables:`) or `--kernel-db DIR` is given,
//! else the roofline (H20, Ascend, user profiles without tables).
use super::kernels::db::KernelDb;
use super::kernels::KernelCost;
use super::roofline::Roofline;
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
    /// The backend this choice resolves to on `hw`.
    pub fn resolve(&self, hw: &HardwareProfile) -> CostModel {
        self.model
            .unwrap_or(if hw.kernel_tables.is_some() || self.kernel_db.is_some() {
                CostModel::Kernels
            } else {
                CostModel::Roofline
            })
    }
}

/// Builds the step-cost backend of one deployment.
pub fn build(
    hw: &HardwareProfile,
    model: &ModelSpec,
    server: &ServerConfig,
    choice: &CostChoice,
) -> Result<Box<dyn StepCost>> {
    match choice.resolve(hw) {
        CostModel::Roofline => Ok(Box::new(Roofline::new(hw, model, server)?)),
        CostModel::Kernels => {
            let system = hw.kernel_tables.as_deref();
            let db = match (&choice.kernel_db, system) {
                (Some(dir), _) => std::sync::Arc::new(KernelDb::from_dir(
                    dir,
                    system.unwrap_or_default(),
                )?),
                (None, Some(sys)) => KernelDb::bundled(sys)?,
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
