#!/bin/bash
# Issue #37, one lease: the Cholesky and its adjoint before (.gpu/old/bench_report)
# and after (.gpu/bench_report) a change, or with AB=VARIABLE set, one build
# with that variable at each of VALUES (default "0 1"; e.g.
# AB=FUSION_CHOLESKY_LOOKAHEAD VALUES="0 128"), two rounds alternating
# (`--suite cholesky`: both, n = 500 to 16384), cuSOLVER and PyTorch's
# backward in the same lease; then the GP value and gradient (Figure 7,
# `multi_normal_lpdf`) of both builds alternating and JAX's. The linalg
# tests of the new build first (.gpu/linalg_tests, all of them, and
# .gpu/runtime_tests' side-queue ones; debug, stripped). Here: those files
# in .gpu/. There: [AB=VARIABLE] bash scripts/cholesky_ab_gpu.sh.
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
W=/tmp/chol
mkdir -p $W
AB=${AB:-build}
VALUES=${VALUES:-0 1}
run_tests "linalg_tests ::" "runtime_tests side_queue"
for round in 1 2; do
  for value in $VALUES; do
    build=$AB=$value
    echo "== cholesky suite, $build, round $round" >> $S
    env "$build" timeout 200 "$(build_of $AB $value)/bench_report" --suite cholesky --reps 10 --out "$W/ab$value-$round" \
      > "$W/ab$value-$round.log" 2>&1
    echo "rc=$?" >> $S
    grep "| [0-9]" "$W/ab$value-$round/report.md" >> $S
    cp "$W/ab$value-$round/report.md" "$OUT/cholesky-ab$value-$round.md"
  done
done
echo "== cuSOLVER / torch backward" >> $S
timeout 200 python3 "$here/cholesky_adjoint_reference.py" "$OUT/torch.json" >> $S 2>&1
echo "rc=$?" >> $S
sizes="--gp-sizes 500,2000,4000,10000 --gp-runs 0 --no-baselines"
for round in 1 2; do
  for value in $VALUES; do
    build=$AB=$value
    echo "== GP, $build, round $round" >> $S
    env "$build" timeout 200 "$(build_of $AB $value)/bench_report" --suite seeds --figures 7 $sizes --reps 15 \
      --out "$W/gp-ab$value-$round" > "$W/gp-ab$value-$round.log" 2>&1
    echo "rc=$?" >> $S
    grep "| [0-9]" "$W/gp-ab$value-$round/report.md" | grep -v "whole" >> $S
  done
done
echo "== jax" >> $S
timeout 150 python3 "$here/gp_reference.py" "$OUT/jax.json" 500 2000 4000 10000 >> $S 2>&1
echo "rc=$?" >> $S
cat $S
