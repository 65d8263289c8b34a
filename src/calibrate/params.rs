//! The fittable constants of a hardware profile: names (`gemm`, `attention.flashinfer.decode`,
//! `step_cpu_ns`, ...), where each lives in the profile (and in its YAML), its bounds, and the
//! coordinate the optimiser moves.
//!
//! Every constant is optimised in a transformed coordinate `x` so that steps are relative and
//! bounds are boxes: an efficiency or ratio `v` uses `x = ln v` (so `v` stays positive; the upper
//! bound 1 keeps an efficiency in (0, 1]); an overhead uses `x = ln(1 + v / scale)` so that 0 is
//! reachable (`x = 0`) and steps are relative once `v ≫ scale`. Candidate values are rounded to
//! [`SIG_DIGITS`] significant digits before they are evaluated, so the value written to the YAML
//! is exactly the value the fit evaluated.
use crate::error::{Error, Result};
use crate::spec::hardware::HardwareProfile;

/// Significant digits of every fitted value.
pub const SIG_DIGITS: i32 = 4;

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

/// A scalar field of [`HardwareProfile`] that calibration may fit.
struct Scalar {
    name: &'static str,
    section: Section,
    get: fn(&HardwareProfile) -> f64,
    set: fn(&mut HardwareProfile, f64),
    transform: Transform,
    lo: f64,
    hi: f64,
    prior_sd: f64,
}

macro_rules! eff {
    ($name:literal, $($f:ident).+, $lo:expr, $hi:expr, $sd:expr) => {
        Scalar {
            name: $name,
            section: Section::Efficiency,
            get: |h| h.efficiency.$($f).+,
            set: |h, v| h.efficiency.$($f).+ = v,
            transform: Transform::Log,
            lo: $lo,
            hi: $hi,
            prior_sd: $sd,
        }
    };
}

macro_rules! ovh {
    ($name:ident, $scale:expr, $hi:expr) => {
        Scalar {
            name: stringify!($name),
            section: Section::Overheads,
            get: |h| h.overheads.$name,
            set: |h, v| h.overheads.$name = v,
            transform: Transform::Log1p { scale: $scale },
            lo: 0.0,
            hi: $hi,
            prior_sd: 1.0,
        }
    };
}

/// Every scalar constant, in profile order. An overhead's `scale` is a typical magnitude (below
/// it steps are additive, above it relative); its cap is far above anything plausible (it only
/// stops a runaway fit). Efficiencies stay in (0, 1]. `prior_sd` is how far (in coordinates,
/// ≈ ln of a factor) the datasheet value is trusted: HBM efficiency (0.2, ≈ ×1.22) is well
/// known, grouped-GEMM efficiency and its roll-off (1.4, ≈ ×4) are not, and an MXFP4 fallback
/// (3, ≈ ×20) is a guess; overheads use 1 (in units of their scale).
const SCALARS: &[Scalar] = &[
    // Memory allocated between SGLang's two free-memory measurements (activations, CUDA-graph
    // pools, NCCL buffers): it sizes the KV pool, so it shows in retraction-bound runs.
    Scalar {
        name: "runtime_reserved_gib",
        section: Section::Memory,
        get: |h| h.memory.runtime_reserved_gib,
        set: |h, v| h.memory.runtime_reserved_gib = v,
        transform: Transform::Log1p { scale: 1.0 },
        lo: 0.0,
        hi: 16.0,
        prior_sd: 1.0,
    },
    eff!("gemm", gemm, 1e-3, 1.0, 0.4),
    eff!("gemm_half_tokens", gemm_half_tokens, 1.0, 8192.0, 1.4),
    eff!("memory", memory, 1e-3, 1.0, 0.2),
    eff!("collective", collective, 1e-3, 1.0, 0.5),
    // SGLang's custom all-reduce at decode sizes: small messages never reach link bandwidth,
    // but an efficiency below 0.1 (or above 0.5) is a missing mechanism, not the link.
    eff!("custom_all_reduce", custom_all_reduce, 0.1, 0.5, 0.5),
    // Its fixed time: a launch plus one or two NVLink flag round trips, 3–30 µs.
    Scalar {
        name: "custom_all_reduce_latency_ns",
        section: Section::Link,
        get: |h| h.link.custom_all_reduce_latency_ns,
        set: |h, v| h.link.custom_all_reduce_latency_ns = v,
        transform: Transform::Log,
        lo: 3e3,
        hi: 3e4,
        prior_sd: 0.5,
    },
    eff!("mxfp4_compute", mxfp4_compute, 1e-4, 1.0, 3.0),
    eff!("mxfp4_memory", mxfp4_memory, 1e-4, 1.0, 3.0),
    Scalar {
        name: "moe_gemm",
        section: Section::Efficiency,
        get: |h| h.efficiency.moe_gemm.unwrap_or(h.efficiency.gemm),
        set: |h, v| h.efficiency.moe_gemm = Some(v),
        transform: Transform::Log,
        lo: 1e-3,
        hi: 1.0,
        prior_sd: 1.4,
    },
    Scalar {
        name: "mxfp4_half_tokens",
        section: Section::Efficiency,
        get: |h| {
            h.efficiency
                .mxfp4_half_tokens
                .unwrap_or(h.efficiency.gemm_half_tokens)
        },
        set: |h, v| h.efficiency.mxfp4_half_tokens = Some(v),
        transform: Transform::Log,
        lo: 0.1,
        hi: 8192.0,
        prior_sd: 3.0,
    },
    ovh!(step_cpu_ns, 1e6, 50e6),
    ovh!(per_request_cpu_ns, 5e3, 1e6),
    ovh!(graph_step_ns, 3e5, 20e6),
    ovh!(eager_layer_ns, 3e4, 1e6),
    // The per-layer GPU floor (norms, activations, launch gaps and tails): at most 100 µs per
    // layer, ten kernels at 10 µs; more is an eager launch sequence, not a graph's floor.
    ovh!(layer_ns, 1e4, 1e5),
    ovh!(moe_layer_ns, 3e4, 5e6),
    ovh!(request_latency_ns, 3e6, 1e9),
    ovh!(tokenize_per_token_ns, 50.0, 1e5),
    ovh!(stream_latency_ns, 5e5, 1e8),
];

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
    /// Width of the prior around the starting value, in coordinates.
    pub prior_sd: f64,
    target: Target,
}

