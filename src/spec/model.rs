//! Model architectures (YAML in `models/`, or a Hugging Face `config.json` via `hf_config`),
//! weight formats, and the per-rank sizes derived from them: parameters and bytes of each
//! operator, KV-cache bytes per token.
pub use super::linear_attention::LinearAttention;
use super::load::positive;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// How weights are stored (SGLang's `--quantization`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeightFormat {
    Bf16,
    /// FP8 e4m3 with 128×128 block scales (DeepSeek-V3 style).
    Fp8,
    /// W8A8 INT8 (per-channel weights, per-token activations).
    W8a8Int8,
    /// MXFP4 on MoE expert weights only (e2m1 + e8m0 scale per 32: 4.25 bits); rest bf16.
    Mxfp4,
    /// INT4 weight-only (W4A16) on routed-expert weights only: symmetric int4 with one bf16
    /// scale per group of 32 (4.5 bits); rest bf16 (compressed-tensors `pack-quantized` with
    /// attention, shared experts and dense MLPs ignored: Kimi-K2.5). SGLang runs the experts
    /// with its Marlin W4A16 fused MoE (`cost::mxfp4`).
    W4a16Int4,
    /// NVFP4 (NVIDIA ModelOpt, `quant_algo: NVFP4`): e2m1 weights in groups of 16, one FP8 E4M3
    /// scale per group and one FP32 scale per tensor (4 + 8/16 = 4.5 bits), on every linear
    /// layer (attention, dense MLPs, shared and routed experts); the router, embedding and LM
    /// head stay bf16. Activations are quantised to FP4 too (W4A4): SGLang runs the linears
    /// with flashinfer's FP4 GEMM and the experts with flashinfer's TRT-LLM / CUTLASS FP4 MoE,
    /// on Blackwell only (`ModelOptFp4Config.get_min_capability` 100; `ModelOptNvFp4FusedMoEMethod`
    /// raises "Please use Blackwell and above": sglang 0.5.9
    /// layers/quantization/modelopt_quant.py:951-954, 1334-1339).
    Nvfp4,
}

impl WeightFormat {
    pub const NAMES: &'static str = "bf16, fp8, w8a8_int8, mxfp4, w4a16_int4, nvfp4";
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().replace('-', "_").as_str() {
            "bf16" | "bfloat16" | "fp16" | "auto" | "none" => Some(Self::Bf16),
            "fp8" | "fp8_block" => Some(Self::Fp8),
            "w8a8_int8" | "int8" | "w8a8" => Some(Self::W8a8Int8),
            "mxfp4" => Some(Self::Mxfp4),
            "w4a16_int4" => Some(Self::W4a16Int4),
            // `modelopt_fp4` is SGLang's `--quantization` name for it.
            "nvfp4" | "modelopt_fp4" => Some(Self::Nvfp4),
            _ => None,
        }
    }
    /// The format's `--quantization` name (what [`Self::parse`] reads back).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bf16 => "bf16",
            Self::Fp8 => "fp8",
            Self::W8a8Int8 => "w8a8_int8",
            Self::Mxfp4 => "mxfp4",
            Self::W4a16Int4 => "w4a16_int4",
            Self::Nvfp4 => "nvfp4",
        }
    }
    /// The arithmetic the dense linear layers run in (MXFP4 / int4 builds keep them bf16).
    pub fn linear_compute(self) -> super::hardware::ComputeType {
        use super::hardware::ComputeType;
        match self {
            Self::Fp8 => ComputeType::Fp8,
            Self::W8a8Int8 => ComputeType::Int8,
            Self::Nvfp4 => ComputeType::Fp4,
            Self::Bf16 | Self::Mxfp4 | Self::W4a16Int4 => ComputeType::Bf16,
        }
    }
    /// The `--quantization` flag's format, or `default` (the model's) when it is not given.
    pub fn from_flag(flag: Option<&str>, default: Self) -> Result<Self> {
        match flag {
            None => Ok(default),
            Some(q) => Self::parse(q).ok_or_else(|| Error::Unknown {
                kind: "quantization",
                name: q.to_string(),
                available: Self::NAMES.into(),
            }),
        }
    }
    /// Bytes per parameter of (non-expert linear, expert linear) weights.
    pub fn bytes_per_param(self) -> (f64, f64) {
        match self {
            Self::Bf16 => (2.0, 2.0),
            Self::Fp8 => (1.0 + 4.0 / 16384.0, 1.0 + 4.0 / 16384.0),
            Self::W8a8Int8 => (1.0 + 4.0 / 4096.0, 1.0 + 4.0 / 4096.0),
            Self::Mxfp4 => (2.0, 4.25 / 8.0),
            Self::W4a16Int4 => (2.0, 4.5 / 8.0),
            Self::Nvfp4 => (4.5 / 8.0, 4.5 / 8.0),
        }
    }
}

