//! vLLM's KV budget against real start-up logs: each test is one logged run (its source and
//! the quoted numbers in comments), asserting servesim's KV cache and, where logged, its terms
//! within a tolerance named by the terms servesim does not model. The rows and their
//! mechanisms are in validation/vllm/kv-memory-notes.md.
use super::*;
use servesim::spec::vllm::{NON_TORCH_BYTES, SAMPLER_BYTES_PER_LOGIT};

const GIB: f64 = 1024.0 * MIB;

fn vllm_run(hw: &str, model: &str, version: &str, max_model_len: Option<u64>) -> ServerConfig {
    let flags = ServerFlags {
        vllm_version: Some(version.parse().unwrap()),
        max_model_len,
        ..Default::default()
    };
    vllm(flags, hw, model)
}

#[test]
fn llama_3_1_8b_on_one_a100_under_0_31_defaults_matches_its_log() {
    // A public startup log: `vllm/vllm-openai:v0.31.0`, one A100 80GB, `--model
    // meta-llama/Llama-3.1-8B-Instruct`, every other flag default (0.92, 2048 tokens / 256
    // sequences on an A100):
    //   "Model loading took 15.0 GiB memory"
    //   "Free memory on device (78.84/79.25 GiB) on startup. Desired GPU memory utilization is
    //    (0.92, 72.91 GiB). Actual usage is 15.26 GiB for consumed memory (weights + non-torch),
    //    1.44 GiB for peak activation, and 0.23 GiB for CUDAGraph memory."
    //   "Available KV cache memory: 56.21 GiB", "GPU KV cache size: 460,496 tokens"
    // (0.31.0's "peak activation" includes the applied CUDA-graph estimate, `gpu_worker.py`.)
    let c = vllm_run("a100-sxm4-80gb", "llama-3.1-8b", "0.31.0", None);
    let v = c.vllm.as_ref().unwrap();
    assert_eq!((v.max_num_batched_tokens, v.max_num_seqs), (2048, 256));
    // Weights: 15.0 GiB logged.
    assert!((c.weight_bytes_per_rank / GIB - 15.0).abs() < 0.1);
    // Non-torch: 15.26 − 15.0 = 0.26 GiB logged.
    assert!((v.non_torch_bytes / GIB - 0.26).abs() < 0.1);
    // Activation + graph estimate: servesim charges no more than the 1.44 GiB logged.
    let charged = (v.activation_peak_bytes + v.cudagraph_bytes) / GIB;
    assert!(charged <= 1.44, "{charged}");
    // KV: servesim's profile total is nvidia-smi's 80.0 GiB, CUDA reports 79.25 (× 0.92 =
    // 0.69 GiB more here, a hardware-profile term), and it charges 0.51 GiB less than the
    // logged 1.44 GiB of activation + graphs: 1.2 GiB together, so 1.5 GiB (2.7% of the pool).
    let kv = v.kv_cache_bytes / GIB;
    assert!((kv - 56.21).abs() < 1.5, "{kv} GiB vs 56.21 logged");
    let tokens = v.num_gpu_blocks * v.block_size;
    assert!(
        tokens.abs_diff(460_496) * 100 < 460_496 * 3,
        "{tokens} vs 460,496"
    );
}

#[test]
fn qwen3_32b_on_one_h100_under_0_11_holds_the_32k_prompts_it_served() {
    // GPUStack's Qwen3-32B page (validation/gpustack/qwen3-32b-h100.txt, block 3): `vllm serve
    // Qwen/Qwen3-32B`, vLLM 0.11.0, one H100, then 100 random requests of 32,000 + 100 tokens,
    // "Successful requests: 100". So the real server held a 32,100-token request: servesim
    // must start at --max-model-len 32768 (the manifest's assumption).
    let c = vllm_run("h100-sxm5-80gb", "qwen3-32b", "0.11.0", Some(32768));
    assert!(c.kv_pool_tokens >= 32_100, "{}", c.kv_pool_tokens);
}

