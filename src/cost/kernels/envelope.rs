//! The cross-GPU envelope of the measured tables: a step on GPU X is never priced above the
//! same step priced by the tables of a weaker GPU (the same software on hardware that is at
//! least as strong on every datasheet figure runs at least as fast). AIConfigurator's tables
//! are separate measurements per GPU (different SGLang builds, kernel choices, noise); without
//! the envelope they break "a stronger GPU is never slower at the same shape" in 170 step
//! comparisons, by up to 37% (B200 slower than H200 on small eager decode steps).
//!
//! "Weaker" is decided by datasheet numbers only ([`no_stronger`]): HBM bandwidth, NVLink
//! bandwidth, dense BF16, FP8 and FP4 FLOPs all no higher (FP4 separates B300 from B200, equal
//! on the other four: without it each would bound the other). The deployment is also built on every
//! other bundled profile with `kernel_tables` (the ladder instances), each on first use: the
//! weaker ones by the first step, a stronger one only when a fallback needs its floor. Per component c
//! (GEMMs, attention, routed experts, all-reduce, LM head) a GPU's *own* price is its table
//! price, or, where its tables lack c (a roofline fallback), that fallback raised to the
//! dearest measured price of c on a ladder GPU at least as strong as it (the tightest bound the
//! law itself gives: a GPU is never faster than any GPU no weaker than it, so a roofline guess
//! must not undercut a stronger GPU's measurement; MLA experts on A100 would otherwise cap
//! H100's, H200's and B200's DeepSeek). Until s32 the floor was the cheapest measurement on any
//! ladder GPU, which let A100's guess, raised only to B200's price, cap H100's own
//! measurement. Routed experts on 4-bit weights keep that older floor: their kernel differs per
//! GPU and release (`cost::mxfp4`) and the tables do not record which one a row measured. A
//! step pays, per component, the least own price over its GPU and every weaker one. The law
//! holds by construction: own prices do not depend on which GPU is priced, and
//! the weaker set only grows up the ladder (and for a profile scaled up from a bundled one).
//! `--explain` names the GPU whose price bound a component (ENVELOPE) or whose measurement
//! raised a fallback (FLOOR). The overheads (fixed GPU and CPU) stay the deployment's own.
//! A ladder instance runs the deployment's software: an untuned fused-MoE config of the
//! target (`moe_config`) applies to it too, and a GPU lacking the deployment's attention
//! backend (FA3 off Hopper) takes SGLang's default one for it. Not applied to a user's
//! `--kernel-db` tables. Cost: one more set of table lookups per weaker GPU per step (all the
//! ladder's only when a fallback needs its floor), O(1).
use super::db::KernelDb;
use super::{KernelCost, Parts};
use crate::error::Result;
use crate::spec::bundled::{hardware_names, hardware_yaml, load_hardware};
use crate::spec::hardware::HardwareProfile;
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;
use std::sync::{Arc, OnceLock};

/// Another ladder GPU's instance of the deployment, built on first use (a GPU that only
/// floors fallbacks is never built when the deployment has none). `None` when the build
/// fails: that GPU bounds nothing.
#[derive(Debug, Clone)]
pub struct Bound {
    pub name: String,
    profile: &'static HardwareProfile,
    /// Shared by the clones of the deployment ([`super::memo`]): built once.
    cost: Arc<OnceLock<Option<KernelCost>>>,
    recipe: Arc<Recipe>,
    /// No stronger than the deployment's GPU (its price bounds the step); else its
    /// measurements only floor fallbacks.
    weaker: bool,
}

/// What builds a ladder instance: the deployment, and where a profile's tables come from.
pub struct Recipe {
    model: ModelSpec,
    server: ServerConfig,
    tables: Box<Tables>,
    /// The deployment runs an untuned fused-MoE config (`moe_config`).
    untuned_moe: bool,
    /// The int4 expert kernel on the deployment's GPU (`cost::mxfp4`), when its experts are
    /// int4: a ladder GPU where SGLang runs another one (TRT-LLM mxint4 on sm100 from 0.5.10,
    /// Marlin on sm80/sm90) is other software and bounds nothing.
    int4_kernel: Option<crate::cost::mxfp4::Mxfp4Kernel>,
}

/// A profile's bundled tables for the deployment's server.
pub type Tables = dyn Fn(&HardwareProfile, &ServerConfig) -> Result<Arc<KernelDb>> + Send + Sync;

impl std::fmt::Debug for Recipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Recipe({}, untuned_moe {})",
            self.model.name, self.untuned_moe
        )
    }
}

impl Bound {
    /// The deployment on this GPU (built on the first call).
    fn cost(&self) -> Option<&KernelCost> {
        self.cost.get_or_init(|| self.build()).as_ref()
    }

