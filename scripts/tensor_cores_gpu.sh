#!/bin/bash
# FP64 tensor cores on the GPU (issue #21): the GEMM-using test binaries on
# the NVIDIA device (tensor cores are its default there), the linear-algebra
# suite with the tiling sweep, the same with FUSION_GEMM=portable, then
# cuBLAS / cuSOLVER through PyTorch in the same run. Binaries are copied
# into .gpu/ (bench_report) and .gpu/tests/ (test binaries) before the run.
source "$(dirname "$0")/gpu_tests.sh"
{
  run_test_binaries
  echo "== linalg, tensor cores (default)"
  timeout 300 ./bench_report --suite linalg --gemm-sweep --out /tmp/tc 2>&1 | tail -1
  mkdir -p "$OUT/tensor" && cp /tmp/tc/report.md "$OUT/tensor/"
  echo "== linalg, FUSION_GEMM=portable"
  FUSION_GEMM=portable timeout 300 ./bench_report --suite linalg --out /tmp/portable 2>&1 | tail -1
  mkdir -p "$OUT/portable" && cp /tmp/portable/report.md "$OUT/portable/"
  echo "== cuBLAS / cuSOLVER"
  timeout 200 python3 ../scripts/linalg_reference.py "$OUT/cublas.json" 2>&1 | tail -6
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
