//! A speculative-decoding step priced by two instances of the same backend, one for the target
//! and one for the draft (SGLang's spec-v1 `EAGLEWorker`, reference sglang-specdec-pd.md §1.5):
//!
//! * decode iteration of `bs` requests: `K − 1` draft passes of `bs × k` tokens, the target's
//!   verify of `bs × N` tokens (each request extends N tokens over its context; tree attention
//!   when k > 1), then the draft extend over the accepted tokens (`bs × (K + 1)`, the shape of
//!   SGLang's draft-extend CUDA graph; `bs × N` with spec v2). Each part replays its graph when `bs` pads to a captured
//!   size, else runs eagerly; on an NPU the spec-v1 worker never captures the draft extend
//!   (`eagle_worker.py`, 0.5.6.post2 l. 248 / @98a107d l. 257: `if self.draft_extend_attn_backend
//!   and not _is_npu`), so it runs eagerly there, while spec v2 captures it on NPU
//!   (`eagle_worker_v2.py` `EAGLEDraftExtendNpuGraphRunner`). NGRAM has no draft: the verify
//!   alone (its drafts come from a CPU cache).
//! * prefill (extend) batch: the target's extend, then the draft's extend over the same tokens
//!   (the first token is streamed after both).
//!
//! The scheduler CPU time is the target's (one scheduler iteration); spec v1 runs without the
//! overlap scheduler, so it adds to the GPU time; spec v2 (`spec::speculative_v2`, SGLang's
//! default from 0.5.11) overlaps it: the step takes the larger of the two. O(1) per step.
use super::breakdown::{Component, CostItem, StepBreakdown};
use super::{BatchShape, StepCost, StepTime};
use crate::spec::speculative::SpeculativeConfig;

/// Whether SGLang captures the draft extend after a verify in a graph: always on a GPU (when
/// the batch pads to a captured size), on an NPU only under spec v2 (module doc).
pub fn draft_extend_graphed(npu: bool, spec_v2: bool) -> bool {
    !npu || spec_v2
}

/// The target and draft step costs of a speculative deployment.
pub struct SpeculativeCost {
    target: Box<dyn StepCost>,
    /// `None` for NGRAM.
    draft: Option<Box<dyn StepCost>>,
    num_steps: u64,
    topk: u64,
    num_draft_tokens: u64,
    draft_passes: u64,
    /// Tokens per request of the draft extend after a verify (K + 1, N with spec v2).
    draft_extend_width: u64,
    /// Whether the draft extend after a verify may replay a graph (not spec v1 on an NPU).
    draft_extend_graphed: bool,
    overlap: bool,
}

/// The shapes of one speculative iteration.
struct Shapes {
    /// The target's pass: the verify (decode width N) and/or the extend.
    target: BatchShape,
    /// One draft pass (`bs × k`), run `draft_passes` times; empty when no decode.
    draft_pass: BatchShape,
    /// The draft extend: after a verify (`bs × (K + 1)`) plus the draft prefill.
    draft_extend: BatchShape,
}

impl SpeculativeCost {
    pub fn new(
        target: Box<dyn StepCost>,
        draft: Option<Box<dyn StepCost>>,
        spec: &SpeculativeConfig,
        overlap: bool,
        npu: bool,
    ) -> Self {
        SpeculativeCost {
            target,
            draft,
            num_steps: spec.num_steps,
            topk: spec.topk,
            num_draft_tokens: spec.num_draft_tokens,
            draft_passes: spec.draft_passes(),
            draft_extend_width: spec.draft_extend_width(),
            draft_extend_graphed: draft_extend_graphed(npu, spec.worker.v2),
            overlap,
        }
    }

