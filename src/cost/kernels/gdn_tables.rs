//! Gated delta-net (GDN) layers (Qwen3.5, Qwen3-Next) from NVIDIA AIConfigurator's measured
//! SGLang kernels (`context_gdn` / `generation_gdn`, converted from
//! `systems/data/<system>/linear_attention/sglang/<version>/gdn_perf.parquet` by
//! `scripts/import_aiconfigurator.py`), in place of the roofline's [`crate::cost::gdn`].
//!
//! What one table row is (aiconfigurator-core 0.12.0, read in the wheel and its collector):
//! - **one layer, one kernel call, one rank's heads.** `sdk/models/qwen35.py:282-283` sizes the
//!   lookup by `linear_num_key_heads // tp` and `linear_num_value_heads // tp`, and
//!   `:304-329` (prefill) / `:684-711` (decode) add two separate GDN ops per linear layer —
//!   the causal conv1d, then the gated delta rule — each multiplied by the count of linear
//!   layers. The in/out projections are GEMMs (priced here by the GEMM table, `ops.rs`).
//! - **prefill**: ai-dynamo/aiconfigurator `collector/sglang/collect_gdn.py`
//!   (`__compat__ = "sglang==0.5.14"`, `run_gdn_context_benchmark`) times `causal_conv1d_fn`
//!   and `chunk_gated_delta_rule` on `batch_size` equal sequences of `seq_len` tokens packed
//!   into one varlen call (`cu_seqlens = arange(0, batch·seq_len + 1, seq_len)`, no initial
//!   state), as SGLang's GDN backend runs an extend batch: every request's tokens flattened,
//!   chunks of 64 restarting at each sequence boundary. A step's prefill part is therefore one
//!   call over its requests, priced at (requests, mean extend length): exact for equal
//!   lengths; unequal lengths have a few more part-filled chunks (≤ 1 per request) than the
//!   mean gives. A continued chunk's initial state (one state read) is not in the rows.
//! - **decode**: `run_gdn_generation_benchmark` times `causal_conv1d_update` and the recurrent
//!   rule (`fused_recurrent_gated_delta_rule_packed_decode` at 0.5.14; the a100_sxm 0.5.10
//!   table holds `fused_recurrent_gated_delta_rule`) at one token per request.
//!
//! Lookup: the rank's exact (value heads, key heads) for the model's head dims and conv taps,
//! else the nearest measured value heads (then key heads), the conv scaled by its channels
//! (2·k·head_k + v·head_v) and the rule by value heads (its state and work); `d_model` only
//! labels which model a shape came from (the collector sizes every tensor from the heads), the
//! nearest to the model's hidden size is taken. Off the grid the curves extrapolate in
//! proportion to batch and tokens (the kernels are linear in both, [`super::curve`]) and the
//! step is flagged. A phase without both kernels' rows (a100_sxm has no chunked-rule rows), a
//! speculative verify (several query tokens per request) and every GPU without tables keep
//! the roofline's price.
use super::curve::{nearest, Curve, Surface};
use super::db::KernelDb;
use super::{KernelCost, X_ATTN};
use crate::cost::BatchShape;
use crate::spec::linear_attention::LinearAttention;
use std::sync::Arc;

const PREFILL_OP: &str = "context_gdn";
const DECODE_OP: &str = "generation_gdn";
const PREFILL_CONV: &str = "causal_conv1d_fn";
const PREFILL_RULES: &[&str] = &["chunk_gated_delta_rule"];
const DECODE_CONV: &str = "causal_conv1d_update";
/// Bytes per element of the recurrent state the decode rows were measured with (float32).
const FP32_STATE_BYTES: f64 = 4.0;
const DECODE_RULES: &[&str] = &[
    "fused_recurrent_gated_delta_rule_packed_decode",
    "fused_recurrent_gated_delta_rule",
];

/// Two kernels' measured times (conv, rule) of one phase and their factors to the rank's heads.
#[derive(Debug, Clone)]
struct Pair<T> {
    conv: T,
    rule: T,
    conv_scale: f64,
    rule_scale: f64,
}

/// One phase: the rank's own shape, and the measured rows with more value heads, which bound
/// it (a rank with fewer heads never takes longer than one with more: without that bound the
/// latency floor's ~1% noise between two head counts could price a higher TP dearer).
#[derive(Debug, Clone)]
struct Phase<T> {
    own: Pair<T>,
    larger: Vec<Pair<T>>,
}

impl<T> Phase<T> {
    /// One layer's time (ns) with `at` evaluating one kernel, and whether it left the grid.
    fn price(&self, at: impl Fn(&T) -> (f64, bool)) -> (f64, bool) {
        let one = |p: &Pair<T>| {
            let ((c, oc), (r, or)) = (at(&p.conv), at(&p.rule));
            (c * p.conv_scale + r * p.rule_scale, oc || or)
        };
        let (mut t, out) = one(&self.own);
        for p in &self.larger {
            t = t.min(one(p).0);
        }
        (t, out)
    }
}

