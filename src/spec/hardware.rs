//! Hardware profiles: one accelerator (one TP rank) and its node, as YAML in
//! `hardware-profiles/`. Datasheet peaks plus the efficiency and overhead constants of the cost
//! model; every constant is a named field so calibration can fit it.
pub use super::arch::Arch;
pub use super::hardware_backend::{
    KernelsOverheads, Overheads, MAX_OVERHEAD_NS, VLLM_CPU_SCALE_MAX, VLLM_CPU_SCALE_MIN,
    WORKER_THREAD_CPU_SCALE_MAX, WORKER_THREAD_CPU_SCALE_MIN,
};
use super::load::{efficiency, non_negative, positive};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Dense peak throughput per data type, in operations per second (no sparsity).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Peaks {
    pub bf16_flops_per_s: f64,
    /// Absent on chips without FP8 tensor cores (A100, Ascend 910B/C).
    #[serde(default)]
    pub fp8_flops_per_s: Option<f64>,
    #[serde(default)]
    pub int8_ops_per_s: Option<f64>,
    /// Dense FP4 (NVFP4 / MXFP4) tensor throughput; absent where the chip has none or the
    /// profile does not state it (0 in the envelope's order). Read by the roofline of NVFP4
    /// checkpoints (`ComputeType::Fp4`) and by `cost::kernels::envelope::no_stronger`: B300 has B200's BF16, FP8, HBM and NVLink
    /// figures but 1.5× its FP4 (and twice its attention exponent rate), so it is stronger.
    #[serde(default)]
    pub fp4_flops_per_s: Option<f64>,
    /// Streaming multiprocessors on one device (datasheet); absent where no source gives it.
    /// Carries a kernel timing measured on another GPU over per SM-clock (`cost::mxfp4`).
    #[serde(default)]
    pub sm_count: Option<u32>,
    /// The SMs' boost clock in Hz (datasheet), with `sm_count`.
    #[serde(default)]
    pub sm_boost_clock_hz: Option<f64>,
}

impl Peaks {
    /// SM-cycles per second (`sm_count × sm_boost_clock_hz`), when the profile states both.
    pub fn sm_cycles_per_s(&self) -> Option<f64> {
        Some(f64::from(self.sm_count?) * self.sm_boost_clock_hz?)
    }
}

/// Memory of one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// What `nvidia-smi memory.total` (or `torch.npu.mem_get_info()[1]`) reports, in MiB; the
    /// `gpu_mem` SGLang's defaults are keyed on.
    pub reported_total_mib: f64,
    /// Free memory of one device when SGLang starts a single-GPU server, after the CUDA
    /// context (`total_gpu_memory` in `model_runner` at TP 1, logged as `Load weight begin.
    /// avail mem=…`), GiB.
    pub free_at_start_gib: f64,
    /// Memory SGLang allocates between its two free-memory measurements besides the weights,
    /// GiB. `ModelRunner.initialize` (0.4.1, 0.5.4 wheels) calls `load_model` and then
    /// `init_memory_pool` with nothing in between unless LoRA, double sparsity or torchao is
    /// on, so logs show ≈ 0 (validation/sglang-kv-pool-notes.md).
    #[serde(default)]
    pub runtime_reserved_gib: f64,
    /// Memory the tensor-parallel group's communicators take on each device when TP > 1
    /// (NCCL communicators, with NVLink SHARP buffers on NVSwitch systems, and the custom
    /// all-reduce buffers), GiB: allocated in `init_torch_distributed`, before SGLang reads
    /// `total_gpu_memory`, and logged as `Init torch distributed ends. mem usage=…`.
    #[serde(default)]
    pub tp_comm_init_gib: f64,
    /// Datasheet HBM bandwidth, bytes/s.
    pub bandwidth_bytes_per_s: f64,
}

impl Memory {
    /// SGLang's `total_gpu_memory` for a TP group of `tp` ranks: the free memory it reads
    /// after `init_torch_distributed`, GiB (what `Load weight begin. avail mem=…` logs).
    pub fn free_before_weights_gib(&self, tp: u64) -> f64 {
        let comm = if tp > 1 { self.tp_comm_init_gib } else { 0.0 };
        self.free_at_start_gib - comm
    }
}