/// Data type of the KV cache (`--kv-cache-dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KvDtype {
    Bf16,
    Fp8,
}

impl KvDtype {
    pub fn bytes(self) -> f64 {
        match self {
            KvDtype::Bf16 => 2.0,
            KvDtype::Fp8 => 1.0,
        }
    }
}

/// Local attention on some layers: a sliding window (gpt-oss alternates full and 128-token
/// windows) or Llama 4's chunked local attention.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlidingWindow {
    pub window_tokens: u64,
    /// How many of the layers use the window.
    pub layers: u64,
    /// Which keys a query at position p attends.
    #[serde(default, skip_serializing_if = "WindowKind::is_sliding")]
    pub kind: WindowKind,
}

/// The shape of a local-attention layer's key range.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowKind {
    /// Keys max(0, p − W + 1) ..= p: min(p + 1, W) of them.
    #[default]
    Sliding,
    /// Llama 4's `attention_chunk_size` C: keys ⌊p / C⌋·C ..= p, (p mod C) + 1 of them
    /// (SGLang fa3's `local_attn_metadata`). Never more than min(p + 1, C), which is what the
    /// cost backends price (`cost::window`).
    Chunked,
}

impl WindowKind {
    pub fn is_sliding(&self) -> bool {
        *self == WindowKind::Sliding
    }
}

/// Mixture of experts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Moe {
    pub num_experts: u64,
    pub experts_per_token: u64,
    pub expert_intermediate_size: u64,
    /// Width of the always-on shared expert(s) in total; 0 when none.
    #[serde(default)]
    pub shared_expert_intermediate_size: u64,
    /// How many layers use a dense MLP of `intermediate_size` instead: the first ones
    /// (DeepSeek's `first_k_dense_replace`) or interleaved (Llama 4 Maverick's every other
    /// layer). Only the count is priced; [`ModelSpec::layer_params`] takes layer 0 as the
    /// dense representative whenever this is > 0.
    #[serde(default)]
    pub dense_layers: u64,
    /// gpt-oss style experts with biases and a fused gate/up (no change in size; recorded).
    #[serde(default)]
    pub expert_bias: bool,
}

/// Multi-head latent attention (DeepSeek-V2/V3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mla {
    /// 0 when queries are not low-rank.
    #[serde(default)]
    pub q_lora_rank: u64,
    pub kv_lora_rank: u64,
    pub qk_nope_head_dim: u64,
    pub qk_rope_head_dim: u64,
    pub v_head_dim: u64,
}

