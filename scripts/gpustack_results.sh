#!/usr/bin/env bash
# Regenerates validation/gpustack/RESULTS.md: GPUStack's performance-lab runs (vLLM's client against
# vLLM servers on A100 / H100 / H200; validation/gpustack/manifest.yaml) replayed with both step-cost
# backends. Nothing is fitted on these runs; this only reports.
# Usage: scripts/gpustack_results.sh [path/to/servesim]   (default: target/release/servesim)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/servesim}"
manifest=validation/gpustack/manifest.yaml
out=validation/gpustack/RESULTS.md
n=$(grep -c '^  - id:' "$manifest")
{
  echo "# GPUStack performance lab: results"
  echo
  echo "Real servers measured with vLLM's client (\`vllm bench serve\`, random dataset, seed 42) on GPUStack's"
  echo "performance-lab pages (gpustack/gpustack @47277d79, Apache-2.0; URL, commands and versions in each log's"
  echo "header; what each entry states or assumes: \`manifest.yaml\`; blocks left out and why: \`README.md\`), replayed"
  echo "by servesim. **Out of sample**: no constant of servesim is fitted on these runs. Regenerate with"
  echo "\`scripts/gpustack_results.sh\` (it runs \`servesim validate --manifest $manifest --cost-model M\`)."
  echo
  echo "$n results, all on vLLM servers (0.10.2 / 0.11.0): Qwen3-32B (A100, H100), Qwen3-235B-A22B-Instruct-2507 BF16 TP8"
  echo "and FP8 TP4 (A100, H100), gpt-oss-120b (A100, H100 TP1/TP2), gpt-oss-20b (A100, H100), DeepSeek-R1-0528 TP8 (H200)."
  echo "Every case sends all prompts at once (rate inf, no concurrency cap). \`[totals differ]\` is expected here: the"
  echo "real servers stop at EOS (the client does not pass --ignore-eos) and vLLM 0.11 re-encodes the random prompts, so"
  echo "the real totals are below the requested ones (input by <0.3%, output by up to 48% for gpt-oss), while servesim"
  echo "generates every requested token. \`mean E2E\` is empty: vLLM's block does not print it."
  echo "The groups are: all runs, each GPU family, each GPU profile (engine groups appear once SGLang runs are scored)."
  for model in roofline kernels; do
    echo
    echo "## Cost model: \`$model\`"
    echo
    echo '```text'
    "$bin" validate --manifest "$manifest" --cost-model "$model"
    echo '```'
    echo
    echo "Median ITL (the table above shows median TPOT), from \`servesim replay\` of each entry (scripts/gpustack_itl.py):"
    echo
    python3 scripts/gpustack_itl.py "$bin" "$model"
  done
} > "$out"
echo "wrote $out"
