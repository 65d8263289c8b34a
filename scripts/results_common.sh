# Shared by scripts/public_results.sh and scripts/gpustack_results.sh (sourced, not run):
# the binary to use and one manifest replayed with each step-cost backend.
# Usage (after `source`): results_bin "$@"; validate_section MANIFEST BACKEND

# The servesim binary: the first argument, else the release build.
results_bin() {
  echo "${1:-target/release/servesim}"
}

# One "## Cost model" section: a fenced block with `servesim validate` of MANIFEST on BACKEND.
validate_section() {
  local bin=$1 manifest=$2 model=$3
  echo
  echo "## Cost model: \`$model\`"
  echo
  echo '```text'
  "$bin" validate --manifest "$manifest" --cost-model "$model"
  echo '```'
}