/// Intra-node link between ranks of one TP group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// Unidirectional bandwidth per device, bytes/s.
    pub bandwidth_bytes_per_s: f64,
    /// Latency of one NCCL/HCCL collective step (alpha of the alpha-beta ring model), ns.
    pub latency_ns: f64,
    /// Ranks per node.
    pub devices_per_node: u32,
    /// Fixed time of one SGLang custom all-reduce (the one-shot/two-shot NVLink kernel used
    /// below its 8 MiB limit): launch, the cross-GPU barrier flags and the reduction tail, ns.
    /// Physical range 3–30 µs (a kernel launch plus one or two peer-to-peer flag round trips
    /// over NVLink); the measurements put it at ≈ 8–15 µs.
    #[serde(default = "default_custom_ar_latency_ns")]
    pub custom_all_reduce_latency_ns: f64,
    /// Fixed time of a small-message all-reduce inside one node per peer rank, ns: where set,
    /// an all-reduce of `g` ranks in a node pays `(g − 1) ×` this in place of `latency_ns`.
    /// For collectives whose measured latency grows with the rank count (HCCL on Ascend: its
    /// full-mesh small-message all-reduce exchanges a flag and a chunk with each of the
    /// `g − 1` peers). `None` keeps the rank-independent `latency_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_reduce_latency_per_peer_ns: Option<f64>,
    /// Network bandwidth between nodes per device, unidirectional bytes/s: the device's share
    /// of its node's NICs (DGX H100: 8 × 400 Gb/s ConnectX-7, one per GPU = 50 GB/s). Prices
    /// TP / DP-attention groups larger than one node (`cost::collective`); never above
    /// `bandwidth_bytes_per_s`. A profile without it cannot span nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_node_bandwidth_bytes_per_s: Option<f64>,
    /// Latency of one inter-node collective step (alpha over the network), ns; never below
    /// `latency_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inter_node_latency_ns: Option<f64>,
}

/// The inter-node part of a [`Link`], when the profile has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InterNodeLink {
    pub bandwidth_bytes_per_s: f64,
    pub latency_ns: f64,
}

impl Link {
    /// The network between nodes: bandwidth required, latency defaulting to the node link's.
    pub fn inter_node(&self) -> Option<InterNodeLink> {
        Some(InterNodeLink {
            bandwidth_bytes_per_s: self.inter_node_bandwidth_bytes_per_s?,
            latency_ns: self.inter_node_latency_ns.unwrap_or(self.latency_ns),
        })
    }
}

/// Initial `link.custom_all_reduce_latency_ns` where a profile gives none: 10 µs.
pub const DEFAULT_CUSTOM_AR_LATENCY_NS: f64 = 10e3;

fn default_custom_ar_latency_ns() -> f64 {
    DEFAULT_CUSTOM_AR_LATENCY_NS
}

/// Initial `efficiency.custom_all_reduce` where a profile gives none.
pub const DEFAULT_CUSTOM_AR_EFFICIENCY: f64 = 0.2;

fn default_custom_ar_efficiency() -> f64 {
    DEFAULT_CUSTOM_AR_EFFICIENCY
}

/// Efficiency of one attention backend: achieved / peak.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttentionEfficiency {
    /// Fraction of the compute peak reached by prefill (extend) attention.
    pub prefill: f64,
    /// Fraction of HBM bandwidth reached reading the KV cache in decode attention.
    pub decode: f64,
}

/// The fitted (or datasheet-default) constants of the roofline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Efficiency {
    /// Large-shape GEMM efficiency (achieved / peak FLOP/s).
    pub gemm: f64,
    /// Token count at which GEMM efficiency is half of `gemm` (small-batch roll-off:
    /// eff(m) = gemm · m / (m + gemm_half_tokens)).
    pub gemm_half_tokens: f64,
    /// Achieved / datasheet HBM bandwidth for streaming weights.
    pub memory: f64,
    /// Per attention backend (`flashinfer`, `triton`, `fa3`, `ascend`, ...).
    pub attention: BTreeMap<String, AttentionEfficiency>,
    /// Achieved / link bandwidth of the NCCL (HCCL) ring all-reduce, used above SGLang's custom
    /// all-reduce limit (prefill-sized messages), on Ascend and at TP sizes the custom kernel
    /// does not support.
    pub collective: f64,
    /// Effective link efficiency of SGLang's custom all-reduce at decode message sizes (below
    /// 8 MiB): bytes moved / (link bandwidth × time beyond the fixed latency). Small messages
    /// never reach link bandwidth (per-block flag synchronisation, few SMs); physical range
    /// 0.1–0.5 (≈ 0.15–0.25 measured per the issue). A fit below 0.1 is the link absorbing a
    /// missing mechanism.
    #[serde(default = "default_custom_ar_efficiency")]
    pub custom_all_reduce: f64,
    /// Multiplier on the bf16 GEMM throughput when expert weights are MXFP4 and the chip has no
    /// native FP4 path (dequantising kernels); 1.0 where MXFP4 runs natively.
    #[serde(default = "one")]
    pub mxfp4_compute: f64,
    /// Multiplier on achieved bandwidth when reading MXFP4 expert weights (dequant overhead).
    #[serde(default = "one")]
    pub mxfp4_memory: f64,
    /// Large-shape efficiency of the grouped (MoE expert) GEMM; defaults to `gemm`.
    #[serde(default)]
    pub moe_gemm: Option<f64>,
    /// Rows per expert at which the MXFP4 expert kernel reaches half of its large-shape
    /// throughput (as `gemm_half_tokens` for the dense GEMM); defaults to `gemm_half_tokens`.
    /// A dequantising fallback costs about the same per row at any row count (small value).
    #[serde(default)]
    pub mxfp4_half_tokens: Option<f64>,
}