impl Param {
    /// The parameter called `name` in `profile` (an optional `efficiency.`/`overheads.` prefix
    /// is accepted); errors list the names available.
    pub fn parse(name: &str, profile: &HardwareProfile) -> Result<Param> {
        let bare = name
            .trim()
            .strip_prefix("efficiency.")
            .or_else(|| name.trim().strip_prefix("overheads."))
            .unwrap_or(name.trim());
        all_params(profile)
            .into_iter()
            .find(|p| p.name == bare)
            .ok_or_else(|| Error::Unknown {
                kind: "calibration parameter",
                name: name.to_string(),
                available: all_params(profile)
                    .iter()
                    .map(|p| p.name.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
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

/// Every fittable constant of `profile`: the scalars, then prefill and decode efficiency of
/// each attention backend it lists.
pub fn all_params(profile: &HardwareProfile) -> Vec<Param> {
    let scalars = SCALARS.iter().enumerate().map(|(i, s)| Param {
        name: s.name.to_string(),
        section: s.section,
        transform: s.transform,
        lo: s.lo,
        hi: s.hi,
        prior_sd: s.prior_sd,
        target: Target::Scalar(i),
    });
    let attention = profile.efficiency.attention.keys().flat_map(|b| {
        [true, false].map(|prefill| Param {
            name: format!(
                "attention.{b}.{}",
                if prefill { "prefill" } else { "decode" }
            ),
            section: Section::Efficiency,
            transform: Transform::Log,
            lo: 1e-3,
            hi: 1.0,
            prior_sd: 0.7,
            target: Target::Attention {
                backend: b.clone(),
                prefill,
            },
        })
    });
    scalars.chain(attention).collect()
}

/// Parses a comma-separated `--params` list (duplicates are an error).
pub fn parse_list(list: &str, profile: &HardwareProfile) -> Result<Vec<Param>> {
    let mut out: Vec<Param> = Vec::new();
    for name in list.split(',').filter(|s| !s.trim().is_empty()) {
        let p = Param::parse(name, profile)?;
        if out.iter().any(|q| q.name == p.name) {
            return Err(Error::invalid(
                "--params",
                &p.name,
                "listed twice".to_string(),
            ));
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err(Error::invalid("--params", "params", "no parameter given"));
    }
    Ok(out)
}

/// `v` rounded to `digits` significant digits (0 and non-finite values unchanged).
pub fn round_sig(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let e = v.abs().log10().floor() as i32;
    let p = digits - 1 - e;
    // Scale by an exact power of ten in the direction that keeps the division exact-ish, and
    // parse back through the shortest decimal so the result prints as at most `digits` digits.
    let s = if p >= 0 {
        format!("{:.*}", p as usize, v)
    } else {
        let f = 10f64.powi(-p);
        format!("{}", (v / f).round() * f)
    };
    s.parse().unwrap_or(v)
}

/// The value as written to a profile: plain decimal below 1e5, `m.mmme<exp>` from 1e5.
pub fn format_value(v: f64) -> String {
    if v.abs() >= 1e5 && v.is_finite() {
        let e = v.abs().log10().floor() as i32;
        let m = v / 10f64.powi(e);
        let text = format!("{}e{e}", round_sig(m, SIG_DIGITS));
        let text = if text.contains('.') {
            text
        } else {
            text.replacen('e', ".0e", 1)
        };
        if text.parse::<f64>().ok() == Some(v) {
            return text;
        }
    }
    let text = format!("{v}");
    if text.contains('.') || text.contains('e') || !v.is_finite() {
        text
    } else {
        format!("{text}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_and_formatting_round_trip() {
        assert_eq!(round_sig(0.123456, 4), 0.1235);
        assert_eq!(round_sig(2_134_567.0, 4), 2_135_000.0);
        assert_eq!(round_sig(1.0, 4), 1.0);
        assert_eq!(format_value(2_135_000.0), "2.135e6");
        assert_eq!(format_value(0.1235), "0.1235");
        assert_eq!(format_value(64.0), "64.0");
        assert_eq!(format_value(3.0e6), "3.0e6");
        for v in [0.85, 2.5e6, 30e3, 12.34, 1e-4] {
            let f = format_value(round_sig(v, 4));
            assert_eq!(f.parse::<f64>().unwrap(), round_sig(v, 4), "{f}");
        }
    }
}
