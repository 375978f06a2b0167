#!/bin/bash
# Issue #34's benchmark: `bench_report --suite dist` on the GPU and on the
# lent machine's PoCL, then the JAX and PyTorch peers, in one lease. Here:
# the release bench_report in .gpu/. There (device tool, carry .gpu):
#   bash scripts/dist_gpu.sh
# Everything lands in $OUT/dist.tar.gz (the tool returns few files).
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
here=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
S=$W/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >> $S
for round in 1 2; do
  echo "== clfuse round $round" >> $S
  FUSION_DEVICE=nvidia timeout 90 "$here/../.gpu/bench_report" --suite dist --reps 25 \
    --out "$W/gpu-$round" > "$W/gpu-$round.log" 2>&1
  echo "rc=$?" >> $S
  echo "== peers round $round" >> $S
  timeout 120 python3 "$here/dist_reference.py" "$W/peers-$round.json" >> $S 2>&1
  echo "rc=$?" >> $S
done
echo "== profile" >> $S
FUSION_PROFILING=1 FUSION_DEVICE=nvidia timeout 60 "$here/../.gpu/bench_report" --suite dist \
  --out "$W/gpu-profile" > "$W/gpu-profile.log" 2>&1
echo "rc=$?" >> $S
echo "== pocl" >> $S
FUSION_PLATFORM=portable timeout 150 "$here/../.gpu/bench_report" --suite dist --out "$W/pocl" \
  > "$W/pocl.log" 2>&1
echo "rc=$?" >> $S
cp $S "$OUT/summary.txt"
tar czf "$OUT/dist.tar.gz" -C "$W" .