fn one() -> f64 {
    1.0
}

/// KV-transfer NICs between nodes (RDMA), per GPU, in a hardware profile (`pd_transfer:`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PdTransferLink {
    /// Achieved RDMA bandwidth per GPU (its own NIC), bytes/s.
    pub rdma_bandwidth_bytes_per_s: f64,
    /// Fixed time per transfer (RDMA write completion, status message, decode-side poll), ns.
    pub latency_ns: f64,
}

/// A hardware profile as stored in `hardware-profiles/NAME.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwareProfile {
    pub name: String,
    pub description: String,
    pub arch: Arch,
    pub peaks: Peaks,
    pub memory: Memory,
    pub link: Link,
    pub efficiency: Efficiency,
    pub overheads: Overheads,
    /// Overrides of `overheads:` for the measured-kernel backend (fitted with it), field by
    /// field ([`super::hardware_backend`]).
    #[serde(default)]
    pub kernels_overheads: Option<KernelsOverheads>,
    /// Price of one device-hour (USD), for planning; overridable on the command line.
    #[serde(default)]
    pub cost_per_device_hour_usd: Option<f64>,
    /// Where the efficiency/overhead constants come from ("datasheet defaults" or a fit).
    #[serde(default)]
    pub calibration: Option<String>,
    /// System name of the measured-kernel tables (`hardware-profiles/kernels/<name>/`, e.g.
    /// `h100_sxm`) that `--cost-model kernels` reads for this profile.
    #[serde(default)]
    pub kernel_tables: Option<String>,
    /// Whether these tables take part in pricing another GPU under the envelope
    /// (`cost::kernels::envelope`: bound a stronger GPU, floor a roofline fallback; default
    /// true; false above the ladder's top, B300 and GB200, and for the PCIe L40S and RTX PRO
    /// 6000). The profile's own deployments are priced under the envelope either way.
    #[serde(default = "yes")]
    pub envelope_floor: bool,
    /// For a profile without tables of its own: the table system of a bundled profile of the
    /// same `arch` (e.g. `h100_sxm`) whose measured kernels price this GPU, each op scaled by
    /// the ratio of the two datasheets' bound times (`cost::kernels::transfer`).
    #[serde(default)]
    pub kernel_tables_from: Option<String>,
    /// KV-transfer NICs for prefill/decode disaggregation between nodes (`spec::pd`).
    #[serde(default)]
    pub pd_transfer: Option<PdTransferLink>,
    /// What resolving the profile assumed (a GPU named by its short name, `H100`), printed with
    /// every run; never read from YAML.
    #[serde(skip)]
    pub notes: Vec<String>,
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

impl HardwareProfile {
    /// `peaks.sm_count` and `peaks.sm_boost_clock_hz` come together, within what GPUs have.
    fn check_sms(&self, origin: &str) -> Result<()> {
        match (self.peaks.sm_count, self.peaks.sm_boost_clock_hz) {
            (None, None) => Ok(()),
            (Some(n), Some(hz)) => {
                if !(1..=1024).contains(&n) {
                    return Err(Error::invalid(
                        origin,
                        "peaks.sm_count",
                        format!("{n} is outside 1–1024"),
                    ));
                }
                if !(1e8..=5e9).contains(&hz) {
                    return Err(Error::invalid(
                        origin,
                        "peaks.sm_boost_clock_hz",
                        format!("{hz} Hz is outside 0.1–5 GHz (the unit is Hz, not GHz)"),
                    ));
                }
                Ok(())
            }
            (Some(_), None) => Err(Error::invalid(
                origin,
                "peaks.sm_boost_clock_hz",
                "missing: give it with peaks.sm_count",
            )),
            (None, Some(_)) => Err(Error::invalid(
                origin,
                "peaks.sm_count",
                "missing: give it with peaks.sm_boost_clock_hz",
            )),
        }
    }

