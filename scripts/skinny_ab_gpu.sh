#!/bin/bash
# The batched chains' gradient product `xᵀ D` (x 1e6 x 100, D 1e6 x 8)
# before and after a change to `transposed_skinny_multiply`, one lease:
# the product alone (.gpu/scratch[_old] MODE=skinny, when present), then
# #36's chains suite (per call and whole 8-chain NUTS runs) of the new
# build, the old one (.gpu/bench_report_old) and the new one again, so
# that a whole run's first-compile costs show up as a difference between
# the two new runs. Then JAX's vmap peer.
# There (device tool, carry .gpu): bash scripts/skinny_ab_gpu.sh
source "$(dirname "$0")/lease.sh"
export FUSION_PLATFORM=nvidia FUSION_DEVICE=0
if [ -x .gpu/scratch ]; then
  for which in old new old new; do
    b=.gpu/scratch; [ $which = old ] && b=.gpu/scratch_old
    echo "== product alone, $which: $(MODE=skinny REPS=50 timeout 60 $b 2>&1 | head -1)" >> "$S"
  done
fi
cat "$S"
for which in new old new2; do
  b=.gpu/bench_report; [ $which = old ] && b=.gpu/bench_report_old
  echo "== $which"
  timeout 170 $b --suite chains --devices 0 --out $OUT/chains-$which > $OUT/chains-$which.txt 2>&1
  echo "rc=$?"
  grep "^|" $OUT/chains-$which/report.md | grep -v "^|---\|^| n "
done
timeout 100 python3 scripts/chains_reference.py $OUT/chains-jax.json 2>&1 | tail -4
find $OUT -name "*.png" -delete
