//! SGLang's triton extend-attention kernel at MLA prefill (DeepSeek-V3/R1 with
//! `--attention-backend triton`, SGLang 0.4.6–0.4.10 on Hopper and Blackwell): what one
//! layer's prefill attention costs.
//!
//! **Which kernel.** `deepseek_v2.py::dispatch_attn_forward_method` (read in the 0.4.7 wheel)
//! sends a triton-backend extend batch whose requests have no cached prefix to
//! `AttnForwardMethod.MHA`: K/V are decompressed by `kv_b_proj` and
//! `triton_ops/extend_attention.py::extend_attention_fwd` runs over 128 / tp heads of query
//! dim `qk_nope + qk_rope` (192) and value dim `v_head` (128). The launcher pads the query
//! dim to 256 and, on every GPU with compute capability ≥ 9 (H100/H200 and B200 alike),
//! picks `BLOCK_M, BLOCK_N = 128, 64`, 8 warps, `num_stages = 1`: one configuration on sm90
//! and sm100. The kernel file is the same along that path from 0.4.6 to 0.4.10 (0.4.7 only
//! adds a sliding-window mask; 0.4.8–0.4.10 are byte-identical to 0.4.7); 0.5.1 restructures
//! it, so later releases are not priced here, nor are releases before 0.4.6 (not read).
//!
//! **How fast, measured.** SGLang PR #6338 (2025-05-18, main between 0.4.6.post4 and
//! 0.4.6.post5) served DeepSeek-V3-0324 FP8 on 8 GPUs running FA3 (sm90 only, so Hopper),
//! `random 1024/1024 ratio 1, max-concurrency 16`, with one backend for prefill and another
//! for decode: median TTFT 751.17 ms with FA3 prefill, 980.06 ms with triton prefill (decode
//! FA3 in both). At c16 every wave of 16 prompts × 1024 tokens runs as two chunks of 8192
//! tokens (0.4.6's chunk below 180 GB), eight whole prompts each, no prefix: the median
//! request waits one chunk and a half, so triton's extra time is (980.06 − 751.17) / 1.5 =
//! 152.6 ms per chunk. A chunk's attention work is 8 × 1024² / 2 query-key pairs per layer ×
//! 2 · 16 heads · (192 + 128) FLOP × 61 layers = 2.62 TFLOP a GPU. The triton kernel's time
//! per chunk is the extra time plus FA3's own (≥ 0, and ≤ 8.7 ms at ≥ 300 TFLOP/s for FA3 on
//! Hopper), so its throughput is 2.62 TFLOP / 152.6–161.3 ms = [`RATE_MIN`]–[`RATE_MAX`]:
//! [`TRITON_MLA_PREFILL_FLOPS_PER_S`] is the middle. The tensor-core peak does not bound it
//! (it is ~1–2% of either GPU's bf16 peak), so one rate prices both GPUs (the same launch
//! configuration on both; a stronger GPU is never slower). The H20 (78 SMs, 148 TFLOP/s bf16)
//! is unmeasured and gets the same rate, at worst an underestimate there.
//!
//! **Check, not fitted.** Seed 004 (B200, 0.4.7, c16, one 16000-token chunk per wave) shows
//! median TTFT 872 ms on triton against 645 ms on flashinfer: 227 ms more for 5.0 TFLOP of
//! attention, the same order as this rate's 300 ms less FlashInfer's own prefill time.
//!
//! A batch with a cached prefix runs the absorbed path (`AttnForwardMethod.MLA`: the same
//! kernel over the 576-wide latent, 3.4× the FLOP per pair, unmeasured); it is priced at the
//! MHA FLOP, a lower bound. Only the full-attention layers (DeepSeek has no windows).
use super::triton_mla_decode::sglang_triton_mla;
use super::BatchShape;
use crate::spec::hardware::{Arch, HardwareProfile};
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;
use crate::spec::version::Version;

/// Lowest throughput the PR #6338 measurement allows (FLOP/s): FA3's own time at its most.
pub const RATE_MIN: f64 = 2.62e12 / 0.1613;
/// Highest throughput it allows: FA3's own time taken as zero.
pub const RATE_MAX: f64 = 2.62e12 / 0.1526;
/// The triton extend kernel's MHA-prefill throughput at DeepSeek's dims (FLOP/s): the middle
/// of [`RATE_MIN`]–[`RATE_MAX`] (module doc).
pub const TRITON_MLA_PREFILL_FLOPS_PER_S: f64 = (RATE_MIN + RATE_MAX) / 2.0;

/// First release priced (the kernel read from 0.4.6 on).
pub const FIRST: Version = Version::new(0, 4, 6);
/// First release no longer priced (0.5.1 restructures the kernel; 0.5.0 follows 0.4.10).
pub const UNTIL: Version = Version::new(0, 5, 0);

/// The triton MLA prefill kernel of one deployment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TritonMlaPrefill {
    /// FLOP per query-key pair per layer on one rank: 2 · heads · (qk dim + v dim).
    pub flops_per_pair: f64,
    /// The kernel's throughput (FLOP/s).
    pub flops_per_s: f64,
}

