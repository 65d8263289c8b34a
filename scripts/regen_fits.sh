#!/usr/bin/env bash
# Re-fits the bundled profiles and regenerates everything derived from them, after a change that
# moves the seed runs (the commands the README's "Calibrate" section lists, in order):
#   1. the joint roofline fit of a100 + ascend-a3 + h100 on the 18 fitted seed runs (profiles and
#      validation/crossval.json), then the gpt-oss stage on A100, then the kernels cross-validation
#      (recorded, not applied);
#   2. the shared host constants copied to the profiles outside the fit (scripts/propagate_shared.py);
#   3. the README accuracy section, validation/public and validation/gpustack RESULTS, the engine
#      goldens (tests/golden/vllm-*.txt, checked by tests/vllm_client, is edited by hand).
# Hand-written tables (the README's targets, backends and AIConfigurator tables) are not touched:
# scripts/aiconfigurator_compare.py and `servesim validate --format json` give their numbers.
# Usage (repo root): scripts/regen_fits.sh [--no-refit]   (SOURCE_DATE_EPOCH sets the fit date)
set -euo pipefail
cd "$(dirname "$0")/.."
B=target/release/servesim
cargo build --release
if [ "${1:-}" != "--no-refit" ]; then
  $B calibrate --profile a100-sxm4-80gb,ascend-a3,h100-sxm5-80gb --runs '*,!002,!003-16..003-23,!004-*' \
     --cost-model roofline --cross-validate --out-dir hardware-profiles --out-crossval validation/crossval.json
  cargo build --release
  $B calibrate --profile hardware-profiles/a100-sxm4-80gb.yaml --runs 003-16..003-23 --cost-model roofline \
     --params mxfp4_compute,mxfp4_memory,mxfp4_half_tokens,attention.triton.prefill,attention.triton.decode \
     --out hardware-profiles/a100-sxm4-80gb.yaml --cross-validate --out-crossval validation/crossval.json
  cargo build --release
  $B calibrate --profile a100-sxm4-80gb,h100-sxm5-80gb --runs '*,!002,!003-16..003-23,!004-*' \
     --cost-model kernels --cross-validate --out-crossval validation/crossval.json
fi
python3 scripts/propagate_shared.py
cargo build --release
$B validate --format markdown --update-readme README.md
scripts/public_results.sh
scripts/gpustack_results.sh
UPDATE_GOLDEN=1 cargo test --release --test engine
