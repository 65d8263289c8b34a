//! Expert parallelism (EP) for MoE models: the flags (SGLang's `--ep-size`, `--enable-ep-moe`,
//! `--moe-a2a-backend`, `--enable-deepep-moe`, `--deepep-mode`, `--enable-eplb`,
//! `--ep-num-redundant-experts`; vLLM's `--enable-expert-parallel`), their per-version rules
//! (read from SGLang's `server_args.py` of each PyPI release), and the resolved layout the cost
//! model and the memory sizing use. The price of the MoE layer under EP is
//! `cost::expert_parallel`.
//!
//! SGLang, by version (`server_args.py`):
//! - `--ep-size` / `--expert-parallel-size` from 0.4.1 (0.4.0 has no EP). The MoE layer's
//!   ranks are the TP group (with DP attention, every GPU of the server): `moe_tp = tp / ep`
//!   (parallel_state), so `ep` must divide `tp`.
//! - `--enable-ep-moe` (sets `ep = tp`) 0.4.1–0.4.10; deprecated but still honoured 0.5.0–0.5.2
//!   ("NOTE: --enable-ep-moe is deprecated…"); from 0.5.3 a `DeprecatedAction` that refuses
//!   the flag.
//! - `--enable-deepep-moe` 0.4.5–0.4.10; 0.5.0–0.5.2 deprecated, mapped to
//!   `--moe-a2a-backend deepep`; refused from 0.5.3. `--moe-a2a-backend none|deepep` from 0.5.0.
//!   DeepEP always sets `ep = tp` ("The expert parallel size is adjusted to be the same as the
//!   tensor parallel size"); `--deepep-mode normal` disables CUDA graphs (0.4.7+);
//!   `--deepep-mode auto` (the default) with DP attention is refused 0.4.5–0.4.8 ("DeepEP MoE
//!   `auto` mode is not supported with DP Attention"); auto = normal for extend batches,
//!   low-latency for decode batches.
//! - `--enable-eplb`, `--ep-num-redundant-experts` from 0.4.7; EPLB asserts `ep_size > 1`.
//! - DeepEP runs the shared experts unsharded on every rank (`deepseek_v2.py`:
//!   `tp_rank=0, tp_size=1` for the shared experts when the a2a backend is DeepEP).
//!
//! vLLM: `--enable-expert-parallel` from 0.8.0 (PR #14305; before it only an environment
//! variable); the EP group is every rank of every DP replica, `ep = tp × dp` (the PR's review:
//! "We parallelize across all DP*TP ranks for the MoE layers"), experts unsharded
//! (`moe_tp = 1`), `ceil(E / ep)` experts on the fullest rank (`determine_expert_map`).
use super::model::{ModelSpec, WeightFormat};
use super::version::Version;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The EP flags as a user gives them (SGLang's names, and vLLM's `--enable-expert-parallel`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ExpertParallelFlags {
    /// SGLang: expert-parallel size of the MoE layers (dividing --tp; default 1).
    #[arg(long = "ep-size", aliases = ["expert-parallel-size", "ep"])]
    #[serde(alias = "expert-parallel-size")]
    pub ep_size: Option<u64>,
    /// SGLang 0.4.1–0.5.2: EP over the whole TP group (ep = tp); refused from 0.5.3.
    #[arg(long)]
    #[serde(default)]
    pub enable_ep_moe: bool,
    /// SGLang 0.5.0+: none (default: EP tokens reach experts by all-reduce / all-gather) or
    /// deepep (DeepEP all-to-all dispatch and combine; sets ep = tp).
    #[arg(long)]
    pub moe_a2a_backend: Option<String>,
    /// SGLang 0.4.5–0.5.2: DeepEP all-to-all (= --moe-a2a-backend deepep); refused from 0.5.3.
    #[arg(long)]
    #[serde(default)]
    pub enable_deepep_moe: bool,
    /// SGLang 0.4.5+: DeepEP kernels: auto (normal for prefill, low-latency for decode),
    /// normal (no CUDA graphs) or low_latency.
    #[arg(long)]
    pub deepep_mode: Option<String>,
    /// SGLang 0.4.7+: the expert-parallel load balancer (needs EP); lowers the load imbalance
    /// servesim prices (see README "Expert parallelism").
    #[arg(long)]
    #[serde(default)]
    pub enable_eplb: bool,
    /// SGLang 0.4.7+: extra physical copies of hot experts, spread over the EP ranks (memory).
    #[arg(long)]
    pub ep_num_redundant_experts: Option<u64>,
    /// vLLM 0.8+: expert parallelism over every rank, ep = tp × dp.
    #[arg(long)]
    #[serde(default)]
    pub enable_expert_parallel: bool,
}

impl ExpertParallelFlags {
    /// No EP flag given (the group is left out when flags are serialized).
    pub fn is_unset(&self) -> bool {
        self == &ExpertParallelFlags::default()
    }

    /// `over`'s values where set, else `self`'s.
    pub fn merged(&self, over: &ExpertParallelFlags) -> ExpertParallelFlags {
        ExpertParallelFlags {
            ep_size: over.ep_size.or(self.ep_size),
            enable_ep_moe: over.enable_ep_moe || self.enable_ep_moe,
            moe_a2a_backend: over
                .moe_a2a_backend
                .clone()
                .or_else(|| self.moe_a2a_backend.clone()),
            enable_deepep_moe: over.enable_deepep_moe || self.enable_deepep_moe,
            deepep_mode: over
                .deepep_mode
                .clone()
                .or_else(|| self.deepep_mode.clone()),
            enable_eplb: over.enable_eplb || self.enable_eplb,
            ep_num_redundant_experts: over
                .ep_num_redundant_experts
                .or(self.ep_num_redundant_experts),
            enable_expert_parallel: over.enable_expert_parallel || self.enable_expert_parallel,
        }
    }

    /// The SGLang-only flags set (for the engine check), as typed.
    pub fn sglang_only(&self) -> Vec<&'static str> {
        [
            (self.ep_size.is_some(), "--ep-size"),
            (self.enable_ep_moe, "--enable-ep-moe"),
            (self.moe_a2a_backend.is_some(), "--moe-a2a-backend"),
            (self.enable_deepep_moe, "--enable-deepep-moe"),
            (self.deepep_mode.is_some(), "--deepep-mode"),
            (self.enable_eplb, "--enable-eplb"),
            (
                self.ep_num_redundant_experts.is_some(),
                "--ep-num-redundant-experts",
            ),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect()
    }
}

/// How tokens reach the experts of other ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum A2aBackend {
    /// No all-to-all: every rank sees the group's tokens (TP all-reduce, or DP attention's
    /// gather) and runs its local experts on them.
    None,
    /// DeepEP dispatch / combine.
    Deepep,
}

