//! Which backend's constants a calibration fits, and the kernel backend's own bounds.
//!
//! A profile's runs are priced by the measured kernels when it names tables (`kernel_tables:`)
//! and `--cost-model` is `kernels` or left to the default rule ([`crate::cost::select`]); then
//! the fit reads and writes the profile's `kernels_overheads:` block (folded over
//! `overheads:` while fitting, [`crate::spec::hardware_backend`]), and by default only overhead
//! constants are fitted: the efficiencies are the roofline's (the kernel backend reads them
//! only in its roofline fallbacks), fitted with `--cost-model roofline`; one named in
//! `--params` is fitted as asked, into its own section.
//!
//! Bounds for the kernel backend (what the tables already price: every GEMM with its measured
//! small-m roll-off, attention with its KV-cache store, the fused MoE, the all-reduces and the
//! LM head, each timed alone, back to back, without the launch gaps between them):
//! - `layer_ns`, 4–40 µs per layer, shared: what is left per layer is the kernels no table
//!   times (input and post-attention RMSNorm with the residual add, rotary embedding,
//!   SiLU-and-mul; 4–5 kernels in SGLang's Llama/Qwen layers, `srt/models/llama.py`) and the
//!   gap before each of the ~10 kernels of a graph-replayed layer. NVIDIA's "Getting Started
//!   with CUDA Graphs" (2019 blog; figures recalled, not re-read here) times a short
//!   elementwise kernel at ≈ 2.9 µs and ≈ 3.4 µs per kernel back to back inside a graph
//!   (≈ 3.8 µs stream-launched): ≥ 4 unpriced kernels at ≥ 1 µs is the floor, 5 kernels ×
//!   3 µs plus 10 gaps × 2.5 µs the ceiling. Latency-bound small kernels and gaps take the same time on
//!   every GPU of the ladder, so one value for all (which also keeps "a stronger GPU is never
//!   slower": the cross-GPU envelope bounds the kernels, not the fixed time).
//! - `graph_step_ns`, 50 µs–1 ms, shared: the LM head is in the tables; left are the graph
//!   replay launch (≈ 10–20 µs), SGLang's sampler over the vocabulary (softmax, top-k/top-p,
//!   penalties: 3–6 kernels of 5–50 µs) and the input/output copies; software-bound, so shared
//!   like `layer_ns`.
//! - `moe_layer_ns`, 0–60 µs: the fused-MoE tables time the expert GEMMs; the router's top-k
//!   and `moe_align_block_size` (2–3 small kernels, 3–20 µs each) are left.
//! - host constants (`step_cpu_ns`, `eager_layer_ns`, `request_latency_ns`, ...) keep their
//!   bounds: the host does not depend on the backend.
use super::params::{Param, Section, Sharing};
use crate::cost::select::tables_of;
use crate::cost::CostModel;
use crate::spec::hardware::HardwareProfile;

/// True when `cost_model` (`None` = the default rule) prices `hw`'s runs with the measured
/// kernels (calibration gives runs no `--kernel-db`).
pub fn kernels_priced(hw: &HardwareProfile, cost_model: Option<CostModel>) -> bool {
    tables_of(hw).is_some() && cost_model.unwrap_or(CostModel::Kernels) == CostModel::Kernels
}

/// The kernel backend's bounds and sharing of an overhead constant: (name, lo, hi, why).
const KERNEL_BOUNDS: &[(&str, f64, f64, &str)] = &[
    ("layer_ns", 4e3, 40e3,
        "kernel backend: the tables time GEMMs, attention, MoE, all-reduce and LM head alone; left per layer are 4–5 untimed small kernels (RMSNorms with residual add, rotary, SiLU-and-mul) and ~10 launch gaps inside the graph: ≥ 4 kernels × 1 µs, ≤ 5 × 3 µs + 10 gaps × 2.5 µs (NVIDIA, Getting Started with CUDA Graphs)"),
    ("graph_step_ns", 50e3, 1e6,
        "kernel backend: the LM head is in the tables; left are the graph replay launch (10–20 µs) and SGLang's sampler over the vocabulary (3–6 kernels of 5–50 µs) and input/output copies"),
    ("moe_layer_ns", 0.0, 60e3,
        "kernel backend: the fused-MoE tables time the expert GEMMs; left are the router's top-k and moe_align_block_size, 2–3 small kernels of 3–20 µs"),
];

/// Why a latency-bound device floor is one value for all GPUs under the kernel backend.
const SHARED_FLOOR: &str = "kernel backend: small latency-bound kernels and launch gaps take the same time on every GPU of the ladder; one value also keeps a stronger GPU never slower (the envelope does not bound fixed time)";

/// Why a non-overhead constant is not fitted for the kernel backend.
const NOT_KERNELS: &str =
    "the kernel backend reads it only in roofline fallbacks: fit it with --cost-model roofline";

/// `param` with the kernel backend's bounds and default sharing.
fn with_kernel_bounds(mut p: Param) -> Param {
    if let Some(&(_, lo, hi, why)) = KERNEL_BOUNDS.iter().find(|b| b.0 == p.name) {
        p.lo = lo;
        p.hi = hi;
        p.bounds_why = why.to_string();
        p.prior = p.prior.clamp(lo, hi);
        if p.name != "moe_layer_ns" && p.sharing_why != "as --params asks" {
            p.sharing = Sharing::Shared;
            p.sharing_why = SHARED_FLOOR.to_string();
        }
    }
    p
}

/// The default candidates of a kernel-priced fit: the overhead constants with the kernel
/// backend's bounds; the others are dropped with the reason.
pub fn kernel_candidates(params: Vec<Param>) -> (Vec<Param>, Vec<(String, String)>) {
    let (keep, drop): (Vec<Param>, Vec<Param>) = params
        .into_iter()
        .partition(|p| p.section == Section::Overheads);
    (
        keep.into_iter().map(with_kernel_bounds).collect(),
        drop.into_iter()
            .map(|p| (p.name, NOT_KERNELS.to_string()))
            .collect(),
    )
}

/// A `--params` list for a kernel-priced fit: the overheads with the kernel backend's bounds;
/// a named efficiency is fitted as asked, into its own section (the roofline reads it too).
pub fn kernel_params(params: Vec<Param>) -> Vec<Param> {
    params
        .into_iter()
        .map(|p| {
            if p.section == Section::Overheads {
                with_kernel_bounds(p)
            } else {
                p
            }
        })
        .collect()
}

/// The YAML section a fitted constant of `section` is written to: the kernel backend's
/// overrides for a kernel-priced profile.
pub fn section_key(section: Section, kernels: bool) -> &'static str {
    match (section, kernels) {
        (Section::Overheads, true) => crate::spec::hardware_backend::KERNELS_OVERHEADS,
        _ => section.key(),
    }
}