#[test]
fn qwen3_32b_on_one_a100_under_0_11_starts_at_its_own_context() {
    // GPUStack's Qwen3-32B A100 page (validation/gpustack/qwen3-32b-a100.txt): `vllm serve
    // Qwen/Qwen3-32B` with no --max-model-len, vLLM 0.11.0, one A100 80GB, served. vLLM refuses
    // to start when one 40,960-token request does not fit (`check_enough_kv_cache_memory`).
    let c = vllm_run("a100-sxm4-80gb", "qwen3-32b", "0.11.0", None);
    assert!(c.kv_pool_tokens >= 40_960, "{}", c.kv_pool_tokens);
}

#[test]
fn the_non_torch_term_lies_within_the_logged_single_gpu_values() {
    // `non_torch_increase` on one GPU, as logged:
    // - 0.07 GiB: "Actual usage is 14.08 GiB for weight, 1.97 GiB for peak activation, 0.07
    //   GiB for non-torch memory" (0.11.0, one H100, a public startup log);
    // - 0.16 GiB: "non_torch_memory takes 0.16GiB" (one H100-80G, vllm-project/vllm#12126);
    // - 0.26 GiB: the 0.31.0 A100 log above (15.26 − 15.0).
    let logged_gib = [0.07, 0.16, 0.26];
    let (lo, hi) = logged_gib
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
    let term = NON_TORCH_BYTES / GIB;
    assert!((lo..=hi).contains(&term), "{term} GiB outside {lo}–{hi}");
}

#[test]
fn the_dummy_sampler_peak_is_fourteen_bytes_per_logit_by_hand() {
    // `_dummy_sampler_run` (0.11.0, 0.31.0): bf16 logits (2 B), `Sampler.forward`'s float32
    // copy (4 B), FlashInfer's top-k-masked float32 copy (4 B) and its softmax (4 B), alive
    // together, per sequence × vocabulary entry.
    assert_eq!(SAMPLER_BYTES_PER_LOGIT, 2.0 + 4.0 + 4.0 + 4.0);
    // Llama-3.1-8B on an H100 (1024 sequences, 128,256 vocabulary): 1.71 GiB, above the
    // 8192-token forward's 0.875 GiB.
    let c = llama_8b_on_h100("0.11.0");
    let peak = c.vllm.unwrap().activation_peak_bytes / GIB;
    assert!(
        (peak - 1024.0 * 128_256.0 * 14.0 / GIB).abs() < 1e-9,
        "{peak}"
    );
}

/// The available-KV bracket of a bare `pip install` (no FlashInfer: the dummy sampler sorts the
/// vocabulary in `apply_top_k_top_p`), GiB: CUDA's total × `util` − servesim's loaded weights −
/// the sampler's 28–40 B per logit − servesim's non-torch term. 28 B: bf16 logits, their
/// float32 copy, sorted values, int64 indices, two bool masks, the softmax/cumsum and the
/// scatter output, alive together (0.11.0 `topk_topp_sampler.py`); 40 B adds `torch.sort`'s
/// own key/index buffers (4 + 8 B).
fn bare_pip_available_gib(c: &ServerConfig, total_gib: f64, util: f64, vocab: f64) -> (f64, f64) {
    let v = c.vllm.as_ref().unwrap();
    let seqs = v.max_num_seqs.min(v.max_num_batched_tokens) as f64;
    let rest = total_gib * util - (c.weight_bytes_per_rank + v.non_torch_bytes) / GIB;
    let sampler = |bytes: f64| seqs * vocab * bytes / GIB;
    (rest - sampler(40.0), rest - sampler(28.0))
}

/// CUDA's total memory of one H100 80GB as vLLM logs it ("Free memory on device (78.66/79.19
/// GiB) on startup", 0.11.0, a public startup log); nvidia-smi's 81,559 MiB is 79.65 GiB.
const H100_CUDA_TOTAL_GIB: f64 = 79.19;

