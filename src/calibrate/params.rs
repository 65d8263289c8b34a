//! The fittable constants of a hardware profile: names (`gemm`, `attention.flashinfer.decode`,
//! `step_cpu_ns`, ...), where each lives in the profile (and in its YAML), its bounds, and the
//! coordinate the optimiser moves.
//!
//! Every constant carries physical bounds (the reason is written beside each), a prior centred
//! on its datasheet / initial-judgement value, and a default sharing for joint fits of several
//! profiles: per hardware for what the accelerator decides (efficiencies, device-side floors),
//! shared for what the host CPU, the SGLang version or the bench client decides (scheduler and
//! HTTP overheads); `--params name@hw|@shared` overrides it.
//!
//! Every constant is optimised in a transformed coordinate `x` so that steps are relative and
//! bounds are boxes: an efficiency or ratio `v` uses `x = ln v` (so `v` stays positive); an
//! overhead uses `x = ln(1 + v / scale)` so that 0 is
//! reachable (`x = 0`) and steps are relative once `v ≫ scale`. Candidate values are rounded to
//! [`SIG_DIGITS`] significant digits before they are evaluated, so the value written to the YAML
//! is exactly the value the fit evaluated.
pub use super::engine_scope::EngineScope;
pub use super::values::{format_value, round_sig, SIG_DIGITS};
use crate::error::{Error, Result};
use crate::spec::hardware::HardwareProfile;

/// Which top-level section of the profile holds a constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Memory,
    Link,
    Efficiency,
    Overheads,
}

impl Section {
    /// The YAML key of the section.
    pub fn key(self) -> &'static str {
        match self {
            Section::Memory => "memory",
            Section::Link => "link",
            Section::Efficiency => "efficiency",
            Section::Overheads => "overheads",
        }
    }
}

/// How the optimiser's coordinate maps to the value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Transform {
    /// `v = e^x`.
    Log,
    /// `v = scale · (e^x − 1)`; `x = 0` is `v = 0`.
    Log1p { scale: f64 },
}

/// Whether a constant takes one value per hardware profile or one value shared by every
/// profile of a joint fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sharing {
    /// One value per profile: the constant describes the accelerator (its kernels, HBM, links).
    PerHardware,
    /// One value for every profile of the fit: the constant describes the host CPU, the
    /// serving software or the benchmark client, which the profiles of a fit have in common.
    Shared,
}

impl Sharing {
    /// The `@` suffix of `--params` (`memory@hw`, `step_cpu_ns@shared`).
    pub fn suffix(self) -> &'static str {
        match self {
            Sharing::PerHardware => "hw",
            Sharing::Shared => "shared",
        }
    }
}

/// How a constant is fitted, whatever it addresses: its section, coordinate, bounds, prior,
/// sharing and engines (one row of [`SCALARS`], or an attention efficiency).
struct Meta {
    section: Section,
    transform: Transform,
    /// Physical bounds of the value and why.
    lo: f64,
    hi: f64,
    bounds_why: &'static str,
    /// Centre of the prior: the datasheet / initial-judgement value every bundled profile
    /// started from (never a fitted value, so a held-out profile can be predicted at it).
    prior: f64,
    prior_sd: f64,
    /// Default sharing in a joint fit, and why.
    sharing: Sharing,
    sharing_why: &'static str,
    /// The engines whose runs it acts on.
    engine: EngineScope,
}

/// A scalar field of [`HardwareProfile`] that calibration may fit.
struct Scalar {
    name: &'static str,
    get: fn(&HardwareProfile) -> f64,
    set: fn(&mut HardwareProfile, f64),
    meta: Meta,
}

/// Why the per-hardware constants are per hardware.
const SILICON: &str = "kernels, HBM and links differ per accelerator: one value per profile";
/// Why the host-side overheads are shared.
const HOST: &str = "CPU time of SGLang's Python processes (or of the bench client): it depends on the SGLang version and the host CPU, not on the accelerator: one value for all profiles of a joint fit";
/// Why the multipliers on vLLM's own sourced CPU time are shared (they act on vLLM servers
/// only).
const VLLM_HOST: &str = "CPU time of vLLM's engine-core process: the host CPU and the vLLM version decide it, not the accelerator: one value for all profiles of a joint fit";

