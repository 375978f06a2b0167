#!/bin/bash
# The paper's figures on the GPU (issue #20): `bench_report --suite seeds`
# in two parts (each fits one 10-minute device command), then the GP
# example at full size on the device alone.
#   part 1: Figure 5 (Cholesky) and the E-step;  part 2: Figures 6 and 7.
# Binaries are copied into .gpu/ from target/release (bench_report) and
# target/release/examples (gp_nuts) before the run.
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export FUSION_DEVICE=nvidia
cd "$(dirname "$0")/../.gpu"
part=${1:-1}
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  if [ "$part" = 1 ]; then
    ./bench_report --suite seeds --figures 5,e --out "$OUT/seeds-5e" 2>&1 | grep -v '^\s*$' | tail -5
  else
    ./bench_report --suite seeds --figures 6,7 --out "$OUT/seeds-67" 2>&1 | tail -20
    echo "== gp_nuts (n = 1000, D = 2, 500 + 500, device only)"
    ./gp_nuts --n 1000 --warmup 500 --draws 500 --cpu-run 0 2>&1
  fi
} > "$OUT/summary-$part.txt" 2>&1
cat "$OUT/summary-$part.txt"
