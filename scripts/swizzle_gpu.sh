#!/bin/bash
# Work-group order of the GEMM and Cholesky's one-pass input check (issue
# #21), one run: the Cholesky, GEMM and epilogue test binaries on the
# NVIDIA device (GEMM and epilogue again with -D SWIZZLE=8), `bench_report
# --suite gemm` as built and with bands of 4, 8 and 16 tile rows
# (FUSION_CL_OPTIONS="-D SWIZZLE=..."), `bench_report --suite linalg`, then
# cuBLAS / cuSOLVER through PyTorch.
source "$(dirname "$0")/gpu_tests.sh"
{
  run_test_binaries
  for t in tests/gemm-* tests/epilogue-*; do
    echo "== $t with -D SWIZZLE=8"
    FUSION_CL_OPTIONS="-D SWIZZLE=8" timeout 120 "$t" --test-threads=2 2>&1 | grep -E "test result|panicked" | tail -3
  done
  for s in none 4 8 16; do
    echo "== gemm suite, swizzle $s"
    if [ "$s" = none ]; then
      timeout 100 ./bench_report --suite gemm --out /tmp/g$s 2>&1 | tail -1
    else
      FUSION_CL_OPTIONS="-D SWIZZLE=$s" timeout 100 ./bench_report --suite gemm --out /tmp/g$s 2>&1 | tail -1
    fi
    mkdir -p "$OUT/gemm-$s" && cp /tmp/g$s/report.md "$OUT/gemm-$s/"
  done
  echo "== linalg suite"
  timeout 150 ./bench_report --suite linalg --out /tmp/la 2>&1 | tail -1
  mkdir -p "$OUT/linalg" && cp /tmp/la/report.md "$OUT/linalg/"
  echo "== PyTorch (cuBLAS / cuSOLVER)"
  timeout 150 python3 ../scripts/linalg_reference.py "$OUT/cublas.json" 2>&1 | tail -9
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