/// A model as stored in `models/NAME.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    pub name: String,
    #[serde(default)]
    pub hf_id: Option<String>,
    /// `architectures[0]` of config.json (decides SGLang's attention-backend default).
    pub architecture: String,
    pub hidden_size: u64,
    pub num_layers: u64,
    pub num_attention_heads: u64,
    pub num_kv_heads: u64,
    pub head_dim: u64,
    /// Dense MLP width (the first dense layers' width for MoE models).
    pub intermediate_size: u64,
    pub vocab_size: u64,
    #[serde(default)]
    pub tie_word_embeddings: bool,
    /// `max_position_embeddings`: SGLang's `context_len`.
    pub context_length: u64,
    #[serde(default)]
    pub qkv_bias: bool,
    #[serde(default)]
    pub sliding_window: Option<SlidingWindow>,
    #[serde(default)]
    pub moe: Option<Moe>,
    #[serde(default)]
    pub mla: Option<Mla>,
    /// Gated delta-net linear attention on some layers (Qwen3-Next, Qwen3.5): no KV cache
    /// there, a per-request recurrent state instead ([`LinearAttention`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linear_attention: Option<LinearAttention>,
    /// Format the checkpoint ships in (the default of `--quantization`).
    pub weights: WeightFormat,
    /// What `--kv-cache-dtype auto` resolves to.
    #[serde(default = "default_kv")]
    pub kv_cache_dtype: KvDtype,
    /// EAGLE3 draft heads: the reduced vocabulary of their own LM head (`draft_vocab_size`);
    /// the embedding keeps `vocab_size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_vocab_size: Option<u64>,
    /// Parameters of a multimodal model's vision tower: held in memory (bf16, split over the
    /// TP ranks as SGLang's column/row-parallel vision layers are), never run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub vision_params: u64,
    /// SGLang builds the input embedding as a plain `nn.Embedding`, not vocab-parallel, and ties
    /// the LM head to it (Gemma-3: `gemma3_causal.py` `Gemma3TextScaledWordEmbedding`, 0.4.6–
    /// 0.5.23): at TP > 1 every rank holds the whole table and computes every logit. vLLM
    /// shards both (`VocabParallelEmbedding`), so its engine clears this
    /// ([`super::engine::model_as_built`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replicated_embedding: bool,
    /// What the config reader left out or assumed, printed with every run of the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn default_kv() -> KvDtype {
    KvDtype::Bf16
}

/// Per-rank parameter counts of one layer's operators (already divided by TP).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LayerParams {
    /// Attention projections (q, k, v, o; MLA's low-rank projections).
    pub attention: f64,
    /// Dense MLP (gate, up, down), 0 for MoE layers.
    pub dense_mlp: f64,
    /// Shared expert(s) of an MoE layer.
    pub shared_expert: f64,
    /// One routed expert (gate, up, down) on this rank.
    pub expert: f64,
    /// The router.
    pub router: f64,
}

/// Most layers a model may have (checked before anything iterates over layers).
pub const MAX_LAYERS: u64 = 1 << 16;

/// Largest width, head count, vocabulary or expert count accepted (2^24): far beyond any
/// real model, and small enough that products of two such sizes stay exact in 64 bits.
pub const MAX_DIM: u64 = 1 << 24;

/// Checks `1 ≤ v ≤ max` (or `0 ≤ v` when `allow_zero`) for a size read from `origin`.
fn size(origin: &str, field: &str, v: u64, max: u64, allow_zero: bool) -> Result<()> {
    if (v == 0 && !allow_zero) || v > max {
        let (lo, hi) = (u64::from(!allow_zero), max.trailing_zeros());
        return Err(Error::invalid(
            origin,
            field,
            format!("must be between {lo} and 2^{hi}, got {v}"),
        ));
    }
    Ok(())
}

