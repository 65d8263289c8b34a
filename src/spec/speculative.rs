//! Speculative decoding as SGLang configures it (`server_args.py`, reference
//! sglang-specdec-pd.md part 1): the `--speculative-*` flags, the draft model (an EAGLE/EAGLE3
//! head, DeepSeek's NEXTN/MTP layer, a STANDALONE small LM, or none for NGRAM), the
//! `(num_steps K, eagle_topk k, num_draft_tokens N)` SGLang picks when they are left out, and
//! the acceptance (mean tokens gained per verify, bonus token included) with its source.
//!
//! Acceptance is an input, not something the simulator can derive: SGLang's own
//! `SGLANG_SIMULATE_ACC_LEN=L` (`SIMULATE_ACC_LEN` before 0.5.3) runs the real kernels at a fixed
//! accept length, and is how a user measures the cost side on their own hardware.
use super::bundled::{draft_model_names, load_model};
use super::model::{ModelSpec, WeightFormat};
use super::mtp_draft::{mtp_draft, nextn_layer};
use super::version::Version;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The `--speculative-*` flags as a user gives them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SpeculativeFlags {
    /// EAGLE, EAGLE3, NEXTN (DeepSeek MTP), STANDALONE or NGRAM (default: off; NONE turns it
    /// off, so a sweep or plan grid can compare NONE,EAGLE3).
    #[arg(long, alias = "speculative-algo")]
    pub speculative_algorithm: Option<String>,
    /// Draft model: a bundled name (e.g. qwen3-8b-eagle3), a model YAML or an HF config.json
    /// (default for EAGLE / NEXTN on DeepSeek-V3, GLM-4.5/4.6/4.7 and Qwen3.5 from 0.5.9: the
    /// target's own MTP layer).
    #[arg(long, alias = "speculative-draft-model", alias = "speculative-draft")]
    pub speculative_draft_model_path: Option<String>,
    /// Draft depth K (default: SGLang's auto choice per version and architecture).
    #[arg(long)]
    pub speculative_num_steps: Option<u64>,
    /// Branching per draft level k.
    #[arg(long)]
    pub speculative_eagle_topk: Option<u64>,
    /// Tree nodes the target verifies per request, root included (N = K + 1 when k = 1).
    #[arg(long)]
    pub speculative_num_draft_tokens: Option<u64>,
    /// Mean tokens gained per verify, bonus token included (SGLang's "accept length"), in
    /// [1, K + 1] (servesim input; default per algorithm and dataset, see README).
    #[arg(long)]
    pub speculative_accept_length: Option<f64>,
    /// Per-draft-token acceptance probability in [0, 1] along the chain (accept length =
    /// 1 + a + a² + … + a^K); an alternative to --speculative-accept-length.
    #[arg(long)]
    pub speculative_accept_rate: Option<f64>,
    /// SGLang's env `SGLANG_ENABLE_SPEC_V2` (0.5.5–0.5.13): true or false (default: the
    /// version's, on from 0.5.11); spec v2 overlaps the scheduler with the GPU.
    #[arg(long)]
    pub sglang_enable_spec_v2: Option<bool>,
}

impl SpeculativeFlags {
    /// No speculative flag given (the group is left out when flags are serialized).
    pub fn is_unset(&self) -> bool {
        self == &SpeculativeFlags::default()
    }

    /// `over`'s values where set, else `self`'s.
    pub fn merged(&self, over: &SpeculativeFlags) -> SpeculativeFlags {
        macro_rules! pick {
            ($($f:ident),*) => { SpeculativeFlags { $($f: over.$f.clone().or_else(|| self.$f.clone()),)* } };
        }
        pick!(
            speculative_algorithm,
            speculative_draft_model_path,
            speculative_num_steps,
            speculative_eagle_topk,
            speculative_num_draft_tokens,
            speculative_accept_length,
            speculative_accept_rate,
            sglang_enable_spec_v2
        )
    }
}

/// `--speculative-algorithm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum SpecAlgorithm {
    Eagle,
    Eagle3,
    /// DeepSeek's multi-token-prediction layer; SGLang rewrites NEXTN to EAGLE.
    Nextn,
    Standalone,
    Ngram,
}