/// `--deepep-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeepEpMode {
    Auto,
    Normal,
    LowLatency,
}

/// The DeepEP kernels one step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeepEpKernel {
    Normal,
    LowLatency,
}

/// The resolved EP layout of one server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpertParallel {
    /// Ranks the experts are spread over.
    pub ep_size: u64,
    /// Ranks each expert is sharded over (SGLang `tp / ep`; vLLM 1).
    pub moe_tp: u64,
    pub a2a_backend: A2aBackend,
    pub deepep_mode: DeepEpMode,
    pub eplb: bool,
    pub redundant_experts: u64,
    /// The shared experts run unsharded on every rank (SGLang with DeepEP).
    pub shared_experts_unsharded: bool,
}

/// SGLang's refusal of a deprecated EP flag from 0.5.3 (`DeprecatedAction` raises its help).
const DEPRECATED_REFUSED_FROM: Version = Version::new(0, 5, 3);

fn bad(flag: &str, reason: impl Into<String>) -> Error {
    Error::invalid(flag, flag.trim_start_matches('-').replace('-', "_"), reason)
}

fn need(version: Version, since: Version, flag: &str) -> Result<()> {
    if version < since {
        return Err(bad(
            flag,
            format!("does not exist in SGLang {version} (added in {since})"),
        ));
    }
    Ok(())
}