    fn build(&self) -> Option<KernelCost> {
        let (w, r) = (self.profile, &*self.recipe);
        if r.int4_kernel.is_some() && crate::cost::mxfp4::kernel(w, &r.server) != r.int4_kernel {
            return None;
        }
        // SGLang's default attention backend for that GPU when it lacks the deployment's
        // (FA3 is Hopper-only).
        let mut ws = r.server.clone();
        if w.attention(&r.server.attention_backend).is_err() {
            ws.attention_backend = crate::spec::defaults::attention_backend(
                w.arch,
                &r.model.architecture,
                r.model.mla.is_some(),
                r.server.version,
            )
            .into();
        }
        let mut cost = (r.tables)(w, &r.server)
            .and_then(|db| KernelCost::new(w, &r.model, &ws, &db))
            .ok()?;
        // The same software: the deployment's untuned fused-MoE config applies there too.
        if r.untuned_moe {
            if let Some(c) = &cost.experts {
                cost.untuned_moe_floor_ns =
                    Some(c.at(crate::cost::moe_config::UNTUNED_FLOOR_ROWS).0);
                cost.retabulate_graph_rows();
            }
        }
        Some(cost)
    }
}

/// Whether `weak` is no stronger than `strong` on every datasheet figure the step cost reads:
/// HBM and NVLink bandwidth, dense BF16 and FP8 FLOPs (no FP8 = 0), and dense FP4 (not stated
/// = 0): two GPUs equal on the first four but not in silicon (B200, B300) must not bound each
/// other both ways.
pub fn no_stronger(weak: &HardwareProfile, strong: &HardwareProfile) -> bool {
    let fp8 = |h: &HardwareProfile| h.peaks.fp8_flops_per_s.unwrap_or(0.0);
    let fp4 = |h: &HardwareProfile| h.peaks.fp4_flops_per_s.unwrap_or(0.0);
    weak.memory.bandwidth_bytes_per_s <= strong.memory.bandwidth_bytes_per_s
        && weak.link.bandwidth_bytes_per_s <= strong.link.bandwidth_bytes_per_s
        && weak.peaks.bf16_flops_per_s <= strong.peaks.bf16_flops_per_s
        && fp8(weak) <= fp8(strong)
        && fp4(weak) <= fp4(strong)
}

/// The bundled profiles that name kernel tables (parsed once per process; a profile whose
/// text has no `kernel_tables:` key is not parsed at all).
pub(super) fn profiles_with_tables() -> &'static [HardwareProfile] {
    static CACHE: OnceLock<Vec<HardwareProfile>> = OnceLock::new();
    CACHE.get_or_init(|| {
        hardware_names()
            .into_iter()
            .filter(|n| hardware_yaml(n).is_some_and(|t| t.contains("kernel_tables:")))
            .filter_map(|n| load_hardware(n).ok())
            .filter(|h| h.kernel_tables.is_some())
            .collect()
    })
}

/// The bundled profiles with tables that are weaker than `hw` (not `hw` itself), in ladder
/// order (weakest first, by the datasheet figures).
pub fn weaker_with_tables(hw: &HardwareProfile) -> Vec<&'static HardwareProfile> {
    ladder(hw)
        .into_iter()
        .filter(|w| no_stronger(w, hw))
        .collect()
}

