//! Same-architecture transfer of measured kernel tables: a GPU without tables of its own (H20,
//! H800) whose profile names a donor (`kernel_tables_from: h200_sxm`) of the same `arch` is
//! priced with the donor's measured kernels, each operator's time carried to the target by the
//! two GPUs' datasheet-bound times for that operator's shape:
//!
//! t_target = t_donor + roofline_target(op) − roofline_donor(op)
//!
//! and t_donor × roofline_target(op) / roofline_donor(op) where the measurement is under its
//! bound (the two meet at t_donor = roofline_donor(op); [`scale`]).
//!
//! Why this form. The roofline terms are [`Roofline`]'s own per-operator prices (GEMM by the
//! dtype's peak or the weight and activation reads, routed experts, attention per layer, the
//! custom all-reduce's fixed latency plus bytes over the link): the compute-bound part moves
//! with the FLOPs of the op's dtype, the memory-bound part with the HBM bandwidth, the
//! collectives with the link, and whichever bounds the op on each GPU decides. Both roofline
//! instances carry the donor's efficiencies (the target's is the donor profile with the
//! target's datasheet figures: peaks, SM count and clock, HBM, NVLink and inter-node bandwidth),
//! so the change is the datasheet's alone; what the same sm90 kernel spends beyond its bound is
//! the donor's measurement, which a measured table carries over and a roofline guess does not
//! (public 86 runs: roofline 42.5 / 32.7% throughput / TPOT against 7.5 / 11.1% for tables).
//!
//! Why the bound part is replaced rather than the whole time scaled by the ratio. A measured
//! time holds a part the datasheet bound does not explain: launch and synchronisation latency,
//! tails of small grids, a kernel that cannot fill the GPU. That part does not follow bandwidth
//! or FLOPs (H20 has 78 SMs against H100's 132: a small, latency-bound grid gets no faster with
//! more HBM). Tested where the truth is known (H200's tables from H100's and back, same FLOPs
//! and NVLink, HBM 4.8 against 3.35 TB/s; `validation/kernel-transfer-notes.md`,
//! `tests/kernel_transfer.rs`): the replaced form's median |err| over 1,776 op prices is 3.0%
//! (H100 → H200) and 2.6% (H200 → H100), the plain ratio's 4.1 and 4.3%, the roofline's 32.5
//! and 23.6%; on decode GEMMs the ratio is off 15–28%, the replaced form 3–8%. A measurement
//! under its bound says the roofline's efficiency understates that kernel (SGLang's custom
//! all-reduce: ~10 µs measured at 512 KiB on H100 where the roofline's 0.2 link efficiency
//! gives ~20): there the bound's scale is wrong and the time scales with it instead of taking
//! the whole bound difference. The form rises with r_target, so more bandwidth or FLOPs never
//! makes an op slower, and a target no stronger than its donor on any figure (H800: H100's
//! die, NVLink cut) never prices an op below it.
//! Not captured: clock throttling under load (H800's ~1.6 GHz, FlashMLA's authors), an SM
//! count that changes which tile config a kernel picks or how full a mid-size grid runs, and
//! the compute and link ratios themselves (the H100/H200 pair differs only in HBM: no two GPUs
//! with tables share an architecture and differ in FLOPs). Roofline fallbacks (an op the donor's
//! tables lack) are priced by the target's own roofline, unscaled.
use super::curve::Curve;
use super::envelope::profiles_with_tables;
use super::{KernelCost, Parts};
use crate::cost::roofline::Roofline;
use crate::cost::BatchShape;
use crate::error::{Error, Result};
use crate::spec::hardware::{Arch, HardwareProfile};
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;

/// The donor's and the target's datasheet-bound prices of the same deployment.
#[derive(Debug, Clone)]
pub struct Transfer {
    donor: Roofline,
    target: Roofline,
    /// "H20 priced from h100_sxm tables scaled to H20's datasheet (same sm90 kernels)".
    pub note: String,
}

/// The measured donor time `t_donor` of an op carried to the target, from the op's
/// datasheet-bound time on the donor (`r_donor`) and on the target (`r_target`): the bound part
/// replaced, t_donor + (r_target − r_donor), when the measurement is at or above its bound;
/// a measurement under its bound (the roofline's efficiency understates the kernel) scales with
/// it, t_donor × r_target / r_donor. The two meet where t_donor = r_donor. Non-finite or
/// non-positive bounds leave the time as measured.
pub fn scale(t_donor: f64, r_donor: f64, r_target: f64) -> f64 {
    if !(r_donor > 0.0 && r_target > 0.0 && r_donor.is_finite() && r_target.is_finite()) {
        return t_donor;
    }
    if t_donor >= r_donor {
        t_donor + (r_target - r_donor)
    } else {
        t_donor * (r_target / r_donor)
    }
}

/// The bundled profile whose `kernel_tables` is `system` (the envelope's parsed list).
pub fn donor_profile(system: &str) -> Option<&'static HardwareProfile> {
    profiles_with_tables()
        .iter()
        .find(|h| h.kernel_tables.as_deref() == Some(system))
}

