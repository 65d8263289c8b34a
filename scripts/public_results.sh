#!/usr/bin/env bash
# Regenerates validation/public/RESULTS.md: the public held-out runs (validation/public/manifest.yaml)
# replayed with both step-cost backends. Nothing is fitted on these runs; this only reports.
# Usage: scripts/public_results.sh [path/to/servesim]   (default: target/release/servesim)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/results_common.sh
bin=$(results_bin "$@")
manifest=validation/public/manifest.yaml
out=validation/public/RESULTS.md
{
  echo "# Public held-out validation: results"
  echo
  echo "Real SGLang \`bench_serving\` runs published by others (sources and their URLs: the header of each"
  echo "log in this directory; what each entry states or assumes: \`manifest.yaml\`), replayed by servesim."
  echo "**Out of sample**: no constant of servesim is fitted on these runs. Regenerate with"
  echo "\`scripts/public_results.sh\` (it runs \`servesim validate --manifest $manifest --cost-model M\`)."
  echo "\`med TPOT/ITL\` is the median TPOT, or the median ITL where the client prints no TPOT block (marked)."
  echo
  echo "Sources (86 results): SGLang cookbook pages (sgl-project/sgl-cookbook @7b5bd9c) for Qwen3-235B-A22B-Instruct-2507,"
  echo "DeepSeek-R1-0528 and gpt-oss-120b on 8x B200 (TP8, sglang 0.5.6 / 0.5.6.post1) and Llama-3.1-70B on 8x A100 (TP8,"
  echo "0.5.6); kvcached's overhead benchmark (ovg-project/kvcached @f5330bc): Llama-3.2-3B on one A100-80G, plain SGLang"
  echo "0.4.6.post2, 8/16/32 req/s; SGLang PR #2738's logs (DataCrunch, sgl-project/sglang @26db155/@49f7815): DeepSeek-V3"
  echo "FP8 on 8x H200 (TP8, DP attention, fp8_e5m2 KV), sglang 0.4.1 and 0.4.1.post4, random 1024/1024 at 1/2/4/8 req/s;"
  echo "benchmaq (Scicom AI, llm-benchmaq @3e344dd, RunPod): Qwen3-8B, Qwen3-14B and Llama-3.1-70B on 8x H100 (sglang 0.5.9) and"
  echo "gpt-oss-120b on 8x H100, H200 and A100 (0.5.8.post1), TP4xDP2 and TP8, random 1024-8192/128, 100 prompts at c100;"
  echo "SGLang PR #7631 (June 2025): DeepSeek-V3-0324 FP8 on 8x H20, TP8, random 1024/512 x200 at c8 (read as 0.4.8; roofline only)."
  echo "SGLang cookbook pages added in round s32 (sgl-cookbook @7b5bd9c): GLM-4.6 BF16 on 8x B200 (TP8, 0.5.6.post1), MiniMax-M2.5"
  echo "FP8 TP8 EP8 on 8x B200 (0.5.8) and 8x H100 (0.5.9), Kimi-K2.5 on 8x H200 (TP8; an unreleased main build, out of the"
  echo "medians), random 1000/1000, 1000/8000 and 8000/1000 at c1 to c100 (p020-cookbook-glm-minimax-kimi-notes.md)."
  echo "Left out: SGLang PR #6939 (DeepSeek-V3 on 8x B200, June 2025)"
  echo "is the source of seed log 004, so it is in sample; SGLang servers measured with vLLM's client are listed in"
  echo "vllm-candidates.md; other candidates and why they were skipped: skipped-sources.md."
  echo
  echo "Runs listed under one launch command on a page ran on one server, in page order, with the same"
  echo "\`--seed\` and no \`--flush-cache\`: their \`random\` prompts are the same ShareGPT turns at the same index,"
  echo "so each run finds its predecessors' prompts in the radix cache. The manifest's \`prior-runs:\` replays"
  echo "that (\`--prior-runs\`, src/client/prior.rs); see the notes at the end for what it changes and what"
  echo "TTFT error remains."
  for model in roofline kernels; do
    validate_section "$bin" "$manifest" "$model"
  done
  cat validation/public/ttft-notes.md
  echo
  cat validation/public/p010-benchmaq-notes.md
  echo
  cat validation/public/p016-h20-notes.md
  echo
  cat validation/public/p020-cookbook-glm-minimax-kimi-notes.md
} > "$out"
echo "wrote $out"