/// The bundled profiles with tables other than `hw` (by name) that take part in pricing
/// another GPU (`envelope_floor`), weakest first. B300 and GB200 sit above every other GPU;
/// the PCIe L40S and RTX PRO 6000 run other kernels (flashinfer / FA2 where the SXM GPUs run
/// fa3 or trtllm_mha) at higher SM clocks (2.52 / 2.43 GHz against 1.98), so their latency-bound
/// small kernels are no bound for an SXM GPU (validation/l40s-rtx6000-notes.md).
fn ladder(hw: &HardwareProfile) -> Vec<&'static HardwareProfile> {
    let mut v: Vec<&HardwareProfile> = profiles_with_tables()
        .iter()
        .filter(|w| w.name != hw.name && w.envelope_floor)
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
    /// Adds the envelope: the deployment on every other bundled GPU with tables (`tables`
    /// picks a profile's bundled tables for `server`), each built when first needed. A GPU whose build
    /// fails bounds nothing.
    pub fn with_envelope(
        mut self,
        hw: &HardwareProfile,
        model: &ModelSpec,
        server: &ServerConfig,
        tables: impl Fn(&HardwareProfile, &ServerConfig) -> Result<Arc<KernelDb>>
            + Send
            + Sync
            + 'static,
    ) -> KernelCost {
        let recipe = Arc::new(Recipe {
            model: model.clone(),
            server: server.clone(),
            tables: Box::new(tables),
            untuned_moe: self.untuned_moe_floor_ns.is_some(),
            int4_kernel: (server.weight_format == crate::spec::model::WeightFormat::W4a16Int4)
                .then(|| crate::cost::mxfp4::kernel(hw, server))
                .flatten(),
        });
        self.bounds = ladder(hw)
            .into_iter()
            .map(|w| Bound {
                name: w.name.clone(),
                profile: w,
                cost: Arc::default(),
                recipe: recipe.clone(),
                weaker: no_stronger(w, hw),
            })
            .collect();
        self
    }

    /// The GPUs whose tables bound this deployment, weakest first.
    pub fn envelope_gpus(&self) -> Vec<&str> {
        self.bounds
            .iter()
            .filter(|b| b.weaker && b.cost().is_some())
            .map(|b| b.name.as_str())
            .collect()
    }

    /// Instance `i`: this deployment (0), else ladder GPU i − 1 (`None`: its build failed).
    fn instance(&self, i: usize) -> Option<&KernelCost> {
        if i == 0 {
            Some(self)
        } else {
            self.bounds[i - 1].cost()
        }
    }

    /// The parts `f` prices on every instance, under the envelope: per component the least
    /// own price over this GPU and the weaker ones, a roofline fallback's own price floored by
    /// the dearest measured price of a ladder GPU at least as strong as that instance's.
    pub(super) fn envelope(&self, f: impl Fn(&KernelCost) -> Parts) -> Parts {
        if self.bounds.is_empty() {
            return f(self);
        }
        let n = self.bounds.len() + 1;
        // Per-step scratch on the stack (this runs every step): the ladder is the bundled
        // profiles, a handful; a longer one takes the heap.
        let (mut raw_stack, mut raw_heap) = ([None; STACK_INSTANCES], Vec::new());
        let raw: &mut [Option<Option<Parts>>] = if n <= STACK_INSTANCES {
            &mut raw_stack[..n]
        } else {
            raw_heap.resize(n, None);
            &mut raw_heap
        };
        let mut fetch = |i: usize| *raw[i].get_or_insert_with(|| self.instance(i).map(&f));
        let (mut stack, mut heap) = ([(0, Parts::default()); STACK_INSTANCES], Vec::new());
        let mut len = 0;
        for i in std::iter::once(0).chain((1..n).filter(|&i| self.bounds[i - 1].weaker)) {
            if let Some(p) = fetch(i) {
                match stack.get_mut(len) {
                    Some(slot) => *slot = (i, p),
                    None => heap.push((i, p)),
                }
                len += 1;
            }
        }
        if len > STACK_INSTANCES {
            heap.splice(0..0, stack);
        }
        // The members (this GPU and the weaker ones that built): (instance, parts).
        let members: &[(usize, Parts)] = if len > STACK_INSTANCES {
            &heap
        } else {
            &stack[..len]
        };
        let mut out = members[0].1;
        let profile = |i: usize| match i {
            0 => self.roof.hw(),
            _ => self.bounds[i - 1].profile,
        };
        for j in 0..COMPONENTS {
            let bit = 1 << j;
            // A fallback's floor: the dearest measurement of component j on a ladder GPU at
            // least as strong as the member's (the member cannot beat any of them). Routed
            // experts on 4-bit weights run a kernel chosen per GPU and release (`cost::mxfp4`:
            // Marlin, matmul_ogs, a bf16-upcast triton, FlashInfer's) that the tables do not
            // name: for them only the weakest claim holds, the cheapest measurement on any
            // ladder GPU (the rule before s32). Ties keep the first GPU, which `--explain` names.
            let four_bit = j == MOE && self.roof.mxfp4.is_some();
            let mut floor = |i: usize| {
                let measured = (0..n)
                    .filter(|&k| k != i && (four_bit || no_stronger(profile(i), profile(k))))
                    .filter_map(|k| Some((fetch(k)?, k)))
                    .filter(|(p, _)| p.fallback & bit == 0)
                    .map(|(p, k)| (p.component(j), k));
                if four_bit {
                    measured.min_by(|a, b| a.0.total_cmp(&b.0))
                } else {
                    measured.min_by(|a, b| b.0.total_cmp(&a.0))
                }
            };
            let mut own = |i: usize, p: &Parts| -> (f64, usize) {
                if p.fallback & bit == 0 {
                    return (p.component(j), 0);
                }
                match floor(i) {
                    Some((m, k)) if m > p.component(j) => (m, k),
                    _ => (p.component(j), 0),
                }
            };
            let (mut best, from) = own(members[0].0, &members[0].1);
            out.floored_by[j] = from as u8;
            for &(i, ref p) in &members[1..] {
                let (v, _) = own(i, p);
                if v < best {
                    best = v;
                    out.bound_by[j] = i as u8;
                    out.floored_by[j] = 0;
                }
            }
            out.set_component(j, best);
        }
        out
    }

    /// `--explain`'s note for component `j`: empty when this GPU's own tables priced it.
    pub(super) fn bound_note(&self, p: &Parts, j: usize) -> String {
        let name = |t: u8| {
            let b = &self.bounds[t as usize - 1];
            let provenance = b.cost().map_or("", |c| c.provenance.as_str());
            format!("{} ({provenance})", b.name)
        };
        match (p.bound_by[j], p.floored_by[j]) {
            (0, 0) => String::new(),
            (0, t) => format!(
                "; FLOOR: no table here, raised to the dearest price measured on a GPU at least as strong, {}'s",
                name(t)
            ),
            (t, _) => format!("; ENVELOPE: bounded by the weaker {}'s price", name(t)),
        }
    }
}

/// Instances whose per-step scratch the envelope keeps on the stack.
const STACK_INSTANCES: usize = 8;

/// Components the envelope bounds: gemm, attention, moe, all-reduce, LM head.
pub(super) const COMPONENTS: usize = 5;

/// The routed experts' index among the [`COMPONENTS`].
const MOE: usize = 2;
