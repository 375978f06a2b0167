#!/bin/bash
# Epilogue fusion on the GPU (issue #21): the epilogue and GEMM test
# binaries on the NVIDIA device, `bench_report --suite gemm` with tensor
# cores (the default there) and with FUSION_GEMM=portable, then PyTorch's
# mm and sigmoid(mm + 1) in the same run. Binaries are copied into .gpu/
# (bench_report) and .gpu/tests/ (test binaries) before the run.
source "$(dirname "$0")/gpu_tests.sh"
{
  run_test_binaries
  echo "== gemm suite, tensor cores (default)"
  FUSION_PROFILING=1 timeout 240 ./bench_report --suite gemm --out /tmp/tc 2>&1 | tail -1
  mkdir -p "$OUT/tensor" && cp /tmp/tc/report.md /tmp/tc/profiles.md "$OUT/tensor/"
  echo "== gemm suite, FUSION_GEMM=portable"
  FUSION_GEMM=portable timeout 240 ./bench_report --suite gemm --out /tmp/portable 2>&1 | tail -1
  mkdir -p "$OUT/portable" && cp /tmp/portable/report.md "$OUT/portable/"
  echo "== PyTorch (cuBLAS / cuSOLVER)"
  timeout 200 python3 ../scripts/linalg_reference.py "$OUT/cublas.json" 2>&1 | tail -9
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