impl ExpertParallel {
    /// SGLang's EP settings for a server of `tp` GPUs per MoE group (the whole server with DP
    /// attention); `None` without EP. Returns the notes `run` prints.
    pub fn resolve_sglang(
        f: &ExpertParallelFlags,
        version: Version,
        tp: u64,
        dp_attention: bool,
        model: &ModelSpec,
    ) -> Result<(Option<ExpertParallel>, Vec<String>)> {
        let mut notes = Vec::new();
        if f.enable_expert_parallel {
            return Err(bad(
                "--enable-expert-parallel",
                "is vLLM's flag; SGLang takes --ep-size N (or --moe-a2a-backend deepep)",
            ));
        }
        let v = |a, b, c| Version::new(a, b, c);
        if f.ep_size.is_some() {
            need(version, v(0, 4, 1), "--ep-size")?;
        }
        for (set, flag, since, instead) in [
            (
                f.enable_ep_moe,
                "--enable-ep-moe",
                v(0, 4, 1),
                "set `--ep-size` to the same value as `--tp-size`",
            ),
            (
                f.enable_deepep_moe,
                "--enable-deepep-moe",
                v(0, 4, 5),
                "set `--moe-a2a-backend` to 'deepep'",
            ),
        ] {
            if !set {
                continue;
            }
            need(version, since, flag)?;
            if version >= DEPRECATED_REFUSED_FROM {
                return Err(bad(
                    flag,
                    format!("is refused by SGLang {version} (deprecated): {instead} instead"),
                ));
            }
            if version >= v(0, 5, 0) {
                notes.push(format!(
                    "{flag} is deprecated in SGLang {version} (still honoured): {instead}"
                ));
            }
        }
        let deepep = match f.moe_a2a_backend.as_deref() {
            None => f.enable_deepep_moe,
            Some(b) => {
                need(version, v(0, 5, 0), "--moe-a2a-backend")?;
                match b {
                    "none" => f.enable_deepep_moe,
                    "deepep" => true,
                    o => {
                        return Err(bad(
                            "--moe-a2a-backend",
                            format!("{o} is not modelled by servesim (none, deepep)"),
                        ))
                    }
                }
            }
        };
        let deepep_mode = match f.deepep_mode.as_deref() {
            None => DeepEpMode::Auto,
            Some(m) => {
                need(version, v(0, 4, 5), "--deepep-mode")?;
                match m {
                    "auto" => DeepEpMode::Auto,
                    "normal" => DeepEpMode::Normal,
                    "low_latency" | "low-latency" => DeepEpMode::LowLatency,
                    o => {
                        return Err(bad(
                            "--deepep-mode",
                            format!("must be auto, normal or low_latency, got {o}"),
                        ))
                    }
                }
            }
        };
        if f.enable_eplb {
            need(version, v(0, 4, 7), "--enable-eplb")?;
        }
        if f.ep_num_redundant_experts.is_some() {
            need(version, v(0, 4, 7), "--ep-num-redundant-experts")?;
        }
        if deepep && deepep_mode == DeepEpMode::Auto && dp_attention && version < v(0, 4, 9) {
            return Err(bad(
                "--deepep-mode",
                format!(
                    "SGLang {version} refuses DeepEP `auto` mode with DP attention (\"DeepEP MoE \
                     `auto` mode is not supported with DP Attention\"): give --deepep-mode \
                     normal or low_latency"
                ),
            ));
        }
        if f.ep_size == Some(0) {
            return Err(bad("--ep-size", "must be at least 1, got 0"));
        }
        // DeepEP and --enable-ep-moe override --ep-size with the TP size.
        let ep_size = if deepep || f.enable_ep_moe {
            tp
        } else {
            f.ep_size.unwrap_or(1)
        };
        let redundant = f.ep_num_redundant_experts.unwrap_or(0);
        if f.enable_eplb && ep_size <= 1 {
            return Err(bad(
                "--enable-eplb",
                "needs expert parallelism (SGLang asserts ep_size > 1): give --ep-size N > 1",
            ));
        }
        if ep_size <= 1 && redundant == 0 {
            if f.deepep_mode.is_some() {
                notes.push("--deepep-mode has no effect without --moe-a2a-backend deepep".into());
            }
            return Ok((None, notes));
        }
        let Some(moe) = &model.moe else {
            return Err(bad(
                "--ep-size",
                format!(
                    "{} has no experts (a dense model): drop the EP flags",
                    model.name
                ),
            ));
        };
        if ep_size == 0 || ep_size > tp || tp % ep_size != 0 {
            return Err(bad(
                "--ep-size",
                format!(
                    "must divide the MoE group's {tp} GPUs (--tp; SGLang shards each expert over \
                     moe_tp = tp / ep ranks), got {ep_size}"
                ),
            ));
        }
        let physical = moe.num_experts + redundant;
        if physical % ep_size != 0 {
            return Err(bad(
                "--ep-num-redundant-experts",
                format!(
                    "{} experts + {redundant} redundant = {physical} must split evenly over ep \
                     {ep_size} ranks",
                    moe.num_experts
                ),
            ));
        }
        Ok((
            Some(ExpertParallel {
                ep_size,
                moe_tp: tp / ep_size,
                a2a_backend: if deepep {
                    A2aBackend::Deepep
                } else {
                    A2aBackend::None
                },
                deepep_mode,
                eplb: f.enable_eplb,
                redundant_experts: redundant,
                shared_experts_unsharded: deepep,
            }),
            notes,
        ))
    }

