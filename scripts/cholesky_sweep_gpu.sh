#!/bin/bash
# Issue #37, one lease: the Cholesky alone (`--suite seeds --figures 5`, per
# call, no profiling) at SIZES (default 2048 to 16384) with the environment
# variable VARIABLE at each of VALUES ("default" leaves it unset), ROUNDS
# rounds alternating (default 2): scripts/cholesky_configs_gpu.sh with one
# variable. Device tool, carry .gpu:
# VARIABLE=FUSION_CHOLESKY_LOOKAHEAD VALUES="default 64 256" bash scripts/cholesky_sweep_gpu.sh
# (kernel variants: VARIABLE=FUSION_KERNEL_OVERRIDE, VALUES of absolute folders)
configs=()
for value in $VALUES; do
  if [ "$value" = default ]; then configs+=(default); else configs+=("$VARIABLE=$value"); fi
done
CONFIGS=$(IFS=';'; echo "${configs[*]}") SIZES=${SIZES:-2048,4096,8192,16384} \
  exec bash "$(dirname "$0")/cholesky_configs_gpu.sh"
