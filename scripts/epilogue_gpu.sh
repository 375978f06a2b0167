#!/bin/bash
# Epilogue fusion on the GPU (issue #21): the epilogue and GEMM test
# binaries on the NVIDIA device, `bench_report --suite gemm` with tensor
# cores (the default there) and with FUSION_GEMM=portable, then PyTorch's
# mm and sigmoid(mm + 1) in the same run. Binaries are copied into .gpu/
# (bench_report) and .gpu/tests/ (test binaries) before the run.
source "$(dirname "$0")/gpu_tests.sh"
{
  run_test_binaries
  FUSION_PROFILING=1 tensor_then_portable gemm 240
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