    /// vLLM's `--enable-expert-parallel` for `tp × dp` ranks; `None` when off.
    pub fn resolve_vllm(
        f: &ExpertParallelFlags,
        version: Version,
        tp: u64,
        dp: u64,
        model: &ModelSpec,
    ) -> Result<Option<ExpertParallel>> {
        if !f.enable_expert_parallel {
            return Ok(None);
        }
        if version < Version::new(0, 8, 0) {
            return Err(bad(
                "--enable-expert-parallel",
                format!("does not exist in vLLM {version} (added in 0.8.0)"),
            ));
        }
        if model.moe.is_none() {
            return Err(bad(
                "--enable-expert-parallel",
                format!(
                    "{} has no experts (a dense model): drop the flag",
                    model.name
                ),
            ));
        }
        Ok(Some(ExpertParallel {
            ep_size: tp * dp,
            moe_tp: 1,
            a2a_backend: A2aBackend::None,
            deepep_mode: DeepEpMode::Auto,
            eplb: false,
            redundant_experts: 0,
            shared_experts_unsharded: false,
        }))
    }

    /// Weight bytes one rank holds beyond what `ModelSpec::weight_bytes_per_rank(tp)` counts
    /// (every expert sharded over `tp`): the fullest rank's `ceil((E + R) / ep)` experts, each
    /// sharded over `moe_tp`, and the shared experts unsharded under DeepEP.
    pub fn extra_weight_bytes_per_rank(
        &self,
        model: &ModelSpec,
        tp: u64,
        format: WeightFormat,
    ) -> f64 {
        let Some(m) = &model.moe else { return 0.0 };
        let (linear_b, expert_b) = format.bytes_per_param();
        let h = model.hidden_size as f64;
        let layers = model.moe_layers() as f64;
        let expert = 3.0 * h * m.expert_intermediate_size as f64;
        let local = (m.num_experts + self.redundant_experts).div_ceil(self.ep_size) as f64;
        let ep_experts = local * expert / self.moe_tp as f64;
        let tp_experts = m.num_experts as f64 * expert / tp as f64;
        let mut extra = layers * (ep_experts - tp_experts) * expert_b;
        if self.shared_experts_unsharded {
            let shared = 3.0 * h * m.shared_expert_intermediate_size as f64;
            extra += layers * shared * (1.0 - 1.0 / tp as f64) * linear_b;
        }
        extra
    }

    /// The DeepEP kernels a step runs (`None` without DeepEP): `auto` picks normal when the
    /// step extends (prefill or mixed), low-latency for a decode-only step.
    pub fn deepep_kernel(&self, extend: bool) -> Option<DeepEpKernel> {
        if self.a2a_backend != A2aBackend::Deepep {
            return None;
        }
        Some(match self.deepep_mode {
            DeepEpMode::Normal => DeepEpKernel::Normal,
            DeepEpMode::LowLatency => DeepEpKernel::LowLatency,
            DeepEpMode::Auto if extend => DeepEpKernel::Normal,
            DeepEpMode::Auto => DeepEpKernel::LowLatency,
        })
    }

    /// The SGLang `launch_server` flags that deploy this layout on `version` (name without
    /// dashes, value or `None` for a switch): `--moe-a2a-backend deepep` from 0.5.0,
    /// `--enable-deepep-moe` before; `--ep-size` otherwise.
    pub fn sglang_launch_flags(&self, version: Version) -> Vec<(&'static str, Option<String>)> {
        let mut v = Vec::new();
        if self.a2a_backend == A2aBackend::Deepep {
            if version >= Version::new(0, 5, 0) {
                v.push(("moe-a2a-backend", Some("deepep".to_string())));
            } else {
                v.push(("enable-deepep-moe", None));
            }
            let mode = match self.deepep_mode {
                DeepEpMode::Auto => None,
                DeepEpMode::Normal => Some("normal"),
                DeepEpMode::LowLatency => Some("low_latency"),
            };
            if let Some(m) = mode {
                v.push(("deepep-mode", Some(m.to_string())));
            }
        } else if self.ep_size > 1 {
            v.push(("ep-size", Some(self.ep_size.to_string())));
        }
        if self.eplb {
            v.push(("enable-eplb", None));
        }
        if self.redundant_experts > 0 {
            v.push((
                "ep-num-redundant-experts",
                Some(self.redundant_experts.to_string()),
            ));
        }
        v
    }

    /// DeepEP normal mode disables CUDA graphs (0.4.7+: "Cuda graph is disabled because
    /// deepep_mode=`normal`").
    pub fn disables_cuda_graph(&self, version: Version) -> bool {
        self.a2a_backend == A2aBackend::Deepep
            && self.deepep_mode == DeepEpMode::Normal
            && version >= Version::new(0, 4, 7)
    }
}
