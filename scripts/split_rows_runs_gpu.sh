#!/bin/bash
# Issue #36, whole 8-chain NUTS runs with warm kernel caches, one lease on a
# two-GPU machine: a first `bench_report --suite chains --devices 0,1` at
# (1e4, 10) only builds every batch width's kernels (its figures are kept
# as "cold"), the second measures per call at both shapes and whole runs
# with every kernel in the disk cache. There (device tool, carry .gpu):
# bash scripts/split_rows_runs_gpu.sh. Summary in $OUT/summary.txt.
source "$(dirname "$0")/lease.sh"
export FUSION_PLATFORM=nvidia FUSION_DEVICE=0
echo "== cold (builds the kernels)" >> $S
timeout 200 "$bin/bench_report" --suite chains --devices 0,1 --glm-shapes 1e4x10 \
  --out "$OUT/chains-cold" > "$OUT/chains-cold.log" 2>&1
echo "rc=$?" >> $S
grep "^|" "$OUT/chains-cold/report.md" >> $S
echo "== warm" >> $S
timeout 280 "$bin/bench_report" --suite chains --devices 0,1 --out "$OUT/chains-warm" \
  > "$OUT/chains-warm.log" 2>&1
echo "rc=$?" >> $S
grep "^|" "$OUT/chains-warm/report.md" >> $S
rm -f "$OUT"/chains-*/*.png
