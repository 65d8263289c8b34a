//! Which form an SGLang MLA prefill batch runs its attention in, which form AIConfigurator's
//! `context_mla` table measured, and how a batch of one form is looked up in a table of the
//! other.
//!
//! **Two forms.** DeepSeek's attention runs either as multi-head attention over up-projected
//! K/V (`MHA`, `MHA_CHUNKED_KV`: per head qk `qk_nope + qk_rope` = 192, v `v_head` = 128, so
//! 2·(192 + 128) = 640 FLOP per query-key pair and head) or absorbed into the latent (`MLA`:
//! one shared KV head, qk `kv_lora + qk_rope` = 576, v `kv_lora` = 512, 2·(576 + 512) = 2176
//! FLOP per pair and head, 3.4× the MHA form).
//!
//! **What the tables measured.** AIConfigurator's collector (`collector/sglang/collect_mla.py`,
//! `__compat__ = "sglang==0.5.14"`) builds a bare `RadixAttention` and times one call. On sm90
//! it picks the `fa3` backend and sets `v_head_dim = kv_lora_rank`, `head_dim_total =
//! kv_lora_rank + qk_rope_head_dim` (576) with one KV head; the FA3 backend's
//! `forward_extend` then takes its "absorbed multi-latent attention" branch
//! (`flash_attn_with_kvcache(q=q_rope, …, qv=q_nope)`), because the collector's batch never sets
//! `attn_attend_prefix_cache`. Hopper's table is therefore the absorbed form: its H100 and H200
//! rows at 16 heads, one 8192-token prompt (1943 / 1986 µs) are 600 / 588 TFLOP/s at 2176 FLOP
//! per pair (FA3's rate; the same table read as the MHA form would be 177 TFLOP/s). On sm100 the
//! collector picks `trtllm_mla`, whose context branch sets qk 192 / v 128: Blackwell's table is
//! the MHA form (B200, the same row: 315 µs, 1.09 PFLOP/s at 640 FLOP per pair).
//!
//! **What a batch runs.** `deepseek_v2.py`'s dispatch (0.5.8+: `deepseek_common/
//! attention_backend_handler.py`), read in the 0.4.1, 0.4.7–0.4.10, 0.5.1–0.5.3, 0.5.8.post1,
//! 0.5.9 and 0.5.14 wheels, by the batch's Σ cached prefix (`sum(extend_prefix_lens_cpu)`),
//! with the chunked prefix cache's settings resolved by `spec::chunked_prefix`:
//! - `fa3` (every release from 0.4.7), and from 0.5.1 `flashinfer`, `flashmla`, `cutlass_mla`
//!   (0.5.1: also `trtllm_mla`): `MHA_CHUNKED_KV` (0.5.14: `MHA_ONE_SHOT` when it fits one
//!   chunk, the same FLOP) when Σ prefix is 0 or, with the chunked prefix cache on, ≥ its
//!   threshold (`SGL_CHUNKED_PREFIX_CACHE_THRESHOLD`, default 8192), else absorbed `MLA`.
//!   With the cache off, `fa3` before 0.5.1 runs every extend absorbed (the `== 0` test sits
//!   inside the cache condition there), later releases keep MHA at Σ prefix 0;
//! - `trtllm_mla`: `MHA_CHUNKED_KV` for every extend (0.5.2 unconditionally; from 0.5.3 with
//!   the cache off only at Σ prefix 0); (`fa4`, every extend from 0.5.3, is not a backend
//!   servesim accepts);
//! - `triton` (every release read; 0.4.1 for every backend), and `flashinfer` before 0.5.1
//!   (0.4.7–0.4.10): MHA only with no prefix at all, else absorbed.
//! - Not modelled: from 0.5.8 an extend replayed under SGLang's piecewise prefill CUDA graph
//!   runs absorbed `MLA` (`is_in_piecewise_cuda_graph()`), which would make a ≤ 2048-token
//!   prefill with a long cached prefix dearer than a larger one; such steps keep the rules above.
//!
//! **Lookup.** Both forms are compute-bound FA3/FMHA kernels, priced at the table's own FLOP
//! rate: a batch of the other form is looked up at the equivalent prompt length scaled by
//! √(run FLOP per pair / table FLOP per pair) (the table's time grows as length², so this is the
//! FLOP ratio where the kernel is compute-bound and keeps the table's launch floor where it is
//! not). Check against another measured FA3 kernel: the same AIConfigurator release's H200
//! `context_attention` fa3 row at 16 query heads, head_dim 192, one 8192-token prompt runs
//! 602 µs for 2·(192 + 192) FLOP per pair, 684 TFLOP/s (test `mla_prefill_form`).
//!
//! **The prefix under `MHA_CHUNKED_KV`.** `_chunked_prefix_attn_mha` up-projects every cached
//! prefix token's latent with `kv_b_proj` before attending to it: one `kv_b_proj` GEMM over Σ
//! prefix rows per layer ([`MlaPrefill::kv_b_rows`]), priced by the deployment's own `kv_b_proj`
//! curve. The per-chunk `merge_state_v2` and K assembly (memory-bound, ≤ 1% of the attention at
//! a 32K prompt) are not priced.
use crate::spec::chunked_prefix::ChunkedPrefixCache;
use crate::spec::hardware::{Arch, HardwareProfile};
use crate::spec::model::ModelSpec;
use crate::spec::server::ServerConfig;
use crate::spec::version::Version;

