#!/bin/bash
# Issue #37, one lease: the Cholesky and its adjoint before (.gpu/old/bench_report)
# and after (.gpu/bench_report) a change, two rounds alternating
# (`--suite cholesky`: both, n = 500 to 16384), cuSOLVER and PyTorch's
# backward in the same lease; then the GP value and gradient (Figure 7,
# `multi_normal_lpdf`) of both builds alternating and JAX's. The linalg
# Cholesky tests of the new build first (.gpu/linalg_tests, debug,
# stripped). Here: those files in .gpu/. There: bash scripts/cholesky_ab_gpu.sh.
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
W=/tmp/chol
mkdir -p $W
run_tests "linalg_tests cholesky"
for round in 1 2; do
  for build in old new; do
    echo "== cholesky suite, $build build, round $round" >> $S
    folder=$bin; [ $build = old ] && folder=$bin/old
    timeout 200 "$folder/bench_report" --suite cholesky --reps 10 --out "$W/$build-$round" \
      > "$W/$build-$round.log" 2>&1
    echo "rc=$?" >> $S
    grep "| [0-9]" "$W/$build-$round/report.md" >> $S
    cp "$W/$build-$round/report.md" "$OUT/cholesky-$build-$round.md"
  done
done
echo "== cuSOLVER / torch backward" >> $S
timeout 200 python3 "$here/cholesky_adjoint_reference.py" "$OUT/torch.json" >> $S 2>&1
echo "rc=$?" >> $S
sizes="--gp-sizes 500,2000,4000,10000 --gp-runs 0 --no-baselines"
for round in 1 2; do
  for build in old new; do
    echo "== GP, $build build, round $round" >> $S
    folder=$bin; [ $build = old ] && folder=$bin/old
    timeout 200 "$folder/bench_report" --suite seeds --figures 7 $sizes --reps 15 \
      --out "$W/gp-$build-$round" > "$W/gp-$build-$round.log" 2>&1
    echo "rc=$?" >> $S
    grep "| [0-9]" "$W/gp-$build-$round/report.md" | grep -v "whole" >> $S
  done
done
echo "== jax" >> $S
timeout 150 python3 "$here/gp_reference.py" "$OUT/jax.json" 500 2000 4000 10000 >> $S 2>&1
echo "rc=$?" >> $S
cat $S