impl SpecAlgorithm {
    pub const NAMES: &'static str = "EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM";

    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_uppercase().as_str() {
            "EAGLE" => Some(Self::Eagle),
            "EAGLE3" => Some(Self::Eagle3),
            "NEXTN" | "MTP" => Some(Self::Nextn),
            "STANDALONE" => Some(Self::Standalone),
            "NGRAM" => Some(Self::Ngram),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Eagle => "EAGLE",
            Self::Eagle3 => "EAGLE3",
            Self::Nextn => "NEXTN",
            Self::Standalone => "STANDALONE",
            Self::Ngram => "NGRAM",
        }
    }

    /// First SGLang version with the algorithm (reference §1.1).
    fn since(self) -> Version {
        match self {
            Self::Eagle => Version::post(0, 4, 1, 4),
            Self::Nextn => Version::post(0, 4, 3, 1),
            Self::Eagle3 => Version::post(0, 4, 4, 2),
            Self::Standalone => Version::new(0, 5, 2),
            Self::Ngram => Version::new(0, 5, 3),
        }
    }

    /// The draft is a head fed the target's hidden states (same hidden size required).
    fn is_head(self) -> bool {
        matches!(self, Self::Eagle | Self::Eagle3 | Self::Nextn)
    }
}

/// The speculative worker a server runs (`spec::speculative_v2` decides it per version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SpecWorker {
    /// SGLang's `EAGLEWorkerV2` (spec v2): its KV lookahead and draft-extend shape.
    pub v2: bool,
    /// The overlap scheduler runs (CPU of the next step hidden under this step's GPU).
    pub overlap: bool,
}

/// Resolved speculative-decoding settings of a server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpeculativeConfig {
    pub algorithm: SpecAlgorithm,
    /// K: draft depth (draft forward passes per iteration: K − 1 plus the draft extend).
    pub num_steps: u64,
    /// k: branching per level.
    pub topk: u64,
    /// N: tokens per request in the target's verify pass (tree nodes incl. the root).
    pub num_draft_tokens: u64,
    /// The draft model (`None` for NGRAM, whose drafts come from a CPU n-gram cache).
    pub draft: Option<ModelSpec>,
    /// Weight format the draft runs in.
    pub draft_weight_format: WeightFormat,
    /// Mean tokens gained per verify (bonus included), before clipping at the output length.
    pub accept_length: f64,
    /// Where `accept_length` came from (flag, or the default's source).
    pub accept_source: String,
    /// `true` when the user gave the acceptance (else a per-dataset default applies).
    pub accept_given: bool,
    /// Draft weights held by one rank, bytes (embedding / LM head shared with the target are
    /// not counted).
    pub draft_weight_bytes_per_rank: f64,
    /// Spec v1 or v2, overlapped or not (v1 until the server resolves it).
    pub worker: SpecWorker,
}

impl SpeculativeConfig {
    /// Most tokens one verify can add to a request: K + 1 (N for NGRAM, whose tree path can
    /// run over all N nodes).
    pub fn max_gain(&self) -> u64 {
        match self.algorithm {
            SpecAlgorithm::Ngram => self.num_draft_tokens,
            _ => (self.num_steps + 1).min(self.num_draft_tokens),
        }
    }

    /// Draft passes over `bs × k` tokens per iteration (the first level's top-k comes from the
    /// previous draft extend).
    pub fn draft_passes(&self) -> u64 {
        match self.algorithm {
            SpecAlgorithm::Ngram => 0,
            _ => self.num_steps.saturating_sub(1),
        }
    }

    /// The accept length a per-draft-token acceptance `rate` gives along a chain of K drafts.
    pub fn accept_length_of_rate(rate: f64, num_steps: u64) -> f64 {
        (0..=num_steps).map(|i| rate.powi(i as i32)).sum()
    }

    /// Applies the per-dataset default acceptance when the user gave none.
    pub fn set_default_acceptance(&mut self, dataset: &str) {
        if self.accept_given {
            return;
        }
        let (rate, source) = default_rate(self.algorithm, dataset);
        self.accept_length =
            Self::accept_length_of_rate(rate, self.max_gain() - 1).min(self.max_gain() as f64);
        self.accept_source = format!(
            "default for {} on dataset {dataset}: per-draft-token acceptance {rate} ({source})",
            self.algorithm.name()
        );
    }