/// `v = e^x`: an efficiency or a ratio.
const LOG: Transform = Transform::Log;
/// `v = scale · (e^x − 1)`: an overhead that may be 0.
const fn log1p(scale: f64) -> Transform {
    Transform::Log1p { scale }
}

/// One row of [`SCALARS`]: `section.field` of the profile (its name is the field's), the
/// transform, bounds, prior centre and width, default sharing and why, the engines it acts
/// on, and why the bounds are where they are; `get`/`set` replace plain field access where
/// the field is optional.
macro_rules! scalar {
    ($sec:ident . $field:ident, $transform:expr, [$lo:expr, $hi:expr], prior $prior:expr,
     sd $sd:expr, $sharing:ident: $sharing_why:expr, $engine:ident, $why:expr
     $(, get $get:expr, set $set:expr)?) => {
        Scalar {
            name: stringify!($field),
            get: scalar!(@or [$($get)?] |h| h.$sec.$field),
            set: scalar!(@or [$($set)?] |h, v| h.$sec.$field = v),
            meta: Meta {
                section: scalar!(@section $sec),
                transform: $transform,
                lo: $lo,
                hi: $hi,
                bounds_why: $why,
                prior: $prior,
                prior_sd: $sd,
                sharing: Sharing::$sharing,
                sharing_why: $sharing_why,
                engine: EngineScope::$engine,
            },
        }
    };
    (@or [] $default:expr) => { $default };
    (@or [$given:expr] $default:expr) => { $given };
    (@section memory) => { Section::Memory };
    (@section link) => { Section::Link };
    (@section efficiency) => { Section::Efficiency };
    (@section overheads) => { Section::Overheads };
}

