#!/bin/bash
# The Cholesky leaf's register blocks (issue #21), one run: the Cholesky
# test binary on the NVIDIA device, `bench_report --suite linalg` built
# from the commit before the change (.gpu/bench_report_old) and after it,
# the latter again with FUSION_PROFILING=1 for its timeline, then cuBLAS /
# cuSOLVER through PyTorch.
source "$(dirname "$0")/gpu_tests.sh"
{
  run_test_binaries
  for build in old new; do
    bin=./bench_report; [ "$build" = old ] && bin=./bench_report_old
    echo "== linalg suite, $build leaf"
    timeout 150 $bin --suite linalg --out /tmp/$build 2>&1 | tail -1
    mkdir -p "$OUT/$build" && cp /tmp/$build/report.md "$OUT/$build/"
  done
  echo "== linalg suite, new leaf, profiled"
  FUSION_PROFILING=1 timeout 150 ./bench_report --suite linalg --out /tmp/profiled 2>&1 | tail -1
  mkdir -p "$OUT/profiled" && cp /tmp/profiled/*.md "$OUT/profiled/"
  echo "== PyTorch (cuBLAS / cuSOLVER)"
  timeout 150 python3 ../scripts/linalg_reference.py "$OUT/cublas.json" 2>&1 | tail -9
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
