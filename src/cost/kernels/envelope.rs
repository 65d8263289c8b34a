//! The cross-GPU envelope of the measured tables: a step on GPU X is never priced above the
//! same step priced by the tables of a weaker GPU (the same software on hardware that is at
//! least as strong on every datasheet figure runs at least as fast). AIConfigurator's tables
//! are separate measurements per GPU (different SGLang builds, kernel choices, noise); without
//! the envelope they break "a stronger GPU is never slower at the same shape" in 170 step
//! comparisons, by up to 37% (B200 slower than H200 on small eager decode steps).
//!
//! "Weaker" is decided by datasheet numbers only ([`no_stronger`]): HBM bandwidth, NVLink
//! bandwidth, dense BF16 and FP8 FLOPs all no higher. At resolve, the deployment is built on
//! every bundled profile with `kernel_tables` that is weaker than its own (the bound
//! instances); a step takes, per component (GEMMs, attention, routed experts, all-reduce, LM
//! head), the least of its own price and the bound instances' prices, and `--explain` names
//! the GPU whose tables bound a component. The overheads (fixed GPU and CPU) stay the
//! deployment's own. A bound instance runs the deployment's software: an untuned fused-MoE
//! config of the target (`moe_config`) applies to it too. Not applied to a user's
//! `--kernel-db` tables. The bound is transitive (the weaker-than relation is), so the ladder
//! law holds step by step; the cost is one more table lookup per bound GPU per step, O(1).
use super::db::KernelDb;
use super::{KernelCost, Parts};
use crate::error::Result;
use crate::spec::bundled::{hardware_names, load_hardware};
use crate::spec::hardware::HardwareProfile;
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;
use std::sync::{Arc, OnceLock};

/// A weaker GPU's instance of the deployment, bounding the deployment's price.
#[derive(Debug, Clone)]
pub struct Bound {
    pub name: String,
    pub cost: KernelCost,
}

/// Whether `weak` is no stronger than `strong` on every datasheet figure the step cost reads:
/// HBM and NVLink bandwidth, dense BF16 and FP8 FLOPs (no FP8 = 0).
pub fn no_stronger(weak: &HardwareProfile, strong: &HardwareProfile) -> bool {
    let fp8 = |h: &HardwareProfile| h.peaks.fp8_flops_per_s.unwrap_or(0.0);
    weak.memory.bandwidth_bytes_per_s <= strong.memory.bandwidth_bytes_per_s
        && weak.link.bandwidth_bytes_per_s <= strong.link.bandwidth_bytes_per_s
        && weak.peaks.bf16_flops_per_s <= strong.peaks.bf16_flops_per_s
        && fp8(weak) <= fp8(strong)
}

/// The bundled profiles that name kernel tables (parsed once per process).
fn profiles_with_tables() -> &'static [HardwareProfile] {
    static CACHE: OnceLock<Vec<HardwareProfile>> = OnceLock::new();
    CACHE.get_or_init(|| {
        hardware_names()
            .into_iter()
            .filter_map(|n| load_hardware(n).ok())
            .filter(|h| h.kernel_tables.is_some())
            .collect()
    })
}

/// The bundled profiles with tables that are weaker than `hw` (not `hw` itself), in ladder
/// order (weakest first, by the datasheet figures).
pub fn weaker_with_tables(hw: &HardwareProfile) -> Vec<&'static HardwareProfile> {
    let mut v: Vec<&HardwareProfile> = profiles_with_tables()
        .iter()
        .filter(|w| w.name != hw.name && no_stronger(w, hw))
        .collect();
    v.sort_by(|a, b| {
        let key = |h: &HardwareProfile| (h.memory.bandwidth_bytes_per_s, h.peaks.bf16_flops_per_s);
        key(a)
            .partial_cmp(&key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    v
}

impl KernelCost {
    /// Adds the envelope: the deployment built on every weaker bundled GPU with tables
    /// (`tables` picks a profile's bundled tables). A weaker GPU whose build fails (e.g. a
    /// parallel layout it cannot host) bounds nothing.
    pub fn with_envelope(
        mut self,
        hw: &HardwareProfile,
        model: &ModelSpec,
        server: &ServerConfig,
        tables: impl Fn(&HardwareProfile) -> Result<Arc<KernelDb>>,
    ) -> KernelCost {
        for w in weaker_with_tables(hw) {
            // The weaker GPU runs SGLang's default attention backend for it when it lacks the
            // deployment's (FA3 is Hopper-only).
            let mut ws = server.clone();
            if w.attention(&server.attention_backend).is_err() {
                ws.attention_backend = crate::spec::defaults::attention_backend(
                    w.arch,
                    &model.architecture,
                    model.mla.is_some(),
                    server.version,
                )
                .into();
            }
            let Ok(mut cost) = tables(w).and_then(|db| KernelCost::new(w, model, &ws, &db)) else {
                continue;
            };
            if self.untuned_moe_floor_ns.is_some() {
                if let Some(c) = &cost.experts {
                    cost.untuned_moe_floor_ns =
                        Some(c.at(crate::cost::moe_config::UNTUNED_FLOOR_ROWS).0);
                    let sizes: Vec<u64> = cost.graph_rows.drain(..).map(|g| g.0).collect();
                    cost.graph_rows = sizes
                        .into_iter()
                        .map(|bs| (bs, cost.row_parts(bs as f64, false)))
                        .collect();
                }
            }
            self.bounds.push(Bound {
                name: w.name.clone(),
                cost,
            });
        }
        self
    }

    /// The GPUs whose tables bound this deployment, weakest first.
    pub fn envelope_gpus(&self) -> Vec<&str> {
        self.bounds.iter().map(|b| b.name.as_str()).collect()
    }

    /// `own` (the parts this deployment's tables price, `f(self)`) lowered, per component, to
    /// any bound instance's price `f(bound)`; [`Parts::bound_by`] records which one bound it.
    pub(super) fn envelope(&self, f: impl Fn(&KernelCost) -> Parts) -> Parts {
        let mut p = f(self);
        for (i, b) in self.bounds.iter().enumerate() {
            let q = f(&b.cost);
            let tag = i as u8 + 1;
            let pairs = [
                (&mut p.gemm, q.gemm),
                (&mut p.attention, q.attention),
                (&mut p.moe, q.moe),
                (&mut p.all_reduce, q.all_reduce),
                (&mut p.lm_head, q.lm_head),
            ];
            for (j, (mine, theirs)) in pairs.into_iter().enumerate() {
                if theirs < *mine {
                    *mine = theirs;
                    p.bound_by[j] = tag;
                }
            }
        }
        p
    }

    /// `--explain`'s note for component `j` of [`Parts::bound_by`]: empty when the
    /// deployment's own tables priced it.
    pub(super) fn bound_note(&self, p: &Parts, j: usize) -> String {
        match p.bound_by[j] {
            0 => String::new(),
            t => format!(
                "; ENVELOPE: bounded by the weaker {}'s price ({})",
                self.bounds[t as usize - 1].name,
                self.bounds[t as usize - 1].cost.provenance
            ),
        }
    }
}