impl TritonMlaPrefill {
    /// The kernel of an SGLang server running an MLA model on `triton` attention in
    /// [`FIRST`]..[`UNTIL`] on Hopper or Blackwell; `None` for every other deployment.
    pub fn of(hw: &HardwareProfile, model: &ModelSpec, server: &ServerConfig) -> Option<Self> {
        let m = sglang_triton_mla(model, server, FIRST..UNTIL)?;
        matches!(hw.arch, Arch::Hopper | Arch::Blackwell).then(|| TritonMlaPrefill {
            flops_per_pair: 2.0
                * model.q_heads_per_rank(server.attn_tp)
                * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) as f64,
            flops_per_s: TRITON_MLA_PREFILL_FLOPS_PER_S,
        })
    }

    /// One layer's prefill attention (ns) over the batch's causal query-key pairs.
    pub fn layer_ns(&self, s: &BatchShape) -> f64 {
        s.prefill_attn_work * self.flops_per_pair / self.flops_per_s * 1e9
    }

    /// What `--explain` prints.
    pub fn describe(&self) -> String {
        format!(
            "SGLang's triton extend kernel at MLA prefill: {:.0} FLOP per pair at {:.1} TFLOP/s (SGLang PR #6338, cost/triton_mla_prefill.rs)",
            self.flops_per_pair,
            self.flops_per_s / 1e12
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::bundled::{load_hardware, load_model};
    use crate::spec::server_flags::ServerFlags;

    fn server(hw: &HardwareProfile, m: &ModelSpec, ver: &str, backend: &str) -> ServerConfig {
        let flags = ServerFlags {
            tp: Some(8),
            sglang_version: Some(ver.parse().unwrap()),
            attention_backend: Some(backend.to_string()),
            ..Default::default()
        };
        ServerConfig::resolve(&flags, hw, m).unwrap()
    }

    #[test]
    fn the_rate_is_the_pr_6338_measurement() {
        // (980.06 − 751.17) / 1.5 ms per 8192-token chunk; 8 · 1024² / 2 pairs · 2 · 16 ·
        // (192 + 128) FLOP · 61 layers.
        let flop: f64 = 8.0 * 1024.0 * 1024.0 / 2.0 * 2.0 * 16.0 * 320.0 * 61.0;
        assert!((flop - 2.62e12).abs() / 2.62e12 < 0.002, "{flop}");
        let extra_s = (980.06 - 751.17) / 1.5 / 1e3;
        assert!((flop / extra_s - RATE_MAX).abs() / RATE_MAX < 0.003);
        // FA3's own time at most: the chunk's FLOP at 300 TFLOP/s.
        let fa3_max_s = flop / 300e12;
        assert!((flop / (extra_s + fa3_max_s) - RATE_MIN).abs() / RATE_MIN < 0.003);
    }

    #[test]
    fn applies_by_release_backend_and_gpu() {
        let m = load_model("deepseek-v3").unwrap();
        let b200 = load_hardware("b200-sxm-180gb").unwrap();
        let h200 = load_hardware("h200-sxm-141gb").unwrap();
        let a100 = load_hardware("a100-sxm4-80gb").unwrap();
        let on = |hw: &HardwareProfile, ver: &str, be: &str| {
            TritonMlaPrefill::of(hw, &m, &server(hw, &m, ver, be)).is_some()
        };
        assert!(on(&b200, "0.4.7", "triton"));
        assert!(on(&h200, "0.4.6", "triton"));
        assert!(on(&b200, "0.4.10", "triton"));
        assert!(!on(&b200, "0.4.7", "flashinfer"));
        assert!(!on(&b200, "0.4.5", "triton")); // not read
        assert!(!on(&b200, "0.5.1", "triton")); // kernel restructured
                                                // sm80 launches other tiles (the server resolved on B200: DeepSeek-V3 FP8 needs more
                                                // than 8 × 80 GB).
        let on_b200 = server(&b200, &m, "0.4.7", "triton");
        assert!(TritonMlaPrefill::of(&a100, &m, &on_b200).is_none());
        let q = load_model("qwen3-8b").unwrap();
        let s = server(&b200, &q, "0.4.7", "triton");
        assert!(TritonMlaPrefill::of(&b200, &q, &s).is_none()); // not MLA
    }

    #[test]
    fn prices_a_hand_computed_prefill() {
        // Seed 004's wave at c16: 16 prompts × 1000 tokens, TP8 (16 heads a rank).
        let m = load_model("deepseek-v3").unwrap();
        let hw = load_hardware("b200-sxm-180gb").unwrap();
        let k = TritonMlaPrefill::of(&hw, &m, &server(&hw, &m, "0.4.7", "triton")).unwrap();
        assert_eq!(k.flops_per_pair, 2.0 * 16.0 * 320.0);
        let mut s = BatchShape::default();
        for _ in 0..16 {
            s.add_prefill(1000, 0, None);
        }
        // 16 · 1000 · 500 pairs · 10240 FLOP = 8.192e10 FLOP a layer at ~16.7 TFLOP/s.
        let want_ns = 16.0 * 1000.0 * 500.0 * 10240.0 / TRITON_MLA_PREFILL_FLOPS_PER_S * 1e9;
        assert!((k.layer_ns(&s) - want_ns).abs() < 1.0);
        assert!(
            (4.7e6..5.1e6).contains(&k.layer_ns(&s)),
            "{} ns a layer",
            k.layer_ns(&s)
        );
    }
}
