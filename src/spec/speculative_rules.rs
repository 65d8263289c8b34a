//! What SGLang decides around speculative decoding besides the flags themselves
//! (`server_args.py`, `model_runner.py`; reference sglang-specdec-pd.md §1.3, §1.4, §1.8): the
//! auto-chosen (K, k, N), the speculative CUDA-graph batch list, the memory reserve in the
//! `mem_fraction_static` default, the default running-request cap, the target-pool headroom
//! that lets draft and target share indices, the settings it refuses, whether the draft
//! fits in what `mem_fraction_static` leaves free (which targets draft with their own MTP
//! layer: `spec::mtp_draft`).
use super::defaults;
use super::speculative::{SpecAlgorithm, SpeculativeConfig};
use super::version::Version;
use crate::error::{Error, Result};

const GIB: f64 = (1u64 << 30) as f64;

/// CUDA-graph batch sizes SGLang captures when speculation is on, before the request-pool
/// clip (reference §1.4): 0.5.3+ `_generate_cuda_graph_batch_sizes`, earlier
/// `get_batch_sizes_to_capture`.
pub fn capture_batch_sizes(version: Version, gpu_mem_mib: f64, max_bs: Option<u64>) -> Vec<u64> {
    let mut l: Vec<u64> = (1..=8).chain((10..=32).step_by(2)).collect();
    if version >= Version::new(0, 5, 3) {
        let top = if version >= Version::new(0, 5, 6) {
            64
        } else {
            60
        };
        l.extend((40..=top).step_by(4));
        l.extend((72..=256).step_by(8));
        l.extend((272..=max_bs.unwrap_or(256).max(272)).step_by(16));
    } else {
        if version >= Version::new(0, 4, 7) {
            l.extend([40, 48, 56]);
            l.extend((80..=160).step_by(16));
        } else {
            l.extend((40..=152).step_by(16));
        }
        if gpu_mem_mib > 90.0 * 1024.0 {
            l.extend((160..=256).step_by(8));
        }
        l.sort_unstable();
        l.dedup();
    }
    if let Some(m) = max_bs {
        l.retain(|&b| b <= m);
        // 0.5.10+ always captures `cuda_graph_max_bs` itself (server_args.py at v0.5.10).
        if version >= defaults::PIECEWISE_CUDA_GRAPH_FROM && !l.contains(&m) {
            l.push(m);
        }
    }
    l
}

/// GPU memory SGLang reserves for the draft in its `mem_fraction_static` default, MiB
/// (`_handle_gpu_memory_settings`, 0.4.8+: +2 GB for the EAGLE family, +6 GB STANDALONE,
/// nothing for NGRAM; the EAGLE family's reserve is 4 GB from 0.5.10, server_args.py at
/// v0.5.10; none from 0.5.14, which loads the draft before sizing the KV pool).
pub fn reserve_mib(a: SpecAlgorithm, version: Version) -> f64 {
    if version >= defaults::GRAPH_CONFIG_FROM {
        return 0.0;
    }
    match a {
        SpecAlgorithm::Standalone => 6.0 * 1024.0,
        SpecAlgorithm::Ngram => 0.0,
        _ if version >= defaults::PIECEWISE_CUDA_GRAPH_FROM => 4.0 * 1024.0,
        _ => 2.0 * 1024.0,
    }
}

/// Bytes per token the target's KV pool is sized with: its own cell, and from 0.5.14 for a
/// draft model with KV layers (EAGLE family, STANDALONE; not NGRAM) the cell grown by the
/// draft's share, `int(cell × (1 + draft_layers / layers))` (pool_configurator.py at v0.5.14:
/// the draft's KV is assumed to have the target's per-layer size).
pub fn pool_cell_bytes(
    spec: Option<&SpeculativeConfig>,
    cell_bytes: f64,
    layers: u64,
    version: Version,
) -> f64 {
    match spec.and_then(|s| s.draft.as_ref()) {
        Some(d) if version >= defaults::GRAPH_CONFIG_FROM && d.num_layers > 0 && layers > 0 => {
            (cell_bytes * (1.0 + d.num_layers as f64 / layers as f64)).floor()
        }
        _ => cell_bytes,
    }
}

/// `max_running_requests` SGLang sets when speculation is on and the user gives none.
pub fn default_max_running_requests(version: Version) -> u64 {
    if version >= Version::post(0, 4, 4, 4) {
        48
    } else {
        32
    }
}

/// The page size the flags give or the backend forces (for the speculative checks, which run
/// before the page size is validated).
pub(super) fn page_size_hint(page_size: Option<u64>, backend: &str) -> u64 {
    page_size.unwrap_or_else(|| defaults::page_size(backend))
}

