//! Overhead constants per cost backend. A profile's `overheads:` are what the roofline reads
//! (and were fitted with it); `kernels_overheads:` optionally overrides any of them when the
//! measured-kernel backend prices the step (`cost::select`), because the two backends leave
//! different work to the overheads: the kernel tables already price the LM head, every GEMM,
//! attention (with its KV-cache store), the fused MoE and the all-reduces, each measured in
//! isolation without launch gaps, so a per-layer floor fitted under the roofline (which also
//! absorbs the roofline's kernel-efficiency misses) is not the kernel backend's floor.
//! `servesim calibrate` writes a kernel-priced fit into this block; `run`/`validate` read the
//! block of the backend in use and `--explain` names it. Checks of every overhead value
//! (non-negative, plausible, the multipliers' ranges) live here, for both blocks.
use super::hardware::{
    HardwareProfile, Overheads, MAX_OVERHEAD_NS, VLLM_CPU_SCALE_MAX, VLLM_CPU_SCALE_MIN,
    WORKER_THREAD_CPU_SCALE_MAX, WORKER_THREAD_CPU_SCALE_MIN,
};
use super::load::non_negative;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The YAML key of the kernel backend's overrides.
pub const KERNELS_OVERHEADS: &str = "kernels_overheads";

/// `kernels_overheads:`: each field, when given, replaces the `overheads:` field of the same
/// name for the measured-kernel backend.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelsOverheads {
    pub step_cpu_ns: Option<f64>,
    pub per_request_cpu_ns: Option<f64>,
    pub graph_step_ns: Option<f64>,
    pub eager_layer_ns: Option<f64>,
    pub layer_ns: Option<f64>,
    pub moe_layer_ns: Option<f64>,
    pub worker_thread_cpu_scale: Option<f64>,
    pub vllm_step_cpu_scale: Option<f64>,
    pub vllm_per_request_cpu_scale: Option<f64>,
    pub request_latency_ns: Option<f64>,
    pub tokenize_per_token_ns: Option<f64>,
    pub stream_latency_ns: Option<f64>,
}

impl KernelsOverheads {
    /// The (field of `overheads`, override) pairs, in profile order.
    fn pairs<'a>(&self, o: &'a mut Overheads) -> [(&'a mut f64, Option<f64>); 12] {
        [
            (&mut o.step_cpu_ns, self.step_cpu_ns),
            (&mut o.per_request_cpu_ns, self.per_request_cpu_ns),
            (&mut o.graph_step_ns, self.graph_step_ns),
            (&mut o.eager_layer_ns, self.eager_layer_ns),
            (&mut o.layer_ns, self.layer_ns),
            (&mut o.moe_layer_ns, self.moe_layer_ns),
            (&mut o.worker_thread_cpu_scale, self.worker_thread_cpu_scale),
            (&mut o.vllm_step_cpu_scale, self.vllm_step_cpu_scale),
            (
                &mut o.vllm_per_request_cpu_scale,
                self.vllm_per_request_cpu_scale,
            ),
            (&mut o.request_latency_ns, self.request_latency_ns),
            (&mut o.tokenize_per_token_ns, self.tokenize_per_token_ns),
            (&mut o.stream_latency_ns, self.stream_latency_ns),
        ]
    }

    /// `base` with every given field replaced.
    pub fn apply(&self, base: &Overheads) -> Overheads {
        let mut o = base.clone();
        for (field, v) in self.pairs(&mut o) {
            if let Some(v) = v {
                *field = v;
            }
        }
        o
    }

    /// True when no field is given.
    pub fn is_empty(&self) -> bool {
        *self == KernelsOverheads::default()
    }
}

impl HardwareProfile {
    /// The overhead constants the backend reads: `overheads:`, with `kernels_overheads:` over
    /// them when `kernels` (the measured-kernel backend prices the step).
    pub fn overheads_for(&self, kernels: bool) -> Overheads {
        match (&self.kernels_overheads, kernels) {
            (Some(k), true) => k.apply(&self.overheads),
            _ => self.overheads.clone(),
        }
    }

    /// The profile as the kernel backend sees it: `kernels_overheads:` folded into
    /// `overheads:` (and removed). What a kernel-priced calibration fits.
    pub fn folded_for_kernels(&self) -> HardwareProfile {
        let mut h = self.clone();
        h.overheads = self.overheads_for(true);
        h.kernels_overheads = None;
        h
    }

    /// The block that holds the overheads the backend reads, for `--explain`.
    pub fn overheads_block(&self, kernels: bool) -> &'static str {
        match &self.kernels_overheads {
            Some(k) if kernels && !k.is_empty() => "`kernels_overheads:` over `overheads:`",
            _ => "`overheads:`",
        }
    }
}

/// Checks one block of overhead values (`section` is `overheads` or `kernels_overheads`).
pub fn check_overheads(origin: &str, section: &str, o: &Overheads) -> Result<()> {
    for (f, v) in [
        ("step_cpu_ns", o.step_cpu_ns),
        ("per_request_cpu_ns", o.per_request_cpu_ns),
        ("graph_step_ns", o.graph_step_ns),
        ("eager_layer_ns", o.eager_layer_ns),
        ("layer_ns", o.layer_ns),
        ("moe_layer_ns", o.moe_layer_ns),
        ("request_latency_ns", o.request_latency_ns),
        ("tokenize_per_token_ns", o.tokenize_per_token_ns),
        ("stream_latency_ns", o.stream_latency_ns),
    ] {
        let f = format!("{section}.{f}");
        non_negative(origin, &f, v)?;
        // An overhead of more than 1000 s is a unit mistake, and would overflow the clock.
        if v > MAX_OVERHEAD_NS {
            return Err(Error::invalid(
                origin,
                &f,
                format!("{v} ns is more than 1000 s: not a plausible overhead"),
            ));
        }
    }
    let scale = o.worker_thread_cpu_scale;
    if !(WORKER_THREAD_CPU_SCALE_MIN..=WORKER_THREAD_CPU_SCALE_MAX).contains(&scale) {
        return Err(Error::invalid(
            origin,
            format!("{section}.worker_thread_cpu_scale"),
            format!(
                "{scale} is outside [{WORKER_THREAD_CPU_SCALE_MIN}, {WORKER_THREAD_CPU_SCALE_MAX}]: a second thread on the GIL can neither remove the scheduler's own work nor more than double it"
            ),
        ));
    }
    for (f, scale) in [
        ("vllm_step_cpu_scale", o.vllm_step_cpu_scale),
        ("vllm_per_request_cpu_scale", o.vllm_per_request_cpu_scale),
    ] {
        if !(VLLM_CPU_SCALE_MIN..=VLLM_CPU_SCALE_MAX).contains(&scale) {
            return Err(Error::invalid(
                origin,
                format!("{section}.{f}"),
                format!(
                    "{scale} is outside [{VLLM_CPU_SCALE_MIN}, {VLLM_CPU_SCALE_MAX}]: the published vLLM step CPU times lie within that multiple of the sourced values"
                ),
            ));
        }
    }
    Ok(())
}