impl ModelSpec {
    /// Checks the architecture numbers; `origin` names the file in errors.
    pub fn validate(&self, origin: &str) -> Result<()> {
        for (f, v, max) in [
            ("hidden_size", self.hidden_size, MAX_DIM),
            ("num_layers", self.num_layers, MAX_LAYERS),
            ("num_attention_heads", self.num_attention_heads, MAX_DIM),
            ("num_kv_heads", self.num_kv_heads, MAX_DIM),
            ("head_dim", self.head_dim, MAX_DIM),
            ("vocab_size", self.vocab_size, MAX_DIM),
            ("context_length", self.context_length, 1 << 40),
        ] {
            size(origin, f, v, max, false)?;
        }
        size(
            origin,
            "intermediate_size",
            self.intermediate_size,
            MAX_DIM,
            true,
        )?;
        if let Some(m) = &self.moe {
            for (f, v) in [
                ("moe.num_experts", m.num_experts),
                ("moe.experts_per_token", m.experts_per_token),
                ("moe.expert_intermediate_size", m.expert_intermediate_size),
                (
                    "moe.shared_expert_intermediate_size",
                    m.shared_expert_intermediate_size,
                ),
            ] {
                size(origin, f, v, MAX_DIM, true)?;
            }
        }
        if let Some(m) = &self.mla {
            for (f, v) in [
                ("mla.q_lora_rank", m.q_lora_rank),
                ("mla.kv_lora_rank", m.kv_lora_rank),
                ("mla.qk_nope_head_dim", m.qk_nope_head_dim),
                ("mla.qk_rope_head_dim", m.qk_rope_head_dim),
                ("mla.v_head_dim", m.v_head_dim),
            ] {
                size(origin, f, v, MAX_DIM, true)?;
            }
        }
        if let Some(s) = &self.sliding_window {
            size(
                origin,
                "sliding_window.window_tokens",
                s.window_tokens,
                1 << 40,
                true,
            )?;
        }
        if self.moe.is_none() && self.intermediate_size == 0 {
            return Err(Error::invalid(
                origin,
                "intermediate_size",
                "must be > 0 for a dense model",
            ));
        }
        if self.num_attention_heads % self.num_kv_heads != 0 {
            return Err(Error::invalid(
                origin,
                "num_kv_heads",
                "must divide num_attention_heads",
            ));
        }
        if let Some(m) = &self.moe {
            if m.num_experts == 0 || m.experts_per_token == 0 || m.experts_per_token > m.num_experts
            {
                return Err(Error::invalid(
                    origin,
                    "moe.experts_per_token",
                    "must be between 1 and moe.num_experts",
                ));
            }
            if m.expert_intermediate_size == 0 {
                return Err(Error::invalid(
                    origin,
                    "moe.expert_intermediate_size",
                    "must be > 0",
                ));
            }
            if m.dense_layers > self.num_layers {
                return Err(Error::invalid(
                    origin,
                    "moe.dense_layers",
                    "exceeds num_layers",
                ));
            }
        }
        if let Some(s) = &self.sliding_window {
            if s.window_tokens == 0 || s.layers > self.num_layers {
                return Err(Error::invalid(
                    origin,
                    "sliding_window",
                    "window must be > 0 and layers ≤ num_layers",
                ));
            }
        }
        if let Some(m) = &self.mla {
            positive(origin, "mla.kv_lora_rank", m.kv_lora_rank as f64)?;
        }
        if let Some(l) = &self.linear_attention {
            for (f, v) in [
                ("linear_attention.num_k_heads", l.num_k_heads),
                ("linear_attention.num_v_heads", l.num_v_heads),
                ("linear_attention.head_k_dim", l.head_k_dim),
                ("linear_attention.head_v_dim", l.head_v_dim),
                ("linear_attention.conv_kernel", l.conv_kernel),
            ] {
                size(origin, f, v, MAX_DIM, false)?;
            }
            if l.layers >= self.num_layers || !(l.ssm_state_bytes > 0.0 && l.ssm_state_bytes <= 8.0)
            {
                return Err(Error::invalid(
                    origin,
                    "linear_attention",
                    "layers must be < num_layers (one full-attention layer at least) and \
                     ssm_state_bytes in (0, 8]",
                ));
            }
        }
        Ok(())
    }

    /// Checks that the model can be split over `tp` ranks as SGLang requires.
    pub fn check_tp(&self, tp: u64) -> Result<()> {
        if tp == 0 {
            return Err(Error::invalid("--tp", "tp", "must be ≥ 1"));
        }
        if self.num_attention_heads % tp != 0 {
            return Err(Error::invalid(
                "--tp",
                "tp",
                format!(
                    "{} attention heads of {} are not divisible by tp {tp}",
                    self.num_attention_heads, self.name
                ),
            ));
        }
        if self.num_kv_heads >= tp && self.num_kv_heads % tp != 0 {
            return Err(Error::invalid(
                "--tp",
                "tp",
                format!(
                    "{} KV heads of {} are not divisible by tp {tp}",
                    self.num_kv_heads, self.name
                ),
            ));
        }
        Ok(())
    }

