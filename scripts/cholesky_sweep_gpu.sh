#!/bin/bash
# Issue #37, one lease: the Cholesky alone (`--suite seeds --figures 5`, per
# call, no profiling) at SIZES with the environment variable VARIABLE at each
# of VALUES ("default" leaves it unset), ROUNDS rounds alternating (default
# 2). Device tool, carry .gpu:
# VARIABLE=FUSION_CHOLESKY_LOOKAHEAD VALUES="default 64 256" bash scripts/cholesky_sweep_gpu.sh
# (kernel variants: VARIABLE=FUSION_KERNEL_OVERRIDE, VALUES of absolute
# folders, with FUSION_CACHE_DIR=off)
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
for round in $(seq 1 ${ROUNDS:-2}); do
  for value in $VALUES; do
    echo "== $VARIABLE=$value, round $round" >> $S
    if [ "$value" = default ]; then unset "$VARIABLE"; else export "$VARIABLE=$value"; fi
    # A value may be a path (FUSION_KERNEL_OVERRIDE): no slashes in file names.
    out="/tmp/sweep-${value//\//_}-$round"
    timeout 120 "$bin/bench_report" --suite seeds --figures 5 --cholesky-sizes ${SIZES:-2048,4096,8192,16384} \
      --no-baselines --reps 10 --out "$out" > "$out.log" 2>&1
    echo "rc=$?" >> $S
    grep "| [0-9]" "$out/report.md" | cut -d'|' -f2,4 | tr '\n' ' ' >> $S
    echo >> $S
  done
done
unset "$VARIABLE"
cat $S