/// Every scalar constant, in profile order, with its physical bounds (the reason beside each),
/// its prior (centre: the datasheet / initial-judgement value every bundled profile started
/// from; width `prior_sd` in coordinates, ≈ ln of a factor: HBM efficiency (0.2, ≈ ×1.22) is
/// well known, grouped-GEMM efficiency and its roll-off (1.4, ≈ ×4) are not, and an MXFP4
/// fallback (3, ≈ ×20) is a guess; overheads use 1 in units of their scale) and its default
/// sharing in a joint fit. An overhead's `scale` is a typical magnitude (below it steps are
/// additive, above it relative). A fit that ends at a bound is reported as such: the runs ask
/// for a value physics does not allow, so a mechanism is missing from the cost model.
#[rustfmt::skip]
const SCALARS: &[Scalar] = &[
    // Memory allocated between SGLang's two free-memory measurements: it sizes the KV pool, so
    // it shows in retraction-bound runs.
    scalar!(memory.runtime_reserved_gib, log1p(1.0), [0.0, 4.0], prior 0.0, sd 1.0,
        PerHardware: "what a deployment allocates between the two readings depends on the device's stack", Both,
        "SGLang allocates nothing between its two free-memory readings unless LoRA, double sparsity or torchao is on: logged gaps of 0.00–0.09 GiB (validation/sglang-kv-pool-notes.md); 4 GiB would be a large workspace no log shows"),
    scalar!(efficiency.gemm, LOG, [0.3, 0.95], prior 0.8, sd 0.4, PerHardware: SILICON, Both,
        "cuBLAS/CUTLASS reach 60–90% of dense peak on large bf16/fp8 GEMMs; below 0.3 a large GEMM is not what runs (small M is the roll-off's job); 0.95 is the most any measured GEMM sustains"),
    scalar!(efficiency.gemm_half_tokens, LOG, [4.0, 512.0], prior 64.0, sd 1.4, PerHardware: SILICON, Both,
        "rows at which a GEMM reaches half its large-shape efficiency: tensor-core tiles are 64–256 rows, so the knee lies between a few rows and a few tiles"),
    scalar!(efficiency.memory, LOG, [0.6, 0.95], prior 0.85, sd 0.2, PerHardware: SILICON, Both,
        "STREAM-like copy kernels reach 80–92% of datasheet HBM bandwidth; below 0.6 weights are not being streamed (a missing per-step floor is the usual cause)"),
    scalar!(efficiency.collective, LOG, [0.3, 0.95], prior 0.8, sd 0.5, PerHardware: SILICON, Both,
        "NCCL ring all-reduce reaches 70–90% of link bandwidth at large messages (nccl-tests bus bandwidth); small messages are the custom all-reduce's latency, not a lower efficiency"),
    scalar!(efficiency.custom_all_reduce, LOG, [0.1, 0.5], prior 0.2, sd 0.5, PerHardware: SILICON, Both,
        "SGLang's custom all-reduce at decode sizes never reaches link bandwidth (one-shot/two-shot kernels over NVLink peer memory move small messages at 10–50% of it); below 0.1 or above 0.5 is a missing mechanism, not the link"),
    // Its fixed time: a launch plus one or two NVLink flag round trips, 3–30 µs.
    scalar!(link.custom_all_reduce_latency_ns, LOG, [3e3, 3e4], prior 10e3, sd 0.5, PerHardware: SILICON, Both,
        "a kernel launch plus one or two flag round trips over NVLink peer memory: 3–30 µs"),
    scalar!(efficiency.mxfp4_compute, LOG, [0.02, 1.0], prior 1.0, sd 3.0, PerHardware: SILICON, Both,
        "multiplier on the bf16 GEMM rate for MXFP4 experts: 1 where the chip runs MXFP4 natively; a dequantising fallback converts every weight per call, at worst ~50× slower"),
    scalar!(efficiency.mxfp4_memory, LOG, [0.1, 1.0], prior 1.0, sd 3.0, PerHardware: SILICON, Both,
        "multiplier on achieved bandwidth for MXFP4 expert weights: at best the bytes stream as fast as any weight, at worst a dequantising pass reads them ~10× over"),
    scalar!(efficiency.moe_gemm, LOG, [0.15, 0.95], prior 0.8, sd 1.4, PerHardware: SILICON, Both,
        "grouped (fused-MoE) GEMMs reach 20–70% of peak, untuned triton configs the low end (SGLang PR #6939: tuning gained 1.3–2×); below 0.15 a different kernel runs",
        get |h| h.efficiency.moe_gemm.unwrap_or(h.efficiency.gemm),
        set |h, v| h.efficiency.moe_gemm = Some(v)),
    scalar!(efficiency.mxfp4_half_tokens, LOG, [0.1, 512.0], prior 64.0, sd 3.0, PerHardware: SILICON, Both,
        "as gemm_half_tokens; down to 0.1 (no roll-off) because a dequantising fallback costs the same per row at any row count",
        get |h| h.efficiency.mxfp4_half_tokens.unwrap_or(h.efficiency.gemm_half_tokens),
        set |h, v| h.efficiency.mxfp4_half_tokens = Some(v)),
    scalar!(overheads.step_cpu_ns, log1p(1e6), [0.1e6, 20e6], prior 2.0e6, sd 1.0, Shared: HOST, Sglang,
        "one scheduler iteration of SGLang's Python event loop (batch formation, result processing) profiles at 0.3–10 ms; under 0.1 ms Python cannot go, over 20 ms the scheduler would be the bottleneck of every run"),
    scalar!(overheads.per_request_cpu_ns, log1p(5e3), [0.0, 100e3], prior 5.0e3, sd 1.0, Shared: HOST, Sglang,
        "Python bookkeeping per running request per iteration: 0 when vectorised, at most tens of µs"),
    // The worker-thread overlap of SGLang 0.3.6–0.5.3 (spec::scheduler_cpu): one value per SGLang
    // version group by construction (it only acts on those versions), shared like the CPU time.
    scalar!(overheads.worker_thread_cpu_scale, LOG,
        [crate::spec::hardware::WORKER_THREAD_CPU_SCALE_MIN, crate::spec::hardware::WORKER_THREAD_CPU_SCALE_MAX],
        prior 1.0, sd 0.35, Shared: HOST, Sglang,
        "the overlap worker thread of SGLang 0.3.6–0.5.3 takes turns with the scheduler on the GIL (SGLang issue #2573): the scheduler's Python work per iteration is at least its own (×1) and at most that plus as much again from the forward thread (×2)"),
    scalar!(overheads.graph_step_ns, log1p(3e5), [20e3, 5e6], prior 0.3e6, sd 1.0,
        PerHardware: "graph launch latency and the sampling kernels run on the device", Both,
        "CUDA-graph replay launch (≥ 10–20 µs) plus sampling over the vocabulary (0.1–1 ms) per decode step"),
    scalar!(overheads.eager_layer_ns, log1p(3e4), [5e3, 500e3], prior 30e3, sd 1.0,
        Shared: "kernel launches from eager PyTorch are bound by host CPU and driver, not by the accelerator: one value for all profiles of a joint fit", Both,
        "an eager layer launches 10–20 kernels at 3–10 µs of Python dispatch + cudaLaunchKernel each"),
    scalar!(overheads.layer_ns, log1p(1e4), [0.0, 100e3], prior 20e3, sd 1.0,
        PerHardware: "kernel tails and launches inside a graph are device time", Both,
        "per-layer GPU floor (kernel boundaries, norms, activations): ~8–12 kernels of 2–5 µs each, tens of µs per layer"),
    scalar!(overheads.moe_layer_ns, log1p(3e4), [0.0, 500e3], prior 0.0, sd 1.0,
        PerHardware: "routing and permutation kernels run on the device", Both,
        "routing, permute/unpermute and expert dispatch per MoE layer: a handful of small kernels, tens to a few hundred µs"),
    scalar!(overheads.request_latency_ns, log1p(3e6), [0.1e6, 50e6], prior 3.0e6, sd 1.0, Shared: HOST, Both,
        "HTTP request + new aiohttp session + tokenizer/scheduler queues: 0.3–5 ms on one host, up to tens of ms through proxies"),
    scalar!(overheads.tokenize_per_token_ns, log1p(1000.0),
        [crate::spec::tokenize_cost::TOKENIZE_PER_TOKEN_NS_MIN, crate::spec::tokenize_cost::TOKENIZE_PER_TOKEN_NS_MAX],
        prior crate::spec::tokenize_cost::HF_FAST_TOKENIZE_PER_TOKEN_NS, sd 1.0, Shared: HOST, Both,
        "an HF fast tokenizer on one core: ≈ 0.3–2.5 M tokens/s (spec::tokenize_cost)"),
    scalar!(overheads.stream_latency_ns, log1p(5e5), [20e3, 20e6], prior 0.5e6, sd 1.0, Shared: HOST, Both,
        "detokenizer + SSE + client asyncio per streamed chunk: 0.05–5 ms"),
    // Multipliers on vLLM's own sourced CPU time (they act on vLLM servers only).
    scalar!(overheads.vllm_step_cpu_scale, LOG,
        [crate::spec::hardware::VLLM_CPU_SCALE_MIN, crate::spec::hardware::VLLM_CPU_SCALE_MAX],
        prior 1.0, sd 0.5, Shared: VLLM_HOST, Vllm,
        "vLLM's fixed CPU per step is sourced at 1 ms (V1) / 2 ms (V0) within 0.5–3 / 1–5 ms (spec::vllm::overheads): a multiplier of 0.25–3.5 covers both ranges"),
    scalar!(overheads.vllm_per_request_cpu_scale, LOG,
        [crate::spec::hardware::VLLM_CPU_SCALE_MIN, crate::spec::hardware::VLLM_CPU_SCALE_MAX],
        prior 1.0, sd 0.5, Shared: VLLM_HOST, Vllm,
        "vLLM's CPU per scheduled request is sourced at 8 µs (V1) / 12 µs (V0) within 2–25 / 5–40 µs (spec::vllm::overheads): a multiplier of 0.25–3.5 covers both ranges"),
];

