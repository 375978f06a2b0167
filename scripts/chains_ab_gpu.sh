#!/bin/bash
# Issue #36's single-GPU figures before and after a change, one lease:
# `bench_report --suite chains --devices 0` of .gpu/bench_report_old and
# .gpu/bench_report (8 chains unbatched and batched per call, whole NUTS
# runs), a profiled call of each (kernel timelines), then JAX's vmap peer.
# There (device tool, carry .gpu): bash scripts/chains_ab_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_PLATFORM=nvidia FUSION_DEVICE=0
cat "$S"
for which in old new; do
  b=.gpu/bench_report; [ $which = old ] && b=.gpu/bench_report_old
  echo "== $which"
  timeout 250 $b --suite chains --devices 0 --out $OUT/chains-$which > $OUT/chains-$which.log 2>&1
  echo "rc=$?"
  grep "^|" $OUT/chains-$which/report.md | grep -v "^|---\|^| n "
  FUSION_PROFILING=1 timeout 100 $b --suite chains --devices 0 --reps 3 --glm-shapes 1e4x10 \
    --out $OUT/profile-$which > $OUT/profile-$which.log 2>&1
  echo "profile rc=$?"
done
timeout 100 python3 scripts/chains_reference.py $OUT/chains-jax.json 2>&1 | tail -4
find $OUT -name "*.png" -delete
