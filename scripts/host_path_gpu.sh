#!/bin/bash
# Host-path measurements on the GPU machine (issue #22): test binaries on
# the NVIDIA device, then `bench_report --suite host` with the default queue
# (in-order on NVIDIA) and an out-of-order one, the bernoulli GLM per call in
# both queue modes, and the GLM split across the GPU and PoCL in one
# process. Binaries are copied into .gpu/ (bench_report) and .gpu/tests/
# (test binaries) before the run. Reports land in $OUT/<name>/report.md.
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export FUSION_DEVICE=nvidia
cd "$(dirname "$0")/../.gpu"
report() { # name, then bench_report arguments
  local name=$1; shift
  echo "== $name: bench_report $*"
  timeout 400 ./bench_report "$@" --out "/tmp/$name" 2>&1 | tail -2
  mkdir -p "$OUT/$name" && cp "/tmp/$name/report.md" "$OUT/$name/"
}
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  echo "ICDs: $(ls /etc/OpenCL/vendors | tr '\n' ' ')"
  for t in tests/*; do
    echo "== $t"
    timeout 300 "$t" --test-threads=4 2>&1 | grep -E "test result|panicked|Error" | tail -5
  done
  report host-default --suite host --first-call-runs ${FIRST_CALL_RUNS:-5}
  FUSION_QUEUE=out-of-order report host-out-of-order --suite host --first-call-runs 1
  report host-split --suite host --first-call-runs 1 --devices nvidia,cpu-
  sed -n '/split across/,$p' "$OUT/host-split/report.md"
  report glm-default --suite glm --glm-shapes 1e4x10,1e5x10,1e6x100,1e7x10 --no-baselines
  FUSION_QUEUE=out-of-order report glm-out-of-order --suite glm --glm-shapes 1e4x10,1e5x10,1e6x100,1e7x10 --no-baselines
} > "$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