/// Prior centres (prefill, decode) of attention efficiency by backend: the initial judgements
/// of the bundled profiles.
fn attention_prior(backend: &str) -> (f64, f64) {
    match backend {
        "fa3" => (0.6, 0.8),
        "flashinfer" => (0.55, 0.75),
        "triton" => (0.45, 0.65),
        _ => (0.5, 0.7),
    }
}

/// What a [`Param`] addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Scalar(usize),
    /// `attention.<backend>.prefill` (true) or `.decode` (false).
    Attention {
        backend: String,
        prefill: bool,
    },
}

/// One fittable constant.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Name as given to `--params` (`gemm`, `attention.triton.decode`, `step_cpu_ns`).
    pub name: String,
    pub section: Section,
    pub transform: Transform,
    /// Bounds of the value.
    pub lo: f64,
    pub hi: f64,
    /// Why the bounds are where they are.
    pub bounds_why: String,
    /// Centre of the prior (a value, not a coordinate): the datasheet / initial value.
    pub prior: f64,
    /// Width of the prior around its centre, in coordinates.
    pub prior_sd: f64,
    /// One value per profile or one shared by the profiles of a joint fit (`--params
    /// name@hw|@shared` overrides the default).
    pub sharing: Sharing,
    /// Why the default sharing is what it is (or that `--params` chose it).
    pub sharing_why: String,
    /// The engines whose runs it acts on (a fit moves it only where those runs train it).
    pub engine: EngineScope,
    target: Target,
}

