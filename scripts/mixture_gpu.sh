#!/bin/bash
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export FUSION_DEVICE=nvidia
cd "$(dirname "$0")"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  echo "== mixture_estep (n=1e6, p=14, k=256)"; ./mixture_estep 2>&1
  echo "== mixture_estep (n=1e5, p=14, k=256)"; ./mixture_estep --n 100000 2>&1
} > $OUT/summary.txt 2>&1; cat $OUT/summary.txt