/// The donor's profile with the target's datasheet figures: what the donor's kernels would be
/// bound by on the target (efficiencies, latencies and name stay the donor's).
pub fn datasheet_twin(donor: &HardwareProfile, target: &HardwareProfile) -> HardwareProfile {
    let mut h = donor.clone();
    h.peaks = target.peaks.clone();
    h.memory.bandwidth_bytes_per_s = target.memory.bandwidth_bytes_per_s;
    h.link.bandwidth_bytes_per_s = target.link.bandwidth_bytes_per_s;
    h.link.inter_node_bandwidth_bytes_per_s = target.link.inter_node_bandwidth_bytes_per_s;
    h
}

/// "H20 priced from h100_sxm tables scaled to H20's datasheet (same sm90 kernels)".
pub fn note(target: &HardwareProfile, system: &str) -> String {
    let short = target.description.split(' ').nth(1).unwrap_or(&target.name);
    let arch = match target.arch {
        Arch::Ampere => "sm80",
        Arch::Hopper => "sm90",
        Arch::Blackwell => "sm100",
        Arch::Ascend => "Ascend",
        Arch::Ada => "sm89",
        Arch::Sm120 => "sm120",
    };
    format!(
        "{short} priced from {system} tables scaled to {short}'s datasheet (same {arch} kernels)"
    )
}

/// The donor profile `hw` takes its tables from, checked: bundled, same architecture.
pub fn donor_of(hw: &HardwareProfile, system: &str) -> Result<&'static HardwareProfile> {
    let bad = |why: String| {
        Error::invalid(
            format!("hardware profile {}", hw.name),
            "kernel_tables_from",
            why,
        )
    };
    let donor = donor_profile(system)
        .ok_or_else(|| bad(format!("no bundled profile has kernel tables `{system}`")))?;
    if donor.arch != hw.arch {
        return Err(bad(format!(
            "{system} is {} ({:?}), this profile {:?}: only the same architecture's kernels carry over",
            donor.name, donor.arch, hw.arch
        )));
    }
    Ok(donor)
}

impl Transfer {
    fn new(
        donor: &HardwareProfile,
        target: &HardwareProfile,
        system: &str,
        model: &ModelSpec,
        server: &ServerConfig,
    ) -> Result<Transfer> {
        Ok(Transfer {
            donor: Roofline::new(donor, model, server)?,
            target: Roofline::new(&datasheet_twin(donor, target), model, server)?,
            note: note(target, system),
        })
    }
}

/// `s` with only its decode requests.
pub(super) fn decode_only(s: &BatchShape) -> BatchShape {
    BatchShape {
        decode_reqs: s.decode_reqs,
        decode_ctx_sum: s.decode_ctx_sum,
        graph_bs: s.graph_bs,
        decode_width: s.decode_width,
        ..Default::default()
    }
}

/// `s` with only its prefill requests.
pub(super) fn prefill_only(s: &BatchShape) -> BatchShape {
    BatchShape {
        decode_reqs: 0,
        decode_ctx_sum: 0,
        graph_bs: None,
        ..*s
    }
}

impl KernelCost {
    /// The deployment on `hw` (no tables of its own) priced by the tables `db` of `system`,
    /// measured on the same-architecture donor profile, each op scaled to `hw`'s datasheet.
    pub fn transferred(
        hw: &HardwareProfile,
        model: &ModelSpec,
        server: &ServerConfig,
        db: &super::db::KernelDb,
        system: &str,
    ) -> Result<KernelCost> {
        let donor = donor_of(hw, system)?;
        let mut cost = KernelCost::new(hw, model, server, db)?;
        let x = Transfer::new(donor, hw, system, model, server)?;
        cost.provenance = format!("{} ({})", cost.provenance, x.note);
        for n in [
            &mut cost.decode_attn.note,
            &mut cost.prefill_attn.note,
            &mut cost.experts_note,
        ] {
            if !n.is_empty() && !n.starts_with("roofline") {
                *n += &format!("; {}", x.note);
            }
        }
        cost.transfer = Some(std::sync::Arc::new(x));
        cost.retabulate_graph_rows();
        Ok(cost)
    }

    /// A measured time `t` of the op `op` prices on a roofline, carried to this GPU ([`scale`]);
    /// `t` itself without a transfer.
    pub(super) fn xfer(&self, t: f64, op: impl Fn(&Roofline) -> f64) -> f64 {
        match &self.transfer {
            Some(x) => scale(t, op(&x.donor), op(&x.target)),
            None => t,
        }
    }

    /// A curve's value at `x` for op `op` ([`Self::xfer`]), and whether `x` left the grid.
    pub(super) fn xfer_at(&self, c: &Curve, x: f64, op: impl Fn(&Roofline) -> f64) -> (f64, bool) {
        let (v, out) = c.at(x);
        (self.xfer(v, op), out)
    }

    /// One layer's measured attention time `t` for `only` (the decode or prefill part of a
    /// step) carried to this GPU, by the roofline's per-layer attention of that part.
    pub(super) fn xfer_attention(&self, t: f64, only: &BatchShape) -> f64 {
        let layers = self.num_layers.max(1.0);
        self.xfer(t, |r| r.attention_op_ns(only) / layers)
    }

    /// The step's own prices (no envelope) per component (GEMMs, attention, routed experts,
    /// all-reduce, LM head), `None` where the roofline fallback priced it: what the transfer's
    /// test compares between GPUs.
    pub fn measured_components(&self, s: &BatchShape) -> [Option<f64>; 5] {
        let p: Parts = self.own_parts(s);
        std::array::from_fn(|j| (p.fallback & (1 << j) == 0).then(|| p.component(j)))
    }
}
