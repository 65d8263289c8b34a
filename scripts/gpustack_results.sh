#!/usr/bin/env bash
# Regenerates validation/gpustack/RESULTS.md: GPUStack's performance-lab runs (vLLM's client against
# vLLM servers on A100 / H100 / H200; validation/gpustack/manifest.yaml) replayed with both step-cost
# backends. Nothing is fitted on these runs; this only reports.
# Usage: scripts/gpustack_results.sh [path/to/servesim]   (default: target/release/servesim)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/results_common.sh
bin=$(results_bin "$@")
manifest=validation/gpustack/manifest.yaml
out=validation/gpustack/RESULTS.md
n=$(grep -c '^  - id:' "$manifest")
{
  echo "# GPUStack performance lab: results"
  echo
  echo "Real servers measured with vLLM's client (\`vllm bench serve\`, random dataset seed 42, ShareGPT seed 0) on GPUStack's"
  echo "performance-lab pages (gpustack/gpustack @47277d79, Apache-2.0; URL, commands and versions in each log's"
  echo "header; what each entry states or assumes: \`manifest.yaml\`; blocks left out and why: \`README.md\`), replayed"
  echo "by servesim. **Out of sample**: no constant of servesim is fitted on these runs. Regenerate with"
  echo "\`scripts/gpustack_results.sh\` (it runs \`servesim validate --manifest $manifest --cost-model M\`)."
  echo
  echo "$n results on SGLang servers (0.5.3-0.5.5.post1) and vLLM servers (0.10.2 / 0.11.0): Qwen3-32B (A100, H100),"
  echo "Qwen3-235B-A22B-Instruct-2507 BF16 TP8 and FP8 TP4/TP8 (A100, H100), gpt-oss-120b (A100, H100 TP1/TP2/TP4),"
  echo "gpt-oss-20b (A100, H100), DeepSeek-R1-0528 TP8 (H200, random only), Qwen3-8B / -FP8 (H100, ShareGPT at"
  echo "concurrency 1-8). Random cases send all prompts at once; ShareGPT cases 1000 at once or 100 under a cap."
  echo "**The pages do not pass --ignore-eos**: real servers stop at EOS, so real output totals fall short of the"
  echo "requested ones (random: up to 48% for gpt-oss; ShareGPT: the completion length is only a cap), while servesim"
  echo "generates every requested token. \`[totals differ]\` is therefore expected, and output throughput and duration"
  echo "are biased (servesim does more work per request, but real requests that stop early free KV sooner): compare"
  echo "TTFT, TPOT and ITL first, read throughput as a flag. \`[sampled]\`: ShareGPT lengths from the bundled sample"
  echo "tables (vLLM's selection for the log's version), so totals differ by a few percent too. \`mean E2E\` is"
  echo "empty: vLLM's block does not print it. Nothing is fitted on these runs."
  echo "The groups are: all runs, each GPU family, each GPU profile, each engine and each engine × GPU profile."
  for model in roofline kernels; do
    validate_section "$bin" "$manifest" "$model"
    echo
    echo "Median ITL (the table above shows median TPOT), from \`servesim replay\` of each entry (scripts/gpustack_itl.py):"
    echo
    python3 scripts/gpustack_itl.py "$bin" "$model"
  done
} > "$out"
echo "wrote $out"
