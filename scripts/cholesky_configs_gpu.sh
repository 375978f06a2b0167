#!/bin/bash
# Issue #37, one lease: the Cholesky alone (`--suite seeds --figures 5`, per
# call, no profiling) at SIZES under each of CONFIGS, ROUNDS rounds
# alternating (default 2). CONFIGS is a `;`-separated list; each config is
# `default` or space-separated VARIABLE=value assignments (kernel variants:
# FUSION_KERNEL_OVERRIDE=<absolute folder>). Device tool, carry .gpu:
# CONFIGS="default;FUSION_CHOLESKY_THIN_UP_TO=128" bash scripts/cholesky_configs_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia FUSION_CACHE_DIR=off
IFS=';' read -r -a configs <<< "$CONFIGS"
for round in $(seq 1 ${ROUNDS:-2}); do
  for index in "${!configs[@]}"; do
    config=${configs[$index]}
    echo "== [$index] $config, round $round" >> $S
    assignments=()
    [ "$config" = default ] || read -r -a assignments <<< "$config"
    out="/tmp/config-$index-$round"
    env "${assignments[@]}" timeout 150 "$bin/bench_report" --suite seeds --figures 5 \
      --cholesky-sizes ${SIZES:-1000,2048,4096,8192,16384} --no-baselines --reps 10 --out "$out" > "$out.log" 2>&1
    echo "rc=$?" >> $S
    grep "| [0-9]" "$out/report.md" | cut -d'|' -f2,4 | tr '\n' ' ' >> $S
    echo >> $S
  done
done
cat $S