/// The measured GDN kernels of one deployment (`None` phases take the roofline).
#[derive(Debug, Clone)]
pub struct MeasuredGdn {
    decode: Option<Phase<Curve>>,
    prefill: Option<Phase<Surface>>,
    decode_note: String,
    prefill_note: String,
}

/// One phase of `op` for the `rule` and `conv` kernels: the key nearest the rank's heads (value
/// heads, then key heads, then d_model), scaled to them, the larger rows, and a note.
#[allow(clippy::too_many_arguments)]
fn phase<T>(
    db: &KernelDb,
    op: &str,
    rule: &str,
    conv: &str,
    l: &LinearAttention,
    tp: u64,
    hidden: u64,
    fetch: impl Fn(&[String]) -> Option<T>,
) -> Option<(Phase<T>, String)> {
    let tp = tp.max(1) as f64;
    let (v, k) = (l.num_v_heads as f64 / tp, l.num_k_heads as f64 / tp);
    let prefix: Vec<String> = vec![
        rule.into(),
        l.conv_kernel.to_string(),
        l.head_k_dim.to_string(),
        l.head_v_dim.to_string(),
    ];
    // The row of `vh` value heads whose key heads are nearest `k · vh / v`.
    let key_for = |vh: &str| -> Option<Vec<String>> {
        let mut key = prefix.clone();
        key.push(vh.into());
        let ratio = vh.parse::<f64>().ok()? / v;
        for target in [k * ratio, hidden as f64] {
            let found = nearest(&db.next_values(op, &key), target)?;
            key.push(found);
        }
        Some(key)
    };
    let values = db.next_values(op, &prefix);
    let own_key = key_for(&nearest(&values, v)?)?;
    let num = |key: &[String], i: usize| key[i].parse::<f64>().unwrap_or(1.0);
    let (vc, kc) = (num(&own_key, 4), num(&own_key, 5));
    let (hk, hv) = (l.head_k_dim as f64, l.head_v_dim as f64);
    let pair = |key: &[String], conv_scale: f64, rule_scale: f64| {
        Some(Pair {
            conv: fetch(&with_kernel(key, conv))?,
            rule: fetch(key)?,
            conv_scale,
            rule_scale,
        })
    };
    let conv_scale = (2.0 * k * hk + v * hv) / (2.0 * kc * hk + vc * hv);
    let rule_scale = v / vc;
    let own = pair(&own_key, conv_scale, rule_scale)?;
    let larger = values
        .iter()
        .filter(|x| x.parse::<f64>().is_ok_and(|x| x > vc))
        .filter_map(|x| pair(&key_for(x)?, 1.0, 1.0))
        .collect();
    let mut note = format!("{op} heads v/k {vc}/{kc} (d_model {})", own_key[6]);
    if (rule_scale - 1.0).abs() > 1e-12 || (conv_scale - 1.0).abs() > 1e-12 {
        note += &format!(
            ", scaled to the rank's {v}/{k} heads (conv ×{conv_scale:.3}, rule ×{rule_scale:.3})"
        );
    }
    Some((Phase { own, larger }, format!("{note}: {conv} + {rule}")))
}

/// The conv kernel's key: `key` with its kernel field replaced.
fn with_kernel(key: &[String], kernel: &str) -> Vec<String> {
    let mut k = key.to_vec();
    k[0] = kernel.into();
    k
}

fn tag(t: &Option<Arc<str>>) -> String {
    t.as_deref().map_or(String::new(), |v| format!(", {v}"))
}

impl MeasuredGdn {
    /// The deployment's GDN tables from `db` (phases without rows: the roofline).
    pub fn build(db: &KernelDb, l: &LinearAttention, tp: u64, hidden: u64) -> MeasuredGdn {
        // The decode rows read and write float32 states (`run_gdn_generation_benchmark`:
        // `recurrent_state` torch.float32, SGLang's default `mamba_ssm_dtype`); a bf16 state
        // halves that traffic: the roofline prices it.
        let fp32_state = l.ssm_state_bytes == FP32_STATE_BYTES;
        let decode = DECODE_RULES.iter().filter(|_| fp32_state).find_map(|r| {
            phase(db, DECODE_OP, r, DECODE_CONV, l, tp, hidden, |k| {
                db.curve(DECODE_OP, k)
            })
        });
        let prefill = PREFILL_RULES.iter().find_map(|r| {
            phase(db, PREFILL_OP, r, PREFILL_CONV, l, tp, hidden, |k| {
                db.surface(PREFILL_OP, k)
            })
        });
        let none = |op: &str| {
            format!(
                "roofline (cost/gdn.rs): no {op} rows for head dims {}/{} conv {} in the {} tables",
                l.head_k_dim, l.head_v_dim, l.conv_kernel, db.system
            )
        };
        MeasuredGdn {
            decode_note: decode.as_ref().map_or_else(
                || {
                    if fp32_state {
                        none(DECODE_OP)
                    } else {
                        format!(
                            "roofline (cost/gdn.rs): the {DECODE_OP} rows measured float32 states, this model keeps {} B ones",
                            l.ssm_state_bytes
                        )
                    }
                },
                |(p, n)| {
                    format!("{n}{}", tag(&p.own.rule.table_version))
                },
            ),
            prefill_note: prefill.as_ref().map_or(none(PREFILL_OP), |(p, n)| {
                format!(
                    "{n}, one varlen call at requests × mean extend{}",
                    tag(&p.own.rule.table_version)
                )
            }),
            decode: decode.map(|d| d.0),
            prefill: prefill.map(|p| p.0),
        }
    }