    /// The inter-node link, when given: bandwidth > 0 and at most the node link's (a network
    /// faster than NVLink would make spanning nodes cheaper than staying in one), latency ≥ 0
    /// and at least the node link's.
    fn check_inter_node(&self, origin: &str) -> Result<()> {
        let l = &self.link;
        if let Some(bw) = l.inter_node_bandwidth_bytes_per_s {
            positive(origin, "link.inter_node_bandwidth_bytes_per_s", bw)?;
            if bw > l.bandwidth_bytes_per_s {
                return Err(Error::invalid(
                    origin,
                    "link.inter_node_bandwidth_bytes_per_s",
                    format!(
                        "{bw:e} bytes/s exceeds the node link's link.bandwidth_bytes_per_s {:e}; the limit is the node link",
                        l.bandwidth_bytes_per_s
                    ),
                ));
            }
        }
        if let Some(lat) = l.inter_node_latency_ns {
            non_negative(origin, "link.inter_node_latency_ns", lat)?;
            if lat < l.latency_ns {
                return Err(Error::invalid(
                    origin,
                    "link.inter_node_latency_ns",
                    format!(
                        "{lat} ns is below the node link's link.latency_ns {}; the limit is the node link",
                        l.latency_ns
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Checks every number; `origin` names the file in errors.
    pub fn validate(&self, origin: &str) -> Result<()> {
        if self.kernel_tables.is_some() && self.kernel_tables_from.is_some() {
            return Err(Error::invalid(
                origin,
                "kernel_tables_from",
                "give kernel_tables (this GPU's own tables) or kernel_tables_from (a donor's), not both",
            ));
        }
        positive(
            origin,
            "peaks.bf16_flops_per_s",
            self.peaks.bf16_flops_per_s,
        )?;
        for (f, v) in [
            ("peaks.fp8_flops_per_s", self.peaks.fp8_flops_per_s),
            ("peaks.int8_ops_per_s", self.peaks.int8_ops_per_s),
            ("peaks.fp4_flops_per_s", self.peaks.fp4_flops_per_s),
        ] {
            if let Some(v) = v {
                positive(origin, f, v)?;
            }
        }
        positive(
            origin,
            "memory.reported_total_mib",
            self.memory.reported_total_mib,
        )?;
        positive(
            origin,
            "memory.free_at_start_gib",
            self.memory.free_at_start_gib,
        )?;
        non_negative(
            origin,
            "memory.runtime_reserved_gib",
            self.memory.runtime_reserved_gib,
        )?;
        non_negative(
            origin,
            "memory.tp_comm_init_gib",
            self.memory.tp_comm_init_gib,
        )?;
        positive(
            origin,
            "memory.bandwidth_bytes_per_s",
            self.memory.bandwidth_bytes_per_s,
        )?;
        if self.memory.free_at_start_gib * 1024.0 > self.memory.reported_total_mib * 1.001 {
            return Err(Error::invalid(
                origin,
                "memory.free_at_start_gib",
                "exceeds memory.reported_total_mib",
            ));
        }
        positive(
            origin,
            "link.bandwidth_bytes_per_s",
            self.link.bandwidth_bytes_per_s,
        )?;
        non_negative(origin, "link.latency_ns", self.link.latency_ns)?;
        if let Some(p) = self.link.all_reduce_latency_per_peer_ns {
            non_negative(origin, "link.all_reduce_latency_per_peer_ns", p)?;
        }
        if let Some(t) = &self.pd_transfer {
            positive(
                origin,
                "pd_transfer.rdma_bandwidth_bytes_per_s",
                t.rdma_bandwidth_bytes_per_s,
            )?;
            non_negative(origin, "pd_transfer.latency_ns", t.latency_ns)?;
        }
        non_negative(
            origin,
            "link.custom_all_reduce_latency_ns",
            self.link.custom_all_reduce_latency_ns,
        )?;
        // Magnitudes no accelerator has: almost always a unit mistake (TFLOP/s written as
        // FLOP/s), and they would stretch simulated time past what the clock can hold.
        for (f, v, min, unit) in [
            (
                "peaks.bf16_flops_per_s",
                Some(self.peaks.bf16_flops_per_s),
                1e9,
                "FLOP/s",
            ),
            (
                "peaks.fp8_flops_per_s",
                self.peaks.fp8_flops_per_s,
                1e9,
                "FLOP/s",
            ),
            (
                "peaks.int8_ops_per_s",
                self.peaks.int8_ops_per_s,
                1e9,
                "OP/s",
            ),
            (
                "peaks.fp4_flops_per_s",
                self.peaks.fp4_flops_per_s,
                1e9,
                "FLOP/s",
            ),
            (
                "memory.bandwidth_bytes_per_s",
                Some(self.memory.bandwidth_bytes_per_s),
                1e9,
                "bytes/s",
            ),
            (
                "link.bandwidth_bytes_per_s",
                Some(self.link.bandwidth_bytes_per_s),
                1e6,
                "bytes/s",
            ),
        ] {
            if let Some(v) = v.filter(|&v| v < min) {
                return Err(Error::invalid(
                    origin,
                    f,
                    format!("{v} {unit} is implausibly small (below {min:e}); the unit is {unit}, not T{unit} or G{unit}"),
                ));
            }
        }
        self.check_inter_node(origin)?;
        self.check_sms(origin)?;
        if self.link.devices_per_node == 0 {
            return Err(Error::invalid(
                origin,
                "link.devices_per_node",
                "must be ≥ 1",
            ));
        }
        let e = &self.efficiency;
        efficiency(origin, "efficiency.gemm", e.gemm)?;
        non_negative(origin, "efficiency.gemm_half_tokens", e.gemm_half_tokens)?;
        efficiency(origin, "efficiency.memory", e.memory)?;
        efficiency(origin, "efficiency.collective", e.collective)?;
        efficiency(origin, "efficiency.custom_all_reduce", e.custom_all_reduce)?;
        efficiency(origin, "efficiency.mxfp4_compute", e.mxfp4_compute)?;
        efficiency(origin, "efficiency.mxfp4_memory", e.mxfp4_memory)?;
        if let Some(m) = e.moe_gemm {
            efficiency(origin, "efficiency.moe_gemm", m)?;
        }
        if let Some(m) = e.mxfp4_half_tokens {
            non_negative(origin, "efficiency.mxfp4_half_tokens", m)?;
        }
        if e.attention.is_empty() {
            return Err(Error::invalid(
                origin,
                "efficiency.attention",
                "needs at least one backend",
            ));
        }
        for (name, a) in &e.attention {
            efficiency(
                origin,
                &format!("efficiency.attention.{name}.prefill"),
                a.prefill,
            )?;
            efficiency(
                origin,
                &format!("efficiency.attention.{name}.decode"),
                a.decode,
            )?;
        }
        let o = &self.overheads;
        if o.client_send_ns.is_some() {
            return Err(Error::invalid(
                origin,
                "overheads.client_send_ns",
                "the client's send cost is no longer a hardware constant: remove it and pass \
                 --client-send-us (microseconds) or `client-send-us:` in the scenario's client section",
            ));
        }
        super::hardware_backend::check_overheads(origin, "overheads", o)?;
        if let Some(k) = &self.kernels_overheads {
            let kernels = k.apply(o);
            super::hardware_backend::check_overheads(
                origin,
                super::hardware_backend::KERNELS_OVERHEADS,
                &kernels,
            )?;
        }
        if let Some(c) = self.cost_per_device_hour_usd {
            non_negative(origin, "cost_per_device_hour_usd", c)?;
        }
        Ok(())
    }

    /// Peak throughput for a compute data type, falling back to bf16 where the chip has no
    /// native path (e.g. FP8 weights on A100 run as W8A16 at bf16 speed).
    pub fn peak_ops_per_s(&self, dtype: ComputeType) -> f64 {
        match dtype {
            ComputeType::Bf16 => self.peaks.bf16_flops_per_s,
            ComputeType::Fp8 => self
                .peaks
                .fp8_flops_per_s
                .unwrap_or(self.peaks.bf16_flops_per_s),
            ComputeType::Int8 => self
                .peaks
                .int8_ops_per_s
                .unwrap_or(self.peaks.bf16_flops_per_s),
            // A profile that states no FP4 rate is priced at its FP8 rate (then bf16's).
            ComputeType::Fp4 => self
                .peaks
                .fp4_flops_per_s
                .unwrap_or_else(|| self.peak_ops_per_s(ComputeType::Fp8)),
        }
    }

    /// The attention efficiency of `backend`, or an error listing the profile's backends.
    pub fn attention(&self, backend: &str) -> Result<AttentionEfficiency> {
        self.efficiency
            .attention
            .get(backend)
            .copied()
            .ok_or_else(|| Error::Unknown {
                kind: "attention backend for this hardware",
                name: backend.to_string(),
                available: self
                    .efficiency
                    .attention
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// The arithmetic a GEMM runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputeType {
    Bf16,
    Fp8,
    Int8,
    /// NVFP4 weights and activations (W4A4) on FP4 tensor cores.
    Fp4,
}

fn yes() -> bool {
    true
}