#[test]
fn gpt_oss_120b_on_one_h100_under_a_bare_pip_install_has_no_room_as_logged() {
    // vllm-project/vllm#23278 (0.10.1, one H100, `vllm serve openai/gpt-oss-120b`, a conda
    // env, defaults): "Model loading took 65.9651 GiB", "Available KV cache memory: -2.14 GiB".
    let c = vllm_run("h100-sxm5-80gb", "gpt-oss-120b", "0.10.1", Some(8192));
    assert!((c.weight_bytes_per_rank / GIB - 65.9651).abs() < 0.1);
    let (lo, hi) = bare_pip_available_gib(&c, H100_CUDA_TOTAL_GIB, 0.90, 201_088.0);
    assert!((lo..=hi).contains(&-2.14), "{lo}..{hi} GiB vs -2.14 logged");
    // vllm-project/vllm#27508 (0.11.0, pip into a Python 3.13 env): "Available KV cache
    // memory: -2.28 GiB" at the defaults, and "1.71 GiB" with `--gpu-memory-utilization 0.95
    // --max-num-batched-tokens 1024` (1024 sequences still: the sampler term is the same).
    let c = vllm_run("h100-sxm5-80gb", "gpt-oss-120b", "0.11.0", Some(8192));
    let (lo, hi) = bare_pip_available_gib(&c, H100_CUDA_TOTAL_GIB, 0.90, 201_088.0);
    assert!((lo..=hi).contains(&-2.28), "{lo}..{hi} GiB vs -2.28 logged");
    let (lo, hi) = bare_pip_available_gib(&c, H100_CUDA_TOTAL_GIB, 0.95, 201_088.0);
    assert!((lo..=hi).contains(&1.71), "{lo}..{hi} GiB vs 1.71 logged");
    // With FlashInfer (vLLM's CUDA images, servesim's assumption) the same server has room:
    // 14 B per logit is 2.68 GiB, not 5.4–7.7.
    assert!(c.vllm.unwrap().kv_cache_bytes > 2.0 * GIB);
}

#[test]
fn v0_profile_peak_follows_the_token_budget_as_logged() {
    // vllm-project/vllm#10517 (V0 0.6.4, one RTX 3090, Llama-3.1-8B-Instruct, "Loading model
    // weights took 14.9888 GB"), three --max-model-len values. V0 profiles max(max_model_len,
    // 2048) tokens without chunked prefill (≤ 32K), 512 with it (above 32K, ≤ 0.6.4):
    //   20k: "peak_torch_memory=17.06GiB" → 2.07 GiB of activations;
    //   29k: "peak_torch_memory=17.98GiB" → 2.99 GiB;
    //   35k: "peak_torch_memory=15.05GiB" → 0.06 GiB (256 sequences' bf16 logits).
    // The GPU only sets the totals, which this term does not read: an H100 profile stands in.
    let peak = |len: u64| {
        let c = vllm_run("h100-sxm5-80gb", "llama-3.1-8b", "0.6.4", Some(len));
        c.vllm.unwrap().activation_peak_bytes / GIB
    };
    // The forward's live set per token (2 B × (2·4096 + 48·128 + 3·14336) = 114,688 B) within
    // 5%: the logged peaks and weights are rounded to 0.01 GiB, and norms, rotary tables and
    // attention workspaces are not in the live set.
    for (len, logged) in [(20_000, 2.07), (29_000, 2.99)] {
        let p = peak(len);
        assert!((p / logged - 1.0).abs() < 0.05, "{len}: {p} vs {logged}");
    }
    // At 512 tokens the logits of 256 sequences dominate: 256 × 128,256 × 2 B = 0.061 GiB.
    let p = peak(35_000);
    assert!((p - 0.06).abs() <= 0.01, "{p} vs 0.06");
}