    /// One GDN layer's measured time (ns) for `only` (the decode or the prefill part of a
    /// step) and whether a lookup left the grid; `None` where the tables do not price it.
    pub fn layer_ns(&self, only: &BatchShape) -> Option<(f64, bool)> {
        let mut t = 0.0;
        let mut out = false;
        if only.decode_reqs > 0 {
            let d = self.decode.as_ref().filter(|_| only.decode_width <= 1)?;
            let b = only.decode_reqs as f64;
            let (v, o) = d.price(|c| c.at(b));
            t += v;
            out |= o;
        }
        if only.prefill_reqs > 0 {
            let p = self.prefill.as_ref()?;
            let reqs = only.prefill_reqs as f64;
            let len = (only.prefill_tokens as f64 / reqs).max(1.0);
            let (v, o) = p.price(|sf| sf.at(reqs, len));
            t += v;
            out |= o;
        }
        Some((t, out))
    }

    /// The engine versions of the tables that price `s`'s GDN parts, for `--explain`.
    pub fn versions(&self, s: &BatchShape) -> Vec<Option<Arc<str>>> {
        let mut v = Vec::new();
        if let Some(d) = self
            .decode
            .as_ref()
            .filter(|_| s.decode_reqs > 0 && s.decode_width <= 1)
        {
            v.push(d.own.rule.table_version.clone());
        }
        if let Some(p) = self.prefill.as_ref().filter(|_| s.prefill_reqs > 0) {
            v.push(p.own.rule.table_version.clone());
        }
        v
    }

    /// `--explain`'s lines for a step with decode and / or prefill requests.
    pub fn describe(&self, decode: bool, width: u64, prefill: bool) -> Vec<String> {
        let mut v = Vec::new();
        if decode && width > 1 {
            v.push(format!(
                "GDN decode: roofline (cost/gdn.rs): {width} query tokens per request, the tables hold one"
            ));
        } else if decode {
            v.push(format!("GDN decode: {}", self.decode_note));
        }
        if prefill {
            v.push(format!("GDN prefill: {}", self.prefill_note));
        }
        v
    }
}

impl KernelCost {
    /// Every GDN layer's kernels for `only` (a decode-only or prefill-only part of a step): the
    /// measured tables where they price it (carried to a donor's target GPU), else the
    /// roofline's [`crate::cost::gdn`] price.
    pub(super) fn gdn_layers_ns(&self, only: &BatchShape, x: &mut u8) -> f64 {
        let layers = self.roof.linear_layers();
        match self.gdn.as_ref().and_then(|g| g.layer_ns(only)) {
            Some((v, out)) if layers > 0.0 => {
                if out {
                    *x |= X_ATTN;
                }
                layers * self.xfer(v, |r| r.linear_layers_ns(only) / layers)
            }
            _ => self.roof.linear_layers_ns(only),
        }
    }

    /// Whether a step with decode requests of `width` query tokens and / or prefill requests
    /// has GDN layers the tables do not price: its attention is then a roofline fallback,
    /// which the cross-GPU envelope floors at a stronger GPU's measured price rather than letting
    /// it cap a stronger GPU's (a100_sxm has no chunked-rule rows: its roofline prefill would
    /// otherwise bound H100's measured one, [`super::envelope`]).
    pub(super) fn gdn_on_roofline(&self, decode: bool, width: u64, prefill: bool) -> bool {
        self.gdn.as_ref().is_some_and(|g| {
            (decode && (g.decode.is_none() || width > 1)) || (prefill && g.prefill.is_none())
        })
    }

    /// The roofline's attention of every layer for `only`, its GDN layers as
    /// [`Self::gdn_layers_ns`] prices them.
    pub(super) fn roof_attention_ns(&self, only: &BatchShape, x: &mut u8) -> f64 {
        let all = self.roof.attention_op_ns(only);
        if self.gdn.is_none() {
            return all;
        }
        all - self.roof.linear_layers_ns(only) + self.gdn_layers_ns(only, x)
    }
}
