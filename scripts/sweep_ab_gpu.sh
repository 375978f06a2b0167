#!/bin/bash
# The reverse pass's small kernels run as one launch (rev/sweep.rs), before
# and after, one lease: `bench_report --suite dist` (diamonds per call and
# the densities) of .gpu/bench_report_old and .gpu/bench_report, then whole
# 4-chain `eight_schools` runs old, new, old, new (the first of each build
# compiles its kernels; the second finds them cached).
# There (device tool, carry .gpu): bash scripts/sweep_ab_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
cat "$S"
for which in old new; do
  b=.gpu/bench_report; [ $which = old ] && b=.gpu/bench_report_old
  echo "== dist $which"
  timeout 150 $b --suite dist --reps 25 --no-baselines --out $OUT/dist-$which > $OUT/dist-$which.txt 2>&1
  echo "rc=$?"
  grep "^|" $OUT/dist-$which/report.md | grep -i "diamonds\|normal_lpdf" | head -8
done
for which in old new old new; do
  b=.gpu/eight_schools; [ $which = old ] && b=.gpu/eight_schools_old
  echo "== eight_schools $which"
  timeout 100 $b > $OUT/eight_schools-$which.txt 2>&1
  echo "rc=$?"
  grep "whole run\|divergent" $OUT/eight_schools-$which.txt
done
find $OUT -name "*.png" -delete
