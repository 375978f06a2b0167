#!/bin/bash
# m16n8k16 against m16n8k4 in the tensor-core GEMM (issue #21), one run:
# the GEMM test binary on the NVIDIA device, `bench_report --suite linalg
# --gemm-sweep` as built (slices of 16 take m16n8k16; Cholesky tunings at
# 8192 and 16384), the GEMM sweep again with every slice in m16n8k4 steps
# (FUSION_CL_OPTIONS="-D K_STEP=4"), then cuBLAS / cuSOLVER through PyTorch.
source "$(dirname "$0")/gpu_tests.sh"
{
  run_test_binaries
  echo "== linalg suite with the sweep (slices of 16: m16n8k16)"
  timeout 300 ./bench_report --suite linalg --gemm-sweep --out /tmp/k16 2>&1 | tail -1
  mkdir -p "$OUT/k16" && cp /tmp/k16/report.md "$OUT/k16/"
  echo "== gemm suite with the sweep, K_STEP=4 (m16n8k4 only)"
  FUSION_CL_OPTIONS="-D K_STEP=4" timeout 200 ./bench_report --suite gemm --gemm-sweep --out /tmp/k4 2>&1 | tail -1
  mkdir -p "$OUT/k4" && cp /tmp/k4/report.md "$OUT/k4/"
  echo "== PyTorch (cuBLAS / cuSOLVER)"
  timeout 200 python3 ../scripts/linalg_reference.py "$OUT/cublas.json" 2>&1 | tail -9
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
