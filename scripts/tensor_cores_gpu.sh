#!/bin/bash
# FP64 tensor cores on the GPU (issue #21): the GEMM-using test binaries on
# the NVIDIA device (tensor cores are its default there), the linear-algebra
# suite with the tiling sweep, the same with FUSION_GEMM=portable, then
# cuBLAS / cuSOLVER through PyTorch in the same run. Binaries are copied
# into .gpu/ (bench_report) and .gpu/tests/ (test binaries) before the run.
source "$(dirname "$0")/gpu_tests.sh"
{
  run_test_binaries
  tensor_then_portable linalg 300 --gemm-sweep
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