    /// Resolves the flags for `target` at `version`; `None` when speculation is off.
    pub fn resolve(
        f: &SpeculativeFlags,
        target: &ModelSpec,
        version: Version,
        tp: u64,
    ) -> Result<Option<SpeculativeConfig>> {
        let Some(name) = f.speculative_algorithm.as_deref() else {
            // SGLang ignores the env without speculation.
            let others = SpeculativeFlags {
                sglang_enable_spec_v2: None,
                ..f.clone()
            };
            if others != SpeculativeFlags::default() {
                return Err(bad(
                    "--speculative-algorithm",
                    "other --speculative-* flags need --speculative-algorithm",
                ));
            }
            return Ok(None);
        };
        if name.eq_ignore_ascii_case("none") {
            // servesim's spelling of "off", so one sweep/plan grid can compare with and without
            // speculation; the other --speculative-* flags are then ignored.
            return Ok(None);
        }
        let algorithm = SpecAlgorithm::parse(name).ok_or_else(|| Error::Unknown {
            kind: "speculative algorithm",
            name: name.into(),
            available: SpecAlgorithm::NAMES.into(),
        })?;
        if version < algorithm.since() {
            return Err(bad(
                "--speculative-algorithm",
                format!(
                    "{} needs SGLang ≥ {}, got --sglang-version {version}",
                    algorithm.name(),
                    algorithm.since()
                ),
            ));
        }
        let (num_steps, topk, num_draft_tokens) = choose_params(f, algorithm, target, version)?;
        let (draft, draft_weight_format, draft_weight_bytes_per_rank) =
            resolve_draft(f, algorithm, target, version, tp)?;
        let mut cfg = SpeculativeConfig {
            algorithm,
            num_steps,
            topk,
            num_draft_tokens,
            draft,
            draft_weight_format,
            accept_length: 1.0,
            accept_source: String::new(),
            accept_given: false,
            draft_weight_bytes_per_rank,
            worker: SpecWorker::default(),
        };
        let max = cfg.max_gain();
        match (f.speculative_accept_length, f.speculative_accept_rate) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "--speculative-accept-length",
                    "give --speculative-accept-length or --speculative-accept-rate, not both",
                ))
            }
            (Some(l), None) => {
                if !(l.is_finite() && l >= 1.0 && l <= max as f64) {
                    return Err(bad(
                        "--speculative-accept-length",
                        format!(
                            "must be between 1 (the bonus token alone) and {max} (every one of \
                             the {} draft tokens accepted + 1), got {l}",
                            max - 1
                        ),
                    ));
                }
                cfg.accept_length = l;
                cfg.accept_source = "--speculative-accept-length".into();
                cfg.accept_given = true;
            }
            (None, Some(a)) => {
                if !(a.is_finite() && (0.0..=1.0).contains(&a)) {
                    return Err(bad(
                        "--speculative-accept-rate",
                        format!("must be in [0, 1], got {a}"),
                    ));
                }
                cfg.accept_length = Self::accept_length_of_rate(a, max - 1);
                cfg.accept_source =
                    format!("--speculative-accept-rate {a} over {} drafts", max - 1);
                cfg.accept_given = true;
            }
            (None, None) => cfg.set_default_acceptance("random"),
        }
        Ok(Some(cfg))
    }
}

pub(super) fn bad(flag: &str, reason: impl Into<String>) -> Error {
    Error::invalid(flag, flag.trim_start_matches('-').replace('-', "_"), reason)
}

/// (K, k, N): the user's, or `auto_choose_speculative_params` (reference §1.3), with what SGLang
/// forces (k = 1 ⇒ N = K + 1 from 0.4.5.post3; NGRAM: k = 10 BFS breadth, N = 12 window).
fn choose_params(
    f: &SpeculativeFlags,
    algorithm: SpecAlgorithm,
    target: &ModelSpec,
    version: Version,
) -> Result<(u64, u64, u64)> {
    for (flag, v) in [
        ("--speculative-num-steps", f.speculative_num_steps),
        ("--speculative-eagle-topk", f.speculative_eagle_topk),
        (
            "--speculative-num-draft-tokens",
            f.speculative_num_draft_tokens,
        ),
    ] {
        if let Some(x) = v.filter(|&x| x == 0 || x > 64) {
            return Err(bad(flag, format!("must be between 1 and 64, got {x}")));
        }
    }
    if algorithm == SpecAlgorithm::Ngram {
        if let Some(k) = f.speculative_eagle_topk.filter(|&k| k > 1) {
            return Err(bad(
                "--speculative-eagle-topk",
                format!(
                    "NGRAM takes its tree breadth from --speculative-ngram-max-bfs-breadth \
                     (10), not a top-k; got --speculative-eagle-topk {k}"
                ),
            ));
        }
        let n = f.speculative_num_draft_tokens.unwrap_or(12);
        return Ok((f.speculative_num_steps.unwrap_or(n - 1).max(1), 10, n));
    }
    let (k_steps, topk, n) = match f.speculative_num_steps {
        None => {
            if f.speculative_eagle_topk.is_some() || f.speculative_num_draft_tokens.is_some() {
                return Err(bad(
                    "--speculative-num-steps",
                    "SGLang chooses K, k and N together: give --speculative-num-steps with \
                     --speculative-eagle-topk / --speculative-num-draft-tokens",
                ));
            }
            auto_params(algorithm, &target.architecture, version)
        }
        Some(k) => {
            let topk = f.speculative_eagle_topk.unwrap_or(1);
            let n = f.speculative_num_draft_tokens.unwrap_or(k + 1);
            (k, topk, n)
        }
    };
    let n = if topk == 1 && version >= Version::post(0, 4, 5, 3) {
        k_steps + 1
    } else {
        n
    };
    if n < 2 || n > k_steps * topk + 1 {
        return Err(bad(
            "--speculative-num-draft-tokens",
            format!(
                "must be between 2 and K·k + 1 = {} (the root plus the draft tree's nodes), got {n}",
                k_steps * topk + 1
            ),
        ));
    }
    Ok((k_steps, topk, n))
}