/// Extra target-pool tokens SGLang ≤ 0.5.6 adds so draft and target share indices
/// (`init_memory_pool`: `max_num_reqs·K·k + max_num_reqs·N + 100`; removed in 0.5.7, PR #15748);
/// NGRAM has no draft pool.
pub(super) fn spec_pool_headroom(
    s: &SpeculativeConfig,
    version: Version,
    user_running: Option<u64>,
) -> Result<u64> {
    if s.algorithm == SpecAlgorithm::Ngram || version >= Version::new(0, 5, 7) {
        return Ok(0);
    }
    // A 0 is refused where the server resolves the cap.
    let reqs = user_running
        .filter(|&r| r > 0)
        .unwrap_or_else(|| default_max_running_requests(version));
    Ok(if version >= Version::post(0, 4, 3, 3) {
        reqs * s.num_steps * s.topk + reqs * s.num_draft_tokens + 100
    } else {
        reqs * s.num_steps + 100
    })
}

/// What SGLang refuses or forces around speculation (reference §1.4): top-k > 1 with paged KV
/// only on flashinfer/fa3 (0.5.2+; silently k = 1 in 0.4.4.post4–0.4.8), never on trtllm_mha;
/// no DP attention for STANDALONE / NGRAM. Returns notes for what was forced.
pub(super) fn check_spec_constraints(
    s: &mut SpeculativeConfig,
    mixed_chunk_asked: bool,
    version: Version,
    page_size: u64,
    backend: &str,
    dp_attention: bool,
) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    let flag = "--speculative-eagle-topk";
    if s.topk > 1 && s.algorithm != SpecAlgorithm::Ngram {
        if backend == "trtllm_mha" {
            return Err(Error::invalid(
                flag,
                "speculative_eagle_topk",
                format!(
                    "the trtllm_mha attention backend supports only top-k 1, got {}",
                    s.topk
                ),
            ));
        }
        if page_size > 1 {
            let ok: &[&str] = if version >= Version::new(0, 5, 6) {
                &["flashinfer", "fa3"]
            } else {
                &["flashinfer"]
            };
            if version >= Version::new(0, 5, 2) && !ok.contains(&backend) {
                return Err(Error::invalid(
                    flag,
                    "speculative_eagle_topk",
                    format!(
                        "top-k {} with page size {page_size} needs the {} attention backend (SGLang {version}), got {backend}",
                        s.topk,
                        ok.join(" or ")
                    ),
                ));
            }
            if version >= Version::post(0, 4, 4, 4) && version < Version::new(0, 4, 9) {
                notes.push(format!(
                    "speculative top-k {} forced to 1 by page size {page_size} (SGLang {version})",
                    s.topk
                ));
                s.topk = 1;
                s.num_draft_tokens = s.num_steps + 1;
            }
        }
    }
    if dp_attention
        && matches!(
            s.algorithm,
            SpecAlgorithm::Standalone | SpecAlgorithm::Ngram
        )
    {
        return Err(Error::invalid(
            "--speculative-algorithm",
            "speculative_algorithm",
            format!(
                "{} does not support --enable-dp-attention",
                s.algorithm.name()
            ),
        ));
    }
    if mixed_chunk_asked {
        notes.push("--enable-mixed-chunk is forced off by speculative decoding".into());
    }
    Ok(notes)
}

/// The draft's weights and KV pool come out of what `mem_fraction_static` leaves free (they are
/// loaded after the target's pool); SGLang runs out of memory when they do not fit.
pub(super) fn check_draft_fits(
    s: &SpeculativeConfig,
    draft_kv_bytes_per_token: f64,
    pool_tokens: u64,
    free0_gib: f64,
    mem_fraction_static: f64,
) -> Result<()> {
    let need_gib =
        (s.draft_weight_bytes_per_rank + draft_kv_bytes_per_token * pool_tokens as f64) / GIB;
    let room_gib = free0_gib * (1.0 - mem_fraction_static);
    if need_gib > room_gib {
        return Err(Error::Impossible(format!(
            "the {} draft's weights and KV pool need {need_gib:.1} GiB per rank but mem_fraction_static {mem_fraction_static} leaves {room_gib:.1} GiB outside the target's pool: lower --mem-fraction-static",
            s.algorithm.name()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_capture_list_at_48_requests() {
        let l = capture_batch_sizes(Version::new(0, 5, 6), 81559.0, Some(256));
        let mut clipped: Vec<u64> = l.into_iter().filter(|&b| b <= 48).collect();
        clipped.push(48);
        clipped.dedup();
        let mut want: Vec<u64> = (1..=8).chain((10..=32).step_by(2)).collect();
        want.extend([40, 44, 48]);
        assert_eq!(clipped, want);
    }
}