    /// The attention layers carry learned sinks (gpt-oss, `GptOssForCausalLM`: its
    /// `self.sinks` per query head), which decide vLLM's attention backend.
    pub fn has_attention_sinks(&self) -> bool {
        self.architecture.starts_with("GptOss")
    }

    /// KV heads held by one rank: replicated when fewer than `tp` (SGLang's `get_num_kv_heads`).
    pub fn kv_heads_per_rank(&self, tp: u64) -> u64 {
        (self.num_kv_heads / tp.max(1)).max(1)
    }

    /// Query heads on one rank.
    pub fn q_heads_per_rank(&self, tp: u64) -> f64 {
        self.num_attention_heads as f64 / tp.max(1) as f64
    }

    /// Number of MoE layers.
    pub fn moe_layers(&self) -> u64 {
        self.moe
            .as_ref()
            .map_or(0, |m| self.num_layers - m.dense_layers)
    }

    /// Layers that run (and cache for) softmax attention: all but the linear ones.
    pub fn full_attention_layers(&self) -> u64 {
        self.num_layers - self.linear_layers()
    }

    /// Gated delta-net linear-attention layers (0 for a plain decoder).
    pub fn linear_layers(&self) -> u64 {
        self.linear_attention.as_ref().map_or(0, |l| l.layers)
    }

    /// KV-cache bytes per token on one rank over the full-attention layers (SGLang's
    /// `cell_size`; a hybrid GDN model counts only `full_attention_layer_ids`,
    /// `model_runner_kv_cache_mixin.py` 0.5.9): MLA caches one latent per token, not divided
    /// by TP; GQA caches K and V for the rank's KV heads.
    pub fn kv_bytes_per_token_per_rank(&self, tp: u64, dtype: KvDtype) -> f64 {
        let per_layer = match &self.mla {
            Some(m) => (m.kv_lora_rank + m.qk_rope_head_dim) as f64,
            None => (self.kv_heads_per_rank(tp) * self.head_dim * 2) as f64,
        };
        per_layer * self.full_attention_layers() as f64 * dtype.bytes()
    }

    /// Bytes of one request's recurrent state on one rank (0 without linear layers).
    pub fn linear_state_bytes_per_request(&self, tp: u64) -> f64 {
        self.linear_attention
            .as_ref()
            .map_or(0.0, |l| l.state_bytes_per_request(tp))
    }

    /// Per-rank parameters of the attention projections of one layer: with linear layers the
    /// mean over the stack of the full-attention and the GDN projections, so that every layer
    /// times this is the stack's total (what the weights and the GEMM rooflines need).
    fn attention_params(&self, tp: f64) -> f64 {
        let full = self.full_attention_params(tp);
        match &self.linear_attention {
            Some(l) if self.num_layers > 0 => {
                let gdn = l.params_per_rank(self.hidden_size, tp as u64);
                let lin = l.layers as f64;
                let layers = self.num_layers as f64;
                (full * (layers - lin) + gdn * lin) / layers
            }
            _ => full,
        }
    }