/// Architectures SGLang's `auto_choose_speculative_params` gives (3, 1, 4) from 0.4.7.
const DEEPSEEK_ARCHS: &[&str] = &[
    "DeepseekV2ForCausalLM",
    "DeepseekV3ForCausalLM",
    "DeepseekV32ForCausalLM",
    "GptOssForCausalLM",
    "BailingMoeForCausalLM",
    "BailingMoeV2ForCausalLM",
];

/// `auto_choose_speculative_params` per version (reference §1.3); before 0.4.4.post4 the static
/// defaults (5, 4, 8) (0.4.3.post3+) or (5, 8, 64).
fn auto_params(algorithm: SpecAlgorithm, arch: &str, version: Version) -> (u64, u64, u64) {
    if version < Version::post(0, 4, 3, 3) {
        return (5, 8, 64);
    }
    if version < Version::post(0, 4, 4, 4) {
        return (5, 4, 8);
    }
    let small = if version >= Version::new(0, 5, 8) {
        !(arch.starts_with("Llama") || arch.starts_with("Grok"))
    } else {
        version >= Version::new(0, 4, 7)
            && (DEEPSEEK_ARCHS.contains(&arch)
                || (algorithm == SpecAlgorithm::Standalone && version >= Version::new(0, 5, 2)))
    };
    if small {
        (3, 1, 4)
    } else {
        (5, 4, 8)
    }
}

/// The draft model, its weight format and its weight bytes per rank.
fn resolve_draft(
    f: &SpeculativeFlags,
    algorithm: SpecAlgorithm,
    target: &ModelSpec,
    version: Version,
    tp: u64,
) -> Result<(Option<ModelSpec>, WeightFormat, f64)> {
    if algorithm == SpecAlgorithm::Ngram {
        if f.speculative_draft_model_path.is_some() {
            return Err(bad(
                "--speculative-draft-model-path",
                "NGRAM drafts from an n-gram cache of the prompt and output: it takes no draft model",
            ));
        }
        return Ok((None, target.weights, 0.0));
    }
    let own_mtp = mtp_draft(&target.architecture).is_some_and(|(_, since)| version >= since);
    let path = f.speculative_draft_model_path.as_deref();
    let same_as_target =
        path.is_some_and(|p| p == target.name || Some(p) == target.hf_id.as_deref());
    let glm = target.architecture == "Glm4MoeForCausalLM";
    let draft = match path {
        None if own_mtp => nextn_layer(target)?,
        Some(_) if same_as_target && (target.mla.is_some() || glm || own_mtp) => {
            nextn_layer(target)?
        }
        // Any GLM-4.5 checkpoint loaded as a draft is its MTP layer (`_config_draft_model`).
        Some(p) if glm => {
            let d = load_model(p)?;
            if d.architecture == target.architecture {
                nextn_layer(&d)?
            } else {
                d
            }
        }
        None => {
            return Err(bad(
                "--speculative-draft-model-path",
                format!(
                    "{} needs a draft model for {} (SGLang defaults it only to the own MTP \
                     layer of DeepSeek-V3, GLM-4.5 and, from 0.5.9, Qwen3.5)",
                    algorithm.name(),
                    target.name
                ),
            ))
        }
        Some(p) => load_model(p).map_err(|e| match e {
            Error::Unknown { name, .. } => Error::Unknown {
                kind: "draft model",
                name,
                available: format!(
                    "{} (or a model YAML / config.json)",
                    draft_model_names().join(", ")
                ),
            },
            e => e,
        })?,
    };
    if draft.vocab_size != target.vocab_size {
        return Err(bad(
            "--speculative-draft-model-path",
            format!(
                "draft {} has vocab_size {} but target {} has {}: a draft must share the \
                 target's tokenizer",
                draft.name, draft.vocab_size, target.name, target.vocab_size
            ),
        ));
    }
    if algorithm.is_head() && draft.hidden_size != target.hidden_size {
        return Err(bad(
            "--speculative-draft-model-path",
            format!(
                "draft {} has hidden_size {} but target {} has {}: an {} head reads the \
                 target's hidden states",
                draft.name,
                draft.hidden_size,
                target.name,
                target.hidden_size,
                algorithm.name()
            ),
        ));
    }
    draft.check_tp(tp)?;
    let format = draft.weights;
    let bytes = draft_weight_bytes(&draft, algorithm, tp, format);
    Ok((Some(draft), format, bytes))
}