/// Which bound a value sits at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtBound {
    Lower,
    Upper,
}

impl Param {
    /// The parameter called `name` in any of `profiles` (an optional `efficiency.`/`overheads.`
    /// prefix is accepted, and a `@hw` / `@shared` suffix sets its sharing in a joint fit);
    /// errors list the names available.
    pub fn parse(name: &str, profiles: &[HardwareProfile]) -> Result<Param> {
        let (name, sharing) = match name.trim().split_once('@') {
            Some((n, s)) => {
                let sharing = match s.trim() {
                    "hw" | "per-hardware" => Sharing::PerHardware,
                    "shared" => Sharing::Shared,
                    other => {
                        return Err(Error::invalid(
                            "--params",
                            n.trim(),
                            format!("unknown sharing `@{other}`; use @hw (one value per profile) or @shared (one value for all)"),
                        ))
                    }
                };
                (n.trim(), Some(sharing))
            }
            None => (name.trim(), None),
        };
        let bare = name
            .strip_prefix("efficiency.")
            .or_else(|| name.strip_prefix("overheads."))
            .unwrap_or(name);
        let all = all_params_of(profiles);
        let mut p = all
            .iter()
            .find(|p| p.name == bare)
            .cloned()
            .ok_or_else(|| Error::Unknown {
                kind: "calibration parameter",
                name: name.to_string(),
                available: all
                    .iter()
                    .map(|p| p.name.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        if let Some(s) = sharing.filter(|&s| s != p.sharing) {
            p.sharing = s;
            p.sharing_why = "as --params asks".into();
        }
        Ok(p)
    }

    /// True when `profile` has this constant (an attention backend it lists; every scalar).
    pub fn applies_to(&self, profile: &HardwareProfile) -> bool {
        match &self.target {
            Target::Scalar(_) => true,
            Target::Attention { backend, .. } => profile.efficiency.attention.contains_key(backend),
        }
    }

    /// `v` clamped into the bounds.
    pub fn clamp(&self, v: f64) -> f64 {
        v.clamp(self.lo, self.hi)
    }

    /// Which bound the value sits at (within 0.1% in the optimiser's coordinate), if any. A
    /// lower bound of 0 (an overhead that may vanish) is a value like any other, not a limit.
    pub fn at_bound(&self, v: f64) -> Option<AtBound> {
        let (lo, hi) = self.x_bounds();
        let x = self.to_x(v);
        // A lower bound of 0, or one the prior sits on (`worker_thread_cpu_scale`'s 1: no extra
        // cost), is the mechanism switched off, not a demand of the data beyond physics.
        if x <= lo + 1e-3 && self.lo > 0.0 && self.prior > self.lo {
            Some(AtBound::Lower)
        } else if x >= hi - 1e-3 {
            Some(AtBound::Upper)
        } else {
            None
        }
    }

    /// One line saying that a fitted value sits at a bound and what that means, if it does.
    pub fn bound_note(&self, v: f64) -> Option<String> {
        self.at_bound(v).map(|b| {
            let (which, more, bound) = match b {
                AtBound::Lower => ("lower", "less", self.lo),
                AtBound::Upper => ("upper", "more", self.hi),
            };
            format!(
                "at {which} bound {}: the data asks for {more} than physics allows ({}): a mechanism is missing",
                format_value(bound),
                self.bounds_why
            )
        })
    }

    /// The value in `profile`.
    pub fn get(&self, profile: &HardwareProfile) -> f64 {
        match &self.target {
            Target::Scalar(i) => (SCALARS[*i].get)(profile),
            Target::Attention { backend, prefill } => profile
                .efficiency
                .attention
                .get(backend)
                .map_or(f64::NAN, |a| if *prefill { a.prefill } else { a.decode }),
        }
    }

    /// Sets the value in `profile` (the backend must exist; [`Param::parse`] guarantees it).
    pub fn set(&self, profile: &mut HardwareProfile, v: f64) {
        match &self.target {
            Target::Scalar(i) => (SCALARS[*i].set)(profile, v),
            Target::Attention { backend, prefill } => {
                if let Some(a) = profile.efficiency.attention.get_mut(backend) {
                    if *prefill {
                        a.prefill = v;
                    } else {
                        a.decode = v;
                    }
                }
            }
        }
    }

    /// The YAML key path below the section (`["gemm"]`, `["attention", "fa3", "decode"]`).
    pub fn yaml_path(&self) -> Vec<String> {
        match &self.target {
            Target::Scalar(_) => vec![self.name.clone()],
            Target::Attention { backend, prefill } => vec![
                "attention".into(),
                backend.clone(),
                if *prefill { "prefill" } else { "decode" }.into(),
            ],
        }
    }

    /// Value → optimiser coordinate.
    pub fn to_x(&self, v: f64) -> f64 {
        match self.transform {
            Transform::Log => v.max(f64::MIN_POSITIVE).ln(),
            Transform::Log1p { scale } => (v.max(0.0) / scale).ln_1p(),
        }
    }

    /// Optimiser coordinate → value, clamped to the bounds and rounded to [`SIG_DIGITS`].
    pub fn from_x(&self, x: f64) -> f64 {
        let v = match self.transform {
            Transform::Log => x.exp(),
            Transform::Log1p { scale } => scale * x.exp_m1(),
        };
        round_sig(v.clamp(self.lo, self.hi), SIG_DIGITS).clamp(self.lo, self.hi)
    }

    /// Bounds of the coordinate.
    pub fn x_bounds(&self) -> (f64, f64) {
        let lo = match self.transform {
            Transform::Log1p { .. } if self.lo <= 0.0 => 0.0,
            _ => self.to_x(self.lo),
        };
        (lo, self.to_x(self.hi))
    }
}

/// The [`Param`] called `name` that `meta` describes and `target` addresses.
fn param(name: String, meta: &Meta, target: Target) -> Param {
    Param {
        name,
        section: meta.section,
        transform: meta.transform,
        lo: meta.lo,
        hi: meta.hi,
        bounds_why: meta.bounds_why.to_string(),
        prior: meta.prior,
        prior_sd: meta.prior_sd,
        sharing: meta.sharing,
        sharing_why: meta.sharing_why.to_string(),
        engine: meta.engine,
        target,
    }
}

/// Every fittable constant of `profile`: the scalars, then prefill and decode efficiency of
/// each attention backend it lists.
pub fn all_params(profile: &HardwareProfile) -> Vec<Param> {
    all_params_of(std::slice::from_ref(profile))
}

/// Every fittable constant of any of `profiles`: the scalars, then prefill and decode
/// efficiency of each attention backend some profile lists (in name order).
pub fn all_params_of(profiles: &[HardwareProfile]) -> Vec<Param> {
    let scalars = SCALARS
        .iter()
        .enumerate()
        .map(|(i, s)| param(s.name.to_string(), &s.meta, Target::Scalar(i)));
    let backends: std::collections::BTreeSet<&String> = profiles
        .iter()
        .flat_map(|p| p.efficiency.attention.keys())
        .collect();
    let attention = backends.into_iter().flat_map(|b| {
        let (prior_prefill, prior_decode) = attention_prior(b);
        [true, false].map(|prefill| {
            let meta = Meta {
                section: Section::Efficiency,
                transform: Transform::Log,
                lo: if prefill { 0.2 } else { 0.3 },
                hi: if prefill { 0.9 } else { 0.95 },
                bounds_why: if prefill {
                    "prefill attention is compute bound: FlashAttention-2/3 kernels reach 35–75% of peak, triton's 30–50%; under 0.2 another kernel runs"
                } else {
                    "decode attention streams the KV cache: good kernels read it at 60–90% of HBM bandwidth; under 0.3 another kernel runs"
                },
                prior: if prefill { prior_prefill } else { prior_decode },
                prior_sd: 0.7,
                sharing: Sharing::PerHardware,
                sharing_why: SILICON,
                engine: EngineScope::Both,
            };
            let which = if prefill { "prefill" } else { "decode" };
            let target = Target::Attention {
                backend: b.clone(),
                prefill,
            };
            param(format!("attention.{b}.{which}"), &meta, target)
        })
    });
    scalars.chain(attention).collect()
}