    /// Per-rank parameters of one softmax-attention layer's projections.
    fn full_attention_params(&self, tp: f64) -> f64 {
        let h = self.hidden_size as f64;
        match &self.mla {
            Some(m) => {
                let nh = self.num_attention_heads as f64;
                let qk = (m.qk_nope_head_dim + m.qk_rope_head_dim) as f64;
                let q = if m.q_lora_rank > 0 {
                    // q_a is replicated on every rank; q_b is split by heads.
                    h * m.q_lora_rank as f64 + m.q_lora_rank as f64 * nh * qk / tp
                } else {
                    h * nh * qk / tp
                };
                let kv_a = h * (m.kv_lora_rank + m.qk_rope_head_dim) as f64;
                let kv_b =
                    m.kv_lora_rank as f64 * nh * (m.qk_nope_head_dim + m.v_head_dim) as f64 / tp;
                let o = nh * m.v_head_dim as f64 * h / tp;
                q + kv_a + kv_b + o
            }
            None => {
                let gate = self
                    .linear_attention
                    .as_ref()
                    .is_some_and(|l| l.full_attention_output_gate);
                let q_width = if gate { 2 } else { 1 };
                let q = h * (q_width * self.num_attention_heads * self.head_dim) as f64 / tp;
                let kv = 2.0 * h * (self.kv_heads_per_rank(tp as u64) * self.head_dim) as f64;
                let o = (self.num_attention_heads * self.head_dim) as f64 * h / tp;
                q + kv + o
            }
        }
    }

    /// Parameters of one layer's attention projections held by each of `tp` ranks.
    pub fn attention_params_per_rank(&self, tp: u64) -> f64 {
        self.attention_params(tp.max(1) as f64)
    }

    /// Per-rank parameters of layer `layer`'s operators.
    pub fn layer_params(&self, layer: u64, tp: u64) -> LayerParams {
        let tpf = tp.max(1) as f64;
        let h = self.hidden_size as f64;
        let attention = self.attention_params(tpf);
        match &self.moe {
            Some(m) if layer >= m.dense_layers => LayerParams {
                attention,
                dense_mlp: 0.0,
                shared_expert: 3.0 * h * m.shared_expert_intermediate_size as f64 / tpf,
                expert: 3.0 * h * m.expert_intermediate_size as f64 / tpf,
                router: h * m.num_experts as f64,
            },
            _ => LayerParams {
                attention,
                dense_mlp: 3.0 * h * self.intermediate_size as f64 / tpf,
                ..Default::default()
            },
        }
    }

    /// Ranks the embedding and LM head rows are split over: `tp` (vocab-parallel), or 1 when
    /// every rank holds them whole ([`Self::replicated_embedding`]).
    pub fn vocab_shards(&self, tp: u64) -> f64 {
        if self.replicated_embedding {
            1.0
        } else {
            tp.max(1) as f64
        }
    }

    /// Per-rank parameters of the LM head (vocab-parallel unless replicated).
    pub fn lm_head_params(&self, tp: u64) -> f64 {
        let vocab = self.draft_vocab_size.unwrap_or(self.vocab_size);
        (vocab * self.hidden_size) as f64 / self.vocab_shards(tp)
    }

    /// Weight bytes held by one rank (embedding and LM head in bf16; embedding vocab-parallel).
    pub fn weight_bytes_per_rank(&self, tp: u64, format: WeightFormat) -> f64 {
        let (linear_b, expert_b) = format.bytes_per_param();
        let mut bytes = 0.0;
        let dense = self.layer_params(0, tp);
        let sparse = self.layer_params(self.num_layers.saturating_sub(1), tp);
        let moe_layers = self.moe_layers() as f64;
        let dense_layers = self.num_layers as f64 - moe_layers;
        let linear = |p: &LayerParams| p.attention + p.dense_mlp + p.shared_expert;
        bytes += dense_layers * linear(&dense) * linear_b;
        if let Some(m) = &self.moe {
            bytes += moe_layers * (linear(&sparse) * linear_b + sparse.router * 2.0);
            bytes += moe_layers * m.num_experts as f64 * sparse.expert * expert_b;
        }
        bytes += (self.vocab_size * self.hidden_size) as f64 / self.vocab_shards(tp) * 2.0; // embedding
        bytes += self.vision_params as f64 / tp.max(1) as f64 * 2.0;
        if !self.tie_word_embeddings {
            bytes += self.lm_head_params(tp) * 2.0; // separate LM head
        }
        bytes
    }
}