/// Weight bytes of the draft per rank: a head (EAGLE/EAGLE3/NEXTN) shares the target's
/// embedding (and, except EAGLE3's reduced-vocabulary head, the LM head); a STANDALONE draft
/// holds its own. EAGLE3's fc (3h → h) and NEXTN's eh_proj (2h → h) are added.
fn draft_weight_bytes(d: &ModelSpec, a: SpecAlgorithm, tp: u64, format: WeightFormat) -> f64 {
    let all = d.weight_bytes_per_rank(tp, format);
    let h = d.hidden_size as f64;
    let tpf = tp.max(1) as f64;
    let embed = d.vocab_size as f64 * h / tpf * 2.0;
    let head = d.lm_head_params(tp) * 2.0;
    let shared = if d.tie_word_embeddings {
        embed
    } else {
        embed + head
    };
    match a {
        SpecAlgorithm::Standalone | SpecAlgorithm::Ngram => all,
        SpecAlgorithm::Eagle3 => all - shared + head + 3.0 * h * h / tpf * 2.0,
        SpecAlgorithm::Nextn => all - shared + 2.0 * h * h / tpf * format.bytes_per_param().0,
        SpecAlgorithm::Eagle => all - shared + 2.0 * h * h / tpf * 2.0,
    }
}

/// Default per-draft-token acceptance per algorithm and dataset, with its source. No SGLang
/// figure exists for bench_serving's synthetic prompts: `random` is built from ShareGPT text
/// (the text figures apply); `random-ids` is a token soup (consecutive ids) that accepts far
/// less (an assumption, stated as one).
pub fn default_rate(a: SpecAlgorithm, dataset: &str) -> (f64, &'static str) {
    if dataset == "random-ids" {
        return (
            0.3,
            "assumed: no published figure; token soup accepts far less than text \
             (vLLM issue #52536: random ids understate speculation)",
        );
    }
    match a {
        SpecAlgorithm::Nextn => (
            0.85,
            "DeepSeek-V3 tech report §5.4.3: 2nd-token acceptance 85–90%; SGLang CI \
             test_deepseek_v3_mtp.py asserts accept length > 2.9 at (3,1,4) on GSM8K",
        ),
        SpecAlgorithm::Eagle3 => (
            0.9,
            "SGLang PR #4247: Llama-3.1-8B EAGLE-3, K=5, MT-bench accept length 4.68 \
             (≈ 1 + 0.9 + … + 0.9^5)",
        ),
        SpecAlgorithm::Eagle => (
            0.75,
            "SGLang PR #4247: Llama-3.1-8B EAGLE-2, K=8, MT-bench accept length 3.76",
        ),
        SpecAlgorithm::Standalone => (
            0.7,
            "assumed: no published SGLang figure for a STANDALONE draft",
        ),
        SpecAlgorithm::Ngram => (
            0.3,
            "assumed: no published SGLang figure; n-gram drafts match only repeated text",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_params_follow_the_version_table() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        let e = SpecAlgorithm::Eagle;
        assert_eq!(
            auto_params(e, "DeepseekV3ForCausalLM", v("0.5.6")),
            (3, 1, 4)
        );
        assert_eq!(
            auto_params(e, "DeepseekV3ForCausalLM", v("0.4.6")),
            (5, 4, 8)
        );
        assert_eq!(auto_params(e, "Qwen3ForCausalLM", v("0.5.6")), (5, 4, 8));
        assert_eq!(auto_params(e, "Qwen3ForCausalLM", v("0.5.8")), (3, 1, 4));
        assert_eq!(auto_params(e, "LlamaForCausalLM", v("0.5.8")), (5, 4, 8));
    }

    #[test]
    fn chain_accept_length() {
        let l = SpeculativeConfig::accept_length_of_rate(0.5, 3);
        assert!((l - 1.875).abs() < 1e-12);
    }
}