/// The form an MLA attention kernel runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Multi-head attention over up-projected K/V (qk nope + rope, v head dims).
    Mha,
    /// Absorbed into the latent: one KV head of kv_lora + rope, values of kv_lora.
    Absorbed,
}

/// When a backend runs an extend batch as MHA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// Every extend (`trtllm_mla`).
    Always,
    /// Σ prefix 0 or ≥ the chunked-prefix threshold (tokens).
    Threshold(u64),
    /// Σ prefix 0 only.
    NoPrefix,
    /// Never (absorbed for every extend).
    Never,
}

/// The form rules of one deployment's MLA prefill.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MlaPrefill {
    /// The form the deployment's `context_mla` table measured.
    pub table: Form,
    rule: Rule,
    /// FLOP per query-key pair and head in the MHA form.
    mha_flops_per_pair: f64,
    /// The same in the absorbed form.
    absorbed_flops_per_pair: f64,
}

/// The form AIConfigurator's collector measured on this architecture (module doc).
pub fn table_form(arch: Arch) -> Option<Form> {
    match arch {
        Arch::Hopper => Some(Form::Absorbed),
        Arch::Blackwell => Some(Form::Mha),
        _ => None,
    }
}

fn rule(backend: &str, version: Version, cache: ChunkedPrefixCache) -> Rule {
    let v051 = Version::new(0, 5, 1);
    let v052 = Version::new(0, 5, 2);
    let v053 = Version::new(0, 5, 3);
    let shared = |cache_off_rule: Rule| {
        if cache.enabled {
            Rule::Threshold(cache.threshold_tokens)
        } else {
            cache_off_rule
        }
    };
    match backend {
        "trtllm_mla" if version >= v053 && !cache.enabled => Rule::NoPrefix,
        "trtllm_mla" if version >= v052 => Rule::Always,
        "fa3" if version < v051 => shared(Rule::Never),
        "fa3" | "flashinfer" | "flashmla" | "cutlass_mla" | "trtllm_mla" if version >= v051 => {
            shared(Rule::NoPrefix)
        }
        _ => Rule::NoPrefix,
    }
}

impl MlaPrefill {
    /// The rules of an MLA model on a GPU with a `context_mla` table; `None` otherwise.
    pub fn of(hw: &HardwareProfile, model: &ModelSpec, server: &ServerConfig) -> Option<Self> {
        let m = model.mla.as_ref()?;
        Some(MlaPrefill {
            table: table_form(hw.arch)?,
            rule: rule(
                &server.attention_backend,
                server.version,
                server.chunked_prefix,
            ),
            mha_flops_per_pair: 2.0
                * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) as f64,
            absorbed_flops_per_pair: 2.0 * (2 * m.kv_lora_rank + m.qk_rope_head_dim) as f64,
        })
    }

    /// The form an extend batch with Σ `prefix_tokens` cached tokens runs in.
    pub fn form(&self, prefix_tokens: u64) -> Form {
        let mha = match self.rule {
            Rule::Always => true,
            Rule::Threshold(t) => prefix_tokens == 0 || prefix_tokens >= t,
            Rule::NoPrefix => prefix_tokens == 0,
            Rule::Never => false,
        };
        if mha {
            Form::Mha
        } else {
            Form::Absorbed
        }
    }

    fn flops(&self, f: Form) -> f64 {
        match f {
            Form::Mha => self.mha_flops_per_pair,
            Form::Absorbed => self.absorbed_flops_per_pair,
        }
    }

    /// Factor on the batch's equivalent prompt length to look it up in the table (module doc).
    pub fn len_factor(&self, prefix_tokens: u64) -> f64 {
        (self.flops(self.form(prefix_tokens)) / self.flops(self.table)).sqrt()
    }

    /// `kv_b_proj` rows the batch runs over its cached prefix: Σ prefix under MHA, else 0.
    pub fn kv_b_rows(&self, prefix_tokens: u64) -> f64 {
        match self.form(prefix_tokens) {
            Form::Mha => prefix_tokens as f64,
            Form::Absorbed => 0.0,
        }
    }

    /// What `--explain` adds to the prefill note for a batch.
    pub fn describe(&self, prefix_tokens: u64) -> String {
        let f = self.form(prefix_tokens);
        let name = |f: Form| match f {
            Form::Mha => "MHA",
            Form::Absorbed => "absorbed-MLA",
        };
        let mut s = format!("{} form (Σ prefix {prefix_tokens})", name(f));
        if f != self.table {
            s += &format!(
                ", looked up in the {} table at ×{:.3} length (FLOP per pair {} / {})",
                name(self.table),
                self.len_factor(prefix_tokens),
                self.flops(f),
                self.flops(self.table)
            );
        }
        if self.kv_b_rows(prefix_tokens) > 0.0 {
            s += &format!(", + kv_b_proj over {prefix_tokens} prefix rows");
        }
        s
    }
}