    fn shapes(&self, s: &BatchShape) -> Shapes {
        let bs = s.decode_reqs;
        let mut target = *s;
        let mut draft_pass = BatchShape::default();
        let mut draft_extend = BatchShape {
            decode_reqs: 0,
            decode_ctx_sum: 0,
            graph_bs: None,
            ..*s
        };
        if bs > 0 {
            // The verify attends each request's context plus its N draft tokens.
            target.decode_width = self.num_draft_tokens;
            target.decode_ctx_sum = s.decode_ctx_sum + bs * (self.num_draft_tokens - 1);
            draft_pass = BatchShape {
                decode_reqs: bs,
                decode_ctx_sum: s.decode_ctx_sum,
                graph_bs: s.graph_bs,
                decode_width: self.topk,
                ..Default::default()
            };
            draft_extend.decode_reqs = bs;
            draft_extend.decode_ctx_sum = s.decode_ctx_sum + bs * (self.draft_extend_width - 1);
            draft_extend.graph_bs = s.graph_bs.filter(|_| self.draft_extend_graphed);
            draft_extend.decode_width = self.draft_extend_width;
        }
        Shapes {
            target,
            draft_pass,
            draft_extend,
        }
    }

    /// GPU ns of the draft's passes and extend (0 without a draft).
    fn draft_gpu_ns(&self, sh: &Shapes) -> (f64, f64) {
        let Some(d) = &self.draft else {
            return (0.0, 0.0);
        };
        let passes = if sh.draft_pass.is_empty() {
            0.0
        } else {
            self.draft_passes as f64 * d.step_time(&sh.draft_pass).gpu_ns
        };
        let extend = if sh.draft_extend.is_empty() {
            0.0
        } else {
            d.step_time(&sh.draft_extend).gpu_ns
        };
        (passes, extend)
    }

    fn combine(&self, target: StepTime, draft_ns: f64) -> StepTime {
        let gpu_ns = target.gpu_ns + draft_ns;
        let total_ns = if self.overlap {
            gpu_ns.max(target.cpu_ns)
        } else {
            gpu_ns + target.cpu_ns
        };
        StepTime {
            total_ns,
            gpu_ns,
            cpu_ns: target.cpu_ns,
        }
    }
}

impl StepCost for SpeculativeCost {
    fn step_time(&self, s: &BatchShape) -> StepTime {
        let sh = self.shapes(s);
        let (passes, extend) = self.draft_gpu_ns(&sh);
        self.combine(self.target.step_time(&sh.target), passes + extend)
    }

    fn explain(&self, s: &BatchShape) -> StepBreakdown {
        let sh = self.shapes(s);
        let (passes, extend) = self.draft_gpu_ns(&sh);
        let mut b = self.target.explain(&sh.target);
        let verify = if s.decode_reqs > 0 {
            format!(
                " (target verify: {} requests × N={} tokens)",
                s.decode_reqs, self.num_draft_tokens
            )
        } else {
            String::new()
        };
        b.backend = format!("{}, speculative{verify}", b.backend);
        b.items.push(CostItem {
            component: Component::Draft,
            time_ns: passes,
            detail: format!(
                "draft: {} passes × {} requests × top-k {} tokens (K={})",
                self.draft_passes, s.decode_reqs, self.topk, self.num_steps
            ),
        });
        b.items.push(CostItem {
            component: Component::Draft,
            time_ns: extend,
            detail: if s.decode_reqs > 0 {
                format!(
                    "draft extend after verify: {} requests × {} tokens",
                    s.decode_reqs, self.draft_extend_width
                )
            } else {
                format!("draft prefill over the {} extend tokens", s.prefill_tokens)
            },
        });
        b.time = self.combine(b.time, passes + extend);
        b
    }

    /// DP-attention ranks: the target's group step over the verify shapes, plus the slowest
    /// rank's draft work.
    fn group_step_time(&self, shapes: &[BatchShape]) -> StepTime {
        let all: Vec<Shapes> = shapes.iter().map(|s| self.shapes(s)).collect();
        let targets: Vec<BatchShape> = all.iter().map(|sh| sh.target).collect();
        let draft = all
            .iter()
            .map(|sh| {
                let (p, e) = self.draft_gpu_ns(sh);
                p + e
            })
            .fold(0.0, f64::max);
        self.combine(self.target.group_step_time(&targets), draft)
    }
}
