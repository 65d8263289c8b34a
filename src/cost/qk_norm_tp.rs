//! MiniMax-M2's tensor-parallel QK RMSNorm: its per-layer q and k norms (`use_qk_norm`,
//! `qk_norm_type: per_layer`) normalise over all heads, which TP splits, so every layer
//! all-reduces a per-token sum of squares over the attention-TP group (`MiniMaxM2RMSNormTP`,
//! models/minimax_m2.py): before SGLang 0.5.8 `q_norm` and `k_norm` each all-reduce a
//! `[tokens, 1]` fp32 variance (0.5.5–0.5.7 `forward`, two calls per layer); from 0.5.8
//! `forward_qk` all-reduces one `[tokens, 2]` fp32 sum (0.5.8, 0.5.9). Tiny messages: the
//! all-reduce's fixed time is the cost, a few µs per layer on NVLink under CUDA graphs.
//! Priced with the TP group's all-reduce; with DP attention the group is smaller and the
//! price an upper bound (not applied when each attention rank is one GPU).
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;
use crate::spec::version::Version;

/// First release fusing the q and k all-reduces into one (`MiniMaxM2RMSNormTP.forward_qk`).
pub const FUSED_QK_FROM: Version = Version::new(0, 5, 8);

/// Architectures with the TP-aware QK norm.
const ARCHS: &[&str] = &["MiniMaxM2ForCausalLM"];

/// The extra all-reduces of one layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QkNormAllReduce {
    /// All-reduces per layer.
    pub per_layer: f64,
    /// Bytes per token of each, as bf16 elements (the all-reduce tables' unit): one fp32
    /// per token per reduced norm.
    pub elements_per_token: f64,
}

impl QkNormAllReduce {
    /// The `--explain` suffix of the all-reduce line.
    pub fn describe(q: Option<&Self>) -> String {
        q.map_or(String::new(), |q| {
            format!(
                "; + {} QK-norm all-reduce(s) per layer of {} bf16 elements a token (MiniMax-M2, cost/qk_norm_tp.rs)",
                q.per_layer, q.elements_per_token
            )
        })
    }

    /// `None` for other models, vLLM servers, or an attention-TP group of one GPU.
    pub fn of(model: &ModelSpec, server: &ServerConfig) -> Option<Self> {
        let sglang = server.vllm.is_none();
        (sglang && server.attn_tp > 1 && ARCHS.contains(&model.architecture.as_str())).then(|| {
            if server.version >= FUSED_QK_FROM {
                QkNormAllReduce {
                    per_layer: 1.0,
                    elements_per_token: 4.0,
                }
            } else {
                QkNormAllReduce {
                    per_layer: 2.0,
                    elements_per_token: 2.0,
                }
            }
        })
    }
}
