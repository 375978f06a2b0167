#!/bin/bash
# BEM's E-step in one kernel (`softmax_rows_of_product` of the features and
# `Mixture::expanded_parameters`), one lease: the tensor-core paths' tests
# (the linalg kernel tests, seed 004's mixture tests), `bench_report --suite
# seeds --figures g --no-baselines` (its E-step rows: from the packed
# components, and the expanded product in one kernel), JAX's E-step and
# sweep (dp_mixture_reference.py), and the dp_mixture example at full size
# (Gibbs and BEM, recovery checked).
# Here: release bench_report and examples/dp_mixture, and the linalg and
# dist test binaries (tests/), stripped, in .gpu/. There (device tool, carry
# .gpu): bash scripts/bem_gpu.sh. Everything lands in $OUT.
source "$(dirname "$0")/lease.sh"
export FUSION_DEVICE=nvidia
{
  echo "== tests on the GPU"
  timeout 200 "$bin/tests/linalg" --test-threads=2 log_softmax 2>&1 | grep -E "test result|panicked|FAILED" | tail -4
  timeout 200 "$bin/tests/dist" --test-threads=2 mixture:: 2>&1 | grep -E "test result|panicked|FAILED" | tail -4
  echo "== clfuse"
  timeout 200 "$bin/bench_report" --suite seeds --figures g --no-baselines --reps 15 --out /tmp/g > /tmp/g.log 2>&1
  echo "rc=$?"
  cp /tmp/g/report.md "$OUT/seeds-g.md"
  grep -E "^\| 1000000" "$OUT/seeds-g.md"
  echo "== jax"
  timeout 150 python3 "$here/dp_mixture_reference.py" "$OUT/jax.json" 1000000x14x256 1000000x14x64 2>&1 | tail -12
  echo "== example (n = 1e6, p = 14, k = 64 and 256)"
  timeout 150 "$bin/dp_mixture" --sweeps 40 --serial 0 2>&1 | tail -20
} >> "$S" 2>&1
cat "$S"
