#!/bin/bash
# Issue #37, one lease: the GP value and gradient (paper Figure 7, `--suite
# seeds --figures 7`) written with `multi_normal_lpdf` (Stan's closed-form
# covariance adjoint) against the same model through
# `rev::cholesky_decompose` (the bench's "before" row, same binary), two
# rounds, then JAX jit(value_and_grad), then one profiled call.
# The dist and linalg test binaries run first when copied into .gpu/
# (debug builds, stripped: dist_tests runs its multi_normal tests,
# linalg_tests its triangular and cholesky ones).
# Here: release bench_report in .gpu/. There: bash scripts/gp_multi_normal_gpu.sh.
source "$(dirname "$0")/lease.sh"
W=$OUT/gp
mkdir -p $W
run_tests "dist_tests multi_normal" "linalg_tests triangular" "linalg_tests cholesky"
sizes="--gp-sizes ${GP_SIZES-500,2000,4000,10000} --gp-runs 0 --no-baselines"
for round in 1 2; do
  echo "== GP round $round" >> $S
  FUSION_DEVICE=nvidia timeout 200 "$bin/bench_report" --suite seeds --figures 7 $sizes --reps 15 \
    --out "$W/gp-$round" > "$W/gp-$round.log" 2>&1
  echo "rc=$?" >> $S
  grep "| [0-9]" "$W/gp-$round/report.md" | grep -v "whole" >> $S
  cp "$W/gp-$round/report.md" "$OUT/gp-$round.md"
done
echo "== jax" >> $S
timeout 150 python3 "$here/gp_reference.py" "$W/jax.json" 500 2000 4000 10000 >> $S 2>&1
echo "rc=$?" >> $S
echo "== profile" >> $S
FUSION_PROFILING=1 FUSION_DEVICE=nvidia timeout 120 "$bin/bench_report" --suite seeds --figures 7 $sizes \
  --reps 3 --out "$W/profile" > "$W/profile.log" 2>&1
echo "rc=$?" >> $S
cp "$W/profile/profiles.md" "$OUT/profiles.md"
cp "$W/jax.json" "$OUT/jax.json"
rm -f "$W"/*/*.png
cat $S
