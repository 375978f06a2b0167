#!/bin/bash
# The paper's figures on the GPU (issue #20): `bench_report --suite seeds`
# in two parts (each fits one 10-minute device command), then the GP
# example at full size on the device alone.
#   part 1: Figure 5 (Cholesky) and the E-step;  part 2: Figures 6 and 7;
#   part 3: the larger whole runs and GP gradients (logistic N = 1e6 with a
#   CPU run, GP gradients to n = 10 000 on both, a GP run at n = 500).
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
  elif [ "$part" = 3 ]; then
    ./bench_report --suite seeds --figures 6,7 --logistic-sizes 1e6 --logistic-runs 1e6 \
      --gp-sizes 1000,4000,10000 --gp-runs 500 --gp-cpu-max 10000 --out "$OUT/seeds-large" 2>&1 | tail -3
    grep -E "^## |^\| [0-9]" "$OUT/seeds-large/report.md"
  else
    ./bench_report --suite seeds --figures 6,7 --out "$OUT/seeds-67" 2>&1 | tail -20
    echo "== gp_nuts (n = 1000, D = 2, one chain, 500 + 500, device only)"
    ./gp_nuts --n 1000 --chains 1 --warmup 500 --draws 500 --cpu-run 0 2>&1
  fi
} > "$OUT/summary-$part.txt" 2>&1
cat "$OUT/summary-$part.txt"
