#!/bin/bash
# The seeds' workflows on the GPU (issue #20): commands as in scripts/seeds_gpu.sh.
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export FUSION_DEVICE=nvidia
cd "$(dirname "$0")"  # binaries copied here from target/release/examples
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  echo "== mixture_estep (n=1e6, p=14, k=256)"; ./mixture_estep 2>&1
  echo "== mixture_estep (n=1e5, p=14, k=256)"; ./mixture_estep --n 100000 2>&1
  echo "== logistic_nuts (N=1e5, K=10)"; ./logistic_nuts --n 100000 --k 10 2>&1
  echo "== logistic_nuts (N=1e4, K=10)"; ./logistic_nuts --n 10000 --k 10 2>&1
  echo "== logistic_nuts (N=1e6, K=10, 300 + 300)"; ./logistic_nuts --n 1000000 --k 10 --warmup 300 --draws 300 2>&1
} > $OUT/summary.txt 2>&1
cat $OUT/summary.txt
