#!/bin/bash
# #37's E-step in one kernel (`log_softmax_rows_of_product`): first the
# tensor-core paths' tests on the GPU (the new kernel and the GEMM, whose
# mma macros moved to cl/dmma.cl), then two rounds of `bench_report --suite
# seeds --figures e` (the one-kernel E-step and the two passes it replaces,
# same run) each followed by JAX (`estep_reference.py`); then, when
# .gpu/bench_before holds bench_report built from an earlier commit, its
# `--suite gemm` and this build's, alternating (the GEMM's mma macros moved:
# nothing there may be slower).
# .gpu/ holds bench_report, the mixture_estep example and the linalg and ops
# test binaries (stripped).
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
cd "$bin" || exit 1
{
  echo "== tests on the GPU"
  timeout 240 ./tests/linalg --test-threads=2 log_softmax gemm 2>&1 | grep -E "test result|panicked|FAILED" | tail -6
  timeout 240 ./tests/ops --test-threads=2 epilogue 2>&1 | grep -E "test result|panicked|FAILED" | tail -6
  echo "== mixture_estep (checks against the serial loop)"
  timeout 120 ./mixture_estep 2>&1 | tail -4
  for round in 1 2; do
    echo "== seeds e, round $round"
    timeout 150 ./bench_report --suite seeds --figures e --no-baselines --reps 25 --out "/tmp/seeds-e-$round" 2>&1 | tail -1
    cp "/tmp/seeds-e-$round/report.md" "$OUT/seeds-e-$round.md"
    grep -E "^\| 1000000" "$OUT/seeds-e-$round.md"
    timeout 150 python3 ../scripts/estep_reference.py "$OUT/jax-$round.json" 2>&1 | tail -1
  done
  if [ -x ./bench_before ]; then
    for round in 1; do
      for b in bench_before bench_report; do
        echo "== $b --suite gemm, round $round"
        timeout 150 ./$b --suite gemm --no-baselines --out "/tmp/gemm-$b-$round" 2>&1 | tail -1
        cp "/tmp/gemm-$b-$round/report.md" "$OUT/gemm-$b-$round.md"
      done
    done
  fi
} >> "$S" 2>&1
cat "$S"
